"""Projection of pyNN.brainlesslab: PyNN's connectors (pyNN.connectors, run
unchanged) produce the connections through _convergent_connect; they are kept
as arrays (presynaptic and postsynaptic index in the parent populations,
weight in nA or uS, delay in ms rounded to whole steps as pyNN.brian2 rounds
it) in creation order, and given to the C network as one edge list when it is
built. The order of edges from one presynaptic neuron is the creation order,
as Brian2's synapse indices are."""

import numpy as np
from pyNN import common
from pyNN.space import Space

from . import simulator
from .standardmodels import StaticSynapse, STDPMechanism


class Connection(common.Connection):

    def __init__(self, projection, index):
        self.projection = projection
        self.index = index

    @property
    def presynaptic_index(self):
        return self.projection._pre_view_index[self.index]

    @property
    def postsynaptic_index(self):
        return self.projection._post_view_index[self.index]

    def _get_weight(self):
        return self.projection._current_weights()[self.index]

    def _set_weight(self, w):
        self.projection._check_not_built()
        self.projection._weight[self.index] = w

    def _get_delay(self):
        return self.projection._delay[self.index]

    def _set_delay(self, d):
        self.projection._check_not_built()
        self.projection._delay[self.index] = self.projection._round_delay(d)

    weight = property(_get_weight, _set_weight)
    delay = property(_get_delay, _set_delay)

    def as_tuple(self, *attribute_names):
        return tuple(getattr(self, name) for name in attribute_names)


def _members(view):
    """The populations (or views) a projection's side is made of: an
    Assembly's, in its order (pyNN.brian2 makes one Synapses object for
    each pair of a presynaptic and a postsynaptic member), or the one."""
    return list(view.populations) if isinstance(view, common.Assembly) else [view]


def _parent_index(view, indices):
    """Indices in a Population or PopulationView -> (population, indices in it)."""
    if isinstance(view, common.PopulationView):
        return view.grandparent, np.asarray(view.index_in_grandparent(indices), dtype=np.int64)
    return view, np.asarray(indices, dtype=np.int64)


def _split(view, indices):
    """Indices in a projection's side -> (member of each, index in that
    member's parent Population), as pyNN.brian2 partitions an Assembly."""
    indices = np.asarray(indices, dtype=np.int64).reshape(-1)
    members = _members(view)
    bounds = np.cumsum([0] + [m.size for m in members])
    group = np.searchsorted(bounds, indices, side="right") - 1
    parent = np.empty_like(indices)
    for g, m in enumerate(members):
        sel = group == g
        if np.any(sel):
            parent[sel] = _parent_index(m, indices[sel] - bounds[g])[1]
    return group.astype(np.int64), parent


def _parent(member):
    return member.grandparent if isinstance(member, common.PopulationView) else member


