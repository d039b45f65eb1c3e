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
Cases: shipped C. elegans (default --poisson-targets) and larva (stand-ins while
absent) and the synthetic graph
with --silence and --poisson-targets a strict subset of the scheduled neurons (5 of
them keep the 2.2 ms refractory period, so their events hit refractoriness). The NumPy
loop (shiu2024_numpy.py) is run too, as a third vote that localises any disagreement.
Brian2 runs in segments ending at 1, 3,337 and 7,919 steps; the CLI run cut short there
must give the same event prefix and the same state.
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
CHECKPOINTS = (1, 3337, 7919)


def start_case(label, graph, conn_dir, tmp, n_targets, rate_hz, seed, silence=None, n_refractory=0,
               min_recurrent=100, pass_targets=True):
    """Prepare a case and start its Brian2 process (the cases' Brian2 runs overlap).
    pass_targets=False leaves --poisson-targets to the CLI's default (the distinct
    neurons of the schedule, which here are all the stimulated neurons)."""
    work = tmp / label
    work.mkdir()
    stimulated = blconn.top_drivers(graph, n_targets)
    schedule = shiu2024_numpy.random_schedule(N_STEPS, stimulated, rate_hz, seed, dup_frac=0.03)
    targets = stimulated[n_refractory:]  # --poisson-targets: refractory period 0
    assert pass_targets or (n_refractory == 0 and np.array_equal(np.unique(schedule[:, 1]), targets))
    handle = shiu2024_brian2.start(graph, N_STEPS, schedule, targets, work / "brian2", silence=silence,
                                   checkpoints=CHECKPOINTS)
    return dict(label=label, graph=graph, conn_dir=conn_dir, work=work, stimulated=stimulated, schedule=schedule,
                targets=targets, silence=silence, min_recurrent=min_recurrent, pass_targets=pass_targets,
                handle=handle)


def finish_case(label, graph, conn_dir, work, stimulated, schedule, targets, silence, min_recurrent, pass_targets,
                handle):
    ref1, info = shiu2024_brian2.finish(handle)
    bitwise = bool(info["correctly_rounded_exp"])
    if not bitwise:
        print(f"NOTE: Brian2's exp constants were not correctly rounded here (L2={info['exp_L2']}, "
              f"L10={info['exp_L10']}); final state compared for information only")
    ok = True
    # third vote: the NumPy loop of the spec's schedule must equal Brian2 too
    num = shiu2024_numpy.simulate(graph, N_STEPS, shiu2024_numpy.schedule_events(schedule), targets,
                                  silence=silence, checkpoints=CHECKPOINTS)
    ok &= blconn.compare(f"shiu2024-numpy-vs-brian2 {label}", ref1, num, 1, state_bitwise=bitwise,
                         stimulated=stimulated, min_recurrent=min_recurrent)
    for k in CHECKPOINTS:
        ok &= blconn.compare(f"shiu2024-numpy-vs-brian2 {label} @{k} steps", blconn.truncate(ref1, k),
                             blconn.truncate(num, k), 1, state_bitwise=bitwise, min_spikes=0)
    ref = shiu2024_brian2.replicate_trials(ref1, TRIALS)
    if conn_dir is None:
        conn_dir = work / "brian2" / "graph"  # the same directory Brian2 read

    def cli(n_steps, out):
        return blconn.run_simulate(conn_dir, "shiu2024", n_steps, out, trials=TRIALS, schedule=schedule,
                                   poisson_targets=targets if pass_targets else None, silence=silence,
                                   workdir=work)
    try:
        got, t_cli = cli(N_STEPS, work / "out")
    except Exception as e:  # noqa: BLE001
        print(f"oracle shiu2024-brian2 {label}: CLI run failed -> FAIL\n    {e}")
        return False
    ok &= blconn.compare(f"shiu2024-brian2 {label}", ref, got, TRIALS, state_bitwise=bitwise,
                         stimulated=stimulated, min_recurrent=min_recurrent)
    ok &= blconn.compare_checkpoints(f"shiu2024-brian2 {label}", ref, CHECKPOINTS, TRIALS,
                                     lambda k: cli(k, work / f"out{k}")[0], state_bitwise=bitwise)
    print(f"    ({graph.n} neurons, {graph.e} edges, {len(schedule)} stimulus events; Brian2 {info['build_s']:.1f} s "
          f"import+build, {info['run_s']:.1f} s run; CLI {t_cli:.2f} s)")
    return ok


def main():
    t0 = time.perf_counter()
    shiu2024_numpy.check_constants()
    results = []
    with blconn.TempDir() as tmp:
        cases = []
        for key, seed in (("celegans", 11), ("larva", 12)):
            graph, d, _ = blconn.shipped_connectome(key)
            cases.append(start_case(key, graph, d, tmp, 30, 180.0, seed, pass_targets=(key == "larva")))
        graph = blconn.synthetic_graph(n=3000, seed=20240611)
        silence = blconn.top_drivers(graph, 8, exclude=blconn.top_drivers(graph, 30))
        cases.append(start_case("synthetic-3000", graph, None, tmp, 30, 180.0, 13, silence=silence, n_refractory=5))
        for c in cases:
            try:
                results.append(finish_case(**c))
            except Exception as e:  # noqa: BLE001
                print(f"oracle shiu2024-brian2 {c['label']}: oracle failed -> FAIL\n    {e}")
                results.append(False)
    return blconn.finish(results, t0)


if __name__ == "__main__":
    sys.exit(main())
