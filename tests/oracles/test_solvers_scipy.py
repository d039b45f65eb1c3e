"""The solvers of include/brainlesslab/solvers.h against NumPy and SciPy.

The C side is tests/tools/solve_tool (raw float64/int64 files in a temporary
directory). Comparisons, and why each is exact or tolerance-based
(docs/solvers.md):

  fixtures   every built-in RHS, Jacobian and parameter Jacobian (the protocol's
             hierarchical fixtures g4-s2 and g16-s8, independent and coupled;
             exponential, Van der Pol, Robertson) against NumPy doing the same
             operations in the same order: EXACT. The coupled sums also against
             NumPy's matrix product (another summation order): <= 2 ulps.
  fixed      Euler and RK4 trajectories on identical meshes against a NumPy loop
             with the same operation order: EXACT (bit patterns).
  gradients  discrete adjoint = forward sensitivities (same quantity, other
             summation order: 1e-13 relative); against the exact derivative of
             the RK4 map and the analytic ODE gradient on the exponential system
             (protocol: 64 steps, 256 states, rate gradient, max error < 3.83e-10);
             against central differences of the NumPy trajectory; against CVODES.
  dopri5     against SciPy solve_ivp(RK45) at the same rtol/atol: the same
             accepted and rejected step counts, values to rounding (SciPy sums
             stages with BLAS in another order); and the analytic solution.
             A stiff Van der Pol (mu = 1000) is refused with the step limit.
  stiff      cvode-bdf against SciPy BDF and LSODA (Robertson, Van der Pol mu =
             1000): each compared with a tight LSODA reference; CVODE's error
             must be within the error SciPy's own BDF makes at the same
             tolerances (x10) -- adaptive meshes differ, so only tolerance-level
             agreement has meaning. arkode-dopri5 likewise against dopri5.
  ssa        the direct method replayed draw for draw by a NumPy Philox loop:
             EXACT; birth-death mean and variance against the analytic law;
             KS and chi-square tests of the stationary Poisson distribution;
             A + B <-> C conserved in every replicate; bank of 16 = first 16 of
             64, 1 thread = 2 threads; tau-leap mean against its own expected
             recursion (it is approximate).
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy import stats
from scipy.integrate import solve_ivp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blconn  # noqa: E402

TOOL = os.path.join(os.environ.get("BL_BUILD_DIR", "build"), "tests", "solve_tool")
FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILS.append(what)


def run(args, d, expect_ok=True):
    r = subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True)
    if expect_ok and r.returncode != 0:
        raise SystemExit(f"solve_tool {' '.join(map(str, args))} failed: {r.stderr}")
    return r


def put(d, name, a, dtype=np.float64):
    np.ascontiguousarray(a, dtype=dtype).tofile(os.path.join(d, name))


def get(d, name, dtype=np.float64):
    return np.fromfile(os.path.join(d, name), dtype=dtype)


def ode(mode, system, n, method, t, y0, p, sub=1, rtol=1e-6, atol=1e-9, max_steps=100000, w=None, expect_ok=True):
    with tempfile.TemporaryDirectory(prefix="bl-solve-") as d:
        put(d, "t.f64", t)
        put(d, "y0.f64", y0)
        put(d, "p.f64", p)
        if w is not None:
            put(d, "w.f64", w)
        r = run([mode, system, n, method, sub, repr(rtol), repr(atol), max_steps, d], d, expect_ok)
        if r.returncode != 0:
            return None, r.stderr
        st = json.loads(r.stdout)
        out = {"y": get(d, "y.f64").reshape(len(t), -1), "stats": st}
        if mode == "sens":
            out["sens"] = get(d, "sens.f64").reshape(len(t), len(y0), len(p))
        if mode == "grad":
            out["grad"], out["grady0"], out["value"] = get(d, "grad.f64"), get(d, "grady0.f64"), get(d, "value.f64")[0]
        return out, r.stderr


def bits_equal(a, b):
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


def ulps(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    ia, ib = a.view(np.int64), b.view(np.int64)
    ia = np.where(ia < 0, np.int64(-0x8000000000000000) - ia, ia)
    ib = np.where(ib < 0, np.int64(-0x8000000000000000) - ib, ib)
    return int(np.max(np.abs(ia - ib))) if a.size else 0


# ---------------------------------------------------------------- fixtures (NumPy, same operation order)
def hier_def(G, S):
    k = np.array([0.5 + 0.25 * ((g + 2 * s) % 4) for g in range(G) for s in range(S)])
    u = np.array([1.0 + 0.5 * (g % 3) for g in range(G)])
    W = np.array([[0.0 if g == h else (((g * 7 + h * 3) % 5) - 2) * 0.25 / G for h in range(G)] for g in range(G)])
    y0 = np.array([0.125 * (s + 1) for g in range(G) for s in range(S)])
    return np.concatenate([k, u]), W, y0


def hier_rhs(G, S, coupled, W, x, p):
    """x: (m, G*S). Same operations, same order as src/solvers/systems.c."""
    m = x.shape[0]
    X = x.reshape(m, G, S)
    k = p[: G * S].reshape(G, S)
    u = p[G * S:]
    c = np.zeros((m, G))
    if coupled:
        last = X[:, :, S - 1]
        sat = last / (1.0 + last * last)
        for h in range(G):
            c = c + W[None, :, h] * sat[:, h:h + 1]
    F = np.empty_like(X)
    F[:, :, 0] = (u[None, :] - k[None, :, 0] * X[:, :, 0]) + c
    F[:, :, 1:] = k[None, :, :-1] * X[:, :, :-1] - k[None, :, 1:] * X[:, :, 1:]
    return F.reshape(m, G * S)


def hier_jac(G, S, coupled, W, x, p):
    m, n = x.shape[0], G * S
    J = np.zeros((m, n, n))
    for g in range(G):
        o = g * S
        J[:, o, o] = -p[o]
        for s in range(1, S):
            J[:, o + s, o + s - 1] = p[o + s - 1]
            J[:, o + s, o + s] = -p[o + s]
        if coupled:
            for h in range(G):
                xh = x[:, h * S + S - 1]
                d = 1.0 + xh * xh
                J[:, o, h * S + S - 1] += W[g, h] * ((1.0 - xh * xh) / (d * d))
    return J


def hier_pjac(G, S, x):
    m, n = x.shape[0], G * S
    P = np.zeros((m, n, n + G))
    for g in range(G):
        o = g * S
        P[:, o, o] = -x[:, o]
        P[:, o, n + g] = 1.0
        for s in range(1, S):
            P[:, o + s, o + s - 1] = x[:, o + s - 1]
            P[:, o + s, o + s] = -x[:, o + s]
    return P


def vdp_rhs(x, p):
    return np.stack([x[:, 1], p[0] * (1.0 - x[:, 0] * x[:, 0]) * x[:, 1] - x[:, 0]], axis=1)


def rob_rhs(x, p):
    y0, y1, y2 = x[:, 0], x[:, 1], x[:, 2]
    return np.stack([-p[0] * y0 + p[2] * y1 * y2, p[0] * y0 - p[1] * y1 * y1 - p[2] * y1 * y2, p[1] * y1 * y1], axis=1)


def exp_rhs(x, p):
    return -p[None, :] * x


def system_numpy(name, n):
    """(rhs(x_rows, p), p, y0) of a built-in system, written independently."""
    if name == "exponential":
        p = np.array([0.1 + 0.9 * i / (n - 1 if n > 1 else 1) for i in range(n)])
        y0 = np.array([1.0 + 0.125 * (i % 8) for i in range(n)])
        return exp_rhs, p, y0
    if name == "vdp":
        return vdp_rhs, np.array([1.0]), np.array([2.0, 0.0])
    if name == "robertson":
        return rob_rhs, np.array([0.04, 3e7, 1e4]), np.array([1.0, 0.0, 0.0])
    parts = name.split("-")
    G, S, coupled = int(parts[1][1:]), int(parts[2][1:]), len(parts) > 3
    p, W, y0 = hier_def(G, S)
    return (lambda x, pp: hier_rhs(G, S, coupled, W, x, pp)), p, y0


def test_fixtures():
    rng = np.random.default_rng(7)
    for G, S in ((4, 2), (16, 8)):
        for coupled in (False, True):
            name = f"hier-g{G}-s{S}" + ("-coupled" if coupled else "")
            p, W, _ = hier_def(G, S)
            x = rng.uniform(-2.0, 2.0, size=(64, G * S))
            with tempfile.TemporaryDirectory(prefix="bl-solve-") as d:
                put(d, "y.f64", x)
                put(d, "p.f64", p)
                run(["rhs", name, 0, d], d)
                n = G * S
                f, J, P = get(d, "f.f64").reshape(64, n), get(d, "jac.f64").reshape(64, n, n), \
                    get(d, "pjac.f64").reshape(64, n, n + G)
            fn, Jn, Pn = hier_rhs(G, S, coupled, W, x, p), hier_jac(G, S, coupled, W, x, p), hier_pjac(G, S, x)
            check(bits_equal(f, fn) and bits_equal(J, Jn) and bits_equal(P, Pn),
                  f"fixture {name}: RHS, Jacobian and parameter Jacobian at 64 states identical to NumPy (same order)")
            # NumPy's own idiom (matrix product: another summation order)
            X = x.reshape(64, G, S)
            last = X[:, :, S - 1]
            c = (last / (1.0 + last * last)) @ W.T if coupled else 0.0
            F = np.empty_like(X)
            F[:, :, 0] = (p[G * S:][None, :] - p[: G * S].reshape(G, S)[None, :, 0] * X[:, :, 0]) + c
            F[:, :, 1:] = p[: G * S].reshape(G, S)[None, :, :-1] * X[:, :, :-1] - \
                p[: G * S].reshape(G, S)[None, :, 1:] * X[:, :, 1:]
            F = F.reshape(64, n)
            # ulps where the value is not a cancellation near zero; absolute elsewhere
            big = np.abs(F) > 1e-3
            u = ulps(f[big], F[big])
            check(u <= 2 and np.max(np.abs(f - F)) <= 1.8e-15 * max(1.0, np.max(np.abs(F))),
                  f"fixture {name}: against NumPy's matrix-product form: max {u} ulps, max abs {np.max(np.abs(f - F)):.2e}")
    for name, n in (("vdp", 2), ("robertson", 3), ("exponential", 16)):
        rhs, p, _ = system_numpy(name, n)
        x = rng.uniform(0.0, 2.0, size=(32, n))
        with tempfile.TemporaryDirectory(prefix="bl-solve-") as d:
            put(d, "y.f64", x)
            put(d, "p.f64", p)
            run(["rhs", name, n, d], d)
            f = get(d, "f.f64").reshape(32, n)
        check(bits_equal(f, rhs(x, p)), f"fixture {name}: RHS identical to NumPy")


# ---------------------------------------------------------------- fixed-step trajectories
def numpy_fixed(method, rhs, t, y0, p, sub):
    """The stepper loop of src/solvers/fixed.c, euler.c and rk4.c, in NumPy."""
    y = y0.copy()
    out = [y.copy()]
    f = lambda tt, yy: rhs(yy[None, :], p)[0]  # noqa: E731
    for k in range(len(t) - 1):
        h = (t[k + 1] - t[k]) / float(sub)
        for j in range(sub):
            tj = t[k] + float(j) * h
            if method == "euler":
                y = y + h * f(tj, y)
            else:
                hh, h6 = h * 0.5, h / 6.0
                k1 = f(tj, y)
                k2 = f(tj + hh, y + hh * k1)
                k3 = f(tj + hh, y + hh * k2)
                k4 = f(tj + h, y + h * k3)
                y = y + h6 * (((k1 + 2.0 * k2) + 2.0 * k3) + k4)
        out.append(y.copy())
    return np.array(out)


def test_fixed():
    cases = [("exponential", 256, np.linspace(0.0, 1.0, 9), 8), ("vdp", 2, np.linspace(0.0, 10.0, 41), 10),
             ("hier-g4-s2-coupled", 8, np.array([0.0, 0.3, 0.7, 1.1, 2.0]), 7),
             ("hier-g16-s8-coupled", 128, np.linspace(0.0, 2.0, 5), 16), ("hier-g16-s8", 128, np.linspace(0.0, 2.0, 5), 16)]
    for name, n, t, sub in cases:
        rhs, p, y0 = system_numpy(name, n)
        for method in ("euler", "rk4"):
            r, _ = ode("solve", name, n, method, t, y0, p, sub=sub)
            yn = numpy_fixed(method, rhs, t, y0, p, sub)
            steps = (len(t) - 1) * sub
            check(bits_equal(r["y"], yn) and r["stats"]["accepted"] == steps,
                  f"{method} {name}: {steps} steps, {len(t)} outputs x {n} states identical to NumPy")
            # ARKODE's ERKStep with the same tableau on the same mesh: an independent implementation. Euler is
            # the same operations (y + (h * 1) k1); RK4's stages are ARKODE's linear combinations (another
            # summation order), so it agrees to rounding, accumulated over the steps.
            a, _ = ode("solve", name, n, "arkode-" + method, t, y0, p, sub=sub)
            rel = np.max(np.abs(a["y"] - yn) / np.maximum(np.max(np.abs(yn), axis=0), 1e-300))
            same = bits_equal(a["y"], yn)
            check(a["stats"]["accepted"] == steps and (same if method == "euler" else rel < 1e-12),
                  f"arkode-{method} {name}: {steps} steps, " + ("bit-identical to ours" if same else
                  f"max {rel:.1e} of each state's scale from ours ({ulps(a['y'], yn)} ulps)"))


# ---------------------------------------------------------------- derivatives
def test_gradients():
    # The protocol's probe: RK4, 64 steps, 256 states, rate gradient of the sum of final states.
    n, T, N = 256, 1.0, 64
    rhs, k, y0 = system_numpy("exponential", n)
    t = np.array([0.0, T])
    r, _ = ode("grad", "exponential", n, "rk4", t, y0, k, sub=N, w=np.ones(n))
    s, _ = ode("sens", "exponential", n, "rk4", t, y0, k, sub=N)
    h = T / N
    z = -k * h
    R = 1 + z + z * z / 2 + z ** 3 / 6 + z ** 4 / 24
    dR = 1 + z + z * z / 2 + z ** 3 / 6
    discrete = y0 * N * R ** (N - 1) * dR * -h
    analytic = -T * y0 * np.exp(-k * T)
    g = r["grad"]
    fwd = np.diagonal(s["sens"][-1])
    e_disc = np.max(np.abs(g - discrete) / np.abs(discrete))
    e_an = np.max(np.abs(g - analytic))
    trunc = np.max(np.abs(discrete - analytic))
    e_fwd = np.max(np.abs(g - fwd) / np.abs(fwd))
    check(e_fwd < 1e-13, f"rk4 adjoint = forward sensitivities (256 states, 64 steps): max rel {e_fwd:.1e}")
    check(e_disc < 1e-13, f"rk4 adjoint = exact derivative of the discrete map y0 R(-kh)^N: max rel {e_disc:.1e}")
    # Against the ODE's gradient the difference is RK4's truncation error of the mesh, nothing else:
    check(abs(e_an - trunc) <= 1e-3 * trunc, f"rk4 adjoint vs the analytic gradient -T y0 exp(-kT), 64 steps, k in "
          f"[0.1, 1]: max abs {e_an:.3e} = the mesh's truncation error {trunc:.3e}")
    r128, _ = ode("grad", "exponential", n, "rk4", t, y0, k, sub=128, w=np.ones(n))
    e128 = np.max(np.abs(r128["grad"] - analytic))
    check(e128 < 3.83e-10, f"rk4 adjoint vs the analytic gradient, 128 steps: max abs {e128:.2e} (< 3.83e-10)")
    # The protocol's two probe shapes (8 steps / 16 states and 64 steps / 256 states) with a step of 0.01 (the
    # protocol does not state its horizon or rates; this choice is ours): the error against the ODE's gradient is
    # again the mesh's truncation error, and the part due to the derivative computation is printed apart.
    for N, nn in ((8, 16), (64, 256)):
        Tn = 0.01 * N
        _, kk, yy0 = system_numpy("exponential", nn)
        rr, _ = ode("grad", "exponential", nn, "rk4", np.array([0.0, Tn]), yy0, kk, sub=N, w=np.ones(nn))
        zz = -kk * 0.01
        RR = 1 + zz + zz * zz / 2 + zz ** 3 / 6 + zz ** 4 / 24
        dRR = 1 + zz + zz * zz / 2 + zz ** 3 / 6
        dd = yy0 * N * RR ** (N - 1) * dRR * -0.01
        ea = np.max(np.abs(rr["grad"] - (-Tn * yy0 * np.exp(-kk * Tn))))
        ed = np.max(np.abs(rr["grad"] - dd))
        check(ea < 3.83e-10 and ed < 1e-13, f"rk4 adjoint, {N} steps of 0.01, {nn} states, rate gradient of the sum of "
              f"final states: max abs {ea:.2e} vs the analytic gradient (< 3.83e-10), {ed:.1e} vs the exact derivative "
              f"of the discrete map")
    check(abs(r["value"] - np.sum(y0 * R ** N)) < 1e-12 * n, "rk4 objective value = sum y0 R^N")
    # grad wrt y0 of the sum of final states: R^N (derivative of a linear map)
    e0 = np.max(np.abs(r["grady0"] - R ** N) / R ** N)
    check(e0 < 1e-13, f"rk4 adjoint d/dy0 = R(-kh)^N: max rel {e0:.1e}")
    # Euler: the exact derivative of y0 (1 - k h)^N
    r, _ = ode("grad", "exponential", n, "euler", t, y0, k, sub=N, w=np.ones(n))
    de = y0 * N * (1 - k * h) ** (N - 1) * -h
    ee = np.max(np.abs(r["grad"] - de) / np.abs(de))
    check(ee < 1e-13, f"euler adjoint = exact derivative of y0 (1 - kh)^N: max rel {ee:.1e}")
    # CVODES forward sensitivities at tight tolerances against the analytic gradient and the RK4 adjoint (fine mesh)
    n = 16
    rhs, k, y0 = system_numpy("exponential", n)
    c, _ = ode("sens", "exponential", n, "cvode-bdf", np.array([0.0, 0.5, 1.0]), y0, k, rtol=1e-10, atol=1e-12)
    a, _ = ode("grad", "exponential", n, "rk4", t, y0, k, sub=512, w=np.ones(n))
    cs = np.diagonal(c["sens"][-1])
    an = -T * y0 * np.exp(-k * T)
    check(np.max(np.abs(cs - an)) < 1e-7 and np.max(np.abs(cs - a["grad"])) < 1e-7,
          f"CVODES sensitivities vs analytic: {np.max(np.abs(cs - an)):.1e}, vs rk4 adjoint (512 steps): "
          f"{np.max(np.abs(cs - a['grad'])):.1e}")
    # Central differences of the NumPy trajectory (coupled nonlinear fixture, a weighted final objective)
    name = "hier-g4-s2-coupled"
    rhs, p, y0 = system_numpy(name, 8)
    t = np.linspace(0.0, 2.0, 5)
    w = np.linspace(-1.0, 1.0, 8)
    for method in ("euler", "rk4"):
        r, _ = ode("grad", name, 8, method, t, y0, p, sub=8, w=w)
        s, _ = ode("sens", name, 8, method, t, y0, p, sub=8)
        fd = np.empty_like(p)
        for j in range(len(p)):
            hj = 1e-6 * abs(p[j])
            pp, pm = p.copy(), p.copy()
            pp[j] += hj
            pm[j] -= hj
            fd[j] = (w @ numpy_fixed(method, rhs, t, y0, pp, 8)[-1] - w @ numpy_fixed(method, rhs, t, y0, pm, 8)[-1]) / (2 * hj)
        e = np.max(np.abs(r["grad"] - fd) / (1 + np.abs(fd)))
        ef = np.max(np.abs(r["grad"] - w @ s["sens"][-1]))
        check(e < 1e-8 and ef < 1e-13, f"{method} {name} adjoint vs central differences of NumPy's trajectory: "
              f"max rel {e:.1e}; vs forward sensitivities {ef:.1e}")
    # CVODES sensitivities on Robertson against the augmented system in LSODA at tight tolerances
    rhs, p, y0 = system_numpy("robertson", 3)
    tt = np.array([0.0, 0.4, 4.0, 40.0])
    c, _ = ode("sens", "robertson", 3, "cvode-bdf", tt, y0, p, rtol=1e-8, atol=1e-14)

    def aug(tm, z):
        y, Sm = z[:3], z[3:].reshape(3, 3)
        a, b, cc = p
        J = np.array([[-a, cc * y[2], cc * y[1]], [a, -2 * b * y[1] - cc * y[2], -cc * y[1]], [0, 2 * b * y[1], 0]])
        P = np.array([[-y[0], 0, y[1] * y[2]], [y[0], -y[1] ** 2, -y[1] * y[2]], [0, y[1] ** 2, 0]])
        return np.concatenate([rob_rhs(y[None, :], p)[0], (J @ Sm + P).ravel()])

    ref = solve_ivp(aug, (0, tt[-1]), np.concatenate([y0, np.zeros(9)]), method="LSODA", t_eval=tt, rtol=1e-11,
                    atol=1e-16)
    Sref = ref.y[3:].T.reshape(len(tt), 3, 3)
    scale = np.max(np.abs(Sref), axis=0) + 1e-30
    e = np.max(np.abs(c["sens"] - Sref) / scale)
    check(e < 1e-4, f"CVODES Robertson sensitivities vs LSODA augmented system (rtol 1e-11): max {e:.1e} of each "
          f"entry's scale (CVODE rtol 1e-8)")


# ---------------------------------------------------------------- adaptive explicit
def test_dopri5():
    cases = [("exponential", 4, np.linspace(0.0, 5.0, 11), 1e-6, 1e-9), ("exponential", 4, np.linspace(0.0, 5.0, 11), 1e-10, 1e-12),
             ("vdp", 2, np.linspace(0.0, 20.0, 81), 1e-6, 1e-9), ("vdp", 2, np.linspace(0.0, 20.0, 81), 1e-9, 1e-12),
             ("hier-g16-s8-coupled", 128, np.linspace(0.0, 3.0, 13), 1e-7, 1e-10),
             ("robertson", 3, np.array([0.0, 0.1, 0.3, 1.0]), 1e-6, 1e-10)]
    for name, n, t, rtol, atol in cases:
        rhs, p, y0 = system_numpy(name, n)
        f = lambda tt, yy: rhs(yy[None, :], p)[0]  # noqa: E731
        r, _ = ode("solve", name, n, "dopri5", t, y0, p, rtol=rtol, atol=atol)
        sp = solve_ivp(f, (t[0], t[-1]), y0, method="RK45", t_eval=t, rtol=rtol, atol=atol)
        steps = solve_ivp(f, (t[0], t[-1]), y0, method="RK45", rtol=rtol, atol=atol)
        acc = len(steps.t) - 1
        attempts = (steps.nfev - 2) // 6
        st = r["stats"]
        dev = np.max(np.abs(r["y"] - sp.y.T) / (atol + rtol * np.abs(sp.y.T)))
        check(st["accepted"] == acc and st["rejected"] == attempts - acc and st["rhs_evals"] == steps.nfev,
              f"dopri5 {name} rtol {rtol:g}: {st['accepted']} accepted, {st['rejected']} rejected, {st['rhs_evals']} "
              f"f-evaluations; SciPy RK45: {acc}, {attempts - acc}, {steps.nfev}")
        check(dev < 1e-6, f"dopri5 {name} rtol {rtol:g}: max deviation from SciPy {dev:.1e} of (atol + rtol|y|)")
        if name == "exponential":
            ex = y0[None, :] * np.exp(-p[None, :] * t[:, None])
            e = np.max(np.abs(r["y"] - ex) / (atol + rtol * np.abs(ex)))
            es = np.max(np.abs(sp.y.T - ex) / (atol + rtol * np.abs(ex)))
            check(e < 10, f"dopri5 exponential rtol {rtol:g}: error vs analytic {e:.2f} (SciPy {es:.2f}) in units of "
                  f"atol + rtol|y|")
        # ARKODE's Dormand-Prince: an independent implementation, other controller
        if name != "robertson":
            a, _ = ode("solve", name, n, "arkode-dopri5", t, y0, p, rtol=rtol, atol=atol)
            ref = solve_ivp(f, (t[0], t[-1]), y0, method="DOP853", t_eval=t, rtol=1e-13, atol=1e-14).y.T
            ea = np.max(np.abs(a["y"] - ref) / (atol + rtol * np.abs(ref)))
            ed = np.max(np.abs(r["y"] - ref) / (atol + rtol * np.abs(ref)))
            # global error is not bounded by the local tolerance (Van der Pol's phase drifts): ARKODE's must be
            # of the order of our (= SciPy's) dopri5's
            check(ea <= 10 * max(ed, 1.0), f"arkode-dopri5 {name} rtol {rtol:g}: error vs DOP853 reference {ea:.2f} "
                  f"({a['stats']['accepted']} steps, {a['stats']['rejected']} rejected); dopri5 {ed:.2f} "
                  f"(units of atol + rtol|y|)")
    # Stiff Van der Pol (mu = 1000) over [0, 1], where the explicit method still finishes: SciPy's steps exactly, the
    # stiffness test firing on half of them (the step is bounded by stability, not accuracy)
    rhs, _, y0 = system_numpy("vdp", 2)
    pst = np.array([1000.0])
    t = np.linspace(0.0, 1.0, 11)
    f = lambda tt, yy: rhs(yy[None, :], pst)[0]  # noqa: E731
    r, _ = ode("solve", "vdp", 2, "dopri5", t, y0, pst, rtol=1e-6, atol=1e-9)
    sp = solve_ivp(f, (t[0], t[-1]), y0, method="RK45", t_eval=t, rtol=1e-6, atol=1e-9)
    steps = solve_ivp(f, (t[0], t[-1]), y0, method="RK45", rtol=1e-6, atol=1e-9)
    acc, attempts = len(steps.t) - 1, (steps.nfev - 2) // 6
    st = r["stats"]
    dev = np.max(np.abs(r["y"] - sp.y.T) / (1e-9 + 1e-6 * np.abs(sp.y.T)))
    check(st["accepted"] == acc and st["rejected"] == attempts - acc and st["rhs_evals"] == steps.nfev and dev < 1e-6,
          f"dopri5 stiff vdp mu = 1000 over [0, 1], rtol 1e-6: {st['accepted']} accepted, {st['rejected']} rejected, "
          f"{st['rhs_evals']} f (stiffness test positive on {st['stiffness_flags']}); SciPy RK45: {acc}, "
          f"{attempts - acc}, {steps.nfev}; deviation {dev:.1e} of (atol + rtol|y|)")
    # Stiff Van der Pol given to the explicit method: refused with the step limit, the stiffness named
    rhs, p, y0 = system_numpy("vdp", 2)
    out, err = ode("solve", "vdp", 2, "dopri5", np.array([0.0, 3000.0]), y0, np.array([1000.0]), rtol=1e-6, atol=1e-9,
                   max_steps=50000, expect_ok=False)
    check(out is None and "step limit 50000 reached" in err and "looks stiff" in err,
          f"dopri5 on Van der Pol mu = 1000 refused: {err.strip()}")


# ---------------------------------------------------------------- stiff
def test_stiff():
    cases = [("robertson", 3, np.array([0.0] + list(np.logspace(-4, 5, 19))), np.array([0.04, 3e7, 1e4]), 1e-6, 1e-10),
             ("vdp", 2, np.linspace(0.0, 3000.0, 31), np.array([1000.0]), 1e-6, 1e-9)]
    for name, n, t, p, rtol, atol in cases:
        rhs, _, y0 = system_numpy(name, n)
        f = lambda tt, yy: rhs(yy[None, :], p)[0]  # noqa: E731
        if name == "robertson":
            def jac(tt, y):
                a, b, c = p
                return np.array([[-a, c * y[2], c * y[1]], [a, -2 * b * y[1] - c * y[2], -c * y[1]], [0, 2 * b * y[1], 0]])
        else:
            def jac(tt, y):
                return np.array([[0.0, 1.0], [-2 * p[0] * y[0] * y[1] - 1, p[0] * (1 - y[0] ** 2)]])
        ref = solve_ivp(f, (t[0], t[-1]), y0, method="LSODA", t_eval=t, rtol=1e-11, atol=atol * 1e-3, jac=jac).y.T
        r, _ = ode("solve", name, n, "cvode-bdf", t, y0, p, rtol=rtol, atol=atol)
        bdf = solve_ivp(f, (t[0], t[-1]), y0, method="BDF", t_eval=t, rtol=rtol, atol=atol, jac=jac)
        lsoda = solve_ivp(f, (t[0], t[-1]), y0, method="LSODA", t_eval=t, rtol=rtol, atol=atol, jac=jac)
        unit = atol + rtol * np.abs(ref)
        ec = np.max(np.abs(r["y"] - ref) / unit)
        eb = np.max(np.abs(bdf.y.T - ref) / unit)
        el = np.max(np.abs(lsoda.y.T - ref) / unit)
        st = r["stats"]
        check(ec <= 10 * max(eb, el, 1.0), f"cvode-bdf {name}: error vs tight LSODA {ec:.1f}, SciPy BDF {eb:.1f}, "
              f"LSODA {el:.1f} (units of atol + rtol|y|); CVODE {st['accepted']} steps, {st['rejected']} error-test "
              f"failures, {st['rhs_evals']} f, {st['jac_evals']} J; SciPy BDF {bdf.nfev} f, {bdf.njev} J")
        if name == "robertson":
            check(np.max(np.abs(r["y"].sum(axis=1) - 1.0)) < 1e-6, "cvode-bdf robertson conserves y0 + y1 + y2 = 1")


# ---------------------------------------------------------------- SSA
def ssa(model, method, seed, first, nrep, threads, tau, t, x0, p):
    with tempfile.TemporaryDirectory(prefix="bl-ssa-") as d:
        put(d, "t.f64", t)
        put(d, "x0.i64", x0, np.int64)
        put(d, "p.f64", p)
        run(["ssa", model, method, seed, first, nrep, threads, repr(tau), d], d)
        return get(d, "out.i64", np.int64).reshape(nrep, len(t), len(x0)), get(d, "events.u64", np.uint64)


def u53(hi, lo):
    return float(((int(hi) << 32) | int(lo)) >> 11) * 2.0 ** -53


def numpy_direct(change, order, rate, x0, t, seed, rep, max_events=100000):
    """Gillespie's direct method with the stream layout of docs/streams.md ("SSA replicates"), in Python."""
    x = np.array(x0, dtype=np.int64)
    out = [x.copy()]
    tc, k, ev = t[0], 1, 0
    block = 4096
    words = None
    while k < len(t):
        a = np.empty(len(rate))
        for j in range(len(rate)):
            v = rate[j]
            for s in range(len(x)):
                o, xs = order[j][s], int(x[s])
                if o >= 1:
                    v *= float(xs)
                if o >= 2:
                    v *= float(xs - 1) / 2.0
                if o >= 1 and xs < o:
                    v = 0.0
            a[j] = v
        a0 = 0.0
        for v in a:
            a0 += v
        tn, u2 = math.inf, 0.0
        if a0 > 0:
            if ev % block == 0:
                c0 = np.arange(ev, ev + block, dtype=np.uint64)
                words = blconn.philox4x32_10(c0 & 0xFFFFFFFF, rep, 0x55A1, c0 >> 32, seed & 0xFFFFFFFF, seed >> 32)
            w = [words[q][ev % block] for q in range(4)]
            u1, u2 = u53(w[0], w[1]), u53(w[2], w[3])
            tn = tc + -math.log(1.0 - u1) / a0
        while k < len(t) and t[k] < tn:
            out.append(x.copy())
            k += 1
        if k == len(t):
            break
        target, cum, j, last = u2 * a0, 0.0, None, None
        for i in range(len(a)):
            if a[i] > 0:
                last = i
            cum += a[i]
            if cum > target:
                j = i
                break
        if j is None:
            j = last
        x = x + np.array(change[j], dtype=np.int64)
        tc = tn
        ev += 1
    return np.array(out), ev


