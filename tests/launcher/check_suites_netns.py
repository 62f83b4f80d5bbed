#!/usr/bin/env python3
"""tests/launcher/check_suites_netns.py BUILD_ROOT SOURCE_ROOT SUITE [CRITERION ARGS...] — a whole
Criterion suite of tests/ranks (SUITE: its program, e.g. tests/ranks/test_p2p) rerun across two
"hosts": the network namespaces of check_hosts_netns.py, joined by a veth pair. The suite's
jobs go through tests/common/job.c's host mode: every hintrun it starts runs in the first
namespace as `hintrun --host A:N0,B:N1 --launch-agent ns_agent.sh` (blocks differing by at most
one rank: P=5 is 3+2), every rank on the other host reached through libfabric's tcp provider
over the veth pair; the jobs that choose their nodes themselves (--nodes) stay in the first
namespace. HINT_TEST_NODES=2 tells the suite that its jobs span nodes (the cases that force
node-only algorithms skip, as in the virtual-node reruns).

Each case of the suite becomes one TAP line here. Needs root and `ip netns`; prints a TAP skip
saying why otherwise. The namespaces carry this process's pid in their names and are removed on
every exit path (also on SIGTERM from meson's timeout)."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import check_hosts_netns as netns  # noqa: E402 (BUILD_ROOT SOURCE_ROOT are its argv too)

SUITE = sys.argv[3]
EXTRA = sys.argv[4:]
# A subnet of this run's own (ns_agent.sh finds a host's namespace by its address: two runs at
# once, or check_hosts_netns.py beside this one, must not share addresses)
netns.IP = ["10.232.%d.1" % (os.getpid() % 250 + 1), "10.232.%d.2" % (os.getpid() % 250 + 1)]
TMP = "/tmp/hint-suites-netns-%d" % os.getpid()
AGENT_LOG = os.path.join(TMP, "agents.log")


def logging_agent():
    """ns_agent.sh behind a wrapper that notes each host it is asked to start an agent on, so
    that the run can show its jobs really went through the launch agent to both hosts"""
    os.makedirs(TMP, exist_ok=True)
    path = os.path.join(TMP, "agent.sh")
    with open(path, "w") as f:
        f.write('#!/bin/sh\nfor a in "$@"; do case $a in -*) ;; *) echo "$a" >> %s; break;; esac; done\n'
                'exec %s "$@"\n' % (AGENT_LOG, netns.AGENT))
    os.chmod(path, 0o755)
    return path


CHILDREN = []


def stop_children():
    """the suite and its jobs, when this script is stopped before they end"""
    for p in CHILDREN:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(p.pid, signal.SIGKILL)


def run_suite():
    prog = os.path.join(netns.BUILD, SUITE)
    if not os.path.exists(prog):
        netns.skip_all("%s not built" % prog)
    if not netns.has_ofi():
        netns.skip_all("hint_info shows no ofi transport: ranks on two hosts cannot exchange bytes")
    env = dict(os.environ)
    env.update({
        "HINT_TEST_BUILD_ROOT": netns.BUILD,
        "HINT_TEST_SOURCE_ROOT": netns.SOURCE,
        "CRITERION_NO_EARLY_EXIT": "1",
        "HINT_TEST_HOSTS": ",".join(netns.IP),
        "HINT_TEST_LAUNCH_AGENT": logging_agent(),
        "HINT_TEST_FRONT_PREFIX": "ip netns exec %s" % netns.NS[0],
        "HINT_TEST_NODES": "2",
        "FI_PROVIDER": "tcp",
        "FI_TCP_IFACE": netns.IFACE,
    })
    t0 = time.monotonic()
    p = subprocess.Popen([prog, "--tap", "--jobs=2"] + EXTRA, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, env=env, stdin=subprocess.DEVNULL,
                         start_new_session=True)
    CHILDREN.append(p)
    # a case's diagnostics follow its "not ok" line: each result is reported when the next one
    # (or the end) comes
    pending, diag = None, []

    def report():
        if pending:
            netns.ok(pending[0], "%s across 2 hosts: %s" % (os.path.basename(SUITE), pending[1]),
                     "\n".join(diag[-200:]))

    for line in p.stdout:
        line = line.rstrip("\n")
        m = re.match(r"(not ok|ok)\b(?: \d+)?\s*-?\s*(.*)", line)
        if m:
            report()
            pending, diag = (m.group(1) == "ok", m.group(2)), []
        elif line.strip():
            diag.append(line)
    report()
    st = p.wait()
    cases = len(netns.results)
    agents = open(AGENT_LOG).read().split() if os.path.exists(AGENT_LOG) else []
    per_host = [agents.count(ip) for ip in netns.IP]
    netns.ok(all(n > 0 for n in per_host), "%s: its jobs started agents on both hosts (%s)"
             % (os.path.basename(SUITE), ", ".join("%d on %s" % (n, ip) for n, ip in zip(per_host, netns.IP))))
    netns.ok(st == 0 and cases > 0, "%s across 2 hosts: exit status %d, %d cases in %.0f s"
             % (SUITE, st, cases, time.monotonic() - t0), "\n".join(diag))


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # so that the namespaces go
    try:
        netns.setup()
        run_suite()
    finally:
        stop_children()
        try:
            netns.teardown()
        except OSError:  # no `ip` at all: nothing was made
            pass
        shutil.rmtree(TMP, ignore_errors=True)
    print("1..%d" % len(netns.results))
    sys.exit(0 if all(netns.results) else 1)


main()
