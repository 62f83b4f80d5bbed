#!/usr/bin/env bash
# tests/launchers/check_launchers.sh BUILD_ROOT PART [QUICK] — hint started by the process managers that
# clusters run, not by hintrun (issue 17; docs/LAUNCHER.md "Other launchers"). TAP output.
#   split   never silently split: a launcher's variables without a server that hint can join
#           end hint_init with a message naming the launcher and the remedy
#   hydra   mpiexec.hydra -n 3 (MPICH; PMI-1 over PMI_FD)
#   openmpi mpirun.openmpi -n 3 (Open MPI 4.1; its PMIx server)
#   slurm   srun --mpi=pmix -n 3 on a one-node Slurm this script starts (root only): munged,
#           slurmctld and slurmd with a generated slurm.conf in a temporary folder, stopped by pid
#           and removed on every exit path
# Each launcher part runs the point-to-point programs (tests/ranks/p2p_patterns, groups) and every
# collective of tests/ranks/coll_check at 3 ranks, then hint_abort and a SIGKILLed rank (both
# must end the job with a non-zero status, through the launcher), and (root) 4 ranks on 2 virtual
# nodes, host names from UTS namespaces (run_vnodes), and a rank SIGKILLed inside hint_init at each
# point where the node's shared memory is being made (run_die_in_init); after every job no shared
# memory of it may be left in /dev/shm. QUICK=1 (or HINT_LAUNCHER_QUICK=1) runs a few of the
# programs only (the sanitizer build does).
# A part whose launcher is not installed (scripts/setup.sh installs them) is skipped, saying so.
set -u
B=${1:?usage: check_launchers.sh BUILD_ROOT split|hydra|openmpi|slurm}
PART=${2:?usage: check_launchers.sh BUILD_ROOT split|hydra|openmpi|slurm}
[ "${3:-0}" = 1 ] && HINT_LAUNCHER_QUICK=1
LCH=$B/tests/launchers/lch_rank
P2P=$B/tests/ranks/p2p_patterns
GROUPS_PROG=$B/tests/ranks/groups
COLL=$B/tests/ranks/coll_check
NP=3
UIDN=$(id -u)
TMP=$(mktemp -d /tmp/hint-launchers-XXXXXX)
n=0
failed=0
DAEMONS=()

# slurmstepd of this Slurm: they carry its SLURM_CONF (found by pid, never by name alone)
our_stepds() {
    local p
    for p in $(pgrep -x slurmstepd 2>/dev/null); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "SLURM_CONF=$TMP/slurm.conf" && echo "$p"
    done
}

cleanup() {
    local pid
    if [ -f "$TMP/slurm.conf" ]; then
        # a step's slurmstepd outlives its tasks for a moment: let it end before slurmd does
        for _ in $(seq 50); do [ -z "$(our_stepds)" ] && break; sleep 0.1; done
        DAEMONS+=($(our_stepds))
    fi
    # munged itself (its pid file), not only runuser above it, so runuser reaps it
    [ -s "$TMP/munge/munged.pid" ] && DAEMONS=("$(cat "$TMP/munge/munged.pid")" "${DAEMONS[@]}")
    for pid in "${DAEMONS[@]}"; do
        kill "$pid" 2>/dev/null
    done
    for pid in "${DAEMONS[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$TMP/out" | tail -n 40; }
skip_all() { echo "1..0 # SKIP $1"; exit 0; }

# Shared memory left by the last job: of the job whose id rank 0 printed ("jobid=<16 hex>"), or,
# for a program that prints none, any hint object of this user that appeared during the job and
# is still there a second later (other jobs' objects live only while their ranks attach).
shm_snapshot() { ls /dev/shm 2>/dev/null | grep "^hint-$UIDN-" | sort >"$TMP/shm.before"; }
shm_left() {
    local id
    id=$(sed -n 's/^jobid=\([0-9a-f]\{16\}\)$/\1/p' "$TMP/out" | head -n 1)
    if [ -n "$id" ]; then
        ls /dev/shm 2>/dev/null | grep -c "^hint-$UIDN-$id-" || true
        return
    fi
    ls /dev/shm 2>/dev/null | grep "^hint-$UIDN-" | sort | comm -13 "$TMP/shm.before" - >"$TMP/shm.new"
    if [ -s "$TMP/shm.new" ]; then
        sleep 1
        ls /dev/shm 2>/dev/null | grep "^hint-$UIDN-" | sort | comm -12 "$TMP/shm.new" - >"$TMP/shm.left"
        wc -l <"$TMP/shm.left"
        return
    fi
    echo 0
}

