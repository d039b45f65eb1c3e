"""Helpers shared by the independent oracles (tests/oracles/).

Nothing here imports or calls project code except the `brainlesslab` CLI itself,
which is the thing under test. Contents:

  * Philox4x32-10 (Random123) in vectorised NumPy, and the Bernoulli stream
    contract of docs/streams.md ("Stimulus draws").
  * Connectome directories: write (with manifest, sizes, SHA-256) and read.
  * A seeded synthetic connectome generator (heavy-tailed degrees, inhibitory
    sources).
  * Locating the shipped real connectomes (data/connectomes/...).
  * Running `brainlesslab simulate`, loading its outputs, and comparing results
    spike for spike / bit for bit, with one summary line per comparison.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ORACLE_DIR = Path(__file__).resolve().parent
SOURCE_DIR = Path(os.environ.get("BL_SOURCE_DIR", ORACLE_DIR.parent.parent)).resolve()

# A comparison that sees fewer spikes than this proves nothing and fails.
MIN_SPIKES = 200

# --------------------------------------------------------------------------------------
# Philox4x32-10, Random123 standard.
# --------------------------------------------------------------------------------------
PHILOX_M0 = np.uint64(0xD2511F53)
PHILOX_M1 = np.uint64(0xCD9E8D57)
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85
_MASK32 = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)


def philox4x32_10(c0, c1, c2, c3, k0, k1, rounds=10):
    """Philox4x32 on broadcastable arrays of 32-bit counter words and a scalar key.

    One round (Random123 _philox4x32round):
        lo0,hi0 = M0*c0 (32x32->64), lo1,hi1 = M1*c2
        out = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0)
    and the key is bumped by the Weyl constants before every round but the first.
    The 32x32->64 products are exact in uint64. Returns four uint32 arrays."""
    c0, c1, c2, c3 = (np.asarray(x, dtype=np.uint64) & _MASK32 for x in (c0, c1, c2, c3))
    c0, c1, c2, c3 = np.broadcast_arrays(c0, c1, c2, c3)
    k0 = int(k0) & 0xFFFFFFFF
    k1 = int(k1) & 0xFFFFFFFF
    for r in range(rounds):
        if r:
            k0 = (k0 + PHILOX_W0) & 0xFFFFFFFF
            k1 = (k1 + PHILOX_W1) & 0xFFFFFFFF
        p0 = PHILOX_M0 * c0
        p1 = PHILOX_M1 * c2
        hi0, lo0 = p0 >> _SHIFT32, p0 & _MASK32
        hi1, lo1 = p1 >> _SHIFT32, p1 & _MASK32
        c0, c1, c2, c3 = hi1 ^ c1 ^ np.uint64(k0), lo1, hi0 ^ c3 ^ np.uint64(k1), lo0
    return tuple(x.astype(np.uint32) for x in (c0, c1, c2, c3))


# Random123 known-answer vectors (kat_vectors, philox4x32 10 rounds).
PHILOX_KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def philox_selfcheck():
    """Assert the Random123 known answers, scalar and vectorised (raises on failure)."""
    ctr = np.array([c for c, _, _ in PHILOX_KAT], dtype=np.uint64)
    for i, (c, k, want) in enumerate(PHILOX_KAT):
        got = tuple(int(x) for x in philox4x32_10(*c, *k))
        if got != want:
            raise AssertionError(f"philox KAT {i}: got {[hex(x) for x in got]} want {[hex(x) for x in want]}")
        # Same key, the counter embedded in a vector of other counters.
        out = philox4x32_10(ctr[:, 0], ctr[:, 1], ctr[:, 2], ctr[:, 3], *k)
        if tuple(int(o[i]) for o in out) != want:
            raise AssertionError(f"philox KAT {i}: vectorised evaluation differs")
    return True


def bernoulli_threshold(rate_hz, dt_ms=0.1):
    """Contract: p = rate_hz * (dt_ms / 1000.0) in double; threshold = 2**32 if p >= 1
    else floor(p * 2**32); an event fires iff out[0] < threshold (integers)."""
    p = float(rate_hz) * (float(dt_ms) / 1000.0)
    if p >= 1.0:
        return 1 << 32
    return int(math.floor(p * 4294967296.0))


def llround(x):
    """C llround: nearest integer, halves away from zero (x - floor(x) is exact, so no
    double rounding as in floor(x + 0.5))."""
    a = abs(float(x))
    r = math.floor(a)
    if a - r >= 0.5:
        r += 1
    return int(r) if x >= 0 else -int(r)


class PoissonPop:
    """One --poisson population: RATE_HZ:INDICES.npy[:START_MS:STOP_MS]."""

    def __init__(self, rate_hz, indices, start_ms=None, stop_ms=None):
        self.rate_hz = float(rate_hz)
        self.indices = np.asarray(indices, dtype=np.int32)
        self.start_ms = start_ms
        self.stop_ms = stop_ms

    def window(self, n_steps, dt_ms=0.1):
        a = 0 if self.start_ms is None else llround(self.start_ms / dt_ms)
        b = n_steps if self.stop_ms is None else llround(self.stop_ms / dt_ms)
        return max(a, 0), min(b, n_steps)

    def flag(self, path):
        s = f"{self.rate_hz:g}:{path}"
        if self.start_ms is not None:
            s += f":{self.start_ms:g}:{self.stop_ms:g}"
        return s


def poisson_events(pops, n_steps, seed, trial, dt_ms=0.1):
    """All Bernoulli events of one trial, as int64 arrays (step, neuron, population),
    ordered by (step, population, position in the population's index list).
    Counter = (step, neuron, population, trial); key = (seed lo, seed hi)."""
    seed = int(seed)
    k0, k1 = seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF
    steps, neurons, popk, order = [], [], [], []
    for k, pop in enumerate(pops):
        a, b = pop.window(n_steps, dt_ms)
        thr = bernoulli_threshold(pop.rate_hz, dt_ms)
        if b <= a or len(pop.indices) == 0 or thr == 0:
            continue
        s = np.arange(a, b, dtype=np.uint64)[:, None]
        nrn = pop.indices.astype(np.uint64)[None, :]
        out0 = philox4x32_10(s, nrn, k, trial, k0, k1)[0]
        fire = out0.astype(np.uint64) < np.uint64(thr) if thr < (1 << 32) else np.ones(out0.shape, bool)
        si, ji = np.nonzero(fire)
        steps.append(si.astype(np.int64) + a)
        neurons.append(pop.indices[ji].astype(np.int64))
        popk.append(np.full(len(si), k, dtype=np.int64))
        order.append(ji.astype(np.int64))
    if not steps:
        e = np.empty(0, np.int64)
        return e, e, e
    st, nr, pk, od = (np.concatenate(x) for x in (steps, neurons, popk, order))
    idx = np.lexsort((od, pk, st))
    return st[idx], nr[idx], pk[idx]


# --------------------------------------------------------------------------------------
# Connectome directories
# --------------------------------------------------------------------------------------
class Graph:
    def __init__(self, offsets, targets, counts, name="graph", external_ids=None):
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        self.targets = np.ascontiguousarray(targets, dtype=np.int32)
        self.counts = np.ascontiguousarray(counts, dtype=np.int32)
        self.name = name
        self.n = len(self.offsets) - 1
        self.e = len(self.targets)
        self.external_ids = external_ids
        self.check()

    def check(self):
        o, t, c = self.offsets, self.targets, self.counts
        assert o[0] == 0 and o[-1] == len(t) == len(c) and np.all(np.diff(o) >= 0)
        assert np.all(c != 0) and (len(t) == 0 or (t.min() >= 0 and t.max() < self.n))
        rows = self.sources()
        if len(t) > 1:  # ascending and unique within each row
            same = rows[1:] == rows[:-1]
            assert np.all(t[1:][same] > t[:-1][same]), "targets not ascending/unique per row"
        # one sign per presynaptic neuron
        pos = np.zeros(self.n, bool)
        neg = np.zeros(self.n, bool)
        pos[rows[c > 0]] = True
        neg[rows[c < 0]] = True
        assert not np.any(pos & neg), "mixed signs in a row"

    def sources(self):
        return np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.offsets))

    def out_strength(self):
        """Signed sum of counts per source."""
        return np.bincount(self.sources(), weights=self.counts.astype(np.float64), minlength=self.n)


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_connectome(graph, path, synthetic=True, description=None):
    """Write a brainlesslab-connectome directory (format_version 1)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=False)
    np.save(path / "offsets.npy", graph.offsets, allow_pickle=False)
    np.save(path / "targets.npy", graph.targets, allow_pickle=False)
    np.save(path / "counts.npy", graph.counts, allow_pickle=False)
    ids = graph.external_ids if graph.external_ids is not None else [f"n{i}" for i in range(graph.n)]
    with open(path / "neurons.csv", "w", encoding="utf-8", newline="\n") as f:
        f.write("index,external_id\n")
        for i, x in enumerate(ids):
            f.write(f"{i},{x}\n")
    files = {}
    for name in ("offsets.npy", "targets.npy", "counts.npy", "neurons.csv"):
        files[name] = {"bytes": (path / name).stat().st_size, "sha256": _sha256(path / name)}
    manifest = {
        "format": "brainlesslab-connectome",
        "format_version": 1,
        "name": graph.name,
        "synthetic": bool(synthetic),
        "n_neurons": int(graph.n),
        "n_edges": int(graph.e),
        "n_synapses": int(np.abs(graph.counts.astype(np.int64)).sum()),
        "generator": "tests/oracles/blconn.py",
        "files": files,
    }
    if description:
        manifest["description"] = description
    with open(path / "manifest.json", "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    return path


def read_connectome(path, name=None):
    path = Path(path)
    offsets = np.load(path / "offsets.npy", allow_pickle=False)
    targets = np.load(path / "targets.npy", allow_pickle=False)
    counts = np.load(path / "counts.npy", allow_pickle=False)
    assert offsets.dtype == np.int64 and targets.dtype == np.int32 and counts.dtype == np.int32
    return Graph(offsets, targets, counts, name=name or path.name)


def graph_from_edges(n, pre, post, counts, name):
    """CSR from an edge list (pre, post, signed count); sorted by (pre, post)."""
    pre = np.asarray(pre, np.int64)
    post = np.asarray(post, np.int64)
    counts = np.asarray(counts, np.int64)
    order = np.lexsort((post, pre))
    pre, post, counts = pre[order], post[order], counts[order]
    key = pre * n + post
    assert len(key) == 0 or np.all(np.diff(key) > 0), "duplicate edges"
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(pre, minlength=n), out=offsets[1:])
    return Graph(offsets, post.astype(np.int32), counts.astype(np.int32), name=name)


