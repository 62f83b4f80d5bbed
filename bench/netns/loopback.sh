#!/bin/bash
# bench/netns/loopback.sh — hint's p2p ping-pong between two virtual nodes over loopback beside
# fi_pingpong on the same libfabric provider, runs interleaved, timed by bench/netns/call_times.c
# (an LD_PRELOAD library stamping the libc calls both make), so that a loaded machine still gives
# a comparison: the low percentiles of the round trips (send to send) stay put where the averages
# swing by 100x. No root, no namespaces; see --help. Not part of CI.
set -u
usage() {
  cat <<'USAGE'
usage: bench/netns/loopback.sh [options] BUILD [BUILD | NAME:VAR=VALUE:BUILD ...]
  Per round: fi_pingpong -p PROV -e rdm -m tagged (server and client on 127.0.0.1), then for
  every BUILD `hintrun --nodes 2 -n 2 hint-bench latency` (FI_PROVIDER=PROV, interface lo); a
  NAME:VAR=VALUE:BUILD entry runs BUILD with one more variable under NAME. Prints each tool's
  own average per round, then half the round trip (us) from the stamps: the median over
  processes and rounds of each run's p10 / p25 / median, the best round's, and each build's
  ratio to fi_pingpong, and the turn-around (a message's receive returned to the reply's send).
options:
  --rounds N     rounds (default 5)
  --size B       message bytes (default 8)
  --iters N      iterations per run (default 3000)
  --provider P   libfabric provider (default net)
  --port N       fi_pingpong's first port (default 47811; one more per round)
  --help
USAGE
}
rounds=5 size=8 iters=3000 prov=net port=47811
while [ $# -gt 0 ]; do
  case $1 in
    --help|-h) usage; exit 0 ;;
    --rounds) rounds=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --provider) prov=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    -*) echo "loopback.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { usage >&2; exit 2; }
command -v fi_pingpong >/dev/null || { echo "loopback.sh: fi_pingpong missing (apt-get install libfabric-bin)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/ofi-lo.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
cc -O2 -shared -fPIC -o "$tmp/ct.so" "$here/call_times.c" -ldl || exit 1
export FI_NET_IFACE=lo FI_TCP_IFACE=lo
uptime | sed 's/^/# load before: /'
for r in $(seq "$rounds"); do
  p=$((port + r))
  LD_PRELOAD=$tmp/ct.so SHIM_OUT=$tmp/fi.$r timeout 300 fi_pingpong -p "$prov" -e rdm -m tagged -I "$iters" -S "$size" \
    -B $p >/dev/null 2>&1 &
  srv=$!
  sleep 0.3
  avg=$(LD_PRELOAD=$tmp/ct.so SHIM_OUT=$tmp/fi.$r timeout 300 fi_pingpong -p "$prov" -e rdm -m tagged -I "$iters" \
    -S "$size" -P $p 127.0.0.1 | awk '$1 ~ /^[0-9]/ { print $7 }')
  wait $srv
  echo "# round $r fi_pingpong: ${avg:-failed} us"
  for spec in "$@"; do
    case $spec in
      *:*=*:*) name=${spec%%:*}; rest=${spec#*:}; var=${rest%%:*}; build=${rest#*:} ;;
      *) build=$spec; name=hint; [ $# -gt 1 ] && name=$(basename "$(cd "$build/.." && pwd)"); var=HINT_LOOPBACK=1 ;;
    esac
    avg=$(env FI_PROVIDER="$prov" "$var" SHIM_OUT="$tmp/$name.$r" timeout 600 "$build/launcher/hintrun" --nodes 2 -n 2 \
      -x LD_PRELOAD="$tmp/ct.so" "$build/bench/hint-bench" latency --sizes "$size" --iters "$iters" 2>&1 |
      awk '$1 ~ /^[0-9]/ { print $2 }')
    echo "# round $r $name: ${avg:-failed} us"
  done
done
uptime | sed 's/^/# load after: /'
python3 - "$tmp" <<'PY'
import collections, glob, os, sys
res, turn = collections.defaultdict(list), collections.defaultdict(list)
for fn in glob.glob(sys.argv[1] + '/*.ev.*'):
    who = os.path.basename(fn).split('.')[0]
    ev = [(int(t), c) for t, c in (l.split() for l in open(fn))]
    ts = [t for t, c in ev if c == 'S']
    d = sorted(b - a for a, b in zip(ts, ts[1:]))
    if len(d) < 100:
        continue
    res[who].append([d[len(d) * k // 100] / 2000 for k in (10, 25, 50)])
    last, tr = None, []
    for t, c in ev:
        if c == 'R':
            last = t
        elif c == 'S' and last is not None:
            tr.append(t - last)
            last = None
    if tr:
        turn[who].append(sorted(tr)[len(tr) // 2] / 1000)
med = lambda v: sorted(v)[len(v) // 2]
rows = {w: ([med([x[i] for x in v]) for i in range(3)], [min(x[i] for x in v) for i in range(3)]) for w, v in res.items()}
print('half round trip (us), p10 / p25 / median of each run: median over runs | best run | turn-around (us)')
for w in sorted(rows, key=lambda w: (w != 'fi', w)):
    m, b = rows[w]
    print('%-10s %6.2f %6.2f %6.2f | %6.2f %6.2f %6.2f | %5.2f' % (w, *m, *b, med(turn[w])))
if 'fi' in rows:
    for w in sorted(rows):
        if w != 'fi':
            (m, b), (fm, fb) = rows[w], rows['fi']
            print('%-10s %6.2f %6.2f %6.2f | %6.2f %6.2f %6.2f' % (w + '/fi', *(x / y for x, y in zip(m, fm)), *(x / y for x, y in zip(b, fb))))
PY
