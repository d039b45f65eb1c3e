#!/usr/bin/python3
"""Benchmark peer of the COBA workload (docs/benchmark.md, "COBA"): the
Vogels-Abbott network of Brian2's examples/COBA.py (4,000 neurons, 80/20
exc/inh, conductance-based, exponential_euler) in Brian2 C++ standalone, one
thread (Brian2's default flags -O3 -ffast-math -march=native), on the
network bench/peers/coba_network.py wrote for both sides.

    brian2_coba.py --inputs DIR --ms DURATION --trials T --out OUTDIR --timing FILE.json
                   [--build-dir DIR]

DIR holds pre.npy, post.npy (the edges in CSR order), w.npy (nS: 6
excitatory, 67 inhibitory, as the example's we, wi), exc.npy (the edge's
source is excitatory) and sel.npy (the neurons that spike at step 0).

Same start as our plan: every neuron at v = El, ge = gi = 0; the neurons of
sel.npy spike at step 0 (here v starts at -49 mV, over Vt, so that the step-0
threshold fires them; after the reset their state is the forced spike's, v =
Vr, refractory from step 0). The example's own start (random v, ge, gi from
Brian2's generator) cannot be shared, so it is not used. Delay: one step
(0.1 ms), our smallest window (the example's 0).

Brian2 C++ standalone cannot store and restore a network, so each trial is
one execution of the compiled binary (device.run), the same computation
every time. The binary's own run time (results/last_run_info.txt) is
std::clock() without OpenMP (Brian2's templates/network.cpp): processor
time, not wall time. So trial_s is the binary's whole wall time (its start,
reading the synapses and writing the results included: an upper bound on
the run's wall time), trial_cpu_s the network run's CPU time (the
last_run_info figure), net_run_clock_s the same figure under its own name,
trial_process_cpu_s the binary's whole CPU time (user + system of the child).
build_s: code generation and make, reported apart. OUTDIR: `brainlesslab simulate`'s layout (peer_io):
spikes of every trial, counts, v (volts) and, as g, ge (siemens; ours
writes another variable there, so only v is compared)."""
import argparse
import os
import resource
import sys
import time
import warnings

T0 = time.perf_counter()
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_io  # noqa: E402

N = 4000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--ms", type=float, required=True)
    ap.add_argument("--trials", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--timing", required=True)
    ap.add_argument("--build-dir", default=None)
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    import brian2 as b2

    ld = lambda k: np.load(os.path.join(a.inputs, k + ".npy"))  # noqa: E731
    pre, post, w, exc, forced = ld("pre"), ld("post"), ld("w"), ld("exc").astype(bool), ld("sel")
    t_load = time.perf_counter() - T0
    t1 = time.perf_counter()
    build = a.build_dir or os.path.join(a.out + "-build")
    b2.set_device("cpp_standalone", directory=build, build_on_run=False)
    b2.prefs.devices.cpp_standalone.openmp_threads = 0
    b2.defaultclock.dt = 0.1 * b2.ms
    ns = dict(Cm=200 * b2.pF, gl=10 * b2.nS, taue=5 * b2.ms, taui=10 * b2.ms, El=-60 * b2.mV, Ee=0 * b2.mV,
              Ei=-80 * b2.mV, Vt=-50 * b2.mV, Vr=-60 * b2.mV)
    eqs = """dv/dt = (gl*(El - v) + ge*(Ee - v) + gi*(Ei - v)) / Cm : volt (unless refractory)
dge/dt = -ge / taue : siemens
dgi/dt = -gi / taui : siemens"""
    P = b2.NeuronGroup(N, eqs, threshold="v > Vt", reset="v = Vr", refractory=5 * b2.ms,
                       method="exponential_euler", namespace=ns)
    v0 = np.full(N, -60e-3)
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
    dev = b2.get_device()
    tb = time.perf_counter()
    dev.build(directory=build, compile=True, run=False, with_output=False)
    build_s = time.perf_counter() - tb
    t_prepare = time.perf_counter() - t1
    trial_s, net_run_clock_s, trial_process_cpu_s, results = [], [], [], []
    for _ in range(a.trials):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        tp = time.perf_counter()
        dev.run(directory=build, with_output=False, run_args=[])
        trial_s.append(time.perf_counter() - tp)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        trial_process_cpu_s.append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
        with open(os.path.join(build, "results", "last_run_info.txt")) as f:
            net_run_clock_s.append(float(f.read().split()[0]))  # std::clock(): CPU seconds
        i = np.asarray(M.i[:], np.int64)
        st = np.rint(np.asarray(M.t_[:]) / 1e-4).astype(np.int64)
        o = np.lexsort((i, st))
        results.append((st[o], i[o], np.asarray(P.v_[:], np.float64).copy(), np.asarray(P.ge_[:], np.float64).copy()))
    spikes = peer_io.write_outputs(a.out, [r[0] for r in results], [r[1] for r in results],
                                   [np.bincount(r[1], minlength=N) for r in results], [r[2] for r in results],
                                   [r[3] for r in results])
    ru = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    peer_io.write_timing(a.timing, {
        "load_s": t_load, "prepare_s": t_prepare, "build_s": build_s, "trial_s": trial_s,
        "trial_cpu_s": net_run_clock_s, "net_run_clock_s": net_run_clock_s,
        "trial_process_cpu_s": trial_process_cpu_s, "spikes": spikes,
        "steps": int(round(a.ms / 0.1)), "backend": "brian2-cpp_standalone", "threads": 1,
        "peak_rss_bytes": max(ru[0].ru_maxrss, ru[1].ru_maxrss) * 1024,
        "versions": {"brian2": b2.__version__, "numpy": np.__version__, "python": sys.version.split()[0]},
        "compile_flags": list(b2.prefs.codegen.cpp.extra_compile_args_gcc),
        "openmp_threads": int(b2.prefs.devices.cpp_standalone.openmp_threads),
        "dtype": "float64",
    })
    return 0


if __name__ == "__main__":
    peer_io.run_main(main, "brian2_coba")
