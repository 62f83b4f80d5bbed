#!/usr/bin/env bash
# scripts/demo.sh — set up, build, and run a real job: 4 ranks under hintrun exchange data and
# print checked results: a ring and all-pairs exchange, an FFT-style matrix transpose with
# hint_alltoall, then a distributed 3-D FFT (pencils on a 2 x 2 grid) transposed both ways and
# checked against serial FFTW.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh >/dev/null
./build/launcher/hintrun -n 4 ./build/examples/hello_ring
./build/launcher/hintrun -n 4 ./build/examples/transpose "$@"
for way in pack datatype; do
  ./build/launcher/hintrun -n 4 ./build/examples/fft3d --n 48 --decomp pencil --transpose "$way" --check --iters 5
done
