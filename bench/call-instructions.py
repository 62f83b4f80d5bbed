#!/usr/bin/env python3
"""bench/call-instructions.py — instructions per call of one hint call at P ranks, outside waiting
(valgrind callgrind: deterministic where timings on a shared machine are not).

    bench/call-instructions.py [--build BUILD] [-n P] [--fn FUNCTION] OP SIZE [hint-bench options]

Runs `hintrun -n P valgrind --tool=callgrind --toggle-collect=FUNCTION hint-bench OP --sizes SIZE`
twice, with 200 and 1200 timed calls (10 warm-up calls each), and prints per rank the difference
of the two runs' instructions inside FUNCTION (default hint_OP; hint_send for latency), less those
inside rt_wait_until and stage_spin (the waiting: polling a peer's line, progress, yielding; stage_spin
never calls rt_wait_until, so the two do not overlap), over the 1000 extra
calls. One-time costs (the first call's set-up, parsing the rules) cancel out. What is left still
includes the first poll of each wait, which finds the peer ready or not depending on timing, so
two runs may differ by a few instructions.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


# The waiting: rt_wait_until, and the staged collectives' spin on their peers' lines before it
# (collectives/staging.c stage_spin), which polls as rt_wait_until does, only tighter.
WAITING = ("rt_wait_until", "stage_spin")


def inclusive(path, names):
    """Instructions of PROGRAM TOTALS and inclusive of the functions `names` in one callgrind output."""
    txt = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", "--auto=no", path],
                         capture_output=True, text=True, check=True).stdout
    # no PROGRAM TOTALS line: nothing was collected in this process (a rank that never called the
    # function counted, e.g. the sender's side of latency at P > 2)
    m = re.search(r"([\d,]+) \(100.0%\)\s+PROGRAM TOTALS", txt)
    if m is None:
        return 0, 0
    total = int(m.group(1).replace(",", ""))
    best = {}
    for line in txt.splitlines():
        m = re.match(r"\s*([\d,]+) .*?:(\S+?)(?: \[|$)", line)
        if m and m.group(2) in names:
            best[m.group(2)] = max(best.get(m.group(2), 0), int(m.group(1).replace(",", "")))
    return total, sum(best.values())


def run(args, rest, iters, outdir):
    for f in os.listdir(outdir):
        os.unlink(os.path.join(outdir, f))
    b = args.build
    cmd = [f"{b}/launcher/hintrun", "-n", str(args.n), "valgrind", "--tool=callgrind",
           f"--callgrind-out-file={outdir}/cg.%q{{HINT_RANK}}", f"--toggle-collect={args.fn}",
           f"{b}/bench/hint-bench", args.op, "--sizes", args.size, "--iters", str(iters), "--warmup", "10"] + rest
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return [inclusive(f"{outdir}/cg.{r}", WAITING) for r in range(args.n)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("-n", type=int, default=2)
    ap.add_argument("--fn", default=None, help="the function collected (default hint_OP)")
    ap.add_argument("op")
    ap.add_argument("size")
    args, rest = ap.parse_known_args()
    args.fn = args.fn or ("hint_send" if args.op == "latency" else "hint_" + args.op)
    with tempfile.TemporaryDirectory() as d:
        a = run(args, rest, 200, d)
        b = run(args, rest, 1200, d)
    for r in range(args.n):
        if b[r][0] == 0:
            print(f"{args.op} {args.size} B rank {r}: does not call {args.fn}")
            continue
        per_call = ((b[r][0] - b[r][1]) - (a[r][0] - a[r][1])) / 1000
        print(f"{args.op} {args.size} B rank {r}: {per_call:.1f} instructions/call in {args.fn} outside waiting")
    return 0


if __name__ == "__main__":
    sys.exit(main())
