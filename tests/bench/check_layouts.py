#!/usr/bin/env python3
"""tests/bench/check_layouts.py HINTRUN HINT_BENCH — hint-bench's block layouts (--stype/--rtype).

TAP output. alltoall and allgather with every strided pairing, P = 1..4, sizes 0, 8, 24 and 4096,
run under hintrun with --check (data and untouched receive holes) and --vary-data: hint-bench exits
1 when --check finds a wrong byte, so a failed check fails the case. Also: --flush-cache keeps
working, the CSV of contiguous runs keeps its nine fields, strided lines carry stype,rtype, and
misuse is refused with a message naming what is wrong.
"""
import sys
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from tap import csv_lines, report, run_bench  # noqa: E402

hintrun, bench = sys.argv[1:3]
SIZES = [0, 8, 24, 4096]
results = []


def check(ok, what, detail=""):
    results.append((bool(ok), what, detail))


def run(P, args):
    return run_bench(hintrun, bench, P, args)


def checked_run(P, op, stype, rtype):
    r = run(P, [op, "--stype", stype, "--rtype", rtype, "--sizes", ",".join(map(str, SIZES)),
                "--iters", "4", "--warmup", "1", "--check", "--vary-data", "--csv"])
    rows = csv_lines(r.stdout)
    labelled = all(len(f) == 11 and f[1] == op and f[2] == str(P) and f[9:] == [stype, rtype] for f in rows)
    sizes = [int(f[3]) for f in rows if len(f) == 11]
    check(r.returncode == 0 and labelled and sizes == SIZES,
          f"{op} --stype {stype} --rtype {rtype}, P={P}: checked at {SIZES}, lines labelled",
          f"exit {r.returncode}\n{r.stdout}{r.stderr}")


for P in (1, 2, 3, 4):
    for op in ("alltoall", "allgather"):
        for stype, rtype in (("strided", "contig"), ("contig", "strided"), ("strided", "strided")):
            checked_run(P, op, stype, rtype)

r = run(2, ["alltoall", "--stype", "strided", "--rtype", "strided", "--sizes", "8,4096", "--iters", "4",
            "--flush-cache", "--vary-data", "--check"])
check(r.returncode == 0 and "# OSU-style hint-bench alltoall: " in r.stdout and "stype=strided, rtype=strided" in r.stdout,
      "--flush-cache with strided layouts is checked; the plain header names the layouts",
      f"exit {r.returncode}\n{r.stdout}{r.stderr}")

r = run(2, ["alltoall", "--sizes", "8", "--iters", "4", "--csv", "--stype", "contig", "--rtype", "contig"])
rows = csv_lines(r.stdout)
check(r.returncode == 0 and len(rows) == 1 and len(rows[0]) == 9,
      "contiguous layouts keep the nine-field CSV that bench/compare parses", r.stdout + r.stderr)

for args, want, what in (
        (["bcast", "--stype", "strided"], "alltoall and allgather only", "a layout for bcast is refused"),
        (["alltoall", "--rtype", "strided", "--sizes", "8,12"], "--sizes has 12",
         "a strided size that is not a multiple of 8 is refused, naming it"),
        (["allgather", "--stype", "diagonal"], "bad --stype 'diagonal'", "an unknown layout is refused")):
    r = run(2, args)
    check(r.returncode != 0 and want in r.stderr and not csv_lines(r.stdout), what, r.stdout + r.stderr)

report(results, tail=20)
