#!/usr/bin/env python3
"""Oracle: synapses of equation models in connectome plans (docs/models.md
"Synapses"), run by `brainlesslab run` (the reference kernel, src/models/eq_row.c)
and by Brian2 2.5.1 (Debian python3-brian, runtime numpy target) on the same
network, read by both sides from the same connectome directory and spike schedule.

  stdp   Brian2's classic STDP example, small: 50 inputs (spike times from one
         schedule both sides read: SpikeGeneratorGroup there, forced spikes here)
         onto 10 conductance-based neurons; per-edge w from the connectome's
         weights.npy, event-driven traces apre/apost, on_pre and on_post.
         Spike trains and the final per-edge w, bit for bit.
  cuba   The Vogels-Abbott CUBA network, small (400 neurons, 2 %), ge/gi chosen
         by the edge's sign (on_pre_exc / on_pre_inh), w from weights.npy in mV.
         Spike trains and final v, bit for bit.
  stdp_delays  The STDP network with a delay per edge (0.1-2 ms): the traces
         are then advanced at arrival times, not spike times.
  delays The CUBA network with a delay per edge (delays.npy, 0.1-3 ms, with
         ties at half steps: Brian2's round-half-to-even). Spike trains and final v.
  transmitter  CUBA with a third synaptic variable, on_pre chosen by the
         source's neurons.csv "transmitter" field (on_pre_by): ACH -> ge,
         GABA -> gi, GLUT -> gcl; DA and empty fields deliver nothing. In
         Brian2 one Synapses object per transmitter. Spike trains and final v.

Where a value differs, the first difference and its size in ulps are printed.
Short runs keep it a CI test. Skips (77) without Brian2."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import brian2_oracle  # noqa: E402  (before NumPy: it may run this process again)
from brian2_oracle import CLI  # noqa: E402

import numpy as np  # noqa: E402

import blconn  # noqa: E402

b2, h5py = brian2_oracle.import_brian2(h5py=True)
DT_MS = 0.1


def ulps(a, b):
    ia = np.asarray(a, np.float64).view(np.int64).astype(object)
    ib = np.asarray(b, np.float64).view(np.int64).astype(object)
    fa = [x if x >= 0 else -(x & 0x7FFFFFFFFFFFFFFF) for x in ia]
    fb = [x if x >= 0 else -(x & 0x7FFFFFFFFFFFFFFF) for x in ib]
    return np.array([abs(x - y) for x, y in zip(fa, fb)], dtype=object)


def write_conn(path, n, pre, post, counts, weights=None, delays=None):
    g = blconn.graph_from_edges(n, pre, post, counts, os.path.basename(path))
    blconn.write_connectome(g, path)
    # The optional float edge columns (docs/connectome-format.md), in CSR order.
    man = json.load(open(os.path.join(path, "manifest.json")))
    order = np.lexsort((np.asarray(post), np.asarray(pre)))
    for name, col in (("weights.npy", weights), ("delays.npy", delays)):
        if col is None:
            continue
        np.save(os.path.join(path, name), np.asarray(col, np.float64)[order], allow_pickle=False)
        man["files"][name] = {"bytes": os.path.getsize(os.path.join(path, name)),
                              "sha256": blconn._sha256(os.path.join(path, name))}
    json.dump(man, open(os.path.join(path, "manifest.json"), "w"), indent=2)
    return g, order


PLAN_HEAD = """format = "brainlesslab-plan"
format_version = 4
id = "{id}"
operation = "connectome"
[connectome]
path = "{conn}"
{stim}
[run]
trials = 1
duration_ms = {ms}
seed = 1
backend = "reference"
threads = 1
[outputs]
spikes = true
counts = false
state = true
propagation = false
"""


def run_ours(work, name, conn, ms, model, stim=""):
    plan = os.path.join(work, name + ".toml")
    with open(plan, "w") as f:
        f.write(PLAN_HEAD.format(id=name, conn=conn, ms=ms, stim=stim) + model)
    root = os.path.join(work, "rec_" + name)
    r = subprocess.run([CLI, "run", plan, "--root", root], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"FAIL {name}: brainlesslab run: {r.stderr.strip()} {r.stdout.strip()}")
    (rec,) = [os.path.join(root, d) for d in os.listdir(root)]
    with h5py.File(os.path.join(rec, "spikes", "trial-0000.h5"), "r") as h:
        (pop,) = list(h["spikes"])
        ts = h["spikes"][pop]["timestamps"][()]
        ids = h["spikes"][pop]["node_ids"][()].astype(np.int64)
    steps = np.rint(ts / DT_MS).astype(np.int64)
    out = {"i": ids, "step": steps, "v": np.load(os.path.join(rec, "final_v.npy"))[0]}
    if os.path.exists(os.path.join(rec, "final_w.npy")):
        out["w"] = np.load(os.path.join(rec, "final_w.npy"))[0]
    return out


def spikes_of(mon, offset=0):
    i = np.asarray(mon.i[:], np.int64) + offset
    s = np.rint(np.asarray(mon.t_[:]) / (DT_MS * 1e-3)).astype(np.int64)
    return i, s


def compare(name, ours, i2, s2, values):
    """values: [(label, ours, brian2)]. Returns (ok, summary)."""
    o1 = np.lexsort((ours["i"], ours["step"]))
    o2 = np.lexsort((i2, s2))
    same = len(o1) == len(o2) and np.array_equal(ours["i"][o1], i2[o2]) and np.array_equal(ours["step"][o1], s2[o2])
    msg = f"{len(o1)} spikes (Brian2 {len(o2)})" + ("" if same else ": spike trains DIFFER")
    if not same:
        k = next((k for k in range(min(len(o1), len(o2)))
                  if ours["i"][o1][k] != i2[o2][k] or ours["step"][o1][k] != s2[o2][k]), min(len(o1), len(o2)))
        msg += f" (first at spike {k})"
    worst = 0
    for label, a, b in values:
        d = ulps(a, b)
        m = max(d) if len(d) else 0
        worst = max(worst, m)
        if m:
            j = next(j for j in range(len(d)) if d[j])
            msg += f"; {label}: max {m} ulps, first {label}[{j}] = {a[j]!r} vs Brian2 {b[j]!r} ({d[j]} ulps)"
        else:
            msg += f"; {label} bit-identical ({len(a)} values)"
    return same and worst == 0, msg, len(o1)


# ---- (a) STDP (Brian2's examples/synapses/STDP.py, small)
N_IN, N_OUT, STDP_MS = 50, 10, 1000.0


def case_stdp(work, with_delays=False):
    name = "stdp_delays" if with_delays else "stdp"
    rng = np.random.default_rng(20261202)
    steps = int(round(STDP_MS / DT_MS))
    # Poisson-like input spikes at 80 Hz, one schedule both sides read
    fire = rng.random((steps, N_IN)) < 80.0 * DT_MS * 1e-3
    sched_step, sched_i = np.nonzero(fire)
    sched = np.stack([sched_step, sched_i], axis=1).astype(np.int64)
    np.save(os.path.join(work, name + "_sched.npy"), sched)
    pre = np.repeat(np.arange(N_IN), N_OUT)
    post = np.tile(np.arange(N_OUT), N_IN) + N_IN
    gmax = 0.03
    w0 = rng.random(len(pre)) * gmax
    delays = rng.integers(1, 21, len(pre)) * 0.1 if with_delays else None
    conn = os.path.join(work, name + "_conn")
    _, order = write_conn(conn, N_IN + N_OUT, pre, post, np.ones(len(pre), np.int32), weights=w0, delays=delays)
    w0 = w0[order]  # CSR order (it is already: pre-major, post ascending)
    taupre = taupost = 20 * b2.ms
    dApre = .01
    dApost = -dApre * taupre / taupost * 1.05
    dApost *= gmax
    dApre *= gmax
    params = {"taum": "10 ms", "taue": "5 ms", "Ee": "0 mV", "vt": "-54 mV", "vr": "-60 mV", "El": "-74 mV",
              "taupre": "20 ms", "taupost": "20 ms"}
    model = f'''[model]
method = "euler"
equations = """
dv/dt = (ge * (Ee - v) + El - v) / taum : volt
dge/dt = -ge / taue : 1
"""
threshold = "v > vt"
reset = "v = vr"
synapses = """
w : 1
dapre/dt = -apre/taupre : 1 (event-driven)
dapost/dt = -apost/taupost : 1 (event-driven)
"""
on_pre = "ge += w; apre += Apre; w = clip(w + apost, 0, wmax)"
on_post = "apost += Apost; w = clip(w + apre, 0, wmax)"
weight = "weight"
delay = "{'connectome' if with_delays else '0.1 ms'}"
refractory_input = "deliver"
[model.parameters]
{chr(10).join(f'{k} = "{v}"' for k, v in params.items())}
Apre = {float(dApre)!r}
Apost = {float(dApost)!r}
wmax = {gmax!r}
[model.init]
v = "-60 mV"
'''
    stim = f'''[[stimulus]]
name = "inputs"
neurons = [{", ".join(str(k) for k in range(N_IN))}]
mode = "force"
schedule = "{name}_sched.npy"'''
    ours = run_ours(work, name, conn, STDP_MS, model, stim)

    b2.start_scope()
    b2.prefs.codegen.target = "numpy"
    b2.defaultclock.dt = DT_MS * b2.ms
    ns = {k: eval(v.replace(" ", "*"), vars(b2)) for k, v in params.items()}
    ns.update(Apre=float(dApre), Apost=float(dApost), wmax=gmax)
    inp = b2.SpikeGeneratorGroup(N_IN, sched_i, sched_step * DT_MS * b2.ms)
    G = b2.NeuronGroup(N_OUT, "dv/dt = (ge * (Ee - v) + El - v) / taum : volt\ndge/dt = -ge / taue : 1",
                       threshold="v > vt", reset="v = vr", method="euler", namespace=ns)
    G.v = -60 * b2.mV
    S = b2.Synapses(inp, G, """w : 1
