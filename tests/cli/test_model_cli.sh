# brainlesslab model: check prints the compiled model, run writes spikes and
# final state; usage errors exit 2 and bad models exit 1, each with one line
# on stderr naming what is at fault (the file, the equation, the term).
set -euo pipefail
: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
work=$(mktemp -d "${TMPDIR:-/tmp}/bl_model_cli.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$work/shiu.toml" <<'T'
[model]
method = "linear"
equations = """
dv/dt = (v_0 - v + g) / t_mbr : volt (unless refractory)
dg/dt = -g / tau : volt (unless refractory)
"""
threshold = "v > v_th"
reset = "v = v_rst; g = 0*mV"
refractory = "t_rfc"
on_input = "v += f_poi * w_syn"
[model.parameters]
v_0 = "-52 mV"
v_rst = "-52 mV"
v_th = "-45 mV"
t_mbr = "20 ms"
tau = "5 ms"
t_rfc = "2.2 ms"
w_syn = "0.275 mV"
f_poi = 250
[model.init]
v = "-52 mV"
T

"$BL_CLI" model --help | grep -q "model check FILE.toml" || fail "model --help"
out=$("$BL_CLI" model check "$work/shiu.toml")
grep -q "^update:" <<<"$out" || fail "check prints no update: $out"
grep -q "0xbfaa9fbe76c8b43a" <<<"$out" || fail "check lacks the bits of -52 mV = -52*0.001: $out"
"$BL_CLI" model run "$work/shiu.toml" --duration 20 --n 3 --input-every 10 --out "$work/run" >/dev/null
for f in spikes_i spikes_t v g; do
    [[ -s "$work/run/$f.npy" ]] || fail "run wrote no $f.npy"
done

expect() {
    local rc_want=$1 needle=$2
    shift 2
    local rc=0
    "$BL_CLI" model "$@" >"$work/out" 2>"$work/err" || rc=$?
    [[ $rc -eq $rc_want ]] || fail "model $*: exit $rc, expected $rc_want ($(cat "$work/err"))"
    [[ $(wc -l <"$work/err") -eq 1 ]] || fail "model $*: stderr is not one line: $(cat "$work/err")"
    grep -qF -- "$needle" "$work/err" || fail "model $*: stderr lacks '$needle': $(cat "$work/err")"
}
expect 2 "expected 'list', 'show', 'check' or 'run'" frobnicate "$work/shiu.toml"
expect 2 "model run needs --out DIR" run "$work/shiu.toml" --duration 5
expect 2 "unknown option --bogus" check "$work/shiu.toml" --bogus 1
expect 2 "bad value for --dt" check "$work/shiu.toml" --dt -1
expect 1 "nope.toml" check "$work/nope.toml"
sed 's/dg\/dt = -g \/ tau : volt/dg\/dt = -g\/tau + v_0 : volt/' "$work/shiu.toml" >"$work/dim.toml"
expect 1 "equations line 2" check "$work/dim.toml"
expect 1 "dimension mismatch" check "$work/dim.toml"
sed 's/threshold = "v > v_th"/threshold = "u > v_th"/' "$work/shiu.toml" >"$work/thr.toml"
expect 1 "unknown variable 'u'" check "$work/thr.toml"
expect 1 "t_mbr" check "$work/shiu.toml" --set "tau=20 ms"
sed 's/^reset = .*/treshold = "v > 0*mV"/' "$work/shiu.toml" >"$work/key.toml"
expect 1 "unknown key 'treshold'" check "$work/key.toml"
cat >"$work/noisy.toml" <<'T'
[model]
equations = "dv/dt = -v/tau + sigma*xi/sqrt(tau) : 1"
[model.parameters]
tau = "10 ms"
sigma = 0.5
T
expect 1 "give its draws with --noise" run "$work/noisy.toml" --duration 1 --out "$work/nz"
/usr/bin/python3 -c 'import sys, numpy as np; np.save(sys.argv[1], np.zeros((5, 2)))' "$work/draws.npy"
expect 1 "holds 5 steps of draws, the run needs 10" run "$work/noisy.toml" --duration 1 --n 2 --noise "$work/draws.npy" --out "$work/nz"
expect 1 "shape (steps, 3)" run "$work/noisy.toml" --duration 0.5 --n 3 --noise "$work/draws.npy" --out "$work/nz"
"$BL_CLI" model run "$work/noisy.toml" --duration 0.5 --n 2 --noise "$work/draws.npy" --out "$work/nz" >/dev/null
echo "ok   model check/run and their errors"
