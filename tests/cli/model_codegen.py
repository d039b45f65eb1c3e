#!/usr/bin/env python3
"""Generated C against the interpreter, byte for byte (issue 23, "How it runs").

Every model of the Brian2 oracle's suite (tests/oracles/test_eqlang_brian2.py:
LIF linear/euler/rk4, AdEx, Izhikevich, COBA euler/rk2/exponential_euler,
CUBA, HH rk4/exponential_euler, a noisy LIF), the shiu2024 equations with
stimulus events, and a model that uses every operation the language has
(comparisons, and/or/not, clip, int/floor/ceil, abs, sin/cos/tanh, log,
sqrt, powers other than 2, t, i) run through `brainlesslab model run
--exec interp` and `--exec jit`; every output file must be identical.

Then the cache (BL_CACHE_DIR, a fresh directory): the first run compiles
(miss), the second loads (hit); a truncated object and a wrong digest are
compiled again, never loaded; four runs at once on an empty cache all
succeed. Then the fallbacks: BL_CC=/nonexistent, a compiler that fails or
one that runs past BL_CC_TIMEOUT runs the interpreter and says so (auto), or
is refused naming why (jit); BL_EQ_JIT=0 keeps the interpreter."""
import glob
import os
import subprocess
import sys
import tempfile
import types

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "oracles"))
# The suite's models without Brian2 itself (the oracle imports it at the top;
# this test needs only the model definitions).
os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "")
sys.modules.setdefault("brian2", types.ModuleType("brian2"))
import test_eqlang_brian2 as suite  # noqa: E402

CLI = os.environ.get("BL_CLI", "build/brainlesslab")
N = suite.N

SHIU = dict(name="shiu2024_linear", method="linear", eqs=suite.LIF_EQS,
            params=dict(suite.LIF_PARAMS, w_syn="0.275*mV", f_poi="250"), threshold="v > v_th",
            reset="v = v_rst; g = 0*mV", refractory="t_rfc", ms=100, on_input="v += f_poi * w_syn",
            input_every=3, init={"v": np.full(N, -0.052)})
EVERY_OP = dict(
    name="every_op_euler", method="euler",
    eqs="""
dv/dt = (clip(v_0 - v, -20*mV, 20*mV) + a*abs(sin(2*pi_*t/period)) + k*(int(i) % 3) * mV) / tau : volt (unless refractory)
du/dt = (floor(x) + ceil(x) - 2*x + tanh(x) * cos(x) + log(1 + x**2) + sqrt(1 + x**3) + abs(x)**1.5 * int(x > 0.5)
         + int((x < 0.2) and not (x >= 0.9)) * 0.1 - int(x <= 0.1 or x == 0.3) * 0.2 + int(x != 0.7)*0.01 - u) / tau : 1
x = (v - v_0) / (10*mV) + 0.5 : 1
""".replace("(int(i) % 3)", "(int(i / 3.0))"),
    params={"v_0": "-52*mV", "tau": "10*ms", "a": "3*mV", "period": "7*ms", "pi_": "3.141592653589793",
            "k": "0.5", "v_th": "-45*mV", "v_rst": "-60*mV"},
    threshold="v > v_th and u > -1", reset="v = v_rst; u += 0.25", refractory="2*ms", ms=60,
    init={"v": -0.06 + 0.02 * suite.rng(99).random(N), "u": suite.rng(98).random(N)})
MODELS = suite.MODELS + [SHIU, EVERY_OP]


