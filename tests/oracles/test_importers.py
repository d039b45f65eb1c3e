"""Every importer on generated data of its real format (tests/oracles/import_data.py):
the connectome it writes must equal an independent NumPy computation over the
generated arrays (neuron order and ids, CSR offsets, targets, signed counts,
sign column), record every input's SHA-256 in the manifest, and be the same
bytes when imported twice. Bad inputs fail with one line naming the place.

Skips (77) without the npm oracles (cd tests/js && npm ci), which write the
Feather and Parquet inputs. Until the Parquet reader is in the build, the
Parquet inputs are written as Feather (same names, same columns) and the
output says so.
"""
import csv
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import import_data as D  # noqa: E402

CLI = os.environ.get("BL_CLI")
BUILD = Path(os.environ.get("BL_BUILD_DIR", D.SOURCE_DIR / "build"))
if not (D.JS_DIR / "node_modules" / "apache-arrow").is_dir():
    print("skipped: no tests/js/node_modules (run: cd tests/js && npm ci)")
    sys.exit(77)
if not CLI:
    print("BL_CLI must name the brainlesslab binary")
    sys.exit(2)

failures = []


def male_cns_plan(work, rng):
    """plans/male-cns-visual-audit.toml runs on what `import malecns` writes:
    male-CNS-format Feather files carrying the visual vocabulary (superclass,
    class, type as the release names them) are imported, and the shipped plan,
    pointed at the import, resolves every population (none empty) and runs."""
    n, m = 400, 6000
    out = work / "mcns-visual"
    out.mkdir(parents=True, exist_ok=True)
    body = (rng.choice(n * 40, size=n, replace=False) + 10000).astype(np.int64)
    roles = [("ol_sensory", "visual", ["R1-6", "R7", "R8"]), ("ol_intrinsic", None, ["L1", "L2", "C2", "T1", "Lawf1"]),
             ("ol_intrinsic", None, ["Mi1", "Tm3", "Dm8", "TmY5a"]), ("ol_intrinsic", None, ["T4a", "T5b", "LPi1"]),
             ("ol_intrinsic", None, ["LC4", "LT1", "Li2"]), ("ol_intrinsic", None, ["Y3", "Pm2"]),
             ("visual_projection", None, ["LC10", "LPLC2"]), ("visual_centrifugal", None, ["C5"]),
             ("cb_intrinsic", None, ["FB1", "PFN"]), ("descending", None, ["DNa02"])]
    pick = [roles[i % len(roles)] for i in range(n)]
    sc = [r[0] for r in pick]
    cls = [r[1] for r in pick]
    typ = [r[2][(i // len(roles)) % len(r[2])] for i, r in enumerate(pick)]
    pre, post, w = D.random_edges(rng, n, m)
    files = {"annotations": out / "body-annotations-male-cns-v0.9-minconf-0.5.feather",
             "transmitters": out / "body-neurotransmitters-male-cns-v0.9.feather",
             "weights": out / "connectome-weights-male-cns-v0.9-minconf-0.5.feather"}
    D.write_tables([
        {"path": str(files["annotations"]), "format": "feather", "columns": [
            D.col("bodyId", "int64", D.ints(body)), D.col("superclass", "dict", sc), D.col("class", "utf8", cls),
            D.col("type", "utf8", typ)]},
        {"path": str(files["transmitters"]), "format": "feather", "columns": [
            D.col("bodyId", "int64", D.ints(body)), D.col("consensus_nt", "dict", ["acetylcholine"] * n)]},
        {"path": str(files["weights"]), "format": "feather", "columns": [
            D.col("body_pre", "int64", D.ints(body[pre])), D.col("body_post", "int64", D.ints(body[post])),
            D.col("weight", "int32", [int(x) for x in w])]}], out)
    conn = work / "o-mcns-visual"
    run(["malecns", *[x for k, v in files.items() for x in ("--" + k, v)], "--out", conn])
    text = (D.SOURCE_DIR / "plans" / "male-cns-visual-audit.toml").read_text()
    text = text.replace('path = "../data/connectomes/male-cns-v1.0"', 'path = "%s"' % conn)
    plan = work / "male-cns-visual-audit.toml"
    plan.write_text(text)
    r = subprocess.run([CLI, "check", str(plan)], capture_output=True, text=True)
    if r.returncode != 0:
        failures.append("male-cns-visual-audit.toml on `import malecns` output: %s" % r.stderr.strip())
        return
    r = subprocess.run([CLI, "run", str(plan), "--root", str(work / "mcns-rec"), "--quiet"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        failures.append("male-cns-visual-audit.toml run on `import malecns` output: %s" % r.stderr.strip())
        return
    audit = json.loads((Path(r.stdout.strip()) / "audit.json").read_text())
    empty = [p["name"] for p in audit["populations"] if p["size"] == 0]
    if empty:
        failures.append("male-cns-visual-audit.toml: empty populations on `import malecns` output: %s" % empty)
    else:
        print("ok   male-cns-visual-audit.toml runs on `import malecns` output (%d populations)"
              % len(audit["populations"]))


def run(args, expect_ok=True):
    r = subprocess.run([CLI, "import", *map(str, args)], capture_output=True, text=True)
    if expect_ok and r.returncode != 0:
        raise AssertionError(f"import {' '.join(map(str, args))} failed ({r.returncode}): {r.stderr.strip()}")
    return r


def load(out: Path):
    with open(out / "neurons.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return dict(ids=[r["external_id"] for r in rows], sign=[r["sign"] for r in rows], rows=rows,
                offsets=np.load(out / "offsets.npy"), targets=np.load(out / "targets.npy"),
                counts=np.load(out / "counts.npy"), manifest=json.loads((out / "manifest.json").read_text()))


def sha(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def check(label, out: Path, exp, inputs):
    got = load(out)
    problems = []
    if got["ids"] != exp["ids"]:
        first = next((i for i, (a, b) in enumerate(zip(got["ids"], exp["ids"])) if a != b), min(len(got["ids"]), len(exp["ids"])))
        problems.append(f"neuron ids differ (first at {first}; {len(got['ids'])} vs {len(exp['ids'])})")
    for k in ("offsets", "targets", "counts"):
        if not np.array_equal(got[k], exp[k]):
            problems.append(f"{k} differ")
    if got["sign"] != exp["sign"]:
        problems.append("sign column differs")
    source = got["manifest"]["source"]
    for p in inputs:
        if sha(p) not in source:
            problems.append(f"manifest lacks the SHA-256 of {Path(p).name}")
    if problems:
        failures.append(f"{label}: " + "; ".join(problems))
        print(f"FAIL importer {label}: " + "; ".join(problems))
    else:
        print(f"importer {label}: {len(exp['ids'])} neurons, {len(exp['targets'])} edges, "
              f"{int(np.abs(exp['counts']).sum())} synapses equal to the NumPy computation")
    return got


def reimport_same(label, args, first: Path, work: Path):
    again = work / (first.name + "-again")
    run([*args, "--out", again])
    diff = [f.name for f in sorted(first.iterdir()) if f.read_bytes() != (again / f.name).read_bytes()]
    if diff:
        failures.append(f"{label}: re-import differs in {diff}")
        print(f"FAIL importer {label}: re-import differs in {diff}")


def expect_fail(label, args, needles):
    r = run(args, expect_ok=False)
    lines = r.stderr.strip().splitlines()
    ok = r.returncode == 1 and len(lines) == 1 and all(n in lines[0] for n in needles)
    print(("ok   " if ok else "FAIL ") + f"{label}: rc {r.returncode}: {r.stderr.strip()}")
    if not ok:
        failures.append(f"{label}: expected one line with {needles}, rc 1")


def parquet_readable(work: Path) -> bool:
    probe = work / "probe.parquet"
    D.write_tables([{"path": str(probe), "format": "parquet", "columns": [D.col("a", "int64", ["1"])]}], work)
    r = subprocess.run([str(BUILD / "tests" / "table_read"), str(probe)], capture_output=True, text=True)
    return r.returncode == 0


def main():
    rng = np.random.default_rng(20251201)
    with tempfile.TemporaryDirectory(prefix="bl_importers_") as tmp:
        work = Path(tmp)
        parquet = parquet_readable(work)
        if not parquet:
            print("note: this build cannot read Parquet yet: Parquet inputs are written as Feather under the same names")

        # flywire
        d = D.make_flywire(work / "fw", rng, parquet=parquet)
        f = d["files"]
        args = ["flywire", "--neurons", f["neurons"], "--connectivity", f["connectivity"], "--annotations", f["annotations"]]
        run([*args, "--out", work / "o-flywire"])
        got = check("flywire", work / "o-flywire", D.expected_flywire(d), f.values())
        annotated = sum(1 for r in got["rows"] if r["super_class"])
        if annotated != int(len(d["ids"]) * 0.95) or got["manifest"]["name"] != "flywire-v783":
            failures.append("flywire: annotations or name wrong")
        reimport_same("flywire", args, work / "o-flywire", work)
        # A row whose Presynaptic_ID is not the id its index names.
        bad = dict(d)
        bad_pre = d["pre"].copy()
        ids = d["ids"].copy()
        D.write_tables([{"path": str(work / "fw" / "bad.parquet"), "format": "parquet" if parquet else "feather", "columns": [
            D.col("Presynaptic_ID", "int64", D.ints(np.where(np.arange(len(bad_pre)) == 7, ids[0] + 1, ids[bad_pre]))),
            D.col("Postsynaptic_ID", "int64", D.ints(ids[d["post"]])),
            D.col("Presynaptic_Index", "int64", D.ints(bad_pre)), D.col("Postsynaptic_Index", "int64", D.ints(d["post"])),
            D.col("Connectivity", "int64", D.ints(d["w"])), D.col("Excitatory", "int64", D.ints(d["exc"][bad_pre]))]}], work)
        expect_fail("flywire id mismatch", ["flywire", "--neurons", f["neurons"], "--connectivity", work / "fw" / "bad.parquet",
                                            "--out", work / "x1"],
                    ["bad.parquet: 1 rows whose Presynaptic_ID/Postsynaptic_ID disagree", "row 8: Presynaptic_ID"])

        # flywire-codex
        d = D.make_codex(work / "codex", rng)
        f = d["files"]
        for min_syn in (1, 6):
            args = ["flywire-codex", "--neurons", f["neurons"], "--classification", f["classification"],
                    "--connections", f["connections"], "--min-synapses", min_syn]
            out = work / f"o-codex-{min_syn}"
            run([*args, "--out", out])
            check(f"flywire-codex --min-synapses {min_syn}", out, D.expected_codex(d, min_syn), f.values())
        reimport_same("flywire-codex", args, out, work)
        D.write_csv(work / "codex" / "unknown.csv.gz", ["pre_root_id", "post_root_id", "neuropil", "syn_count"],
                    [[d["ids"][0], d["ids"][1], "LO_L", 3], [d["ids"][0], 12345, "LO_L", 3]])
        expect_fail("codex unknown id", ["flywire-codex", "--neurons", f["neurons"], "--connections",
                                         work / "codex" / "unknown.csv.gz", "--out", work / "x2"],
                    ["unknown.csv.gz: column post_root_id, row 2: unknown neuron id 12345"])
        D.write_csv(work / "codex" / "dup.csv.gz", ["root_id", "nt_type"], [[1, "ACH"], [2, "GABA"], [1, "ACH"]])
        expect_fail("codex duplicate id", ["flywire-codex", "--neurons", work / "codex" / "dup.csv.gz", "--connections",
                                           f["connections"], "--out", work / "x3"],
                    ["dup.csv.gz: column root_id, row 3: id 1 given twice (first at row 1)"])

        # neuprint: total connections, and the same from ROI rows only
        d = D.make_neuprint(work / "np", rng)
        f = d["files"]
        run(["neuprint", "--neurons", f["neurons"], "--connections", f["total"], "--out", work / "o-np"])
        check("neuprint total", work / "o-np", D.expected_neuprint(d, False), [f["neurons"], f["total"]])
        args = ["neuprint", "--neurons", f["neurons"], "--roi-connections", f["roi"], "--nt", "predictedNt"]
        run([*args, "--out", work / "o-np-roi"])
        check("neuprint roi --nt", work / "o-np-roi", D.expected_neuprint(d, True), [f["neurons"], f["roi"]])
        reimport_same("neuprint", args, work / "o-np-roi", work)

        # malecns: default selection, then every body
        d = D.make_malecns(work / "mcns", rng)
        f = d["files"]
        args = ["malecns", "--annotations", f["annotations"], "--transmitters", f["transmitters"], "--weights", f["weights"]]
        r = run([*args, "--out", work / "o-mcns"])
        exp = D.expected_malecns(d)
        check("malecns", work / "o-mcns", exp, f.values())
        if f"{exp['dropped']} rows" not in r.stderr:
            failures.append(f"malecns: report does not count the {exp['dropped']} dropped rows: {r.stderr}")
        reimport_same("malecns", args, work / "o-mcns", work)
        run([*args, "--select", "all", "--out", work / "o-mcns-all"])
        check("malecns --select all", work / "o-mcns-all", D.expected_malecns(d, True), f.values())
        male_cns_plan(work, rng)

        # phase4c
        d = D.make_phase4c(work / "p4c", rng, parquet=parquet)
        args = ["phase4c", "--dir", d["dir"], "--sign-policy", d["policy"]]
        run([*args, "--out", work / "o-p4c"])
        check("phase4c", work / "o-p4c", D.expected_phase4c(d),
              [d["dir"] / "gpu/csr-indptr.int64.npy", d["dir"] / "neuron-index/unified-metadata.parquet"])
        reimport_same("phase4c", args, work / "o-p4c", work)
        (work / "strict.csv").write_text("key,sign\nacetylcholine,+1\n")
        expect_fail("phase4c unmapped transmitter", ["phase4c", "--dir", d["dir"], "--sign-policy", work / "strict.csv",
                                                     "--out", work / "x4"], ["column neurotransmitter, row", "not mapped"])

        # edges: string ids, a neuron table, transmitters through a policy file
        d = D.make_edges(work / "edges", rng)
        f = d["files"]
        args = ["edges", "--edges", f["edges"], "--pre", "from", "--post", "to", "--weight", "synapses",
                "--neurons", f["neurons"], "--id", "cell", "--nt", "transmitter", "--sign-policy", d["policy"]]
        run([*args, "--out", work / "o-edges"])
        got = check("edges", work / "o-edges", D.expected_edges(d), f.values())
        if "soma_side" not in got["rows"][0] or "kind" not in got["rows"][0]:
            failures.append("edges: neuron table columns are not metadata")
        reimport_same("edges", args, work / "o-edges", work)
        # edges: integer ids in Parquet (Feather until Parquet reads), a +1/-1 column, no neuron table:
        # the neurons are the ids seen, ascending.
        n, m = 150, 2000
        ids = np.sort(rng.choice(10**12, size=n, replace=False)) + 10**12
        sgn = np.where(rng.random(n) < 0.7, 1, -1)
        pre, post, w = D.random_edges(rng, n, m)
        epath = work / "edges" / ("signed.parquet" if parquet else "signed.feather")
        D.write_tables([{"path": str(epath), "format": "parquet" if parquet else "feather", "columns": [
            D.col("pre", "int64", D.ints(ids[pre])), D.col("post", "int64", D.ints(ids[post])),
            D.col("n", "int32", [int(x) for x in w]), D.col("s", "int64", D.ints(sgn[pre]))]}], work)
        run(["edges", "--edges", epath, "--pre", "pre", "--post", "post", "--weight", "n", "--sign", "s",
             "--out", work / "o-edges-signed"])
        seen = np.unique(np.concatenate([pre, post]))
        remap = np.full(n, -1)
        remap[seen] = np.arange(len(seen))
        o, t, c = D.csr_expected(len(seen), remap[pre], remap[post], w, sgn[seen])
        has_out = np.zeros(len(seen), bool)
        has_out[remap[pre]] = True
        check("edges --sign (no neuron table)", work / "o-edges-signed",
              dict(ids=[str(x) for x in ids[seen]], offsets=o, targets=t, counts=c,
                   sign=[("+1" if sgn[seen][i] > 0 else "-1") if has_out[i] else "" for i in range(len(seen))]), [epath])

    if failures:
        for f in failures:
            print("FAIL " + str(f))
        print(f"importers: {len(failures)} failures")
        return 1
    print("importers: all equal to the NumPy computations")
    return 0


sys.exit(main())