# run_ok DESC CMD... : the job exits 0 within 300 s and leaves no shared memory.
run_ok() {
    local desc=$1 rc left
    shift
    shm_snapshot
    timeout -k 5 300 "$@" </dev/null >"$TMP/out" 2>&1
    rc=$?
    left=$(shm_left)
    if [ "$rc" -eq 0 ] && [ "$left" = 0 ]; then
        ok "$desc"
    else
        echo "# exit status $rc, shared-memory objects left: $left" >>"$TMP/out"
        not_ok "$desc"
    fi
}

# run_fails DESC PATTERN CMD... : the job ends non-zero within 60 s, its output matches PATTERN,
# and it leaves no shared memory.
run_fails() {
    local desc=$1 pat=$2 rc left
    shift 2
    shm_snapshot
    local t0=$SECONDS
    timeout -k 5 60 "$@" </dev/null >"$TMP/out" 2>&1
    rc=$?
    local took=$((SECONDS - t0))
    left=$(shm_left)
    if [ "$rc" -ne 0 ] && [ "$took" -lt 60 ] && grep -Eq "$pat" "$TMP/out" && [ "$left" = 0 ]; then
        ok "$desc (status $rc, ${took} s)"
    else
        echo "# exit status $rc after $took s (60: timed out), expected output matching: $pat; shm left: $left" >>"$TMP/out"
        not_ok "$desc"
    fi
}

# The programs of the point-to-point and collective suites (tests/ranks/test_p2p.c, test_coll.c).
suite_cases() {
    if [ "${HINT_LAUNCHER_QUICK:-0}" = 1 ]; then
        printf '%s\n' "$P2P ring 1000003" "$P2P allpairs 7" "$COLL allreduce" "$COLL alltoall"
        return
    fi
    local m op
    for m in "ring 0" "ring 1" "ring 1000" "ring 1000003" "allpairs 7" "allpairs 65536" anysource \
             many order truncate badargs testpoll flood; do
        echo "$P2P $m"
    done
    echo "$GROUPS_PROG"
    for op in barrier bcast reduce allreduce gather gatherv scatter scatterv allgather allgatherv \
              alltoall alltoallv reduce_scatter_block errors; do
        echo "$COLL $op"
    done
}

# run_suites NAME LAUNCH...: every case under the launcher command LAUNCH (which ends in -n NP).
run_suites() {
    local name=$1 c
    shift
    while read -r c; do
        # shellcheck disable=SC2086  # c is a program and its words
        run_ok "$name: ${c#"$B"/tests/ranks/}" "$@" $c
    done < <(suite_cases)
    run_ok "$name: lch_rank world (one world of $NP: allreduce of ranks)" "$@" "$LCH" world
    run_fails "$name: hint_abort(7) on rank 1 ends the job non-zero" . "$@" "$LCH" abort 1
    run_fails "$name: rank 1 killed by SIGKILL ends the job non-zero" . "$@" "$LCH" kill 1
    run_die_in_init "$name" "$@"
}

# run_die_in_init NAME LAUNCH...: a rank SIGKILLed inside hint_init (HINT_TEST_DIE_IN_INIT) while
# the node's shared memory is being made: local rank 0 right after creating the node segment or
# the heap (before the others could open it), rank 1 before and after opening each. The launcher
# ends the job non-zero (it kills the others: Open MPI and Slurm by SIGTERM, Hydra by SIGKILL),
# and no object of the job is left in /dev/shm (the dying rank prints the job id for shm_left).
run_die_in_init() {
    local name=$1 stage
    shift
    for stage in segment:0 segment:1 attach:1 heap:0 heap-attach:1; do
        run_fails "$name: rank ${stage#*:} SIGKILLed in hint_init at ${stage%:*}: non-zero, no shm left" \
            "dies of SIGKILL in hint_init at ${stage%:*}" env HINT_TEST_DIE_IN_INIT="$stage" "$@" "$LCH" world
        grep -q '^jobid=[0-9a-f]\{16\}$' "$TMP/out" ||
            not_ok "$name: the rank dying at ${stage%:*} printed its job id (for the /dev/shm check)"
    done
}

