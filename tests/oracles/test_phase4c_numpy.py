#!/usr/bin/python3
"""Preset phase4c: `brainlesslab simulate` versus the independent NumPy float32 oracle
(phase4c_numpy.py), spike for spike and bit for bit.

Cases: the shipped C. elegans and larva connectomes (synthetic stand-ins of the same
size while they are absent) and a seeded synthetic 3,000-neuron graph with --silence.
Each: 1 s (10,000 steps), 2 trials, a 64-bit seed with both key words non-zero, two
Philox Poisson populations (the second with a START:STOP window whose ends are exact
.5 halves, so llround's rounding is exercised; the populations overlap so a neuron has
draws from two streams). The synthetic case adds an explicit --schedule (with
duplicated events) on top of the Poisson input. Compared: the event arrays (trial,
step, neuron), counts [T,N], final v and g [T,N] as uint32 bit patterns; then the same
run cut short at 1, 3,337 and 7,919 steps (state after those steps, event prefix).
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np  # noqa: E402

import blconn  # noqa: E402
import phase4c_numpy  # noqa: E402

N_STEPS = 10000
TRIALS = 2
SEED = 0x9E3779B97F4A7C15
CHECKPOINTS = (1, 3337, 7919)


def populations(graph, k0, rate0, k1, rate1):
    a = blconn.top_drivers(graph, k0)
    # second population: half of it overlaps the first one, half are the next drivers
    nxt = blconn.top_drivers(graph, k1 // 2, offset=k0)
    b = np.unique(np.concatenate([a[: k1 - k1 // 2], nxt])).astype(np.int32)
    return [blconn.PoissonPop(rate0, a), blconn.PoissonPop(rate1, b, 250.05, 750.25)], np.union1d(a, b)


def run_case(label, graph, conn_dir, tmp, pops, stimulated, silence=None, schedule=None, min_recurrent=100):
    t0 = time.perf_counter()
    ref = phase4c_numpy.simulate(graph, N_STEPS, trials=TRIALS, seed=SEED, pops=pops, schedule=schedule,
                                 silence=silence, checkpoints=CHECKPOINTS)
    t_oracle = time.perf_counter() - t0
    work = tmp / label
    work.mkdir()
    if conn_dir is None:
        conn_dir = blconn.write_connectome(graph, work / "graph")
    if schedule is not None:
        stimulated = np.union1d(stimulated, schedule[:, 1])

    def cli(n_steps, out):
        return blconn.run_simulate(conn_dir, "phase4c", n_steps, out, trials=TRIALS, seed=SEED, pops=pops,
                                   schedule=schedule, silence=silence, workdir=work)
    try:
        got, t_cli = cli(N_STEPS, work / "out")
    except Exception as e:  # noqa: BLE001
        print(f"oracle phase4c-numpy {label}: CLI run failed -> FAIL\n    {e}")
        return False
    label = f"phase4c-numpy {label}"
    ok = blconn.compare(label, ref, got, TRIALS, stimulated=stimulated, min_recurrent=min_recurrent)
    t1 = time.perf_counter()
    ok &= blconn.compare_checkpoints(label, ref, CHECKPOINTS, TRIALS, lambda k: cli(k, work / f"out{k}")[0])
    print(f"    ({graph.n} neurons, {graph.e} edges; oracle {t_oracle:.1f} s, CLI {t_cli:.2f} s, "
          f"{len(CHECKPOINTS)} shorter CLI runs {time.perf_counter() - t1:.2f} s)")
    return ok


def main():
    t0 = time.perf_counter()
    phase4c_numpy.selfcheck()
    blconn.philox_selfcheck()
    results = []
    with blconn.TempDir() as tmp:
        for key in ("celegans", "larva"):
            graph, d, _ = blconn.shipped_connectome(key)
            pops, stim = populations(graph, 30, 250.0, 16, 300.0)
            results.append(run_case(key, graph, d, tmp, pops, stim))
        graph = blconn.synthetic_graph(n=3000, seed=20240611)
        pops, stim = populations(graph, 30, 200.0, 16, 300.0)
        silence = blconn.top_drivers(graph, 8, exclude=stim)
        # explicit events too: 10 other neurons at ~100 Hz, 10 % duplicated, overlapping pop 0
        extra = np.concatenate([blconn.top_drivers(graph, 8, offset=60), stim[:2]])
        rng = np.random.default_rng(4)
        fire = rng.random((N_STEPS, len(extra))) < 0.01
        si, ji = np.nonzero(fire)
        sch = np.stack([si, extra[ji]], 1)
        sch = np.concatenate([sch, sch[rng.random(len(sch)) < 0.1]])
        sch = sch[np.lexsort((sch[:, 1], sch[:, 0]))].astype(np.int32)
        results.append(run_case("synthetic-3000", graph, None, tmp, pops, stim, silence=silence, schedule=sch))
    return blconn.finish(results, t0)


if __name__ == "__main__":
    sys.exit(main())
