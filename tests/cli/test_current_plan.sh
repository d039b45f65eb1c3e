#!/usr/bin/env bash
# Current injection in plans ([[stimulus]] current = ..., docs/models.md,
# "Current injection"): what is refused and how the message names it, and a
# table given inline and as a .npy file run byte-identical (the file hashed
# into the record). The values against Brian2 and the noise draws against
# an independent Philox: tests/oracles/test_current_brian2.py.
set -euo pipefail
. "$(dirname "$0")/plan_common.sh"
plan_work current
need_larva

head_plan() {
plan_head current-cases
cat <<T
[run]
trials = 1
duration_ms = 20.0
seed = 3
backend = "reference"
T
}
model() {
cat <<'T'
[model]
method = "euler"
equations = """
dv/dt = (v_0 - v) / tau + I_inj / C : volt (unless refractory)
I_inj : amp
"""
threshold = "v > v_th"
reset = "v = v_0"
refractory = "2 ms"
delay = "1.8 ms"
[model.parameters]
v_0 = "-65 mV"
v_th = "-50 mV"
tau = "10 ms"
C = "200 pF"
T
}
stim() { printf '[[stimulus]]\nname = "I"\nneurons = [0, 1]\n%s\n' "$1"; }
refuse() { # $1: file, $2: expected message part
  if "$BL_CLI" check "$1" >"$work/o" 2>&1; then fail "accepted: $(basename "$1")"; fi
  grep -qF -- "$2" "$work/o" || { cat "$work/o"; fail "$(basename "$1"): message lacks '$2'"; }
}

{ head_plan; printf '[model]\npreset = "shiu2024"\n'; stim 'current = "dc"
amplitude = "1 nA"'; } >"$work/preset.toml"
refuse "$work/preset.toml" "stimulus[0].current: current injection needs a model from equations"
{ head_plan; model; stim 'current = "dc"
amplitude = "1 mV"'; } >"$work/dim.toml"
refuse "$work/dim.toml" "dimension mismatch: a value of volt for 'I_inj', which is in amp"
{ head_plan; model; stim 'current = "dc"
variable = "I_ext"
amplitude = "1 nA"'; } >"$work/var.toml"
refuse "$work/var.toml" "no per-neuron parameter 'I_ext'"
{ head_plan; model; stim 'current = "dc"
variable = "v"
amplitude = "1 mV"'; } >"$work/state.toml"
refuse "$work/state.toml" "no per-neuron parameter 'v'"
{ head_plan; model; stim 'current = "sine"
amplitude = "1 nA"'; } >"$work/kind.toml"
refuse "$work/kind.toml" '"sine" is not a current (dc, step, ramp, table, noise)'
{ head_plan; model; stim 'current = "dc"
amplitude = "1 nA"
sigma = "1 nA"'; } >"$work/key.toml"
refuse "$work/key.toml" "stimulus[0].sigma: not a key of a dc current"
{ head_plan; model; stim 'current = "dc"
rate_hz = 10.0
amplitude = "1 nA"'; } >"$work/two.toml"
refuse "$work/two.toml" "a stimulus takes one of rate_hz, rates, baseline_hz, schedule or current"
{ head_plan; model; stim 'rate_hz = 10.0
amplitude = "1 nA"'; } >"$work/stray.toml"
refuse "$work/stray.toml" 'stimulus[0].amplitude: goes with current = "dc"'
{ head_plan; model; stim 'current = "step"
times_ms = [0.0, 5.0]
amplitudes = ["1 nA"]'; } >"$work/steplen.toml"
refuse "$work/steplen.toml" "the same length"
{ head_plan; model; stim 'current = "step"
times_ms = [5.0, 5.0]
amplitudes = ["1 nA", "2 nA"]'; } >"$work/stepdup.toml"
refuse "$work/stepdup.toml" "times must rise"
{ head_plan; model; stim 'current = "noise"
mean = "0 nA"
sigma = "-1 nA"'; } >"$work/sigma.toml"
refuse "$work/sigma.toml" "stimulus[0].sigma: must be >= 0"
{ head_plan; model; stim 'current = "table"
values = [1.0]
unit = "nA"
every_ms = 0.15'; } >"$work/every.toml"
refuse "$work/every.toml" "is not a whole number (>= 1) of 0.1 ms steps"
{ head_plan; model; stim 'current = "dc"
amplitude = "1 nA"
stop_ms = 30.0'; } >"$work/window.toml"
refuse "$work/window.toml" "must lie inside the trial"
{ head_plan; model; stim 'current = "dc"
mode = "force"
amplitude = "1 nA"'; } >"$work/force.toml"
refuse "$work/force.toml" "cannot force spikes"
{ head_plan | sed 's/^operation = "connectome"/operation = "screen"/'; model; stim 'current = "dc"
amplitude = "1 nA"'; printf '[[screen.axis]]\nsilence = [[1]]\n'; } >"$work/screen.toml"
refuse "$work/screen.toml" "a screen cannot inject currents yet"

# A table inline and from a .npy file: the same run, byte for byte; the file
# is an input of the record.
/usr/bin/python3 -c "import numpy as np; np.save('$work/table.npy', np.array([0.5, 2.0, 1.0]))"
{ head_plan; model; stim 'current = "table"
values = [0.5, 2.0, 1.0]
unit = "nA"
every_ms = 5.0'; } >"$work/inline.toml"
{ head_plan; model; stim 'current = "table"
values = "table.npy"
unit = "nA"
every_ms = 5.0'; } >"$work/npy.toml"
"$BL_CLI" run "$work/inline.toml" --root "$work/ri" --quiet >/dev/null 2>"$work/o" || { cat "$work/o"; fail "inline run"; }
"$BL_CLI" run "$work/npy.toml" --root "$work/rn" --quiet >/dev/null 2>"$work/o" || { cat "$work/o"; fail "npy run"; }
ri=$(ls -d "$work"/ri/*/); rn=$(ls -d "$work"/rn/*/)
for f in counts.npy final_v.npy spikes/trial-0000.h5; do
  cmp -s "$ri/$f" "$rn/$f" || fail "table: $f differs between inline values and the .npy file"
done
/usr/bin/python3 -c "import numpy as np,sys; c=np.load('$ri/counts.npy'); sys.exit(0 if c[0,:2].sum() > 0 else 1)" \
  || fail "table: the driven neurons never fired (the comparison proves nothing)"
# cpu (and auto) run a plan with currents on the reference backend, which is
# the one that applies them, and the record says so: the same bytes.
sed 's/^backend = "reference"/backend = "cpu"/' "$work/inline.toml" >"$work/cpu.toml"
"$BL_CLI" run "$work/cpu.toml" --root "$work/rc" --quiet >/dev/null 2>"$work/o" || { cat "$work/o"; fail "cpu run"; }
rc=$(ls -d "$work"/rc/*/)
cmp -s "$ri/counts.npy" "$rc/counts.npy" && cmp -s "$ri/final_v.npy" "$rc/final_v.npy" || fail "cpu: differs from reference"
grep -q "reference" "$rc/run.log" || fail "cpu: the run log does not say it ran on the reference backend"
sha=$(sha256sum "$work/table.npy" | cut -d' ' -f1)
grep -q "$sha" "$rn/manifest.json" || fail "table: the .npy file's SHA-256 is not in the record"
echo "ok"
