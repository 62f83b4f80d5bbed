#!/usr/bin/env python3
"""tests/unit/check_hint_info_nodes.py — `hint_info --np P --nodes K --size B` shows the choice of
the built-in rules for a group spread over K nodes (issue 16): never a node-only algorithm across
nodes, the hierarchical ones where the rules give them, the one-node choice unchanged for K = 1,
and a refusal of more nodes than ranks; and "trivial" printed only for the calls that take the
trivial path.

usage: check_hint_info_nodes.py HINT_INFO    (TAP on stdout)
"""
import subprocess
import sys

hint_info = sys.argv[1]
# what the tables mark node_only (shared heap, node area), as hint_info --algorithms names them
NODE_ONLY = {"shm", "heap", "staged", "row", "column", "hilbert", "morton", "morton_numa"}
results = []


def picks(*args):
    out = subprocess.run([hint_info, *args], capture_output=True, text=True, check=True).stdout
    return out.splitlines()[0], dict(line.split() for line in out.splitlines()[1:])


def check(name, ok, detail=""):
    results.append((name, ok, detail))


head, p = picks("--np", "8", "--nodes", "4", "--size", "8")
check("8 ranks on 4 nodes: the header names the shape", "on 4 nodes (at most 2 a node)" in head, head)
check("8 ranks on 4 nodes, 8 B: alltoall hier_morton", p.get("alltoall") == "hier_morton", p.get("alltoall"))
check("8 ranks on 4 nodes, 8 B: barrier and allgather hier", p.get("barrier") == "hier" and p.get("allgather") == "hier",
      str(p))
check("8 ranks on 4 nodes: no node-only algorithm", not NODE_ONLY & set(p.values()), str(p))
_, p = picks("--np", "8", "--nodes", "2", "--size", "1048576")
check("8 ranks on 2 nodes, 1 MiB: no node-only algorithm", not NODE_ONLY & set(p.values()), str(p))
_, p = picks("--np", "4", "--nodes", "4", "--size", "8")
check("one rank a node: the flat barrier", p.get("barrier") == "dissemination", p.get("barrier"))
_, one = picks("--np", "8", "--size", "8")
_, one_k = picks("--np", "8", "--nodes", "1", "--size", "8")
check("--nodes 1 is the one-node choice", one == one_k and one.get("barrier") == "shm", str(one_k))
# "trivial" exactly where collectives/api.c takes its trivial path (hint_coll_last's name)
_, p = picks("--np", "1", "--size", "8")
check("P=1: a neighbourhood call copies along its self loops, not trivial",
      p.get("neighbor_allgather") not in (None, "trivial") and p.get("neighbor_alltoallv") not in (None, "trivial"),
      str(p))
check("P=1: alltoallv and barrier are trivial", p.get("alltoallv") == "trivial" and p.get("barrier") == "trivial", str(p))
_, p = picks("--np", "4", "--size", "0")
check("P=4, 0 B: bcast and neighbor_alltoall trivial", p.get("bcast") == "trivial" and p.get("neighbor_alltoall") == "trivial",
      str(p))
check("P=4, 0 B: the v variants are not (their counts differ by rank)",
      all(p.get(op) not in (None, "trivial") for op in ("alltoallv", "gatherv", "neighbor_allgatherv")), str(p))
bad = subprocess.run([hint_info, "--np", "2", "--nodes", "3"], capture_output=True, text=True)
check("more nodes than ranks refused", bad.returncode == 2 and "--nodes" in bad.stderr, bad.stderr)

print("1..%d" % len(results))
for i, (name, ok, detail) in enumerate(results, 1):
    print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
    if not ok:
        print("# got: %s" % detail)
sys.exit(0 if all(ok for _, ok, _ in results) else 1)
