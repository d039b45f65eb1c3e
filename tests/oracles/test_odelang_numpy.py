"""ODE systems written in the model language (include/brainlesslab/odelang.h)
against independent NumPy evaluations, SciPy and closed forms.

The C side is tests/tools/solve_tool with a system "lang:FILE" or
"lang-hier-gG-sS[-coupled]" (the compiled protocol fixture). Comparisons, and
why each is exact or tolerance-based (docs/solvers.md, "Systems in the model
language"):

  rhs/jac   every fixture's RHS, Jacobian and parameter Jacobian against NumPy
            evaluating the same formulas in the same operation order (the
            differentiation rules of src/models/lang/eq_diff.c, written out by
            hand here): EXACT (bit patterns); with libm functions (exp, log,
            sin, ...) NumPy calls Python's math module, the same libm. Against
            NumPy's own ufuncs and against hand-simplified closed forms of the
            derivatives (another operation order): max ulps printed (<= 2 ulps
            where the value is not a cancellation). Jacobians also against
            central differences of the RHS (the rules are right, not only
            repeated).
  fixed     Euler and RK4 on language systems bit-identical to a NumPy loop.
  dopri5    a language-written Van der Pol against SciPy solve_ivp(RK45): the
            same accepted/rejected steps and f-evaluations.
  gradients a language-written exponential system: the adjoint against the
            analytic ODE gradient (<= 3.83e-10, the protocol's receipt), against
            the built-in system's adjoint (bit-identical: same operations),
            against central differences of the NumPy trajectory; the Hessian
            (second derivatives by differentiation) against differences of the
            gradient.
  observe   observations on the grid against NumPy: EXACT.
  errors    unknown symbol, non-finite RHS, stiff system under dopri5, step
            limit: refused with the equation / term named.
"""
import math
import os
import sys
import tempfile

import numpy as np
from scipy.integrate import solve_ivp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_solvers_scipy as ts  # noqa: E402

FAILS = ts.FAILS
check, put, get, run, bits_equal, ulps = ts.check, ts.put, ts.get, ts.run, ts.bits_equal, ts.ulps


def lang_file(d, params, equations, init=(), observe=()):
    path = os.path.join(d, "system.txt")
    with open(path, "w") as f:
        for k, v in params:
            f.write(f"param {k} {v!r}\n")
        for k, v in init:
            f.write(f"init {k} {v!r}\n")
        for k, e in observe:
            f.write(f"observe {k} {e}\n")
        f.write("---\n" + equations + "\n")
    return "lang:" + path


def rhs_tool(system, x, p, n, np_):
    with tempfile.TemporaryDirectory(prefix="bl-lang-") as d:
        put(d, "y.f64", x)
        put(d, "p.f64", p)
        run(["rhs", system, 0, d], d)
        m = x.shape[0]
        return (get(d, "f.f64").reshape(m, n), get(d, "jac.f64").reshape(m, n, n),
                get(d, "pjac.f64").reshape(m, n, np_))


def lib(fn):
    """A NumPy ufunc over Python's math function: the same libm as the C side."""
    u = np.frompyfunc(fn, 1, 1)
    return lambda a: u(a).astype(np.float64)


EXP, LOG, SQRT, SIN, COS, TANH = (lib(math.exp), lib(math.log), lib(math.sqrt), lib(math.sin), lib(math.cos),
                                  lib(math.tanh))
POW = np.frompyfunc(lambda a, b: a * a if b == 2.0 else math.pow(a, b), 2, 1)


def powf(a, b):
    return POW(a, b).astype(np.float64)


def fd_jac(f, x, p, h=1e-6):
    """Central differences of f(x rows, p) with respect to x and p: (J, P)."""
    m, n = x.shape
    J = np.zeros((m, n, n))
    P = np.zeros((m, n, len(p)))
    for j in range(n):
        e = np.zeros(n)
        e[j] = h
        J[:, :, j] = (f(x + e, p) - f(x - e, p)) / (2 * h)
    for k in range(len(p)):
        e = np.zeros(len(p))
        e[k] = h
        P[:, :, k] = (f(x, p + e) - f(x, p - e)) / (2 * h)
    return J, P


