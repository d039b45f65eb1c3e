"""brainlesslab.solve_ode: systems in the model language and built-ins solved
from Python, arrays back without a copy (views whose base is the capsule that
owns the C block), equal to the CLI's record of the same plan and to a NumPy
loop, gradients against the analytic ones, errors as brainlesslab.Error."""
import glob
import json
import os
import subprocess
import sys

import numpy as np

import brainlesslab as bl
from support import CLI, TempDirCase, main

VDP = "dx/dt = v : 1\ndv/dt = mu * (1 - x**2) * v - x : 1"


def rk4_numpy(f, t, y0, sub):
    y, out = y0.copy(), [y0.copy()]
    for k in range(len(t) - 1):
        h = (t[k + 1] - t[k]) / float(sub)
        for _ in range(sub):
            hh, h6 = h * 0.5, h / 6.0
            k1 = f(y)
            k2 = f(y + hh * k1)
            k3 = f(y + hh * k2)
            k4 = f(y + h * k3)
            y = y + h6 * (((k1 + 2.0 * k2) + 2.0 * k3) + k4)
        out.append(y)
    return np.array(out)


class SolveOdeTest(TempDirCase):
    def test_language_system_zero_copy(self):
        t = np.linspace(0.0, 10.0, 11)
        r = bl.solve_ode(VDP, parameters={"mu": 1.0}, init={"x": 2.0}, observe={"energy": "x**2 + v*v"}, t=t,
                         method="rk4", substeps=20, sensitivities=True)
        y, o, s = r["y"], r["observations"], r["sensitivities"]
        self.assertEqual((y.shape, o.shape, s.shape), ((11, 2), (11, 1), (11, 2, 1)))
        # views of one C block: the base is the capsule that owns it, for every array
        for a in (r["t"], y, o, s):
            self.assertFalse(a.flags.owndata)
            self.assertEqual(type(a.base).__name__, "PyCapsule")
        self.assertIs(y.base, o.base)
        lo, hi = y.__array_interface__["data"][0], s.__array_interface__["data"][0]
        self.assertEqual(o.__array_interface__["data"][0], lo + y.nbytes)  # contiguous in the same block
        self.assertGreater(hi, lo)
        f = lambda z: np.array([z[1], 1.0 * (1.0 - z[0] * z[0]) * z[1] - z[0]])  # noqa: E731
        ref = rk4_numpy(f, t, np.array([2.0, 0.0]), 20)
        self.assertTrue(np.array_equal(ref.view(np.uint64), y.view(np.uint64)))
        self.assertTrue(np.array_equal((ref[:, 0] * ref[:, 0] + ref[:, 1] * ref[:, 1]).view(np.uint64),
                                       o[:, 0].view(np.uint64)))
        self.assertEqual(r["state_names"], ["x", "v"])
        self.assertEqual(r["param_names"], ["mu"])
        self.assertEqual(r["stats"]["steps_accepted"], 200)
        del r, o, s
        self.assertEqual(float(y[0, 0]), 2.0)  # the block outlives the dict while a view exists

    def test_equals_cli_record(self):
        plan = os.path.join(self.tmp, "p.toml")
        with open(plan, "w") as fh:
            fh.write('format = "brainlesslab-plan"\nformat_version = 4\nid = "py-ode"\noperation = "ode"\n[ode]\n'
                     f'equations = """\n{VDP}\n"""\nmethod = "rk4"\nsubsteps = 20\nt_end = 10.0\noutputs = 11\n'
                     'observe = { energy = "x**2 + v*v" }\n[ode.parameters]\nmu = 1.0\n[ode.init]\nx = 2.0\n')
        subprocess.run([CLI, "run", plan, "--root", self.tmp, "--quiet"], check=True, capture_output=True)
        d = glob.glob(os.path.join(self.tmp, "py-ode-*"))[0]
        r = bl.solve_ode(VDP, parameters={"mu": 1.0}, init={"x": 2.0}, observe={"energy": "x**2 + v*v"},
                         t=np.load(os.path.join(d, "t.npy")), method="rk4", substeps=20)
        self.assertTrue(np.array_equal(np.load(os.path.join(d, "y.npy")), r["y"]))
        self.assertTrue(np.array_equal(np.load(os.path.join(d, "observations.npy")), r["observations"]))
        # the plan itself, resolved by the library, solved in memory
        q = bl.solve_ode(plan=plan, gradient_weights=[1.0, 0.0])
        self.assertTrue(np.array_equal(np.load(os.path.join(d, "y.npy")), q["y"]))
        self.assertTrue(np.array_equal(np.load(os.path.join(d, "observations.npy")), q["observations"]))
        self.assertEqual(q["param_names"], ["mu"])
        self.assertEqual(q["gradient"].shape, (1,))

    def test_gradient_plan_equals_python(self):
        # [ode.gradient] with weights: the record's gradient.npy, gradient_y0.npy
        # and hessian.npy are solve_ode's (the same bl_ode_gradient / bl_ode_hessian)
        # bit for bit, for the final time and for the sum over every output time.
        eqs = "dx/dt = v : 1\ndv/dt = mu * (1 - x**2) * v - x * w : 1"
        for at in ("final", "every"):
            plan = os.path.join(self.tmp, f"g{at}.toml")
            with open(plan, "w") as fh:
                fh.write('format = "brainlesslab-plan"\nformat_version = 4\nid = "py-grad"\noperation = "ode"\n'
                         f'[ode]\nequations = """\n{eqs}\n"""\nmethod = "rk4"\nsubsteps = 10\nt_end = 3.0\n'
                         'outputs = 7\n[ode.parameters]\nmu = 0.8\nw = 1.2\n[ode.init]\nx = 2.0\n'
                         f'[ode.gradient]\nweights = [1.5, -0.5]\nat = "{at}"\nhessian = true\n')
            root = os.path.join(self.tmp, at)
            subprocess.run([CLI, "run", plan, "--root", root, "--quiet"], check=True, capture_output=True)
            d = glob.glob(os.path.join(root, "py-grad-*"))[0]
            w = np.array([1.5, -0.5]) if at == "final" else np.tile([1.5, -0.5], (7, 1))
            # the keywords, and the plan's own [ode.gradient] (no keyword at all)
            for r in (bl.solve_ode(plan=plan, gradient_weights=w, hessian=True), bl.solve_ode(plan=plan)):
                for name, key in (("gradient.npy", "gradient"), ("gradient_y0.npy", "gradient_y0"),
                                  ("hessian.npy", "hessian")):
                    self.assertTrue(np.array_equal(np.load(os.path.join(d, name)).view(np.uint64),
                                                   r[key].view(np.uint64)), (at, name))
                self.assertEqual(r["hessian"].shape, (2, 2))
                self.assertIs(r["hessian"].base, r["y"].base)  # one block, no copy
                with open(os.path.join(d, "objective.json")) as fh:
                    self.assertEqual(json.load(fh)["value"], r["value"])
        # a plan without [ode.gradient]: no objective to take the Hessian of
        plain = os.path.join(self.tmp, "plain.toml")
        with open(plain, "w") as fh:
            fh.write('format = "brainlesslab-plan"\nformat_version = 4\nid = "plain"\noperation = "ode"\n'
                     f'[ode]\nequations = """\n{eqs}\n"""\nmethod = "rk4"\nsubsteps = 10\nt_end = 3.0\n'
                     'outputs = 7\n[ode.parameters]\nmu = 0.8\nw = 1.2\n[ode.init]\nx = 2.0\n')
        r = bl.solve_ode(plan=plain)
        self.assertNotIn("gradient", r)
        self.assertIsNone(r["value"])
        with self.assertRaises(ValueError):
            bl.solve_ode(plan=plain, hessian=True)  # no objective

    def test_plan_gradient_section_honoured(self):
        # solve_ode(plan=...) with no gradient keyword takes the plan's
        # [ode.gradient] (an expression objective, at "every" and "final",
        # the Hessian; cvode-bdf's sensitivity contraction): the record's
        # gradient.npy, gradient_y0.npy, hessian.npy and objective.json value,
        # bit for bit; gradient_weights replaces the plan's objective.
        eqs = "dx/dt = v : 1\ndv/dt = mu * (1 - x**2) * v - x * w : 1"
        head = ('format = "brainlesslab-plan"\nformat_version = 4\nid = "py-obj"\noperation = "ode"\n'
                f'[ode]\nequations = """\n{eqs}\n"""\n{{method}}\nt_end = 3.0\noutputs = 7\n'
                '[ode.parameters]\nmu = 0.8\nw = 1.2\n[ode.init]\nx = 2.0\n'
                '[ode.gradient]\nobjective = "(x - 1)**2 + x * v"\nat = "{at}"\n{hess}')
        cases = [("rk4", 'method = "rk4"\nsubsteps = 10', at, "hessian = true\n") for at in ("every", "final")]
        cases.append(("cvode-bdf", 'method = "cvode-bdf"\nrtol = 1e-9\natol = 1e-12', "every", ""))
        for method, mline, at, hess in cases:
            plan = os.path.join(self.tmp, f"obj-{method}-{at}.toml")
            with open(plan, "w") as fh:
                fh.write(head.format(method=mline, at=at, hess=hess))
            root = os.path.join(self.tmp, f"obj-{method}-{at}")
            subprocess.run([CLI, "run", plan, "--root", root, "--quiet"], check=True, capture_output=True)
            d = glob.glob(os.path.join(root, "py-obj-*"))[0]
            r = bl.solve_ode(plan=plan)
            files = [("gradient.npy", "gradient")]
            if method == "rk4":
                files += [("gradient_y0.npy", "gradient_y0"), ("hessian.npy", "hessian")]
            else:
                self.assertNotIn("gradient_y0", r)  # cvode-bdf: d L / d params only, as the record
                self.assertNotIn("sensitivities", r)  # solved for the gradient, not asked for
            for name, key in files:
                self.assertTrue(np.array_equal(np.load(os.path.join(d, name)).view(np.uint64),
                                               r[key].view(np.uint64)), (method, at, name))
            with open(os.path.join(d, "objective.json")) as fh:
                self.assertEqual(json.load(fh)["value"], r["value"], (method, at))
            self.assertIs(r["gradient"].base, r["y"].base)  # one block, no copy
            if method == "rk4":
                # gradient_weights replaces the objective: L = x(t_end), another gradient
                q = bl.solve_ode(plan=plan, gradient_weights=[1.0, 0.0])
                self.assertFalse(np.array_equal(q["gradient"], r["gradient"]))
                self.assertEqual(q["value"], float(q["y"][-1, 0]))
        # the Hessian under cvode-bdf: refused by the library, naming the method
        with self.assertRaisesRegex(bl.Error, "cvode-bdf"):
            bl.solve_ode(plan=plan, hessian=True)

    def test_hierarchical_and_builtin_plans(self):
        for system in ('system = "hierarchical"\ngroups = 4\nstages = 2\ncoupling = "coupled"',
                       'system = "hier-g4-s2-coupled"'):
            plan = os.path.join(self.tmp, "h.toml")
            with open(plan, "w") as fh:
                fh.write('format = "brainlesslab-plan"\nformat_version = 4\nid = "h"\noperation = "ode"\n[ode]\n'
                         f'{system}\nmethod = "rk4"\nsubsteps = 8\nt_end = 2.0\noutputs = 5\nsensitivities = true\n')
            r = bl.solve_ode(plan=plan)
            self.assertEqual(r["sensitivities"].shape, (5, 8, 12))
            if system.startswith('system = "hier-'):
                self.assertTrue(np.array_equal(r["y"], first["y"]))  # compiled = hand-written, bit for bit
            else:
                first = r
        with self.assertRaisesRegex(bl.Error, "not \"ode\""):
            plan = os.path.join(self.tmp, "s.toml")
            with open(plan, "w") as fh:
                fh.write('format = "brainlesslab-plan"\nformat_version = 4\nid = "s"\noperation = "ssa"\n[ssa]\n'
                         'species = ["A"]\nx0 = [1]\nreplicates = 1\nseed = 1\nt_end = 1.0\noutputs = 2\n'
                         '[[ssa.reaction]]\nrate = 1.0\nreactants = { A = 1 }\nproducts = {}\n')
            bl.solve_ode(plan=plan)

    def test_gradient_exponential(self):
        n = 16
        k = np.array([0.1 + 0.9 * i / (n - 1) for i in range(n)])
        eqs = "\n".join(f"dy{i}/dt = -k{i} * y{i} : 1" for i in range(n))
        r = bl.solve_ode(eqs, parameters={f"k{i}": k[i] for i in range(n)}, init={f"y{i}": 1.0 for i in range(n)},
                         t=[0.0, 1.0], method="rk4", substeps=128, gradient_weights=np.ones(n))
        exact = -np.exp(-k)
        err = np.max(np.abs(r["gradient"] - exact))
        print(f"solve_ode gradient vs analytic: max error {err:.2e}", file=sys.stderr)
        self.assertLess(err, 3.83e-10)
        self.assertAlmostEqual(r["value"], float(np.sum(r["y"][-1])), places=14)
        b = bl.solve_ode(system="exponential", states=n, t=[0.0, 1.0], method="rk4", substeps=128, params=k,
                         y0=np.ones(n), gradient_weights=np.ones(n))
        self.assertTrue(np.array_equal(b["gradient"], r["gradient"]))

    def test_errors(self):
        with self.assertRaisesRegex(bl.Error, "unknown variable 'q'"):
            bl.solve_ode("dx/dt = -q * x : 1", t=[0.0, 1.0])
        with self.assertRaisesRegex(bl.Error, "dx/dt is not finite"):
            bl.solve_ode("dx/dt = log(x) : 1", t=[0.0, 1.0])
        with self.assertRaisesRegex(bl.Error, "step limit 500 reached"):
            bl.solve_ode(VDP, parameters={"mu": 1000.0}, init={"x": 2.0}, t=[0.0, 3000.0], method="dopri5",
                         max_steps=500)
        with self.assertRaises(ValueError):
            bl.solve_ode(VDP, parameters={"mu": 1.0}, t=[0.0, 1.0], params=[1.0, 2.0])


if __name__ == "__main__":
    main()
