"""brainlesslab's core API against the library and the CLI: Connectome.load
and select (every selector kind and its refusals), simulate (equal to a
`brainlesslab run` record of the same plan, zero-copy views, errors,
KeyboardInterrupt), run_plan, Record, verify (agreeing with the CLI), the
record writer, preset_params, backends."""
import glob
import json
import os
import signal
import subprocess
import threading

import numpy as np

import brainlesslab as bl
from brainlesslab import _core
from support import CLI, LARVA, TempDirCase, main, small_larva_plan


class ConnectomeTest(TempDirCase):
    def setUp(self):
        super().setUp()
        self.c = bl.Connectome.load(LARVA)

    def test_load_matches_files(self):
        c = self.c
        self.assertEqual(c.n_neurons, 2952)
        self.assertEqual(c.n_edges, 110677)
        np.testing.assert_array_equal(c.offsets, np.load(os.path.join(LARVA, "offsets.npy")))
        np.testing.assert_array_equal(c.targets, np.load(os.path.join(LARVA, "targets.npy")))
        np.testing.assert_array_equal(c.counts, np.load(os.path.join(LARVA, "counts.npy")))
        self.assertFalse(c.targets.flags.writeable)  # views of the library's memory
        self.assertIsNotNone(c.targets.base)
        with open(os.path.join(LARVA, "neurons.csv")) as f:
            rows = [line.rstrip("\n").split(",") for line in f][1:]
        self.assertEqual(c.external_ids[:5], [r[1] for r in rows[:5]])
        self.assertIn("cell_type", c.columns)
        self.assertEqual(set(c.neurons), {"index", "external_id"} | set(c.columns))
        self.assertEqual(c.info["name"], "drosophila-larva-winding2023")
        self.assertIn("2952", repr(c))

    def test_select_kinds(self):
        c = self.c
        orn = c.select(cell_type="sensory", modality="olfactory")
        self.assertEqual(len(orn), 42)
        np.testing.assert_array_equal(orn, c.select(select={"cell_type": ["sensory"], "modality": "olfactory"}))
        ct = np.array(c.columns["cell_type"])
        np.testing.assert_array_equal(c.select(cell_type=["PN", "LN"]), np.flatnonzero((ct == "PN") | (ct == "LN")))
        np.testing.assert_array_equal(c.select(neurons=[5, 2, 9]), [2, 5, 9])
        ids = [c.external_ids[7], c.external_ids[3]]
        np.testing.assert_array_equal(c.select(ids=ids), [3, 7])
        self.assertEqual(c.index_of(int(c.external_ids[11])), 11)
        self.assertEqual(orn.dtype, np.int32)

    def test_select_refusals(self):
        c = self.c
        # Refused by the library, with its message naming the criterion.
        for kw, text in [(dict(), "no selector"), (dict(neurons=[]), "neurons"), (dict(neurons=[-1]), "-1"),
                         (dict(neurons=[2952]), "2952"), (dict(ids=[]), "ids"), (dict(ids=["not-an-id"]), "not-an-id"),
                         (dict(select={}), "select"), (dict(select={"no_such_column": "x"}), "no_such_column"),
                         (dict(cell_type=[]), "cell_type"), (dict(cell_type="no such type"), "empty selection"),
                         (dict(from_="nowhere", depth=1), "nowhere")]:
            with self.assertRaises(bl.Error, msg=repr(kw)) as e:
                c.select(**kw)
            self.assertIn(text, str(e.exception), repr(kw))
            self.assertIn("population 'selection'", str(e.exception))
            self.assertNotIn("select.toml", str(e.exception))
        with self.assertRaises(ValueError):
            c.select(select={"a": "1"}, cell_type="PN")
        with self.assertRaises(TypeError):
            c.select(select={"cell_type": object()})
        with self.assertRaises(TypeError):
            c.select_many({"x": [1, 2]})

    def test_select_language(self):
        """Globs, not, depth from a population, union: the plan's language."""
        c = self.c
        ct = np.array(c.columns["cell_type"])
        pn = c.select(cell_type="PN*")
        np.testing.assert_array_equal(pn, [i for i, t in enumerate(ct) if t.startswith("PN")])
        np.testing.assert_array_equal(c.select(cell_type={"not": ["sensory"]}), np.flatnonzero(ct != "sensory"))
        m = c.select_many({"ORN": {"select": {"cell_type": "sensory", "modality": "olfactory"}},
                           "next": {"from": "ORN", "depth": 1},
                           "both": {"union": ["ORN", "next"]}})
        # depth 1 from the ORNs: their direct targets that are not ORNs themselves
        orn = m["ORN"]
        direct = set()
        for i in orn:
            direct.update(c.targets[c.offsets[i]:c.offsets[i + 1]].tolist())
        np.testing.assert_array_equal(m["next"], sorted(direct - set(orn.tolist())))
        np.testing.assert_array_equal(m["both"], np.union1d(orn, m["next"]))

    def test_select_depth_from_neurons(self):
        """docs/python.md: c.select(from_=..., depth=2) with the neurons (or
        criteria) to measure depth from, on the connectome loaded once."""
        c = self.c
        orn = c.select(cell_type="sensory", modality="olfactory")
        d2 = c.select(from_=orn, depth=2)
        m = c.select_many({"ORN": {"select": {"cell_type": "sensory", "modality": "olfactory"}},
                           "d2": {"from": "ORN", "depth": 2}})
        np.testing.assert_array_equal(d2, m["d2"])
        np.testing.assert_array_equal(c.select(from_={"cell_type": "sensory", "modality": "olfactory"}, depth=2), d2)
        # depth 2: reached in two steps and not in fewer (a breadth-first search of our own)
        depth = np.full(c.n_neurons, -1)
        depth[orn] = 0
        frontier = list(orn)
        for level in (1, 2):
            nxt = set()
            for i in frontier:
                nxt.update(j for j in c.targets[c.offsets[i]:c.offsets[i + 1]].tolist() if depth[j] < 0)
            for j in nxt:
                depth[j] = level
            frontier = sorted(nxt)
        np.testing.assert_array_equal(d2, np.flatnonzero(depth == 2))
        np.testing.assert_array_equal(c.select(from_=orn, depth={"min": 1, "max": 2}, side="left"),
                                      np.intersect1d(np.flatnonzero((depth == 1) | (depth == 2)),
                                                     np.flatnonzero(np.array(c.columns["side"]) == "left")))
        with self.assertRaises(bl.Error) as e:
            c.select(from_=[c.n_neurons], depth=1)
        self.assertIn("population 'selection.from': neurons[0]", str(e.exception))

    def test_select_sample_as_plan(self):
        """A sample draws what a plan with the same populations and seed draws."""
        c = self.c
        pops = {"PN": {"select": {"cell_type": "PN*"}}, "few": {"union": ["PN"], "sample": 7}}
        got = c.select_many(pops, seed=20241002)
        plan = os.path.join(self.tmp, "sample.toml")
        with open(plan, "w") as f:
            f.write('format = "brainlesslab-plan"\nformat_version = 4\nid = "s"\noperation = "connectome"\n'
                    '[connectome]\npath = "%s"\n[run]\nduration_ms = 10\nseed = 20241002\n'
                    '[[population]]\nname = "PN"\nselect = { cell_type = "PN*" }\n'
                    '[[population]]\nname = "few"\nunion = ["PN"]\nsample = 7\n' % LARVA)
        out = subprocess.run([CLI, "check", "--full", plan], capture_output=True, text=True, check=True).stdout
        resolved = json.loads(out.split("\nplan hash:")[0])
        want = {p["name"]: p["neurons"] for p in resolved["population"]}
        np.testing.assert_array_equal(got["few"], want["few"])
        self.assertEqual(len(got["few"]), 7)
        with self.assertRaises(bl.Error) as e:
            c.select_many(pops)
        self.assertIn("population 'few': sample: a sample is drawn from a seed", str(e.exception))
        with self.assertRaises(bl.Error) as e:
            c.select_many({"a": {"neurons": [1]}, "b": {"union": ["a", "c"]}, "c": {"neurons": [2]}})
        self.assertIn("population 'b': union[1]: no population is named \"c\"", str(e.exception))

    def test_select_json_types(self):
        """Library refusals of JSON types name the key; 64-bit ids travel as text."""
        c = self.c
        for kw, text in [(dict(neurons=[1.5]), "neurons[0]: expected a neuron index (integer), got number 1.5"),
                         (dict(depth=1), "depth: depth needs from"),
                         (dict(neurons=[1], sample=1), "sample: a sample is drawn from a seed"),
                         (dict(neurons=[1, 2], expect_count=3), "has 2 neurons, not the 3 expected"),
                         (dict(ids=[720575940379279001]), 'unknown external id "720575940379279001"')]:
            with self.assertRaises(bl.Error, msg=repr(kw)) as e:
                c.select(**kw)
            self.assertIn(text, str(e.exception), repr(kw))
        np.testing.assert_array_equal(c.select(neurons=np.array([[4, 2]]), seed=1, sample=1).shape, (1,))

    def test_load_errors(self):
        with self.assertRaises(bl.Error) as e:
            bl.Connectome.load(os.path.join(self.tmp, "missing"))
        self.assertIn("manifest.json", str(e.exception))
        self.assertEqual(e.exception.status, "io error")
        broken = os.path.join(self.tmp, "broken")
        subprocess.run(["cp", "-r", LARVA, broken], check=True)
        with open(os.path.join(broken, "targets.npy"), "r+b") as f:
            f.seek(200)
            f.write(b"\x01")
        with self.assertRaises(bl.Error) as e:
            bl.Connectome.load(broken)
        self.assertIn("targets.npy", str(e.exception))


