#!/bin/bash
# bench/netns/side_by_side.sh — hint between two "hosts" (network namespaces joined by a veth
# pair) beside fi_pingpong on the same libfabric provider and beside MPICH (and Open MPI), runs
# interleaved. Needs root, iproute2, libfabric-bin (fi_pingpong), mpich (openmpi-bin for ompi);
# see --help. Not part of CI.
set -u
usage() {
  cat <<'USAGE'
usage: bench/netns/side_by_side.sh [options] BUILD_DIR
  Makes two network namespaces ofi<pid>a / ofi<pid>b joined by a veth pair (interface "ofin0"
  in both, 10.93.0.1 and 10.93.0.2 unless --subnet), runs the chosen benchmarks between them ROUNDS times,
  interleaved (round 1: every tool, round 2: every tool, ...), prints each run's table and a
  summary of medians per size, and removes the namespaces on every path (exit, Ctrl-C, error).
  BUILD_DIR is a hint build folder (launcher/hintrun, bench/hint-bench, bench/mpi/hint-bench-mpich,
  bench/mpi/hint-bench-openmpi for ompi).
options:
  --rounds N        runs of each tool (default 5)
  --iters N         iterations per size for the latency runs (default 2000; a tenth from 1 MiB)
  --sizes LIST      comma list of sizes in bytes (default 8,64,512,4096,65536,262144,1048576,4194304)
  --what LIST       comma list of: fi (fi_pingpong), hint, mpich (p2p latency), hintbw, mpichbw
                    (windowed bandwidth), coll (alltoall and allreduce, hint and MPICH),
                    ompi, ompibw (Open MPI 4.1: its TCP BTL with btl_tcp_if_include and
                    oob_tcp_if_include naming the veth; it busy-polls like MPICH)
                    hier (issue 16: each collective's flat message algorithm beside its
                    hierarchical ones, hint-bench OP --algorithm ALG, --ppn ranks per host)
                    (default fi,hint,mpich)
  --ppn M           ranks per host for the coll and hier entries (default 1; M > 1 puts 2M
                    ranks on this machine's cores, so read oversubscribed numbers as such)
  --provider P      libfabric provider for fi_pingpong and hint (default net: libfabric 1.17's
                    native tcp RDM, what hint picks when no provider is named; tcp gives
                    tcp;ofi_rxm)
  --fi-mode M       fi_pingpong transmit mode: msg or tagged (default tagged)
  --hint-env 'V=X ...'  extra environment for the hint ranks (e.g. HINT_OFI_RMA_MIN=1T)
  --hint-bind B     hintrun --bind-to for the hint ranks (default none, as fi_pingpong and
                    MPICH run). The two namespace hosts share this machine's cores, and each
                    host's agent binds its first rank to core 0: with binding both hosts' ranks
                    share core 0 while the other core idles (hint took 9.6-9.8 us at 8 B beside
                    fi_pingpong's 5.1-5.7, and a 2-rank exchange a whole round trip)
  --pin             each host's processes (hint's ranks, fi_pingpong's, MPICH's and Open MPI's)
                    on its own half of the cores (taskset; host a the first half), hint unbound
                    by hintrun: as two real hosts would be, whatever the scheduler does. Unpinned,
                    a loaded machine often puts both hosts' processes on one core for a whole
                    run (a waiting rank woken there), and a spinning one then holds the other up
  --variant NAME 'V=X ...'  adds NAME to the --what entries: hint's p2p latency with that extra
                    environment (FI_PROVIDER=tcp there picks tcp;ofi_rxm); a word starting with
                    -- is a hintrun option instead (e.g. --bind-to=core);
                    repeatable, run interleaved with the rest
  --fi-variant NAME PROV    adds NAME: fi_pingpong on provider PROV (e.g. fitcp tcp)
  --congestion CC   every tool's TCP sockets use congestion control CC (e.g. cubic, reno), through
                    an LD_PRELOAD shim built from bench/netns/tcp_congestion.c (a namespace
                    cannot change net.ipv4.tcp_congestion_control here); default: the
                    machine's (bbr on this one, which puts some connections in a paced state
                    that costs 3-4x at 256 KiB-1 MiB, docs/BENCHMARKS.md)
  --ucx-tls T       UCX_TLS for MPICH (default tcp,self)
  --out DIR         keep every run's raw output in DIR (default: a temporary folder, removed)
  --subnet A.B.C    the hosts' addresses A.B.C.1 and A.B.C.2 (default 10.93.0): the agents find a
                    host's namespace by its address, so a second run beside one needs another
  --help            this text
USAGE
}
declare -A variant fivariant
rounds=5 iters=2000 sizes=8,64,512,4096,65536,262144,1048576,4194304 what=fi,hint,mpich prov=net fimode=tagged hintenv= ucxtls=tcp,self out= ppn=1 hintbind=none subnet=10.93.0 pin= congestion=
while [ $# -gt 0 ]; do
  case $1 in
    --help|-h) usage; exit 0 ;;
    --rounds) rounds=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --what) what=$2; shift 2 ;;
    --provider) prov=$2; shift 2 ;;
    --fi-mode) fimode=$2; shift 2 ;;
    --hint-env) hintenv=$2; shift 2 ;;
    --hint-bind) hintbind=$2; shift 2 ;;
    --subnet) subnet=$2; shift 2 ;;
    --pin) pin=1; shift ;;
    --congestion) congestion=$2; shift 2 ;;
    --ucx-tls) ucxtls=$2; shift 2 ;;
    --variant) variant[$2]=$3; what=$what,$2; shift 3 ;;
    --fi-variant) fivariant[$2]=$3; what=$what,$2; shift 3 ;;
    --out) out=$2; shift 2 ;;
    --ppn) ppn=$2; shift 2 ;;
    -*) echo "side_by_side.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -eq 1 ] || { usage >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$(dirname "$0")/../.." && pwd)
