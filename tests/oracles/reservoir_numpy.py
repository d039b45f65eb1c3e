#!/usr/bin/python3
"""Independent NumPy float64 oracle for the reservoir nodes (SORN, Falandays).

Written from the equations of docs/reservoir.md alone, as dense batched arrays
(the C library keeps sparse link rows and skips silent sources). The spec's
orders are kept literally, so results are expected bit for bit:

* every matrix is [destination, source] in bundles; internally the oracle keeps
  the transpose [batch, source, destination] so that one source's column is
  contiguous, and converts at load and save (the orientation tests catch a
  transposition either side);
* destination-owned sums run over sources in ascending order, serially, from
  +0.0: ``s = s + M[:, j, :] * v[:, j]`` for j = 0, 1, ... (never ``@`` or
  ``np.sum``, whose pairwise or BLAS orders differ); every source is summed,
  silent ones and missing links included (they add +0.0);
* NumPy never fuses a multiply-add, so each product and sum is rounded once;
* thresholds use >=; all inputs of a frame are the previous frame's state;
* a slot that turned non-finite is not advanced again (the C contract).

Command line (also the benchmark peer):
    reservoir_numpy.py replay BUNDLE --inputs X.npy [--noise Z.npy] --out DIR
                              [--freeze-weights-at K] [--freeze-plasticity-at K]
    reservoir_numpy.py bench EXPORT_DIR [--frames T] [--repeat K]
        EXPORT_DIR from `brainlesslab reservoir bench-case --export`; prints JSON
        {wall_run_s, trajectory_sha256, ...} with the hash defined in
        bench/src/res_case.c.
"""

import hashlib
import json
import math
import os
import sys
import time

import numpy as np

F64 = np.float64
# Non-finite values are part of the contract (reported through the finite
# flags), so NumPy's warnings about them are noise here.
np.seterr(all="ignore")

FALANDAYS_DEFAULTS = dict(leak=0.25, lrate_wmat=1.0, lrate_targ=0.01, threshold_mult=2.0, targ_min=1.0,
                          input_weight=1.875, link_p=0.1, recurrent_init_scale=1.0, rectify=False, dale=False,
                          inhibitory_frac=0.25, oosawa=False, membrane_noise=0.0, noise_gain=0.0, learn_on=True,
                          weight_init_std=1.0, repair_masks=False, weight_init_mode="excitatory")
SORN_DEFAULTS = dict(inhibitory_fraction=0.2, p_ee=10.0 / 166.0, p_ei=1.0, p_ie=1.0, p_input=0.05, p_output=0.05,
                     T_E_max=0.5, T_I_max=1.0, eta_stdp=0.001, eta_ip=0.001, H_ip=0.1, fast_inhibition=False,
                     pruning=True, learn_on=True,
                     # construction only (the row sums a seeded bundle was built with); stepping never reads them
                     ee_row_sum=1.0, ei_row_sum=1.0, ie_row_sum=1.0, input_row_sum=1.0)


def ordered_sum(mt, v):
    """out[b, i] = sum_j m[b, i, j] * v[b, j], j ascending, from +0.0.
    mt is the transpose [b, j, i]."""
    out = np.zeros((mt.shape[0], mt.shape[2]), dtype=F64)
    for j in range(mt.shape[1]):
        out = out + mt[:, j, :] * v[:, j][:, None]
    return out


def _arr(d, name, required=True):
    p = os.path.join(d, name + ".npy")
    if not os.path.exists(p):
        if required:
            raise FileNotFoundError(p)
        return None
    return np.load(p).astype(F64)


