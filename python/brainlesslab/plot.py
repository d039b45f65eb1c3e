"""Figures from a record, written into a new sealed derived record.

    brainlesslab plot RECORD [--root DIR]          (the CLI runs this module)
    /usr/bin/python3 -m brainlesslab.plot RECORD [--root DIR]
    brainlesslab.plot.plot_record(Record(path), root=DIR) -> Record

Each figure is drawn from the record's numbers and saved as NAME.png and
NAME.svg together with NAME.data.npz, the exact arrays that were plotted, so a
reader (and the tests) can compare the picture's data with the record. The
figures go into a new record (a sealed record is never modified) whose
manifest names the source record by the SHA-256 of its manifest.json, which in
turn names every source artifact's SHA-256.

Figures, each drawn when its inputs are present (a figure asked for by name
that the record has no inputs for is refused):
  raster          spikes: a few trials (3 by default), neurons that spiked ordered by depth
                  from the stimulus and cell type, blocks labelled, coloured by population
  rates_by_depth  rates.csv: the run table's numbers, responders only, one bar per
                  (depth, cell type) group that has responders
  psth            spikes: rate over time per population (stimulus, silenced, named
                  populations, then the rest by depth), each on its own scale
  hierarchy       audit.json / layer_edges.npy: layer sizes and the layer edge matrix
  reservoir       trials.csv: accuracy against delay per target with 95% intervals over
                  blocks, readable labels, controls dashed
  probe           probe.json: the ridge probe against its permutation null, the constant
                  guess and the native readout
  screen          conditions.json + counts.npy: rate per condition and the paired effect
                  against condition 0, with 95% intervals over trials
  compare         rate_differences.csv: volcano plot (difference against -log10 q)
"""

import argparse
import datetime
import json
import os
import sys

import numpy as np

from .record import Record

def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "brainlesslab"  # stable SVG ids
    import matplotlib.pyplot as plt

    return plt


# ---- populations of a connectome record ----

def populations(rec):
    """(names, group) where group[i] is the population index of neuron i:
    each stimulus population in plan order, then each silence group, then
    'downstream' for every other neuron. A neuron in two populations takes
    the first."""
    n = len(rec.rates_mean_hz) if rec.has("rates_mean_hz.npy") else rec.plan["connectome"]["n_neurons"]
    names, group = [], np.full(n, -1, dtype=np.int64)
    for kind in ("stimulus", "silence"):
        for pop in (rec.plan or {}).get(kind, []):
            idx = np.asarray(pop.get("neurons", []), dtype=np.int64)
            free = idx[group[idx] < 0]
            group[free] = len(names)
            names.append(pop["name"] if kind == "stimulus" else "silenced: " + pop["name"])
    group[group < 0] = len(names)
    names.append("downstream")
    return names, group


# ---- how neurons are ordered and grouped in figures ----

def _cell_types(rec, n):
    ct = rec.rates.get("cell_type") if rec.has("rates.csv") else None
    if ct and len(ct) == n:
        return np.array([c if c else "(unannotated)" for c in ct])
    return np.array(["(all)"] * n)


def _depths(rec, n):
    if rec.has("depth_from_stimulus.npy"):
        d = np.asarray(rec.depth, dtype=np.int64)
        if d.shape == (n,):
            return d
    return np.full(n, -1, dtype=np.int64)


def _n_neurons(rec):
    if rec.has("rates_mean_hz.npy"):
        return len(rec.rates_mean_hz)
    return int(rec.plan["connectome"]["n_neurons"])


def _depth_text(d):
    return "not reached" if d < 0 else "depth %d" % d


def responder_groups(rec):
    """The (depth, cell type) groups of the run's table and summary.json:
    responders are neurons whose mean rate over trials is at least the
    record's responder threshold; each group's rate is the mean over its
    responders. Groups without responders are left out, as the table does."""
    rates = np.asarray(rec.rates_mean_hz, dtype=np.float64)
    n = len(rates)
    threshold = float((rec.summary or {}).get("responder_threshold_hz", 1.0)) if rec.has("summary.json") else 1.0
    depth, cell = _depths(rec, n), _cell_types(rec, n)
    resp = rates >= threshold
    groups = {}
    for i in range(n):
        g = groups.setdefault((int(depth[i]), str(cell[i])), [0, 0, 0.0])
        g[0] += 1
        if resp[i]:
            g[1] += 1
            g[2] += rates[i]
    keys = [k for k in groups if groups[k][1] > 0]
    # The table's order: depth (unreached last), then responders, most first.
    keys.sort(key=lambda k: (k[0] < 0, k[0], -groups[k][1], k[1]))
    return {"depth": np.array([k[0] for k in keys], dtype=np.int64),
            "cell_type": np.array([k[1] for k in keys]),
            "neurons": np.array([groups[k][0] for k in keys], dtype=np.int64),
            "responders": np.array([groups[k][1] for k in keys], dtype=np.int64),
            "mean_rate_hz": np.array([groups[k][2] / groups[k][1] for k in keys], dtype=np.float64),
            "threshold_hz": np.array(threshold)}


