"""End to end: check, run, verify; tamper detection; overwrite refusal; a run
killed with SIGKILL never leaves a DONE record; spikes.h5 read back with h5py
equals the engine's events (as `simulate` writes them for the same network)."""
import glob, json, os, shutil, signal, subprocess, sys, tempfile, time
import h5py
import numpy as np

CLI = os.environ["BL_CLI"]
SRC = os.environ["BL_SOURCE_DIR"]
tmp = tempfile.mkdtemp(prefix="bl_run_")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def sh(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, **kw)


celegans = os.path.join(SRC, "data/connectomes/celegans-varshney2011")
plan = os.path.join(tmp, "plan.toml")
open(plan, "w").write("""
format = "brainlesslab-plan"
format_version = 4
id = "celegans-e2e"
operation = "connectome"
[connectome]
path = "%s"
[model]
preset = "shiu2024"
[[stimulus]]
name = "sensory"
ids = ["ASHL", "ASHR", "AWCL", "AWCR", "ASEL", "ASER", "AFDL", "AFDR", "AWAL", "AWAR"]
rate_hz = 200.0
[[silence]]
name = "one"
ids = ["AIBL"]
[run]
trials = 3
duration_ms = 500.0
seed = 77
backend = "auto"
[outputs]
top_responders = 10
""" % celegans)
root = os.path.join(tmp, "records")

r = sh(CLI, "check", plan)
check(r.returncode == 0 and "plan hash" in r.stdout, "check accepts the plan and prints its hash")
r2 = sh(CLI, "check", plan)
check(r.stdout == r2.stdout, "check is deterministic (same resolved plan and hash)")

r = sh(CLI, "run", plan, "--root", root)
check(r.returncode == 0, "run exits 0 (%s)" % r.stderr.strip()[:200])
print(r.stdout)
recs = sorted(glob.glob(os.path.join(root, "celegans-e2e-*")))
check(len(recs) == 1, "run created one record")
rec = recs[0]
for f in ["DONE", "manifest.json", "checksums.sha256", "spikes/trial-0000.h5", "plan.toml", "run.log", "counts.npy", "rates.csv", "final_v.npy",
          "final_g.npy", "summary.json", "propagation.json"]:
    check(os.path.exists(os.path.join(rec, f)), "record has " + f)
check(not os.path.exists(os.path.join(rec, ".RESERVED")), "sealed record has no .RESERVED")
check("depth" in r.stdout and "responders" in r.stdout, "run prints the responder table")
check(sh(CLI, "verify", rec).returncode == 0, "verify accepts the fresh record")
check(sh("sha256sum", "-c", "--quiet", "checksums.sha256", cwd=rec).returncode == 0, "sha256sum -c accepts it")
m = json.load(open(os.path.join(rec, "manifest.json")))
check(m.get("status") == "DONE" and "plan" in m and "software" in m and "host" in m and "inputs" in m,
      "manifest has status, plan, software, host, inputs")
check(m["run"]["backend"] in ("cpu", "reference") and "auto_regression" in m["run"], "manifest says which backend ran")

# spikes.h5 against the engine's events, via simulate with the same network.
ids = ["ASHL", "ASHR", "AWCL", "AWCR", "ASEL", "ASER", "AFDL", "AFDR", "AWAL", "AWAR"]
names = [l.split(",")[1] for l in open(os.path.join(celegans, "neurons.csv")).read().split("\n")[1:] if l]
np.save(os.path.join(tmp, "pop.npy"), np.array(sorted(names.index(i) for i in ids), dtype=np.int32))
np.save(os.path.join(tmp, "sil.npy"), np.array([names.index("AIBL")], dtype=np.int32))
sim = os.path.join(tmp, "sim")
r = sh(CLI, "simulate", "--connectome", celegans, "--preset", "shiu2024", "--duration-ms", "500", "--trials", "3",
       "--seed", "77", "--poisson", "200:" + os.path.join(tmp, "pop.npy"), "--silence", os.path.join(tmp, "sil.npy"),
       "--out", sim)
check(r.returncode == 0, "simulate runs the same network")
# One SONATA file per trial (spikes/trial-NNNN.h5), each one population sorted by time.
ts, nodes, trial, sortings, units = [], [], [], set(), set()
for k, path in enumerate(sorted(glob.glob(os.path.join(rec, "spikes", "trial-*.h5")))):
    check(path.endswith("trial-%04d.h5" % k), "spike files are numbered by trial")
    with h5py.File(path, "r") as h:
        pops = list(h["spikes"].keys())
        check(len(pops) == 1, "one population per spike file")
        g = h["spikes"][pops[0]]
        ts.append(g["timestamps"][:])
        nodes.append(g["node_ids"][:])
        trial.append(np.full(len(ts[-1]), k, np.uint32))
        sortings.add(int(g.attrs.get("sorting")))
        units.add(g["timestamps"].attrs.get("units"))
        check(np.all(np.diff(ts[-1]) >= 0), "trial %d's spikes are sorted by time" % k)
