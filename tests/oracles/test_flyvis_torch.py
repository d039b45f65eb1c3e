"""The flyvis application (include/brainlesslab/flyvis.h) against an
independent construction and PyTorch autograd (docs/solvers.md, "The flyvis
application").

The C side is tests/tools/flyvis_tool (raw little-endian files in a temporary
directory). Comparisons, and why each is exact or tolerance-based:

  connectome  cells and edges (order included) against flyvis's own recipe
              done here with SciPy's Qhull hull ("QJ", as flyvis) and the
              crossing-number test matplotlib's Path.contains_points applies:
              EXACT (same integers); plus flyvis's published counts at extent
              15 (45,669 cells, 1,513,231 edges) from the C side.
  forward     the Euler trajectory against PyTorch float64 doing the same
              operations in the same order (index_add_ on the CPU sums a
              target's inputs in edge order, as the C rows do): EXACT (bit
              patterns), at two extents.
  gradients   dJ/dtau, dJ/db, dJ/dstrength by the C discrete adjoint against
              torch autograd through the same trajectory: the same quantity
              summed in another order, so a tolerance (normwise relative error
              <= 1e-11; measured values printed), and against central finite
              differences of the C trajectory on a few parameters (<= 1e-6
              relative: the differences' own truncation and rounding).
"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

try:
    import torch
    import scipy.spatial as ss
except ImportError as e:  # Debian python3-torch / python3-scipy
    print(f"skip: {e}")
    sys.exit(77)

torch.set_num_threads(1)
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("BL_SOURCE_DIR", os.path.join(HERE, "..", ".."))
JSON = os.path.join(SRC, "data", "drosophila-optic-lobe-flyvis", "fib25-fib19_v2.2.json")
TOOL = os.path.join(os.environ.get("BL_BUILD_DIR", "build"), "tests", "flyvis_tool")
FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILS.append(what)


def tool(*args):
    r = subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"flyvis_tool {' '.join(map(str, args))} failed: {r.stderr}")
    return r.stdout


def get(d, name, dtype=np.float64):
    return np.fromfile(os.path.join(d, name), dtype=dtype)


# ---- flyvis's construction, independently (SciPy Qhull + matplotlib's test) ----

def contains(verts, tx, ty):
    """matplotlib's point_in_path (crossing number, half-open edges)."""
    inside = False
    x0, y0 = verts[-1]
    yf0 = y0 >= ty
    for x1, y1 in verts:
        yf1 = y1 >= ty
        if yf0 != yf1 and (((y1 - ty) * (x0 - x1) >= (x1 - tx) * (y0 - y1)) == yf1):
            inside = not inside
        yf0, x0, y0 = yf1, x1, y1
    return inside


def fill_hull(offsets, fill):
    known = np.array([o[0] for o in offsets])
    known_set = set(map(tuple, known.tolist()))
    hull = ss.ConvexHull((1 + 1e-6) * known, False, "QJ")
    verts = [tuple(map(float, p)) for p in known[hull.vertices]]
    extra = []
    for u in range(known[:, 0].min(), known[:, 0].max() + 1):
        for v in range(known[:, 1].min(), known[:, 1].max() + 1):
            if (u, v) not in known_set and contains(verts, u, v):
                extra.append([[u, v], fill])
    return offsets + extra


def build(spec, extent, fill=1.0):
    import json
    cells, index = [], {}
    for t, n in enumerate(spec["nodes"]):
        kind, arg = n["pattern"]
        su, sv = (arg if kind == "stride" else (arg, arg) if kind == "tile" else (1, 1))
        e = 0 if kind == "single" else extent
        for u in range(-e, e + 1):
            for v in range(max(-e, -e - u), min(e, e - u) + 1):
                if u % su == 0 and v % sv == 0:
                    index[(t, u, v)] = len(cells)
                    cells.append((t, u, v))
    names = {n["name"]: t for t, n in enumerate(spec["nodes"])}
    by_type = {}
    for i, (t, u, v) in enumerate(cells):
        by_type.setdefault(t, []).append(i)
    edges, nsyn = [], []
    for k, e in enumerate(spec["edges"]):
        offs = fill_hull(e["offsets"], fill) if fill > 0 and len(e["offsets"]) >= 3 else e["offsets"]
        ts, tt = names[e["src"]], names[e["tar"]]
        for (du, dv), n in offs:
            for i in by_type.get(ts, []):
                _, u, v = cells[i]
                j = index.get((tt, u + du, v + dv))
                if j is not None:
                    edges.append((i, j, k))
                    nsyn.append(n)
    return np.array(cells, dtype=np.int32), np.array(edges, dtype=np.int64), np.array(nsyn, dtype=np.float64)