agent=$src/tests/launcher/ns_agent.sh
[ "$(id -u)" -eq 0 ] || { echo "side_by_side.sh: needs root (ip netns)" >&2; exit 2; }
for t in ip unshare; do command -v $t >/dev/null || { echo "side_by_side.sh: needs $t (iproute2, util-linux)" >&2; exit 2; }; done
case ,$what, in *,fi,*) command -v fi_pingpong >/dev/null || { echo "side_by_side.sh: fi_pingpong missing: apt-get install libfabric-bin, or drop fi from --what" >&2; exit 2; } ;; esac
case ,$what, in *,ompi*,*) command -v mpirun.openmpi >/dev/null && [ -x "$build/bench/mpi/hint-bench-openmpi" ] ||
  { echo "side_by_side.sh: needs mpirun.openmpi (apt-get install openmpi-bin) and $build/bench/mpi/hint-bench-openmpi" >&2; exit 2; } ;; esac
case ,$what, in *,mpich*|*,coll,*) command -v mpiexec.mpich >/dev/null && [ -x "$build/bench/mpi/hint-bench-mpich" ] ||
  { echo "side_by_side.sh: needs mpiexec.mpich (apt-get install mpich) and $build/bench/mpi/hint-bench-mpich" >&2; exit 2; } ;; esac

