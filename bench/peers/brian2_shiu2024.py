#!/usr/bin/python3
"""Benchmark peer: the published Shiu et al. 2024 model (github.com/philshiu/
Drosophila_brain_model, model.py) in Brian2 2.5.1, fed an explicit stimulus schedule.

Run by `brainlesslab bench` as a fresh worker process (one measurement per process):

    brian2_shiu2024.py --connectome DIR --events EVENTS.npy --targets TARGETS.npy
                       --n-steps S --trials T --target cpp_standalone|numpy
                       --out OUTDIR --timing TIMING.json [--threads N] [--build-dir DIR]
                       [--w-syn-mv W] [--f-poi F]

Model (model.py): NeuronGroup(method='linear', threshold 'v > v_th', reset
'v = v_rst; g = 0 mV', refractory 'rfc'), with rfc = 0 for stimulated neurons ("no
refractory period for Poisson targets"); Synapses(on_pre='g += w', delay=1.8 ms), w =
signed count * w_syn. PoissonInput is replaced by a SpikeGeneratorGroup that replays
the events of EVENTS.npy (int32 [K,2] rows (step, neuron)) through
Synapses(on_pre='v_post += f_poi*w_syn', when='synapses', order=0): the slot where
PoissonInput acts, so the run can be qualified spike for spike against
`brainlesslab simulate --preset shiu2024 --schedule EVENTS.npy --poisson-targets
TARGETS.npy`. A SpikeGeneratorGroup channel fires at most once per step, so repeated
(step, neuron) events go through separate channels. Every trial replays the same
schedule from the same initial state (as `simulate --schedule` does).

Targets:
  numpy           Brian2's runtime target (Python + NumPy). Trials: store() once, then
                  restore() before each trial (restore time is not in trial_s).
  cpp_standalone  set_device('cpp_standalone', build_on_run=False); the project is
                  generated and compiled once (build_s: code generation + make, with
                  Brian2's default flags, -O3 -ffast-math -march=native), then the
                  compiled binary is executed once per trial (device.run). trial_s is
                  the binary's own network-run time (results/last_run_info.txt);
                  trial_process_s is the wall time of the whole binary, which also
                  loads the static arrays (synapses) from disk on every run.

Outputs (the layout of `brainlesslab simulate`): OUTDIR/spikes_trial.npy,
spikes_step.npy, spikes_neuron.npy (int32, ordered by trial, step, neuron),
counts.npy int32 [T,N], v.npy, g.npy float64 [T,N] (volts). TIMING.json:
{"load_s", "prepare_s", "build_s", "trial_s": [...], "spikes", "steps", "backend",
"threads", "peak_rss_bytes", ...}. Phases: load = imports and reading the .npy files;
prepare = building the Brian2 objects (and, for cpp_standalone, code generation and
compilation = build_s; for numpy, a zero-length run that generates the code objects).
Exit status 0 on success, 1 on failure (message on stderr).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

import peer_io


def _rss_bytes():
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return int(self_kb) * 1024, int(child_kb) * 1024


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--connectome", required=True)
    ap.add_argument("--events", required=True)
    ap.add_argument("--targets", required=True)
    ap.add_argument("--n-steps", type=int, required=True)
    ap.add_argument("--trials", type=int, default=1)
    ap.add_argument("--target", choices=("numpy", "cpp_standalone"), required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--timing", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--build-dir", default=None)
    ap.add_argument("--w-syn-mv", type=float, default=0.275)
    ap.add_argument("--f-poi", type=float, default=250.0)
    a = ap.parse_args(argv)
    if a.trials < 1 or a.n_steps < 1:
        print("brian2_shiu2024: --trials and --n-steps must be >= 1", file=sys.stderr)
        return 2

    t0 = time.perf_counter()
    import numpy as np
    import brian2 as b2
    from brian2 import (NeuronGroup, Synapses, SpikeGeneratorGroup, SpikeMonitor, Network, ms, mV,
                        second, prefs, defaultclock)

    offsets = np.load(os.path.join(a.connectome, "offsets.npy"), allow_pickle=False)
    targets_csr = np.load(os.path.join(a.connectome, "targets.npy"), allow_pickle=False)
    counts_csr = np.load(os.path.join(a.connectome, "counts.npy"), allow_pickle=False)
    if offsets.dtype != np.int64 or targets_csr.dtype != np.int32 or counts_csr.dtype != np.int32:
        raise SystemExit(f"{a.connectome}: offsets/targets/counts must be int64/int32/int32")
    schedule = np.load(a.events, allow_pickle=False).astype(np.int64).reshape(-1, 2)
    ptargets = np.load(a.targets, allow_pickle=False).astype(np.int64).reshape(-1)
    n = len(offsets) - 1
    pre = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
    post = targets_csr.astype(np.int64)
    t_load = time.perf_counter() - t0

    t1 = time.perf_counter()
    standalone = a.target == "cpp_standalone"
    threads = max(int(a.threads), 1)
    if standalone:
        build_dir = a.build_dir or os.path.join(a.out + "-build")
        prefs.devices.cpp_standalone.openmp_threads = threads if threads > 1 else 0
        b2.set_device("cpp_standalone", directory=build_dir, build_on_run=False)
    else:
        prefs.codegen.target = "numpy"
        threads = 1  # the numpy target runs in one Python thread (NumPy ufuncs are serial)
    defaultclock.dt = 0.1 * ms

    # Shiu et al. 2024, model.py parameters
    p = {
        "v_0": -52 * mV, "v_rst": -52 * mV, "v_th": -45 * mV, "t_mbr": 20 * ms, "tau": 5 * ms,
        "t_rfc": 2.2 * ms, "t_dly": 1.8 * ms, "w_syn": a.w_syn_mv * mV, "f_poi": a.f_poi,
    }
    eqs = """
    dv/dt = (v_0 - v + g) / t_mbr : volt (unless refractory)
    dg/dt = -g / tau               : volt (unless refractory)
    rfc                            : second
    """
    neu = NeuronGroup(n, eqs, method="linear", threshold="v > v_th", reset="v = v_rst; g = 0 * mV",
                      refractory="rfc", name="default_neurons", namespace=p)
    neu.v = p["v_0"]
    neu.g = 0 * mV
    rfc_values = np.full(n, float(p["t_rfc"]))
    rfc_values[ptargets] = 0.0
    neu.rfc = rfc_values * second  # "no refractory period for Poisson targets"
    syn = Synapses(neu, neu, "w : volt", on_pre="g += w", delay=p["t_dly"], name="default_synapses")
    syn.connect(i=pre, j=post)
    syn.w = counts_csr.astype(np.float64) * p["w_syn"]
    objs = [neu, syn]
    w_poi = float(p["f_poi"] * p["w_syn"])
    if len(schedule):
        st, nrn = schedule[:, 0], schedule[:, 1]
        o = np.lexsort((nrn, st))
        st, nrn = st[o], nrn[o]
        key = st * n + nrn
        first = np.r_[True, key[1:] != key[:-1]]
        grp_start = np.maximum.accumulate(np.where(first, np.arange(len(key)), 0))
        rank = np.arange(len(key)) - grp_start
        tgt = np.unique(nrn)
        pos = np.searchsorted(tgt, nrn)
        channel = rank * len(tgt) + pos
        n_channels = int(rank.max() + 1) * len(tgt)
        gen = SpikeGeneratorGroup(n_channels, channel, st * defaultclock.dt, name="stimulus")
        stim = Synapses(gen, neu, on_pre=f"v_post += {w_poi!r}*volt", order=0, name="stimulus_synapses")
        ch = np.arange(n_channels)
        stim.connect(i=ch, j=tgt[ch % len(tgt)])
        objs += [gen, stim]
    mon = SpikeMonitor(neu, name="spikes")
    objs.append(mon)
    net = Network(*objs)
    duration = a.n_steps * defaultclock.dt

    build_s = 0.0
    trial_s, trial_process_s, results = [], [], []

    def collect():
        t = np.asarray(mon.t_[:])
        i = np.asarray(mon.i[:], np.int64)
        steps = np.rint(t / float(defaultclock.dt)).astype(np.int64)
        o = np.lexsort((i, steps))
        return steps[o], i[o], np.asarray(neu.v_[:], np.float64).copy(), np.asarray(neu.g_[:], np.float64).copy()

    if standalone:
        net.run(duration)
        tb = time.perf_counter()
        b2.device.build(directory=build_dir, compile=True, run=False, with_output=False)
        build_s = time.perf_counter() - tb
        t_prepare = time.perf_counter() - t1
        for _ in range(a.trials):
            b2.device.run(build_dir, False, [])
            trial_s.append(float(b2.device._last_run_time))
            trial_process_s.append(float(b2.device.timers["run_binary"]))
            results.append(collect())
    else:
        net.run(0 * ms)  # code objects are generated here, not in the first trial
        net.store("initial")
        t_prepare = time.perf_counter() - t1
        for trial in range(a.trials):
            if trial:
                net.restore("initial")
            ts = time.perf_counter()
            net.run(duration)
            trial_s.append(time.perf_counter() - ts)
            results.append(collect())

    spikes = peer_io.write_outputs(a.out, [r[0] for r in results], [r[1] for r in results],
                                   [np.bincount(r[1], minlength=n) for r in results], [r[2] for r in results],
                                   [r[3] for r in results])

    rss_self, rss_children = _rss_bytes()
    timing = {
        "load_s": t_load, "prepare_s": t_prepare, "build_s": build_s, "trial_s": trial_s,
        "spikes": spikes, "steps": int(a.n_steps),
        "backend": "brian2-" + a.target, "threads": threads,
        "peak_rss_bytes": max(rss_self, rss_children),
        "peak_rss_self_bytes": rss_self, "peak_rss_children_bytes": rss_children,
        "versions": {"brian2": b2.__version__, "numpy": np.__version__, "python": sys.version.split()[0]},
        "dtype": "float64",
    }
    if standalone:
        timing["trial_process_s"] = trial_process_s
        timing["compile_flags"] = list(prefs.codegen.cpp.extra_compile_args_gcc)
        timing["openmp_threads"] = int(prefs.devices.cpp_standalone.openmp_threads)
    peer_io.write_timing(a.timing, timing)
    return 0


if __name__ == "__main__":
    peer_io.run_main(main, "brian2_shiu2024")
