"""Forced spikes and rate protocols against independent NumPy implementations.

Plans run through `brainlesslab run` on the larva, with the reference backend,
the cpu backend on one thread and the cpu backend splitting one trial into
partitions (BL_CPU_PARTITION_MIN_EDGES=1, 2 threads); every record's spikes
(spikes/trial-*.h5), counts and final state must equal the NumPy oracle's, bit
for bit:
  shiu2024  ORNs forced at 150 Hz (Philox, stream 0) + PNs given Poisson input
            at 40 Hz (stream 1) + a forced explicit schedule (schedule.npy) on LNs
            + a rate table (two segments, streams 2 and 3) of input on LHNs
  shiu2024  baseline + modulation (forced) on ORNs: equals the same run written
            as a rate table
  phase4c   forcing is its native input: mode = "force" equals mode = "input"
            and both equal phase4c_numpy
"""
import glob
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np

import blconn
import phase4c_numpy
import shiu2024_numpy

SEED = 4242
STEPS = 3000  # 300 ms


def read_record(rec):
    c = np.load(rec / "counts.npy")
    tr, st, nr = [], [], []
    for k, f in enumerate(sorted(glob.glob(str(rec / "spikes" / "trial-*.h5")))):
        with h5py.File(f, "r") as h:
            (pop,) = list(h["spikes"])
            ts = h["spikes"][pop]["timestamps"][()]
            ids = h["spikes"][pop]["node_ids"][()]
        tr.append(np.full(len(ts), k))
        st.append(np.rint(ts / 0.1).astype(np.int64))
        nr.append(ids.astype(np.int64))
    cat = np.concatenate
    return blconn.make_result(cat(tr), cat(st), cat(nr), c, np.load(rec / "final_v.npy"),
                              np.load(rec / "final_g.npy"))


