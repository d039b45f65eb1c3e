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
        # The default draws the first plot.RASTER_TRIALS trials (here all 3), every spike of them.
        shown = np.isin(sp.trials, d["shown_trials"])
        self.assertEqual(list(d["shown_trials"]), list(range(min(plot.RASTER_TRIALS, 3))))
        np.testing.assert_array_equal(d["times_ms"], sp.timestamps_ms[shown])
        np.testing.assert_array_equal(d["neurons"], sp.node_ids[shown].astype(np.int64))
        np.testing.assert_array_equal(d["trials"], sp.trials[shown].astype(np.int64))
        np.testing.assert_array_equal(d["groups"], self.groups()[d["neurons"]])
        self.assertEqual(list(d["group_names"]), ["ORN", "silenced: PNs", "downstream"])
        # One row per neuron that spiked, ordered by depth (unreached last), cell type, index.
        depth = np.load(os.path.join(self.src.path, "depth_from_stimulus.npy"))
        with open(os.path.join(self.src.path, "rates.csv")) as f:
            cell = [r["cell_type"] or "(unannotated)" for r in csv.DictReader(f)]
        spiked = sorted(set(d["neurons"].tolist()),
                        key=lambda i: (depth[i] < 0, depth[i] if depth[i] >= 0 else 0, cell[i], i))
        row = {n: r for r, n in enumerate(spiked)}
        np.testing.assert_array_equal(d["rows"], [row[n] for n in d["neurons"]])
        self.assertEqual(int(d["n_rows"]), len(spiked))
        self.assertEqual(int(sum(d["block_size"])), len(spiked))
        for lab, start, size in zip(d["block_labels"], d["block_start"], d["block_size"]):
            for n in spiked[start:start + size]:
                self.assertEqual(lab, "depth %d  %s" % (depth[n], cell[n]) if depth[n] >= 0
                                 else "not reached  %s" % cell[n])
        # A chosen trial, and one that does not exist.
        one = plot.raster_data(self.src, trials=[2])
        self.assertTrue(np.all(one["trials"] == 2))
        self.assertEqual(len(one["times_ms"]), int((sp.trials == 2).sum()))
        with self.assertRaises(ValueError):
            plot.raster_data(self.src, trials=[3])

    def test_rates_by_depth(self):
        d = check_images(self, self.out, "rates_by_depth")
        # Exactly the run table's groups (summary.json): responders only, their mean rate.
        table = self.src.summary["responders_by_cell_type_and_depth"]
        got = {(int(a), str(b)): (int(n), int(r), float(m)) for a, b, n, r, m in
               zip(d["depth"], d["cell_type"], d["neurons"], d["responders"], d["mean_rate_hz"])}
        want = {(int(g["depth_from_stimulus"]), g["cell_type"] or "(unannotated)"):
                (int(g["neurons"]), int(g["responders"]), float(g["mean_rate_of_responders_hz"])) for g in table}
        self.assertEqual(set(got), set(want))
        for k in want:
            self.assertEqual(got[k][:2], want[k][:2], k)
            self.assertAlmostEqual(got[k][2], want[k][2], places=9, msg=str(k))
        self.assertTrue(np.all(d["responders"] > 0))  # no empty category is drawn

    def test_psth(self):
        d = check_images(self, self.out, "psth")
        sp = self.src.spikes
        names, g = plot.psth_populations(self.src)
        # Stimulus and silenced groups first, then the rest by depth: nothing pooled as "everything else".
        self.assertEqual(names[:2], ["ORN", "silenced: PNs"])
        self.assertTrue(all(n.startswith("depth ") or n == "not reached" for n in names[2:]))
        self.assertNotIn("downstream", names)
        depth = np.load(os.path.join(self.src.path, "depth_from_stimulus.npy"))
        for k, n in enumerate(names[2:], start=2):
            want = -1 if n == "not reached" else int(n.split()[1])
            self.assertTrue(np.all(depth[g == k] == want))
        sizes = np.bincount(g, minlength=len(names))
        np.testing.assert_array_equal(d["population_size"], sizes)
        self.assertTrue(np.all(sizes > 0))
        widths = np.diff(d["bin_edges_ms"]) / 1000.0
        self.assertEqual(d["bin_edges_ms"][0], 0.0)
        self.assertEqual(d["bin_edges_ms"][-1], 200.0)
        for k in range(len(names)):
            spikes = np.round((d["rate_hz"][k] * widths * 3 * sizes[k]).sum())
            self.assertEqual(spikes, (g[sp.node_ids.astype(np.int64)] == k).sum())
        orn = sp.timestamps_ms[g[sp.node_ids.astype(np.int64)] == 0]
        h = np.array([((orn >= a) & (orn < b)).sum() for a, b in zip(d["bin_edges_ms"][:-1], d["bin_edges_ms"][1:])])
        h[-1] += (orn == d["bin_edges_ms"][-1]).sum()
        np.testing.assert_allclose(d["rate_hz"][0], h / (3 * sizes[0] * widths), rtol=1e-12)

    def test_refuses_figure_without_inputs(self):
        with self.assertRaises(ValueError) as e:
            plot.plot_record(self.src, root=self.tmp, figures=["hierarchy"])
        self.assertIn("no inputs for figure hierarchy", str(e.exception))
        r = subprocess.run([CLI, "plot", self.src.path, "--root", self.tmp, "--figure", "hierarchy"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no inputs for figure hierarchy", r.stderr)
        self.assertEqual(os.listdir(self.tmp), [])  # nothing reserved, nothing sealed

    def test_axes_labelled(self):
        for name in ("raster", "rates_by_depth", "psth"):
            _, fig = plot.figure(self.src, name)
            axes = fig.get_axes()
            self.assertTrue(any(a.get_xlabel() for a in axes), name)
            self.assertTrue(any(a.get_ylabel() or a.get_yticklabels() for a in axes), name)
            import matplotlib.pyplot as plt
            plt.close(fig)

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


class ScreenAndCompareFigures(TempDirCase):
    def test_screen(self):
        src = bl.run_plan(os.path.join(SOURCE, "plans", "larva-screen.toml"), root=self.tmp)
        self.assertIn("screen", plot.available(src))
        self.assertNotIn("psth", plot.available(src))
        out = plot.plot_record(src, root=self.tmp, figures=["screen"])
        d = check_images(self, out, "screen")
        counts = np.load(os.path.join(src.path, "counts.npy")).astype(np.float64)
        dur = float(src.plan["run"]["duration_ms"]) / 1000.0
        per = counts.mean(axis=2) / dur
        np.testing.assert_allclose(d["mean_rate_hz"], per.mean(axis=1), rtol=1e-12)
        cond = src.load("conditions.json")["conditions"]
        self.assertEqual(list(d["label"]), [c["label"] for c in cond])
        for c, r in enumerate(d["reference"]):
            lc, lr = list(cond[c]["levels"].items()), list(cond[r]["levels"].items())
            self.assertEqual(lc[:-1], lr[:-1])
            self.assertEqual(lr[-1][1], cond[0]["levels"][lr[-1][0]])  # the last axis at its first level
            np.testing.assert_allclose(d["effect_hz"][c], (per[c] - per[r]).mean(), rtol=1e-12, atol=1e-15)
            if np.isfinite(d["effect_low"][c]):
                self.assertLessEqual(d["effect_low"][c], d["effect_hz"][c] + 1e-12)

    def test_compare(self):
        a = bl.run_plan(small_larva_plan(self.tmp), root=os.path.join(self.tmp, "a"))
        os.makedirs(os.path.join(self.tmp, "p2"))
        path = small_larva_plan(os.path.join(self.tmp, "p2"))
        with open(path) as f:
            text = f.read().replace("rate_hz = 150.0", "rate_hz = 120.0")
        with open(path, "w") as f:
            f.write(text)
        b = bl.run_plan(path, root=os.path.join(self.tmp, "b"))
        r = subprocess.run([CLI, "compare", a.path, b.path, "--root", self.tmp, "--quiet"], capture_output=True,
                           text=True)
        self.assertIn(r.returncode, (0, 3), r.stderr)
        rec = bl.Record(r.stdout.strip().splitlines()[-1])
        self.assertEqual(plot.available(rec), ["compare"])
        out = plot.plot_record(rec, root=self.tmp)
        d = check_images(self, out, "compare")
        with open(os.path.join(rec.path, "rate_differences.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(d["diff_hz"]), len(rows))
        for k, row in enumerate(rows):
            self.assertEqual(d["diff_hz"][k], float(row["diff_hz"]))
            self.assertEqual(bool(d["tested"][k]), row["q_bh"] != "")


if __name__ == "__main__":
    main()
