#!/usr/bin/python3
"""Benchmark peer of the flyvis-gradient workload (docs/benchmark.md, "flyvis"):
flyvis's graded-potential rate model in PyTorch on the CPU, float64, one thread
(torch.set_num_threads(1)), written as flyvis writes it (PPNeuronIGRSynapses:
gather the sources, weight = sign * n_syn * strength, index_add_ into the
targets, Euler), and the gradient of the objective by autograd.

    flyvis_torch.py --net DIR --steps K --repeat R --out OUTDIR

DIR is the output of `brainlesslab flyvis bench-case` (cells, edges, nsyn,
etypes, tau, bias, strength .npy and timing.json with the stimulus and the
objective), so both sides run the same network. One cold call, then R warm
calls; OUTDIR gets grad_tau.npy, grad_bias.npy, grad_strength.npy and
timing.json (load_s: imports and reading; prepare_s: the tensors; first_s;
warm_s; first_cpu_s, warm_cpu_s: process CPU time; J; V_sha256 of the float64 trajectory, (K+1) x cells, C order).
"""
import argparse
import hashlib
import json
import os
import sys
import time

T0 = time.perf_counter()
import numpy as np  # noqa: E402
import torch  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--net", required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--repeat", type=int, required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.set_num_threads(1)
    meta = json.load(open(os.path.join(a.net, "timing.json")))
    ld = lambda name: np.load(os.path.join(a.net, name + ".npy"))  # noqa: E731
    cells, edges, nsyn, etypes = ld("cells"), ld("edges"), ld("nsyn"), ld("etypes")
    tau0, bias0, strength0 = ld("tau"), ld("bias"), ld("strength")
    load_s = time.perf_counter() - T0
    t1 = time.perf_counter()
    n, K, dt = len(cells), a.steps, float(meta["dt"])
    ctype = torch.from_numpy(cells[:, 0].astype(np.int64))
    src, tar, et = (torch.from_numpy(edges[:, i].copy()) for i in range(3))
    coef = torch.from_numpy(etypes[:, 2].astype(np.float64))[et] * torch.from_numpy(nsyn)
    p = cells[:, 1].astype(np.float64) + 0.5 * cells[:, 2].astype(np.float64)
    is_in = np.isin(cells[:, 0], meta["input_types"])
    x = [torch.from_numpy(np.where(is_in, np.where(p <= meta["edge_start"] + meta["edge_speed"] * (float(k) * dt),
                                                   meta["edge_on"], meta["edge_off"]), 0.0)) for k in range(K)]
    sel = torch.from_numpy(np.nonzero(cells[:, 0] == meta["objective_type"])[0])
    scale = 1.0 / (float(K) * float(len(sel)))
    prepare_s = time.perf_counter() - t1

    def call():
        tau = torch.tensor(tau0, dtype=torch.float64, requires_grad=True)
        bias = torch.tensor(bias0, dtype=torch.float64, requires_grad=True)
        strength = torch.tensor(strength0, dtype=torch.float64, requires_grad=True)
        w = coef * strength[et]
        cb = bias[ctype]
        cit = (1.0 / tau)[ctype]
        V = cb
        traj = [V]
        for k in range(K):
            r = torch.relu(V)
            s = torch.zeros(n, dtype=torch.float64).index_add_(0, tar, w * r[src])
            V = V + dt * (cit * (-V + cb + s + x[k]))
            traj.append(V)
        Vs = torch.stack(traj)
        J = (Vs[1:, sel] ** 2).sum() * scale
        J.backward()
        return Vs.detach(), float(J), tau.grad, bias.grad, strength.grad

    t1, c1 = time.perf_counter(), time.process_time()
    Vs, J, gt, gb, gs = call()
    first_s, first_cpu = time.perf_counter() - t1, time.process_time() - c1
    warm, warm_cpu = [], []
    for _ in range(a.repeat):
        t1, c1 = time.perf_counter(), time.process_time()
        Vs, J, gt, gb, gs = call()
        warm.append(time.perf_counter() - t1)
        warm_cpu.append(time.process_time() - c1)
    os.makedirs(a.out, exist_ok=True)
    for name, g in (("tau", gt), ("bias", gb), ("strength", gs)):
        np.save(os.path.join(a.out, "grad_%s.npy" % name), g.numpy())
    timing = {"implementation": "PyTorch %s eager, float64, autograd" % torch.__version__,
              "threads": torch.get_num_threads(), "cells": n, "edges": int(len(edges)), "steps": K,
              "load_s": load_s, "prepare_s": prepare_s, "first_s": first_s, "warm_s": warm, "first_cpu_s": first_cpu, "warm_cpu_s": warm_cpu, "J": J,
              "V_sha256": hashlib.sha256(np.ascontiguousarray(Vs.numpy()).tobytes()).hexdigest()}
    with open(os.path.join(a.out, "timing.json"), "w") as f:
        json.dump(timing, f, indent=1)
    print("flyvis_torch: %d cells, %d edges, %d steps; first %.3f s, J = %.17g" % (n, len(edges), K, first_s, J))
    return 0


if __name__ == "__main__":
    sys.exit(main())
