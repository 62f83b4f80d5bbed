#!/bin/sh
# bench/netns/ns_ssh.sh [ssh options] HOST COMMAND... — an ssh stand-in for MPICH's Hydra
# (mpiexec -launcher ssh -launcher-exec ns_ssh.sh): like ssh, the words of COMMAND are joined and
# read by a shell (Hydra quotes its proxy's arguments for that shell), run in the network
# namespace that owns the IPv4 address HOST (or is named HOST), with its own hostname.
# tests/launcher/ns_agent.sh is hintrun's (it execs its arguments as they are).
while [ "${1#-}" != "$1" ]; do shift; done
host=$1
shift
for n in $(ip netns list | awk '{print $1}'); do
    if [ "$n" = "$host" ] || ip -n "$n" -o -4 addr show 2>/dev/null | grep -q " inet $host/"; then
        exec ip netns exec "$n" unshare -u sh -c "hostname $n && $*"
    fi
done
echo "ns_ssh.sh: connect to host $host port 22: No route to host" >&2
exit 255