# ---- the figures: each returns the plotted data (dict of arrays) and draws on fig ----

RASTER_TRIALS = 3  # trials drawn by default: enough to see trial-to-trial variation, few enough to read


def raster_data(rec, trials=None):
    """The spikes of a few trials (the first RASTER_TRIALS unless `trials`
    names them), one row per neuron that spiked in them, neurons ordered by
    depth from the stimulus, then cell type, then index; blocks of rows of one
    (depth, cell type) are labelled on the y axis."""
    sp = rec.spikes
    names, group = populations(rec)
    n = len(group)
    neurons = np.asarray(sp.node_ids, dtype=np.int64)
    all_trials = (np.asarray(sp.trials, dtype=np.int64) if sp.trials is not None
                  else np.zeros(len(neurons), dtype=np.int64))
    n_trials = int(rec.plan["run"]["trials"]) if rec.plan else int(all_trials.max(initial=0)) + 1
    if trials is None:
        shown_trials = np.arange(min(RASTER_TRIALS, n_trials), dtype=np.int64)
    else:
        shown_trials = np.unique(np.asarray(list(trials), dtype=np.int64))
        bad = shown_trials[(shown_trials < 0) | (shown_trials >= n_trials)]
        if len(bad):
            raise ValueError("%s: trial %d is not in 0..%d" % (rec.path, int(bad[0]), n_trials - 1))
    keep = np.isin(all_trials, shown_trials)
    times = np.asarray(sp.timestamps_ms, dtype=np.float64)[keep]
    neurons, tr = neurons[keep], all_trials[keep]
    depth, cell = _depths(rec, n), _cell_types(rec, n)
    shown = np.unique(neurons)
    dsort = np.where(depth[shown] < 0, np.iinfo(np.int64).max, depth[shown])
    order = shown[np.lexsort((shown, cell[shown], dsort))]
    row_of = np.zeros(n, dtype=np.int64)
    row_of[order] = np.arange(len(order))
    # Blocks of equal (depth, cell type), in row order.
    labels, starts, sizes = [], [], []
    for r, i in enumerate(order):
        key = "%s  %s" % (_depth_text(int(depth[i])), cell[i])
        if not labels or labels[-1] != key:
            labels.append(key)
            starts.append(r)
            sizes.append(0)
        sizes[-1] += 1
    return {
        "times_ms": times,
        "neurons": neurons,
        "trials": tr,
        "rows": row_of[neurons],
        "groups": group[neurons],
        "group_names": np.array(names),
        "shown_trials": shown_trials,
        "n_trials": np.array(n_trials),
        "block_labels": np.array(labels),
        "block_start": np.array(starts, dtype=np.int64),
        "block_size": np.array(sizes, dtype=np.int64),
        "n_rows": np.array(len(order)),
    }


def draw_raster(fig, d):
    shown = list(d["shown_trials"])
    axes = fig.subplots(max(len(shown), 1), 1, sharex=True, squeeze=False)[:, 0]
    cmap = _colours(len(d["group_names"]))
    n_rows = int(d["n_rows"])
    # Label the blocks tall enough to hold a label (1/30 of the rows), so
    # labels never overlap; every block keeps its separator line.
    sizes = d["block_size"]
    big = {k for k in range(len(sizes)) if sizes[k] * 30 >= n_rows}
    for ax, t in zip(axes, shown):
        m_t = d["trials"] == t
        for g, name in enumerate(d["group_names"]):
            m = m_t & (d["groups"] == g)
            if m.any():
                ax.scatter(d["times_ms"][m], d["rows"][m], s=2, marker="|", color=cmap[g], label=str(name),
                           linewidths=0.7, rasterized=m.sum() > 20000)
        for k in range(1, len(d["block_start"])):
            ax.axhline(d["block_start"][k] - 0.5, color="0.8", lw=0.4)
        ticks = [k for k in range(len(d["block_start"])) if k in big]
        ax.set_yticks([d["block_start"][k] + (d["block_size"][k] - 1) / 2.0 for k in ticks])
        ax.set_yticklabels(["%s (%d)" % (d["block_labels"][k], d["block_size"][k]) for k in ticks], fontsize=6)
        ax.set_ylim(n_rows - 0.5, -0.5)  # depth 0 at the top
        ax.set_ylabel("trial %d" % t, fontsize=8)
    axes[-1].set_xlabel("time in trial (ms)")
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        axes[0].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, markerscale=4,
                       frameon=False)
    more = int(d["n_trials"]) - len(shown)
    fig.suptitle("Spike raster: %d neurons that spiked, by depth and cell type; trial%s %s%s"
                 % (n_rows, "s" if len(shown) > 1 else "", ", ".join(str(t) for t in shown),
                    " (of %d)" % int(d["n_trials"]) if more > 0 else ""), fontsize=10)


