"""Tamper corpus (issue 16, finding 8): 48 ways to alter a sealed record, each
applied to an unsigned record and to a record signed with an Ed25519 key.

  - every variant marked unsigned-detectable must make `verify` fail on the
    unsigned record;
  - every variant must make `verify --key PUB` fail on the signed record;
  - the benign controls (a touched mtime, a copy under the same name) must
    still verify.

Variants marked not unsigned-detectable are forgeries: someone who can write
the record rewrites artifacts, manifest, checksums and DONE consistently. An
unsigned record cannot detect them (README: what an unsigned record proves);
only the signature can.

    BL_CLI=build/brainlesslab BL_SOURCE_DIR=. python3 tests/cli/tamper_corpus.py
"""
import glob, hashlib, json, os, shutil, subprocess, sys, tempfile

CLI = os.path.abspath(os.environ["BL_CLI"])
SRC = os.environ["BL_SOURCE_DIR"]
tmp = tempfile.mkdtemp(prefix="bl_tamper_")
failures = []


def sh(*a):
    return subprocess.run([str(x) for x in a], capture_output=True, text=True, errors="replace")


def sha(b):
    return hashlib.sha256(b).hexdigest()


plan = os.path.join(tmp, "plan.toml")
open(plan, "w").write('format = "brainlesslab-plan"\nformat_version = 4\nid = "tamper"\noperation = "connectome"\n'
                      '[connectome]\npath = "%s/data/connectomes/celegans-varshney2011"\n[model]\npreset = "shiu2024"\n'
                      '[[stimulus]]\nname = "s"\nids = ["ASHL", "ASHR", "AWCL"]\nrate_hz = 200.0\n'
                      '[run]\ntrials = 2\nduration_ms = 100.0\nseed = 3\nbackend = "cpu"\nthreads = 1\n' % os.path.abspath(SRC))
key = os.path.join(tmp, "key")
evil = os.path.join(tmp, "evil")
assert sh(CLI, "keygen", "--out", key).returncode == 0
assert sh(CLI, "keygen", "--out", evil).returncode == 0


def make(root, *extra):
    r = sh(CLI, "run", plan, "--root", root, "--quiet", *extra)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().splitlines()[-1]


base_unsigned = make(os.path.join(tmp, "u"))
base_signed = make(os.path.join(tmp, "s"), "--sign-key", key + ".key")
# Same root: the second record gets its own name (a "-2" suffix when sealed
# within the same second), so its content is another record's.
other_unsigned = make(os.path.join(tmp, "u"))
other_signed = make(os.path.join(tmp, "s"), "--sign-key", key + ".key")
assert sh(CLI, "verify", base_unsigned).returncode == 0
assert sh(CLI, "verify", "--key", key + ".pub", base_signed).returncode == 0


# ---- helpers working on a record directory R ---------------------------------
def P(r, *p):
    return os.path.join(r, *p)


def manifest(r):
    return json.load(open(P(r, "manifest.json")))


def artifacts(r):
    return [a["path"] for a in manifest(r)["artifacts"]]


def write_manifest_text(r, text):
    open(P(r, "manifest.json"), "w").write(text)


