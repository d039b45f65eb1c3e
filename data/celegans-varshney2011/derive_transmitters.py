#!/usr/bin/python3
"""Derive openworm_connectome_transmitters.csv from OpenWorm's CElegansNeuronTables.xls.

Usage:
    /usr/bin/python3 derive_transmitters.py PATH/TO/CElegansNeuronTables.xls [OUT.csv]

The workbook is not shipped with BrainlessLab (the importer only reads CSV), so
this script records exactly how the shipped table was made and lets anyone
re-make it from the upstream file (github.com/openworm/c302, commit
9cccbab97fbaa5e682e128b0e819a5fb6c129618, path c302/data/CElegansNeuronTables.xls,
git blob ba565ffa7d99bd64b2f2240e19e100ca66fb3f1f). The input's SHA-256 is
checked first so that a different workbook cannot silently produce a
different table under the same name.

Needs xlrd (made and checked with xlrd 1.2.0, Debian's python3-xlrd; later
versions still read .xls).

Output: every row of sheet `Connectome`, in sheet order, unchanged except
that the float "Number of Connections" is written as an integer (the script
fails if any value is not a whole number >= 1) and names are stripped of
surrounding blanks (none have any in this workbook; stripping keeps the
output well-defined if they did). Columns:
    origin,target,type,synapses,neurotransmitter
`type` is Send (chemical, origin presynaptic) or GapJunction. Transmitter
names are kept as spelled in the source ("Octapamine" [sic]); the sign policy
maps them, not this script.
"""
import csv
import hashlib
import os
import sys

import xlrd

EXPECTED_SHA256 = "e6e2d51cd6a056c6058ec163bf6020d1a43a0a8d48719f09dddd8687c3956d74"
SHEET = "Connectome"
HEADER = ["Origin", "Target", "Type", "Number of Connections", "Neurotransmitter"]


def fail(message):
    sys.stderr.write("derive_transmitters.py: %s\n" % message)
    sys.exit(1)


def main(argv):
    if len(argv) not in (2, 3):
        fail("usage: derive_transmitters.py CElegansNeuronTables.xls [OUT.csv]")
    src = argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    out = argv[2] if len(argv) == 3 else os.path.join(here, "openworm_connectome_transmitters.csv")

    with open(src, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != EXPECTED_SHA256:
        fail("%s: sha256 %s, expected %s (not the c302 workbook this table documents)"
             % (src, digest, EXPECTED_SHA256))

    sheet = xlrd.open_workbook(src).sheet_by_name(SHEET)
    header = [str(v).strip() for v in sheet.row_values(0)]
    if header != HEADER:
        fail("%s: sheet %s: header %r, expected %r" % (src, SHEET, header, HEADER))

    rows = []
    for r in range(1, sheet.nrows):
        origin, target, kind, number, transmitter = sheet.row_values(r)
        where = "%s: sheet %s row %d" % (src, SHEET, r + 1)
        if not isinstance(number, float) or number != int(number) or number < 1:
            fail("%s: Number of Connections %r is not a whole number >= 1" % (where, number))
        fields = [str(origin).strip(), str(target).strip(), str(kind).strip()]
        if not all(fields) or kind not in ("Send", "GapJunction"):
            fail("%s: empty name or unknown type %r" % (where, kind))
        rows.append(fields + [str(int(number)), str(transmitter).strip()])

    # newline="" + lineterminator "\n": identical bytes on every platform.
    with open(out, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["origin", "target", "type", "synapses", "neurotransmitter"])
        w.writerows(rows)
    sys.stderr.write("derive_transmitters.py: wrote %d rows to %s\n" % (len(rows), out))


if __name__ == "__main__":
    main(sys.argv)
