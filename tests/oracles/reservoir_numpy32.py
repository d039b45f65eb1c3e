"""Independent NumPy float32 implementation of the two reservoir nodes
(docs/reservoir.md: "Numerics" and the equations of "Falandays" and "SORN"),
the oracle that qualifies BrainlessLab's float32 numerics bit for bit.

Written from the documented equations, not from the C kernel: dense matrices
[destination, source], one slot, every value a np.float32 and every operation
rounded to float32 in the order the equations are written:

* a bundle is read as float64 (as the C loader reads it) and cast once: each
  value rounded to the nearest float (refused when that overflows), the
  parameters too; inputs and noise are rounded to float32 on entry;
* sums start at +0.0 and run over sources in ascending order as explicit
  loops (never `@` or np.sum, whose order NumPy does not promise); a source
  that is silent or not linked adds w * 0 = +-0, which changes no such sum;
* elementwise array arithmetic between float32 arrays and np.float32 scalars
  stays float32 (no Python float ever enters an expression: NumPy 1.24 would
  promote a np.float32 scalar combined with one to float64).

Falandays, per frame:
  a = (acts * (1 - leak) + sum_r W_in u) + sum_j W (prev sign);  theta = targets mu
  oosawa: a = a + xi (membrane_noise + noise_gain max(0, theta - a)); rectify: a = max(a, 0)
  margin = a - theta; spike = a >= theta; a -= theta where spiking; e = a - targets
  k = links j -> i with prev[j] != 0; learning: W = W - (e / k) eta_w (Dale: an
  inhibitory source's link W - (-(e / k) eta_w), then clipped at 0);
  targets = max(targ_min, targets + e eta_t); effector = (sum_i spikes out) / (sum_i out)
SORN, per frame:
  x = ((sum W_EE prev_x - sum W_EI prev_y) + sum W_EU u) - T_E >= 0
  y = sum W_IE x_src - T_I >= 0; STDP w = W + eta_stdp ((x_i prev_j) - (prev_i x_j)),
  w <= 0: 0 (pruned with pruning); total = sum_j w; w = w (c_e / total) if total > 0 and
  c_e > 0; T_E = T_E + eta_ip (x - H_ip); effector = (sum of x over the pool) / pool size.
A frame with a non-finite value marks the slot failed; a failed slot holds.
"""

import json
import os

import numpy as np

F = np.float32
ZERO = F(0.0)
ONE = F(1.0)
np.seterr(all="ignore")

FAL_DEFAULTS = dict(leak=0.25, lrate_wmat=1.0, lrate_targ=0.01, threshold_mult=2.0, targ_min=1.0, rectify=False,
                 dale=False, oosawa=False, membrane_noise=0.0, noise_gain=0.0, learn_on=True)
SORN_DEFAULTS = dict(eta_stdp=0.001, eta_ip=0.001, H_ip=0.1, fast_inhibition=False, pruning=True, learn_on=True)


class CastError(ValueError):
    pass


def to_f32(name, v):
    """v (float64) rounded to float32; overflow refused, naming the value."""
    v = np.asarray(v, dtype=np.float64)
    out = v.astype(F)
    bad = np.argwhere(~np.isfinite(out) & np.isfinite(v))
    if bad.size:
        raise CastError("%s%s = %r is not finite as float32" % (name, list(bad[0]), float(v[tuple(bad[0])])))
    return out


def _npy(d, name):
    p = os.path.join(d, name + ".npy")
    return np.load(p).astype(np.float64) if os.path.exists(p) else None