def reseal(r, resign_with=None, keep_text=False):
    """A forger's consistent rewrite: checksums from the files as they are now,
    the manifest's artifact list from them, DONE naming the new manifest."""
    mtext = open(P(r, "manifest.json")).read()
    try:
        if keep_text:
            raise ValueError("keep the manifest's text as it is")
        m = json.loads(mtext)
        arts = []
        for a in m.get("artifacts", []):
            f = P(r, a["path"])
            if os.path.isfile(f):
                b = open(f, "rb").read()
                a["bytes"], a["sha256"] = len(b), sha(b)
            arts.append(a)
        m["artifacts"] = arts
        mtext = json.dumps(m, indent=1) + "\n"
        open(P(r, "manifest.json"), "w").write(mtext)
    except ValueError:
        m = None  # a deliberately broken manifest: keep its text
    lines = ""
    if m:
        for a in m["artifacts"]:
            lines += "%s  %s\n" % (a["sha256"], a["path"])
    lines += "%s  manifest.json\n" % sha(mtext.encode())
    open(P(r, "checksums.sha256"), "w").write(lines)
    if os.path.exists(P(r, "DONE")) and not os.path.islink(P(r, "DONE")):
        done = [l for l in open(P(r, "DONE")).read().splitlines() if not l.startswith("manifest_sha256")]
        open(P(r, "DONE"), "w").write("\n".join(done + ["manifest_sha256 " + sha(mtext.encode())]) + "\n")
    if resign_with:
        r2 = subprocess.run(["/usr/bin/python3", "-c", SIGNER, resign_with + ".key", P(r, "checksums.sha256"),
                             P(r, "SIGNATURE")], capture_output=True, text=True)
        assert r2.returncode == 0, r2.stderr


# An attacker's re-signature with their own key: openssl pkeyutl signs raw Ed25519.
SIGNER = r'''
import subprocess, sys
key, msg, out = sys.argv[1:]
sig = subprocess.run(["openssl", "pkeyutl", "-sign", "-rawin", "-inkey", key, "-in", msg],
                     capture_output=True, check=True).stdout
pub = subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-outform", "DER"],
                     capture_output=True, check=True).stdout[-32:]
open(out, "w").write("brainlesslab-signature 1\nalgorithm ed25519\npublic_key %s\nmessage checksums.sha256\n"
                     "signature %s\n" % (pub.hex(), sig.hex()))
'''


def edit_manifest(r, fn):
    m = manifest(r)
    fn(m)
    write_manifest_text(r, json.dumps(m, indent=1) + "\n")


def flip_byte(path, at=-1):
    b = bytearray(open(path, "rb").read())
    b[at] ^= 1
    open(path, "wb").write(b)


# ---- the variants: (name, unsigned-detectable, mutate(record, other_record, signed)) ----
V = []


def variant(name, detectable=True):
    def deco(fn):
        V.append((name, detectable, fn))
        return fn
    return deco


@variant("byte changed in counts.npy")
def _(r, o, s): flip_byte(P(r, "counts.npy"))
@variant("spikes/trial-0000.h5 truncated")
def _(r, o, s): open(P(r, "spikes", "trial-0000.h5"), "r+b").truncate(100)
@variant("line appended to rates.csv")
def _(r, o, s): open(P(r, "rates.csv"), "a").write("9,x,y,0,0,0,0\n")
@variant("final_v.npy deleted")
def _(r, o, s): os.unlink(P(r, "final_v.npy"))
@variant("file added")
def _(r, o, s): open(P(r, "extra.txt"), "w").write("added\n")
@variant("file added in a new subdirectory")
def _(r, o, s): os.makedirs(P(r, "sub")); open(P(r, "sub", "x"), "w").write("x")
@variant("empty subdirectory added")
def _(r, o, s): os.makedirs(P(r, "empty"))
@variant("artifact hard-linked from outside the record")
def _(r, o, s): os.link(P(r, "summary.json"), P(os.path.dirname(r), "outside-link"))
@variant("artifact replaced by a symlink to an identical copy")
def _(r, o, s):
    shutil.copy(P(r, "counts.npy"), P(os.path.dirname(r), "copy.npy"))
    os.unlink(P(r, "counts.npy")); os.symlink(P(os.path.dirname(r), "copy.npy"), P(r, "counts.npy"))
@variant("FIFO added")
def _(r, o, s): os.mkfifo(P(r, "pipe"))
@variant("artifact renamed")
def _(r, o, s): os.rename(P(r, "counts.npy"), P(r, "counts2.npy"))
@variant("two artifacts' contents swapped")
def _(r, o, s):
    a, b = open(P(r, "rates_mean_hz.npy"), "rb").read(), open(P(r, "rates_sd_hz.npy"), "rb").read()
    open(P(r, "rates_mean_hz.npy"), "wb").write(b); open(P(r, "rates_sd_hz.npy"), "wb").write(a)
