"""The cpu backend against the reference backend: identical spike events,
counts and final-state bits for both presets, thread counts 1..4 (more than
this machine's cores, so threads interleave), on C. elegans, the larva, a
synthetic graph and a runaway-activity case. Prints the spikes compared."""
import os, shutil, subprocess, sys, tempfile
import numpy as np

CLI = os.environ["BL_CLI"]
SRC = os.environ["BL_SOURCE_DIR"]
sanitized = os.environ.get("BL_SANITIZED") == "1"
tmp = tempfile.mkdtemp(prefix="bl_cpu_exact_")
FILES = ["spikes_trial", "spikes_step", "spikes_neuron", "counts", "v", "g"]


# Split even these small graphs into partitions (by default the cpu backend
# splits a trial only when each part gets >= 2^20 synapses).
# Passive waiting: 16 threads on a 2-core machine must not spin at barriers.
env = dict(os.environ, BL_CPU_PARTITION_MIN_EDGES="1", OMP_WAIT_POLICY="passive")
THREADS = (1, 2, 3, 4, 16)


def run(conn, preset, backend, threads, args, out):
    cmd = [CLI, "simulate", "--connectome", conn, "--preset", preset, "--out", out, "--backend", backend,
           "--threads", str(threads)] + args
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)


def population(conn, n, stride):
    count = len(np.load(os.path.join(conn, "offsets.npy"))) - 1
    path = os.path.join(tmp, "pop_%s_%d_%d.npy" % (os.path.basename(conn), n, stride))
    np.save(path, (np.arange(n, dtype=np.int64) * stride % count).astype(np.int32))
    return path


synth = os.path.join(tmp, "synth")
subprocess.run([CLI, "synth", "--out", synth, "--neurons", "4000", "--mean-degree", "40", "--seed", "11"],
               check=True, stdout=subprocess.DEVNULL)
celegans = os.path.join(SRC, "data/connectomes/celegans-varshney2011")
larva = os.path.join(SRC, "data/connectomes/larva-winding2023")
dur = "300" if sanitized else "1000"
cases = []
for preset in ("shiu2024", "phase4c"):
    cases += [
        ("celegans", celegans, preset, ["--duration-ms", dur, "--trials", "3", "--seed", "5",
                                         "--poisson", "180:" + population(celegans, 20, 13)]),
        ("larva", larva, preset, ["--duration-ms", dur, "--trials", "2", "--seed", "6",
                                   "--poisson", "150:" + population(larva, 40, 71) + ":100:800"]),
        ("synthetic", synth, preset, ["--duration-ms", dur, "--trials", "3", "--seed", "7",
                                       "--poisson", "200:" + population(synth, 30, 131),
                                       "--silence", population(synth, 5, 977)]),
        ("runaway", synth, preset, ["--duration-ms", "200", "--trials", "2", "--seed", "8",
                                     "--poisson", "300:" + population(synth, 400, 7),
                                     "--set", "w_syn_mv=2.0"]),
    ]
failed = 0
for name, conn, preset, args in cases:
    ref = os.path.join(tmp, "ref")
    shutil.rmtree(ref, ignore_errors=True)
    run(conn, preset, "reference", 1, args, ref)
    spikes = len(np.load(os.path.join(ref, "spikes_step.npy")))
    diffs = []
    for threads in THREADS:
        out = os.path.join(tmp, "cpu%d" % threads)
        shutil.rmtree(out, ignore_errors=True)
        run(conn, preset, "cpu", threads, args, out)
        for f in FILES:
            a = open(os.path.join(ref, f + ".npy"), "rb").read()
            b = open(os.path.join(out, f + ".npy"), "rb").read()
            if a != b:
                diffs.append("threads=%d %s" % (threads, f))
    ok = not diffs and spikes >= 200
    failed += not ok
    print("%s cpu-vs-reference %s %s: %d spikes compared, threads %s: %s" % (
        "ok  " if ok else "FAIL", preset, name, spikes, ",".join(map(str, THREADS)),
        "identical events, counts, final v,g bits" if not diffs else "; ".join(diffs)))
shutil.rmtree(tmp)
print("%d passed, %d failed" % (len(cases) - failed, failed))
sys.exit(1 if failed else 0)
