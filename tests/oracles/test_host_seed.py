#!/usr/bin/python3
"""philox-host-v1 (the Python BrainlessLab's seeds) against an independent NumPy
oracle written here from docs/reservoir.md ("Seeds"): the seed of a stream is
SHA-256 of a canonical JSON naming it, read as a little-endian integer, which
seeds numpy.random.Generator(numpy.random.Philox(seed)).

Checked, value for value:
  * Falandays construction (`brainlesslab reservoir construct --host-seed`) for
    every weight_init_mode, Dale, repair_masks and input_link_p, several seeds
    and sizes; SORN construction (ratios, connection probabilities, I/E
    counts down to N_I = 0) the same way;
  * the Oosawa noise tape (`reservoir noise --host-seed`) drawn tile by tile;
  * a trial's seeds: the example sweep and ablation plans run as written
    (shortened with --trials 1) and a plan with an Oosawa drive and a
    reference_null control; trials.csv's seed columns are the oracle's, the
    records verify, the worlds are tasks_numpy.world_host's and each null's
    decision is its control coin;
  * whole Oosawa trials (one with shuffle_input) replayed closed-loop in NumPy
    (reservoir_numpy, tasks_numpy) from the seeds: the same evidence;
  * summaries: block means, their mean and the bootstrap interval."""

import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tasks_numpy as tasks  # noqa: E402  (world_host: the tasks' philox-host-v1 worlds)

CLI = os.environ.get("BL_CLI", "brainlesslab")
SRC = os.environ.get("BL_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TMP = tempfile.mkdtemp(prefix="bl_host_seed_")
FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)
    return cond


def sh(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True)


# ---- the scheme ----------------------------------------------------------------

def host_seed(root, partition, stream, *keys):
    """The seed integer of a stream: SHA-256 over the compact ASCII JSON list
    [scheme, root, partition, stream, [[key type, key], ...]], little-endian."""
    named = [["str" if isinstance(k, str) else "int", k] for k in keys]
    text = json.dumps(["philox-host-v1", root, partition, stream, named], separators=(",", ":"),
                      ensure_ascii=True, allow_nan=False)
    return int.from_bytes(hashlib.sha256(text.encode("ascii")).digest(), byteorder="little")


def gen(seed):
    return np.random.Generator(np.random.Philox(seed))


def hexseed(seed):
    return "%064x" % seed


# ---- construction oracles --------------------------------------------------------

FAL_DEFAULTS = {"link_p": 0.1, "input_weight": 1.875, "targ_min": 1.0, "inhibitory_frac": 0.25,
                "weight_init_mode": "excitatory", "weight_init_std": 1.0, "recurrent_init_scale": 1.0,
                "dale": False, "repair_masks": False, "input_link_p": None}


def falandays(params, n, r, e, seed):
    c = dict(FAL_DEFAULTS, **params)
    g = gen(seed)
    sign = np.ones(n)
    if c["dale"]:
        sign = np.where(g.random(n) < c["inhibitory_frac"], -1.0, 1.0)
    rec = g.random((n, n)) < c["link_p"]
    for i in range(n):
        rec[i, i] = False
    p_in = np.full(r, c["link_p"]) if c["input_link_p"] is None else np.array(c["input_link_p"], dtype=float)
    inp = g.random((n, r)) < p_in.reshape(1, r)
    out = g.random((n, e)) < c["link_p"]
    if c["repair_masks"]:
        can = np.nonzero(p_in)[0]
        if not c["dale"] and can.size > 0:
            for i in range(n):
                if not (rec[i].any() or inp[i].any()):
                    inp[i, g.choice(can)] = True
        for k in range(e):
            if not out[:, k].any():
                out[g.integers(n), k] = True
    mode = c["weight_init_mode"]
    if c["dale"]:
        w = np.maximum(0.0, 1.0 + 0.2 * g.standard_normal((n, n)))
    elif mode == "pong_mixed":
        coin = g.random((n, n)) < 0.25
        neg = -1.0 + 0.1 * g.standard_normal((n, n))
        other = 0.2 * g.standard_normal((n, n))
        w = np.where(coin, neg, other)
    elif mode == "legacy_normal":
        w = c["weight_init_std"] * g.standard_normal((n, n))
    else:
        w = c["input_weight"] + 0.1 * g.standard_normal((n, n))
    w = np.where(rec, w, 0.0) * c["recurrent_init_scale"]
    return {"w": w, "mask": rec.astype(np.uint8), "signs": sign, "w_in": np.where(inp, c["input_weight"], 0.0),
            "w_out": out.T.astype(float), "targets": np.full(n, c["targ_min"]), "acts": np.zeros(n)}


