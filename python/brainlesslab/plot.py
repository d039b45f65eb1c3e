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

Figures, each drawn when its inputs are present:
  raster          spikes.h5: trials stacked, neurons grouped and coloured by population
  rates_by_depth  rates_mean_hz.npy + depth + cell types: mean rate per (depth, cell type)
  psth            spikes.h5: population rate over time, per population
  hierarchy       audit.json / layer_edges.npy: layer sizes and the layer edge matrix
  reservoir       trials.csv (reservoir profile): recall accuracy against delay, per target
"""

import argparse
import datetime
import json
import os
import sys

import numpy as np

from .record import Record

FIGURES = ("raster", "rates_by_depth", "psth", "hierarchy", "reservoir")


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


# ---- the figures: each returns the plotted data (dict of arrays) and draws on fig ----

def raster_data(rec):
    sp = rec.spikes
    names, group = populations(rec)
    neurons = np.asarray(sp.node_ids, dtype=np.int64)
    trials = (np.asarray(sp.trials, dtype=np.int64) if sp.trials is not None
              else np.zeros(len(neurons), dtype=np.int64))
    shown = np.unique(neurons)
    # Rows: neurons that spiked, by population then index; trials stacked.
    order = shown[np.lexsort((shown, group[shown]))]
    row_of = np.zeros(int(group.shape[0]), dtype=np.int64)
    row_of[order] = np.arange(len(order))
    n_trials = int(rec.plan["run"]["trials"]) if rec.plan else int(trials.max(initial=0)) + 1
    band = len(order) + max(1, len(order) // 20)
    return {
        "times_ms": np.asarray(sp.timestamps_ms, dtype=np.float64),
        "neurons": neurons,
        "trials": trials,
        "rows": trials * band + row_of[neurons],
        "groups": group[neurons],
        "group_names": np.array(names),
        "band": np.array(band),
        "n_trials": np.array(n_trials),
    }


def draw_raster(fig, d):
    ax = fig.add_subplot(111)
    cmap = _colours(len(d["group_names"]))
    for g, name in enumerate(d["group_names"]):
        m = d["groups"] == g
        if m.any():
            # Many spikes: drawn as an image inside the SVG too, or it grows to tens of MB.
            ax.scatter(d["times_ms"][m], d["rows"][m], s=1.5, marker="|", color=cmap[g], label=str(name),
                       linewidths=0.6, rasterized=len(d["times_ms"]) > 20000)
    band = int(d["band"])
    for t in range(1, int(d["n_trials"])):
        ax.axhline(t * band - 0.5 * max(1, band // 20), color="0.85", lw=0.5)
    ax.set_xlabel("time in trial (ms)")
    ax.set_ylabel("trial (stacked), neurons by population")
    ax.set_yticks([(t + 0.5) * band for t in range(int(d["n_trials"]))])
    ax.set_yticklabels([str(t) for t in range(int(d["n_trials"]))])
    ax.legend(loc="upper right", fontsize=7, markerscale=6)
    ax.set_title("Spike raster")


def rates_by_depth_data(rec):
    rates = np.asarray(rec.rates_mean_hz, dtype=np.float64)
    depth = np.asarray(rec.depth, dtype=np.int64)
    ct = rec.rates.get("cell_type") if rec.has("rates.csv") else None
    cell = np.array([c if c else "(unannotated)" for c in ct]) if ct else np.array(["(all)"] * len(rates))
    keys = sorted({(int(a), b) for a, b in zip(depth, cell) if a >= 0})
    out_depth, out_cell, out_n, out_mean, out_resp = [], [], [], [], []
    for dpt, c in keys:
        m = (depth == dpt) & (cell == c)
        out_depth.append(dpt)
        out_cell.append(c)
        out_n.append(int(m.sum()))
        out_mean.append(float(rates[m].mean()))
        out_resp.append(int((rates[m] >= 1.0).sum()))
    return {"depth": np.array(out_depth, dtype=np.int64), "cell_type": np.array(out_cell),
            "neurons": np.array(out_n, dtype=np.int64), "mean_rate_hz": np.array(out_mean, dtype=np.float64),
            "responders": np.array(out_resp, dtype=np.int64)}


def draw_rates_by_depth(fig, d):
    ax = fig.add_subplot(111)
    types = sorted(set(d["cell_type"].tolist()))
    cmap = _colours(len(types))
    x = np.arange(len(d["depth"]))
    colours = [cmap[types.index(c)] for c in d["cell_type"]]
    ax.bar(x, d["mean_rate_hz"], color=colours)
    ax.set_xticks(x)
    ax.set_xticklabels(["%d:%s" % (a, b) for a, b in zip(d["depth"], d["cell_type"])], rotation=90, fontsize=6)
    ax.set_ylabel("mean rate over neurons and trials (Hz)")
    ax.set_xlabel("depth from stimulus : cell type")
    ax.set_title("Rates by depth and cell type")


def psth_data(rec, bin_ms=5.0):
    sp = rec.spikes
    names, group = populations(rec)
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
        if sizes[g] == 0:
            continue
        h, _ = np.histogram(np.asarray(sp.timestamps_ms)[group[neurons] == g], bins=edges)
        rates[g] = h / (n_trials * sizes[g] * (np.diff(edges) / 1000.0))
    return {"bin_edges_ms": edges, "rate_hz": rates, "population": np.array(names), "population_size": sizes,
            "n_trials": np.array(n_trials)}


def draw_psth(fig, d):
    ax = fig.add_subplot(111)
    cmap = _colours(len(d["population"]))
    centres = 0.5 * (d["bin_edges_ms"][1:] + d["bin_edges_ms"][:-1])
    for g, name in enumerate(d["population"]):
        ax.plot(centres, d["rate_hz"][g], color=cmap[g], lw=1, label="%s (%d)" % (name, d["population_size"][g]))
    ax.set_xlabel("time in trial (ms)")
    ax.set_ylabel("rate per neuron (Hz)")
    ax.legend(fontsize=7)
    ax.set_title("PSTH per population (mean over trials and neurons)")


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


def reservoir_data(rec):
    t = rec.load("trials.csv")
    targets = sorted(set(t["target"]), key=t["target"].index)
    delays = sorted({int(x) for x in t["delay"]})
    acc = np.full((len(targets), len(delays)), np.nan)
    n = np.zeros((len(targets), len(delays)), dtype=np.int64)
    for i, tg in enumerate(targets):
        for j, dl in enumerate(delays):
            out = [float(o) for tt, dd, o, s in zip(t["target"], t["delay"], t["outcome"], t["status"])
                   if tt == tg and int(dd) == dl and o != ""]
            n[i, j] = len(out)
            if out:
                acc[i, j] = float(np.mean(out))
    return {"target": np.array(targets), "delay": np.array(delays, dtype=np.int64), "recall_accuracy": acc,
            "completed": n}


def draw_reservoir(fig, d):
    ax = fig.add_subplot(111)
    cmap = _colours(len(d["target"]))
    for i, tg in enumerate(d["target"]):
        ax.plot(d["delay"], d["recall_accuracy"][i], marker="o", color=cmap[i], label=str(tg))
    ax.axhline(0.5, color="0.6", ls="--", lw=0.8, label="chance")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("delay (ticks)")
    ax.set_ylabel("recall accuracy")
    ax.set_ylim(-0.05, 1.05)
    ax.legend(fontsize=7)
    ax.set_title("Reservoir task curve")


def _colours(n):
    plt = _pyplot()
    cmap = plt.get_cmap("tab10" if n <= 10 else "tab20")
    return [cmap(i % cmap.N) for i in range(max(n, 1))]


# name -> (needs, data function, draw function, figure size)
_FIGURE_TABLE = {
    "raster": (("spikes.h5",), raster_data, draw_raster, (8, 5)),
    "rates_by_depth": (("rates_mean_hz.npy", "depth_from_stimulus.npy"), rates_by_depth_data, draw_rates_by_depth,
                       (10, 5)),
    "psth": (("spikes.h5",), psth_data, draw_psth, (8, 4)),
    "hierarchy": (("layer_edges.npy",), hierarchy_data, draw_hierarchy, (10, 4.5)),
    "reservoir": (("trials.csv",), reservoir_data, draw_reservoir, (6, 4)),
}


def available(rec):
    """Figures this record has the inputs for, in FIGURES order."""
    out = []
    for name in FIGURES:
        needs = _FIGURE_TABLE[name][0]
        if name == "hierarchy":
            if rec.has("layer_edges.npy") or rec.has("audit.json"):
                out.append(name)
        elif name in ("raster", "psth"):
            if rec.spike_files and rec.plan and "run" in rec.plan:
                out.append(name)
        elif all(rec.has(n) for n in needs):
            out.append(name)
    return out


def figure(rec, name):
    """(data, matplotlib Figure) of one figure of a record."""
    _, data_fn, draw_fn, size = _FIGURE_TABLE[name]
    data = data_fn(rec)
    fig = _pyplot().figure(figsize=size)
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


def plot_record(source, root=None, figures=None, formats=("png", "svg"), dpi=110):
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
        raise ValueError("%s: nothing to plot (no spikes, rates, audit or reservoir trials)" % source.path)
    root = os.path.abspath(root or os.path.dirname(source.path))
    plt = _pyplot()
    w = _reserve(root, source)
    try:
        listed = []
        for name in names:
            data, fig = figure(source, name)
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
    a = p.parse_args(argv)
    from . import _core

    try:
        out = plot_record(a.record, root=a.root, figures=a.figure)
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
