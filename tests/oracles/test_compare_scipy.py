"""`brainlesslab compare` against SciPy / NumPy.

Four larva runs: A, A again (same plan: must be IDENTICAL, exit 0), B (LNs
silenced: DIFFERENT, exit 3) and C (A's plan with another seed). A and B share
their input draws (same seed, trials, duration), so A vs B is tested paired;
A vs C is not, so it is tested by Welch. For both, every neuron's row of
rate_differences.csv is recomputed from the two records' counts.npy: means,
difference, Cohen's d (paired: d_z over the differences; Welch: pooled SD), t,
its degrees of freedom and two-sided p (scipy.stats.ttest_rel /
scipy.stats.ttest_ind with equal_var=False), the neuron's status (tested, or
why not) and Benjamini-Hochberg q (NumPy); the neuron's external id and cell
type come from the connectome. The comparison is itself a sealed record that
verifies.
"""
import csv
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

import blconn

PLAN = """format = "brainlesslab-plan"
format_version = 4
id = "{id}"
operation = "connectome"
[connectome]
path = "{conn}"
[[stimulus]]
name = "ORN"
select = {{ cell_type = "sensory", modality = "olfactory" }}
rate_hz = 150.0
{extra}
[run]
trials = 8
duration_ms = 250.0
seed = {seed}
backend = "cpu"
"""


def cli(*args):
    return subprocess.run([blconn.cli_path(), *map(str, args)], capture_output=True, text=True)


def bh(p):
    q = np.full(len(p), np.nan)
    idx = np.flatnonzero(~np.isnan(p))
    order = idx[np.lexsort((idx, p[idx]))]
    m = len(order)
    adj = p[order] * m / np.arange(1, m + 1)
    q[order] = np.minimum(1.0, np.minimum.accumulate(adj[::-1])[::-1])
    return q


def close(a, b, rel=1e-9):
    a, b = np.asarray(a, float), np.asarray(b, float)
    same_nan = np.isnan(a) == np.isnan(b)
    fin = ~np.isnan(a) & ~np.isnan(b)
    return bool(np.all(same_nan) and np.all(np.abs(a[fin] - b[fin]) <= rel * np.maximum(1e-300, np.abs(b[fin]))
                                             + 1e-15))


