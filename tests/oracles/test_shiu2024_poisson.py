#!/usr/bin/python3
"""Preset shiu2024 driven by Philox --poisson populations: `brainlesslab simulate` versus
the NumPy shiu2024 loop (shiu2024_numpy.py, itself validated against Brian2) fed by the
NumPy Philox4x32-10 streams of blconn.py. This tests the random-stream contract end to
end: key = (seed lo, seed hi), counter = (step, neuron, population, trial), threshold
floor(p * 2^32), population windows [llround(start/dt), llround(stop/dt)), several
populations adding to one neuron on one step, and the default --poisson-targets (the
union of the populations: refractory period 0; and an explicit subset).

Cases (short): the shipped C. elegans connectome (stand-in while absent), 500 ms x 3
trials; the synthetic graph, 400 ms x 2 trials; each also cut short at a third of its
steps (event prefix, state). Seeds have both key words non-zero; window ends are exact
.5 halves (llround rounds them up).
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np  # noqa: E402

import blconn  # noqa: E402
import shiu2024_numpy  # noqa: E402


def run_case(label, graph, conn_dir, tmp, n_steps, trials, seed, pops, ptargets=None, min_recurrent=50):
    """ptargets: explicit --poisson-targets (None: the CLI's default, the union of the
    populations, which the oracle uses too)."""
    work = tmp / label
    work.mkdir()
    stimulated = np.unique(np.concatenate([p.indices for p in pops]))
    t0 = time.perf_counter()
    ref = shiu2024_numpy.simulate(graph, n_steps, shiu2024_numpy.philox_events(pops, n_steps, seed),
                                  stimulated if ptargets is None else ptargets, trials=trials,
                                  checkpoints=(n_steps // 3,))
    t_oracle = time.perf_counter() - t0
    # multi-population coincidences actually happened (else that path is untested)
    both = 0
    for t in range(trials):
        st, nr, _ = blconn.poisson_events(pops, n_steps, seed, t)
        key = st * graph.n + nr
        both += len(key) - len(np.unique(key))
    if conn_dir is None:
        conn_dir = blconn.write_connectome(graph, work / "graph")

    def cli(k, out):
        return blconn.run_simulate(conn_dir, "shiu2024", k, out, trials=trials, seed=seed, pops=pops,
                                   poisson_targets=ptargets, workdir=work)
    try:
        got, t_cli = cli(n_steps, work / "out")
    except Exception as e:  # noqa: BLE001
        print(f"oracle shiu2024-philox {label}: CLI run failed -> FAIL\n    {e}")
        return False
    ok = blconn.compare(f"shiu2024-philox {label}", ref, got, trials, stimulated=stimulated,
                        min_recurrent=min_recurrent)
    ok &= blconn.compare_checkpoints(f"shiu2024-philox {label}", ref, (n_steps // 3,), trials,
                                     lambda k: cli(k, work / f"out{k}")[0])
    print(f"    ({graph.n} neurons, {graph.e} edges, {len(pops)} populations, {both} same-step multi-population "
          f"events; oracle {t_oracle:.1f} s, CLI {t_cli:.2f} s)")
    if both == 0:
        print("    no same-step events from two populations: multi-population path untested -> FAIL")
        ok = False
    return ok


def main():
    t0 = time.perf_counter()
    blconn.philox_selfcheck()
    shiu2024_numpy.check_constants()
    results = []
    with blconn.TempDir() as tmp:
        graph, d, _ = blconn.shipped_connectome("celegans")
        a = blconn.top_drivers(graph, 24)
        b = blconn.top_drivers(graph, 12, offset=16)  # overlaps a in 8 neurons
        pops = [blconn.PoissonPop(200.0, a), blconn.PoissonPop(400.0, b, 100.25, 400.25),  # [1003, 4003)
                blconn.PoissonPop(20000.0, a[:2], 450.0, 450.3)]  # p >= 1: always fires
        results.append(run_case("celegans", graph, d, tmp, 5000, 3, (7 << 32) | 0xDEADBEEF, pops))
        graph = blconn.synthetic_graph(n=3000, seed=20240611)
        a = blconn.top_drivers(graph, 30)
        pops = [blconn.PoissonPop(150.0, a[::2]), blconn.PoissonPop(250.0, a, 0.05, 250.05)]  # [1, 2501)
        # explicit --poisson-targets leaving out 4 stimulated neurons: they keep rfc = 2.2 ms,
        # so Poisson events reach them while refractory (and must be dropped)
        results.append(run_case("synthetic-3000", graph, None, tmp, 4000, 2, 0xFFFFFFFF00000001, pops,
                                ptargets=a[4:]))
    return blconn.finish(results, t0)


if __name__ == "__main__":
    sys.exit(main())
