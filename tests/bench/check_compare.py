#!/usr/bin/env python3
"""tests/bench/check_compare.py COMPARE BUILD OUT — run bench/compare tiny and check what it writes.

TAP output. Expected libraries: hint always; a peer when BUILD/bench/mpi/hint-bench-<peer> exists
and its launcher is on PATH (otherwise compare must skip it with a note and still succeed).
A strided run (--stype/--rtype --check) checks that the layouts reach every library and label the results.
--first-call --background-load checks the first-call table and that the busy processes come and go.
"""
import csv
import math
import os
import shutil
import subprocess
import sys
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from tap import report  # noqa: E402

compare, build, out = sys.argv[1:4]
results = []


def check(ok, what, detail=""):
    results.append((bool(ok), what, detail))
    return ok


def run(args, timeout=240):
    return subprocess.run([sys.executable, compare] + args, capture_output=True, text=True, timeout=timeout)


TITLE = {"hint": "hint", "openmpi": "Open MPI", "mpich": "MPICH"}
LAUNCHER = {"openmpi": "mpirun.openmpi", "mpich": "mpiexec.mpich"}
expected = ["hint"] + [p for p in ("openmpi", "mpich")
                       if os.access(os.path.join(build, "bench", "mpi", "hint-bench-" + p), os.X_OK)
                       and shutil.which(LAUNCHER[p])]
missing = [p for p in ("openmpi", "mpich") if p not in expected]

# 1. --help
r = run(["--help"], timeout=30)
check(r.returncode == 0 and "--ops" in r.stdout and "ratio" in r.stdout.lower(), "--help prints the usage")

# 2. the tiny comparison
out1 = os.path.join(out, "tiny")
shutil.rmtree(out, ignore_errors=True)
r = run(["--build", build, "--ops", "alltoall", "--sizes", "8,1K", "--nps", "2", "--reps", "1",
         "--iters", "20", "--warmup", "2", "--timeout", "120", "--out", out1])
check(r.returncode == 0, f"compare exits 0 (libraries expected: {','.join(expected)})",
      r.stderr[-2000:])
rows = []
try:
    with open(os.path.join(out1, "compare.csv")) as f:
        rows = list(csv.DictReader(f))
except OSError as e:
    check(False, "compare.csv is readable", str(e))
for kind in ("run", "median"):
    for lib in expected:
        got = sorted(int(x["bytes"]) for x in rows if x["kind"] == kind and x["library"] == lib)
        check(got == [8, 1024], f"compare.csv: {kind} rows of {lib} for 8 and 1024 bytes", f"got {got}")
for lib in missing:
    check(not any(x["library"] == lib for x in rows), f"compare.csv: no rows of the missing peer {lib}")
check(rows and all((x["stype"], x["rtype"]) == ("contig", "contig") for x in rows),
      "compare.csv: runs without --stype/--rtype are labelled contig,contig")
sane = True
for x in rows:
    try:
        avg, lo, hi = float(x["avg"]), float(x["min"]), float(x["max"])
        sane &= x["op"] == "alltoall" and x["P"] == "2" and x["unit"] == "us"
        sane &= all(math.isfinite(v) and 0 < v < 1e7 for v in (avg, lo, hi)) and lo <= avg * 1.0001 <= hi * 1.0002
    except (KeyError, ValueError):
        sane = False
check(rows and sane, "compare.csv: every latency positive, finite, below 10 s, min <= avg <= max")

md = ""
try:
    with open(os.path.join(out1, "compare.md")) as f:
        md = f.read()
except OSError as e:
    check(False, "compare.md is readable", str(e))
