"""The flyvis operation from Python (docs/solvers.md, "The flyvis
application"): bl.run_plan seals the record and its arrays come back as NumPy
arrays (rec["grad_tau.npy"], ...); they are compared with PyTorch autograd
through the same Euler trajectory, built from the independent construction of
tests/oracles/test_flyvis_torch.py (trajectory bit for bit, gradients to
1e-11 normwise)."""
import json
import os
import sys
import tempfile
import unittest

import numpy as np

import brainlesslab as bl

from support import SOURCE

sys.path.insert(0, os.path.join(SOURCE, "tests", "oracles"))
JSON = os.path.join(SOURCE, "data", "drosophila-optic-lobe-flyvis", "fib25-fib19_v2.2.json")


class Flyvis(unittest.TestCase):
    def test_record_arrays_against_torch(self):
        try:
            import test_flyvis_torch as oracle  # needs torch and scipy (Debian)
        except SystemExit:
            self.skipTest("torch or scipy missing")
        with tempfile.TemporaryDirectory() as d:
            plan = os.path.join(d, "fv.toml")
            # Parameters of few digits: the manifest's copy of the plan is
            # printed by cJSON, which may drop a last digit of a 17-digit
            # number (its round-trip test has a tolerance), and the torch side
            # reads them back from there.
            tau = [round(0.03 + 0.01 * (t % 5), 6) for t in range(65)]
            bias = [round(0.1 * (t % 9) - 0.2, 6) for t in range(65)]
            strength = [round(0.0005 * (1 + k % 7), 6) for k in range(605)]
            with open(plan, "w") as f:
                f.write('format = "brainlesslab-plan"\nformat_version = 4\nid = "fv"\noperation = "flyvis"\n'
                        '[flyvis]\nconnectome = "%s"\nextent = 2\nsteps = 30\nkeep = "all"\nobjective = "T5b"\n'
                        'edge_speed = 80.0\ntau = %r\nbias = %r\nstrength = %r\n' % (JSON, tau, bias, strength))
            rec = bl.run_plan(plan, root=os.path.join(d, "rec"))
            self.assertTrue(rec.verify())
            V, cells, s = rec["V.npy"], rec["cells.npy"], rec["summary.json"]
            g = [rec["grad_%s.npy" % k] for k in ("tau", "bias", "strength")]
            p = rec.plan["flyvis"]
            self.assertEqual((p["tau"], p["bias"], p["strength"]), (tau, bias, strength))
            with open(JSON) as f:
                spec = json.load(f)
            pc, pe, pn = oracle.build(spec, 2)
            self.assertTrue(np.array_equal(cells, pc))
            names = s["cell_types"]
            etypes = np.array([[names.index(e["src"]), names.index(e["tar"]), e["sign"]] for e in s["edge_types"]],
                              dtype=np.int64)
            inputs = [names.index(n) for n in spec["input_units"]]
            tV, tJ, gt, gb, gs = oracle.torch_run(d, pc, pe, pn, etypes, np.array(p["tau"]), np.array(p["bias"]),
                                                  np.array(p["strength"]), p["dt"], p["steps"], p["edge_speed"],
                                                  p["edge_start"], p["edge_on"], p["edge_off"],
                                                  names.index("T5b"), inputs)
            self.assertTrue(np.array_equal(V, tV), "trajectory differs from torch")
            for c, t in zip(g, (gt, gb, gs)):
                rel = np.max(np.abs(c - t)) / np.max(np.abs(t))
                self.assertLessEqual(rel, 1e-11)


if __name__ == "__main__":
    unittest.main()