SORN_DEFAULTS = {"inhibitory_fraction": 0.2, "p_ee": 10.0 / 166.0, "p_ei": 1.0, "p_ie": 1.0, "p_input": 0.05,
                 "p_output": 0.05, "T_E_max": 0.5, "T_I_max": 1.0}


def sorn(params, n, r, e, seed):
    c = dict(SORN_DEFAULTS, **params)
    g = gen(seed)
    ne = min(n, max(1, round(n / (1 + c["inhibitory_fraction"]))))
    ni = n - ne

    def links(rows, cols, p, skip_diagonal):
        m = g.random((rows, cols)) < p
        if skip_diagonal:
            for i in range(min(rows, cols)):
                m[i, i] = False
        if cols == 0:
            return m
        for i in range(rows):
            if m[i].any():
                continue
            cols_ok = np.array([j for j in range(cols) if not (skip_diagonal and j == i)], dtype=np.int64)
            if cols_ok.size:
                m[i, g.choice(cols_ok)] = True
        return m

    def pools(rows, cols, fraction):
        m = np.zeros((rows, cols), dtype=bool)
        k = min(rows, max(1, round(fraction * rows)))
        for col in range(cols):
            m[g.permutation(rows)[:k], col] = True
        return m

    def rows_to(m, target):
        # the row-sum options (ee_row_sum, ...): target / total; a target of 0 draws nothing
        w = np.zeros(m.shape)
        if not target:
            return w
        w[m] = g.random(int(np.count_nonzero(m)))
        for i in range(w.shape[0]):
            total = 0.0
            for v in w[i]:
                total = total + float(v)
            if total > 0:
                w[i] = w[i] * (target / total)
        return w

    ee = links(ne, ne, c["p_ee"], True)
    ei = links(ne, ni, c["p_ei"], False)
    ie = links(ni, ne, c["p_ie"], False)
    pin = pools(ne, r, c["p_input"])
    pout = pools(ne, e, c["p_output"])
    w_ee = rows_to(ee, c.get("ee_row_sum", 1.0))
    w_ei = rows_to(ei, c.get("ei_row_sum", 1.0))
    w_ie = rows_to(ie, c.get("ie_row_sum", 1.0))
    w_eu = rows_to(pin, c.get("input_row_sum", 1.0))
    t_e = c["T_E_max"] * g.random(ne)
    t_i = c["T_I_max"] * g.random(ni)
    return {"w_ee": w_ee, "mask_ee": ee.astype(np.uint8), "c_e": w_ee.sum(axis=1), "w_ei": w_ei, "w_ie": w_ie,
            "w_eu": w_eu, "w_out": pout.T.astype(float), "t_e": t_e, "t_i": t_i}


def param_args(params):
    out = []
    for k, v in params.items():
        if k == "input_link_p":
            v = ",".join(repr(float(x)) for x in v)
        elif isinstance(v, bool):
            v = "true" if v else "false"
        out += ["--param", "%s=%s" % (k, v)]
    return out


