"""Helpers of the reservoir oracle tests: write bundles and tapes by hand, run
`brainlesslab reservoir replay` and `construct`, compare per-frame arrays with
the NumPy oracle (reservoir_numpy.py) and report one line per comparison."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reservoir_numpy as oracle  # noqa: E402

CLI = os.environ.get("BL_CLI", "brainlesslab")
TOL = 1e-12


class Harness:
    def __init__(self, name):
        self.name = name
        self.tmp = tempfile.mkdtemp(prefix="bl_%s_" % name)
        self.failures = []
        self.count = 0
        r = subprocess.run([CLI, "reservoir", "--help"], capture_output=True, text=True)
        if r.returncode != 0 or "replay" not in r.stdout:
            print("FAIL %s: `%s reservoir` is not available (is the reservoir command wired into main.c?)\n%s"
                  % (name, CLI, r.stderr.strip()))
            sys.exit(1)

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def check(self, cond, what):
        self.count += 1
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            self.failures.append(what)
        return cond

    def finish(self):
        if os.environ.get("BL_ORACLE_KEEP") != "1":
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            print("kept", self.tmp)
        if self.failures:
            print("%s: %d of %d checks FAILED" % (self.name, len(self.failures), self.count))
            for f in self.failures:
                print("  " + f)
            sys.exit(1)
        print("%s: all %d checks passed" % (self.name, self.count))

    # ---- bundles and tapes ----

    def bundle(self, label, kind, params, arrays):
        d = self.path(label)
        os.makedirs(d)
        json.dump({"kind": kind, "parameters": params}, open(os.path.join(d, "node.json"), "w"))
        for k, v in arrays.items():
            np.save(os.path.join(d, k + ".npy"), np.asarray(v))
        return d

    def construct(self, label, kind, units, seed, params=(), inputs=3, effectors=2):
        d = self.path(label)
        cmd = [CLI, "reservoir", "construct", "--node", kind, "--units", str(units), "--inputs", str(inputs),
               "--effectors", str(effectors), "--seed", str(seed), "--out", d]
        for p in params:
            cmd += ["--param", p]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("construct failed: " + r.stderr)
        return d

    def replay(self, label, bundle, inputs, noise=None, extra=()):
        """Run the CLI replay; returns (per-frame arrays, final bundle dir)."""
        inp = self.path(label + "-inputs.npy")
        np.save(inp, np.asarray(inputs))
        out = self.path(label + "-out")
        cmd = [CLI, "reservoir", "replay", bundle, "--inputs", inp, "--out", out] + list(extra)
        if noise is not None:
            nz = self.path(label + "-noise.npy")
            np.save(nz, np.asarray(noise))
            cmd += ["--noise", nz]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("replay %s failed: %s" % (label, r.stderr.strip()))
        res = {}
        for name in ("spikes", "margins", "targets", "thresholds", "acts", "errors", "effectors", "finite"):
            p = os.path.join(out, name + ".npy")
            if os.path.exists(p):
                res["thresholds" if name == "targets" else name] = np.load(p)
        return res, os.path.join(out, "final")

    # ---- comparisons ----

    def compare(self, label, c, o, min_spikes=0, frames_min=0):
        """C replay c vs oracle o: spikes identical, everything else within TOL;
        says whether the float arrays are bit-identical too."""
        ok = True
        notes = []
        T = c["spikes"].shape[0]
        if T < frames_min:
            ok = False
            notes.append("only %d frames" % T)
        if not np.array_equal(c["spikes"], o["spikes"]):
            bad = np.argwhere(c["spikes"] != o["spikes"])[0]
            notes.append("spikes differ first at (frame %d, unit %d)" % (bad[0], bad[1]))
            ok = False
        bitwise = True
        for k in ("margins", "thresholds", "acts", "errors", "effectors"):
            if k not in o:
                continue
            if k not in c:
                notes.append("CLI wrote no %s" % k)
                ok = False
                continue
            a, b = c[k], o[k]
            if a.shape != b.shape:
                notes.append("%s shape %s vs %s" % (k, a.shape, b.shape))
                ok = False
                continue
            both = np.isfinite(a) & np.isfinite(b)
            if not np.array_equal(np.isfinite(a), np.isfinite(b)):
                notes.append("%s finiteness differs" % k)
                ok = False
            diff = float(np.max(np.abs(a[both] - b[both]), initial=0.0))
            if diff > TOL:
                idx = np.argwhere(np.abs(np.where(both, a - b, 0)) > TOL)[0]
                notes.append("%s max |diff| %.3g (first at %s)" % (k, diff, tuple(int(x) for x in idx)))
                ok = False
            if not np.array_equal(a.view(np.uint64)[both], b.view(np.uint64)[both]):
                bitwise = False
        if not np.array_equal(c["finite"], o["finite"]):
            notes.append("finite flags differ")
            ok = False
        spikes = int(c["spikes"].sum())
        if spikes < min_spikes:
            notes.append("only %d spikes (need >= %d to prove anything)" % (spikes, min_spikes))
            ok = False
        desc = "%s: %d frames, %d units, %d spikes, %s" % (
            label, T, c["spikes"].shape[1], spikes,
            "identical spikes, floats bit-identical" if ok and bitwise else
            "identical spikes, floats within %g" % TOL if ok else "; ".join(notes))
        return self.check(ok, desc)

    def compare_final(self, label, final_dir, node, kind):
        """The CLI's final bundle vs the oracle's final state."""
        c = oracle.load_bundle(final_dir)
        if kind == "falandays":
            w_c, w_o = c["w"], node.weights()[0]
            m_c, m_o = c["mask"], node.maskT[0].T
        else:
            w_c, w_o = c["w_ee"], node.weights()[0]
            m_c, m_o = c["mask_ee"], node.maskT[0].T
        ok = np.array_equal(m_c, m_o) and float(np.max(np.abs(w_c - w_o), initial=0.0)) <= TOL
        return self.check(ok, "%s: final weights and link mask agree (%d links)" % (label, int(m_c.sum())))