def synthetic_graph(n=3000, seed=20240611, mean_degree=30.0, frac_inhibitory=0.2, name="synthetic"):
    """Seeded heavy-tailed random connectome.

    Out-degrees: lognormal (sigma 1.1) around mean_degree, a few hubs, some zeros.
    Targets: drawn without replacement with Pareto-distributed popularity (heavy-tailed
    in-degrees); self-loops allowed (a connectome may have autapses).
    Counts: 1 + geometric-ish heavy tail (Zipf 2.2), capped at 500; sign of the source:
    20 % inhibitory."""
    rng = np.random.default_rng(seed)
    deg = rng.lognormal(mean=math.log(mean_degree) - 0.6, sigma=1.1, size=n)
    deg = np.minimum(np.floor(deg).astype(np.int64), n // 2)
    deg[rng.random(n) < 0.03] = 0
    pop = rng.pareto(1.5, size=n) + 1.0
    pop /= pop.sum()
    inhib = rng.random(n) < frac_inhibitory
    pre, post, cnt = [], [], []
    for i in range(n):
        d = int(deg[i])
        if d == 0:
            continue
        t = np.sort(rng.choice(n, size=d, replace=False, p=pop))
        c = np.minimum(rng.zipf(2.2, size=d), 500)
        pre.append(np.full(d, i))
        post.append(t)
        cnt.append(-c if inhib[i] else c)
    return graph_from_edges(n, np.concatenate(pre), np.concatenate(post), np.concatenate(cnt), name)


SHIPPED = {
    "celegans": "celegans-varshney2011",
    "larva": "larva-winding2023",
}
# Sizes of the shipped sets, used for stand-ins while they are not in the tree yet.
SHIPPED_SIZE = {"celegans": (280, 2194), "larva": (2952, 110677)}


def shipped_connectome(key):
    """(Graph, dir, is_standin). The real directory when it exists under
    data/connectomes/; else a seeded synthetic stand-in of the same size (fails when
    BL_ORACLE_REQUIRE_SHIPPED=1)."""
    d = SOURCE_DIR / "data" / "connectomes" / SHIPPED[key]
    if (d / "manifest.json").is_file():
        return read_connectome(d, name=key), d, False
    if os.environ.get("BL_ORACLE_REQUIRE_SHIPPED") == "1":
        raise FileNotFoundError(f"shipped connectome missing: {d}")
    n, e = SHIPPED_SIZE[key]
    g = synthetic_graph(n=n, seed=1000 + n, mean_degree=e / n, name=f"{key}-standin")
    print(f"NOTE: {d} absent; using a synthetic stand-in with {g.n} neurons, {g.e} edges")
    return g, None, True


def top_drivers(graph, k, exclude=(), offset=0):
    """k neurons with the largest positive (excitatory) out-strength, ascending index."""
    s = graph.out_strength()
    s[list(exclude)] = -np.inf
    order = np.argsort(-s, kind="stable")
    return np.sort(order[offset:offset + k]).astype(np.int32)


# --------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------
def cli_path():
    p = os.environ.get("BL_CLI")
    if not p:
        for cand in ("build-oracle", "build"):
            c = SOURCE_DIR / cand / "brainlesslab"
            if c.is_file():
                return str(c)
        raise RuntimeError("BL_CLI is not set and no build/brainlesslab was found")
    return p


class TempDir:
    def __init__(self, prefix="bl-oracle-"):
        self.path = Path(tempfile.mkdtemp(prefix=prefix))

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        if os.environ.get("BL_ORACLE_KEEP") != "1":
            shutil.rmtree(self.path, ignore_errors=True)
        else:
            print(f"kept {self.path}")


def save_indices(path, idx):
    np.save(path, np.ascontiguousarray(idx, dtype=np.int32), allow_pickle=False)
    return str(path)


def duration_str(n_steps, dt_ms=0.1):
    """An exact decimal duration for n_steps of 0.1 ms ("333.7")."""
    assert dt_ms == 0.1
    return f"{n_steps // 10}.{n_steps % 10}"


def run_simulate(conn_dir, preset, n_steps, outdir, trials=1, seed=0, pops=(), schedule=None,
                 poisson_targets=None, silence=None, workdir=None, extra=(), timeout=900):
    """Run `brainlesslab simulate` for n_steps steps of 0.1 ms; returns (outputs dict,
    wall seconds). Raises on failure."""
    workdir = Path(workdir or Path(outdir).parent)
    args = [cli_path(), "simulate", "--connectome", str(conn_dir), "--preset", preset,
            "--duration-ms", duration_str(n_steps), "--out", str(outdir),
            "--trials", str(trials), "--seed", str(int(seed))]
    for k, pop in enumerate(pops):
        p = save_indices(workdir / f"pop{k}.npy", pop.indices)
        args += ["--poisson", pop.flag(p)]
    if schedule is not None:
        p = workdir / "schedule.npy"
        np.save(p, np.ascontiguousarray(schedule, dtype=np.int32).reshape(-1, 2), allow_pickle=False)
        args += ["--schedule", str(p)]
    if poisson_targets is not None:
        args += ["--poisson-targets", save_indices(workdir / "poisson_targets.npy", poisson_targets)]
    if silence is not None:
        args += ["--silence", save_indices(workdir / "silence.npy", silence)]
    args += list(extra)
    t0 = time.perf_counter()
    r = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"brainlesslab simulate failed (rc {r.returncode}):\n  {' '.join(args)}\n"
                           f"stdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-4000:]}")
    return load_outputs(outdir), wall