def load_bundle(d, params=None):
    """A bundle directory as plain arrays ([destination, source]) plus params."""
    node = {}
    if os.path.exists(os.path.join(d, "node.json")):
        node = json.load(open(os.path.join(d, "node.json")))
    kind = (params or {}).get("kind") or node["kind"]
    p = dict(FALANDAYS_DEFAULTS if kind == "falandays" else SORN_DEFAULTS)
    given = {k: v for k, v in (params or node.get("parameters", {})).items() if k != "kind"}
    for k, v in given.items():
        if k == "axis":
            p["dale"] = v == "dale"
        elif k == "drive":
            p["oosawa"] = v == "oosawa"
        else:
            if k not in p:
                raise KeyError(k)
            p[k] = v
    b = {"kind": kind, "params": p,
         "learning_weights": node.get("learning_weights", True) if params is None else True,
         "learning": node.get("learning", True) if params is None else True}
    if kind == "falandays":
        w = _arr(d, "w")
        n = w.shape[0]
        mask = _arr(d, "mask", False)
        b["w"] = w
        b["mask"] = (w != 0) if mask is None else mask != 0
        signs = _arr(d, "signs", False)
        b["signs"] = np.ones(n) if signs is None else signs
        b["w_in"] = _arr(d, "w_in")
        b["w_out"] = _arr(d, "w_out")
        for name, default in (("acts", 0.0), ("targets", p["targ_min"]), ("spikes", 0.0)):
            a = _arr(d, name, False)
            b[name] = np.full(n, default) if a is None else a
    else:
        w = _arr(d, "w_ee")
        ne = w.shape[0]
        mask = _arr(d, "mask_ee", False)
        b["w_ee"] = w
        b["mask_ee"] = (w != 0) if mask is None else mask != 0
        c_e = _arr(d, "c_e", False)
        if c_e is None:
            c_e = np.zeros(ne)
            for j in range(ne):  # ascending row sums over the links
                c_e = c_e + np.where(b["mask_ee"][:, j], w[:, j], 0.0)
        b["c_e"] = c_e
        t_i = _arr(d, "t_i", False)
        ni = 0 if t_i is None else t_i.shape[0]
        b["t_i"] = np.zeros(0) if t_i is None else t_i
        b["w_ei"] = _arr(d, "w_ei", ni > 0) if ni > 0 else np.zeros((ne, 0))
        b["w_ie"] = _arr(d, "w_ie", ni > 0) if ni > 0 else np.zeros((0, ne))
        b["w_eu"] = _arr(d, "w_eu")
        b["w_out"] = _arr(d, "w_out")
        b["t_e"] = _arr(d, "t_e")
        x, y = _arr(d, "x", False), _arr(d, "y", False)
        b["x"] = np.zeros(ne) if x is None else x
        b["y"] = np.zeros(ni) if y is None else y
    if not p["learn_on"]:
        b["learning_weights"] = b["learning"] = False
    if not b["learning"]:
        b["learning_weights"] = False
    return b


def _stack(bundles, name):
    return np.stack([np.asarray(x[name], dtype=F64) for x in bundles])


