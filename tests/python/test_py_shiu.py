"""brainlesslab.shiu: Shiu et al.'s run_exp / load_exps / get_rate on this
engine, on a generated FlyWire-format connectome (completeness CSV +
connectivity Parquet written by the parquet-wasm oracle).

- the spikes of run_exp equal the C engine's (`brainlesslab run` of the same
  experiment written as a plan with FlyWire-id selectors);
- the Parquet run_exp writes, read back by the npm oracle, holds exactly
  those spikes in the upstream columns and order;
- get_rate equals an independent NumPy computation of upstream's definition.
Parts that need a library piece not in this build (the Parquet writer or
reader, `import flywire`) are skipped with the reason."""
import glob
import json
import os
import subprocess
import unittest

import numpy as np

import brainlesslab as bl
from brainlesslab import shiu
from support import CLI, TempDirCase, main, node_oracle_ready, parquet_oracle

N = 400
RNG = np.random.default_rng(783)


def generate(dir):
    """Completeness CSV and connectivity Parquet in the upstream layout."""
    ids = 720575940600000000 + np.sort(RNG.choice(10**9, size=N, replace=False))
    ids = ids[RNG.permutation(N)]  # completeness order is not id order
    sign = np.where(RNG.random(N) < 0.8, 1, -1)
    pre, post = [], []
    for i in range(N):
        t = np.sort(RNG.choice(N, size=25, replace=False))
        pre += [i] * len(t)
        post += t.tolist()
    pre, post = np.array(pre), np.array(post)
    syn = RNG.integers(1, 30, size=len(pre))
    comp = os.path.join(dir, "Completeness_test.csv")
    with open(comp, "w") as f:
        f.write(",Completed\n")
        for i in ids:
            f.write("%d,True\n" % i)
    spec = {"columns": [
        {"name": "Presynaptic_ID", "type": "int64", "values": [str(ids[i]) for i in pre]},
        {"name": "Postsynaptic_ID", "type": "int64", "values": [str(ids[i]) for i in post]},
        {"name": "Presynaptic_Index", "type": "int64", "values": pre.tolist()},
        {"name": "Postsynaptic_Index", "type": "int64", "values": post.tolist()},
        {"name": "Connectivity", "type": "int64", "values": syn.tolist()},
        {"name": "Excitatory", "type": "int64", "values": sign[pre].tolist()},
        {"name": "Excitatory x Connectivity", "type": "int64", "values": (syn * sign[pre]).tolist()},
    ]}
    import json
    with open(os.path.join(dir, "spec.json"), "w") as f:
        json.dump(spec, f)
    con = os.path.join(dir, "Connectivity_test.parquet")
    parquet_oracle("write", os.path.join(dir, "spec.json"), con)
    return comp, con, ids, pre, post, syn * sign[pre]


def importer_available():
    r = subprocess.run([CLI, "import", "--list"], capture_output=True, text=True)
    return r.returncode == 0 and "flywire" in r.stdout.split()


