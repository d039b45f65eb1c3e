#!/usr/bin/python3
"""Float32 numerics of both nodes: `brainlesslab reservoir replay --dtype float32`
versus the independent NumPy float32 oracle (reservoir_numpy32.py), bit for bit,
and the tolerance contract against float64 (docs/reservoir.md, "Numerics").

1. Qualification: hand-made bundles (values chosen so that float rounding
   matters) and constructed networks of both nodes and every variant (Oosawa
   with a noise tape, rectify, Dale, SORN fast inhibition, no pruning, freeze
   modes), a few hundred frames each: every per-frame array (spikes, margins,
   thresholds, acts, errors, effectors, finite) and the final weights must be
   identical to the oracle's, bit for bit (+0 and -0 included).
2. Casting: a value that overflows float32 is refused, naming the array and
   the index, as the oracle refuses it; float32 bundles say so in node.json.
3. The tolerance contract: float32 against float64 on the reference networks
   (constructed, default parameters, N = 200, seeds 1-3, 1000 frames of a
   fixed pulse tape). The measured figures are printed; the contract's bounds
   (docs/reservoir.md) must hold. They describe float32; they never make its
   results float64 evidence."""

import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reservoir_numpy32 as o32  # noqa: E402
from reservoir_harness import CLI, Harness  # noqa: E402

H = Harness("reservoir-float32")
F32 = ["--dtype", "float32"]
KEYS = ("spikes", "margins", "thresholds", "acts", "errors", "effectors", "finite")


def bits(a):
    return np.ascontiguousarray(np.asarray(a, dtype=np.float64)).view(np.uint64)


def compare(label, c, o, min_spikes=0):
    """Every array identical, bit for bit."""
    notes = []
    for k in KEYS:
        if k not in o:
            continue
        if k not in c:
            notes.append("CLI wrote no %s" % k)
            continue
        a, b = c[k], o[k]
        if a.shape != b.shape:
            notes.append("%s shape %s vs %s" % (k, a.shape, b.shape))
        elif not np.array_equal(bits(a), bits(b)):
            at = tuple(int(x) for x in np.argwhere(bits(a) != bits(b))[0])
            notes.append("%s differs first at %s: %r vs %r" % (k, at, float(a[at]), float(b[at])))
    spikes = int(c["spikes"].sum())
    if spikes < min_spikes:
        notes.append("only %d spikes (need >= %d to prove anything)" % (spikes, min_spikes))
    return H.check(not notes, "%s: %d frames, %d units, %d spikes: %s" % (
        label, c["spikes"].shape[0], c["spikes"].shape[1], spikes,
        "bit-identical to the float32 oracle" if not notes else "; ".join(notes)))


def final_weights(final_dir, kind):
    name = "w" if kind == "falandays" else "w_ee"
    return np.load(os.path.join(final_dir, name + ".npy"))


def run(label, bundle, inputs, noise=None, fw=0, fp=0, min_spikes=0):
    extra = list(F32)
    if fw:
        extra += ["--freeze-weights-at", str(fw)]
    if fp:
        extra += ["--freeze-plasticity-at", str(fp)]
    c, final = H.replay(label, bundle, inputs, noise, extra)
    o = o32.replay(bundle, np.asarray(inputs, dtype=np.float64),
                   None if noise is None else np.asarray(noise, dtype=np.float64), fw, fp)
    kind = json.load(open(os.path.join(bundle, "node.json")))["kind"]
    ok = compare(label, c, o, min_spikes)
    w_c = final_weights(final, kind)
    H.check(np.array_equal(bits(w_c), bits(o["weights"])),
            "%s: final weights bit-identical (%d nonzero)" % (label, int(np.count_nonzero(w_c))))
    return c, o, final, ok


rng = np.random.default_rng(32032)

# ---- 1a. hand-made Falandays bundles --------------------------------------
TINY = {"leak": 0.1, "lrate_wmat": 0.7, "lrate_targ": 0.1, "threshold_mult": 1.9, "targ_min": 1.0}
b = H.bundle("worked", "falandays", TINY, {
    "w": [[0.0, 0.3], [0.7, 0.0]], "mask": np.ones((2, 2), dtype=np.uint8) - np.eye(2, dtype=np.uint8),
    "w_in": [[1.1, 0.0], [0.0, 0.9]], "w_out": np.eye(2), "acts": [0.1, 0.2], "spikes": [1.0, 0.0]})
c, o, final, _ = run("worked", b, [[2.1, -3.3], [0.3, 2.2], [1.7, 0.0], [0.0, 0.0]])
c64, _ = H.replay("worked64", b, [[2.1, -3.3], [0.3, 2.2], [1.7, 0.0], [0.0, 0.0]])
H.check(not np.array_equal(bits(c["acts"]), bits(c64["acts"])),
        "worked case: float32 acts differ from float64's (the run really computed in float)")
