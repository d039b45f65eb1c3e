"""The PyTorch peer of the bench's ode-rk4-grad family (docs/benchmark.md,
"ODE and SSA families"; bench/src/ode_case.c): RK4 over 64 steps of
dy_i/dt = -k_i y_i written in PyTorch eager (float64, one thread) and the
gradient of the sum of the final states with respect to k by autograd
(reverse mode through the recorded steps: the discrete adjoint of the same
discretisation). Same arguments and files as ode_numpy.py."""
import argparse
import json
import os
import time

import torch

from peer_io import run_main, write_timing


def rk4_case(case):
    n = int(case[1:])
    i = torch.arange(n, dtype=torch.float64)
    k = (0.5 + i / n).requires_grad_(True)
    y0 = 1.0 + i / n
    N, h = 64, 1.0 / 64
    out = {}

    def call():
        y = y0
        for _ in range(N):
            k1 = -k * y
            k2 = -k * (y + 0.5 * h * k1)
            k3 = -k * (y + 0.5 * h * k2)
            k4 = -k * (y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        J = y.sum()
        (g,) = torch.autograd.grad(J, k)
        out["value"] = float(J)
        out["grad"] = g

    def result():
        return {"value": out["value"], "grad": [float(v) for v in out["grad"]]}

    return call, result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--repeat", type=int, required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.family != "ode-rk4-grad":
        raise SystemExit("ode_torch.py: only the ode-rk4-grad family")
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    call, result = rk4_case(a.case)
    prepare_s = time.perf_counter() - t0
    t1, c1 = time.perf_counter(), time.process_time()
    call()
    first_s, first_cpu = time.perf_counter() - t1, time.process_time() - c1
    batch = max(1, min(100000, int(2e-3 / first_s))) if first_s > 0 else 1
    warm, warm_cpu = [], []
    for _ in range(a.repeat):
        t1, c1 = time.perf_counter(), time.process_time()
        for _ in range(batch):
            call()
        warm.append((time.perf_counter() - t1) / batch)
        warm_cpu.append((time.process_time() - c1) / batch)
    res = result()
    res.update({"family": a.family, "case": a.case})
    with open(os.path.join(a.out, "result.json"), "w", encoding="utf-8") as f:
        json.dump(res, f)
    write_timing(os.path.join(a.out, "timing.json"),
                 {"implementation": "PyTorch %s eager autograd (float64, torch.set_num_threads(1))" % torch.__version__,
                  "compile_s": prepare_s, "first_s": first_s, "first_cpu_s": first_cpu, "batch": batch,
                  "warm_s": warm, "warm_cpu_s": warm_cpu})
    return 0


if __name__ == "__main__":
    run_main(main, "ode_torch")
