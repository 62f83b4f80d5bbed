#!/bin/sh
# Point to point across virtual nodes through the libfabric transport (tests/ranks/ofi_p2p.c's
# cases at uneven splits, P=16 on 4 nodes for the oversubscribed wait; large messages by tagged
# rendezvous and by RMA reads, each forced with HINT_OFI_RMA_MIN; the large eager pool), the HINT_P2P_STATS count
# of messages sent over it and their bytes, the bound on unexpected messages, the large eager pool's
# credits (a flood of unexpected messages within a bounded memory, order across its paths), fi_tsend only (HINT_OFI_INJECT=0),
# the provider hint picks when none is named, and a provider that does not exist
# refused at start with its name.
# The provider is the environment's, else tcp over loopback (what CI has). TAP.
set -u
hintrun=$1 prog=$2
export FI_PROVIDER="${FI_PROVIDER:-tcp}" FI_TCP_IFACE="${FI_TCP_IFACE:-lo}"
export HINT_HANG_TIMEOUT=60
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; printf '%s\n' "$2" | tail -20 | sed 's/^/# /'; }
run() { # K P CASE [what the environment forces]
  out=$(timeout 300 "$hintrun" --nodes "$1" -n "$2" "$prog" "$3" 2>&1)
  rc=$?
  # a registration left open makes closing the domain fail, and the transport says so
  if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q "^ok $3" && ! printf '%s\n' "$out" | grep -q "registrations left"
  then ok "$3 at P=$2 on $1 nodes${4:+ ($4)}"
  else notok "$3 at P=$2 on $1 nodes${4:+ ($4)} (exit $rc)" "$out"; fi
}
echo "1..60"
for c in mixed anysource truncate big derived outstanding sync; do
  for kp in "2 2" "2 5" "3 8"; do
    set -- $kp
    run "$1" "$2" "$c"
  done
done
run 4 16 mixed
# libfabric is opened only when the job spans nodes, keeping the program's signal handlers
for kp in "1 2" "2 2" "3 5"; do
  set -- $kp
  run "$1" "$2" lazy
done
# Large messages by the provider's tagged rendezvous (RTS, CTS, fi_tsend) and by reads from the
# sender's registered buffer (RTS, fi_read, FIN; tcp;ofi_rxm has FI_RMA), each forced: every
# non-eager message (sync ones down to 1 byte) reads with HINT_OFI_RMA_MIN=0, none with 1T.
for m in 0 1T; do
  for c in sync truncate big derived; do
    HINT_OFI_RMA_MIN=$m run 2 2 "$c" "HINT_OFI_RMA_MIN=$m"
  done
done
HINT_OFI_RMA_MIN=0 run 3 8 mixed "HINT_OFI_RMA_MIN=0"
HINT_OFI_RMA_MIN=0 run 2 5 outstanding "HINT_OFI_RMA_MIN=0"
HINT_OFI_RMA_MIN=1T run 3 8 mixed "HINT_OFI_RMA_MIN=1T"
HINT_OFI_RMA_MIN=1T run 2 5 outstanding "HINT_OFI_RMA_MIN=1T"
# Eager messages above HINT_OFI_EAGER_MAX in one message into the large pool (header and payload
# as two iovs, fi_tsendv): every message from 1 byte to 1 MiB there with HINT_OFI_EAGER_MAX=0;
# a large pool of one buffer (unexpected ones copied out); none (HINT_OFI_LARGE_MAX=0: the
# rendezvous paths from 8 KiB up, as before)
for c in truncate derived anysource; do
  HINT_OFI_EAGER_MAX=0 HINT_OFI_LARGE_MAX=1M run 2 2 "$c" "HINT_OFI_EAGER_MAX=0 HINT_OFI_LARGE_MAX=1M"
