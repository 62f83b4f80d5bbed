#!/usr/bin/env python3
"""tests/install/check_man.py PAGE... — each generated man page renders with `man -l` (no
warnings from groff), has NAME, SYNOPSIS or ENVIRONMENT, and SEE ALSO, and carries every long
option its source text lists (so a page that lost its --help text fails). TAP."""
import os
import re
import shutil
import subprocess
import sys

pages = sys.argv[1:]
if not shutil.which("man"):
    print("1..0 # SKIP man is not installed (scripts/setup.sh installs man-db)")
    sys.exit(0)
print("1..%d" % len(pages))
env = dict(os.environ, MANPAGER="cat", PAGER="cat", MANWIDTH="100", LC_ALL="C.UTF-8")
for i, page in enumerate(pages, 1):
    src = "".join(l for l in open(page) if not l.startswith('.\\"'))  # comments do not render
    r = subprocess.run(["man", "--warnings", "-l", page], capture_output=True, text=True, env=env)
    text = re.sub(r".\x08", "", r.stdout)  # overstrike bold/underline, if any
    problems = []
    if r.returncode != 0:
        problems.append("man -l exited %d" % r.returncode)
    if r.stderr.strip():
        problems.append("warnings: " + r.stderr.strip()[:500])
    for head in ("NAME", "SEE ALSO"):
        if head not in text:
            problems.append("no %s section" % head)
    if "SYNOPSIS" not in text and "ENVIRONMENT" not in text:
        problems.append("neither SYNOPSIS nor ENVIRONMENT")
    # every option or variable of the source survives rendering (hyphens are \- in roff)
    words = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+|HINT_[A-Z_]+", src.replace("\\-", "-")))
    lost = sorted(w for w in words if w not in text.replace("\u2010", "-").replace("\u2212", "-"))
    if lost:
        problems.append("lost in rendering: " + " ".join(lost[:10]))
    if len(words) < 3:
        problems.append("only %d options or variables: is the text there?" % len(words))
    name = os.path.basename(page)
    print("%s %d - man -l %s (%d options/variables)" % ("not ok" if problems else "ok", i, name, len(words)))
    for p in problems:
        print("# " + p)
