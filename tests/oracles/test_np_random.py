"""src/core/np_random.c against NumPy itself: np.random.Generator(np.random.Philox(seed))
draw for draw, bit for bit, under the Python BrainlessLab's "philox-host-v1" seeds.

The C side is tests/tools/np_random_draws (commands on stdin, draws on stdout). For
several seeds (small integers, 64-bit ones, 256-bit digests, and digests from
philox-host-v1 seed_for with str and int keys, including strings JSON must escape)
it compares thousands of draws of every method: raw 64-bit and 32-bit words,
random(), uniform(lo, hi), integers(lo, hi) over ranges taking the 32-bit and the
64-bit Lemire paths (and the single-value range that draws nothing), the ziggurat
standard_normal (tail and wedge included), shuffle of int32 and uint32 arrays,
permutation(n), choice, and a
fixed interleaving of them all (the buffered 32-bit half across other draws).

seed_for is restated here from the scheme's definition: SHA-256 of the JSON list
[scheme, root, partition, stream, [[type name, key], ...]] written with
ensure_ascii=True and separators (",", ":"), read as a little-endian integer.
usage: test_np_random.py [NP_RANDOM_DRAWS]   (default: $BL_BUILD_DIR/tests/np_random_draws)"""
import glob
import hashlib
import json
import os
import struct
import subprocess
import sys

import numpy as np

SCHEME = "philox-host-v1"
DRIVER = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ["BL_BUILD_DIR"], "tests", "np_random_draws")
failures = []
count = 0


def check(cond, what):
    global count
    count += 1
    if not cond:
        failures.append(what)
        print("FAIL " + what)
    return cond


