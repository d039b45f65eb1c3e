#!/usr/bin/env bash
# Reservoir work end to end through the CLI: the delayed-cue plan checks and
# runs into a record that verifies; results do not depend on threads; controls
# behave; malformed plans and bad replay inputs fail with one line naming the
# file and key; bench-case agrees bit for bit with the NumPy peer.
set -euo pipefail
: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
: "${BL_SOURCE_DIR:?BL_SOURCE_DIR must name the repository root}"
exec /usr/bin/python3 - "$BL_CLI" "$BL_SOURCE_DIR" <<'PY'
import glob, json, os, shutil, subprocess, sys, tempfile
import numpy as np

CLI, SRC = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SRC, "tests", "oracles"))
import reservoir_numpy  # noqa: E402

tmp = tempfile.mkdtemp(prefix="bl_res_cli_")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return cond


def sh(*args, **kw):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)


r = sh(CLI, "reservoir", "--help")
if r.returncode != 0 or "replay" not in r.stdout:
    print("FAIL `brainlesslab reservoir` is not available: wire bl_cmd_reservoir into main.c (docs/reservoir.md)")
    sys.exit(1)

plan = os.path.join(SRC, "plans", "delayed-cue.toml")
r1, r2 = sh(CLI, "check", plan), sh(CLI, "check", plan)
check(r1.returncode == 0 and "plan hash: " in r1.stdout and '"operation":\t"profile"' in r1.stdout,
      "check accepts plans/delayed-cue.toml (%s)" % r1.stderr.strip()[:200])
check(r1.stdout == r2.stdout, "check is deterministic")

root = os.path.join(tmp, "records")
r = sh(CLI, "run", plan, "--root", root)
check(r.returncode == 0 and "recall_accuracy" in r.stdout, "run exits 0 and prints the summary (%s)" % r.stderr.strip()[:300])
print(r.stdout)
check("episode tasks: chance = 0.5" in r.stdout and "continuing tasks" not in r.stdout,
      "the footer speaks of the episode task it has, only")
# reservoir task --out prints its score (and the trace's directory)
r = sh(CLI, "reservoir", "task", "--task", "delayed_cue", "--world-seed", "3", "--out", os.path.join(tmp, "trace"))
res = json.load(open(os.path.join(tmp, "trace", "result.json"))) if r.returncode == 0 else {}
check(r.returncode == 0 and ("recall_accuracy %.6g" % res.get("outcome", -1)) in r.stdout and "trace" in r.stdout,
      "reservoir task --out prints its score (%s)" % r.stdout.strip()[:200])
# The memory demo: the probe reads SORN's memory at the delay's end, above its permutation control,
# while the native readout stays near chance.
demo = os.path.join(SRC, "plans", "reservoir", "delayed-cue-memory.toml")
r = sh(CLI, "run", demo, "--root", os.path.join(tmp, "demo"), "--quiet")
if check(r.returncode == 0, "the memory demo runs (%s)" % r.stderr.strip()[:200]):
    res = json.load(open(os.path.join(r.stdout.strip().splitlines()[-1], "probe.json")))["results"]
    sorn = [x for x in res if x["target"] == "sorn" and x["point"] == "delay_end"]
    check(len(sorn) == 2 and all(x["accuracy"] >= 0.9 and x["accuracy"] > x["permutation_accuracy"] + 0.2 and
                                 x["native_accuracy"] < 0.75 for x in sorn),
          "memory demo: SORN's probe reads the cue at the delay's end (%s), above its permutation control (%s), "
          "where the native readout does not (%s)" % ([x["accuracy"] for x in sorn],
                                                     [x["permutation_accuracy"] for x in sorn],
                                                     [x["native_accuracy"] for x in sorn]))
recs = sorted(glob.glob(os.path.join(root, "delayed-cue-development-*")))
check(len(recs) == 1, "run created one record")
rec = recs[0]
for f in ("DONE", "manifest.json", "checksums.sha256", "trials.csv", "summary.json", "outcomes.npy"):
    check(os.path.exists(os.path.join(rec, f)), "record has " + f)
check(sh(CLI, "verify", rec).returncode == 0, "verify accepts the record")
check(sh("sha256sum", "-c", "--quiet", "checksums.sha256", cwd=rec).returncode == 0, "sha256sum -c accepts it")
m = json.load(open(os.path.join(rec, "manifest.json")))
check(m.get("status") == "DONE" and m["plan"]["operation"] == "profile" and m["seeds"]["scheme"] == "bl-philox-v1"
      and any(i.get("role") == "plan" for i in m["inputs"]), "manifest: DONE, resolved plan, seed scheme, plan input")