class Projection(common.Projection):
    __doc__ = common.Projection.__doc__
    _simulator = simulator
    _static_synapse_class = StaticSynapse

    def __init__(self, presynaptic_population, postsynaptic_population, connector, synapse_type=None,
                 source=None, receptor_type=None, space=Space(), label=None):
        common.Projection.__init__(self, presynaptic_population, postsynaptic_population, connector, synapse_type,
                                   source, receptor_type, space, label)
        if not isinstance(self.synapse_type, (StaticSynapse, STDPMechanism)):
            raise NotImplementedError("pyNN.brainlesslab: only StaticSynapse and STDPMechanism are supported (got %s)"
                                      % type(self.synapse_type).__name__)
        self._plastic = isinstance(self.synapse_type, STDPMechanism)
        self._net_index = None
        self._extra_chunks = {}
        self._pre_pops = [_parent(m) for m in _members(self.pre)]
        self._post_pops = [_parent(m) for m in _members(self.post)]
        self._pre_pop, self._post_pop = self._pre_pops[0], self._post_pops[0]
        for post in self._post_pops:
            if self.receptor_type not in post.celltype.post_synaptic_variables:
                raise ValueError("pyNN.brainlesslab: %s has no receptor type '%s' (it has %s)"
                                 % (post.label, self.receptor_type,
                                    sorted(post.celltype.post_synaptic_variables)))
        units = set(post.celltype.weight_unit for post in self._post_pops)
        if len(units) > 1:
            raise NotImplementedError("pyNN.brainlesslab: a projection onto an Assembly whose cell types take "
                                      "weights in different units (%s)" % ", ".join(sorted(u[0] for u in units)))
        if self._plastic and (len(self._pre_pops) > 1 or len(self._post_pops) > 1):
            raise NotImplementedError("pyNN.brainlesslab: STDP from or to an Assembly is not supported yet")
        self._pre_chunks, self._post_chunks, self._w_chunks, self._d_chunks = [], [], [], []
        self._pre_group_chunks, self._post_group_chunks = [], []
        self._pre_view_chunks, self._post_view_chunks = [], []
        simulator.state.add_projection(self)
        connector.connect(self)
        self._freeze()

    def _forget_net(self):
        """reset(): plastic weights go back to their values at creation (PyNN's reset
        restores synaptic weights, as pyNN.brian2's store/restore does)."""
        if self._plastic and hasattr(self, "_initial_weight"):
            self._weight = self._initial_weight.copy()
            self._w_chunks = [self._weight]
        self._net_index = None

    def _check_not_built(self):
        if simulator.state.net is not None:
            raise NotImplementedError("pyNN.brainlesslab: changing connections after the network has run; "
                                      "call reset() first")

    def _round_delay(self, d):
        dt = simulator.state.dt
        return np.round(np.asarray(d, dtype=float) / dt) * dt

    def _convergent_connect(self, presynaptic_indices, postsynaptic_index, **connection_parameters):
        connection_parameters.pop("dendritic_delay_fraction", None)
        pre = np.asarray(presynaptic_indices, dtype=np.int64).reshape(-1)
        if pre.size == 0:
            return
        n = pre.size
        for name, value in connection_parameters.items():
            if name not in ("weight", "delay"):  # the STDP rule's parameters, per connection
                self._extra_chunks.setdefault(name, []).append(
                    np.array(np.broadcast_to(np.asarray(value, dtype=float), (n,))))
        w = np.broadcast_to(np.asarray(connection_parameters.get("weight", 0.0), dtype=float), (n,))
        d = np.broadcast_to(np.asarray(connection_parameters.get("delay", simulator.state.dt), dtype=float), (n,))
        pre_group, pre_parent = _split(self.pre, pre)
        post_group, post_parent = _split(self.post, np.full(n, postsynaptic_index, dtype=np.int64))
        self._pre_group_chunks.append(pre_group)
        self._post_group_chunks.append(post_group)
        self._pre_view_chunks.append(pre)
        self._post_view_chunks.append(np.full(n, postsynaptic_index, dtype=np.int64))
        self._pre_chunks.append(pre_parent)
        self._post_chunks.append(post_parent)
        self._w_chunks.append(np.array(w, dtype=float))
        self._d_chunks.append(self._round_delay(d))
        if hasattr(self, "_weight"):
            self._freeze()

    def _freeze(self):
        def cat(chunks, dtype):
            return np.concatenate(chunks).astype(dtype) if chunks else np.zeros(0, dtype=dtype)
        self._pre_group = cat(self._pre_group_chunks, np.int64)
        self._post_group = cat(self._post_group_chunks, np.int64)
        self._pre_group_chunks = [self._pre_group]
        self._post_group_chunks = [self._post_group]
        self._pre_index = cat(self._pre_chunks, np.int64)
        self._post_index = cat(self._post_chunks, np.int64)
        self._pre_view_index = cat(self._pre_view_chunks, np.int64)
        self._post_view_index = cat(self._post_view_chunks, np.int64)
        self._weight = cat(self._w_chunks, float)
        self._delay = cat(self._d_chunks, float)
        self._pre_chunks = [self._pre_index]
        self._post_chunks = [self._post_index]
        self._pre_view_chunks = [self._pre_view_index]
        self._post_view_chunks = [self._post_view_index]
        self._w_chunks = [self._weight]
        self._d_chunks = [self._delay]

    def __len__(self):
        return int(self._weight.size) if hasattr(self, "_weight") else sum(c.size for c in self._w_chunks)

    def __getitem__(self, i):
        if isinstance(i, int):
            if i < 0 or i >= len(self):
                raise IndexError("connection %d of %d" % (i, len(self)))
            return Connection(self, i)
        raise TypeError("connection index must be an int")

    @property
    def connections(self):
        return (Connection(self, i) for i in range(len(self)))

    def _set_attributes(self, parameter_space):
        self._check_not_built()
        parameter_space.evaluate()
        for name, value in parameter_space.items():
            v = np.asarray(value)[self._pre_view_index, self._post_view_index]
            if name == "weight":
                self._weight[:] = v
            elif name == "delay":
                self._delay[:] = self._round_delay(v)
            else:
                raise NotImplementedError("pyNN.brainlesslab: cannot set '%s' of a StaticSynapse" % name)

    def _current_weights(self):
        net = simulator.state.net
        if self._plastic and net is not None and self._net_index is not None:
            self._weight = net.weights(self._net_index) / self._post_pop.celltype.weight_unit[1]
            self._w_chunks = [self._weight]
        return self._weight

    def _attr(self, name):
        if name == "weight":
            return self._current_weights()
        if name in self._extra_chunks:
            return np.concatenate(self._extra_chunks[name])
        if name == "delay":
            return self._delay
        if name == "presynaptic_index":
            return self._pre_view_index
        if name == "postsynaptic_index":
            return self._post_view_index
        raise KeyError("pyNN.brainlesslab: a StaticSynapse has no attribute '%s'" % name)

    def _get_attributes_as_list(self, names):
        cols = [self._attr(n) for n in names]
        return list(zip(*[c.tolist() for c in cols])) if cols else []

    def _get_attributes_as_arrays(self, names, multiple_synapses='sum'):
        ops = {'sum': np.add.at, 'min': np.minimum.at, 'max': np.maximum.at}
        if multiple_synapses not in ops:
            raise NotImplementedError("multiple_synapses='%s'" % multiple_synapses)
        out = []
        for name in names:
            if name.endswith("s") and name[:-1] in ("weight", "delay"):
                name = name[:-1]
            fill = {'sum': 0.0, 'min': np.inf, 'max': -np.inf}[multiple_synapses]
            a = np.full((self.pre.size, self.post.size), fill)
            ops[multiple_synapses](a, (self._pre_view_index, self._post_view_index), self._attr(name))
            mask = np.ones(a.shape, bool)
            mask[self._pre_view_index, self._post_view_index] = False
            a[mask] = np.nan
            out.append(a)
        return out

    def _pairs(self):
        """(presynaptic member, postsynaptic member) pairs in the order
        pyNN.brian2 creates their Synapses objects."""
        return [(i, j) for i in range(len(self._pre_pops)) for j in range(len(self._post_pops))]

    def _build(self, net, pair=(0, 0)):
        i, j = pair
        pre, post = self._pre_pops[i], self._post_pops[j]
        receptor = post._receptors[self.receptor_type]
        scale = post.celltype.weight_unit[1]
        steps = np.round(self._delay / simulator.state.dt)
        if np.any(steps < 0) or np.any(~np.isfinite(steps)):
            raise ValueError("pyNN.brainlesslab: %s: negative or infinite delay" % self.label)
        self._initial_weight = self._weight.copy()
        sel = (self._pre_group == i) & (self._post_group == j)
        if len(self._pairs()) > 1 and not np.any(sel):
            return
        if not np.all(sel):  # an Assembly's pair: its edges, still in creation order
            net.add_projection(pre._pop_id, post._pop_id, receptor,
                               self._pre_index[sel].astype(np.uint32), self._post_index[sel].astype(np.uint32),
                               self._weight[sel] * scale, steps[sel].astype(np.uint32))
            return
        self._net_index = net.add_projection(pre._pop_id, post._pop_id, receptor,
                                             self._pre_index.astype(np.uint32), self._post_index.astype(np.uint32),
                                             self._weight * scale, steps.astype(np.uint32))
        if self._plastic:
            rule = {}
            for name in ("tau_plus", "tau_minus", "A_plus", "A_minus", "w_min", "w_max"):
                values = self._attr(name) if name in self._extra_chunks else \
                    np.asarray([self.synapse_type.parameter_space[name].base_value], dtype=float)
                if values.size and np.min(values) != np.max(values):
                    raise NotImplementedError("pyNN.brainlesslab: %s: STDP parameter %s differs between "
                                              "connections (one rule per projection)" % (self.label, name))
                rule[name] = float(values[0]) if values.size else float(
                    self.synapse_type.parameter_space[name].base_value)
            ms = simulator.MS
            # SI as pyNN.brian2 converts: tau * ms, w * (uS or nA)
            net.set_stdp(self._net_index, rule["tau_plus"] * ms, rule["tau_minus"] * ms, rule["A_plus"],
                         rule["A_minus"], rule["w_min"] * scale, rule["w_max"] * scale)
