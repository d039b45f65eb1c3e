#!/usr/bin/python3
"""SORN node: `brainlesslab reservoir replay` versus the independent NumPy
oracle (reservoir_numpy.py), frame by frame.

Hand-written bundles check one rule each (threshold equality, synchronous
old-state inputs and the fast-inhibition variant, plasticity order, pruning
permanence and the pruning-off variant, zero normalisation targets and empty
rows, freeze modes); then trajectories of 300 frames on seeded bundles (the
spec's defaults with N = 200, Lazar 2009 thresholds, Zheng 2013 STDP rate,
fast inhibition, sparse E<->I, strong STDP that prunes) and a hand-written one
must agree to 1e-12 with identical spikes (in practice bit for bit)."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reservoir_numpy as oracle  # noqa: E402
from reservoir_harness import Harness  # noqa: E402

H = Harness("reservoir-sorn")


def run_both(label, bundle, inputs, extra=(), fw=0, fp=0):
    c, final = H.replay(label, bundle, inputs, None, extra)
    o = oracle.replay(oracle.load_bundle(bundle), np.asarray(inputs, dtype=float), None, fw, fp)
    return c, o, final


# 1. Threshold equality and synchronous old populations: every drive equals its
#    threshold exactly; the new inhibition must not reach this frame's E update.
arrays = {"w_ee": np.zeros((2, 2)), "w_ei": np.ones((2, 1)), "w_ie": [[1.0, 0.0]], "w_eu": np.ones((2, 1)),
          "w_out": [[1, 1]], "x": [1.0, 0.0], "y": [0.0], "t_e": [1.0, 1.0], "t_i": [1.0]}
b = H.bundle("equality", "sorn", {"learn_on": False}, arrays)
c, o, final = run_both("equality", b, [[1.0]])
H.check(c["spikes"].tolist() == [[1, 1, 1]], "drive == threshold fires (>=) for E and I; E sees the old y = 0")
H.check(c["margins"].tolist() == [[0.0, 0.0, 0.0]], "margins are exactly 0 at equality")
H.compare("threshold equality vs oracle", c, o)

arrays_fast = dict(arrays, w_ie=[[0.0, 1.0]])
b = H.bundle("slow", "sorn", {"learn_on": False}, arrays_fast)
c, o, final = run_both("slow", b, [[1.0]])
H.check(c["spikes"][0, 2] == 0, "without fast inhibition, y reads the old x (x1 was 0): y = 0")
H.compare("old-x inhibition vs oracle", c, o)
b = H.bundle("fast", "sorn", {"learn_on": False, "fast_inhibition": True}, arrays_fast)
c, o, final = run_both("fast", b, [[1.0]])
H.check(c["spikes"][0, 2] == 1, "with fast inhibition, y reads the new x (x1 = 1): y = 1")
H.compare("fast inhibition vs oracle", c, o)

# 2. Plasticity order and pruning permanence: STDP on existing links with the new
#    x and the old x, pruning at w <= 0, then normalisation (a zero row is skipped).
prune = {"w_ee": [[0.0, 0.0005], [0.2, 0.0]], "mask_ee": [[0, 1], [1, 0]], "c_e": [0.0005, 0.2],
         "w_eu": [[1.0], [0.0]], "w_out": [[1, 1]], "t_e": [2.0, -1.0], "x": [1.0, 0.0]}
b = H.bundle("prune", "sorn", {"eta_stdp": 0.001, "eta_ip": 0.0}, prune)
c, o, final = run_both("prune", b, [[0.0], [3.0], [3.0]])
fb = oracle.load_bundle(final)
H.check(fb["mask_ee"][0, 1] == 0 and fb["w_ee"][0, 1] == 0.0,
        "a link depressed to <= 0 is removed, and stays removed although later frames would potentiate it")
H.check(abs(fb["w_ee"][1, 0] - 0.2) < 1e-15, "the surviving row is normalised back to c_e = 0.2")
H.compare("pruning vs oracle", c, o)
H.compare_final("pruning", final, o["node"], "sorn")
b = H.bundle("noprune", "sorn", {"eta_stdp": 0.001, "eta_ip": 0.0, "pruning": False}, prune)
c, o, final = run_both("noprune", b, [[0.0], [3.0], [3.0]])
fb = oracle.load_bundle(final)
H.check(fb["mask_ee"][0, 1] == 1 and fb["w_ee"][0, 1] > 0, "pruning off: the link survives at 0 and regrows")
H.compare("pruning off vs oracle", c, o)
H.compare_final("pruning off", final, o["node"], "sorn")

b = H.bundle("zero-ce", "sorn", {"eta_stdp": 0.1, "eta_ip": 0.0},
             {"w_ee": [[0.0, 0.2], [0.2, 0.0]], "c_e": [0.0, 0.0], "w_eu": [[1.0], [0.0]], "w_out": [[1, 0]],
              "t_e": [2.0, -1.0], "x": [1.0, 0.0]})
c, o, final = run_both("zero-ce", b, [[0.0]])
fb = oracle.load_bundle(final)
H.check(np.allclose(fb["w_ee"], [[0.0, 0.1], [0.3, 0.0]], atol=1e-15, rtol=0),
        "c_e = 0 skips normalisation (STDP alone: [[0, 0.1], [0.3, 0]])")
H.compare("zero normalisation target vs oracle", c, o)

# 3. Long trajectories (>= 200 frames).
rng = np.random.default_rng(424242)
T = 300


def drive(T, R, p):
    return (rng.random((T, R)) < p).astype(float)


cases = [
    ("seeded default N=200", H.construct("d", "sorn", 200, 21), drive(T, 3, 0.3)),
    ("seeded lazar2009", H.construct("l", "sorn", 150, 22, ["T_E_max=1.0", "T_I_max=0.5"]), drive(T, 3, 0.5)),
    ("seeded zheng2013 fast inhibition", H.construct("z", "sorn", 150, 23, ["eta_stdp=0.004", "fast_inhibition=true"]),
     drive(T, 3, 0.3)),
    ("seeded sparse E-I", H.construct("s", "sorn", 120, 24, ["p_ei=0.3", "p_ie=0.3", "p_ee=0.15"]), drive(T, 3, 0.3)),
    ("seeded strong STDP (prunes)", H.construct("p", "sorn", 120, 25, ["eta_stdp=0.05", "eta_ip=0.01"]),
     drive(T, 3, 0.3)),
]
ne, ni = 50, 12
mask = rng.random((ne, ne)) < 0.2
np.fill_diagonal(mask, False)
w_ee = mask * rng.uniform(0.0, 1.0, (ne, ne))
w_ee /= np.maximum(w_ee.sum(axis=1, keepdims=True), 1e-300)
hand = H.bundle("hand", "sorn", {"eta_stdp": 0.01, "eta_ip": 0.005, "H_ip": 0.15}, {
    "w_ee": w_ee, "mask_ee": mask, "w_ei": rng.uniform(0, 0.2, (ne, ni)), "w_ie": rng.uniform(0, 0.1, (ni, ne)),
    "w_eu": (rng.random((ne, 4)) < 0.2) * rng.uniform(0.2, 1.0, (ne, 4)), "w_out": rng.random((2, ne)) < 0.1,
    "t_e": rng.uniform(0, 0.5, ne), "t_i": rng.uniform(0, 1, ni), "x": rng.random(ne) < 0.2,
    "y": rng.random(ni) < 0.3})
cases.append(("hand-written", hand, rng.uniform(-0.2, 1.2, (T, 4))))
for label, bundle, inputs in cases:
    c, o, final = run_both(label.replace(" ", "-"), bundle, inputs)
    H.compare(label, c, o, min_spikes=200, frames_min=200)
    H.compare_final(label, final, o["node"], "sorn")
    H.check(bool(c["finite"].all()), "%s: every frame finite" % label)
links0 = int(oracle.load_bundle(cases[4][1])["mask_ee"].sum())
_, final = H.replay("prune-count", cases[4][1], cases[4][2])
links1 = int(oracle.load_bundle(final)["mask_ee"].sum())
H.check(links1 < links0, "strong STDP pruned links during the trajectory (%d -> %d)" % (links0, links1))

# 4. Freeze modes.
bundle, inputs = cases[0][1], cases[0][2]
for flag, fw, fp in (("--freeze-weights-at", 100, 0), ("--freeze-plasticity-at", 0, 100)):
    c, o, final = run_both("freeze" + flag, bundle, inputs, (flag, "100"), fw, fp)
    H.compare("%s 100" % flag, c, o, min_spikes=200)
    H.compare_final("%s 100" % flag, final, o["node"], "sorn")
    frozen = np.array_equal(c["thresholds"][-1], c["thresholds"][99])
    H.check(frozen == (fp == 100), "%s: T_E %s after frame 100" % (flag, "frozen" if fp else "still adapts"))

H.finish()
