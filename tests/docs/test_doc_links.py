#!/usr/bin/python3
"""Every relative link in README.md and docs/**/*.md resolves inside the repository.

A link is a Markdown inline link or image, [text](target) or ![alt](target), or a
reference definition, [label]: target. Web links (a scheme such as https:) are not
followed. A relative target must name a file or directory that exists and lies inside
the repository (a fresh clone has nothing beside it); a #fragment must name a heading
of the target file (GitHub's anchor for it) or an explicit {#id} anchor. Links inside
code spans and fenced code blocks are not links and are skipped.

The same files also name repository files in code spans (`tests/cli/test_run_record.sh`)
and tests by their CTest names (`oracle.test_tasks`): such a path must exist (or be the
program or module built from it: the same path plus .c, .py or .sh), and such a test name
must have its file (unit.test_x: tests/unit/test_x.c; cli.: tests/cli/*.sh; oracle.:
tests/oracles/*.py; docs.: tests/docs/*). A document that says which test proves a claim
then names a test that exists.

Run by CTest as docs.test_doc_links; exits 1 listing every broken link or name.
"""

import os
import re
import sys
from pathlib import Path

ROOT = Path(os.environ.get("BL_SOURCE_DIR") or Path(__file__).resolve().parents[2]).resolve()

INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
EXPLICIT = re.compile(r"\{#([A-Za-z0-9_-]+)\}")


def strip_code(text):
    """The text with fenced blocks and code spans blanked (line numbers kept)."""
    out, fence = [], None
    for line in text.split("\n"):
        m = re.match(r"^\s{0,3}(`{3,}|~{3,})", line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append("")
            continue
        if m:
            fence = m.group(1)
            out.append("")
            continue
        out.append(re.sub(r"(`+)(?:(?!\1).)+?\1", lambda c: " " * len(c.group(0)), line))
    return out


def slug(title):
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped,
    spaces to hyphens."""
    t = EXPLICIT.sub("", title)
    t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", t)  # links keep their text
    t = t.replace("`", "").lower()
    t = re.sub(r"[^\w\- ]", "", t)
    return t.strip().replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        found, counts = set(), {}
        fence = None
        for line in path.read_text(encoding="utf-8").split("\n"):
            m = re.match(r"^\s{0,3}(`{3,}|~{3,})", line)
            if fence:
                if m and m.group(1)[0] == fence[0]:
                    fence = None
                continue
            if m:
                fence = m.group(1)
                continue
            found.update(EXPLICIT.findall(line))
            h = HEADING.match(line)
            if h:
                s = slug(h.group(2))
                n = counts.get(s, 0)
                counts[s] = n + 1
                found.add(s if n == 0 else f"{s}-{n}")
        cache[path] = found
    return cache[path]


def check(md):
    bad = []
    lines = strip_code(md.read_text(encoding="utf-8"))
    text = "\n".join(lines)  # a link's text may wrap over lines
    found = [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in INLINE.finditer(text)]
    found += [(k, r.group(1)) for k, line in enumerate(lines, 1) for r in [REFDEF.match(line)] if r]
    for number, target in sorted(found):
        if SCHEME.match(target):
            continue
        where = f"{md.relative_to(ROOT)}:{number}: ({target})"
        path_part, _, fragment = target.partition("#")
        dest = (md.parent / path_part).resolve() if path_part else md
        if dest != ROOT and ROOT not in dest.parents:
            bad.append(f"{where} leaves the repository")
            continue
        if not dest.exists():
            bad.append(f"{where} does not exist")
            continue
        if fragment and dest.is_file() and dest.suffix == ".md" and fragment not in anchors(dest):
            bad.append(f"{where} names no heading or anchor #{fragment} of {dest.relative_to(ROOT)}")
    return bad


PATH_ROOTS = ("docs/", "tests/", "src/", "include/", "tools/", "bench/", "plans/", "scripts/", "data/",
              "examples/", "python/", "cmake/")
TEST_DIRS = {"unit": ("unit", (".c",)), "cli": ("cli", (".sh",)), "oracle": ("oracles", (".py",)),
             "docs": ("docs", (".sh", ".py"))}
CODE_SPAN = re.compile(r"`([^`\s]+)`")
TEST_NAME = re.compile(r"\b(unit|cli|oracle|docs)\.(test_\w+)")


def check_names(md):
    """Repository paths and CTest names in code spans must exist."""
    bad = []
    for number, line in enumerate(md.read_text(encoding="utf-8").split("\n"), 1):
        for token in CODE_SPAN.findall(line):
            path = token.split("#")[0].rstrip(".,;:)")
            if path.startswith(PATH_ROOTS) and not re.search(r"[<>*?{}\[\]$|]|NNNN|\.\.\.", path):
                if "node_modules" in path:  # installed by `npm ci`, not in a clone
                    continue
                if not any((ROOT / (path + ext)).exists() for ext in ("", ".c", ".py", ".sh")):
                    bad.append(f"{md.relative_to(ROOT)}:{number}: `{token}` names no file of the repository")
        for kind, name in TEST_NAME.findall(line):
            folder, exts = TEST_DIRS[kind]
            if not any((ROOT / "tests" / folder / (name + ext)).exists() for ext in exts):
                bad.append(f"{md.relative_to(ROOT)}:{number}: test {kind}.{name} has no file tests/{folder}/{name}.*")
    return bad


def main():
    files = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
    bad, n = [], 0
    for md in files:
        if md.exists():
            n += 1
            bad += check(md) + check_names(md)
    if bad:
        print("FAIL: broken links or names:")
        print("\n".join("  " + b for b in bad))
        return 1
    print(f"ok   every relative link, file path and test name of {n} Markdown files (README.md, docs/) "
          "resolves inside the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main())
