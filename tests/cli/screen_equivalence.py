"""operation = "screen": each condition equals the single plan that writes its
change in, bit for bit.

1. plans/larva-screen.toml as shipped (22 conditions: ORN rate x silence each of
   10 populations or none), run from its own place with 2 threads. For every
   condition a plan file is written here from conditions.json alone (the base
   plan's text, the condition's rate and one more [[silence]]), run as an
   ordinary connectome plan with 1 thread; its counts.npy, final_v.npy,
   final_g.npy must equal the screen's slice for that condition byte for byte,
   and its spikes.h5 (trial, step, neuron) must hash to the condition's
   spikes_sha256.
2. A small screen with a stimulate axis and a model parameter axis (2 x 2), the
   same way.
The records verify; the screen's record holds plan.toml and run.log.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import h5py
import numpy as np

SRC = Path(os.environ.get("BL_SOURCE_DIR", Path(__file__).resolve().parents[2]))
CLI = os.environ.get("BL_CLI", str(SRC / "build" / "brainlesslab"))
LARVA = SRC / "data" / "connectomes" / "larva-winding2023"


def run(plan, root, *extra):
    r = subprocess.run([CLI, "run", str(plan), "--root", str(root), "--quiet", *extra], capture_output=True,
                       text=True)
    if r.returncode:
        raise RuntimeError(f"{plan}: {r.stderr.strip()}")
    rec = Path(r.stdout.strip().splitlines()[-1])
    v = subprocess.run([CLI, "verify", str(rec)], capture_output=True, text=True)
    if v.returncode:
        raise RuntimeError(f"{rec} does not verify: {v.stdout}{v.stderr}")
    return rec


def spikes_digest(rec, n_trials):
    """The stream's digest (src/experiment/xp_impl.h), recomputed from the
    record's per-trial SONATA files: SHA-256 over the trials of each trial's
    SHA-256 of its (step, neuron) int32 little-endian pairs."""
    outer = hashlib.sha256()
    for k in range(n_trials):
        with h5py.File(rec / "spikes" / f"trial-{k:04d}.h5", "r") as f:
            (pop,) = list(f["spikes"])
            g = f["spikes"][pop]
            ts = g["timestamps"][()]
            ids = g["node_ids"][()]
        steps = np.rint(ts / 0.1).astype("<i4")
        assert np.array_equal(steps * 0.1, ts)  # the timestamps are exactly step * dt
        pairs = np.empty((len(ts), 2), "<i4")
        pairs[:, 0], pairs[:, 1] = steps, ids
        outer.update(hashlib.sha256(pairs.tobytes()).digest())
    return outer.hexdigest()


def base_text(screen_text):
    """The screen plan as a connectome plan: without its [[screen.axis]] tables."""
    text = re.sub(r'(?m)^operation = "screen"$', 'operation = "connectome"', screen_text)
    text = re.sub(r"(?ms)^\[\[screen\.axis\]\]\n.*?(?=^\[(?!\[screen)|\Z)", "", text)
    assert "[[screen" not in re.sub(r"(?m)#.*$", "", text)
    return text


def single_plan(base, cond, stimuli, connectome):
    text = base.replace('path = "../data/connectomes/larva-winding2023"', f'path = "{connectome}"')
    text = re.sub(r"(?ms)^\[outputs\].*?(?=^\[|\Z)", "", text)
    text = re.sub(r'(?m)^id = ".*"$', f'id = "cond-{cond["condition"]}"', text)
    # rates of the base stimuli
    for name, rate in cond["stimulus_rates_hz"].items():
        pat = rf'(?ms)(^\[\[stimulus\]\]\nname = "{re.escape(name)}"\n(?:(?!^\[).)*?^rate_hz = )[0-9.]+'
        text, k = re.subn(pat, rf"\g<1>{rate!r}", text)
        assert k == 1, name
    extra = ""
    for s in cond["added_stimuli"]:
        extra += (f'\n[[stimulus]]\nname = "{s["population"]}"\npopulation = "{s["population"]}"\n'
                  f'rate_hz = {s["rate_hz"]!r}\nstart_ms = {s["start_ms"]!r}\nstop_ms = {s["stop_ms"]!r}\n')
    for s in cond["added_silences"]:
        extra += f'\n[[silence]]\nname = "silenced-{s}"\npopulation = "{s}"\n'
    if cond["parameters"]:
        params = "".join(f"{k} = {v!r}\n" for k, v in cond["parameters"].items())
        text, k = re.subn(r'(?m)^preset = "(\w+)"$', rf'preset = "\1"\n[model.parameters]\n{params}', text)
        assert k == 1
    # stimuli must stay in order: the added ones after the plan's own, before [run]
    text = text.replace("\n[run]", extra + "\n[run]", 1)
    text += '\n[outputs]\nspikes = true\ncounts = true\nstate = true\npropagation = false\n'
    return text


def check_screen(label, plan, tmp, ok, threads="2"):
    rec = run(plan, tmp / "screens", "--threads", threads)
    assert (rec / "plan.toml").read_bytes() == Path(plan).read_bytes()
    assert (rec / "run.log").stat().st_size > 0
    conds = json.loads((rec / "conditions.json").read_text())["conditions"]
    counts = np.load(rec / "counts.npy")
    fv, fg = np.load(rec / "final_v.npy"), np.load(rec / "final_g.npy")
    rates = np.load(rec / "rates_mean_hz.npy")
    base = base_text(Path(plan).read_text())
    backend = json.loads((rec / "summary.json").read_text())["backend"]
    good_all = True
    for cond in conds:
        c = cond["condition"]
        p = tmp / f"{label}-cond-{c}.toml"
        p.write_text(single_plan(base, cond, None, LARVA))
        single = run(p, tmp / "singles", "--threads", "1", "--backend", backend)
        sc = np.load(single / "counts.npy")
        same = (np.array_equal(sc, counts[c]) and sc.dtype == counts.dtype
                and np.load(single / "final_v.npy").tobytes() == fv[c].tobytes()
                and np.load(single / "final_g.npy").tobytes() == fg[c].tobytes()
                and np.array_equal(np.load(single / "rates_mean_hz.npy"), rates[c])
                and spikes_digest(single, sc.shape[0]) == cond["spikes_sha256"]
                and json.loads((single / "summary.json").read_text())["spikes_sha256"] == cond["spikes_sha256"]
                and int(sc.sum()) == cond["spikes"])
        good_all &= same
        print(f"{'ok ' if same else 'BAD'} {label} condition {c} ({cond['label']}): {cond['spikes']} spikes")
        shutil.rmtree(single)
    ok.append(good_all and len(conds) > 0)
    return len(conds)


SMALL = """format = "brainlesslab-plan"
format_version = 4
id = "small-screen"
operation = "screen"
[connectome]
path = "{conn}"
[model]
preset = "{preset}"
[[population]]
name = "ORN"
select = {{ cell_type = "sensory", modality = "olfactory" }}
[[population]]
name = "PN"
select = {{ cell_type = "PN" }}
[[population]]
name = "LN"
select = {{ cell_type = "LN" }}
[[stimulus]]
name = "ORN"
population = "ORN"
rate_hz = 100.0
[[screen.axis]]
stimulate = ["PN", "LN"]
rate_hz = 40.0
start_ms = 20.0
stop_ms = 80.0
include_none = true
[[screen.axis]]
parameter = "{param}"
values = [{values}]
[run]
trials = 3
duration_ms = 100.0
seed = 99
[outputs]
spikes = false
"""


def main():
    if not (LARVA / "manifest.json").is_file():
        print("SKIP: the shipped larva connectome is absent")
        return 77
    ok = []
    tmp = Path(tempfile.mkdtemp(prefix="bl-screen-"))
    try:
        n = check_screen("larva-screen", SRC / "plans" / "larva-screen.toml", tmp, ok)
        ok.append(n >= 20)
        for preset, param, values in (("shiu2024", "w_syn_mv", "0.275, 0.35"), ("phase4c", "v_th_mv", "-45.0, -47.5")):
            small = tmp / f"small-{preset}.toml"
            small.write_text(SMALL.format(conn=LARVA, preset=preset, param=param, values=values))
            check_screen(f"small-{preset}", small, tmp, ok, threads="3")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'PASS' if all(ok) else 'FAIL'}: {sum(ok)}/{len(ok)}")
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
