"""Malformed connectome directories and simulate inputs: every case must exit 1
with exactly one stderr line naming the file and the place, and no sanitizer
report. Corrupted .npy/.csv files get their manifest hashes refreshed so that
the loader's own validation (not only the SHA-256 check) is exercised."""
import hashlib, json, os, shutil, subprocess, sys, tempfile
import numpy as np

CLI = os.environ["BL_CLI"]
tmp = tempfile.mkdtemp(prefix="bl_malformed_")
base = os.path.join(tmp, "base")
subprocess.run([CLI, "synth", "--out", base, "--neurons", "50", "--mean-degree", "4", "--seed", "3"],
               check=True, stdout=subprocess.DEVNULL)
off = np.load(os.path.join(base, "offsets.npy"))
tgt = np.load(os.path.join(base, "targets.npy"))
cnt = np.load(os.path.join(base, "counts.npy"))
row = int(np.argmax(np.diff(off)))  # a row with at least two edges
assert off[row + 1] - off[row] >= 2
k0 = int(off[row])


def rehash(d):
    m = json.load(open(os.path.join(d, "manifest.json")))
    for name in m["files"]:
        p = os.path.join(d, name)
        if os.path.exists(p):
            data = open(p, "rb").read()
            m["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    json.dump(m, open(os.path.join(d, "manifest.json"), "w"))


def npy_bytes(arr, descr=None, fortran=False, shape=None):
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr or arr.dtype.str, fortran, shape if shape is not None else str(tuple(arr.shape)))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + arr.tobytes()


cases = []


def case(name, expect, mutate, do_rehash=True, cmd=None):
    cases.append((name, expect, mutate, do_rehash, cmd))


def write(d, name, data):
    open(os.path.join(d, name), "wb").write(data)


def put(name, arr, **kw):
    return lambda d: write(d, name, npy_bytes(arr, **kw))


def edit_csv(fn):
    def f(d):
        p = os.path.join(d, "neurons.csv")
        lines = open(p).read().split("\n")
        open(p, "w").write("\n".join(fn(lines)))
    return f


