#!/usr/bin/env python3
"""tests/unit/check_env_reject.py — end to end through hintrun: a malformed HINT_* value makes
hint_init fail on every rank with one message naming the variable, the value and what it accepts
(runtime/config.c); accepted values, in any of their spellings, start the job as usual.

usage: check_env_reject.py HINTRUN ENV_RANK    (TAP on stdout)
"""
import os
import subprocess
import sys

hintrun, rank = sys.argv[1], sys.argv[2]

BAD = [
    ("HINT_COLL_FALLBACK", "bogus", "it takes error, warn or silent"),
    ("HINT_PACK_SEGMENT", "12abc", "it takes an integer from 1 to 1073741824"),
    ("HINT_WAIT_SPIN_US", "-3", "it takes an integer from 0 to 10000000"),
    ("HINT_SHM_BUDGET", "48Q", "it takes bytes from 1M to 1T"),
    ("HINT_HEAP_STRICT", "yes", "it takes 0 or 1"),
    ("HINT_HEAP", "Shared-ish", "it takes shared or private"),
]
GOOD = {"HINT_COLL_FALLBACK": "WARN", "HINT_PACK_SEGMENT": "64", "HINT_SHM_BUDGET": "8MiB",
        "HINT_WAIT_SPIN_US": "10", "HINT_HEAP": "private", "HINT_HEAP_STRICT": "0"}
NP = 2


def run(extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HINT_") or k.startswith("HINT_TEST")}
    env.update(extra)
    return subprocess.run([hintrun, "-n", str(NP), "--timeout", "60", rank], env=env,
                          capture_output=True, text=True, timeout=120)


cases = len(BAD) + 1
print(f"1..{cases}")
n = 0
for name, value, accepts in BAD:
    n += 1
    r = run({name: value})
    want = f"config: hint_init: {name}={value} is not accepted: {accepts}"
    lines = [l for l in r.stderr.splitlines() if want in l]
    # hintrun ends the job when the first rank fails, so a peer may not get to say it too
    ok = (r.returncode != 0 and 1 <= len(lines) <= NP and "hint_init fails" in lines[0]
          and "allreduce" not in r.stdout)
    print(f"{'ok' if ok else 'not ok'} {n} - {name}={value} stops hint_init with its message")
    if not ok:
        print(f"# status {r.returncode}; wanted a line per rank containing: {want}")
        for l in (r.stdout + r.stderr).splitlines():
            print(f"#   {l}")
n += 1
r = run(GOOD)
ok = r.returncode == 0 and r.stdout.count("allreduce: success, 2") == NP and "config" not in r.stderr
print(f"{'ok' if ok else 'not ok'} {n} - accepted values in other spellings start the job")
if not ok:
    print(f"# status {r.returncode}")
    for l in (r.stdout + r.stderr).splitlines():
        print(f"#   {l}")