done
HINT_OFI_EAGER_MAX=0 HINT_OFI_LARGE_MAX=1M run 3 8 mixed "HINT_OFI_EAGER_MAX=0 HINT_OFI_LARGE_MAX=1M"
HINT_OFI_LARGE_BUFFERS=1 run 2 5 outstanding "HINT_OFI_LARGE_BUFFERS=1"
HINT_OFI_LARGE_MAX=0 run 3 8 mixed "HINT_OFI_LARGE_MAX=0"
# Control messages always by fi_tsend (the default injects those within the provider's inject size)
HINT_OFI_INJECT=0 run 3 8 mixed "HINT_OFI_INJECT=0"
# No provider named: hint picks the preferred one fi_getinfo offers (net before tcp;ofi_rxm on
# libfabric 1.17, never shm); at P=16 on 4 nodes its ranks also sleep on it, oversubscribed
# (net leaks copies of its fi_info inside fi_endpoint and fi_cq_read: scripts/lsan.supp names those
# two calls, and in the sanitizer run the full unwinder lets the suppression see them, since
# libfabric has no frame pointers for the fast one)
asan_opts=${ASAN_OPTIONS:+$ASAN_OPTIONS:fast_unwind_on_malloc=0}
for kp in "2 5" "4 16"; do
  set -- $kp
  out=$(env -u FI_PROVIDER FI_NET_IFACE=lo ${asan_opts:+ASAN_OPTIONS=$asan_opts} timeout 300 "$hintrun" --nodes "$1" -n "$2" "$prog" mixed 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && printf '%s
' "$out" | grep -q "^ok mixed"; then ok "mixed at P=$2 on $1 nodes, no provider named"
  else notok "mixed at P=$2 on $1 nodes, no provider named (exit $rc)" "$out"; fi
done
# ranks 0-1 on node 0, 2-3 on node 1: every rank sends 12 messages to each of the two on the other
# node and 5 blocking ones of 8 B to its partner there (0-2, 1-3), and the barrier's messages
# (message-based across nodes) come on top
out=$(HINT_P2P_STATS=1 timeout 300 "$hintrun" --nodes 2 -n 4 "$prog" mixed 2>&1)
counts=$(printf '%s\n' "$out" | sed -n 's/.*messages sent: .*, ofi \([0-9]*\)$/\1/p')
if [ "$(printf '%s\n' "$counts" | awk '$1 >= 29 && $1 <= 35' | wc -l)" -eq 4 ]; then
  ok "HINT_P2P_STATS counts 29-35 messages over ofi on each rank: $(echo $counts)"
else notok "HINT_P2P_STATS counts 29-35 messages over ofi on each rank" "$out"; fi
# and the data bytes of those messages on a line of their own, after the shm line's "bytes sent":
# 2 x (0 + 1 + 13 + 8191 + 8192 + 8193 + 70001 + 300000 + 0 + 1 + 13 + 8191) + 5 x 8 = 805632,
# with whatever the barrier's messages carry on top (192 B on rank 0 here)
bytes=$(printf '%s\n' "$out" | sed -n 's/.*bytes sent across nodes: ofi \([0-9]*\)$/\1/p')
if [ "$(printf '%s\n' "$bytes" | awk '$1 >= 805632 && $1 <= 805632 + 4096' | wc -l)" -eq 4 ]; then
  ok "HINT_P2P_STATS gives the bytes sent over ofi on each rank, blocking sends included: $(echo $bytes)"
else notok "HINT_P2P_STATS gives the bytes sent over ofi on each rank (805632 and the barrier's)" "$out"; fi
# 8 receive buffers: the 1000 unexpected messages are copied out of them (within the bound) ...
out=$(HINT_OFI_RX_BUFFERS=8 timeout 300 "$hintrun" --nodes 2 -n 4 "$prog" outstanding 2>&1)
if [ $? -eq 0 ]; then ok "outstanding with 8 receive buffers (unexpected messages copied out)"
else notok "outstanding with 8 receive buffers (unexpected messages copied out)" "$out"; fi
# ... and with no room for copies the job ends, naming the bound, instead of hanging
out=$(HINT_OFI_RX_BUFFERS=8 HINT_OFI_UNEXPECTED_MAX=0 timeout 120 "$hintrun" --nodes 2 -n 4 "$prog" outstanding 2>&1)
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && printf '%s\n' "$out" | grep -q "hold all 8 receive buffers and HINT_OFI_UNEXPECTED_MAX"; then
  ok "too many unexpected messages end the job with the bound named (exit $rc)"
else notok "too many unexpected messages end the job with the bound named (exit $rc)" "$out"; fi
# ... but not for the large pool: its senders' credits bound its unexpected messages (credit.c),
# which are copied out whatever HINT_OFI_UNEXPECTED_MAX says (room for the 1000 small ones here)
out=$(HINT_OFI_LARGE_BUFFERS=1 HINT_OFI_UNEXPECTED_MAX=0 HINT_OFI_RX_BUFFERS=2048 timeout 300 "$hintrun" --nodes 2 -n 4 "$prog" outstanding 2>&1)
rc=$?
if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q "^ok outstanding"; then
  ok "unexpected large eager messages with one large buffer and no room for copies: no abort (credits)"
else notok "unexpected large eager messages with one large buffer and no room for copies: no abort (credits) (exit $rc)" "$out"; fi
# Credits (issue 15): every rank floods every rank on another node before receiving, both ways at
# once, received from HINT_ANY_SOURCE: within HINT_OFI_LARGE_UNEXPECTED_MAX + 2 MiB of resident set
# (the flood's large eager sizes add up to 6.9 MB per sender), and with HINT_OFI_UNEXPECTED_MAX too
# small for copies of whole messages (without credits: the job ended naming the large buffers)
for kp in "2 2" "2 5"; do
  set -- $kp
  HINT_OFI_LARGE_UNEXPECTED_MAX=2M run "$1" "$2" flood "HINT_OFI_LARGE_UNEXPECTED_MAX=2M"
done
HINT_OFI_UNEXPECTED_MAX=256K run 2 2 flood "HINT_OFI_UNEXPECTED_MAX=256K"
run 3 8 flood
# ... and order across the two paths on one tag: large eager while credits last, rendezvous for
# want of one, large eager again once the receiver's takes returned them (HINT_P2P_STATS says how
# many went each way: every rank of a cross-node pair sent more large eager messages than its
# partner's window, so credits came back, and some by rendezvous)
for kpp in "2 2 0:1" "2 5 0:3,1:4" "3 8 0:3,1:4,2:5"; do
  set -- $kpp
  out=$(HINT_OFI_LARGE_UNEXPECTED_MAX=2M HINT_P2P_STATS=1 timeout 300 "$hintrun" --nodes "$1" -n "$2" "$prog" credits 2>&1)
  rc=$?
  mixed=$(printf '%s\n' "$out" |
          sed -n 's/^hint\[rank \([0-9]*\)\] ofi: .*large eager messages: \([0-9]*\) sent, \([0-9]*\) by rendezvous for want of a credit (window \([0-9]*\) per rank).*/\1 \2 \3 \4/p' |
          awk -v pairs="$3" 'BEGIN { n = split(pairs, pp, ","); for (i = 1; i <= n; i++) { split(pp[i], ab, ":"); peer[ab[1]] = ab[2]; peer[ab[2]] = ab[1] } }
                             { sent[$1] = $2; starved[$1] = $3; win[$1] = $4 }
                             END { k = 0; for (r in peer) if (sent[r] > win[peer[r]] && starved[r] > 0) k++; print k }')
  pairs=$(( $(printf '%s' "$3" | tr -cd ',' | wc -c) * 2 + 2 ))
  if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q "^ok credits" && [ "$mixed" -eq "$pairs" ]; then
    ok "credits at P=$2 on $1 nodes: one tag across large eager and rendezvous, in order ($mixed ranks took both)"
  else notok "credits at P=$2 on $1 nodes: one tag across large eager and rendezvous, in order ($mixed of $pairs ranks took both, exit $rc)" "$out"; fi
done
# ... and credits owed back go home alone before a rank sleeps, however few: after taking 8
# (fewer than half the window) the receiver sleeps, its sender then sends a whole window more,
# all large eager (before: 8 of them by rendezvous for want of the credits the sleeper kept)
out=$(HINT_P2P_STATS=1 timeout 300 "$hintrun" --nodes 2 -n 2 "$prog" credits_sleep 2>&1)
rc=$?
starved=$(printf '%s\n' "$out" | sed -n 's/^hint\[rank 0\] ofi: .*large eager messages: [0-9]* sent, \([0-9]*\) by rendezvous.*/\1/p')
slept=$(printf '%s\n' "$out" | sed -n 's/^hint\[rank 1\] ofi: .*credits returned alone [0-9]* times (\([0-9]*\) before sleeping).*/\1/p')
if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q "^ok credits_sleep" && [ "${starved:-x}" = 0 ] && [ "${slept:-0}" -ge 1 ]; then
  ok "credits owed go back before the receiver sleeps (none starved; $slept returns before sleeping)"
else notok "credits owed go back before the receiver sleeps (starved ${starved:-?}, returns before sleeping ${slept:-?}, exit $rc)" "$out"; fi
# (whether it leaves /dev/shm clean is hintrun's cleanup, checked by the crash suite: other jobs
# on a shared machine make a count of /dev/shm entries here unreliable)
out=$(HINT_OFI_PROVIDER=no-such-provider timeout 60 "$hintrun" --nodes 2 -n 2 "$prog" mixed 2>&1)
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] &&
   printf '%s\n' "$out" | grep -q "no libfabric provider 'no-such-provider' here (from HINT_OFI_PROVIDER)"; then
  ok "an unknown provider is refused at start, named (exit $rc)"
else notok "an unknown provider is refused at start, named (exit $rc)" "$out"; fi
exit $failed
