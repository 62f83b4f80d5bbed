#!/usr/bin/env python3
"""tests/examples/check_spmm.py HINTRUN SPMM — examples/spmm checked (TAP).

For P in {1, 2, 3, 4, 5, 7, 8, 16}, a small stand-in of a Table II matrix of paper 002 (each kind of
structure appears) and every algorithm of neighbor_allgatherv: naive, distance_halving, morton
(over the shared heap; the example's buffers come from hint_malloc) and auto must run and match
the serial product exactly. The same at P=5 over `--nodes 2` (3 + 2 ranks): distance_halving is
message-based and must run across nodes; morton (node-only) must say UNSUPPORTED with exit 3.
--corrupt (one received halo value off by 1) must make the check fail, so the check can fail;
misuse exits 2.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_stencil_spmm_common import Tap, case, corrupted, misuse  # noqa: E402

hintrun, spmm = sys.argv[1:3]
tap = Tap()
MATRICES = {1: "dwt_193", 2: "journals", 3: "ash292", 4: "random --n 301 --nnz 2400",
            5: "banded --n 157 --nnz 1500", 7: "powerlaw --n 230 --nnz 4000", 8: "blockdiag --n 203 --nnz 3000",
            16: "banded --n 407 --nnz 4000"}
ACCEPT = {"naive": ("ran",), "distance_halving": ("ran",), "auto": ("ran",), "morton": ("ran",)}

for P, matrix in MATRICES.items():
    args = ["--matrix"] + matrix.split() + ["--iters", "3", "--k", "3"]
    for alg, accept in ACCEPT.items():
        case(tap, hintrun, spmm, "spmm", P, args, alg, accept)

nodes_args = ["--matrix", "dwt_193", "--iters", "3", "--k", "2"]
for alg, accept in (("naive", ("ran",)), ("distance_halving", ("ran",)), ("auto", ("ran",)),
                    ("morton", ("unsupported",))):
    case(tap, hintrun, spmm, "spmm", 5, nodes_args, alg, accept, nodes=2, timeout=300)

corrupted(tap, hintrun, spmm, "spmm", 3, ["--matrix", "ash292", "--iters", "2"])
corrupted(tap, hintrun, spmm, "spmm", 4, ["--matrix", "banded", "--n", "90", "--nnz", "400", "--iters", "3",
                                        "--algorithm", "distance_halving"])
misuse(tap, hintrun, spmm, "spmm",
       ((["--matrix", "nope"], "--matrix 'nope'"), (["--n", "0"], "--n '0'"), (["--k", "0"], "--k '0'"),
        (["--iters", "0"], "--iters '0'"), (["--iters"], "--iters needs a value"),
        (["--algorithm", "bogus"], "--algorithm 'bogus'"), (["--matrix", "comsol", "--n", "10"], "--n and --nnz"),
        (["--matrix", "random", "--n", "10", "--nnz", "5"], "--nnz 5"), (["--bogus"], "unknown argument '--bogus'")),
       "--algorithm")
sys.exit(tap.finish())
