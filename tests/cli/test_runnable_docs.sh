#!/usr/bin/env bash
# Every code block of README.md and docs/*.md marked runnable (its info string
# is "sh runnable" or "python runnable") is run as written, and must exit 0.
# Each runs in a fresh directory that holds links to the checkout's plans,
# data, examples, docs, scripts and build tree, so commands read as the docs
# show them (from the repository root) and write nothing into the checkout;
# HOME points into it too. Python blocks run with Debian's python3 and the
# build tree's package (PYTHONPATH=build/python, as the README says).
set -u
: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
# The blocks run Debian's python3 on the build's package: the plain build's
# (a sanitized extension needs its runtime preloaded, which no reader does).
if [ "${BL_SANITIZED:-}" = 1 ]; then echo "skip: the docs are run in the plain build"; exit 77; fi
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$(dirname "$BL_CLI")" && pwd)
py=${BL_PYTHON:-/usr/bin/python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/bl_docs_run.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$py" - "$src" "$build" "$work" "$py" <<'PY'
import os, re, subprocess, sys, time
src, build, work, py = sys.argv[1:5]
docs = [os.path.join(src, "README.md")] + sorted(
    os.path.join(src, "docs", f) for f in os.listdir(os.path.join(src, "docs")) if f.endswith(".md"))
fence = re.compile(r"^```(\w+) runnable\s*$")
blocks = []
for path in docs:
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = fence.match(lines[i])
        if m:
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            blocks.append((os.path.relpath(path, src), i + 1, m.group(1), "\n".join(lines[i + 1:j])))
            i = j
        i += 1
failures = 0
for k, (doc, line, lang, text) in enumerate(blocks):
    d = os.path.join(work, "b%d" % k)
    os.makedirs(os.path.join(d, "home"))
    for name in ("plans", "data", "examples", "docs", "scripts", "python", "include"):
        os.symlink(os.path.join(src, name), os.path.join(d, name))
    os.symlink(build, os.path.join(d, "build"))
    env = dict(os.environ, HOME=os.path.join(d, "home"), PYTHONPATH=os.path.join(build, "python"),
               MPLBACKEND="Agg")
    cmd = ["bash", "-euo", "pipefail", "-c", text] if lang in ("sh", "bash") else [py, "-c", text]
    t0 = time.time()
    try:
        r = subprocess.run(cmd, cwd=d, env=env, capture_output=True, text=True, timeout=600)
        rc, err = r.returncode, r.stderr
    except subprocess.TimeoutExpired:
        rc, err = -1, "timed out after 600 s"
    ok = rc == 0
    failures += not ok
    print("%s %s:%d (%s, %.1f s)%s" % ("ok  " if ok else "FAIL", doc, line, lang, time.time() - t0,
                                      "" if ok else ": exit %d: %s" % (rc, err.strip()[-800:])))
print("%d runnable blocks, %d failed" % (len(blocks), failures))
if not blocks:
    print("FAIL: no block is marked runnable")
    sys.exit(1)
sys.exit(1 if failures else 0)
PY