@variant("manifest value edited, checksums not updated")
def _(r, o, s): edit_manifest(r, lambda m: m["run"].__setitem__("spikes", 1))
@variant("manifest edited and checksums updated, DONE not")
def _(r, o, s):
    edit_manifest(r, lambda m: m["run"].__setitem__("spikes", 1))
    t = open(P(r, "manifest.json"), "rb").read()
    lines = [l for l in open(P(r, "checksums.sha256")).read().splitlines() if not l.endswith("  manifest.json")]
    open(P(r, "checksums.sha256"), "w").write("\n".join(lines + [sha(t) + "  manifest.json"]) + "\n")
@variant("manifest value forged consistently (checksums, DONE)", detectable=False)
def _(r, o, s): edit_manifest(r, lambda m: m["run"].__setitem__("spikes", 1)); reseal(r)
@variant("artifact rewritten with manifest, checksums and DONE", detectable=False)
def _(r, o, s): open(P(r, "summary.json"), "w").write("{}\n"); reseal(r)
@variant("two artifacts swapped, resealed", detectable=False)
def _(r, o, s):
    a, b = open(P(r, "rates_mean_hz.npy"), "rb").read(), open(P(r, "rates_sd_hz.npy"), "rb").read()
    open(P(r, "rates_mean_hz.npy"), "wb").write(b); open(P(r, "rates_sd_hz.npy"), "wb").write(a); reseal(r)
@variant("checksums.sha256 deleted")
def _(r, o, s): os.unlink(P(r, "checksums.sha256"))
@variant("manifest.json deleted")
def _(r, o, s): os.unlink(P(r, "manifest.json"))
@variant("DONE deleted")
def _(r, o, s): os.unlink(P(r, "DONE"))
@variant("FAILED added beside DONE")
def _(r, o, s): open(P(r, "FAILED"), "w").write("status FAILED\n")
@variant(".RESERVED added beside DONE")
def _(r, o, s): open(P(r, ".RESERVED"), "w").write("pid 1\n")
@variant("DONE replaced by a symlink")
def _(r, o, s):
    shutil.copy(P(r, "DONE"), P(os.path.dirname(r), "DONE.copy")); os.unlink(P(r, "DONE"))
    os.symlink(P(os.path.dirname(r), "DONE.copy"), P(r, "DONE"))
@variant("an artifact's checksums line removed")
def _(r, o, s):
    lines = [l for l in open(P(r, "checksums.sha256")).read().splitlines() if not l.endswith("  counts.npy")]
    open(P(r, "checksums.sha256"), "w").write("\n".join(lines) + "\n")
@variant("an artifact's checksum changed")
def _(r, o, s):
    t = open(P(r, "checksums.sha256")).read()
    open(P(r, "checksums.sha256"), "w").write(("0" * 64) + t[64:])
@variant("checksums line duplicated")
def _(r, o, s):
    t = open(P(r, "checksums.sha256")).read()
    open(P(r, "checksums.sha256"), "w").write(t.splitlines()[0] + "\n" + t)
@variant("manifest artifact path escaping the record (resealed)")
def _(r, o, s): edit_manifest(r, lambda m: m["artifacts"][0].__setitem__("path", "../x")); reseal(r)
@variant("record emptied: artifacts removed, resealed")
def _(r, o, s):
    for a in artifacts(r):
        os.unlink(P(r, a))
    edit_manifest(r, lambda m: m.__setitem__("artifacts", [])); reseal(r)
@variant("record emptied and its promises removed too", detectable=False)
def _(r, o, s):
    for a in artifacts(r):
        os.unlink(P(r, a))
    edit_manifest(r, lambda m: (m.__setitem__("artifacts", []), m.__setitem__("required_artifacts", []))); reseal(r)