def seed_json(root, partition, stream, keys):
    return json.dumps([SCHEME, root, partition, stream, [[type(k).__name__, k] for k in keys]],
                      ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def seed_for(root, partition, stream, *keys):
    return int.from_bytes(hashlib.sha256(seed_json(root, partition, stream, keys).encode("utf-8")).digest(), "little")


def dbl(x):
    return "%016x" % struct.unpack("<Q", struct.pack("<d", float(x)))[0]


def key_tok(k):
    return "i:%d" % k if isinstance(k, int) else "s:" + k.encode("utf-8").hex()


N = 2000  # draws per method and seed
UNIFORMS = [(0.0, 1.0), (-1.2, 1.2), (-0.10475, 0.10475), (3.5, 3.5), (1e-300, 1e300)]
INTEGERS = [(1, 3), (0, 2), (32, 65), (0, 3), (-7, 1000003), (0, 2 ** 31 + 5), (5, 6), (0, 2 ** 32),
            (-2 ** 31, 2 ** 31), (0, 2 ** 32 + 1), (0, 2 ** 40 + 12345), (-2 ** 62, 2 ** 62 + 3),
            (0, 2 ** 63 - 1), (-2 ** 63, 2 ** 63 - 1)]


def numpy_draws(g, method, n, a=None, b=None):
    if method == "u64":
        return [str(int(v)) for v in g.bit_generator.random_raw(n)]
    if method == "u32":
        return [str(int(g.integers(0, 2 ** 32, dtype=np.uint32))) for _ in range(n)]
    if method == "random":
        return [dbl(g.random()) for _ in range(n)]
    if method == "uniform":
        return [dbl(g.uniform(a, b)) for _ in range(n)]
    if method == "integers":
        return [str(int(g.integers(a, b))) for _ in range(n)]
    if method == "normal":
        return [dbl(g.standard_normal()) for _ in range(n)]
    if method == "choice":
        seq = tuple(range(100, 100 + a))
        return [str(seq.index(int(g.choice(seq)))) for _ in range(n)]
    if method == "permutation":
        return [str(int(v)) for v in g.permutation(n)]
    if method in ("shuffle_i32", "shuffle_u32"):
        x = np.arange(n, dtype=np.int32 if method == "shuffle_i32" else np.uint32)
        g.shuffle(x)
        return [str(int(v)) for v in x]
    raise ValueError(method)


def numpy_mixed(g, n):
    out = []
    for _ in range(n):
        out.append(str(int(g.integers(0, 2 ** 32, dtype=np.uint32))))
        out.append(dbl(g.random()))
        out.append(str(int(g.integers(1, 3))))
        out.append(dbl(g.standard_normal()))
        out.append(str(int(g.integers(-5, 2 ** 40))))
        out.append(str(int(g.bit_generator.random_raw())))
        out.append(str((8, 32, 128).index(int(g.choice((8, 32, 128))))))
    return out


# seeds: (label, command line for the driver, the integer NumPy gets, expected digest or None)
seeds = [("u64 0", "seed u64 0", 0, None), ("u64 1", "seed u64 1", 1, None),
         ("u64 12345", "seed u64 12345", 12345, None),
         ("u64 2^64-1", "seed u64 %d" % (2 ** 64 - 1), 2 ** 64 - 1, None),
         ("u64 2^40+3", "seed u64 %d" % (2 ** 40 + 3), 2 ** 40 + 3, None)]
for nbytes, fill in ((32, 0xA5), (17, 0x01), (5, 0xFF), (32, None)):
    raw = bytes((fill + 37 * k) & 0xFF for k in range(nbytes)) if fill is not None else \
        hashlib.sha256(b"bl").digest()[:31] + b"\x00"  # a high zero byte: fewer entropy words
    seeds.append(("bytes %d" % nbytes, "seed bytes " + raw.hex(), int.from_bytes(raw, "little"), None))
SEED_FOR = [(0, "development", "world", ()), (7, "development", "world", ("delayed_cue", 0, 3)),
            (2 ** 64 - 1, "calibration", "construction", ("sorn", -5, "trial")),
            (42, "evaluation", "world", ("caf\u00e9 \"quoted\" \\ back\nline\ttab\x01\x7f", 2 ** 62)),
            (3, "dev", "drive", ("\U0001f600 astral", "plain", 0, -2 ** 63))]
for root, part, stream, keys in SEED_FOR:
    toks = " ".join([str(root), part.encode().hex(), stream.encode().hex()] + [key_tok(k) for k in keys])
    digest = hashlib.sha256(seed_json(root, part, stream, keys).encode("utf-8")).digest()
    seeds.append(("seed_for %s/%s/%s%r" % (root, part, stream, keys), "seedfor " + toks,
                  seed_for(root, part, stream, *keys), digest.hex()))
    r = subprocess.run([DRIVER], input="json " + toks + "\n", capture_output=True, text=True)
    check(r.returncode == 0 and bytes.fromhex(r.stdout.strip()).decode("ascii") == seed_json(root, part, stream, keys),
          "seed_for JSON %r: C %r" % (seed_json(root, part, stream, keys), r.stdout.strip()[:200]))
r = subprocess.run([DRIVER], input="seedfor 1 %s %s s:c328\n" % ("x".encode().hex(), "y".encode().hex()),
                   capture_output=True, text=True)
check(r.stdout.startswith("error") and "UTF-8" in r.stdout, "seed_for refuses invalid UTF-8 (%r)" % r.stdout)

plan = []  # (seed index, method, n, a, b)
for si in range(len(seeds)):
    plan.append((si, "u64", N, None, None))
    plan.append((si, "u32", N + 1, None, None))  # odd: a kept half remains for the next method
    plan.append((si, "random", N, None, None))
    for lo, hi in UNIFORMS:
        plan.append((si, "uniform", N // 4, lo, hi))
    for lo, hi in INTEGERS:
        plan.append((si, "integers", N // 4, lo, hi))
    plan.append((si, "normal", 5 * N, None, None))
    for n in (3, 1, 2, 7):
        plan.append((si, "choice", N // 4, n, None))
    for n in (31, 63, 2, 1, 0, 1000):
        plan.append((si, "shuffle_i32", n, None, None))
    plan.append((si, "shuffle_u32", 97, None, None))
    for n in (166, 1, 5):
        plan.append((si, "permutation", n, None, None))
    plan.append((si, "mixed", N // 2, None, None))

commands, expected, labels = [], [], []
gens = {}
for si, method, n, a, b in plan:
    label, cmd, integer, digest = seeds[si]
    if si not in gens:
        commands.append(cmd)
        gens[si] = np.random.Generator(np.random.Philox(integer))
        if digest:
            expected.append(digest)
            labels.append("%s: digest" % label)
    g = gens[si]
    if method == "mixed":
        commands.append("mixed %d" % n)
        vals = numpy_mixed(g, n)
    else:
        commands.append("draw %s %d %s %s" % (method, n, repr(a) if a is not None else "0",
                                              repr(b) if b is not None else "0"))
        vals = numpy_draws(g, method, n, a, b)
    expected.extend(vals)
    labels.extend(["%s: %s %s %s #%d" % (label, method, a, b, k) for k in range(len(vals))])

r = subprocess.run([DRIVER], input="\n".join(commands) + "\n", capture_output=True, text=True)
check(r.returncode == 0, "the driver ran (%s)" % r.stderr.strip()[:300])
got = r.stdout.split()
check(len(got) == len(expected), "%d draws from C, %d from NumPy" % (len(got), len(expected)))
bad = [k for k in range(min(len(got), len(expected))) if got[k] != expected[k]]
if bad:
    k = bad[0]
    check(False, "%d of %d draws differ; first: %s: C %s, NumPy %s" % (len(bad), len(expected), labels[k], got[k],
                                                                     expected[k]))
else:
    count += 1

# The normals took every path: the tail (|x| > r) and the wedges must have been drawn.
g = np.random.Generator(np.random.Philox(seed_for(0, "development", "world")))
z = g.standard_normal(200000)
check(np.abs(z).max() > 3.6541528853610088, "the normal draws reach the ziggurat's tail")

# The ziggurat tables recorded in src/core/np_ziggurat.h equal the installed NumPy's.
src = os.environ.get("BL_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
text = open(os.path.join(src, "src", "core", "np_ziggurat.h")).read()


def table(name, conv):
    body = text.split(name + "[256] = {")[1].split("};")[0]
    return [conv(v.strip()) for v in body.split(",") if v.strip()]


ki = table("bl_np_zig_ki", lambda v: int(v.rstrip("u"), 16))
wi = table("bl_np_zig_wi", float.fromhex)
fi = table("bl_np_zig_fi", float.fromhex)
so = glob.glob(os.path.join(os.path.dirname(np.random.__file__), "_generator*.so"))
blob = open(so[0], "rb").read() if so else b""
found = blob.find(struct.pack("<256Q", *ki)) >= 0 and blob.find(struct.pack("<256d", *wi)) >= 0 and \
    blob.find(struct.pack("<256d", *fi)) >= 0
check(found, "the ziggurat tables are byte for byte in %s" % (so[0] if so else "NumPy's _generator module"))

print("oracle np-random: %d draws over %d seeds compared with NumPy %s; %d checks, %d failed" %
      (len(expected), len(seeds), np.__version__, count, len(failures)))
sys.exit(1 if failures else 0)
