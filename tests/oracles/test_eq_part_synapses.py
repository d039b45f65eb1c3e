#!/usr/bin/env python3
"""Exactness of the cpu and mpi partition kernel (src/models/eq_part.c) on the
synapse features it runs: on_pre_exc / on_pre_inh chosen by the edge's sign,
w from the connectome's float weights.npy (`weight` in the weight
expression, computed once per owned edge), and refractory_input = "deliver"
(on_pre into refractory targets, their not_refractory in the block).

The oracle is the reference backend (src/models/eq_row.c), itself checked
against Brian2 on the same networks by test_synapses_brian2.py, whose
connectome generator (the small Vogels-Abbott CUBA network: 400 neurons, 2 %,
80/20, signed counts, weights in mV) this test reuses. Cases:

  cuba      CUBA, ge/gi by sign, weight = "weight * mV", deliver, Poisson
            input on 40 neurons (on_input) to break the uniform start.
  coba      COBA (conductances with reversal potentials, exponential_euler),
            ge/gi by sign, weight = "weight * nS" (inhibitory weights
            positive: the sign only chooses the pathway), deliver.
  by_nt     CUBA with a third variable, on_pre chosen by the source's
            transmitter column (on_pre_by; test_synapses_brian2's case), weights
            from the count, so also under mpirun -np 2.
  exc_only  CUBA with on_pre_exc alone (inhibitory edges do nothing), into
            non-refractory targets only (the default rule), w from counts
            (no weights.npy).

Each runs 2 trials on the reference backend, then on cpu at 1, 2 and 4
threads (trials split into partitions) with retirement on and off, at 2
threads through the interpreter (BL_EQ_JIT=0), and on
the mpi backend as one process and on 2 ranks (each rank loading the weights
of its own edges with its part of the connectome): counts, spikes, final v
and g must be byte-identical. Skips (77) without h5py (the generator's module needs
Brian2 only for its own oracle, and is imported for the generator alone)."""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import test_synapses_brian2 as syn  # noqa: E402  (its cuba_graph, write_conn)
except SystemExit:
    print("skip: the generator's module needs brian2 and h5py")
    sys.exit(77)

CLI = os.environ.get("BL_CLI", "build/brainlesslab")
N, MS = syn.N_CUBA, 150.0

PLAN = """format = "brainlesslab-plan"
format_version = 4
id = "{id}"
operation = "connectome"
[connectome]
path = "{conn}"
[[stimulus]]
name = "drive"
neurons = [{drive}]
rate_hz = 300.0
[run]
trials = 2
duration_ms = {ms}
seed = 5
backend = "{backend}"
threads = 1
[outputs]
spikes = true
counts = true
state = true
propagation = false
"""

CUBA = f'''[model]
method = "euler"
equations = """
{syn.CUBA_EQS}
"""
threshold = "v > Vt"
reset = "v = Vr"
refractory = "t_rfc"
on_pre_exc = "ge += w"
{{inh}}weight = "weight * mV"
delay = "0.5 ms"
on_input = "v += 3*mV"
{{deliver}}
[model.parameters]
{chr(10).join(f'{k} = "{v}"' for k, v in syn.CUBA_PARAMS.items())}
[model.init]
v = "-58 mV"
'''

COBA_EQS = """dv/dt = (gl*(El - v) + ge*(Ee - v) + gi*(Ei - v)) / Cm : volt (unless refractory)
dge/dt = -ge / taue : siemens
dgi/dt = -gi / taui : siemens"""
COBA = f'''[model]
method = "exponential_euler"
equations = """
{COBA_EQS}
"""
threshold = "v > Vt"
reset = "v = Vr"
refractory = "t_rfc"
on_pre_exc = "ge += w"
on_pre_inh = "gi += w"
weight = "weight * nS"
delay = "0.3 ms"
on_input = "v += 4*mV"
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
v = "-55 mV"
'''


def files_of(rec):
    out = ["counts.npy", "final_v.npy", "final_g.npy"]
    for root, _, names in os.walk(os.path.join(rec, "spikes")):
        out += sorted(os.path.relpath(os.path.join(root, n), rec) for n in names)
    return out


