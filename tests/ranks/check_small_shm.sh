#!/bin/sh
# A /dev/shm too small for the node segment (as in a container with the default 64 MiB, here
# 1 MiB in a private mount namespace) must stop the job at start with a message naming the size
# needed, the size free and the remedy, not a SIGBUS later.
set -u
hintrun=$1 prog=$2
if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null; then
  echo "1..0 # SKIP a private /dev/shm needs root and unshare -m (uid $(id -u))"
  exit 0
fi
out=$(unshare -m sh -c "mount -t tmpfs -o size=1M tmpfs /dev/shm && exec $hintrun -n 4 $prog" 2>&1)
rc=$?
fail() { echo "not ok - $1"; echo "$out" | sed 's/^/# /'; exit 1; }
echo "1..1"
[ $rc -ne 0 ] || fail "the job started although /dev/shm has 1 MiB"
echo "$out" | grep -q "cannot mount\|Operation not permitted\|unshare failed" && fail "could not make a small /dev/shm here (unshare -m and mount need root)"
echo "$out" | grep -Eq "needs [0-9]+ KiB in /dev/shm but only [0-9]+ KiB are free" || fail "no message with the sizes"
echo "$out" | grep -q "shm-size" || fail "no remedy in the message"
echo "ok 1 - small /dev/shm refused at start: $(echo "$out" | grep -o 'needs [0-9]* KiB[^;]*')"