# ---------------------------------------------------------------- the hierarchical fixture, compiled
def lang_hier(G, S, coupled, x, p, W):
    """RHS, J, P of the generated text (odelang.h) in its operation order."""
    m, n = x.shape[0], G * S
    k, u = p[:n], p[n:]
    f = np.empty((m, n))
    J = np.zeros((m, n, n))
    P = np.zeros((m, n, n + G))
    for g in range(G):
        o = g * S
        f[:, o] = u[g] - k[o] * x[:, o]
        if coupled:
            c = None
            for h in range(G):
                if W[g, h] == 0.0:
                    continue
                xh = x[:, h * S + S - 1]
                d = 1.0 + xh * xh
                sat = xh / d
                term = W[g, h] * sat
                c = term if c is None else c + term
                # D(W * (xh / d)) = W * ((1 - (xh / d) * (xh + xh)) / d)
                J[:, o, h * S + S - 1] = W[g, h] * ((1.0 - sat * (xh + xh)) / d)
            if c is not None:
                f[:, o] = f[:, o] + c
        J[:, o, o] = -k[o]
        P[:, o, o] = -x[:, o]
        P[:, o, n + g] = 1.0
        for s in range(1, S):
            f[:, o + s] = k[o + s - 1] * x[:, o + s - 1] - k[o + s] * x[:, o + s]
            J[:, o + s, o + s - 1] = k[o + s - 1]
            J[:, o + s, o + s] = -k[o + s]
            P[:, o + s, o + s - 1] = x[:, o + s - 1]
            P[:, o + s, o + s] = -x[:, o + s]
    return f, J, P


def test_fixtures():
    rng = np.random.default_rng(11)
    for G, S in ((4, 2), (16, 8)):
        for coupled in (False, True):
            name = f"lang-hier-g{G}-s{S}" + ("-coupled" if coupled else "")
            p, W, _ = ts.hier_def(G, S)
            n = G * S
            x = rng.uniform(-2.0, 2.0, size=(64, n))
            f, J, P = rhs_tool(name, x, p, n, n + G)
            fn, Jn, Pn = lang_hier(G, S, coupled, x, p, W)
            check(bits_equal(f, fn) and bits_equal(J, Jn) and bits_equal(P, Pn),
                  f"fixture {name}: compiled RHS, Jacobian (by differentiation) and parameter Jacobian at 64 states "
                  f"identical to NumPy in the same order")
            # the hand-written built-in (src/solvers/systems.c): same RHS operations; Jacobian in closed form
            fb = ts.hier_rhs(G, S, coupled, W, x, p)
            Jb, Pb = ts.hier_jac(G, S, coupled, W, x, p), ts.hier_pjac(G, S, x)
            big = np.abs(Jb) > 1e-3
            uj = ulps(J[big], Jb[big])
            ej = np.max(np.abs(J - Jb))
            check(bits_equal(f, fb) and bits_equal(P, Pb) and ej <= 4.5e-16 * max(1.0, np.max(np.abs(Jb))),
                  f"fixture {name}: RHS and P identical to the built-in's; Jacobian vs its closed form "
                  f"W (1 - x^2)/(1 + x^2)^2: max {uj} ulps away from cancellations, max abs {ej:.1e}")
            Jd, Pd = fd_jac(lambda xx, pp: lang_hier(G, S, coupled, xx, pp, W)[0], x[:4], p)
            ed = max(np.max(np.abs(J[:4] - Jd)), np.max(np.abs(P[:4] - Pd)))
            check(ed < 1e-8, f"fixture {name}: Jacobians vs central differences of the RHS: max {ed:.1e}")


