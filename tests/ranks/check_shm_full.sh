#!/bin/sh
# /dev/shm fills up after the start (tests/ranks/shm_full.c, in a 400 MiB private tmpfs): no rank
# dies of SIGBUS, the heap warns once per rank, allocations past the room come from glibc
# (HINT_HEAP_STRICT=1: NULL), and the job exits 0. Needs root for the private mount: skips
# otherwise.
set -u
hintrun=$1 prog=$2
if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null; then
  echo "1..0 # SKIP a private /dev/shm needs root and unshare -m (uid $(id -u))"
  exit 0
fi
echo "1..2"
n=0
for strict in 0 1; do
  n=$((n + 1))
  out=$(HINT_HEAP_SIZE=128M HINT_HEAP_STRICT=$strict unshare -m sh -c \
        "mount -t tmpfs -o size=400M tmpfs /dev/shm && exec $hintrun -n 2 --timeout 120 $prog" 2>&1)
  rc=$?
  fail() { echo "not ok $n - HINT_HEAP_STRICT=$strict: $1"; echo "$out" | sed 's/^/# /'; exit 1; }
  [ $rc -eq 0 ] || fail "the job exited with $rc"
  echo "$out" | grep -qi "sigbus\|bus error" && fail "a rank died of SIGBUS"
  warnings=$(echo "$out" | grep -c "filled up after the start")
  [ "$warnings" -ge 1 ] && [ "$warnings" -le 2 ] || fail "$warnings warnings about the full /dev/shm, want 1 per rank that hit it"
  [ "$(echo "$out" | grep -c 'every byte right')" -eq 2 ] || fail "not every rank checked its data"
  echo "ok $n - HINT_HEAP_STRICT=$strict: $(echo "$out" | grep 'every byte right' | tr '\n' ';')"
done
