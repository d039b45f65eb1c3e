"""Independent NumPy float32 implementation of preset `phase4c`
(docs/connectome-lif.md, "Preset phase4c"; the seed runtime's eager algorithm).

State per neuron: v, g (float32, mV), refractory (int). Ring of Q = delay + 1 = 19
arrival slots (float32). Per step s, slot = s % Q:
 1. g = g*gd + arrival[slot]; arrival[slot] = 0        (two float32 roundings, all neurons)
 2. refractory = max(refractory, 1) - 1; available = refractory == 0
 3. v = available ? v + alpha*(g - (v - v_rest)) : v_reset   (each operation rounded to float32)
 4. spike = available & (v >= v_th)
 5. forced: a target of population k that is available spikes if its Philox draw fires
 6. spikers: v = v_reset, refractory = 22
 7. fan-out into arrival[(s + 18) % Q]

Constants, each rounded once to float32: gd = float32(1 - dt/tau_syn), alpha =
float32(dt/tau_m) (the double quotients are formed first, as the seed does in Python).
Edge weight: w = float32(count) * float32(w_syn), count signed (= (float32(|count|) *
sign) * float32(w_syn) exactly, since negation is exact).

Summation order of step 7. The contract: for each target, the contributions of the
spikes delivered on a step are added in ascending presynaptic index. We build one flat
list of contributions: the spiking sources in ascending id (np.nonzero is ascending),
each source's CSR row in file order, concatenated. np.add.at(arrival_slot, targets,
weights) is an unbuffered ufunc.at: it performs arrival[t_i] = float32(arrival[t_i] +
w_i) for i = 0, 1, 2, ... strictly in list order (repeated indices included; it never
reassociates or vectorises across equal indices). Restricted to one target t, the list
order is ascending source id (a source has at most one edge to t), which is the
contract. The slot written on step s, (s+18) % 19 == (s-1) % 19, was consumed and zeroed
on step s-1 and receives only step s's spikes, so each target's arrival value is the
float32 left fold, from +0.0, of its contributions in ascending source order.
selfcheck() verifies the np.add.at claim against a plain Python loop.
"""

from __future__ import annotations

import numpy as np

import blconn

F32 = np.float32

DEFAULTS = dict(dt_ms=0.1, tau_syn_ms=5.0, tau_m_ms=20.0, v_rest_mv=-52.0, v_reset_mv=-52.0,
                v_th_mv=-45.0, refractory_steps=22, delay_steps=18, w_syn_mv=0.275)


def constants(p):
    gd = F32(1.0 - p["dt_ms"] / p["tau_syn_ms"])
    alpha = F32(p["dt_ms"] / p["tau_m_ms"])
    return gd, alpha


def edge_weights(graph, w_syn_mv, silence=None):
    w = graph.counts.astype(F32) * F32(w_syn_mv)
    if silence is not None and len(silence):
        src = graph.sources()
        w[np.isin(src, np.asarray(silence))] = F32(0.0)
    return w


