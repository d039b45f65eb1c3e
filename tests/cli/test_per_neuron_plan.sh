#!/usr/bin/env bash
# [model.per_neuron] in connectome plans (docs/models.md "Per-neuron
# parameters"): a per-neuron parameter from a neurons.csv column (times its
# unit) or drawn with the plan's counter-based stream.
#  1. column: a run with tau from a column equals, neuron by neuron, runs with
#     the column's value as a constant "X ms" (final_v byte-identical), and a
#     column holding one value everywhere gives the constant plan's bytes;
#  2. drawn: `v : volt` drawn, so final_v is the draws themselves: equal to an
#     independent Philox4x32-10 + Box-Muller (blconn.py, Python's glibc math),
#     the same in every trial and for any threads/backend, different per seed;
#  3. refusals by `check`, naming the key and the neuron: a missing column, a
#     non-numeric value, a unit of the wrong dimension, a name that is not a
#     per-neuron parameter, a missing unit;
#  4. the resolved plan records the table (the hash changes with the column);
#  5. (a neighbour) the warning for an unstable explicit method reaches the
#     run log and the record's log.
set -euo pipefail
. "$(dirname "$0")/plan_common.sh"
python_test pnplan <<'PY'
import glob, json, math, os, subprocess, sys
import numpy as np
import blconn

cli, work = sys.argv[1], sys.argv[2]
fails = 0
N = 6

def conn(name, cols):
    """A small connectome whose neurons.csv has the metadata columns `cols`."""
    path = os.path.join(work, name)
    g = blconn.graph_from_edges(N, [0, 1, 2], [1, 2, 3], [1, 2, -1], name)
    blconn.write_connectome(g, path)
    with open(os.path.join(path, "neurons.csv"), "w", newline="\n") as f:
        f.write(",".join(["index", "external_id"] + list(cols)) + "\n")
        for i in range(N):
            f.write(",".join([str(i), f"n{i}"] + [str(cols[c][i]) for c in cols]) + "\n")
    man = json.load(open(os.path.join(path, "manifest.json")))
    p = os.path.join(path, "neurons.csv")
    man["files"]["neurons.csv"] = {"bytes": os.path.getsize(p), "sha256": blconn._sha256(p)}
    json.dump(man, open(os.path.join(path, "manifest.json"), "w"))
    return path

HEAD = """format = "brainlesslab-plan"
format_version = 4
id = "{id}"
operation = "connectome"
[connectome]
path = "{conn}"
[run]
trials = {trials}
duration_ms = 5.0
seed = {seed}
backend = "{backend}"
threads = {threads}
[outputs]
spikes = true
counts = true
state = true
propagation = false
"""
LIF = """[model]
method = "euler"
equations = \"\"\"
dv/dt = (E - v) / tau : volt
tau : second
\"\"\"
threshold = "v > vt"
reset = "v = El"
on_pre = "v += w"
weight = "count * mV"
delay = "0.1 ms"
[model.parameters]
E = "-40 mV"
El = "-60 mV"
vt = "-30 mV"
{tau}
[model.init]
v = "-60 mV"
{pn}
"""

def plan(name, c, model, trials=1, seed=1, backend="reference", threads=1):
    p = os.path.join(work, name + ".toml")
    open(p, "w").write(HEAD.format(id=name, conn=c, trials=trials, seed=seed, backend=backend, threads=threads) + model)
    return p

def run(p):
    root = os.path.join(work, "rec_" + os.path.basename(p)[:-5])
    r = subprocess.run([cli, "run", p, "--root", root], capture_output=True, text=True)
    if r.returncode:
        return None, r.stdout + r.stderr
    (d,) = glob.glob(os.path.join(root, "*/"))
    return d, r.stdout + r.stderr

def final_v(d):
    return np.load(os.path.join(d, "final_v.npy"))

def check(name, cond, detail=""):
    global fails
    print(f"{'ok' if cond else 'FAIL':4} {name}" + (f": {detail}" if detail else ""))
    fails += not cond

# 1. column
taus = [10, 20, 12.5, 7, 30, 20]
c = conn("c", {"tau_ms": taus, "label": ["a", "b", "c", "d", "e", "f"], "same": [20] * N})
d, out = run(plan("col", c, LIF.format(tau="", pn='[model.per_neuron]\ntau = { column = "tau_ms", unit = "ms" }')))
check("column: runs", d is not None, out[-300:] if d is None else "")
vcol = final_v(d)[0] if d else None
for t in sorted(set(taus)):
    dk, out = run(plan(f"const_{str(t).replace('.', '_')}", c, LIF.format(tau=f'tau = "{t} ms"', pn="")))
    vk = final_v(dk)[0] if dk else None
    idx = [i for i in range(N) if taus[i] == t]
    same = vcol is not None and vk is not None and all(vcol[i].tobytes() == vk[i].tobytes() for i in idx)
    check(f"column: neurons {idx} (tau_ms {t}) equal a constant tau = \"{t} ms\" bit for bit", same,
          "" if same else f"{vcol} vs {vk}")
