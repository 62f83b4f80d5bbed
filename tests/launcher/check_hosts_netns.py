#!/usr/bin/env python3
"""tests/launcher/check_hosts_netns.py BUILD_ROOT SOURCE_ROOT — hintrun --host across two
"hosts": two network namespaces joined by a veth pair, each with its own hostname
(tests/launcher/ns_agent.sh is the launch agent, an ssh stand-in). The front runs in the first
namespace; bytes between the hosts go through libfabric's tcp provider over the veth pair.

Checks: ranks dealt to hosts as blocks with HINT_NODE_ID/HINT_NNODES/HINT_LOCAL_*; point to
point and collectives across the hosts; a rank killed on the remote host ends the job within a
second naming host, rank and signal, with no process and no /dev/shm object left on either host;
a rank exiting 0 without hint_finalize on the remote host fails the job; the store refuses a
wrong token over TCP; an unreachable host (launch agent status 255), a launch agent that cannot
run (127) and a store the remote host cannot reach are named; the front killed by SIGKILL
leaves nothing on either host.

Needs root and `ip netns`; prints a TAP skip saying why otherwise. The namespaces carry this
process's pid in their names and are removed on every exit path."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

BUILD, SOURCE = sys.argv[1], sys.argv[2]
HINTRUN = os.path.join(BUILD, "launcher", "hintrun")
LT_RANK = os.path.join(BUILD, "tests", "launcher", "lt_rank")
P2P = os.path.join(BUILD, "tests", "ranks", "p2p_patterns")
COLL = os.path.join(BUILD, "tests", "ranks", "coll_check")
RING = os.path.join(BUILD, "examples", "hello_ring")
AGENT = os.path.join(SOURCE, "tests", "launcher", "ns_agent.sh")
PID = os.getpid()
NS = ["hnt%da" % PID, "hnt%db" % PID]
IP = ["10.231.0.1", "10.231.0.2"]
UNREACHABLE = "10.231.0.99"
IFACE = "hnet0"  # the veth end has this name in both namespaces, so one FI_TCP_IFACE fits both
FABRIC = ["-x", "FI_PROVIDER=tcp", "-x", "FI_TCP_IFACE=" + IFACE]

results = []


def skip_all(why):
    print("1..0 # SKIP %s" % why)
    sys.exit(0)


def sh(*cmd, check=True):
    return subprocess.run(cmd, capture_output=True, text=True, check=check)


def setup():
    if os.geteuid() != 0:
        skip_all("needs root to create network namespaces")
    if not shutil.which("ip") or not shutil.which("unshare"):
        skip_all("needs ip (iproute2) and unshare")
    try:
        sh("ip", "netns", "add", NS[0])
    except subprocess.CalledProcessError as e:
        skip_all("ip netns add failed: %s" % e.stderr.strip())
    sh("ip", "netns", "add", NS[1])
    va, vb = "hv%da" % PID, "hv%db" % PID
    sh("ip", "link", "add", va[:15], "type", "veth", "peer", "name", vb[:15])
    for k, v in enumerate([va[:15], vb[:15]]):
        sh("ip", "link", "set", v, "netns", NS[k])
        sh("ip", "-n", NS[k], "link", "set", v, "name", IFACE)
        sh("ip", "-n", NS[k], "addr", "add", IP[k] + "/24", "dev", IFACE)
        sh("ip", "-n", NS[k], "link", "set", "lo", "up")
        sh("ip", "-n", NS[k], "link", "set", IFACE, "up")


def teardown():
    for n in NS:
        subprocess.run(["ip", "netns", "del", n], capture_output=True)


def hintrun(args, timeout=300, kill_front_after=None):
    """Runs hintrun in the first namespace; returns (status, stdout, stderr, seconds, end)."""
    cmd = ["ip", "netns", "exec", NS[0], HINTRUN, "--launch-agent", AGENT] + args
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         stdin=subprocess.DEVNULL)
    if kill_front_after:
        time.sleep(kill_front_after)
        p.send_signal(signal.SIGKILL)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        err += "\n(test: killed after %d s)" % timeout
    end = time.monotonic()
    return p.returncode, out, err, end - t0, end


def ok(cond, name, detail=""):
    results.append(cond)
    print("%s %d - %s" % ("ok" if cond else "not ok", len(results), name))
    if not cond and detail:
        for line in detail.rstrip("\n").split("\n")[-40:]:
            print("# " + line)
    sys.stdout.flush()


def alive(pid):
    """pid exists and is not a zombie; waits up to 2 s for it to go"""
    for _ in range(200):
        try:
            with open("/proc/%d/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return False
        if state in ("Z", "X"):
            return False
        time.sleep(0.01)
    return True


def left_behind(out):
    """what the job left: live pids it announced, and its /dev/shm objects (both hosts share
    this machine's /dev/shm; the namespaces are network and UTS only)"""
    left = [int(p) for p in re.findall(r" pid (\d+) ", out) + re.findall(r"grandchild (\d+)", out)
            if alive(int(p))]
    jobs = set(re.findall(r"jobid ([0-9a-f]{16})", out))
    # after a SIGKILL of the front, the agents' cleanup runs after the front is gone: give it
    # the 2 s a watcher may take
    for _ in range(300):
        shm = [f for f in os.listdir("/dev/shm") for j in jobs if j in f]
        if not shm:
            break
        time.sleep(0.01)
    return left, shm, jobs


def hosts(a, b):
    return ["--host", "%s:%d,%s:%d" % (IP[0], a, IP[1], b)]


def test_placement():
    for a, b in [(1, 1), (2, 3), (3, 1)]:
        st, out, err, _, _ = hintrun(hosts(a, b) + ["sh", "-c", "echo rank=$HINT_RANK size=$HINT_SIZE "
                                     "node=$HINT_NODE_ID/$HINT_NNODES local=$HINT_LOCAL_RANK/"
                                     "$HINT_LOCAL_SIZE host=$(hostname) store=$HINT_STORE"])
        want = set()
        for r in range(a + b):
            node = 0 if r < a else 1
            local = r if r < a else r - a
            want.add("rank=%d size=%d node=%d/2 local=%d/%d host=%s store=tcp:%s:" %
                     (r, a + b, node, local, a if node == 0 else b, NS[node], IP[0]))
        got = set(re.sub(r"store=(tcp:[0-9.]+:)\d+", r"store=\1", l) for l in out.split("\n") if l)
        ok(st == 0 and got == want, "placement %d+%d: blocks of ranks, node ids, hostnames, TCP store"
           % (a, b), "status %d\nwant %s\ngot %s\n%s" % (st, sorted(want), sorted(got), err))


def has_ofi():
    info = subprocess.run([os.path.join(BUILD, "tools", "hint_info")], capture_output=True, text=True)
    return re.search(r"^\s+ofi\s", info.stdout, re.M) is not None


def test_programs():
    if not has_ofi():
        ok(True, "programs across hosts # SKIP hint_info shows no ofi transport (no libfabric "
           "transport built: ranks on two hosts cannot exchange bytes)")
        return
    cases = [
        ("hello_ring 2+2", hosts(2, 2), [RING]),
        ("p2p ring 1 MB 1+2", hosts(1, 2), [P2P, "ring", "1000003"]),
        ("p2p ring 0 B 2+1", hosts(2, 1), [P2P, "ring", "0"]),
        ("p2p allpairs 64 KiB 2+2", hosts(2, 2), [P2P, "allpairs", "65536"]),
        ("p2p anysource 3+2", hosts(3, 2), [P2P, "anysource"]),
        ("p2p order 1+1", hosts(1, 1), [P2P, "order"]),
        ("p2p truncate 2+1", hosts(2, 1), [P2P, "truncate"]),
        ("coll barrier 2+2", hosts(2, 2), [COLL, "barrier"]),
        ("coll bcast 1+2", hosts(1, 2), [COLL, "bcast"]),
        ("coll allreduce 2+1", hosts(2, 1), [COLL, "allreduce"]),
        ("coll alltoall 1+1", hosts(1, 1), [COLL, "alltoall"]),
        ("coll allgather 2+2", hosts(2, 2), [COLL, "allgather"]),
        ("p2p many outstanding 2+2", hosts(2, 2), [P2P, "many"]),
        ("p2p testpoll 1+2", hosts(1, 2), [P2P, "testpoll"]),
        ("p2p badargs 1+1", hosts(1, 1), [P2P, "badargs"]),
        ("p2p allpairs 7 B 5+3", hosts(5, 3), [P2P, "allpairs", "7"]),
        ("coll reduce 3+2", hosts(3, 2), [COLL, "reduce"]),
        ("coll gatherv 2+1", hosts(2, 1), [COLL, "gatherv"]),
        ("coll scatter 1+2", hosts(1, 2), [COLL, "scatter"]),
        ("coll alltoallv 2+2", hosts(2, 2), [COLL, "alltoallv"]),
        ("coll reduce_scatter_block 2+1", hosts(2, 1), [COLL, "reduce_scatter_block"]),
        ("coll allgatherv 1+1", hosts(1, 1), [COLL, "allgatherv"]),
    ]
    for name, h, prog in cases:
        if not os.path.exists(prog[0]):
            ok(True, "%s # SKIP %s not built" % (name, prog[0]))
            continue
        st, out, err, secs, _ = hintrun(h + FABRIC + prog, timeout=600)
        ok(st == 0, "%s across 2 hosts (%.1f s)" % (name, secs), "status %d\n%s\n%s" % (st, out, err))


def test_remote_kill():
    st, out, err, _, end = hintrun(hosts(2, 2) + [LT_RANK, "crash", "9", "3"])
    crash = re.search(r"crash at ([0-9.]+)", out)
    took = end - float(crash.group(1)) if crash else 99
    msg = re.search(r"hintrun: rank 3 \(pid \d+\) on host %s killed by signal 9 \(Killed\)" %
                    re.escape(IP[1]), err)
    ok(st == 137 and msg is not None, "a rank killed on the remote host: status 137, host, rank and "
       "signal named", "status %d\n%s\n%s" % (st, out, err))
    ok(took < 1.0, "the job ended %.2f s after the remote crash (< 1 s)" % took, err)
    left, shm, jobs = left_behind(out)
    ok(jobs and not left and not shm, "nothing left on either host after the remote crash",
       "pids %s shm %s jobs %s" % (left, shm, jobs))


CRASH = os.path.join(BUILD, "tests", "ranks", "crash")


def test_hint_ranks_fail():
    """real hint ranks (tests/ranks/crash) failing on the remote host while the others wait in a
    collective across both hosts"""
    if not has_ofi() or not os.path.exists(CRASH):
        ok(True, "hint ranks failing across hosts # SKIP no ofi transport or tests/ranks/crash")
        return
    cases = [("killcoll", "3", 137, r"rank 3 \(pid \d+\) on host %s killed by signal 9 \(Killed\)" % re.escape(IP[1])),
             # libpsm2, loaded with libfabric's providers, catches SIGSEGV, prints a backtrace
             # and exits 1: either way the rank and host are named
             ("segv", "2", (139, 1), r"rank 2 \(pid \d+\) on host %s (killed by signal 11|exited with "
                                     r"status 1)" % re.escape(IP[1])),
             ("exit0", "3", 1, r"rank 3 \(pid \d+\) on host %s exited with status 0 without calling "
                               r"hint_finalize" % re.escape(IP[1])),
             ("abort", "2", 7, r"rank 2 \(pid \d+\) on host %s aborted the job with code 7" % re.escape(IP[1])),
             ("preinit", "3", 137, r"rank 3 \(pid \d+\) on host %s killed by signal 9" % re.escape(IP[1]))]
    for mode, victim, want, msg in cases:
        st, out, err, secs, _ = hintrun(hosts(2, 2) + FABRIC + ["sh", "-c", 'echo jobid $HINT_JOBID; exec "$0" "$@"',
                                                                CRASH, mode, victim], timeout=120)
        out = re.sub(r"rankpid=(\d+)", r"rank pid \1 ", out)
        left, shm, jobs = left_behind(out)
        wants = want if isinstance(want, tuple) else (want,)
        ok(st in wants and re.search(msg, err) and jobs and not left and not shm,
           "hint ranks across hosts, crash %s on the remote host: status %s, named, nothing left (%.1f s)"
           % (mode, "/".join(map(str, wants)), secs), "status %d pids %s shm %s\n%s\n%s" % (st, left, shm, out, err))


def test_timeout_states():
    """--timeout: each host's agent asks its ranks what they wait in, then the job ends"""
    if not has_ofi() or not os.path.exists(CRASH):
        ok(True, "--timeout across hosts # SKIP no ofi transport or tests/ranks/crash")
        return
    st, out, err, secs, _ = hintrun(hosts(2, 2) + FABRIC + ["--timeout", "8", "sh", "-c",
                                    'echo jobid $HINT_JOBID; exec "$0" "$@"', CRASH, "order", "2"])
    out = re.sub(r"rankpid=(\d+)", r"rank pid \1 ", out)
    waiting = set(re.findall(r"hint: rank (\d) waiting [0-9.]+ s in (?:barrier|bcast)", err))
    left, shm, jobs = left_behind(out)
    ok(st == 124 and waiting == {"0", "1", "2", "3"} and "watcher" not in err and not left and not shm,
       "--timeout across hosts: every rank on both hosts says what it waits in, status 124, agents "
       "clean up (%.1f s)" % secs, "status %d waiting %s pids %s shm %s\n%s\n%s" % (st, waiting, left, shm,
                                                                                  out, err))


def test_remote_unfinished():
    st, out, err, _, _ = hintrun(hosts(1, 2) + [LT_RANK, "exit", "0", "2"])
    ok(st == 1 and re.search(r"rank 2 \(pid \d+\) on host %s exited with status 0 without calling "
                             "hint_finalize" % re.escape(IP[1]), err),
       "a rank exiting 0 without hint_finalize on the remote host fails the job (status 1)",
       "status %d\n%s\n%s" % (st, out, err))
    left, shm, jobs = left_behind(out)
    ok(jobs and not left and not shm, "nothing left after it", "pids %s shm %s" % (left, shm))


def test_token_over_tcp():
    st, out, err, _, _ = hintrun(hosts(1, 1) + [LT_RANK, "raw"])
    ok(st == 0 and out.count("raw: wrong token refused: wrong job token") == 2 and
       "raw ok rank 1" in out, "the TCP store refuses a wrong token and malformed frames from "
       "either host", "status %d\n%s\n%s" % (st, out, err))


def test_unreachable_host():
    st, out, err, secs, _ = hintrun(["--host", "%s:1,%s:1" % (IP[0], UNREACHABLE), LT_RANK, "sleep"])
    ok(st == 1 and re.search(r"cannot start the agent on host %s: '%s %s .*' exited with status 255"
                             % (re.escape(UNREACHABLE), re.escape(AGENT), re.escape(UNREACHABLE)), err)
       is not None, "an unreachable host: launch agent status 255, host and command named (%.1f s)"
       % secs, "status %d\n%s\n%s" % (st, out, err))
    left, shm, _ = left_behind(out)
    ok(not left and not shm, "nothing left by the other host's ranks", "pids %s shm %s" % (left, shm))


def test_failing_launch_agent():
    cmd = ["ip", "netns", "exec", NS[0], HINTRUN, "--launch-agent", "/nonexistent/agent {host}"] + \
        hosts(1, 1) + [LT_RANK, "sleep"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    named = any("cannot start the agent on host %s: '/nonexistent/agent %s " % (ip, ip) in p.stderr
                for ip in IP)  # whichever is reaped first
    ok(p.returncode == 1 and named and "exited with status 127 (command not found)" in p.stderr,
       "a launch agent that cannot run: status 127 named with host and command",
       "status %d\n%s" % (p.returncode, p.stderr))


def test_unreachable_store():
    # 127.0.0.1 of the first namespace: its own agent reaches it, the other host cannot
    st, out, err, _, _ = hintrun(hosts(1, 1) + ["--store-addr", "127.0.0.1", LT_RANK, "sleep"])
    ok(st == 1 and "agent on host %s: cannot reach hintrun's store at tcp:127.0.0.1:" % IP[1] in err and
       "cannot start the agent on host %s" % IP[1] in err,
       "a store the remote host cannot reach: named with its address", "status %d\n%s\n%s" % (st, out, err))
    left, shm, _ = left_behind(out)
    ok(not left and not shm, "nothing left after it", "pids %s shm %s" % (left, shm))


def test_front_killed():
    st, out, err, _, _ = hintrun(hosts(2, 2) + [LT_RANK, "sleep", "leave-things"], kill_front_after=3)
    started = len(re.findall(r"ready rank \d+ pid", out)) + len(re.findall(r"started rank", out))
    left, shm, jobs = left_behind(out)
    ok(st == -9 and jobs and not left and not shm,
       "front SIGKILLed: every host's agent ends its ranks and cleans up (%d ranks announced)" % started,
       "status %d pids %s shm %s jobs %s\n%s\n%s" % (st, left, shm, jobs, out, err))


def main():
    try:
        setup()
        tests = [test_placement, test_programs, test_remote_kill, test_hint_ranks_fail, test_timeout_states,
                 test_remote_unfinished,
                 test_token_over_tcp, test_unreachable_host, test_failing_launch_agent,
                 test_unreachable_store, test_front_killed]
        only = os.environ.get("HINT_NETNS_ONLY")
        for t in tests:
            if not only or only in t.__name__:
                t()
    finally:
        teardown()
    print("1..%d" % len(results))
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":  # check_suites_netns.py imports the namespaces' set-up
    main()
