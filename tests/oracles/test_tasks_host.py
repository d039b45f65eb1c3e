"""Task worlds under the Python BrainlessLab's "philox-host-v1" seeds: the C worlds
(`brainlesslab reservoir task --world-digest`) against tasks_numpy.world_host, which
draws each world with np.random.Generator(np.random.Philox(seed)) calls (integers,
random, uniform, choice, shuffle, random((horizon + 1, 2)) for pong's serves) in the
Python project's order.

For every task, default and non-default options, several digests from seed_for with
str and int keys: stimulus matrix, response windows, labels, metadata, the physical
start, pong's serve draws, and the whole trial run on that world (observations,
effectors, physics, decisions, outcome) under two controls must be identical.
usage: test_tasks_host.py [BRAINLESSLAB] [--quick]   (default: $BL_CLI)"""
import hashlib
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
tmp = tempfile.mkdtemp(prefix="bl_tasks_host_")
failures = []
count = 0


def seed_digest(root, partition, stream, *keys):
    """philox-host-v1: SHA-256 of the canonical JSON naming the stream."""
    text = json.dumps(["philox-host-v1", root, partition, stream, [[type(k).__name__, k] for k in keys]],
                      ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).digest()


VARIANTS = {
    "delayed_cue": [{}, {"cue_mode": "persistent", "delays": [0, 5]}, {"delays": [16]}, {"cue_mode": "hidden"}],
    "recall_interference": [{}, {"distractors": 3, "delay": 40, "distractor_mode": "matched"},
                            {"distractors": 2, "delay": 64}, {"distractors": 0, "delay": 4}],
    "delayed_xor": [{}, {"gap": 0, "cue_mode": "persistent"}],
    "evidence_accumulation": [{}, {"pulse_count": 16, "evidence_fraction": 0.5, "pulse_ticks": 2},
                              {"pulse_count": 64, "evidence_fraction": 0.125, "input_mode": "hidden"}],
    "context_integration": [{}, {"congruency": "conflicting", "context_mode": "persistent"},
                            {"congruency": "congruent", "pulse_count": 16, "evidence_fraction": 0.125}],
    "temporal_order": [{}, {"gap": 0}],
    "reversal_adaptation": [{}, {"rounds": 48, "reversal_range": [2, 33], "feedback_mode": "hidden"},
                            {"rounds": 48, "reversal_range": [20, 20]}],
    "tracking": [{}, {"randomize_start": False, "movement_amp": 4.0, "sensor_offsets_deg": [-8, 0, 8]},
                 {"theta0": 1.0, "eye_offset_deg": 10.0}],
    "pong": [{}, {"sensory_gain": 0.5}],
    "cartpole_plank_easy": [{}, {"initial_ranges": [[0.5, 0.5], [-0.5, 0.5], [0.0, 0.0], [-0.1, 0.1]]}],
}
CONTROLS = ["oracle", "reference_null"]
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


def run_c(task, opts, digest, cs, ctl, horizon):
    out = os.path.join(tmp, "r%d" % count)
    args = [CLI, "reservoir", "task", "--task", task, "--world-digest", digest.hex(), "--control-seed", str(cs),
            "--controller", ctl, "--horizon", str(horizon), "--warmup", "0", "--out", out]
    for k, v in opts.items():
        args += ["--option", opt_text(k, v)]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr
    d = {n: np.load(os.path.join(out, n + ".npy")) for n in
         ("obs", "effectors", "physical", "stimuli", "starts", "ends", "labels", "decisions", "ties", "draws",
          "start")}
    d.update(json.load(open(os.path.join(out, "result.json"))))
    return d, ""


