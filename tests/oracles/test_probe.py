"""The diagnostic ridge probe against NumPy: a small probe plan runs through the CLI;
from its record (probe_events.npy, trials.csv) NumPy recomputes the splits (Philox
permutations), the standardisation, the ridge solves for every lambda, the choice on
validation, the permutation null and the constant baseline, and compares them with
probe.json (choices and accuracies exactly, weights to 1e-8).
usage: test_probe.py [BRAINLESSLAB]   (default: $BL_CLI)"""
import csv
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tasks_numpy import stream_uniform  # noqa: E402

args = [a for a in sys.argv[1:] if not a.startswith("--")]
CLI = args[0] if args else os.environ["BL_CLI"]
tmp = tempfile.mkdtemp(prefix="bl_probe_")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def permutation(seed, domain, n):
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = min(int(stream_uniform(seed, i, domain) * (i + 1)), i)
        order[i], order[j] = order[j], order[i]
    return order


def ridge(x, labels, fit, val, grid):
    centre = x[fit].mean(axis=0)
    scale = x[fit].std(axis=0, ddof=0)
    scale[scale == 0] = 1
    s = (x - centre) / scale
    t = np.where(labels[fit] == 1, 1.0, -1.0)
    b = t.mean()
    gram = s[fit].T @ s[fit]
    rhs = s[fit].T @ (t - b)
    best = None
    for lam in sorted(grid):
        w = np.linalg.solve(gram + lam * np.eye(x.shape[1]), rhs)
        pred = np.where(s @ w + b >= 0, 1, 2)
        acc = float(np.mean(pred[val] == labels[val]))
        if best is None or acc > best[1]:
            best = (lam, acc, w, pred, b)
    return best


plan = os.path.join(tmp, "probe.toml")
open(plan, "w").write("""format = "brainlesslab-plan"
format_version = 4
id = "probe"
operation = "profile"
[evaluation]
blocks = 2
trials_per_block = 48
root_seed = 9
[probe]
fit_trials = 20
validation_trials = 12
evaluation_trials = 16
split_seed = 701
permutation_seed = 702
[[targets]]
id = "f"
[targets.composition]
count = 24
[targets.composition.task.options]
delays = [4, 8]
[[targets]]
id = "s"
[targets.composition]
count = 30
[targets.composition.node]
kind = "sorn"
[targets.composition.task]
kind = "delayed_xor"
options = { gap = 4 }
[[targets]]
id = "e"
[targets.composition]
count = 20
[targets.composition.task]
kind = "evidence_accumulation"
options = { pulse_count = 8 }
""")
r = subprocess.run([CLI, "run", plan, "--root", os.path.join(tmp, "rec"), "--quiet"], capture_output=True, text=True)
check(r.returncode == 0, "the probe plan runs (%s)" % r.stderr.strip()[:300])
if r.returncode:
    sys.exit(1)
rec = r.stdout.strip().split("\n")[-1]
check(subprocess.run([CLI, "verify", rec], capture_output=True).returncode == 0, "the record verifies")
events = np.load(os.path.join(rec, "probe_events.npy"))
rows = list(csv.DictReader(open(os.path.join(rec, "trials.csv"))))
probe = json.load(open(os.path.join(rec, "probe.json")))["results"]
targets = ["f", "s", "e"]
units = {"f": 24, "s": 30, "e": 20}
check(events.shape == (3, 2, 48, 3, 30), "probe_events.npy [targets, blocks, trials, points, units]")
order = permutation(701, 1, 48)
fit, val, ev = order[:20], order[20:32], order[32:]
pfit, pval = permutation(702, 2, 20), permutation(702, 3, 12)
grid = (1e-4, 1e-2, 1.0, 100.0)
fitted = 0
for res in probe:
    ti, b, p = targets.index(res["target"]), res["block"], ("cue_end", "delay_end", "response").index(res["point"])
    what = "%s block %d %s" % (res["target"], b, res["point"])
    check(res["fit_trials"] == fit and res["validation_trials"] == val and res["evaluation_trials"] == ev,
          what + ": the split")
    block = [x for x in rows if x["target"] == res["target"] and int(x["block"]) == b]
    labels = np.array([int(x["label"]) for x in sorted(block, key=lambda x: int(x["trial"]))])
    native = np.array([float(x["outcome"]) for x in sorted(block, key=lambda x: int(x["trial"]))])
    x = events[ti, b, :, p, :units[res["target"]]]
    classes = all(len(set(labels[s])) == 2 for s in (fit, val, ev))
    if res["status"] != "fitted":
        check(res["status"] == "a_split_lacks_a_class" and not classes, what + ": skipped only for a missing class")
        continue
    fitted += 1
    lam, vacc, w, pred, b0 = ridge(x, labels, fit, val, grid)
    perm = labels.copy()
    perm[fit] = labels[np.array(fit)[pfit]]
    perm[val] = labels[np.array(val)[pval]]
    nl, _, _, npred, _ = ridge(x, perm, fit, val, grid)
    constant = 1 if np.count_nonzero(labels[fit] == 1) >= len(fit) / 2 else 2
    check(res["permutation_labels"] == perm.tolist(), what + ": permutation labels")
    check(res["lambda"] == lam and res["validation_accuracy"] == vacc, what + ": lambda %g (numpy %g)" %
          (res["lambda"], lam))
    check(res["accuracy"] == float(np.mean(pred[ev] == labels[ev])), what + ": accuracy %g" % res["accuracy"])
    check(res["permutation_lambda"] == nl and res["permutation_accuracy"] == float(np.mean(npred[ev] == labels[ev])),
          what + ": permutation null")
    check(res["constant_prediction"] == constant and res["constant_accuracy"] == float(np.mean(labels[ev] == constant)),
          what + ": constant baseline")
    check(abs(res["native_accuracy"] - float(np.mean(native[ev]))) < 1e-15, what + ": native accuracy")
    check(np.allclose(res["weights"], w, rtol=1e-8, atol=1e-10) and abs(res["intercept"] - b0) < 1e-15,
          what + ": weights (max diff %.3g)" % float(np.max(np.abs(np.array(res["weights"]) - w))))
check(fitted >= 12, "at least 12 of 18 probes fitted (%d)" % fitted)
print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