def rates_by_depth_data(rec):
    """The run table's numbers (responders only): one bar per (depth, cell
    type) group with responders."""
    return responder_groups(rec)


RATES_MAX_GROUPS = 40  # the table prints the top groups too; summary.json has them all


def draw_rates_by_depth(fig, d):
    ax = fig.add_subplot(111)
    k = min(len(d["depth"]), RATES_MAX_GROUPS)
    depths = sorted(set(d["depth"][:k].tolist()), key=lambda x: (x < 0, x))
    cmap = _colours(len(depths))
    y = np.arange(k)
    colours = [cmap[depths.index(int(x))] for x in d["depth"][:k]]
    ax.barh(y, d["mean_rate_hz"][:k], color=colours)
    ax.set_yticks(y)
    ax.set_yticklabels(["%s  %s  (%d of %d respond)" % (_depth_text(int(a)), c, r, n) for a, c, r, n in
                        zip(d["depth"][:k], d["cell_type"][:k], d["responders"][:k], d["neurons"][:k])],
                       fontsize=7)
    ax.invert_yaxis()
    from matplotlib.patches import Patch

    ax.legend([Patch(color=cmap[i]) for i in range(len(depths))], [_depth_text(x) for x in depths],
              loc="lower right", fontsize=7, title="from the stimulus", title_fontsize=7)
    ax.set_xlabel("mean rate of responders (Hz, mean over trials)")
    extra = len(d["depth"]) - k
    ax.set_title("Responders by depth and cell type (mean rate >= %g Hz)%s"
                 % (float(d["threshold_hz"]), "; %d more groups in the data" % extra if extra > 0 else ""),
                 fontsize=10)


def psth_populations(rec):
    """(names, group): the plan's stimulus populations, its silenced groups,
    its named populations, then every other neuron by depth from the
    stimulus (depth 1, depth 2, ... and 'not reached'). A neuron belongs to
    the first that holds it; groups with no neuron are dropped."""
    n = _n_neurons(rec)
    plan = rec.plan or {}
    names, group = [], np.full(n, -1, dtype=np.int64)

    def claim(name, idx):
        idx = np.asarray(idx, dtype=np.int64)
        free = idx[group[idx] < 0] if len(idx) else idx
        if len(free):
            group[free] = len(names)
            names.append(name)

    for pop in plan.get("stimulus", []):
        claim(pop["name"], pop.get("neurons", []))
    for pop in plan.get("silence", []):
        claim("silenced: " + pop["name"], pop.get("neurons", []))
    for pop in plan.get("populations", []) or []:
        if isinstance(pop, dict) and "neurons" in pop:
            claim(pop["name"], pop["neurons"])
    depth = _depths(rec, n)
    for d in sorted(set(depth[group < 0].tolist()), key=lambda x: (x < 0, x)):
        claim(_depth_text(d), np.flatnonzero((group < 0) & (depth == d)))
    return names, group


def psth_data(rec, bin_ms=5.0):
    sp = rec.spikes
    names, group = psth_populations(rec)
    duration = float(rec.plan["run"]["duration_ms"])
    n_trials = int(rec.plan["run"]["trials"])
    edges = np.arange(0.0, duration + bin_ms, bin_ms)
    edges = edges[edges <= duration + 1e-9]
    if edges[-1] < duration:
        edges = np.append(edges, duration)
    neurons = np.asarray(sp.node_ids, dtype=np.int64)
    sizes = np.array([(group == g).sum() for g in range(len(names))], dtype=np.int64)
    rates = np.zeros((len(names), len(edges) - 1))
    for g in range(len(names)):
        h, _ = np.histogram(np.asarray(sp.timestamps_ms)[group[neurons] == g], bins=edges)
        rates[g] = h / (n_trials * sizes[g] * (np.diff(edges) / 1000.0))
    return {"bin_edges_ms": edges, "rate_hz": rates, "population": np.array(names), "population_size": sizes,
            "n_trials": np.array(n_trials)}


PSTH_MAX_PANELS = 8


def _psth_panels(d):
    """Populations drawn: those with spikes, at most PSTH_MAX_PANELS."""
    spiking = [g for g in range(len(d["population"])) if np.any(d["rate_hz"][g] > 0)]
    return spiking[:PSTH_MAX_PANELS]