def compare(task, opts, digest, name, cs, ctl):
    what = "%s %s %s %s" % (task, json.dumps(opts), name, ctl)
    horizon = HORIZON.get(task, 0)
    c, err = run_c(task, opts, digest, cs, ctl, horizon)
    if not check(c is not None, what + ": the CLI ran (%s)" % err.strip()[:200]):
        return
    popts = {k: tuple(map(tuple, v)) if k == "initial_ranges" else tuple(v) if isinstance(v, list) else v
             for k, v in opts.items()}
    p = tn.trial(task, popts, tn.HostSeed(int.from_bytes(digest, "little")), cs, ctl, horizon, 0)
    w = p["world"]
    check(np.array_equal(c["stimuli"], w["stimuli"]), what + ": stimuli")
    check(list(c["starts"]) == w["starts"] and list(c["ends"]) == w["ends"] and list(c["labels"]) == w["labels"],
          what + ": response windows and labels")
    check(list(c["meta"]) == list(w["meta"]) and c["reversal"] == w["reversal"],
          what + ": world metadata %s vs %s" % (c["meta"], w["meta"]))
    check(np.array_equal(c["start"], np.array(w["physical"], dtype=np.float64)),
          what + ": physical start %s vs %s" % (list(c["start"][:5]), w["physical"][:5]))
    draws = np.array(w.get("draws", []), dtype=np.float64).reshape(-1, 2)
    check(np.array_equal(c["draws"].reshape(-1, 2), draws), what + ": pong serve draws")
    check(c["ticks"] == p["ticks"], what + ": ticks %s vs %s" % (c["ticks"], p["ticks"]))
    check(np.array_equal(c["obs"], p["obs"].reshape(c["obs"].shape)), what + ": observations")
    check(np.array_equal(c["effectors"], p["eff"].reshape(c["effectors"].shape)), what + ": effectors")
    check(np.array_equal(c["physical"], p["physical"].reshape(c["physical"].shape)), what + ": physics")
    check(list(c["decisions"]) == p["decisions"] and list(c["ties"]) == p["ties"], what + ": decisions, ties")
    check(c["outcome"] == p["outcome"] or not p["finite"], what + ": outcome %r vs %r" % (c["outcome"], p["outcome"]))


# seed_for with int and str keys, as a plan's worlds are named (trial, block, task, ...).
SEEDS = [("dev/world/0,3", seed_digest(0, "development", "world", 0, 3)),
         ("dev/world/'delayed_cue',7", seed_digest(20260101, "development", "world", "delayed_cue", 7)),
         ("cal/world/-1,'caf\u00e9'", seed_digest(2 ** 64 - 1, "calibration", "world", -1, "caf\u00e9")),
         ("eval/world/()", seed_digest(7, "evaluation", "world"))]
if QUICK:
    SEEDS = SEEDS[:2]
for task, variants in VARIANTS.items():
    for vi, opts in enumerate(variants):
        for si, (name, digest) in enumerate(SEEDS):
            for ctl in (CONTROLS if vi == 0 else CONTROLS[:1]):
                compare(task, opts, digest, name, 11 + si, ctl)

# Over many worlds both answers occur, every delay is drawn, and a world differs from the
# bl-philox-v1 world of any small seed (the schemes are distinct streams).
labels, delays = set(), set()
for k in range(40 if not QUICK else 12):
    d = seed_digest(1, "development", "world", "delayed_cue", k)
    c, err = run_c("delayed_cue", {}, d, 1, "oracle", 0)
    if check(c is not None, "delayed_cue world %d ran (%s)" % (k, err.strip()[:200])):
        labels.add(int(c["labels"][0]))
        delays.add(int(c["meta"][1]))
        p = tn.world_host("delayed_cue", dict(tn.DEFAULTS["delayed_cue"]),
                          np.random.Generator(np.random.Philox(int.from_bytes(d, "little"))), 0)
        check(list(c["meta"][:2]) == p["meta"][:2], "delayed_cue world %d: cue, delay" % k)
check(labels == {1, 2} and delays == {8, 32, 128}, "delayed_cue worlds cover both cues and every delay (%s, %s)" %
      (labels, delays))

print("oracle tasks-host: %d checks, %d failed" % (count, len(failures)))
sys.exit(1 if failures else 0)
