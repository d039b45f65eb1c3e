#!/usr/bin/python3
"""The COBA workload (issue 23): the Vogels-Abbott COBA network (4,000
neurons, 2 % connectivity, 80/20 exc/inh, conductance-based, Brian2's
examples/COBA.py parameters) as an equation-model connectome plan on the cpu
backend (one thread), against Brian2 2.5.1 C++ standalone (one thread) on the
same connectome and the same start. A standalone script for now (docs/
benchmark.md "COBA"), not yet a `brainlesslab bench` workload.

    bench/coba.py [--ms 1000 10000] [--reps 3] [--work DIR] [--cli build/brainlesslab]

Steps, in the order of `brainlesslab bench`: build the connectome (seeded;
weights.npy in nS: 6 excitatory, 67 inhibitory, the sign choosing ge or gi),
qualify first (our cpu run byte-identical to our reference run: spikes,
counts, final v and g; then our spike train against Brian2's, reporting the
first divergence where there is one), then time: fresh processes,
alternating order (ours, Brian2, ours, ...), --reps of each, the median. Our
time: run.wall_run_s of the record (the trial loop, spikes written), and the
process's CPU time (user + sys, from wait4) beside its wall time, since the
machine may be loaded. Brian2's: the binary's own run time
(last_run_info.txt) and its process wall and CPU time; the build (code
generation + make) is reported apart. The start: every neuron at El with no
conductance, 400 random neurons forced to spike at step 0 (Brian2: they
start at -49 mV, over threshold, and fire at step 0; the same state after
the reset). Prints one JSON object."""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "oracles"))
import blconn  # noqa: E402

N, P, SEED = 4000, 0.02, 20261202

MODEL = '''[model]
method = "exponential_euler"
equations = """
dv/dt = (gl*(El - v) + ge*(Ee - v) + gi*(Ei - v)) / Cm : volt (unless refractory)
dge/dt = -ge / taue : siemens
dgi/dt = -gi / taui : siemens
"""
threshold = "v > Vt"
reset = "v = Vr"
refractory = "t_rfc"
on_pre_exc = "ge += w"
on_pre_inh = "gi += w"
weight = "weight * nS"
delay = "0.1 ms"
refractory_input = "deliver"
[model.parameters]
Cm = "200 pF"
gl = "10 nS"
taue = "5 ms"
taui = "10 ms"
El = "-60 mV"
Ee = "0 mV"
Ei = "-80 mV"
Vt = "-50 mV"
Vr = "-60 mV"
t_rfc = "5 ms"
[model.init]
v = "-60 mV"
'''


def make(work):
    rng = np.random.default_rng(SEED)
    conn = rng.random((N, N)) < P
    np.fill_diagonal(conn, False)
    pre, post = np.nonzero(conn)  # CSR order
    exc = pre < N * 4 // 5
    w = np.where(exc, 6.0, 67.0)
    g = blconn.graph_from_edges(N, pre, post, np.where(exc, 1, -1).astype(np.int32), "coba")
    d = os.path.join(work, "conn")
    blconn.write_connectome(g, d)
    man = json.load(open(os.path.join(d, "manifest.json")))
    np.save(os.path.join(d, "weights.npy"), w, allow_pickle=False)
    man["files"]["weights.npy"] = {"bytes": os.path.getsize(os.path.join(d, "weights.npy")),
                                   "sha256": blconn._sha256(os.path.join(d, "weights.npy"))}
    json.dump(man, open(os.path.join(d, "manifest.json"), "w"), indent=2)
    forced = np.sort(rng.choice(N, 400, replace=False)).astype(np.int64)
    np.save(os.path.join(work, "forced.npy"), np.stack([np.zeros_like(forced), forced], 1))
    for k, v in (("pre", pre), ("post", post), ("exc", exc), ("w", w), ("sel", forced)):
        np.save(os.path.join(work, k + ".npy"), v)
    return d, forced


def plan(work, conn, forced, ms, backend):
    p = os.path.join(work, f"coba_{backend}_{int(ms)}.toml")
    with open(p, "w") as f:
        f.write(f'''format = "brainlesslab-plan"
format_version = 4
id = "coba-{int(ms)}"
operation = "connectome"
[connectome]
path = "{conn}"
[[stimulus]]
name = "start"
neurons = [{", ".join(str(int(x)) for x in forced)}]
mode = "force"
schedule = "{os.path.join(work, 'forced.npy')}"
[run]
trials = 1
duration_ms = {ms}
seed = 1
backend = "{backend}"
threads = 1
[outputs]
spikes = true
counts = true
state = true
propagation = false
''' + MODEL)
    return p


def timed(cmd, env=None):
    t0 = time.perf_counter()
    # stderr to a file: a pipe nobody reads while waiting could fill
    with open(os.devnull, "wb") as null, tempfile.TemporaryFile() as e:
        pr = subprocess.Popen(cmd, stdout=null, stderr=e, env=env)
        _, status, ru = os.wait4(pr.pid, 0)
        pr.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        e.seek(0)
        err = e.read().decode(errors="replace")
    if pr.returncode:
        raise SystemExit(f"{cmd[0]} exited {pr.returncode}: {err[-2000:]}")
    return wall, ru.ru_utime + ru.ru_stime, err


