#!/usr/bin/env python3
"""tests/docs/check_api.py — docs/API.md says what include/hint.h has, no more and no less.

  1. every function include/hint.h declares is in docs/API.md, above its "Planned" section;
  2. every hint_* name and HINT_* constant that section names exists: in hint.h, or (HINT_*) as
     a variable of the configuration table runtime/envdoc.c or a HINT_<OP> algorithm choice;
  3. nothing listed under "Planned (not in this release)" is in hint.h: a planned call that
     arrives moves up into its section, so users are never told that something is missing or
     that something exists when it does not.

usage: check_api.py SOURCE_ROOT    (TAP on stdout)
"""
import os
import re
import sys

NOT_API = {"hint_info"}  # tools/ programs named in the text, not C identifiers
# existing calls the Planned section names as context ("fails in hint_init with a message")
PLANNED_CONTEXT = {"hint_init"}


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip())
        return 2
    root = sys.argv[1]
    with open(os.path.join(root, "include", "hint.h"), encoding="utf-8") as f:
        header = f.read()
    with open(os.path.join(root, "docs", "API.md"), encoding="utf-8") as f:
        page = f.read()
    with open(os.path.join(root, "runtime", "envdoc.c"), encoding="utf-8") as f:
        envdoc = f.read()

    declared = set(re.findall(r"\b(hint_[a-z0-9_]+)\s*\(", re.sub(r"/\*.*?\*/", "", header, flags=re.S)))
    in_header = set(re.findall(r"\b(?:hint|HINT)_[A-Za-z0-9_]+\b", header))
    in_header |= {"HINT_" + n for n in re.findall(r"XX\((\w+),", header)}  # HINT_STATUS_MAP's codes
    cut = page.find("## Planned")
    if cut < 0:
        print("1..1\nnot ok 1 - docs/API.md has a '## Planned' section")
        return 1
    current, planned = page[:cut], page[cut:]
    ops = set(re.findall(r"^\| ([a-z_]+(?:, [a-z_]+)*) \|", current, re.M))
    op_vars = {"HINT_" + op.upper() for row in ops for op in row.split(", ")}
    op_vars |= {"HINT_I" + v[5:] for v in op_vars} | {"HINT_I"}  # HINT_I<OP>: the nonblocking choice
    env_vars = set(re.findall(r"\"(HINT_[A-Z0-9_<>]+)\"", envdoc))

    results = []
    missing = sorted(declared - set(re.findall(r"\b(hint_[a-z0-9_]+)\b", current)))
    results.append(("every function of include/hint.h is in docs/API.md", missing,
                    "declared in hint.h but not documented above 'Planned'"))
    named = set(re.findall(r"\b(hint_[a-z0-9_]+)\b", current)) | set(re.findall(r"\b(HINT_[A-Z0-9_]+)\b", current))
    unknown = sorted(n for n in named if n not in in_header and n not in NOT_API and n not in env_vars
                     and n not in op_vars and not n.endswith("_"))
    results.append(("every name docs/API.md gives as existing exists", unknown,
                    "named as existing in docs/API.md but not in hint.h, envdoc.c or the algorithm tables"))
    arrived = sorted(n for n in set(re.findall(r"\b(hint_[a-z0-9_]+)\b", planned)) if n in declared and n not in PLANNED_CONTEXT)
    results.append(("nothing listed as planned is in include/hint.h already", arrived,
                    "in hint.h now: move it from 'Planned' into its section"))

    print(f"1..{len(results)}")
    failed = 0
    for i, (what, bad, why) in enumerate(results, 1):
        print(("ok" if not bad else "not ok") + f" {i} - {what}")
        for n in bad:
            print(f"# {n}: {why}")
        failed += bool(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