class Falandays:
    """Batched Falandays node, one bundle per slot (same shapes, same params)."""

    def __init__(self, bundles):
        p = bundles[0]["params"]
        self.p = p
        self.WT = _stack(bundles, "w").transpose(0, 2, 1).copy()  # [b, source, destination]
        self.maskT = np.stack([x["mask"] for x in bundles]).transpose(0, 2, 1).copy()
        self.sign = _stack(bundles, "signs")
        self.w_inT = _stack(bundles, "w_in").transpose(0, 2, 1).copy()  # [b, r, i]
        self.w_outT = _stack(bundles, "w_out").transpose(0, 2, 1).copy()  # [b, i, e]
        self.acts = _stack(bundles, "acts")
        self.targets = _stack(bundles, "targets")
        self.spikes = _stack(bundles, "spikes")
        B, N = self.acts.shape
        self.den = np.zeros((B, self.w_outT.shape[2]))
        for i in range(N):
            self.den = self.den + self.w_outT[:, i, :]
        self.learning = np.array([x["learning"] for x in bundles])
        self.learning_weights = np.array([x["learning_weights"] for x in bundles])
        self.finite = np.ones(B, dtype=bool)
        self.margins = np.zeros((B, N))
        self.errors = np.zeros((B, N))
        self.effectors = self.readout()

    def readout(self):
        total = ordered_sum(self.w_outT, self.spikes)
        return np.where(self.den > 0, total / np.where(self.den > 0, self.den, 1.0), 0.0)

    def step(self, u, xi=None, active=None):
        p = self.p
        B, N = self.acts.shape
        go = self.finite.copy() if active is None else (self.finite & active)
        prev = self.spikes.copy()
        sens = ordered_sum(self.w_inT, u)
        rec = ordered_sum(self.WT, prev * self.sign)
        k = (self.maskT & (prev != 0)[:, :, None]).sum(axis=1)  # links j -> i from spiking j
        a = self.acts * (1.0 - p["leak"])
        a = a + sens
        a = a + rec
        theta = self.targets * p["threshold_mult"]
        if p["oosawa"]:
            gap = theta - a
            gap = np.where(gap > 0, gap, 0.0)
            sigma = p["membrane_noise"] + p["noise_gain"] * gap
            a = a + (np.zeros((B, N)) if xi is None else xi) * sigma
        ok = np.isfinite(a) & np.isfinite(theta)
        if p["rectify"]:
            a = np.where(a < 0, 0.0, a)
        margin = a - theta
        spike = a >= theta
        a = np.where(spike, a - theta, a)
        e = a - self.targets
        ok &= np.isfinite(margin) & np.isfinite(e)
        WT, targets = self.WT, self.targets
        learn = self.learning[:, None]
        wl = (self.learning & self.learning_weights)[:, None]
        kk = np.where(k > 0, k, 1)
        delta = e / kk * p["lrate_wmat"]
        sel = self.maskT & (prev != 0)[:, :, None] & (k > 0)[:, None, :] & wl[:, :, None]
        # W - delta, or with Dale W - (-delta) for an inhibitory source j
        wv = WT - delta[:, None, :]
        if p["dale"]:
            wv = np.where((self.sign < 0)[:, :, None], WT - (-delta[:, None, :]), wv)
        ok &= ~np.any(sel & ~np.isfinite(wv), axis=1)
        if p["dale"]:
            wv = np.where(wv < 0, 0.0, wv)
        WT = np.where(sel, wv, WT)
        target = targets + e * p["lrate_targ"]
        ok &= ~(learn & ~np.isfinite(target))
        targets = np.where(learn, np.where(target < p["targ_min"], p["targ_min"], target), targets)
        g = go[:, None]
        self.acts = np.where(g, a, self.acts)
        self.spikes = np.where(g, spike.astype(F64), self.spikes)
        self.margins = np.where(g, margin, self.margins)
        self.errors = np.where(g, e, self.errors)
        self.targets = np.where(g, targets, self.targets)
        self.WT = np.where(go[:, None, None], WT, self.WT)
        eff = self.readout()
        self.effectors = np.where(g, eff, self.effectors)
        fin = ok.all(axis=1) & np.isfinite(eff).all(axis=1)
        self.finite = np.where(go, self.finite & fin, self.finite)

    def freeze_weights(self):
        self.learning_weights[:] = False

    def freeze_plasticity(self):
        self.learning_weights[:] = False
        self.learning[:] = False

    def thresholds(self):
        return self.targets

    def weights(self):
        return self.WT.transpose(0, 2, 1)


