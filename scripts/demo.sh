#!/usr/bin/env bash
# scripts/demo.sh — set up, build, and run a real job: 4 ranks under hintrun exchange data and
# print checked results: a ring and all-pairs exchange, then an FFT-style matrix transpose
# with hint_alltoall.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh >/dev/null
./build/launcher/hintrun -n 4 ./build/examples/hello_ring
exec ./build/launcher/hintrun -n 4 ./build/examples/transpose "$@"
