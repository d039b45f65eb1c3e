#!/usr/bin/python3
"""SORN row-sum options (ee_row_sum, ei_row_sum, ie_row_sum, input_row_sum):
`brainlesslab reservoir construct` versus their definition, recomputed here
from the bl-philox-v1 construction draws, then `reservoir replay` versus the
independent NumPy oracle (reservoir_numpy.py) over 300 frames.

Definition (docs/reservoir.md, "SORN"): each row of a block starts as the
U(0,1) draws on its links, u(i, j, domain), times (row_sum / total), total the
row's ascending sum of those draws (one rounding for the scale, one per
weight); a row sum of 0 leaves the whole block at 0 (its links stay links).
The normalisation target c_e is W_EE's initial ascending row sums, so
ee_row_sum also sets what STDP's rows are rescaled to. The masks do not depend
on the row sums, so they are read from the default construction of the same
seed (there every linked weight is > 0)."""

import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reservoir_numpy as oracle  # noqa: E402
from blconn import philox4x32_10  # noqa: E402
from reservoir_harness import CLI, Harness  # noqa: E402

H = Harness("reservoir-sorn-rowsum")
N, R, E, SEED = 120, 3, 2, 31
DOMAIN = {"w_ee": 19, "w_ei": 20, "w_ie": 21, "w_eu": 22}   # docs/reservoir.md, Random streams
OPTION = {"w_ee": "ee_row_sum", "w_ei": "ei_row_sum", "w_ie": "ie_row_sum", "w_eu": "input_row_sum"}
ARRAYS = ("w_ee", "mask_ee", "c_e", "w_ei", "w_ie", "w_eu", "w_out", "t_e", "t_i", "x", "y")


def draws(rows, cols, domain):
    """u(i, j, domain) on the [rows, cols] grid: counter (i, j, domain, 0), key = the seed."""
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    w = philox4x32_10(i, j, domain, 0, SEED & 0xFFFFFFFF, SEED >> 32)
    bits = ((w[0].astype(np.uint64) << np.uint64(32)) | w[1].astype(np.uint64)) >> np.uint64(11)
    return bits.astype(np.float64) * 2.0 ** -53


def ascending_row_sums(w):
    total = np.zeros(w.shape[0])
    for j in range(w.shape[1]):
        total = total + w[:, j]
    return total


def expected_block(name, mask, target):
    if target == 0.0:
        return np.zeros(mask.shape)
    w = np.where(mask, draws(mask.shape[0], mask.shape[1], DOMAIN[name]), 0.0)
    total = ascending_row_sums(w)
    scale = np.where(total > 0, target / np.where(total > 0, total, 1.0), 1.0)
    return w * scale[:, None]


def load(d):
    return {k: np.load(os.path.join(d, k + ".npy")) for k in ARRAYS if os.path.exists(os.path.join(d, k + ".npy"))}


def same_bits(a, b):
    return a.shape == b.shape and np.array_equal(np.asarray(a, np.float64).view(np.uint64),
                                                 np.asarray(b, np.float64).view(np.uint64))


base_dir = H.construct("default", "sorn", N, SEED, (), R, E)
base = load(base_dir)
masks = {"w_ee": base["mask_ee"] != 0, "w_ei": base["w_ei"] != 0, "w_ie": base["w_ie"] != 0,
         "w_eu": base["w_eu"] != 0}
H.check(all(masks[k].any(axis=1).all() for k in ("w_ee", "w_ei", "w_ie")) and masks["w_eu"].any(),
        "default construction: every row of W_EE, W_EI, W_IE linked; W_EU has links")

# 1. The defaults are the definition with row sum 1 (the construction before the options).
for name in DOMAIN:
    H.check(same_bits(base[name], expected_block(name, masks[name], 1.0)),
            "default %s = u (1 / ascending total) on its links, bit for bit" % name)
H.check(same_bits(base["c_e"], ascending_row_sums(base["w_ee"])), "default c_e = W_EE's ascending row sums")
explicit = load(H.construct("explicit", "sorn", N, SEED, ["%s=1.0" % o for o in OPTION.values()], R, E))
H.check(all(same_bits(base[k], explicit[k]) for k in ARRAYS), "all four row sums written as 1.0: the same bundle")

