"""Independent NumPy/Python oracle of the reservoir task table (docs/reservoir.md, "Tasks").

Written from the task definitions (the Python project's semantics as docs/reservoir.md
restates them), not from the C code: world generation from bl-philox-v1 world streams,
the observation each tick, episode decisions and outcomes, the continuing tasks'
physics and scores, and the controls. Scalar math goes through Python's `math` (the C
library's functions), so results are compared for exact equality.

    trial(task, options, world_seed, control_seed, controller, horizon, warmup, tape=None)
        -> dict(stimuli, starts, ends, labels, obs, eff, physical, decisions, ties, outcome, ...)

world_seed is a bl-philox-v1 seed (an int) or HostSeed(n): a philox-host-v1 seed, the
integer the Python project hands np.random.Philox; world_host() then draws the world
with np.random.Generator calls, the calls that project's task preparation makes.
"""
import math

import numpy as np

from blconn import philox4x32_10

TWO53 = 2.0 ** -53


def stream_uniform(seed, n, domain):
    w = philox4x32_10(n, 0, domain, 0, seed & 0xFFFFFFFF, seed >> 32)
    x = ((int(w[0]) << 32) | int(w[1])) >> 11
    return x * TWO53


class Rng:
    """The world seed's sequential stream: draw n = counter (n, 0, 1, 0)."""

    def __init__(self, seed):
        self.seed, self.n = seed, 0

    def uniform(self):
        u = stream_uniform(self.seed, self.n, 1)
        self.n += 1
        return u

    def integer(self, lo, hi):
        k = int(self.uniform() * (hi - lo + 1))
        return lo + min(k, hi - lo)

    def shuffle(self, a):
        for i in range(len(a) - 1, 0, -1):
            j = self.integer(0, i)
            a[i], a[j] = a[j], a[i]


DEFAULTS = {
    "tracking": dict(stim_speed_rad=math.pi / 180, movement_amp=10.0, eye_offset_deg=30.0,
                     sensor_offsets_deg=tuple(range(-60, 61, 4)), sensory_gain=1.0, randomize_start=True,
                     theta0=None, phi0=None, direction0=None),
    "pong": dict(sensory_gain=1.0),
    "cartpole_plank_easy": dict(initial_ranges=((-1.2, 1.2), (-0.05, 0.05), (-0.10475, 0.10475), (-0.05, 0.05))),
    "delayed_cue": dict(cue_ticks=8, delays=(8, 32, 128), response_ticks=8, cue_mode="transient"),
    "recall_interference": dict(cue_ticks=8, delay=32, response_ticks=8, distractors=1, distractor_ticks=4,
                                cue_mode="transient", distractor_mode="random"),
    "delayed_xor": dict(cue_ticks=8, gap=32, response_ticks=8, cue_mode="transient"),
    "evidence_accumulation": dict(pulse_count=32, evidence_fraction=0.25, pulse_ticks=1, response_ticks=8,
                                  input_mode="visible"),
    "context_integration": dict(cue_ticks=8, pulse_count=32, evidence_fraction=0.25, pulse_ticks=1,
                                response_ticks=8, context_mode="transient", congruency="mixed"),
    "temporal_order": dict(cue_ticks=8, gap=8, terminal_ticks=8, response_ticks=8, input_mode="visible"),
    "reversal_adaptation": dict(rounds=96, cue_ticks=8, response_ticks=8, feedback_ticks=8,
                                reversal_range=(32, 64), feedback_mode="visible"),
}
CONTINUING = ("tracking", "pong", "cartpole_plank_easy")


def width(task, o):
    if task == "tracking":
        return 2 * len(o["sensor_offsets_deg"])
    return {"pong": 46, "cartpole_plank_easy": 8, "delayed_cue": 3,
            "recall_interference": 3, "delayed_xor": 5, "evidence_accumulation": 3, "context_integration": 7,
            "temporal_order": 4, "reversal_adaptation": 8}[task]


