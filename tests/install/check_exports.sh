#!/bin/sh
# Every symbol libhint exports starts with hint_ (STYLE.md: one prefix, hidden symbols), and the
# whole public API of hint.h is exported.
set -eu
lib=$1
bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRV]$/ {print $3}' | grep -v '^hint_' || true)
if [ -n "$bad" ]; then
  echo "not ok - exported symbols without the hint_ prefix: $bad"
  exit 1
fi
for f in hint_init hint_finalize hint_alltoall hint_send hint_group_split hint_type_vector hint_mr_rank \
         hint_coll_set hint_strerror hint_type_byte_ hint_op_sum_; do
  nm -D --defined-only "$lib" | awk '{print $3}' | grep -qx "$f" || { echo "not ok - $f is not exported"; exit 1; }
done
echo "ok - $(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRV]$/' | wc -l) exported symbols, all hint_*"
