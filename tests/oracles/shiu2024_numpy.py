"""Independent NumPy float64 implementation of preset `shiu2024` following the spec's
five-step schedule of Brian2 2.5.1 (docs/connectome-lif.md). Validated spike for
spike and bit for bit against the Brian2 oracle (shiu2024_brian2.py) by
test_oracle_selfcheck.py.

Per step s, with nr = not_refractory:
 1. nr = (s - last_spike_step) >= rfc_steps (22, or 0 for Poisson targets)
    g' = nr ? L2*g : g ;  v' = nr ? L8 + ((L9*g) + (L10*v)) : v   (old g and v)
 2. spike = (v > v_th) & nr ; nr[spike] = False
 3. deliver the spikes of step s-18: sources ascending, CSR order within a source,
    g[post] += w one at a time, only where nr[post]
 4. stimulus events of step s: v[i] += 0.06875 per event, only where nr[i]
 5. spikers: v = v_rst, g = 0

Units are SI (volts, seconds). Stimulus: an explicit event list (step, neuron), either
given (--schedule) or drawn from the Philox streams (--poisson), see blconn.
"""

from __future__ import annotations

import math

import numpy as np

import blconn

MV = 0.001  # brian2.mV as a float

# Brian2 computes these from unit expressions; replicate the same float operations.
V_0 = -52 * MV          # -0.052000000000000005 (not the literal -0.052)
V_RST = -52 * MV
V_TH = -45 * MV
W_SYN = 0.275 * MV
W_POI = 250 * W_SYN     # f_poi * w_syn
DT = 0.1 * 0.001        # 0.1*ms
T_MBR = 20 * 0.001
TAU = 5 * 0.001
RFC_STEPS = 22
DELAY_STEPS = 18

# Loop-invariant constants of Brian2's 'linear' update, correctly rounded exp (spec).
L2 = float.fromhex("0x1.f5dc99badec5bp-1")
L10 = float.fromhex("0x1.fd7246927d28bp-1")
L8 = float.fromhex("-0x1.0ff306a505980p-12")
L9 = float.fromhex("0x1.439cce9a65d5bp-8")


def check_constants():
    """The spec's constants equal Brian2's expressions evaluated with math.exp (glibc,
    correctly rounded for these arguments) in Brian2's operation order."""
    l2 = math.exp(-DT / TAU)
    l10 = math.exp(-DT / T_MBR)
    l8 = V_0 - V_0 * l10
    l9 = ((TAU / (T_MBR - TAU)) * (-math.exp(DT / T_MBR) + math.exp(DT / TAU))) * l10 * l2
    got = dict(L2=l2, L10=l10, L8=l8, L9=l9)
    want = dict(L2=L2, L10=L10, L8=L8, L9=L9)
    bad = {k: (got[k].hex(), want[k].hex()) for k in want if got[k] != want[k]}
    assert not bad, f"constants differ from the spec: {bad}"
    assert V_0 == -0.052000000000000005 and V_TH == -0.045 and W_SYN == 0.000275 and W_POI == 0.06875, \
        (V_0, V_TH, W_SYN, W_POI)
    return True