# ---- the model in PyTorch, the same operations in the same order ----

def torch_run(d, cells, edges, nsyn, etypes, tau, bias, strength, dt, steps, speed, start, on, off, objtype,
              inputs):
    ctype = torch.from_numpy(cells[:, 0].astype(np.int64))
    src = torch.from_numpy(edges[:, 0].copy())
    tar = torch.from_numpy(edges[:, 1].copy())
    et = torch.from_numpy(edges[:, 2].copy())
    sign = torch.from_numpy(etypes[:, 2].astype(np.float64))[et]
    coef = sign * torch.from_numpy(nsyn)
    tau_t = torch.tensor(tau, dtype=torch.float64, requires_grad=True)
    b_t = torch.tensor(bias, dtype=torch.float64, requires_grad=True)
    s_t = torch.tensor(strength, dtype=torch.float64, requires_grad=True)
    n = len(cells)
    p = cells[:, 1].astype(np.float64) + 0.5 * cells[:, 2].astype(np.float64)
    is_in = np.isin(cells[:, 0], inputs)
    w = coef * s_t[et]
    cb = b_t[ctype]
    cit = (1.0 / tau_t)[ctype]
    V = cb
    traj = [V]
    for k in range(steps):
        t = float(k) * dt
        x = torch.from_numpy(np.where(is_in, np.where(p <= start + speed * t, on, off), 0.0))
        r = torch.relu(V)
        s = torch.zeros(n, dtype=torch.float64).index_add_(0, tar, w * r[src])
        a = -V + cb + s + x
        V = V + dt * (cit * a)
        traj.append(V)
    Vs = torch.stack(traj)
    sel = torch.from_numpy(np.nonzero(cells[:, 0] == objtype)[0])
    scale = 1.0 / (float(steps) * float(len(sel)))
    J = (Vs[1:, sel] ** 2).sum() * scale
    J.backward()
    return Vs.detach().numpy(), float(J), tau_t.grad.numpy(), b_t.grad.numpy(), s_t.grad.numpy()


def c_run(d, extent, tau, bias, strength, dt, steps, speed, start, on, off, objtype, grad=1):
    np.asarray(tau, dtype=np.float64).tofile(os.path.join(d, "tau.f64"))
    np.asarray(bias, dtype=np.float64).tofile(os.path.join(d, "bias.f64"))
    np.asarray(strength, dtype=np.float64).tofile(os.path.join(d, "strength.f64"))
    tool("run", JSON, extent, 1, dt, steps, speed, start, on, off, objtype, grad, 1, d)
    out = [get(d, "V.f64"), float(get(d, "J.f64")[0])]
    if grad:
        out += [get(d, "gtau.f64"), get(d, "gbias.f64"), get(d, "gstrength.f64")]
    return out


