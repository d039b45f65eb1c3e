#!/usr/bin/env bash
# `brainlesslab simulate --plan PLAN` (the benchmark's worker for models from
# equations, docs/benchmark.md): the connectome, model, stimuli and silenced
# neurons come from a connectome plan. Checked on the larva connectome:
#  - a plan naming models/shiu2024.toml ([model] file, generated C) gives the
#    bytes of `simulate --preset shiu2024` (the hand-written kernel) on the
#    same Poisson input, on the reference backend and on cpu at 2 threads;
#  - --timing reports the compile apart (compile_s, model_codegen: a miss on
#    an empty BL_CACHE_DIR, a hit after), and a preset plan reports none;
#  - the plan's own [[stimulus]] and [run] seed drive it as `brainlesslab run`
#    does: the same counts and final state as the run's record;
#  - --connectome, --preset, --set or --silence beside --plan are usage errors.
set -euo pipefail
: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bl_simplan.XXXXXX")
trap '[[ -n "${KEEP:-}" ]] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
conn="$root/data/connectomes/larva-winding2023"
[[ -f "$conn/manifest.json" ]] || { echo "SKIP: no larva connectome"; exit 77; }
export BL_CACHE_DIR="$work/cache"

plan() { # $1: the [model] table's body; $2: stimulus block (may be empty)
cat <<T
format = "brainlesslab-plan"
format_version = 4
id = "simulate-plan"
operation = "connectome"
[connectome]
path = "$conn"
$2
[run]
trials = 2
duration_ms = 150.0
seed = 7
backend = "reference"
threads = 1
[outputs]
spikes = true
counts = true
state = true
propagation = false
[model]
$1
T
}
plan "file = \"$root/models/shiu2024.toml\"" "" >"$work/eq.toml"
plan 'preset = "shiu2024"' "" >"$work/preset.toml"
/usr/bin/python3 - "$conn" "$work/orn.npy" <<'PY'
import csv, sys, numpy as np
rows = list(csv.DictReader(open(sys.argv[1] + "/neurons.csv")))
orn = [i for i, r in enumerate(rows) if r.get("cell_type") == "sensory" and r.get("modality") == "olfactory"]
np.save(sys.argv[2], np.array(orn, np.int32))
PY
common=(--duration-ms 150 --trials 2 --seed 7 --poisson "150:$work/orn.npy")

"$BL_CLI" simulate --connectome "$conn" --preset shiu2024 "${common[@]}" --backend reference \
    --out "$work/hand" >/dev/null || fail "simulate --preset"
"$BL_CLI" simulate --plan "$work/eq.toml" "${common[@]}" --backend reference --timing "$work/t1.json" \
    --out "$work/eq_ref" >/dev/null || fail "simulate --plan (reference)"
"$BL_CLI" simulate --plan "$work/eq.toml" "${common[@]}" --backend cpu --threads 2 --timing "$work/t2.json" \
    --out "$work/eq_cpu" >/dev/null || fail "simulate --plan (cpu)"
"$BL_CLI" simulate --plan "$work/preset.toml" "${common[@]}" --timing "$work/t3.json" \
    --out "$work/preset" >/dev/null || fail "simulate --plan (preset)"
for f in spikes_trial.npy spikes_step.npy spikes_neuron.npy counts.npy v.npy g.npy; do
    for d in eq_ref eq_cpu preset; do
        cmp -s "$work/hand/$f" "$work/$d/$f" || fail "$d/$f differs from the hand-written kernel's"
    done
done
n=$(/usr/bin/python3 -c "import numpy as np, sys; print(len(np.load(sys.argv[1])))" "$work/hand/spikes_neuron.npy")
[[ $n -ge 200 ]] || fail "only $n spikes: the comparison proves nothing"
echo "identical: the model file (reference, cpu x2) and the preset plan give the preset's bytes ($n spikes)"

/usr/bin/python3 - "$work/t1.json" "$work/t2.json" "$work/t3.json" <<'PY' || fail "timing reports"
import json, sys
t1, t2, t3 = (json.load(open(p)) for p in sys.argv[1:])
for t in (t1, t2):
    assert t["compile_s"] >= 0 and t["model_codegen"]["exec"] in ("generated_c", "interpreter"), t
    assert len(t["trial_s"]) == 2 and len(t["trial_cpu_s"]) == 2, t
if t1["model_codegen"]["exec"] == "generated_c":
    assert t1["model_codegen"]["cache"] == "miss" and t2["model_codegen"]["cache"] == "hit", (t1, t2)
assert t2["backend"] == "cpu" and t2["threads"] == 2, t2
assert "compile_s" not in t3 and "model_codegen" not in t3, t3
print("compile apart: %.3f s (%s), then %.3f s (%s)" % (t1["compile_s"], t1["model_codegen"].get("cache"),
                                                         t2["compile_s"], t2["model_codegen"].get("cache")))
PY

# The plan's own stimulus and seed, as `run` uses them.
plan "file = \"$root/models/shiu2024.toml\"" '[[stimulus]]
name = "ORN"
select = { cell_type = "sensory", modality = "olfactory" }
rate_hz = 150.0' >"$work/stim.toml"
"$BL_CLI" run "$work/stim.toml" --root "$work/rec" --quiet >/dev/null 2>"$work/o" || { cat "$work/o"; fail "run"; }
rec=$(ls -d "$work"/rec/*/)
"$BL_CLI" simulate --plan "$work/stim.toml" --out "$work/from_plan" >/dev/null || fail "simulate --plan (its stimulus)"
cmp -s "$rec/counts.npy" "$work/from_plan/counts.npy" || fail "counts differ from the run record's"
/usr/bin/python3 - "$rec" "$work/from_plan" <<'PY' || fail "final state differs from the run record's"
import sys, numpy as np
rec, sim = sys.argv[1:]
for a, b in (("final_v", "v"), ("final_g", "g")):
    x, y = np.load(f"{rec}/{a}.npy"), np.load(f"{sim}/{b}.npy")
    assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), a
print("the plan's stimulus and seed: counts, final v and g equal to the run record's")
PY

# Usage errors: the plan names the network and the model.
for extra in "--connectome $conn" "--preset shiu2024" "--set v_th_mv=-45" "--silence $work/orn.npy"; do
    # shellcheck disable=SC2086
    if "$BL_CLI" simulate --plan "$work/eq.toml" $extra --out "$work/bad" 2>"$work/err"; then
        fail "simulate --plan accepted $extra"
    fi
    grep -q -- "--plan" "$work/err" || fail "no message naming --plan for $extra: $(cat "$work/err")"
    [[ ! -e $work/bad ]] || fail "outputs written for a usage error ($extra)"
done
"$BL_CLI" simulate --plan "$work/missing.toml" --out "$work/bad" 2>"$work/err" && fail "a missing plan was accepted"
grep -q "missing.toml" "$work/err" || fail "no message naming the missing plan: $(cat "$work/err")"
echo PASS