@unittest.skipUnless(node_oracle_ready(), "the npm oracle is not installed (cd tests/js && npm ci)")
class ShiuTest(TempDirCase):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.dir = tempfile.mkdtemp(prefix="bl-py-shiu-")
        cls.comp, cls.con, cls.ids, pre, post, w = generate(cls.dir)
        cls.imported = importer_available()
        if cls.imported:
            # run_exp imports the upstream files itself (cached by content).
            cls.path_con = cls.con
            cls.conn = shiu.flywire_connectome(cls.comp, cls.con, os.path.join(cls.dir, "cache"))
        else:
            # The same graph built directly, so the engine side is still tested.
            order = np.lexsort((post, pre))
            offsets = np.concatenate([[0], np.cumsum(np.bincount(pre, minlength=N))])
            cls.path_con = os.path.join(cls.dir, "connectome")
            cls.conn = bl.Connectome.save(cls.path_con, offsets, post[order], w[order], [str(i) for i in cls.ids],
                                          info={"name": "flywire-format-test"})
        cls.exc = [int(cls.ids[i]) for i in (3, 17, 41, 99, 250)]
        cls.exc2 = [int(cls.ids[i]) for i in (5, 6)]
        cls.slnc = [int(cls.ids[i]) for i in (7, 8, 120)]
        cls.params = dict(shiu.default_params, n_run=3, t_run=0.2, r_poi2=60.0)

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.dir, ignore_errors=True)

    def engine_rows(self, silence):
        """The C engine's spikes for the experiment (a plan run by the CLI), as
        upstream rows (t s, trial, flywire_id) ordered by trial, neuron, time."""
        ids = lambda xs: ", ".join('"%d"' % x for x in xs)
        plan = ['format = "brainlesslab-plan"', "format_version = 4", 'id = "shiu-test"',
                'operation = "connectome"', "[connectome]", 'path = "%s"' % self.conn.path,
                "[model]", 'preset = "shiu2024"',
                "[[stimulus]]", 'name = "exc"', "ids = [%s]" % ids(self.exc), "rate_hz = 150.0",
                "[[stimulus]]", 'name = "exc2"', "ids = [%s]" % ids(self.exc2), "rate_hz = 60.0"]
        if silence:
            plan += ["[[silence]]", 'name = "slnc"', "ids = [%s]" % ids(self.slnc)]
        plan += ["[run]", "trials = 3", "duration_ms = 200.0", "seed = %d" % shiu.SEED, 'backend = "reference"']
        path = os.path.join(self.tmp, "plan.toml")
        with open(path, "w") as f:
            f.write("\n".join(plan) + "\n")
        subprocess.run([CLI, "run", path, "--root", os.path.join(self.tmp, "rec"), "--quiet"], check=True,
                       capture_output=True)
        sp = bl.Record(glob.glob(os.path.join(self.tmp, "rec", "*"))[0]).spikes
        steps = np.rint(sp.timestamps_ms / 0.1).astype(np.int64)
        neurons = sp.node_ids.astype(np.int64)
        trials = sp.trials.astype(np.int64)
        o = np.lexsort((steps, neurons, trials))
        fid = np.array([int(x) for x in self.conn.external_ids], dtype=np.int64)
        return steps[o] * 0.0001, trials[o], fid[neurons[o]]

    def python_rows(self, silence):
        over, dur, n_run, r1, r2 = shiu.engine_params(self.params)
        stim = [{"ids": [str(i) for i in self.exc], "rate_hz": r1}, {"ids": [str(i) for i in self.exc2], "rate_hz": r2}]
        res = bl.simulate(self.conn, stimulus=stim, silence=[{"ids": [str(i) for i in self.slnc]}] if silence else [],
                          trials=n_run, duration_ms=dur, seed=shiu.SEED, params=over)
        return shiu.spike_rows(self.conn, res, res.dt_ms)

    def test_spikes_equal_engine(self):
        for silence in (False, True):
            got = self.python_rows(silence)
            want = self.engine_rows(silence)
            self.assertGreater(len(want[0]), 100)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)

    def test_run_exp_parquet(self):
        out = os.path.join(self.tmp, "results")
        try:
            path = shiu.run_exp("exp_a", self.exc, out, self.comp, self.path_con, params=self.params,
                                neu_slnc=self.slnc, neu_exc2=self.exc2, n_proc=2)
        except bl.Error as e:
            if "not in this build" in str(e):
                self.skipTest("run_exp's Parquet output: %s" % e)
            raise
        self.assertEqual(path, os.path.join(out, "exp_a.parquet"))
        back = parquet_oracle("read", path)
        t, trial, fid = self.engine_rows(True)
        cols = back["columns"]
        self.assertEqual(list(cols), ["t", "trial", "flywire_id", "exp_name"])
        self.assertEqual(cols["t"]["type"], "Float64")
        self.assertEqual(cols["trial"]["type"], "Int64")
        self.assertEqual(cols["flywire_id"]["type"], "Int64")
        self.assertIn("Utf8", cols["exp_name"]["type"])
        np.testing.assert_array_equal(np.array(cols["t"]["values"], dtype=np.float64), t)
        np.testing.assert_array_equal(np.array([int(x) for x in cols["trial"]["values"]]), trial)
        np.testing.assert_array_equal(np.array([int(x) for x in cols["flywire_id"]["values"]]), fid)
        self.assertEqual(set(cols["exp_name"]["values"]), {"exp_a"})
        # What pandas' to_parquet writes upstream: nullable fields and the
        # "pandas" schema (a RangeIndex over the rows, each column's dtype).
        self.assertTrue(all(c["nullable"] for c in cols.values()))
        meta = json.loads(back["metadata"]["pandas"])
        self.assertEqual(meta["index_columns"], [{"kind": "range", "name": None, "start": 0, "stop": len(t), "step": 1}])
        self.assertEqual([(c["name"], c["pandas_type"], c["numpy_type"]) for c in meta["columns"]],
                         [("t", "float64", "float64"), ("trial", "int64", "int64"),
                          ("flywire_id", "int64", "int64"), ("exp_name", "unicode", "object")])
        # upstream's force_overwrite: an existing file is kept
        self.assertIsNone(shiu.run_exp("exp_a", self.exc, out, self.comp, self.path_con, params=self.params))
        try:
            df = shiu.load_exps([path])
        except bl.Error as e:
            self.skipTest("load_exps: %s" % e)
        np.testing.assert_array_equal(np.asarray(df["t"]), t)
        np.testing.assert_array_equal(np.asarray(df["flywire_id"]), fid)

    def test_upstream_example(self):
        """docs/python.md's example, line for line (only the paths and ids are this test's)."""
        from brainlesslab.shiu import run_exp
        from brainlesslab.shiu import default_params as params
        from brainlesslab import shiu as utl

        config = {
            'path_res'  : os.path.join(self.tmp, 'results', 'new'),
            'path_comp' : self.comp,
            'path_con'  : self.path_con,
            'n_proc'    : -1,
        }
        neu_sugar = self.exc
        try:
            run_exp(exp_name='sugarR', neu_exc=neu_sugar, **config)
        except bl.Error as e:
            if "not in this build" in str(e):
                self.skipTest("run_exp's Parquet output: %s" % e)
            raise
        df = utl.load_exps([os.path.join(self.tmp, 'results', 'new', 'sugarR.parquet')])
        df_rate, df_std = utl.get_rate(df, t_run=1, n_run=30)
        self.assertEqual(params['n_run'], 30)
        self.assertEqual(list(df_rate.columns)[-1], 'sugarR')
        # the driven neurons fire near the Poisson rate (150 Hz input, weight enough to spike)
        rates = np.asarray(df_rate['sugarR'], dtype=float)
        index = list(np.asarray(df_rate.index))
        for f in neu_sugar:
            self.assertGreater(rates[index.index(f)], 50.0)
            # upstream's objects: pandas DataFrames indexed by flyid, read with .loc
            self.assertEqual(df_rate.loc[f, 'sugarR'], rates[index.index(f)])
        self.assertEqual((df_rate.index.name, df_rate.columns.name), ('flyid', 'exp_name'))
        self.assertEqual(len(np.unique(np.asarray(df['trial']))), 30)
        self.assertEqual(len(df.loc[df['exp_name'] == 'sugarR']), len(df))

    def test_unknown_id_names_its_argument(self):
        out = os.path.join(self.tmp, "results")
        missing = 720575940999999999
        for arg in ("neu_exc", "neu_exc2", "neu_slnc"):
            kw = {"neu_exc": list(self.exc)}
            kw[arg] = list(kw.get(arg, [])) + [missing]
            with self.assertRaises(ValueError) as e:
                shiu.run_exp("bad_" + arg, path_res=out, path_comp=self.comp, path_con=self.path_con,
                             params=self.params, **kw)
            msg = str(e.exception)
            self.assertIn("run_exp: %s: 1 id(s) not among the %d neurons" % (arg, N), msg)
            self.assertIn(str(missing), msg)
            self.assertFalse(os.path.exists(os.path.join(out, "bad_%s.parquet" % arg)))
        with self.assertRaises(ValueError) as e:
            shiu.run_exp("bad_text", ["sugar"], out, self.comp, self.path_con, params=self.params)
        self.assertIn("neu_exc: 'sugar' is not a FlyWire id", str(e.exception))

    def test_skip_existing(self):
        out = os.path.join(self.tmp, "results")
        os.makedirs(out)
        open(os.path.join(out, "exists.parquet"), "w").close()
        self.assertIsNone(shiu.run_exp("exists", self.exc, out, self.comp, self.path_con, params=self.params))

    def test_importer(self):
        if not self.imported:
            self.skipTest("`brainlesslab import flywire` is not in this build yet; the graph was built from the "
                          "same arrays with Connectome.save instead")
        self.assertEqual([int(x) for x in self.conn.external_ids], self.ids.tolist())