class SORN:
    """Batched SORN node, one bundle per slot."""

    def __init__(self, bundles):
        p = bundles[0]["params"]
        self.p = p
        self.WT = _stack(bundles, "w_ee").transpose(0, 2, 1).copy()
        self.maskT = np.stack([x["mask_ee"] for x in bundles]).transpose(0, 2, 1).copy()
        self.c_e = _stack(bundles, "c_e")
        self.w_eiT = _stack(bundles, "w_ei").transpose(0, 2, 1).copy()  # [b, k, i]
        self.w_ieT = _stack(bundles, "w_ie").transpose(0, 2, 1).copy()  # [b, j, k]
        self.w_euT = _stack(bundles, "w_eu").transpose(0, 2, 1).copy()
        self.poolT = (_stack(bundles, "w_out") != 0).astype(F64).transpose(0, 2, 1).copy()  # [b, i, e]
        self.t_e = _stack(bundles, "t_e")
        self.t_i = _stack(bundles, "t_i")
        self.x = _stack(bundles, "x")
        self.y = _stack(bundles, "y")
        B, ne = self.x.shape
        self.count = np.zeros((B, self.poolT.shape[2]))
        for i in range(ne):
            self.count = self.count + self.poolT[:, i, :]
        self.learning = np.array([x["learning"] for x in bundles])
        self.learning_weights = np.array([x["learning_weights"] for x in bundles])
        self.finite = np.ones(B, dtype=bool)
        self.margins = np.zeros((B, ne + self.y.shape[1]))
        self.effectors = self.readout()

    def readout(self):
        total = ordered_sum(self.poolT, self.x)
        return np.where(self.count > 0, total / np.where(self.count > 0, self.count, 1.0), total)

    def step(self, u, xi=None, active=None):
        p = self.p
        go = self.finite.copy() if active is None else (self.finite & active)
        px, py = self.x.copy(), self.y.copy()
        exc = ordered_sum(self.WT, px)
        inh = ordered_sum(self.w_eiT, py)
        drv = ordered_sum(self.w_euT, u)
        m = ((exc - inh) + drv) - self.t_e
        x = (m >= 0).astype(F64)
        src = x if p["fast_inhibition"] else px
        mi = ordered_sum(self.w_ieT, src) - self.t_i
        y = (mi >= 0).astype(F64)
        ok = np.isfinite(m).all(axis=1) & np.isfinite(mi).all(axis=1)
        WT, maskT, t_e = self.WT, self.maskT, self.t_e
        wl = (self.learning & self.learning_weights)
        # STDP on existing links: w + eta ((x_i px_j) - (px_i x_j)); [b, j, i] layout.
        d = (x[:, None, :] * px[:, :, None]) - (px[:, None, :] * x[:, :, None])
        wv = WT + p["eta_stdp"] * d
        ok &= ~(wl & np.any(maskT & ~np.isfinite(wv), axis=(1, 2)))
        nonpos = maskT & (wv <= 0)
        wv = np.where(maskT, np.where(nonpos, 0.0, wv), 0.0)
        new_mask = maskT & ~nonpos if p["pruning"] else maskT
        total = np.zeros_like(self.t_e)
        for j in range(wv.shape[1]):
            total = total + wv[:, j, :]
        ok &= ~(wl & ~np.isfinite(total).all(axis=1))
        scaled = (total > 0) & (self.c_e > 0)
        scale = self.c_e / np.where(scaled, total, 1.0)
        ok &= ~(wl & np.any(scaled & ~np.isfinite(scale), axis=1))
        wv = np.where(new_mask & scaled[:, None, :], wv * scale[:, None, :], wv)
        wlb = wl[:, None, None]
        WT = np.where(wlb, wv, WT)
        maskT = np.where(wlb, new_mask, maskT)
        te = t_e + p["eta_ip"] * (x - p["H_ip"])
        ok &= ~(self.learning & ~np.isfinite(te).all(axis=1))
        t_e = np.where(self.learning[:, None], te, t_e)
        g = go[:, None]
        self.x = np.where(g, x, self.x)
        self.y = np.where(g, y, self.y)
        self.margins = np.where(g, np.concatenate([m, mi], axis=1), self.margins)
        self.t_e = np.where(g, t_e, self.t_e)
        self.WT = np.where(go[:, None, None], WT, self.WT)
        self.maskT = np.where(go[:, None, None], maskT, self.maskT)
        self.effectors = np.where(g, self.readout(), self.effectors)
        self.finite = np.where(go, self.finite & ok, self.finite)

    @property
    def spikes(self):
        return np.concatenate([self.x, self.y], axis=1)

    def freeze_weights(self):
        self.learning_weights[:] = False

    def freeze_plasticity(self):
        self.learning_weights[:] = False
        self.learning[:] = False

    def thresholds(self):
        return np.concatenate([self.t_e, self.t_i], axis=1)

    def weights(self):
        return self.WT.transpose(0, 2, 1)


def make(bundles):
    return (Falandays if bundles[0]["kind"] == "falandays" else SORN)(bundles)