# ---------------------------------------------------------------- every differentiation rule
ALL_EQS = """a = exp(-q * x) : 1
dx/dt = a + log(1 + y * y) - sqrt(1 + x * x) : 1
dy/dt = sin(q * x) * cos(y) - tanh(x - y) + abs(x - 1) * y ** 3 + clip(x, 0.5, 1.5) + x ** 2.5 / (1 + y * y) : 1
dz/dt = r * x / (z + 2) - z ** r + int(x > y) * t : 1"""


def all_rhs(X, p, t=0.0, F=None):
    """The equations above; F: the functions (libm through math, or NumPy's ufuncs)."""
    E, L, R, Si, Co, Th, Pw = F or (EXP, LOG, SQRT, SIN, COS, TANH, powf)
    x, y, z = X[:, 0], X[:, 1], X[:, 2]
    q, r = p
    a = E(-q * x)
    f0 = (a + L(1.0 + y * y)) - R(1.0 + x * x)
    cl = np.minimum(np.maximum(x, 0.5), 1.5)
    f1 = ((((Si(q * x) * Co(y)) - Th(x - y)) + (np.abs(x - 1.0) * Pw(y, 3.0))) + cl) + (Pw(x, 2.5) / (1.0 + y * y))
    f2 = ((r * x) / (z + 2.0) - Pw(z, r)) + (x > y) * t
    return np.stack([f0, f1, f2], axis=1)


def all_jac(X, p):
    """The derivatives as eq_diff.c's rules build them, operation for operation."""
    x, y, z = X[:, 0], X[:, 1], X[:, 2]
    q, r = p
    m = X.shape[0]
    J = np.zeros((m, 3, 3))
    P = np.zeros((m, 3, 2))
    a = EXP(-q * x)
    R = SQRT(1.0 + x * x)
    # f0 = (a + log(1 + y*y)) - sqrt(1 + x*x)
    J[:, 0, 0] = a * (-q) - (x + x) / (2.0 * R)
    J[:, 0, 1] = (y + y) / (1.0 + y * y)
    P[:, 0, 0] = a * (-x)
    # f1 = ((((sin(q x) cos(y) - tanh(x - y)) + abs(x - 1) y**3) + clip(x, 0.5, 1.5)) + x**2.5 / (1 + y y)
    sg = (x - 1.0 > 0).astype(float) - (x - 1.0 < 0).astype(float)  # the sign, as (a > 0) - (a < 0)
    y3 = powf(y, 3.0)
    dcl = np.where(x < 0.5, 0.0, np.where(x > 1.5, 0.0, 1.0))
    x25 = powf(x, 2.5)
    d = 1.0 + y * y
    t1 = (COS(q * x) * q) * COS(y)
    t2 = 1.0 - TANH(x - y) * TANH(x - y)
    J[:, 1, 0] = (((t1 - t2) + sg * y3) + dcl) + (2.5 * powf(x, 1.5)) / d
    xd = x25 / d
    J[:, 1, 1] = ((SIN(q * x) * (-SIN(y)) - (-t2)) + np.abs(x - 1.0) * (3.0 * (y * y))) + \
        (-(xd * (y + y))) / d
    P[:, 1, 0] = (COS(q * x) * x) * COS(y)
    # f2 = ((r * x) / (z + 2) - z ** r) + int(x > y) * t   (int(...) is piecewise constant: no derivative)
    zr = powf(z, r)
    rx = r * x
    J[:, 2, 0] = r / (z + 2.0)
    J[:, 2, 2] = (-(rx / (z + 2.0))) / (z + 2.0) - (r * powf(z, r - 1.0))
    P[:, 2, 1] = x / (z + 2.0) - zr * LOG(z)
    return J, P


