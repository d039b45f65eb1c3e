"""The NumPy peer of the bench's ODE/SSA families (docs/benchmark.md, "ODE
and SSA families"; bench/src/ode_case.c): the same problems as `brainlesslab
ode bench-case`, written the way the execution-baselines protocol's NumPy
baseline writes them (vectorised over states, or over replicates).

  ode-rhs       the hierarchical fixture's RHS, vectorised over groups and
                stages: f[:, 0] = (u - k[:, 0] x[:, 0]) + W @ sat(x[:, S-1]),
                f[:, 1:] = k[:, :-1] x[:, :-1] - k[:, 1:] x[:, 1:]
  ode-rk4-grad  RK4 forward over 64 steps (states kept) and the discrete
                adjoint by hand (the same stage recursion as the C adjoint,
                with J = diag(-k) and P = diag(-y) of the exponential system)
  ssa-bank      Gillespie's direct method for the whole bank at once: every
                replicate still short of the horizon draws its next event per
                loop iteration (NumPy's PCG64, so the draws are not ours:
                qualified by statistics, not bits)

Writes timing.json (first_s, warm_s, warm_cpu_s per call, batch) and
result.json, as the C worker does."""
import argparse
import json
import os
import time

import numpy as np

from peer_io import run_main, write_timing


def fixture(G, S, coupled):
    g = np.arange(G)[:, None]
    s = np.arange(S)[None, :]
    k = 0.5 + 0.25 * ((g + 2 * s) % 4)
    u = 1.0 + 0.5 * (np.arange(G) % 3)
    x0 = np.broadcast_to(0.125 * (s + 1), (G, S)).astype(float)
    W = np.zeros((G, G))
    if coupled:
        for a in range(G):
            for b in range(G):
                if a != b:
                    W[a, b] = float(((a * 7 + b * 3) % 5) - 2) * 0.25 / G
    return k.astype(float), u, x0.copy(), W


def rhs_case(case):
    G, S, kind = case.split("-")
    G, S = int(G[1:]), int(S[1:])
    k, u, x, W = fixture(G, S, kind == "coupled")
    coupled = kind == "coupled"
    f = np.empty((G, S))

    def call():
        f[:, 0] = u - k[:, 0] * x[:, 0]
        if coupled:
            last = x[:, S - 1]
            f[:, 0] += W @ (last / (1 + last * last))
        f[:, 1:] = k[:, :-1] * x[:, :-1] - k[:, 1:] * x[:, 1:]
        return f

    def result():
        return {"f": [float(v) for v in f.reshape(-1)]}

    return call, result


def rk4_case(case):
    n = int(case[1:])
    i = np.arange(n)
    k = 0.5 + i / n
    y0 = 1.0 + i / n
    N, h = 64, 1.0 / 64
    ys = np.empty((N + 1, n))
    out = {}

    def call():
        ys[0] = y0
        y = y0
        for q in range(N):
            k1 = -k * y
            k2 = -k * (y + 0.5 * h * k1)
            k3 = -k * (y + 0.5 * h * k2)
            k4 = -k * (y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            ys[q + 1] = y
        lam = np.ones(n)
        gp = np.zeros(n)
        for q in range(N - 1, -1, -1):
            y = ys[q]
            Y1 = y
            k1 = -k * Y1
            Y2 = y + 0.5 * h * k1
            k2 = -k * Y2
            Y3 = y + 0.5 * h * k2
            k3 = -k * Y3
            Y4 = y + h * k3
            kb4 = h * (lam / 6)
            Yb4 = -k * kb4
            kb3 = h * (lam / 3 + Yb4)
            Yb3 = -k * kb3
            kb2 = h * (lam / 3 + 0.5 * Yb3)
            Yb2 = -k * kb2
            kb1 = h * (lam / 6 + 0.5 * Yb2)
            Yb1 = -k * kb1
            gp -= Y4 * kb4 + Y3 * kb3 + Y2 * kb2 + Y1 * kb1
            lam = lam + (Yb1 + Yb2 + Yb3 + Yb4)
        out["value"] = float(ys[N].sum())
        out["grad"] = gp

    def result():
        return {"value": out["value"], "grad": [float(v) for v in out["grad"]]}

    return call, result


def ssa_case(case):
    R = int(case[4:])
    T = 20.0
    rng = np.random.default_rng(20261202)
    out = {}

    def call():
        x = np.zeros(R)
        t = np.zeros(R)
        events = 0
        active = np.ones(R, bool)
        while active.any():
            idx = np.nonzero(active)[0]
            a1 = np.full(len(idx), 10.0)
            a2 = 0.1 * x[idx]
            a0 = a1 + a2
            u1 = rng.random(len(idx))
            u2 = rng.random(len(idx))
            tn = t[idx] - np.log1p(-u1) / a0
            fire = tn <= T
            t[idx] = tn
            birth = u2 * a0 < a1
            x[idx] += np.where(fire, np.where(birth, 1.0, -1.0), 0.0)
            events += int(fire.sum())
            active[idx[~fire]] = False
        out["final"] = x.astype(np.int64)
        out["events"] = events

    def result():
        return {"final": [int(v) for v in out["final"]], "events": out["events"]}

    return call, result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--repeat", type=int, required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    t0 = time.perf_counter()
    make = {"ode-rhs": rhs_case, "ode-rk4-grad": rk4_case, "ssa-bank": ssa_case}[a.family]
    call, result = make(a.case)
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
    timing = {"implementation": "NumPy %s (float64, vectorised; one thread)" % np.__version__,
              "compile_s": prepare_s, "first_s": first_s, "first_cpu_s": first_cpu, "batch": batch,
              "warm_s": warm, "warm_cpu_s": warm_cpu}
    if a.family == "ssa-bank":
        timing["events"] = res["events"]
    write_timing(os.path.join(a.out, "timing.json"), timing)
    return 0


if __name__ == "__main__":
    run_main(main, "ode_numpy")
