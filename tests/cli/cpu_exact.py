"""The cpu backend against the reference backend: identical spike events,
counts and final-state bits for both presets, thread counts 1..4 (more than
this machine's cores, so threads interleave), on C. elegans, the larva, a
synthetic graph and a runaway-activity case. Prints the spikes compared."""
import os, shutil, subprocess, sys, tempfile
import numpy as np

import exact_cases
from exact_cases import differing, simulate

CLI = os.environ["BL_CLI"]
SRC = os.environ["BL_SOURCE_DIR"]
sanitized = os.environ.get("BL_SANITIZED") == "1"
tmp = tempfile.mkdtemp(prefix="bl_cpu_exact_")


# Split even these small graphs into partitions (by default the cpu backend
# splits a trial only when each part gets >= 2^20 synapses).
# Passive waiting: 16 threads on a 2-core machine must not spin at barriers.
env = dict(os.environ, BL_CPU_PARTITION_MIN_EDGES="1", OMP_WAIT_POLICY="passive")
THREADS = (1, 2, 3, 4, 16)


def run(conn, preset, backend, threads, args, out):
    subprocess.run(simulate(CLI, conn, preset, backend, threads, args, out), check=True, stdout=subprocess.DEVNULL,
                   env=env)


cases = exact_cases.cases(CLI, SRC, tmp, "300" if sanitized else "1000", "200")
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
        diffs += ["threads=%d %s" % (threads, f) for f in differing(ref, out)]
    ok = not diffs and spikes >= 200
    failed += not ok
    print("%s cpu-vs-reference %s %s: %d spikes compared, threads %s: %s" % (
        "ok  " if ok else "FAIL", preset, name, spikes, ",".join(map(str, THREADS)),
        "identical events, counts, final v,g bits" if not diffs else "; ".join(diffs)))
# Models from equations (plans: `simulate` runs the presets only): the cpu
# backend at 1-4 threads (2 trials: 2 threads run whole trials, 3 and 4
# split each trial), retirement on and off (BL_EQ_RETIRE), against the
# reference run of the same plan; the issue-23 block also against the preset;
# the conductance-based model also with its weights from weights.npy.
n_eq = 0
for name, plan, preset_plan in exact_cases.eq_cases(SRC, 300 if sanitized else 1000, tmp):
    base = os.path.join(tmp, "eq")
    shutil.rmtree(base, ignore_errors=True)
    ref = exact_cases.run_plan(CLI, plan("reference"), os.path.join(base, "ref"), env)
    spikes = int(np.load(os.path.join(ref, "counts.npy")).sum())
    diffs = []
    if preset_plan:
        pre = exact_cases.run_plan(CLI, preset_plan("reference"), os.path.join(base, "preset"), env)
        diffs += ["preset %s" % f for f in exact_cases.record_differing(ref, pre)]
    for threads in (1, 2, 3, 4):
        for retire in ("1", "0"):
            out = exact_cases.run_plan(CLI, plan("cpu"), os.path.join(base, "cpu%d_%s" % (threads, retire)),
                                       dict(env, BL_EQ_RETIRE=retire), ["--threads", str(threads)])
            diffs += ["threads=%d retire=%s %s" % (threads, retire, f) for f in exact_cases.record_differing(ref, out)]
    ok = not diffs and spikes >= 200
    failed += not ok
    n_eq += 1
    print("%s cpu-vs-reference equations %s: %d spikes compared, threads 1-4, retirement on/off%s: %s" % (
        "ok  " if ok else "FAIL", name, spikes, ", and the preset" if preset_plan else "",
        "identical spikes, counts, final v,g bytes" if not diffs else "; ".join(diffs)))
shutil.rmtree(tmp)
print("%d passed, %d failed" % (len(cases) + n_eq - failed, failed))
sys.exit(1 if failed else 0)
