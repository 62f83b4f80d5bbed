#!/usr/bin/env python3
"""tests/bench/check_neighbors.py HINTRUN HINT_BENCH — hint-bench's neighbourhood operations.

TAP output. neighbor_allgather, neighbor_alltoall and their v variants on --graph cart (a 2-D
periodic cart: at P = 1, 2 and 4 some neighbours repeat) and on random sparse graphs (density 0.5,
and 0: every neighbourhood empty), P = 1..5, sizes 0, 1, 24 and 4096, with every hint algorithm
that can run them (naive, morton, distance_halving for the allgathers), under hintrun with
--check --vary-data: hint-bench exits 1 when --check finds a slot that does not hold its source's
data, so a wrong result fails the case; the CSV's algorithm field must name the forced algorithm
(or naive for morton when the third argument says the build has no shared heap for malloc).
Also: a bad --graph is refused, naming it.
"""
import sys
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from tap import csv_lines, report, run_bench  # noqa: E402

hintrun, bench = sys.argv[1:3]
ON_HEAP = len(sys.argv) < 4 or sys.argv[3] == "heap"
SIZES = [0, 1, 24, 4096]
results = []


def check(ok, what, detail=""):
    results.append((bool(ok), what, detail))


def run(P, args):
    return run_bench(hintrun, bench, P, args)


def checked_run(P, op, graph, alg):
    r = run(P, [op, "--graph", graph, "--algorithm", alg, "--sizes", ",".join(map(str, SIZES)),
                "--iters", "3", "--warmup", "1", "--check", "--vary-data", "--csv"])
    rows = csv_lines(r.stdout)
    sizes = [int(f[3]) for f in rows if len(f) == 9 and f[1] == op and f[2] == str(P)]
    # nothing to move anywhere (an empty graph, size 0): the library may say "trivial"; off the
    # shared heap (a build without the malloc override) morton runs naive on every rank
    allowed = (alg, "trivial") + (("naive",) if alg == "morton" and not ON_HEAP else ())
    named = all(f[8] in allowed for f in rows)
    check(r.returncode == 0 and sizes == SIZES and named,
          f"{op} --graph {graph} --algorithm {alg}, P={P}: checked at {SIZES}",
          f"exit {r.returncode}\n{r.stdout}{r.stderr}")


for P in (1, 2, 3, 4, 5):
    for op in ("neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall", "neighbor_alltoallv"):
        algs = ["naive", "morton"] + (["distance_halving"] if "allgather" in op else [])
        for graph in ("cart", "random:0.5", "random:0"):
            for alg in algs:
                checked_run(P, op, graph, alg)

r = run(2, ["neighbor_alltoall", "--graph", "torus"])
check(r.returncode != 0 and "bad --graph 'torus'" in r.stderr and not csv_lines(r.stdout),
      "an unknown --graph is refused, naming it", r.stdout + r.stderr)

report(results, tail=20)
