#!/usr/bin/env python3
"""tests/docs/check_links.py — every path the documentation names resolves inside a clone.

For README.md, docs/*.md and every other .md in the source tree (build directories excluded):
  1. every markdown link and image target ([text](target), [label]: target) that is not a URL
     exists, relative to the page (an #anchor is ignored);
  2. every repository path in inline code (`collectives/typed.c`, `docs/HEAP.md`, `tests/ranks`)
     and every .md page or repository path named in the prose exists from the source root, or is
     a program the build makes in that folder (its meson.build names it: `bench/hint-bench`);
  3. no text refers to a place outside the clone (../shared, /work/...): a user who clones the
     repository has neither, so a contract or a paper is cited by its in-repo page or its title.

A path with a placeholder (`collectives/<op>_<name>.c`, `plots/OP-pP.png`, `DIR/rank.N`) is a
pattern, not a file, and is skipped; so are paths under build*/ (what the build makes).

usage: check_links.py SOURCE_ROOT [FILE.md ...]    (TAP on stdout; files default to the tree's)
       check_links.py --self-test                   (the checker finds each kind of fault)
"""
import os
import re
import sys

OUTSIDE = re.compile(r"\.\./shared|/work/|\.\./\.\./")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^[ ]{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.M)
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
PLACEHOLDER = re.compile(r"[<>*{}\[\]$]|\b[A-Z]{1,4}\b(?![.])|\.\.\.|…")
URL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def tracked_markdown(root):
    out = []
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = sorted(x for x in dirs if not (rel == "." and (x.startswith("build") or x == "subprojects"))
                         and not x.startswith("."))
        out += [os.path.join(rel, f) if rel != "." else f for f in sorted(files) if f.endswith(".md")]
    return out


def top_level(root):
    """The folders and files a path in the docs may start with: the tree's own, not build output."""
    return {e for e in os.listdir(root) if not e.startswith(".") and not e.startswith("build")}


def built_by(root, path):
    """True when path (e.g. bench/hint-bench) is a program its folder's meson.build makes."""
    folder, name = os.path.split(path.rstrip("/"))
    mb = os.path.join(root, folder, "meson.build")
    if not folder or not os.path.isfile(mb):
        return False
    with open(mb, encoding="utf-8") as f:
        text = re.sub(r"#.*", "", f.read())  # comments ("Debian's") would pair the quotes wrongly
    quoted = set(re.findall(r"'([^']*)'", text))
    if name in quoted:
        return True
    # a name built by concatenation: executable('hint-bench-' + peer[0]) over ['openmpi', ...]
    return any(re.search(r"'" + re.escape(head) + r"'\s*\+", text) and name[len(head):] in quoted
               for head in quoted if head and name.startswith(head))


def candidates(text, tops, pages):
    """Repository paths named in text: tokens whose first component is a top-level entry, and
    (when pages) bare page names such as HEAP.md."""
    for tok in re.split(r"[\s,;()\"'=]+", text):
        tok = tok.strip(".:*_[]")  # sentence punctuation and emphasis; "./x" loses its dot
        if "/" not in tok and not (pages and tok.endswith(".md")):
            continue
        if tok.startswith("/") or tok.startswith("-"):
            continue
        first = tok.split("/")[0]
        if "/" in tok and first not in tops:
            continue
        if tok.endswith(".md") and "/" not in tok and not re.fullmatch(r"[A-Za-z0-9_-]+\.md", tok):
            continue
        if PLACEHOLDER.search(tok):
            continue
        yield tok


