#!/bin/sh
# bench/order_replay/replay-table.sh — cache misses per rank of each alltoall / allgather copy
# order, counted by valgrind's cachegrind on order-replay, beside the Morton paper's formulas
# (eqs. 1-2 for alltoall, 4-8 for allgather) and the ideal-cache count (distinct lines touched).
# Writes Markdown tables to stdout, progress to stderr. docs/CACHE.md explains every column.
#
#   usage: replay-table.sh BIN          (BIN = path to order-replay)
#   knobs (environment), with defaults:
#     PS="16 32 72"  BLOCKS="8:2M"  ORDERS="naive column hilbert morton"  OP=alltoall
#     RANK=0         (a rank number, or "all" for --all-ranks: every rank's schedule back to
#                    back in one cache, the paper's sequential algorithm; reported per rank)
#     D1="32768,8,64" LL="262144,8,64"   (cachegrind --D1/--LL: size,ways,line)
#     LAYOUT=packed  (order-replay --layout: packed | stagger | partition)
#     COPY=words     (words: per-size counts from cachegrind's per-function totals in one run
#                    per order; memcpy needs one run per size and a baseline, see CACHE.md)
#     MAXBYTES=4294967296   sizes whose touched buffers exceed this are skipped (and listed)
#   e.g. replay-table.sh build-mo/bench/order_replay/order-replay > table.md
set -eu
bin=${1:?usage: replay-table.sh path/to/order-replay}
PS=${PS:-"16 32 72"}
BLOCKS=${BLOCKS:-"8:2M"}
ORDERS=${ORDERS:-"naive column hilbert morton"}
OP=${OP:-alltoall}
RANK=${RANK:-0}
D1=${D1:-"32768,8,64"}
LL=${LL:-"262144,8,64"}
COPY=${COPY:-words}
LAYOUT=${LAYOUT:-packed}
MAXBYTES=${MAXBYTES:-4294967296}
z1=${D1%%,*}
z2=${LL%%,*}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$RANK" = all ]; then who="--all-ranks"; what="all ranks back to back in one cache (sequential), per rank"
else who="--rank $RANK"; what="rank $RANK alone, cold private caches"; fi

# every block size of BLOCKS, one per line
"$bin" --order naive --P 1 --block "$BLOCKS" --predict | sed 's/^block=\([0-9]*\).*/\1/' > "$tmp/blocks"

echo "cachegrind $(valgrind --version | sed 's/valgrind-//'): D1 $D1, LL $LL (size,ways,line); op $OP;" \
    "$what; layout $LAYOUT; copy $COPY; flushed before each size"
echo
for P in $PS; do
    # sizes that fit: per rank the schedule touches 2 P B bytes, all ranks 2 P^2 B
    keep=""
    skipped=""
    for b in $(cat "$tmp/blocks"); do
        if [ "$RANK" = all ]; then t=$((2 * P * P * b)); else t=$((2 * P * b)); fi
        if [ "$t" -le "$MAXBYTES" ]; then keep="$keep${keep:+,}$b"; else skipped="$skipped $b"; fi
    done
    [ -n "$keep" ] || continue
    for o in $ORDERS; do
        "$bin" --order "$o" --P "$P" --block "$keep" --op "$OP" $who --layout "$LAYOUT" --Z1 "$z1" --Z2 "$z2" --predict > "$tmp/pred.$o"
        printf 'P=%s %s ...' "$P" "$o" >&2
        start=$(date +%s)
        if ! valgrind --tool=cachegrind --cache-sim=yes --D1="$D1" --LL="$LL" --I1=32768,8,64 \
            --cachegrind-out-file="$tmp/cg.$o" "$bin" --order "$o" --P "$P" --block "$keep" --op "$OP" \
            $who --layout "$LAYOUT" --copy "$COPY" > /dev/null 2> "$tmp/err.$o"; then
            echo " valgrind failed:" >&2
            tail -5 "$tmp/err.$o" >&2
            exit 1
        fi
        echo " $(($(date +%s) - start)) s" >&2
        # per replay_K function: D1mr+D1mw and DLmr+DLmw (events Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw)
        awk '/^fn=/ { fn = substr($0, 4) }
             /^[0-9]/ { if (fn ~ /^replay_[0-9]+$/) { k = substr(fn, 8); d1[k] += $6 + $9; ll[k] += $7 + $10 } }
             END { for (k in d1) print k, d1[k], ll[k] }' "$tmp/cg.$o" | sort -n > "$tmp/miss.$o"
    done
    # the table: one row per size
    n=1
    [ "$RANK" = all ] && n=$P
    printf '\n#### P = %s\n\n| B |' "$P"
    for o in $ORDERS; do printf ' %s pred (eq.) | %s ideal | %s D1 | %s LL |' "$o" "$o" "$o" "$o"; done
    printf '\n|---:|'
    for o in $ORDERS; do printf '%s' '---:|---:|---:|---:|'; done
    printf '\n'
    i=0
    for b in $(echo "$keep" | tr ',' ' '); do
        printf '| %s |' "$b"
        for o in $ORDERS; do
            line=$(sed -n "$((i + 1))p" "$tmp/pred.$o")
            miss=$(awk -v k="$i" '$1 == k { print $2, $3 }' "$tmp/miss.$o")
            echo "$line $miss" | awk -v n="$n" '
                function num(s) { sub(/^[a-z_A-Z0-9]*=/, "", s); return s }
                function fmt(v) { v += 0; return v == int(v) ? sprintf("%d", v) : sprintf("%.1f", v) }
                { ideal = num($2); e1 = num($3); p1 = num($4); e2 = num($5); p2 = num($6)
                  d1 = $(NF - 1) / n; ll = $NF / n
                  if (p1 == "nan" || p1 == "-nan") pred = "-"
                  else if (p1 == p2) pred = fmt(p1) " (" e1 ")"
                  else pred = fmt(p1) " (" e1 ") / " fmt(p2) " (" e2 ")"
                  printf " %s | %s | %s | %s |", pred, fmt(ideal), fmt(d1), fmt(ll) }'
        done
        printf '\n'
        i=$((i + 1))
    done
    [ -z "$skipped" ] || printf '\nSkipped at P = %s (touched buffers over %s bytes):%s\n' "$P" "$MAXBYTES" "$skipped"
done
