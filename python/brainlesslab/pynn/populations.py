"""Population, PopulationView and Assembly of pyNN.brainlesslab.

Native parameters live here (SI values, one array per parameter) until the
network is built; then each neuron population is one EqNet population whose
per-neuron variables are written from them, and set() writes through."""

import copy

import numpy as np
from pyNN import common, errors
from pyNN.standardmodels import StandardCellType
from pyNN.parameters import ParameterSpace, simplify

from .. import _core
from . import simulator
from .recording import Recorder


class Assembly(common.Assembly):
    _simulator = simulator


class PopulationView(common.PopulationView):
    _assembly_class = Assembly
    _simulator = simulator

    def _get_parameters(self, *names):
        parameter_dict = {}
        for name in names:
            value = self.parent._parameters[name]
            if isinstance(value, np.ndarray):
                value = value[self.mask]
            parameter_dict[name] = simplify(value)
        return ParameterSpace(parameter_dict, shape=(self.size,))

    def _set_parameters(self, parameter_space):
        # the parameter space has the view's shape: evaluated whole (a mask
        # into the parent, such as [1:2], would select from the wrong array)
        parameter_space.evaluate(simplify=False)
        full = {}
        for name, value in parameter_space.items():
            if name == "spike_times":
                # one Sequence per cell: assigned one by one (NumPy would
                # take a Sequence for an array of its times)
                arr = np.empty(self.parent.size, dtype=object)
                arr[:] = list(self.parent._parameters[name])
                cells = np.arange(self.parent.size)[self.mask]
                values = value if isinstance(value, np.ndarray) else [value] * cells.size
                for k, v in zip(cells, values):
                    arr[k] = v
            else:
                arr = np.array(self.parent._parameters[name])
                arr[self.mask] = value
            full[name] = arr
        self.parent._store_parameters(full)

    def _set_initial_value_array(self, variable, initial_values):
        # pyNN.common cannot keep a view's initial values (PopulationView.initial_values
        # raises), as with pyNN.brian2: initialize the parent Population instead
        raise NotImplementedError("pyNN.brainlesslab: initialize() of a PopulationView; "
                                  "initialize the parent Population with an array")

    def _get_view(self, selector, label=None):
        return PopulationView(self, selector, label)


def _seconds_text(x):
    return "%r second" % float(x)