check("below 1 hint is faster" in md, "compare.md says how to read the ratio")
# the floor beside the tables: hint-cacheline before and after the runs (two cores needed)
if len(os.sched_getaffinity(0)) >= 2:
    import re
    floors = [float(x) for x in re.findall(r"([0-9.]+) ns (?:before|after) the runs", md)]
    check(len(floors) == 2 and all(0 < f < 1e7 for f in floors),
          "compare.md gives the cache-line floor before and after the runs", md[:1500])
    cl = os.path.join(build, "bench", "hint-cacheline")
    r = subprocess.run([cl, "--csv", "--trips", "1000", "--rounds", "3"], capture_output=True, text=True, timeout=60)
    f = r.stdout.strip().split(",")
    check(r.returncode == 0 and len(f) == 6 and f[:3] == ["cacheline", "0", "1"]
          and 0 < float(f[4]) <= float(f[3]) <= float(f[5]), "hint-cacheline --csv: min <= median <= max", r.stdout)
    r = subprocess.run([cl, "--cores", "1,1"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 2 and "different" in r.stderr, "hint-cacheline refuses one core twice", r.stderr)
check("## alltoall, P=2" in md, "compare.md has the alltoall P=2 table")
table = [l for l in md.splitlines() if l.startswith("| 8 |") or l.startswith("| 1024 |")]
check(len(table) == 2, "compare.md has one row per size", "\n".join(table))
peers = [p for p in expected if p != "hint"]
for line in table:
    cells = [c.strip().strip("*") for c in line.strip("|").split("|")]
    # bytes, one value per library, hint's algorithm, one ratio per peer
    ok = len(cells) == 1 + len(expected) + 1 + len(peers)
    try:
        vals = [float(c) for c in cells[1:1 + len(expected)]]
        ratios = [float(c) for c in cells[2 + len(expected):]]
        ok &= all(v > 0 for v in vals + ratios)
        h = vals[0]
        ok &= all(abs(rt - h / v) <= 0.06 * rt + 0.01 for rt, v in zip(ratios, vals[1:]))
    except ValueError:
        ok = False
    check(ok, f"compare.md row '{cells[0]}': values and ratios hint/peer agree", line)
for lib in missing:
    check(f"{TITLE[lib]} skipped" in md, f"compare.md notes that {TITLE[lib]} was skipped")
if shutil.which("gnuplot"):
    try:
        with open(os.path.join(out1, "plots", "alltoall-p2.png"), "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", "plots/alltoall-p2.png is a PNG")
    except OSError as e:
        check(False, "plots/alltoall-p2.png exists", str(e))
else:
    check("gnuplot is not installed" in md, "compare.md notes that plots were skipped")
check(not os.path.exists(os.path.join(out1, "tmp")), "the runs' TMPDIR was removed")
check(os.path.getsize(os.path.join(out1, "commands.txt")) > 0, "commands.txt lists the runs")

# 3. a peer that is missing is skipped with a note, not a failure
out2 = os.path.join(out, "missing-peer")
r = run(["--build", build, "--libs", "hint,mpich", "--launcher-mpich", "/nonexistent/mpiexec.mpich",
         "--ops", "barrier", "--nps", "2", "--reps", "1", "--iters", "20", "--no-plots", "--out", out2])
md2 = open(os.path.join(out2, "compare.md")).read() if os.path.exists(os.path.join(out2, "compare.md")) else ""
check(r.returncode == 0 and "MPICH skipped" in md2 and "| 0 |" in md2,
      "a missing peer is skipped with a note and hint still runs", r.stderr[-1500:])

# 4. block layouts: passed to every library's hint-bench (checked there) and labelling the results
out3 = os.path.join(out, "strided")
r = run(["--build", build, "--ops", "alltoall", "--sizes", "8,1K", "--nps", "2", "--reps", "1", "--iters", "10",
         "--warmup", "2", "--stype", "strided", "--rtype", "contig", "--check", "--no-plots", "--out", out3])
rows3 = []
if os.path.exists(os.path.join(out3, "compare.csv")):
    with open(os.path.join(out3, "compare.csv")) as f:
        rows3 = list(csv.DictReader(f))
check(r.returncode == 0 and all(sorted(int(x["bytes"]) for x in rows3 if x["kind"] == "run" and x["library"] == lib)
                                == [8, 1024] for lib in expected),
      f"--stype strided --rtype contig --check: every library ({','.join(expected)}) checked both sizes",
      r.stderr[-1500:])
check(rows3 and all((x["stype"], x["rtype"]) == ("strided", "contig") for x in rows3),
      "compare.csv: strided runs are labelled stype=strided, rtype=contig")
cmds = open(os.path.join(out3, "commands.txt")).read().splitlines() if rows3 else []
check(len(cmds) == len(expected) and all("--stype strided --rtype contig" in c for c in cmds),
      "commands.txt: --stype/--rtype reach every library's hint-bench", "\n".join(cmds))
md3 = open(os.path.join(out3, "compare.md")).read() if rows3 else ""
check("## alltoall, P=2, stype=strided, rtype=contig" in md3 and "Block layouts" in md3,
      "compare.md names the layouts in its header and table title")
r = run(["--ops", "alltoall,bcast", "--stype", "strided", "--out", os.path.join(out, "refused")], timeout=30)
check(r.returncode == 2 and "alltoall and allgather only" in r.stderr, "--stype with bcast is refused", r.stderr)

# 5. ranks beyond the cores: the plot title and the table heading say "N ranks on C cores"
cores = len(os.sched_getaffinity(0))
over = cores + 1
label = f"{over} ranks on {cores} core{'s' if cores > 1 else ''}"
out4 = os.path.join(out, "oversubscribed")
r = run(["--build", build, "--libs", "hint", "--ops", "barrier", "--nps", f"2,{over}", "--reps", "1",
         "--iters", "20", "--out", out4])
md4 = open(os.path.join(out4, "compare.md")).read() if os.path.exists(os.path.join(out4, "compare.md")) else ""
check(r.returncode == 0 and f"## barrier, P={over} ({label})" in md4,
      f"compare.md: the P={over} heading says '{label}'", r.stderr[-1500:] + md4[-1500:])
if shutil.which("gnuplot"):
    titles = {}
    for P in (2, over):
        try:
            with open(os.path.join(out4, "plots", f"barrier-p{P}.gp")) as f:
                titles[P] = [l for l in f if l.startswith("set title")]
        except OSError:
            titles[P] = []
    fits = "P=2:" if cores >= 2 else f"2 ranks on {cores} core"
    check(titles[over] and f"barrier, {label}:" in titles[over][0] and titles[2] and fits in titles[2][0],
          f"plot titles: '{label}' when oversubscribed, '{fits}' otherwise", str(titles))

# 6. --first-call --background-load: a fresh process per size, rep and library; init and OP:first
# medians in compare.csv and the first-call table in compare.md; the busy processes labelled and gone
out5 = os.path.join(out, "first-call")
r = run(["--build", build, "--ops", "alltoall", "--sizes", "8,1K", "--nps", "2", "--reps", "2", "--iters", "10",
         "--warmup", "2", "--first-call", "--background-load", "--no-plots", "--out", out5])
rows5 = []
if os.path.exists(os.path.join(out5, "compare.csv")):
    with open(os.path.join(out5, "compare.csv")) as f:
        rows5 = list(csv.DictReader(f))
check(r.returncode == 0 and rows5, "--first-call --background-load: compare exits 0 and writes compare.csv",
      r.stderr[-1500:])
for lib in expected:
    runs = [x for x in rows5 if x["kind"] == "run" and x["library"] == lib]
    check(sorted((x["op"], int(x["bytes"])) for x in runs if x["op"] != "init")
          == [("alltoall", 8)] * 2 + [("alltoall", 1024)] * 2 + [("alltoall:first", 8)] * 2
          + [("alltoall:first", 1024)] * 2
          and len([x for x in runs if x["op"] == "init"]) == 4
          and all(float(x["avg"]) > 0 for x in runs),
          f"compare.csv: {lib}: one init per process (2 sizes x 2 reps), each size's steady and first call",
          str([(x["op"], x["bytes"]) for x in runs]))
cmds5 = open(os.path.join(out5, "commands.txt")).read().splitlines() if rows5 else []
check(len(cmds5) == 4 * len(expected) and all("--first-call" in c for c in cmds5)
      and sorted(c.split("--sizes ")[1].split()[0] for c in cmds5) == ["1024"] * (2 * len(expected)) + ["8"] * (2 * len(expected)),
      "commands.txt: a fresh process per size, repetition and library, each with --first-call", "\n".join(cmds5))
busy = f"{cores} busy"
check(rows5 and all(x["background"] == busy for x in rows5), f"compare.csv: every row says background '{busy}'")
md5 = open(os.path.join(out5, "compare.md")).read() if os.path.exists(os.path.join(out5, "compare.md")) else ""
first = [l for l in md5.splitlines() if l.startswith("| init |") or l.startswith("| alltoall |")]
check("## First calls, P=2" in md5 and [l.split("|")[1:3] for l in first] ==
      [[" init ", " 0 "], [" alltoall ", " 8 "], [" alltoall ", " 1024 "]],
      "compare.md: the first-call table has init and alltoall at 8 and 1024 bytes", md5[-1500:])
for line in first:
    cells = [c.strip().strip("*") for c in line.strip("|").split("|")]
    try:
        vals = [float(c) for c in cells[2:2 + len(expected)]]
        ratios = [float(c) for c in cells[2 + len(expected):]]
        ok = len(ratios) == len(peers) and all(abs(rt - vals[0] / v) <= 0.06 * rt + 0.01
                                              for rt, v in zip(ratios, vals[1:]))
    except ValueError:
        ok = False
    check(ok, f"compare.md first-call row '{cells[0]} {cells[1]}': ratios are hint/peer", line)
check(f"Background load: {busy}" in md5, "compare.md says the machine was loaded")
log5 = open(os.path.join(out5, "log.txt")).read() if os.path.exists(os.path.join(out5, "log.txt")) else ""
pids = [int(p) for l in log5.splitlines() if l.startswith("background load: pids ") for p in l.split()[3:]]


def busy_alive(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"while True" in f.read()
    except OSError:
        return False


alive = [p for p in pids if busy_alive(p)]
check(len(pids) == cores and not alive, f"the {cores} busy processes were started and are gone",
      f"pids {pids}, alive {alive}")

report(results, tail=30)