def test_rules():
    rng = np.random.default_rng(5)
    m = 64
    X = np.stack([rng.uniform(0.05, 2.0, m), rng.uniform(-2.0, 2.0, m), rng.uniform(0.1, 3.0, m)], axis=1)
    p = np.array([0.7, 1.3])
    with tempfile.TemporaryDirectory(prefix="bl-lang-") as d:
        sysname = lang_file(d, [("q", p[0]), ("r", p[1])], ALL_EQS)
        f, J, P = rhs_tool(sysname, X, p, 3, 2)
        desc = run(["describe", sysname, 0], d).stdout
    fn = all_rhs(X, p)
    check(bits_equal(f, fn), "rules: RHS with exp, log, sqrt, sin, cos, tanh, abs, clip, **, /, comparison "
          "identical to NumPy over libm in the same order")
    npf = all_rhs(X, p, F=(np.exp, np.log, np.sqrt, np.sin, np.cos, np.tanh, np.power))
    big = np.abs(npf) > 1e-3
    print(f"     rules: RHS against NumPy's own ufuncs (its exp/log/sin..., not libm): max {ulps(f[big], npf[big])} ulps")
    Jn, Pn = all_jac(X, p)
    same = bits_equal(J, Jn) and bits_equal(P, Pn)
    if not same:
        bad = np.argwhere(J.view(np.uint64) != Jn.view(np.uint64))
        print("     differing J entries (row, i, j):", bad[:6].tolist(), "ulps", ulps(J, Jn))
        badp = np.argwhere(P.view(np.uint64) != Pn.view(np.uint64))
        print("     differing P entries:", badp[:6].tolist(), "ulps", ulps(P, Pn))
        print(desc)
    check(same, "rules: Jacobian and parameter Jacobian by differentiation identical to NumPy's evaluation of the "
          "same rules in the same order")
    # structural zeros at special values: d(k*y)/dk = y is inf at y = inf (not 1*y + k*0 = nan for k = inf);
    # d(0*x)/dx is the literal 0 even at x = inf (the derivative of the function, documented)
    with tempfile.TemporaryDirectory(prefix="bl-lang-") as d:
        sp = lang_file(d, [("k", 1.0)], "dx/dt = k * y : 1\ndy/dt = 0 * x - y : 1")
        Xs = np.array([[np.inf, np.inf], [np.nan, 1.0]])
        fs, Js, Ps = rhs_tool(sp, Xs, np.array([np.inf]), 2, 1)
    check(Ps[0, 0, 0] == np.inf and Js[0, 1, 0] == 0.0 and not np.isnan(Js[1, 1, 0]) and
          Js[0, 0, 1] == np.inf and Js[0, 1, 1] == -1.0,
          f"rules: structural zeros at inf/nan: dF/dk = y = {Ps[0, 0, 0]}, d(0*x)/dx = {Js[0, 1, 0]}, "
          f"d(k*y)/dy = k = {Js[0, 0, 1]}")
    Jd, Pd = fd_jac(lambda xx, pp: all_rhs(xx, pp), X, p)
    e = max(np.max(np.abs(J - Jd) / (1 + np.abs(Jd))), np.max(np.abs(P - Pd) / (1 + np.abs(Pd))))
    check(e < 1e-7, f"rules: Jacobians vs central differences of the RHS: max relative {e:.1e} (differences' own error)")


# ---------------------------------------------------------------- fixed steps, dopri5
VDP = "dx/dt = v : 1\ndv/dt = mu * (1 - x**2) * v - x : 1"


def vdp_np(X, p):
    x, v = X[:, 0], X[:, 1]
    return np.stack([v, ((p[0] * (1.0 - x * x)) * v) - x], axis=1)