def main():
    import json
    if not os.path.exists(TOOL):
        print(f"skip: {TOOL} not built")
        return 77
    spec = json.load(open(JSON))
    inputs = [i for i, n in enumerate(spec["nodes"]) if n["name"] in spec["input_units"]]
    names = [n["name"] for n in spec["nodes"]]
    with tempfile.TemporaryDirectory() as d:
        out = tool("net", JSON, 15, 1, d).split()
        check(out == ["45669", "1513231", "65", "605"],
              f"extent 15: {out[0]} cells, {out[1]} edges (flyvis: 45,669 and 1,513,231)")
        for extent, steps, grad in ((3, 60, True), (6, 12, False)):
            t0 = time.time()
            tool("net", JSON, extent, 1, d)
            cells = get(d, "cells.i32", np.int32).reshape(-1, 3)
            edges = get(d, "edges.i64", np.int64).reshape(-1, 3)
            nsyn = get(d, "nsyn.f64")
            etypes = get(d, "etypes.i64", np.int64).reshape(-1, 3)
            pc, pe, pn = build(spec, extent)
            check(np.array_equal(cells, pc), f"extent {extent}: {len(cells)} cells equal flyvis's construction")
            check(np.array_equal(edges, pe) and np.array_equal(nsyn, pn),
                  f"extent {extent}: {len(edges)} edges (source, target, type, n_syn, order) equal flyvis's")
            tau = get(d, "tau0.f64").copy()
            bias = get(d, "bias0.f64").copy()
            strength = get(d, "strength0.f64").copy()
            # A spread of values so that every parameter matters differently.
            rng = np.random.default_rng(24)
            tau = tau * rng.uniform(0.6, 1.6, tau.size)
            bias = bias + rng.normal(0, 0.2, bias.size)
            strength = strength * rng.uniform(0.5, 3.0, strength.size)
            dt, speed, start, on, off = 0.005, 50.0, -float(extent), 1.0, 0.0
            objtype = names.index("T4a")
            cV, cJ, *cg = c_run(d, extent, tau, bias, strength, dt, steps, speed, start, on, off, objtype, int(grad))
            tV, tJ, gt, gb, gs = torch_run(d, cells, edges, nsyn, etypes, tau, bias, strength, dt, steps, speed,
                                           start, on, off, objtype, inputs)
            cV = cV.reshape(steps + 1, -1)
            same = np.array_equal(cV.view(np.int64), tV.view(np.int64))
            ulps = int(np.max(np.abs(cV.view(np.int64) - tV.view(np.int64))))
            active = float(np.mean(cV[-1] > 0))
            check(same, f"extent {extent}: Euler trajectory {steps} steps x {cV.shape[1]} cells bit-identical "
                        f"to torch (max {ulps} ulps; {active:.0%} of cells active at the end)")
            check(abs(cJ - tJ) <= 1e-14 * abs(tJ), f"extent {extent}: J = {cJ:.17g} (torch {tJ:.17g})")
            if not grad:
                continue
            for name, c, t in zip(("tau", "bias", "strength"), cg, (gt, gb, gs)):
                rel = float(np.max(np.abs(c - t)) / np.max(np.abs(t)))
                check(rel <= 1e-11 and np.max(np.abs(t)) > 0,
                      f"extent {extent}: dJ/d{name} ({c.size}) vs torch autograd: normwise relative error "
                      f"{rel:.2e} (max |g| {np.max(np.abs(t)):.3e})")
            # Central differences of the C trajectory on the largest few.
            for name, c, vec in (("tau", cg[0], tau), ("bias", cg[1], bias), ("strength", cg[2], strength)):
                for idx in np.argsort(-np.abs(c))[:2]:
                    h = 1e-5 * abs(vec[idx])
                    Js = []
                    for sgn in (1, -1):
                        v2 = vec.copy()
                        v2[idx] += sgn * h
                        args = {"tau": tau, "bias": bias, "strength": strength}
                        args[name] = v2
                        Js.append(c_run(d, extent, args["tau"], args["bias"], args["strength"], dt, steps, speed,
                                        start, on, off, objtype, 0)[1])
                    fd = (Js[0] - Js[1]) / (2 * h)
                    rel = abs(fd - c[idx]) / abs(c[idx])
                    check(rel <= 1e-6, f"extent {extent}: dJ/d{name}[{idx}] = {c[idx]:.10e}, central "
                                       f"difference {fd:.10e} (relative {rel:.1e})")
            print(f"     extent {extent}: {time.time() - t0:.1f} s")
    if FAILS:
        print(f"{len(FAILS)} failed")
        return 1
    print("all ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
