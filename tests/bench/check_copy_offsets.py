#!/usr/bin/env python3
"""tests/bench/check_copy_offsets.py HINT_COPY_OFFSETS — the benchmark's shape, not its times.

TAP output. --help exits 0; a short run prints the kernel rt_memcpy chose (avx2, sse2 or memcpy)
and one line per offset (0-15, then every 8th to 56) of three positive times; a bad argument and
a zero size are refused with exit status 2 and a message. No timing is judged: that is what the
benchmark is for (docs/BENCHMARKS.md).
"""
import subprocess
import sys
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from tap import report  # noqa: E402

prog = sys.argv[1]
results = []


def check(ok, what, detail=""):
    results.append((bool(ok), what, detail))


def run(args):
    return subprocess.run([prog] + args, capture_output=True, text=True, timeout=60)


r = run(["--help"])
check(r.returncode == 0 and "usage: hint-copy-offsets" in r.stdout, "--help", r.stdout + r.stderr)

r = run(["--bytes", "3001", "--rounds", "2"])
lines = r.stdout.splitlines()
check(r.returncode == 0 and lines and lines[0].startswith("3001 bytes; rt_memcpy chose: ")
      and lines[0].split(": ")[1] in ("avx2", "sse2", "memcpy"), "names the chosen kernel", r.stdout + r.stderr)
rows = [l.split() for l in lines[2:]]
offsets = [int(f[0]) for f in rows if len(f) == 4]
check(offsets == list(range(16)) + [16, 24, 32, 40, 48, 56], "one line per offset", r.stdout)
check(all(len(f) == 4 and all(float(x) > 0 for x in f[1:]) for f in rows), "three positive times per line", r.stdout)

r = run(["--bogus"])
check(r.returncode == 2 and "'--bogus'" in r.stderr, "an unknown argument is refused", r.stderr)
r = run(["--bytes", "0"])
check(r.returncode == 2 and "--bytes" in r.stderr, "a zero size is refused", r.stderr)

report(results)
