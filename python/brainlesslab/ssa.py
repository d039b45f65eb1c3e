"""Stochastic replicate banks from Python (docs/solvers.md, "From Python").

    import numpy as np, brainlesslab as bl
    r = bl.run_ssa(species=["A", "B", "C"], x0=[100, 80, 0],
                   reactions=[{"rate": 0.01, "reactants": {"A": 1, "B": 1}, "products": {"C": 1}},
                              {"rate": 0.5, "reactants": {"C": 1}, "products": {"A": 1, "B": 1}}],
                   t=np.linspace(0, 5, 11), replicates=64, seed=7)
    r["counts"]          # replicates x times x species, int64, viewing the library's memory
    bl.run_ssa(plan="bank.toml")["counts"]   # = the record's counts.npy of `brainlesslab run`

The arrays are views of one C block owned by a capsule (the array's .base):
nothing is copied, and the block lives while any view does. Replicate r's
stream depends only on (seed, first + r): a bank is the same whatever its
size, the thread count or the slice it is run in (first=).
"""

import json

import numpy as np

from . import _core


def _stoichiometry(species, reactions):
    index = {s: i for i, s in enumerate(species)}
    if len(index) != len(species):
        raise ValueError("species names must be distinct")
    ns, nr = len(species), len(reactions)
    order = np.zeros((nr, ns), dtype=np.int64)
    change = np.zeros((nr, ns), dtype=np.int64)
    rate = np.zeros(nr, dtype=np.float64)
    for j, r in enumerate(reactions):
        unknown = set(r) - {"rate", "reactants", "products"}
        if unknown:
            raise ValueError("reaction %d: unknown keys %s (rate, reactants, products)" % (j, sorted(unknown)))
        rate[j] = float(r["rate"])
        for key, sign in (("reactants", -1), ("products", 1)):
            for name, k in dict(r.get(key) or {}).items():
                if name not in index:
                    raise ValueError("reaction %d: %s names unknown species %r (known: %s)"
                                     % (j, key, name, ", ".join(species)))
                if int(k) != k or k < 0:
                    raise ValueError("reaction %d: %s.%s must be a count >= 0, not %r" % (j, key, name, k))
                change[j, index[name]] += sign * int(k)
                if sign < 0:
                    order[j, index[name]] = int(k)
    return order, change, rate


def run_ssa(species=None, x0=None, reactions=None, t=None, *, plan=None, replicates=None, seed=0, method="direct",
            tau=0.0, max_events=100000000, threads=0, first=0):
    """Run replicates first .. first+replicates-1 of a bank of mass-action
    reactions (Gillespie's direct method, or "tau-leap" with leap tau:
    approximate) from counts x0 on the output grid t.

    reactions: a list of {"rate": k, "reactants": {name: order}, "products":
    {name: count}} as in a plan's [[ssa.reaction]]. plan="path.toml": an
    `operation = "ssa"` plan, loaded and resolved by the library (its species,
    reactions, grid, seed, method and replicates); then only first, threads
    and replicates (when given: a slice first .. first+replicates-1 of the
    plan's streams) apply, the other keywords are the plan's.
    replicates: 16 by default without a plan.

    Returns a dict: counts (replicates x times x species, int64), events
    (events or leaps per replicate, uint64), t, species, method, seed,
    approximate."""
    if plan is not None:
        import os

        v = json.loads(_core.ssa_plan(os.fspath(plan)))["ssa"]
        species = v["species"]
        rs = v["reactions"]
        order = np.array([r["order"] for r in rs], dtype=np.int64)
        change = np.array([r["change"] for r in rs], dtype=np.int64)
        rate = np.array([r["rate"] for r in rs], dtype=np.float64)
        x0 = np.array(v["x0"], dtype=np.int64)
        t = np.array(v["t"], dtype=np.float64)
        method, seed = v["method"], int(v["seed"])
        if replicates is None:
            replicates = int(v["replicates"])
        tau, max_events = float(v.get("tau", 0.0)), int(v["max_events"])
    else:
        if species is None or x0 is None or reactions is None or t is None:
            raise TypeError("run_ssa needs species, x0, reactions and t (or a plan)")
        species = [str(s) for s in species]
        order, change, rate = _stoichiometry(species, list(reactions))
        x0 = np.ascontiguousarray(x0, dtype=np.int64)
        if x0.shape != (len(species),):
            raise ValueError("x0 must have one count per species (%d), not shape %s" % (len(species), x0.shape))
        t = np.ascontiguousarray(t, dtype=np.float64)
        if replicates is None:
            replicates = 16
    r = _core.run_ssa(x0, change, order, rate, t, int(replicates), int(first), int(seed), str(method), float(tau),
                      int(max_events), int(threads))
    r.update(species=list(species), method=method, seed=int(seed), approximate=(method == "tau-leap"))
    return r
