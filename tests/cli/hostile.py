"""Regression tests for the hostile audit (issue 16): one or more checks per
finding, each of which failed on fe3be4d. Findings 1 (the file-swap race) and 8
(forging) have their own scripts: swap_race.py and tamper_corpus.py.

    BL_CLI=build/brainlesslab BL_SOURCE_DIR=. python3 tests/cli/hostile.py [finding ...]
"""
import glob, gzip, hashlib, json, os, resource, shutil, signal, stat, subprocess, sys, tempfile, time, types

CLI = os.path.abspath(os.environ["BL_CLI"])
SRC = os.environ["BL_SOURCE_DIR"]
CELEGANS = os.path.join(SRC, "data/connectomes/celegans-varshney2011")
tmp = tempfile.mkdtemp(prefix="bl_hostile_")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def sh(*args, timeout=60, **kw):
    try:
        return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout,
                              errors="replace", **kw)
    except subprocess.TimeoutExpired:  # a hang: reported as a failed command
        return types.SimpleNamespace(returncode=None, stdout="", stderr="(hang: no answer in %d s)" % timeout)


def copy_connectome(name):
    d = os.path.join(tmp, name)
    shutil.copytree(CELEGANS, d)
    return d


def rewrite_manifest(d, mutate=None):
    """Re-hash the data files into manifest.json (after an edit)."""
    m = json.load(open(os.path.join(d, "manifest.json")))
    for f in m["files"]:
        b = open(os.path.join(d, f), "rb").read()
        m["files"][f] = {"bytes": len(b), "sha256": hashlib.sha256(b).hexdigest()}
    if mutate:
        mutate(m)
    open(os.path.join(d, "manifest.json"), "w").write(json.dumps(m, indent=2))


def plan(name, conn=CELEGANS, id_="hostile", run="", model="", stim=None, extra=""):
    p = os.path.join(tmp, name + ".toml")
    stim = stim if stim is not None else '[[stimulus]]\nname = "s"\nids = ["ASHL", "ASHR", "AWCL"]\nrate_hz = 200.0\n'
    run = run or "trials = 2\nduration_ms = 200.0\nseed = 5\nbackend = \"cpu\"\nthreads = 1\n"
    open(p, "w").write('format = "brainlesslab-plan"\nformat_version = 4\nid = "%s"\noperation = "connectome"\n'
                       '[connectome]\npath = "%s"\n[model]\npreset = "shiu2024"\n%s\n%s\n[run]\n%s\n%s'
                       % (id_, conn, model, stim, run, extra))
    return p


def records(root):
    return sorted(glob.glob(os.path.join(root, "*")))


# ---- 2: a plan may not ask for more than a record can list -----------------
def finding_2():
    d = os.path.join(tmp, "synth300k")
    r = sh(CLI, "synth", "--out", d, "--neurons", "300000", "--mean-degree", "1", "--seed", "3", timeout=300)
    check(r is not None and r.returncode == 0, "2: synth a 300k-neuron graph (%s)" % (r.stderr.strip()[-200:] if r else "hang"))
    import csv
    types = sorted({row["cell_type"] for row in csv.DictReader(open(os.path.join(d, "neurons.csv")))})
    sel = "[%s]" % ", ".join('"%s"' % t for t in types)
    stim = "".join('[[stimulus]]\nname = "s%d"\nselect = { cell_type = %s }\nrate_hz = 1.0\n' % (i, sel) for i in range(8))
    p = plan("f2", conn=d, stim=stim, run="trials = 1\nduration_ms = 1.0\nseed = 1\nbackend = \"cpu\"\n")
    r = sh(CLI, "check", p, timeout=300)
    check(r is not None and r.returncode == 1 and "a plan may list" in r.stderr,
          "2: check refuses populations selecting 2.4M neurons (%s)" % (r.stderr.strip()[-160:] if r else "hang"))
    root = os.path.join(tmp, "rec2")
    r = sh(CLI, "run", p, "--root", root, timeout=300)
    check(r is not None and r.returncode == 1 and not os.path.exists(root),
          "2: run refuses it before reserving a record")