def test_fixed_and_dopri5():
    with tempfile.TemporaryDirectory(prefix="bl-lang-") as d:
        vdp = lang_file(d, [("mu", 1.0)], VDP, init=[("x", 2.0)], observe=[("energy", "x**2 + v*v"),
                                                                            ("phase", "t * mu + x")])
        p, y0 = np.array([1.0]), np.array([2.0, 0.0])
        for method, sub in (("euler", 10), ("rk4", 10)):
            t = np.linspace(0.0, 10.0, 41)
            r, _ = ts.ode("solve", vdp, 0, method, t, y0, p, sub=sub)
            ref = ts.numpy_fixed(method, vdp_np, t, y0, p, sub)
            check(bits_equal(r["y"], ref), f"fixed {method}: language Van der Pol ({(len(t) - 1) * sub} steps) "
                  f"identical to the NumPy loop")
            # observations on the grid
            with tempfile.TemporaryDirectory(prefix="bl-lang-") as d2:
                put(d2, "t.f64", t)
                put(d2, "y.f64", r["y"])
                put(d2, "p.f64", p)
                run(["obs", vdp, 0, d2], d2)
                ob = get(d2, "obs.f64").reshape(len(t), 2)
            Y = r["y"]
            on = np.stack([Y[:, 0] * Y[:, 0] + Y[:, 1] * Y[:, 1], t * p[0] + Y[:, 0]], axis=1)
            check(bits_equal(ob, on), f"observe {method}: observations on the grid identical to NumPy")
        for G, S in ((4, 2), (16, 8)):
            name = f"lang-hier-g{G}-s{S}-coupled"
            pp, W, y0h = ts.hier_def(G, S)
            t = np.linspace(0.0, 2.0, 5)
            r, _ = ts.ode("solve", name, 0, "rk4", t, y0h, pp, sub=16)
            ref = ts.numpy_fixed("rk4", lambda X, q: lang_hier(G, S, True, X, q, W)[0], t, y0h, pp, 16)
            check(bits_equal(r["y"], ref), f"fixed rk4: compiled {name} identical to the NumPy loop")
        for rtol, atol in ((1e-6, 1e-9), (1e-9, 1e-12)):
            t = np.linspace(0.0, 20.0, 81)
            f = lambda tt, yy: vdp_np(yy[None, :], p)[0]  # noqa: E731
            r, _ = ts.ode("solve", vdp, 0, "dopri5", t, y0, p, rtol=rtol, atol=atol)
            steps = solve_ivp(f, (t[0], t[-1]), y0, method="RK45", rtol=rtol, atol=atol)
            sp = solve_ivp(f, (t[0], t[-1]), y0, method="RK45", t_eval=t, rtol=rtol, atol=atol)
            acc, attempts = len(steps.t) - 1, (steps.nfev - 2) // 6
            st = r["stats"]
            dev = np.max(np.abs(r["y"] - sp.y.T) / (atol + rtol * np.abs(sp.y.T)))
            check(st["accepted"] == acc and st["rejected"] == attempts - acc and st["rhs_evals"] == steps.nfev
                  and dev < 1e-6,
                  f"dopri5 language Van der Pol rtol {rtol:g}: {st['accepted']} accepted, {st['rejected']} rejected, "
                  f"{st['rhs_evals']} f; SciPy RK45 {acc}, {attempts - acc}, {steps.nfev}; deviation {dev:.1e}")
        # cvode-bdf with the differentiated Jacobian, stiff Van der Pol
        t = np.linspace(0.0, 3000.0, 7)
        pst = np.array([1000.0])
        r, _ = ts.ode("solve", vdp, 0, "cvode-bdf", t, y0, pst, rtol=1e-6, atol=1e-9)
        fs = lambda tt, yy: vdp_np(yy[None, :], pst)[0]  # noqa: E731
        ref = solve_ivp(fs, (t[0], t[-1]), y0, method="LSODA", t_eval=t, rtol=1e-11, atol=1e-13).y.T
        e = np.max(np.abs(r["y"] - ref) / (1e-9 + 1e-6 * np.abs(ref)))
        bi, _ = ts.ode("solve", "vdp", 2, "cvode-bdf", t, y0, pst, rtol=1e-6, atol=1e-9)
        eb = np.max(np.abs(bi["y"] - ref) / (1e-9 + 1e-6 * np.abs(ref)))
        check(r["stats"]["jac_evals"] > 0 and e <= 10 * max(eb, 1.0),
              f"cvode-bdf language Van der Pol mu=1000 with the compiled Jacobian: {r['stats']['accepted']} steps, "
              f"{r['stats']['jac_evals']} Jacobians, error vs LSODA 1e-11 {e:.0f} (units of atol + rtol|y|); "
              f"the hand-written built-in: {bi['stats']['accepted']} steps, error {eb:.0f}")
        # a stiff system under dopri5: step limit, stiffness named
        out, err = ts.ode("solve", vdp, 0, "dopri5", np.array([0.0, 3000.0]), y0, pst, max_steps=20000,
                          expect_ok=False)
        check(out is None and "step limit 20000 reached" in err and "looks stiff" in err,
              f"stiff language system under dopri5 refused: {err.strip()[:160]}")