def replay(bundle, inputs, noise=None, freeze_weights_at=0, freeze_plasticity_at=0, frames=None):
    """Per-frame arrays of one bundle driven by inputs [T, R] and noise [T, N]."""
    node = make([bundle])
    T = inputs.shape[0] if frames is None else frames
    out = {k: [] for k in ("spikes", "margins", "thresholds", "acts", "errors", "effectors", "finite")}
    for t in range(T):
        if freeze_weights_at == t + 1:
            node.freeze_weights()
        if freeze_plasticity_at == t + 1:
            node.freeze_plasticity()
        xi = None if noise is None else noise[t][None, :].astype(F64)
        node.step(inputs[t][None, :].astype(F64), xi)
        out["spikes"].append(node.spikes[0].astype(np.uint8))
        out["margins"].append(node.margins[0])
        out["thresholds"].append(node.thresholds()[0])
        out["effectors"].append(node.effectors[0])
        out["finite"].append(np.uint8(node.finite[0]))
        if bundle["kind"] == "falandays":
            out["acts"].append(node.acts[0])
            out["errors"].append(node.errors[0])
    res = {k: np.array(v) for k, v in out.items() if v}
    res["node"] = node
    return res


def trajectory_hash(kind, spikes, node):
    """The bench hash of bench/src/res_case.c: spikes [T, B, N] as bytes,
    then per slot thresholds, (Falandays) acts, dense weights, float64 LE."""
    h = hashlib.sha256()
    _hash_state(h, kind, spikes, node)
    return h.hexdigest()


def _hash_state(h, kind, spikes, node):
    h.update(np.ascontiguousarray(spikes, dtype=np.uint8).tobytes())
    thr, w = node.thresholds(), node.weights()
    for b in range(thr.shape[0]):
        h.update(np.ascontiguousarray(thr[b], dtype="<f8").tobytes())
        if kind == "falandays":
            h.update(np.ascontiguousarray(node.acts[b], dtype="<f8").tobytes())
        h.update(np.ascontiguousarray(w[b], dtype="<f8").tobytes())


def bench(export_dir, frames=None, repeat=0):
    """Time the exported case: construction (the batch arrays from the bundle),
    then the run; `repeat` more runs from a fresh batch are the warm samples.
    Every run must give the same hash. An export with task.json is the closed
    loop (bench_task)."""
    if os.path.exists(os.path.join(export_dir, "task.json")):
        return bench_task(export_dir, repeat)
    bundle = load_bundle(os.path.join(export_dir, "bundle"))
    inputs = np.load(os.path.join(export_dir, "inputs.npy")).astype(F64)  # [T, B, R]
    T = inputs.shape[0] if frames is None else frames
    B = inputs.shape[1]
    walls, hashes = [], set()
    for rep in range(1 + repeat):
        t0 = time.perf_counter()
        node = make([bundle] * B)
        t1 = time.perf_counter()
        N = node.spikes.shape[1]
        spikes = np.zeros((T, B, N), dtype=np.uint8)
        for t in range(T):
            node.step(inputs[t])
            spikes[t] = node.spikes
        t2 = time.perf_counter()
        walls.append(t2 - t1)
        hashes.add(trajectory_hash(bundle["kind"], spikes, node))
        if rep == 0:
            construct = t1 - t0
    if len(hashes) != 1:
        raise RuntimeError("repeated runs disagree")
    return {"peer": "numpy-oracle", "numpy": np.__version__, "node": bundle["kind"], "units": int(N), "batch": int(B),
            "frames": int(T), "wall_construct_s": construct, "wall_run_s": walls[0], "wall_warm_s": walls[1:],
            "spikes": int(spikes.sum()), "trajectory_sha256": hashes.pop()}


