"""Fake data sets in the real formats and column names of every importer's
source (no FlyWire or MaleCNS data is shipped: their licences and sizes
forbid it), made with NumPy; Feather and Parquet are written by the npm
oracles (tests/js/write_tables.mjs: apache-arrow, parquet-wasm), CSV(.gz)
here. Each maker returns the raw arrays, from which the tests compute the
expected connectome independently (expected_* below), and the bench script
(tests/oracles/make_import_bench.py) makes the FlyWire- and MaleCNS-scale
inputs with the same makers.

Every maker takes (outdir, rng, scale) and writes its files under outdir.
"""

from __future__ import annotations

import csv
import gzip
import json
import os
import subprocess
from pathlib import Path

import numpy as np

SOURCE_DIR = Path(os.environ.get("BL_SOURCE_DIR", Path(__file__).resolve().parents[2]))
JS_DIR = SOURCE_DIR / "tests" / "js"

FLY_SIGN = {
    "acetylcholine": 1, "ach": 1, "dopamine": 1, "da": 1, "serotonin": 1, "ser": 1, "5ht": 1,
    "octopamine": 1, "oct": 1, "oa": 1, "tyramine": 1, "tyr": 1, "unclear": 1,
    "gaba": -1, "glutamate": -1, "glut": -1, "glu": -1, "histamine": -1, "his": -1, "ha": -1,
}


def fly_sign(nt: str) -> int:
    key = (nt or "").strip().lower()
    return 1 if key == "" else FLY_SIGN[key]


def write_tables(specs, workdir: Path):
    """Write Feather/Parquet tables through node (tests/js/write_tables.mjs)."""
    if not specs:
        return
    spec_path = workdir / f"spec-{os.getpid()}-{id(specs)}.json"
    spec_path.write_text(json.dumps(specs))
    subprocess.run(["node", str(JS_DIR / "write_tables.mjs"), str(spec_path)], check=True, cwd=JS_DIR)
    spec_path.unlink()


def col(name, typ, values=None, npy=None):
    c = {"name": name, "type": typ}
    if npy is not None:
        c["npy"] = str(npy)
    else:
        c["values"] = values
    return c


def ints(a):
    return [None if v is None else str(int(v)) for v in a]


