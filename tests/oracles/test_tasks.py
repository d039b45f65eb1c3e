"""Every task's world generator, observation, scoring and controls against the
independent oracle tasks_numpy.py, through `brainlesslab reservoir task`.

For each task: several world seeds under default and non-default options, each
control the task defines, and random effector tapes (the scorer on arbitrary
effectors, including out-of-range ones that fail the trial). Worlds, observations,
effectors, physics, decisions, ties and outcomes must be identical.
usage: test_tasks.py [BRAINLESSLAB] [--quick]   (default: $BL_CLI)"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tasks_numpy as tn  # noqa: E402

args = [a for a in sys.argv[1:] if not a.startswith("--")]
CLI = args[0] if args else os.environ["BL_CLI"]
QUICK = "--quick" in sys.argv
tmp = tempfile.mkdtemp(prefix="bl_tasks_")
failures = []
count = 0

CONTROLS = {
    "delayed_cue": ["oracle", "reference_null", "constant_left", "constant_right", "memoryless", "last"],
    "recall_interference": ["oracle", "reference_null", "constant_right", "memoryless", "last"],
    "delayed_xor": ["oracle", "reference_null", "memoryless", "last"],
    "evidence_accumulation": ["oracle", "reference_null", "first", "last"],
    "context_integration": ["oracle", "reference_null", "context_blind", "irrelevant", "first", "last"],
    "temporal_order": ["oracle", "reference_null", "bag", "last"],
    "reversal_adaptation": ["oracle", "reference_null", "fixed_mapping", "constant_left"],
    "tracking": ["oracle", "reference_null", "constant_left"],
    "pong": ["oracle", "reference_null", "constant_right"],
    "cartpole_plank_easy": ["oracle", "reference_null", "constant_left"],
}
VARIANTS = {
    "delayed_cue": [{}, {"cue_mode": "persistent", "delays": [0, 5]}, {"cue_mode": "hidden"}],
    "recall_interference": [{}, {"distractors": 3, "delay": 40, "distractor_mode": "matched"},
                            {"distractor_mode": "opposite", "cue_mode": "persistent"}, {"distractors": 0, "delay": 4}],
    "delayed_xor": [{}, {"gap": 0, "cue_mode": "persistent"}, {"cue_mode": "hidden"}],
    "evidence_accumulation": [{}, {"pulse_count": 16, "evidence_fraction": 0.5, "pulse_ticks": 2},
                              {"input_mode": "hidden"}],
    "context_integration": [{}, {"congruency": "conflicting", "context_mode": "persistent"},
                            {"congruency": "congruent", "pulse_count": 16, "evidence_fraction": 0.125}],
    "temporal_order": [{}, {"gap": 0}, {"input_mode": "hidden"}],
    "reversal_adaptation": [{}, {"rounds": 48, "reversal_range": [2, 33], "feedback_mode": "hidden"}],
    "tracking": [{}, {"randomize_start": False, "movement_amp": 4.0, "sensor_offsets_deg": [-8, 0, 8]},
                 {"theta0": 1.0, "eye_offset_deg": 10.0}],
    "pong": [{}, {"sensory_gain": 0.5}],
    "cartpole_plank_easy": [{}, {"initial_ranges": [[0.5, 0.5], [-0.5, 0.5], [0.0, 0.0], [-0.1, 0.1]]}],
}
HORIZON = {"tracking": 1500, "pong": 2500, "cartpole_plank_easy": 0}


def check(cond, what):
    global count
    count += 1
    if not cond:
        failures.append(what)
        print("FAIL " + what)
    return cond


def opt_text(k, v):
    if isinstance(v, bool):
        return "%s=%s" % (k, "true" if v else "false")
    if isinstance(v, list):
        return "%s=%s" % (k, json.dumps(v))
    return "%s=%s" % (k, v)


def run_c(task, opts, ws, cs, ctl, horizon=0, warmup=0, tape=None):
    out = os.path.join(tmp, "r%d" % count)
    args = [CLI, "reservoir", "task", "--task", task, "--world-seed", str(ws), "--control-seed", str(cs),
            "--controller", ctl, "--horizon", str(horizon), "--warmup", str(warmup), "--out", out]
    for k, v in opts.items():
        args += ["--option", opt_text(k, v)]
    if tape is not None:
        np.save(out + ".tape.npy", tape)
        args += ["--effectors", out + ".tape.npy"]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr
    d = {n: np.load(os.path.join(out, n + ".npy")) for n in
         ("obs", "effectors", "physical", "stimuli", "starts", "ends", "labels", "decisions", "ties")}
    d.update(json.load(open(os.path.join(out, "result.json"))))
    return d, ""


def compare(task, opts, ws, cs, ctl, horizon=0, warmup=0, tape=None):
    what = "%s %s seed %d/%d %s%s" % (task, json.dumps(opts), ws, cs, ctl, " tape" if tape is not None else "")
    c, err = run_c(task, opts, ws, cs, ctl, horizon, warmup, tape)
    if not check(c is not None, what + ": the CLI ran (%s)" % err.strip()[:200]):
        return None
    p = tn.trial(task, {k: tuple(map(tuple, v)) if k == "initial_ranges" else tuple(v) if isinstance(v, list) else v
                        for k, v in opts.items()}, ws, cs, ctl, horizon, warmup, tape)
    w = p["world"]
    ok = True
    ok &= check(np.array_equal(c["stimuli"], w["stimuli"]), what + ": stimuli")
    ok &= check(list(c["starts"]) == w["starts"] and list(c["ends"]) == w["ends"] and
                list(c["labels"]) == w["labels"], what + ": response windows and labels")
    ok &= check(c["ticks"] == p["ticks"], what + ": ticks %s vs %s" % (c["ticks"], p["ticks"]))
    ok &= check(np.array_equal(c["obs"], p["obs"].reshape(c["obs"].shape)), what + ": observations")
    ok &= check(np.array_equal(c["effectors"], p["eff"].reshape(c["effectors"].shape)), what + ": effectors")
    ok &= check(np.array_equal(c["physical"], p["physical"].reshape(c["physical"].shape)), what + ": physics")
    ok &= check(list(c["decisions"]) == p["decisions"] and list(c["ties"]) == p["ties"], what + ": decisions, ties")
    ok &= check(bool(c["done"]) == bool(p["done"]) and bool(c["finite"]) == bool(p["finite"]), what + ": done, finite")
    if p["done"] or task in tn.CONTINUING:
        ok &= check(c["outcome"] == p["outcome"] or (not p["finite"]), what + ": outcome %r vs %r" %
                    (c["outcome"], p["outcome"]))
    ok &= check(c["scored"] == p["scored"] and c["hits"] == p["hits"] and c["misses"] == p["misses"],
                what + ": scored, hits, misses")
    ok &= check(list(c["meta"]) == list(w["meta"]), what + ": world metadata %s vs %s" % (c["meta"], w["meta"]))
    return c if ok else None


seeds = [1, 7, 12345, 2 ** 40 + 3] if not QUICK else [1, 12345]
outcomes = {}
for task, variants in VARIANTS.items():
    for vi, opts in enumerate(variants):
        for ws in seeds:
            ctls = CONTROLS[task] if vi == 0 else CONTROLS[task][:2]
            for ctl in ctls:
                c = compare(task, opts, ws, ws * 3 + 1, ctl, HORIZON.get(task, 0), 0)
                if c is not None and vi == 0:
                    outcomes.setdefault((task, ctl), []).append(c["outcome"])
        # random effector tapes: the scorer on arbitrary effectors (one bad value fails the trial)
        rng = np.random.default_rng(vi + 17)
        frames = 24 if task == "cartpole_plank_easy" else 1
        h = HORIZON.get(task, 0) or 300
        tape = rng.random((h * frames, 2))
        if task in ("delayed_cue", "delayed_xor", "evidence_accumulation", "context_integration",
                    "temporal_order", "recall_interference"):
            tape[:, :] = np.round(tape * 4) / 4  # quarter steps: ties happen
        compare(task, opts, 99, 5, "oracle", HORIZON.get(task, 0), 0, tape)
        if vi == 0:
            bad = tape.copy()
            bad[len(bad) // 3, 1] = 1.5
            compare(task, opts, 99, 5, "oracle", HORIZON.get(task, 0), 0, bad)
    if task in ("tracking", "pong"):
        compare(task, {}, 3, 4, "oracle", HORIZON.get(task, 0), 200)  # warmup: scoring starts late

# The controls behave as defined, on the task's own worlds: the oracle solves the
# memory tasks; a memoryless or wrong-stream policy does not.
def mean(task, ctl):
    v = outcomes.get((task, ctl), [])
    return sum(v) / len(v) if v else float("nan")


for task in ("delayed_cue", "recall_interference", "delayed_xor", "evidence_accumulation", "context_integration",
             "temporal_order"):
    check(mean(task, "oracle") == 1.0, "%s: the oracle answers every trial (%r)" % (task, outcomes.get((task, "oracle"))))
check(mean("context_integration", "irrelevant") < 1.0 or QUICK, "context_integration: irrelevant misses some trials")
check(mean("reversal_adaptation", "oracle") == 15 / 16, "reversal_adaptation: the oracle loses one round (%r)" %
      outcomes.get(("reversal_adaptation", "oracle")))
check(mean("reversal_adaptation", "fixed_mapping") == 0.0 or mean("reversal_adaptation", "fixed_mapping") == 1.0,
      "reversal_adaptation: fixed_mapping is all right or all wrong after a reversal")

print("%d checks, %d failed" % (count, len(failures)))
sys.exit(1 if failures else 0)
