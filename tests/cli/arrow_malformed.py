"""Malformed Arrow IPC / Feather inputs: each made from a valid seed file
(tests/fuzz/corpus/arrow, written by apache-arrow) by one targeted change,
located by walking the file's flatbuffers here (independently of the C
reader). Each must fail with exit status 1 and one line on stderr that names
the file and the place (column, batch, byte offset or footer).

usage: arrow_malformed.py TABLE_READ WORKDIR SEEDDIR
"""
import struct
import subprocess
import sys
from pathlib import Path

tool, work, seeds = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
work.mkdir(parents=True, exist_ok=True)


def u16(b, o):
    return struct.unpack_from("<H", b, o)[0]


def u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


def table(b, pos):
    vt = pos - struct.unpack_from("<i", b, pos)[0]
    return pos, vt, u16(b, vt)


def field(b, t, i):
    """Absolute position of field i of table t (None when absent)."""
    pos, vt, vtlen = t
    slot = 4 + 2 * i
    if slot + 2 > vtlen:
        return None
    off = u16(b, vt + slot)
    return pos + off if off else None


def deref(b, p):
    return p + u32(b, p)


def sub(b, t, i):
    return table(b, deref(b, field(b, t, i)))


def vector(b, t, i):
    p = deref(b, field(b, t, i))
    return p + 4, u32(b, p)


class File:
    """Positions inside a Feather v2 file: footer, schema fields, first batch."""

    def __init__(self, data):
        self.b = b = bytearray(data)
        flen = u32(b, len(b) - 10)
        self.footer_len_at = len(b) - 10
        self.footer = len(b) - 10 - flen
        root = table(b, self.footer + u32(b, self.footer))
        self.root_at = self.footer + u32(b, self.footer)
        schema = sub(b, root, 1)
        fpos, nf = vector(b, schema, 1)
        self.fields = [table(b, deref(b, fpos + 4 * k)) for k in range(nf)]
        bpos, nb = vector(b, root, 3)
        self.block = bpos  # first record batch block: offset i64, metaDataLength i32, pad, bodyLength i64
        off = struct.unpack_from("<q", b, bpos)[0]
        self.msg = off
        mlen = u32(b, off + 4)
        meta = off + 8
        msg = table(b, meta + u32(b, meta))
        self.msg_table = msg
        self.rb = sub(b, msg, 2)
        self.body = meta + mlen
        self.nodes, _ = vector(b, self.rb, 1)
        self.bufs, _ = vector(b, self.rb, 2)

    def field_index(self, name):
        for k, f in enumerate(self.fields):
            p = deref(self.b, field(self.b, f, 0))
            if self.b[p + 4:p + 4 + u32(self.b, p)].decode() == name:
                return k
        raise KeyError(name)

    def buf(self, k):
        return struct.unpack_from("<qq", self.b, self.bufs + 16 * k)

    def set_buf(self, k, off, length):
        struct.pack_into("<qq", self.b, self.bufs + 16 * k, off, length)


plain = (seeds / "single-none.feather").read_bytes()
lz4 = (seeds / "single-lz4.feather").read_bytes()
stream = (seeds / "single-zstd.arrows").read_bytes()
zstd = (seeds / "single-zstd.feather").read_bytes()
# Buffer numbers of the seed's columns (validity, values[, data]): i8 0-1, i16 2-3,
# i32 4-5, i64 6-7, u8 8-9, u16 10-11, u32 12-13, u64 14-15, f32 16-17, f64 18-19,
# flag 20-21, name 22-24, large_name 25-27, nt 28-29, nt8 30-31; node k = column k.
cases = []


def case(name, data, needle, *cols):
    p = work / name
    p.write_bytes(bytes(data))
    cases.append((p, needle, cols))


def mutate(seed, fn):
    f = File(seed)
    fn(f)
    return f.b