rows = open(os.path.join(rec, "trials.csv")).read().strip().split("\n")
check(len(rows) == 5 and rows[0].startswith("target,block,trial,controller"), "trials.csv: header + 2 blocks x 2 trials")
s = json.load(open(os.path.join(rec, "summary.json")))
t = s["targets"][0]
check(s["key"] == "recall_accuracy" and t["trials"] == 4 and t["completed"] == 4 and "interval" in t
      and 0 <= t["recall_accuracy"] <= 1, "summary.json: recall_accuracy %s, interval %s" % (t["recall_accuracy"], t["interval"]))
out = np.load(os.path.join(rec, "outcomes.npy"))
check(out.shape == (1, 2, 2) and float(out.mean()) == t["recall_accuracy"], "outcomes.npy [targets, blocks, trials]")

# Same results with one thread (and again: a new record, never the old one).
r = sh(CLI, "run", plan, "--root", root, "--threads", "1", "--quiet")
recs2 = sorted(glob.glob(os.path.join(root, "delayed-cue-development-*")))
check(r.returncode == 0 and len(recs2) == 2, "a second run writes a second record")
rec2 = [x for x in recs2 if x != rec][0]
check(open(os.path.join(rec2, "trials.csv")).read() == open(os.path.join(rec, "trials.csv")).read()
      and np.array_equal(np.load(os.path.join(rec2, "outcomes.npy")), out), "--threads 1 gives the same trials")

# Controls and a SORN reservoir in one plan.
ctrl = os.path.join(tmp, "controls.toml")
targets = ""
for c in ("oracle", "constant_left", "constant_right", "reference_null"):
    targets += '[[targets]]\nid = "%s"\ncontroller = "%s"\n[targets.composition.task.options]\ndelays = [4, 16]\n' % (c, c)
targets += ('[[targets]]\nid = "sorn"\n[targets.composition]\ncount = 120\n[targets.composition.node]\nkind = "sorn"\n'
            '[targets.composition.task.options]\ndelays = [4, 16]\ncue_mode = "persistent"\n')
open(ctrl, "w").write('format = "brainlesslab-plan"\nformat_version = 4\nid = "controls"\noperation = "profile"\n'
                      '[evaluation]\nblocks = 4\ntrials_per_block = 5\nroot_seed = 3\n' + targets)
r = sh(CLI, "run", ctrl, "--root", root)
check(r.returncode == 0, "controls plan runs (%s)" % r.stderr.strip()[:300])
crec = sorted(glob.glob(os.path.join(root, "controls-*")))[0]
cs = {x["id"]: x for x in json.load(open(os.path.join(crec, "summary.json")))["targets"]}
check(cs["oracle"]["recall_accuracy"] == 1.0, "oracle control recalls every cue")
check(abs(cs["constant_left"]["recall_accuracy"] + cs["constant_right"]["recall_accuracy"] - 1.0) < 1e-12,
      "constant_left + constant_right accuracies sum to 1 (same worlds for every target)")
check(cs["sorn"]["completed"] == 20 and cs["sorn"]["node"] == "sorn", "SORN target completes its 20 trials")
check(sh(CLI, "verify", crec).returncode == 0, "verify accepts the controls record")

# Malformed plans: exit 1, one line naming file, position and key.
HDR = 'format = "brainlesslab-plan"\nformat_version = 4\nid = "bad"\noperation = "profile"\n'
bad = {
    "unknown-key": (HDR + '[evaluation]\nroot_seed = 1\nblokcs = 2\n[[targets]]\nid = "a"\n', "evaluation.blokcs"),
    "cue-mode": (HDR + '[evaluation]\nroot_seed = 1\n[[targets]]\nid = "a"\n[targets.composition.task.options]\n'
                 'cue_mode = "sometimes"\n', "targets[0].composition.task.options.cue_mode"),
    "node-param": (HDR + '[evaluation]\nroot_seed = 1\n[[targets]]\nid = "a"\n[targets.composition.node]\n'
                   'parameters = { leak = "high" }\n', "targets[0].composition.node.parameters.leak"),
    "rng": (HDR + '[evaluation]\nroot_seed = 1\n[numerics]\nrng = "mersenne"\n[[targets]]\nid = "a"\n',
            "numerics.rng"),
}
for name, (text, key) in bad.items():
    p = os.path.join(tmp, name + ".toml")
    open(p, "w").write(text)
    r = sh(CLI, "check", p)
    line = r.stderr.strip()
    check(r.returncode == 1 and line.count("\n") == 0 and p in line and key in line,
          "malformed plan %s: exit 1, one line naming %s (%s)" % (name, key, line[:160]))

