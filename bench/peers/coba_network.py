#!/usr/bin/python3
"""Inputs of the COBA workload of `brainlesslab bench` (docs/benchmark.md,
"COBA"): the Vogels-Abbott network of Brian2's examples/COBA.py (4,000
neurons, 2 % connectivity, 80/20 excitatory/inhibitory), written once for
both sides, so that ours and Brian2 run the same connectome from the same
start.

    coba_network.py --out DIR

DIR gets (written under DIR.tmp, then renamed, so a half-written DIR never
exists):
  conn/            the connectome (tests/oracles/blconn.py's writer) with
                   weights.npy in nS: 6 from excitatory sources, 67 from
                   inhibitory ones; the edge's sign chooses on_pre_exc or
                   on_pre_inh
  forced.npy       (step, neuron) int64 rows: the 400 neurons that spike at
                   step 0 (the shared start)
  pre.npy, post.npy, exc.npy, w.npy, sel.npy: the same edges, excitatory
                   flags, weights and forced neurons for bench/peers/brian2_coba.py
  coba.toml        the connectome plan ours runs (`brainlesslab simulate
                   --plan`): the model as equations (exponential_euler,
                   delay one step, refractory input delivered), the forced
                   start; paths relative to the plan
  network.json     what was made (counts, seed)
The connectome is seeded (numpy default_rng(20261202)), the same network the
earlier standalone script (bench/coba.py, receipt 2026-12-02) ran."""
import argparse
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "oracles"))
import blconn  # noqa: E402

N, P, SEED, N_FORCED = 4000, 0.02, 20261202, 400

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


def make(out):
    rng = np.random.default_rng(SEED)
    conn = rng.random((N, N)) < P
    np.fill_diagonal(conn, False)
    pre, post = np.nonzero(conn)  # CSR order
    exc = pre < N * 4 // 5
    w = np.where(exc, 6.0, 67.0)
    g = blconn.graph_from_edges(N, pre, post, np.where(exc, 1, -1).astype(np.int32), "coba")
    d = os.path.join(out, "conn")
    blconn.write_connectome(g, d)
    man_path = os.path.join(d, "manifest.json")
    with open(man_path) as f:
        man = json.load(f)
    np.save(os.path.join(d, "weights.npy"), w, allow_pickle=False)
    man["files"]["weights.npy"] = {"bytes": os.path.getsize(os.path.join(d, "weights.npy")),
                                   "sha256": blconn._sha256(os.path.join(d, "weights.npy"))}
    with open(man_path, "w") as f:
        json.dump(man, f, indent=2)
    forced = np.sort(rng.choice(N, N_FORCED, replace=False)).astype(np.int64)
    np.save(os.path.join(out, "forced.npy"), np.stack([np.zeros_like(forced), forced], 1))
    for k, v in (("pre", pre), ("post", post), ("exc", exc), ("w", w), ("sel", forced)):
        np.save(os.path.join(out, k + ".npy"), v)
    with open(os.path.join(out, "coba.toml"), "w") as f:
        f.write('''format = "brainlesslab-plan"
format_version = 4
id = "bench-coba"
operation = "connectome"
[connectome]
path = "conn"
[[stimulus]]
name = "start"
neurons = [%s]
mode = "force"
schedule = "forced.npy"
[run]
trials = 1
duration_ms = 1000.0
seed = 1
backend = "cpu"
threads = 1
[outputs]
spikes = true
counts = true
state = true
propagation = false
''' % ", ".join(str(int(x)) for x in forced) + MODEL)
    with open(os.path.join(out, "network.json"), "w") as f:
        json.dump({"neurons": N, "connection_probability": P, "edges": int(len(pre)),
                   "excitatory_edges": int(exc.sum()), "seed": SEED, "forced_at_step_0": N_FORCED,
                   "generator": "numpy.random.default_rng(%d): rng.random((N, N)) < p, no self-edges; "
                                "then rng.choice(N, %d, replace=False)" % (SEED, N_FORCED)}, f, indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    tmp = a.out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    make(tmp)
    shutil.rmtree(a.out, ignore_errors=True)
    os.rename(tmp, a.out)
    print("coba_network: %s" % a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
