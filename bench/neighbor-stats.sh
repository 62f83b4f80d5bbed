#!/usr/bin/env bash
# bench/neighbor-stats.sh — paper 002's evidence (issue 19 item 4): messages each rank sends per
# neighbor_allgather, measured with HINT_P2P_STATS (a run with --calls N minus a run with --calls 0,
# divided by N, so the pattern's build and the program's own barriers cancel), beside the
# paper's model: naive δ(n-1) (the graph's mean out-degree, printed as measured), distance halving
# E[n_off] + E[n_in] with E[n_off] = min(ceil(log2(n/L)) + 1, δ(n-L)) and
# E[n_in] = (1 - (1-δ)^(ceil(log2(n/L)) + 2)) L  (eqs. 1, 2).
# usage: bench/neighbor-stats.sh BUILD_DIR [P...]   (default P: 8 16 32; L from HINT_VIRTUAL_SOCKETS,
#        default 2 sockets: L = P/2)
set -euo pipefail
if [ $# -lt 1 ] || [ "$1" = "--help" ]; then
  sed -n '2,9p' "$0"; exit 0
fi
build=$1; shift
ps=("$@"); [ ${#ps[@]} -gt 0 ] || ps=(8 16 32)
sockets=${HINT_VIRTUAL_SOCKETS:-2}
calls=10
run() { # P calls args... -> total messages of all ranks
  HINT_P2P_STATS=1 HINT_VIRTUAL_SOCKETS=$sockets "$build/launcher/hintrun" -n "$1" \
    "$build/bench/hint-neighbor-stats" --calls "$2" "${@:3}" 2>&1 |
    awk '/messages sent:/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+,?$/) { gsub(",", "", $i); s += $i } }
         /mean_outdegree/ { deg = $NF; dist = $(NF - 2) } END { printf "%d %s %s\n", s, deg, dist }'
}
printf "%-22s %4s %9s %9s %9s %9s %9s\n" graph P naive_meas naive_mod dh_meas dh_model L
for P in "${ps[@]}"; do
  L=$((P / sockets))
  cases=()
  for dn in 0.05 0.1 0.3 0.5 0.7; do cases+=("random:$dn:1:2"); done
  for rd in 1:1 1:2 2:2 1:3; do cases+=("moore:0:${rd}"); done
  for c in "${cases[@]}"; do
    IFS=: read -r g dn r d <<<"$c"
    args=(--graph "$g" --density "$dn" --r "$r" --d "$d" --bytes 8)
    read -r n0 deg dist < <(run "$P" 0 "${args[@]}" --algorithm naive)
    read -r n1 _ _ < <(run "$P" $calls "${args[@]}" --algorithm naive)
    read -r d0 _ _ < <(run "$P" 0 "${args[@]}" --algorithm distance_halving)
    read -r d1 _ _ < <(run "$P" $calls "${args[@]}" --algorithm distance_halving)
    # the model's δ: distinct out-neighbours / (n-1) (a wrapped Moore offset may repeat one; naive
    # sends the repeats, distance halving delivers each origin once)
    model=$(awk -v n="$P" -v L="$L" -v deg="$dist" 'BEGIN {
      delta = deg / (n - 1); s = (n > L) ? int(log(n / L) / log(2) + 0.999999) : 0;
      off = s + 1; if (delta * (n - L) < off) off = delta * (n - L);
      in_ = (1 - (1 - delta) ^ (s + 2)) * L; printf "%.2f", off + in_ }')
    name="$g"; [ "$g" = random ] && name="random d=$dn" || name="moore r=$r d=$d"
    printf "%-22s %4d %9.2f %9.2f %9.2f %9s %9d\n" "$name" "$P" "$(echo "($n1 - $n0) / $calls / $P" | bc -l)" \
      "$deg" "$(echo "($d1 - $d0) / $calls / $P" | bc -l)" "$model" "$L"
  done
done