def main():
    t0 = time.perf_counter()
    _, conn, standin = blconn.shipped_connectome("larva")
    if standin:
        print("SKIP: the shipped larva connectome is absent")
        return 77
    ok = []
    with blconn.TempDir() as tmp:
        recs = {}
        for name, extra, seed in (("a", "", 5), ("a2", "", 5),
                                  ("b", '[[silence]]\nname = "LN"\nselect = { cell_type = "LN" }', 5), ("c", "", 6)):
            p = tmp / f"{name}.toml"
            p.write_text(PLAN.format(id=name, conn=conn, extra=extra, seed=seed))
            r = cli("run", p, "--root", tmp / "rec", "--quiet")
            assert r.returncode == 0, r.stderr
            recs[name] = Path(r.stdout.strip())
        same = cli("compare", recs["a"], recs["a2"], "--root", tmp / "cmp")
        ok.append(same.returncode == 0 and "IDENTICAL" in same.stdout)
        print(f"{'ok ' if ok[-1] else 'BAD'} A vs A: exit {same.returncode}")
        with open(Path(conn) / "neurons.csv", newline="") as f:
            meta = list(csv.DictReader(f))
        for other, paired in (("b", True), ("c", False)):
            diff = cli("compare", recs["a"], recs[other], "--root", tmp / "cmp", "--quiet")
            ok.append(diff.returncode == 3)
            print(f"{'ok ' if ok[-1] else 'BAD'} A vs {other.upper()}: exit {diff.returncode} {diff.stderr.strip()}")
            rec = Path(diff.stdout.strip())
            ok.append(cli("verify", rec).returncode == 0)
            report = json.loads((rec / "compare.json").read_text())
            ok.append(report["verdict"] == {"spikes_identical": False, "counts_identical": False,
                                            "final_state_identical": False})
            ok.append(report["rates"]["test"].startswith("paired" if paired else "Welch"))
            print(f"{'ok ' if ok[-1] else 'BAD'} test: {report['rates']['test']}")
            ca = np.load(recs["a"] / "counts.npy") / 0.25
            cb = np.load(recs[other] / "counts.npy") / 0.25
            with open(rec / "rate_differences.csv", newline="") as f:
                rows = list(csv.DictReader(f))
            ids = [r["external_id"] for r in rows]
            types = [r["cell_type"] for r in rows]
            ok.append(ids == [m["external_id"] for m in meta] and types == [m.get("cell_type", "") for m in meta])
            print(f"{'ok ' if ok[-1] else 'BAD'} rows name each neuron (external id, cell type)")
            numeric = ("mean_a_hz", "mean_b_hz", "diff_hz", "cohen_d", "t", "df", "p", "q_bh")
            got = {k: np.array([float(r[k]) if r[k] != "" else np.nan for r in rows]) for k in numeric}
            status = np.array([r["status"] for r in rows])
            ma, mb = ca.mean(0), cb.mean(0)
            with np.errstate(all="ignore"):
                if paired:
                    dd = cb - ca
                    vd = dd.var(0, ddof=1)
                    regular = vd > 0
                    t, p = stats.ttest_rel(cb, ca, axis=0)
                    df = np.full(len(ma), len(ca) - 1.0)
                    d = dd.mean(0) / np.sqrt(vd)
                    flat = ~regular & (dd.mean(0) == 0)
                else:
                    va, vb = ca.var(0, ddof=1), cb.var(0, ddof=1)
                    na, nb = len(ca), len(cb)
                    pooled = np.sqrt(((na - 1) * va + (nb - 1) * vb) / (na + nb - 2))
                    regular = (va + vb) > 0
                    t, p = stats.ttest_ind(cb, ca, axis=0, equal_var=False)
                    se2 = va / na + vb / nb
                    df = se2 ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
                    d = (mb - ma) / pooled
                    flat = ~regular & (mb == ma)
            # Neurons that do not vary are reported by their status, never as t = d = inf.
            deg = ~regular
            want_status = np.where(regular, "tested", np.where(flat, "constant_equal", "constant_differs"))
            ok.append(np.array_equal(status, want_status))
            print(f"{'ok ' if ok[-1] else 'BAD'} status: {int(regular.sum())} tested, {int(flat.sum())} "
                  f"constant_equal, {int((deg & ~flat).sum())} constant_differs")
            for arr in (t, p, d, df):
                arr[deg] = np.nan
            checks = {"mean_a_hz": ma, "mean_b_hz": mb, "diff_hz": mb - ma, "cohen_d": d, "t": t, "df": df,
                      "p": p, "q_bh": bh(p)}
            for k, want in checks.items():
                good = close(got[k][regular], want[regular]) and np.array_equal(got[k][deg], want[deg],
                                                                                 equal_nan=True)
                print(f"{'ok ' if good else 'BAD'} {k}: {int(regular.sum())} neurons with variance, "
                      f"{int(deg.sum())} without")
                ok.append(good)
            sig = int(np.sum(bh(p) < 0.05))
            ok.append(report["rates"]["significant_q_below_alpha"] == sig and (sig > 0 or not paired))
            print(f"{'ok ' if ok[-1] else 'BAD'} significant neurons: {sig}")
        # A screen record needs a condition; a bad reference is one line.
        bad = cli("compare", f"{recs['a']}@1", recs["b"], "--root", tmp / "cmp")
        ok.append(bad.returncode == 1 and "not a screen" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1)
    print(f"{'PASS' if all(ok) else 'FAIL'}: {sum(ok)}/{len(ok)} in {time.perf_counter() - t0:.1f} s")
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
