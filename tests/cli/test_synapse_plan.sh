#!/usr/bin/env bash
# Synapses of equation models in connectome plans (docs/models.md "Synapses"):
# what is refused, and how (each message names the edge, line or key at
# fault); and facts the Brian2 oracle (oracle.test_synapses_brian2) does not
# pin: a delay tie rounds up, a sign-chosen on_pre with only on_pre_exc leaves
# inhibitory edges silent, the record holds final_w.npy only for a per-edge w;
# on_pre chosen by a neurons.csv column of the source (on_pre_by): its
# refusals, which block each source's edges run, and C. elegans's transmitter
# column on the reference and cpu backends, byte-identical.
set -euo pipefail
. "$(dirname "$0")/plan_common.sh"
python_test synplan <<'PY'
import glob, json, os, subprocess, sys
import h5py
import numpy as np
import blconn

cli, work = sys.argv[1], sys.argv[2]
fails = 0

def conn(name, pre, post, counts, weights=None, delays=None, n=4, dtype=np.float64):
    path = os.path.join(work, name)
    g = blconn.graph_from_edges(n, pre, post, counts, name)
    blconn.write_connectome(g, path)
    man = json.load(open(os.path.join(path, "manifest.json")))
    for fname, col in (("weights.npy", weights), ("delays.npy", delays)):
        if col is not None:
            np.save(os.path.join(path, fname), np.asarray(col, dtype))
            man["files"][fname] = {"bytes": os.path.getsize(os.path.join(path, fname)),
                                   "sha256": blconn._sha256(os.path.join(path, fname))}
    json.dump(man, open(os.path.join(path, "manifest.json"), "w"))
    return path

HEAD = """format = "brainlesslab-plan"
format_version = 4
id = "{id}"
operation = "connectome"
[connectome]
path = "{conn}"
[[stimulus]]
name = "in"
neurons = [0]
mode = "force"
schedule = "{sched}"
[run]
trials = 1
duration_ms = 3.0
seed = 1
backend = "reference"
threads = 1
[outputs]
spikes = true
counts = true
state = true
propagation = false
"""
MODEL = """[model]
method = "euler"
equations = \"\"\"
dv/dt = (El - v) / taum : volt
dg/dt = -g / taum : volt
\"\"\"
threshold = "v > vt"
reset = "v = El"
{extra}
[model.parameters]
El = "-60 mV"
vt = "-50 mV"
taum = "10 ms"
tau = "20 ms"
[model.init]
v = "-60 mV"
"""
np.save(os.path.join(work, "sched.npy"), np.array([[0, 0], [10, 0]], np.int64))

