#!/usr/bin/env python3
"""bench/cliffs.py — the latency curve at every switch point of the selection rules (issue 18 item 4).

usage: bench/cliffs.py --np P [--nodes K] [--ops bcast,allreduce,...] [--rules FILE] [--list]
                       [--move OP.KEY:OLD=NEW ...]
                       [--reps 3] [--margin 0.10] [--max-size 1M] [--build DIR] [--out DIR]
                       [--iters N] [--warmup N] [--timeout SECONDS]

Switch points: for P ranks on K nodes (hintrun --nodes K deals them as hint_info --nodes K
counts them), every byte size at which the algorithm the rules choose for an operation changes.
The choice is hint_info's (`hint_info --np P --nodes K --size B [--rules-file FILE]`), so a
rule whose first algorithm cannot run a size (staged beyond its staging block, a node-only one
across nodes) counts as the selection counts it. Where to look comes from the rules' own bounds
(min/max_bytes, min/max_total_bytes / P, of the rules this shape can match) and from powers of
two up to --max-size, bisected where two neighbours differ. Sizes are what hint-bench passes:
for reduce, allreduce and reduce_scatter_block whole doubles (a multiple of 8 bytes).

Per switch point four sizes are measured: one below (s0), the last size of the lower algorithm
(s1), the first of the upper one (s2), one above (s3); s0 and s3 are a quarter of the way to
the next switch (at most), so each side stays on its algorithm. hint-bench runs every size of an
operation in one process, hint only, the operations taking turns, --reps rounds (bench/compare's
runner: commands.txt, log.txt and compare.csv in --out); each size's value is the median over
the rounds. With --rules FILE the runs get HINT_TUNING_FILE=FILE, so they choose as listed.

Verdict per switch point, with the noise margin m (--margin): `cliff` when the curve jumps at
the switch, median(s2) > (1 + m) median(s1) (s2 is one element more than s1: nothing but the
algorithm explains more than the margin); `drop` when it falls anywhere over s0..s3 by more than
m (the upper algorithm would have been faster earlier: the switch comes late); else `ok`. The
spread column is the largest (max - min) / median of the rounds' averages at the four sizes; when
it exceeds the margin the verdict gets a '?' (`cliff?`, `drop?`, `ok?`): the rounds disagree by
more than the margin allows, so the machine was too busy for a verdict.

--move OP.KEY:OLD=NEW (repeatable) tries a bound before it is built in: every rule of OP whose
KEY (max_bytes, min_total_bytes, ...) is OLD gets NEW, in a copy of the rules (--rules FILE, else
the built-in ones) written to OUT/rules.json and used as --rules is; e.g.
`--move allgather.max_bytes:2048=3072`. Run once with and once without it to compare.

--list prints the switch points and the sizes it would run, and runs nothing.
"""
import argparse
import datetime
import importlib.machinery
import importlib.util
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside bench/compare
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def load_compare():
    """bench/compare as a module (it has no .py suffix), for its runner and helpers."""
    loader = importlib.machinery.SourceFileLoader("hint_compare", os.path.join(HERE, "compare"))
    spec = importlib.util.spec_from_loader("hint_compare", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


compare = load_compare()
# hint-bench's sized collectives (barrier has no size; latency and bandwidth are p2p)
SIZED_OPS = [o for o in compare.BENCH_OPS if o not in ("barrier", "latency", "bandwidth")]
DOUBLES = ("reduce", "allreduce", "reduce_scatter_block")  # hint-bench moves whole doubles


def step_of(op):
    return 8 if op in DOUBLES else 1


class Chooser:
    """The algorithm selection picks for op at a size, asked of hint_info (one call per size
    gives every operation), cached."""

    def __init__(self, hint_info, P, nodes, rules):
        self.cmd = [hint_info, "--np", str(P), "--nodes", str(nodes)] + (["--rules-file", rules] if rules else [])
        self.cache = {}

    def at(self, size):
        if size not in self.cache:
            r = subprocess.run(self.cmd + ["--size", str(size)], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"cliffs: {' '.join(self.cmd)} --size {size} failed: {r.stderr.strip()}")
            picks = {}
            for line in r.stdout.splitlines()[1:]:
                f = line.split()
                if len(f) == 2:
                    picks[f[0]] = f[1]
            self.cache[size] = picks
        return self.cache[size]

    def name(self, op, size):
        return self.at(size)[op]


def rules_json(hint_info, path):
    """The rules to read bounds from: FILE, else the build's built-in ones (hint_info --rules)."""
    import json
    if path:
        with open(path) as f:
            return json.load(f)
    r = subprocess.run([hint_info, "--rules"], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def bound_sizes(rules, op, P, nodes):
    """Sizes where a rule of op that this shape can match begins or ends: the places to look."""
    ppn = (P + nodes - 1) // nodes
    out = set()
    lst = rules.get(op, []) if rules.get("version", 2) == 2 else []
    if rules.get("version") == 1:  # per rank count: {"P": n, "rules": [...]} under each operation
        for block in rules.get(op, []):
            if block.get("P") == P:
                lst += block.get("rules", [])
    for r in lst:
        if not (r.get("min_ranks", 0) <= P <= r.get("max_ranks", 1 << 31) and
                r.get("min_ppn", 0) <= ppn <= r.get("max_ppn", 1 << 31) and
                r.get("min_nodes", 0) <= nodes <= r.get("max_nodes", 1 << 31)):
            continue
        if "min_bytes" in r:
            out.add(r["min_bytes"])
        if "max_bytes" in r:
            out.add(r["max_bytes"] + 1)
        if "min_total_bytes" in r:
            out.add(-(-r["min_total_bytes"] // P))
        if "max_total_bytes" in r:
            out.add(r["max_total_bytes"] // P + 1)
    return out


def switch_points(ch, rules, op, P, nodes, max_size):
    """[(first size of the upper algorithm, lower name, upper name)] in size order, sizes a
    multiple of the operation's element (hint-bench's sizes)."""
    g = step_of(op)
    up = lambda s: -(-s // g) * g  # noqa: E731  (the first size hint-bench can run at or above s)
    probes = {g}
    n = g
    while n <= max_size:
        probes.add(n)
        n *= 2
    probes |= {up(s) for s in bound_sizes(rules, op, P, nodes) if 0 < up(s) <= max_size}
    probes |= {s - g for s in list(probes) if s - g >= g}
    probes = sorted(probes)
    found = []
    for lo, hi in zip(probes, probes[1:]):
        a, b = ch.name(op, lo), ch.name(op, hi)
        while a != b:  # the first change in (lo, hi]: bisect on multiples of g
            l, h = lo, hi
            while h - l > g:
                m = (l + h) // 2 // g * g
                if ch.name(op, m) == a:
                    l = m
                else:
                    h = m
            found.append((h, a, ch.name(op, h)))
            lo, a = h, ch.name(op, h)
    return found


def points_sizes(op, sw):
    """Per switch point (s0, s1, s2, s3): one below, the last below, the first at, one above;
    s0 and s3 at most a quarter of the way to the neighbouring switch (or to g / twice the size)."""
    g = step_of(op)
    out = []
    for i, (s2, _, _) in enumerate(sw):
        s1 = s2 - g
        prev = sw[i - 1][0] if i > 0 else g
        nxt = sw[i + 1][0] - g if i + 1 < len(sw) else 2 * s2
        d_lo = max(g, (s1 - prev) // 4 // g * g)
        d_hi = max(g, (nxt - s2) // 4 // g * g)
        s0 = s1 - d_lo if s1 - d_lo >= prev else None
        s3 = s2 + d_hi if s2 + d_hi <= nxt else None
        out.append((s0, s1, s2, s3))
    return out


def human(n):
    return compare.human(n) if n else str(n)


def verdict(meds, spread, margin):
    """'cliff', 'drop' or 'ok' from the medians at (s0, s1, s2, s3) (None: not measured), with a
    '?' when the rounds' spread exceeds the margin."""
    m0, m1, m2, m3 = meds
    if m1 is None or m2 is None:
        return "?", None
    step = m2 / m1
    vals = [v for v in meds if v is not None]
    if step > 1 + margin:
        v = "cliff"
    elif any(b < a * (1 - margin) for a, b in zip(vals, vals[1:])):
        v = "drop"
    else:
        v = "ok"
    return v + ("?" if spread > margin else ""), step


class CliffRuns(compare.Compare):
    """bench/compare's runner, for hint alone, on virtual nodes and with a rules file."""

    def __init__(self, a, nodes, rules):
        super().__init__(a)
        self.nodes, self.rules = nodes, rules

    def command(self, lib, P, op, sizes=None):
        cmd = super().command(lib, P, op, sizes)
        if self.nodes > 1:  # hintrun -n P --nodes K ...
            cmd[3:3] = ["--nodes", str(self.nodes)]
        return cmd

    def env(self):
        e, added = super().env()
        if self.rules:
            e["HINT_TUNING_FILE"] = added["HINT_TUNING_FILE"] = self.rules
        if self.nodes > 1:  # virtual nodes talk through libfabric's tcp provider on lo
            for k, v in (("FI_PROVIDER", "tcp"), ("FI_TCP_IFACE", "lo")):
                e.setdefault(k, v)
                added[k] = e[k]
        return e, added


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="bench/cliffs.py", description=__doc__.split("\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--np", type=int, required=True, help="ranks")
    ap.add_argument("--nodes", type=int, default=1, help="virtual nodes (hintrun --nodes; default 1)")
    ap.add_argument("--ops", default=",".join(SIZED_OPS), help="operations (default: every sized collective)")
    ap.add_argument("--rules", default=None, metavar="FILE",
                    help="rules in the tuning-file format, in front of the built-in ones (default: the built-in)")
    ap.add_argument("--move", action="append", default=[], metavar="OP.KEY:OLD=NEW",
                    help="set KEY of OP's rules whose KEY is OLD to NEW, in a copy of the rules (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the switch points and the sizes; run nothing")
    ap.add_argument("--reps", type=int, default=3, help="rounds; each size's median over them is kept (default 3)")
    ap.add_argument("--margin", type=float, default=0.10, help="noise margin, a fraction (default 0.10)")
    ap.add_argument("--max-size", default="1M", help="largest size looked at (default 1M)")
    ap.add_argument("--build", default=os.environ.get("HINT_BUILD", os.path.join(ROOT, "build")),
                    help="hint build folder (default: $HINT_BUILD or ROOT/build)")
    ap.add_argument("--out", default=None, help="output folder (default: cliffs-YYYYmmdd-HHMMSS here)")
    ap.add_argument("--iters", type=int, default=None, help="timed calls per size (default: hint-bench's rule)")
    ap.add_argument("--warmup", type=int, default=None, help="untimed calls per size (default: hint-bench's rule)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds one run may take (default 600)")
    a = ap.parse_args(argv)
    a.ops = [o for o in a.ops.split(",") if o]
    bad = [o for o in a.ops if o not in SIZED_OPS]
    if bad:
        ap.error(f"not a sized collective of hint-bench: {','.join(bad)} (choose among {','.join(SIZED_OPS)})")
    if a.np < 2 or a.nodes < 1 or a.nodes > a.np:
        ap.error("--np must be at least 2 and --nodes from 1 to --np")
    if a.rules:
        a.rules = os.path.abspath(a.rules)
    a.max_size = compare.size_bytes(a.max_size)
    try:
        a.move = [parse_move(m) for m in a.move]
    except ValueError:
        ap.error("--move wants OP.KEY:OLD=NEW with integers, e.g. allgather.max_bytes:2048=3072")
    return a


def parse_move(text):
    where, new = text.rsplit("=", 1)
    what, old = where.rsplit(":", 1)
    op, key = what.split(".", 1)
    return op, key, int(old), int(new)


def apply_moves(rules, moves):
    """The rules with every --move made; exits naming a move that matched no rule."""
    import copy
    rules = copy.deepcopy(rules)
    for op, key, old, new in moves:
        hit = [r for r in rules.get(op, []) if isinstance(r, dict) and r.get(key) == old]
        if not hit:
            sys.exit(f"cliffs: --move {op}.{key}:{old}={new}: no rule of {op} has {key} {old}")
        for r in hit:
            r[key] = new
    return rules


def main(argv):
    a = parse_args(argv)
    hint_info = os.path.join(os.path.abspath(a.build), "tools", "hint_info")
    if not os.access(hint_info, os.X_OK):
        sys.exit(f"cliffs: {hint_info} not found: build the tree first (or --build DIR)")
    rules = rules_json(hint_info, a.rules)
    out = os.path.abspath(a.out or "cliffs-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    scratch = None
    if a.move:  # the moved copy: in --out, or (--list without --out) in a folder removed at the end
        import json
        import tempfile
        if a.list and not a.out:
            scratch = tempfile.TemporaryDirectory(prefix="cliffs-")
        folder = scratch.name if scratch else out
        os.makedirs(folder, exist_ok=True)
        rules = apply_moves(rules, a.move)
        a.rules = os.path.join(folder, "rules.json")
        with open(a.rules, "w") as f:
            json.dump(rules, f, indent=1)
    ch = Chooser(hint_info, a.np, a.nodes, a.rules)
    shape = f"P={a.np}" + (f" on {a.nodes} nodes" if a.nodes > 1 else "")
    plan = {}
    for op in a.ops:
        sw = switch_points(ch, rules, op, a.np, a.nodes, a.max_size)
        if sw:
            plan[op] = list(zip(sw, points_sizes(op, sw)))
    L = [f"Switch points of the {'rules of ' + a.rules + ', then the built-in ones' if a.rules else 'built-in rules'}"
         f", {shape}:", ""]
    for op, pts in plan.items():
        for (s2, lo, hi), sizes in pts:
            L.append(f"  {op:<22} {lo} -> {hi} at {s2} B: sizes "
                     + ",".join(str(s) for s in sizes if s is not None))
    if not plan:
        L.append("  none")
    print("\n".join(L), flush=True)
    if scratch:
        scratch.cleanup()
    if a.list or not plan:
        return 0
    cargs = ["--ops", ",".join(plan), "--nps", str(a.np), "--libs", "hint", "--reps", str(a.reps),
             "--out", out, "--build", a.build, "--no-plots", "--timeout", str(a.timeout)]
    for k in ("iters", "warmup"):
        if getattr(a, k) is not None:
            cargs += ["--" + k, str(getattr(a, k))]
    c = CliffRuns(compare.parse_args(cargs), a.nodes, a.rules)
    c.find()
    if "hint" not in c.exe:
        return 1
    load0 = compare.loadavg()
    try:
        for rep in range(a.reps):
            for op, pts in plan.items():  # the operations take turns within each round
                sizes = sorted({s for _, ss in pts for s in ss if s is not None})
                print(f"cliffs: round {rep + 1}/{a.reps} {op} {len(sizes)} sizes", file=sys.stderr, flush=True)
                c.run_one("hint", a.np, op, rep, ",".join(map(str, sizes)))
    except KeyboardInterrupt:
        c.stop_current()
        c.note("interrupted: the results are incomplete")
    finally:
        c.cleanup()
    med = c.medians()
    c.write_csv()
    R = [f"# Switch points, {shape}, hint-bench medians of {a.reps} interleaved rounds (µs)", "",
         f"Made by `bench/cliffs.py {' '.join(argv)}`; load average {load0} at the start, "
         f"{compare.loadavg()} at the end; noise margin {a.margin:.0%}.", "",
         "| op | switch | at B | s0 | s1 | s2 | s3 | µs s0 | µs s1 | µs s2 | µs s3 | s2/s1 | spread | verdict | ran |",
         "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for op, pts in plan.items():
        for (s2, lo, hi), sizes in pts:
            ms = [med.get(("hint", op, a.np, s)) if s is not None else None for s in sizes]
            meds = [m["avg"] if m else None for m in ms]
            spread = max([(m["max"] - m["min"]) / m["avg"] for m in ms if m and m["avg"] > 0] or [0])
            v, step = verdict(meds, spread, a.margin)
            ran = "/".join(m["algorithm"] for m in ms if m)
            R.append(f"| {op} | {lo} → {hi} | {s2} | " + " | ".join("–" if s is None else str(s) for s in sizes)
                     + " | " + " | ".join(compare.fmt(x) for x in meds)
                     + f" | {'–' if step is None else f'{step:.2f}'} | {spread:.0%} | {v} | {ran} |")
    if c.notes:
        R += ["", "Notes:", ""] + [f"- {n}" for n in c.notes]
    text = "\n".join(R) + "\n"
    with open(os.path.join(c.out, "cliffs.md"), "w") as f:
        f.write(text)
    print(text)
    c.log.close()
    c.cmdlog.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