def check_file(root, rel, tops):
    problems = []
    path = os.path.join(root, rel)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    here = os.path.dirname(rel)

    def line_of(pos):
        return text.count("\n", 0, pos) + 1

    lines = text.splitlines()
    for m in OUTSIDE.finditer(text):
        n = line_of(m.start())
        problems.append(f"{rel}:{n}: refers outside the repository ({m.group(0)}): {lines[n - 1].strip()[:100]}")

    def blank(m):  # same length and line breaks, so offsets still give line numbers
        return re.sub(r"[^\n]", " ", m.group(0))

    # Fenced code blocks are commands and output: only the rule above applies to them.
    prose = FENCE.sub(blank, text)

    for regex in (LINK, REF_DEF):
        for m in regex.finditer(prose):
            target = m.group(1)
            if URL.match(target) or target.startswith("#"):
                continue
            target = target.split("#")[0]
            resolved = os.path.normpath(os.path.join(root, here, target))
            if not resolved.startswith(os.path.normpath(root) + os.sep) and resolved != os.path.normpath(root):
                problems.append(f"{rel}:{line_of(m.start())}: link leaves the repository: {target}")
            elif not os.path.exists(resolved):
                problems.append(f"{rel}:{line_of(m.start())}: link target does not exist: {target}")

    def check_path(tok, pos, where):
        tok = tok.rstrip("/") or tok
        if tok.startswith("build"):
            return
        # a bare page name (HEAP.md) may sit beside the page, at the root or in docs/
        bases = [root] if "/" in tok else [os.path.join(root, here), root, os.path.join(root, "docs")]
        if any(os.path.exists(os.path.join(b, tok)) for b in bases) or built_by(root, tok):
            return
        problems.append(f"{rel}:{line_of(pos)}: {where} names a path that is not in the repository: {tok}")

    for m in CODE_SPAN.finditer(prose):
        for tok in candidates(m.group(2), tops, pages=False):  # `compare.md` may be an output name
            check_path(tok, m.start(), "code span")

    # Prose outside code spans and link targets: .md pages and repository paths.
    bare = CODE_SPAN.sub(blank, prose)
    bare = LINK.sub(lambda m: m.group(0)[: m.group(0).index("](") + 1].ljust(len(m.group(0))), bare)
    bare = REF_DEF.sub(blank, bare)
    for m in re.finditer(r"\S+", bare):
        for tok in candidates(m.group(0), tops, pages=True):
            check_path(tok, m.start(), "text")
    return problems


def self_test():
    """Each fault in a throw-away tree is reported, and a page without faults passes."""
    import tempfile
    faults = {
        "link": "see [the heap](HEAP2.md)",
        "outside": "its contract is `../shared/API.md`",
        "span": "the tool is `tools/nosuch.c`",
        "page": "docs/NOSUCH.md says how",
        "image": "![plot](img/none.png)",
        "refdef": "[x]: ../nowhere.md",
    }
    clean = ("[heap](HEAP.md), [readme](../README.md#tests), `docs/HEAP.md`, `tools/`, HEAP.md, "
             "`tools/hint-tool`, `tools/<name>.c`, `build/tools/x`, https://example.org/a.md\n"
             "```sh\nbuild/nosuch/prog --out nosuch.md\n```\n")
    cases = 0
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        os.makedirs(os.path.join(root, "tools"))
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write("# r\n")
        with open(os.path.join(root, "tools", "meson.build"), "w") as f:
            f.write("# a tool's build\nexecutable('hint-tool', 'tool.c')\n")
        with open(os.path.join(root, "docs", "HEAP.md"), "w") as f:
            f.write(clean)
        for name, body in faults.items():
            with open(os.path.join(root, "docs", name.upper() + ".md"), "w") as f:
                f.write("# page\n\n" + body + "\n")
        tops = top_level(root)
        print(f"1..{len(faults) + 1}")
        for name in faults:
            cases += 1
            got = check_file(root, os.path.join("docs", name.upper() + ".md"), tops)
            print(("ok" if len(got) == 1 else "not ok") + f" {cases} - a '{name}' fault is reported")
            for p in got:
                print(f"# {p}")
            if len(got) != 1:
                return 1
        got = check_file(root, os.path.join("docs", "HEAP.md"), tops)
        print(("ok" if not got else "not ok") + f" {cases + 1} - a page without faults passes")
        for p in got:
            print(f"# {p}")
        return 1 if got else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) < 2:
        print(__doc__.strip())
        return 2
    root = os.path.abspath(sys.argv[1])
    files = sys.argv[2:] or tracked_markdown(root)
    tops = top_level(root)
    print(f"1..{len(files)}")
    failed = 0
    for i, rel in enumerate(files, 1):
        rel = os.path.relpath(os.path.join(root, rel), root)
        problems = check_file(root, rel, tops)
        if problems:
            failed += 1
            print(f"not ok {i} - {rel}")
            for p in problems:
                print(f"# {p}")
        else:
            print(f"ok {i} - {rel}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