def default_horizon(task, o):
    c, r = o.get("cue_ticks", 0), o.get("response_ticks", 0)
    return {"tracking": 2000, "pong": 7200, "cartpole_plank_easy": 15000,
            "delayed_cue": lambda: c + max(o["delays"]) + r,
            "recall_interference": lambda: c + o["delay"] + r,
            "delayed_xor": lambda: 2 * c + o["gap"] + r,
            "evidence_accumulation": lambda: o["pulse_count"] * o["pulse_ticks"] + r,
            "context_integration": lambda: c + o["pulse_count"] * o["pulse_ticks"] + r,
            "temporal_order": lambda: 2 * c + o["gap"] + o["terminal_ticks"] + r,
            "reversal_adaptation": lambda: o["rounds"] * (c + r + o["feedback_ticks"])}[task]


def _pulses(rng, n, f, label):
    left_count = int(n * (1 + (f if label == 1 else -f)) / 2)
    final = rng.integer(1, 2)
    left = left_count - (final == 1)
    body = [1] * left + [2] * (n - 1 - left)
    rng.shuffle(body)
    return body + [final]


def world(task, o, seed, horizon):
    """Episode tasks: dict(stimuli, starts, ends, labels, ...); continuing: physical start."""
    rng = Rng(seed)
    w = dict(physical=[0.0] * 8, starts=[], ends=[], labels=[], reversal=0, feedback=False, meta=[0, 0, 0, 0])
    if task == "tracking":
        rnd = o["randomize_start"]
        th = o["theta0"] if o["theta0"] is not None else 2 * math.pi * rng.uniform() if rnd else math.pi / 2
        ph = o["phi0"] if o["phi0"] is not None else 2 * math.pi * rng.uniform() if rnd else 0.0
        di = o["direction0"] if o["direction0"] is not None else (1.0 if rng.integer(0, 1) else -1.0) if rnd else 1.0
        w["physical"][:3] = [th, ph, di]
        w["angles"] = [eye + off for eye in (o["eye_offset_deg"], -o["eye_offset_deg"]) for off in o["sensor_offsets_deg"]]
        w["stimuli"] = np.zeros((0, width(task, o)))
        return w
    if task == "pong":
        draws = [rng.uniform() for _ in range(2 * (horizon + 1))]
        w["draws"] = [(draws[2 * k], draws[2 * k + 1]) for k in range(horizon + 1)]
        w["physical"][:5] = [995.0, 1 + 498 * w["draws"][0][0], 250.0, -5.0, 5.0 if w["draws"][0][1] >= 0.5 else -5.0]
        w["angles"] = [-90.0 + 4 * k for k in range(46)]
        w["stimuli"] = np.zeros((0, 46))
        return w
    if task == "cartpole_plank_easy":
        w["physical"][:4] = [lo if lo == hi else lo + (hi - lo) * rng.uniform() for lo, hi in o["initial_ranges"]]
        w["stimuli"] = np.zeros((0, 8))
        return w
    c, r = o.get("cue_ticks", 0), o["response_ticks"]
    length = default_horizon(task, o)()
    S = None
    go = width(task, o) - 1
    if task == "delayed_cue":
        cue = 2 if stream_uniform(seed, 0, 1) >= 0.5 else 1
        k = min(int(stream_uniform(seed, 0, 2) * len(o["delays"])), len(o["delays"]) - 1)
        delay = o["delays"][k]
        length = c + delay + r
        S = np.zeros((length, 3))
        if o["cue_mode"] != "hidden":
            S[: (length if o["cue_mode"] == "persistent" else c), cue - 1] = 1
        w.update(starts=[c + delay], ends=[length], labels=[cue], meta=[cue, delay, 0, 0])
    elif task == "recall_interference":
        cue = rng.integer(1, 2)
        S = np.zeros((length, 3))
        if o["cue_mode"] != "hidden":
            S[: (length if o["cue_mode"] == "persistent" else c), cue - 1] = 1
        k, d, dw = o["distractors"], o["delay"], o["distractor_ticks"]
        for i in range(1, k + 1):
            drawn = rng.integer(1, 2)
            start = c + i * (d - dw) // (k + 1)
            mode = o["distractor_mode"]
            if mode == "absent":
                continue
            lab = cue if mode == "matched" else 3 - cue if mode == "opposite" else drawn
            S[start:start + dw, :2] = 0
            S[start:start + dw, lab - 1] = 1
        w.update(starts=[c + d], ends=[length], labels=[cue], meta=[cue, 0, 0, 0])
    elif task == "delayed_xor":
        a, b = rng.integer(1, 2), rng.integer(1, 2)
        S = np.zeros((length, 5))
        second = c + o["gap"]
        if o["cue_mode"] != "hidden":
            held = o["cue_mode"] == "persistent"
            S[: (length if held else c), a - 1] = 1
            S[second: (length if held else second + c), b + 1] = 1
        w.update(starts=[2 * c + o["gap"]], ends=[length], labels=[1 if a == b else 2], meta=[a, b, 0, 0])
    elif task == "evidence_accumulation":
        n, f, p = o["pulse_count"], o["evidence_fraction"], o["pulse_ticks"]
        label = rng.integer(1, 2)
        pulses = _pulses(rng, n, f, label)
        S = np.zeros((length, 3))
        if o["input_mode"] == "visible":
            for i, q in enumerate(pulses):
                S[i * p:(i + 1) * p, q - 1] = 1
        w.update(starts=[n * p], ends=[length], labels=[label], meta=[label, 0, 0, 0])
    elif task == "context_integration":
        n, f, p = o["pulse_count"], o["evidence_fraction"], o["pulse_ticks"]
        ctx, label, drawn = rng.integer(1, 2), rng.integer(1, 2), rng.integer(1, 2)
        cg = o["congruency"]
        other = label if cg == "congruent" else 3 - label if cg == "conflicting" else drawn
        labs = (label, other) if ctx == 1 else (other, label)
        streams = [_pulses(rng, n, f, v) for v in labs]
        S = np.zeros((length, 7))
        if o["context_mode"] != "hidden":
            S[: (length if o["context_mode"] == "persistent" else c), ctx - 1] = 1
        for s_, pulses in enumerate(streams):
            for i, q in enumerate(pulses):
                S[c + i * p:c + (i + 1) * p, 2 + 2 * s_ + q - 1] = 1
        w.update(starts=[c + n * p], ends=[length], labels=[label], meta=[ctx, int(label == other), 0, 0])
    elif task == "temporal_order":
        label = rng.integer(1, 2)
        S = np.zeros((length, 4))
        g = o["gap"]
        if o["input_mode"] == "visible":
            S[:c, label - 1] = 1
            S[c + g:2 * c + g, 2 - label] = 1
        S[2 * c + g:length - r, 2] = 1
        w.update(starts=[length - r], ends=[length], labels=[label], meta=[label, 0, 0, 0])
    elif task == "reversal_adaptation":
        mapping = rng.integer(0, 1)
        lo, hi = o["reversal_range"]
        rev = rng.integer(lo, hi)
        n, f = o["rounds"], o["feedback_ticks"]
        S = np.zeros((length, 8))
        starts, ends, labels = [], [], []
        for k in range(n):
            cue = rng.integer(1, 2)
            st = k * (c + r + f)
            S[st:st + c + r, cue - 1] = 1
            S[st + c + r:st + c + r + f, 3] = 1
            starts.append(st + c)
            ends.append(st + c + r)
            labels.append(3 - cue if (mapping ^ (k + 1 >= rev)) else cue)
        w.update(starts=starts, ends=ends, labels=labels, reversal=rev, feedback=o["feedback_mode"] == "visible",
                 meta=[rev, mapping, 0, 0])
        go = 2
    for s0, e0 in zip(w["starts"], w["ends"]):
        S[s0:e0, go] = 1
    w["stimuli"] = S
    return w


