"""What the bench tests share: TAP output (one line per check, the tail of a failure's detail),
running hint-bench under hintrun, and reading its CSV lines."""
import subprocess
import sys


def report(results, tail=30):
    """Print results [(ok, what, detail)] as TAP and exit 0 only when every check passed."""
    print("TAP version 13")
    print(f"1..{len(results)}")
    for i, (ok, what, detail) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {what}")
        if not ok and detail:
            for line in str(detail).splitlines()[-tail:]:
                print("  # " + line)
    sys.exit(0 if all(ok for ok, _, _ in results) else 1)


def run_bench(hintrun, bench, P, args, timeout=60):
    """hint-bench ARGS at P ranks under hintrun, output captured."""
    return subprocess.run([hintrun, "-n", str(P), bench] + args, capture_output=True, text=True, timeout=timeout)


def csv_lines(out):
    """The data lines of hint-bench --csv output, split into fields ('#' lines are comments)."""
    return [l.split(",") for l in out.splitlines() if l and not l.startswith("#")]