def run(plan, root, backend, threads, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    r = subprocess.run([blconn.cli_path(), "run", str(plan), "--root", str(root), "--quiet", "--backend", backend,
                        "--threads", str(threads)], capture_output=True, text=True, env=env)
    if r.returncode:
        raise RuntimeError(r.stderr)
    return Path(r.stdout.strip())


HEAD = """format = "brainlesslab-plan"
format_version = 4
id = "{id}"
operation = "connectome"
[connectome]
path = "{conn}"
[model]
preset = "{preset}"
[[population]]
name = "ORN"
select = {{ cell_type = "sensory", modality = "olfactory" }}
[[population]]
name = "PN"
select = {{ cell_type = "PN" }}
[[population]]
name = "LN"
select = {{ cell_type = "LN" }}
[[population]]
name = "LHN"
select = {{ cell_type = "LHN" }}
"""
TAIL = """[run]
trials = {trials}
duration_ms = 300.0
seed = {seed}
[outputs]
propagation = false
"""


def sel(cols, key, value):
    return np.flatnonzero(cols[key] == value).astype(np.int32)


def main():
    t0 = time.perf_counter()
    graph, conn, standin = blconn.shipped_connectome("larva")
    if standin:
        print("SKIP: the shipped larva connectome is absent")
        return 77
    import csv
    with open(conn / "neurons.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    cols = {k: np.array([r[k] for r in rows], object) for k in rows[0]}
    orn = np.flatnonzero((cols["cell_type"] == "sensory") & (cols["modality"] == "olfactory")).astype(np.int32)
    pn, ln, lhn = sel(cols, "cell_type", "PN"), sel(cols, "cell_type", "LN"), sel(cols, "cell_type", "LHN")
    ok = []
    with blconn.TempDir() as tmp:
        rng = np.random.default_rng(3)
        sched = np.stack([rng.integers(0, STEPS, 400), rng.choice(ln, 400)], 1)
        sched = sched[np.lexsort((sched[:, 1], sched[:, 0]))].astype(np.int32)
        np.save(tmp / "schedule.npy", sched)

        # ---- shiu2024: forced Poisson, input Poisson, forced schedule, rate table ----
        trials = 2
        body = HEAD.format(id="force", conn=conn, preset="shiu2024") + """
[[stimulus]]
name = "ORN-forced"
population = "ORN"
rate_hz = 150.0
mode = "force"
[[stimulus]]
name = "PN-input"
population = "PN"
rate_hz = 40.0
start_ms = 50.0
stop_ms = 250.0
[[stimulus]]
name = "LN-schedule"
population = "LN"
schedule = "schedule.npy"
mode = "force"
[[stimulus]]
name = "LHN-table"
population = "LHN"
rates = [[0.0, 100.0, 30.0], [150.0, 300.0, 90.0]]
""" + TAIL.format(trials=trials, seed=SEED)
        plan = tmp / "force.toml"
        plan.write_text(body)
        pops = [blconn.PoissonPop(150.0, orn), blconn.PoissonPop(40.0, pn, 50.0, 250.0),
                blconn.PoissonPop(30.0, lhn, 0.0, 100.0), blconn.PoissonPop(90.0, lhn, 150.0, 300.0)]

        def split(trial):
            st, nr, pk = blconn.poisson_events(pops, STEPS, SEED, trial)
            return st, nr, pk

        def forced(trial):
            st, nr, pk = split(trial)
            f = pk == 0
            return np.concatenate([st[f], sched[:, 0]]), np.concatenate([nr[f], sched[:, 1]])

        def inputs(trial):
            st, nr, pk = split(trial)
            f = pk > 0
            return st[f], nr[f]

        ref = shiu2024_numpy.simulate(graph, STEPS, inputs, np.concatenate([pn, lhn]), trials=trials,
                                      forced_per_trial=forced)
        for backend, threads, env in (("reference", 1, None), ("cpu", 1, None),
                                      ("cpu", 2, {"BL_CPU_PARTITION_MIN_EDGES": "1"})):
            rec = run(plan, tmp / "rec", backend, threads, env)
            ok.append(blconn.compare(f"shiu2024 forced+input+schedule+table, {backend} x{threads}", ref,
                                     read_record(rec), trials, stimulated=np.concatenate([orn, pn, ln, lhn]),
                                     min_recurrent=20))
        # Forced neurons keep their refractory period: no forced neuron spikes twice within 22 steps.
        got = read_record(rec)
        fo = np.isin(got["spikes_neuron"], orn)
        for t in range(trials):
            for i in orn:
                s = got["spikes_step"][(got["spikes_trial"] == t) & (got["spikes_neuron"] == i)]
                if len(s) > 1 and np.min(np.diff(s)) < 22:
                    ok.append(False)
                    print(f"BAD forced neuron {i} spikes {np.min(np.diff(s))} steps apart")
        print(f"ok  {int(fo.sum())} forced ORN spikes, none within the refractory period")

        # ---- baseline + modulation equals its rate table ----
        mod = HEAD.format(id="mod", conn=conn, preset="shiu2024") + """
[[stimulus]]
name = "ORN"
population = "ORN"
mode = "force"
baseline_hz = 20.0
modulation = { start_ms = 100.0, stop_ms = 200.0, rate_hz = 120.0 }
""" + TAIL.format(trials=1, seed=SEED)
        table = mod.replace('baseline_hz = 20.0\nmodulation = { start_ms = 100.0, stop_ms = 200.0, rate_hz = 120.0 }',
                            'rates = [[0.0, 100.0, 20.0], [100.0, 200.0, 120.0], [200.0, 300.0, 20.0]]')
        (tmp / "mod.toml").write_text(mod)
        (tmp / "table.toml").write_text(table)
        a = read_record(run(tmp / "mod.toml", tmp / "rec", "cpu", 1))
        b = read_record(run(tmp / "table.toml", tmp / "rec", "cpu", 1))
        mpops = [blconn.PoissonPop(20.0, orn, 0.0, 100.0), blconn.PoissonPop(120.0, orn, 100.0, 200.0),
                 blconn.PoissonPop(20.0, orn, 200.0, 300.0)]
        mref = shiu2024_numpy.simulate(graph, STEPS, lambda t: (np.empty(0, np.int64), np.empty(0, np.int64)), [],
                                       trials=1, forced_per_trial=lambda t: blconn.poisson_events(mpops, STEPS, SEED,
                                                                                                  t)[:2])
        ok.append(blconn.compare("shiu2024 baseline + modulation (forced)", mref, a, 1, min_spikes=50))
        ok.append(blconn.compare("shiu2024 the same as a rate table", mref, b, 1, min_spikes=50))

        # ---- phase4c: forcing is the model's own input ----
        p4 = HEAD.format(id="p4c", conn=conn, preset="phase4c") + """
[[stimulus]]
name = "ORN"
population = "ORN"
rate_hz = 150.0
mode = "{mode}"
[[stimulus]]
name = "LN-schedule"
population = "LN"
schedule = "schedule.npy"
mode = "{mode}"
""" + TAIL.format(trials=2, seed=SEED)
        for mode in ("force", "input"):
            (tmp / f"p4c-{mode}.toml").write_text(p4.replace("{mode}", mode))
        pref = phase4c_numpy.simulate(graph, STEPS, trials=2, seed=SEED, pops=[blconn.PoissonPop(150.0, orn)],
                                      schedule=sched)
        for mode in ("force", "input"):
            for backend, threads, env in (("reference", 1, None), ("cpu", 2, {"BL_CPU_PARTITION_MIN_EDGES": "1"})):
                rec = run(tmp / f"p4c-{mode}.toml", tmp / "rec", backend, threads, env)
                ok.append(blconn.compare(f"phase4c mode={mode}, {backend} x{threads}", pref, read_record(rec), 2))
    print(f"{'PASS' if all(ok) else 'FAIL'}: {sum(ok)}/{len(ok)} in {time.perf_counter() - t0:.1f} s")
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
