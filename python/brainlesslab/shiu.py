"""The workflow of Shiu et al. (2024, github.com/philshiu/Drosophila_brain_model),
on this engine: `run_exp`, `load_exps`, `get_rate` with the upstream names,
arguments and output.

    from brainlesslab.shiu import run_exp, load_exps, get_rate, default_params
    run_exp('sugar', [720575940624963786, 720575940630233916], 'results',
            'Completeness_783.csv', 'Connectivity_783.parquet')
    df = load_exps(['results/sugar.parquet'])
    rate, std = get_rate(df, duration=1.0)

What each piece means, as upstream:
- One Parquet file per experiment, PATH_RES/EXP_NAME.parquet, one row per
  spike: t (float64, seconds from the trial's start), trial (int64, 0..n_run-1),
  flywire_id (int64), exp_name (string); rows ordered by trial, then neuron
  (completeness-file order), then time. Neurons that never spike have no row.
- neu_exc: FlyWire ids driven by independent Poisson input at params['r_poi'];
  neu_exc2 by a second class at params['r_poi2']; every driven neuron has no
  refractory period (both classes, whatever the rate). The input weight is
  f_poi * w_syn.
- neu_slnc: FlyWire ids whose outgoing synapses carry nothing (they still fire).
- params['n_run'] trials of params['t_run'] each.
- params may hold Brian2 quantities (1000*ms, -52*mV, 150*Hz) or plain numbers
  in SI units (seconds, volts, hertz), as float(quantity) gives them. The
  equation strings (eqs, eq_th, eq_rst) are the preset's and are not parsed.

What differs, on purpose: the Poisson input comes from counter-based Philox
streams named by (trial, population, neuron, step), so a run is exactly
reproducible from `seed` (default 20241002, the same for every experiment,
so experiments that differ only by silencing share their input draws);
`n_proc` maps to engine threads; results are bit-identical whatever it is.

path_con may be a BrainlessLab connectome directory (from
`brainlesslab import flywire --neurons COMPLETENESS --connectivity CONNECTIVITY
--out DIR`); given the upstream files instead, run_exp imports them once into
PATH_RES/.brainlesslab/connectome-<hash> with that command and reuses it.
"""

import hashlib
import os
import shutil
import subprocess

import numpy as np

from . import _core
from .connectome import Connectome, simulate

__all__ = ["default_params", "run_exp", "load_exps", "get_rate", "SpikeTable"]

# SI units, as float() of the upstream Brian2 quantities.
default_params = {
    "t_run": 1.0,        # s, duration of a trial
    "n_run": 30,         # trials
    "v_0": -0.052,       # V, resting potential
    "v_rst": -0.052,     # V, reset potential
    "v_th": -0.045,      # V, threshold
    "t_mbr": 0.020,      # s, membrane time constant
    "tau": 0.005,        # s, synaptic time constant
    "t_rfc": 0.0022,     # s, refractory period
    "t_dly": 0.0018,     # s, synaptic delay
    "w_syn": 0.000275,   # V per synapse
    "r_poi": 150.0,      # Hz, first Poisson class
    "r_poi2": 0.0,       # Hz, second Poisson class
    "f_poi": 250,        # Poisson weight = f_poi * w_syn
}

# upstream key -> (library parameter, factor from SI to the library's unit)
_PARAM_MAP = {
    "v_0": ("v_rest_mv", 1000.0),
    "v_rst": ("v_reset_mv", 1000.0),
    "v_th": ("v_th_mv", 1000.0),
    "t_mbr": ("tau_m_ms", 1000.0),
    "tau": ("tau_syn_ms", 1000.0),
    "t_rfc": ("refractory_ms", 1000.0),
    "t_dly": ("delay_ms", 1000.0),
    "w_syn": ("w_syn_mv", 1000.0),
    "f_poi": ("f_poi", 1.0),
}
_IGNORED = {"eqs", "eq_th", "eq_rst"}
SEED = 20241002


def _si(value):
    """float(value): a Brian2 quantity's SI value, or a plain number."""
    return float(value)


def _decimal(x):
    # The value a person typed (0.275, not 0.27500000000000002), so that the
    # library converts it exactly as the reference does.
    return float("%.12g" % x)


