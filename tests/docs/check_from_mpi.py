#!/usr/bin/env python3
"""tests/docs/check_from_mpi.py — docs/FROM_MPI.md gives as present only what include/hint.h has.

  1. every hint_* name and HINT_* constant the page names outside a table row marked "*planned*"
     (in its hint cell) exists:
     in include/hint.h, or (HINT_*) as a variable of runtime/envdoc.c;
  2. a name marked *planned* that include/hint.h has now is reported (a TAP note, not a failure:
     the call's author drops the mark when documenting it; the page never overstates).

usage: check_from_mpi.py SOURCE_ROOT    (TAP on stdout)
"""
import os
import re
import sys

NOT_API = {"hint_info"}  # the tool, named in the text


def names(text):
    return {n for n in re.findall(r"\b(?:hint|HINT)_[A-Za-z0-9_]+\b", text) if not n.endswith("_")}


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip())
        return 2
    root = sys.argv[1]
    read = lambda *p: open(os.path.join(root, *p), encoding="utf-8").read()
    header, page, envdoc = read("include", "hint.h"), read("docs", "FROM_MPI.md"), read("runtime", "envdoc.c")
    known = names(re.sub(r"/\*.*?\*/", "", header, flags=re.S)) | set(re.findall(r"\"(HINT_[A-Z0-9_]+)\"", envdoc))
    known |= {"HINT_" + n for n in re.findall(r"XX\((\w+),", header)}
    planned, present = set(), set()
    for line in page.splitlines():
        cells = line.split("|")
        if line.startswith("|") and len(cells) >= 4 and "*planned*" in cells[2]:
            planned |= names("|".join(cells[2:]))  # the notes of a planned row are planned too
            present |= names(cells[1])
        else:
            present |= names(line)
    missing = sorted(present - known - NOT_API)
    print("1..1")
    if missing:
        print("not ok 1 - every name docs/FROM_MPI.md gives as present is in include/hint.h")
        for n in missing:
            print(f"# {n}: not in include/hint.h: mark its cell *planned* or drop it")
        return 1
    print("ok 1 - every name docs/FROM_MPI.md gives as present is in include/hint.h "
          f"({len(present)} names, {len(planned)} planned)")
    for n in sorted(planned & known):
        print(f"# {n} is in include/hint.h now: drop its *planned* mark in docs/FROM_MPI.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
