#!/usr/bin/env python3
"""tests/examples/check_fft3d.py HINTRUN FFT3D LIBHINT — the distributed 3-D FFT example, checked.

TAP output. Every P in {1, 2, 3, 4, 8} x grid {12^3, 10x9x7} x --decomp {slab, pencil} x
--transpose {pack, datatype} runs under hintrun with --check: the case passes only when the
example exits 0 AND the error it prints (forward against a serial FFTW transform on rank 0, and
forward+backward against the input) is at most 1e-9, and the process grid it reports is the one
the decomposition implies. The datatype runs also set HINT_COLL_STATS=1: every rank must report
its alltoalls copied straight between the layouts (none staged through packed bytes), as many as
the transposes run; in a build without the malloc override (the sanitizer build: LIBHINT defines
no malloc) the example's buffers are off the shared heap, so the calls must add up to as many but
may be packed. Misuse must exit 2 with a message naming the bad value.
"""
import os
import re
import subprocess
import sys

hintrun, fft3d, libhint = sys.argv[1:4]
# malloc serves from the shared heap only where libhint overrides it
nm = subprocess.run(["nm", "-D", "--defined-only", libhint], capture_output=True, text=True)
ON_HEAP = any(line.split()[-1] == "malloc" for line in nm.stdout.splitlines() if line.split())
TOL = 1e-9
GRID = {1: (1, 1), 2: (2, 1), 3: (3, 1), 4: (2, 2), 8: (4, 2)}  # hint_dims_create(P, 2)
results = []

CHECK = re.compile(r"check: forward vs serial FFTW max rel\. error (\S+), forward\+backward vs input (\S+) "
                   r"\(tolerance [^)]*\): (OK|FAILED)")
STATS = re.compile(r"hint\[rank \d+\] coll: .*derived-type collective calls: (\d+) copied straight .*?, (\d+) staged")


def check(ok, what, detail=""):
    results.append((bool(ok), what, detail))


def run(P, args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([hintrun, "-n", str(P), "--timeout", "60", fft3d] + args,
                          capture_output=True, text=True, timeout=90, env=e)


def checked(P, n, decomp, way):
    iters = 1
    r = run(P, ["--n", n, "--decomp", decomp, "--transpose", way, "--check", "--iters", str(iters)],
            {"HINT_COLL_STATS": "1"} if way == "datatype" else None)
    m = CHECK.search(r.stdout)
    errs = (float(m.group(1)), float(m.group(2))) if m else (None, None)
    dims = (P, 1) if decomp == "slab" else GRID[P]
    shape = f"{decomp} {dims[0]}x{dims[1]} over {P} ranks"
    ok = (r.returncode == 0 and m is not None and m.group(3) == "OK" and max(errs) <= TOL and shape in r.stdout)
    detail = f"exit {r.returncode}\n{r.stdout}{r.stderr}"
    if way == "datatype" and P > 1:
        # check pair + warm-up + iters pairs, each with one transpose per cut grid dimension and direction
        want = (2 + iters) * 2 * sum(1 for d in dims if d > 1)
        stats = [(int(a), int(b)) for a, b in STATS.findall(r.stderr)]
        if ON_HEAP:
            ok = ok and len(stats) == P and all(s == (want, 0) for s in stats)
            detail += f"\nwanted {P} stats lines of {want} copied straight, 0 staged; got {stats}"
        else:
            ok = ok and len(stats) == P and all(a + b == want for a, b in stats)
            detail += f"\nwanted {P} stats lines of {want} calls (buffers off the heap: packing allowed); got {stats}"
    check(ok, f"P={P} --n {n} --decomp {decomp} --transpose {way}: exit 0, max error {errs} <= {TOL}", detail)


for P in (1, 2, 3, 4, 8):
    for n in ("12", "10x9x7"):
        for decomp in ("slab", "pencil"):
            for way in ("pack", "datatype"):
                checked(P, n, decomp, way)

for args, want in ((["--n", "0"], "--n '0'"), (["--n", "8x8"], "--n '8x8'"), (["--n", "70000"], "--n '70000'"),
                   (["--decomp", "cube"], "--decomp 'cube'"), (["--transpose", "mpi"], "--transpose 'mpi'"),
                   (["--iters", "-1"], "--iters '-1'"), (["--iters"], "--iters needs a value"),
                   (["--bogus"], "unknown argument '--bogus'")):
    r = run(2, args)
    check(r.returncode == 2 and want in r.stderr and r.stderr.count("fft3d:") == 1,
          f"{' '.join(args)} is refused (exit 2, one message naming it)", f"exit {r.returncode}\n{r.stderr}")
r = run(2, ["--help"])
check(r.returncode == 0 and r.stdout.count("usage:") == 1 and "--transpose" in r.stdout,
      "--help prints the usage once", r.stdout + r.stderr)

print("TAP version 13")
print(f"1..{len(results)}")
for i, (ok, what, detail) in enumerate(results, 1):
    print(f"{'ok' if ok else 'not ok'} {i} - {what}")
    if not ok:
        for line in detail.splitlines()[-25:]:
            print("# " + line)
sys.exit(0 if all(ok for ok, _, _ in results) else 1)