def engine_params(params):
    """(library parameter overrides, duration_ms, trials, r_poi, r_poi2) from
    an upstream params dict."""
    unknown = set(params) - set(default_params) - _IGNORED
    if unknown:
        raise ValueError("params: unknown key(s) %s (known: %s)" % (", ".join(sorted(unknown)),
                                                                     ", ".join(sorted(default_params))))
    merged = dict(default_params)
    merged.update(params)
    overrides = {}
    for key, (name, factor) in _PARAM_MAP.items():
        overrides[name] = _decimal(_si(merged[key]) * factor)
    n_run = merged["n_run"]
    if int(n_run) != n_run or n_run < 1:
        raise ValueError("params['n_run'] must be a whole number >= 1, not %r" % (n_run,))
    return (overrides, _decimal(_si(merged["t_run"]) * 1000.0), int(n_run), _si(merged["r_poi"]),
            _si(merged["r_poi2"]))


def _cli():
    env = os.environ.get("BL_CLI")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "..", "..", "brainlesslab"),               # build/python/brainlesslab
                 os.path.join(here, "..", "..", "..", "..", "bin", "brainlesslab")):  # PREFIX/lib/python3/dist-packages
        if os.access(cand, os.X_OK) and os.path.isfile(cand):
            return os.path.abspath(cand)
    found = shutil.which("brainlesslab")
    if not found:
        raise FileNotFoundError("the brainlesslab command is needed to import FlyWire files (set BL_CLI)")
    return found


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def flywire_connectome(path_comp, path_con, cache_root):
    """The connectome for (path_comp, path_con): path_con itself when it is a
    connectome directory, else the upstream files imported once (by content
    hash) under cache_root with `brainlesslab import flywire`."""
    if os.path.isdir(path_con):
        return Connectome.load(path_con)
    key = hashlib.sha256((_sha256(path_comp) + _sha256(path_con)).encode()).hexdigest()[:16]
    out = os.path.join(cache_root, "connectome-" + key)
    if not os.path.isfile(os.path.join(out, "manifest.json")):
        os.makedirs(cache_root, exist_ok=True)
        tmp = out + ".partial-%d" % os.getpid()
        shutil.rmtree(tmp, ignore_errors=True)
        r = subprocess.run([_cli(), "import", "flywire", "--neurons", os.fspath(path_comp), "--connectivity",
                            os.fspath(path_con), "--out", tmp], capture_output=True, text=True)
        if r.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise _core.Error("import flywire failed: %s" % (r.stderr.strip() or r.stdout.strip()))
        os.replace(tmp, out)
    return Connectome.load(out)


def run_exp(exp_name, neu_exc, path_res, path_comp, path_con, params=default_params, neu_slnc=[], neu_exc2=[],
            n_proc=-1, force_overwrite=False, seed=SEED, backend="auto"):
    """Run one experiment (n_run trials) and write PATH_RES/EXP_NAME.parquet.

    Arguments as upstream (see the module text); seed and backend are ours.
    Returns the Parquet path, or None when it exists and force_overwrite is False."""
    path_res = os.fspath(path_res)
    path_save = os.path.join(path_res, "%s.parquet" % exp_name)
    if os.path.isfile(path_save) and not force_overwrite:
        print(">>> Skipping experiment {} because {} exists and force_overwrite = {}".format(
            exp_name, path_save, force_overwrite))
        return None
    overrides, duration_ms, n_run, r_poi, r_poi2 = engine_params(params)
    c = flywire_connectome(os.fspath(path_comp), os.fspath(path_con), os.path.join(path_res, ".brainlesslab"))
    neu_exc, neu_exc2, neu_slnc = (_known_ids(c, name, ids, path_comp) for name, ids in
                                   (("neu_exc", neu_exc), ("neu_exc2", neu_exc2), ("neu_slnc", neu_slnc)))
    print(">>> Experiment:     {}".format(exp_name))
    print("    Output file:    {}".format(path_save))
    print("    Excited neurons: {}".format(len(list(neu_exc)) + len(list(neu_exc2))))
    if neu_slnc:
        print("    Silenced neurons: {}".format(len(neu_slnc)))
    stimulus = []
    if len(neu_exc):
        stimulus.append({"ids": [str(i) for i in neu_exc], "rate_hz": r_poi})
    if len(neu_exc2):
        stimulus.append({"ids": [str(i) for i in neu_exc2], "rate_hz": r_poi2})
    silence = [{"ids": [str(i) for i in neu_slnc]}] if len(neu_slnc) else []
    threads = 0 if n_proc is None or n_proc < 0 else int(n_proc)
    res = simulate(c, preset="shiu2024", stimulus=stimulus, silence=silence, trials=n_run, duration_ms=duration_ms,
                   seed=seed, backend=backend, threads=threads, params=overrides)
    print("    Backend:        {} ({} thread(s))".format(res.backend, res.threads))
    t, trial, flyid = spike_rows(c, res, res.dt_ms)
    os.makedirs(path_res, exist_ok=True)
    tmp = path_save + ".partial-%d" % os.getpid()
    _core.write_parquet(tmp, [("t", "double", t), ("trial", "int64", trial), ("flywire_id", "int64", flyid),
                              ("exp_name", "string", [exp_name] * len(t))], "zstd",
                        nullable=True, metadata={"pandas": pandas_schema(len(t))})
    os.replace(tmp, path_save)
    return path_save


