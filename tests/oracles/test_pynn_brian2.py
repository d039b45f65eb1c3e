"""pyNN.brainlesslab against pyNN.brian2 (Debian's PyNN 0.10.1 on Brian2
2.5.1, numpy target): the same PyNN scripts (tests/oracles/pynn/) run on both.

  cond, hh  (euler on both sides): identical spike trains and bit-identical
            v, gsyn_exc, gsyn_inh at every step
  order     twelve projections adding into one variable in one step: bit-
            identical sums (Brian2 runs them in the order of their names)
  stdp      spike-pair additive STDP: bit-identical weights after the run,
            identical spikes, bit-identical v and gsyn_exc
  curr      IF_curr_exp, integrated exactly on both sides (Brian2's 'exact',
            our 'linear' with its propagator as Brian2 prints it): identical
            spike trains and bit-identical v at every step
  curr_alpha (BL_PYNN_LONG=1) IF_curr_alpha, exact there and euler here:
            the same number of spikes per neuron, each spike within 0.5 ms;
            the largest v difference is printed
  poisson   different random streams (Brian2's rand() and our Philox
            counter stream): the Poisson sources' count within 5 sigma of
            rate * duration * n on both sides, and each population's spike
            count within 25% of pyNN.brian2's (measured: 3-12%; five seeds
            of ours spread +-10%)
  va_coba   tests/oracles/pynn/va_coba.py, a PyNN script in the style of
            PyNN's VA benchmark, run unchanged on both (get_simulator):
            mean rates of both populations within 25% of pyNN.brian2's
BL_PYNN_LONG=1 adds IF_curr_alpha (Brian2's exact solution of it takes
SymPy long). Skips (77) without pyNN, Brian2 or the built package."""
import os
import subprocess
import sys
import tempfile

# NumPy's AVX-512 exp is not glibc's (see test_eqlang_brian2.py): Brian2's
# numpy target runs with that dispatch off, as our interpreter calls libm.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libm_numpy  # noqa: E402  (before NumPy: it may run this process again)

libm_numpy.reexec_with_libm()

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("BL_SOURCE_DIR", os.path.abspath(os.path.join(HERE, "..", "..")))
BUILD = os.environ.get("BL_BUILD_DIR", os.path.join(SOURCE, "build"))
PYPATH = os.path.join(BUILD, "python")


def skip(why):
    print("SKIP:", why)
    sys.exit(77)


if os.environ.get("BL_SANITIZED") == "1":
    # The extension is instrumented and python3 is not: the runtimes would
    # have to be preloaded into every pyNN process. python.test_py_pynn runs
    # the backend under the sanitizers (its launcher preloads them).
    skip("the sanitized build's extension runs in python.test_py_pynn; this oracle runs in the plain build")
try:
    import pyNN  # noqa: F401
    import neo  # noqa: F401
    import brian2  # noqa: F401
except ImportError as e:
    skip("needs python3-pynn and python3-brian (%s)" % e)
if not os.path.exists(os.path.join(PYPATH, "brainlesslab", "pynn", "__init__.py")):
    skip("the Python package is not built (%s)" % PYPATH)

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(cmd, env_extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = PYPATH + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(env_extra or {})
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=900)
    if r.returncode != 0:
        sys.stderr.write(r.stdout[-3000:] + r.stderr[-6000:])
        raise SystemExit("FAIL: %s exited %d" % (" ".join(cmd), r.returncode))
    return r.stdout


def ulps(a, b):
    a = np.ascontiguousarray(a, dtype=np.float64).view(np.int64)
    b = np.ascontiguousarray(b, dtype=np.float64).view(np.int64)
    a = np.where(a < 0, np.int64(-2**63) - a, a)
    b = np.where(b < 0, np.int64(-2**63) - b, b)
    return int(np.max(np.abs(a - b))) if a.size else 0


def trains(d, label):
    keys = sorted((k for k in d.files if k.startswith(label + "/spikes/")), key=lambda k: int(k.rsplit("/", 1)[1]))
    return [d[k] for k in keys]


def labels(d):
    return sorted(set(k.split("/")[0] for k in d.files))


