#!/bin/sh
# tests/ranks/nbc_heap.c's checks that need the environment: the nonblocking collectives'
# single-copy schedules send no message (HINT_P2P_STATS: every path at 0 on every rank while only
# they run); without the shared heap, or with HINT_I<OP> forcing the message schedules, the same
# calls run those (hint_coll_last never says heap) and messages are counted; an unknown
# HINT_I<OP> name is reported; a forced algorithm that cannot run is HINT_ERR_UNSUPPORTED.
set -u
hintrun=$1 prog=$2
echo "1..6"
fail() { echo "not ok $1 - $2"; echo "$out" | sed 's/^/# /'; exit 1; }
out=$(HINT_P2P_STATS=1 "$hintrun" --timeout 200 -n 4 "$prog" --only-heap 2>&1) || fail 1 "single-copy run failed"
zero=$(echo "$out" | grep -c "messages sent: eager 0, heap 0, cma 0, bounce 0")
[ "$zero" -eq 4 ] || fail 1 "a rank sent messages in the single-copy calls"
echo "ok 1 - 4 ranks, every single-copy i-collective at 0 B to 64 KiB: no message (eager, heap, cma, bounce all 0)"
out=$(HINT_HEAP=private HINT_P2P_STATS=1 "$hintrun" --timeout 200 -n 3 "$prog" --only-heap --expect '!heap' 2>&1) ||
  fail 2 "HINT_HEAP=private run failed"
echo "$out" | grep -q "messages sent: eager [1-9]" || fail 2 "no message counted without the heap"
echo "ok 2 - HINT_HEAP=private: the message schedules run"
out=$(HINT_IALLTOALL=linear HINT_IALLTOALLV=linear HINT_IALLGATHER=linear HINT_IALLGATHERV=linear \
      HINT_IBCAST=bogus HINT_BCAST=binomial HINT_IGATHER=linear HINT_IGATHERV=linear HINT_ISCATTER=linear \
      HINT_ISCATTERV=linear HINT_IREDUCE=binomial HINT_IALLREDUCE=recursive_doubling \
      HINT_IREDUCE_SCATTER_BLOCK=linear "$hintrun" --timeout 200 -n 3 "$prog" --only-heap --expect '!heap' 2>&1) ||
  fail 3 "forced message schedules failed"
echo "$out" | grep -q "HINT_IBCAST=bogus: ibcast has no such algorithm" || fail 3 "the unknown HINT_IBCAST name is not reported"
echo "ok 3 - HINT_I<OP> forces the message schedules (ibcast through HINT_BCAST=binomial); an unknown name is reported"
out=$(HINT_IALLREDUCE=ring "$hintrun" --timeout 200 -n 2 "$prog" --only-heap 2>&1) && fail 4 "forced ring at P=2 ran"
echo "$out" | grep -q "returned 12" || fail 4 "forced ring at P=2 did not return HINT_ERR_UNSUPPORTED"
echo "ok 4 - HINT_IALLREDUCE=ring at P=2 (the ring needs P > 2): HINT_ERR_UNSUPPORTED"
out=$(HINT_COLL_CHECK=1 "$hintrun" --timeout 200 -n 3 "$prog" --check 2>&1) || fail 5 "HINT_COLL_CHECK mismatches (heap)"
echo "$out" | grep -q "members passed different roots" || fail 5 "the differing root is not named"
out=$(HINT_COLL_CHECK=1 HINT_IBCAST=binomial HINT_IREDUCE=binomial HINT_IALLTOALLV=linear HINT_IALLTOALL=linear \
      HINT_IALLGATHER=linear "$hintrun" --timeout 200 -n 4 "$prog" --check 2>&1) || fail 5 "HINT_COLL_CHECK mismatches (messages)"
echo "$out" | grep -q "send count differs from its receiver's count" || fail 5 "the alltoallv count is not named"
echo "ok 5 - HINT_COLL_CHECK=1: mismatched root, op, alltoallv count, collective: HINT_ERR_MISMATCH on every member, named (heap and message schedules)"
out=$(HINT_COLL_CHECK=1 "$hintrun" --timeout 200 -n 4 "$prog" 2>&1) || fail 6 "the whole test under HINT_COLL_CHECK=1"
echo "ok 6 - the whole nbc_heap test at P=4 under HINT_COLL_CHECK=1"