# run_vnodes NAME LAUNCH...: ranks 0-1 and 2-3 on two virtual nodes, each pair in a UTS
# namespace with its own host name (root only): hint's node map comes from the host-name exchange,
# and the ranks of the other node are reached through libfabric's tcp provider over loopback, its
# addresses exchanged through the launcher's PMIx or PMI-1 (HINT_P2P_STATS shows ofi messages).
run_vnodes() {
    local name=$1
    shift
    if [ "$(id -u)" -ne 0 ] || ! unshare -u true 2>/dev/null; then
        ok "$name: 2 virtual nodes # SKIP needs root and unshare -u for a host name per node"
        return
    fi
    cat >"$TMP/vnode.sh" <<'EOF2'
#!/bin/sh
r=${PMI_RANK:-${PMIX_RANK:-0}}
exec unshare -u sh -c 'hostname "hint-vnode$1"; shift; exec "$@"' sh $((r / 2)) "$@"
EOF2
    chmod 755 "$TMP/vnode.sh"
    local c
    for c in "$P2P allpairs 65536" "$COLL allreduce"; do
        # shellcheck disable=SC2086
        run_ok "$name: 4 ranks on 2 nodes: ${c#"$B"/tests/ranks/}" "$@" -n 4 "$TMP/vnode.sh" $c
        if [ "${c#"$P2P"}" != "$c" ] && ! grep -q "ofi [1-9]" "$TMP/out"; then
            not_ok "$name: 2 nodes: messages went through libfabric (HINT_P2P_STATS)"
        fi
    done
}

finish() {
    echo "1..$n"
    [ "$failed" -eq 0 ]
    exit $?
}

# ---------------------------------------------------------------------------- parts

part_split() {
    # no launcher at all: a world of one, as always
    run_ok "no launcher: a world of one" "$LCH" world
    grep -q "world P=1 " "$TMP/out" || not_ok "no launcher: world P=1 printed"
    run_fails "srun's SLURM_STEP_ID=0 SLURM_NTASKS=2 without PMIx: fails naming Slurm and srun --mpi=pmix" \
        "Slurm.*srun --mpi=pmix" env SLURM_STEP_ID=0 SLURM_NTASKS=2 "$LCH" world
    run_fails "SLURM_STEP_NUM_TASKS=4 without PMIx: fails naming Slurm" "Slurm.*4 tasks" \
        env SLURM_STEP_NUM_TASKS=4 "$LCH" world
    # a batch script of `sbatch -n 3` has SLURM_NTASKS=3 but is no step: a serial program there
    # is one process, and runs as a world of one
    run_ok "sbatch's script (SLURM_NTASKS=3, no step): a world of one" \
        env -u SLURM_STEP_ID -u SLURM_STEP_NUM_TASKS SLURM_NTASKS=3 SLURM_PROCID=0 "$LCH" world
    run_fails "OMPI_COMM_WORLD_SIZE=2 without PMIx: fails naming Open MPI" "Open MPI.*mpirun" \
        env OMPI_COMM_WORLD_SIZE=2 "$LCH" world
    run_fails "PMI_SIZE=2 without PMI_FD: fails naming PMI and mpiexec.hydra" "PMI_SIZE=2.*mpiexec.hydra" \
        env PMI_SIZE=2 "$LCH" world
    run_fails "PMIX_NAMESPACE/PMIX_RANK without a reachable server: fails naming PMIx" "PMIx" \
        env PMIX_NAMESPACE=hint-fake-ns PMIX_RANK=0 "$LCH" world
    run_fails "PMI_FD that is no process manager: fails naming PMI-1" "PMI-1" \
        env PMI_FD=0 PMI_RANK=0 PMI_SIZE=2 "$LCH" world </dev/null
    run_ok "SLURM_STEP_NUM_TASKS=2 with HINT_SINGLETON=1: a world of one, as asked" \
        env SLURM_STEP_NUM_TASKS=2 HINT_SINGLETON=1 "$LCH" world
}

part_hydra() {
    command -v mpiexec.hydra >/dev/null || skip_all "mpiexec.hydra not installed (Debian package mpich; scripts/setup.sh installs it)"
    run_suites hydra mpiexec.hydra -n "$NP"
    HINT_P2P_STATS=1 FI_PROVIDER=tcp FI_TCP_IFACE=lo run_vnodes hydra mpiexec.hydra
}

part_openmpi() {
    command -v mpirun.openmpi >/dev/null || skip_all "mpirun.openmpi not installed (Debian package openmpi-bin; scripts/setup.sh installs it)"
    "$LCH" --help >/dev/null
    grep -q HINT_HAVE_PMIX "$B/build.ninja" 2>/dev/null ||
        skip_all "this build has no PMIx (libpmix-dev not found by meson): mpirun.openmpi cannot be joined"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    run_suites openmpi mpirun.openmpi --oversubscribe --bind-to none -n "$NP"
    HINT_P2P_STATS=1 FI_PROVIDER=tcp FI_TCP_IFACE=lo run_vnodes openmpi mpirun.openmpi --oversubscribe \
        --bind-to none -x HINT_P2P_STATS -x FI_PROVIDER -x FI_TCP_IFACE
}