def draw_psth(fig, d):
    panels = _psth_panels(d)
    k = max(len(panels), 1)
    axes = fig.subplots(k, 1, sharex=True, squeeze=False)[:, 0]
    cmap = _colours(k)
    centres = 0.5 * (d["bin_edges_ms"][1:] + d["bin_edges_ms"][:-1])
    for ax_i, g in enumerate(panels):
        ax = axes[ax_i]
        ax.plot(centres, d["rate_hz"][g], color=cmap[ax_i], lw=1)
        ax.set_ylim(bottom=0)
        # Each population on its own scale: a stimulus at 150 Hz would flatten the rest.
        ax.text(1.01, 0.5, "%s\n(%d neurons)" % (d["population"][g], d["population_size"][g]),
                transform=ax.transAxes, fontsize=7, va="center")
        ax.tick_params(labelsize=7)
    axes[-1].set_xlabel("time in trial (ms)")
    axes[k // 2].set_ylabel("rate per neuron (Hz)")
    silent = [g for g in range(len(d["population"])) if not np.any(d["rate_hz"][g] > 0)]
    more = len(d["population"]) - len(silent) - len(panels)
    note = []
    if silent:
        shown = ", ".join("%s (%d)" % (d["population"][g], d["population_size"][g]) for g in silent[:6])
        note.append("no spikes: " + shown + (", ..." if len(silent) > 6 else ""))
    if more > 0:
        note.append("%d more populations in the data" % more)
    fig.suptitle("PSTH per population (mean over %d trials and the population's neurons)%s"
                 % (int(d["n_trials"]), "\n" + "; ".join(note) if note else ""), fontsize=9)

def hierarchy_data(rec):
    """From an audit record: audit.json's hierarchy (layers in layer_order,
    their sizes) and layer_edges.npy, int64 [measure][sign][from][to] with
    measure 0 = edges, 1 = summed |synapse count|; sign 0 = excitatory,
    1 = inhibitory. The heat map shows edges of both signs."""
    audit = rec.load("audit.json") if rec.has("audit.json") else {}
    h = audit.get("hierarchy", audit) if isinstance(audit, dict) else {}
    layers = h.get("layers", []) if isinstance(h, dict) else []
    names = [str(l.get("name", "layer %d" % i)) for i, l in enumerate(layers)]
    sizes = [int(l.get("size", 0)) for l in layers]
    e = np.asarray(rec.load("layer_edges.npy"), dtype=np.int64) if rec.has("layer_edges.npy") else None
    if e is None:
        e = np.zeros((2, 2, len(names), len(names)), dtype=np.int64)
    if e.ndim == 2:  # a plain [from][to] matrix
        e = e[np.newaxis, np.newaxis]
    if e.ndim != 4 or e.shape[2] != e.shape[3]:
        raise ValueError("%s: layer_edges.npy has shape %s, expected [measure][sign][L][L]" % (rec.path, e.shape))
    L = e.shape[2]
    if len(names) != L:
        names, sizes = ["layer %d" % i for i in range(L)], [0] * L
    d = {"layer": np.array(names), "layer_size": np.array(sizes, dtype=np.int64),
         "layer_edges": e[0].sum(axis=0)}
    if e.shape[1] == 2:
        d["layer_edges_excitatory"], d["layer_edges_inhibitory"] = e[0, 0], e[0, 1]
    if e.shape[0] == 2:
        d["layer_synapses"] = e[1].sum(axis=0)
    return d


def draw_hierarchy(fig, d):
    a1 = fig.add_subplot(121)
    a1.bar(np.arange(len(d["layer"])), d["layer_size"], color="tab:blue")
    a1.set_xticks(np.arange(len(d["layer"])))
    a1.set_xticklabels(d["layer"], rotation=60, fontsize=7)
    a1.set_ylabel("neurons")
    a1.set_title("Layer sizes")
    a2 = fig.add_subplot(122)
    from matplotlib.colors import LogNorm

    m = np.asarray(d["layer_edges"], dtype=np.float64)
    shown = np.ma.masked_less_equal(m, 0)  # log colours; empty cells left blank
    im = a2.imshow(shown, cmap="viridis", aspect="auto",
                   norm=LogNorm(vmin=max(shown.min(), 1), vmax=max(shown.max(), 1)) if shown.count() else None)
    fig.colorbar(im, ax=a2, label="edges (both signs)")
    k = d["layer_edges"].shape[0]
    labels = d["layer"] if len(d["layer"]) == k else np.arange(k)
    a2.set_xticks(np.arange(k))
    a2.set_xticklabels(labels, rotation=60, fontsize=7)
    a2.set_yticks(np.arange(k))
    a2.set_yticklabels(labels, fontsize=7)
    a2.set_xlabel("to layer")
    a2.set_ylabel("from layer")
    a2.set_title("Layer edge matrix")



def _readable_label(label):
    """"{'leak': 0.1}" (a Python dict's repr, as the original plans write
    labels) -> "leak = 0.1"; other labels as they are."""
    import ast

    try:
        v = ast.literal_eval(label)
    except (ValueError, SyntaxError):
        return label
    if isinstance(v, dict) and v:
        return ", ".join("%s = %s" % (k, v[k]) for k in v)
    return label


def _t_interval(x, level=0.95):
    """Mean and the two-sided Student-t interval of the mean (NaN when < 2)."""
    x = np.asarray(x, dtype=np.float64)
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return np.nan, np.nan, np.nan
    m = float(x.mean())
    if len(x) < 2:
        return m, np.nan, np.nan
    from scipy import stats

    half = float(stats.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)))
    return m, m - half, m + half