d_same, _ = run(plan("col_same", c, LIF.format(tau="", pn='[model.per_neuron]\ntau = { column = "same", unit = "ms" }')))
d_c20, _ = run(plan("const_20b", c, LIF.format(tau='tau = "20 ms"', pn="")))
check("column with one value everywhere == the constant plan (final_v bytes)",
      d_same and d_c20 and open(os.path.join(d_same, "final_v.npy"), "rb").read()[-N * 8:] ==
      open(os.path.join(d_c20, "final_v.npy"), "rb").read()[-N * 8:])
# the cpu backend (partition kernel) starts from the same values
dcpu, out = run(plan("col_cpu", c, LIF.format(tau="", pn='[model.per_neuron]\ntau = { column = "tau_ms", unit = "ms" }'),
                     backend="cpu", threads=2))
check("column: cpu backend at 2 threads == reference", dcpu is not None and vcol is not None and
      final_v(dcpu)[0].tobytes() == vcol.tobytes(), out[-300:] if dcpu is None else "")

# ... and under mpirun with 2 ranks (each rank's share of the neurons starts from the column)
import shutil
if shutil.which("mpirun"):
    p = plan("col_mpi", c, LIF.format(tau="", pn='[model.per_neuron]\ntau = { column = "tau_ms", unit = "ms" }'),
             backend="mpi")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1", OMPI_MCA_btl="self,vader",
               OMP_WAIT_POLICY="passive")
    if os.environ.get("BL_SANITIZED") == "1":
        # Open MPI's own allocations outlive MPI_Finalize (as test_resume says).
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    root = os.path.join(work, "rec_col_mpi")
    r = subprocess.run(["timeout", "300", "mpirun", "-np", "2", cli, "run", p, "--root", root, "--quiet"],
                       capture_output=True, text=True, env=env)
    dm = glob.glob(os.path.join(root, "*/"))
    check("column: mpi backend, 2 ranks == reference", r.returncode == 0 and len(dm) == 1 and vcol is not None
          and final_v(dm[0])[0].tobytes() == vcol.tobytes(), (r.stdout + r.stderr)[-300:] if r.returncode else "")
else:
    print("skip mpi: no mpirun")

# 2. drawn: v itself a per-neuron parameter, so final_v is the draws
DRAW = """[model]
method = "euler"
equations = \"\"\"
v : volt
\"\"\"
threshold = "v > vt"
delay = "0.1 ms"
[model.parameters]
vt = "0 mV"
[model.per_neuron]
v = {{ {dist} }}
"""
def philox_normal(seed, k, neuron):
    w = [int(x) for x in blconn.philox4x32_10(0, neuron, 0xD0000000 | k, 0xFFFFFFFF, seed & 0xFFFFFFFF, seed >> 32)]
    u1 = (((w[0] << 32) | w[1]) >> 11) * 2.0 ** -53
    u2 = (((w[2] << 32) | w[3]) >> 11) * 2.0 ** -53
    return u1, u2, math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(6.283185307179586 * u2)

seed = 20240611
d, out = run(plan("normal", c, DRAW.format(dist='normal = ["-60 mV", "2 mV"]'), trials=2, seed=seed))
mean, sd = -60 * 0.001, 2 * 0.001
want = np.array([mean + sd * philox_normal(seed, 0, i)[2] for i in range(N)])
got = final_v(d) if d else None
check("normal: every neuron's value == independent Philox + Box-Muller (bit for bit), both trials",
      got is not None and got[0].tobytes() == want.tobytes() and got[1].tobytes() == want.tobytes(),
      out[-300:] if got is None else f"{got[0][:3]} vs {want[:3]}")
d, out = run(plan("uniform", c, DRAW.format(dist='uniform = ["-70 mV", "-50 mV"]'), seed=seed))
lo, hi = -70 * 0.001, -50 * 0.001
want = np.array([lo + (hi - lo) * philox_normal(seed, 0, i)[0] for i in range(N)])
got = final_v(d) if d else None
check("uniform: == lo + (hi - lo) * u (bit for bit)", got is not None and got[0].tobytes() == want.tobytes(),
      out[-300:] if got is None else f"{got[0][:3]} vs {want[:3]}")
d2, _ = run(plan("normal_seed2", c, DRAW.format(dist='normal = ["-60 mV", "2 mV"]'), seed=seed + 1))
check("normal: another seed draws other values", d2 is not None and final_v(d2)[0][0] != final_v(
      glob.glob(os.path.join(work, "rec_normal", "*/"))[0])[0][0])

# 3. refusals by check, naming the key (and the neuron)
def refused(name, c, model, *needles):
    global fails
    p = plan(name, c, model)
    r = subprocess.run([cli, "check", p], capture_output=True, text=True)
    out = (r.stdout + r.stderr).strip()
    ok = r.returncode != 0 and all(n in out for n in needles)
    print(f"{'ok' if ok else 'FAIL':4} refused: {name}: {out.splitlines()[-1] if out else '(no output)'}")
    fails += not ok

refused("missing_column", c, LIF.format(tau="", pn='[model.per_neuron]\ntau = { column = "tau_s", unit = "ms" }'),
        "model.per_neuron.tau", "no column 'tau_s'", "tau_ms")
