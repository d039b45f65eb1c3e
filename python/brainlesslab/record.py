"""Records: lazy, read-only access to every artifact of a sealed record.

A record is a directory written once by `brainlesslab run` (or by
`run_plan`, or by the figure writer): manifest.json lists every artifact with
its size and SHA-256. `Record` reads nothing until asked, caches what it read,
and never writes: a sealed record is never modified.
"""

import csv
import hashlib
import json
import os
import re

import numpy as np

__all__ = ["Record", "Spikes", "Verification"]

_TRIAL_FILE = re.compile(r"^spikes/trial-(\d+)\.h5$")


class Spikes:
    """The spikes of one SONATA population: times in ms, node ids (neuron
    indices), trial of each spike (None when the file has no trial dataset)."""

    def __init__(self, population, timestamps_ms, node_ids, trials, sorting):
        self.population = population
        self.timestamps_ms = timestamps_ms
        self.node_ids = node_ids
        self.trials = trials
        self.sorting = sorting

    def __len__(self):
        return len(self.timestamps_ms)

    def __repr__(self):
        return "Spikes(population=%r, n=%d, sorting=%r)" % (self.population, len(self), self.sorting)


class Verification:
    """The verdict of the C verifier (bl_record_verify): ok, how many
    artifacts were re-hashed, one line per problem, and the summary message.
    True when the record is intact."""

    def __init__(self, ok, artifacts, problems, message):
        self.ok = bool(ok)
        self.artifacts = artifacts
        self.problems = problems
        self.message = message

    def __bool__(self):
        return self.ok

    def __repr__(self):
        if self.ok:
            return "Verification(ok, %d artifacts)" % self.artifacts
        return "Verification(FAILED: %s)" % self.message


