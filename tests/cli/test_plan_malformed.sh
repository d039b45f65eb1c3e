#!/usr/bin/env bash
# brainlesslab check on a valid plan and on many malformed ones.
#
# The valid base plan must pass and hash the same way every time (and from
# any working directory). Each malformed plan must fail with exit status 1
# and exactly one line on stderr that names the plan file and the key at
# fault (and, where given, the value), with no sanitizer report.
set -u

: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
work=$(mktemp -d "${TMPDIR:-/tmp}/bl_plan_malformed.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
checked=0

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

if ! "$BL_CLI" check --help >/dev/null 2>&1; then
    echo "FAIL: '$BL_CLI check' is not available (is bl_cmd_check in main.c's command table?)" >&2
    exit 1
fi

if ! "$BL_CLI" synth --out "$work/conn" --neurons 200 --mean-degree 5 >/dev/null 2>"$work/synth.err"; then
    cat "$work/synth.err" >&2
    echo "FAIL: synth could not write the test connectome" >&2
    exit 1
fi

base() {
    cat <<'EOF'
format = "brainlesslab-plan"
format_version = 4
id = "cli-base"
operation = "connectome"
description = "base plan of test_plan_malformed.sh"

[connectome]
path = "conn"

[model]
preset = "shiu2024"

[model.parameters]
w_syn_mv = 0.3

[[stimulus]]
name = "first"
neurons = [5, 1, 3]
rate_hz = 150
start_ms = 10
stop_ms = 50

[[stimulus]]
name = "byid"
ids = ["7", 9]
rate_hz = 100

[[stimulus]]
name = "sensory"
select = { cell_type = "sensory" }
rate_hz = 200

[[silence]]
name = "quiet"
neurons = [100, 101]

[run]
trials = 2
duration_ms = 100
seed = 12345

[outputs]
top_responders = 5
EOF
}

no_sanitizer_report() {
    if grep -qE 'Sanitizer|runtime error:' "$1"; then
        fail "$2: sanitizer report:"
        head -20 "$1" >&2
        return 1
    fi
    return 0
}

# ---- the valid base plan ----
base >"$work/base.toml"
hash_of() {
    "$BL_CLI" check "$@" >"$work/ok.out" 2>"$work/ok.err"
    local rc=$?
    no_sanitizer_report "$work/ok.err" "check $*" || true
    if [ $rc -ne 0 ]; then
        fail "check $* exited $rc: $(cat "$work/ok.err")"
        echo none
        return
    fi
    sed -n 's/^plan hash: \([0-9a-f]\{64\}\)$/\1/p' "$work/ok.out"
}
h1=$(hash_of "$work/base.toml")
h2=$(hash_of "$work/base.toml")
h3=$(cd / && hash_of "$work/base.toml")
h4=$(hash_of --full "$work/base.toml")
if [ -z "$h1" ] || [ "$h1" = none ]; then
    fail "the valid base plan printed no plan hash"
elif [ "$h1" != "$h2" ] || [ "$h1" != "$h3" ] || [ "$h1" != "$h4" ]; then
    fail "plan hash is not stable: $h1 $h2 $h3 $h4"
fi
# The same plan with keys reordered and comments added hashes the same.
{
    echo "# reordered"
    base | sed -e '/^seed = /d' -e 's/^\[run\]/[run]\nseed = 12345/'
} >"$work/reordered.toml"
h5=$(hash_of "$work/reordered.toml")
[ "$h5" = "$h1" ] || fail "reordered plan hashes differently: $h5 vs $h1"
# A different seed is a different plan.
base | sed 's/^seed = 12345/seed = 12346/' >"$work/seed.toml"
h6=$(hash_of "$work/seed.toml")
[ "$h6" != "$h1" ] || fail "a different seed gave the same hash"
# The printed plan names the resolved populations.
"$BL_CLI" check "$work/base.toml" >"$work/ok.out" 2>&1
grep -q '"count":' "$work/ok.out" || fail "check output lacks population counts"
grep -q "\"path\":.*$work/conn" "$work/ok.out" || fail "check output lacks the absolute connectome path"

# ---- malformed plans ----
# bad NAME KEY VALUE SED-SCRIPT: base plan edited by SED-SCRIPT must fail naming
# NAME.toml and KEY (a fixed string; LINECOL means "file:line:col:") and VALUE
# (a fixed string, or "" for none).
bad() {
    local name=$1 key=$2 value=$3 script=$4
    local plan="$work/$name.toml"
    base | sed -e "$script" >"$plan"
    expect_failure "$name" "$plan" "$name.toml" "$key" "$value"
}

expect_failure() {
    local name=$1 plan=$2 file=$3 key=$4 value=$5
    checked=$((checked + 1))
    "$BL_CLI" check "$plan" >"$work/out" 2>"$work/err"
    local rc=$?
    no_sanitizer_report "$work/err" "$name" || return
    if [ $rc -ne 1 ]; then
        fail "$name: exit status $rc (want 1): $(head -3 "$work/err")"
        return
    fi
    local lines
    lines=$(wc -l <"$work/err")
    if [ "$lines" -ne 1 ]; then
        fail "$name: $lines lines on stderr (want 1):"
        cat "$work/err" >&2
        return
    fi
    grep -qF "$file" "$work/err" || fail "$name: message does not name $file: $(cat "$work/err")"
    if [ "$key" = LINECOL ]; then
        grep -qE "$file:[0-9]+:[0-9]+:" "$work/err" || fail "$name: no line:col: $(cat "$work/err")"
    elif [ -n "$key" ]; then
        grep -qF -- "$key" "$work/err" || fail "$name: message does not name '$key': $(cat "$work/err")"
    fi
    if [ -n "$value" ]; then
        grep -qF -- "$value" "$work/err" || fail "$name: message does not show '$value': $(cat "$work/err")"
    fi
    [ -s "$work/out" ] && fail "$name: printed on stdout although it failed"
}

bad unknown-top-key        'colour'                  '"blue"'        '/^id = /a colour = "blue"'
bad unknown-nested-key     'run.speed'               '3'             '/^seed = /a speed = 3'
bad unknown-table          'run.extra'               ''              '$a [run.extra]\nx = 1'
bad wrong-type-trials      'run.trials'              '"two"'         's/^trials = 2/trials = "two"/'
bad wrong-type-outputs     'outputs.spikes'          '"yes"'         '/^top_responders/a spikes = "yes"'
bad rate-too-high          'stimulus[0].rate_hz'     '20000'         's/^rate_hz = 150/rate_hz = 20000/'
bad rate-negative          'stimulus[1].rate_hz'     '-5'            's/^rate_hz = 100$/rate_hz = -5/'
bad rate-missing           'stimulus[2].rate_hz'     ''              '/^rate_hz = 200/d'
bad trials-negative        'run.trials'              '-3'            's/^trials = 2/trials = -3/'
bad trials-too-many        'run.trials'              '100001'        's/^trials = 2/trials = 100001/'
bad duration-zero          'run.duration_ms'         '0'             's/^duration_ms = 100/duration_ms = 0/'
bad duration-missing       'run.duration_ms'         ''              '/^duration_ms = /d'
bad duration-not-steps     'run.duration_ms'         '100.05'        's/^duration_ms = 100/duration_ms = 100.05/'
bad missing-id             ' id: '                   ''              '/^id = /d'
bad bad-id                 ' id: '                   'a/b'           's/^id = .*/id = "a\/b"/'
bad missing-connectome     'connectome'              ''              '/^\[connectome\]/d; /^path = /d'
bad connectome-path-gone   'connectome.path'         'no-such-dir'   's/^path = .*/path = "no-such-dir"/'
bad connectome-not-a-dir   'connectome.path'         'conn/neurons.csv' 's/^path = .*/path = "conn\/neurons.csv"/'
bad connectome-path-type   'connectome.path'         '42'            's/^path = .*/path = 42/'
bad bad-format             ' format: '               'brainlesslab-record' 's/^format = .*/format = "brainlesslab-record"/'
bad bad-version            'format_version'          '5'             's/^format_version = 4/format_version = 5/'
bad reservoir-operation    'connectome'              'unknown key'   's/^operation = .*/operation = "sweep"/'
bad unknown-operation      'operation'               'dance'         's/^operation = .*/operation = "dance"/'
bad unknown-preset         'model.preset'            'brian'         's/^preset = .*/preset = "brian"/'
bad unknown-parameter      'model.parameters.tau_x'  '0.3'           's/^w_syn_mv = 0.3/tau_x = 0.3/'
bad parameter-not-steps    'model.parameters'        'delay_ms'      's/^w_syn_mv = 0.3/delay_ms = 1.85/'
bad unknown-column         'stimulus[2].select.celltype' 'cell_type'  's/cell_type = "sensory"/celltype = "sensory"/'
bad empty-selection        'stimulus[2].select'      'empty'         's/cell_type = "sensory"/cell_type = "no-such-type"/'
bad empty-neuron-list      'stimulus[0].neurons'     'empty'         's/^neurons = \[5, 1, 3\]/neurons = []/'
bad unknown-external-id    'stimulus[1].ids[0]'      '999999'        's/^ids = .*/ids = ["999999"]/'
bad index-out-of-range     'stimulus[0].neurons[1]'  '200'           's/^neurons = \[5, 1, 3\]/neurons = [1, 200]/'
bad index-negative         'stimulus[0].neurons[0]'  '-1'            's/^neurons = \[5, 1, 3\]/neurons = [-1]/'
bad index-repeated         'stimulus[0].neurons'     '5'             's/^neurons = \[5, 1, 3\]/neurons = [5, 1, 5]/'
bad two-selectors          'stimulus[0].ids'         'neurons'       '/^neurons = \[5, 1, 3\]/a ids = ["1"]'
bad no-selector            'silence[0]'              'selector'      '/^neurons = \[100, 101\]/d'
bad duplicate-names        'stimulus[1].name'        'first'         's/^name = "byid"/name = "first"/'
bad name-across-kinds      'silence[0].name'         'sensory'       's/^name = "quiet"/name = "sensory"/'
bad window-after-end       'stimulus[0].stop_ms'     '5000'          's/^stop_ms = 50/stop_ms = 5000/'
bad window-start-negative  'stimulus[0].start_ms'    '-1'            's/^start_ms = 10/start_ms = -1/'
bad window-reversed        'stimulus[0].stop_ms'     '5'             's/^stop_ms = 50/stop_ms = 5/'
bad silence-with-rate      'silence[0].rate_hz'      ''              '/^neurons = \[100, 101\]/a rate_hz = 5'
bad invalid-toml           LINECOL                   ''              's/^\[run\]/[run/'
bad invalid-toml-value     LINECOL                   ''              's/^seed = 12345/seed = = 1/'
bad redefined-key          LINECOL                   ''              '/^seed = /a seed = 2'
bad seed-negative          'run.seed'                '-1'            's/^seed = 12345/seed = -1/'
bad seed-float             'run.seed'                '1.5'           's/^seed = 12345/seed = 1.5/'
bad seed-missing           'run.seed'                ''              '/^seed = /d'
bad top-responders-big     'outputs.top_responders'  '10001'         's/^top_responders = 5/top_responders = 10001/'
bad threads-negative       'run.threads'             '-1'            '/^seed = /a threads = -1'
bad backend-odd            'run.backend'             'a b'           '/^seed = /a backend = "a b"'
bad run-missing            'run'                     ''              '/^\[run\]/,/^seed = /d'
bad stimulus-not-array     'stimulus'                '7'             '/^\[\[stimulus\]\]/,/^rate_hz = 200/d; /^id = /a stimulus = 7'
bad key-with-newline       'run.a\nb'                ''              '/^seed = /a "a\\nb" = 1'
bad date-value             'run.when'                '1979-05-27'    '/^seed = /a when = 1979-05-27'
bad nan-rate               'stimulus[0].rate_hz'     'nan'           's/^rate_hz = 150/rate_hz = nan/'
bad deep-dotted-key        LINECOL                   ''              "/^seed = /a $(printf 'a.%.0s' $(seq 1 300))a = 1"

# A plan file that does not exist, an empty one and a binary one.
expect_failure missing-file "$work/missing-file.toml" missing-file.toml '' 'cannot open'
: >"$work/empty.toml"
expect_failure empty-file "$work/empty.toml" empty.toml 'format' 'missing'
printf 'format = "\377\376\000\001"\n\033[2J\n' >"$work/binary.toml"
expect_failure binary-file "$work/binary.toml" binary.toml LINECOL ''

if [ "$failures" -ne 0 ]; then
    echo "test_plan_malformed: $failures failure(s) in $checked malformed plans" >&2
    exit 1
fi
echo "test_plan_malformed: valid plan hash $h1 stable; $checked malformed plans refused with one line each"
