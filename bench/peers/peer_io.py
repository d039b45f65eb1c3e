"""What the benchmark's peers (brian2_shiu2024.py, torch_phase4c.py) share:
the output directory `brainlesslab simulate` writes, the timing report, and
the entry point that turns an exception into one line for the receipt."""
import json
import os
import sys

import numpy as np


def write_outputs(out, steps, neurons, counts, v, g):
    """steps/neurons: per-trial int arrays of spike events in (step,
    neuron) order; counts, v, g: per-trial rows. Same files and dtypes as
    simulate's --out (counts int32; v, g in the peer's own dtype)."""
    os.makedirs(out, exist_ok=False)
    arrays = {
        "spikes_trial": np.concatenate([np.full(len(n), k, np.int32) for k, n in enumerate(neurons)]),
        "spikes_step": np.concatenate([np.asarray(s).astype(np.int32) for s in steps]),
        "spikes_neuron": np.concatenate([np.asarray(n).astype(np.int32) for n in neurons]),
        "counts": np.stack(counts).astype(np.int32),
        "v": np.stack(v),
        "g": np.stack(g),
    }
    for name, arr in arrays.items():
        np.save(os.path.join(out, name + ".npy"), arr, allow_pickle=False)
    return int(len(arrays["spikes_neuron"]))


def write_timing(path, timing):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(timing, f, indent=1)
        f.write("\n")


def run_main(main, name):
    """sys.exit(main()), an exception becoming one line for the receipt (and
    its traceback for the log)."""
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException as exc:
        import traceback
        traceback.print_exc()
        print(f"{name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(1)