def run(work, tag, conn, model, backend, env_extra=(), threads=1, mpi=0):
    plan = os.path.join(work, tag + ".toml")
    drive = ", ".join(str(k) for k in range(0, N, 10))
    with open(plan, "w") as f:
        f.write(PLAN.format(id=tag, conn=conn, ms=MS, backend=backend, drive=drive) + model)
    root = os.path.join(work, "rec_" + tag)
    env = dict(os.environ, OMP_WAIT_POLICY="passive", BL_CPU_PARTITION_MIN_EDGES="1", **dict(env_extra))
    cmd = [CLI, "run", plan, "--root", root, "--threads", str(threads)]
    if backend == "mpi" and os.environ.get("BL_SANITIZED") == "1":
        # Open MPI's allocations outlive MPI_Finalize (as in test_resume.sh).
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    if mpi:
        env.update(OMPI_MCA_mpi_yield_when_idle="1", OMPI_MCA_btl="self,vader")
        cmd = ["timeout", "300", "mpirun", "-np", str(mpi)] + cmd + ["--quiet"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode:
        raise SystemExit(f"FAIL {tag}: {' '.join(cmd)}: {r.stderr.strip()} {r.stdout.strip()}")
    (rec,) = [os.path.join(root, d) for d in os.listdir(root)]
    return rec


def same(ref, rec, what):
    bad = []
    for f in files_of(ref):
        a, b = os.path.join(ref, f), os.path.join(rec, f)
        if not os.path.exists(b) or open(a, "rb").read() != open(b, "rb").read():
            bad.append(f)
    if bad:
        msg = f"{what}: {', '.join(bad)} differ from the reference run"
        if "final_v.npy" in bad:
            va, vb = np.load(os.path.join(ref, "final_v.npy")), np.load(os.path.join(rec, "final_v.npy"))
            k = int(np.argmax(va.ravel() != vb.ravel()))
            msg += f" (first v difference at [{k}]: {va.ravel()[k]!r} vs {vb.ravel()[k]!r})"
        return msg
    return None


def backend_of(rec):
    log = open(os.path.join(rec, "run.log")).read()
    return "cpu" if "prepared: backend cpu" in log else "mpi" if "backend mpi" in log else "other"


def case(work, name, model, weights_of, nt=False):
    pre, post, counts, weights, exc = syn.cuba_graph(7)
    conn = os.path.join(work, name + "_conn")
    column = weights_of(weights, exc) if weights_of else None
    syn.write_conn(conn, N, pre, post, counts, weights=column)
    if nt:  # the sources' transmitters, for on_pre_by
        syn.add_column(conn, "transmitter", syn.transmitters(N, N * 4 // 5))
    column = column is not None
    ref = run(work, name + "_ref", conn, model, "reference")
    n_spikes = int(np.load(os.path.join(ref, "counts.npy")).sum())
    errors, done = [], []
    for threads in (1, 2, 4):
        for retire in ("1", "0"):
            rec = run(work, f"{name}_cpu{threads}_{retire}", conn, model, "cpu", {"BL_EQ_RETIRE": retire}, threads)
            if backend_of(rec) != "cpu":
                errors.append(f"cpu {threads} threads: did not run on the cpu backend")
            e = same(ref, rec, f"cpu {threads} thread(s), BL_EQ_RETIRE={retire}")
            if e:
                errors.append(e)
        done.append(f"cpu{threads}")
    # the interpreter in place of generated C (BL_EQ_JIT=0): the range path's
    # per-neuron fallback of eq_update_range, the same bits
    rec = run(work, f"{name}_cpu2_interp", conn, model, "cpu", {"BL_EQ_JIT": "0"}, 2)
    e = same(ref, rec, "cpu 2 threads, interpreter")
    if e:
        errors.append(e)
    done.append("cpu2 interpreted")
    # The mpi backend as one process and on 2 ranks: a rank loads only its
    # part of the connectome, weights.npy's values of its own edges with it.
    if shutil.which("mpirun"):
        env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"} if os.geteuid() == 0 else {}
        try:
            rec = run(work, name + "_mpi1", conn, model, "mpi", env)
            e = same(ref, rec, "mpi, one process")
            if e:
                errors.append(e)
            done.append("mpi as one process")
        except SystemExit as x:
            if "mpi backend" not in str(x):
                errors.append(str(x))
        try:
            rec = run(work, name + "_mpi2", conn, model, "mpi", env, mpi=2)
            e = same(ref, rec, "mpi 2 ranks")
            if e:
                errors.append(e)
            done.append("mpi 2 ranks" + (" (weights.npy in parts)" if column else ""))
        except SystemExit as x:
            errors.append(str(x))
    ok = not errors and n_spikes > 100
    msg = f"{n_spikes} spikes in 2 trials; identical to the reference on {', '.join(done)} (retirement on and off)"
    if errors:
        msg = "; ".join(errors)
    elif n_spikes <= 100:
        msg = f"only {n_spikes} spikes: the case tests too little"
    return ok, msg


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        cases = (
            ("cuba", CUBA.format(inh='on_pre_inh = "gi += w"\n', deliver='refractory_input = "deliver"'),
             lambda w, exc: w),
            ("coba", COBA, lambda w, exc: np.where(exc, 6.0, 67.0)),
            ("exc_only", CUBA.format(inh="", deliver="").replace('weight = "weight * mV"',
                                                                   'weight = "count * 1.62 * mV"'), None),
            # on_pre chosen by the source's transmitter (three variables, two
            # values without a block), weights from the count: also 2 ranks
            ("by_nt", syn.nt_model(weight="count * 1.62 * mV", deliver="").replace(
                'delay = "0.1 ms"', 'delay = "0.5 ms"\non_input = "v += 3*mV"'), None),
        )
        for name, model, wfn in cases:
            ok, msg = case(work, name, model, wfn, nt=name == "by_nt")
            print(f"{'ok' if ok else 'FAIL':4} {name:9} {msg}", flush=True)
            failures += not ok
    print(f"{len(cases) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
