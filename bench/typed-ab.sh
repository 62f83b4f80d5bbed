#!/usr/bin/env bash
# bench/typed-ab.sh — derived datatypes in alltoall/allgather: hint copying straight from and to
# the layouts (HINT_COLL_TYPED=1, the default) against packing through scratch
# (HINT_COLL_TYPED=0), the two taking turns; a Markdown table of medians (µs) and the ratio.
#
#   bench/typed-ab.sh [-b BUILD] [-o OP] [-p "2 8"] [-s 2K,16K,128K,1M] [-l "strided strided"] [-r REPS]
set -euo pipefail
build=build op=alltoall ps="2 8" sizes="2K,16K,128K,1M" layouts="strided strided" reps=5
while getopts "b:o:p:s:l:r:h" o; do
  case $o in
    b) build=$OPTARG ;; o) op=$OPTARG ;; p) ps=$OPTARG ;; s) sizes=$OPTARG ;; l) layouts=$OPTARG ;;
    r) reps=$OPTARG ;;
    h) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; *) exit 2 ;;
  esac
done
read -r stype rtype <<<"$layouts"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for p in $ps; do
  for ((r = 0; r < reps; r++)); do
    for typed in 1 0; do
      HINT_COLL_TYPED=$typed "$build/launcher/hintrun" -n "$p" -x HINT_COLL_TYPED "$build/bench/hint-bench" "$op" \
        --stype "$stype" --rtype "$rtype" --sizes "$sizes" --csv 2>/dev/null |
        awk -F, -v p="$p" -v t="$typed" '/^hint /{print p, t, $4, $5, $9}' >>"$tmp/runs"
    done
  done
done
python3 - "$tmp/runs" "$op" "$stype" "$rtype" "$reps" <<'EOF'
import statistics, sys
from collections import defaultdict
runs, op, stype, rtype, reps = sys.argv[1:]
cells, alg = defaultdict(list), {}
for line in open(runs):
    p, typed, size, us, a = line.split()
    cells[(int(p), int(size), typed)].append(float(us))
    alg[(int(p), int(size))] = a
print(f"{op}, stype={stype}, rtype={rtype}: median of {reps} runs each, µs (ratio below 1: straight copy faster)\n")
print("| P | bytes | algorithm | straight from the layouts | packed through scratch | ratio |")
print("|---:|---:|---|---:|---:|---:|")
for (p, size) in sorted(alg):
    a, b = (statistics.median(cells[(p, size, t)]) for t in "10")
    print(f"| {p} | {size} | {alg[(p, size)]} | {a:.3g} | {b:.3g} | {a / b:.2f} |")
EOF