def load_outputs(outdir):
    outdir = Path(outdir)
    out = {}
    for name in ("spikes_trial", "spikes_step", "spikes_neuron", "counts", "v", "g"):
        out[name] = np.load(outdir / f"{name}.npy", allow_pickle=False)
    return out


# --------------------------------------------------------------------------------------
# Results and comparison
# --------------------------------------------------------------------------------------
def make_result(trial, step, neuron, counts, v, g):
    """Bundle oracle output in the CLI's layout (events sorted by (trial, step, neuron))."""
    trial = np.asarray(trial, np.int64)
    step = np.asarray(step, np.int64)
    neuron = np.asarray(neuron, np.int64)
    o = np.lexsort((neuron, step, trial))
    return {"spikes_trial": trial[o].astype(np.int32), "spikes_step": step[o].astype(np.int32),
            "spikes_neuron": neuron[o].astype(np.int32), "counts": np.asarray(counts, np.int32),
            "v": np.asarray(v), "g": np.asarray(g)}


def truncate(res, k):
    """The oracle result of a run of only k steps: events of steps < k, their counts,
    and the state snapshot after k steps."""
    keep = res["spikes_step"] < k
    T, N = res["counts"].shape
    counts = np.zeros((T, N), np.int64)
    np.add.at(counts, (res["spikes_trial"][keep].astype(np.int64), res["spikes_neuron"][keep].astype(np.int64)), 1)
    v, g = res["snapshots"][k]
    return make_result(res["spikes_trial"][keep], res["spikes_step"][keep], res["spikes_neuron"][keep],
                       counts, v, g)


