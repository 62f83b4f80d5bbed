#!/bin/sh
# Every symbol libhint exports starts with hint_ (STYLE.md: one prefix, hidden symbols), but for
# the allocator functions it replaces (the shared heap's malloc override), mprotect and madvise
# (how the shared heap sees mimalloc's commits and decommits, runtime/heap.c), and the whole
# public API of hint.h is exported.
set -eu
lib=$1
echo "1..1"
allocator='^(malloc|free|calloc|realloc|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|malloc_usable_size)$'
heap_hooks='^(mprotect|madvise)$'
# __odr_asan.*: AddressSanitizer's one-definition-rule markers (sanitizer builds only)
bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | grep -v '^hint_' | grep -Ev "$allocator" |
      grep -Ev "$heap_hooks" | grep -v '^__odr_asan\.hint_' || true)
if [ -n "$bad" ]; then
  echo "not ok 1 - exported symbols without the hint_ prefix: $bad"
  exit 1
fi
for f in hint_init hint_finalize hint_alltoall hint_send hint_group_split hint_type_vector hint_mr_rank \
         hint_coll_set hint_strerror hint_type_byte_ hint_op_sum_; do
  nm -D --defined-only "$lib" | awk '{print $3}' | grep -qx "$f" || { echo "not ok 1 - $f is not exported"; exit 1; }
done
echo "ok 1 - $(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRV]$/' | wc -l) exported symbols, all hint_*"
