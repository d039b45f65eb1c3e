#!/usr/bin/env bash
# A float32 plan end to end: `check` accepts it and the resolved plan says
# numerics.dtype = "float32" (a different plan hash from the float64 plan);
# `run` writes a sealed record that verifies and says float32 in the manifest
# (plan and run sections) and summary.json; the results do not depend on the
# thread count; a float32 plan whose parameters do not survive the cast is
# refused by `check`, naming the parameter.
set -euo pipefail
: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
: "${BL_SOURCE_DIR:?BL_SOURCE_DIR must name the repository root}"
exec /usr/bin/python3 - "$BL_CLI" "$BL_SOURCE_DIR" <<'PY'
import glob, json, os, shutil, subprocess, sys, tempfile

CLI, SRC = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="bl_res_f32_")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return cond


def sh(*args, **kw):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)


plan = os.path.join(SRC, "plans", "delayed-cue-float32.toml")
r = sh(CLI, "check", plan)
check(r.returncode == 0 and "plan hash: " in r.stdout and '"dtype":\t"float32"' in r.stdout,
      "check accepts the float32 plan and resolves numerics.dtype = float32 (%s)" % r.stderr.strip()[:200])
h32 = [l for l in r.stdout.splitlines() if l.startswith("plan hash: ")]
text = open(plan).read()
p64 = os.path.join(tmp, "as64.toml")
open(p64, "w").write(text.replace('dtype = "float32"', 'dtype = "float64"'))
r64 = sh(CLI, "check", p64)
h64 = [l for l in r64.stdout.splitlines() if l.startswith("plan hash: ")]
check(r64.returncode == 0 and h32 and h64 and h32 != h64, "the float64 twin has another plan hash")

root = os.path.join(tmp, "records")
r = sh(CLI, "run", plan, "--root", root, "--quiet")
recs = sorted(glob.glob(os.path.join(root, "delayed-cue-float32-*")))
check(r.returncode == 0 and len(recs) == 1, "run writes one record (%s)" % r.stderr.strip()[:300])
rec = recs[0]
for f in ("DONE", "manifest.json", "checksums.sha256", "trials.csv", "summary.json", "outcomes.npy"):
    check(os.path.exists(os.path.join(rec, f)), "record has " + f)
check(sh(CLI, "verify", rec).returncode == 0, "verify accepts the float32 record (sealed)")
m = json.load(open(os.path.join(rec, "manifest.json")))
check(m.get("status") == "DONE" and m["plan"]["numerics"]["dtype"] == "float32",
      "manifest: the resolved plan says numerics.dtype = float32")
check(m["run"]["dtype"] == "float32" and m["run"]["numerics"].startswith("float32"),
      "manifest: the run section says float32 (%s)" % m["run"].get("numerics"))
s = json.load(open(os.path.join(rec, "summary.json")))
check(s.get("dtype") == "float32" and len(s["targets"]) == 2 and all(t["completed"] == 4 for t in s["targets"]),
      "summary.json says float32; both targets completed their 4 trials")

# The float64 twin runs too and says float64; the thread count changes nothing.
r = sh(CLI, "run", p64, "--root", os.path.join(tmp, "r64"), "--quiet")
rec64 = glob.glob(os.path.join(tmp, "r64", "*"))
check(r.returncode == 0 and len(rec64) == 1 and json.load(open(os.path.join(rec64[0], "summary.json")))["dtype"]
      == "float64", "the float64 twin's summary says float64")
r = sh(CLI, "run", plan, "--root", os.path.join(tmp, "r1"), "--threads", "1", "--quiet")
rec1 = glob.glob(os.path.join(tmp, "r1", "*"))
check(r.returncode == 0 and len(rec1) == 1 and
      open(os.path.join(rec1[0], "trials.csv")).read() == open(os.path.join(rec, "trials.csv")).read(),
      "float32 trials.csv is the same with one thread")

# Parameters that do not survive the cast: refused by check, naming them.
bad = os.path.join(tmp, "tiny.toml")
open(bad, "w").write(text.replace('kind = "falandays"\n', 'kind = "falandays"\nparameters = { targ_min = 1e-50 }\n', 1))
r = sh(CLI, "check", bad)
check(r.returncode != 0 and "targ_min" in r.stderr and "float32" in r.stderr and "tiny.toml" in r.stderr,
      "check refuses targ_min = 1e-50 under float32 (%s)" % r.stderr.strip()[:300])
bad = os.path.join(tmp, "f16.toml")
open(bad, "w").write(text.replace('dtype = "float32"', 'dtype = "float16"'))
r = sh(CLI, "check", bad)
check(r.returncode != 0 and "numerics.dtype" in r.stderr, "check refuses dtype = float16 (%s)" % r.stderr.strip()[:200])

shutil.rmtree(tmp, ignore_errors=True)
if failures:
    print("%d check(s) FAILED" % len(failures))
    sys.exit(1)
print("all float32 plan checks passed")
PY
