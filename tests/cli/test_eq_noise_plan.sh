#!/usr/bin/env bash
# Noise (xi) in a connectome model from equations (docs/models.md "Noise in
# connectome runs", docs/streams.md): the draw of (trial, neuron, step, k) is
# Philox at counter (step, neuron, 0xE0000000 | k, trial), so the reference
# backend (generated C and the interpreter), the cpu backend at 1, 2 and 4 threads (trials split into
# partitions) and mpi with 2 ranks give the same spikes, counts and final
# state byte for byte on a noisy LIF with synapses and Poisson input; a
# noisy model never retires (each neuron draws every step), and the noise
# changes the run (sigma = 0 gives other spikes). The draws' values are
# checked against an independent Philox by oracle.test_eq_noise_brian2.
set -euo pipefail
. "$(dirname "$0")/plan_common.sh"
plan_work eqnoise
need_larva

plan() { # $1: backend, $2: sigma
plan_head larva-noisy-lif
cat <<T
[model]
method = "euler"
equations = """
dv/dt = (v_0 - v + g) / t_mbr + sigma * xi / sqrt(t_mbr) : volt (unless refractory)
dg/dt = -g / tau : volt (unless refractory)
"""
threshold = "v > v_th"
reset = "v = v_rst; g = 0*mV"
refractory = "2.2 ms"
on_pre = "g += w"
weight = "count * sign * w_syn"
delay = "1.8 ms"
on_input = "v += f_poi * w_syn"
[model.parameters]
v_0 = "-52 mV"
v_rst = "-52 mV"
v_th = "-45 mV"
t_mbr = "20 ms"
tau = "5 ms"
w_syn = "0.275 mV"
f_poi = 250
sigma = "$2"
T
orn_run "$1" 2 60.0 4294967301
}
plan reference "3 mV" >"$work/ref.toml"
"$BL_CLI" run "$work/ref.toml" --root "$work/ref" --quiet >"$work/o" 2>&1 || { cat "$work/o"; fail "reference run"; }
ref=$(ls -d "$work"/ref/*/)
same_as_ref() { same_records "$ref" "$1" "$2" 4; } # $1: record directory, $2: what
# The interpreter draws what the generated C draws (both call the stream).
BL_EQ_JIT=0 "$BL_CLI" run "$work/ref.toml" --root "$work/interp" --quiet >"$work/o" 2>&1 ||
    { cat "$work/o"; fail "interpreter run"; }
grep -q "model from equations: interpreter" "$work"/interp/*/run.log || fail "BL_EQ_JIT=0: not the interpreter"
same_as_ref "$(ls -d "$work"/interp/*/)" "interpreter (BL_EQ_JIT=0)"
plan cpu "3 mV" >"$work/cpu.toml"
for threads in 1 2 4; do
    d="$work/cpu_$threads"
    BL_CPU_PARTITION_MIN_EDGES=1 OMP_WAIT_POLICY=passive \
        "$BL_CLI" run "$work/cpu.toml" --root "$d" --threads "$threads" >"$work/o" 2>&1 ||
        { cat "$work/o"; fail "cpu run, $threads threads"; }
    grep -q "prepared: backend cpu" "$d"/*/run.log || fail "cpu ($threads threads): did not run on the cpu backend"
    same_as_ref "$(ls -d "$d"/*/)" "cpu, $threads thread(s)"
done
echo "identical: reference and cpu at 1, 2, 4 threads"
plan mpi "3 mV" >"$work/mpi.toml"
mpi_no_leak_check
if command -v mpirun >/dev/null && "$BL_CLI" run "$work/mpi.toml" --root "$work/mpi1" >"$work/o" 2>&1; then
    mpirun_2 "$work/mpi.toml" "$work/mpi2" >"$work/o" 2>&1 || { cat "$work/o"; fail "mpirun -np 2"; }
    same_as_ref "$(ls -d "$work"/mpi2/*/)" "mpi, 2 ranks"
    echo "identical: mpi as 2 ranks"
else
    echo "skipped: mpi (no mpirun or no mpi backend)"
fi
# heun (Brian2's stochastic Heun) draws the same stream on every backend too.
plan reference "3 mV" | sed 's/^method = "euler"/method = "heun"/' >"$work/heun_ref.toml"
plan cpu "3 mV" | sed 's/^method = "euler"/method = "heun"/' >"$work/heun_cpu.toml"
"$BL_CLI" run "$work/heun_ref.toml" --root "$work/heun_ref" --quiet >"$work/o" 2>&1 || { cat "$work/o"; fail "heun reference"; }
BL_CPU_PARTITION_MIN_EDGES=1 "$BL_CLI" run "$work/heun_cpu.toml" --root "$work/heun_cpu" --threads 2 --quiet >"$work/o" 2>&1 ||
    { cat "$work/o"; fail "heun cpu"; }
for f in counts.npy final_v.npy final_g.npy; do
    cmp -s "$work"/heun_ref/*/$f "$work"/heun_cpu/*/$f || fail "heun: $f differs between reference and cpu"
done
! cmp -s "$work"/heun_ref/*/final_v.npy "$ref/final_v.npy" || fail "heun gives euler's final v"
BL_EQ_JIT=0 "$BL_CLI" run "$work/heun_ref.toml" --root "$work/heun_interp" --quiet >"$work/o" 2>&1 ||
    { cat "$work/o"; fail "heun interpreter"; }
for f in counts.npy final_v.npy final_g.npy; do
    cmp -s "$work"/heun_ref/*/$f "$work"/heun_interp/*/$f || fail "heun: $f differs between generated C and the interpreter"
done
echo "identical: heun, reference (generated C and interpreter) and cpu at 2 threads"
# The noise is there: sigma = 0 gives other spikes (and final states).
plan reference "0 mV" >"$work/quiet.toml"
"$BL_CLI" run "$work/quiet.toml" --root "$work/quiet" --quiet >"$work/o" 2>&1 || { cat "$work/o"; fail "sigma 0 run"; }
! cmp -s "$ref/final_v.npy" "$(ls -d "$work"/quiet/*/)final_v.npy" || fail "sigma 0 gives the noisy run's final v"
echo "ok"