slurm_up() {
    local host conf=$TMP/slurm.conf base=$((20000 + $$ % 20000))
    host=$(hostname)
    mkdir -p "$TMP/state" "$TMP/spool" "$TMP/munge"
    chmod 755 "$TMP" # munged runs as user munge and checks the folders up to its socket's
    chown munge:munge "$TMP/munge" 2>/dev/null
    chmod 755 "$TMP/munge" # munged wants its socket folder searchable by all
    # our own munged on its own socket and key: the machine's munge (if any) is not touched
    mungekey -c -k "$TMP/munge/munge.key" 2>/dev/null ||
        dd if=/dev/urandom of="$TMP/munge/munge.key" bs=1024 count=1 2>/dev/null
    chown munge:munge "$TMP/munge/munge.key" 2>/dev/null
    chmod 600 "$TMP/munge/munge.key"
    runuser -u munge -- /usr/sbin/munged -F --key-file="$TMP/munge/munge.key" \
        --socket="$TMP/munge/munge.sock" --pid-file="$TMP/munge/munged.pid" \
        --log-file="$TMP/munge/munged.log" --seed-file="$TMP/munge/munged.seed" >"$TMP/munged.out" 2>&1 &
    DAEMONS+=($!)
    cat >"$conf" <<EOF
ClusterName=hinttest
SlurmctldHost=$host
AuthType=auth/munge
AuthInfo=socket=$TMP/munge/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmUser=root
SlurmctldPort=$base
SlurmdPort=$((base + 1))
StateSaveLocation=$TMP/state
SlurmdSpoolDir=$TMP/spool
SlurmctldPidFile=$TMP/slurmctld.pid
SlurmdPidFile=$TMP/slurmd.pid
SlurmctldLogFile=$TMP/slurmctld.log
SlurmdLogFile=$TMP/slurmd.log
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=2 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
EOF
    export SLURM_CONF=$conf
    for _ in $(seq 50); do [ -S "$TMP/munge/munge.sock" ] && break; sleep 0.1; done
    /usr/sbin/slurmctld -D -c -f "$conf" >"$TMP/slurmctld.out" 2>&1 &
    DAEMONS+=($!)
    /usr/sbin/slurmd -D -f "$conf" >"$TMP/slurmd.out" 2>&1 &
    DAEMONS+=($!)
    local t0=$SECONDS
    while [ $((SECONDS - t0)) -lt 30 ]; do
        timeout 5 sinfo -h -o %t 2>/dev/null | grep -Eq '^(idle|mix|alloc)' && return 0
        sleep 0.2
    done
    echo "# Slurm did not come up in 30 s:"
    tail -n 20 "$TMP/slurmctld.log" "$TMP/slurmd.log" "$TMP/munge/munged.log" 2>/dev/null | sed 's/^/# /'
    return 1
}

part_slurm() {
    [ "$(id -u)" -eq 0 ] || skip_all "not root: this test starts its own slurmctld, slurmd and munged"
    local p
    for p in slurmctld slurmd munged mungekey srun sinfo; do
        command -v "$p" >/dev/null || [ -x "/usr/sbin/$p" ] ||
            skip_all "$p not installed (Debian packages slurm-wlm and munge; scripts/setup.sh installs them)"
    done
    grep -q HINT_HAVE_PMIX "$B/build.ninja" 2>/dev/null ||
        skip_all "this build has no PMIx (libpmix-dev not found by meson): srun --mpi=pmix cannot be joined"
    srun_pmix=$(ls /usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix*.so 2>/dev/null | head -n 1)
    [ -n "$srun_pmix" ] || skip_all "Slurm's PMIx plugin (mpi_pmix.so) is not installed"
    if ! slurm_up; then
        n=$((n + 1))
        echo "not ok $n - a one-node Slurm starts"
        finish
    fi
    ok "a one-node Slurm starts (slurmctld, slurmd, munged on a private socket)"
    run_suites slurm srun --mpi=pmix --overcommit -n "$NP"
    HINT_P2P_STATS=1 FI_PROVIDER=tcp FI_TCP_IFACE=lo run_vnodes slurm srun --mpi=pmix --overcommit
    run_fails "slurm: srun without --mpi=pmix fails naming Slurm (never a split job)" \
        "Slurm.*srun --mpi=pmix" srun --mpi=none --overcommit -n 2 "$LCH" world
}

case $PART in
split) part_split ;;
hydra) part_hydra ;;
openmpi) part_openmpi ;;
slurm) part_slurm ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
finish
