#!/usr/bin/env bash
# bench/coll-table.sh — latency of every algorithm of every collective at a few sizes and rank
# counts, as a Markdown table (the one in docs/BENCHMARKS.md).
#
#   bench/coll-table.sh [-b BUILD] [-p "2 4 8"] [-s "8,4K,1M"] [-i ITERS] [-o FILE]
#
# Each cell is hint-bench's average latency in microseconds (OSU-style timing: warm-up, barrier,
# back-to-back calls). It needs a built tree (scripts/setup.sh).
set -euo pipefail
build=build ps="2 4 8" sizes="8,4K,1M" iters="" out=/dev/stdout
usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; }
while getopts "b:p:s:i:o:h" o; do
  case $o in
    b) build=$OPTARG ;; p) ps=$OPTARG ;; s) sizes=$OPTARG ;; i) iters=$OPTARG ;; o) out=$OPTARG ;;
    h) usage; exit 0 ;; *) usage >&2; exit 2 ;;
  esac
done
hintrun=$build/launcher/hintrun bench=$build/bench/hint-bench info=$build/tools/hint_info
for f in "$hintrun" "$bench" "$info"; do
  [ -x "$f" ] || { echo "coll-table: $f is missing; build first (scripts/setup.sh)" >&2; exit 1; }
done
# op -> algorithms, from the same tables selection uses
mapfile -t rows < <("$info" --algorithms | awk '/^  [a-z]/ {op=$1} /^    [a-z]/ {print op, $1}')
{
  echo "| op | algorithm | P | $(echo "$sizes" | sed 's/,/ | /g') |"
  echo "|---|---|---|$(echo "$sizes" | sed 's/[^,]*/---/g; s/,/|/g')|"
  for row in "${rows[@]}"; do
    read -r op alg <<<"$row"
    for p in $ps; do
      cells=""
      for size in $(echo "$sizes" | tr ',' ' '); do
        [ "$op" = barrier ] && size=0
        line=$("$hintrun" -n "$p" "$bench" "$op" --algorithm "$alg" --sizes "$size" ${iters:+--iters $iters} --csv 2>&1) || true
        if echo "$line" | grep -q "^hint [0-9.]*,"; then
          cells="$cells$(echo "$line" | grep "^hint [0-9.]*," | tail -1 | awk -F, '{print $5}') | "
        elif echo "$line" | grep -q "not supported"; then
          cells="${cells}n/a | "   # the algorithm does not apply at this size (HINT_ERR_UNSUPPORTED)
        else
          cells="${cells}failed | "
        fi
        [ "$op" = barrier ] && { n=$(echo "$sizes" | tr ',' '\n' | wc -l); for _ in $(seq 2 "$n"); do cells="$cells | "; done; break; }
      done
      echo "| $op | $alg | $p | ${cells% | } |"
    done
  done
} >"$out"