refused("not_numeric", c, LIF.format(tau="", pn='[model.per_neuron]\ntau = { column = "label", unit = "ms" }'),
        "model.per_neuron.tau", "neuron 0 (id n0)", "'a' is not a finite number")
refused("unit_dimension", c, LIF.format(tau="", pn='[model.per_neuron]\ntau = { column = "tau_ms", unit = "mV" }'),
        "model.per_neuron.tau.unit", "dimension mismatch")
refused("no_unit", c, LIF.format(tau="", pn='[model.per_neuron]\ntau = { column = "tau_ms" }'),
        "model.per_neuron.tau", "give the column's unit")
refused("not_a_parameter", c, LIF.format(tau='tau = "10 ms"', pn='[model.per_neuron]\nE = { column = "tau_ms", unit = "mV" }'),
        "model.per_neuron.E", "no per-neuron parameter 'E'")
refused("state_variable", c, LIF.format(tau="", pn='[model.per_neuron]\nv = { normal = ["1 mV", "1 mV"] }'),
        "model.per_neuron.v", "no per-neuron parameter 'v'")
refused("both", c, LIF.format(tau="", pn='[model.per_neuron]\ntau = { column = "tau_ms", unit = "ms", normal = ["1 ms", "1 ms"] }'),
        "model.per_neuron.tau", "either column")
refused("normal_dimension", c, LIF.format(tau="", pn='[model.per_neuron]\ntau = { normal = ["10 mV", "1 ms"] }'),
        "model.per_neuron.tau.normal[0]", "dimension mismatch")
refused("negative_sd", c, LIF.format(tau="", pn='[model.per_neuron]\ntau = { normal = ["10 ms", "-1 ms"] }'),
        "model.per_neuron.tau.normal", "negative")
refused("unknown_key", c, LIF.format(tau="", pn='[model.per_neuron]\ntau = { colum = "tau_ms" }'),
        "model.per_neuron.tau", "unknown key 'colum'")

CUR = """[model]
method = "euler"
equations = \"\"\"
dv/dt = (E - v) / tau + I_inj / C : volt
I_inj : amp
\"\"\"
threshold = "v > vt"
delay = "0.1 ms"
[model.parameters]
E = "-60 mV"
vt = "0 mV"
tau = "10 ms"
C = "200 pF"
[model.per_neuron]
I_inj = { uniform = ["0 nA", "1 nA"] }
[[stimulus]]
name = "drive"
neurons = [0, 1]
current = "dc"
amplitude = "0.5 nA"
"""
refused("current_on_per_neuron", c, CUR, "stimulus[0].variable", "'I_inj' is set by [model.per_neuron]")

# model run (independent neurons, no connectome) refuses per_neuron and names --init; model check reads it
mf = os.path.join(work, "pn_model.toml")
open(mf, "w").write(LIF.format(tau="", pn='[model.per_neuron]\ntau = { column = "tau_ms", unit = "ms" }'))
r = subprocess.run([cli, "model", "run", mf, "--duration", "1", "--dt", "0.1", "--out", os.path.join(work, "mr")],
                   capture_output=True, text=True)
check("model run refuses [model.per_neuron], pointing to --init", r.returncode != 0 and "--init" in r.stderr
      and "per_neuron" in r.stderr, (r.stdout + r.stderr).strip()[-200:])
open(mf, "w").write(LIF.format(tau="", pn='[model.per_neuron]\ntau = { column = "tau_ms", unit = "mV" }'))
r = subprocess.run([cli, "model", "check", mf], capture_output=True, text=True)
check("model check refuses a per_neuron unit of the wrong dimension", r.returncode != 0 and
      "model.per_neuron.tau.unit" in r.stderr, (r.stdout + r.stderr).strip()[-200:])

# 4. the resolved plan records the table: another column, another hash
def plan_hash(p):
    r = subprocess.run([cli, "check", p], capture_output=True, text=True)
    import re
    m = re.search(r"plan hash: ([0-9a-f]{64})", r.stdout)
    return m.group(1) if r.returncode == 0 and m else None
h1 = plan_hash(os.path.join(work, "col.toml"))
h2 = plan_hash(os.path.join(work, "col_same.toml"))
check("the plan hash covers [model.per_neuron]", h1 is not None and h2 is not None and h1 != h2, f"{h1} / {h2}")

# 5. (a neighbour) an explicit method unstable at this dt is warned about in
#    the run log and the record's log, not refused (docs/models.md "Methods")
STIFF = LIF.replace("tau : second\n", "").format(tau='tau = "0.04 ms"', pn="")  # a constant tau: judged
d, out = run(plan("stiff", c, STIFF))
logs = open(os.path.join(d, "run.log"), errors="replace").read() if d else ""
want = "warning: equations line 1: 'dv/dt = (E - v) / tau : volt': method euler is unstable"
check("stiff euler: the run goes on and its run.log warns", d is not None and want in logs,
      out[-400:] if d is None else ("" if want in logs else "not in the record's log"))

print(f"{'FAIL' if fails else 'ok'}: {fails} failure(s)")
sys.exit(1 if fails else 0)
PY