# Replay: usage and input errors.
b = os.path.join(tmp, "b")
check(sh(CLI, "reservoir", "construct", "--node", "falandays", "--units", 20, "--inputs", 3, "--effectors", 2,
         "--seed", 1, "--out", b).returncode == 0, "construct writes a bundle")
np.save(os.path.join(tmp, "x.npy"), np.zeros((10, 3)))
np.save(os.path.join(tmp, "x2.npy"), np.zeros((10, 2)))
r = sh(CLI, "reservoir", "replay", b, "--inputs", os.path.join(tmp, "x.npy"), "--out", os.path.join(tmp, "o"))
check(r.returncode == 0 and os.path.exists(os.path.join(tmp, "o", "final", "node.json")), "replay writes frames and final/")
r = sh(CLI, "reservoir", "replay", b, "--inputs", os.path.join(tmp, "x.npy"), "--out", os.path.join(tmp, "o"))
check(r.returncode == 1 and "exists" in r.stderr, "replay refuses an existing output directory")
r = sh(CLI, "reservoir", "replay", b, "--inputs", os.path.join(tmp, "x2.npy"), "--out", os.path.join(tmp, "o2"))
check(r.returncode == 1 and "x2.npy" in r.stderr and "one column per input" in r.stderr, "replay names a mis-shaped tape")
r = sh(CLI, "reservoir", "replay", os.path.join(tmp, "nope"), "--inputs", os.path.join(tmp, "x.npy"), "--out",
       os.path.join(tmp, "o3"))
check(r.returncode == 1 and "nope" in r.stderr, "replay names a missing bundle")
check(sh(CLI, "reservoir", "replay", b).returncode == 2, "replay without --inputs/--out is a usage error (2)")
check(sh(CLI, "reservoir", "frobnicate").returncode == 2, "an unknown subcommand is a usage error (2)")

# bench-case vs the NumPy peer: the same trajectory hash.
for kind, n, batch in (("falandays", 64, 4), ("sorn", 100, 3)):
    ex = os.path.join(tmp, "bench-" + kind)
    r = sh(CLI, "reservoir", "bench-case", "--node", kind, "--units", n, "--batch", batch, "--frames", 25,
           "--threads", 2, "--export", ex)
    ok = r.returncode == 0
    c = json.loads(r.stdout) if ok else {}
    p = reservoir_numpy.bench(ex) if ok else {}
    check(ok and c["trajectory_sha256"] == p["trajectory_sha256"] and c["spikes"] == p["spikes"] > 0,
          "bench-case %s N=%d B=%d: C and NumPy peer hashes agree (%s)" % (kind, n, batch, c.get("trajectory_sha256", r.stderr)[:16]))

# The closed loop (bench r2): a continuing task drives every slot; the peer runs
# the task oracle (tasks_numpy.py) in the loop. Same hash, same mean outcome.
for kind, task, n, batch, ticks in (("falandays", "tracking", 48, 5, 120), ("falandays", "pong", 40, 3, 450),
                                    ("sorn", "tracking", 60, 4, 80)):
    ex = os.path.join(tmp, "bench-%s-%s" % (kind, task))
    r = sh(CLI, "reservoir", "bench-case", "--node", kind, "--task", task, "--units", n, "--batch", batch,
           "--frames", ticks, "--threads", 2, "--repeat", 1, "--export", ex)
    ok = r.returncode == 0
    c = json.loads(r.stdout) if ok else {}
    p = reservoir_numpy.bench(ex, repeat=1) if ok else {}
    check(ok and c["trajectory_sha256"] == p["trajectory_sha256"] and c["spikes"] == p["spikes"] > 0 and
          c["task"] == p["task"] == task and c["outcome_mean"] == p["outcome_mean"] and c["trials_failed"] == 0 and
          os.path.exists(os.path.join(ex, "task.json")),
          "bench-case --task %s %s N=%d B=%d, %d ticks: C and NumPy+task-oracle hashes agree (%s), mean outcome %s"
          % (task, kind, n, batch, ticks, c.get("trajectory_sha256", r.stderr)[:16], c.get("outcome_mean")))
r = sh(CLI, "reservoir", "bench-case", "--node", "falandays", "--task", "delayed_cue", "--units", 20, "--batch", 2,
       "--frames", 5)
check(r.returncode == 1 and "delayed_cue" in r.stderr and "tracking or pong" in r.stderr,
      "bench-case --task refuses a task that is not tracking or pong, naming it")

shutil.rmtree(tmp, ignore_errors=True)
if failures:
    print("%d check(s) FAILED" % len(failures))
    sys.exit(1)
print("all reservoir CLI checks passed")
PY
