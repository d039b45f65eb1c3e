"""pyNN.brainlesslab: a PyNN 0.10 backend on BrainlessLab's network of
equation models (docs/pynn.md).

    import brainlesslab.pynn as sim      # always works
    import pyNN.brainlesslab as sim      # works once brainlesslab.pynn is
                                         # imported, or everywhere with the
                                         # installed brainlesslab-pynn.pth

The PyNN API comes from pyNN.common (populations, projections, connectors,
recording to Neo); this package supplies the simulator: cell types written in
the model language and a C network (brainlesslab._core.EqNet) that runs them
in Brian2's schedule, so that a script gives what pyNN.brian2 gives (bit for
bit where both integrate the same way; docs/pynn.md lists where not).
"""

import sys

from pyNN import common
from pyNN.common.control import DEFAULT_MAX_DELAY, DEFAULT_TIMESTEP, DEFAULT_MIN_DELAY
from pyNN.connectors import *  # noqa: F401,F403 (PyNN's connectors, unchanged)
from pyNN.random import NumpyRNG
from pyNN.recording import get_io
from pyNN.standardmodels import StandardCellType

from . import simulator
from .standardmodels import *  # noqa: F401,F403
from .populations import Population, PopulationView, Assembly
from .projections import Projection

# `import pyNN.brainlesslab` finds this module (pyNN is Debian's read-only
# package, so the backend cannot live inside it).
sys.modules.setdefault("pyNN.brainlesslab", sys.modules[__name__])


class NativeRNG(NumpyRNG):
    """The backend's own generator, for scripts that ask for one
    (sim.NativeRNG(seed=...)): NumPy's Mersenne Twister, as
    pyNN.random.NumpyRNG with the same seed (pyNN.brian2 has none)."""


def list_standard_models():
    """Return a list of all the StandardCellType classes available for this simulator."""
    return [obj.__name__ for obj in globals().values()
            if isinstance(obj, type) and issubclass(obj, StandardCellType) and obj is not StandardCellType]


def setup(timestep=DEFAULT_TIMESTEP, min_delay=DEFAULT_MIN_DELAY, **extra_params):
    """Start a simulation. extra_params: `seed` (the Poisson sources' stream,
    default 1), `max_delay` (accepted, not needed)."""
    max_delay = extra_params.get('max_delay', DEFAULT_MAX_DELAY)
    common.setup(timestep, min_delay, **extra_params)
    simulator.state.clear()
    simulator.state.dt = timestep
    simulator.state.min_delay = timestep if min_delay == 'auto' else min_delay
    simulator.state.max_delay = max_delay
    simulator.state.seed = int(extra_params.get('seed', extra_params.get('rng_seed', 1)))
    return rank()


def end(compatible_output=True):
    """Write what is still to be written and drop the network."""
    for (population, variables, filename) in simulator.state.write_on_end:
        io = get_io(filename)
        population.write_data(io, variables)
    simulator.state.write_on_end = []


run, run_until = common.build_run(simulator)
run_for = run

reset = common.build_reset(simulator)

initialize = common.initialize

get_current_time, get_time_step, get_min_delay, get_max_delay, \
    num_processes, rank = common.build_state_queries(simulator)

create = common.build_create(Population)

connect = common.build_connect(Projection, FixedProbabilityConnector, StaticSynapse)  # noqa: F405

record = common.build_record(simulator)


def record_v(source, filename):
    return record(['v'], source, filename)


def record_gsyn(source, filename):
    return record(['gsyn_exc', 'gsyn_inh'], source, filename)