def reservoir_data(rec):
    t = rec.load("trials.csv")
    targets = sorted(set(t["target"]), key=t["target"].index)
    delays = sorted({int(x) for x in t["delay"]})
    summary = rec.summary if rec.has("summary.json") else {}
    info = {x.get("id"): x for x in (summary or {}).get("targets", [])}
    blocks = sorted({int(b) for b in t["block"]}) if "block" in t else [0]
    acc = np.full((len(targets), len(delays)), np.nan)
    lo, hi = np.full_like(acc, np.nan), np.full_like(acc, np.nan)
    n = np.zeros((len(targets), len(delays)), dtype=np.int64)
    for i, tg in enumerate(targets):
        for j, dl in enumerate(delays):
            rows = [(int(b), float(o)) for tt, dd, b, o in zip(t["target"], t["delay"], t.get("block", ["0"] * len(
                t["target"])), t["outcome"]) if tt == tg and int(dd) == dl and o != ""]
            n[i, j] = len(rows)
            if rows:
                acc[i, j] = float(np.mean([o for _, o in rows]))
                # The interval is over independent blocks (each its own wiring), as the summary's is.
                per_block = [np.mean([o for b, o in rows if b == bb]) for bb in blocks if any(b == bb for b, _ in rows)]
                _, lo[i, j], hi[i, j] = _t_interval(per_block)
                lo[i, j], hi[i, j] = max(lo[i, j], 0.0), min(hi[i, j], 1.0)  # an accuracy's range
    labels = [_readable_label(str(info.get(tg, {}).get("label", tg))) for tg in targets]
    controllers = [str(info.get(tg, {}).get("controller", "reservoir")) for tg in targets]
    return {"target": np.array(targets), "label": np.array(labels), "controller": np.array(controllers),
            "delay": np.array(delays, dtype=np.int64), "recall_accuracy": acc, "interval_low": lo,
            "interval_high": hi, "completed": n, "chance": np.array(float((summary or {}).get("chance", 0.5)))}


def draw_reservoir(fig, d):
    ax = fig.add_subplot(111)
    cmap = _colours(len(d["target"]))
    x = np.asarray(d["delay"], dtype=np.float64)
    for i in range(len(d["target"])):
        control = d["controller"][i] != "reservoir"
        style = dict(ls="--", marker="s", alpha=0.8) if control else dict(ls="-", marker="o")
        name = d["label"][i] + (" [%s control]" % d["controller"][i] if control else "")
        y = d["recall_accuracy"][i]
        ax.plot(x, y, color=cmap[i], label=name, **style)
        ok = np.isfinite(d["interval_low"][i])
        if ok.any():
            ax.fill_between(x[ok], d["interval_low"][i][ok], d["interval_high"][i][ok], color=cmap[i], alpha=0.15,
                            lw=0)
    ax.axhline(float(d["chance"]), color="0.5", ls=":", lw=1, label="chance")
    if len(x) > 1 and x.min() > 0:
        ax.set_xscale("log", base=2)
    ax.set_xlabel("delay (ticks)")
    ax.set_ylabel("recall accuracy (95% interval over blocks)")
    ax.set_ylim(-0.05, 1.05)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title("Reservoir task curve", fontsize=10)


