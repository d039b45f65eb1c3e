"""Connectomes and simulation from Python.

`Connectome.load(path)` loads and fully validates a connectome directory with
the library (bl_connectome_load); the CSR arrays are read-only views of the
library's memory. `select(...)` resolves a population with the library's
selector (bl_select_json, include/brainlesslab/select.h), the language of a
plan's [[population]] tables, on the connectome already loaded.

`simulate(...)` builds a network and runs it on a backend; its arrays are
views of the library's result (no copies).
"""

import json
import os

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

    def select(self, neurons=None, ids=None, select=None, seed=None, **criteria):
        """Sorted int32 neuron indices of one population, resolved by the
        library (bl_select) exactly as a plan's [[population]] is:
        neurons=[indices], ids=[external ids], select={column: value, glob
        ("PN*"), list, {"not": ...} or {"min":, "max":}}, from_=, depth=,
        union=, intersect=, exclude=, sample= (with seed=), expect_count=
        (see docs/python.md). Column criteria may also be given as keywords:
        select(cell_type="PN"). from_ takes the neurons to measure depth from:
        indices (e.g. an earlier select's result) or a dict of criteria."""
        given = {k: v for k, v in (("neurons", neurons), ("ids", ids), ("select", select)) if v is not None}
        given.update(criteria)
        spec = _keyword_spec(given)
        return self.select_many({"selection": spec}, seed=seed)["selection"]

    def select_many(self, populations, seed=None):
        """{name: int32 indices} for several populations ({name: {criteria}}),
        resolved in order on this connectome (loaded once): a population may
        refer to those before it by name (population="NAME", from="NAME",
        union=[...], intersect=[...], exclude=[...]), as a plan's
        [[population]] tables do. A sample draws from `seed` with the
        population's position as its stream, so a plan listing the same
        populations in the same order with the same seed draws the same
        neurons. Errors raise bl.Error naming the population and the key."""
        if not isinstance(populations, dict):
            raise TypeError("populations: expected a dict {name: {criteria}}")
        resolved = {}
        for stream, (name, spec) in enumerate(populations.items()):
            if not isinstance(spec, dict):
                raise TypeError("population %r: expected a dict of criteria" % name)
            spec = {("from" if k == "from_" else k): v for k, v in spec.items()}
            named = dict(resolved)
            src = spec.get("from")
            if src is not None and not isinstance(src, str):
                # Depth from given neurons: an anonymous population ahead of this one.
                src_spec = _keyword_spec(src) if isinstance(src, dict) else {"neurons": src}
                named["%s.from" % name] = self._select_one("%s.from" % name, src_spec, named, seed, stream)
                spec["from"] = "%s.from" % name
            resolved[name] = self._select_one(str(name), spec, named, seed, stream)
        return resolved

    def _select_one(self, name, spec, named, seed, stream):
        text = json.dumps(_jsonable(spec, name))
        return _core.select(self._raw["handle"], name, text, named, None if seed is None else int(seed), stream)


_SELECTOR_KEYS = {"from_", "from", "depth", "union", "intersect", "exclude", "sample", "expect_count", "population"}


def _keyword_spec(criteria):
    """Criteria as select() takes them (columns may be keys of their own)."""
    basic = {"neurons", "ids", "select"} | _SELECTOR_KEYS
    spec = {k: v for k, v in criteria.items() if k in basic}
    columns = {k: v for k, v in criteria.items() if k not in basic}
    if columns:
        if "select" in spec:
            raise ValueError("give the metadata query either as select={...} or as keywords, not both")
        spec["select"] = columns
    return spec


def _jsonable(value, where):
    """A selector's Python value as JSON the library reads: NumPy scalars and
    arrays as numbers and lists; integers beyond 2^53 (FlyWire root ids) as
    their decimal text, since a JSON number is a double."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value) if abs(int(value)) <= 2**53 else str(int(value))
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v, where) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_jsonable(v, where) for v in (value.ravel().tolist() if isinstance(value, np.ndarray) else value)]
    raise TypeError("population %r: cannot put %r (%s) in a selector" % (where, value, type(value).__name__))


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


_POP_KEYS = {"neurons", "ids", "select", "population", "from", "from_", "depth", "union", "intersect", "exclude",
             "sample", "expect_count"}


def _indices(values, what):
    """Neuron indices as Python ints: integers only. A float (1.7) is no
    neuron index, and int() would truncate it silently (issue 26)."""
    a = np.asarray(values)
    if a.size and a.dtype.kind not in "iu":
        raise TypeError("%s must be integer neuron indices, not %s values" % (what, a.dtype))
    return [int(i) for i in a.ravel()]


def _criteria(spec, kind):
    """(criteria for the library, the entry) of a stimulus or silence entry:
    a dict with selector criteria (plus rate_hz, start_ms, stop_ms, name), or
    a plain list / array of neuron indices."""
    if isinstance(spec, dict):
        extra = set(spec) - _POP_KEYS - {"name", "rate_hz", "start_ms", "stop_ms"}
        if extra:
            raise ValueError("%s: unknown key(s) %s" % (kind, ", ".join(sorted(extra))))
        crit = {("from" if k == "from_" else k): v for k, v in spec.items() if k in _POP_KEYS}
        if "neurons" in crit:
            crit["neurons"] = _indices(crit["neurons"], "%s: neurons" % kind)
        if "ids" in crit:
            crit["ids"] = [str(i) for i in crit["ids"]]
        return crit, spec
    return {"neurons": _indices(spec, kind)}, {}


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
    wanted, entries = {}, []
    for kind, group in (("stimulus", stimulus), ("silence", silence)):
        for i, spec in enumerate(group):
            crit, entry = _criteria(spec, "%s[%d]" % (kind, i))
            if kind == "stimulus" and "rate_hz" not in entry:
                raise ValueError("stimulus[%d]: rate_hz is required" % i)
            wanted["%s-%d" % (kind, i)] = crit
            entries.append((kind, i, entry))
    resolved = connectome.select_many(wanted) if wanted else {}
    stim = [(resolved["stimulus-%d" % i], float(e["rate_hz"]), float(e.get("start_ms", 0.0)),
             float(e.get("stop_ms", -1.0))) for kind, i, e in entries if kind == "stimulus"]
    sil = [resolved["silence-%d" % i] for kind, i, e in entries if kind == "silence"]
    silenced = np.unique(np.concatenate(sil)).astype(np.int32) if sil else np.zeros(0, dtype=np.int32)
    # trials and seed go as given: the library refuses a float or a value out
    # of range instead of truncating it (int(2**64 + 7) would run seed 7).
    raw = _core.simulate(connectome._raw["handle"], preset, dict(params or {}), stim, silenced, trials,
                         float(duration_ms), seed, backend, int(threads))
    dt = (params or {}).get("dt_ms", _core.preset_params(preset)["dt_ms"])
    return SimulationResult(raw, float(dt), float(duration_ms))


def preset_params(name="shiu2024"):
    """The parameters of a model preset, {name: value}."""
    return _core.preset_params(name)