class HostSeed:
    """A philox-host-v1 world seed: the integer np.random.Philox is seeded with."""

    def __init__(self, n):
        self.n = n


def _host_pulses(g, n, f, label):
    """The label's side gets n (1 + f) / 2 pulses; the last pulse is drawn first
    (integers(1, 3)), the other n - 1 are an int32 array shuffled in place."""
    left_count = int(n * (1 + (f if label == 1 else -f)) / 2)
    final = int(g.integers(1, 3))
    left = left_count - (final == 1)
    body = np.array([1] * left + [2] * (n - 1 - left), dtype=np.int32)
    g.shuffle(body)
    return [int(v) for v in body] + [final]


def world_host(task, o, g, horizon):
    """The world under philox-host-v1: the same world as world() builds, its random
    choices drawn from the Generator g by the Python project's calls, in its order."""
    w = dict(physical=[0.0] * 8, starts=[], ends=[], labels=[], reversal=0, feedback=False, meta=[0, 0, 0, 0])
    if task == "tracking":
        rnd = o["randomize_start"]
        th = o["theta0"] if o["theta0"] is not None else 2 * math.pi * g.random() if rnd else math.pi / 2
        ph = o["phi0"] if o["phi0"] is not None else 2 * math.pi * g.random() if rnd else 0.0
        di = o["direction0"] if o["direction0"] is not None else (1.0 if g.integers(2) else -1.0) if rnd else 1.0
        w["physical"][:3] = [float(th), float(ph), float(di)]
        w["angles"] = [eye + off for eye in (o["eye_offset_deg"], -o["eye_offset_deg"]) for off in o["sensor_offsets_deg"]]
        w["stimuli"] = np.zeros((0, width(task, o)))
        return w
    if task == "pong":
        draws = g.random((horizon + 1, 2))
        w["draws"] = [(float(a), float(b)) for a, b in draws]
        w["physical"][:5] = [995.0, 1 + 498 * w["draws"][0][0], 250.0, -5.0, 5.0 if w["draws"][0][1] >= 0.5 else -5.0]
        w["angles"] = [-90.0 + 4 * k for k in range(46)]
        w["stimuli"] = np.zeros((0, 46))
        return w
    if task == "cartpole_plank_easy":
        w["physical"][:4] = [lo if lo == hi else float(g.uniform(lo, hi)) for lo, hi in o["initial_ranges"]]
        w["stimuli"] = np.zeros((0, 8))
        return w
    c, r = o.get("cue_ticks", 0), o["response_ticks"]
    length = default_horizon(task, o)()
    go = width(task, o) - 1
    if task == "delayed_cue":
        cue = int(g.integers(1, 3))
        delay = int(g.choice(o["delays"]))
        length = c + delay + r
        S = np.zeros((length, 3))
        if o["cue_mode"] != "hidden":
            S[: (length if o["cue_mode"] == "persistent" else c), cue - 1] = 1
        w.update(starts=[c + delay], ends=[length], labels=[cue], meta=[cue, delay, 0, 0])
    elif task == "recall_interference":
        cue = int(g.integers(1, 3))
        k, d, dw = o["distractors"], o["delay"], o["distractor_ticks"]
        drawn = [int(v) for v in g.integers(1, 3, k)]
        S = np.zeros((length, 3))
        if o["cue_mode"] != "hidden":
            S[: (length if o["cue_mode"] == "persistent" else c), cue - 1] = 1
        mode = o["distractor_mode"]
        for i in range(1, k + 1):
            start = c + i * (d - dw) // (k + 1)
            if mode == "absent":
                continue
            lab = cue if mode == "matched" else 3 - cue if mode == "opposite" else drawn[i - 1]
            S[start:start + dw, :2] = 0
            S[start:start + dw, lab - 1] = 1
        w.update(starts=[c + d], ends=[length], labels=[cue], meta=[cue, 0, 0, 0])
    elif task == "delayed_xor":
        a, b = (int(v) for v in g.integers(1, 3, 2))
        S = np.zeros((length, 5))
        second = c + o["gap"]
        if o["cue_mode"] != "hidden":
            held = o["cue_mode"] == "persistent"
            S[: (length if held else c), a - 1] = 1
            S[second: (length if held else second + c), b + 1] = 1
        w.update(starts=[2 * c + o["gap"]], ends=[length], labels=[1 if a == b else 2], meta=[a, b, 0, 0])
    elif task == "evidence_accumulation":
        n, f, p = o["pulse_count"], o["evidence_fraction"], o["pulse_ticks"]
        label = int(g.integers(1, 3))
        pulses = _host_pulses(g, n, f, label)
        S = np.zeros((length, 3))
        if o["input_mode"] == "visible":
            for i, q in enumerate(pulses):
                S[i * p:(i + 1) * p, q - 1] = 1
        w.update(starts=[n * p], ends=[length], labels=[label], meta=[label, 0, 0, 0])
    elif task == "context_integration":
        n, f, p = o["pulse_count"], o["evidence_fraction"], o["pulse_ticks"]
        ctx, label, drawn = (int(v) for v in g.integers(1, 3, 3))
        cg = o["congruency"]
        other = label if cg == "congruent" else 3 - label if cg == "conflicting" else drawn
        labs = (label, other) if ctx == 1 else (other, label)
        streams = [_host_pulses(g, n, f, v) for v in labs]
        S = np.zeros((length, 7))
        if o["context_mode"] != "hidden":
            S[: (length if o["context_mode"] == "persistent" else c), ctx - 1] = 1
        for s_, pulses in enumerate(streams):
            for i, q in enumerate(pulses):
                S[c + i * p:c + (i + 1) * p, 2 + 2 * s_ + q - 1] = 1
        w.update(starts=[c + n * p], ends=[length], labels=[label], meta=[ctx, int(label == other), 0, 0])
    elif task == "temporal_order":
        label = int(g.integers(1, 3))
        S = np.zeros((length, 4))
        gp = o["gap"]
        if o["input_mode"] == "visible":
            S[:c, label - 1] = 1
            S[c + gp:2 * c + gp, 2 - label] = 1
        S[2 * c + gp:length - r, 2] = 1
        w.update(starts=[length - r], ends=[length], labels=[label], meta=[label, 0, 0, 0])
    elif task == "reversal_adaptation":
        mapping = int(bool(g.integers(2)))
        lo, hi = o["reversal_range"]
        rev = int(g.integers(lo, hi + 1))
        n, f = o["rounds"], o["feedback_ticks"]
        cues = [int(v) for v in g.integers(1, 3, n)]
        S = np.zeros((length, 8))
        starts, ends, labels = [], [], []
        for k, cue in enumerate(cues):
            st = k * (c + r + f)
            S[st:st + c + r, cue - 1] = 1
            S[st + c + r:st + c + r + f, 3] = 1
            starts.append(st + c)
            ends.append(st + c + r)
            labels.append(3 - cue if (mapping ^ (k + 1 >= rev)) else cue)
        w.update(starts=starts, ends=ends, labels=labels, reversal=rev, feedback=o["feedback_mode"] == "visible",
                 meta=[rev, mapping, 0, 0])
        go = 2
    for s0, e0 in zip(w["starts"], w["ends"]):
        S[s0:e0, go] = 1
    w["stimuli"] = S
    return w


