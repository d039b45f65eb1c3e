#!/usr/bin/env python3
"""Oracle: noise (xi) in a connectome model from equations (docs/models.md,
"Noise in connectome runs"; docs/streams.md), against an independent
NumPy/Python Philox and Brian2 2.5.1 (Debian python3-brian, numpy target).

1. A noisy LIF, `dv/dt = (v_0 - v)/tau + sigma*xi/sqrt(tau)` (unless
   refractory), euler, with threshold, reset and refractory period, on every
   neuron of the larva connectome (no synapses in the model: each neuron on
   its own), 2 trials x 30 ms through `brainlesslab run`. Brian2 runs the
   same equations with np.random.randn replaced by the draws of the
   engine's stream, computed here independently: Philox4x32-10
   (tests/oracles/blconn.py) at counter (step, neuron, 0xE0000000 | k,
   trial), key the seed, Box-Muller of two 53-bit uniforms with Python's
   math (glibc's log, sqrt, cos, as the engine's). Brian2's euler scales
   them by dt**0.5, as ours. Spike trains and final v must be identical,
   bit for bit, in both trials.
2. Statistics: `dv/dt = s*xi/sqrt(tau)` from v = 0 (a Wiener process):
   after T steps v is s*sqrt(dt/tau)*(sum of T draws), so over the 2952
   neurons x 2 trials the mean is 0 and the variance s^2*T*dt/tau, within sampling error (printed).

Skips (77) without Brian2 or the larva connectome."""
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import brian2_oracle  # noqa: E402  (before NumPy: it may run this process again)
from brian2_oracle import run_plan, spikes_of  # noqa: E402

import numpy as np  # noqa: E402

import blconn  # noqa: E402

b2, _ = brian2_oracle.import_brian2(h5py=True)  # h5py: the records' spikes
CONN = brian2_oracle.larva()
DT_MS = 0.1
STEPS = 300  # 30 ms
SEED = 0x1_0000_0005  # both key words non-zero
TRIALS = 2
XI_STREAM = 0xE0000000

HEAD = brian2_oracle.plan_head("eq-noise-oracle", CONN)
LIF = '''[model]
method = "euler"
equations = """
dv/dt = (v_0 - v) / tau + sigma * xi / sqrt(tau) : volt (unless refractory)
"""
threshold = "v > v_th"
reset = "v = v_rst"
refractory = "2 ms"
delay = "1.8 ms"
[model.parameters]
v_0 = "-50 mV"
v_rst = "-60 mV"
v_th = "-45 mV"
tau = "10 ms"
sigma = "6 mV"
[model.init]
v = "-55 mV"
'''
WIENER = '''[model]
method = "euler"
equations = """
dv/dt = s * xi / sqrt(tau) : volt
"""
threshold = "v > 1000*volt"
delay = "1.8 ms"
[model.parameters]
s = "2 volt"
tau = "1 second"
[model.init]
v = "0 volt"
'''


def run_text(steps):
    return f'''[run]
trials = {TRIALS}
duration_ms = {steps * DT_MS}
seed = {SEED}
backend = "reference"
[outputs]
spikes = true
counts = true
state = true
propagation = false
'''


def draws(trial, n, steps, k=0):
    """z[step, neuron] of the engine's xi stream, computed independently."""
    s, i = np.meshgrid(np.arange(steps, dtype=np.uint64), np.arange(n, dtype=np.uint64), indexing="ij")
    w0, w1, w2, w3 = (x.astype(np.uint64) for x in
                      blconn.philox4x32_10(s, i, XI_STREAM | k, trial, SEED & 0xFFFFFFFF, SEED >> 32))
    u1 = ((w0 << np.uint64(32)) | w1) >> np.uint64(11)
    u2 = ((w2 << np.uint64(32)) | w3) >> np.uint64(11)
    z = np.empty((steps, n))
    fu1, fu2 = u1.ravel().tolist(), u2.ravel().tolist()
    zf = z.ravel()
    for j in range(len(fu1)):
        a = fu1[j] * 2.0 ** -53
        b = fu2[j] * 2.0 ** -53
        zf[j] = math.sqrt(-2.0 * math.log(1.0 - a)) * math.cos(6.283185307179586 * b)
    return z