H.check(json.load(open(os.path.join(final, "node.json"))).get("dtype") == "float32",
        "the final bundle of a float32 replay says \"dtype\": \"float32\" in node.json")
r = subprocess.run([CLI, "reservoir", "replay", final, "--inputs", H.path("worked-inputs.npy"), "--out",
                    H.path("worked-again")], capture_output=True, text=True)
H.check(r.returncode == 0 and json.load(open(H.path("worked-again", "replay.json")))["dtype"] == "float32",
        "a float32 bundle replays as float32 without --dtype (%s)" % r.stderr.strip()[:200])

T = 300
n, R = 40, 4
variants = [
    ("fal-plain", {}, False),
    ("fal-oosawa", {"drive": "oosawa", "membrane_noise": 0.3, "noise_gain": 0.2}, True),
    ("fal-rectify", {"rectify": True, "leak": 0.15}, False),
    ("fal-dale", {"axis": "dale"}, False),
]
for label, extra_params, noisy in variants:
    dale = extra_params.get("axis") == "dale"
    w = (rng.random((n, n)) < 0.2) * (rng.uniform(0.0, 1.2, (n, n)) if dale else rng.normal(0.6, 0.7, (n, n)))
    np.fill_diagonal(w, 0.0)
    params = dict(TINY, lrate_wmat=0.3, lrate_targ=0.02, threshold_mult=1.7, targ_min=0.8, **extra_params)
    arrays = {"w": w, "mask": w != 0, "w_in": (rng.random((n, R)) < 0.4) * rng.uniform(0.3, 2.0, (n, R)),
              "w_out": (rng.random((2, n)) < 0.3) * rng.uniform(0, 1, (2, n)), "acts": rng.uniform(-0.5, 1, n),
              "targets": rng.uniform(0.8, 1.4, n), "spikes": (rng.random(n) < 0.2).astype(float)}
    if dale:
        arrays["signs"] = np.where(rng.random(n) < 0.3, -1.0, 1.0)
    bundle = H.bundle(label, "falandays", params, arrays)
    inputs = rng.uniform(-0.3, 1.3, (T, R)) * (rng.random((T, R)) < 0.5)
    run(label, bundle, inputs, rng.standard_normal((T, n)) if noisy else None, min_spikes=300)
run("fal-freeze-weights", H.path("fal-plain"), rng.uniform(0, 1.2, (T, R)), fw=120, min_spikes=300)
run("fal-freeze-plasticity", H.path("fal-plain"), rng.uniform(0, 1.2, (T, R)), fp=120, min_spikes=300)

# ---- 1b. hand-made SORN bundles ----------------------------------------------
ne, ni = 30, 6
for label, extra_params in (("sorn-plain", {}), ("sorn-fast", {"fast_inhibition": True}),
                            ("sorn-noprune", {"pruning": False, "eta_stdp": 0.05})):
    w_ee = (rng.random((ne, ne)) < 0.25) * rng.uniform(0, 1, (ne, ne))
    np.fill_diagonal(w_ee, 0.0)
    w_ee = w_ee / np.maximum(w_ee.sum(axis=1, keepdims=True), 1e-300)
    params = dict({"eta_stdp": 0.01, "eta_ip": 0.003, "H_ip": 0.12}, **extra_params)
    bundle = H.bundle(label, "sorn", params, {
        "w_ee": w_ee, "w_ei": rng.uniform(0, 0.3, (ne, ni)), "w_ie": rng.uniform(0, 0.2, (ni, ne)),
        "w_eu": (rng.random((ne, R)) < 0.3) * rng.uniform(0.2, 1.0, (ne, R)),
        "w_out": (rng.random((2, ne)) < 0.3).astype(float), "t_e": rng.uniform(0, 0.5, ne),
        "t_i": rng.uniform(0, 0.8, ni), "x": (rng.random(ne) < 0.2).astype(float)})
    run(label, bundle, rng.uniform(0, 1.1, (T, R)) * (rng.random((T, R)) < 0.4), min_spikes=300)
run("sorn-freeze-weights", H.path("sorn-plain"), (rng.random((T, R)) < 0.4) * 1.0, fw=100, min_spikes=300)

# ---- 1c. constructed networks ------------------------------------------------
constructed = [
    ("c-fal-default", "falandays", 200, 1, []),
    ("c-fal-pong-mixed", "falandays", 120, 2, ["weight_init_mode=pong_mixed"]),
    ("c-fal-dale-oosawa", "falandays", 150, 3, ["axis=dale", "drive=oosawa", "membrane_noise=0.3",
                                                 "noise_gain=0.2"]),
    ("c-sorn-default", "sorn", 200, 1, []),
    ("c-sorn-zheng", "sorn", 160, 2, ["eta_stdp=0.004", "fast_inhibition=true"]),
]
for label, kind, units, seed, params in constructed:
    bundle = H.construct(label, kind, units, seed, params)
    inputs = (rng.random((T, 3)) < 0.3) * 1.0
    noise = rng.standard_normal((T, units)) if "drive=oosawa" in params else None
    run(label, bundle, inputs, noise, min_spikes=300)

