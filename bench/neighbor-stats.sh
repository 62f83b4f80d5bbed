#!/usr/bin/env bash
# bench/neighbor-stats.sh — paper 002's evidence (issue 19 item 4): messages each rank sends per
# neighbor_allgather, measured with HINT_P2P_STATS (a run with --calls N minus a run with --calls 0,
# divided by N, so the pattern's build and the program's own barriers cancel), beside the
# paper's model: naive δ(n-1) (the graph's mean out-degree, printed as measured), distance halving
# E[n_off] + E[n_in] with E[n_off] = min(ceil(log2(n/L)) + 1, δ(n-L)) and
# E[n_in] = (1 - (1-δ)^(ceil(log2(n/L)) + 2)) L  (eqs. 1, 2). Bytes each rank sends per call
# likewise (the shm transport's "bytes sent" line), in blocks of m = BYTES bytes, beside the model:
# naive δ(n-1) blocks; distance halving, the paper's worst case (every halving step doubles the
# message, eq. 6) 2^(E[n_off]+1) - 1 blocks off the socket plus E[n_in] messages of
# E[m_in] = δ E[n_in] blocks (eqs. 3, 7).
# usage: bench/neighbor-stats.sh BUILD_DIR [P...]   (default P: 8 16 32; L from HINT_VIRTUAL_SOCKETS,
#        default 2 sockets: L = P/2; m from BYTES, default 8)
set -euo pipefail
if [ $# -lt 1 ] || [ "$1" = "--help" ]; then
  sed -n '2,14p' "$0"; exit 0
fi
build=$1; shift
ps=("$@"); [ ${#ps[@]} -gt 0 ] || ps=(8 16 32)
sockets=${HINT_VIRTUAL_SOCKETS:-2}
calls=10
m=${BYTES:-8}
run() { # P calls args... -> total messages of all ranks, mean out-degree, distinct, total bytes
  HINT_P2P_STATS=1 HINT_VIRTUAL_SOCKETS=$sockets "$build/launcher/hintrun" -n "$1" \
    "$build/bench/hint-neighbor-stats" --calls "$2" "${@:3}" 2>&1 |
    awk '/messages sent:/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+,?$/) { gsub(",", "", $i); s += $i } }
         /bytes sent:/ { b += $NF }
         /mean_outdegree/ { deg = $NF; dist = $(NF - 2) } END { printf "%d %s %s %d\n", s, deg, dist, b }'
}
printf "%-22s %4s %9s %9s %9s %9s %4s | %9s %9s %9s %9s\n" graph P naive_meas naive_mod dh_meas dh_model L \
  naive_blk naive_mod dh_blk dh_worst
for P in "${ps[@]}"; do
  L=$((P / sockets))
  cases=()
  for dn in 0.05 0.1 0.3 0.5 0.7; do cases+=("random:$dn:1:2"); done
  for rd in 1:1 1:2 2:2 1:3; do cases+=("moore:0:${rd}"); done
  for c in "${cases[@]}"; do
    IFS=: read -r g dn r d <<<"$c"
    args=(--graph "$g" --density "$dn" --r "$r" --d "$d" --bytes "$m")
    read -r n0 deg dist nb0 < <(run "$P" 0 "${args[@]}" --algorithm naive)
    read -r n1 _ _ nb1 < <(run "$P" $calls "${args[@]}" --algorithm naive)
    read -r d0 _ _ db0 < <(run "$P" 0 "${args[@]}" --algorithm distance_halving)
    read -r d1 _ _ db1 < <(run "$P" $calls "${args[@]}" --algorithm distance_halving)
    # the model's δ: distinct out-neighbours / (n-1) (a wrapped Moore offset may repeat one; naive
    # sends the repeats, distance halving delivers each origin once)
    model=$(awk -v n="$P" -v L="$L" -v deg="$dist" 'BEGIN {
      delta = deg / (n - 1); s = (n > L) ? int(log(n / L) / log(2) + 0.999999) : 0;
      off = s + 1; if (delta * (n - L) < off) off = delta * (n - L);
      in_ = (1 - (1 - delta) ^ (s + 2)) * L; printf "%.2f %.2f", off + in_, 2 ^ (off + 1) - 1 + in_ * delta * in_ }')
    read -r model bmodel <<<"$model"
    name="$g"; [ "$g" = random ] && name="random d=$dn" || name="moore r=$r d=$d"
    printf "%-22s %4d %9.2f %9.2f %9.2f %9s %4d | %9.2f %9.2f %9.2f %9s\n" "$name" "$P" \
      "$(echo "($n1 - $n0) / $calls / $P" | bc -l)" "$deg" "$(echo "($d1 - $d0) / $calls / $P" | bc -l)" "$model" "$L" \
      "$(echo "($nb1 - $nb0) / $calls / $P / $m" | bc -l)" "$deg" "$(echo "($db1 - $db0) / $calls / $P / $m" | bc -l)" "$bmodel"
  done
done
