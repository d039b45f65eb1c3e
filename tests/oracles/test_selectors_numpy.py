"""Named populations and selectors against an independent NumPy computation.

A plan with [[population]] tables of every kind (exact values, globs, lists,
negation, numeric ranges, depth from another population, union, intersection,
exclusion, a seeded sample) is resolved by `brainlesslab check --full` on the
shipped larva connectome; every population's neurons must equal what NumPy
computes from the same connectome files (neurons.csv, offsets/targets.npy) with
Python's fnmatch, a breadth-first search of its own and the Philox stream of
blconn.py. Then the refusals: expect_count, a range on a text column, a
reference to a population defined below, an empty selection.
"""

import csv
import fnmatch
import json
import subprocess
import sys
import time

import numpy as np

import blconn

SEED = 20241002


def read_columns(conn_dir):
    with open(conn_dir / "neurons.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return {k: np.array([r[k] for r in rows], dtype=object) for k in rows[0]}


def bfs(graph, sources):
    depth = np.full(graph.n, -1, np.int64)
    depth[sources] = 0
    frontier = np.asarray(sources, np.int64)
    d = 0
    while len(frontier):
        d += 1
        nxt = np.concatenate([graph.targets[graph.offsets[s]:graph.offsets[s + 1]] for s in frontier]) \
            if len(frontier) else np.empty(0, np.int64)
        nxt = np.unique(nxt)
        nxt = nxt[depth[nxt] < 0]
        depth[nxt] = d
        frontier = nxt
    return depth


def glob_mask(values, patterns):
    return np.array([any(fnmatch.fnmatchcase(v, p) for p in patterns) for v in values])


def numeric_range(values, lo=None, hi=None):
    out = np.zeros(len(values), bool)
    for i, v in enumerate(values):
        if v == "":
            continue
        x = float(v)
        out[i] = (lo is None or x >= lo) and (hi is None or x <= hi)
    return out


def sample(idx, k, ordinal, seed):
    idx = np.asarray(idx, np.int64)
    w = blconn.philox4x32_10(0, idx, ordinal, 0xFFFFFFFF, seed & 0xFFFFFFFF, seed >> 32)[0]
    order = np.lexsort((idx, w))
    return np.sort(idx[order[:k]])


PLAN_HEAD = f"""format = "brainlesslab-plan"
format_version = 4
id = "selectors"
operation = "connectome"
[connectome]
path = "{{conn}}"
[run]
duration_ms = 10
seed = {SEED}
"""

POPULATIONS = """
[[population]]
name = "ORN"
select = {{ cell_type = "sensory", modality = "olfactory" }}
expect_count = {n_orn}
[[population]]
name = "PN_glob"
select = {{ cell_type = "PN*" }}
[[population]]
name = "glob_list"
select = {{ cell_type = ["?N", "[DK]*", "MBON"] }}
[[population]]
name = "not_sensory"
select = {{ cell_type = {{ not = ["sensory", "KC*"] }}, side = "left" }}
[[population]]
name = "cluster_range"
select = {{ cluster = {{ min = 10, max = 40.5 }} }}
[[population]]
name = "cluster_low"
select = {{ cluster = {{ max = 3 }} }}
[[population]]
name = "depth2"
from = "ORN"
depth = 2
[[population]]
name = "depth1to3_left"
from = "ORN"
depth = {{ min = 1, max = 3 }}
select = {{ side = "left" }}
[[population]]
name = "reach"
from = "ORN"
[[population]]
name = "u"
union = ["PN_glob", "depth2", "glob_list"]
[[population]]
name = "i"
intersect = ["reach", "not_sensory"]
exclude = ["cluster_low"]
[[population]]
name = "s"
union = ["u", "cluster_range"]
sample = 300
[[population]]
name = "ids"
ids = [{ids}]
"""


def check(plan_path):
    return subprocess.run([blconn.cli_path(), "check", "--full", str(plan_path)], capture_output=True, text=True)


def main():
    t0 = time.perf_counter()
    graph, conn, standin = blconn.shipped_connectome("larva")
    if standin:
        print("SKIP: the shipped larva connectome is absent")
        return 77
    cols = read_columns(conn)
    ct, side, mod, cluster = cols["cell_type"], cols["side"], cols["modality"], cols["cluster"]
    n = graph.n
    allidx = np.arange(n)
    orn = allidx[(ct == "sensory") & (mod == "olfactory")]
    expect = {}
    expect["ORN"] = orn
    expect["PN_glob"] = allidx[glob_mask(ct, ["PN*"])]
    expect["glob_list"] = allidx[glob_mask(ct, ["?N", "[DK]*", "MBON"])]
    not_sens = ~glob_mask(ct, ["sensory", "KC*"]) & (side == "left")
    expect["not_sensory"] = allidx[not_sens]
    expect["cluster_range"] = allidx[numeric_range(cluster, 10, 40.5)]
    expect["cluster_low"] = allidx[numeric_range(cluster, None, 3)]
    depth = bfs(graph, orn)
    expect["depth2"] = allidx[depth == 2]
    expect["depth1to3_left"] = allidx[(depth >= 1) & (depth <= 3) & (side == "left")]
    expect["reach"] = allidx[depth >= 0]
    expect["u"] = np.union1d(np.union1d(expect["PN_glob"], expect["depth2"]), expect["glob_list"])
    expect["i"] = np.setdiff1d(np.intersect1d(expect["reach"], expect["not_sensory"]), expect["cluster_low"])
    expect["s"] = sample(np.union1d(expect["u"], expect["cluster_range"]), 300, 11, SEED)
    ext = cols["external_id"]
    pick = np.array([5, 77, 1500, 2900])
    expect["ids"] = np.sort(pick)

    ok = []
    with blconn.TempDir() as tmp:
        plan = tmp / "p.toml"
        ids = ", ".join(f'"{ext[i]}"' for i in pick)
        plan.write_text(PLAN_HEAD.format(conn=conn) + POPULATIONS.format(n_orn=len(orn), ids=ids))
        r = check(plan)
        if r.returncode:
            print("FAIL: check refused the plan:", r.stderr.strip())
            return 1
        resolved = json.loads(r.stdout.split("\nplan hash:")[0])
        got = {p["name"]: np.array(p["neurons"]) for p in resolved["population"]}
        for name, want in expect.items():
            same = name in got and np.array_equal(got[name], want)
            print(f"{'ok ' if same else 'BAD'} population {name}: {len(got.get(name, []))} neurons "
                  f"(NumPy {len(want)})")
            ok.append(same and len(want) > 0)
        # The breakdown lines name every population with its size.
        for name, want in expect.items():
            line = [x for x in r.stdout.splitlines() if x.strip().startswith(f"population {name} ")]
            ok.append(bool(line) and f" {len(want)} neurons" in line[0])

        # Refusals: one line naming the file, the key and the fault.
        bad = {
            "expect_count": (POPULATIONS.format(n_orn=len(orn) + 1, ids=ids),
                             "population[0].expect_count", f"has {len(orn)} neurons, not the {len(orn) + 1}"),
            "range on text": ('[[population]]\nname = "x"\nselect = { cell_type = { min = 1 } }\n',
                              "population[0].select.cell_type", "not numeric"),
            "forward ref": ('[[population]]\nname = "a"\nunion = ["b"]\n[[population]]\nname = "b"\n'
                            'neurons = [1]\n', "population[0].union[0]", "defined below"),
            "empty": ('[[population]]\nname = "x"\nselect = { cell_type = "nope*" }\n',
                      "population[0].select", "empty selection"),
            "sample too big": ('[[population]]\nname = "x"\nneurons = [1, 2]\nsample = 3\n',
                               "population[0].sample", "more than the 2"),
        }
        for label, (body, key, text) in bad.items():
            plan.write_text(PLAN_HEAD.format(conn=conn) + body)
            r = check(plan)
            lines = r.stderr.strip().splitlines()
            good = r.returncode == 1 and len(lines) == 1 and key in lines[0] and text in lines[0] \
                and str(plan) in lines[0]
            print(f"{'ok ' if good else 'BAD'} refusal {label}: {r.stderr.strip()}")
            ok.append(good)
    print(f"{'PASS' if all(ok) else 'FAIL'}: {sum(ok)}/{len(ok)} in {time.perf_counter() - t0:.1f} s")
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
