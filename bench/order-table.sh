#!/usr/bin/env bash
# bench/order-table.sh — the HINT alltoall's copy orders under each copy mode, beside pairwise
# exchange, as a Markdown table of hint-bench average latencies (µs).
#
#   bench/order-table.sh [-b BUILD] [-p "2 4 8"] [-s 8,4K,64K,1M] [-o FILE]
set -euo pipefail
build=build ps="2 4 8" sizes="8,4K,64K,1M" out=/dev/stdout
while getopts "b:p:s:o:h" o; do
  case $o in
    b) build=$OPTARG ;; p) ps=$OPTARG ;; s) sizes=$OPTARG ;; o) out=$OPTARG ;;
    h) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; *) exit 2 ;;
  esac
done
run() { # P, env, algorithm -> cells
  local line
  line=$(env "$2" "$build/launcher/hintrun" -n "$1" -x "${2%%=*}" "$build/bench/hint-bench" alltoall \
         --algorithm "$3" --sizes "$sizes" --csv 2>&1) || true
  echo "$line" | grep "^hint [0-9.]*," | awk -F, '{printf "%s | ", $5}'
}
{
  echo "| P | algorithm | copy | $(echo "$sizes" | sed 's/,/ | /g') |"
  echo "|---|---|---|$(echo "$sizes" | sed 's/[^,]*/---/g; s/,/|/g')|"
  for p in $ps; do
    cells=$(run "$p" HINT_COPY=hybrid pairwise)
    echo "| $p | pairwise | - | ${cells% | } |"
    for alg in row column hilbert morton; do
      for copy in temporal nt hybrid; do
        cells=$(run "$p" "HINT_COPY=$copy" "$alg")
        echo "| $p | $alg | $copy | ${cells% | } |"
      done
    done
  done
} >"$out"