# ---- 3: FIFOs and devices are refused, never waited on ---------------------
def finding_3():
    cases = [("neurons.csv", "fifo"), ("targets.npy", "devzero"), ("manifest.json", "fifo"),
             ("counts.npy", "devzero")]
    for name, kind in cases:
        d = copy_connectome("f3-%s-%s" % (kind, name))
        os.unlink(os.path.join(d, name))
        if kind == "fifo":
            os.mkfifo(os.path.join(d, name))
        else:
            os.symlink("/dev/zero", os.path.join(d, name))
        p = plan("f3-%s-%s" % (kind, name.replace(".", "_")), conn=d)
        for cmd in (["inspect", d], ["check", p], ["run", p, "--root", os.path.join(tmp, "rec3")]):
            r = sh(CLI, *cmd, timeout=15)
            ok = r.returncode not in (0, None) and ("FIFO" in r.stderr or "device" in r.stderr)
            check(ok, "3: %s with %s as %s: refused at once (%s)" % (cmd[0], name, kind, r.stderr.strip()[-120:]))
    fifo = os.path.join(tmp, "plan.fifo")
    os.mkfifo(fifo)
    r = sh(CLI, "check", fifo, timeout=15)
    check(r is not None and r.returncode == 1 and "FIFO" in r.stderr, "3: a plan that is a FIFO is refused at once")
    check(not glob.glob(os.path.join(tmp, "rec3", "*")), "3: no record was reserved for any of them")


# ---- 4: disk full while writing the record ends in FAILED ------------------
def finding_4():
    p = plan("f4", run="trials = 4\nduration_ms = 500.0\nseed = 5\nbackend = \"cpu\"\nthreads = 1\n",
             stim='[[stimulus]]\nname = "s"\nneurons = %s\nrate_hz = 200.0\n'
             % list(range(json.load(open(os.path.join(CELEGANS, "manifest.json")))["n_neurons"])))
    root = os.path.join(tmp, "rec4")
    os.makedirs(root)

    def limit():  # files may not grow past 48 KiB: EFBIG instead of SIGXFSZ
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (48 << 10, 48 << 10))
    r = subprocess.run([CLI, "run", p, "--root", root, "--force"], capture_output=True, text=True,
                       preexec_fn=limit, timeout=120)
    check(r.returncode == 1, "4: run with a full disk exits 1, not by a signal (rc %d: %s)"
          % (r.returncode, r.stderr.strip()[-200:]))
    recs = records(root)
    ok = len(recs) == 1 and os.path.exists(os.path.join(recs[0], "FAILED"))
    msg = json.load(open(os.path.join(recs[0], "manifest.json"))).get("message", "") if ok else ""
    check(ok and ("spikes.h5" in msg or "File too large" in msg or "write" in msg),
          "4: the record is FAILED and says why (%s)" % msg[:160])


# ---- 5: only files named .gz are decompressed; inflation is bounded ---------
def finding_5():
    d = copy_connectome("f5")
    raw = open(os.path.join(d, "neurons.csv"), "rb").read()
    open(os.path.join(d, "neurons.csv"), "wb").write(gzip.compress(raw))
    rewrite_manifest(d)
    r = sh(CLI, "inspect", d)
    check(r is not None and r.returncode == 1, "5: a gzip stream named neurons.csv is not decompressed (%s)"
          % (r.stderr.strip()[-120:] if r else "hang"))
    bomb = os.path.join(tmp, "bomb.csv.gz")
    with gzip.open(bomb, "wb", compresslevel=9) as f:
        f.write(b"key,sign\n" + b"\n" * (64 << 20))
    r = sh(CLI, "import", "celegans", "--out", os.path.join(tmp, "f5out"), "--sign-policy", bomb, timeout=60)
    check(r is not None and r.returncode == 1 and "decompress" in r.stderr,
          "5: a 64 MiB inflation of blank lines from %d bytes is refused (%s)"
          % (os.path.getsize(bomb), r.stderr.strip()[-160:] if r else "hang"))


# ---- 6: estimates, and plans beyond the machine ---------------------------
def finding_6():
    p = plan("f6ok")
    r = sh(CLI, "check", p)
    check(r.returncode == 0 and "estimate: memory" in r.stdout and "disk" in r.stdout and "time" in r.stdout,
          "6: check prints an estimate of memory, disk and time")
    p = plan("f6big", run="trials = 100000\nduration_ms = 100000.0\nseed = 5\nbackend = \"cpu\"\n")
    r = sh(CLI, "check", p)
    check(r.returncode == 1 and "more memory than this machine" in r.stderr, "6: check refuses a plan beyond memory")
    r = sh(CLI, "check", "--force", p)
    check(r.returncode == 0, "6: check --force accepts it")
    root = os.path.join(tmp, "rec6")
    r = sh(CLI, "run", p, "--root", root)
    check(r.returncode == 1 and "estimate" in r.stderr and not os.path.exists(root),
          "6: run refuses it with the estimate, reserving nothing")
    big = plan("f6size", extra="# " + "x" * (5 << 20) + "\n")
    r = sh(CLI, "check", big)
    check(r.returncode == 1 and "limit" in r.stderr, "6: a 5 MiB plan is refused by size (%s)" % r.stderr.strip()[-100:])


