#!/bin/sh
# hintrun --shared-heap preloads libhint: an unmodified program's malloc then serves from the
# shared heap after hint_init; without the option it does not.
set -u
hintrun=$1 prog=$2 lib=$3
echo "1..2"
if ! nm -D --defined-only "$lib" | grep -qw malloc; then
  # built without the override (-Db_sanitize=address or -Dmalloc_override=disabled): nothing to preload
  echo "ok 1 # SKIP $(basename "$lib") does not define malloc in this build (sanitizer or -Dmalloc_override=disabled)"
elif out=$("$hintrun" -n 2 --shared-heap "$prog" "$lib" 1 2>&1); then
  echo "ok 1 - with --shared-heap: $(echo "$out" | head -1)"
else
  echo "not ok 1 - with --shared-heap"; echo "$out" | sed 's/^/# /'; exit 1
fi
if out=$("$hintrun" -n 2 "$prog" "$lib" 0 2>&1); then
  echo "ok 2 - without: $(echo "$out" | head -1)"
else
  echo "not ok 2 - without --shared-heap"; echo "$out" | sed 's/^/# /'; exit 1
fi