ts, nodes, trial = np.concatenate(ts), np.concatenate(nodes), np.concatenate(trial)
sorting = 2 if sortings == {2} else None
units = "ms" if units == {"ms"} else None
steps = np.load(os.path.join(sim, "spikes_step.npy"))
check(len(ts) >= 200, "spikes.h5 holds %d spikes (>= 200)" % len(ts))
check(np.array_equal(nodes, np.load(os.path.join(sim, "spikes_neuron.npy")).astype(np.uint64)) and
      np.array_equal(trial, np.load(os.path.join(sim, "spikes_trial.npy")).astype(np.uint32)) and
      np.array_equal(ts, steps * 0.1), "spikes.h5 equals the engine's events (node ids, trials, times in ms)")
check(sorting is not None and units is not None, "spikes.h5 has the sorting attribute and ms units")
check(np.array_equal(np.load(os.path.join(rec, "counts.npy")), np.load(os.path.join(sim, "counts.npy"))),
      "counts.npy equals the engine's counts")
check(np.array_equal(np.load(os.path.join(rec, "final_v.npy")), np.load(os.path.join(sim, "v.npy"))),
      "final_v.npy equals the engine's final state")

# Overwrite refusal: a second run makes a new record, never reuses one.
r = sh(CLI, "run", plan, "--root", root, "--quiet")
recs2 = sorted(glob.glob(os.path.join(root, "celegans-e2e-*")))
check(r.returncode == 0 and len(recs2) == 2, "a second run writes a second record")
check(sh(CLI, "verify", rec).returncode == 0, "the first record is untouched")

# Tampering, each on a fresh copy of the record.
def tampered(name, mutate, expect):
    d = os.path.join(tmp, "tamper-" + name)
    shutil.copytree(rec, d, symlinks=True)
    mutate(d)
    r = sh(CLI, "verify", d)
    check(r.returncode != 0 and expect in (r.stdout + r.stderr), "verify detects %s (%s)" % (
        name, (r.stdout + r.stderr).strip().split("\n")[-1][:120]))


def flip(path):
    b = bytearray(open(path, "rb").read())
    b[len(b) // 2] ^= 1
    open(path, "wb").write(bytes(b))


tampered("changed byte", lambda d: flip(os.path.join(d, "counts.npy")), "counts.npy")
tampered("removed file", lambda d: os.remove(os.path.join(d, "rates.csv")), "rates.csv")
tampered("added file", lambda d: open(os.path.join(d, "extra.txt"), "w").write("x"), "extra.txt")
tampered("edited manifest", lambda d: open(os.path.join(d, "manifest.json"), "a").write(" "), "manifest.json")
tampered("symlink", lambda d: (os.remove(os.path.join(d, "summary.json")),
                               os.symlink("/etc/hostname", os.path.join(d, "summary.json"))), "summary.json")

# SIGKILL mid-run: never DONE.
larva_plan = os.path.join(tmp, "slow.toml")
open(larva_plan, "w").write(open(os.path.join(SRC, "plans/larva-orn-150hz.toml")).read().replace(
    'path = "../data/connectomes/larva-winding2023"', 'path = "%s/data/connectomes/larva-winding2023"' % SRC)
    .replace('backend = "auto"', 'backend = "reference"').replace("trials = 30", "trials = 200"))
kroot = os.path.join(tmp, "killed")
p = subprocess.Popen([CLI, "run", larva_plan, "--root", kroot, "--threads", "1"], stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
deadline = time.time() + 60
while time.time() < deadline and not glob.glob(os.path.join(kroot, "*", ".RESERVED")):
    time.sleep(0.05)
time.sleep(1.0)
p.send_signal(signal.SIGKILL)
p.wait()
killed = glob.glob(os.path.join(kroot, "*"))
check(len(killed) == 1 and not os.path.exists(os.path.join(killed[0], "DONE")) and
      os.path.exists(os.path.join(killed[0], ".RESERVED")), "a run killed with SIGKILL leaves a reserved record, never DONE")
check(killed and sh(CLI, "verify", killed[0]).returncode != 0, "verify rejects the killed run's record")

shutil.rmtree(tmp)
print("%d failed" % len(failures))
sys.exit(1 if failures else 0)
