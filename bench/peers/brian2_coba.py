#!/usr/bin/python3
"""Benchmark peer: the Vogels-Abbott COBA network (Brian2's examples/COBA.py:
4,000 neurons, 80/20 exc/inh, conductance-based, exponential_euler) in Brian2 2.5.1 C++ standalone, one thread, on a connectome
directory written for `brainlesslab` (pre/post/sign from its CSR, w in nS from
its weights.npy: 6 nS excitatory, 67 nS inhibitory, as the example's we, wi).

    brian2_coba.py --pre PRE.npy --post POST.npy --weights W.npy --exc EXC.npy
                   --forced FORCED.npy --ms DURATION --out OUTDIR [--build-dir DIR]

Same start as the BrainlessLab plan: every neuron at v = El, ge = gi = 0; the
neurons of FORCED.npy spike at step 0 (here: v starts at -49 mV, over Vt, so
that the step-0 threshold fires them; after the reset their state is the
forced spike's, v = Vr, refractory from step 0). The example's own start
(random v, ge, gi from Brian2's generator) cannot be shared, so it is not used.
Delay: one step (0.1 ms), BrainlessLab's smallest window (the example's 0).

Outputs: OUTDIR/spikes_i.npy, spikes_step.npy (int64), v.npy (float64, volts),
timing.json: build_s (code generation + make), run_s (the binary's own network
run, results/last_run_info.txt), process_s and process_cpu_s (wall and CPU
time of the binary as a child process), spikes."""
import argparse
import json
import os
import resource
import sys
import time
import warnings

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    for k in ("pre", "post", "weights", "exc", "forced", "out"):
        ap.add_argument("--" + k, required=True)
    ap.add_argument("--ms", type=float, required=True)
    ap.add_argument("--build-dir", default=None)
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    import brian2 as b2

    out = a.out
    os.makedirs(out, exist_ok=True)
    build = a.build_dir or os.path.join(out, "standalone")
    b2.set_device("cpp_standalone", directory=build, build_on_run=False)
    b2.prefs.devices.cpp_standalone.openmp_threads = 0
    b2.defaultclock.dt = 0.1 * b2.ms
    pre, post = np.load(a.pre), np.load(a.post)
    w, exc, forced = np.load(a.weights), np.load(a.exc).astype(bool), np.load(a.forced)
    n = 4000
    ns = dict(Cm=200 * b2.pF, gl=10 * b2.nS, taue=5 * b2.ms, taui=10 * b2.ms, El=-60 * b2.mV, Ee=0 * b2.mV,
              Ei=-80 * b2.mV, Vt=-50 * b2.mV, Vr=-60 * b2.mV)
    eqs = """dv/dt = (gl*(El - v) + ge*(Ee - v) + gi*(Ei - v)) / Cm : volt (unless refractory)
dge/dt = -ge / taue : siemens
dgi/dt = -gi / taui : siemens"""
    P = b2.NeuronGroup(n, eqs, threshold="v > Vt", reset="v = Vr", refractory=5 * b2.ms,
                       method="exponential_euler", namespace=ns)
    v0 = np.full(n, -60e-3)
    v0[forced] = -49e-3
    P.v = v0 * b2.volt
    syn = []
    for sel, var in ((exc, "ge"), (~exc, "gi")):
        S = b2.Synapses(P, P, "w : siemens", on_pre=f"{var} += w", namespace=ns)
        S.connect(i=pre[sel], j=post[sel])
        S.w = w[sel] * b2.nS
        S.delay = 0.1 * b2.ms
        syn.append(S)
    M = b2.SpikeMonitor(P)
    net = b2.Network(P, *syn, M)
    net.run(a.ms * b2.ms, namespace=ns)
    t0 = time.perf_counter()
    dev = b2.get_device()
    dev.build(directory=build, compile=True, run=False)
    build_s = time.perf_counter() - t0
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    dev.run(directory=build, with_output=False, run_args=[])
    process_s = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    run_s = float(open(os.path.join(build, "results", "last_run_info.txt")).read().split()[0])
    i = np.asarray(M.i[:], np.int64)
    st = np.rint(np.asarray(M.t_[:]) / 1e-4).astype(np.int64)
    np.save(os.path.join(out, "spikes_i.npy"), i)
    np.save(os.path.join(out, "spikes_step.npy"), st)
    np.save(os.path.join(out, "v.npy"), np.asarray(P.v_[:], np.float64))
    json.dump({"build_s": build_s, "run_s": run_s, "process_s": process_s,
               "process_cpu_s": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
               "spikes": int(len(i)), "ms": a.ms}, open(os.path.join(out, "timing.json"), "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