case("bad-start.feather", b"ARROWX" + plain[6:], "byte offset 0:")
case("truncated.feather", plain[: len(plain) // 2], "no ARROW1 magic at the end")
case("footer-past-file.feather", mutate(plain, lambda f: struct.pack_into("<I", f.b, f.footer_len_at, 10**9)), "footer length")
case("footer-zero.feather", mutate(plain, lambda f: struct.pack_into("<I", f.b, f.footer_len_at, 0)), "footer length 0")
case("feather-v1.feather", b"FEA1" + b"\0" * 60 + b"FEA1", "Feather v1")
case("footer-vtable.feather", mutate(plain, lambda f: struct.pack_into("<i", f.b, f.root_at, -(10**6))), "footer at byte offset")
case("block-past-file.feather", mutate(plain, lambda f: struct.pack_into("<q", f.b, f.block, 10**12)), "byte offset 1000000000000")
case("meta-huge.feather", mutate(plain, lambda f: struct.pack_into("<I", f.b, f.msg + 4, 0x7FFFFFF0)), "message metadata of")
case("buffer-negative.feather", mutate(plain, lambda f: f.set_buf(3, -8, 8)), "column i16, batch 1: values buffer at body offset -8")
case("buffer-past-body.feather", mutate(plain, lambda f: f.set_buf(5, f.buf(5)[0], 10**9)), "column i32, batch 1: values buffer")
case("node-length.feather", mutate(plain, lambda f: struct.pack_into("<q", f.b, f.nodes + 16 * 2, 5)), "column i32, batch 1: the column has 5 rows")
case("null-count.feather", mutate(plain, lambda f: struct.pack_into("<q", f.b, f.nodes + 16 * 0 + 8, 1000)), "column i8, batch 1: null count 1000")
case("null-bitmap.feather", mutate(plain, lambda f: f.b.__setitem__(f.body + f.buf(0)[0], f.b[f.body + f.buf(0)[0]] ^ 1)), "column i8, batch 1: the validity bitmap has")
case("utf8-offsets.feather", mutate(plain, lambda f: struct.pack_into("<i", f.b, f.body + f.buf(23)[0] + 8, -5)), "column name, batch 1, row 2: string offset -5")


def dict_index(f):
    nt = f.field_index("nt")
    vals = f.body + f.buf(29)[0]
    for r in range(37):  # the first non-null row
        if not (f.b[f.body + f.buf(28)[0] + r // 8] >> (r % 8)) & 1 and f.buf(28)[1]:
            continue
        struct.pack_into("<i", f.b, vals + 4 * r, 99)
        return
    assert nt >= 0


case("dict-index.feather", mutate(plain, dict_index), "column nt, batch 1, row", "nt")


def u64_big(f):
    off = f.body + f.buf(15)[0]
    for r in range(37):
        if f.buf(14)[1] == 0 or (f.b[f.body + f.buf(14)[0] + r // 8] >> (r % 8)) & 1:
            struct.pack_into("<Q", f.b, off + 8 * r, 2**64 - 1)
            return


case("u64-overflow.feather", mutate(plain, u64_big), "uint64 value 18446744073709551615 exceeds int64", "u64")


def int_width(f):
    t = sub(f.b, f.fields[f.field_index("i16")], 3)
    struct.pack_into("<i", f.b, field(f.b, t, 0), 7)


case("int-width.feather", mutate(plain, int_width), "field i16: integer width 7")


def union_type(f):
    f.b[field(f.b, f.fields[f.field_index("i8")], 2)] = 14


case("union-type.feather", mutate(plain, union_type), "footer schema: type 14")


def lz4_prefix(big):
    def fn(f):
        for k in range(32):
            off, length = f.buf(k)
            if length >= 8 and struct.unpack_from("<q", f.b, f.body + off)[0] > 0:
                struct.pack_into("<q", f.b, f.body + off, 10**12 if big else 1)
                return
    return fn


case("lz4-claims-terabyte.feather", mutate(lz4, lz4_prefix(True)), "its prefix declares 1000000000000")
case("lz4-claims-less.feather", mutate(lz4, lz4_prefix(False)), "declares 1 bytes")


def codec(f):  # ZSTD (1) is stored; LZ4_FRAME (0), the default, would not be
    t = sub(f.b, f.rb, 3)
    f.b[field(f.b, t, 0)] = 7


case("codec.feather", mutate(zstd, codec), "compression codec 7")


def lz4_garbage(f):
    for k in range(32):
        off, length = f.buf(k)
        if length > 16 and struct.unpack_from("<q", f.b, f.body + off)[0] > 0:
            f.b[f.body + off + 8: f.body + off + 12] = b"\0\0\0\0"
            return


case("lz4-bad-frame.feather", mutate(lz4, lz4_garbage), "LZ4 frame:")


def version(f):
    struct.pack_into("<h", f.b, field(f.b, f.msg_table, 0), 1)


case("version.feather", mutate(plain, version), "metadata version 2 is not supported")
case("stream-truncated.arrows", stream[: len(stream) - 300], "byte offset")
case("stream-no-schema.arrows", b"\xff\xff\xff\xff\x10\x00\x00\x00" + b"\x0c\x00\x00\x00" + b"\0" * 12, "byte offset")

failed = 0
for path, needle, cols in cases:
    r = subprocess.run([tool, str(path), *cols], capture_output=True, text=True)
    lines = r.stderr.splitlines()
    ok = r.returncode == 1 and len(lines) == 1 and needle in lines[0] and str(path) in lines[0]
    print(("ok   " if ok else "FAIL ") + f"{path.name}: rc {r.returncode}: {r.stderr.strip()}")
    failed += not ok
print(f"arrow malformed: {len(cases) - failed} of {len(cases)} cases fail as they should")
sys.exit(1 if failed else 0)
