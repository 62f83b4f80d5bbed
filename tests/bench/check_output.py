#!/usr/bin/env python3
"""tests/bench/check_output.py HINTRUN HINT_BENCH — hint-bench's OSU layout and --papi.

TAP output. Without --csv every line that is not data starts with '#' and a data line is numbers
then the algorithm name, so OSU parsers and gnuplot (when installed) read exactly one record per
size. --papi PAPI_TOT_INS exits 0 and either adds a counter column or says in one line that the
machine has no counters (as a virtual machine without a PMU does); an unknown event name is
refused with a message naming it; --papi with --csv keeps the CSV parseable. --first-call adds
init and the first call of each size, in the plain layout and in the CSV.
"""
import shutil
import subprocess
import sys
import tempfile
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from tap import report  # noqa: E402

hintrun, bench = sys.argv[1:3]
results = []
UNAVAILABLE = "hint-bench: PAPI counters are not available here ("


def check(ok, what, detail=""):
    results.append((bool(ok), what, detail))


def run(P, args):
    return subprocess.run([hintrun, "-n", str(P), bench] + args, capture_output=True, text=True, timeout=60)


def number(x):
    try:
        float(x)
        return True
    except ValueError:
        return False


def data_lines(out):
    """Lines an OSU parser reads: not empty, not '#'."""
    return [l.split() for l in out.splitlines() if l.strip() and not l.startswith("#")]


def osu_shaped(out, nsizes, ncols):
    rows = data_lines(out)
    return (len(rows) == nsizes and all(len(f) == ncols and all(number(x) for x in f[:-1])
                                        and not number(f[-1]) for f in rows))


# 1. the layout, latency and bandwidth
SIZES = [8, 64, 1024]
r = run(2, ["alltoall", "--sizes", ",".join(map(str, SIZES)), "--iters", "10"])
heads = [l for l in r.stdout.splitlines() if l.startswith("#")]
check(r.returncode == 0 and osu_shaped(r.stdout, len(SIZES), 6)
      and [int(f[0]) for f in data_lines(r.stdout)] == SIZES,
      "alltoall: one data line per size, numbers then the algorithm", r.stdout + r.stderr)
check(len(heads) == 2 and heads[0].startswith("# OSU-style hint-bench alltoall: ")
      and heads[1].split()[:4] == ["#", "Size", "Avg", "Latency(us)"],
      "alltoall: the description and the column header are '#'-commented", "\n".join(heads))
plain = r.stdout
r = run(2, ["bandwidth", "--sizes", "1K", "--iters", "4"])
check(r.returncode == 0 and osu_shaped(r.stdout, 1, 6) and "Avg Bandwidth(MB/s)" in r.stdout,
      "bandwidth: the same layout in MB/s", r.stdout + r.stderr)

if shutil.which("gnuplot"):
    with tempfile.NamedTemporaryFile("w", suffix=".dat") as f:
        f.write(plain)
        f.flush()
        g = subprocess.run(["gnuplot", "-e", f"stats '{f.name}' using 1:2 nooutput; print STATS_records"],
                           capture_output=True, text=True, timeout=30)
    check(g.returncode == 0 and g.stderr.strip().splitlines()[-1:] == [str(len(SIZES))],
          f"gnuplot reads {len(SIZES)} records from the plain output", g.stdout + g.stderr)
else:
    check(True, "gnuplot not installed: its reading of the output not checked (skip)")

# 2. --papi: counter columns, or one line saying there are none here; exit 0 either way
r = run(2, ["alltoall", "--sizes", "8,64", "--iters", "10", "--papi", "PAPI_TOT_INS"])
counting = "PAPI_TOT_INS/call" in r.stdout
said = [l for l in r.stderr.splitlines() if l.startswith(UNAVAILABLE)]
check(r.returncode == 0 and (counting or (len(said) == 1 and said[0].endswith("; running without them"))),
      "--papi PAPI_TOT_INS exits 0 with a counter column or the one line saying why not",
      f"exit {r.returncode}\n{r.stdout}{r.stderr}")
if counting:
    rows = data_lines(r.stdout)
    check(osu_shaped(r.stdout, 2, 7) and all(float(f[5]) > 0 for f in rows),
          "--papi: a positive PAPI_TOT_INS per call beside every size", r.stdout)
else:
    why = said[0][len(UNAVAILABLE):].rsplit("); running", 1)[0] if said else "?"
    check(osu_shaped(r.stdout, 2, 6) and "# PAPI: not available here (" in r.stdout,
          f"--papi without counters ({why}): the sizes are measured, the header says so", r.stdout + r.stderr)