def simulate(graph, n_steps, trials=1, seed=0, pops=(), schedule=None, silence=None, params=None, checkpoints=()):
    """Returns a result dict in the CLI's layout (see blconn.make_result), plus
    "snapshots": {k: (V[T,N], G[T,N])}, the state after k steps for k in checkpoints.
    schedule: optional int [K,2] (step, neuron) events forcing a spike of an available
    neuron in every trial (step 5, like a Poisson event)."""
    p = dict(DEFAULTS)
    if params:
        p.update(params)
    gd, alpha = constants(p)
    v_rest, v_reset, v_th = F32(p["v_rest_mv"]), F32(p["v_reset_mv"]), F32(p["v_th_mv"])
    ref_steps, delay = int(p["refractory_steps"]), int(p["delay_steps"])
    q = delay + 1
    n = graph.n
    w = edge_weights(graph, p["w_syn_mv"], silence)
    offsets, targets = graph.offsets, graph.targets.astype(np.intp)
    deg = np.diff(offsets)

    all_t, all_s, all_n = [], [], []
    counts = np.zeros((trials, n), np.int32)
    V = np.zeros((trials, n), F32)
    G = np.zeros((trials, n), F32)
    checkpoints = sorted(set(int(k) for k in checkpoints))
    snaps = {k: (np.zeros((trials, n), F32), np.zeros((trials, n), F32)) for k in checkpoints}
    for trial in range(trials):
        # forced events of this trial: per step, the neurons whose draw fired (any population)
        ev_s, ev_n, _ = blconn.poisson_events(pops, n_steps, seed, trial, p["dt_ms"])
        if schedule is not None and len(schedule):
            sch = np.asarray(schedule, np.int64).reshape(-1, 2)
            ev_s = np.concatenate([ev_s, sch[:, 0]])
            ev_n = np.concatenate([ev_n, sch[:, 1]])
            o = np.argsort(ev_s, kind="stable")
            ev_s, ev_n = ev_s[o], ev_n[o]
        bounds = np.searchsorted(ev_s, np.arange(n_steps + 1))

        v = np.full(n, v_rest, F32)
        g = np.zeros(n, F32)
        refr = np.zeros(n, np.int64)
        arrival = np.zeros((q, n), F32)
        for s in range(n_steps):
            if s in snaps:  # state after s steps
                snaps[s][0][trial], snaps[s][1][trial] = v, g
            slot = s % q
            # 1
            g = (g * gd).astype(F32, copy=False)
            g = g + arrival[slot]
            arrival[slot] = F32(0.0)
            # 2
            refr = np.maximum(refr, 1) - 1
            avail = refr == 0
            # 3 (float32 throughout; NumPy never contracts to FMA)
            integ = v + alpha * (g - (v - v_rest))
            v = np.where(avail, integ, v_reset).astype(F32, copy=False)
            # 4
            spike = avail & (v >= v_th)
            # 5
            a, b = bounds[s], bounds[s + 1]
            if b > a:
                forced = ev_n[a:b]
                spike[forced[avail[forced]]] = True
            # 6
            src = np.nonzero(spike)[0]
            if len(src) == 0:
                continue
            v[src] = v_reset
            refr[src] = ref_steps
            all_t.append(np.full(len(src), trial, np.int64))
            all_s.append(np.full(len(src), s, np.int64))
            all_n.append(src)
            counts[trial, src] += 1
            # 7: flat contribution list in (source ascending, CSR order); see module doc
            d = deg[src]
            tot = int(d.sum())
            if tot:
                starts = offsets[src]
                cum = np.cumsum(d)
                e = np.arange(tot, dtype=np.int64) - np.repeat(cum - d, d) + np.repeat(starts, d)
                np.add.at(arrival[(s + delay) % q], targets[e], w[e])
        V[trial], G[trial] = v, g
        if n_steps in snaps:
            snaps[n_steps][0][trial], snaps[n_steps][1][trial] = v, g
        assert v.dtype == F32 and g.dtype == F32

    cat = (lambda xs: np.concatenate(xs) if xs else np.empty(0, np.int64))
    res = blconn.make_result(cat(all_t), cat(all_s), cat(all_n), counts, V, G)
    res["snapshots"] = snaps
    return res


def selfcheck(seed=7):
    """np.add.at on float32 == sequential Python left fold in list order."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, 50, size=5000)
    val = (rng.standard_normal(5000) * 10 ** rng.uniform(-3, 3, 5000)).astype(F32)
    a = np.zeros(50, F32)
    np.add.at(a, idx, val)
    b = np.zeros(50, F32)
    for i, x in zip(idx.tolist(), val):
        b[i] = F32(b[i] + x)
    assert np.array_equal(a.view(np.uint32), b.view(np.uint32)), "np.add.at is not a sequential fold"
    # and the reverse order would differ somewhere (the check has teeth)
    c = np.zeros(50, F32)
    np.add.at(c, idx[::-1], val[::-1])
    assert not np.array_equal(a.view(np.uint32), c.view(np.uint32))
    return True
