"""The file-swap race (issue 16, finding 1): while runs load a connectome,
another thread keeps replacing its files with those of a second, different
connectome (atomic renames and in-place rewrites, one file at a time). Every
run must either fail or seal a DONE record that describes exactly what it
simulated: its connectome manifest digest is one of the two versions', every
data input digest is that version's, and its counts.npy equals a clean run of
that version. Any other DONE record "lies" and fails the test.

    BL_CLI=build/brainlesslab BL_SOURCE_DIR=. python3 tests/cli/swap_race.py [RUNS]
RUNS defaults to 150 (the audit's count); CI runs 30 (test_swap_race.sh).
"""
import glob, hashlib, json, os, random, shutil, subprocess, sys, tempfile, threading

CLI = os.path.abspath(os.environ["BL_CLI"])
SRC = os.environ["BL_SOURCE_DIR"]
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 150
FILES = ["manifest.json", "offsets.npy", "targets.npy", "counts.npy", "neurons.csv"]
tmp = tempfile.mkdtemp(prefix="bl_race_")


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def make_versions():
    a = os.path.join(tmp, "A")
    shutil.copytree(os.path.join(SRC, "data/connectomes/celegans-varshney2011"), a)
    b = os.path.join(tmp, "B")
    shutil.copytree(a, b)
    # B: every synapse count doubled (same file sizes, so in-place rewrites
    # mix the versions byte for byte) and one neuron table cell changed.
    raw = bytearray(open(os.path.join(b, "counts.npy"), "rb").read())
    hlen = int.from_bytes(raw[8:10], "little") + 10
    import numpy as np
    c = np.frombuffer(bytes(raw[hlen:]), dtype="<i4") * 2
    raw[hlen:] = c.astype("<i4").tobytes()
    open(os.path.join(b, "counts.npy"), "wb").write(raw)
    text = open(os.path.join(b, "neurons.csv")).read()
    open(os.path.join(b, "neurons.csv"), "w").write(text.replace("acetylcholine", "Acetylcholine", 1))
    m = json.load(open(os.path.join(b, "manifest.json")))
    m["n_synapses"] = int(np.abs(c.astype(np.int64)).sum())
    for f in m["files"]:
        m["files"][f] = {"bytes": os.path.getsize(os.path.join(b, f)), "sha256": sha(os.path.join(b, f))}
    open(os.path.join(b, "manifest.json"), "w").write(json.dumps(m, indent=2) + "\n")
    return a, b


def plan_for(conn, name):
    p = os.path.join(tmp, name + ".toml")
    open(p, "w").write('format = "brainlesslab-plan"\nformat_version = 4\nid = "race"\noperation = "connectome"\n'
                       '[connectome]\npath = "%s"\n[model]\npreset = "shiu2024"\n[[stimulus]]\nname = "s"\n'
                       'ids = ["ASHL", "ASHR", "AWCL", "AWCR"]\nrate_hz = 200.0\n[run]\ntrials = 1\n'
                       'duration_ms = 100.0\nseed = 9\nbackend = "cpu"\nthreads = 1\n'
                       '[outputs]\nspikes = false\nstate = false\npropagation = false\n' % conn)
    return p


def run(plan, root):
    return subprocess.run([CLI, "run", plan, "--root", root, "--quiet"], capture_output=True, text=True)


def digests(rec):
    m = json.load(open(os.path.join(rec, "manifest.json")))
    got = {}
    for i in m["inputs"]:
        if i["role"].startswith("connectome"):
            got[os.path.basename(i["path"])] = i["sha256"]
    return got


a, b = make_versions()
versions = {}
for v, d in (("A", a), ("B", b)):
    work = os.path.join(tmp, "ref" + v)
    shutil.copytree(d, work)
    root = os.path.join(tmp, "refrec" + v)
    r = run(plan_for(work, "ref" + v), root)
    assert r.returncode == 0, r.stderr
    rec = glob.glob(os.path.join(root, "*"))[0]
    versions[v] = {"files": {f: sha(os.path.join(d, f)) for f in FILES},
                   "counts": sha(os.path.join(rec, "counts.npy"))}
assert versions["A"]["counts"] != versions["B"]["counts"], "the two versions must simulate differently"

work = os.path.join(tmp, "work")
shutil.copytree(a, work)
plan = plan_for(work, "race")
stop = threading.Event()
swaps = [0]


def swapper():
    rnd = random.Random(16)
    while not stop.is_set():
        f = rnd.choice(FILES)
        src = os.path.join(a if rnd.random() < 0.5 else b, f)
        dst = os.path.join(work, f)
        data = open(src, "rb").read()
        if rnd.random() < 0.5:  # atomic replacement
            t = dst + ".swap"
            open(t, "wb").write(data)
            os.replace(t, dst)
        else:  # rewrite in place, same inode
            with open(dst, "r+b") as fh:
                fh.write(data)
                fh.truncate()
        swaps[0] += 1


th = threading.Thread(target=swapper, daemon=True)
th.start()
root = os.path.join(tmp, "records")
done = failed = lies = 0
try:
    for k in range(RUNS):
        r = run(plan, root)
        if r.returncode != 0:
            failed += 1
            continue
        rec = r.stdout.strip().splitlines()[-1]
        done += 1
        dg = digests(rec)
        man = dg.get("manifest.json")
        match = [v for v in versions if versions[v]["files"]["manifest.json"] == man]
        ok = len(match) == 1
        if ok:
            v = versions[match[0]]
            ok = all(dg.get(f) == v["files"][f] for f in FILES) and sha(os.path.join(rec, "counts.npy")) == v["counts"]
        vr = subprocess.run([CLI, "verify", rec], capture_output=True, text=True)
        if not ok or vr.returncode != 0:
            lies += 1
            print("LIE  %s (manifest %s, verify rc %d)" % (rec, man and man[:12], vr.returncode))
finally:
    stop.set()
    th.join()
print("swap race: %d runs, %d swaps, %d DONE, %d refused or FAILED, %d DONE records misdescribing their inputs"
      % (RUNS, swaps[0], done, failed, lies))
shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if lies else 0)