def load(d):
    """A bundle directory as float32 arrays and parameters."""
    node = json.load(open(os.path.join(d, "node.json")))
    kind = node["kind"]
    p = dict(FAL_DEFAULTS if kind == "falandays" else SORN_DEFAULTS)
    for k, v in node.get("parameters", {}).items():
        if k == "axis":
            p["dale"] = v == "dale"
        elif k == "drive":
            p["oosawa"] = v == "oosawa"
        elif k in p:
            p[k] = v
    for k, v in p.items():
        if not isinstance(v, bool):
            p[k] = to_f32(k, v)[()]
    for k in ("threshold_mult", "targ_min"):
        if k in p and not p[k] > ZERO:
            raise CastError("%s is not > 0 as float32" % k)
    learn = bool(node.get("learning", True)) and bool(p["learn_on"])
    b = {"kind": kind, "p": p, "learn": learn,
         "learn_weights": learn and bool(node.get("learning_weights", True))}
    if kind == "falandays":
        w = _npy(d, "w")
        n = w.shape[0]
        mask = _npy(d, "mask")
        b["mask"] = (w != 0) if mask is None else mask != 0
        b["w"] = to_f32("w", np.where(b["mask"], w, 0.0))  # no link, no weight (+0, whatever the file's zero)
        signs = _npy(d, "signs")
        b["sign"] = np.ones(n, dtype=F) if signs is None else to_f32("signs", signs)
        b["w_in"] = to_f32("w_in", _npy(d, "w_in"))
        b["w_out"] = to_f32("w_out", _npy(d, "w_out"))
        for name, default in (("acts", 0.0), ("targets", float(node.get("parameters", {}).get("targ_min", 1.0))),
                              ("spikes", 0.0)):
            a = _npy(d, name)
            b[name] = to_f32(name, np.full(n, default) if a is None else a)
    else:
        w = _npy(d, "w_ee")
        ne = w.shape[0]
        mask = _npy(d, "mask_ee")
        b["mask"] = (w != 0) if mask is None else mask != 0
        c_e = _npy(d, "c_e")
        if c_e is None:  # the loader's default: ascending float64 row sums over the links, then cast
            c_e = np.zeros(ne)
            for j in range(ne):
                c_e = c_e + np.where(b["mask"][:, j], w[:, j], 0.0)
        b["c_e"] = to_f32("c_e", c_e)
        b["w"] = to_f32("w_ee", np.where(b["mask"], w, 0.0))
        t_i = _npy(d, "t_i")
        ni = 0 if t_i is None else t_i.shape[0]
        b["t_e"] = to_f32("t_e", _npy(d, "t_e"))
        b["t_i"] = to_f32("t_i", np.zeros(0) if t_i is None else t_i)
        b["w_ei"] = to_f32("w_ei", _npy(d, "w_ei") if ni else np.zeros((ne, 0)))
        b["w_ie"] = to_f32("w_ie", _npy(d, "w_ie") if ni else np.zeros((0, ne)))
        b["w_eu"] = to_f32("w_eu", _npy(d, "w_eu"))
        b["w_out"] = to_f32("w_out", _npy(d, "w_out"))
        x, y = _npy(d, "x"), _npy(d, "y")
        b["x"] = to_f32("x", np.zeros(ne) if x is None else x)
        b["y"] = to_f32("y", np.zeros(ni) if y is None else y)
    return b


def dot_ascending(m, v):
    """out[i] = sum_j m[i, j] v[j], j ascending, from +0.0, in float32."""
    out = np.zeros(m.shape[0], dtype=F)
    for j in range(m.shape[1]):
        out = out + m[:, j] * v[j]
    return out


def finite(*arrays):
    return all(bool(np.all(np.isfinite(a))) for a in arrays)


class Falandays:
    def __init__(self, b):
        self.p, self.mask = b["p"], b["mask"]
        self.w, self.w_in, self.w_out, self.sign = b["w"].copy(), b["w_in"], b["w_out"], b["sign"]
        self.acts, self.thr, self.spikes = b["acts"].copy(), b["targets"].copy(), b["spikes"].copy()
        self.learn, self.learn_weights = b["learn"], b["learn_weights"]
        n = self.acts.shape[0]
        self.margins, self.errors = np.zeros(n, dtype=F), np.zeros(n, dtype=F)
        self.ok = True
        self.den = np.zeros(self.w_out.shape[0], dtype=F)
        for i in range(n):
            self.den = self.den + self.w_out[:, i]
        self.effectors = self.readout()

    def readout(self):
        total = np.zeros(self.w_out.shape[0], dtype=F)
        for i in range(self.w_out.shape[1]):
            total = total + self.spikes[i] * self.w_out[:, i]
        return np.where(self.den > ZERO, total / np.where(self.den > ZERO, self.den, ONE), ZERO).astype(F)

    def step(self, u, xi):
        if not self.ok:
            return
        p = self.p
        u = u.astype(F)
        prev = self.spikes.copy()
        rec = dot_ascending(self.w, prev * self.sign)
        sensory = dot_ascending(self.w_in, u)
        a = self.acts * (ONE - p["leak"])
        a = a + sensory
        a = a + rec
        theta = self.thr * p["threshold_mult"]
        if p["oosawa"]:
            gap = theta - a
            gap = np.where(gap > ZERO, gap, ZERO).astype(F)
            sigma = p["membrane_noise"] + p["noise_gain"] * gap
            a = a + (np.zeros_like(a) if xi is None else xi.astype(F)) * sigma
        ok = finite(a, theta)
        if p["rectify"]:
            a = np.where(a < ZERO, ZERO, a).astype(F)
        margin = a - theta
        spike = (a >= theta)
        a = np.where(spike, a - theta, a).astype(F)
        e = a - self.thr
        ok = ok and finite(margin, e)
        links = self.mask & (prev != 0)[None, :]
        k = links.sum(axis=1)
        if self.learn:
            if self.learn_weights:
                delta = np.where(k > 0, e / np.maximum(k, 1).astype(F) * p["lrate_wmat"], ZERO).astype(F)
                change = np.where((self.sign < 0)[None, :] & p["dale"], -delta[:, None], delta[:, None]).astype(F)
                wv = self.w - change
                ok = ok and finite(wv[links])
                if p["dale"]:
                    wv = np.where(wv < ZERO, ZERO, wv).astype(F)
                self.w = np.where(links, wv, self.w).astype(F)
            target = self.thr + e * p["lrate_targ"]
            ok = ok and finite(target)
            self.thr = np.where(target < p["targ_min"], p["targ_min"], target).astype(F)
        self.acts, self.margins, self.errors = a, margin, e
        self.spikes = spike.astype(F)
        self.effectors = self.readout()
        self.ok = ok and finite(self.effectors)

    def freeze_weights(self):
        self.learn_weights = False

    def freeze_plasticity(self):
        self.learn_weights = self.learn = False

    def frame(self):
        return {"spikes": self.spikes, "margins": self.margins, "thresholds": self.thr, "acts": self.acts,
                "errors": self.errors, "effectors": self.effectors}