def test_ssa():
    blconn.philox_selfcheck()
    t = np.linspace(0.0, 10.0, 21)
    kb, gd = 10.0, 1.0
    p = np.array([kb, gd])
    # Exact replay of the direct method, draw for draw
    seed = 0x1234_5678_9ABC_DEF0
    out, ev = ssa("birth-death", "direct", seed, 0, 8, 2, 0.0, t, np.array([0]), p)
    same = True
    for r in range(8):
        o, e = numpy_direct([[1], [-1]], [[0], [1]], p, [0], t, seed, r)
        same &= np.array_equal(o, out[r]) and e == int(ev[r])
    check(same, f"ssa direct birth-death: 8 replicates ({int(ev.sum())} events) identical to the NumPy Philox replay")
    abc_change, abc_order = [[-1, -1, 1], [1, 1, -1]], [[1, 1, 0], [0, 0, 1]]
    pa = np.array([0.01, 0.5])
    x0 = np.array([100, 80, 0])
    out, ev = ssa("abc", "direct", 99, 0, 4, 1, 0.0, t, x0, pa)
    same = True
    for r in range(4):
        o, e = numpy_direct(abc_change, abc_order, pa, x0, t, 99, r)
        same &= np.array_equal(o, out[r]) and e == int(ev[r])
    check(same, f"ssa direct A + B <-> C: 4 replicates ({int(ev.sum())} events) identical to the NumPy Philox replay")

    # Birth-death from 0: X(t) ~ Poisson(lambda(t)), lambda = kb/gd (1 - exp(-gd t))
    R = 4000
    out, ev = ssa("birth-death", "direct", 2024, 0, R, 0, 0.0, t, np.array([0]), p)
    X = out[:, :, 0].astype(np.float64)
    lam = kb / gd * (1 - np.exp(-gd * t))
    mean, var = X.mean(axis=0), X.var(axis=0, ddof=1)
    zm = np.abs(mean[1:] - lam[1:]) / np.sqrt(lam[1:] / R)
    zv = np.abs(var[1:] - lam[1:]) / np.sqrt((lam[1:] + 2 * lam[1:] ** 2) / R)
    check(zm.max() < 5 and zv.max() < 5, f"ssa birth-death mean and variance vs Poisson(lambda(t)) at 20 times, "
          f"{R} replicates: max |z| mean {zm.max():.2f}, variance {zv.max():.2f}")
    # Stationary law: Poisson(kb/gd), sampled at t = 10 (exp(-10) from stationarity) and t = 20 in other replicates
    tt = np.array([0.0, 20.0])
    st_out, _ = ssa("birth-death", "direct", 77, 0, 3000, 0, 0.0, tt, np.array([0]), p)
    sample = st_out[:, 1, 0]
    # KS on a discrete law: D = sup |ECDF - F| is reached on the integers; Kolmogorov's p-value is then
    # conservative (Noether 1963)
    xs = np.arange(0, sample.max() + 1)
    ecdf = np.searchsorted(np.sort(sample), xs, side="right") / len(sample)
    D = np.max(np.abs(ecdf - stats.poisson.cdf(xs, kb / gd)))
    ks = type("ks", (), {"statistic": D, "pvalue": stats.kstwo.sf(D, len(sample))})
    vals = np.arange(0, 25)
    obs = np.array([np.sum(sample == v) for v in vals[:-1]] + [np.sum(sample >= vals[-1])])
    expct = np.concatenate([stats.poisson.pmf(vals[:-1], kb / gd), [stats.poisson.sf(vals[-1] - 1, kb / gd)]]) * len(sample)
    keep = expct >= 5
    chi = stats.chisquare(np.concatenate([obs[keep], [obs[~keep].sum()]]),
                          np.concatenate([expct[keep], [expct[~keep].sum()]]))
    check(ks.pvalue > 0.001 and chi.pvalue > 0.001, f"ssa birth-death stationary law Poisson(10), 3000 replicates: KS D "
          f"{ks.statistic:.4f} (p {ks.pvalue:.3f}, conservative for a discrete law), chi-square p {chi.pvalue:.3f}")

    # A + B <-> C: totals conserved in every replicate and time, both methods; ownership
    for method, tau in (("direct", 0.0), ("tau-leap", 0.02)):
        b64, _ = ssa("abc", method, 5, 0, 64, 1, tau, t, x0, pa)
        b64t, _ = ssa("abc", method, 5, 0, 64, 2, tau, t, x0, pa)
        b16, _ = ssa("abc", method, 5, 0, 16, 2, tau, t, x0, pa)
        tail, _ = ssa("abc", method, 5, 48, 16, 2, tau, t, x0, pa)
        cons = np.all(b64[:, :, 0] + b64[:, :, 2] == 100) and np.all(b64[:, :, 1] + b64[:, :, 2] == 80) and np.all(b64 >= 0)
        check(cons, f"ssa {method} A + B <-> C: A + C and B + C conserved in all 64 replicates at every time")
        check(np.array_equal(b64, b64t) and np.array_equal(b16, b64[:16]) and np.array_equal(tail, b64[48:]),
              f"ssa {method}: 1 thread = 2 threads, bank of 16 = first 16 of 64, replicates 48..63 alone = in the bank")
    # Tau-leap (approximate): its mean follows the Euler recursion m' = m + (kb - gd m) tau exactly in expectation
    tau = 0.05
    out, leaps = ssa("birth-death", "tau-leap", 31, 0, R, 0, tau, t, np.array([0]), p)
    m = [0.0]
    mm = 0.0
    for k in range(1, len(t)):
        for _ in range(int(round((t[k] - t[k - 1]) / tau))):
            mm = mm + (kb - gd * mm) * tau
        m.append(mm)
    m = np.array(m)
    X = out[:, :, 0].astype(np.float64)
    z = np.abs(X.mean(axis=0)[1:] - m[1:]) / np.sqrt(X.var(axis=0, ddof=1)[1:] / R)
    check(z.max() < 5, f"ssa tau-leap (approximate) birth-death mean vs its expected recursion: max |z| {z.max():.2f}; "
          f"vs the exact mean: max {np.max(np.abs(X.mean(axis=0) - lam)):.3f}")


def main():
    if not os.path.exists(TOOL):
        print(f"skip: {TOOL} is not built")
        return 77
    test_fixtures()
    test_fixed()
    test_gradients()
    test_dopri5()
    test_stiff()
    test_ssa()
    print(f"oracle solvers: {len(FAILS)} failures")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
