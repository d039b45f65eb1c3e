"""Runs one of PyNN's own example scripts, unchanged, on a PyNN backend and
writes what its populations did to an npz file, for
tests/oracles/test_pynn_examples.py:

    python3 example_runner.py BACKEND OUT.npz SCRIPT [SCRIPT ARGS ...]

BACKEND is brainlesslab or brian2; the script sees the argv it would see when
run as `python3 SCRIPT BACKEND ARGS...`, and `__name__ == '__main__'`.
The script's text is not touched. What the runner adds, the same on both
backends:

- before the script: for brainlesslab the import hook (so that
  `pyNN.brainlesslab` imports from a build tree, where .pth files are not
  read); for brian2 the numpy code generation target and brian2.seed() (as
  tests/oracles/test_pynn_brian2.py runs it); and NumPy's global generator
  seeded, since pyNN.brian2's NoisyCurrentSource draws from it (ours draws
  the same numbers in the same order).
- with BL_EXAMPLE_MAX_MS set, the simulated time is capped (below);
- every Population records its spikes from its creation on (recording
  spikes changes nothing in the dynamics, and gives the spike counts of
  populations the script itself only records v of);
- at the script's end() (or at exit, when it does not call end()), the
  spike trains and the recorded signals of every Population in creation
  order, every segment, go to OUT.npz as
      "<k>/<segment>/spikes/<neuron>"   spike times in ms
      "<k>/<segment>/<signal>"          samples x recorded neurons
      "<k>/label"                       the population's label
      "proj/<k>/weight"                 (pre, post, weight) of every
                                        connection of the k-th Projection
  and the wall time of the whole script as "wall_s".
"""
import atexit
import os
import runpy
import sys
import time

backend, out, script = sys.argv[1], sys.argv[2], sys.argv[3]
script_args = sys.argv[4:]
t0 = time.perf_counter()

import numpy as np  # noqa: E402

if backend == "brainlesslab":
    import brainlesslab_pynn_hook  # noqa: F401,E402
elif backend == "brian2":
    import brian2  # noqa: E402
    brian2.prefs.codegen.target = "numpy"
    brian2.seed(20261202)
else:
    raise SystemExit("example_runner: unknown backend %r (brainlesslab or brian2)" % backend)
np.random.seed(int(os.environ.get("BL_EXAMPLE_NP_SEED", "19700101")))

import importlib  # noqa: E402

sim = importlib.import_module("pyNN." + backend)
populations = []
_original_init = sim.Population.__init__


def _init(self, *args, **kwargs):
    _original_init(self, *args, **kwargs)
    populations.append(self)
    self.record("spikes")


sim.Population.__init__ = _init
projections = []
_original_proj_init = sim.Projection.__init__


def _proj_init(self, *args, **kwargs):
    _original_proj_init(self, *args, **kwargs)
    projections.append(self)


sim.Projection.__init__ = _proj_init
_saved = []


def _save():
    if _saved:
        return
    _saved.append(True)
    arrays = {}
    for k, p in enumerate(populations):
        arrays["%d/label" % k] = np.array(str(p.label))
        try:
            block = p.get_data()
        except Exception as e:  # a script may have ended the simulation already
            arrays["%d/error" % k] = np.array("%s: %s" % (type(e).__name__, e))
            continue
        for s, seg in enumerate(block.segments):
            for st in seg.spiketrains:
                ann = st.annotations  # PyNN annotates by id (source_id, or channel_id from a spike time array)
                sid = ann["source_id"] if "source_id" in ann else ann["channel_id"]
                i = p.id_to_index(int(sid))
                arrays["%d/%d/spikes/%d" % (k, s, i)] = np.asarray(st.rescale("ms").magnitude, dtype=float)
            for sig in seg.analogsignals:
                arrays["%d/%d/%s" % (k, s, sig.name)] = np.asarray(sig.magnitude, dtype=float)
    for k, prj in enumerate(projections):
        try:  # (i, j, weight) in creation order: STDP's result
            arrays["proj/%d/weight" % k] = np.asarray(prj.get(["weight"], format="list", with_address=True),
                                                       dtype=float).reshape(-1, 3)
        except Exception as e:
            arrays["proj/%d/error" % k] = np.array("%s: %s" % (type(e).__name__, e))
    arrays["wall_s"] = np.array(time.perf_counter() - t0)
    np.savez(out, **arrays)


_original_end = sim.end


def _end(*args, **kwargs):
    _save()
    return _original_end(*args, **kwargs)


sim.end = _end

# BL_EXAMPLE_MAX_MS: the simulated time capped at that many ms (the same on
# both backends; the script's text unchanged, its run() calls cut short), for
# scripts whose duration is fixed in their text, such as VAbenchmarks.py
_cap = os.environ.get("BL_EXAMPLE_MAX_MS")
if _cap:
    _cap = float(_cap)
    _original_run = sim.run

    def _run(simtime, callbacks=None):
        return _original_run(max(0.0, min(simtime, _cap - sim.get_current_time())), callbacks)

    def _run_until(tstop, callbacks=None):
        return _run(tstop - sim.get_current_time(), callbacks)

    sim.run = sim.run_for = _run
    sim.run_until = _run_until
atexit.register(_save)

sys.argv = [script, backend] + script_args
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
runpy.run_path(script, run_name="__main__")