# 2. One option at a time: its block follows the definition, every other array is the default's.
cases = [("ee 2.5", {"ee_row_sum": 2.5}), ("ei 0.375", {"ei_row_sum": 0.375}), ("ie 3", {"ie_row_sum": 3.0}),
         ("input 4", {"input_row_sum": 4.0}), ("ee 0.1 ei 0.7 ie 0.3 input 1.7",
                                               {"ee_row_sum": 0.1, "ei_row_sum": 0.7, "ie_row_sum": 0.3,
                                                "input_row_sum": 1.7}),
         ("ei 0", {"ei_row_sum": 0.0}), ("input 0", {"input_row_sum": 0.0}), ("ee 0", {"ee_row_sum": 0.0})]
bundles = {}
for label, opts in cases:
    d = H.construct(label.replace(" ", "_"), "sorn", N, SEED, ["%s=%r" % kv for kv in opts.items()], R, E)
    bundles[label] = d
    got = load(d)
    changed = {name for name, o in OPTION.items() if o in opts}
    for name in DOMAIN:
        target = opts.get(OPTION[name], 1.0)
        want = expected_block(name, masks[name], target)
        H.check(same_bits(got[name], want), "%s: %s = definition with row sum %r, bit for bit" % (label, name, target))
        if target > 0:
            linked = masks[name].any(axis=1)  # W_EU: only the units an input channel reaches
            rows = ascending_row_sums(got[name])
            H.check(np.allclose(rows[linked], target, rtol=1e-14, atol=0) and not rows[~linked].any(),
                    "%s: every linked %s row sums to %r (max |err| %.2g), the others are 0"
                    % (label, name, target, float(np.max(np.abs(rows[linked] - target)))))
        else:
            H.check(not got[name].any(), "%s: %s is all zero" % (label, name))
    H.check(np.array_equal(got["mask_ee"], base["mask_ee"]), "%s: the E->E links are the default's" % label)
    H.check(same_bits(got["c_e"], ascending_row_sums(got["w_ee"])), "%s: c_e = the new W_EE's ascending row sums"
            % label)
    untouched = [k for k in ("w_out", "t_e", "t_i", "x", "y") + tuple(DOMAIN) if k not in changed]
    H.check(all(same_bits(got[k], base[k]) for k in untouched), "%s: every other array is the default's (%s)"
            % (label, ", ".join(untouched)))

# 3. Refused values name the parameter.
for bad in ("ee_row_sum=-1", "input_row_sum=-0.5", "ie_row_sum=nan", "ei_row_sum=inf"):
    r = subprocess.run([CLI, "reservoir", "construct", "--node", "sorn", "--units", "20", "--inputs", "1",
                        "--effectors", "1", "--seed", "1", "--param", bad, "--out", H.path("bad")],
                       capture_output=True, text=True)
    H.check(r.returncode != 0 and bad.split("=")[0] in r.stderr, "--param %s refused, naming it (%s)"
            % (bad, r.stderr.strip()[:90]))

# 4. Normalisation keeps each row at its initial sum: ee_row_sum 2.5 with strong STDP.
rng = np.random.default_rng(8080)
T = 300
drive = (rng.random((T, R)) < 0.4).astype(float)
c, final = H.replay("ee-norm", bundles["ee 2.5"], drive, None, ())
f = oracle.load_bundle(final)
rows = ascending_row_sums(np.where(f["mask_ee"], f["w_ee"], 0.0))
live = rows > 0
H.check(live.all() and np.allclose(rows[live], 2.5, rtol=1e-12, atol=0),
        "ee_row_sum 2.5: after %d frames of STDP every live W_EE row is back at 2.5 (max |err| %.2g)"
        % (T, float(np.max(np.abs(rows[live] - 2.5)))))

# 5. Trajectories: C replay vs the NumPy oracle, 300 frames, every option bundle, bit for bit.
for label, d in [("default", base_dir)] + list(bundles.items()):
    for tag, extra in (("", ()),):
        c, final = H.replay("traj-" + label.replace(" ", "_"), d, drive, None, extra)
        o = oracle.replay(oracle.load_bundle(d), drive, None)
        H.compare("%s: %d frames vs oracle" % (label, T), c, o, min_spikes=100 if label != "ee 0" else 0,
                  frames_min=T)
        H.compare_final(label, final, o["node"], "sorn")
        fc = oracle.load_bundle(final)
        H.check(same_bits(np.where(fc["mask_ee"], fc["w_ee"], 0.0), o["node"].weights()[0])
                and same_bits(c["thresholds"], o["thresholds"]) and same_bits(c["margins"], o["margins"]),
                "%s: final weights, thresholds and margins bit-identical to the oracle's" % label)

H.finish()