def simulate(graph, n_steps, events_per_trial, poisson_targets, trials=1, silence=None, w_syn=W_SYN,
             w_poi=W_POI, checkpoints=(), forced_per_trial=None):
    """events_per_trial: function trial -> (steps, neurons) int arrays of stimulus events,
    sorted by step (order within a step does not matter: all events add the same w_poi,
    sequentially, to v). Returns a result dict in the CLI's layout, plus "snapshots":
    {k: (V[T,N], G[T,N])}, the state after k steps for k in checkpoints.
    forced_per_trial: function trial -> (steps, neurons) of forced spikes
    (docs/forcing.md): after thresholds, a forced neuron that is not refractory
    and did not cross threshold spikes at that step; other forced events drop."""
    n = graph.n
    offsets, targets = graph.offsets, graph.targets.astype(np.intp)
    deg = np.diff(offsets)
    w = graph.counts.astype(np.float64) * w_syn
    if silence is not None and len(silence):
        w[np.isin(graph.sources(), np.asarray(silence))] = 0.0
    rfc = np.full(n, RFC_STEPS, np.int64)
    rfc[np.asarray(poisson_targets, np.int64)] = 0

    all_t, all_s, all_n = [], [], []
    counts = np.zeros((trials, n), np.int32)
    V = np.zeros((trials, n))
    G = np.zeros((trials, n))
    checkpoints = sorted(set(int(k) for k in checkpoints))
    snaps = {k: (np.zeros((trials, n)), np.zeros((trials, n))) for k in checkpoints}
    for trial in range(trials):
        ev_s, ev_n = events_per_trial(trial)
        ev_s = np.asarray(ev_s, np.int64)
        ev_n = np.asarray(ev_n, np.intp)
        assert np.all(np.diff(ev_s) >= 0)
        bounds = np.searchsorted(ev_s, np.arange(n_steps + 1))
        if forced_per_trial is not None:
            fo_s, fo_n = forced_per_trial(trial)
            fo_s, fo_n = np.asarray(fo_s, np.int64), np.asarray(fo_n, np.intp)
            order = np.argsort(fo_s, kind="stable")
            fo_s, fo_n = fo_s[order], fo_n[order]
        else:
            fo_s = fo_n = np.empty(0, np.int64)
        fbounds = np.searchsorted(fo_s, np.arange(n_steps + 1))
        v = np.full(n, V_0)
        g = np.zeros(n)
        last = np.full(n, -(1 << 40), np.int64)
        history = {}  # step -> spiking sources (ascending)
        for s in range(n_steps):
            if s in snaps:  # state after s steps
                snaps[s][0][trial], snaps[s][1][trial] = v, g
            # 1
            nr = (s - last) >= rfc
            g_new = np.where(nr, L2 * g, g)
            v_new = np.where(nr, L8 + ((L9 * g) + (L10 * v)), v)
            g, v = g_new, v_new
            # 2
            spike = (v > V_TH) & nr
            src = np.nonzero(spike)[0]
            nr[src] = False
            last[src] = s
            # 2b (forcing)
            fa, fb = fbounds[s], fbounds[s + 1]
            if fb > fa:
                forced = np.unique(fo_n[fa:fb])
                forced = forced[nr[forced]]
                nr[forced] = False
                last[forced] = s
                src = np.union1d(src, forced).astype(np.intp)
            # 3
            old = history.pop(s - DELAY_STEPS, None)
            if old is not None:
                d = deg[old]
                tot = int(d.sum())
                if tot:
                    cum = np.cumsum(d)
                    e = np.arange(tot, dtype=np.int64) - np.repeat(cum - d, d) + np.repeat(offsets[old], d)
                    post = targets[e]
                    keep = nr[post]
                    # sequential, in (source ascending, CSR order): see phase4c_numpy doc
                    np.add.at(g, post[keep], w[e][keep])
            # 4
            a, b = bounds[s], bounds[s + 1]
            if b > a:
                tgt = ev_n[a:b]
                tgt = tgt[nr[tgt]]
                np.add.at(v, tgt, w_poi)
            # 5
            if len(src):
                v[src] = V_RST
                g[src] = 0.0
                history[s] = src
                all_t.append(np.full(len(src), trial, np.int64))
                all_s.append(np.full(len(src), s, np.int64))
                all_n.append(src)
                counts[trial, src] += 1
        V[trial], G[trial] = v, g
        if n_steps in snaps:
            snaps[n_steps][0][trial], snaps[n_steps][1][trial] = v, g

    cat = (lambda xs: np.concatenate(xs) if xs else np.empty(0, np.int64))
    res = blconn.make_result(cat(all_t), cat(all_s), cat(all_n), counts, V, G)
    res["snapshots"] = snaps
    return res


def schedule_events(schedule):
    """events_per_trial for an explicit (step, neuron) schedule, same in every trial."""
    sch = np.asarray(schedule, np.int64).reshape(-1, 2)
    return lambda trial: (sch[:, 0], sch[:, 1])


def philox_events(pops, n_steps, seed, dt_ms=0.1):
    """events_per_trial for --poisson populations (Philox streams, blconn)."""
    def f(trial):
        st, nr, _ = blconn.poisson_events(pops, n_steps, seed, trial, dt_ms)
        return st, nr
    return f


def random_schedule(n_steps, targets, rate_hz, seed, dup_frac=0.0):
    """Seeded explicit schedule: each target fires Bernoulli(rate*dt) per step (NumPy
    RNG, independent of Philox); optionally some events duplicated. Sorted (step, neuron)."""
    rng = np.random.default_rng(seed)
    p = rate_hz * 1e-4
    fire = rng.random((n_steps, len(targets))) < p
    si, ji = np.nonzero(fire)
    sch = np.stack([si, np.asarray(targets)[ji]], 1).astype(np.int64)
    if dup_frac > 0 and len(sch):
        extra = sch[rng.random(len(sch)) < dup_frac]
        sch = np.concatenate([sch, extra])
    o = np.lexsort((sch[:, 1], sch[:, 0]))
    return sch[o].astype(np.int32)
