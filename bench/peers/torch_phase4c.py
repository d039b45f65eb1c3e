#!/usr/bin/python3
"""Benchmark peer: the seed runtime's eager algorithm (its Runtime.run with backend
"eager"; preset phase4c of docs/connectome-lif.md) in PyTorch on the CPU, float32,
fed an explicit forced-spike schedule.

Run by `brainlesslab bench` as a fresh worker process (one measurement per process):

    torch_phase4c.py --connectome DIR --events EVENTS.npy --n-steps S --trials T
                     --out OUTDIR --timing TIMING.json [--threads N] [--w-syn-mv W]

EVENTS.npy is int32 [K,2] rows (step, neuron). The seed draws its forced input as a
[steps, targets] uint8 matrix; here that matrix is built from the schedule (targets =
the distinct neurons of the schedule, ascending), so the run can be qualified spike for
spike against `brainlesslab simulate --preset phase4c --schedule EVENTS.npy`. Every
trial replays the same schedule from the initial state. The step loop is the seed's
eager loop, unchanged: g.mul_(gd).add_(queue[slot]); refractory.clamp_min_(1).sub_(1);
v[available] += alpha*(g - (v - rest)); v[~available] = reset; spikes = available &
(v >= threshold); forced targets that are available spike; reset; fan-out of the
spikers' CSR rows (expand_rows) with scatter_add_ into queue[(step + delay) % Q]. Edge
weights as the seed computes them: float32(count) * float32(w_syn) (sign in the count).

Outputs (the layout of `brainlesslab simulate`): OUTDIR/spikes_trial.npy,
spikes_step.npy, spikes_neuron.npy int32, counts.npy int32 [T,N], v.npy, g.npy float32
[T,N] (mV). TIMING.json: {"load_s", "prepare_s", "trial_s": [...], "spikes", "steps",
"backend", "threads", "peak_rss_bytes", ...}. Phases: load = imports and reading the
.npy files; prepare = building the tensors (CSR, weights, forced matrix).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

import peer_io

# Model constants of preset phase4c (docs/connectome-lif.md; the seed's config).
DT_MS = 0.1
TAU_SYN_MS = 5.0
TAU_M_MS = 20.0
V_REST_MV = -52.0
V_RESET_MV = -52.0
V_TH_MV = -45.0
REFRACTORY_MS = 2.2
DELAY_MS = 1.8


def expand_rows(torch, indptr, sources):
    """The seed's expand_rows: edge ids of the sources' CSR rows, in (source, CSR) order."""
    if sources.numel() == 0:
        return torch.empty(0, dtype=torch.int64)
    starts = indptr[sources]
    counts = indptr[sources + 1] - starts
    cumulative = torch.cumsum(counts, 0)
    total = int(cumulative[-1].item()) if cumulative.numel() else 0
    if total == 0:
        return torch.empty(0, dtype=torch.int64)
    seq = torch.arange(total, dtype=torch.int64)
    row = torch.searchsorted(cumulative, seq, right=True)
    return starts[row] + seq - (cumulative - counts)[row]


def run_trial(torch, n, indptr, indices, weights, targets, forced, steps):
    """One trial of the seed's eager loop; returns (event steps, event neurons, counts, v, g)."""
    import numpy as np
    dt = DT_MS
    delay_steps = int(round(DELAY_MS / dt))
    qlen = delay_steps + 1
    ref_steps = int(round(REFRACTORY_MS / dt))
    alpha = dt / TAU_M_MS
    gd = 1.0 - dt / TAU_SYN_MS
    rest, reset, threshold = V_REST_MV, V_RESET_MV, V_TH_MV
    v = torch.full((n,), rest, dtype=torch.float32)
    g = torch.zeros(n, dtype=torch.float32)
    refractory = torch.zeros(n, dtype=torch.int32)
    queue = torch.zeros((qlen, n), dtype=torch.float32)
    counts = torch.zeros(n, dtype=torch.int32)
    event_steps, event_nodes = [], []
    for step in range(steps):
        slot = step % qlen
        g.mul_(gd).add_(queue[slot])
        queue[slot].zero_()
        refractory.clamp_min_(1).sub_(1)
        available = refractory == 0
        v[available] += alpha * (g[available] - (v[available] - rest))
        v[~available] = reset
        spikes = available & (v >= threshold)
        accepted = forced[step].bool() & available[targets]
        forced_sources = targets[accepted]
        if forced_sources.numel():
            spikes[forced_sources] = True
        sources = torch.nonzero(spikes, as_tuple=False).flatten()
        counts.add_(spikes.to(torch.int32))
        if sources.numel():
            v[sources] = reset
            refractory[sources] = ref_steps
            edges = expand_rows(torch, indptr, sources)
            if edges.numel():
                queue[(step + delay_steps) % qlen].scatter_add_(0, indices[edges].long(), weights[edges])
            src = sources.numpy().astype(np.int32, copy=True)
            event_nodes.append(src)
            event_steps.append(np.full(len(src), step, np.int32))
    return event_steps, event_nodes, counts.numpy().copy(), v.numpy().copy(), g.numpy().copy()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--connectome", required=True)
    ap.add_argument("--events", required=True)
    ap.add_argument("--n-steps", type=int, required=True)
    ap.add_argument("--trials", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--timing", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--w-syn-mv", type=float, default=0.275)
    a = ap.parse_args(argv)
    if a.trials < 1 or a.n_steps < 1:
        print("torch_phase4c: --trials and --n-steps must be >= 1", file=sys.stderr)
        return 2

    t0 = time.perf_counter()
    import numpy as np
    import torch

    offsets = np.load(os.path.join(a.connectome, "offsets.npy"), allow_pickle=False)
    targets_csr = np.load(os.path.join(a.connectome, "targets.npy"), allow_pickle=False)
    counts_csr = np.load(os.path.join(a.connectome, "counts.npy"), allow_pickle=False)
    if offsets.dtype != np.int64 or targets_csr.dtype != np.int32 or counts_csr.dtype != np.int32:
        raise SystemExit(f"{a.connectome}: offsets/targets/counts must be int64/int32/int32")
    schedule = np.load(a.events, allow_pickle=False).astype(np.int64).reshape(-1, 2)
    n = len(offsets) - 1
    t_load = time.perf_counter() - t0

    t1 = time.perf_counter()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    indptr = torch.as_tensor(offsets, dtype=torch.int64)
    indices = torch.as_tensor(targets_csr, dtype=torch.int32)
    weights = torch.as_tensor(counts_csr.astype(np.float32) * np.float32(a.w_syn_mv), dtype=torch.float32)
    sched = schedule[(schedule[:, 0] >= 0) & (schedule[:, 0] < a.n_steps)]
    tgt = np.unique(sched[:, 1]) if len(sched) else np.empty(0, np.int64)
    forced_np = np.zeros((a.n_steps, len(tgt)), np.uint8)
    if len(sched):
        forced_np[sched[:, 0], np.searchsorted(tgt, sched[:, 1])] = 1
    forced = torch.as_tensor(forced_np)
    targets = torch.as_tensor(tgt, dtype=torch.int64)
    t_prepare = time.perf_counter() - t1

    trial_s, per_trial = [], []
    with torch.no_grad():
        for _ in range(a.trials):
            ts = time.perf_counter()
            per_trial.append(run_trial(torch, n, indptr, indices, weights, targets, forced, a.n_steps))
            trial_s.append(time.perf_counter() - ts)

    empty = np.empty(0, np.int32)
    spikes = peer_io.write_outputs(
        a.out, [np.concatenate(p[0]) if p[0] else empty for p in per_trial],
        [np.concatenate(p[1]) if p[1] else empty for p in per_trial], [p[2] for p in per_trial],
        [np.asarray(p[3], np.float32) for p in per_trial], [np.asarray(p[4], np.float32) for p in per_trial])

    rss = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024
    timing = {
        "load_s": t_load, "prepare_s": t_prepare, "trial_s": trial_s,
        "spikes": spikes, "steps": int(a.n_steps),
        "backend": "torch-eager-cpu", "threads": int(torch.get_num_threads()),
        "interop_threads": int(torch.get_num_interop_threads()),
        "peak_rss_bytes": rss, "dtype": "float32",
        "versions": {"torch": torch.__version__, "numpy": np.__version__, "python": sys.version.split()[0]},
    }
    peer_io.write_timing(a.timing, timing)
    return 0


if __name__ == "__main__":
    peer_io.run_main(main, "torch_phase4c")
