#!/usr/bin/env bash
# Current injection in plans ([[stimulus]] current = ..., docs/models.md,
# "Current injection"): what is refused and how the message names it, and a
# table given inline and as a .npy file run byte-identical (the file hashed
# into the record); currents of every kind on the cpu backend at 1-4 threads
# byte-identical to the reference. The values against Brian2 and the noise draws against
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
# The cpu backend applies currents itself (src/models/eq_part.c, as the
# reference's eq_row.c does): the table plan, and a plan with every kind of
# current at once (overlapping, windows opening and closing mid-trial) on a
# model whose synapses carry the driven neurons' spikes on, run on cpu at
# 1-4 threads with the graph split into partitions, retirement on and off,
# byte-identical to the reference, and the run log names cpu (no fallback).
mix_model() {
model | sed 's/^refractory = "2 ms"/refractory = "2 ms"\non_pre = "v += w"\nweight = "count * sign * w_syn"/'
echo 'w_syn = "0.4 mV"'
}
{ head_plan | sed 's/^duration_ms = 20.0/duration_ms = 60.0/; s/^trials = 1/trials = 2/'; mix_model
printf '[[stimulus]]\nname = "dc"\nneurons = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 700, 1400, 2100]\ncurrent = "dc"\namplitude = "0.5 nA"\nstart_ms = 5.0\nstop_ms = 45.0\n'
printf '[[stimulus]]\nname = "step"\nneurons = [5, 6, 7, 30, 31, 2000]\ncurrent = "step"\ntimes_ms = [0.0, 20.0, 40.0]\namplitudes = ["0.3 nA", "0 nA", "0.6 nA"]\n'
printf '[[stimulus]]\nname = "ramp"\nneurons = [40, 41, 42, 1500]\ncurrent = "ramp"\nstart_amplitude = "0 nA"\nstop_amplitude = "1 nA"\nstart_ms = 10.0\nstop_ms = 50.0\n'
printf '[[stimulus]]\nname = "table"\nneurons = [8, 9, 50, 2500]\ncurrent = "table"\nvalues = [0.5, 0.0, 0.8]\nunit = "nA"\nevery_ms = 15.0\n'
printf '[[stimulus]]\nname = "noise"\nneurons = [0, 3, 60, 61, 62, 900, 2800]\ncurrent = "noise"\nmean = "0.2 nA"\nsigma = "0.4 nA"\nstop_ms = 30.0\n'
} >"$work/mix.toml"
"$BL_CLI" run "$work/mix.toml" --root "$work/rm" --quiet >/dev/null 2>"$work/o" || { cat "$work/o"; fail "mix: reference run"; }
rm_=$(ls -d "$work"/rm/*/)
/usr/bin/python3 -c "import numpy as np,sys; c=np.load('$rm_/counts.npy'); sys.exit(0 if c.sum() > 20 else 1)" \
  || fail "mix: too few spikes for the comparison to prove anything"
for plan in inline mix; do
  want=$([[ $plan == inline ]] && echo "$ri" || echo "$rm_")
  sed 's/^backend = "reference"/backend = "cpu"/' "$work/$plan.toml" >"$work/${plan}_cpu.toml"
  for threads in 1 2 3 4; do
    for retire in 1 0; do
      d="$work/rc_${plan}_${threads}_$retire"
      BL_CPU_PARTITION_MIN_EDGES=1 BL_EQ_RETIRE=$retire OMP_WAIT_POLICY=passive \
        "$BL_CLI" run "$work/${plan}_cpu.toml" --root "$d" --threads "$threads" --quiet >/dev/null 2>"$work/o" ||
        { cat "$work/o"; fail "$plan: cpu run, $threads threads"; }
      rc=$(ls -d "$d"/*/)
      grep -q "prepared: backend cpu" "$rc/run.log" || fail "$plan: cpu ($threads threads) did not run on the cpu backend"
      for f in counts.npy final_v.npy final_g.npy $(cd "$want" && find spikes -type f | sort); do
        cmp -s "$want/$f" "$rc/$f" || fail "$plan: cpu, $threads thread(s), BL_EQ_RETIRE=$retire: $f differs from the reference"
      done
    done
  done
done
# The mpi backend runs the same kernel: as one process and as 2 ranks (each
# rank its own neurons' currents), the mix plan byte-identical as well.
# Under the sanitizers Open MPI's own allocations outlive MPI_Finalize
# (test_resume.sh): these runs skip the leak check.
[ "${BL_SANITIZED:-}" = 1 ] && export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
sed 's/^backend = "reference"/backend = "mpi"/' "$work/mix.toml" >"$work/mix_mpi.toml"
if command -v mpirun >/dev/null && "$BL_CLI" run "$work/mix_mpi.toml" --root "$work/mpi1" --quiet >"$work/o" 2>&1; then
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
  OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl=self,vader OMP_WAIT_POLICY=passive \
    timeout 300 mpirun -np 2 "$BL_CLI" run "$work/mix_mpi.toml" --root "$work/mpi2" --quiet >"$work/o" 2>&1 ||
    { cat "$work/o"; fail "mix: mpirun -np 2"; }
  for d in mpi1 mpi2; do
    rc=$(ls -d "$work/$d"/*/)
    grep -q "prepared: backend mpi" "$rc/run.log" || fail "mix: $d did not run on the mpi backend"
    for f in counts.npy final_v.npy final_g.npy $(cd "$rm_" && find spikes -type f | sort); do
      cmp -s "$rm_/$f" "$rc/$f" || fail "mix: $d: $f differs from the reference"
    done
  done
else
  echo "skipped: mpi (no mpirun or no mpi backend)"
fi
sha=$(sha256sum "$work/table.npy" | cut -d' ' -f1)
grep -q "$sha" "$rn/manifest.json" || fail "table: the .npy file's SHA-256 is not in the record"
echo "ok"
