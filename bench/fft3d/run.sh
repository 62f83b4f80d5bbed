#!/usr/bin/env bash
# bench/fft3d/run.sh — examples/fft3d beside the same source built against Open MPI and MPICH
# (bench/fft3d/fft3d-openmpi, fft3d-mpich): every library, grid, rank count, decomposition and
# transpose way run --reps times; each run prints the median over --iters forward+backward pairs
# (slowest rank) of the pair, its transposes and its FFTs; this script prints the median of those
# over the runs, as a markdown table, and keeps every run's line in OUT/fft3d.csv.
#
#   bench/fft3d/run.sh [--build DIR] [--ns 64,128,256] [--nps 2,4,8] [--decomps slab,pencil]
#                      [--ways pack,datatype] [--libs hint,openmpi,mpich] [--reps 3] [--iters 3]
#                      [--out DIR]
#
# The MPI peers are for this comparison only (libhint never links MPI): when their launchers are
# missing this script installs Debian's openmpi-bin libopenmpi-dev mpich libmpich-dev and
# reconfigures the build so that bench/mpi finds the wrappers. Launch and binding as bench/compare:
# hintrun -n P; mpirun.openmpi -n P (as root: OMPI_ALLOW_RUN_AS_ROOT), with --oversubscribe and
# --mca mpi_yield_when_idle 1 beyond the cores; mpiexec.mpich -n P; bound to cores when P fits
# them, unbound beyond. Runs get TMPDIR=OUT/tmp, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."

build=build ns=64,128,256 nps=2,4,8 decomps=pencil ways=pack,datatype libs=hint,openmpi,mpich reps=3 iters=3
out=bench-fft3d
usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build|--ns|--nps|--decomps|--ways|--libs|--reps|--iters|--out)
      [ $# -ge 2 ] || { echo "run.sh: $1 needs a value" >&2; exit 2; }
      v="$2"; k="${1#--}"; shift 2
      case "$k" in
        build) build="$v" ;; ns) ns="$v" ;; nps) nps="$v" ;; decomps) decomps="$v" ;; ways) ways="$v" ;;
        libs) libs="$v" ;; reps) reps="$v" ;; iters) iters="$v" ;; out) out="$v" ;;
      esac ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
for v in "$reps" "$iters"; do
  [[ "$v" =~ ^[1-9][0-9]{0,3}$ ]] || { echo "run.sh: --reps and --iters take 1..9999, not '$v'" >&2; exit 2; }
done

need_peers=0
for l in ${libs//,/ }; do
  case "$l" in
    hint) ;;
    openmpi) command -v mpirun.openmpi >/dev/null || need_peers=1 ;;
    mpich) command -v mpiexec.mpich >/dev/null || need_peers=1 ;;
    *) echo "run.sh: unknown library '$l' (hint, openmpi, mpich)" >&2; exit 2 ;;
  esac
done
if [ $need_peers = 1 ]; then
  echo "run.sh: installing the MPI peers (benchmark only): openmpi-bin libopenmpi-dev mpich libmpich-dev"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    openmpi-bin libopenmpi-dev mpich libmpich-dev >/dev/null
  [ -f "$build/build.ninja" ] && meson setup --reconfigure "$build" >/dev/null
fi
[ -f "$build/build.ninja" ] || meson setup "$build" --buildtype=debugoptimized >/dev/null
meson compile -C "$build" >/dev/null

cores=$(nproc)
mkdir -p "$out/tmp"
child=0
trap 'rm -rf "$out/tmp"' EXIT
trap '[ "$child" -gt 0 ] && kill "$child" 2>/dev/null && wait "$child"; exit 130' INT TERM
csv="$out/fft3d.csv"
: > "$csv"
export TMPDIR="$PWD/$out/tmp"
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

command_for() { # lib P
  local bind=core; [ "$2" -gt "$cores" ] && bind=none
  case "$1" in
    hint) echo "$build/launcher/hintrun -n $2 --bind-to $bind $build/examples/fft3d" ;;
    openmpi)
      if [ "$2" -gt "$cores" ]; then
        echo "mpirun.openmpi -n $2 --bind-to none --oversubscribe --mca mpi_yield_when_idle 1 $build/bench/fft3d/fft3d-openmpi"
      else
        echo "mpirun.openmpi -n $2 --bind-to core $build/bench/fft3d/fft3d-openmpi"
      fi ;;
    mpich) echo "mpiexec.mpich -n $2 -bind-to $bind $build/bench/fft3d/fft3d-mpich" ;;
  esac
}

echo "run.sh: $(date -u '+%F %H:%M') UTC, $cores cores, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/load.txt"
for n in ${ns//,/ }; do for P in ${nps//,/ }; do for d in ${decomps//,/ }; do for w in ${ways//,/ }; do
  for r in $(seq "$reps"); do for l in ${libs//,/ }; do
    cmd="$(command_for "$l" "$P") --n $n --decomp $d --transpose $w --iters $iters --csv"
    # in the background, so that an interrupted script ends the run it is waiting for (trap above)
    timeout 900 $cmd > "$out/tmp/run.out" 2>>"$out/stderr.txt" &
    child=$!
    if wait "$child" && grep '^fft3d,' "$out/tmp/run.out" >> "$csv"; then
      child=0
    else
      child=0
      echo "run.sh: failed: $cmd" | tee -a "$out/stderr.txt" >&2
    fi
  done; done
done; done; done; done
echo "run.sh: done $(date -u '+%H:%M') UTC, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/load.txt"

python3 bench/fft3d/table.py "$csv" | tee "$out/table.md"