def ours(cli, plan_path, root):
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    wall, cpu, err = timed([cli, "run", plan_path, "--root", root, "--quiet"], env)
    recs = sorted(glob.glob(os.path.join(root, "*", "manifest.json")), key=os.path.getmtime)
    if not recs:
        raise SystemExit(f"brainlesslab run failed: {err}")
    rec = os.path.dirname(recs[-1])
    m = json.load(open(recs[-1]))
    return rec, {"run_s": m["run"]["wall_run_s"], "process_s": wall, "process_cpu_s": cpu,
                 "backend": m["run"].get("backend")}


def spikes_of(rec):
    import h5py
    with h5py.File(os.path.join(rec, "spikes", "trial-0000.h5"), "r") as h:
        (pop,) = list(h["spikes"])
        ts = h["spikes"][pop]["timestamps"][()]
        ids = h["spikes"][pop]["node_ids"][()].astype(np.int64)
    st = np.rint(ts / 0.1).astype(np.int64)
    o = np.lexsort((ids, st))
    return st[o], ids[o]


def brian2(work, ms, out):
    cmd = [sys.executable, os.path.join(HERE, "peers", "brian2_coba.py")] + sum(
        (["--" + k, os.path.join(work, f + ".npy")] for k, f in
         (("pre", "pre"), ("post", "post"), ("weights", "w"), ("exc", "exc"), ("forced", "sel"))), []) + [
        "--ms", str(ms), "--out", out, "--build-dir", os.path.join(work, f"b2build_{int(ms)}")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"brian2 peer failed: {r.stderr[-2000:]}")
    return json.load(open(os.path.join(out, "timing.json")))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ms", type=float, nargs="+", default=[1000.0, 10000.0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--work", default="/tmp/bl_coba")
    ap.add_argument("--cli", default=os.path.join(HERE, "..", "build", "brainlesslab"))
    ap.add_argument("--no-brian2", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    conn, forced = make(a.work)
    report = {"network": f"{N} neurons, {P:.0%}, 80/20, COBA (exponential_euler), delay 0.1 ms", "durations": []}
    for ms in a.ms:
        row = {"ms": ms}
        pc, pr = plan(a.work, conn, forced, ms, "cpu"), plan(a.work, conn, forced, ms, "reference")
        # qualification first
        rc, tc = ours(a.cli, pc, os.path.join(a.work, "q_cpu"))
        rr, _ = ours(a.cli, pr, os.path.join(a.work, "q_ref"))
        same = all(open(os.path.join(rc, f), "rb").read() == open(os.path.join(rr, f), "rb").read()
                   for f in ("counts.npy", "final_v.npy", "final_g.npy", "spikes/trial-0000.h5"))
        s_ours, i_ours = spikes_of(rc)
        row["spikes"] = int(len(s_ours))
        row["cpu_equals_reference"] = same
        times_o, times_b = [], []
        if not a.no_brian2:
            b = brian2(a.work, ms, os.path.join(a.work, f"b2_q_{int(ms)}"))
            row["brian2_build_s"] = b["build_s"]
            sb = np.load(os.path.join(a.work, f"b2_q_{int(ms)}", "spikes_step.npy"))
            ib = np.load(os.path.join(a.work, f"b2_q_{int(ms)}", "spikes_i.npy"))
            o = np.lexsort((ib, sb))
            sb, ib = sb[o], ib[o]
            k = next((j for j in range(min(len(sb), len(s_ours)))
                      if sb[j] != s_ours[j] or ib[j] != i_ours[j]), None)
            if k is None and len(sb) == len(s_ours):
                row["brian2_spikes"] = "identical"
            else:
                k = k if k is not None else min(len(sb), len(s_ours))
                row["brian2_spikes"] = (f"first divergence at spike {k}: ours "
                                        f"{(int(s_ours[k]), int(i_ours[k])) if k < len(s_ours) else None}, Brian2 "
                                        f"{(int(sb[k]), int(ib[k])) if k < len(sb) else None} (step, neuron); "
                                        f"{len(s_ours)} vs {len(sb)} spikes")
        for rep in range(a.reps):
            _, t = ours(a.cli, pc, os.path.join(a.work, f"t_cpu_{rep}"))
            times_o.append(t)
            if not a.no_brian2:
                times_b.append(brian2(a.work, ms, os.path.join(a.work, f"b2_t_{int(ms)}_{rep}")))
        med = lambda xs, k: statistics.median(x[k] for x in xs)  # noqa: E731
        row["ours"] = {k: med(times_o, k) for k in ("run_s", "process_s", "process_cpu_s")}
        if times_b:
            row["brian2"] = {k: med(times_b, k) for k in ("run_s", "process_s", "process_cpu_s")}
            row["ratio_run"] = row["brian2"]["run_s"] / row["ours"]["run_s"]
            row["ratio_process_cpu"] = row["brian2"]["process_cpu_s"] / row["ours"]["process_cpu_s"]
        report["durations"].append(row)
        print(json.dumps(row), flush=True)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
