# Re-import both shipped data sets and require byte-identical connectome
# directories to the committed ones in data/connectomes/, and the expected
# counts in the summary line. A difference means the importer, the sign
# policy, the writer or the raw data changed: regenerate data/connectomes/
# deliberately (see data/README.md) rather than letting it drift.
# Also checks that bad invocations fail with one-line messages.
set -euo pipefail

: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
: "${BL_SOURCE_DIR:?BL_SOURCE_DIR must name the repository root}"

work=$(mktemp -d "${TMPDIR:-/tmp}/bl_import_repro.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

check_set() {
    local set=$1 data=$2 shipped=$3 want=$4
    local out="$work/$set" summary
    summary=$("$BL_CLI" import "$set" --data "$BL_SOURCE_DIR/data/$data" --out "$out") ||
        fail "import $set exited $?"
    echo "$summary"
    [[ $summary == *"$want"* ]] || fail "import $set: summary lacks '$want': $summary"
    local ref="$BL_SOURCE_DIR/data/connectomes/$shipped"
    [[ -d $ref ]] || fail "missing committed connectome $ref"
    # Same file list both ways, then the same bytes.
    diff <(cd "$ref" && ls -A | sort) <(cd "$out" && ls -A | sort) ||
        fail "$set: file lists differ from $ref"
    local f
    for f in "$ref"/*; do
        cmp "$f" "$out/$(basename "$f")" || fail "$set: $(basename "$f") differs from $ref"
    done
    # The committed copy must also load and validate (hashes, CSR, table).
    "$BL_CLI" inspect "$ref" >/dev/null || fail "inspect $ref failed"
}

check_set larva drosophila-larva-winding2023 larva-winding2023 \
    "2952 neurons, 110677 edges, 352611 synapses"
check_set celegans celegans-varshney2011 celegans-varshney2011 \
    "279 neurons, 2194 edges, 6394 synapses"

# The default --data is data/<set> relative to the current directory.
(cd "$BL_SOURCE_DIR" && "$BL_CLI" import larva --out "$work/default-larva" >/dev/null) ||
    fail "import larva with the default --data failed"
cmp "$work/default-larva/manifest.json" "$BL_SOURCE_DIR/data/connectomes/larva-winding2023/manifest.json" ||
    fail "default --data gives a different manifest"

# ORN selection: cell_type sensory + modality olfactory = 21 per side.
orns=$(awk -F, 'NR > 1 && $3 == "sensory" && $7 == "olfactory"' \
    "$BL_SOURCE_DIR/data/connectomes/larva-winding2023/neurons.csv" | wc -l)
[[ $orns -eq 42 ]] || fail "expected 42 olfactory receptor neurons, found $orns"

# Sign-policy override: all LNs excitatory leaves no inhibitory neuron.
printf 'key,sign\nLN,+1\n' >"$work/ln.csv"
summary=$("$BL_CLI" import larva --data "$BL_SOURCE_DIR/data/drosophila-larva-winding2023" \
    --out "$work/ln" --sign-policy "$work/ln.csv")
[[ $summary == *"neurons +1 2952, -1 0"* ]] || fail "override not applied: $summary"
grep -q '"celltype: kc=+1;ln=+1;pn=+1;sensory=+1;unknown=+1;default=+1"' "$work/ln/manifest.json" ||
    fail "override not recorded in the manifest"

# Failures: exit status and exactly one line on stderr naming the fault.
expect_fail() {
    local want_rc=$1 needle=$2
    shift 2
    local rc=0
    "$BL_CLI" "$@" >"$work/stdout" 2>"$work/stderr" || rc=$?
    [[ $rc -eq $want_rc ]] || fail "'$*' exited $rc, expected $want_rc"
    [[ $(wc -l <"$work/stderr") -eq 1 ]] || fail "'$*': stderr is not one line: $(cat "$work/stderr")"
    grep -qF -- "$needle" "$work/stderr" || fail "'$*': stderr lacks '$needle': $(cat "$work/stderr")"
}
expect_fail 2 "no data set given" import
expect_fail 2 "unknown importer 'fly'" import fly --out "$work/x"
expect_fail 2 "--out is required" import larva
expect_fail 1 "refusing to overwrite" import larva --data "$BL_SOURCE_DIR/data/drosophila-larva-winding2023" \
    --out "$work/larva"
expect_fail 1 "$work/nope/varshney_chemical_edges.csv" import celegans --data "$work/nope" --out "$work/y"
printf 'key,sign\nGABA,maybe\n' >"$work/bad.csv"
expect_fail 1 "bad.csv:2, column sign" import celegans \
    --data "$BL_SOURCE_DIR/data/celegans-varshney2011" --out "$work/z" --sign-policy "$work/bad.csv"
printf 'key,sign\ndefault,error\n' >"$work/strict.csv"
"$BL_CLI" import larva --data "$BL_SOURCE_DIR/data/drosophila-larva-winding2023" --out "$work/s" \
    --sign-policy "$work/strict.csv" >/dev/null 2>"$work/stderr" && fail "strict larva policy accepted"
grep -q "annotations.csv:[0-9]*, column celltype: '.*' is not mapped" "$work/stderr" ||
    fail "strict policy message: $(cat "$work/stderr")"

echo "import reproducible: OK"
