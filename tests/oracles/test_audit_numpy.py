"""Operation "audit" against an independent NumPy computation.

1. plans/larva-audit.toml, run as written into a temporary root: every
   population's breakdown (counts per value of every metadata column), the
   hierarchy layers (BFS depth from the source, split of depth >= 3), layer
   sizes per cell type, in/out-degree summaries, and the layer-to-layer edge
   counts and synapse sums (excitatory and inhibitory apart) in audit.json and
   layer_edges.npy, and layers.csv row by row, all recomputed here from the
   connectome files.
2. plans/male-cns-visual-audit.toml on a synthetic connectome carrying the male
   CNS annotation columns (generated here): the seed's visual rules
   (photoreceptors, lamina, medulla, lobula, lobula plate, optic vs central)
   written in NumPy the way the seed wrote them, against the audit's populations
   and layers.
The record must verify (brainlesslab verify) and hold a copy of the plan.
"""

import csv
import json
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

import blconn


def read_columns(conn_dir):
    with open(conn_dir / "neurons.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return {k: np.array([r[k] for r in rows], dtype=object) for k in rows[0]}


def bfs(graph, sources):
    depth = np.full(graph.n, -1, np.int64)
    depth[sources] = 0
    frontier = np.unique(np.asarray(sources, np.int64))
    d = 0
    while len(frontier):
        d += 1
        nxt = np.unique(np.concatenate([graph.targets[graph.offsets[s]:graph.offsets[s + 1]] for s in frontier]))
        nxt = nxt[depth[nxt] < 0]
        depth[nxt] = d
        frontier = nxt
    return depth


def layers_of(depth, split):
    names = ["sensory", "first_order", "second_order", "higher"] + (["central"] if split is not None else []) \
        + ["unreached"]
    L = len(names)
    lay = np.where(depth < 0, L - 1, np.minimum(depth, 3))
    if split is not None:
        lay = np.where((depth >= 3) & ~split, 4, lay)
    return names, lay


def edge_table(graph, lay, L):
    src = graph.sources()
    a, b, c = lay[src], lay[graph.targets], graph.counts.astype(np.int64)
    out = np.zeros((2, 2, L, L), np.int64)
    for s, mask in ((0, c > 0), (1, c < 0)):
        np.add.at(out[0, s], (a[mask], b[mask]), 1)
        np.add.at(out[1, s], (a[mask], b[mask]), np.abs(c[mask]))
    return out


def summary(x):
    x = np.sort(np.asarray(x))
    if len(x) == 0:
        return {"neurons": 0}
    return {"neurons": len(x), "min": int(x[0]), "median": int(x[(len(x) - 1) // 2]), "mean": float(x.mean()),
            "max": int(x[-1]), "total": float(x.sum())}


def same_summary(got, want):
    return all(k in got and (abs(got[k] - v) <= 1e-9 * max(1, abs(v))) for k, v in want.items())


def run_audit(plan, root):
    r = subprocess.run([blconn.cli_path(), "run", str(plan), "--root", str(root), "--quiet"],
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"audit failed: {r.stderr.strip()}")
    rec = Path(r.stdout.strip().splitlines()[-1])
    v = subprocess.run([blconn.cli_path(), "verify", str(rec)], capture_output=True, text=True)
    return rec, v.returncode == 0


def check_hierarchy(label, rec, graph, cols, source, split, type_column, ok):
    audit = json.loads((rec / "audit.json").read_text())
    h = audit["hierarchy"]
    depth = bfs(graph, source)
    names, lay = layers_of(depth, split)
    L = len(names)
    good = h["layer_order"] == names
    for l, e in enumerate(h["layers"]):
        members = lay == l
        good &= e["name"] == names[l] and e["size"] == int(members.sum())
        want_types = Counter(cols[type_column][members])
        good &= e["by_type"] == dict(want_types)
        # Largest count first, then value: the order is part of the format.
        order = sorted(want_types.items(), key=lambda kv: (-kv[1], kv[0]))
        good &= list(e["by_type"].items()) == order
        indeg = np.bincount(graph.targets, minlength=graph.n)
        outdeg = np.diff(graph.offsets)
        good &= same_summary(e["in_degree"], summary(indeg[members]))
        good &= same_summary(e["out_degree"], summary(outdeg[members]))
    table = edge_table(graph, lay, L)
    npy = np.load(rec / "layer_edges.npy")
    good &= npy.dtype == np.int64 and npy.shape == (2, 2, L, L) and np.array_equal(npy, table)
    for s, sign in enumerate(("excitatory", "inhibitory")):
        good &= np.array_equal(np.array(h["edges"][sign]["edge_counts"]), table[0, s])
        good &= np.array_equal(np.array(h["edges"][sign]["synapse_sums"]), table[1, s])
    good &= int(table[0].sum()) == graph.e
    with open(rec / "layers.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    good &= len(rows) == graph.n
    good &= all(r["layer"] == names[lay[i]] and int(r["depth"]) == depth[i] and r["external_id"] ==
                cols["external_id"][i] and all(r[k] == cols[k][i] for k in cols if k not in ("index",))
                for i, r in enumerate(rows))
    print(f"{'ok ' if good else 'BAD'} {label}: layers {[int((lay == l).sum()) for l in range(L)]}, "
          f"{graph.e} edges in the layer table")
    ok.append(bool(good))
    return audit, lay


def larva(tmp, ok):
    graph, conn, standin = blconn.shipped_connectome("larva")
    if standin:
        print("SKIP larva: the shipped connectome is absent")
        return
    rec, verified = run_audit(blconn.SOURCE_DIR / "plans" / "larva-audit.toml", tmp / "rec")
    ok.append(verified and (rec / "plan.toml").read_bytes() ==
              (blconn.SOURCE_DIR / "plans" / "larva-audit.toml").read_bytes())
    cols = read_columns(conn)
    ct, mod, sign = cols["cell_type"], cols["modality"], cols["sign"]
    meta = [k for k in cols if k not in ("index", "external_id")]
    want = {
        "sensory": ct == "sensory",
        "ORN": (ct == "sensory") & (mod == "olfactory"),
        "gustatory": np.array([m.startswith("gustatory-") for m in mod]),
        "projection": np.array([t.startswith("PN") for t in ct]),
        "descending": np.array([t.startswith("DN-") or t.startswith("pre-DN-") for t in ct]),
        "mushroom-body": np.isin(ct, ["KC", "MBON", "MBIN"]) | np.array([t.startswith("MB-") for t in ct]),
        "inhibitory": sign == "-1",
        "central": ~(np.isin(ct, ["sensory", "ascending"]) | np.array([t.startswith("DN-") for t in ct])),
    }
    depth_orn = bfs(graph, np.flatnonzero(want["ORN"]))
    want["ORN-second-order"] = depth_orn == 2
    audit = json.loads((rec / "audit.json").read_text())
    pops = {p["name"]: p for p in audit["populations"]}
    for name, mask in want.items():
        p = pops.get(name)
        good = p is not None and p["size"] == int(mask.sum())
        for k in meta:
            good = good and p["breakdown"][k] == dict(Counter(cols[k][mask]))
        print(f"{'ok ' if good else 'BAD'} larva population {name}: {int(mask.sum())} neurons, "
              f"{len(meta)} columns broken down")
        ok.append(bool(good))
    indeg = np.bincount(graph.targets, minlength=graph.n)
    ok.append(same_summary(audit["degrees"]["in_degree"], summary(indeg)) and
              same_summary(audit["degrees"]["out_degree"], summary(np.diff(graph.offsets))))
    check_hierarchy("larva hierarchy from sensory", rec, graph, cols, np.flatnonzero(want["sensory"]),
                    want["central"], "cell_type", ok)


# ---- the male CNS visual system, synthetic ----
TYPES_OL = ["L1", "L2", "L3", "L4", "L5", "C2", "C3", "T1", "Lawf1", "Lawf2", "T4a", "T4d", "T5b", "LPi12",
            "LPLC2", "LLPC1", "LC4", "LC10a", "LT1", "Li12", "Lobula_x", "Mi1", "Mi4", "Dm8", "Tm1", "Tm9",
            "TmY5a", "Pm2", "Cm3", "Mt1", "MeTu1", "T2", "T3", "Y3", "Lat", "Tlp1"]
SUPER = ["ol_intrinsic", "visual_projection", "visual_projection_tbc", "visual_centrifugal", "central",
         "descending_neuron", "vnc_motor", "ol_sensory", "sensory"]


def synthetic_male_cns(path, seed=7):
    rng = np.random.default_rng(seed)
    g = blconn.synthetic_graph(n=4000, seed=seed, mean_degree=12.0, name="male-cns-synthetic")
    n = g.n
    sup = rng.choice(SUPER[:7], size=n, p=[0.45, 0.08, 0.02, 0.03, 0.32, 0.05, 0.05]).astype(object)
    cls = np.full(n, "", dtype=object)
    typ = np.full(n, "", dtype=object)
    photo = rng.choice(n, 300, replace=False)
    sup[photo] = rng.choice(["ol_sensory", "sensory"], size=300, p=[0.9, 0.1])  # a few visual non-ol_sensory
    cls[photo] = "visual"
    typ[photo] = rng.choice(["R1-6", "R7", "R8"], size=300)
    ol = sup == "ol_intrinsic"
    typ[ol] = rng.choice(TYPES_OL, size=int(ol.sum()))
    other = (typ == "") & (rng.random(n) < 0.7)
    typ[other] = rng.choice(["DNa02", "LC4", "T4a", "FB1", "PFN", "Mi1"], size=int(other.sum()))  # decoys
    cls[(cls == "") & (rng.random(n) < 0.2)] = "olfactory"
    side = rng.choice(["left", "right", ""], size=n)
    nt = rng.choice(["histamine", "acetylcholine", "gaba", "glutamate", ""], size=n)
    ids = [str(720575940600000000 + 17 * i) for i in range(n)]
    g.external_ids = ids
    blconn.write_connectome(g, path)
    cols = {"superclass": sup, "class": cls, "subclass": np.full(n, "", object),
            "type": typ, "instance": np.array([f"{t}_{s}" if t else "" for t, s in
                                                                     zip(typ, side)], object),
            "side": side, "neurotransmitter": nt}
    with open(path / "neurons.csv", "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["index", "external_id"] + list(cols))
        for i in range(n):
            w.writerow([i, ids[i]] + [cols[k][i] for k in cols])
    m = json.loads((path / "manifest.json").read_text())
    m["files"]["neurons.csv"] = {"bytes": (path / "neurons.csv").stat().st_size,
                                 "sha256": blconn._sha256(path / "neurons.csv")}
    (path / "manifest.json").write_text(json.dumps(m, indent=2) + "\n")
    cols["external_id"] = np.array(ids, object)
    return g, cols


def male_cns(tmp, ok):
    conn = tmp / "male-cns"
    graph, cols = synthetic_male_cns(conn)
    text = (blconn.SOURCE_DIR / "plans" / "male-cns-visual-audit.toml").read_text()
    text, k = re.subn(r'(?m)^path = ".*"$', f'path = "{conn}"', text)
    assert k == 1
    plan = tmp / "male-cns-visual-audit.toml"
    plan.write_text(text)
    rec, verified = run_audit(plan, tmp / "rec")
    ok.append(verified)

    # The seed's rules, as the seed wrote them (visual_audit).
    sup, cls, typ = cols["superclass"], cols["class"], cols["type"]
    visual = cls == "visual"
    ol_intrinsic = sup == "ol_intrinsic"
    lamina_types = {"L1", "L2", "L3", "L4", "L5", "C2", "C3", "T1", "Lawf1", "Lawf2"}
    lamina = ol_intrinsic & np.array([x in lamina_types for x in typ])
    lobula_plate = ol_intrinsic & np.array([x.startswith(("T4", "T5", "LPi", "LPLC", "LLPC")) for x in typ])
    lobula = ol_intrinsic & ~lobula_plate & np.array([x.startswith(("LC", "LT", "Li", "Lobula")) for x in typ])
    medulla = ol_intrinsic & ~lamina & ~lobula & ~lobula_plate & np.array(
        [x.startswith(("Mi", "Dm", "Tm", "TmY", "Pm", "Cm", "Me")) for x in typ])
    want = {
        "visual_sensory": visual,
        "photoreceptor": visual & (sup == "ol_sensory"),
        "lamina": lamina, "medulla": medulla, "lobula": lobula, "lobula_plate": lobula_plate,
        "optic_unassigned": ol_intrinsic & ~(lamina | medulla | lobula | lobula_plate),
        "visual_projection": np.isin(sup, ["visual_projection", "visual_projection_tbc"]),
        "optic": np.isin(sup, ["ol_intrinsic", "visual_projection", "visual_projection_tbc", "visual_centrifugal"]),
    }
    audit = json.loads((rec / "audit.json").read_text())
    pops = {p["name"]: p for p in audit["populations"]}
    for name, mask in want.items():
        p = pops.get(name)
        good = p is not None and p["size"] == int(mask.sum()) and mask.sum() > 0
        good = good and p["breakdown"]["type"] == dict(Counter(typ[mask]))
        print(f"{'ok ' if good else 'BAD'} male CNS {name}: {int(mask.sum())} neurons")
        ok.append(bool(good))
    _, lay = check_hierarchy("male CNS visual hierarchy", rec, graph, cols, np.flatnonzero(visual), want["optic"],
                             "type", ok)
    # The seed's layer definitions, named as the seed names them.
    depth = bfs(graph, np.flatnonzero(visual))
    seed_layers = {"sensory": depth == 0, "first_order": depth == 1, "second_order": depth == 2,
                   "higher": (depth >= 3) & want["optic"], "central": (depth >= 3) & ~want["optic"]}
    names = ["sensory", "first_order", "second_order", "higher", "central"]
    ok.append(all(np.array_equal(lay == names.index(k), v) for k, v in seed_layers.items()))


def main():
    t0 = time.perf_counter()
    ok = []
    with blconn.TempDir() as tmp:
        larva(tmp, ok)
        male_cns(tmp, ok)
    print(f"{'PASS' if all(ok) and ok else 'FAIL'}: {sum(ok)}/{len(ok)} in {time.perf_counter() - t0:.1f} s")
    return 0 if all(ok) and ok else 1


if __name__ == "__main__":
    sys.exit(main())