class SimulateTest(TempDirCase):
    def test_equals_cli_record(self):
        plan = small_larva_plan(self.tmp, silence=True)
        subprocess.run([CLI, "run", plan, "--root", os.path.join(self.tmp, "rec"), "--quiet"], check=True,
                       capture_output=True)
        rec = bl.Record(glob.glob(os.path.join(self.tmp, "rec", "*"))[0])
        c = bl.Connectome.load(LARVA)
        for backend, threads in (("reference", 1), ("cpu", 2)):
            r = bl.simulate(c, preset="shiu2024",
                            stimulus=[{"name": "ORN", "select": {"cell_type": "sensory", "modality": "olfactory"},
                                       "rate_hz": 150.0}],
                            silence=[{"select": {"cell_type": "PN"}}], trials=3, duration_ms=200.0,
                            seed=20241002, backend=backend, threads=threads)
            self.assertEqual(r.backend, backend)
            np.testing.assert_array_equal(r.counts, rec.counts)
            np.testing.assert_array_equal(r.final_v, rec.final_v)
            np.testing.assert_array_equal(r.final_g, rec.final_g)
            sp = rec.spikes
            np.testing.assert_array_equal(r.event_neurons, sp.node_ids.astype(np.int64))
            np.testing.assert_array_equal(r.event_trials, sp.trials.astype(np.int64))
            np.testing.assert_array_equal(r.times_ms, sp.timestamps_ms)
            np.testing.assert_array_equal(r.rates_hz, r.counts / 0.2)
            self.assertIsNotNone(r.counts.base)  # a view of the library's result, not a copy
            self.assertEqual(r.n_spikes, len(sp))

    def test_params_window_and_index_lists(self):
        c = bl.Connectome.load(LARVA)
        orn = c.select(cell_type="sensory", modality="olfactory")
        a = bl.simulate(c, stimulus=[{"neurons": orn, "rate_hz": 150.0, "start_ms": 50.0, "stop_ms": 100.0}],
                        trials=2, duration_ms=150.0, seed=1, backend="reference")
        self.assertTrue((a.times_ms[np.isin(a.event_neurons, orn)] >= 50.0).all())
        b = bl.simulate(c, stimulus=[{"neurons": orn, "rate_hz": 150.0}], silence=[orn[:3]], trials=1,
                        duration_ms=50.0, seed=1, params={"v_th_mv": -40.0}, backend="cpu", threads=1)
        self.assertEqual(b.counts.shape, (1, 2952))
        p = bl.preset_params("phase4c")
        self.assertEqual(p["dt_ms"], 0.1)
        f = bl.simulate(c, preset="phase4c", stimulus=[{"neurons": orn, "rate_hz": 150.0}], trials=1,
                        duration_ms=20.0, seed=1)
        self.assertEqual(f.final_v.dtype, np.float32)
        self.assertIn("reference", bl.backends())

    def test_errors(self):
        c = bl.Connectome.load(LARVA)
        stim = [{"neurons": [1, 2], "rate_hz": 100.0}]
        for kw, exc, text in [
            (dict(preset="nope"), bl.Error, "nope"),
            (dict(params={"v_th_mv": float("nan")}), bl.Error, "v_th_mv"),
            (dict(params={"no_param": 1.0}), bl.Error, "no_param"),
            (dict(duration_ms=0.05), bl.Error, ""),
            (dict(backend="warp-drive"), bl.Error, "warp-drive"),
            (dict(trials=0), ValueError, "trials"),
            (dict(stimulus=[{"neurons": [1], "rate_hz": -5.0}]), bl.Error, ""),
            (dict(stimulus=[{"neurons": [1]}]), ValueError, "rate_hz"),
            (dict(stimulus=[{"neurons": [1], "rate_hz": 1.0, "colour": "red"}]), ValueError, "colour"),
        ]:
            args = dict(stimulus=stim, trials=1, duration_ms=10.0)
            args.update(kw)
            with self.assertRaises(exc, msg=repr(kw)) as e:
                bl.simulate(c, **args)
            self.assertIn(text, str(e.exception))
        with self.assertRaises(TypeError):
            bl.simulate(LARVA, stimulus=stim)
        with self.assertRaises(bl.Error):
            bl.preset_params("nope")

    def test_gil_released_while_running(self):
        c = bl.Connectome.load(LARVA)
        stop, count = threading.Event(), [0]

        def spin():
            while not stop.is_set():
                count[0] += 1

        t = threading.Thread(target=spin)
        t.start()
        before = count[0]
        bl.simulate(c, stimulus=[{"select": {"cell_type": "sensory"}, "rate_hz": 150.0}], trials=1,
                    duration_ms=1000.0, backend="reference")
        during = count[0] - before
        stop.set()
        t.join()
        # With the GIL held through the C call the other thread could not have run at all.
        self.assertGreater(during, 1000)

    def test_keyboard_interrupt_stops_cleanly(self):
        c = bl.Connectome.load(LARVA)
        stim = [{"select": {"cell_type": "sensory"}, "rate_hz": 150.0}]
        timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        with self.assertRaises(KeyboardInterrupt):
            bl.simulate(c, stimulus=stim, trials=5000, duration_ms=1000.0, backend="cpu", threads=1)
        timer.join()
        r = bl.simulate(c, stimulus=stim, trials=1, duration_ms=10.0)  # the library is fine afterwards
        self.assertEqual(r.counts.shape, (1, 2952))


