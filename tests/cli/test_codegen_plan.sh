#!/usr/bin/env bash
# Issue 23, "How it runs": the connectome plan with the shiu2024 model written
# as equations gives byte-identical spikes, counts and final state whether its
# blocks run as generated C or on the interpreter (BL_EQ_JIT=0); the record of
# a generated-C run holds the source that ran (model/generated.c) and
# run.model_codegen (compiler, flags, source_sha256, cache miss then hit,
# compile_ms), and verifies.
set -euo pipefail
. "$(dirname "$0")/plan_common.sh"
plan_work cgplan
need_larva
export BL_CACHE_DIR="$work/cache"
unset BL_CC BL_EQ_JIT

# The model: the shipped shiu2024 text, the issue-23 block (test_equation_plan
# proves it gives the preset's bytes), written into the plan inline.
{ plan_head larva-orn-codegen; orn_run reference 2 150.0 20241002; cat "$root/models/shiu2024.toml"; } >"$work/eq.toml"

"$BL_CLI" run "$work/eq.toml" --root "$work/jit1" --quiet >/dev/null 2>"$work/o" || { cat "$work/o"; fail "jit run"; }
"$BL_CLI" run "$work/eq.toml" --root "$work/jit2" --quiet >/dev/null 2>"$work/o" || { cat "$work/o"; fail "second jit run"; }
BL_EQ_JIT=0 "$BL_CLI" run "$work/eq.toml" --root "$work/interp" --quiet >/dev/null 2>"$work/o" || { cat "$work/o"; fail "interpreter run"; }
j1=$(ls -d "$work"/jit1/*/); j2=$(ls -d "$work"/jit2/*/); ri=$(ls -d "$work"/interp/*/)
for f in counts.npy final_v.npy final_g.npy $(cd "$ri" && find spikes -type f | sort); do
    cmp -s "$ri/$f" "$j1/$f" || fail "$f differs between generated C and the interpreter"
    cmp -s "$ri/$f" "$j2/$f" || fail "$f differs between generated C (cache hit) and the interpreter"
done
echo "identical: counts, final_v, final_g and every spike file, generated C and interpreter"
grep -q "model from equations: generated C" "$j1/run.log" || fail "jit: the run log does not say generated C"
grep -q "model from equations: interpreter (BL_EQ_JIT=0)" "$ri/run.log" || fail "interp: the run log does not say why"
[[ -s "$j1/model/generated.c" ]] || fail "jit: no model/generated.c in the record"
[[ ! -e "$ri/model/generated.c" ]] || fail "interp: a generated.c for a run that did not run it"
cmp -s "$j1/model/generated.c" "$j2/model/generated.c" || fail "generated source differs between two runs"
/usr/bin/python3 - "$j1" "$j2" "$ri" <<'PY' || fail "run.model_codegen"
import hashlib, json, sys
j1, j2, ri = (json.load(open(d + "/manifest.json"))["run"]["model_codegen"] for d in sys.argv[1:])
src = open(sys.argv[1] + "/model/generated.c", "rb").read()
assert j1["exec"] == "generated_c" and j1["cache"] == "miss", j1
assert j2["exec"] == "generated_c" and j2["cache"] == "hit", j2
assert j1["source_sha256"] == hashlib.sha256(src).hexdigest(), "source_sha256 is not the record's source's"
assert "-ffp-contract=off" in j1["flags"] and "-fno-fast-math" in j1["flags"], j1["flags"]
assert j1["compiler"] and j1["compile_ms"] > 0 and j1["compiler_cpu_ms"] > 0, j1
assert ri["exec"] == "interpreter" and "BL_EQ_JIT=0" in ri["note"], ri
print("compile cold %.1f ms (compiler %.1f ms CPU), warm %.1f ms (%s)" % (j1["compile_ms"], j1["compiler_cpu_ms"],
                                                                         j2["compile_ms"], j1["compiler"]))
PY
"$BL_CLI" verify "$j1" >"$work/o" 2>&1 || { cat "$work/o"; fail "verify of the generated-C record"; }

# A screen (two rates) runs the same model: generated C and interpreter agree.
sed -e 's/^operation = "connectome"/operation = "screen"/' -e 's/^duration_ms = 150.0/duration_ms = 50.0/' \
    -e '/^\[outputs\]/,/^propagation = false/d' "$work/eq.toml" >"$work/scr.toml"
printf '[[screen.axis]]\nrate = [75.0, 150.0]\nstimulus = "ORN"\n' >>"$work/scr.toml"
"$BL_CLI" run "$work/scr.toml" --root "$work/sj" --quiet >/dev/null 2>"$work/o" || { cat "$work/o"; fail "jit screen"; }
BL_EQ_JIT=0 "$BL_CLI" run "$work/scr.toml" --root "$work/si" --quiet >/dev/null 2>"$work/o" || { cat "$work/o"; fail "interpreter screen"; }
sj=$(ls -d "$work"/sj/*/); si=$(ls -d "$work"/si/*/)
for f in counts.npy final_v.npy final_g.npy conditions.csv $(cd "$si" && find spikes -type f | sort); do
    cmp -s "$si/$f" "$sj/$f" || fail "screen: $f differs between generated C and the interpreter"
done
/usr/bin/python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["run"]["model_codegen"]["exec"] == "generated_c"' "$sj/manifest.json" || fail "screen: no run.model_codegen of generated C"
[[ -s "$sj/model/generated.c" ]] || fail "screen: no model/generated.c"
echo "identical: the screen's counts, final state, conditions and spikes"
echo "ok"
