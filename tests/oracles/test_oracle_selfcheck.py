#!/usr/bin/python3
"""The oracles checked against each other and against published facts; needs no CLI.

 1. Philox4x32-10: the Random123 known-answer vectors (scalar and vectorised), and the
    Bernoulli threshold rule on a few rates.
 2. np.add.at on float32 is a sequential left fold in list order (the phase4c fan-out
    order argument in phase4c_numpy.py rests on it).
 3. shiu2024 constants: Brian2's loop-invariant expressions with glibc exp equal the
    spec's hex values.
 4. Brian2 2.5.1 (numpy target) versus the NumPy shiu2024 loop, spike for spike and bit
    for bit, on a small synthetic graph built to hit the corner cases: duplicated
    stimulus events, events on refractory and on just-spiked neurons, rfc = 0 targets
    receiving recurrent input, inhibitory sources, a silenced source.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np  # noqa: E402

import blconn  # noqa: E402
import phase4c_numpy  # noqa: E402
import shiu2024_brian2  # noqa: E402
import shiu2024_numpy  # noqa: E402


def main():
    t0 = time.perf_counter()
    ok = []
    blconn.philox_selfcheck()
    assert blconn.bernoulli_threshold(150.0) == 64424509  # floor(0.015 * 2^32)
    assert blconn.bernoulli_threshold(0.0) == 0
    assert blconn.bernoulli_threshold(10000.0 * 2) == 1 << 32
    assert [blconn.llround(x) for x in (2500.5, 7502.5, 1000.4999999999999, 0.49999999999999994)] == \
        [2501, 7503, 1000, 0]
    print("philox4x32-10: Random123 known answers OK; Bernoulli thresholds and llround OK")
    phase4c_numpy.selfcheck()
    print("np.add.at float32: sequential left fold in list order OK")
    shiu2024_numpy.check_constants()
    print("shiu2024 constants L2, L8, L9, L10 (math.exp, Brian2 operation order) equal the spec's OK")

    graph = blconn.synthetic_graph(n=400, seed=99, mean_degree=20.0, frac_inhibitory=0.3, name="selfcheck")
    n_steps = 3000
    targets = blconn.top_drivers(graph, 25)
    # dense stimulus (400 Hz) makes events hit refractory / just-spiked targets; 10 % duplicates
    schedule = shiu2024_numpy.random_schedule(n_steps, targets, 400.0, seed=5, dup_frac=0.10)
    silence = blconn.top_drivers(graph, 3, exclude=targets)
    rfc0 = targets[5:]  # 5 stimulated neurons keep rfc = 2.2 ms: their events can hit refractoriness
    with blconn.TempDir() as tmp:
        ref, info = shiu2024_brian2.run(graph, n_steps, schedule, rfc0, tmp / "b", silence=silence)
    num = shiu2024_numpy.simulate(graph, n_steps, shiu2024_numpy.schedule_events(schedule), rfc0, silence=silence)
    ok.append(blconn.compare("shiu2024-numpy-vs-brian2 selfcheck-400", ref, num, 1,
                             state_bitwise=info["correctly_rounded_exp"], stimulated=targets, min_recurrent=100))
    print(f"    (Brian2 exp correctly rounded: {info['correctly_rounded_exp']}, AVX512F active: "
          f"{info['avx512f_active']}; {len(schedule)} events, build {info['build_s']:.1f} s, run {info['run_s']:.1f} s)")
    # the stimulus really hit the corner cases
    sch = schedule.astype(np.int64)
    key = sch[:, 0] * graph.n + sch[:, 1]
    dups = len(key) - len(np.unique(key))
    sp = set(zip(ref["spikes_step"].tolist(), ref["spikes_neuron"].tolist()))
    on_spike = sum((int(s), int(n)) in sp for s, n in sch)
    last = {}
    in_refr = 0
    for s, n in zip(ref["spikes_step"].tolist(), ref["spikes_neuron"].tolist()):
        last.setdefault(n, []).append(s)
    for s, n in sch.tolist():
        if n in targets[:5] and any(0 < s - x < 22 for x in last.get(n, ())):
            in_refr += 1
    print(f"    corner cases exercised: {dups} duplicated events, {on_spike} events on a spike step, "
          f"{in_refr} events during a 2.2 ms refractory period")
    if dups == 0 or on_spike == 0 or in_refr == 0:
        print("    corner cases not exercised -> FAIL")
        ok.append(False)
    return blconn.finish(ok, t0)


if __name__ == "__main__":
    sys.exit(main())