class RecordTest(TempDirCase):
    def test_run_plan_record_and_verify(self):
        plan = small_larva_plan(self.tmp)
        rec = bl.run_plan(plan, root=os.path.join(self.tmp, "rec"), backend="cpu", threads=2)
        self.assertIsInstance(rec, bl.Record)
        # After a run, Ctrl-C is Python's again (KeyboardInterrupt), not a signal that ends the process.
        with self.assertRaises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            threading.Event().wait(5.0)
        self.assertEqual(rec.status, "DONE")
        self.assertEqual(rec.plan["id"], "larva-orn-150hz")
        self.assertEqual(rec.run["backend"], "cpu")
        for name in rec.artifacts:
            self.assertTrue(os.path.isfile(rec.artifact_path(name)))
        np.testing.assert_array_equal(rec.counts, np.load(os.path.join(rec.path, "counts.npy")))
        np.testing.assert_allclose(rec.rates_mean_hz, rec.counts.mean(axis=0) / 0.2, rtol=1e-14)
        self.assertEqual(rec.summary, json.load(open(os.path.join(rec.path, "summary.json"))))
        self.assertIn("active_neurons", rec.propagation["pooled_over_trials"])
        self.assertEqual(len(rec.rates["external_id"]), 2952)
        self.assertEqual(rec.depth.shape, (2952,))
        self.assertEqual(rec.final_v.shape, (3, 2952))
        self.assertEqual(rec.rates_sd_hz.shape, (2952,))
        self.assertEqual(rec.spikes.population, "drosophila-larva-winding2023")
        self.assertEqual(rec["summary.json"], rec.summary)
        self.assertEqual(len(rec.hash), 64)
        with self.assertRaises(KeyError):
            rec.load("no-such-artifact.npy")
        v = rec.verify()
        self.assertTrue(v)
        self.assertIn("ok", repr(v))
        self.assertIn("n=", repr(rec.spikes))
        self.assertIn(rec.name, repr(rec))
        self.assertIn("trials", repr(bl.simulate(bl.Connectome.load(LARVA), trials=1, duration_ms=5.0)))
        self.assertEqual(v.artifacts, len(rec.artifacts))
        self.assertTrue(bl.verify(rec.path))
        self.assertEqual(subprocess.run([CLI, "verify", rec.path], capture_output=True).returncode, 0)
        # Tamper: both verifiers say no, and name the file.
        with open(os.path.join(rec.path, "summary.json"), "a") as f:
            f.write(" ")
        v = rec.verify()
        self.assertFalse(v)
        self.assertIn("FAILED", repr(v))
        self.assertIn("summary.json", v.message)
        self.assertTrue(any("summary.json" in p for p in v.problems))
        cli = subprocess.run([CLI, "verify", rec.path], capture_output=True, text=True)
        self.assertNotEqual(cli.returncode, 0)
        self.assertIn("summary.json", cli.stdout + cli.stderr)

    def test_run_plan_keyboard_interrupt_fails_the_record(self):
        # Ctrl-C during run_plan stops it between waves of trials (the context's
        # cancel): KeyboardInterrupt, and the record is FAILED, saying so.
        plan = small_larva_plan(self.tmp, trials=4000, duration_ms=1000.0)
        root = os.path.join(self.tmp, "cancelled")
        timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        with self.assertRaises(KeyboardInterrupt):
            bl.run_plan(plan, root=root, backend="cpu", threads=1, force=True)
        timer.join()
        [rec] = glob.glob(os.path.join(root, "*"))
        self.assertTrue(os.path.isfile(os.path.join(rec, "FAILED")))
        self.assertIn("cancelled after", json.load(open(os.path.join(rec, "manifest.json")))["message"])

    def test_spikes_one_file_per_trial(self):
        import h5py
        w = _core.record_writer(self.tmp, "per-trial")
        for trial, (ts, ids) in enumerate([([0.1, 0.5], [3, 1]), ([0.2], [7])]):
            with h5py.File(w.path("spikes/trial-%04d.h5" % trial), "w") as f:
                g = f.create_group("spikes/pop")
                g.attrs["sorting"] = "by_time"
                g["timestamps"] = np.array(ts)
                g["node_ids"] = np.array(ids, dtype=np.uint64)
        rec = bl.Record(w.seal())
        self.assertEqual(rec.spike_files, ["spikes/trial-0000.h5", "spikes/trial-0001.h5"])
        sp = rec.spikes
        np.testing.assert_array_equal(sp.timestamps_ms, [0.1, 0.5, 0.2])
        np.testing.assert_array_equal(sp.node_ids, [3, 1, 7])
        np.testing.assert_array_equal(sp.trials, [0, 0, 1])
        self.assertEqual(rec.load("spikes/trial-0001.h5").sorting, "by_time")
        empty = _core.record_writer(self.tmp, "no-spikes")
        with self.assertRaises(KeyError):
            bl.Record(empty.seal()).spikes

    def test_run_plan_errors(self):
        with self.assertRaises(bl.Error) as e:
            bl.run_plan(os.path.join(self.tmp, "missing.toml"), root=self.tmp)
        self.assertIn("missing.toml", str(e.exception))
        bad = os.path.join(self.tmp, "bad.toml")
        with open(bad, "w") as f:
            f.write('format = "brainlesslab-plan"\nformat_version = 4\nid = "x"\noperation = "connectome"\nbogus = 1\n')
        with self.assertRaises(bl.Error) as e:
            bl.run_plan(bad, root=self.tmp)
        self.assertIn("bad.toml", str(e.exception))
        with self.assertRaises(FileNotFoundError):
            bl.Record(self.tmp)

    def test_record_writer(self):
        w = _core.record_writer(self.tmp, "derived")
        self.assertTrue(w.dir.endswith("derived"))
        with open(w.path("sub/a.txt"), "w") as f:
            f.write("hello\n")
        for bad in ("../escape", "manifest.json", "", "a/../b"):
            with self.assertRaises(bl.Error, msg=bad):
                w.path(bad)
        with self.assertRaises(bl.Error):
            w.set_json("k", "{not json")
        with self.assertRaises(bl.Error):
            w.add_input("x", os.path.join(self.tmp, "nope"))
        w.set_json("note", '{"a": 1}')
        d = w.seal()
        with self.assertRaises(ValueError):
            w.seal()
        r = bl.Record(d)
        self.assertEqual(r.manifest["note"], {"a": 1})
        self.assertEqual(r.artifacts, ["sub/a.txt"])
        self.assertTrue(r.verify())
        with self.assertRaises(bl.Error) as e:
            _core.record_writer(self.tmp, "derived")
        self.assertEqual(e.exception.status, "already exists")
        f = _core.record_writer(self.tmp, "failed")
        fd = f.fail("on purpose")
        self.assertEqual(bl.Record(fd).status, "FAILED")
        self.assertFalse(bl.Record(fd).verify())


if __name__ == "__main__":
    main()
