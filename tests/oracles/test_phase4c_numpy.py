#!/usr/bin/python3
"""Preset phase4c: `brainlesslab simulate` versus the independent NumPy float32 oracle
(phase4c_numpy.py), spike for spike and bit for bit.

Cases: the shipped C. elegans and larva connectomes (synthetic stand-ins of the same
size while they are absent) and a seeded synthetic 3,000-neuron graph with --silence.
Each: 1 s (10,000 steps), 2 trials, a 64-bit seed with both key words non-zero, two
Philox Poisson populations (the second with a START:STOP window whose ends are exact
.5 halves, so llround's rounding is exercised; the populations overlap so a neuron has
draws from two streams). Compared: the event arrays (trial, step, neuron), counts [T,N],
final v and g [T,N] as uint32 bit patterns.
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


def populations(graph, k0, rate0, k1, rate1):
    a = blconn.top_drivers(graph, k0)
    # second population: half of it overlaps the first one, half are the next drivers
    nxt = blconn.top_drivers(graph, k1 // 2, offset=k0)
    b = np.unique(np.concatenate([a[: k1 - k1 // 2], nxt])).astype(np.int32)
    return [blconn.PoissonPop(rate0, a), blconn.PoissonPop(rate1, b, 250.05, 750.25)], np.union1d(a, b)


def run_case(label, graph, conn_dir, tmp, pops, stimulated, silence=None, min_recurrent=100):
    t0 = time.perf_counter()
    ref = phase4c_numpy.simulate(graph, N_STEPS, trials=TRIALS, seed=SEED, pops=pops, silence=silence)
    t_oracle = time.perf_counter() - t0
    work = tmp / label
    work.mkdir()
    if conn_dir is None:
        conn_dir = blconn.write_connectome(graph, work / "graph")
    try:
        got, t_cli = blconn.run_simulate(conn_dir, "phase4c", N_STEPS * 0.1, work / "out", trials=TRIALS, seed=SEED,
                                         pops=pops, silence=silence, workdir=work)
    except Exception as e:  # noqa: BLE001
        print(f"oracle phase4c-numpy {label}: CLI run failed -> FAIL\n    {e}")
        return False
    ok = blconn.compare(f"phase4c-numpy {label}", ref, got, TRIALS, stimulated=stimulated,
                        min_recurrent=min_recurrent)
    print(f"    ({graph.n} neurons, {graph.e} edges; oracle {t_oracle:.1f} s, CLI {t_cli:.2f} s)")
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
        results.append(run_case("synthetic-3000", graph, None, tmp, pops, stim, silence=silence))
    return blconn.finish(results, t0)


if __name__ == "__main__":
    sys.exit(main())
