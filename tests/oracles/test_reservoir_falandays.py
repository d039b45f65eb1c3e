#!/usr/bin/python3
"""Falandays node: `brainlesslab reservoir replay` versus the independent NumPy
oracle (reservoir_numpy.py), frame by frame.

Hand-written bundles check one rule each (the worked case of the spec,
threshold equality, old-state inputs and learning from the previous frame's
spikes, destination/source orientation, the Dale variant, zero rows, freeze
modes, non-finite detection); then trajectories of 300 frames on seeded and
hand-written random bundles (plain, Oosawa drive with a noise tape, rectify,
Dale) must agree to 1e-12 with identical spikes (in practice bit for bit)."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reservoir_numpy as oracle  # noqa: E402
from reservoir_harness import Harness  # noqa: E402

H = Harness("reservoir-falandays")
TINY = {"leak": 0.0, "lrate_wmat": 1.0, "lrate_targ": 0.1, "threshold_mult": 2.0, "targ_min": 1.0}


def run_both(label, bundle, inputs, noise=None, extra=(), fw=0, fp=0):
    c, final = H.replay(label, bundle, inputs, noise, extra)
    o = oracle.replay(oracle.load_bundle(bundle), np.asarray(inputs, dtype=float),
                      None if noise is None else np.asarray(noise, dtype=float), fw, fp)
    return c, o, final


# 1. The spec's worked case: input [2, -3], targets 1, mu 2.
b = H.bundle("worked", "falandays", TINY, {
    "w": np.zeros((2, 2)), "mask": np.ones((2, 2), dtype=np.uint8), "w_in": np.eye(2), "w_out": np.eye(2),
    "targets": np.ones(2)})
c, o, final = run_both("worked", b, [[2, -3]])
H.check(c["spikes"].tolist() == [[1, 0]], "worked case: spikes [1, 0] (equality fires: a = theta = 2)")
H.check(c["acts"].tolist() == [[0.0, -3.0]], "worked case: acts [0, -3] (reset by subtraction)")
H.check(c["errors"].tolist() == [[-1.0, -4.0]], "worked case: errors [-1, -4] (after the subtraction)")
H.check(c["thresholds"].tolist() == [[1.0, 1.0]], "worked case: targets floored at targ_min = 1")
H.check(c["margins"].tolist() == [[0.0, -5.0]], "worked case: margins a - theta = [0, -5]")
H.compare("worked case vs oracle", c, o)

# 2. Learning uses the previous frame's spikes, the destination's links and
#    the error after subtraction; W[i, j] is the link j -> i.
b = H.bundle("learn", "falandays", TINY, {
    "w": [[0.0, 0.5], [0.0, 0.0]], "mask": [[0, 1], [1, 0]], "w_in": np.eye(2), "w_out": np.eye(2),
    "spikes": [0.0, 1.0]})
c, o, final = run_both("learn", b, [[0, 1.5]])
w_final = oracle.load_bundle(final)["w"]
H.check(c["spikes"].tolist() == [[0, 0]] and c["acts"].tolist() == [[0.5, 1.5]],
        "orientation: unit 0 receives W[0,1] = 0.5 from unit 1, which spiked on the previous frame")
H.check(w_final.tolist() == [[0.0, 1.0], [0.0, 0.0]],
        "learning: W[0,1] -= (e/k) eta_w with e = -0.5, k = 1; W[1,0] unchanged (its source was silent)")
H.check(c["thresholds"].tolist() == [[1.0, 1.05]], "targets: max(targ_min, target + eta_t e) = [1, 1.05]")
H.compare("learning/orientation vs oracle", c, o)

# 3. Old-state inputs: two units driving each other see only last frame's spikes.
b = H.bundle("sync", "falandays", dict(TINY, learn_on=False), {
    "w": [[0.0, 3.0], [3.0, 0.0]], "w_in": np.eye(2), "w_out": np.eye(2)})
c, o, final = run_both("sync", b, [[2, 0], [0, 0], [0, 0]])
H.check(c["spikes"].tolist() == [[1, 0], [0, 1], [1, 0]],
        "synchronous update: a spike reaches its target one frame later, never within the frame")
H.compare("synchronous inputs vs oracle", c, o)

# 4. Dale: an inhibitory source's link grows when the error is positive; clip at 0.
b = H.bundle("dale", "falandays", dict(TINY, dale=True, lrate_targ=0.0), {
    "w": [[0.0, 0.1, 0.2], [0.4, 0.0, 0.3], [0.05, 0.05, 0.0]],
    "signs": [-1, 1, 1], "w_in": np.eye(3), "w_out": np.ones((2, 3)), "spikes": [1, 1, 0]})
c, o, final = run_both("dale", b, [[0, 2, 0.5], [3, 0, 2], [0, 0, 0]])
w_final = oracle.load_bundle(final)["w"]
H.check(bool(np.all(w_final >= 0)), "Dale: weights stay >= 0 (clipped)")
H.compare("Dale variant vs oracle", c, o)
H.compare_final("Dale variant", final, o["node"], "falandays")

# 5. Zero rows and an empty effector pool; 6. non-finite input.
b = H.bundle("zero", "falandays", TINY, {
    "w": [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], "w_in": np.eye(3),
    "w_out": [[1, 1, 1], [0, 0, 0]]})
c, o, final = run_both("zero", b, [[2, 2, 0], [0, 0, 0]])
H.check(bool(np.all(c["effectors"][:, 1] == 0)), "an effector with an empty pool emits 0 (no division)")
H.compare("zero rows vs oracle", c, o)
c, o, final = run_both("nonfinite", b, [[1, 0, 0], [np.inf, 0, 0], [1, 1, 1]])
H.check(c["finite"].tolist() == [1, 0, 0], "an infinite input marks the frame non-finite (reported, not raised)")
H.check(np.array_equal(c["acts"][2], c["acts"][1], equal_nan=True),
        "a non-finite slot is not advanced again")
H.compare("non-finite detection vs oracle", c, o)

# 7. Long trajectories (>= 200 frames): seeded bundles and a hand-written one.
rng = np.random.default_rng(20240611)
T = 300


def pulses(T, R, p, amp):
    return (rng.random((T, R)) < p) * amp


cases = [
    ("seeded default", H.construct("s-default", "falandays", 96, 11), pulses(T, 3, 0.3, 1.0), None),
    ("seeded oosawa", H.construct("s-oosawa", "falandays", 96, 12,
                                  ["drive=oosawa", "membrane_noise=0.4", "noise_gain=0.3"]),
     pulses(T, 3, 0.3, 1.0), rng.standard_normal((T, 96))),
    ("seeded rectify", H.construct("s-rectify", "falandays", 80, 13, ["rectify=true", "leak=0.1"]),
     pulses(T, 3, 0.3, 1.5) - 0.5, None),
    ("seeded dale", H.construct("s-dale", "falandays", 90, 14, ["axis=dale", "inhibitory_frac=0.3"]),
     pulses(T, 3, 0.4, 1.5), None),
]
n = 60
w = (rng.random((n, n)) < 0.15) * rng.normal(1.0, 0.8, (n, n))
np.fill_diagonal(w, 0.0)
hand = H.bundle("hand", "falandays", {"leak": 0.2, "lrate_wmat": 0.7, "lrate_targ": 0.02, "threshold_mult": 1.7,
                                      "targ_min": 0.8, "drive": "oosawa", "membrane_noise": 0.2, "noise_gain": 0.1}, {
    "w": w, "mask": w != 0, "w_in": (rng.random((n, 4)) < 0.3) * rng.uniform(0.5, 2.5, (n, 4)),
    "w_out": (rng.random((2, n)) < 0.2) * rng.uniform(0, 1, (2, n)), "acts": rng.uniform(-1, 1, n),
    "targets": rng.uniform(0.8, 1.5, n), "spikes": (rng.random(n) < 0.2).astype(float)})
cases.append(("hand-written oosawa", hand, rng.uniform(-0.5, 1.5, (T, 4)), rng.standard_normal((T, n))))
for label, bundle, inputs, noise in cases:
    c, o, final = run_both(label.replace(" ", "-"), bundle, inputs, noise)
    H.compare(label, c, o, min_spikes=200, frames_min=200)
    H.compare_final(label, final, o["node"], "falandays")
    w0, w1 = oracle.load_bundle(bundle)["w"], oracle.load_bundle(final)["w"]
    H.check(not np.array_equal(w0, w1) and bool(c["finite"].all()),
            "%s: the weights learned and every frame stayed finite" % label)

# 8. Freeze modes on a seeded trajectory.
bundle, inputs = cases[0][1], cases[0][2]
for flag, fw, fp in (("--freeze-weights-at", 100, 0), ("--freeze-plasticity-at", 0, 100)):
    c, o, final = run_both("freeze" + flag, bundle, inputs, None, (flag, "100"), fw, fp)
    H.compare("%s 100" % flag, c, o, min_spikes=200)
    H.compare_final("%s 100" % flag, final, o["node"], "falandays")
    frozen = np.array_equal(c["thresholds"][-1], c["thresholds"][99])
    H.check(frozen == (fp == 100), "%s: targets %s after frame 100" % (flag, "frozen" if fp else "still adapt"))
c_fw, final_fw = H.replay("fw-check", bundle, inputs, None, ("--freeze-weights-at", "1"))
H.check(np.array_equal(oracle.load_bundle(final_fw)["w"], oracle.load_bundle(bundle)["w"]),
        "freeze_weights from frame 1: the final weights are the initial ones")

H.finish()