A=ofi$$a B=ofi$$b IPA=$subnet.1 IPB=$subnet.2 IF=ofin0
tmp=$(mktemp -d /tmp/ofi-sbs.XXXXXX)
raw=${out:-$tmp}
mkdir -p "$raw"
cleanup() {
  trap - EXIT INT TERM
  for ns in $A $B; do
    for p in $(ip netns pids $ns 2>/dev/null); do kill $p 2>/dev/null; done
    ip netns del $ns 2>/dev/null
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ip netns add $A && ip netns add $B || exit 1
ip link add ofi$$va type veth peer name ofi$$vb || exit 1
ip link set ofi$$va netns $A && ip link set ofi$$vb netns $B || exit 1
ip -n $A link set ofi$$va name $IF && ip -n $B link set ofi$$vb name $IF || exit 1
ip -n $A addr add $IPA/24 dev $IF && ip -n $B addr add $IPB/24 dev $IF || exit 1
for ns in $A $B; do ip -n $ns link set lo up; ip -n $ns link set $IF up; done

fabric=(-x FI_PROVIDER="$prov" -x FI_TCP_IFACE=$IF -x FI_NET_IFACE=$IF)
# --pin: host a's processes on the first half of the cores, host b's on the rest; hint's ranks and
# MPICH's find their host by the hostname the agents give them (the namespace's name)
pinA=() pinB=() pinw=()
if [ -n "$pin" ]; then
  ncpu=$(nproc)
  [ "$ncpu" -ge 2 ] || { echo "side_by_side.sh: --pin needs 2 cores" >&2; exit 2; }
  cpusA=0-$((ncpu / 2 - 1)) cpusB=$((ncpu / 2))-$((ncpu - 1))
  printf '#!/bin/sh\ncase $(hostname) in *a) c=%s ;; *) c=%s ;; esac\nexec taskset -c $c "$@"\n' $cpusA $cpusB >"$tmp/pin.sh"
  chmod +x "$tmp/pin.sh"
  pinA=(taskset -c $cpusA) pinB=(taskset -c $cpusB) pinw=("$tmp/pin.sh") hintbind=none
fi
export FI_TCP_IFACE=$IF FI_NET_IFACE=$IF
iters_for() { if [ "$1" -ge 1048576 ]; then echo $(( (iters + 9) / 10 )); else echo "$iters"; fi; }
for v in $hintenv; do fabric+=(-x "$v"); done
# --congestion: the shim goes into every tool's environment (fi_pingpong through ccenv, hint's
# ranks through fabric, MPICH's and Open MPI's through their -genv / -x lists)
ccenv=()
if [ -n "$congestion" ]; then
  grep -qw -- "$congestion" /proc/sys/net/ipv4/tcp_available_congestion_control ||
    { echo "side_by_side.sh: --congestion $congestion is not one of: $(cat /proc/sys/net/ipv4/tcp_available_congestion_control)" >&2; exit 2; }
  cc -shared -fPIC -O2 -o "$tmp/tcp_congestion.so" "$src/bench/netns/tcp_congestion.c" -ldl ||
    { echo "side_by_side.sh: cannot build bench/netns/tcp_congestion.c" >&2; exit 2; }
  ccenv=(env LD_PRELOAD="$tmp/tcp_congestion.so" NETNS_TCP_CONGESTION="$congestion")
  fabric+=(-x LD_PRELOAD="$tmp/tcp_congestion.so" -x NETNS_TCP_CONGESTION="$congestion")
fi

run_fi() { # [PROVIDER] one fi_pingpong per size (server in B, client in A), its result rows only
  local prov=${1:-$prov}
  for sz in ${sizes//,/ }; do
    ip netns exec $B "${pinB[@]}" "${ccenv[@]}" timeout 300 fi_pingpong -p "$prov" -e rdm -m "$fimode" -I "$(iters_for $sz)" -S $sz -B 47593 \
      >/dev/null 2>&1 &
    local srv=$!
    sleep 0.3
    ip netns exec $A "${pinA[@]}" "${ccenv[@]}" timeout 300 fi_pingpong -p "$prov" -e rdm -m "$fimode" -I "$(iters_for $sz)" -S $sz -P 47593 $IPB |
      awk -v s=$sz '$1 ~ /^[0-9]/ { $1 = s; print }'
    wait $srv
  done
}
run_hint() { # OP [hint-bench args]  ($venv: a variant's extra environment and hintrun options)
  local extra=()
  for v in ${venv:-}; do case $v in --*) extra+=("$v") ;; *) extra+=(-x "$v") ;; esac; done
  ip netns exec $A timeout 600 "$build/launcher/hintrun" --launch-agent "$agent" --host $IPA:$ppn,$IPB:$ppn \
    -n $((2 * ppn)) --bind-to "$hintbind" "${fabric[@]}" \
    "${extra[@]}" \
    "${pinw[@]}" "$build/bench/hint-bench" "$@"
}
run_mpich() { # OP [hint-bench args]
  ip netns exec $A unshare -u sh -c 'hostname "$0" && exec "$@"' $A \
    timeout 600 mpiexec.mpich -launcher ssh -launcher-exec "$src/bench/netns/ns_ssh.sh" -hosts $IPA,$IPB -n $((2 * ppn)) -ppn $ppn \
    -genv UCX_TLS "$ucxtls" -genv UCX_NET_DEVICES $IF "${pinw[@]}" "${ccenv[@]}" "$build/bench/mpi/hint-bench-mpich" "$@"
}
run_ompi() { # OP [hint-bench args]  (Open MPI's rsh launcher through ns_ssh.sh; TCP BTL on the veth)
  ip netns exec $A unshare -u sh -c 'hostname "$0" && exec "$@"' $A \
    timeout 600 mpirun.openmpi --allow-run-as-root --mca plm_rsh_agent "$src/bench/netns/ns_ssh.sh" \
    --host $IPA,$IPB -np 2 --mca btl tcp,self --mca btl_tcp_if_include $IF --mca oob_tcp_if_include $IF \
    "${pinw[@]}" "${ccenv[@]}" "$build/bench/mpi/hint-bench-openmpi" "$@"
}

