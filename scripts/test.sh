#!/usr/bin/env bash
# scripts/test.sh — set up, build, and run the whole test suite (Criterion through meson test),
# then the whole suite again in a sanitizer build (./build-asan: AddressSanitizer + UndefinedBehavior
# Sanitizer, the malloc override compiled out) where any report fails its test. Extra arguments go
# to both `meson test` runs. HINT_TEST_SANITIZE=0 skips the second run; the sanitizer run leaves out
# the suite 'nodes-rerun' (whole suites rerun across 3 virtual nodes, or the collectives across 2:
# the cross-node code they reach is in the sanitizer run through ranks-ofi, ranks-coll-nodes,
# ranks-p2p-nodes2 and the nbc/neighbour node tests; together they would double its time). Exit
# status: 0 only when both runs pass.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

status=0
meson test -C build --print-errorlogs --num-processes 2 "$@" || status=$?

if [ "${HINT_TEST_SANITIZE:-1}" != 0 ]; then
  # werror off: GCC's warnings change under instrumentation (e.g. a false -Wformat-truncation);
  # the plain build keeps -Werror.
  if [ ! -f build-asan/build.ninja ]; then
    meson setup build-asan --buildtype=debugoptimized -Db_sanitize=address,undefined -Dwerror=false >/dev/null
  fi
  meson compile -C build-asan
  # Any report ends the process with a failure (UBSan would otherwise print and go on); leaks
  # count, except Criterion's own (scripts/lsan.supp). handle_segv=0: a SIGSEGV kills the rank
  # with the signal, as the crash tests expect hintrun to report, instead of ASan's exit 1.
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0:strict_string_checks=1:handle_segv=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0" \
    meson test -C build-asan --print-errorlogs --num-processes 2 --timeout-multiplier 4 --no-suite nodes-rerun "$@" || status=$?
fi

# CI keeps only the tail of this output: end with which tests of either run did not pass.
for dir in build build-asan; do
  log=$dir/meson-logs/testlog.json
  [ -f "$log" ] || continue
  python3 - "$log" "$dir" <<'PY'
import json, sys
bad = [t for t in map(json.loads, open(sys.argv[1])) if t["result"] not in ("OK", "SKIP", "EXPECTEDFAIL")]
print(f"{sys.argv[2]}: {'all passed' if not bad else 'NOT passed:'}")
for t in bad:
    print(f"  {t['result']:8} {t['name']} ({t.get('duration', 0):.0f} s)")
    lines = (t.get("stdout") or "").splitlines()
    starts = [i for i, l in enumerate(lines) if l.startswith("not ok")][:10]
    for i in starts:
        print(f"    {lines[i][:200]}")
    # what the first failure printed (its TAP diagnostics), so that a failure seen only in CI
    # can be understood from the tail that CI keeps
    if starts:
        for line in lines[starts[0] + 1:starts[0] + 21]:
            if not line.startswith("#"):
                break
            print(f"      {line[:200]}")
PY
done
exit $status
