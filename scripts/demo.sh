#!/usr/bin/env bash
# scripts/demo.sh — set up, build, and run a real job: 4 ranks under hintrun exchange data and
# print a checked result.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh >/dev/null
exec ./build/launcher/hintrun -n 4 ./build/examples/hello_ring "$@"
