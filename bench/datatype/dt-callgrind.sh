#!/bin/sh
# bench/datatype/dt-callgrind.sh — valgrind callgrind instructions per packed datatype element,
# for each representation and type of hint-dt-bench (deterministic, unlike timings on a shared
# 2-core box). Counts only inside dt_pack_range_rep (or dt_unpack_range_rep with --unpack), so
# setup and calibration are excluded.
#   usage: [FN=function] dt-callgrind.sh BENCH [--unpack] [COUNTS] [REPS] [TYPES]
#   e.g.   dt-callgrind.sh build/bench/datatype/hint-dt-bench "" "8 2048"
#          FN='*MPI_Pack' dt-callgrind.sh build/bench/datatype/mpi-dt-bench-openmpi "" "8 2048" mpi
set -eu
bench=$1
dir=${2:-}
counts=${3:-"8 64 512 2048"}
reps=${4:-"loop iovec mars mars16"}
types=${5:-"7_1 6_1_1 5_1_1_1 4_1_1_1_1 3_1_1_1_1_1 2_1_1_1_1_1_1 1_1_1_1_1_1_1_1 indexed_gap optimized_indexed_gap"}
fn=${FN:-dt_pack_range_rep}
[ "$dir" = "--unpack" ] && fn=${FN:-dt_unpack_range_rep}
iters=10
out=$(mktemp)
trap 'rm -f "$out"' EXIT
printf '%-22s %-8s' type rep
for c in $counts; do printf ' %9s' "n=$c"; done
printf '\n'
for t in $types; do
    for r in $reps; do
        printf '%-22s %-8s' "$t" "$r"
        for c in $counts; do
            valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect="$fn" \
                "$bench" --once $iters --types "$t" --reps "$r" --counts "$c:$c" $dir >/dev/null 2>&1
            ir=$(awk '/^(summary|totals):/ {print $2; exit}' "$out")
            awk -v ir="$ir" -v n="$c" -v it=$iters 'BEGIN { printf " %9.1f", ir / (n * it) }'
        done
        printf '\n'
    done
done
