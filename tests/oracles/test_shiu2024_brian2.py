#!/usr/bin/python3
"""Preset shiu2024: `brainlesslab simulate --schedule` versus the published model run in
Brian2 2.5.1 (numpy target, float64; shiu2024_brian2.py), spike for spike, and final
v, g bit for bit when Brian2's exp was correctly rounded (NPY_DISABLE_CPU_FEATURES took
effect; otherwise the ulp distance is reported and only the spikes must be exact).

Stimulus: an explicit seeded schedule (NumPy RNG) of (step, neuron) events, ~30 target
neurons at 180 Hz over 1 s, plus 3 % duplicated events (two events for one neuron on
one step: both add), given as --schedule and --poisson-targets (refractory period 0).
Brian2 replays the same schedule through a SpikeGeneratorGroup. The CLI runs 2 trials
(the schedule repeats in every trial, so both must equal the Brian2 run).
Cases: shipped C. elegans and larva (stand-ins while absent) and the synthetic graph
with --silence. The NumPy loop (shiu2024_numpy.py) is run too, as a third vote that
localises any disagreement.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np  # noqa: E402

import blconn  # noqa: E402
import shiu2024_brian2  # noqa: E402
import shiu2024_numpy  # noqa: E402

N_STEPS = 10000
TRIALS = 2


def run_case(label, graph, conn_dir, tmp, n_targets, rate_hz, seed, silence=None, min_recurrent=100):
    work = tmp / label
    work.mkdir()
    targets = blconn.top_drivers(graph, n_targets)
    schedule = shiu2024_numpy.random_schedule(N_STEPS, targets, rate_hz, seed, dup_frac=0.03)
    t0 = time.perf_counter()
    ref1, info = shiu2024_brian2.run(graph, N_STEPS, schedule, targets, work / "brian2", silence=silence)
    t_brian = time.perf_counter() - t0
    bitwise = bool(info["correctly_rounded_exp"])
    if not bitwise:
        print(f"NOTE: Brian2's exp constants were not correctly rounded here (L2={info['exp_L2']}, "
              f"L10={info['exp_L10']}); final state compared for information only")
    ok = True
    # third vote: the NumPy loop of the spec's schedule must equal Brian2 too
    num = shiu2024_numpy.simulate(graph, N_STEPS, shiu2024_numpy.schedule_events(schedule), targets,
                                  silence=silence)
    ok &= blconn.compare(f"shiu2024-numpy-vs-brian2 {label}", ref1, num, 1, state_bitwise=bitwise,
                         stimulated=targets, min_recurrent=min_recurrent)
    ref = shiu2024_brian2.replicate_trials(ref1, TRIALS)
    if conn_dir is None:
        conn_dir = work / "brian2" / "graph"  # the same directory Brian2 read
    try:
        got, t_cli = blconn.run_simulate(conn_dir, "shiu2024", N_STEPS * 0.1, work / "out", trials=TRIALS,
                                         schedule=schedule, poisson_targets=targets, silence=silence,
                                         workdir=work)
    except Exception as e:  # noqa: BLE001
        print(f"oracle shiu2024-brian2 {label}: CLI run failed -> FAIL\n    {e}")
        return False
    ok &= blconn.compare(f"shiu2024-brian2 {label}", ref, got, TRIALS, state_bitwise=bitwise,
                         stimulated=targets, min_recurrent=min_recurrent)
    print(f"    ({graph.n} neurons, {graph.e} edges, {len(schedule)} stimulus events; Brian2 {t_brian:.1f} s "
          f"(run {info['run_s']:.1f} s), CLI {t_cli:.2f} s)")
    return ok


def main():
    t0 = time.perf_counter()
    shiu2024_numpy.check_constants()
    results = []
    with blconn.TempDir() as tmp:
        for key, seed in (("celegans", 11), ("larva", 12)):
            graph, d, _ = blconn.shipped_connectome(key)
            results.append(run_case(key, graph, d, tmp, 30, 180.0, seed))
        graph = blconn.synthetic_graph(n=3000, seed=20240611)
        silence = blconn.top_drivers(graph, 8, exclude=blconn.top_drivers(graph, 30))
        results.append(run_case("synthetic-3000", graph, None, tmp, 30, 180.0, 13, silence=silence))
    return blconn.finish(results, t0)


if __name__ == "__main__":
    sys.exit(main())