# ---- 7: signals seal FAILED naming the signal ------------------------------
def finding_7():
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        p = plan("f7", run="trials = 1\nduration_ms = 600000.0\nseed = 5\nbackend = \"reference\"\n")
        root = os.path.join(tmp, "rec7-%s" % sig.name)
        proc = subprocess.Popen([CLI, "run", p, "--root", root, "--force"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        t0 = time.time()
        while time.time() - t0 < 30 and not glob.glob(os.path.join(root, "*", ".RESERVED")):
            time.sleep(0.05)
        time.sleep(0.5)
        proc.send_signal(sig)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        recs = records(root)
        failed = len(recs) == 1 and os.path.exists(os.path.join(recs[0], "FAILED"))
        msg = json.load(open(os.path.join(recs[0], "manifest.json"))).get("message", "") if failed else ""
        check(failed and sig.name in msg, "7: %s marks the record FAILED naming it (%s)" % (sig.name, msg[:100]))
        check(proc.returncode == -sig, "7: and the process ends by %s (rc %s)" % (sig.name, proc.returncode))
        check(failed and not os.path.exists(os.path.join(recs[0], ".RESERVED")), "7: .RESERVED is gone")


def finding_7_mpi():
    """Under mpirun, a SIGTERM to the job leaves rank 0's record FAILED, every time."""
    probe = sh(CLI, "check", plan("f7probe", run="trials = 1\nduration_ms = 1.0\nseed = 1\nbackend = \"mpi\"\n"))
    if not shutil.which("mpirun") or probe.returncode != 0:
        print("skip 7 (mpi): no mpirun or no mpi backend")
        return
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_btl="self,vader", OMPI_MCA_mpi_yield_when_idle="1")
    p = plan("f7mpi", run="trials = 2\nduration_ms = 2000000.0\nseed = 5\nbackend = \"cpu\"\n")
    runs = int(os.environ.get("BL_HOSTILE_MPI_RUNS", "4"))
    for k in range(runs):
        root = os.path.join(tmp, "rec7mpi-%d" % k)
        proc = subprocess.Popen(["mpirun", "-np", "2", CLI, "run", p, "--root", root, "--quiet", "--force"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        t0 = time.time()
        while time.time() - t0 < 60 and not glob.glob(os.path.join(root, "*", ".RESERVED")):
            time.sleep(0.05)
        time.sleep(0.2 + 0.4 * k)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=120)
        recs = records(root)
        failed = len(recs) == 1 and os.path.exists(os.path.join(recs[0], "FAILED"))
        msg = json.load(open(os.path.join(recs[0], "manifest.json"))).get("message", "") if failed else ""
        check(failed and "SIGTERM" in msg, "7: mpirun -np 2, SIGTERM after %.1f s: rank 0 marks the record FAILED (%s)"
              % (0.2 + 0.4 * k, msg[:70] if failed else (os.listdir(recs[0]) if recs else "no record")))


# ---- 9, 10, 11, 14: check refuses what run would refuse ---------------------
def finding_9_10_11_14():
    cases = [
        ("9: duration_ms = 4e8 (more steps than a trial holds)", dict(run="trials = 1\nduration_ms = 4e8\nseed = 1\n"), "steps"),
        ("14: a misspelt backend", dict(run="trials = 1\nduration_ms = 10.0\nseed = 1\nbackend = \"cpuu\"\n"), "unknown backend"),
        ("10: tau_m_ms = 1e-300", dict(model="[model.parameters]\ntau_m_ms = 1e-300\n"), "tau_m_ms"),
        ("10: w_syn_mv = f_poi = 1e308", dict(model="[model.parameters]\nw_syn_mv = 1e308\nf_poi = 1e308\n"), "w_syn_mv"),
        ("10: threshold at reset", dict(model="[model.parameters]\nv_th_mv = -60.0\nv_reset_mv = -52.0\n"), "v_th_mv"),
        ("10: tau_syn_ms below dt", dict(model="[model.parameters]\ntau_syn_ms = 0.01\n"), "tau_syn_ms"),
        ("11: id '..'", dict(id_=".."), "not a valid id"),
        ("11: id '.x'", dict(id_=".x"), "not a valid id"),
    ]
    for i, (what, kw, needle) in enumerate(cases):
        p = plan("f9-%d" % i, **kw)
        r = sh(CLI, "check", p)
        check(r.returncode == 1 and needle in r.stderr, "%s: check refuses (%s)" % (what, r.stderr.strip()[-120:]))
        root = os.path.join(tmp, "rec9-%d" % i)
        r = sh(CLI, "run", p, "--root", root)
        check(r.returncode == 1 and not records(root), "%s: run refuses before reserving a record" % what)


def finding_14_import():
    out = os.path.join(tmp, "f14-larva")
    r = sh(CLI, "import", "larva", "--out", out, cwd="/", timeout=120)
    check(r.returncode == 0 and os.path.exists(os.path.join(out, "manifest.json")),
          "14: import larva works outside the repository root (%s)" % r.stderr.strip()[-120:])


# ---- 12: verify escapes what a crafted manifest holds ----------------------
def finding_12():
    p = plan("f12")
    root = os.path.join(tmp, "rec12")
    r = sh(CLI, "run", p, "--root", root, "--quiet")
    rec = records(root)[0]
    m = json.load(open(os.path.join(rec, "manifest.json")))
    m["artifacts"][0]["path"] = "x\nOK %s: 9 artifacts verified\n\x1b[2K\x1b[1A" % rec
    open(os.path.join(rec, "manifest.json"), "w").write(json.dumps(m))
    r = sh(CLI, "verify", rec)
    lines = (r.stdout + r.stderr).splitlines()
    check(r.returncode == 1 and not any(l.startswith("OK") for l in lines) and "\x1b" not in r.stdout + r.stderr,
          "12: a crafted path prints no forged OK line and no escape sequence")


# ---- 13: parser leniency ---------------------------------------------------
def finding_13():
    p = plan("f13")
    root = os.path.join(tmp, "rec13")
    sh(CLI, "run", p, "--root", root, "--quiet")
    base = records(root)[0]
    for what, edit in [("duplicate key", lambda t: t.replace('"status":', '"status": "DONE", "status":', 1)),
                       ("trailing garbage", lambda t: t + "{}\n")]:
        rec = base + "-" + what.replace(" ", "")
        shutil.copytree(base, rec)
        mp = os.path.join(rec, "manifest.json")
        text = edit(open(mp).read())
        open(mp, "w").write(text)
        # keep checksums and DONE consistent so that only the parser can object
        h = hashlib.sha256(text.encode()).hexdigest()
        sums = open(os.path.join(rec, "checksums.sha256")).read().splitlines()
        sums = [(h + "  manifest.json") if l.endswith("  manifest.json") else l for l in sums]
        open(os.path.join(rec, "checksums.sha256"), "w").write("\n".join(sums) + "\n")
        done = open(os.path.join(rec, "DONE")).read().splitlines()
        done = [("manifest_sha256 " + h) if l.startswith("manifest_sha256") else l for l in done]
        open(os.path.join(rec, "DONE"), "w").write("\n".join(done) + "\n")
        r = sh(CLI, "verify", rec)
        check(r.returncode == 1 and ("twice" in r.stdout or "after it" in r.stdout),
              "13: verify refuses a manifest with a %s" % what)
    d = copy_connectome("f13dup")
    mp = os.path.join(d, "manifest.json")
    text = open(mp).read().replace('"format":', '"n_neurons": 1, "format":', 1)
    open(mp, "w").write(text)
    r = sh(CLI, "inspect", d)
    check(r.returncode == 1 and "twice" in r.stderr, "13: a connectome manifest with a duplicate key is refused (%s)" % r.stderr.strip()[-100:])
    d = copy_connectome("f13trail")
    open(os.path.join(d, "manifest.json"), "a").write("garbage")
    r = sh(CLI, "inspect", d)
    check(r.returncode == 1, "13: a connectome manifest with trailing garbage is refused")
    bom = os.path.join(tmp, "bom.toml")
    open(bom, "wb").write(b"\xef\xbb\xbf" + open(p, "rb").read())
    r = sh(CLI, "check", bom)
    check(r.returncode == 1 and "byte-order mark" in r.stderr, "13: a BOM gets a clear message")
    p = plan("f13threads", run="trials = 3\nduration_ms = 50.0\nseed = 5\nbackend = \"cpu\"\nthreads = 65536\n")
    root = os.path.join(tmp, "rec13t")
    r = sh(CLI, "run", p, "--root", root, "--quiet")
    ran = json.load(open(os.path.join(records(root)[0], "manifest.json")))["run"]["threads"] if r.returncode == 0 else None
    check(ran is not None and ran <= 3, "13: threads = 65536 on 3 trials records the threads that ran (%s)" % ran)


ALL = {"2": finding_2, "3": finding_3, "4": finding_4, "5": finding_5, "6": finding_6, "7": finding_7, "7mpi": finding_7_mpi,
       "9": finding_9_10_11_14, "12": finding_12, "13": finding_13, "14": finding_14_import}
try:
    for k in (sys.argv[1:] or ALL):
        ALL[k]()
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