def probe_data(rec):
    """probe.json's results: per target and probe point, the ridge probe's
    accuracy on held-out trials beside its permutation null, the constant
    guess and the native readout, averaged over blocks (with the range)."""
    res = rec.load("probe.json").get("results", [])
    summary = rec.summary if rec.has("summary.json") else {}
    info = {x.get("id"): x for x in (summary or {}).get("targets", [])}
    keys = []
    for r in res:
        k = (r.get("target"), r.get("point"))
        if k not in keys:
            keys.append(k)
    cols = ("accuracy", "permutation_accuracy", "constant_accuracy", "native_accuracy")
    mean = np.full((len(keys), len(cols)), np.nan)
    lo, hi = np.full_like(mean, np.nan), np.full_like(mean, np.nan)
    for i, k in enumerate(keys):
        for j, c in enumerate(cols):
            v = [float(r[c]) for r in res if (r.get("target"), r.get("point")) == k and c in r]
            if v:
                mean[i, j], lo[i, j], hi[i, j] = np.mean(v), np.min(v), np.max(v)
    return {"target": np.array([k[0] for k in keys]), "point": np.array([k[1] for k in keys]),
            "label": np.array([_readable_label(str(info.get(k[0], {}).get("label", k[0]))) for k in keys]),
            "measure": np.array(cols), "mean": mean, "low": lo, "high": hi}


def draw_probe(fig, d):
    ax = fig.add_subplot(111)
    k, m = d["mean"].shape
    width = 0.8 / max(m, 1)
    names = {"accuracy": "ridge probe", "permutation_accuracy": "probe, labels permuted",
             "constant_accuracy": "constant guess", "native_accuracy": "native readout"}
    cmap = _colours(m)
    x = np.arange(k)
    for j in range(m):
        y = d["mean"][:, j]
        err = np.vstack([y - d["low"][:, j], d["high"][:, j] - y])
        ax.bar(x + (j - (m - 1) / 2) * width, y, width, color=cmap[j], label=names.get(d["measure"][j],
               d["measure"][j]), yerr=np.where(np.isfinite(err), err, 0), capsize=2, error_kw={"lw": 0.7})
    ax.axhline(0.5, color="0.5", ls=":", lw=1)
    ax.set_xticks(x)
    ax.set_xticklabels(["%s\n%s" % (a, b) for a, b in zip(d["label"], d["point"])], fontsize=7)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("accuracy on held-out trials")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title("What the state holds: the probe against its controls (bars: mean over blocks; whiskers: range)",
                 fontsize=9)


def screen_data(rec):
    """Per condition: the network's mean rate in each trial (spikes per
    neuron per second, from counts.npy [condition][trial][neuron]), its mean
    and 95% interval, and its effect: the per-trial difference from its
    reference condition, the one with the same levels on every axis but the
    last and the last axis at its first level (silence=none beside each
    rate), paired because every condition of a screen runs the same trials on
    the same input draws, with its 95% interval."""
    counts = np.asarray(rec.load("counts.npy"), dtype=np.float64)
    if counts.ndim != 3:
        raise ValueError("%s: counts.npy has shape %s, expected [condition][trial][neuron]"
                         % (rec.path, counts.shape))
    cond = rec.load("conditions.json").get("conditions", [])
    duration_s = float(rec.plan["run"]["duration_ms"]) / 1000.0
    per_trial = counts.mean(axis=2) / duration_s  # [condition][trial]
    c_n = per_trial.shape[0]
    mean, lo, hi = np.zeros(c_n), np.zeros(c_n), np.zeros(c_n)
    eff, elo, ehi = np.zeros(c_n), np.zeros(c_n), np.zeros(c_n)
    ref = np.zeros(c_n, dtype=np.int64)
    if len(cond) == c_n:
        levels = [list((x.get("levels") or {}).items()) for x in cond]
        for c in range(c_n):
            ref[c] = next((r for r in range(c_n) if levels[r][:-1] == levels[c][:-1]), 0)
    for c in range(c_n):
        mean[c], lo[c], hi[c] = _t_interval(per_trial[c])
        eff[c], elo[c], ehi[c] = _t_interval(per_trial[c] - per_trial[ref[c]])
    labels = [str(x.get("label", c)) for c, x in enumerate(cond)] if len(cond) == c_n else [str(c) for c in
                                                                                           range(c_n)]
    return {"label": np.array(labels), "rate_per_trial_hz": per_trial, "mean_rate_hz": mean, "rate_low": lo,
            "rate_high": hi, "reference": ref, "effect_hz": eff, "effect_low": elo, "effect_high": ehi}


