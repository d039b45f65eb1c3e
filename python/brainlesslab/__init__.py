"""BrainlessLab from Python: exact, reproducible spiking simulation on connectomes.

    import brainlesslab as bl
    c = bl.Connectome.load("data/connectomes/larva-winding2023")
    r = bl.simulate(c, stimulus=[{"select": {"cell_type": "sensory"}, "rate_hz": 150}], trials=3, duration_ms=200)
    rec = bl.run_plan("plans/larva-orn-150hz.toml", root="records")   # a sealed Record
    bl.plot.plot_record(rec, root="records")                          # figures in a derived record

From a build tree: PYTHONPATH=build/python /usr/bin/python3 ...
Errors from the library raise brainlesslab.Error carrying its message.
"""

from . import _core
from ._core import Error
from .connectome import Connectome, SimulationResult, preset_params, simulate
from .ode import solve_ode
from .record import Record, Spikes, Verification
from .ssa import run_ssa

__version__ = "0.1.0"
__all__ = ["Connectome", "Error", "Record", "SimulationResult", "Spikes", "Verification", "backends",
           "preset_params", "run_plan", "run_ssa", "simulate", "solve_ode", "verify"]


def run_plan(path, root="records", backend=None, threads=-1, force=False):
    """Run a plan (TOML) of any operation into a new sealed record under root;
    returns the Record. backend/threads override the plan's (None / -1: the
    plan's); a connectome plan whose estimate exceeds this machine's memory or
    the root's free disk is refused unless force (as `brainlesslab run`)."""
    import os

    return Record(_core.run_plan(os.fspath(path), os.fspath(root), backend, int(threads), bool(force)))


def verify(path):
    """Verify a record directory (the library's verifier); returns a Verification."""
    return Record(path).verify()


def __getattr__(name):
    # brainlesslab.plot on first use (importing it here would upset
    # `python3 -m brainlesslab.plot`, which the CLI runs).
    if name == "plot":
        import importlib

        return importlib.import_module(".plot", __name__)
    raise AttributeError("module 'brainlesslab' has no attribute %r" % name)


def backends():
    """Names of the compiled-in backends."""
    return _core.backends()
