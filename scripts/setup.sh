#!/usr/bin/env bash
# scripts/setup.sh — install what hint needs on a fresh Debian 12 machine (only the packages that
# are missing), then configure and build it in ./build. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# gcc brings libasan8 and libubsan1 (through libgcc-12-dev): the sanitizer build of scripts/test.sh
# needs nothing more; they are named so that a trimmed image cannot lack them. iproute2: the
# launcher-hosts-netns test makes two hosts out of network namespaces (as root; it skips otherwise).
# libpmix-dev: ranks join Open MPI's mpirun and srun --mpi=pmix (optional in meson); openmpi-bin,
# mpich, slurm-wlm and munge: the launchers tests/launchers runs hint under (no hint code links them).
# libopenmpi-dev and libmpich-dev: mpi.h for the benchmark peers in bench/mpi (the -bin packages
# ship the wrappers without the headers, and only recommend the -dev packages). libfabric-bin:
# fi_pingpong and fi_info, the reference bench/netns/side_by_side.sh and loopback.sh run hint beside.
packages=(meson ninja-build pkg-config gcc libc6-dev libhwloc-dev libfabric-dev libcriterion-dev
          libpapi-dev libmimalloc-dev libjansson-dev libasan8 libubsan1 binutils libfftw3-dev
          man-db groff-base iproute2
          libpmix-dev openmpi-bin mpich libopenmpi-dev libmpich-dev slurm-wlm munge
          libfabric-bin)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -f build/build.ninja ]; then
  meson setup build --buildtype=debugoptimized >/dev/null
fi
meson compile -C build
