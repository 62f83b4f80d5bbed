#!/usr/bin/env python3
"""tests/examples/check_stencil.py HINTRUN STENCIL — examples/stencil checked (TAP).

For P in {1, 2, 3, 4, 5, 7, 8, 16}, a 2-D periodic grid and a 3-D fixed-boundary grid whose sides the
cart does not divide (so blocks differ and faces are padded; P=1 and 2 give self and repeated
neighbours), and every algorithm: naive, morton (neighbor_alltoall over the shared heap; the
example's buffers come from hint_malloc) and auto must run and match the serial grid exactly;
distance_halving (neighbor_allgather(v) only) may run, and then must match, or must say
UNSUPPORTED with exit 3. At P=5 over `--nodes 2`: naive and auto must run, morton (node-only)
may only say UNSUPPORTED. --corrupt (one received halo value off by 1) must make the check fail;
misuse exits 2.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_stencil_spmm_common import Tap, case, corrupted, misuse  # noqa: E402

hintrun, stencil = sys.argv[1:3]
tap = Tap()
GRIDS = (["--grid", "13x11", "--boundary", "periodic"], ["--grid", "9x7x5", "--boundary", "fixed"])
ACCEPT = {"naive": ("ran",), "morton": ("ran",), "auto": ("ran",), "distance_halving": ("ran", "unsupported")}

for P in (1, 2, 3, 4, 5, 7, 8, 16):
    for grid in GRIDS:
        for alg, accept in ACCEPT.items():
            case(tap, hintrun, stencil, "stencil", P, grid + ["--iters", "3"], alg, accept)

for alg, accept in (("naive", ("ran",)), ("auto", ("ran",)), ("morton", ("unsupported",)),
                    ("distance_halving", ("ran", "unsupported"))):
    case(tap, hintrun, stencil, "stencil", 5, ["--grid", "11x6", "--iters", "3"], alg, accept, nodes=2, timeout=300)

corrupted(tap, hintrun, stencil, "stencil", 1, ["--grid", "6x5", "--iters", "2"])  # the self exchange
corrupted(tap, hintrun, stencil, "stencil", 4, ["--grid", "9x8", "--boundary", "fixed", "--iters", "3",
                                              "--algorithm", "morton"])
misuse(tap, hintrun, stencil, "stencil",
       ((["--grid", "0"], "--grid '0'"), (["--grid", "4x4x4x4"], "--grid '4x4x4x4'"), (["--grid", "4xx4"], "--grid '4xx4'"),
        (["--dims", "4"], "--dims '4'"), (["--dims", "2", "--grid", "4x4x4"], "--grid has 3 sides"),
        (["--grid", "1x8"], "side 0 has 1 cells"), (["--boundary", "open"], "--boundary 'open'"),
        (["--iters", "0"], "--iters '0'"), (["--algorithm", "bogus"], "--algorithm 'bogus'"),
        (["--bogus"], "unknown argument '--bogus'")),
       "--boundary")
sys.exit(tap.finish())
