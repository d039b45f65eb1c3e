"""Regression tests for the third reliability audit (issue 26): one or more
checks per finding, each of which failed on 00f25f8. docs/reliability.md maps
finding -> fix -> test. Finding 1's row amplification is also unit-tested
(tests/unit/test_parquet.c, test_row_amplification).

    BL_CLI=build/brainlesslab BL_BUILD_DIR=build BL_SOURCE_DIR=. python3 tests/cli/reliability.py [finding ...]
"""
import glob, hashlib, json, os, shutil, signal, stat, subprocess, sys, tempfile, threading, time, types

CLI = os.path.abspath(os.environ["BL_CLI"])
SRC = os.path.abspath(os.environ["BL_SOURCE_DIR"])
BUILD = os.path.abspath(os.environ["BL_BUILD_DIR"])
TABLE_READ = os.path.join(BUILD, "tests", "table_read")
CELEGANS = os.path.join(SRC, "data/connectomes/celegans-varshney2011")
tmp = tempfile.mkdtemp(prefix="bl_reliab_")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def sh(*args, timeout=60, **kw):
    try:
        return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout,
                              errors="replace", **kw)
    except subprocess.TimeoutExpired:  # a hang: reported as a failed command
        return types.SimpleNamespace(returncode=None, stdout="", stderr="(hang: no answer in %d s)" % timeout)


def one_line(r):
    return r.stderr.strip().count("\n") == 0 and r.stderr.strip() != ""


# ---- 2: Arrow/Feather expansion (dictionary strings, ZSTD bodies) ----
def finding_2():
    js = os.path.join(SRC, "tests", "js")
    if not os.path.isdir(os.path.join(js, "node_modules", "apache-arrow")) or not shutil.which("node"):
        print("skip 2: no tests/js/node_modules (cd tests/js && npm ci)")
        return
    out = os.path.join(tmp, "bombs")
    r = sh("node", os.path.join(js, "expansion_bombs.mjs"), out, timeout=300, cwd=js)
    check(r.returncode == 0, "2: apache-arrow writes the bombs (%s)" % r.stderr.strip()[-200:])
    for name in ("dict-bomb.feather", "zstd-bomb.arrows"):
        p = os.path.join(out, name)
        if not os.path.exists(p):
            print("skip 2: %s not written" % name)
            continue
        t = time.time()
        r = sh(TABLE_READ, p)
        check(r.returncode == 1 and "expansion bomb" in r.stderr and p in r.stderr and one_line(r),
              "2: %s (%d bytes) refused by the expansion bound in %.2f s: %s"
              % (name, os.path.getsize(p), time.time() - t, r.stderr.strip()[len(p):][:160]))
    r = sh(TABLE_READ, os.path.join(out, "fine.feather"))
    check(r.returncode == 0 and "1000 rows" in r.stdout, "2: the same shape at a legitimate size reads")


FINDINGS = {"2": finding_2}

if __name__ == "__main__":
    want = sys.argv[1:] or list(FINDINGS)
    try:
        for k in want:
            FINDINGS[k]()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failure(s):" % len(failures))
        for f in failures:
            print("  " + f)
        sys.exit(1)
    print("all reliability checks passed")
