# The importer table through the CLI: --list names every importer, KIND --help
# its options, and options are checked against the importer's row (exit 2,
# one line) before anything is read.
set -euo pipefail
: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
work=$(mktemp -d "${TMPDIR:-/tmp}/bl_import_cli.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

list=$("$BL_CLI" import --list)
for k in larva celegans flywire flywire-codex malecns neuprint phase4c edges; do
    grep -q "^  $k " <<<"$list" || fail "import --list lacks $k: $list"
done
"$BL_CLI" import flywire --help | grep -q -- "--connectivity FILE" || fail "flywire --help lacks --connectivity"

expect() {
    local rc_want=$1 needle=$2
    shift 2
    local rc=0
    "$BL_CLI" import "$@" >"$work/out" 2>"$work/err" || rc=$?
    [[ $rc -eq $rc_want ]] || fail "import $*: exit $rc, expected $rc_want ($(cat "$work/err"))"
    [[ $(wc -l <"$work/err") -eq 1 ]] || fail "import $*: stderr is not one line: $(cat "$work/err")"
    grep -qF -- "$needle" "$work/err" || fail "import $*: stderr lacks '$needle': $(cat "$work/err")"
}
expect 2 "flywire needs --neurons" flywire --connectivity c.parquet --out "$work/o"
expect 2 "unknown option for this importer: --bogus" flywire --bogus 1 --out "$work/o"
expect 2 "option given twice: --neurons" flywire --neurons a --neurons b --out "$work/o"
expect 2 "option needs a value: --out" edges --out
expect 2 "unknown importer 'hemibrain'" hemibrain --out "$work/o"
expect 1 "give either --sign COL or --nt COL" edges --edges e.csv --pre a --post b --weight w --out "$work/o"
expect 1 "nope.csv: cannot open" edges --edges "$work/nope.csv" --pre a --post b --weight w --sign s --out "$work/o"
printf 'a,b,w,s\n1,2,3,+1\n' >"$work/e.csv"
expect 1 "e.csv: no column 'c' (the file has: a, b, w, s)" edges --edges "$work/e.csv" --pre c --post b --weight w \
    --sign s --out "$work/o"
printf 'a,b,w,s\n1,2,3,+1\n1,3,2,-1\n' >"$work/s.csv"
expect 1 "s.csv: column s, row 2: neuron 1 has sign -1 here but +1 at row 1" edges --edges "$work/s.csv" --pre a \
    --post b --weight w --sign s --out "$work/o"
printf 'a,b,w,s\n1,2,-3,+1\n' >"$work/n.csv"
expect 1 "n.csv: column w, row 1: synapse count -3 is outside" edges --edges "$work/n.csv" --pre a --post b \
    --weight w --sign s --out "$work/o"
echo "import cli: OK"
