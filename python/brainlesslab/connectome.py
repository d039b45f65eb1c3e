"""Connectomes and simulation from Python.

`Connectome.load(path)` loads and fully validates a connectome directory with
the library (bl_connectome_load); the CSR arrays are read-only views of the
library's memory. `select(...)` resolves a population exactly as a plan's
selector does: neurons = [indices], ids = [external ids], or a metadata query
select = {column: value or [values]} (AND over columns, OR over values).

`simulate(...)` builds a network and runs it on a backend; its arrays are
views of the library's result (no copies).
"""

import numpy as np

from . import _core

__all__ = ["Connectome", "SimulationResult", "simulate"]


class Connectome:
    """A loaded connectome: n_neurons, n_edges, offsets (int64 [N+1]),
    targets (int32 [E]), counts (int32 [E], signed synapse counts),
    external_ids (list of str), columns ({name: list of str}), info (manifest
    fields), neurons (the neuron table as {column: values})."""

    def __init__(self, raw, path):
        self._raw = raw
        self.path = path
        self.n_neurons = raw["n_neurons"]
        self.offsets = raw["offsets"]
        self.targets = raw["targets"]
        self.counts = raw["counts"]
        self.external_ids = raw["external_ids"]
        self.columns = raw["columns"]
        self.info = raw["info"]
        self._index_of = None

    @classmethod
    def load(cls, path):
        import os

        path = os.path.abspath(os.fspath(path))
        return cls(_core.load_connectome(path), path)

    @staticmethod
    def save(path, offsets, targets, counts, external_ids=None, columns=None, info=None):
        """Write a connectome directory from CSR arrays (offsets int64 [N+1],
        targets int32 [E] ascending per row, counts int32 [E] signed, never 0),
        external ids (default: the indices), metadata columns {name: [str]}
        and manifest info {key: str} (name, source, licence, ...); the library
        validates everything. Returns the loaded Connectome."""
        import os

        n = len(offsets) - 1
        ids = [str(i) for i in (external_ids if external_ids is not None else range(n))]
        cols = {k: [str(x) for x in v] for k, v in (columns or {}).items()}
        arrays = [np.asarray(offsets, dtype=np.int64)]
        for name, a in (("targets", targets), ("counts", counts)):
            a = np.asarray(a)
            if a.size and (a.min() < -2**31 or a.max() >= 2**31):
                raise ValueError("%s: values must fit int32" % name)
            arrays.append(a.astype(np.int32))
        _core.save_connectome(os.fspath(path), *arrays, ids, cols, dict(info or {}))
        return Connectome.load(path)

    @property
    def n_edges(self):
        return len(self.targets)

    @property
    def neurons(self):
        table = {"index": np.arange(self.n_neurons, dtype=np.int64), "external_id": self.external_ids}
        table.update(self.columns)
        return table

    def __repr__(self):
        return "Connectome(%r, %d neurons, %d edges)" % (self.info.get("name", self.path), self.n_neurons, self.n_edges)

    def index_of(self, external_id):
        """Neuron index of an external id (str or int)."""
        if self._index_of is None:
            self._index_of = {e: i for i, e in enumerate(self.external_ids)}
        key = str(external_id)
        if key not in self._index_of:
            raise KeyError("%s: unknown neuron id %s" % (self.path, key))
        return self._index_of[key]

    def select(self, neurons=None, ids=None, select=None, **query):
        """Sorted int32 neuron indices of one selector (exactly one of
        neurons=, ids=, select= or column=value keywords)."""
        if query:
            if select is not None:
                raise ValueError("give the metadata query either as select={...} or as keywords, not both")
            select = query
        given = [k for k, v in (("neurons", neurons), ("ids", ids), ("select", select)) if v is not None]
        if len(given) != 1:
            raise ValueError("a population takes exactly one selector (neurons, ids or select), got %s"
                             % (", ".join(given) or "none"))
        if neurons is not None:
            idx = np.asarray(neurons)
            if idx.ndim != 1 or len(idx) == 0 or not np.issubdtype(idx.dtype, np.integer):
                raise ValueError("neurons: expected a non-empty list of neuron indices (integers)")
            bad = idx[(idx < 0) | (idx >= self.n_neurons)]
            if len(bad):
                raise ValueError("neurons: neuron index %d is outside 0..%d" % (bad[0], self.n_neurons - 1))
            out = np.unique(idx)
            if len(out) != len(idx):
                raise ValueError("neurons: an index is listed twice")
            return out.astype(np.int32)
        if ids is not None:
            ids = list(ids)
            if not ids:
                raise ValueError("ids: empty selection (an empty list of ids)")
            out = np.array(sorted(self.index_of(i) for i in ids), dtype=np.int32)
            if len(np.unique(out)) != len(out):
                raise ValueError("ids: an id is listed twice")
            return out
        if not isinstance(select, dict) or not select:
            raise ValueError("select: empty selection (no metadata column given)")
        mask = np.ones(self.n_neurons, dtype=bool)
        for col, values in select.items():
            if col not in self.columns:
                raise ValueError("select.%s: unknown metadata column (the connectome has %s)"
                                 % (col, ", ".join(self.columns) or "none"))
            values = [values] if isinstance(values, str) else list(values)
            if not values:
                raise ValueError("select.%s: empty selection (an empty list of values)" % col)
            wanted = set(values)
            mask &= np.fromiter((v in wanted for v in self.columns[col]), dtype=bool, count=self.n_neurons)
        out = np.flatnonzero(mask).astype(np.int32)
        if len(out) == 0:
            raise ValueError("select: empty selection: no neuron matches this metadata query %r" % (select,))
        return out


