#!/usr/bin/env bash
# GNU command-line conventions, the same for every command (tools/brainlesslab/cli_args.c):
# --opt=value equals --opt value; -- ends the options; a mistyped command or
# option is a usage error (exit 2) that names the nearest known one.
set -u
: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bl_cli_conv.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# expect STATUS PATTERN -- command...: exit status and a line of stderr matching PATTERN.
expect() {
    local want=$1 pattern=$2
    shift 3
    "$@" >"$work/out" 2>"$work/err"
    local rc=$?
    [ "$rc" -eq "$want" ] || fail "$* exited $rc, not $want: $(head -c 300 "$work/err")"
    [ -z "$pattern" ] || grep -qE -- "$pattern" "$work/err" || fail "$*: stderr lacks /$pattern/: $(head -c 300 "$work/err")"
}

"$BL_CLI" synth --out "$work/conn" --neurons 200 --mean-degree 5 >/dev/null || { echo "FAIL: synth"; exit 1; }
# --opt=value and --opt value give the same connectome, byte for byte.
"$BL_CLI" synth --out="$work/conn2" --neurons=200 --mean-degree=5 >/dev/null || fail "synth with --opt=value"
cmp -s "$work/conn/manifest.json" "$work/conn2/manifest.json" || fail "--opt=value built another connectome"

cat >"$work/plan.toml" <<PLAN
format = "brainlesslab-plan"
format_version = 4
id = "conv"
operation = "connectome"
[connectome]
path = "conn"
[model]
preset = "shiu2024"
[[stimulus]]
name = "s"
neurons = [0, 1]
rate_hz = 100
[run]
duration_ms = 20
seed = 1
PLAN
h1=$("$BL_CLI" check "$work/plan.toml" | grep -m1 -oE '[0-9a-f]{64}')
# -- ends the options: an operand that starts with '-' is a path.
cp "$work/plan.toml" "$work/-plan.toml"
h2=$(cd "$work" && "$BL_CLI" check -- -plan.toml | grep -m1 -oE '[0-9a-f]{64}')
[ -n "$h1" ] && [ "$h1" = "$h2" ] || fail "check -- -plan.toml hashed '$h2', not '$h1'"
expect 2 "unknown option '--ful' \(did you mean --full\?\)" -- "$BL_CLI" check --ful "$work/plan.toml"
expect 2 "did you mean --mean-degree" -- "$BL_CLI" synth --mean-degre 5 --out "$work/x"
expect 2 "did you mean --repetitions" -- "$BL_CLI" bench --repetition 3
expect 2 "did you mean --root" -- "$BL_CLI" compare a b --rot x
expect 2 "did you mean --key" -- "$BL_CLI" verify --kye k rec
expect 2 "unknown command 'chekc' \(did you mean 'check'\?\)" -- "$BL_CLI" chekc "$work/plan.toml"
expect 2 "unknown command 'frobnicate'" -- "$BL_CLI" frobnicate
# an option nothing is near gets no guess, but still exit 2
expect 2 "unknown option '--zzzzzzzz'" -- "$BL_CLI" check --zzzzzzzz "$work/plan.toml"

# A backend this build does not have is a usage error, and nothing is reserved.
expect 2 "--backend 'gpu' is not a backend of this build \(known: auto, reference, cpu" -- \
    "$BL_CLI" run "$work/plan.toml" --root "$work/rec-bad" --backend gpu
[ ! -e "$work/rec-bad" ] || fail "run --backend gpu reserved a record"
expect 2 "did you mean --backend" -- "$BL_CLI" run "$work/plan.toml" --root "$work/rec-bad" --bakend cpu
# run --help names today's artifacts.
"$BL_CLI" run --help | grep -q "spikes/trial-NNNN.h5" || fail "run --help does not name spikes/trial-NNNN.h5"
# A PSTH too large for this machine (10,000 trials x 1e6 bins) is refused by check and by run
# before a record is reserved.
cat >"$work/psth.toml" <<PLAN
format = "brainlesslab-plan"
format_version = 4
id = "psth"
operation = "connectome"
[connectome]
path = "conn"
[model]
preset = "shiu2024"
[[population]]
name = "s"
neurons = [0, 1]
[[stimulus]]
name = "s"
population = "s"
rate_hz = 100
[run]
duration_ms = 100000
trials = 10000
seed = 1
[outputs]
psth = { populations = ["s"], bin_ms = 0.1 }
PLAN
expect 1 "needs more memory than this machine has" -- "$BL_CLI" check "$work/psth.toml"
expect 1 "needs more memory than this machine has" -- "$BL_CLI" run "$work/psth.toml" --root "$work/rec-psth"
if [ -e "$work/rec-psth" ] && ls "$work/rec-psth" | grep -q .; then fail "run reserved a record for the huge PSTH"; fi

echo "$failures failed"
[ "$failures" -eq 0 ] && echo "ok   cli conventions"
exit $((failures > 0))
