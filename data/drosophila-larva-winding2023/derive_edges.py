#!/usr/bin/python3
"""Re-derive the edge list of edges_all_compartments.csv.gz from Data S1.

Usage:
    /usr/bin/python3 derive_edges.py PATH/TO/Supplementary-Data-S1.zip [OUT.csv]

The shipped edges_all_compartments.csv.gz was made upstream of this project
(with pandas, see PROVENANCE.md); this script, which needs only the Python
standard library, re-derives the same rows from the zip so anyone can check
them: run it and compare with `zcat edges_all_compartments.csv.gz`. (The .gz
bytes themselves depend on the compressor; the decompressed text is what
matters and is what the importer reads.)

Rule: the all-all matrix has presynaptic rows and postsynaptic columns, both
labelled by skid. The four compartment matrices (aa, ad, da, dd) hold the
same skids in different orders, so every cell is looked up by skid. One
output row per non-zero all-all cell, row-major in the all-all file's order:
    pre_skid,post_skid,all,aa,ad,da,dd
Cells are written as floats ("3.0") in the source; each must be a whole
number >= 0, and all = aa + ad + da + dd must hold, or the script fails.

Input: github.com/brain-networks/larval-drosophila-connectome, commit
15e065f5c29f08c96ccd64ea8fe0f51510629009, Supplementary-Data-S1.zip (git blob
e7eff2cd789602c8a91bb2390b5d717faf0f8b51); its SHA-256 is checked first.
"""
import csv
import hashlib
import io
import sys
import zipfile

EXPECTED_SHA256 = "8c1f43809ed5d527ba61b154e377cc21da26383a75eda8aab85ce05607a72a4c"
FOLDER = "Supplementary-Data-S1/"
PARTS = ["aa", "ad", "da", "dd"]


def fail(message):
    sys.stderr.write("derive_edges.py: %s\n" % message)
    sys.exit(1)


def whole(text, where):
    try:
        v = float(text)
    except ValueError:
        fail("%s: %r is not a number" % (where, text))
    if v != int(v) or v < 0:
        fail("%s: %r is not a whole number >= 0" % (where, text))
    return int(v)


def read_matrix(zf, name):
    """Return (row skids, column skids, rows of int cells)."""
    with zf.open(FOLDER + name) as raw:
        reader = csv.reader(io.TextIOWrapper(raw, encoding="utf-8", newline=""))
        header = next(reader)
        if header[0] != "":
            fail("%s: first header cell %r, expected empty" % (name, header[0]))
        cols = [int(s) for s in header[1:]]
        row_ids, cells = [], []
        for lineno, row in enumerate(reader, start=2):
            if len(row) != len(header):
                fail("%s:%d: %d fields, expected %d" % (name, lineno, len(row), len(header)))
            row_ids.append(int(row[0]))
            cells.append([whole(x, "%s:%d" % (name, lineno)) for x in row[1:]])
    if sorted(row_ids) != sorted(cols) or len(set(cols)) != len(cols):
        fail("%s: row and column skids differ or repeat" % name)
    return row_ids, cols, cells


def main(argv):
    if len(argv) not in (2, 3):
        fail("usage: derive_edges.py Supplementary-Data-S1.zip [OUT.csv]")
    with open(argv[1], "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != EXPECTED_SHA256:
        fail("%s: sha256 %s, expected %s" % (argv[1], digest, EXPECTED_SHA256))
    with zipfile.ZipFile(argv[1]) as zf:
        rows, cols, allm = read_matrix(zf, "all-all_connectivity_matrix.csv")
        parts = []
        for p in PARTS:
            r, c, m = read_matrix(zf, "%s_connectivity_matrix.csv" % p)
            if set(r) != set(rows):
                fail("%s: skids differ from the all-all matrix" % p)
            ri = {s: i for i, s in enumerate(r)}
            ci = {s: j for j, s in enumerate(c)}
            parts.append((ri, ci, m))
    out = open(argv[2], "w", newline="") if len(argv) == 3 else sys.stdout
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["pre_skid", "post_skid", "all"] + PARTS)
    n = 0
    for i, pre in enumerate(rows):
        for j, post in enumerate(cols):
            v = allm[i][j]
            if not v:
                continue
            split = [m[ri[pre]][ci[post]] for ri, ci, m in parts]
            if sum(split) != v:
                fail("skid %d -> %d: all %d but aa+ad+da+dd = %d" % (pre, post, v, sum(split)))
            w.writerow([pre, post, v] + split)
            n += 1
    if out is not sys.stdout:
        out.close()
    sys.stderr.write("derive_edges.py: %d neurons, %d edges\n" % (len(rows), n))


if __name__ == "__main__":
    main(sys.argv)