def run(name, c, extra, backend="reference"):
    plan = os.path.join(work, name + ".toml")
    head = HEAD.replace('backend = "reference"', f'backend = "{backend}"')
    open(plan, "w").write(head.format(id=name, conn=c, sched=os.path.join(work, "sched.npy")) + MODEL.format(extra=extra))
    r = subprocess.run([cli, "run", plan, "--root", os.path.join(work, "rec_" + name)], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr, os.path.join(work, "rec_" + name)

def refused(name, c, extra, *needles):
    global fails
    rc, out, _ = run(name, c, extra)
    ok = rc != 0 and all(n in out for n in needles)
    print(f"{'ok' if ok else 'FAIL':4} refused: {name}: " + (out.strip().splitlines()[-1] if out.strip() else "(no output)"))
    fails += not ok

def refused_at_check(name, c, extra, *needles):
    """The connectome's columns are checked when the plan loads it: `check`
    refuses, and `run` stops before it makes a record (no FAILED directory)."""
    global fails
    plan = os.path.join(work, name + "_check.toml")
    open(plan, "w").write(HEAD.format(id=name, conn=c, sched=os.path.join(work, "sched.npy")) + MODEL.format(extra=extra))
    r = subprocess.run([cli, "check", plan], capture_output=True, text=True)
    out = r.stdout + r.stderr
    root = os.path.join(work, "rec_check_" + name)
    r2 = subprocess.run([cli, "run", plan, "--root", root], capture_output=True, text=True)
    left = glob.glob(os.path.join(root, "*"))
    ok = r.returncode != 0 and all(n in out for n in needles) and r2.returncode != 0 and not left
    print(f"{'ok' if ok else 'FAIL':4} refused by check: {name}: " + (out.strip().splitlines()[-1] if out.strip() else "(no output)")
          + ("" if not left else f" (run left {left})"))
    fails += not ok

plain = conn("plain", [0, 0, 1], [1, 2, 3], [1, 1, -1])
withw = conn("withw", [0, 0, 1], [1, 2, 3], [1, 1, -1], weights=[0.5, 1.5, -2.0])
short = conn("short", [0, 0, 1], [1, 2, 3], [1, 1, -1], delays=[1.0, 0.04, 0.2])
tie = conn("tie", [0, 0], [1, 2], [1, 1], delays=[0.25, 0.45])
bad_w = os.path.join(work, "bad_w")
try:
    conn("bad_w", [0, 0, 1], [1, 2, 3], [1, 1, -1], weights=[0.5, float("nan"), 1.0])
except Exception as e:
    print("FAIL writing bad_w", e); fails += 1
bad_d = conn("bad_d", [0, 0, 1], [1, 2, 3], [1, 1, -1], delays=[1.0, 0.5, -0.1])
f32 = conn("f32", [0, 0, 1], [1, 2, 3], [1, 1, -1], weights=[0.5, 1.0, 1.0], dtype=np.float32)
longw = conn("longw", [0, 0, 1], [1, 2, 3], [1, 1, -1], weights=[0.5, 1.0, 1.0, 2.0])

refused("delay_below_step", short, 'on_pre = "g += w"\nweight = "count * mV"\ndelay = "connectome"',
        "edge 1", "delays.npy", "smallest delay is one step")
refused("no_delay_column", plain, 'on_pre = "g += w"\nweight = "count * mV"\ndelay = "connectome"', "no delays.npy")
refused("no_weight_column", plain, 'on_pre = "g += w"\nweight = "weight * mV"\ndelay = "0.1 ms"', "no weights.npy")
refused("weight_nan", bad_w, 'on_pre = "g += w"\nweight = "weight * mV"\ndelay = "0.1 ms"', "weights.npy", "edge 1")
refused("delay_negative", bad_d, 'on_pre = "g += w"\nweight = "count * mV"\ndelay = "connectome"', "delays.npy", "edge 2")
refused("weight_float32", f32, 'on_pre = "g += w"\nweight = "weight * mV"\ndelay = "0.1 ms"', "weights.npy")
refused("weight_length", longw, 'on_pre = "g += w"\nweight = "weight * mV"\ndelay = "0.1 ms"', "weights.npy",
        "n_edges is 3")
refused_at_check("delay_below_step", short, 'on_pre = "g += w"\nweight = "count * mV"\ndelay = "connectome"',
                 "connectome.path", "edge 1", "delays.npy", "smallest delay is one step")
refused_at_check("no_delay_column", plain, 'on_pre = "g += w"\nweight = "count * mV"\ndelay = "connectome"',
                 "no delays.npy")
refused_at_check("no_weight_column", plain, 'on_pre = "g += w"\nweight = "weight * mV"\ndelay = "0.1 ms"',
                 "no weights.npy")
refused("event_driven_form", plain,
        'synapses = """\nw : volt\ndapre/dt = -apre/tau + 1/tau : 1 (event-driven)\n"""\non_pre = "g += w"\n'
        'weight = "count * mV"\ndelay = "0.1 ms"', "synapses line 2", "pure decays")
refused("not_event_driven", plain,
        'synapses = """\nw : volt\ndapre/dt = -apre/tau : 1\n"""\non_pre = "g += w"\nweight = "count * mV"\ndelay = "0.1 ms"',
        "synapses line 2", "(event-driven)")
refused("edge_var_in_on_input", plain,
        'synapses = """\nw : volt\n"""\non_pre = "g += w"\non_input = "v += w"\nweight = "count * mV"\ndelay = "0.1 ms"',
        "on_input", "'w' is a per-edge variable")
refused("on_pre_and_exc", plain, 'on_pre = "g += w"\non_pre_exc = "g += w"\nweight = "count * mV"\ndelay = "0.1 ms"',
        "not both")
refused("on_post_without_synapses", plain, 'on_pre = "g += w"\non_post = "g += 1*mV"\nweight = "count * mV"\n'
        'delay = "0.1 ms"', "on_post", "synapses")
refused("w_dimension", plain, 'synapses = """\nw : 1\n"""\non_pre = "g += w*mV"\nweight = "count * mV"\ndelay = "0.1 ms"',
        "weight", "dimension")
refused("refractory_input_value", plain, 'on_pre = "g += w"\nweight = "count * mV"\ndelay = "0.1 ms"\n'
        'refractory_input = "sometimes"', "refractory_input")

# A delay tie rounds up, as Brian2's compiled spike queue: 0.25 ms is 2.5
# steps of 0.1 ms -> 3 and 0.45 ms is 4.5 -> 5 (round-half-even: 2 and 4).
# Neuron 0 is forced at steps 0 and 10; its edges have no other effect than
# jump of v in neurons 1 and 2, over threshold at the step after delivery.
rc, out, rec = run("tie", tie, 'on_pre = "v += 20*mV"\nweight = "count * mV"\ndelay = "connectome"')
spk = []
if rc == 0:
    (d,) = glob.glob(os.path.join(rec, "*/"))
    with h5py.File(os.path.join(d, "spikes", "trial-0000.h5")) as h:
        (p,) = list(h["spikes"])
        spk = sorted(zip(np.rint(h["spikes"][p]["timestamps"][()] / 0.1).astype(int).tolist(),
                         h["spikes"][p]["node_ids"][()].tolist()))
# neuron 1 is pushed over threshold at delivery step 0 + 3 and spikes at the next threshold (step 4)
want = [(0, 0), (4, 1), (6, 2), (10, 0), (14, 1), (16, 2)]
ok = rc == 0 and spk == want
print(f"{'ok' if ok else 'FAIL':4} delay ties round up: spikes {spk}" + ("" if ok else f" (want {want}) {out[-300:]}"))
fails += not ok

# on_pre_exc only: the inhibitory edge (1 -> 3) delivers nothing; no per-edge w, no final_w.npy.
rc, out, rec = run("exc_only", withw, 'on_pre_exc = "v += w"\nweight = "weight * 40*mV"\ndelay = "0.1 ms"\n'
                   'refractory_input = "deliver"')
ok = rc == 0 and not glob.glob(os.path.join(rec, "*", "final_w.npy"))
v = np.load(glob.glob(os.path.join(rec, "*", "final_v.npy"))[0])[0] if rc == 0 else None
# neurons 1 and 2 spiked (their excitatory input: 2 of 2 at depth 1), and the inhibitory
# edge 1 -> 3 carried nothing: v[3] is still exactly -60 mV
ok = ok and v is not None and v[3] == -60 * 0.001 and "2        2" in out
print(f"{'ok' if ok else 'FAIL':4} on_pre_exc alone: inhibitory edges silent (v[3] = {None if v is None else v[3]!r}), "
      "no final_w.npy without a per-edge w" + ("" if ok else out[-300:]))
fails += not ok

# ---- on_pre chosen by a neurons.csv column of the source (on_pre_by)
def with_column(path, name, values):
    csv = os.path.join(path, "neurons.csv")
    rows = open(csv).read().splitlines()
    open(csv, "w").write("\n".join([rows[0] + "," + name] + [r + "," + v for r, v in zip(rows[1:], values)]) + "\n")
    man = json.load(open(os.path.join(path, "manifest.json")))
    man["files"]["neurons.csv"] = {"bytes": os.path.getsize(csv), "sha256": blconn._sha256(csv)}
    json.dump(man, open(os.path.join(path, "manifest.json"), "w"))
    return path

# 0 -> 1, 0 -> 2 (source A), 1 -> 3 (source B), 2 -> 3 (source C, no block)
nt = with_column(conn("nt", [0, 0, 1, 2], [1, 2, 3, 3], [1, 1, 1, 1]), "nt", ["A", " A ", "B", "C"])
refused("by_and_on_pre", nt, 'on_pre_by = "nt"\non_pre = "g += w"\nweight = "count * mV"\ndelay = "0.1 ms"',
        "on_pre_by", "not both")
refused("by_and_exc", nt, 'on_pre_by = "nt"\non_pre_exc = "g += w"\non_pre.A = "g += w"\nweight = "count * mV"\n'
        'delay = "0.1 ms"', "on_pre_by", "on_pre_exc", "not both")
refused("table_without_by", nt, 'on_pre.A = "g += w"\nweight = "count * mV"\ndelay = "0.1 ms"', "needs on_pre_by")
refused("by_without_table", nt, 'on_pre_by = "nt"\nweight = "count * mV"\ndelay = "0.1 ms"', "on_pre_by", "'nt'",
        "no blocks")
refused("by_entry_not_string", nt, 'on_pre_by = "nt"\non_pre.A = 3\nweight = "count * mV"\ndelay = "0.1 ms"',
        "model.on_pre.A", "string")
refused("by_entry_bad_statement", nt, 'on_pre_by = "nt"\non_pre.A = "g += w"\non_pre.B = "zz += w"\n'
        'weight = "count * mV"\ndelay = "0.1 ms"', "on_pre.B", "zz")
refused_at_check("by_unknown_column", nt, 'on_pre_by = "transmitter"\non_pre.A = "g += w"\nweight = "count * mV"\n'
                 'delay = "0.1 ms"', "model.on_pre_by", "no column 'transmitter'", "nt")
# A and B push v over threshold, C has no block: neurons 1 and 2 spike after
# 0's forced spikes (A, with spaces around it in the field), 3 after 1's (B),
# and 2's spikes (C) add nothing to 3, whose v is B's jump alone.
for backend in ("reference", "cpu"):
    rc, out, rec = run("by_" + backend, nt, 'on_pre_by = "nt"\non_pre.A = "v += 20*mV"\non_pre.B = "v += 11*mV"\n'
                       'weight = "count * mV"\ndelay = "0.1 ms"', backend)
    spk = []
    if rc == 0:
        (d,) = glob.glob(os.path.join(rec, "*/"))
        with h5py.File(os.path.join(d, "spikes", "trial-0000.h5")) as h:
            (p,) = list(h["spikes"])
            spk = sorted(zip(np.rint(h["spikes"][p]["timestamps"][()] / 0.1).astype(int).tolist(),
                             h["spikes"][p]["node_ids"][()].tolist()))
    want = [(0, 0), (2, 1), (2, 2), (4, 3), (10, 0), (12, 1), (12, 2), (14, 3)]
    ok = rc == 0 and spk == want
    print(f"{'ok' if ok else 'FAIL':4} on_pre_by ({backend}): blocks by the source's field, a value without one "
          f"silent: spikes {spk}" + ("" if ok else f" (want {want}) {out[-300:]}"))
    fails += not ok

# The shipped C. elegans connectome's own transmitter column: acetylcholine
# -> ge, GABA -> gi, glutamate -> gcl (its own time constant); the other
# transmitters (dopamine, serotonin, ...) and empty fields have no block.
# The reference and the cpu kernel (2 threads) give the same bytes.
CE = os.path.join(os.environ.get("BL_SOURCE_DIR", "."), "data", "connectomes", "celegans-varshney2011")
CE_PLAN = """format = "brainlesslab-plan"
format_version = 4
id = "{id}"
operation = "connectome"
[connectome]
path = "{conn}"
[[stimulus]]
name = "drive"
neurons = [0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80]
rate_hz = 200.0
[run]
trials = 2
duration_ms = 100.0
seed = 3
backend = "{backend}"
threads = 2
[outputs]
spikes = true
counts = true
state = true
propagation = false
[model]
method = "euler"
equations = \"\"\"
dv/dt = (ge + gi + gcl - (v - El)) / taum : volt (unless refractory)
dge/dt = -ge / taue : volt
dgi/dt = -gi / taui : volt
dgcl/dt = -gcl / taucl : volt
\"\"\"
threshold = "v > Vt"
reset = "v = Vr"
refractory = "2 ms"
on_pre_by = "transmitter"
on_input = "v += 4*mV"
weight = "count * 0.9 * mV"
delay = "0.5 ms"
[model.on_pre]
Acetylcholine = "ge += w"
GABA = "gi += w"
Glutamate = "gcl += w"
[model.parameters]
El = "-60 mV"
Vt = "-50 mV"
Vr = "-60 mV"
taum = "20 ms"
taue = "5 ms"
taui = "10 ms"
taucl = "15 ms"
"""
if not os.path.exists(os.path.join(CE, "neurons.csv")):
    print(f"FAIL C. elegans connectome not found at {CE} (BL_SOURCE_DIR)")
    fails += 1
else:
    recs = {}
    for backend in ("reference", "cpu"):
        plan = os.path.join(work, f"ce_{backend}.toml")
        open(plan, "w").write(CE_PLAN.format(id="ce_" + backend, conn=os.path.abspath(CE), backend=backend))
        root = os.path.join(work, "rec_ce_" + backend)
        r = subprocess.run([cli, "run", plan, "--root", root], capture_output=True, text=True,
                           env=dict(os.environ, OMP_WAIT_POLICY="passive", BL_CPU_PARTITION_MIN_EDGES="1"))
        recs[backend] = glob.glob(os.path.join(root, "*/"))[0] if r.returncode == 0 else None
        if r.returncode:
            print(f"FAIL C. elegans on_pre_by ({backend}): {(r.stdout + r.stderr)[-400:]}")
    ref, cpu = recs["reference"], recs["cpu"]
    if ref and cpu:
        names = ["counts.npy", "final_v.npy", "final_g.npy"] + sorted(
            os.path.relpath(f, ref) for f in glob.glob(os.path.join(ref, "spikes", "**", "*"), recursive=True)
            if os.path.isfile(f))
        bad = [f for f in names if open(os.path.join(ref, f), "rb").read() != open(os.path.join(cpu, f), "rb").read()]
        log = open(os.path.join(cpu, "run.log")).read()
        n = int(np.load(os.path.join(ref, "counts.npy")).sum())
        ok = not bad and "backend cpu" in log and n > 50
        print(f"{'ok' if ok else 'FAIL':4} C. elegans, on_pre by its transmitter column: {n} spikes in 2 trials, "
              f"reference and cpu (2 threads) " + ("byte-identical" if not bad else f"differ in {bad}")
              + ("" if "backend cpu" in log else " (cpu did not run on the cpu backend)"))
        fails += not ok
    else:
        fails += 1

print(f"{'FAIL' if fails else 'ok'}: {fails} failure(s)")
sys.exit(1 if fails else 0)
PY