def write_model(model, work):
    path = os.path.join(work, model["name"] + ".toml")
    lines = ["[model]", f'method = "{model["method"]}"', "equations = " + suite.toml_str(model["eqs"]),
             "threshold = " + suite.toml_str(model["threshold"])]
    for key in ("reset", "refractory", "on_input"):
        if model.get(key):
            lines.append(f"{key} = " + suite.toml_str(model[key]))
    lines.append("[model.parameters]")
    lines += [f'{k} = "{v}"' for k, v in model["params"].items()]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    args = [path, "--duration", str(model["ms"]), "--dt", str(model.get("dt", suite.DT_MS)), "--n", str(N)]
    for k, v in model["init"].items():
        p = os.path.join(work, f'{model["name"]}_init_{k}.npy')
        np.save(p, np.asarray(v, dtype=np.float64))
        args += ["--init", f"{k}={p}"]
    if "noise_seed" in model:
        steps = int(round(model["ms"] / model.get("dt", suite.DT_MS)))
        np.random.seed(model["noise_seed"])
        p = os.path.join(work, f'{model["name"]}_noise.npy')
        np.save(p, np.random.randn(steps, N))
        args += ["--noise", p]
    if model.get("input_every"):
        args += ["--input-every", str(model["input_every"])]
    return args


def run(args, out, exec_=None, env=None, want_rc=0):
    cmd = [CLI, "model", "run"] + args + ["--out", out] + (["--exec", exec_] if exec_ else [])
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != want_rc:
        raise SystemExit(f"FAIL: {' '.join(cmd)}: exit {r.returncode} (expected {want_rc}): {r.stderr.strip()}")
    return r.stdout + r.stderr


def same_dirs(a, b):
    fa = sorted(os.path.basename(f) for f in glob.glob(os.path.join(a, "*.npy")))
    fb = sorted(os.path.basename(f) for f in glob.glob(os.path.join(b, "*.npy")))
    if fa != fb or not fa:
        return f"files differ: {fa} {fb}"
    for f in fa:
        if open(os.path.join(a, f), "rb").read() != open(os.path.join(b, f), "rb").read():
            x, y = np.load(os.path.join(a, f)), np.load(os.path.join(b, f))
            return f"{f} differs (shapes {x.shape} {y.shape})"
    return None