run_p2p() { # RUNNER: hint-bench latency, the sizes from 1 MiB with fewer iterations
  local small= large=
  for sz in ${sizes//,/ }; do if [ $sz -ge 1048576 ]; then large=$large,$sz; else small=$small,$sz; fi; done
  if [ -n "$small" ]; then $1 latency --sizes ${small#,} --iters "$iters"; fi
  if [ -n "$large" ]; then $1 latency --sizes ${large#,} --iters "$(iters_for 1048576)"; fi
}

# issue 16's pairs: each operation's flat message-based algorithm first, then its hierarchical ones
hierpairs="barrier:dissemination barrier:hier bcast:binomial bcast:hier reduce:binomial reduce:hier
  allreduce:recursive_doubling allreduce:hier allgather:recursive_doubling allgather:hier
  alltoall:linear alltoall:hier_hint alltoall:hier_hint_overlap alltoall:hier_morton"
uptime | sed 's/^/# load before: /'
for r in $(seq "$rounds"); do
  for w in ${what//,/ }; do
    f=$raw/$w.$r
    case $w in
      fi) run_fi >"$f" 2>&1 ;;
      hint) run_p2p run_hint >"$f" 2>&1 ;;
      mpich) run_p2p run_mpich >"$f" 2>&1 ;;
      hintbw) run_hint bandwidth --sizes "$sizes" --iters 20 >"$f" 2>&1 ;;
      mpichbw) run_mpich bandwidth --sizes "$sizes" --iters 20 >"$f" 2>&1 ;;
      ompi) run_p2p run_ompi >"$f" 2>&1 ;;
      ompibw) run_ompi bandwidth --sizes "$sizes" --iters 20 >"$f" 2>&1 ;;
      coll)
        for op in allreduce alltoall; do
          run_hint $op --sizes "$sizes" --iters "$iters" >"$raw/hint_$op.$r" 2>&1
          run_mpich $op --sizes "$sizes" --iters "$iters" >"$raw/mpich_$op.$r" 2>&1
        done ;;
      hier)
        for pair in $hierpairs; do
          run_hint ${pair%%:*} --algorithm ${pair#*:} --sizes "$sizes" --iters "$iters" \
            >"$raw/hier_${pair%%:*}_${pair#*:}.$r" 2>&1
        done ;;
      *) if [ -n "${variant[$w]+x}" ]; then venv=${variant[$w]} run_p2p run_hint >"$f" 2>&1
         elif [ -n "${fivariant[$w]+x}" ]; then run_fi "${fivariant[$w]}" >"$f" 2>&1
         else echo "side_by_side.sh: unknown --what entry $w" >&2; exit 2; fi ;;
    esac
    echo "# round $r $w: status $? ($(uptime | sed 's/.*load average: //'))"
  done