def identical(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and np.array_equal(a, b)


def construct_case(kind, params, n, r, e, seed, label):
    out = os.path.join(TMP, "net-%s" % label)
    res = sh(CLI, "reservoir", "construct", "--node", kind, "--units", n, "--inputs", r, "--effectors", e,
             "--host-seed", hexseed(seed), "--out", out, *param_args(params))
    if not check(res.returncode == 0, "%s: construct --host-seed (%s)" % (label, res.stderr.strip()[:300])):
        return
    want = falandays(params, n, r, e, seed) if kind == "falandays" else sorn(params, n, r, e, seed)
    bad = []
    for name, value in want.items():
        path = os.path.join(out, name + ".npy")
        if not os.path.exists(path):
            if np.asarray(value).size:
                bad.append(name + " (missing)")
            continue
        got = np.load(path)
        if not identical(got, value):
            bad.append(name)
    check(not bad, "%s: %s N=%d R=%d E=%d %s identical to the NumPy oracle%s"
          % (label, kind, n, r, e, params or "defaults", " (differs: %s)" % ", ".join(bad) if bad else ""))


# 1. Falandays: every construction option.
seeds = [host_seed(0, "development", "construction", "paired-construction", "falandays", 16, 3, 2, b)
         for b in range(2)] + [host_seed(7, "calibration", "construction", "k", "falandays", 40, 5, 2), 12345]
fal_cases = [
    {},
    {"link_p": 0.3},
    {"weight_init_mode": "pong_mixed", "link_p": 0.25},
    {"weight_init_mode": "legacy_normal", "weight_init_std": 0.7, "recurrent_init_scale": 0.5},
    {"dale": True, "inhibitory_frac": 0.4, "link_p": 0.2},
    {"dale": True, "repair_masks": True, "link_p": 0.05},
    {"repair_masks": True, "link_p": 0.02},
    {"repair_masks": True, "link_p": 0.03, "input_link_p": [0.0, 0.05, 0.0, 0.1, 0.0]},
    {"input_link_p": [0.5, 0.0, 1.0, 0.25, 0.1], "weight_init_mode": "pong_mixed"},
]
for ci, params in enumerate(fal_cases):
    r = len(params["input_link_p"]) if "input_link_p" in params else 3
    for si, seed in enumerate(seeds[:2] if ci % 2 else seeds):
        for n in ((16, 40) if si == 0 else (23,)):
            construct_case("falandays", params, n, r, 2, seed, "fal%d-%d-%d" % (ci, si, n))

# 2. SORN: sizes around the pairwise-summation block edges (8, 128), sparse and dense E<->I, N_I = 0.
sorn_cases = [({}, 200, 3, 2), ({}, 30, 2, 2), ({"p_ee": 0.3, "p_ei": 0.2, "p_ie": 0.5}, 60, 4, 3),
              ({"inhibitory_fraction": 0.0}, 12, 3, 2), ({"p_ee": 0.0, "p_input": 0.2, "p_output": 0.5}, 9, 2, 2),
              ({"T_E_max": 1.0, "T_I_max": 0.5}, 310, 3, 2),
              ({"ee_row_sum": 2.5, "ei_row_sum": 0.375, "ie_row_sum": 3.0, "input_row_sum": 1.7}, 60, 3, 2),
              ({"ee_row_sum": 0.0, "ei_row_sum": 0.0}, 40, 2, 2), ({"ie_row_sum": 0.0, "input_row_sum": 0.0}, 40, 2, 2)]
for ci, (params, n, r, e) in enumerate(sorn_cases):
    for si, seed in enumerate(seeds[2:] if ci else seeds):
        construct_case("sorn", params, n, r, e, seed, "sorn%d-%d" % (ci, si))

# 3. The noise tape: a trial's frames are its drive generator's normals, N per
#    frame, however the Python project tiles them (64-frame tiles here, and odd ones).
drive = host_seed(0, "development", "drive", "paired-mechanism", "falandays", 1, 0)
z_path = os.path.join(TMP, "z.npy")
res = sh(CLI, "reservoir", "noise", "--host-seed", hexseed(drive), "--units", 16, "--frames", 150, "--out", z_path)
if check(res.returncode == 0, "noise --host-seed (%s)" % res.stderr.strip()[:200]):
    got = np.load(z_path)
    g = gen(drive)
    tiles = []
    left = 150
    while left > 0:
        k = min(64, left)
        tiles.append(g.standard_normal((k, 16)))
        left -= k
    check(identical(got, np.concatenate(tiles)), "noise tape: 150 frames of 16 units equal NumPy's 64-frame tiles")
    g = gen(drive)
    odd = np.concatenate([g.standard_normal((k, 16)) for k in (1, 7, 50, 92)])
    check(identical(got, odd), "noise tape: the same frames whatever the tile sizes")

# 4. A trial's seeds: the example plans as written, and drive / control seeds.
root = os.path.join(TMP, "records")


def run_plan(plan, *extra):
    r = sh(CLI, "run", plan, "--root", root, "--quiet", *extra)
    return r, (r.stdout.strip().split("\n")[-1] if r.returncode == 0 else None)


def expected_seeds(row, scope, pairing="paired-worlds", construction="paired-construction",
                   mechanism="paired-mechanism", root_seed=0, partition="development", n_inputs=3, n_effectors=2):
    b, t = int(row["block"]), int(row["trial"])
    node, task, count = row["node"] or "falandays", row["task"], int(row["units"] or 16)
    scoped = {"evaluation": (), "block": (b,), "trial": (b, t)}[scope]
    return {"world_seed": host_seed(root_seed, partition, "world", pairing, task, b, t),
            "construction_seed": host_seed(root_seed, partition, "construction", construction, node, count,
                                           n_inputs, n_effectors, *scoped),
            "drive_seed": host_seed(root_seed, partition, "drive", mechanism, node, b, t),
            "control_seed": host_seed(root_seed, partition, "control", mechanism, task, b, t)}


def json_equal(printed, value):
    """summary.json's numbers come from cJSON, which prints 15 significant
    digits when they read back within one relative epsilon: equal to that."""
    return abs(printed - value) <= np.finfo(float).eps * max(abs(printed), abs(value))


def check_summary(rec, plan_path, label):
    """The summary: block means, their mean and the 95% bootstrap interval as
    NumPy computes them, from the summary-bootstrap stream named by the
    target's composition, interventions and keys."""
    plan = tomllib.load(open(plan_path, "rb"))
    ev = plan["evaluation"]
    rows = list(csv.DictReader(open(os.path.join(rec, "trials.csv"))))
    summary = json.load(open(os.path.join(rec, "summary.json")))
    ok = True
    for t, got in zip(plan["targets"], summary["targets"]):
        comp = t.get("composition", {})
        node, task = comp.get("node", {}), comp.get("task", {})
        named = {"composition": {"node": {"kind": node.get("kind", "falandays"), "parameters": node.get("parameters", {})},
                                 "task": {"kind": task.get("kind", "delayed_cue"), "options": task.get("options", {})},
                                 "count": comp.get("count", 200), "input_gain": comp.get("input_gain", 1.0)},
                 "interventions": [{"tick": i["tick"], "verb": i["verb"]} for i in t.get("interventions", [])],
                 "pairing": t.get("pairing_key", "paired-worlds"), "mechanism": t.get("mechanism_key", "paired-mechanism")}
        text = json.dumps(named, sort_keys=True, separators=(",", ":"), allow_nan=False)
        seed = host_seed(ev.get("root_seed", 0), ev.get("seed_partition", "development"), "summary-bootstrap",
                         hashlib.sha256(text.encode()).hexdigest())
        per_block = {}
        for row in rows:
            if row["target"] == t["id"]:
                per_block.setdefault(int(row["block"]), []).append(float(row["outcome"]))
        values = [float(np.mean(per_block[b])) for b in sorted(per_block)]
        boot = np.asarray(values)[gen(seed).integers(0, len(values), (2000, len(values)))].mean(axis=1)
        low, high = np.quantile(boot, (0.025, 0.975))
        ok &= len(got["block_means"]) == len(values) and all(json_equal(x, y) for x, y in zip(got["block_means"], values))
        ok &= json_equal(got["value"], float(np.mean(values)))
        ok &= got["interval"] is not None and json_equal(got["interval"]["low"], float(low)) and \
            json_equal(got["interval"]["high"], float(high))
    check(ok, "%s: block means, their mean and the bootstrap interval are NumPy's (summary-bootstrap stream)" % label)


for name in ("sweep-delayed-cue", "ablate-delayed-cue"):
    plan = os.path.join(SRC, "plans", "reservoir", name + ".toml")
    r, rec = run_plan(plan, "--trials", "1")
    if not check(rec is not None, "%s runs as written (philox-host-v1), --trials 1 (%s)" % (name, r.stderr.strip()[:300])):
        continue
    check(sh(CLI, "verify", rec).returncode == 0, "%s: the sealed record verifies" % name)
    m = json.load(open(os.path.join(rec, "manifest.json")))
    check(m["status"] == "DONE" and m["plan"]["numerics"]["rng"] == "philox-host-v1" and
          "rng_as_written" not in m["plan"]["numerics"], "%s: the record says numerics.rng = philox-host-v1" % name)
    rows = list(csv.DictReader(open(os.path.join(rec, "trials.csv"))))
    check(len(rows) == 3 * 2 and all(row["status"] == "completed" for row in rows), "%s: 3 targets x 2 blocks" % name)
    ok = all(row["world_seed"] == hexseed(expected_seeds(row, "block")["world_seed"]) and
             row["construction_seed"] == hexseed(expected_seeds(row, "block")["construction_seed"]) for row in rows)
    check(ok, "%s: trials.csv world and construction seeds are seed_for's (64 hex digits)" % name)
    check_summary(rec, plan, name)
    # The worlds themselves: label and delay as the Python project's prepare() draws them.
    worlds = [tasks.world_host("delayed_cue", dict(tasks.DEFAULTS["delayed_cue"]),
                               gen(expected_seeds(row, "block")["world_seed"]), 0) for row in rows]
    check(all(int(row["label"]) == w["labels"][0] and int(row["delay"]) == w["meta"][1] for row, w in zip(rows, worlds)),
          "%s: every trial's world (label, delay) is the Python project's" % name)

plan = os.path.join(TMP, "drive-control.toml")
open(plan, "w").write("""format = "brainlesslab-plan"
format_version = 4
id = "host-drive-control"
operation = "profile"

[[targets]]
id = "noisy"
controller = "reservoir"
[targets.composition]
count = 12
[targets.composition.node]
kind = "falandays"
[targets.composition.node.parameters]
drive = "oosawa"
membrane_noise = 0.3
noise_gain = 0.2
[targets.composition.task]
kind = "delayed_cue"

[[targets]]
id = "null"
controller = "reference_null"
[targets.composition]
count = 12
[targets.composition.task]
kind = "delayed_cue"

[[targets]]
id = "shuffled"
controller = "reservoir"
interventions = [{ tick = 1, verb = "shuffle_input" }]
[targets.composition]
count = 12
input_gain = 0.8
[targets.composition.node]
kind = "falandays"
[targets.composition.node.parameters]
drive = "oosawa"
membrane_noise = 0.3
noise_gain = 0.2

[evaluation]
blocks = 3
trials_per_block = 4
construction_scope = "trial"
root_seed = 11
seed_partition = "development"

[numerics]
rng = "philox-host-v1"
""")
r, rec = run_plan(plan)
if check(rec is not None, "an Oosawa-drive and reference_null plan runs under philox-host-v1 (%s)" % r.stderr.strip()[:300]):
    check(sh(CLI, "verify", rec).returncode == 0, "drive/control plan: the sealed record verifies")
    rows = list(csv.DictReader(open(os.path.join(rec, "trials.csv"))))
    noisy = [row for row in rows if row["target"] == "noisy"]
    null = [row for row in rows if row["target"] == "null"]
    exp = [expected_seeds(row, "trial", root_seed=11) for row in noisy]
    check(len(noisy) == 12 and all(row["drive_seed"] == hexseed(x["drive_seed"]) and
                                   row["construction_seed"] == hexseed(x["construction_seed"]) and
                                   row["world_seed"] == hexseed(x["world_seed"]) for row, x in zip(noisy, exp)),
          "drive/control plan: world, construction (trial scope) and drive seeds are seed_for's")
    exp = [expected_seeds(dict(row, units="12"), "trial", root_seed=11) for row in null]
    check(len(null) == 12 and all(row["control_seed"] == hexseed(x["control_seed"]) and
                                  row["world_seed"] == hexseed(x["world_seed"]) for row, x in zip(null, exp)),
          "drive/control plan: the nulls' control seeds are seed_for's (mechanism key, task)")
    coins = [2 if gen(x["control_seed"]).random() >= 0.5 else 1 for x in exp]
    check([int(row["decision"]) for row in null] == coins,
          "drive/control plan: each null decides its control generator's first coin (2 if u >= 0.5)")
    check_summary(rec, plan, "drive/control plan")
    # Whole trials, closed loop in NumPy: the wiring of the construction seed, the
    # world of the world seed, the drive tape of the drive seed (N normals a frame)
    # and, for "shuffled", permutation(3) of the input-shuffle seed from tick 1.
    import reservoir_numpy as node_oracle
    same = True
    for row in [row for row in rows if row["target"] in ("noisy", "shuffled")]:
        b, t = int(row["block"]), int(row["trial"])
        x = expected_seeds(row, "trial", root_seed=11)
        net = os.path.join(TMP, "trial-%s-%d-%d" % (row["target"], b, t))
        res = sh(CLI, "reservoir", "construct", "--node", "falandays", "--units", 12, "--inputs", 3, "--effectors", 2,
                 "--host-seed", hexseed(x["construction_seed"]), "--param", "oosawa=true", "--param",
                 "membrane_noise=0.3", "--param", "noise_gain=0.2", "--out", net)
        if res.returncode != 0:
            same = False
            break
        fal = node_oracle.Falandays([node_oracle.load_bundle(net)])
        o = dict(tasks.DEFAULTS["delayed_cue"])
        w = tasks.world_host("delayed_cue", o, gen(x["world_seed"]), 0)
        env = tasks.Episode("delayed_cue", o, w)
        tape = gen(x["drive_seed"])
        shuffled = row["target"] == "shuffled"
        perm = gen(host_seed(11, "development", "input-shuffle", "paired-mechanism", "falandays", b, t)).permutation(3)
        gain = 0.8 if shuffled else 1.0
        ev = [0.0, 0.0]
        while env.finite and not env.done:
            obs = env.encode(1)
            u = np.array([obs[perm[r]] if shuffled else obs[r] for r in range(3)]) * gain
            fal.step(u[None, :], tape.standard_normal(12)[None, :])
            e = [float(v) for v in fal.effectors[0]]
            if w["starts"][0] <= env.tick < w["ends"][0]:
                ev = [ev[0] + e[0], ev[1] + e[1]]
            env.last = e
            env.advance(0)
        same &= (float(row["evidence_left"]), float(row["evidence_right"])) == (ev[0], ev[1])
        same &= int(row["decision"]) == env.dec[0] and float(row["outcome"]) == env.outcome
        same &= int(row["ticks"]) == env.tick
    check(same, "drive/control plan: 24 Oosawa trials (12 with shuffled, scaled input) replayed in NumPy from the "
                "seeds give the same evidence, decision and outcome")

# A continuous outcome over many blocks, so that the interval depends on every bootstrap draw.
plan = os.path.join(TMP, "tracking-null.toml")
open(plan, "w").write("""format = "brainlesslab-plan"
format_version = 4
id = "host-tracking-null"
operation = "profile"
diagnostic = true

[[targets]]
id = "null"
controller = "reference_null"
pairing_key = "tracking/\u00e9"
[targets.composition]
count = 12
input_gain = 1
[targets.composition.task]
kind = "tracking"

[evaluation]
blocks = 9
trials_per_block = 3
horizon = 40
root_seed = 5
seed_partition = "development"

[numerics]
rng = "philox-host-v1"
""")
r, rec = run_plan(plan)
if check(rec is not None, "a tracking reference_null plan runs under philox-host-v1 (%s)" % r.stderr.strip()[:300]):
    rows = list(csv.DictReader(open(os.path.join(rec, "trials.csv"))))
    check(len({row["outcome"] for row in rows}) > 20, "tracking null: continuous outcomes")
    check(all(row["control_seed"] == hexseed(host_seed(5, "development", "control", "paired-mechanism", "tracking",
                                                       int(row["block"]), int(row["trial"]))) for row in rows),
          "tracking null: control seeds are seed_for's")
    check_summary(rec, plan, "tracking null (9 blocks, a non-ASCII pairing key, an integer input_gain)")

if FAILURES:
    print("%d failure(s); files kept in %s" % (len(FAILURES), TMP))
    sys.exit(1)
shutil.rmtree(TMP, ignore_errors=True)
print("all philox-host-v1 checks passed")