@variant("record directory renamed")
def _(r, o, s): os.rename(r, r + "-renamed")
@variant("another record's content under this record's name")
def _(r, o, s):
    for f in os.listdir(r):
        p = P(r, f)
        shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)
    for f in os.listdir(o):
        shutil.copy2(P(o, f), P(r, f)) if os.path.isfile(P(o, f)) else shutil.copytree(P(o, f), P(r, f))
@variant("plan_sha256 replaced, resealed")
def _(r, o, s): edit_manifest(r, lambda m: m.__setitem__("plan_sha256", "ab" * 32)); reseal(r)
@variant("status rewritten to FAILED, resealed (DONE kept)")
def _(r, o, s): edit_manifest(r, lambda m: m.__setitem__("status", "FAILED")); reseal(r)
@variant("manifest with a duplicate key, resealed")
def _(r, o, s):
    t = open(P(r, "manifest.json")).read().replace('"status":', '"status": "FAILED", "status":', 1)
    write_manifest_text(r, t); reseal(r, keep_text=True)
@variant("manifest with trailing text, resealed")
def _(r, o, s): open(P(r, "manifest.json"), "a").write('{"status": "DONE"}\n'); reseal(r)
@variant("format_version changed to 99, resealed")
def _(r, o, s): edit_manifest(r, lambda m: m.__setitem__("format_version", 99)); reseal(r)
@variant("artifact bytes field changed, resealed without re-hashing")
def _(r, o, s):
    edit_manifest(r, lambda m: m["artifacts"][0].__setitem__("bytes", 1))
    t = open(P(r, "manifest.json"), "rb").read()
    lines = [l for l in open(P(r, "checksums.sha256")).read().splitlines() if not l.endswith("  manifest.json")]
    open(P(r, "checksums.sha256"), "w").write("\n".join(lines + [sha(t) + "  manifest.json"]) + "\n")
    d = [l for l in open(P(r, "DONE")).read().splitlines() if not l.startswith("manifest_sha256")]
    open(P(r, "DONE"), "w").write("\n".join(d + ["manifest_sha256 " + sha(t)]) + "\n")
@variant("newline and escape sequence injected in an artifact path")
def _(r, o, s): edit_manifest(r, lambda m: m["artifacts"][0].__setitem__("path", "a\nOK\x1b[2K"))
@variant("artifact moved into a subdirectory")
def _(r, o, s): os.makedirs(P(r, "moved")); os.rename(P(r, "counts.npy"), P(r, "moved", "counts.npy"))
@variant("artifact replaced by a directory")
def _(r, o, s): os.unlink(P(r, "counts.npy")); os.makedirs(P(r, "counts.npy"))
@variant("checksums hex upper-cased")
def _(r, o, s):
    t = open(P(r, "checksums.sha256")).read()
    open(P(r, "checksums.sha256"), "w").write("\n".join(l[:64].upper() + l[64:] for l in t.splitlines()) + "\n")
@variant("checksums' last newline removed")
def _(r, o, s):
    t = open(P(r, "checksums.sha256")).read()
    open(P(r, "checksums.sha256"), "w").write(t.rstrip("\n"))
@variant("DONE names another manifest hash")
def _(r, o, s):
    d = [l for l in open(P(r, "DONE")).read().splitlines() if not l.startswith("manifest_sha256")]
    open(P(r, "DONE"), "w").write("\n".join(d + ["manifest_sha256 " + "cd" * 32]) + "\n")
@variant("input digest forged, resealed", detectable=False)
def _(r, o, s): edit_manifest(r, lambda m: m["inputs"][0].__setitem__("sha256", "ef" * 32)); reseal(r)
@variant("SIGNATURE deleted", detectable=False)
def _(r, o, s):
    if os.path.exists(P(r, "SIGNATURE")):
        os.unlink(P(r, "SIGNATURE"))
