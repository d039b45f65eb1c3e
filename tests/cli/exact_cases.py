"""What the exactness tests (cpu_exact.py, mpi_exact.py) share: the cases,
each a graph and a stimulus run by `brainlesslab simulate` for both presets,
and the byte comparison of an output directory with the reference's."""
import hashlib, json, os, shutil, subprocess
import numpy as np

FILES = ["spikes_trial", "spikes_step", "spikes_neuron", "counts", "v", "g"]


def simulate(cli, conn, preset, backend, threads, args, out):
    return [cli, "simulate", "--connectome", conn, "--preset", preset, "--out", out, "--backend", backend,
            "--threads", str(threads)] + args


def cases(cli, src, tmp, dur, runaway_dur):
    """(name, connectome, preset, simulate args) for C. elegans, the larva, a
    4000-neuron synthetic graph and a runaway-activity case, both presets."""
    def population(conn, n, stride):
        count = len(np.load(os.path.join(conn, "offsets.npy"))) - 1
        path = os.path.join(tmp, "pop_%s_%d_%d.npy" % (os.path.basename(conn), n, stride))
        np.save(path, (np.arange(n, dtype=np.int64) * stride % count).astype(np.int32))
        return path

    celegans = os.path.join(src, "data/connectomes/celegans-varshney2011")
    larva = os.path.join(src, "data/connectomes/larva-winding2023")
    synth = os.path.join(tmp, "synth")
    if not os.path.isdir(synth):
        subprocess.run([cli, "synth", "--out", synth, "--neurons", "4000", "--mean-degree", "40", "--seed", "11"],
                       check=True, stdout=subprocess.DEVNULL)
    out = []
    for preset in ("shiu2024", "phase4c"):
        out += [
            ("celegans", celegans, preset, ["--duration-ms", dur, "--trials", "3", "--seed", "5",
                                             "--poisson", "180:" + population(celegans, 20, 13)]),
            ("larva", larva, preset, ["--duration-ms", dur, "--trials", "2", "--seed", "6",
                                       "--poisson", "150:" + population(larva, 40, 71) + ":100:800"]),
            ("synthetic", synth, preset, ["--duration-ms", dur, "--trials", "3", "--seed", "7",
                                           "--poisson", "200:" + population(synth, 30, 131),
                                           "--silence", population(synth, 5, 977)]),
            ("runaway", synth, preset, ["--duration-ms", runaway_dur, "--trials", "2", "--seed", "8",
                                         "--poisson", "300:" + population(synth, 400, 7),
                                         "--set", "w_syn_mv=2.0"]),
        ]
    return out


def differing(ref_dir, out_dir):
    """The output files whose bytes differ from the reference's."""
    return [f for f in FILES if open(os.path.join(ref_dir, f + ".npy"), "rb").read() !=
            open(os.path.join(out_dir, f + ".npy"), "rb").read()]


# ---- models from equations (the "equations" row), run as plans ----

# Conductance-based (euler): excitatory g and inhibitory gi chosen by the
# sign of the edge's weight in on_pre, a refractory period (3 ms) longer
# than the delay (1 ms), and an initial v away from E_L: quiet neurons rest
# at euler's floating-point fixed point, which is not E_L.
COBA_BLOCK = '''[model]
method = "euler"
equations = """
dv/dt = (E_L - v + g * (E_e - v) + gi * (E_i - v)) / t_m : volt (unless refractory)
dg/dt = -g / tau_e : 1
dgi/dt = -gi / tau_i : 1
"""
threshold = "v > v_th"
reset = "v = v_r"
refractory = "3 ms"
on_pre = "g += clip(w, 0, 1000); gi += clip(-w, 0, 1000)"
weight = "count * sign * w_syn"
delay = "1 ms"
on_input = "g += w_in"
[model.parameters]
E_L = "-60 mV"
E_e = "0 mV"
E_i = "-80 mV"
t_m = "2 ms"
tau_e = "0.2 ms"
tau_i = "0.2 ms"
v_th = "-50 mV"
v_r = "-60 mV"
w_syn = "0.05"
w_in = "2"
[model.init]
v = "-57 mV"
'''