done
uptime | sed 's/^/# load after: /'

# Summary: medians over the rounds, per size. fi_pingpong rows (size put back in bytes): "bytes
# #sent #ack total time MB/sec usec/xfer Mxfers/sec"; hint-bench rows: "size avg min max iters".
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
col() { # FILEPREFIX SIZE -> that size's value in each round's file ($perbyte: SIZE / value)
  local k
  for f in "$raw"/$1.[0-9]*; do
    case $1 in
      fi|fi[a-z]*) k=7 ;;
      hier_barrier_*) awk '$1 == 0 { print $2 }' "$f"; continue ;;
      *) k=2 ;;
    esac
    awk -v s="$2" -v k=$k -v pb="${perbyte:-}" '$1 == s && $k > 0 { print pb ? s / $k : $k }' "$f"
  done
}
summarize() { # TITLE FILES... (the first is the reference of the ratio columns)
  echo "# $1: median over $rounds rounds"
  shift
  local names=() w
  for w in "$@"; do case $w in hier_*) names+=("${w#hier_*_}") ;; *) names+=("${w%%_*}") ;; esac; done
  local cw=11 n  # column width: the longest header plus a space
  for w in "${names[@]:1}"; do n="${names[0]}/$w"; [ $((${#n} + 1)) -gt $cw ] && cw=$((${#n} + 1)); done
  printf '%-10s' size; for w in "${names[@]}"; do printf "%${cw}s" "$w"; done
  for w in "${names[@]:1}"; do printf "%${cw}s" "${names[0]}/$w"; done; echo
  for s in ${sizes//,/ }; do
    printf '%-10s' $s
    local m=()
    for w in "$@"; do m+=("$(col $w $s | median)"); printf "%${cw}s" "${m[-1]}"; done
    for v in "${m[@]:1}"; do awk -v a="${m[0]}" -v b="$v" -v w=$cw 'BEGIN { if (a == "-" || b == "-" || b == 0) printf "%*s", w, "-"; else printf "%*.2f", w, a / b }'; done
    echo
  done
}
lat=()
for w in hint fi mpich ompi "${!variant[@]}" "${!fivariant[@]}"; do case ,$what, in *,$w,*) lat+=($w) ;; esac; done
[ ${#lat[@]} -gt 0 ] && summarize "p2p latency (us, one way)" "${lat[@]}"
# fi_pingpong's MB/sec is bytes / its usec/xfer (one message in flight), so the comparable figure of
# hint and MPICH is their ping-pong's: bytes / one-way latency, per round, then the median. (hintbw,
# mpichbw: windows of 64 sends, which fi_pingpong cannot do; no fi column there.)
[ ${#lat[@]} -gt 0 ] && perbyte=1 summarize "p2p ping-pong bandwidth (MB/s = bytes / one-way us, as fi_pingpong's MB/sec)" "${lat[@]}"
case ,$what, in *,hintbw,*) summarize "windowed bandwidth (MB/s, 64 sends in flight)" hintbw $(case ,$what, in *,mpichbw,*) echo mpichbw ;; esac) \
  $(case ,$what, in *,ompibw,*) echo ompibw ;; esac) ;; esac
case ,$what, in *,coll,*)
  for op in allreduce alltoall; do summarize "$op (us)" hint_$op mpich_$op; done ;; esac
case ,$what, in *,hier,*)
  for op in barrier bcast reduce allreduce allgather alltoall; do
    files=()
    for pair in $hierpairs; do [ "${pair%%:*}" = $op ] && files+=("hier_${op}_${pair#*:}"); done
    if [ $op = barrier ]; then sizes=0 summarize "$op at $ppn ranks per host (us)" "${files[@]}"
    else summarize "$op at $ppn ranks per host (us)" "${files[@]}"; fi
  done ;; esac
[ -n "$out" ] && echo "# raw output in $out"
exit 0