class SimulationResult:
    """Spikes as events ordered by (trial, step, neuron): event_trials,
    event_steps, event_neurons (int32), times_ms; counts [trials, neurons];
    rates_hz [trials, neurons]; final_v, final_g [trials, neurons] (float64
    volts for shiu2024, float32 mV for phase4c); backend and threads that ran."""

    def __init__(self, raw, dt_ms, duration_ms):
        self.event_trials = raw["event_trials"]
        self.event_steps = raw["event_steps"]
        self.event_neurons = raw["event_neurons"]
        self.counts = raw["counts"]
        self.final_v = raw["final_v"]
        self.final_g = raw["final_g"]
        self.n_steps = raw["n_steps"]
        self.backend = raw["backend"]
        self.threads = raw["threads"]
        self.dt_ms = dt_ms
        self.duration_ms = duration_ms

    @property
    def times_ms(self):
        return self.event_steps.astype(np.float64) * self.dt_ms

    @property
    def rates_hz(self):
        return self.counts / (self.duration_ms / 1000.0)

    @property
    def n_spikes(self):
        return len(self.event_neurons)

    def __repr__(self):
        return "SimulationResult(%d trials, %d spikes, backend=%s)" % (self.counts.shape[0], self.n_spikes, self.backend)


def _population(connectome, spec, kind):
    """(indices, entry) from a stimulus or silence entry: an array of indices,
    or a dict with a selector (neurons / ids / select) plus rate_hz etc."""
    if isinstance(spec, dict):
        sel = {k: spec[k] for k in ("neurons", "ids", "select") if k in spec}
        extra = set(spec) - {"neurons", "ids", "select", "name", "rate_hz", "start_ms", "stop_ms"}
        if extra:
            raise ValueError("%s: unknown key(s) %s" % (kind, ", ".join(sorted(extra))))
        return connectome.select(**sel), spec
    return connectome.select(neurons=spec), {}


def simulate(connectome, preset="shiu2024", stimulus=(), silence=(), trials=1, duration_ms=1000.0, seed=0,
             backend="auto", threads=0, params=None):
    """Run `trials` trials of `duration_ms` on a connectome.

    stimulus: list of Poisson populations, each a dict with one selector
    (neurons=, ids= or select=) and rate_hz (start_ms, stop_ms optional).
    silence: list of populations (dicts with a selector, or index lists) whose
    outgoing synapses carry nothing. params: model parameter overrides
    ({name: number}, see preset_params). Returns a SimulationResult.
    """
    if not isinstance(connectome, Connectome):
        raise TypeError("connectome must be a brainlesslab.Connectome (Connectome.load(path))")
    stim = []
    for i, s in enumerate(stimulus):
        idx, entry = _population(connectome, s, "stimulus[%d]" % i)
        if "rate_hz" not in entry:
            raise ValueError("stimulus[%d]: rate_hz is required" % i)
        stim.append((idx, float(entry["rate_hz"]), float(entry.get("start_ms", 0.0)),
                     float(entry.get("stop_ms", -1.0))))
    sil = [_population(connectome, s, "silence[%d]" % i)[0] for i, s in enumerate(silence)]
    silenced = np.unique(np.concatenate(sil)).astype(np.int32) if sil else np.zeros(0, dtype=np.int32)
    raw = _core.simulate(connectome._raw["handle"], preset, dict(params or {}), stim, silenced, int(trials),
                         float(duration_ms), int(seed), backend, int(threads))
    dt = (params or {}).get("dt_ms", _core.preset_params(preset)["dt_ms"])
    return SimulationResult(raw, float(dt), float(duration_ms))


def preset_params(name="shiu2024"):
    """The parameters of a model preset, {name: value}."""
    return _core.preset_params(name)
