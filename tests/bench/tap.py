"""TAP output shared by the bench tests: one line per check, the tail of a failure's detail."""
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
