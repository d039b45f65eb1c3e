# `brainlesslab fetch` against a local HTTP server (tests/cli/fetch_server.py,
# 127.0.0.1 only: CI has no internet) serving a generated FlyWire data set in
# Shiu et al.'s formats (tests/oracles/import_data.py), with a test table
# (BL_FETCH_MANIFEST) holding the generated files' sizes and checksums: 404,
# a redirect loop, a wrong checksum, a stalled server, a truncated transfer
# and its resumption, a server that ignores Range, one that sends too much,
# a redirect followed; then fetch -> import (with the annotation table, tab
# separated) -> run (a population selected by cell type and hemilineage) -> verify.
set -euo pipefail
: "${BL_CLI:?BL_CLI must name the brainlesslab binary}" "${BL_SOURCE_DIR:?}"
# The Parquet file is written by the npm oracle (tests/js), as the importer tests do.
[ -d "$BL_SOURCE_DIR/tests/js/node_modules" ] || { echo "skip: tests/js/node_modules missing (cd tests/js && npm ci)"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/bl_fetch.XXXXXX")
server=
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$work/server.log" ] && tail -20 "$work/server.log" >&2; exit 1; }
unset BL_FETCH_MIRROR BL_FETCH_MANIFEST

# The data set and its test table.
mkdir -p "$work/www"
PYTHONPATH="$BL_SOURCE_DIR/tests/oracles" /usr/bin/python3 - "$work" <<'EOF'
import hashlib, json, shutil, sys
from pathlib import Path
import numpy as np
import import_data
work = Path(sys.argv[1])
d = import_data.make_flywire(work / "gen", np.random.default_rng(25), n=300, m=3000)
www = work / "www"
for k in ("neurons", "connectivity"):
    shutil.copy(d["files"][k], www / Path(d["files"][k]).name)
comp = (www / "Completeness_783.csv").read_bytes()
conn = (www / "Connectivity_783.parquet").read_bytes()
blob = hashlib.sha1(b"blob %d\0" % len(conn) + conn).hexdigest()
# Schlegel et al.'s annotation table in its own layout (tab-separated), from the generated classification.
rows = ["\t".join(["root_id", "super_class", "cell_class", "cell_type", "ito_lee_hemilineage", "side"])]
for r in d["annot_rows"]:
    rows.append("\t".join(str(x) for x in [r[0], r[2], r[3], r[5], "LB%d" % (int(r[0]) % 4), r[8]]))
(www / "Supplemental_file1_neuron_annotations.tsv").write_text("\n".join(rows) + "\n")
annot = (www / "Supplemental_file1_neuron_annotations.tsv").read_bytes()
def table(comp_sha, extra=()):
    files = [
        {"name": "Completeness_783.csv", "url": "http://unused.invalid/x", "size": len(comp), "sha256": comp_sha},
        # As the real table has it: a Git blob id, and only a bound on the size.
        {"name": "Connectivity_783.parquet", "url": "http://unused.invalid/x", "max_size": 4 * len(conn),
         "git_blob_sha1": blob},
        {"name": "Supplemental_file1_neuron_annotations.tsv", "url": "http://unused.invalid/x", "size": len(annot),
         "md5": hashlib.md5(annot).hexdigest()},
    ]
    return {"sets": [{"name": "flywire", "importer": "flywire", "summary": "generated FlyWire-format data",
                      "licence": "test data, no licence", "files": files,
                      "import": [["--neurons", "Completeness_783.csv"], ["--connectivity", "Connectivity_783.parquet"],
                                 ["--annotations", "Supplemental_file1_neuron_annotations.tsv"]]},
                     *extra]}
good = hashlib.sha256(comp).hexdigest()
unverified = {"name": "plain", "importer": "flywire", "licence": "test", "files": [
    {"name": "Completeness_783.csv", "url": "http://unused.invalid/x", "size": len(comp)}]}
(work / "good.json").write_text(json.dumps(table(good, [unverified])))
bad = ("0" if good[0] != "0" else "1") + good[1:]
(work / "bad.json").write_text(json.dumps(table(bad)))
(work / "sizes").write_text(f"{len(comp)} {len(conn)}\n")
EOF
read -r comp_size conn_size <"$work/sizes"

/usr/bin/python3 "$BL_SOURCE_DIR/tests/cli/fetch_server.py" "$work/www" "$work/port" --max-seconds 600 \
    >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || fail "the test server did not start"
base=http://127.0.0.1:$(cat "$work/port")

fetch() { # fetch EXPECTED_RC OUTDIR ARGS...: runs with the good table
    local want=$1 out=$2 rc=0
    shift 2
    BL_FETCH_MANIFEST=${MANIFEST:-$work/good.json} "$BL_CLI" fetch "$@" --out "$out" --stall-timeout 2 \
        >"$work/out" 2>"$work/err" </dev/null || rc=$?
    [ "$rc" -eq "$want" ] || fail "fetch $* --out $out: exit $rc, expected $want: $(cat "$work/out" "$work/err")"
}
has() { grep -qF -- "$2" "$work/$1" || fail "$1 lacks '$2': $(cat "$work/out" "$work/err")"; }

# Usage errors (2) and what the built-in table says.
rc=0; "$BL_CLI" fetch nosuch --out "$work/x" 2>"$work/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "unknown data set 'nosuch' (known: flywire malecns" "$work/err" || fail "unknown set: $rc $(cat "$work/err")"
"$BL_CLI" fetch --list | grep -q "Connectivity_783.parquet .*git-blob-sha1" || fail "fetch --list"
rc=0; "$BL_CLI" fetch flywire-codex --out "$work/x" >"$work/out" 2>"$work/err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "need a FlyWire login" "$work/err" || fail "codex: $rc $(cat "$work/err")"
rc=0; "$BL_CLI" fetch flywire --mirror 2>/dev/null || rc=$?
[ "$rc" -eq 2 ] || fail "--mirror without a value: exit $rc"
rc=0; "$BL_CLI" fetch flywire --out a --out b 2>"$work/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "option given twice: --out" "$work/err" || fail "--out twice: $rc $(cat "$work/err")"
rc=0; "$BL_CLI" fetch flywire --stall-timeout 0 2>"$work/err" || rc=$?
[ "$rc" -eq 2 ] || fail "--stall-timeout 0: exit $rc"

# 404: nothing is left behind.
fetch 1 "$work/a" flywire --mirror "$base/nope"
has err "HTTP 404"
has out "licence: test data, no licence"
[ -z "$(ls "$work/a")" ] || fail "404 left files: $(ls "$work/a")"

# A redirect loop ends at the limit.
fetch 1 "$work/a" flywire --mirror "$base/loop" --max-redirects 3
has err "more than 3 redirects"

# A wrong checksum: reported, the download removed.
MANIFEST=$work/bad.json fetch 1 "$work/b" flywire --mirror "$base/ok"
has err "Completeness_783.csv: checksum mismatch: sha256"
[ ! -e "$work/b/Completeness_783.csv" ] && [ ! -e "$work/b/Completeness_783.csv.part" ] || fail "bad checksum left a file"

# More bytes than the table allows: stopped at the bound, nothing kept.
fetch 1 "$work/c" flywire --mirror "$base/long"
has err "the server sends more than the $comp_size bytes the table allows"
[ -z "$(ls "$work/c")" ] || fail "an over-long transfer left files: $(ls "$work/c")"

# A stalled server: given up after the stall timeout, the partial file kept...
start=$(date +%s)
fetch 1 "$work/d" flywire --mirror "$base/slow"
has err "stalled or timed out after 64 bytes"
[ $(( $(date +%s) - start )) -lt 15 ] || fail "the stall timeout did not end the transfer in time"
[ "$(stat -c %s "$work/d/Completeness_783.csv.part")" -eq 64 ] || fail "stall: the partial file is not 64 bytes"
# ... and continued from byte 64 (Range), then verified; the same through BL_FETCH_MIRROR.
BL_FETCH_MIRROR=$base/ok fetch 0 "$work/d" flywire --no-import
grep -A1 "^Completeness_783.csv" "$work/out" | grep -q "resumed at byte 64, verified (sha256): $comp_size bytes" ||
    fail "resume after a stall: $(cat "$work/out")"
grep -q "GET /ok/Completeness_783.csv bytes=64-" "$work/server.log" || fail "no Range request in the server log"
[ ! -e "$work/d/connectome" ] || fail "--no-import imported"

# A truncated transfer: an error naming where it stopped; the rerun resumes.
fetch 1 "$work/e" flywire --mirror "$base/cut" --no-import
has err "run again to resume"
half=$(stat -c %s "$work/e/Completeness_783.csv.part")
[ "$half" -gt 0 ] && [ "$half" -lt "$comp_size" ] || fail "truncated: partial file has $half bytes"
# (The server cuts each file's first request: the rerun resumes the CSV, then the Parquet file breaks.)
fetch 1 "$work/e" flywire --mirror "$base/cut" --no-import
grep -A1 "^Completeness_783.csv" "$work/out" | grep -q "resumed at byte $half, verified (sha256)" || fail "resume: $(cat "$work/out")"
half=$(stat -c %s "$work/e/Connectivity_783.parquet.part")
# The Git blob id covers the whole file: the resumed bytes are hashed from disk first.
fetch 1 "$work/e" flywire --mirror "$base/cut" --no-import
has out "already there, verified (sha256)"
grep -A1 "^Connectivity_783.parquet" "$work/out" | grep -q "resumed at byte $half, verified (git-blob-sha1): $conn_size bytes" ||
    fail "parquet: $(cat "$work/out")"
half=$(stat -c %s "$work/e/Supplemental_file1_neuron_annotations.tsv.part")
fetch 0 "$work/e" flywire --mirror "$base/cut" --no-import
grep -A1 "^Supplemental_file1_neuron_annotations.tsv" "$work/out" | grep -q "resumed at byte $half, verified (md5)" ||
    fail "annotations: $(cat "$work/out")"

# A server that ignores Range: the partial file is started afresh, still verified.
head -c 100 "$work/www/Completeness_783.csv" >"$work/f.part"
mkdir -p "$work/f" && mv "$work/f.part" "$work/f/Completeness_783.csv.part"
fetch 0 "$work/f" flywire --mirror "$base/norange" --no-import
grep -A1 "^Completeness_783.csv" "$work/out" | grep -q "downloaded, verified (sha256): $comp_size bytes" || fail "norange: $(cat "$work/out")"

# A server answering a Range request with other bytes: refused, the partial file not trusted.
head -c 100 "$work/www/Completeness_783.csv" >"$work/f/Completeness_783.csv.part"
rm -f "$work/f/Completeness_783.csv"
fetch 1 "$work/f" flywire --mirror "$base/offby" --no-import
has err "asked for the bytes from 100, the server answered with another range"
[ ! -e "$work/f/Completeness_783.csv.part" ] || fail "the partial file of a wrong range was kept"

# A file without a published checksum: refused unless allowed, then its SHA-256 printed.
fetch 1 "$work/g" plain --mirror "$base/ok"
has err "no checksum is published for this file"
fetch 0 "$work/g" plain --mirror "$base/ok" --no-import --allow-unverified
has out "UNVERIFIED"
has out "sha256 $(sha256sum "$work/www/Completeness_783.csv" | cut -c1-64)"

# End to end, through a redirect: fetch -> import -> run -> verify.
fetch 0 "$work/h" flywire --mirror "$base/redirect"
has out "imported flywire"
[ -f "$work/h/connectome/manifest.json" ] || fail "no connectome written"
grep -q "GET /redirect/Connectivity_783.parquet" "$work/server.log" || fail "the redirect was not taken"
# Again: the verified files are kept and the connectome is not rewritten.
fetch 0 "$work/h" flywire --mirror "$base/nope"
has out "already there, verified (sha256)"
has out "already imported"
# A file changed on disk is not taken for the published one.
printf x >>"$work/h/Completeness_783.csv"
fetch 1 "$work/h" flywire --mirror "$base/ok" --no-import
has err "already there but it is not the published file"

cat >"$work/plan.toml" <<EOF
format = "brainlesslab-plan"
format_version = 4
id = "fetched-flywire"
operation = "connectome"
[connectome]
path = "$work/h/connectome"
[model]
preset = "shiu2024"
[[population]]
name = "type1x"
select = { cell_type = "type1?", ito_lee_hemilineage = ["LB0", "LB1"] }
[[stimulus]]
name = "type1x"
population = "type1x"
rate_hz = 150.0
[run]
trials = 2
duration_ms = 100.0
seed = 7
backend = "reference"
[outputs]
spikes = true
counts = true
EOF
head -1 "$work/h/connectome/neurons.csv" | grep -q "cell_type" || fail "no cell_type column: $(head -1 "$work/h/connectome/neurons.csv")"
"$BL_CLI" run "$work/plan.toml" --root "$work/records" --quiet >"$work/run.out" 2>"$work/run.err" ||
    fail "run on the fetched connectome: $(cat "$work/run.err")"
"$BL_CLI" verify "$(tail -1 "$work/run.out")" >/dev/null || fail "verify the record"

# The cache directory: $XDG_CACHE_HOME/brainlesslab/NAME without --out.
XDG_CACHE_HOME=$work/xdg BL_FETCH_MANIFEST=$work/good.json "$BL_CLI" fetch flywire --mirror "$base/ok" --no-import \
    >"$work/out" 2>"$work/err" || fail "XDG fetch: $(cat "$work/err")"
[ -f "$work/xdg/brainlesslab/flywire/Connectivity_783.parquet" ] || fail "not in the XDG cache: $(cat "$work/out")"
echo "fetch: OK"