class SORN:
    def __init__(self, b):
        self.p, self.mask = b["p"], b["mask"].copy()
        self.w, self.c_e = b["w"].copy(), b["c_e"]
        self.w_ei, self.w_ie, self.w_eu, self.w_out = b["w_ei"], b["w_ie"], b["w_eu"], b["w_out"]
        self.t_e, self.t_i, self.x, self.y = b["t_e"].copy(), b["t_i"].copy(), b["x"].copy(), b["y"].copy()
        self.learn, self.learn_weights = b["learn"], b["learn_weights"]
        self.margins = np.zeros(self.x.shape[0] + self.y.shape[0], dtype=F)
        self.ok = True
        self.effectors = self.readout()

    def readout(self):
        total = np.zeros(self.w_out.shape[0], dtype=F)
        size = np.zeros(self.w_out.shape[0], dtype=F)
        for i in range(self.w_out.shape[1]):
            inpool = self.w_out[:, i] != 0
            total = np.where(inpool, total + self.x[i], total).astype(F)
            size = np.where(inpool, size + ONE, size).astype(F)
        return np.where(size > ZERO, total / np.where(size > ZERO, size, ONE), total).astype(F)

    def step(self, u, xi=None):
        if not self.ok:
            return
        p = self.p
        u = u.astype(F)
        px, py = self.x.copy(), self.y.copy()
        exc = dot_ascending(self.w, px)
        inh = dot_ascending(self.w_ei, py)
        drive = dot_ascending(self.w_eu, u)
        m_e = ((exc - inh) + drive) - self.t_e
        x = (m_e >= ZERO).astype(F)
        x_src = x if p["fast_inhibition"] else px
        m_i = dot_ascending(self.w_ie, x_src) - self.t_i
        y = (m_i >= ZERO).astype(F)
        ok = finite(m_e, m_i)
        if self.learn_weights:
            # STDP on the links only, then pruning, then the row's normalisation
            wv = self.w + p["eta_stdp"] * ((x[:, None] * px[None, :]) - (px[:, None] * x[None, :]))
            wv = np.where(self.mask, wv, ZERO).astype(F)
            ok = ok and finite(wv[self.mask])
            low = self.mask & (wv <= ZERO)
            wv = np.where(low, ZERO, wv).astype(F)
            if p["pruning"]:
                self.mask = self.mask & ~low
            total = np.zeros(wv.shape[0], dtype=F)
            for j in range(wv.shape[1]):
                total = total + wv[:, j]
            ok = ok and finite(total)
            norm = (total > ZERO) & (self.c_e > ZERO)
            scale = self.c_e / np.where(norm, total, ONE)
            ok = ok and finite(scale[norm])
            self.w = np.where(norm[:, None] & self.mask, wv * scale[:, None], wv).astype(F)
        if self.learn:
            self.t_e = self.t_e + p["eta_ip"] * (x - p["H_ip"])
            ok = ok and finite(self.t_e)
        self.x, self.y = x, y
        self.margins = np.concatenate([m_e, m_i]).astype(F)
        self.effectors = self.readout()
        self.ok = ok and finite(self.effectors)

    def freeze_weights(self):
        self.learn_weights = False

    def freeze_plasticity(self):
        self.learn_weights = self.learn = False

    def frame(self):
        return {"spikes": np.concatenate([self.x, self.y]), "margins": self.margins,
                "thresholds": np.concatenate([self.t_e, self.t_i]), "effectors": self.effectors}


def replay(bundle_dir, inputs, noise=None, freeze_weights_at=0, freeze_plasticity_at=0):
    """Per-frame float32 arrays (spikes uint8) of the bundle driven by the tapes."""
    b = load(bundle_dir)
    node = Falandays(b) if b["kind"] == "falandays" else SORN(b)
    out = {}
    for t in range(inputs.shape[0]):
        if freeze_weights_at == t + 1:
            node.freeze_weights()
        if freeze_plasticity_at == t + 1:
            node.freeze_plasticity()
        node.step(np.asarray(inputs[t]), None if noise is None else np.asarray(noise[t]))
        for k, v in node.frame().items():
            out.setdefault(k, []).append(v.copy())
        out.setdefault("finite", []).append(node.ok)
    res = {k: np.array(v) for k, v in out.items()}
    res["spikes"] = (res["spikes"] != 0).astype(np.uint8)
    res["finite"] = res["finite"].astype(np.uint8)
    res["weights"] = node.w
    return res
