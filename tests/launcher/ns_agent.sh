#!/bin/sh
# tests/launcher/ns_agent.sh HOST CMD... — an ssh stand-in for the multi-host tests
# (check_hosts_netns.sh): runs CMD in the network namespace that is HOST (a namespace name) or
# owns HOST (an IPv4 address of one of its interfaces), in a UTS namespace of its own whose
# hostname is the namespace's name, so each namespace looks like a host of its own. Every step
# execs, so the process hintrun starts is the agent itself (signals reach it).
# A HOST that no namespace owns gets what ssh gives an unreachable host: a message, status 255.
# Options before HOST (ssh's -o ...) are skipped, as a real ssh would take them.
while [ "${1#-}" != "$1" ]; do shift; done
host=$1
shift
ns=
for n in $(ip netns list | awk '{print $1}'); do
    if [ "$n" = "$host" ] || ip -n "$n" -o -4 addr show 2>/dev/null | grep -q " inet $host/"; then
        ns=$n
        break
    fi
done
if [ -z "$ns" ]; then
    echo "ns_agent.sh: connect to host $host port 22: No route to host" >&2
    exit 255
fi
exec ip netns exec "$ns" unshare -u sh -c 'hostname "$0" && exec "$@"' "$ns" "$@"
