#!/usr/bin/env bash
# The Python project's example plans (plans/reservoir/, format 4: sweep, ablate,
# the three calibrations, the Falandays and SORN core benchmarks) check and run
# into sealed records that verify (sweep and ablate as written, philox-host-v1,
# and with --rng bl-philox-v1); calibrations run shortened (--blocks 48;
# the full counts are the documented command in docs/reservoir.md). Also: the
# operations' rules, [axes] expansion with the Python project's ids, paired seeds
# and pairing keys, normalised scores from a calibration record, and the
# blind_input / shuffle_input interventions.
set -euo pipefail
: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
: "${BL_SOURCE_DIR:?BL_SOURCE_DIR must name the repository root}"
exec /usr/bin/python3 - "$BL_CLI" "$BL_SOURCE_DIR" <<'PY'
import csv, glob, json, os, shutil, subprocess, sys, tempfile

CLI, SRC = sys.argv[1], sys.argv[2]
PLANS = os.path.join(SRC, "plans", "reservoir")
tmp = tempfile.mkdtemp(prefix="bl_res_plans_")
root = os.path.join(tmp, "records")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return cond


def sh(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True)


def run(plan, *extra):
    r = sh(CLI, "run", plan, "--root", root, "--quiet", *extra)
    rec = r.stdout.strip().split("\n")[-1] if r.returncode == 0 else None
    return r, rec


def trials(rec):
    return list(csv.DictReader(open(os.path.join(rec, "trials.csv"))))


def summary(rec):
    return json.load(open(os.path.join(rec, "summary.json")))


records = {}
for name in ("sweep-delayed-cue", "ablate-delayed-cue", "falandays-core", "sorn-core", "calibration-pong",
             "calibration-tracking", "calibration-cartpole-easy"):
    plan = os.path.join(PLANS, name + ".toml")
    r = sh(CLI, "check", plan)
    check(r.returncode == 0 and "plan hash: " in r.stdout, "check accepts %s as written (%s)" % (name, r.stderr.strip()[:200]))
    extra = []
    if name.startswith("calibration"):
        extra = ["--blocks", "48"]
    if name in ("sweep-delayed-cue", "ablate-delayed-cue"):
        # As written: the Python project's seeds (tests/oracles/test_host_seed.py checks them).
        r, rec = run(plan)
        if check(r.returncode == 0 and rec, "%s runs as written under philox-host-v1 (%s)" % (name, r.stderr.strip()[:300])):
            check(sh(CLI, "verify", rec).returncode == 0, "%s (philox-host-v1): the record verifies" % name)
            m = json.load(open(os.path.join(rec, "manifest.json")))
            check(m["status"] == "DONE" and m["plan"]["numerics"]["rng"] == "philox-host-v1" and
                  "rng_as_written" not in m["plan"]["numerics"], "%s: the manifest says philox-host-v1" % name)
            check(len(trials(rec)[0]["world_seed"]) == 64, "%s: trials.csv shows the 64-hex-digit seeds" % name)
        extra = ["--rng", "bl-philox-v1"]
    r, rec = run(plan, *extra)
    if not check(r.returncode == 0 and rec, "run %s %s (%s)" % (name, " ".join(extra), r.stderr.strip()[:300])):
        continue
    check(sh(CLI, "verify", rec).returncode == 0, "%s: the record verifies" % name)
    m = json.load(open(os.path.join(rec, "manifest.json")))
    check(m["status"] == "DONE" and m["plan"]["operation"] == summary(rec)["operation"], "%s: sealed, operation %s" %
          (name, m["plan"]["operation"]))
    if extra and extra[0] == "--rng":
        check(m["plan"]["numerics"]["rng"] == "bl-philox-v1" and m["plan"]["numerics"]["rng_as_written"] ==
              "philox-host-v1", "%s: the manifest records the seed-scheme substitution" % name)
    if extra and extra[0] == "--blocks":
        check(m["plan"]["evaluation"]["blocks"] == 48 and m["plan"]["evaluation"]["as_written"]["blocks"] == 1024,
              "%s: the manifest records the shortened blocks (48 of 1024)" % name)
    records[name] = rec

