#!/usr/bin/env python3
"""Oracle: current injection ([[stimulus]] current = ..., docs/models.md,
"Current injection") in a connectome plan, against Brian2 2.5.1 (Debian
python3-brian, numpy target) and against an independent NumPy/Python
computation of the noise draws.

1. A LIF written as equations, `dv/dt = (v_0 - v)/tau + I_inj/C` with
   `I_inj : amp`, no synapses (each neuron on its own), driven by a DC
   current with a window, a step current overlapping it on two neurons (the
   currents add), a ramp, a table and a noise current (its values from the
   independent Philox of part 2), on the larva connectome through
   `brainlesslab run`. Brian2 runs the same equations, method (euler),
   threshold, reset and refractory period, with I_inj set from a
   TimedArray of the same per-step values at the start of every step
   (run_regularly, when='start': before the state update, as the engine
   sets it). Spike trains (neuron, step) must be identical and the final v
   bit-identical.
2. Noise: `v : volt` set by a noise current (mean, sigma) and never changed
   by the update, so every probed v is one draw. Each must equal, bit for
   bit, mean + sigma * z with z Box-Muller of Philox4x32-10 at counter
   (step, neuron, 0xC0000000 | k, trial), key the seed (tests/oracles/
   blconn.py's Philox; Python's math.log/cos/sqrt are glibc's, as the
   engine's). A neuron's noise is the same whichever other neurons the
   current selects (ownership per trial and neuron).

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
STEPS = 1000  # 100 ms
NA = 1e-9     # Brian2's nA: 0.5*nA is 0.5 * 1e-9

HEAD = brian2_oracle.plan_head("current-oracle", CONN)
LIF = '''[model]
method = "euler"
equations = """
dv/dt = (v_0 - v) / tau + I_inj / C : volt (unless refractory)
I_inj : amp
"""
threshold = "v > v_th"
reset = "v = v_rst"
refractory = "2 ms"
delay = "1.8 ms"
[model.parameters]
v_0 = "-65 mV"
v_rst = "-65 mV"
v_th = "-50 mV"
tau = "10 ms"
C = "200 pF"
'''
CURRENTS = '''[[stimulus]]
name = "dc"
neurons = [0, 1, 2, 3]
current = "dc"
amplitude = "0.5 nA"
start_ms = 10.0
[[stimulus]]
name = "step"
neurons = [2, 3, 4]
current = "step"
times_ms = [0.0, 20.0, 40.0]
amplitudes = ["0.2 nA", "0.4 nA", "0 nA"]
[[stimulus]]
name = "ramp"
neurons = [5, 6]
current = "ramp"
start_amplitude = "0 nA"
stop_amplitude = "0.8 nA"
start_ms = 5.0
stop_ms = 95.0
[[stimulus]]
name = "table"
neurons = [7]
current = "table"
values = [0.1, 0.5, 0.9]
unit = "nA"
every_ms = 20.0
[[stimulus]]
name = "noise"
neurons = [8]
current = "noise"
mean = "0.4 nA"
sigma = "0.3 nA"
start_ms = 30.0
'''
K = 9  # neurons 0..8 are driven
SEED = 1


def drive_values():
    """I_inj per step and neuron, computed from the plan's definitions in the
    order the engine adds them (zero, then each current in plan order)."""
    I = np.zeros((STEPS, K))
    s = np.arange(STEPS)
    dc = np.where(s >= 100, 0.5 * NA, 0.0)
    for j in (0, 1, 2, 3):
        I[:, j] += dc
    step = np.select([s >= 400, s >= 200, s >= 0], [0 * NA, 0.4 * NA, 0.2 * NA])
    for j in (2, 3, 4):
        I[:, j] += step
    a, b = 0 * NA, 0.8 * NA
    on = (s >= 50) & (s < 950)
    ramp = np.where(on, a + (b - a) * ((s - 50).astype(np.float64) / float(950 - 50)), 0.0)
    for j in (5, 6):
        I[:, j] += ramp
    tab = np.array([0.1 * NA, 0.5 * NA, 0.9 * NA])
    idx = s // 200
    I[:, 7] += np.where(idx < 3, tab[np.minimum(idx, 2)], 0.0)
    # the noise current (index 4 among the plan's currents), trial 0
    I[:, 8] += [0.4 * NA + 0.3 * NA * normal(SEED, 4, 0, 8, k) if k >= 300 else 0.0 for k in range(STEPS)]
    return I


def brian2_lif(I):
    b2.prefs.codegen.target = "numpy"
    b2.start_scope()
    b2.defaultclock.dt = DT_MS * b2.ms
    ns = {"v_0": -65 * b2.mV, "v_rst": -65 * b2.mV, "v_th": -50 * b2.mV, "tau": 10 * b2.ms, "C": 200 * b2.pF,
          "ta": b2.TimedArray(I * b2.amp, dt=DT_MS * b2.ms)}
    G = b2.NeuronGroup(K, "dv/dt = (v_0 - v) / tau + I_inj / C : volt (unless refractory)\nI_inj : amp",
                       threshold="v > v_th", reset="v = v_rst", refractory=2 * b2.ms, method="euler", namespace=ns)
    G.v = ns["v_0"]
    G.run_regularly("I_inj = ta(t, i)", when="start")
    M = b2.SpikeMonitor(G)
    b2.run(STEPS * DT_MS * b2.ms, namespace=ns)
    steps = np.rint(np.asarray(M.t / b2.ms) / DT_MS).astype(np.int64)
    return sorted(zip(steps.tolist(), np.asarray(M.i).tolist())), np.asarray(G.v[:] / b2.volt, dtype=np.float64)


def normal(seed, k, trial, neuron, step):
    w = blconn.philox4x32_10(step, neuron, 0xC0000000 | k, trial, seed & 0xFFFFFFFF, seed >> 32)
    w = [int(x) for x in w]
    u1 = (((w[0] << 32) | w[1]) >> 11) * 2.0 ** -53
    u2 = (((w[2] << 32) | w[3]) >> 11) * 2.0 ** -53
    return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(6.283185307179586 * u2)


def main():
    bad = 0
    with tempfile.TemporaryDirectory() as work:
        # 1. DC + step + ramp + table against Brian2.
        run_text = HEAD + LIF + CURRENTS + '''[run]
trials = 1
duration_ms = 100.0
seed = 1
backend = "reference"
'''
        rec = run_plan(run_text, work, "lif")
        ours = spikes_of(rec, 0, DT_MS)
        v = np.load(os.path.join(rec, "final_v.npy"))[0, :K]
        theirs, bv = brian2_lif(drive_values())
        print(f"spikes: ours {len(ours)}, Brian2 {len(theirs)}")
        if ours != theirs or not ours:
            print("FAIL: spike trains differ (or none):", ours[:10], theirs[:10])
            bad = 1
        if v.tobytes() != bv.tobytes():
            d = np.argwhere(v != bv)
            j = int(d[0][0])
            ulps = abs(int(np.float64(v[j]).view(np.int64)) - int(np.float64(bv[j]).view(np.int64)))
            print(f"FAIL: final v differs first at neuron {j}: ours {v[j]!r} Brian2 {bv[j]!r} ({ulps} ulps)")
            bad = 1
        else:
            print(f"final v of the {K} driven neurons (DC, step, ramp, table, noise): bit-identical to Brian2")

        # 2. Noise: every probed value is one draw.
        noise_model = '''[model]
method = "euler"
equations = """
dx/dt = -x / tau : 1
v : volt
"""
threshold = "v > 1*volt"
delay = "1.8 ms"
[model.parameters]
tau = "10 ms"
'''
        def noise_plan(neurons, probe):
            return HEAD + noise_model + f'''[[population]]
name = "P"
neurons = {probe}
[[stimulus]]
name = "noise"
neurons = {neurons}
current = "noise"
variable = "v"
mean = "0.5 mV"
sigma = "2 mV"
start_ms = 1.0
[run]
trials = 2
duration_ms = 5.0
seed = 12345678901
backend = "reference"
[outputs]
probes = {{ population = "P", every_ms = 0.1 }}
'''
        probe = [3, 17, 40]
        rec_a = run_plan(noise_plan(list(range(0, 50)), probe), work, "noise_all")
        rec_b = run_plan(noise_plan([3, 17, 40], probe), work, "noise_few")
        pa = np.load(os.path.join(rec_a, "probes_v.npy"))
        pb = np.load(os.path.join(rec_b, "probes_v.npy"))
        seed, mean, sigma = 12345678901, 0.5 * 1e-3, 2 * 1e-3
        n_samples = pa.shape[1]
        # The engine samples the state after each step (every_ms = one step).
        exp = np.zeros_like(pa)
        for t in range(2):
            for s in range(n_samples):
                for j, neuron in enumerate(probe):
                    exp[t, s, j] = (mean + sigma * normal(seed, 0, t, neuron, s)) if s >= 10 else 0.0
        if pa.tobytes() != exp.tobytes():
            d = np.argwhere(pa != exp)
            print(f"FAIL: noise differs from the Philox/Box-Muller oracle first at {tuple(d[0])}: "
                  f"{pa[tuple(d[0])]!r} vs {exp[tuple(d[0])]!r}")
            bad = 1
        else:
            print(f"noise: {pa.size} probed values bit-identical to the oracle's draws")
        if pa.tobytes() != pb.tobytes():
            print("FAIL: a neuron's noise changed with the other neurons selected")
            bad = 1
        else:
            print("noise owned per neuron: the same with 50 neurons selected as with 3")
        if np.array_equal(pa[0], pa[1]):
            print("FAIL: two trials drew the same noise")
            bad = 1
    print("FAIL" if bad else "ok")
    return bad


if __name__ == "__main__":
    sys.exit(main())
