"""What the Brian2 oracles share before their own cases: NumPy on glibc's exp
and log (libm_numpy.py; importing this module does it, so import it before
NumPy), the paths (the repository, the CLI under test), the skips (77) when
Brian2, h5py or the larva connectome is missing, and the plan runner and
spike reader of the connectome-plan oracles.

An oracle starts with
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import brian2_oracle  # noqa: E402  (before NumPy: it may run this process again)
and then asks for what it needs: b2 = brian2_oracle.import_brian2() (or
b2, h5py = brian2_oracle.import_brian2(h5py=True)), brian2_oracle.larva()."""
import glob
import os
import subprocess
import sys
import warnings

import libm_numpy

libm_numpy.reexec_with_libm()

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# CTest sets BL_CLI; by hand, the build tree's binary.
CLI = os.environ.get("BL_CLI", os.path.join(ROOT, "build", "brainlesslab"))


def import_brian2(h5py=False):
    """brian2, or (brian2, h5py) when h5py is asked for; skip (77) when one
    does not import. Brian2's warnings (its numpy target, its units) are off."""
    try:
        warnings.filterwarnings("ignore")
        import brian2
        if not h5py:
            return brian2
        import h5py as h5
        return brian2, h5
    except Exception:  # pragma: no cover
        print("skip: brian2 or h5py not importable" if h5py else "skip: brian2 not importable")
        sys.exit(77)


def larva():
    """The shipped larva connectome's directory; skip (77) without it."""
    conn = os.path.join(ROOT, "data", "connectomes", "larva-winding2023")
    if not os.path.exists(os.path.join(conn, "manifest.json")):
        print("skip: no larva connectome")
        sys.exit(77)
    return conn


def plan_head(plan_id, conn):
    """A connectome plan's first lines: format, id and the connectome."""
    return f'''format = "brainlesslab-plan"
format_version = 4
id = "{plan_id}"
operation = "connectome"
[connectome]
path = "{conn}"
'''


def run_plan(text, work, name):
    """Write `text` as work/NAME.toml, run it with `brainlesslab run` (a
    failure ends the oracle naming the plan) and return its record."""
    plan = os.path.join(work, name + ".toml")
    with open(plan, "w") as f:
        f.write(text)
    root = os.path.join(work, "rec-" + name)
    r = subprocess.run([CLI, "run", plan, "--root", root, "--quiet"], capture_output=True, text=True)
    if r.returncode:
        print(r.stdout, r.stderr)
        raise SystemExit(f"FAIL: brainlesslab run {name}")
    return glob.glob(os.path.join(root, "*/"))[0]


def spikes_of(rec, trial, dt_ms):
    """A record's spikes of one trial as sorted (step, neuron) pairs."""
    import h5py
    import numpy as np
    with h5py.File(os.path.join(rec, "spikes", f"trial-{trial:04d}.h5"), "r") as f:
        g = f["spikes"][list(f["spikes"].keys())[0]]
        ids = np.asarray(g["node_ids"][:], dtype=np.int64)
        ts = np.asarray(g["timestamps"][:], dtype=np.float64)
    steps = np.rint(ts / dt_ms).astype(np.int64)
    return sorted(zip(steps.tolist(), ids.tolist()))