dapre/dt = -apre/taupre : 1 (event-driven)
dapost/dt = -apost/taupost : 1 (event-driven)""",
                    on_pre="ge += w\napre += Apre\nw = clip(w + apost, 0, wmax)",
                    on_post="apost += Apost\nw = clip(w + apre, 0, wmax)", namespace=ns)
    S.connect(i=pre, j=post - N_IN)
    S.w = w0
    S.pre.delay = (delays * b2.ms) if with_delays else DT_MS * b2.ms
    M = b2.SpikeMonitor(G)
    net = b2.Network(inp, G, S, M)
    net.run(STDP_MS * b2.ms, namespace=ns)
    i2, s2 = spikes_of(M, N_IN)
    keep = ours["i"] >= N_IN  # the inputs' own spikes are the schedule
    inputs_ok = np.array_equal(np.sort(ours["step"][~keep] * 1000 + ours["i"][~keep]),
                               np.sort(sched_step * 1000 + sched_i))
    mine = {"i": ours["i"][keep], "step": ours["step"][keep]}
    w2 = np.asarray(S.w[:], np.float64)
    ok, msg, n = compare(name, mine, i2, s2, [("w", ours["w"], w2), ("v", ours["v"][N_IN:], np.asarray(G.v_[:]))])
    moved = int(np.sum(ours["w"] != w0))
    msg += f"; first output spikes at steps {', '.join(str(x) for x in np.sort(s2)[:3])}; {moved} of {len(w0)} weights changed by STDP; inputs {'as scheduled' if inputs_ok else 'NOT as scheduled'}"
    return ok and inputs_ok and n > 20 and moved > 0, msg


# ---- (b, c) CUBA (Brian2's examples/CUBA.py, small)
N_CUBA, CUBA_MS = 400, 200.0
CUBA_PARAMS = {"taum": "20 ms", "taue": "5 ms", "taui": "10 ms", "Vt": "-50 mV", "Vr": "-60 mV", "El": "-49 mV",
               "t_rfc": "5 ms"}
CUBA_EQS = """dv/dt = (ge + gi - (v - El)) / taum : volt (unless refractory)
dge/dt = -ge / taue : volt
dgi/dt = -gi / taui : volt"""


def cuba_graph(seed):
    rng = np.random.default_rng(seed)
    n_exc = N_CUBA * 4 // 5
    conn = rng.random((N_CUBA, N_CUBA)) < 0.02
    np.fill_diagonal(conn, False)
    pre, post = np.nonzero(conn)  # pre-major, post ascending: CSR order
    exc = pre < n_exc
    counts = np.where(exc, 1, -1).astype(np.int32)
    we, wi = 60 * 0.27 / 10, -20 * 4.5 / 10  # in mV, as the example's (60*0.27/10)*mV
    weights = np.where(exc, we, wi)
    return pre, post, counts, weights, exc


def case_cuba(work, with_delays):
    name = "cuba_delays" if with_delays else "cuba"
    pre, post, counts, weights, exc = cuba_graph(7)
    delays = None
    if with_delays:
        rng = np.random.default_rng(11)
        # 0.1-3 ms in 0.05 ms: half of them at a tie between two steps
        delays = rng.integers(2, 61, len(pre)) * 0.05
    conn = os.path.join(work, name + "_conn")
    write_conn(conn, N_CUBA, pre, post, counts, weights=weights, delays=delays)
    model = f'''[model]
method = "euler"
equations = """
{CUBA_EQS}
"""
threshold = "v > Vt"
reset = "v = Vr"
refractory = "t_rfc"
on_pre_exc = "ge += w"
on_pre_inh = "gi += w"
weight = "weight * mV"
delay = "{'connectome' if with_delays else '0.1 ms'}"
refractory_input = "deliver"
[model.parameters]
{chr(10).join(f'{k} = "{v}"' for k, v in CUBA_PARAMS.items())}
[model.init]
v = "-55 mV"
'''
    ours = run_ours(work, name, conn, CUBA_MS, model)

    b2.start_scope()
    b2.prefs.codegen.target = "numpy"
    b2.defaultclock.dt = DT_MS * b2.ms
    ns = {k: eval(v.replace(" ", "*"), vars(b2)) for k, v in CUBA_PARAMS.items()}
    P = b2.NeuronGroup(N_CUBA, CUBA_EQS, threshold="v > Vt", reset="v = Vr", refractory="t_rfc", method="euler",
                       namespace=ns)
    P.v = -55 * b2.mV
    syn = []
    for sel, var in ((exc, "ge"), (~exc, "gi")):
        S = b2.Synapses(P, P, "w : volt", on_pre=f"{var} += w", namespace=ns)
        S.connect(i=pre[sel], j=post[sel])
        S.w = weights[sel] * b2.mV
        S.delay = (delays[sel] * b2.ms) if with_delays else DT_MS * b2.ms
        syn.append(S)
    M = b2.SpikeMonitor(P)
    net = b2.Network(P, *syn, M)
    net.run(CUBA_MS * b2.ms, namespace=ns)
    i2, s2 = spikes_of(M)
    ok, msg, n = compare(name, ours, i2, s2, [("v", ours["v"], np.asarray(P.v_[:]))])
    if with_delays:
        q = delays * 1e-3 / (DT_MS * 1e-3)
        steps = np.floor(q + 0.5)
        msg += (f"; delays {int(steps.min())}-{int(steps.max())} steps, {int(np.sum(q % 1 == 0.5))} exact ties "
                f"(rounded up, as Brian2's compiled queue)")
    return ok and n > 200, msg


# ---- (e) on_pre chosen by transmitter (on_pre_by): the CUBA network with a
# third synaptic variable. Each source's neurons.csv field of column
# "transmitter" picks its block: ACH -> ge, GABA -> gi, GLUT -> gcl (its own
# time constant); DA and empty fields have no block, so their edges deliver
# nothing. In Brian2 each transmitter's edges are their own Synapses object.
NT_EQS = """dv/dt = (ge + gi + gcl - (v - El)) / taum : volt (unless refractory)
dge/dt = -ge / taue : volt
dgi/dt = -gi / taui : volt
dgcl/dt = -gcl / taucl : volt"""
NT_BLOCKS = {"ACH": "ge", "GABA": "gi", "GLUT": "gcl"}


def transmitters(n, exc_n):
    """ACH, GLUT or DA for excitatory sources, GABA or nothing for inhibitory ones."""
    nt = []
    for i in range(n):
        if i < exc_n:
            nt.append(("ACH", "GLUT", "ACH", "DA")[i % 4])
        else:
            nt.append("" if i % 9 == 0 else "GABA")
    return nt


def add_column(path, name, values):
    """A neurons.csv column more (the manifest's digest updated)."""
    csv = os.path.join(path, "neurons.csv")
    rows = open(csv).read().splitlines()
    rows = [rows[0] + "," + name] + [r + "," + v for r, v in zip(rows[1:], values)]
    open(csv, "w").write("\n".join(rows) + "\n")
    man = json.load(open(os.path.join(path, "manifest.json")))
    man["files"]["neurons.csv"] = {"bytes": os.path.getsize(csv), "sha256": blconn._sha256(csv)}
    json.dump(man, open(os.path.join(path, "manifest.json"), "w"), indent=2)


def nt_model(weight="weight * mV", deliver='refractory_input = "deliver"'):
    return f'''[model]
method = "euler"
equations = """
{NT_EQS}
"""
threshold = "v > Vt"
reset = "v = Vr"
refractory = "t_rfc"
on_pre_by = "transmitter"
on_pre.ACH = "ge += w"
on_pre.GABA = "gi += w"
on_pre.GLUT = "gcl += w"
weight = "{weight}"
delay = "0.1 ms"
{deliver}
[model.parameters]
{chr(10).join(f'{k} = "{v}"' for k, v in CUBA_PARAMS.items())}
taucl = "15 ms"
[model.init]
v = "-55 mV"
'''


def case_transmitter(work):
    name = "transmitter"
    pre, post, counts, weights, exc = cuba_graph(7)
    nt = transmitters(N_CUBA, N_CUBA * 4 // 5)
    conn = os.path.join(work, name + "_conn")
    write_conn(conn, N_CUBA, pre, post, counts, weights=weights)
    add_column(conn, "transmitter", nt)
    ours = run_ours(work, name, conn, CUBA_MS, nt_model())

    b2.start_scope()
    b2.prefs.codegen.target = "numpy"
    b2.defaultclock.dt = DT_MS * b2.ms
    ns = {k: eval(v.replace(" ", "*"), vars(b2)) for k, v in CUBA_PARAMS.items()}
    ns["taucl"] = 15 * b2.ms
    P = b2.NeuronGroup(N_CUBA, NT_EQS, threshold="v > Vt", reset="v = Vr", refractory="t_rfc", method="euler",
                       namespace=ns)
    P.v = -55 * b2.mV
    syn = []
    src_nt = np.array(nt)[pre]
    for value, var in NT_BLOCKS.items():
        sel = src_nt == value
        S = b2.Synapses(P, P, "w : volt", on_pre=f"{var} += w", namespace=ns)
        S.connect(i=pre[sel], j=post[sel])
        S.w = weights[sel] * b2.mV
        S.delay = DT_MS * b2.ms
        syn.append(S)
    M = b2.SpikeMonitor(P)
    net = b2.Network(P, *syn, M)
    net.run(CUBA_MS * b2.ms, namespace=ns)
    i2, s2 = spikes_of(M)
    ok, msg, n = compare(name, ours, i2, s2, [("v", ours["v"], np.asarray(P.v_[:]))])
    counts_by = {v: int(np.sum(src_nt == v)) for v in ("ACH", "GABA", "GLUT", "DA", "")}
    msg += "; edges by transmitter " + ", ".join(f"{k or '(empty)'} {c}" for k, c in counts_by.items())
    return ok and n > 200, msg


def main():
    failures = 0
    # Brian2's numpy runtime uses its compiled spike queue (cspikequeue.cpp,
    # delays rounded as (int)(d/dt + 0.5)) when the extension is there, as in
    # Debian's python3-brian-lib; its pure-Python fallback rounds ties to even.
    q = type(b2.get_device().spike_queue(0, 1)).__module__
    print(f"Brian2 {b2.__version__}, spike queue {q}")
    if "cython" not in q:
        print("FAIL: Brian2 runs its pure-Python spike queue (ties rounded to even), not the compiled one")
        return 1
    with tempfile.TemporaryDirectory() as work:
        cases = (("stdp", case_stdp), ("stdp_delays", lambda w: case_stdp(w, True)),
                 ("cuba", lambda w: case_cuba(w, False)), ("cuba_delays", lambda w: case_cuba(w, True)),
                 ("transmitter", case_transmitter))
        for name, fn in cases:
            ok, msg = fn(work)
            print(f"{'ok' if ok else 'FAIL':4} {name:12} {msg}", flush=True)
            failures += not ok
    print(f"{len(cases) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
