"""tests/examples/check_stencil_spmm_common.py — what check_spmm.py and check_stencil.py share.

Runs one of the neighbourhood examples (examples/spmm.c, examples/stencil.c) under hintrun and
judges its output. A run is one of two outcomes, decided by the test, never by the example alone:
  ran:         exit 0, the check line says 0 wrong values and OK, the time line has a number, and
               `ran:` names the forced algorithm (or `trivial`);
  unsupported: exit 3, the example's UNSUPPORTED line naming the forced algorithm, and no check
               or time line (nothing was computed).
Each case says which outcomes it accepts: an algorithm the docs say runs the call must run it.
"""
import os
import re
import subprocess

TIME = re.compile(r"time per (?:iteration|step) (\d+\.\d) us")
RAN = re.compile(r"algorithm (\S+) \(ran: (\S+)\)")


class Tap:
    def __init__(self):
        self.results = []

    def check(self, ok, what, detail=""):
        self.results.append((bool(ok), what, detail))

    def finish(self):
        print("TAP version 13")
        print(f"1..{len(self.results)}")
        for i, (ok, what, detail) in enumerate(self.results, 1):
            print(f"{'ok' if ok else 'not ok'} {i} - {what}")
            if not ok:
                for line in detail.splitlines()[-25:]:
                    print("# " + line)
        return 0 if all(ok for ok, _, _ in self.results) else 1


def run(hintrun, exe, P, args, nodes=1, env=None, timeout=120):
    e = dict(os.environ)
    e.update(env or {})
    cmd = [hintrun, "-n", str(P)] + (["--nodes", str(nodes)] if nodes > 1 else []) + \
          ["--timeout", str(timeout - 20), exe] + args
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)
    except subprocess.TimeoutExpired as t:
        return subprocess.CompletedProcess(cmd, -1, t.stdout or "", (t.stderr or "") + "\n(timed out)")


def outcome(r, prog, algorithm):
    """'ran', 'unsupported', or None (anything else), with a one-line summary."""
    out = r.stdout
    check = re.search(rf"{prog}: check against .*: max relative error (\S+), (\d+) wrong \S+ "
                      r"\(tolerance [^)]*\): (OK|FAILED)", out)
    time = TIME.search(out)
    ran = RAN.search(out)
    unsup = f"{prog}: UNSUPPORTED: --algorithm {algorithm} cannot run" in out
    if (r.returncode == 0 and check and check.group(2) == "0" and check.group(3) == "OK" and time and ran
            and not unsup and (algorithm == "auto" or ran.group(2) in (algorithm, "trivial"))):
        return "ran", f"ran {ran.group(2)}, error {check.group(1)}, {time.group(1)} us"
    if r.returncode == 3 and unsup and not check and not time and out.count(f"{prog}: UNSUPPORTED") == 1:
        return "unsupported", "HINT_ERR_UNSUPPORTED, said so"
    return None, f"exit {r.returncode}"


def case(tap, hintrun, exe, prog, P, args, algorithm, accept, nodes=1, timeout=120):
    """One run with --algorithm; passes when its outcome is one of accept."""
    r = run(hintrun, exe, P, args + ["--algorithm", algorithm], nodes=nodes, timeout=timeout)
    got, summary = outcome(r, prog, algorithm)
    where = f"P={P}" + (f" --nodes {nodes}" if nodes > 1 else "")
    tap.check(got in accept, f"{where} {' '.join(args)} --algorithm {algorithm}: {summary} "
              f"(accepts {' or '.join(accept)})", f"exit {r.returncode}\n{r.stdout}{r.stderr}")


def corrupted(tap, hintrun, exe, prog, P, args):
    """--corrupt: the check must catch one wrong halo value (exit 1, FAILED, some wrong)."""
    r = run(hintrun, exe, P, args + ["--corrupt"])
    m = re.search(rf"{prog}: check against .*: max relative error (\S+), (\d+) wrong \S+ .*: FAILED", r.stdout)
    tap.check(r.returncode == 1 and m and int(m.group(2)) > 0,
              f"P={P} {' '.join(args)} --corrupt: the check fails ({m.group(2) if m else '?'} wrong)",
              f"exit {r.returncode}\n{r.stdout}{r.stderr}")


def misuse(tap, hintrun, exe, prog, bad_args, help_word):
    for args, want in bad_args:
        r = run(hintrun, exe, 2, args)
        tap.check(r.returncode == 2 and want in r.stderr and r.stderr.count(f"{prog}:") == 1,
                  f"{' '.join(args)} is refused (exit 2, one message naming it)", f"exit {r.returncode}\n{r.stderr}")
    r = run(hintrun, exe, 2, ["--help"])
    tap.check(r.returncode == 0 and r.stdout.count("usage:") == 1 and help_word in r.stdout,
              "--help prints the usage once", r.stdout + r.stderr)
