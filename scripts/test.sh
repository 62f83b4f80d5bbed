#!/usr/bin/env bash
# scripts/test.sh — set up, build, and run the whole test suite (Criterion through meson test).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
meson test -C build --print-errorlogs --num-processes 2 "$@"