class Population(common.Population):
    __doc__ = common.Population.__doc__
    _simulator = simulator
    _recorder_class = Recorder
    _assembly_class = Assembly

    def _create_cells(self):
        id_range = np.arange(simulator.state.id_counter, simulator.state.id_counter + self.size)
        self.all_cells = np.array([simulator.ID(id) for id in id_range], dtype=simulator.ID)
        self._mask_local = np.ones((self.size,), bool)
        if isinstance(self.celltype, StandardCellType):
            parameter_space = self.celltype.native_parameters
        else:
            raise TypeError(
                "pyNN.brainlesslab runs the standard cell types only (got %s)" % type(self.celltype).__name__)
        parameter_space.shape = (self.size,)
        parameter_space.evaluate(simplify=False)
        self._parameters = {}
        for name, value in parameter_space.items():
            self._parameters[name] = value
        self._pop_id = None
        for id in self.all_cells:
            id.parent = self
        simulator.state.id_counter += self.size
        simulator.state.add_population(self)

    # --- parameters -----------------------------------------------------
    def _get_parameters(self, *names):
        return ParameterSpace({name: simplify(self._parameters[name]) for name in names}, shape=(self.size,))

    def _set_parameters(self, parameter_space):
        parameter_space.evaluate(simplify=False)
        self._store_parameters(dict(parameter_space.items()))

    def _store_parameters(self, values):
        net = simulator.state.net
        ct = self.celltype
        kind = getattr(ct, "source_kind", None)
        if kind and net is not None and self._pop_id is not None:
            # a spike source changed between runs (update_spike_source_array.py,
            # varying_poisson.py): the engine's source is replaced; spikes
            # before the next step are dropped, as Brian2 drops them
            old = dict(self._parameters)
            self._parameters.update(values)
            try:
                if kind == "array":
                    net.set_array_source(self._pop_id, *self._array_spikes(from_step=net.steps))
                else:
                    net.set_poisson_source(self._pop_id, *self._poisson_parameters())
            except Exception:
                self._parameters = old
                raise
            return
        for name, value in values.items():
            if net is not None and self._pop_id is not None:
                if name in getattr(ct, "excluded", ()):
                    # PyNN re-translates every parameter when one of them is
                    # "computed" (all are, here): an unchanged value is fine
                    old = self._parameters.get(name)
                    if old is not None and np.array_equal(np.asarray(old, dtype=object if name == "spike_times"
                                                                     else float), np.asarray(value, dtype=object if name == "spike_times" else float)):
                        continue
                    raise NotImplementedError(
                        "pyNN.brainlesslab: '%s' of %s is fixed once the network has run; call reset() first"
                        % (name, self.label))
                net.var(self._pop_id, name)[:] = value
            self._parameters[name] = value

    # --- state ----------------------------------------------------------
    def _set_initial_value_array(self, variable, initial_values):
        if variable not in getattr(self.celltype, "state_vars", {}):
            if getattr(self.celltype, "source_kind", None):
                return  # spike sources have no state
            raise ValueError("pyNN.brainlesslab: %s has no state variable '%s' (it has %s)"
                             % (self.celltype.__class__.__name__, variable, sorted(self.celltype.state_vars)))
        # evaluated now, as pyNN.brian2 evaluates it, and kept for every
        # later build (reset() starts from them again, as pyNN.brian2 does).
        # pyNN.brian2 evaluates a copy (its unit conversion, value * mV, is a
        # lazyarray operation, which deep-copies the array and so the random
        # distribution's generator): the script's generator does not
        # advance, and two populations initialised from one distribution
        # get the same numbers (VAbenchmarks.py's excitatory and inhibitory
        # v). The same here, so that the runs agree
        values = np.broadcast_to(np.asarray(copy.deepcopy(initial_values).evaluate(simplify=False), dtype=float),
                                 (self.size,)).copy()
        if not hasattr(self, "_initial_now"):
            self._initial_now = {}
        self._initial_now[variable] = values
        net = simulator.state.net
        if net is None or self._pop_id is None:
            return  # applied when the network is built
        native, scale = self.celltype.state_vars[variable]
        net.var(self._pop_id, native)[:] = values * scale

    def _get_view(self, selector, label=None):
        return PopulationView(self, selector, label)

    # --- the network ----------------------------------------------------
    def _build(self, net):
        ct = self.celltype
        kind = getattr(ct, "source_kind", None)
        if kind == "array":
            self._build_array(net)
        elif kind == "poisson":
            self._build_poisson(net)
        else:
            self._build_neurons(net)
        self.recorder._attach(net)

    def _array_spikes(self, from_step=0):
        """(offsets, steps) of the spike source array for the engine; spikes
        before from_step (a later set() of spike_times) are not checked."""
        dt_s = simulator.state.dt_s
        self._duplicate = None  # (first step where a neuron spikes twice, that neuron)
        offsets, steps = [0], []
        all_t, all_bin, all_neuron = [], [], []
        for i, seq in enumerate(self._parameters["spike_times"]):
            t_ms = np.asarray(seq.value if hasattr(seq, "value") else seq, dtype=float)
            if np.any(t_ms[:-1] > t_ms[1:]):
                raise errors.InvalidParameterValueError(
                    "Spike times given to SpikeSourceArray must be in increasing order (%s neuron %d)"
                    % (self.label, i))
            # Brian2's SpikeGeneratorGroup: bin = int((t + 1e-3*dt)/dt), t in s
            t_s = t_ms * simulator.MS
            bins = np.asarray((t_s + 1e-3 * dt_s) / dt_s, dtype=np.int64)
            steps.extend(np.unique(bins).tolist())
            offsets.append(len(steps))
            keep = bins >= from_step
            t_s, bins = t_s[keep], bins[keep]
            same = np.flatnonzero(np.diff(bins) == 0)
            if same.size and (self._duplicate is None or bins[same[0]] < self._duplicate[0]):
                # refused when a run reaches that step, as pyNN.brian2 does
                # (a script may give spike times beyond its run)
                self._duplicate = (int(bins[same[0]]), i)
            all_t.append(t_s)
            all_bin.append(bins)
            all_neuron.append(np.full(bins.size, i, dtype=np.int64))
        if all_t:
            # Brian2's own check (SpikeGeneratorGroup.before_run): the spikes
            # sorted by time, then neuron, refused where two consecutive ones
            # are one neuron's in one step. Duplicates it does not see (other
            # neurons' spikes between them) are refused when a run reaches
            # them, above
            t, b, nrn = (np.concatenate(x) for x in (all_t, all_bin, all_neuron))
            order = np.lexsort((nrn, t))
            b, nrn = b[order], nrn[order]
            hit = np.flatnonzero((np.diff(b) == 0) & (np.diff(nrn) == 0))
            if hit.size:
                raise ValueError("Using a dt of %g ms, neuron %d of %s spikes more than once during a time step"
                                 % (simulator.state.dt, nrn[hit[0]], self.label))
        return np.asarray(offsets, dtype=np.uint64), np.asarray(steps, dtype=np.int64)

    def _build_array(self, net):
        self._pop_id = net.add_array_source(*self._array_spikes())

    def _poisson_parameters(self):
        p = self._parameters
        rate = np.broadcast_to(np.asarray(p["rate"], dtype=float), (self.size,))
        start = np.broadcast_to(np.asarray(p["start"], dtype=float), (self.size,)) * simulator.MS
        duration = np.broadcast_to(np.asarray(p["duration"], dtype=float), (self.size,)) * simulator.MS
        return rate.copy(), start.copy(), (start + duration).copy()

    def _build_poisson(self, net):
        self._pop_id = net.add_poisson_source(*self._poisson_parameters())

    def _build_neurons(self, net):
        ct = self.celltype
        native = {name: np.broadcast_to(np.asarray(v, dtype=float), (self.size,)) for name, v in self._parameters.items()}
        threshold, reset = ct.blocks(native)
        refractory = ct.refractory(native)
        refr_text = None
        if refractory is not None:
            if np.min(refractory) != np.max(refractory):
                raise NotImplementedError("pyNN.brainlesslab: %s: tau_refrac differs between neurons "
                                          "(a heterogeneous refractory period is not supported, as in pyNN.brian2)"
                                          % self.label)
            refr_text = _seconds_text(np.min(refractory))
        last = None
        for method in ct.methods:
            try:
                self._pop_id = net.add_neurons(self.size, ct.eqs, method, threshold, reset, refr_text)
                self.method = method
                break
            except _core.Error as e:
                last = e
        else:
            raise last
        for name, value in native.items():
            if name in getattr(ct, "excluded", ()):
                continue
            net.var(self._pop_id, name)[:] = value
        # the values the network starts from, in PyNN units: the recorder's
        # first sample (evaluating initial_values again would draw a random
        # distribution anew)
        self._initial_used = {}
        for variable, value in self.initial_values.items():
            native_name, scale = ct.state_vars[variable]
            now = getattr(self, "_initial_now", {})
            used = now[variable] if variable in now else \
                np.broadcast_to(np.asarray(value.evaluate(simplify=False), dtype=float), (self.size,)).copy()
            self._initial_used[variable] = used
            net.var(self._pop_id, native_name)[:] = used * scale
        self._receptors = {}
        for rtype, var in ct.post_synaptic_variables.items():
            self._receptors[rtype] = net.add_receptor(self._pop_id, "%s += w" % var, ct.weight_unit[0])