def wrap(v, half):
    """(v + half) mod 2 half - half, the floored remainder (Python's float %)."""
    return ((v + half) % (2 * half)) - half


class Episode:
    def __init__(self, task, o, w):
        self.task, self.o, self.w = task, o, w
        n = len(w["labels"])
        self.dec, self.ties = [0] * n, [0] * n
        self.round, self.tick, self.ev = 0, 0, [0.0, 0.0]
        self.done, self.finite, self.outcome, self.scored = False, True, float("nan"), 0
        self.last = [0.0, 0.0]
        self.physical = [0.0] * 8

    def encode(self, frame):
        w, t = self.w, self.tick
        S = w["stimuli"]
        x = list(S[t]) if t < len(S) else [0.0] * S.shape[1]
        if self.task == "reversal_adaptation" and w["feedback"] and self.round >= 1 and x[3] != 0:
            prev = self.round - 1
            ch = self.dec[prev]
            ok = ch == w["labels"][prev]
            x[4], x[5], x[6], x[7] = float(ch == 1), float(ch == 2), float(ok), float(not ok)
        return x

    def advance(self, warmup):
        w, t, e = self.w, self.tick, self.last
        if self.round < len(w["labels"]):
            r = self.round
            if w["starts"][r] <= t < w["ends"][r]:
                self.ev = [self.ev[0] + e[0], self.ev[1] + e[1]]
            if t + 1 == w["ends"][r]:
                self.dec[r] = 2 if self.ev[1] > self.ev[0] else 1
                self.ties[r] = int(self.ev[0] == self.ev[1])
                self.ev = [0.0, 0.0]
                self.round += 1
        if t + 1 >= len(w["stimuli"]):
            self.done = True
            if self.task == "reversal_adaptation":
                rr = range(w["reversal"] - 1, w["reversal"] + 15)
                self.outcome = sum(self.dec[k] == w["labels"][k] for k in rr) / 16.0
            else:
                self.outcome = 1.0 if self.dec[0] == w["labels"][0] else 0.0
            self.scored = len(w["stimuli"])
        self.tick = t + 1