def write_csv(path: Path, header, rows):
    """CSV, gzip-compressed when the name ends in .gz (mtime 0: the same rows
    give the same bytes, so the same SHA-256 in the manifest)."""
    import io
    raw = open(path, "wb")
    stream = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) if str(path).endswith(".gz") else raw
    text = io.TextIOWrapper(stream, newline="", encoding="utf-8")
    w = csv.writer(text, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    text.close()
    raw.close()


def root_ids(rng, n, base=720575940600000000):
    """Unique FlyWire-like 64-bit ids in random order."""
    ids = base + rng.choice(n * 50, size=n, replace=False).astype(np.int64)
    return ids


def random_edges(rng, n, m, max_w=30):
    pre = rng.integers(0, n, size=m)
    post = rng.integers(0, n, size=m)
    w = rng.integers(1, max_w, size=m)
    return pre.astype(np.int64), post.astype(np.int64), w.astype(np.int64)


def csr_expected(n, pre, post, w, sign_of_pre):
    """CSR (offsets, targets, signed counts) with (pre, post) duplicates summed."""
    key = pre.astype(np.int64) * n + post.astype(np.int64)
    uk, inv = np.unique(key, return_inverse=True)
    sums = np.zeros(len(uk), dtype=np.int64)
    np.add.at(sums, inv, w)
    upre = (uk // n).astype(np.int64)
    upost = (uk % n).astype(np.int32)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.add.at(offsets, upre + 1, 1)
    offsets = np.cumsum(offsets)
    counts = (sums * sign_of_pre[upre]).astype(np.int32)
    return offsets, upost, counts


# ---------------------------------------------------------------------------
# flywire: Shiu et al.'s Completeness + Connectivity
# ---------------------------------------------------------------------------
def make_flywire(out: Path, rng, n=400, m=6000, parquet=True, big=False):
    out.mkdir(parents=True, exist_ok=True)
    ids = root_ids(rng, n)
    completed = rng.random(n) < 0.9
    exc = np.where(rng.random(n) < 0.75, 1, -1).astype(np.int64)
    pre, post, w = random_edges(rng, n, m)
    if not big:
        # A few repeated (pre, post) rows, which model.py's synapses add up.
        k = max(1, m // 100)
        pre = np.concatenate([pre, pre[:k]])
        post = np.concatenate([post, post[:k]])
        w = np.concatenate([w, w[:k]])
    comp = out / "Completeness_783.csv"
    with open(comp, "w", newline="") as f:
        f.write(",Completed\n")
        for i in range(n):
            f.write(f"{ids[i]},{'True' if completed[i] else 'False'}\n")
    fmt = "parquet" if parquet else "feather"
    conn = out / "Connectivity_783.parquet"
    e = exc[pre]
    arrays = {
        "Presynaptic_ID": ids[pre], "Postsynaptic_ID": ids[post], "Presynaptic_Index": pre,
        "Postsynaptic_Index": post, "Connectivity": w, "Excitatory": e, "Excitatory x Connectivity": e * w,
    }
    if big:
        cols = []
        for name, a in arrays.items():
            p = out / f".col-{name.replace(' ', '_')}.npy"
            np.save(p, a.astype(np.int64))
            cols.append(col(name, "int64", npy=p))
        write_tables([{"path": str(conn), "format": fmt, "columns": cols}], out)
        for c in cols:
            os.unlink(c["npy"])
    else:
        write_tables([{"path": str(conn), "format": fmt,
                       "columns": [col(k, "int64", ints(v)) for k, v in arrays.items()]}], out)
    # Codex classification for --annotations: most neurons, plus ids that are not neurons.
    annot = out / "classification.csv.gz"
    rows = []
    classes = ["central", "optic", "sensory", "motor", "endocrine"]
    for i in rng.permutation(n)[: int(n * 0.95)]:
        rows.append([ids[i], "intrinsic", classes[i % 5], f"class{i % 7}", f"sub{i % 3}", f"type{i}", "", "", ["left", "right"][i % 2], ""])
    for j in range(5):
        rows.append([ids.max() + 1000 + j, "intrinsic", "central", "x", "y", "z", "", "", "left", ""])
    write_csv(annot, ["root_id", "flow", "super_class", "class", "sub_class", "cell_type", "hemibrain_type",
                      "hemilineage", "side", "nerve"], rows)
    return dict(ids=ids, completed=completed, exc=exc, pre=pre, post=post, w=w, annot_rows=rows,
                files=dict(neurons=comp, connectivity=conn, annotations=annot))


def expected_flywire(d):
    n = len(d["ids"])
    offsets, targets, counts = csr_expected(n, d["pre"], d["post"], d["w"], d["exc"])
    has_out = np.zeros(n, bool)
    has_out[d["pre"]] = True
    sign = [("+1" if d["exc"][i] > 0 else "-1") if has_out[i] else "" for i in range(n)]
    return dict(ids=[str(x) for x in d["ids"]], offsets=offsets, targets=targets, counts=counts, sign=sign)


# ---------------------------------------------------------------------------
# flywire-codex: neurons.csv.gz, classification.csv.gz, connections.csv.gz
# ---------------------------------------------------------------------------
CODEX_NT = ["ACH", "GABA", "GLUT", "DA", "SER", "OCT", ""]


def make_codex(out: Path, rng, n=300, pairs=3000):
    out.mkdir(parents=True, exist_ok=True)
    ids = root_ids(rng, n, base=720575940500000000)
    nt = [CODEX_NT[i] for i in rng.integers(0, len(CODEX_NT), size=n)]
    write_csv(out / "neurons.csv.gz", ["root_id", "group", "nt_type", "nt_type_score", "da_avg", "ser_avg", "gaba_avg",
                                       "glut_avg", "ach_avg", "oct_avg"],
              [[ids[i], f"AVLP.{i % 11}", nt[i], "0.81", "0.01", "0.0", "0.1", "0.05", "0.8", "0.04"] for i in range(n)])
    write_csv(out / "classification.csv.gz", ["root_id", "flow", "super_class", "class", "sub_class", "cell_type",
                                              "hemibrain_type", "hemilineage", "side", "nerve"],
              [[ids[i], "intrinsic", ["central", "optic"][i % 2], f"c{i % 5}", "", f"t{i}", "", "", "right", ""]
               for i in rng.permutation(n)])
    pre, post, _ = random_edges(rng, n, pairs)
    rows, rp, rq, rw = [], [], [], []
    neuropils = ["AVLP_R", "SMP_L", "MB_CA_R", "LO_L"]
    for k in range(pairs):
        for npil in neuropils[: 1 + (k % 3)]:
            c = int(rng.integers(1, 12))
            rows.append([ids[pre[k]], ids[post[k]], npil, c, nt[pre[k]]])
            rp.append(pre[k]), rq.append(post[k]), rw.append(c)
    write_csv(out / "connections_no_threshold.csv.gz", ["pre_root_id", "post_root_id", "neuropil", "syn_count", "nt_type"], rows)
    return dict(ids=ids, nt=nt, pre=np.array(rp), post=np.array(rq), w=np.array(rw),
                files=dict(neurons=out / "neurons.csv.gz", classification=out / "classification.csv.gz",
                           connections=out / "connections_no_threshold.csv.gz"))


def threshold(offsets, targets, counts, min_syn):
    keep = np.abs(counts) >= min_syn
    n = len(offsets) - 1
    pre = np.repeat(np.arange(n), np.diff(offsets))[keep]
    new = np.zeros(n + 1, dtype=np.int64)
    np.add.at(new, pre + 1, 1)
    return np.cumsum(new), targets[keep], counts[keep]


def expected_codex(d, min_syn=1):
    n = len(d["ids"])
    sign = np.array([fly_sign(x) for x in d["nt"]])
    o, t, c = csr_expected(n, d["pre"], d["post"], d["w"], sign)
    if min_syn > 1:
        o, t, c = threshold(o, t, c, min_syn)
    return dict(ids=[str(x) for x in d["ids"]], offsets=o, targets=t, counts=c,
                sign=["+1" if s > 0 else "-1" for s in sign])


# ---------------------------------------------------------------------------
# neuprint: traced-neurons.csv, traced-total-connections.csv, traced-roi-connections.csv
# ---------------------------------------------------------------------------
def make_neuprint(out: Path, rng, n=250, pairs=2500):
    out.mkdir(parents=True, exist_ok=True)
    ids = (rng.choice(10**6, size=n, replace=False) + 10**9).astype(np.int64)
    nts = ["acetylcholine", "gaba", "glutamate", "serotonin", ""]
    nt = [nts[i] for i in rng.integers(0, len(nts), size=n)]
    write_csv(out / "traced-neurons.csv", ["bodyId", "type", "instance", "predictedNt"],
              [[ids[i], f"T{i % 13}", f"T{i % 13}_R", nt[i]] for i in range(n)])
    key = np.unique(rng.integers(0, n, size=pairs) * n + rng.integers(0, n, size=pairs))
    pre, post = key // n, key % n
    rois = ["EB", "FB", "PB", "NO"]
    roi_rows, total = [], []
    for k in range(len(key)):
        s = 0
        for r in rois[: 1 + (k % 4)]:
            c = int(rng.integers(1, 9))
            roi_rows.append([ids[pre[k]], ids[post[k]], r, c])
            s += c
        total.append(s)
    write_csv(out / "traced-total-connections.csv", ["bodyId_pre", "bodyId_post", "weight"],
              [[ids[pre[k]], ids[post[k]], total[k]] for k in rng.permutation(len(key))])
    write_csv(out / "traced-roi-connections.csv", ["bodyId_pre", "bodyId_post", "roi", "weight"], roi_rows)
    return dict(ids=ids, nt=nt, pre=pre, post=post, w=np.array(total),
                files=dict(neurons=out / "traced-neurons.csv", total=out / "traced-total-connections.csv",
                           roi=out / "traced-roi-connections.csv"))


def expected_neuprint(d, use_nt):
    n = len(d["ids"])
    sign = np.array([fly_sign(x) if use_nt else 1 for x in d["nt"]])
    o, t, c = csr_expected(n, d["pre"], d["post"], d["w"], sign)
    return dict(ids=[str(x) for x in d["ids"]], offsets=o, targets=t, counts=c,
                sign=["+1" if s > 0 else "-1" for s in sign])


# ---------------------------------------------------------------------------
# malecns: the flat connectome's three Feather files
# ---------------------------------------------------------------------------
MALECNS_NT = ["acetylcholine", "gaba", "glutamate", "dopamine", "serotonin", "octopamine", "histamine", "unclear", None]


def make_malecns(out: Path, rng, n=500, m=8000, big=False):
    out.mkdir(parents=True, exist_ok=True)
    body = (rng.choice(n * 40, size=n, replace=False) + 10000).astype(np.int64)
    supers = ["cb_intrinsic", "ol_intrinsic", "vnc_intrinsic", "sensory", "motor", None, None]
    sc = [supers[i] for i in rng.integers(0, len(supers), size=n)]
    nt = [MALECNS_NT[i] for i in rng.integers(0, len(MALECNS_NT), size=n)]
    pre, post, w = random_edges(rng, n, m)
    ann = out / "body-annotations-male-cns-v0.9-minconf-0.5.feather"
    ntf = out / "body-neurotransmitters-male-cns-v0.9.feather"
    wts = out / "connectome-weights-male-cns-v0.9-minconf-0.5.feather"
    specs = [
        {"path": str(ann), "format": "feather", "columns": [
            col("bodyId", "int64", ints(body)), col("superclass", "dict", sc),
            col("class", "utf8", [None if s is None else f"{s}_c" for s in sc]),
            col("type", "utf8", [f"T{i % 17}" for i in range(n)]),
            col("somaSide", "dict", [["L", "R", None][i % 3] for i in range(n)])]},
        # Transmitters of every body but a few, in another order.
        {"path": str(ntf), "format": "feather", "columns": [
            col("bodyId", "int64", ints(body[np.argsort(-body)][: n - 3])),
            col("consensus_nt", "dict", [nt[i] for i in np.argsort(-body)][: n - 3])]},
    ]
    if big:
        ps, qs, ws = out / ".pre.npy", out / ".post.npy", out / ".w.npy"
        np.save(ps, body[pre]), np.save(qs, body[post]), np.save(ws, w.astype(np.int32))
        specs.append({"path": str(wts), "format": "feather", "columns": [
            col("body_pre", "int64", npy=ps), col("body_post", "int64", npy=qs), col("weight", "int32", npy=ws)]})
    else:
        specs.append({"path": str(wts), "format": "feather", "columns": [
            col("body_pre", "int64", ints(body[pre])), col("body_post", "int64", ints(body[post])),
            col("weight", "int32", [int(x) for x in w])]})
    write_tables(specs, out)
    if big:
        for p in (ps, qs, ws):
            os.unlink(p)
    missing = set(body[np.argsort(-body)][n - 3:].tolist())
    nt_of = {int(b): (None if int(b) in missing else nt[i]) for i, b in enumerate(body)}
    return dict(body=body, sc=sc, nt_of=nt_of, pre=pre, post=post, w=w,
                files=dict(annotations=ann, transmitters=ntf, weights=wts))


def expected_malecns(d, select_all=False):
    body, sc = d["body"], d["sc"]
    sel = np.array([select_all or s is not None for s in sc])
    chosen = np.sort(body[sel])
    n = len(chosen)
    where = {int(b): i for i, b in enumerate(chosen)}
    idx = np.array([where.get(int(b), -1) for b in body])
    p, q = idx[d["pre"]], idx[d["post"]]
    keep = (p >= 0) & (q >= 0)
    sign = np.array([fly_sign(d["nt_of"][int(b)] or "") for b in chosen])
    o, t, c = csr_expected(n, p[keep], q[keep], d["w"][keep], sign)
    return dict(ids=[str(x) for x in chosen], offsets=o, targets=t, counts=c,
                sign=["+1" if s > 0 else "-1" for s in sign], dropped=int((~keep).sum()))


# ---------------------------------------------------------------------------
# phase4c: the seed runtime's processed directory
# ---------------------------------------------------------------------------
def make_phase4c(out: Path, rng, n=300, m=5000, parquet=True):
    (out / "gpu").mkdir(parents=True, exist_ok=True)
    (out / "neuron-index").mkdir(parents=True, exist_ok=True)
    pre, post, w = random_edges(rng, n, m)
    order = np.lexsort((post, pre))
    pre, post, w = pre[order], post[order], w[order]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(indptr, pre + 1, 1)
    indptr = np.cumsum(indptr)
    np.save(out / "gpu/csr-indptr.int64.npy", indptr)
    np.save(out / "gpu/csr-indices.int32.npy", post.astype(np.int32))
    np.save(out / "gpu/csr-weights.int64.npy", w.astype(np.int64))
    (out / "gpu/csr-metadata.json").write_text(json.dumps({"neurons": n, "edges": int(m), "dtype": "int64"}))
    body = (rng.choice(n * 30, size=n, replace=False) + 5000).astype(np.int64)
    nts = ["acetylcholine", "gaba", "glutamate", "histamine", "dopamine", "unclear", "", None, " GABA "]
    nt = [nts[i] for i in rng.integers(0, len(nts), size=n)]
    fmt = "parquet" if parquet else "feather"
    specs = [
        {"path": str(out / "neuron-index/unified-metadata.parquet"), "format": fmt, "columns": [
            col("neuron_idx", "int64", ints(range(n))), col("body_id", "int64", ints(body)),
            col("annotation_superclass", "utf8", [f"s{i % 4}" for i in range(n)]),
            col("annotation_class", "utf8", [["visual", "olfactory", None][i % 3] for i in range(n)]),
            col("annotation_subclass", "utf8", [f"sub{i % 2}" for i in range(n)]),
            col("annotation_type", "utf8", [f"T{i}" for i in range(n)]),
            col("annotation_instance", "utf8", [f"T{i}_L" for i in range(n)]),
            col("side", "utf8", [["left", "right"][i % 2] for i in range(n)]),
            col("neurotransmitter", "utf8", nt)]},
        {"path": str(out / "neuron-index/body-id-neuron-idx.parquet"), "format": fmt, "columns": [
            col("body_id", "int64", ints(body[::-1])), col("neuron_idx", "int64", ints(range(n - 1, -1, -1)))]},
    ]
    write_tables(specs, out)
    policy = out / "policy.csv"
    policy.write_text("key,sign\nacetylcholine,+1\ngaba,-1\nglutamate,-1\nhistamine,-1\ndopamine,+1\n"
                      "unclear,-1\nunknown,+1\ndefault,error\n")
    return dict(body=body, nt=nt, pre=pre, post=post, w=w, policy=policy, dir=out)


def expected_phase4c(d):
    table = {"acetylcholine": 1, "gaba": -1, "glutamate": -1, "histamine": -1, "dopamine": 1, "unclear": -1}
    sign = np.array([1 if not (x or "").strip() else table[(x or "").strip().lower()] for x in d["nt"]])
    n = len(d["body"])
    o, t, c = csr_expected(n, d["pre"], d["post"], d["w"], sign)
    return dict(ids=[str(x) for x in d["body"]], offsets=o, targets=t, counts=c,
                sign=["+1" if s > 0 else "-1" for s in sign])


# ---------------------------------------------------------------------------
# edges: a generic edge list (CSV.gz, string ids) with a neuron table
# ---------------------------------------------------------------------------
def make_edges(out: Path, rng, n=200, m=3000):
    out.mkdir(parents=True, exist_ok=True)
    names = [f"N{i:04d}{'abc'[i % 3]}" for i in rng.permutation(n)]
    nts = ["ach", "gaba", "glu", "da"]
    nt = [nts[i] for i in rng.integers(0, 4, size=n)]
    write_csv(out / "cells.csv", ["cell", "kind", "transmitter", "Soma Side"],
              [[names[i], f"k{i % 5}", nt[i], ["L", "R"][i % 2]] for i in range(n)])
    pre, post, w = random_edges(rng, n, m)
    write_csv(out / "edges.csv.gz", ["from", "to", "synapses"], [[names[pre[k]], names[post[k]], w[k]] for k in range(m)])
    policy = out / "policy.csv"
    policy.write_text("key,sign\nach,+1\ngaba,-1\nglu,-1\nda,+1\n")
    return dict(names=names, nt=nt, pre=pre, post=post, w=w, policy=policy,
                files=dict(neurons=out / "cells.csv", edges=out / "edges.csv.gz"))


def expected_edges(d):
    n = len(d["names"])
    table = {"ach": 1, "gaba": -1, "glu": -1, "da": 1}
    sign = np.array([table[x] for x in d["nt"]])
    o, t, c = csr_expected(n, d["pre"], d["post"], d["w"], sign)
    return dict(ids=d["names"], offsets=o, targets=t, counts=c, sign=["+1" if s > 0 else "-1" for s in sign])