# Upstream writes its frame with pandas' to_parquet (pyarrow): every field
# OPTIONAL, and the "pandas" footer metadata that tells pandas and pyarrow the
# index (a RangeIndex) and each column's dtype. Written the same, a result file
# reads back as upstream's does, whichever reader opens it.
RESULT_COLUMNS = (("t", "float64", "float64"), ("trial", "int64", "int64"), ("flywire_id", "int64", "int64"),
                  ("exp_name", "unicode", "object"))


def pandas_schema(n_rows):
    """The "pandas" metadata pyarrow writes for upstream's frame of n_rows."""
    import json
    from . import __version__
    meta = {
        "index_columns": [{"kind": "range", "name": None, "start": 0, "stop": int(n_rows), "step": 1}],
        "column_indexes": [{"name": None, "field_name": None, "pandas_type": "unicode", "numpy_type": "object",
                            "metadata": {"encoding": "UTF-8"}}],
        "columns": [{"name": n, "field_name": n, "pandas_type": p, "numpy_type": t, "metadata": None}
                    for n, p, t in RESULT_COLUMNS],
        "creator": {"library": "brainlesslab", "version": __version__},
    }
    try:
        import pandas
        meta["pandas_version"] = pandas.__version__
    except ImportError:
        pass
    return json.dumps(meta)


def _known_ids(connectome, argument, ids, path_comp):
    """ids as a list of ints, each a neuron of the connectome; otherwise an
    error that names the argument (neu_exc, neu_exc2, neu_slnc) and the ids."""
    out, bad = [], []
    for i in ids:
        try:
            v = int(i)
            if v != i and str(v) != str(i).strip():
                raise ValueError
        except (TypeError, ValueError):
            raise ValueError("run_exp: %s: %r is not a FlyWire id (a whole number)" % (argument, i)) from None
        out.append(v)
    known = getattr(connectome, "_shiu_ids", None)
    if known is None:
        known = set(int(x) for x in connectome.external_ids)
        try:
            connectome._shiu_ids = known
        except AttributeError:
            pass
    bad = [v for v in out if v not in known]
    if bad:
        shown = ", ".join(str(v) for v in bad[:5]) + (" and %d more" % (len(bad) - 5) if len(bad) > 5 else "")
        raise ValueError("run_exp: %s: %d id(s) not among the %d neurons of %s: %s"
                         % (argument, len(bad), len(known), os.fspath(path_comp), shown))
    return out


def spike_rows(connectome, res, dt_ms):
    """(t seconds, trial, flywire_id) in upstream row order: trial, neuron, time."""
    order = np.lexsort((res.event_steps, res.event_neurons, res.event_trials))
    dt_s = _decimal(dt_ms / 1000.0)
    t = res.event_steps[order].astype(np.float64) * dt_s
    trial = res.event_trials[order].astype(np.int64)
    ids = np.array([int(x) for x in connectome.external_ids], dtype=np.int64)
    return t, trial, ids[res.event_neurons[order]]


class SpikeTable:
    """Spikes as NumPy columns t, trial, flywire_id and exp_name (a NumPy
    str array), which get_rate accepts as well as a DataFrame: table['t'],
    len(table), table.columns."""

    columns = ("t", "trial", "flywire_id", "exp_name")

    def __init__(self, t, trial, flywire_id, exp_name):
        self._c = {"t": t, "trial": trial, "flywire_id": flywire_id, "exp_name": exp_name}

    def __getitem__(self, key):
        return self._c[key]

    def __len__(self):
        return len(self._c["t"])

    def __repr__(self):
        return "SpikeTable(%d spikes, experiments %s)" % (len(self), sorted(set(self._c["exp_name"].tolist())))


def _require_pandas(what):
    """pandas, which upstream's load_exps and get_rate return; a clear error without it."""
    try:
        import pandas
    except ImportError as e:
        raise ImportError("%s returns a pandas DataFrame, as upstream's does, and pandas is not installed "
                          "(Debian: apt-get install python3-pandas; pip: pip install pandas). Without pandas, "
                          "brainlesslab.Record and brainlesslab.simulate give the same spikes as NumPy arrays."
                          % what) from e
    return pandas


