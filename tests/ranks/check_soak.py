"""A short randomized soak (tests/ranks/soak.c) for P in {2, 3, 4, 5, 8}, as TAP: a few fixed seeds
and one seed new on every run (HINT_SOAK_SEED repeats one), named in each case so that a failure
can be repeated. Two jobs at a time. A long run: docs/TESTING.md.

usage: check_soak.py HINTRUN SOAK
"""
import concurrent.futures
import os
import random
import subprocess
import sys
import time

NPS = (2, 3, 4, 5, 8)
FIXED_SEEDS = (1, 2, 20261123)
MAX_BYTES = "256K"
JOB_TIMEOUT = 100  # seconds, hintrun --timeout


def rounds(np):
    """Ranks outnumber the 2 cores beyond P=2: fewer rounds there."""
    return 1500 if np <= 2 else 800


def run_case(hintrun, soak, np, seed):
    cmd = [hintrun, "--timeout", str(JOB_TIMEOUT), "-n", str(np), soak,
           "--seed", str(seed), "--rounds", str(rounds(np)), "--max-bytes", MAX_BYTES]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=JOB_TIMEOUT + 30)
        out, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:  # hintrun itself hung: its output so far
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout or ""
        rc = -1
    summary = [l for l in out.splitlines() if l.startswith("soak OK: ")]
    ok = rc == 0 and len(summary) == 1
    return ok, time.monotonic() - t0, " ".join(cmd[3:]).replace(soak, "soak"), out


def main():
    hintrun, soak = sys.argv[1], sys.argv[2]
    env_seed = os.environ.get("HINT_SOAK_SEED", "")
    fresh = int(env_seed, 0) if env_seed else random.SystemRandom().randrange(1, 2**48)
    cases = [(np, seed, seed == fresh) for np in NPS for seed in FIXED_SEEDS + (fresh,)]
    print("TAP version 13")
    print(f"1..{len(cases)}")
    print(f"# this run's own seed: {fresh} (HINT_SOAK_SEED={fresh} repeats it)")
    sys.stdout.flush()
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(run_case, hintrun, soak, np, seed) for np, seed, _ in cases]
        all_ok = True
        for i, ((np, seed, is_fresh), f) in enumerate(zip(cases, futures), 1):
            ok, secs, cmd, out = f.result()
            all_ok &= ok
            what = f"P={np} seed {seed}{' (this run)' if is_fresh else ''}, {rounds(np)} rounds: {secs:.1f} s"
            print(f"{'ok' if ok else 'not ok'} {i} - {what}")
            if not ok:
                print(f"  # hintrun {cmd}")
                for line in out.splitlines()[-25:]:
                    print("  # " + line)
            sys.stdout.flush()
    sys.exit(0 if all_ok else 1)


if __name__ == "__main__":
    main()