# .npy headers and payloads
case("bad magic", ["offsets.npy", "magic"], lambda d: write(d, "offsets.npy", b"\x93NUMPZ" + open(os.path.join(d, "offsets.npy"), "rb").read()[6:]))
case("wrong dtype", ["offsets.npy", "<i4"], put("offsets.npy", off.astype("<i4")))
case("big-endian", ["targets.npy", "endian"], put("targets.npy", tgt.astype(">i4")))
case("fortran order", ["targets.npy", "fortran"], put("targets.npy", tgt, fortran=True))
case("truncated data", ["counts.npy", "bytes"], lambda d: write(d, "counts.npy", npy_bytes(cnt)[:-3]))
case("trailing bytes", ["counts.npy", "bytes"], lambda d: write(d, "counts.npy", npy_bytes(cnt) + b"\0\0\0\0"))
case("2-d offsets", ["offsets.npy"], put("offsets.npy", off.reshape(1, -1)))
case("header length past end", ["offsets.npy", "header"], lambda d: write(d, "offsets.npy", b"\x93NUMPY\x01\x00\xff\xff{'descr'"))
case("empty file", ["targets.npy"], lambda d: write(d, "targets.npy", b""))
case("shape vs manifest", ["targets.npy", "n_edges"], put("targets.npy", tgt[:-1]))
case("garbage shape", ["counts.npy", "shape"], put("counts.npy", cnt, shape="(banana,)"))
# CSR graph
o = off.copy(); o[row + 1] = o[row] - 1
case("offsets decrease", ["offsets.npy", "index %d" % (row + 1)], put("offsets.npy", o))
o = off.copy(); o[0] = 1
case("first offset", ["offsets.npy", "index 0"], put("offsets.npy", o))
o = off.copy(); o[-1] -= 1
case("last offset", ["offsets.npy", "index %d" % (len(off) - 1)], put("offsets.npy", o))
t = tgt.copy(); t[k0] = 50
case("target out of range", ["targets.npy", "index %d" % k0], put("targets.npy", t))
t = tgt.copy(); t[k0], t[k0 + 1] = tgt[k0 + 1], tgt[k0]
case("targets unsorted", ["targets.npy", "index %d" % (k0 + 1)], put("targets.npy", t))
t = tgt.copy(); t[k0 + 1] = t[k0]
case("duplicate target", ["targets.npy", "index %d" % (k0 + 1)], put("targets.npy", t))
c = cnt.copy(); c[k0] = 0
case("zero count", ["counts.npy", "index %d" % k0], put("counts.npy", c))
# neurons.csv
case("csv header", ["neurons.csv", ":1"], edit_csv(lambda L: ["idx,external_id"] + L[1:]))
case("csv index order", ["neurons.csv", ":3"], edit_csv(lambda L: L[:2] + ["7" + L[2][1:]] + L[3:]))
case("csv duplicate id", ["neurons.csv", "'1'"], edit_csv(lambda L: L[:3] + [L[3].replace(",2,", ",1,", 1)] + L[4:]))
case("csv extra field", ["neurons.csv", ":5"], edit_csv(lambda L: L[:4] + [L[4] + ",x"] + L[5:]))
case("csv unterminated quote", ["neurons.csv"], edit_csv(lambda L: L[:6] + [L[6] + ',"open'] + L[7:]))
case("csv missing rows", ["neurons.csv", "rows"], edit_csv(lambda L: L[:10]))
case("csv non-integer index", ["neurons.csv", ":2"], edit_csv(lambda L: L[:1] + ["zero" + L[1][1:]] + L[2:]))
# manifest
case("manifest not json", ["manifest.json"], lambda d: write(d, "manifest.json", b"{nope"), do_rehash=False)
case("manifest format", ["manifest.json", "format"], lambda d: write(d, "manifest.json", open(os.path.join(d, "manifest.json"), "rb").read().replace(b"brainlesslab-connectome", b"other")), do_rehash=False)
case("hash mismatch", ["counts.npy", "SHA-256"], put("counts.npy", -cnt), do_rehash=False)
case("missing file", ["counts.npy"], lambda d: os.remove(os.path.join(d, "counts.npy")))
# simulate inputs
np.save(os.path.join(tmp, "pop_bad.npy"), np.array([3, 99], dtype=np.int32))
np.save(os.path.join(tmp, "sched_bad.npy"), np.zeros((4, 3), dtype=np.int32))
np.save(os.path.join(tmp, "sil_bad.npy"), np.zeros(3, dtype=np.float64))
sim = [CLI, "simulate", "--connectome", base, "--preset", "shiu2024", "--duration-ms", "1", "--out"]
case("poisson index", ["pop_bad.npy", "index 1", "99"], None, cmd=lambda o: sim + [o, "--poisson", "100:" + os.path.join(tmp, "pop_bad.npy")])
case("schedule shape", ["sched_bad.npy", "(K, 2)"], None, cmd=lambda o: sim + [o, "--schedule", os.path.join(tmp, "sched_bad.npy")])
case("silence dtype", ["sil_bad.npy", "<f8"], None, cmd=lambda o: sim + [o, "--silence", os.path.join(tmp, "sil_bad.npy")])

failures = 0
for i, (name, expect, mutate, do_rehash, cmd) in enumerate(cases):
    d = os.path.join(tmp, "case%02d" % i)
    if mutate:
        shutil.copytree(base, d)
        mutate(d)
        if do_rehash:
            rehash(d)
        argv = [CLI, "inspect", d]
    else:
        argv = cmd(d)
    r = subprocess.run(argv, capture_output=True, text=True)
    lines = [l for l in r.stderr.split("\n") if l.strip()]
    problems = []
    if r.returncode != 1:
        problems.append("exit %d" % r.returncode)
    if len(lines) != 1:
        problems.append("%d stderr lines" % len(lines))
    if "Sanitizer" in r.stderr or "runtime error" in r.stderr:
        problems.append("sanitizer report")
    for frag in expect:
        if frag not in r.stderr:
            problems.append("missing %r" % frag)
    status = "ok  " if not problems else "FAIL"
    print("%s malformed %-24s -> %s%s" % (status, name, lines[0] if lines else "(no message)",
                                          "" if not problems else "   [" + "; ".join(problems) + "]"))
    failures += bool(problems)
shutil.rmtree(tmp)
print("%d passed, %d failed" % (len(cases) - failures, failures))
sys.exit(1 if failures else 0)