def compare_checkpoints(label, ref, checkpoints, n_trials, run_fn, state_bitwise=True):
    """For each k in checkpoints: run_fn(k) runs the CLI for k steps; its output must equal
    the oracle's first k steps and its state after k steps (a shorter run is a prefix of
    the longer one). Compares the intermediate state that a single final state hides."""
    ok = True
    for k in checkpoints:
        try:
            got = run_fn(k)
        except Exception as e:  # noqa: BLE001
            print(f"oracle {label} @{k} steps: CLI run failed -> FAIL\n    {e}")
            ok = False
            continue
        ok &= compare(f"{label} @{k} steps", truncate(ref, k), got, n_trials, state_bitwise=state_bitwise,
                      min_spikes=0)
    return ok


def _ulp_diff(a, b):
    """Max distance in units in the last place (same dtype, finite)."""
    if a.dtype == np.float64:
        ia, ib = a.view(np.int64).astype(object), b.view(np.int64).astype(object)
        ia = np.array([x if x >= 0 else -(x & 0x7FFFFFFFFFFFFFFF) for x in ia.ravel()], dtype=object)
        ib = np.array([x if x >= 0 else -(x & 0x7FFFFFFFFFFFFFFF) for x in ib.ravel()], dtype=object)
    else:
        ia, ib = a.view(np.int32).astype(np.int64).ravel(), b.view(np.int32).astype(np.int64).ravel()
        ia = np.where(ia >= 0, ia, -(ia & 0x7FFFFFFF))
        ib = np.where(ib >= 0, ib, -(ib & 0x7FFFFFFF))
    d = np.abs(ia - ib)
    return int(max(d)) if len(d) else 0