class Continuing:
    def __init__(self, task, o, w):
        self.task, self.o, self.w = task, o, w
        self.physical = list(w["physical"])
        self.tick, self.done, self.finite = 0, False, True
        self.outcome, self.total, self.scored = 0.0, 0.0, 0
        self.hits = self.misses = self.rally = self.longest = 0
        self.last, self.votes = [0.0, 0.0], [0.0, 0.0]
        self.round, self.dec, self.ties = 0, [], []

    def encode(self, frame):
        p, w, o = self.physical, self.w, self.o
        if self.task == "tracking":
            out = []
            for a in w["angles"]:
                delta = wrap(p[0] * (180.0 / math.pi) + a - p[1] * (180.0 / math.pi), 180.0)
                v = o["sensory_gain"]
                if abs(delta) > 4:
                    v = v * math.exp(-delta * delta / 10.0)
                out.append(v)
            return out
        if self.task == "pong":
            bearing = math.atan2(p[1] - p[2], p[0] - 100.0) * (180.0 / math.pi)
            return [o["sensory_gain"] if -90 <= bearing <= 90 and abs(wrap(bearing - a, 180.0)) <= 2 else 0.0
                    for a in w["angles"]]
        scale = (2.4, 2.0, 0.2095, 2.0)
        slot = (frame - 1) // 3 + 1 if (frame - 1) % 3 == 0 else 0
        out = [0.0] * 8
        for k in range(4):
            v = p[k]
            count = min(8, max(0, math.ceil(8 * abs(v) / scale[k])))
            b = 2 * k + (1 if v > 0 else 0)
            if 0 < slot <= count:
                out[b] = 1.0
        return out

    def advance(self, warmup):
        p, t, o, e = self.physical, self.tick, self.o, self.last
        if self.task == "tracking":
            turn = o["movement_amp"] * (e[0] - e[1]) * (math.pi / 180.0)
            p[0] = wrap(p[0] + turn, math.pi)
            p[1] = wrap(p[1] + p[2] * o["stim_speed_rad"], math.pi)
            if (t + 1) % 720 == 0:
                p[2] = -p[2]
            if t >= warmup:
                self.total = self.total + math.cos(wrap(p[0] - p[1], math.pi))
                self.scored += 1
                self.outcome = self.total / self.scored
        elif self.task == "pong":
            paddle = min(450.0, max(50.0, p[2] + 100.0 * (e[0] - e[1])))
            x, y, vx, vy, past = p[0] + p[3], p[1] + p[4], p[3], p[4], int(p[5])
            hit = miss = 0
            if y <= 5:
                y, vy = 5.0, abs(vy)
            elif y >= 495:
                y, vy = 495.0, -abs(vy)
            if x >= 995:
                x, vx, past = 995.0, -abs(vx), 0
            if vx < 0 and past == 0 and x <= 115:
                if abs(y - paddle) <= 65:
                    x, vx, hit = 115.0, abs(vx), 1
                else:
                    past = 1
            if x < 0:
                miss = 1
                d = int(p[6]) + 1
                if d < len(self.w["draws"]):
                    x, y, vx, past = 995.0, 1 + 498 * self.w["draws"][d][0], -5.0, 0
                    vy = 5.0 if self.w["draws"][d][1] >= 0.5 else -5.0
                    p[6] = float(d)
                else:
                    self.finite = False
            p[0], p[1], p[2], p[3], p[4], p[5] = x, y, paddle, vx, vy, float(past)
            if t >= warmup:
                self.hits += hit
                self.misses += miss
                if miss:
                    self.rally = 0
                if hit:
                    self.rally += 1
                    self.longest = max(self.longest, self.rally)
                tot = self.hits + self.misses
                self.outcome = self.hits / tot if tot else 0.0
                self.scored += 1
        else:
            force = 10.0 if self.votes[1] > self.votes[0] else -10.0
            x, xd, th, td = p[:4]
            cs, sn = math.cos(th), math.sin(th)
            temp = (force + 0.1 * 0.5 * td * td * sn) / 1.1
            th_acc = (9.8 * sn - cs * temp) / (0.5 * (4.0 / 3.0 - 0.1 * cs * cs / 1.1))
            x_acc = temp - 0.1 * 0.5 * th_acc * cs / 1.1
            p[0], p[1], p[2], p[3] = x + 0.02 * xd, xd + 0.02 * x_acc, th + 0.02 * td, td + 0.02 * th_acc
            self.outcome = float(t + 1)
            self.scored = t + 1
            if abs(p[0]) > 2.4 or abs(p[2]) > 0.2095 or t + 1 >= 15000:
                self.done = True
        self.tick = t + 1


