#!/usr/bin/env bash
# The shiu2024 alias on the exactness cases (tests/cli/exact_cases.py's
# shapes, as plans): `preset = "shiu2024"` (the hand-written kernel) and
# `file = models/shiu2024.toml` (the shipped text, compiled and interpreted)
# give the same bytes of counts, final v and g and every trial's spikes on
# C. elegans, the larva with a stimulus window, a 4000-neuron synthetic graph
# with silenced neurons, and runaway activity (w_syn 2 mV: the file's copy
# with that one parameter changed), with the durations, trials, seeds and
# populations of the backends' cases.
set -euo pipefail
. "$(dirname "$0")/plan_common.sh"
need_larva
plan_work model_exact
exec /usr/bin/python3 - "$BL_CLI" "$root" "$work" <<'PY'
import os, subprocess, sys
import numpy as np
cli, root, work = sys.argv[1:4]
subprocess.run([cli, "synth", "--out", os.path.join(work, "synth"), "--neurons", "4000", "--mean-degree", "40",
                "--seed", "11"], check=True, stdout=subprocess.DEVNULL)
shipped = open(os.path.join(root, "models", "shiu2024.toml")).read()
os.makedirs(os.path.join(work, "models"))
open(os.path.join(work, "models", "shiu2024.toml"), "w").write(shipped)
assert 'w_syn = "0.275 mV"' in shipped
open(os.path.join(work, "models", "shiu2024-w2.toml"), "w").write(shipped.replace('w_syn = "0.275 mV"', 'w_syn = "2.0 mV"'))

def n_of(conn):
    return len(np.load(os.path.join(conn, "offsets.npy"))) - 1

def pop(conn, n, stride):
    return sorted(set(int(x) for x in np.arange(n, dtype=np.int64) * stride % n_of(conn)))

celegans = os.path.join(root, "data/connectomes/celegans-varshney2011")
larva = os.path.join(root, "data/connectomes/larva-winding2023")
synth = os.path.join(work, "synth")
cases = [  # name, connectome, trials, duration, seed, stimulus, silence, w_syn_mv
    ("celegans", celegans, 3, 1000.0, 5, {"neurons": pop(celegans, 20, 13), "rate_hz": 180.0}, None, None),
    ("larva", larva, 2, 1000.0, 6, {"neurons": pop(larva, 40, 71), "rate_hz": 150.0, "start_ms": 100.0,
                                    "stop_ms": 800.0}, None, None),
    ("synthetic", synth, 3, 1000.0, 7, {"neurons": pop(synth, 30, 131), "rate_hz": 200.0}, pop(synth, 5, 977), None),
    ("runaway", synth, 2, 200.0, 8, {"neurons": pop(synth, 400, 7), "rate_hz": 300.0}, None, 2.0),
]
bad = 0
for name, conn, trials, dur, seed, stim, silence, w in cases:
    body = f'format = "brainlesslab-plan"\nformat_version = 4\nid = "exact-{name}"\noperation = "connectome"\n'
    body += f'[connectome]\npath = "{conn}"\n'
    tail = '[[stimulus]]\nname = "S"\n' + "".join(
        f"{k} = {v!r}\n" if not isinstance(v, list) else f"{k} = {v}\n" for k, v in stim.items())
    if silence:
        tail += f'[[silence]]\nname = "Q"\nneurons = {silence}\n'
    tail += f'[run]\ntrials = {trials}\nduration_ms = {dur}\nseed = {seed}\nbackend = "reference"\n'
    preset = '[model]\npreset = "shiu2024"\n' + (f"[model.parameters]\nw_syn_mv = {w}\n" if w else "")
    fileb = '[model]\nfile = "models/%s"\n' % ("shiu2024-w2.toml" if w else "shiu2024.toml")
    recs = {}
    for kind, model in (("preset", preset), ("file", fileb)):
        plan = os.path.join(work, f"{name}-{kind}.toml")
        open(plan, "w").write(body + model + tail)
        rr = os.path.join(work, f"rec-{name}-{kind}")
        r = subprocess.run([cli, "run", plan, "--root", rr, "--quiet"], capture_output=True, text=True)
        if r.returncode:
            print(r.stdout, r.stderr)
            sys.exit(f"FAIL: {name} {kind}: run failed")
        recs[kind] = os.path.join(rr, os.listdir(rr)[0])
    files = ["counts.npy", "final_v.npy", "final_g.npy"] + [f"spikes/trial-{t:04d}.h5" for t in range(trials)]
    diff = [f for f in files if open(os.path.join(recs["preset"], f), "rb").read() !=
            open(os.path.join(recs["file"], f), "rb").read()]
    spikes = int(np.load(os.path.join(recs["preset"], "counts.npy")).sum())
    if diff or spikes == 0:
        print(f"FAIL {name}: differ {diff}, {spikes} spikes")
        bad = 1
    else:
        print(f"identical {name}: {spikes} spikes, counts, final v and g, {trials} trials' spikes")
print("FAIL" if bad else "ok")
sys.exit(bad)
PY