def draw_screen(fig, d):
    a1, a2 = fig.subplots(1, 2, sharey=True)
    y = np.arange(len(d["label"]))
    for ax, m, l, h, title in ((a1, d["mean_rate_hz"], d["rate_low"], d["rate_high"], "mean rate (Hz)"),
                               (a2, d["effect_hz"], d["effect_low"], d["effect_high"],
                                "effect against its reference (Hz, paired)")):
        err = np.vstack([m - l, h - m])
        ax.errorbar(m, y, xerr=np.where(np.isfinite(err), err, 0), fmt="o", ms=3, color="tab:blue", capsize=2,
                    lw=0.8)
        ax.set_xlabel(title + ", 95% interval over trials", fontsize=8)
        ax.tick_params(labelsize=7)
    a2.axvline(0, color="0.5", lw=0.8)
    a1.set_yticks(y)
    a1.set_yticklabels(d["label"], fontsize=7)
    a1.invert_yaxis()
    fig.suptitle("Screen: network rate per condition, and its effect against the condition with the last axis "
                 "at its first level", fontsize=9)


def compare_data(rec):
    """rate_differences.csv of a compare record: per neuron the rate
    difference (B - A) against -log10 of its BH-adjusted q; neurons without a
    test (no variance) are counted, not drawn."""
    t = rec.load("rate_differences.csv")

    def col(name):
        return np.array([float(x) if x not in ("", None) else np.nan for x in t.get(name, [])], dtype=np.float64)

    diff, q = col("diff_hz"), col("q_bh")
    tested = np.isfinite(q)
    cmp = rec.load("compare.json") if rec.has("compare.json") else {}
    alpha = float(cmp.get("alpha", 0.05)) if isinstance(cmp, dict) else 0.05
    return {"index": np.array([int(x) for x in t.get("index", [])], dtype=np.int64), "diff_hz": diff, "q_bh": q,
            "tested": tested, "alpha": np.array(alpha),
            "minus_log10_q": np.where(tested, -np.log10(np.clip(q, 1e-300, 1.0)), np.nan)}


def draw_compare(fig, d):
    ax = fig.add_subplot(111)
    t = d["tested"]
    sig = t & (d["q_bh"] < float(d["alpha"]))
    ax.scatter(d["diff_hz"][t & ~sig], d["minus_log10_q"][t & ~sig], s=6, color="0.6", label="q >= %g" %
               float(d["alpha"]))
    ax.scatter(d["diff_hz"][sig], d["minus_log10_q"][sig], s=8, color="tab:red", label="q < %g" %
               float(d["alpha"]))
    ax.axhline(-np.log10(float(d["alpha"])), color="0.5", ls=":", lw=0.8)
    ax.axvline(0, color="0.5", lw=0.6)
    ax.set_xlabel("rate difference B - A (Hz)")
    ax.set_ylabel("-log10 q (Benjamini-Hochberg)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title("Per-neuron rate differences: %d tested, %d significant, %d without a test"
                 % (int(t.sum()), int(sig.sum()), int((~t).sum())), fontsize=10)


def _colours(n):
    plt = _pyplot()
    cmap = plt.get_cmap("tab10" if n <= 10 else "tab20")
    return [cmap(i % cmap.N) for i in range(max(n, 1))]


# name -> (what it needs, data function, draw function, figure size from the data)
_FIGURE_TABLE = {
    "raster": (lambda r: bool(r.spike_files and r.plan and "run" in r.plan), raster_data, draw_raster,
               lambda d: (9, 1.2 + 2.4 * max(len(d["shown_trials"]), 1))),
    "rates_by_depth": (lambda r: r.has("rates_mean_hz.npy") and r.has("rates.csv"), rates_by_depth_data,
                       draw_rates_by_depth,
                       lambda d: (8, 1.5 + 0.22 * min(max(len(d["depth"]), 1), RATES_MAX_GROUPS))),
    "psth": (lambda r: bool(r.spike_files and r.plan and "run" in r.plan and r.plan.get("operation") !=
                            "screen"), psth_data, draw_psth,
             lambda d: (8, 1.4 + 1.1 * max(len(_psth_panels(d)), 1))),
    "hierarchy": (lambda r: r.has("layer_edges.npy") or r.has("audit.json"), hierarchy_data, draw_hierarchy,
                  lambda d: (10, 4.5)),
    "reservoir": (lambda r: r.has("trials.csv"), reservoir_data, draw_reservoir, lambda d: (8, 4.5)),
    "probe": (lambda r: r.has("probe.json"), probe_data, draw_probe,
              lambda d: (max(6, 1.2 * len(d["label"]) + 3), 4.5)),
    "screen": (lambda r: r.has("conditions.json") and r.has("counts.npy"), screen_data, draw_screen,
               lambda d: (10, 1.5 + 0.22 * len(d["label"]))),
    "compare": (lambda r: r.has("rate_differences.csv"), compare_data, draw_compare, lambda d: (7, 4.5)),
}
FIGURES = tuple(_FIGURE_TABLE)


def available(rec):
    """Figures this record has the inputs for, in FIGURES order."""
    return [name for name in FIGURES if _FIGURE_TABLE[name][0](rec)]