def bench_task(export_dir, repeat=0):
    """The closed-loop case (bench/src/res_case.c, bl_res_bench_task_case):
    slot k runs one trial of the continuing task in the world of world_seeds[k]
    (tasks_numpy.py: world, observation, physics and score, from the task
    definitions), the batched node in between: per tick, encode -> step ->
    effectors (a non-finite node or an effector outside [0, 1] fails the
    trial) -> advance; a slot leaves the batch when its trial is over or has
    failed. Hash: trajectory_hash, then per slot outcome and physical[8]
    (float64 LE) and tick, scored, hits, misses, finite (uint32 LE)."""
    import tasks_numpy as tn  # the task oracle, beside this file

    spec = json.load(open(os.path.join(export_dir, "task.json")))
    bundle = load_bundle(os.path.join(export_dir, "bundle"))
    task, H, seeds = spec["task"], int(spec["horizon"]), [int(x) for x in spec["world_seeds"]]
    if task not in ("tracking", "pong") or spec.get("options") or spec.get("warmup") or spec.get("input_gain") != 1.0:
        raise ValueError("task.json: only tracking or pong with default options, warmup 0, input gain 1")
    o = dict(tn.DEFAULTS[task])
    B, R = len(seeds), tn.width(task, o)
    walls, hashes = [], set()
    for rep in range(1 + repeat):
        t0 = time.perf_counter()
        node = make([bundle] * B)
        worlds = [tn.world(task, o, s, H) for s in seeds]
        envs = [tn.Continuing(task, o, w) for w in worlds]
        t1 = time.perf_counter()
        N = node.spikes.shape[1]
        spikes = np.zeros((H, B, N), dtype=np.uint8)
        active = np.ones(B, dtype=bool)
        u = np.zeros((B, R))
        for t in range(H):
            for k in range(B):
                u[k] = envs[k].encode(1) if active[k] else 0.0
            node.step(u, None, active.copy())
            spikes[t] = node.spikes
            for k in range(B):
                if not active[k]:
                    continue
                env = envs[k]
                if not node.finite[k]:
                    env.finite = False
                elif not env.done and env.finite:
                    e = [float(node.effectors[k, 0]), float(node.effectors[k, 1])]
                    if not all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in e):
                        env.finite = False
                    env.last = e
                if env.finite and not env.done:
                    env.advance(0)
                    if not all(math.isfinite(v) for v in env.physical) or \
                            (env.done and not math.isfinite(env.outcome)):
                        env.finite = False
                active[k] = env.finite and not env.done and env.tick < H
        t2 = time.perf_counter()
        walls.append(t2 - t1)
        hashes.add(_task_hash(bundle["kind"], spikes, node, envs))
        if rep == 0:
            construct = t1 - t0
            outcome = 0.0
            for env in envs:  # in slot order, as ours (np.mean sums pairwise)
                outcome = outcome + env.outcome
            outcome = outcome / B
            failed = sum(not env.finite for env in envs)
    if len(hashes) != 1:
        raise RuntimeError("repeated runs disagree")
    return {"peer": "numpy-oracle", "numpy": np.__version__, "node": bundle["kind"], "task": task, "units": int(N),
            "batch": int(B), "frames": int(H), "wall_construct_s": construct, "wall_run_s": walls[0],
            "wall_warm_s": walls[1:], "spikes": int(spikes.sum()), "outcome_mean": outcome,
            "trials_failed": int(failed), "trajectory_sha256": hashes.pop()}


def _task_hash(kind, spikes, node, envs):
    h = hashlib.sha256()
    _hash_state(h, kind, spikes, node)
    for env in envs:
        h.update(np.array([env.outcome] + [float(v) for v in env.physical], dtype="<f8").tobytes())
        h.update(np.array([env.tick, env.scored, env.hits, env.misses, int(bool(env.finite))], dtype="<u4").tobytes())
    return h.hexdigest()


def _main(argv):
    if len(argv) < 3 or argv[1] not in ("replay", "bench"):
        print(__doc__, file=sys.stderr)
        return 2
    args, opts = [], {}
    it = iter(argv[2:])
    for a in it:
        if a.startswith("--"):
            opts[a] = next(it)
        else:
            args.append(a)
    if argv[1] == "bench":
        print(json.dumps(bench(args[0], int(opts["--frames"]) if "--frames" in opts else None,
                               int(opts.get("--repeat", 0)))))
        return 0
    bundle = load_bundle(args[0])
    inputs = np.load(opts["--inputs"]).astype(F64)
    noise = np.load(opts["--noise"]).astype(F64) if "--noise" in opts else None
    r = replay(bundle, inputs, noise, int(opts.get("--freeze-weights-at", 0)), int(opts.get("--freeze-plasticity-at", 0)))
    os.makedirs(opts["--out"])
    names = {"thresholds": "targets" if bundle["kind"] == "falandays" else "thresholds"}
    for k, v in r.items():
        if k != "node":
            np.save(os.path.join(opts["--out"], names.get(k, k) + ".npy"), v)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