class TableTest(TempDirCase):
    """The extension's Parquet writer and table reader (the library's), and load_exps over them."""

    def test_write_read_roundtrip(self):
        from brainlesslab import _core
        p = os.path.join(self.tmp, "a.parquet")
        t = np.array([0.0, 0.0001, 0.5])
        try:
            _core.write_parquet(p, [("t", "double", t), ("trial", "int64", [0, 1, 2]),
                                    ("flywire_id", "int64", [720575940600000001, 2, 3]),
                                    ("exp_name", "string", ["x", "x", "x"])], "zstd")
        except bl.Error as e:
            self.skipTest("the library's Parquet writer: %s" % e)
        cols = _core.read_table(p)
        self.assertEqual(list(cols), ["t", "trial", "flywire_id", "exp_name"])
        np.testing.assert_array_equal(cols["t"], t)
        np.testing.assert_array_equal(cols["flywire_id"], [720575940600000001, 2, 3])
        self.assertEqual(cols["exp_name"], ["x", "x", "x"])
        self.assertEqual(list(_core.read_table(p, ["trial"])), ["trial"])
        df = shiu.load_exps([p, p])
        self.assertEqual(len(df), 6)
        self.assertEqual(list(np.asarray(df["exp_name"])), ["x"] * 6)
        # as upstream's pd.concat: each file's frame keeps its own index
        self.assertEqual(list(df.index), [0, 1, 2, 0, 1, 2])
        self.assertEqual(df.loc[1, "flywire_id"].tolist(), [2, 2])
        self.assertEqual(str(df["t"].dtype), "float64")
        with self.assertRaises(bl.Error) as e:
            _core.read_table(p, ["no_such_column"])
        self.assertIn("no_such_column", str(e.exception))
        with self.assertRaises(bl.Error):
            _core.read_table(os.path.join(self.tmp, "missing.parquet"))
        with self.assertRaises(bl.Error):
            shiu.load_exps([os.path.join(self.tmp, "missing.parquet")])
        with self.assertRaises(ValueError):
            _core.write_parquet(os.path.join(self.tmp, "b.parquet"), [("a", "complex", [1])])
        with self.assertRaises(bl.Error):  # columns of unequal length
            _core.write_parquet(os.path.join(self.tmp, "c.parquet"), [("a", "int64", [1, 2]), ("b", "int64", [1])])
        with self.assertRaises(bl.Error):
            _core.write_parquet(os.path.join(self.tmp, "d.parquet"), [("a", "int64", [1])], "no-such-codec")

    def test_import_failure_is_reported(self):
        comp = os.path.join(self.tmp, "c.csv")
        with open(comp, "w") as f:
            f.write(",Completed\n1,True\n")
        con = os.path.join(self.tmp, "c.parquet")
        open(con, "wb").close()
        with self.assertRaises(bl.Error) as e:
            shiu.flywire_connectome(comp, con, os.path.join(self.tmp, "cache"))
        self.assertIn("import flywire failed", str(e.exception))
        self.assertFalse(glob.glob(os.path.join(self.tmp, "cache", "connectome-*")))