def figure(rec, name, trials=None):
    """(data, matplotlib Figure) of one figure of a record; `trials` picks
    the raster's trials."""
    _, data_fn, draw_fn, size = _FIGURE_TABLE[name]
    data = data_fn(rec, trials) if name == "raster" else data_fn(rec)
    fig = _pyplot().figure(figsize=size(data))
    draw_fn(fig, data)
    fig.tight_layout()
    return data, fig


def _reserve(root, source):
    from . import _core

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    base = "figures-%s-%s" % (source.hash[:12], stamp)
    for k in range(100):
        try:
            return _core.record_writer(root, base if k == 0 else "%s-%d" % (base, k))
        except _core.Error as e:
            if getattr(e, "status", "") != "already exists":
                raise
    raise _core.Error("%s: could not find a free record name for %s" % (root, base))


def plot_record(source, root=None, figures=None, formats=("png", "svg"), dpi=110, trials=None):
    """Draw every figure the source record has inputs for (or those named)
    into a new sealed record under root (default: beside the source); returns
    the derived Record."""
    if not isinstance(source, Record):
        source = Record(source)
    if source.status != "DONE":
        raise ValueError("%s: status %s, only a sealed (DONE) record is plotted" % (source.path, source.status))
    names = list(figures) if figures else available(source)
    unknown = [n for n in names if n not in _FIGURE_TABLE]
    if unknown:
        raise ValueError("unknown figure(s) %s (known: %s)" % (", ".join(unknown), ", ".join(FIGURES)))
    if not names:
        raise ValueError("%s: nothing to plot (no spikes, rates, audit, screen, comparison or reservoir trials)"
                         % source.path)
    # A figure the record has no inputs for is refused, not drawn empty.
    missing = [n for n in names if n not in available(source)]
    if missing:
        raise ValueError("%s: this record has no inputs for figure %s (it has: %s)"
                         % (source.path, ", ".join(missing), ", ".join(available(source)) or "none"))
    root = os.path.abspath(root or os.path.dirname(source.path))
    plt = _pyplot()
    w = _reserve(root, source)
    try:
        listed = []
        for name in names:
            data, fig = figure(source, name, trials=trials)
            entry = {"name": name, "data": name + ".data.npz", "images": []}
            for fmt in formats:
                path = w.path("%s.%s" % (name, fmt))
                fig.savefig(path, dpi=dpi, metadata=_metadata(fmt))
                entry["images"].append("%s.%s" % (name, fmt))
            plt.close(fig)
            np.savez_compressed(w.path(entry["data"]), **data)
            listed.append(entry)
        w.add_input("source record manifest", os.path.join(source.path, "manifest.json"))
        w.set_json("source", json.dumps({"record": source.path, "name": source.name,
                                         "manifest_sha256": source.hash,
                                         "plan_id": (source.plan or {}).get("id", "")}))
        w.set_json("figures", json.dumps(listed))
        return Record(w.seal())
    except BaseException as e:
        try:
            w.fail("%s: %s" % (type(e).__name__, e))
        except Exception:
            pass
        raise


def _metadata(fmt):
    # No creation dates, so equal data give equal images.
    if fmt == "svg":
        return {"Date": None}
    if fmt == "png":
        return {"Software": None}
    if fmt == "pdf":
        return {"CreationDate": None}
    return None


def main(argv=None):
    p = argparse.ArgumentParser(prog="brainlesslab plot",
                                description="Draw a record's figures (PNG + SVG + plotted data) into a new sealed "
                                            "derived record that names its source by hash.")
    p.add_argument("record", help="a sealed record directory")
    p.add_argument("--root", help="where the derived record is created (default: beside the source)")
    p.add_argument("--figure", action="append", choices=FIGURES, help="only this figure (repeatable)")
    p.add_argument("--trials", help="raster: the trials to draw, e.g. 0,5,9 (default: the first %d)"
                   % RASTER_TRIALS)
    a = p.parse_args(argv)
    from . import _core

    try:
        trials = None
        if a.trials:
            try:
                trials = [int(x) for x in a.trials.split(",")]
            except ValueError:
                print("brainlesslab plot: --trials '%s' is not a list of trial numbers" % a.trials, file=sys.stderr)
                return 2
        out = plot_record(a.record, root=a.root, figures=a.figure, trials=trials)
    except (ValueError, FileNotFoundError, KeyError, _core.Error) as e:
        print("brainlesslab plot: %s" % e, file=sys.stderr)
        return 1
    figs = out.manifest.get("figures", [])
    print(out.path)
    for f in figs:
        print("  %-15s %s" % (f["name"], ", ".join(f["images"] + [f["data"]])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