def _sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Record:
    """A record directory. Attributes are read on first use:

    manifest, status, plan, run, artifacts (relative paths), hash (SHA-256 of
    manifest.json, which names every artifact's SHA-256: the record's identity),
    spikes (Spikes, from spikes.h5 via h5py), counts [trials, neurons],
    rates_mean_hz, rates_sd_hz, final_v, final_g, depth (depth_from_stimulus),
    rates (rates.csv as columns), summary, propagation, and any other artifact
    through `load(name)` or `record[name]`.
    """

    def __init__(self, path):
        self.path = os.path.abspath(os.fspath(path))
        if not os.path.isfile(os.path.join(self.path, "manifest.json")):
            raise FileNotFoundError("%s: not a record (no manifest.json)" % self.path)
        self._cache = {}

    def __repr__(self):
        return "Record(%r)" % self.path

    # ---- identity ----
    @property
    def manifest(self):
        if "manifest" not in self._cache:
            with open(os.path.join(self.path, "manifest.json"), "rb") as f:
                raw = f.read()
            # The same refusal as the library's verifier (verify.c): a BOM is
            # not part of a record's manifest.
            if raw.startswith(b"\xef\xbb\xbf"):
                raise ValueError("%s: manifest.json starts with a UTF-8 byte-order mark (BOM); a record's "
                                 "manifest is plain UTF-8 JSON" % self.path)
            self._cache["manifest"] = json.loads(raw.decode("utf-8"))
        return self._cache["manifest"]

    @property
    def name(self):
        return os.path.basename(self.path)

    @property
    def status(self):
        return self.manifest.get("status")

    @property
    def plan(self):
        return self.manifest.get("plan")

    @property
    def run(self):
        return self.manifest.get("run")

    @property
    def hash(self):
        if "hash" not in self._cache:
            self._cache["hash"] = _sha256_file(os.path.join(self.path, "manifest.json"))
        return self._cache["hash"]

    @property
    def artifacts(self):
        return [a["path"] for a in self.manifest.get("artifacts", [])]

    def has(self, name):
        return name in self.artifacts

    def artifact_path(self, name):
        """Absolute path of an artifact listed in the manifest."""
        if name not in self.artifacts:
            raise KeyError("%s: no artifact %r (the manifest lists %s)" % (self.path, name, ", ".join(self.artifacts)))
        return os.path.join(self.path, name)

    # ---- generic loading ----
    def load(self, name):
        """Load an artifact by its relative path: .npy and .npz with NumPy,
        .json as JSON, .csv as {column: list of str}, spikes.h5 as Spikes,
        anything else as bytes. Cached."""
        if name in self._cache:
            return self._cache[name]
        path = self.artifact_path(name)
        if name.endswith(".npy"):
            value = np.load(path, allow_pickle=False)
        elif name.endswith(".npz"):
            with np.load(path, allow_pickle=False) as z:
                value = {k: z[k] for k in z.files}
        elif name.endswith(".json"):
            with open(path, encoding="utf-8") as f:
                value = json.load(f)
        elif name.endswith(".csv"):
            value = _read_csv(path)
        elif name.endswith(".h5"):
            value = _read_spikes(path)
        else:
            with open(path, "rb") as f:
                value = f.read()
        self._cache[name] = value
        return value

    __getitem__ = load

    def _optional(self, name):
        return self.load(name) if self.has(name) else None

    # ---- the connectome run's artifacts ----
    @property
    def spike_files(self):
        """The record's SONATA spike files: spikes.h5, or one file per trial
        (spikes/trial-NNNN.h5), in trial order."""
        if self.has("spikes.h5"):
            return ["spikes.h5"]
        per_trial = [a for a in self.artifacts if _TRIAL_FILE.match(a)]
        return sorted(per_trial, key=lambda a: int(_TRIAL_FILE.match(a).group(1)))

    @property
    def spikes(self):
        """Every spike of the record as one Spikes (trials in order), whether
        it holds spikes.h5 or one file per trial."""
        if "spikes" not in self._cache:
            files = self.spike_files
            if not files:
                raise KeyError("%s: no spikes (no spikes.h5 or spikes/trial-*.h5)" % self.path)
            if files == ["spikes.h5"]:
                self._cache["spikes"] = self.load("spikes.h5")
            else:
                parts = [self.load(f) for f in files]
                trials = [p.trials if p.trials is not None else
                          np.full(len(p), int(_TRIAL_FILE.match(f).group(1)), dtype=np.uint32)
                          for f, p in zip(files, parts)]
                self._cache["spikes"] = Spikes(parts[0].population,
                                               np.concatenate([p.timestamps_ms for p in parts]),
                                               np.concatenate([p.node_ids for p in parts]),
                                               np.concatenate(trials).astype(np.uint32), "none")
        return self._cache["spikes"]

    @property
    def counts(self):
        return self.load("counts.npy")

    @property
    def rates_mean_hz(self):
        return self.load("rates_mean_hz.npy")

    @property
    def rates_sd_hz(self):
        return self.load("rates_sd_hz.npy")

    @property
    def final_v(self):
        return self.load("final_v.npy")

    @property
    def final_g(self):
        return self.load("final_g.npy")

    @property
    def final_w(self):
        """Final per-edge weights [trials, edges] of an equation model with a
        per-edge w (docs/models.md "Synapses")."""
        return self.load("final_w.npy")

    @property
    def depth(self):
        return self.load("depth_from_stimulus.npy")

    @property
    def rates(self):
        return self.load("rates.csv")

    @property
    def summary(self):
        return self.load("summary.json")

    @property
    def propagation(self):
        return self.load("propagation.json")

    # ---- integrity ----
    def verify(self):
        """Re-hash the record with the library's verifier (bl_record_verify,
        the same code as `brainlesslab verify`); returns a Verification."""
        from . import _core

        ok, artifacts, report, message = _core.verify(self.path)
        problems = [line for line in report.splitlines() if line.strip()]
        return Verification(ok, artifacts, problems, message)


def _read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        return {}
    head, body = rows[0], rows[1:]
    return {h: [r[i] if i < len(r) else "" for r in body] for i, h in enumerate(head)}


def _read_spikes(path):
    import h5py

    with h5py.File(path, "r") as f:
        pops = sorted(f["spikes"].keys())
        if len(pops) != 1:
            raise ValueError("%s: expected one spike population, found %s" % (path, pops))
        g = f["spikes"][pops[0]]
        sorting = g.attrs.get("sorting")
        if sorting is not None and not isinstance(sorting, str):
            names = {0: "none", 1: "by_id", 2: "by_time"}
            sorting = names.get(int(sorting), str(sorting))
        ts = np.asarray(g["timestamps"][...], dtype=np.float64)
        ids = np.asarray(g["node_ids"][...], dtype=np.uint64)
        trials = np.asarray(g["trial"][...], dtype=np.uint32) if "trial" in g else None
    return Spikes(pops[0], ts, ids, trials, sorting)