# ---------------------------------------------------------------- gradients
def exp_text(n):
    return "\n".join(f"dy{i}/dt = -k{i} * y{i} : 1" for i in range(n))


def test_gradients():
    n = 256
    p = np.array([0.1 + 0.9 * i / (n - 1) for i in range(n)])
    y0 = np.array([1.0 + 0.125 * (i % 8) for i in range(n)])
    w = np.ones(n)
    with tempfile.TemporaryDirectory(prefix="bl-lang-") as d:
        sysname = lang_file(d, [(f"k{i}", p[i]) for i in range(n)], exp_text(n),
                            init=[(f"y{i}", y0[i]) for i in range(n)])
        for steps in (64, 128):
            t = np.array([0.0, 1.0])
            r, _ = ts.ode("grad", sysname, 0, "rk4", t, y0, p, sub=steps, w=w)
            b, _ = ts.ode("grad", "exponential", n, "rk4", t, y0, p, sub=steps, w=w)
            exact = -1.0 * y0 * np.exp(-p * 1.0)
            e = np.max(np.abs(r["grad"] - exact))
            check(bits_equal(r["grad"], b["grad"]) and bits_equal(r["y"], b["y"]),
                  f"gradient: language exponential (256 states, RK4 {steps} steps) adjoint identical to the built-in's")
            if steps == 128:
                check(e <= 3.83e-10, f"gradient: language exponential RK4 {steps} steps vs the analytic ODE gradient: "
                      f"max error {e:.2e} (protocol receipt 3.83e-10)")
            else:
                print(f"     gradient: RK4 64 steps vs analytic: max error {e:.2e} (RK4's truncation error; 128 steps "
                      f"meets the receipt)")
        # central differences of the NumPy trajectory (a few parameters)
        t = np.linspace(0.0, 1.0, 5)
        r, _ = ts.ode("grad", sysname, 0, "euler", t, y0, p, sub=16, w=w)
        rhs = lambda X, q: -q[None, :] * X  # noqa: E731
        worst = 0.0
        for j in (0, 77, 255):
            h = 1e-6
            pp, pm = p.copy(), p.copy()
            pp[j] += h
            pm[j] -= h
            fd = (np.sum(ts.numpy_fixed("euler", rhs, t, y0, pp, 16)[-1]) -
                  np.sum(ts.numpy_fixed("euler", rhs, t, y0, pm, 16)[-1])) / (2 * h)
            worst = max(worst, abs(r["grad"][j] - fd) / abs(fd))
        check(worst < 1e-7, f"gradient: language exponential Euler adjoint vs central differences: max relative "
              f"{worst:.1e}")
    # Hessian (second derivatives by differentiation) on Van der Pol
    with tempfile.TemporaryDirectory(prefix="bl-lang-") as d:
        eqs = "dx/dt = v : 1\ndv/dt = mu * (1 - x**2) * v - c * x : 1"
        sysname = lang_file(d, [("mu", 0.8), ("c", 1.2)], eqs)
        p, y0, t = np.array([0.8, 1.2]), np.array([1.5, 0.0]), np.linspace(0.0, 2.0, 5)
        wv = np.array([1.0, 0.5])
        with tempfile.TemporaryDirectory(prefix="bl-lang-") as d2:
            put(d2, "t.f64", t)
            put(d2, "y0.f64", y0)
            put(d2, "p.f64", p)
            put(d2, "w.f64", wv)
            run(["hess", sysname, 0, "rk4", 20, "1e-6", "1e-9", 1000, d2], d2)
            H, g = get(d2, "hess.f64").reshape(2, 2), get(d2, "grad.f64")
        Hd = np.zeros((2, 2))
        for j in range(2):
            h = 1e-5
            pp, pm = p.copy(), p.copy()
            pp[j] += h
            pm[j] -= h
            gp, _ = ts.ode("grad", sysname, 0, "rk4", t, y0, pp, sub=20, w=wv)
            gm, _ = ts.ode("grad", sysname, 0, "rk4", t, y0, pm, sub=20, w=wv)
            Hd[:, j] = (gp["grad"] - gm["grad"]) / (2 * h)
        e = np.max(np.abs(H - Hd)) / np.max(np.abs(Hd))
        check(e < 1e-6 and np.max(np.abs(H - H.T)) < 1e-10 * np.max(np.abs(H)),
              f"hessian: language Van der Pol (2 parameters) forward over adjoint vs differences of the gradient: "
              f"relative {e:.1e}, symmetric")