# sweep: the written ids are the Python project's; [axes] expands to the same targets
if "sweep-delayed-cue" in records:
    s = summary(records["sweep-delayed-cue"])
    check([t["id"] for t in s["targets"]] == ["84f6b98f6e57c127", "e902202a74b75788", "c5ffb217c5bae322"],
          "sweep: three leak targets")
    axes = os.path.join(tmp, "axes.toml")
    open(axes, "w").write('format = "brainlesslab-plan"\nformat_version = 4\nid = "sweep"\noperation = "sweep"\n'
                          '[evaluation]\nblocks = 2\ntrials_per_block = 2\nroot_seed = 0\n[axes]\nleak = [0.1, 0.25, 0.5]\n'
                          '[[targets]]\nid = "base"\n[targets.composition]\ncount = 16\n')
    r, rec = run(axes)
    if check(r.returncode == 0, "a sweep over [axes] runs (%s)" % r.stderr.strip()[:200]):
        a = summary(rec)
        check([(t["id"], t["label"]) for t in a["targets"]] ==
              [("84f6b98f6e57c127", "{'leak': 0.1}"), ("e902202a74b75788", "{'leak': 0.25}"),
               ("c5ffb217c5bae322", "{'leak': 0.5}")], "[axes]: ids and labels as the Python project names them")
        check([t["recall_accuracy"] for t in a["targets"]] == [t["recall_accuracy"] for t in s["targets"]] and
              open(os.path.join(rec, "outcomes.npy"), "rb").read() ==
              open(os.path.join(records["sweep-delayed-cue"], "outcomes.npy"), "rb").read(),
              "[axes] and the written targets give the same outcomes")

# ablate: paired worlds and wirings across the baseline and its interventions
if "ablate-delayed-cue" in records:
    rows = trials(records["ablate-delayed-cue"])
    by = {}
    for row in rows:
        by.setdefault((row["block"], row["trial"]), set()).add((row["world_seed"], row["construction_seed"]))
    check(all(len(v) == 1 for v in by.values()), "ablate: every target meets the same worlds and wirings")

# benchmark: the four tasks with their own keys
for name in ("falandays-core", "sorn-core"):
    if name in records:
        s = summary(records[name])
        keys = {t["task"]: t["key"] for t in s["targets"]}
        check(keys == {"tracking": "track_score", "pong": "hit_rate", "cartpole_plank_easy": "fitness",
                       "delayed_cue": "recall_accuracy"}, "%s: the four-task battery with its outcome keys" % name)
        dc = [t for t in s["targets"] if t["task"] == "delayed_cue"][0]
        check(dc["normalisation_status"] == "null_adjusted_analytic" and
              abs(dc["normalised"] - (dc["recall_accuracy"] - 0.5) / 0.5) < 1e-15,
              "%s: delayed_cue normalised by the analytic null" % name)

# calibrate: calibration.json, and normalised scores of a pong run against it
if "calibration-pong" in records:
    cal = json.load(open(os.path.join(records["calibration-pong"], "calibration.json")))["calibrations"][0]
    check(cal["task"] == "pong" and cal["trajectories"] == 48 and 0 < cal["null_mean"] < 1 and cal["upper_bound"] == 1,
          "calibration-pong: null mean %.3f over 48 trajectories" % cal["null_mean"])
    pong = os.path.join(tmp, "pong.toml")
    open(pong, "w").write('format = "brainlesslab-plan"\nformat_version = 4\nid = "pong-run"\noperation = "profile"\n'
                          'diagnostic = true\n[evaluation]\nblocks = 2\nhorizon = 7200\nwarmup = 1200\nroot_seed = 5\n'
                          '[[targets]]\nid = "null"\ncontroller = "reference_null"\n'
                          '[targets.composition.task]\nkind = "pong"\n')
    r, rec = run(pong, "--calibration", records["calibration-pong"])
    if check(r.returncode == 0, "a pong run with --calibration (%s)" % r.stderr.strip()[:200]):
        t = summary(rec)["targets"][0]
        want = (t["hit_rate"] - cal["null_mean"]) / (1 - cal["null_mean"])
        check(t["normalisation_status"] == "null_adjusted_empirical" and abs(t["normalised"] - want) < 1e-12,
              "pong: normalised by the calibration's null mean (%.4f)" % t["normalised"])
    r, rec = run(pong)
    check(r.returncode == 0 and summary(rec)["targets"][0]["normalisation_status"] == "calibration_unavailable",
          "pong without a calibration: no normalised score")
    # A calibration that does not match the plan is refused before anything runs, naming the target.
    tracking = pong.replace("pong.toml", "tracking.toml")
    open(tracking, "w").write(open(pong).read().replace('kind = "pong"', 'kind = "tracking"').replace("pong-run",
                                                                                                    "tracking-run"))
    r, rec = run(tracking, "--calibration", records["calibration-pong"])
    check(r.returncode == 1 and 'calibrates no target like target "null" (task tracking' in r.stderr,
          "a tracking run with a pong calibration is refused (%s)" % r.stderr.strip()[:200])
    cue = os.path.join(SRC, "plans", "reservoir", "sweep-delayed-cue.toml")
    r, rec = run(cue, "--blocks", "1", "--trials", "2", "--calibration", records["calibration-pong"])
    check(r.returncode == 1 and "no target a calibration normalises" in r.stderr,
          "an episode-task plan with a calibration is refused (%s)" % r.stderr.strip()[:200])