def load_exps(l_pqt):
    """Load the Parquet files of several experiments into one pandas
    DataFrame (columns t, trial, flywire_id, exp_name), as upstream: the
    files' frames concatenated, each keeping its own row index."""
    pd = _require_pandas("load_exps")
    l_pqt = list(l_pqt)
    if not l_pqt:
        raise ValueError("load_exps: no files given")
    frames = []
    for p in l_pqt:
        c = _core.read_table(os.fspath(p), ["t", "trial", "flywire_id", "exp_name"])
        frames.append(pd.DataFrame({"t": np.asarray(c["t"], dtype=np.float64),
                                    "trial": np.asarray(c["trial"], dtype=np.int64),
                                    "flywire_id": np.asarray(c["flywire_id"], dtype=np.int64),
                                    "exp_name": pd.Series(list(c["exp_name"]), dtype=object)}))
    return pd.concat(frames)


def _columns(df):
    return (np.asarray(df["t"], dtype=np.float64), np.asarray(df["trial"], dtype=np.int64),
            np.asarray(df["flywire_id"], dtype=np.int64), np.asarray(df["exp_name"]).astype(str))


def get_rate(df, t_run=None, n_run=None, flyid2name=dict(), duration=None):
    """Mean and standard deviation (ddof 0) of the firing rate (Hz) of every
    neuron in every experiment, pivoted with neurons (flywire ids, ascending)
    as rows and experiments (sorted) as columns; NaN where a neuron never
    spiked in an experiment. Both upstream signatures:

    get_rate(df, t_run, n_run)   (current utils.py) every one of the n_run
        trials counts, a trial without spikes as rate 0;
    get_rate(df, duration)       (earlier utils.py) only the trials in which
        the neuron spiked count (a trial without spikes has no rows).

    t_run / duration in seconds (a Brian2 quantity is accepted). flyid2name
    adds a 'name' column first, as upstream. Returns two pandas DataFrames
    (index 'flyid', columns 'exp_name'); df may be load_exps' DataFrame or a
    SpikeTable."""
    pd = _require_pandas("get_rate")
    if duration is not None and t_run is not None:
        raise ValueError("get_rate: give t_run (with n_run) or duration, not both")
    seconds = _si(duration if duration is not None else t_run) if (duration is not None or t_run is not None) else None
    if seconds is None or not seconds > 0:
        raise ValueError("get_rate: the trial duration must be a positive number of seconds")
    if n_run is not None and (int(n_run) != n_run or n_run < 1):
        raise ValueError("get_rate: n_run must be a whole number >= 1, not %r" % (n_run,))
    _, trial, fid, exp = _columns(df)
    exps = sorted(set(exp.tolist()))
    flyids = np.unique(fid)
    rate = np.full((len(flyids), len(exps)), np.nan)
    std = np.full((len(flyids), len(exps)), np.nan)
    for j, e in enumerate(exps):
        m = exp == e
        # one count per (neuron, trial) that has spikes
        keys, counts = np.unique(np.stack([fid[m], trial[m]]), axis=1, return_counts=True)
        r = counts / seconds
        neurons, start = np.unique(keys[0], return_index=True)
        rows = np.searchsorted(flyids, neurons)
        bounds = list(start) + [len(r)]
        for k, row in enumerate(rows):
            seg = r[bounds[k]:bounds[k + 1]]
            if n_run is not None:  # trials without spikes count as 0 Hz
                if keys[1, bounds[k]:bounds[k + 1]].max() >= n_run:
                    raise ValueError("get_rate: trial %d is outside n_run = %d" % (keys[1, bounds[k + 1] - 1], n_run))
                seg = np.concatenate([seg, np.zeros(int(n_run) - len(seg))])
            rate[row, j] = seg.mean()
            std[row, j] = seg.std()
    df_rate = pd.DataFrame(rate, index=pd.Index(flyids, name="flyid"), columns=pd.Index(exps, name="exp_name"))
    df_std = pd.DataFrame(std, index=pd.Index(flyids, name="flyid"), columns=pd.Index(exps, name="exp_name"))
    if flyid2name:
        names = [flyid2name.get(int(f), flyid2name.get(f, "")) for f in flyids]
        df_rate.insert(loc=0, column="name", value=names)
        df_std.insert(loc=0, column="name", value=names)
    return df_rate, df_std