def test_more_methods():
    # CVODES sensitivities through the compiled Jacobians, against the analytic exponential
    n = 8
    p = np.array([0.1 + 0.9 * i / (n - 1) for i in range(n)])
    y0 = np.array([1.0 + 0.125 * (i % 8) for i in range(n)])
    t = np.linspace(0.0, 2.0, 5)
    with tempfile.TemporaryDirectory(prefix="bl-lang-") as d:
        sysname = lang_file(d, [(f"k{i}", p[i]) for i in range(n)], exp_text(n),
                            init=[(f"y{i}", y0[i]) for i in range(n)])
        r, _ = ts.ode("sens", sysname, 0, "cvode-bdf", t, y0, p, rtol=1e-10, atol=1e-12)
        ex = np.zeros((len(t), n, n))
        for i in range(n):
            ex[:, i, i] = -t * y0[i] * np.exp(-p[i] * t)
        e = np.max(np.abs(r["sens"] - ex))
        check(e < 1e-7, f"cvode-bdf sensitivities of the language exponential vs analytic: max {e:.1e} at rtol 1e-10")
        a, _ = ts.ode("solve", sysname, 0, "arkode-dopri5", t, y0, p, rtol=1e-8, atol=1e-10)
        exy = y0[None, :] * np.exp(-p[None, :] * t[:, None])
        e = np.max(np.abs(a["y"] - exy) / (1e-10 + 1e-8 * np.abs(exy)))
        check(e < 10, f"arkode-dopri5 on the language exponential vs analytic: {e:.2f} (units of atol + rtol|y|)")
    # the compiled fixture's Hessian (second derivatives by differentiation) against the hand-written built-in's
    G, S = 4, 2
    pp, W, y0h = ts.hier_def(G, S)
    t = np.linspace(0.0, 1.0, 3)
    w = np.linspace(0.5, 1.5, G * S)
    H = {}
    for name in ("lang-hier-g4-s2-coupled", "hier-g4-s2-coupled"):
        with tempfile.TemporaryDirectory(prefix="bl-lang-") as d2:
            put(d2, "t.f64", t)
            put(d2, "y0.f64", y0h)
            put(d2, "p.f64", pp)
            put(d2, "w.f64", w)
            run(["hess", name, 0, "rk4", 8, "1e-6", "1e-9", 1000, d2], d2)
            H[name] = get(d2, "hess.f64").reshape(len(pp), len(pp))
    a, b = H["lang-hier-g4-s2-coupled"], H["hier-g4-s2-coupled"]
    e = np.max(np.abs(a - b)) / np.max(np.abs(b))
    check(e < 1e-13, f"hessian: compiled g4-s2 coupled (12 parameters) vs the hand-written built-in's: relative {e:.1e}")