@variant("SIGNATURE and the manifest's signing block removed, resealed", detectable=False)
def _(r, o, s):
    if os.path.exists(P(r, "SIGNATURE")):
        os.unlink(P(r, "SIGNATURE"))
    edit_manifest(r, lambda m: m.pop("signing", None)); reseal(r)
@variant("SIGNATURE copied from another record", detectable=False)
def _(r, o, s):
    if os.path.exists(P(o, "SIGNATURE")):
        shutil.copy(P(o, "SIGNATURE"), P(r, "SIGNATURE"))
@variant("forged and re-signed with the forger's own key", detectable=False)
def _(r, o, s):
    open(P(r, "summary.json"), "w").write("{}\n")
    if s:
        pub = subprocess.run(["openssl", "pkey", "-in", evil + ".key", "-pubout", "-outform", "DER"],
                             capture_output=True, check=True).stdout[-32:].hex()
        edit_manifest(r, lambda m: m["signing"].__setitem__("public_key", pub))
    reseal(r, resign_with=evil if s else None)

BENIGN = []


def benign(name):
    def deco(fn):
        BENIGN.append((name, fn))
        return fn
    return deco


@benign("mtimes touched")
def _(r, o, s):
    for f in os.listdir(r):
        os.utime(P(r, f), (1, 1))
@benign("copied elsewhere under the same name")
def _(r, o, s): pass


def trial(base, other, signed, fn, k):
    where = os.path.join(tmp, "v%03d-%s" % (k, "s" if signed else "u"))
    os.makedirs(where)
    rec = os.path.join(where, os.path.basename(base))
    shutil.copytree(base, rec, symlinks=True)
    fn(rec, other, signed)
    target = rec if os.path.exists(rec) else rec  # a rename leaves nothing under the old name
    if not os.path.exists(target):
        target = rec + "-renamed"
    args = [CLI, "verify"] + (["--key", key + ".pub"] if signed else []) + [target]
    r = subprocess.run(args, capture_output=True, text=True, errors="replace", timeout=60)
    out = r.stdout + r.stderr
    clean = "\x1b" not in out and not any(l.startswith("OK") for l in out.splitlines()[:-1])
    return r.returncode, clean, out


u_total = u_det = s_det = 0
for k, (name, detectable, fn) in enumerate(V):
    rc_u, clean_u, out_u = trial(base_unsigned, other_unsigned, False, fn, k)
    rc_s, clean_s, out_s = trial(base_signed, other_signed, True, fn, k)
    if detectable:
        u_total += 1
        u_det += rc_u == 1
        if rc_u != 1:
            failures.append("unsigned: " + name)
            print("FAIL unsigned record: not detected: %s\n     %s" % (name, out_u.strip()[-300:]))
    if rc_s != 1:
        failures.append("signed: " + name)
        print("FAIL signed record (--key): not detected: %s\n     %s" % (name, out_s.strip()[-300:]))
    s_det += rc_s == 1
    if not (clean_u and clean_s):
        failures.append("output: " + name)
        print("FAIL verify printed a forged OK line or an escape sequence: %s" % name)
    print("%-4s %-62s unsigned:%s signed:%s" % ("ok" if (rc_s == 1 and (rc_u == 1 or not detectable)) else "FAIL",
                                               name, "detected" if rc_u == 1 else "passes  ",
                                               "detected" if rc_s == 1 else "passes"))
for name, fn in BENIGN:
    for signed, base, other in ((False, base_unsigned, other_unsigned), (True, base_signed, other_signed)):
        rc, _, out = trial(base, other, signed, fn, 900 + len(name) + signed)
        if rc != 0:
            failures.append("benign: " + name)
            print("FAIL benign change rejected: %s (%s)" % (name, out.strip()[-200:]))
print("tamper corpus: %d variants; unsigned record: %d/%d unsigned-detectable variants detected "
      "(%d forgeries need a signature); signed record with --key: %d/%d detected; %d benign controls"
      % (len(V), u_det, u_total, len(V) - u_total, s_det, len(V), len(BENIGN)))
shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if failures or len(V) < 40 else 0)
