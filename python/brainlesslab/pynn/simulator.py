"""The state of a pyNN.brainlesslab simulation: the network description
(populations, projections, current sources in creation order) and, from the
first run on, the C network (brainlesslab._core.EqNet) built from it.

The network is built once, at the first run() after setup() or reset(), so a
script may create and connect in any order before running; reset() drops it
and the next run rebuilds it from the description (parameters, initial
values, connections) at t = 0.

Times: PyNN speaks milliseconds; the C network runs in seconds with
dt_s = timestep * 0.001 (the double pyNN.brian2 gives Brian2's clock), and a
step's time in ms is (step * dt_s) / 0.001, as pyNN.brian2 reads clock.t/ms.
"""

from pyNN import common

from .. import _core

name = "brainlesslab"

MS = 0.001  # the double of Brian2's ms (and of pyNN.brian2's translations)


def brian2_order(projections):
    """The projections in the order Brian2 runs their pathways in a step.

    Brian2 sorts the objects of one schedule slot by name; pyNN.brian2's k-th
    projection is the Synapses object "synapses" (k = 0) or "synapses_k", so
    its pathways run in the string order of "synapses_pre", "synapses_1_pre",
    ... ("synapses_1_pre" < "synapses_10_pre" < "synapses_2_pre" <
    "synapses_pre"). The order matters where two projections add into one
    variable of one neuron in one step: floating-point sums depend on it.
    The engine runs projections in the order they are added, so they are
    added in this one (the names are Brian2's in a fresh process)."""
    def name(k):
        return ("synapses" if k == 0 else "synapses_%d" % k) + "_pre"
    return [projections[k] for k in sorted(range(len(projections)), key=name)]


class ID(int, common.IDMixin):

    def __init__(self, n):
        """Create an ID object with numerical value `n`."""
        int.__init__(n)
        common.IDMixin.__init__(self)


class State(common.control.BaseState):

    def __init__(self):
        common.control.BaseState.__init__(self)
        self.mpi_rank = 0
        self.num_processes = 1
        self.seed = 1
        self._dt = 0.1
        self.segment_counter = -1
        self.clear()

    # --- description ------------------------------------------------------
    def clear(self):
        self.recorders = set([])
        self.populations = []
        self.projections = []
        self.current_sources = []
        self.id_counter = 0
        self.segment_counter = -1
        self.net = None
        self.reset()

    def _check_not_built(self, what):
        if self.net is not None:
            raise NotImplementedError(
                "pyNN.brainlesslab: %s after the network has run; call reset() first "
                "(the network is built at the first run)" % what)

    def add_population(self, p):
        self._check_not_built("creating a Population")
        self.populations.append(p)

    def add_projection(self, p):
        self._check_not_built("creating a Projection")
        self.projections.append(p)

    def add_current_source(self, c):
        self.current_sources.append(c)

    # --- time -------------------------------------------------------------
    def _get_dt(self):
        return self._dt

    def _set_dt(self, timestep):
        self._check_not_built("changing the time step")
        if not (timestep > 0):
            raise ValueError("pyNN.brainlesslab: timestep %r ms must be > 0" % (timestep,))
        self._dt = float(timestep)
    dt = property(fget=_get_dt, fset=_set_dt)

    @property
    def dt_s(self):
        return self._dt * MS

    @property
    def t(self):
        steps = self.net.steps if self.net is not None else 0
        return float((steps * self.dt_s) / MS)

    def steps_for(self, simtime):
        return int(round(simtime / self._dt))

    # --- running ----------------------------------------------------------
    def build(self):
        net = _core.EqNet(self.dt_s, int(self.seed))
        self.net = net
        try:
            for p in self.populations:
                p._build(net)
            # an Assembly's projection is one Brian2 Synapses object per
            # pair of members in pyNN.brian2, each with its own name
            parts = [(j, pair) for j in self.projections for pair in j._pairs()]
            for j, pair in brian2_order(parts):
                j._build(net, pair)
            from .standardmodels import draw_noise
            draw_noise(self.current_sources)
            for c in self.current_sources:
                c._build(net)
        except Exception:
            self.net = None
            raise

    def run(self, simtime):
        if self.net is None:
            self.build()
        self.running = True
        n = self.steps_for(simtime)
        if n < 0:
            raise ValueError("pyNN.brainlesslab: cannot run for %r ms" % (simtime,))
        for p in self.populations:
            dup = getattr(p, "_duplicate", None)
            if dup is not None and dup[0] < self.net.steps + n:
                raise ValueError("Using a dt of %g ms, neuron %d of %s spikes more than once during a time step"
                                 % (self._dt, dup[1], p.label))
        self.net.run(n)

    def run_until(self, tstop):
        self.run(tstop - self.t)

    def reset(self):
        """Reset the state of the current network to time t = 0."""
        for j in getattr(self, "projections", []):
            j._forget_net()
        self.net = None
        for r in self.recorders:
            r._restart()
        self.running = False
        self.t_start = 0
        self.segment_counter += 1


state = State()
