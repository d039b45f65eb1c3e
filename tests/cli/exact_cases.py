"""What the exactness tests (cpu_exact.py, mpi_exact.py) share: the cases,
each a graph and a stimulus run by `brainlesslab simulate` for both presets,
and the byte comparison of an output directory with the reference's."""
import os, subprocess
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
