#!/bin/sh
# tests/install/check_relocatable.sh BUILD — a user's view of the install: meson install into a
# destdir; build one out-of-tree program four ways (pkg-config shared and --static, CMake
# find_package(hint CONFIG) with hint::hint and hint::hint_static); then MOVE the destdir and
# run each under the moved hintrun, check that `hintrun --shared-heap` preloads the moved
# libhint, and that nothing installed points into the build tree. TAP.
set -u
build=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | head -30 | sed 's/^/# /'; }
opt() { meson introspect "$build" --buildoptions | python3 -c "import json,sys; print([o['value'] for o in json.load(sys.stdin) if o['name']=='$1'][0])"; }
echo "1..10"
meson install -C "$build" --destdir "$tmp/dest" >/dev/null 2>&1 || { notok "meson install"; exit 1; }
prefix=$(opt prefix) libdir=$(opt libdir)
root="$tmp/dest$prefix"
cp "$(dirname "$0")/out_of_tree.c" "$tmp/prog.c"
san=$(ldd "$build/libhint.so" 2>/dev/null | grep -q libasan && echo "-fsanitize=address,undefined" || true)
export PKG_CONFIG_SYSROOT_DIR="$tmp/dest" PKG_CONFIG_PATH="$root/$libdir/pkgconfig"
# 1-2: pkg-config, shared and static (libhint.a; -lhint is the only library taken statically)
if out=$(cc -std=c11 -Wall -Werror $san "$tmp/prog.c" -o "$tmp/pc-shared" $(pkg-config --cflags --libs hint) 2>&1); then
  ok "pkg-config --libs hint links"; else notok "pkg-config --libs hint links" "$out"; fi
libs=$(pkg-config --static --libs hint | sed 's/-lhint\b/-Wl,-Bstatic -lhint -Wl,-Bdynamic/')
if out=$(cc -std=c11 -Wall -Werror $san "$tmp/prog.c" -o "$tmp/pc-static" $(pkg-config --cflags hint) $libs 2>&1) &&
   ! readelf -d "$tmp/pc-static" | grep -q 'libhint'; then
  ok "pkg-config --static --libs hint links libhint.a (was: cannot find -lrdmacm)"
else notok "pkg-config --static links libhint.a" "$out $(pkg-config --static --libs hint)"; fi
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH
# 3-4: CMake
mkdir -p "$tmp/cm"
cp "$tmp/prog.c" "$tmp/cm/prog.c"
cat >"$tmp/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.13)
project(uses_hint C)
find_package(hint 0.1 CONFIG REQUIRED)
add_executable(cm-shared prog.c)
target_link_libraries(cm-shared PRIVATE hint::hint)
add_executable(cm-static prog.c)
target_link_libraries(cm-static PRIVATE hint::hint_static)
CM
if out=$(cmake -S "$tmp/cm" -B "$tmp/cm/b" -DCMAKE_PREFIX_PATH="$root" -DCMAKE_C_FLAGS="$san" 2>&1 &&
         cmake --build "$tmp/cm/b" 2>&1); then
  ok "CMake find_package(hint CONFIG) builds with hint::hint"
  if readelf -d "$tmp/cm/b/cm-static" | grep -q libhint; then notok "hint::hint_static links libhint.a"
  else ok "hint::hint_static links libhint.a"; fi
else
  notok "CMake find_package(hint CONFIG) builds with hint::hint" "$out"; notok "hint::hint_static (not built)"
fi
# 5: nothing installed points into the build tree (text files, rpaths, hintrun's strings)
leaks=$(grep -rIl "$build" "$root" 2>/dev/null)
for f in "$root"/bin/*; do
  readelf -d "$f" 2>/dev/null | grep -E 'R(UN)?PATH' | grep -q "$build" && leaks="$leaks $f(rpath)"
done
objcopy -O binary --only-section=.rodata "$root/bin/hintrun" "$tmp/ro" 2>/dev/null
grep -q "$build" "$tmp/ro" 2>/dev/null && leaks="$leaks hintrun(.rodata)"
if [ -z "$leaks" ]; then ok "nothing installed names the build tree"; else notok "nothing installed names the build tree" "$leaks"; fi
# move the install
mv "$tmp/dest" "$tmp/moved"
root="$tmp/moved$prefix"
# 6-9: each program under the moved hintrun
for p in pc-shared pc-static cm/b/cm-shared cm/b/cm-static; do
  [ -x "$tmp/$p" ] || { notok "moved install: $p (not built)"; continue; }
  out=$(LD_LIBRARY_PATH="$root/$libdir" "$root/bin/hintrun" -n 3 "$tmp/$p" 2>&1)
  if [ "$out" = "sum 3 of 3" ]; then ok "moved install: $p runs under the moved hintrun"
  else notok "moved install: $p runs under the moved hintrun" "$out"; fi
done
# 10: --shared-heap preloads the moved libhint (a build without the malloc override, such as the
# sanitizer build, has nothing to preload: ASan must come first and libhint defines no malloc)
if ! nm -D --defined-only "$root/$libdir/libhint.so" | grep -qw malloc; then
  n=$((n + 1)); echo "ok $n # SKIP libhint.so defines no malloc in this build (sanitizer or -Dmalloc_override=disabled)"
else
  pre=$("$root/bin/hintrun" -n 1 --shared-heap sh -c 'echo "$LD_PRELOAD"' 2>&1)
  case "$pre" in
    "$root/$libdir/libhint.so"*) ok "moved hintrun --shared-heap preloads the moved libhint ($pre)" ;;
    *) notok "moved hintrun --shared-heap preloads the moved libhint" "LD_PRELOAD=$pre" ;;
  esac
fi
[ $fails -eq 0 ]