def main():
    bad = 0
    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ, BL_CACHE_DIR=os.path.join(work, "cache"))
        env.pop("BL_CC", None)
        env.pop("BL_EQ_JIT", None)
        os.environ.update(env)
        for model in MODELS:
            args = write_model(model, work)
            a, b = os.path.join(work, model["name"] + "_interp"), os.path.join(work, model["name"] + "_jit")
            ni = run(args, a, "interp", env)
            nj = run(args, b, "jit", env)
            if "exec: interpreter" not in ni or "exec: generated C" not in nj:
                print(f"FAIL {model['name']}: exec notes: {ni!r} {nj!r}")
                bad = 1
                continue
            why = same_dirs(a, b)
            spikes = len(np.load(os.path.join(a, "spikes_i.npy")))
            print(f"{'identical' if not why else 'DIFFER'}: {model['name']} ({spikes} spikes){': ' + why if why else ''}")
            bad |= why is not None
        if bad:
            return 1

        # ---- the cache
        args = write_model(SHIU, work)
        cdir = os.path.join(work, "cache2")
        env2 = dict(env, BL_CACHE_DIR=cdir)
        ref = os.path.join(work, "ref")
        run(args, ref, "interp", env2)

        def check(tag, want, exec_="jit", e=None, rc=0):
            check.n += 1
            out = os.path.join(work, f"o{check.n}")
            text = run(args, out, exec_, e or env2, rc)
            ok = want in text and (rc != 0 or same_dirs(ref, out) is None)
            note = [l for l in text.splitlines() if l.startswith(("exec:", "brainlesslab model:"))]
            print(f"{'ok' if ok else 'FAIL'}: {tag}: {note[0] if note else text.strip()}")
            return 0 if ok else 1

        check.n = 0
        bad |= check("first run compiles", "cache miss")
        if oct(os.stat(cdir).st_mode & 0o777) != "0o700":
            print("FAIL: cache directory mode", oct(os.stat(cdir).st_mode))
            bad = 1
        bad |= check("second run loads", "cache hit")
        so = glob.glob(os.path.join(cdir, "eq-*.so"))
        if len(so) != 1:
            print("FAIL: expected one cached object:", so)
            return 1
        size = os.path.getsize(so[0])
        with open(so[0], "r+b") as f:
            f.truncate(size // 2)
        bad |= check("truncated object compiled again", "cache miss")
        bad |= check("and loaded after", "cache hit")
        with open(so[0] + ".sha256", "w") as f:
            f.write("0" * 64 + "\n")
        bad |= check("wrong digest compiled again", "cache miss")
        os.remove(so[0] + ".sha256")
        bad |= check("missing digest compiled again", "cache miss")
        with open(so[0], "wb") as f:  # garbage that matches its digest: dlopen refuses it, recompiled
            f.write(b"not an ELF object")
        import hashlib
        with open(so[0] + ".sha256", "w") as f:
            f.write(hashlib.sha256(b"not an ELF object").hexdigest() + "\n")
        bad |= check("garbage object with its digest compiled again", "cache miss")
        # four runs at once on an empty cache
        env3 = dict(env, BL_CACHE_DIR=os.path.join(work, "cache3"))
        procs = [subprocess.Popen([CLI, "model", "run"] + args + ["--out", os.path.join(work, f"par{k}"), "--exec",
                                                                 "jit"], env=env3, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True) for k in range(4)]
        outs = [p.communicate()[0] for p in procs]
        par_ok = all(p.returncode == 0 for p in procs) and all(
            same_dirs(ref, os.path.join(work, f"par{k}")) is None for k in range(4))
        print(f"{'ok' if par_ok else 'FAIL'}: four concurrent runs on an empty cache")
        bad |= not par_ok
        if not par_ok:
            print(outs)
        left = [f for f in os.listdir(os.path.join(work, "cache3")) if "XXXX" in f or f.count(".") > 2]
        if left:
            print("FAIL: temporary files left in the cache:", left)
            bad = 1

        # ---- no compiler, a failing compiler, BL_EQ_JIT=0
        bad |= check("BL_CC=/nonexistent: interpreter", "interpreter (no C compiler: BL_CC=/nonexistent",
                     "auto", dict(env2, BL_CC="/nonexistent"))
        bad |= check("BL_CC=/nonexistent with --exec jit: refused", "generated C asked for but unavailable",
                     "jit", dict(env2, BL_CC="/nonexistent"), rc=1)
        fake = os.path.join(work, "fakecc")
        with open(fake, "w") as f:
            f.write('#!/bin/sh\nif [ "$1" = --version ]; then echo "fakecc 1.0"; exit 0; fi\n'
                    'echo "fakecc: error: cannot compile" >&2; exit 1\n')
        os.chmod(fake, 0o755)
        bad |= check("failing compiler: interpreter", "interpreter (compile failed", "auto",
                     dict(env2, BL_CC=fake, BL_CACHE_DIR=os.path.join(work, "cache4")))
        slow = os.path.join(work, "slowcc")
        with open(slow, "w") as f:
            f.write('#!/bin/sh\nif [ "$1" = --version ]; then echo "slowcc 1.0"; exit 0; fi\nexec sleep 30\n')
        os.chmod(slow, 0o755)
        bad |= check("a compiler past BL_CC_TIMEOUT: stopped, interpreter", "ran past 0.5 s (BL_CC_TIMEOUT)", "auto",
                     dict(env2, BL_CC=slow, BL_CC_TIMEOUT="0.5", BL_CACHE_DIR=os.path.join(work, "cache5")))
        shared = os.path.join(work, "cache6")
        os.mkdir(shared)
        os.chmod(shared, 0o777)
        bad |= check("a cache directory others can write: interpreter", "writable by others", "auto",
                     dict(env2, BL_CACHE_DIR=shared))
        bad |= check("BL_EQ_JIT=0: interpreter", "interpreter (BL_EQ_JIT=0)", "auto", dict(env2, BL_EQ_JIT="0"))
        bad |= check("auto: generated C", "exec: generated C", "auto")
    print("FAIL" if bad else "ok")
    return bad


if __name__ == "__main__":
    sys.exit(main())