class Control:
    """The controls, from their definitions (docs/reservoir.md, "Controls")."""

    def __init__(self, task, o, policy, seed):
        self.task, self.o, self.policy, self.seed = task, o, policy, seed
        self.first, self.last, self.second, self.context = 0, 1, 1, 1
        self.mapping, self.fb_seen, self.cue, self.coin, self.coin_when, self.seen = 0, 0, 1, 1, -1, -1
        self.counts = [0.0, 0.0]

    @staticmethod
    def side(a, b):
        return 2 if b > a else 1

    def _stream(self):
        return 1 if self.policy == "context_blind" else 3 - self.context if self.policy == "irrelevant" else self.context

    def step(self, x, tick, rnd, world, env):
        T, P = self.task, self.policy
        if P == "reference_null":
            u = stream_uniform(self.seed, tick, 1)
            if T in ("tracking", "pong"):
                s = 2 * u - 1
                return [max(0.0, s), max(0.0, -s)]
            when = tick if T == "cartpole_plank_easy" else rnd if T == "reversal_adaptation" else 0
            if self.coin_when != when:
                self.coin, self.coin_when = (2 if u >= 0.5 else 1), when
            return [float(self.coin == 1), float(self.coin == 2)]
        if P == "oracle" and T in CONTINUING:
            if T == "cartpole_plank_easy":
                p = env.physical
                cmd = 80 * wrap(p[2], math.pi) + 18 * p[3] + p[0] + 2 * p[1]
                turn = 1.0 if cmd < 0 else -1.0
            else:
                best, ang = 0.0, 0.0
                for v, a in zip(x, world["angles"]):
                    if v > best:
                        best, ang = v, a
                turn = 0.0
                if best > 0:
                    turn = ang / self.o["movement_amp"] if T == "tracking" else math.sin(ang * (math.pi / 180.0))
                turn = max(-1.0, min(1.0, turn))
            return [max(0.0, turn), max(0.0, -turn)]
        if self.seen != tick:
            self.seen = tick
            self._observe(x)
        choice = max(1, self.first)
        if T == "delayed_xor":
            choice = 2 if self.first != self.second else 1
        elif T == "evidence_accumulation":
            choice = 2 if self.counts[0] < 0 else 1
        elif T == "context_integration":
            choice = 2 if self.counts[self._stream() - 1] < 0 else 1
        elif T == "temporal_order" and P == "bag":
            choice = 2 if self.counts[1] > self.counts[0] else 1
        elif T == "reversal_adaptation":
            choice = 3 - self.cue if self.mapping else self.cue
        if P == "constant_left":
            choice = 1
        elif P == "constant_right":
            choice = 2
        elif P == "memoryless":
            if T == "delayed_xor":
                choice = 2 if self.side(x[0], x[1]) != self.side(x[2], x[3]) else 1
            else:
                choice = self.side(x[0], x[1])
        elif P == "last":
            choice = self.last
        elif P == "first":
            choice = max(1, self.first)
        return [float(choice == 1), float(choice == 2)]

    def _observe(self, x):
        T = self.task
        if T == "delayed_xor":
            if x[0] + x[1] > 0:
                self.first = self.side(x[0], x[1])
            if x[2] + x[3] > 0:
                self.second = self.side(x[2], x[3])
            self.last = self.second
        elif T == "context_integration":
            if x[0] + x[1] > 0:
                self.context = self.side(x[0], x[1])
            self.counts = [self.counts[0] + (x[2] - x[3]), self.counts[1] + (x[4] - x[5])]
            off = 2 * self._stream()
            if x[off] + x[off + 1] > 0:
                self.last = self.side(x[off], x[off + 1])
                if not self.first:
                    self.first = self.last
        elif T == "reversal_adaptation":
            if x[3] > 0:
                if not self.fb_seen and x[4] + x[5] > 0 and self.policy == "oracle":
                    chosen = self.side(x[4], x[5])
                    right = 3 - chosen if x[6] <= x[7] else chosen
                    self.mapping = int(right != self.cue)
                self.fb_seen = 1
            else:
                self.fb_seen = 0
                if x[0] + x[1] > 0:
                    self.cue = self.side(x[0], x[1])
        else:
            if x[0] + x[1] > 0:
                self.last = self.side(x[0], x[1])
                if not self.first:
                    self.first = self.last
            if T == "evidence_accumulation":
                self.counts[0] = self.counts[0] + (x[0] - x[1])
            elif T == "temporal_order":
                self.counts = [self.counts[0] + x[0], self.counts[1] + x[1]]
                if x[0] + x[1] == 0 and x[2] > 0:
                    self.last = 1