def eq_plan(conn, select, rate_hz, model, backend, dur_ms, trials, seed):
    """A connectome plan whose [model] is `model` (a [model] table's text)."""
    return '''format = "brainlesslab-plan"
format_version = 4
id = "exact-equations"
operation = "connectome"
[connectome]
path = "%s"
[[stimulus]]
name = "input"
select = %s
rate_hz = %r
[run]
trials = %d
duration_ms = %r
seed = %d
backend = "%s"
threads = 1
[outputs]
spikes = true
counts = true
state = true
propagation = false
''' % (conn, select, rate_hz, trials, float(dur_ms), seed, backend) + model


# The conductance-based model with w from the connectome's float weights.npy
# column (`weight` in the weight expression) instead of the count.
COBA_WEIGHTS_BLOCK = COBA_BLOCK.replace('weight = "count * sign * w_syn"', 'weight = "weight * w_syn"')


def with_edge_columns(conn, out):
    """A copy of connectome `conn` at `out` with the optional edge columns
    listed in its manifest: weights.npy (each edge's signed count times a
    factor 0.5..2 that varies from edge to edge, so that a rank keeping
    another edge's weight shows) and delays.npy (0.5..1.7 ms; read by no
    model of the exactness cases, but loaded by every rank with its part)."""
    if os.path.isdir(out):
        return out
    shutil.copytree(conn, out)
    counts = np.load(os.path.join(out, "counts.npy")).astype(np.float64)
    k = np.arange(len(counts))
    cols = {"weights.npy": counts * (0.5 + 0.25 * (k % 7)), "delays.npy": 0.5 + 0.3 * (k % 5)}
    with open(os.path.join(out, "manifest.json")) as f:
        man = json.load(f)
    for name, col in cols.items():
        path = os.path.join(out, name)
        np.save(path, col)
        data = open(path, "rb").read()
        man["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(man, f, indent=2)
    return out


def eq_cases(src, dur_ms, tmp=None):
    """(name, plan text for a backend) of the equation-model exactness cases:
    the shipped shiu2024 model (models/shiu2024.toml) on the larva (compared
    with the preset too) and the conductance-based model on C. elegans; with
    `tmp` (a directory for the copy), that model again with its weights from
    weights.npy on a copy of C. elegans with edge columns."""
    larva = os.path.join(src, "data/connectomes/larva-winding2023")
    celegans = os.path.join(src, "data/connectomes/celegans-varshney2011")
    orn = '{ cell_type = "sensory", modality = "olfactory" }'
    glu = '{ transmitter = "Glutamate" }'
    # The shipped shiu2024 text is the issue-23 block (test_equation_plan
    # proves the two compile to the same model and give the preset's bytes).
    with open(os.path.join(src, "models", "shiu2024.toml")) as f:
        shiu_block = f.read()
    out = [
        ("shiu-block larva", lambda b: eq_plan(larva, orn, 150.0, shiu_block, b, dur_ms, 2, 6),
         lambda b: eq_plan(larva, orn, 150.0, '[model]\npreset = "shiu2024"\n', b, dur_ms, 2, 6)),
        ("coba celegans", lambda b: eq_plan(celegans, glu, 100.0, COBA_BLOCK, b, dur_ms, 2, 7), None),
    ]
    if tmp:
        cols = with_edge_columns(celegans, os.path.join(tmp, "celegans_edge_columns"))
        out.append(("coba weights.npy celegans",
                    lambda b: eq_plan(cols, glu, 100.0, COBA_WEIGHTS_BLOCK, b, dur_ms, 2, 7), None))
    return out


def run_plan(cli, text, root, env, extra=(), mpi=None):
    """Run a plan (under `mpi` = an mpirun prefix when given); its record."""
    os.makedirs(root, exist_ok=True)
    path = os.path.join(root, "plan.toml")
    with open(path, "w") as f:
        f.write(text)
    cmd = (mpi or []) + [cli, "run", path, "--root", os.path.join(root, "rec"), "--quiet"] + list(extra)
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, timeout=300)
    recs = [os.path.join(root, "rec", d) for d in os.listdir(os.path.join(root, "rec"))]
    assert len(recs) == 1, recs
    return recs[0]


def record_files(rec):
    """The files of a record that must be byte-identical across backends."""
    spikes = sorted(os.path.join("spikes", f) for f in os.listdir(os.path.join(rec, "spikes")))
    return ["counts.npy", "final_v.npy", "final_g.npy"] + spikes


def record_differing(ref, out):
    return [f for f in record_files(ref) if not os.path.exists(os.path.join(out, f)) or
            open(os.path.join(ref, f), "rb").read() != open(os.path.join(out, f), "rb").read()]
