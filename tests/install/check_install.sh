#!/bin/sh
# meson install into a scratch prefix, then build and run an out-of-tree program with
# cc $(pkg-config --cflags --libs hint), as a user would.
set -eu
build=$1 src=$2
echo "1..1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
meson install -C "$build" --destdir "$tmp/dest" >/dev/null
prefix=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
libdir=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="libdir"][0])')
root="$tmp/dest$prefix"
pc=$(dirname "$(find "$root" -name hint.pc | head -1)")
[ -n "$pc" ] || { echo "not ok 1 - no hint.pc installed"; exit 1; }
[ -x "$root/bin/hintrun" ] || { echo "not ok 1 - hintrun not installed"; exit 1; }
[ -f "$root/include/hint.h" ] || { echo "not ok 1 - hint.h not installed"; exit 1; }
cp "$(dirname "$0")/out_of_tree.c" "$tmp/prog.c"
# a sanitizer build's libhint needs the sanitizer runtimes first: the program is built with them too
san=$(ldd "$build/libhint.so" 2>/dev/null | grep -q libasan && echo "-fsanitize=address,undefined" || true)
PKG_CONFIG_SYSROOT_DIR="$tmp/dest" PKG_CONFIG_PATH="$pc" \
  cc -std=c11 -Wall -Werror $san "$tmp/prog.c" -o "$tmp/prog" $(PKG_CONFIG_SYSROOT_DIR="$tmp/dest" PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs hint)
out=$(LD_LIBRARY_PATH="$root/$libdir" "$root/bin/hintrun" -n 3 "$tmp/prog")
[ "$out" = "sum 3 of 3" ] || { echo "not ok 1 - out-of-tree program printed: $out"; exit 1; }
echo "ok 1 - installed, built with pkg-config, ran under the installed hintrun: $out"