# ---- 2. casting ----------------------------------------------------------------
b = H.bundle("overflow", "falandays", TINY, {
    "w": [[0.0, 1e39], [0.5, 0.0]], "w_in": np.eye(2), "w_out": np.eye(2)})
np.save(H.path("overflow-inputs.npy"), np.zeros((3, 2)))
r = subprocess.run([CLI, "reservoir", "replay", b, "--inputs", H.path("overflow-inputs.npy"), "--out",
                    H.path("overflow-out")] + F32, capture_output=True, text=True)
H.check(r.returncode == 1 and "w[0, 1]" in r.stderr and "float" in r.stderr and r.stderr.count("\n") == 1,
        "a weight that overflows float32 is refused in one line naming w[0, 1] (%s)" % r.stderr.strip()[:200])
try:
    o32.load(b)
    refused = False
except o32.CastError:
    refused = True
H.check(refused, "the oracle refuses the same cast")
r = subprocess.run([CLI, "reservoir", "replay", b, "--inputs", H.path("overflow-inputs.npy"), "--out",
                    H.path("overflow-out64")], capture_output=True, text=True)
H.check(r.returncode == 0, "the same bundle runs in float64 (1e39 is a double)")
b = H.bundle("tiny-targ", "falandays", dict(TINY, targ_min=1e-50), {
    "w": np.zeros((2, 2)), "w_in": np.eye(2), "w_out": np.eye(2)})
r = subprocess.run([CLI, "reservoir", "replay", b, "--inputs", H.path("overflow-inputs.npy"), "--out",
                    H.path("tiny-out")] + F32, capture_output=True, text=True)
H.check(r.returncode == 1 and "targ_min" in r.stderr, "targ_min that is 0 as a float is refused (%s)"
        % r.stderr.strip()[:200])

# ---- 3. the tolerance contract against float64 --------------------------------
# The reference networks and bounds of docs/reservoir.md ("float32 against
# float64"); the figures measured here are printed beside the bounds. Both runs
# are deterministic IEEE arithmetic, so the figures are the same on every
# machine that builds without contraction; the bounds leave room for none of
# that to matter, and catch a float32 path that drifted from the equations.
TC = 1000
tape = (np.random.default_rng(7).random((TC, 3)) < 0.3) * 1.0
REFERENCE = [("falandays", [], "falandays"),
             ("falandays", ["drive=oosawa", "membrane_noise=0.1", "noise_gain=0.1"], "falandays-oosawa"),
             ("sorn", [], "sorn")]
CONTRACT = {"falandays": {"agreement": 0.99, "identical": 500, "rel": 1e-5},
            "falandays-oosawa": {"agreement": 0.99, "identical": 500, "rel": 1e-5},
            "sorn": {"agreement": 0.95, "identical": 100, "rel": 1e-4}}
for kind, params, name in REFERENCE:
    for seed in (1, 2, 3):
        label = "tc-%s-%d" % (name, seed)
        bundle = H.construct(label, kind, 200, seed, params)
        noise = np.random.default_rng(seed).standard_normal((TC, 200)) if params else None
        c32, _ = H.replay(label + "-32", bundle, tape, noise, F32)
        c64, _ = H.replay(label + "-64", bundle, tape, noise)
        same = c32["spikes"] == c64["spikes"]
        agreement = float(same.mean())
        differ = np.flatnonzero(~same.all(axis=1))
        first = int(differ[0]) if differ.size else TC  # frames with identical spikes before the first difference
        rel = 0.0  # relative error of the continuous state while the spikes agree
        for key in ("acts", "thresholds"):
            if key in c32 and first > 0:
                a32, a64 = c32[key][:first], c64[key][:first]
                rel = max(rel, float(np.max(np.abs(a32 - a64)) / max(float(np.max(np.abs(a64))), 1e-300)))
        bound = CONTRACT[name]
        H.check(agreement >= bound["agreement"] and first >= bound["identical"] and rel <= bound["rel"] and
                bool(c32["finite"].all()) and bool(c64["finite"].all()),
                "%s: spike agreement %.4f over %d frames x 200 units, identical spikes for the first %d frames, "
                "relative state error %.2e before any difference (contract: >= %.2f, >= %d, <= %.0e)" % (
                    label, agreement, TC, first, rel, bound["agreement"], bound["identical"], bound["rel"]))

H.finish()
