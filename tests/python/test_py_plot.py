"""Figures: every figure is produced (PNG and SVG, non-empty), drawn from the
record's numbers (the plotted data saved beside each image are compared with
the record, recomputed here independently), written into a new sealed record
that names its source by hash, and the source record is left untouched."""
import csv
import glob
import json
import os
import subprocess

import numpy as np

import brainlesslab as bl
from brainlesslab import _core, plot
from support import CLI, SOURCE, TempDirCase, main, small_larva_plan


def check_images(test, rec, name):
    png = os.path.join(rec.path, name + ".png")
    svg = os.path.join(rec.path, name + ".svg")
    with open(png, "rb") as f:
        head = f.read(8)
    test.assertEqual(head, b"\x89PNG\r\n\x1a\n")
    test.assertGreater(os.path.getsize(png), 2000)
    with open(svg, encoding="utf-8") as f:
        text = f.read()
    test.assertIn("<svg", text)
    test.assertGreater(len(text), 2000)
    for n in (name + ".png", name + ".svg", name + ".data.npz"):
        test.assertIn(n, rec.artifacts)
    return rec.load(name + ".data.npz")


class ConnectomeFigures(TempDirCase):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.dir = tempfile.mkdtemp(prefix="bl-py-plot-")
        cls.src = bl.run_plan(small_larva_plan(cls.dir, silence=True), root=os.path.join(cls.dir, "rec"))
        cls.before = sorted(os.listdir(cls.src.path))
        cls.out = plot.plot_record(cls.src, root=os.path.join(cls.dir, "figs"))

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.dir, ignore_errors=True)

    def groups(self):
        """Population of each neuron, recomputed from the plan in the manifest."""
        plan = self.src.manifest["plan"]
        g = np.full(plan["connectome"]["n_neurons"], len(plan["stimulus"]) + len(plan["silence"]))
        k = 0
        for kind in ("stimulus", "silence"):
            for pop in plan[kind]:
                idx = np.array(pop["neurons"])
                g[idx[g[idx] == len(plan["stimulus"]) + len(plan["silence"])]] = k
                k += 1
        return g

    def test_derived_record(self):
        out = self.out
        self.assertEqual(out.status, "DONE")
        self.assertTrue(out.verify())
        self.assertEqual(out.manifest["source"]["manifest_sha256"], self.src.hash)
        self.assertEqual(out.manifest["source"]["record"], self.src.path)
        self.assertTrue(any(i["sha256"] == self.src.hash for i in out.manifest["inputs"]))
        self.assertEqual([f["name"] for f in out.manifest["figures"]], ["raster", "rates_by_depth", "psth"])
        # The source is never modified.
        self.assertEqual(sorted(os.listdir(self.src.path)), self.before)
        self.assertTrue(self.src.verify())

    def test_raster(self):
        d = check_images(self, self.out, "raster")
        sp = self.src.spikes
        np.testing.assert_array_equal(d["times_ms"], sp.timestamps_ms)
        np.testing.assert_array_equal(d["neurons"], sp.node_ids.astype(np.int64))
        np.testing.assert_array_equal(d["trials"], sp.trials.astype(np.int64))
        np.testing.assert_array_equal(d["groups"], self.groups()[sp.node_ids.astype(np.int64)])
        self.assertEqual(list(d["group_names"]), ["ORN", "silenced: PNs", "downstream"])
        # Trials are stacked: every row of trial t lies in band t.
        band = int(d["band"])
        np.testing.assert_array_equal(d["rows"] // band, d["trials"])

    def test_rates_by_depth(self):
        d = check_images(self, self.out, "rates_by_depth")
        with open(os.path.join(self.src.path, "rates.csv")) as f:
            rows = list(csv.DictReader(f))
        groups = {}
        for r in rows:
            dep = int(r["depth_from_stimulus"])
            if dep < 0:
                continue
            groups.setdefault((dep, r["cell_type"] or "(unannotated)"), []).append(float(r["mean_rate_hz"]))
        keys = sorted(groups)
        self.assertEqual([(int(a), str(b)) for a, b in zip(d["depth"], d["cell_type"])], keys)
        np.testing.assert_allclose(d["mean_rate_hz"], [np.mean(groups[k]) for k in keys], rtol=1e-12)
        np.testing.assert_array_equal(d["neurons"], [len(groups[k]) for k in keys])

    def test_psth(self):
        d = check_images(self, self.out, "psth")
        sp = self.src.spikes
        g = self.groups()
        sizes = np.bincount(g, minlength=3)
        np.testing.assert_array_equal(d["population_size"], sizes)
        widths = np.diff(d["bin_edges_ms"]) / 1000.0
        self.assertEqual(d["bin_edges_ms"][0], 0.0)
        self.assertEqual(d["bin_edges_ms"][-1], 200.0)
        for k in range(3):
            spikes = np.round((d["rate_hz"][k] * widths * 3 * sizes[k]).sum())
            self.assertEqual(spikes, (g[sp.node_ids.astype(np.int64)] == k).sum())
        orn = sp.timestamps_ms[g[sp.node_ids.astype(np.int64)] == 0]
        h = np.array([((orn >= a) & (orn < b)).sum() for a, b in zip(d["bin_edges_ms"][:-1], d["bin_edges_ms"][1:])])
        h[-1] += (orn == d["bin_edges_ms"][-1]).sum()
        np.testing.assert_allclose(d["rate_hz"][0], h / (3 * sizes[0] * widths), rtol=1e-12)

    def test_cli(self):
        r = subprocess.run([CLI, "plot", self.src.path, "--root", self.tmp, "--figure", "psth"], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = bl.Record(r.stdout.splitlines()[0])
        self.assertEqual([f["name"] for f in out.manifest["figures"]], ["psth"])
        np.testing.assert_array_equal(out.load("psth.data.npz")["rate_hz"], self.out.load("psth.data.npz")["rate_hz"])
        self.assertTrue(out.verify())
        r = subprocess.run([CLI, "plot", os.path.join(self.tmp, "nope")], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("not a record", r.stderr)
        r = subprocess.run([CLI, "plot", self.src.path, "--figure", "nope"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        r = subprocess.run([CLI, "plot", "--help"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0)
        self.assertIn("derived record", r.stdout)
        self.assertEqual(subprocess.run([CLI, "plot"], capture_output=True).returncode, 2)

    def test_errors(self):
        with self.assertRaises(ValueError):
            plot.plot_record(self.src, root=self.tmp, figures=["nope"])
        w = _core.record_writer(self.tmp, "failed")
        with self.assertRaises(ValueError):
            plot.plot_record(bl.Record(w.fail("on purpose")), root=self.tmp)
        w = _core.record_writer(self.tmp, "empty")
        open(w.path("x.txt"), "w").close()
        with self.assertRaises(ValueError):
            plot.plot_record(w.seal(), root=self.tmp)
        self.assertEqual(plot.main([os.path.join(self.tmp, "nope")]), 1)


class AuditAndReservoirFigures(TempDirCase):
    def test_hierarchy(self):
        src = bl.run_plan(os.path.join(SOURCE, "plans", "larva-audit.toml"), root=self.tmp)
        self.assertEqual(plot.available(src), ["hierarchy"])
        out = plot.plot_record(src, root=self.tmp)
        d = check_images(self, out, "hierarchy")
        with open(os.path.join(src.path, "audit.json")) as f:
            h = json.load(f)["hierarchy"]
        self.assertEqual(list(d["layer"]), h["layer_order"])
        np.testing.assert_array_equal(d["layer_size"], [l["size"] for l in h["layers"]])
        e = np.load(os.path.join(src.path, "layer_edges.npy"))
        np.testing.assert_array_equal(d["layer_edges"], e[0, 0] + e[0, 1])
        np.testing.assert_array_equal(d["layer_edges_excitatory"], h["edges"]["excitatory"]["edge_counts"])
        np.testing.assert_array_equal(d["layer_edges_inhibitory"], h["edges"]["inhibitory"]["edge_counts"])
        np.testing.assert_array_equal(d["layer_synapses"], e[1, 0] + e[1, 1])
        self.assertEqual(sum(d["layer_size"]), 2952)
        # A bare layer matrix is drawn too (layer names then come from the shape).
        w = _core.record_writer(self.tmp, "bare")
        np.save(w.path("layer_edges.npy"), np.array([[1, 2], [0, 3]], dtype=np.int64))
        d = plot.hierarchy_data(bl.Record(w.seal()))
        self.assertEqual(list(d["layer"]), ["layer 0", "layer 1"])
        np.testing.assert_array_equal(d["layer_edges"], [[1, 2], [0, 3]])

    def test_reservoir(self):
        src = bl.run_plan(os.path.join(SOURCE, "plans", "delayed-cue.toml"), root=self.tmp)
        self.assertEqual(plot.available(src), ["reservoir"])
        out = plot.plot_record(src, root=self.tmp)
        d = check_images(self, out, "reservoir")
        with open(os.path.join(src.path, "trials.csv")) as f:
            rows = list(csv.DictReader(f))
        delays = sorted({int(r["delay"]) for r in rows})
        np.testing.assert_array_equal(d["delay"], delays)
        for i, t in enumerate(d["target"]):
            for j, dl in enumerate(delays):
                o = [float(r["outcome"]) for r in rows if r["target"] == t and int(r["delay"]) == dl and r["outcome"]]
                if o:
                    self.assertEqual(d["recall_accuracy"][i, j], np.mean(o))
                else:
                    self.assertTrue(np.isnan(d["recall_accuracy"][i, j]))


if __name__ == "__main__":
    main()
