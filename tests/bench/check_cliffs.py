#!/usr/bin/env python3
"""tests/bench/check_cliffs.py CLIFFS BUILD OUT — bench/cliffs.py lists the switch points of a
rules file given to it: at rule bounds (bytes and total bytes), where the first algorithm cannot
run (staged beyond its 8 KiB staging block at P = 4), across virtual nodes (node-only ones
skipped), in whole doubles for allreduce, with a bound moved by --move; and a tiny run reports one row per switch point with
the algorithms hint-bench ran. No timing is asserted. TAP output."""
import json
import os
import re
import shutil
import subprocess
import sys
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from tap import report  # noqa: E402

cliffs, build, out = sys.argv[1:4]
results = []


def check(ok, what, detail=""):
    results.append((bool(ok), what, detail))
    return ok


shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
rules = os.path.join(out, "rules.json")
with open(rules, "w") as f:
    json.dump({"version": 2,
               "alltoall": [{"max_bytes": 100, "algorithm": "linear"},
                            {"max_total_bytes": 16384, "algorithm": "pairwise"},
                            {"max_bytes": 65536, "algorithm": ["staged", "column"]},
                            {"algorithm": "bruck"}],
               "allreduce": [{"max_bytes": 1000, "algorithm": "recursive_doubling"},
                             {"algorithm": "ring"}]}, f)


def listing(args):
    r = subprocess.run([sys.executable, cliffs, "--build", build, "--rules", rules, "--list"] + args,
                       capture_output=True, text=True, timeout=120)
    pts = [m.groups() for m in re.finditer(r"^\s+(\S+)\s+(\S+) -> (\S+) at (\d+) B: sizes (\S+)$",
                                            r.stdout, re.M)]
    return r, [(op, lo, hi, int(at), [int(s) for s in sizes.split(",")]) for op, lo, hi, at, sizes in pts]


def switches(pts, op):
    return [(lo, hi, at) for o, lo, hi, at, _ in pts if o == op]


# P = 4 on one node: a byte bound (101), a total bound (16384 / 4 + 1), staged's block (8 KiB),
# a byte bound (65537); allreduce's 1000-byte bound in whole doubles (1008)
r, pts = listing(["--np", "4", "--ops", "alltoall,allreduce"])
check(r.returncode == 0, "--list exits 0", r.stderr)
check(switches(pts, "alltoall") == [("linear", "pairwise", 101), ("pairwise", "staged", 4097),
                                    ("staged", "column", 8193), ("column", "bruck", 65537)],
      "alltoall P=4: a byte bound, a total bound, staged's block, a byte bound", r.stdout)
check(switches(pts, "allreduce") == [("recursive_doubling", "ring", 1008)],
      "allreduce P=4: the bound rounded up to whole doubles", r.stdout)
for op, lo, hi, at, sizes in pts:
    g = 8 if op == "allreduce" else 1
    check(len(sizes) == 4 and sizes[1] == at - g and sizes[2] == at and sizes == sorted(sizes),
          f"{op} at {at}: sizes one below, the last below, the first at, one above", str(sizes))
check(not os.path.exists(os.path.join(out, "tmp")) and len(os.listdir(out)) == 1, "--list runs nothing",
      str(os.listdir(out)))

# P = 4 on 2 virtual nodes: staged and column are node-only, so bruck follows pairwise
r, pts = listing(["--np", "4", "--nodes", "2", "--ops", "alltoall"])
check(switches(pts, "alltoall") == [("linear", "pairwise", 101), ("pairwise", "bruck", 4097)],
      "alltoall on 2 nodes: the node-only algorithms skipped", r.stdout + r.stderr)

# --move: a bound changed in a copy of the rules, listed from that copy; a move matching no rule refused
r, pts = listing(["--np", "4", "--ops", "alltoall", "--move", "alltoall.max_bytes:100=200"])
check(switches(pts, "alltoall")[:2] == [("linear", "pairwise", 201), ("pairwise", "staged", 4097)],
      "--move alltoall.max_bytes:100=200 moves the first switch to 201", r.stdout + r.stderr)
r, pts = listing(["--np", "4", "--ops", "alltoall", "--move", "alltoall.max_bytes:99=200"])
check(r.returncode != 0 and "no rule of alltoall has max_bytes 99" in r.stderr, "--move matching no rule refused",
      r.stdout + r.stderr)

# a tiny run (hint-bench with HINT_TUNING_FILE = the rules): one row per switch point, the
# algorithms that ran those of the listing (message-based ones: the same with or without the heap)
res = os.path.join(out, "run")
r = subprocess.run([sys.executable, cliffs, "--build", build, "--rules", rules, "--np", "2", "--ops", "allreduce",
                    "--reps", "1", "--iters", "5", "--warmup", "1", "--timeout", "60", "--out", res],
                   capture_output=True, text=True, timeout=180)
check(r.returncode == 0, "a tiny run exits 0", r.stderr[-2000:])
rows = []
try:
    with open(os.path.join(res, "cliffs.md")) as f:
        rows = [l.split("|")[1:-1] for l in f if l.startswith("| allreduce ")]
except OSError as e:
    check(False, "cliffs.md written", str(e))
check(len(rows) == 1, "cliffs.md: one row for allreduce's one switch point", str(rows))
if rows:
    cells = [c.strip() for c in rows[0]]
    check(cells[2] == "1008" and cells[13].rstrip("?") in ("ok", "cliff", "drop"), "the row: switch at 1008, a verdict", str(cells))
    check(cells[14] == "recursive_doubling/recursive_doubling/ring/ring",
          "hint-bench ran the listed algorithms on each side (HINT_TUNING_FILE reached it)", str(cells))
check(not os.path.exists(os.path.join(res, "tmp")), "the run's TMPDIR removed")
report(results)