# operation rules
HDR = 'format = "brainlesslab-plan"\nformat_version = 4\nid = "t"\n'
rules = {
    "calib-bank": ('operation = "calibrate"\n[evaluation]\nroot_seed = 1\n[[targets]]\nid = "a"\n'
                   'controller = "reference_null"\n', "calibration"),
    "calib-ctl": ('operation = "calibrate"\n[evaluation]\nroot_seed = 1\nseed_partition = "calibration"\n'
                  '[[targets]]\nid = "a"\n', "reference_null"),
    "ablate-base": ('operation = "ablate"\n[evaluation]\nroot_seed = 1\n[[targets]]\nid = "a"\n'
                    'interventions = [{tick = 1, verb = "blind_input"}]\n', "baseline"),
    "bench-four": ('operation = "benchmark"\n[evaluation]\nroot_seed = 1\n[[targets]]\nid = "a"\n', "a benchmark needs a tracking target"),
    "axes-profile": ('operation = "profile"\n[evaluation]\nroot_seed = 1\n[axes]\nleak = [0.1]\n[[targets]]\nid = "a"\n',
                     "axes"),
    "min-scored": ('operation = "profile"\n[evaluation]\nroot_seed = 1\nhorizon = 100\n[[targets]]\nid = "a"\n'
                   '[targets.composition.task]\nkind = "pong"\n', "6000 scored ticks"),
    "empty-key": ('operation = "profile"\n[evaluation]\nroot_seed = 1\n[[targets]]\nid = "a"\npairing_key = ""\n',
                  "pairing_key"),
}
for name, (body, needle) in rules.items():
    p = os.path.join(tmp, name + ".toml")
    open(p, "w").write(HDR + body)
    r = sh(CLI, "check", p)
    check(r.returncode == 1 and needle in r.stderr and p in r.stderr, "rule %s: refused naming %s (%s)" %
          (name, needle, r.stderr.strip()[:200]))

# pairing keys: another pairing_key draws other worlds; the same key the same ones
p = os.path.join(tmp, "keys.toml")
open(p, "w").write(HDR + 'operation = "profile"\n[evaluation]\nroot_seed = 1\nblocks = 2\ntrials_per_block = 3\n'
                   '[[targets]]\nid = "a"\ncontroller = "oracle"\n[[targets]]\nid = "b"\ncontroller = "oracle"\n'
                   'pairing_key = "other"\n[[targets]]\nid = "c"\ncontroller = "oracle"\n')
r, rec = run(p)
if check(r.returncode == 0, "a plan with pairing keys runs"):
    rows = trials(rec)
    w = {t: [x["world_seed"] for x in rows if x["target"] == t] for t in "abc"}
    check(w["a"] == w["c"] and all(x != y for x, y in zip(w["a"], w["b"])), "pairing_key: same key, same worlds; "
          "another key, other worlds")

# interventions on the input: blind_input from tick 1 makes every trial of a block (one wiring,
# one delay) see the same zero input, so the evidence is the same; shuffle_input changes it
p = os.path.join(tmp, "iv.toml")
body = ('operation = "ablate"\n[evaluation]\nroot_seed = 3\nblocks = 2\ntrials_per_block = 6\n'
        '[[targets]]\nid = "base"\n[targets.composition]\ncount = 32\n[targets.composition.task.options]\ndelays = [8]\n'
        '[[targets]]\nid = "blind"\ninterventions = [{tick = 1, verb = "blind_input"}]\n[targets.composition]\ncount = 32\n'
        '[targets.composition.task.options]\ndelays = [8]\n'
        '[[targets]]\nid = "shuffle"\ninterventions = [{tick = 1, verb = "shuffle_input"}]\n[targets.composition]\n'
        'count = 32\n[targets.composition.task.options]\ndelays = [8]\n')
open(p, "w").write(HDR + body)
r, rec = run(p)
if check(r.returncode == 0, "blind_input and shuffle_input run (%s)" % r.stderr.strip()[:200]):
    rows = trials(rec)
    ev = lambda t, b: {(x["evidence_left"], x["evidence_right"]) for x in rows if x["target"] == t and x["block"] == b}
    check(all(len(ev("blind", b)) == 1 for b in "01"), "blind_input: one evidence per block, whatever the cue")
    check(any(ev("shuffle", b) != ev("base", b) for b in "01"), "shuffle_input: the node sees other channels")

shutil.rmtree(tmp, ignore_errors=True)
print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
PY
