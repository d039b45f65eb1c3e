#!/usr/bin/python3
"""Re-derive varshney_chemical_edges.csv from OpenWorm's NeuronConnectFormatted.xlsx.

Usage:
    /usr/bin/python3 derive_chemical_edges.py PATH/TO/NeuronConnectFormatted.xlsx [OUT.csv]

The shipped varshney_chemical_edges.csv was made upstream of this project;
this script (Python standard library only: an .xlsx is a zip of XML files)
re-derives it so anyone can check it, and reproduces it byte for byte.

Input: github.com/openworm/c302, commit 9cccbab97fbaa5e682e128b0e819a5fb6c129618,
path c302/data/NeuronConnectFormatted.xlsx, git blob
b64c7c14b722cd668cbf1820065eb91a79b07150 (OpenWorm's reformatting of
WormAtlas's NeuronConnect.xls, the Varshney et al. 2011 data set). Its SHA-256
is checked first.

Rule: the sheet has columns Neuron 1, Neuron 2, Type, Nbr. Type S ("send":
Neuron 1 is presynaptic to Neuron 2) and Sp ("send-poly": Neuron 1 presynaptic
at a polyadic synapse of which Neuron 2 is one partner) are the directed
chemical synapses; R/Rp are the same synapses seen from the other side, EJ
gap junctions, NMJ neuromuscular junctions, all skipped. Nbr of the S and Sp
rows is summed per ordered (Neuron 1, Neuron 2) pair; pairs summing to 0 (the
sheet has two Sp rows with Nbr 0) are dropped; rows are written sorted by
(pre, post):
    pre,post,synapses_S_plus_Sp
"""
import csv
import hashlib
import sys
import zipfile
import xml.etree.ElementTree as ET

EXPECTED_SHA256 = "33e073727baf85286ce8f278a1a418bff8779ed0dac1a3ea38174ed89ed16af7"
NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
HEADER = ["Neuron 1", "Neuron 2", "Type", "Nbr"]


def fail(message):
    sys.stderr.write("derive_chemical_edges.py: %s\n" % message)
    sys.exit(1)


def column_of(ref):
    letters = "".join(ch for ch in ref if ch.isalpha())
    n = 0
    for ch in letters:
        n = n * 26 + (ord(ch) - ord("A") + 1)
    return n - 1


def read_sheet(path):
    with zipfile.ZipFile(path) as zf:
        strings = []
        if "xl/sharedStrings.xml" in zf.namelist():
            root = ET.fromstring(zf.read("xl/sharedStrings.xml"))
            for si in root.findall("m:si", NS):
                strings.append("".join(t.text or "" for t in si.iter("{%s}t" % NS["m"])))
        root = ET.fromstring(zf.read("xl/worksheets/sheet1.xml"))
    rows = []
    for row in root.find("m:sheetData", NS).findall("m:row", NS):
        values = {}
        for cell in row.findall("m:c", NS):
            v = cell.find("m:v", NS)
            if v is None:
                continue
            text = strings[int(v.text)] if cell.get("t") == "s" else v.text
            values[column_of(cell.get("r"))] = text
        width = max(values) + 1 if values else 0
        rows.append((int(row.get("r")), [values.get(i, "") for i in range(width)]))
    return rows


def main(argv):
    if len(argv) not in (2, 3):
        fail("usage: derive_chemical_edges.py NeuronConnectFormatted.xlsx [OUT.csv]")
    with open(argv[1], "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != EXPECTED_SHA256:
        fail("%s: sha256 %s, expected %s" % (argv[1], digest, EXPECTED_SHA256))
    rows = read_sheet(argv[1])
    if not rows or rows[0][1] != HEADER:
        fail("header %r, expected %r" % (rows[0][1] if rows else None, HEADER))
    sums = {}
    for line, (pre, post, kind, nbr) in ((r, v[:4]) for r, v in rows[1:]):
        if kind not in ("S", "Sp", "R", "Rp", "EJ", "NMJ"):
            fail("row %d: unknown type %r" % (line, kind))
        n = float(nbr)
        if n != int(n) or n < 0:
            fail("row %d: Nbr %r is not a whole number >= 0" % (line, nbr))
        if kind in ("S", "Sp"):
            key = (pre.strip(), post.strip())
            sums[key] = sums.get(key, 0) + int(n)
    out = open(argv[2], "w", newline="") if len(argv) == 3 else sys.stdout
    # CRLF line ends: the csv module's default, which the shipped file has.
    w = csv.writer(out, lineterminator="\r\n")
    w.writerow(["pre", "post", "synapses_S_plus_Sp"])
    # Three rows have Nbr 0 (AVFL->VB1 Sp, FLPR->VB1 Sp and its Rp mirror):
    # a pair whose sum is 0 has no synapse and is not an edge.
    sums = {k: v for k, v in sums.items() if v > 0}
    for (pre, post) in sorted(sums):
        w.writerow([pre, post, sums[(pre, post)]])
    if out is not sys.stdout:
        out.close()
    sys.stderr.write("derive_chemical_edges.py: %d edges, %d synapses\n"
                     % (len(sums), sum(sums.values())))


if __name__ == "__main__":
    main(sys.argv)
