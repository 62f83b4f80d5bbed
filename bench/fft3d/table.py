#!/usr/bin/env python3
"""bench/fft3d/table.py [--plot PNG] CSV... — the markdown table of bench/fft3d/run.sh: for each
grid, P, decomposition and transpose way, per library the median over runs of the pair, transposes
and FFTs (each run's value is already the median over its pairs, slowest rank), in ms, and the run
count. --plot PNG also draws the pair medians (one panel per P, log scale) with gnuplot."""
import csv
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

args = sys.argv[1:]
plot = None
if args[:1] == ["--plot"]:
    if len(args) < 2:
        sys.exit("table.py: --plot needs a file name")
    plot, args = args[1], args[2:]
if not args or args[0] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0 if args else 2)
rows = {}
for path in args:
    for f in csv.reader(open(path)):
        if len(f) != 12 or f[0] != "fft3d":
            sys.exit(f"table.py: {path}: not a line of fft3d --csv: {','.join(f)}")
        lib, decomp, way, grid, P, dims = f[1], f[2], f[3], f[4], int(f[5]), f[6]
        rows.setdefault((grid, P, decomp, way, dims), {}).setdefault(lib, []).append([float(x) for x in f[8:11]])
libs = sorted({lib for v in rows.values() for lib in v}, key=lambda lib: (not lib.startswith("hint"), lib))
print("| grid | P (grid) | decomp | transpose | " +
      " | ".join(f"{lib}: pair / transposes / FFTs, ms (runs)" for lib in libs) + " |")
print("| --- | --- | --- | --- | " + " | ".join("---" for _ in libs) + " |")
for k in sorted(rows, key=lambda k: (int(k[0].split("x")[0]), k[1], k[2], k[3])):
    cells = []
    for lib in libs:
        runs = rows[k].get(lib)
        if not runs:
            cells.append("-")
            continue
        med = [statistics.median(r[i] for r in runs) / 1e3 for i in range(3)]
        cells.append(f"{med[0]:.2f} / {med[1]:.2f} / {med[2]:.2f} ({len(runs)})")
    print(f"| {k[0]} | {k[1]} ({k[4]}) | {k[2]} | {k[3]} | " + " | ".join(cells) + " |")


def short(lib):
    """'Open MPI 4.1.4' -> 'Open MPI', 'hint 0.1.0' -> 'hint'"""
    return "Open MPI" if lib.startswith("Open MPI") else lib.split()[0]


def draw(png):
    """One panel per P: pair median (ms, log) against the grid side, a line per library and way."""
    if not shutil.which("gnuplot"):
        sys.exit("table.py: --plot needs gnuplot (apt-get install gnuplot-nox)")
    Ps = sorted({k[1] for k in rows})
    series = sorted({(lib, k[3]) for k, v in rows.items() for lib in v}, key=lambda s: (s[0] != libs[0], s))
    with tempfile.TemporaryDirectory() as tmp:
        script = [f"set terminal pngcairo size {420 * len(Ps)},380 font ',9'", f"set output '{png}'",
                  f"set multiplot layout 1,{len(Ps)}", "set logscale xy", "set xtics (64,128,256)", "set xrange [52:315]",
                  "set xlabel 'N (grid N^3)'", "set ylabel 'forward+backward pair, ms'", "set key bottom right",
                  "set grid"]
        for P in Ps:
            plots = []
            for i, (lib, way) in enumerate(series):
                pts = sorted((int(k[0].split("x")[0]), statistics.median(r[0] for r in v[lib]) / 1e3)
                             for k, v in rows.items() if k[1] == P and k[3] == way and lib in v)
                dat = os.path.join(tmp, f"{P}-{i}.dat")
                with open(dat, "w") as f:
                    f.writelines(f"{n} {ms}\n" for n, ms in pts)
                plots.append(f"'{dat}' using 1:2 with linespoints dt {1 if way == 'datatype' else 2} "
                             f"lc {1 + libs.index(lib)} title '{short(lib)} {way}'")
            script += [f"set title 'P = {P}'", "plot " + ", ".join(plots)]
        script.append("unset multiplot")
        subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=True)


if plot:
    draw(plot)