def first_event_difference(ref, got):
    """(index, ref (t,s,n) or None, got (t,s,n) or None) of the first differing event."""
    r = np.stack([ref["spikes_trial"], ref["spikes_step"], ref["spikes_neuron"]], 1).astype(np.int64)
    c = np.stack([got["spikes_trial"], got["spikes_step"], got["spikes_neuron"]], 1).astype(np.int64)
    m = min(len(r), len(c))
    neq = np.nonzero(np.any(r[:m] != c[:m], axis=1))[0]
    i = int(neq[0]) if len(neq) else m
    rr = tuple(int(x) for x in r[i]) if i < len(r) else None
    cc = tuple(int(x) for x in c[i]) if i < len(c) else None
    return i, rr, cc


def compare(label, ref, got, n_trials, state_bitwise=True, min_spikes=MIN_SPIKES,
            stimulated=None, min_recurrent=0):
    """Compare oracle `ref` with CLI output `got`. Prints one summary line; returns True
    when identical (events, counts, final v,g bitwise unless state_bitwise is False, in
    which case the max ulp distance is reported) and enough spikes were compared."""
    ok = True
    problems = []
    n_ref = len(ref["spikes_neuron"])
    for key in ("spikes_trial", "spikes_step", "spikes_neuron", "counts"):
        if got[key].dtype != np.int32:
            problems.append(f"{key} dtype {got[key].dtype} (want int32)")
            ok = False
    events_equal = all(np.array_equal(ref[k].astype(np.int64), got[k].astype(np.int64))
                       for k in ("spikes_trial", "spikes_step", "spikes_neuron"))
    if not events_equal:
        ok = False
        i, rr, cc = first_event_difference(ref, got)
        problems.append(f"events differ: oracle {n_ref} vs CLI {len(got['spikes_neuron'])}; first difference at "
                        f"event #{i}: oracle (trial,step,neuron)={rr}, CLI={cc}")
    if got["counts"].shape != ref["counts"].shape or not np.array_equal(ref["counts"], got["counts"]):
        ok = False
        problems.append(f"counts differ (shape oracle {ref['counts'].shape}, CLI {got['counts'].shape})")
    # counts must agree with the event list on both sides
    for side, res in (("oracle", ref), ("CLI", got)):
        T, N = res["counts"].shape
        cc = np.zeros((T, N), np.int64)
        if len(res["spikes_neuron"]):
            np.add.at(cc, (res["spikes_trial"].astype(np.int64), res["spikes_neuron"].astype(np.int64)), 1)
        if not np.array_equal(cc, res["counts"]):
            ok = False
            problems.append(f"{side}: counts.npy disagrees with its own event list")
    state = []
    for key in ("v", "g"):
        a, b = ref[key], got[key]
        if a.dtype != b.dtype or a.shape != b.shape:
            ok = False
            problems.append(f"final {key}: dtype/shape oracle {a.dtype}{a.shape} vs CLI {b.dtype}{b.shape}")
            continue
        uint = np.uint64 if a.dtype == np.float64 else np.uint32
        same = np.array_equal(a.view(uint), b.view(uint))
        if same:
            state.append(key)
        else:
            ulp = _ulp_diff(a, b)
            nd = int(np.count_nonzero(a.view(uint) != b.view(uint)))
            first = np.argwhere(a.view(uint) != b.view(uint))[0]
            msg = (f"final {key} not bit-identical: {nd} values differ, max {ulp} ulp, max abs "
                   f"{float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))):.3g}, first at "
                   f"(trial,neuron)={tuple(int(x) for x in first)}: oracle {a[tuple(first)]!r} CLI {b[tuple(first)]!r}")
            if state_bitwise:
                ok = False
                problems.append(msg)
            else:
                problems.append("(informational) " + msg)
    if n_ref < min_spikes:
        ok = False
        problems.append(f"only {n_ref} oracle spikes: below the minimum of {min_spikes}, nothing proven")
    rec = n_ref
    if stimulated is not None:
        rec = int(np.count_nonzero(~np.isin(ref["spikes_neuron"], np.asarray(stimulated))))
        if rec < min_recurrent:
            ok = False
            problems.append(f"only {rec} spikes of unstimulated neurons (< {min_recurrent}): recurrence untested")
    verdict = "identical events" if events_equal else "DIFFERENT events"
    st = "identical final " + ",".join(state) if state else "final state differs"
    if len(state) == 1:
        st = f"identical final {state[0]} only"
    extra = f" ({rec} of unstimulated neurons)" if stimulated is not None else ""
    print(f"oracle {label}: {n_ref} spikes{extra} compared over {n_trials} trial{'s' if n_trials != 1 else ''}, "
          f"{verdict}, {st}{'' if ok else '  -> FAIL'}")
    for p in problems:
        print(f"    {p}")
    sys.stdout.flush()
    return ok


def compare_oracles(label, a, b, n_trials, min_spikes=MIN_SPIKES):
    """Oracle-vs-oracle (e.g. NumPy loop vs Brian2); same report as compare()."""
    return compare(label, a, b, n_trials, state_bitwise=True, min_spikes=min_spikes)


def finish(ok_list, t0):
    ok = all(ok_list)
    print(f"{'PASS' if ok else 'FAIL'}: {sum(ok_list)}/{len(ok_list)} comparisons passed in "
          f"{time.perf_counter() - t0:.1f} s")
    return 0 if ok else 1
