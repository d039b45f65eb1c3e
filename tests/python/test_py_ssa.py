"""brainlesslab.run_ssa: SSA banks from Python, arrays back without a copy
(views whose base is the capsule that owns the C block), equal to the CLI's
record of the same plan byte for byte, replicate streams owned by their index
(bank of 16 = the first 16 of 64, a slice run alone = the bank's, 1 thread =
2 threads), A + B <-> C conserving its totals, and errors as ValueError
(bad arguments) or brainlesslab.Error (the library's)."""
import glob
import os
import subprocess

import numpy as np

import brainlesslab as bl
from support import CLI, TempDirCase, main

SPECIES = ["A", "B", "C"]
REACTIONS = [{"rate": 0.01, "reactants": {"A": 1, "B": 1}, "products": {"C": 1}},
             {"rate": 0.5, "reactants": {"C": 1}, "products": {"A": 1, "B": 1}}]
PLAN = """format = "brainlesslab-plan"
format_version = 4
id = "py-ssa"
operation = "ssa"
[ssa]
species = ["A", "B", "C"]
x0 = [100, 80, 0]
replicates = 24
seed = 7
t_end = 5.0
outputs = 11
{extra}
[[ssa.reaction]]
rate = 0.01
reactants = {{ A = 1, B = 1 }}
products = {{ C = 1 }}
[[ssa.reaction]]
rate = 0.5
reactants = {{ C = 1 }}
products = {{ A = 1, B = 1 }}
"""


def bank(**kw):
    args = dict(species=SPECIES, x0=[100, 80, 0], reactions=REACTIONS, t=np.linspace(0.0, 5.0, 11), seed=7)
    args.update(kw)
    return bl.run_ssa(**args)


class RunSsaTest(TempDirCase):
    def test_zero_copy(self):
        r = bank(replicates=8)
        c, e, t = r["counts"], r["events"], r["t"]
        self.assertEqual((c.shape, c.dtype, e.shape, e.dtype), ((8, 11, 3), np.int64, (8,), np.uint64))
        for a in (c, e, t):
            self.assertFalse(a.flags.owndata)
            self.assertEqual(type(a.base).__name__, "PyCapsule")
        self.assertIs(c.base, e.base)
        self.assertIs(c.base, t.base)
        # one block: counts, then events, then t
        self.assertEqual(e.__array_interface__["data"][0], c.__array_interface__["data"][0] + c.nbytes)
        self.assertEqual(r["species"], SPECIES)
        self.assertFalse(r["approximate"])
        first = c[0, -1].copy()
        del r, e, t
        self.assertTrue(np.array_equal(c[0, -1], first))  # the block outlives the dict while a view exists
        self.assertTrue(np.all(c[:, 0] == [100, 80, 0]))

    def test_equals_cli_record(self):
        for method, extra in (("direct", ""), ("tau-leap", 'method = "tau-leap"\ntau = 0.05')):
            root = os.path.join(self.tmp, method)
            plan = os.path.join(self.tmp, method + ".toml")
            with open(plan, "w") as fh:
                fh.write(PLAN.format(extra=extra))
            subprocess.run([CLI, "run", plan, "--root", root, "--quiet"], check=True, capture_output=True)
            d = glob.glob(os.path.join(root, "py-ssa-*"))[0]
            counts, events = np.load(os.path.join(d, "counts.npy")), np.load(os.path.join(d, "events.npy"))
            p = bl.run_ssa(plan=plan)
            self.assertTrue(np.array_equal(counts, p["counts"]), method)
            self.assertTrue(np.array_equal(events, p["events"]), method)
            self.assertEqual(p["approximate"], method == "tau-leap")
            kw = {"method": "tau-leap", "tau": 0.05} if method == "tau-leap" else {}
            q = bank(replicates=24, **kw)  # the same bank from keywords
            self.assertTrue(np.array_equal(counts, q["counts"]), method)
            # a slice of the plan's streams: replicates 20..23
            s = bl.run_ssa(plan=plan, first=20, replicates=4)
            self.assertTrue(np.array_equal(counts[20:], s["counts"]), method)

    def test_stream_ownership(self):
        b64 = bank(replicates=64, threads=1)
        b16 = bank(replicates=16, threads=2)
        tail = bank(replicates=16, first=48, threads=1)
        b64t2 = bank(replicates=64, threads=2)
        self.assertTrue(np.array_equal(b16["counts"], b64["counts"][:16]))
        self.assertTrue(np.array_equal(tail["counts"], b64["counts"][48:]))
        self.assertTrue(np.array_equal(tail["events"], b64["events"][48:]))
        self.assertTrue(np.array_equal(b64t2["counts"], b64["counts"]))
        c = b64["counts"]  # A + B <-> C keeps A + C and B + C in every replicate, at every time
        self.assertTrue(np.all(c[..., 0] + c[..., 2] == 100))
        self.assertTrue(np.all(c[..., 1] + c[..., 2] == 80))

    def test_errors(self):
        with self.assertRaises(ValueError):
            bank(reactions=[{"rate": 1.0, "reactants": {"D": 1}}])
        with self.assertRaises(ValueError):
            bank(x0=[1, 2])
        with self.assertRaises(ValueError):
            bank(replicates=0)
        with self.assertRaises(bl.Error) as e:
            bank(reactions=[{"rate": -1.0, "reactants": {"A": 1}}])
        self.assertIn("negative", str(e.exception))
        with self.assertRaises(bl.Error) as e:
            bank(replicates=4, max_events=10)
        self.assertIn("replicate 0", str(e.exception))
        with self.assertRaises(bl.Error):
            bl.run_ssa(plan=os.path.join(self.tmp, "missing.toml"))


if __name__ == "__main__":
    main()
