"""The published model of Shiu et al. 2024 (model.py) in Brian2 2.5.1, numpy target,
float64: the oracle for preset `shiu2024`.

Instead of PoissonInput (whose RNG cannot be shared with the C engine), a
SpikeGeneratorGroup replays an explicit stimulus schedule of (step, neuron) events into
Synapses(on_pre='v_post += 0.06875*volt') with no delay, in the 'synapses' slot like
PoissonInput (spec, "Exactness target"). Brian2 runs every 'pre' pathway at order -1
whatever the Synapses' order argument, so this pathway runs beside the recurrent one
rather than after it (PoissonInput: order 0); that cannot matter: both only read
not_refractory and they write different variables (v, g). The generated code is
`_numpy.add.at(v, post[not_refractory], 0.06875)`: input to a refractory neuron is
dropped, as PoissonInput's conditional write does. Duplicate events (the same neuron
twice on one step) go through separate generator channels, since a SpikeGeneratorGroup
channel fires at most once per step; each adds 0.06875.

Run as a script in its own process so that NPY_DISABLE_CPU_FEATURES can be set before
NumPy is imported (NumPy 1.24's AVX-512 exp rounds exp(-dt/tau) one ulp high):

    python3 shiu2024_brian2.py WORKDIR

WORKDIR holds: graph/ (a connectome directory), schedule.npy int32 [K,2] (step, neuron),
poisson_targets.npy int32, optional silence.npy int32, and params.json
{"n_steps": S}. The script writes brian2_spikes_step.npy, brian2_spikes_neuron.npy (int32,
ordered by (step, neuron)), brian2_v.npy, brian2_g.npy (float64 [N]) and
brian2_info.json (timings, the constants Brian2 used, whether AVX-512 was disabled).
run() (or start() then finish(), to overlap several) launches it from the tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

DISABLE = "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL"
HERE = Path(__file__).resolve().parent


def run(graph, n_steps, schedule, poisson_targets, workdir, silence=None, checkpoints=(), timeout=1200):
    """Run the Brian2 oracle in a subprocess; returns (result dict with a single trial,
    info dict). `graph` is a blconn.Graph. With checkpoints, the run is split into
    consecutive net.run() segments ending at those step counts and the result gets
    "snapshots": {k: (V[1,N], G[1,N])}, the state after k steps."""
    return finish(start(graph, n_steps, schedule, poisson_targets, workdir, silence, checkpoints), timeout)


def start(graph, n_steps, schedule, poisson_targets, workdir, silence=None, checkpoints=()):
    """Write the inputs and start the Brian2 process; finish(handle) waits and loads."""
    import numpy as np
    import blconn

    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    gdir = workdir / "graph"
    if not gdir.exists():
        blconn.write_connectome(graph, gdir)
    np.save(workdir / "schedule.npy", np.asarray(schedule, np.int32).reshape(-1, 2), allow_pickle=False)
    np.save(workdir / "poisson_targets.npy", np.asarray(poisson_targets, np.int32), allow_pickle=False)
    if silence is not None:
        np.save(workdir / "silence.npy", np.asarray(silence, np.int32), allow_pickle=False)
    elif (workdir / "silence.npy").exists():
        (workdir / "silence.npy").unlink()
    checkpoints = sorted(set(int(k) for k in checkpoints if 0 < int(k) < n_steps))
    (workdir / "params.json").write_text(json.dumps({"n_steps": int(n_steps), "checkpoints": checkpoints}))
    env = dict(os.environ)
    env["NPY_DISABLE_CPU_FEATURES"] = DISABLE
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.setdefault("HOME", str(workdir))  # brian2 wants a writable ~/.brian
    log = open(workdir / "brian2.log", "w")
    proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), str(workdir)],
                            stdout=log, stderr=subprocess.STDOUT, env=env)
    log.close()
    return dict(proc=proc, workdir=workdir, n=graph.n, n_steps=int(n_steps), checkpoints=checkpoints)


def finish(handle, timeout=1200):
    import numpy as np
    import blconn

    workdir, checkpoints, n_steps = handle["workdir"], handle["checkpoints"], handle["n_steps"]
    try:
        rc = handle["proc"].wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        handle["proc"].kill()
        raise
    if rc != 0:
        raise RuntimeError(f"Brian2 oracle failed (rc {rc}):\n{(workdir / 'brian2.log').read_text()[-6000:]}")
    info = json.loads((workdir / "brian2_info.json").read_text())
    st = np.load(workdir / "brian2_spikes_step.npy")
    nr = np.load(workdir / "brian2_spikes_neuron.npy")
    v = np.load(workdir / "brian2_v.npy")
    g = np.load(workdir / "brian2_g.npy")
    counts = np.bincount(nr, minlength=handle["n"]).astype(np.int32)[None, :]
    res = blconn.make_result(np.zeros(len(st), np.int64), st, nr, counts, v[None, :], g[None, :])
    res["snapshots"] = {k: (np.load(workdir / f"brian2_v_{k}.npy")[None, :], np.load(workdir / f"brian2_g_{k}.npy")[None, :])
                        for k in checkpoints}
    res["snapshots"][int(n_steps)] = (res["v"], res["g"])
    return res, info


def replicate_trials(res, trials):
    """A --schedule run repeats the same input in every trial: tile a 1-trial result."""
    import numpy as np
    import blconn
    k = len(res["spikes_step"])
    t = np.repeat(np.arange(trials), k)
    out = blconn.make_result(t, np.tile(res["spikes_step"], trials), np.tile(res["spikes_neuron"], trials),
                             np.tile(res["counts"], (trials, 1)), np.tile(res["v"], (trials, 1)),
                             np.tile(res["g"], (trials, 1)))
    out["snapshots"] = {s: (np.tile(v, (trials, 1)), np.tile(g, (trials, 1)))
                        for s, (v, g) in res.get("snapshots", {}).items()}
    return out


def _main(workdir):
    t_start = time.perf_counter()
    import numpy as np
    import brian2 as b2
    from brian2 import (NeuronGroup, Synapses, SpikeGeneratorGroup, SpikeMonitor, Network, ms, mV, volt,
                        second, prefs, defaultclock)

    sys.path.insert(0, str(HERE))
    import blconn

    workdir = Path(workdir)
    params = json.loads((workdir / "params.json").read_text())
    n_steps = int(params["n_steps"])
    checkpoints = [int(k) for k in params.get("checkpoints", [])]
    graph = blconn.read_connectome(workdir / "graph")
    schedule = np.load(workdir / "schedule.npy").astype(np.int64).reshape(-1, 2)
    ptargets = np.load(workdir / "poisson_targets.npy").astype(np.int64)
    silence = np.load(workdir / "silence.npy").astype(np.int64) if (workdir / "silence.npy").exists() else None

    prefs.codegen.target = "numpy"
    b2.seed(1)  # nothing random is used; pinned anyway
    defaultclock.dt = 0.1 * ms
    N = graph.n

    # Shiu et al. 2024 model.py parameters
    p = {
        "v_0": -52 * mV, "v_rst": -52 * mV, "v_th": -45 * mV, "t_mbr": 20 * ms, "tau": 5 * ms,
        "t_rfc": 2.2 * ms, "t_dly": 1.8 * ms, "w_syn": 0.275 * mV, "f_poi": 250,
    }
    eqs = """
    dv/dt = (v_0 - v + g) / t_mbr : volt (unless refractory)
    dg/dt = -g / tau               : volt (unless refractory)
    rfc                            : second
    """
    neu = NeuronGroup(N, eqs, method="linear", threshold="v > v_th", reset="v = v_rst; g = 0 * mV",
                      refractory="rfc", name="default_neurons", namespace=p)
    neu.v = p["v_0"]
    neu.g = 0 * mV
    neu.rfc = p["t_rfc"]
    rfc = np.full(N, float(p["t_rfc"]))
    rfc[ptargets] = 0.0
    neu.rfc = rfc * second  # "no refractory period for Poisson targets"

    pre = graph.sources()
    post = graph.targets.astype(np.int64)
    syn = Synapses(neu, neu, "w : volt", on_pre="g += w", delay=p["t_dly"], name="default_synapses")
    syn.connect(i=pre, j=post)
    wv = graph.counts.astype(np.float64) * p["w_syn"]  # signed count * w_syn (Quantity)
    if silence is not None and len(silence):
        wv = np.asarray(wv)
        wv[np.isin(pre, silence)] = 0.0
        wv = wv * volt
    syn.w = wv

    objs = [neu, syn]
    # Stimulus: explicit events replayed with the PoissonInput's effect (v += f_poi*w_syn)
    w_poi = p["f_poi"] * p["w_syn"]
    assert float(w_poi) == 0.06875
    if len(schedule):
        st, nrn = schedule[:, 0], schedule[:, 1]
        o = np.lexsort((nrn, st))
        st, nrn = st[o], nrn[o]
        # rank of each event among equal (step, neuron) pairs
        key = st * N + nrn
        first = np.r_[True, key[1:] != key[:-1]]
        grp_start = np.maximum.accumulate(np.where(first, np.arange(len(key)), 0))
        rank = np.arange(len(key)) - grp_start
        tgt = np.unique(nrn)
        pos = np.searchsorted(tgt, nrn)
        channel = rank * len(tgt) + pos
        n_channels = int(rank.max() + 1) * len(tgt)
        gen = SpikeGeneratorGroup(n_channels, channel, st * defaultclock.dt, name="stimulus")
        stim = Synapses(gen, neu, on_pre="v_post += 0.06875*volt", order=0, name="stimulus_synapses")
        ch = np.arange(n_channels)
        stim.connect(i=ch, j=tgt[ch % len(tgt)])
        objs += [gen, stim]
    mon = SpikeMonitor(neu, name="spikes")
    objs.append(mon)
    net = Network(*objs)
    t_build = time.perf_counter()
    done = 0
    for k in checkpoints + [n_steps]:  # consecutive segments; a continued run is exact
        net.run((k - done) * defaultclock.dt)
        done = k
        assert int(round(float(net.t_) / float(defaultclock.dt))) == k, (k, float(net.t_))
        if k != n_steps:
            np.save(workdir / f"brian2_v_{k}.npy", np.asarray(neu.v_[:], np.float64), allow_pickle=False)
            np.save(workdir / f"brian2_g_{k}.npy", np.asarray(neu.g_[:], np.float64), allow_pickle=False)
    t_run = time.perf_counter()

    t = np.asarray(mon.t_[:])
    i = np.asarray(mon.i[:], np.int64)
    steps = np.rint(t / float(defaultclock.dt)).astype(np.int64)
    assert np.all(np.abs(steps * float(defaultclock.dt) - t) < 1e-3 * float(defaultclock.dt))
    o = np.lexsort((i, steps))
    np.save(workdir / "brian2_spikes_step.npy", steps[o].astype(np.int32), allow_pickle=False)
    np.save(workdir / "brian2_spikes_neuron.npy", i[o].astype(np.int32), allow_pickle=False)
    np.save(workdir / "brian2_v.npy", np.asarray(neu.v_[:], np.float64), allow_pickle=False)
    np.save(workdir / "brian2_g.npy", np.asarray(neu.g_[:], np.float64), allow_pickle=False)

    # The constants Brian2's numpy target uses, evaluated with this process's NumPy exp.
    dt = float(defaultclock.dt)
    L2 = float(np.exp(-dt / float(p["tau"])))
    L10 = float(np.exp(-dt / float(p["t_mbr"])))
    from numpy.core._multiarray_umath import __cpu_features__ as feats
    info = {
        "brian2": b2.__version__, "numpy": np.__version__, "n_steps": n_steps, "n_spikes": int(len(i)),
        "build_s": t_build - t_start, "run_s": t_run - t_build,
        "NPY_DISABLE_CPU_FEATURES": os.environ.get("NPY_DISABLE_CPU_FEATURES", ""),
        "avx512f_active": bool(feats.get("AVX512F", False)),
        "exp_L2": L2.hex(), "exp_L10": L10.hex(),
        "correctly_rounded_exp": L2.hex() == "0x1.f5dc99badec5bp-1" and L10.hex() == "0x1.fd7246927d28bp-1",
    }
    (workdir / "brian2_info.json").write_text(json.dumps(info, indent=2))


if __name__ == "__main__":
    _main(sys.argv[1])