class GetRateTest(unittest.TestCase):
    def test_get_rate_equals_numpy(self):
        rng = np.random.default_rng(5)
        n = 3000
        fid = rng.choice([720575940600000001, 720575940600000002, 720575940600000003, 720575940611111111], n)
        trial = rng.integers(0, 30, n)
        exp = rng.choice(["ctl", "silenced"], n)
        exp[(fid == 720575940611111111)] = "ctl"  # a neuron that spikes in one experiment only
        t = rng.random(n)
        df = shiu.SpikeTable(t, trial, fid, exp)
        self.check(df, fid, trial, exp, None)
        self.check(df, fid, trial, exp, 30)
        with self.assertRaises(ValueError):
            shiu.get_rate(df, 1.0, 10)  # a trial beyond n_run
        with self.assertRaises(ValueError):
            shiu.get_rate(df)
        with self.assertRaises(ValueError):
            shiu.get_rate(df, t_run=1.0, duration=1.0)

    def check(self, df, fid, trial, exp, n_run):
        if n_run is None:
            rate, std = shiu.get_rate(df, duration=2.0, flyid2name={720575940600000001: "sugar"})
        else:
            rate, std = shiu.get_rate(df, 2.0, n_run, flyid2name={720575940600000001: "sugar"})
        values = rate.values if hasattr(rate, "values") else None
        flyids = np.asarray(rate.index)
        self.assertEqual(list(flyids), sorted(set(fid.tolist())))
        self.assertEqual(list(rate.columns)[-2:], ["ctl", "silenced"])
        for e in ("ctl", "silenced"):
            col_r, col_s = np.asarray(rate[e], dtype=float), np.asarray(std[e], dtype=float)
            for k, f in enumerate(flyids):
                # upstream: one rate per trial in which the neuron spiked
                per_trial = [np.sum((fid == f) & (exp == e) & (trial == tr)) for tr in range(30)]
                if n_run is None:  # earlier upstream: the trials with spikes only
                    r = np.array([c for c in per_trial if c > 0], dtype=float) / 2.0
                else:
                    r = np.array(per_trial, dtype=float) / 2.0 if any(per_trial) else np.zeros(0)
                if len(r) == 0:
                    self.assertTrue(np.isnan(col_r[k]))
                    continue
                self.assertAlmostEqual(col_r[k], r.mean(), places=12)
                self.assertAlmostEqual(col_s[k], np.sqrt(np.mean((r - r.mean()) ** 2)), places=12)
        self.assertEqual(rate["name"].iloc[0], "sugar")
        self.assertEqual(list(rate.columns)[0], "name")  # upstream inserts it first
        self.assertIsNotNone(values)

    def test_without_pandas(self):
        """load_exps and get_rate return pandas objects, as upstream; without pandas, a message that says so."""
        import sys
        df = shiu.SpikeTable(np.array([0.1]), np.array([0]), np.array([7]), np.array(["e"]))
        saved = sys.modules.get("pandas")
        sys.modules["pandas"] = None  # import pandas now raises ImportError
        try:
            for call, name in ((lambda: shiu.get_rate(df, 1.0, 1), "get_rate"),
                               (lambda: shiu.load_exps(["x.parquet"]), "load_exps")):
                with self.assertRaises(ImportError) as e:
                    call()
                self.assertIn("%s returns a pandas DataFrame" % name, str(e.exception))
                self.assertIn("python3-pandas", str(e.exception))
        finally:
            if saved is None:
                del sys.modules["pandas"]
            else:
                sys.modules["pandas"] = saved

    def test_engine_params(self):
        over, dur, n_run, r1, r2 = shiu.engine_params(shiu.default_params)
        preset = bl.preset_params("shiu2024")
        for k, v in over.items():
            self.assertEqual(v, preset[k], k)
        self.assertEqual((dur, n_run, r1, r2), (1000.0, 30, 150.0, 0.0))
        try:
            from brian2 import Hz, ms, mV
        except ImportError:
            brian = None
        else:
            brian = {"t_run": 1000 * ms, "v_0": -52 * mV, "v_rst": -52 * mV, "v_th": -45 * mV, "t_mbr": 20 * ms,
                     "tau": 5 * ms, "t_rfc": 2.2 * ms, "t_dly": 1.8 * ms, "w_syn": .275 * mV, "r_poi": 150 * Hz,
                     "r_poi2": 0 * Hz, "f_poi": 250, "n_run": 30, "eqs": "ignored", "eq_th": "", "eq_rst": ""}
        if brian:
            self.assertEqual(shiu.engine_params(brian), (over, dur, n_run, r1, r2))
        with self.assertRaises(ValueError):
            shiu.engine_params({"no_such": 1})
        with self.assertRaises(ValueError):
            shiu.engine_params({"n_run": 0})
        with self.assertRaises(ValueError):
            shiu.load_exps([])


if __name__ == "__main__":
    main()