# ---------------------------------------------------------------- bad systems
def test_errors():
    with tempfile.TemporaryDirectory(prefix="bl-lang-") as d:
        bad = lang_file(d, [("k", 1.0)], "dx/dt = -k * x + q : 1")
        r = run(["describe", bad, 0], d, expect_ok=False)
        check(r.returncode != 0 and "unknown variable 'q'" in r.stderr and "line 1" in r.stderr,
              f"error: unknown symbol named with its equation: {r.stderr.strip()[:150]}")
    with tempfile.TemporaryDirectory(prefix="bl-lang-") as d:
        bad = lang_file(d, [("k", 1.0)], "dx/dt = -k * x : 1\ndy/dt = log(x - 1) : 1")
        out, err = ts.ode("solve", bad, 0, "rk4", np.array([0.0, 1.0]), np.array([1.0, 0.0]), np.array([1.0]),
                          expect_ok=False)
        check(out is None and "not finite" in err and "state 1" in err,
              f"error: non-finite RHS at the initial state refused: {err.strip()[:150]}")
    with tempfile.TemporaryDirectory(prefix="bl-lang-") as d:
        # x' = x^2 blows up at t = 1: the adaptive step collapses; rk4 reports the non-finite state
        blow = lang_file(d, [], "dx/dt = x**2 : 1", init=[("x", 1.0)])
        t, y0, p = np.array([0.0, 2.0]), np.array([1.0]), np.zeros(0)
        out, err = ts.ode("solve", blow, 0, "dopri5", t, y0, p, expect_ok=False)
        check(out is None and "step size collapsed" in err and "t = 1.0000" in err,
              f"error: blow-up under dopri5, the step-size collapse: {err.strip()[:170]}")
        out, err = ts.ode("solve", blow, 0, "rk4", t, y0, p, sub=100, expect_ok=False)
        check(out is None and "non-finite" in err and "state 0 is x (equations line 1: 'dx/dt = x**2 : 1')" in err,
              f"error: blow-up under rk4, the state named by its equation: {err.strip()[:220]}")
        out, err = ts.ode("solve", blow, 0, "cvode-bdf", t, y0, p, max_steps=2000, expect_ok=False)
        check(out is None and "mxstep" in err, f"error: blow-up under cvode-bdf, the step limit: {err.strip()[:170]}")
    with tempfile.TemporaryDirectory(prefix="bl-lang-") as d:
        bad = lang_file(d, [], "dt/dt = 1 : 1")
        r = run(["describe", bad, 0], d, expect_ok=False)
        check(r.returncode != 0 and "t is the time" in r.stderr, f"error: a state named t: {r.stderr.strip()[:120]}")
    with tempfile.TemporaryDirectory(prefix="bl-lang-") as d:
        bad = lang_file(d, [("k", 1.0)], "dx/dt = -k * x : 1\nk : 1")
        r = run(["describe", bad, 0], d, expect_ok=False)
        check(r.returncode != 0 and "second equation" in r.stderr,
              f"error: a parameter also declared in the equations: {r.stderr.strip()[:150]}")


def main():
    if not os.path.exists(ts.TOOL):
        print(f"skip: {ts.TOOL} is not built")
        return 77
    test_fixtures()
    test_rules()
    test_fixed_and_dopri5()
    test_gradients()
    test_more_methods()
    test_errors()
    print(f"oracle odelang: {len(FAILS)} failures")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