def compare_identical(case, a, b):
    check(sorted(a.files) == sorted(b.files), "%s: the same populations and signals (%s)" % (case, ", ".join(labels(a))))
    for label in labels(a):
        ta, tb = trains(a, label), trains(b, label)
        n = sum(t.size for t in ta)
        same = len(ta) == len(tb) and all(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(ta, tb))
        if ta or tb:
            check(same, "%s/%s: identical spike trains (%d spikes in %d neurons)" % (case, label, n, len(ta)))
        for k in sorted(f for f in a.files if f.startswith(label + "/") and "/spikes/" not in f):
            x, y = a[k], b[k]
            if x.shape != y.shape:
                check(False, "%s %s: shape %s against %s" % (case, k, x.shape, y.shape))
                continue
            both_nan = np.isnan(x) & np.isnan(y)
            u = ulps(np.where(both_nan, 0, x), np.where(both_nan, 0, y))
            first = ""
            if u:
                i = np.argwhere(~(np.isclose(x, y, rtol=0, atol=0) | both_nan))[0]
                first = " (first at sample %d neuron %d: %r against %r)" % (i[0], i[1], x[tuple(i)], y[tuple(i)])
            check(u == 0, "%s %s: %d samples x %d neurons, max %d ulps%s" % (case, k, x.shape[0], x.shape[1], u, first))


def compare_deviation(case, a, b):
    for label in labels(a):
        ta, tb = trains(a, label), trains(b, label)
        counts_a, counts_b = [t.size for t in ta], [t.size for t in tb]
        check(counts_a == counts_b, "%s/%s: spikes per neuron %s (pyNN.brian2) and %s" % (case, label, counts_a, counts_b))
        if counts_a == counts_b:
            dt = max((float(np.max(np.abs(x - y))) for x, y in zip(ta, tb) if x.size), default=0.0)
            check(dt <= 0.5 + 1e-9, "%s/%s: largest spike time difference %.3g ms (exact against euler; bound 0.5 ms)"
                  % (case, label, dt))
        v = "%s/v" % label
        if v in a.files:
            print("     %s: largest |v difference| %.4g mV (around spikes one step apart), %.4g mV at the end"
                  % (case + "/" + label, float(np.max(np.abs(a[v] - b[v]))), float(np.max(np.abs(a[v][-1] - b[v][-1])))))


def compare_counts(case, a, b, expect_drive):
    for label in labels(a):
        na, nb = sum(t.size for t in trains(a, label)), sum(t.size for t in trains(b, label))
        if label in expect_drive:
            mean = expect_drive[label]
            for who, n in (("pyNN.brian2", na), ("pyNN.brainlesslab", nb)):
                check(abs(n - mean) <= 5 * mean ** 0.5, "%s/%s: %s %d spikes, expected %.0f +- %.0f (5 sigma)"
                      % (case, label, who, n, mean, 5 * mean ** 0.5))
        else:
            dev = (nb - na) / max(na, 1)
            check(na > 0 and abs(dev) <= 0.25, "%s/%s: %d spikes (pyNN.brian2) and %d: %+.1f%% (bound 25%%)"
                  % (case, label, na, nb, 100 * dev))


def main():
    cases = ["order", "cond", "hh", "stdp", "curr", "poisson"]
    if os.environ.get("BL_PYNN_LONG") == "1":
        cases.append("curr_alpha")
    scen = os.path.join(HERE, "pynn", "scenarios.py")
    va = os.path.join(HERE, "pynn", "va_coba.py")
    with tempfile.TemporaryDirectory() as tmp:
        out = {}
        for backend in ("brian2", "brainlesslab"):
            out[backend] = os.path.join(tmp, backend)
            os.mkdir(out[backend])
            run([sys.executable, scen, backend, out[backend]] + cases)
            hook = "import brainlesslab_pynn_hook\n" if backend == "brainlesslab" else \
                "import brian2\nbrian2.prefs.codegen.target = 'numpy'\nbrian2.seed(20261202)\n"
            runner = hook + "import runpy, sys\nsys.argv = sys.argv[1:]\nrunpy.run_path(sys.argv[0], run_name='__main__')\n"
            run([sys.executable, "-c", runner, va, backend, "--out", os.path.join(out[backend], "va_coba.npz")])
        load = lambda backend, case: np.load(os.path.join(out[backend], case + ".npz"))
        for case in ("order", "cond", "hh", "stdp", "curr"):
            compare_identical(case, load("brian2", case), load("brainlesslab", case))
        for case in [c for c in cases if c.startswith("curr_")]:
            compare_deviation(case, load("brian2", case), load("brainlesslab", case))
        compare_counts("poisson", load("brian2", "poisson"), load("brainlesslab", "poisson"),
                       {"drive": 200 * 30.0 * 0.5})
        compare_counts("va_coba", load("brian2", "va_coba"), load("brainlesslab", "va_coba"),
                       {"stim": 100 * 50.0 * 0.05})
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