def brian2_lif(z, n):
    b2.prefs.codegen.target = "numpy"
    b2.start_scope()
    b2.defaultclock.dt = DT_MS * b2.ms
    rows = iter(z)
    real = np.random.randn

    def fake(*shape):
        row = next(rows)
        assert shape == (n,), shape
        return row.copy()
    ns = {"v_0": -50 * b2.mV, "v_rst": -60 * b2.mV, "v_th": -45 * b2.mV, "tau": 10 * b2.ms, "sigma": 6 * b2.mV}
    G = b2.NeuronGroup(n, "dv/dt = (v_0 - v) / tau + sigma * xi / sqrt(tau) : volt (unless refractory)",
                       threshold="v > v_th", reset="v = v_rst", refractory=2 * b2.ms, method="euler", namespace=ns)
    G.v = -55 * b2.mV
    M = b2.SpikeMonitor(G)
    np.random.randn = fake
    try:
        b2.run(STEPS * DT_MS * b2.ms, namespace=ns)
    finally:
        np.random.randn = real
    steps = np.rint(np.asarray(M.t / b2.ms) / DT_MS).astype(np.int64)
    return sorted(zip(steps.tolist(), np.asarray(M.i).tolist())), np.asarray(G.v[:] / b2.volt, dtype=np.float64)


def main():
    blconn.philox_selfcheck()
    bad = 0
    with tempfile.TemporaryDirectory() as work:
        rec = run_plan(HEAD + LIF + run_text(STEPS), work, "lif")
        v_all = np.load(os.path.join(rec, "final_v.npy"))
        n = v_all.shape[1]
        zs = []
        for trial in range(TRIALS):
            z = draws(trial, n, STEPS)
            zs.append(z)
            ours = spikes_of(rec, trial, DT_MS)
            theirs, bv = brian2_lif(z, n)
            print(f"trial {trial}: spikes ours {len(ours)}, Brian2 {len(theirs)}")
            if ours != theirs or not ours:
                print("FAIL: spike trains differ (or none):", ours[:10], theirs[:10])
                bad = 1
            v = v_all[trial]
            if v.tobytes() != bv.tobytes():
                d = np.argwhere(v != bv)
                j = int(d[0][0])
                ulps = abs(int(np.float64(v[j]).view(np.int64)) - int(np.float64(bv[j]).view(np.int64)))
                print(f"FAIL: trial {trial}: final v differs first at neuron {j}: ours {v[j]!r} "
                      f"Brian2 {bv[j]!r} ({ulps} ulps; {len(d)} neurons differ)")
                bad = 1
            else:
                print(f"trial {trial}: final v of {n} neurons bit-identical to Brian2 with the stream's draws")
        if np.array_equal(zs[0], zs[1]):
            print("FAIL: two trials drew the same noise")
            bad = 1

        # 2. Statistics of the engine's noise (a Wiener process).
        T = 400
        rec = run_plan(HEAD + WIENER + run_text(T), work, "wiener")
        v = np.load(os.path.join(rec, "final_v.npy")).ravel()
        want_var = 2.0 ** 2 * T * DT_MS * 1e-3
        m, var = float(v.mean()), float(v.var())
        se_m = math.sqrt(want_var / v.size)
        se_var = want_var * math.sqrt(2.0 / (v.size - 1))
        print(f"Wiener v after {T} steps over {v.size} neurons x trials: mean {m:.5f} (0 +- {se_m:.5f}), "
              f"variance {var:.5f} (expected s^2*T*dt/tau = {want_var:.5f} +- {se_var:.5f})")
        if abs(m) > 5 * se_m or abs(var - want_var) > 5 * se_var:
            print("FAIL: the noise's mean or variance is off by more than 5 standard errors")
            bad = 1
    print("FAIL" if bad else "ok")
    return bad


if __name__ == "__main__":
    sys.exit(main())