def trial(task, options, world_seed, control_seed, controller="oracle", horizon=0, warmup=0, tape=None):
    o = dict(DEFAULTS[task])
    o.update(options)
    if not horizon:
        horizon = default_horizon(task, o) if task in CONTINUING else default_horizon(task, o)()
    if isinstance(world_seed, HostSeed):
        w = world_host(task, o, np.random.Generator(np.random.Philox(world_seed.n)), horizon)
    else:
        w = world(task, o, world_seed, horizon)
    env = (Continuing if task in CONTINUING else Episode)(task, o, w)
    ctl = Control(task, o, controller, control_seed)
    frames = 24 if task == "cartpole_plank_easy" else 1
    obs, eff, phys = [], [], []
    row = 0
    while env.finite and not env.done and env.tick < horizon and (tape is None or row + frames <= len(tape)):
        tick = env.tick
        for f in range(1, frames + 1):
            x = env.encode(f)
            e = [float(v) for v in tape[row]] if tape is not None else ctl.step(x, tick, env.round, w, env)
            row += 1
            obs.append(x)
            eff.append(e)
            for k in range(2):
                if not (math.isfinite(e[k]) and 0 <= e[k] <= 1):
                    env.finite = False
            if task == "cartpole_plank_easy":
                env.votes = [e[0], e[1]] if f == 1 else [env.votes[0] + e[0], env.votes[1] + e[1]]
            else:
                env.last = [e[0], e[1]]
        if env.finite:
            env.advance(warmup)
            if not all(math.isfinite(v) for v in env.physical):
                env.finite = False
        phys.append(list(env.physical))
    return dict(world=w, obs=np.array(obs), eff=np.array(eff), physical=np.array(phys), outcome=env.outcome,
                done=env.done, finite=env.finite, decisions=list(getattr(env, "dec", [])),
                ties=list(getattr(env, "ties", [])), scored=env.scored, hits=getattr(env, "hits", 0),
                misses=getattr(env, "misses", 0), ticks=len(phys))