# A software event of the kernel (task clock, ns) counts even where the CPU exposes no PMU, so the
# counting path is exercised here too: summed over the ranks it is about P x the latency.
r = run(2, ["alltoall", "--sizes", "8,64K", "--iters", "20", "--papi", "perf::TASK-CLOCK"])
if "perf::TASK-CLOCK/call" in r.stdout:
    rows = data_lines(r.stdout)
    plausible = osu_shaped(r.stdout, 2, 7) and all(0.05 < float(f[5]) / (2 * 1000 * float(f[1])) < 20 for f in rows)
    check(r.returncode == 0 and plausible, "--papi perf::TASK-CLOCK: ns per call over both ranks near 2 x latency",
          r.stdout + r.stderr)
else:
    check(r.returncode == 0 and UNAVAILABLE in r.stderr,
          "--papi perf::TASK-CLOCK: not counted here, and the run says so", r.stdout + r.stderr)

r = run(2, ["alltoall", "--sizes", "8", "--iters", "10", "--papi", "PAPI_TOT_INS", "--csv"])
rows = [l.split(",") for l in r.stdout.splitlines() if l and not l.startswith("#")]
check(r.returncode == 0 and len(rows) == 1 and len(rows[0]) == (10 if counting else 9),
      "--papi --csv: one more field per counted event, none without counters", r.stdout + r.stderr)

# 3. misuse is refused, naming what is wrong
for args, want, what in (
        (["--papi", "PAPI_NOT_AN_EVENT"], "unknown PAPI event 'PAPI_NOT_AN_EVENT'", "an unknown event name is refused, named"),
        (["--papi", "PAPI_TOT_INS,,PAPI_L1_DCM"], "bad --papi 'PAPI_TOT_INS,,PAPI_L1_DCM'", "an empty name in the list is refused"),
        (["--papi", ",".join(["PAPI_TOT_INS"] * 9)], "up to 8 event names", "more events than it counts are refused")):
    r = run(2, ["alltoall", "--sizes", "8", "--iters", "4"] + args)
    built_without = "built without PAPI" in r.stderr
    check((r.returncode == 2 and want in r.stderr and not data_lines(r.stdout))
          or (built_without and "unknown PAPI event" in want), what, f"exit {r.returncode}\n{r.stdout}{r.stderr}")

# 4. --first-call: init on a '#' line, three first-call columns (avg <= max, min <= avg) per size;
# with --csv one init line and an OP:first line after each size's line, all in the nine fields
r = run(2, ["alltoall", "--sizes", "8,1K", "--iters", "10", "--first-call"])
init = [l for l in r.stdout.splitlines() if l.startswith("# init (")]
rows = data_lines(r.stdout)
firsts_ok = osu_shaped(r.stdout, 2, 9) and all(
    0 < float(f[6]) <= float(f[5]) * 1.0001 <= float(f[7]) * 1.0002 for f in rows)
check(r.returncode == 0 and len(init) == 1 and float(init[0].split("avg ")[1].split()[0]) > 0 and firsts_ok
      and "Avg First(us)" in r.stdout,
      "--first-call: a '# init' line and first-call avg/min/max columns per size", r.stdout + r.stderr)
r = run(2, ["alltoall", "--sizes", "8,1K", "--iters", "10", "--first-call", "--csv"])
rows = [l.split(",") for l in r.stdout.splitlines() if l and not l.startswith("#")]
check(r.returncode == 0 and [(f[1], f[3]) for f in rows] ==
      [("init", "0"), ("alltoall", "8"), ("alltoall:first", "8"), ("alltoall", "1024"), ("alltoall:first", "1024")]
      and all(len(f) == 9 and float(f[4]) > 0 for f in rows) and all(f[7] == "1" for f in rows if f[1] != "alltoall"),
      "--first-call --csv: init, then each size's line and its OP:first line, nine fields", r.stdout + r.stderr)
r = run(3, ["barrier", "--first-call", "--csv", "--iters", "10"])
rows = [l.split(",") for l in r.stdout.splitlines() if l and not l.startswith("#")]
check(r.returncode == 0 and [f[1] for f in rows] == ["init", "barrier", "barrier:first"],
      "--first-call barrier at P=3: init, barrier, barrier:first", r.stdout + r.stderr)

report(results, tail=20)
