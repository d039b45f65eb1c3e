#!/usr/bin/env bash
# An ode plan's record says how its system ran (docs/solvers.md, "Generated
# C for ODE systems"): summary.json model_codegen (exec generated_c with the
# compiler, flags, source hash and cache; interpreter under BL_EQ_JIT=0) and
# model/generated.c, the source that ran, sealed with the record; the
# trajectory is the same bytes either way. Skips (77) without a C compiler.
set -u
: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
command -v cc >/dev/null 2>&1 || { echo "skip: no C compiler"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/bl_ode_cg.XXXXXX")
trap 'rm -rf "$work"' EXIT
cat >"$work/p.toml" <<'EOF'
format = "brainlesslab-plan"
format_version = 4
id = "ode-cg"
operation = "ode"
[ode]
system = "hierarchical"
groups = 4
stages = 2
coupling = "coupled"
method = "rk4"
substeps = 8
t_end = 2.0
outputs = 5
EOF
"$BL_CLI" run "$work/p.toml" --root "$work/jit" >"$work/out1" 2>&1 || { cat "$work/out1"; echo "FAIL: run (generated C)"; exit 1; }
BL_EQ_JIT=0 "$BL_CLI" run "$work/p.toml" --root "$work/interp" >"$work/out2" 2>&1 || { cat "$work/out2"; echo "FAIL: run (interpreter)"; exit 1; }
a=$(echo "$work"/jit/ode-cg-*) b=$(echo "$work"/interp/ode-cg-*)
"$BL_CLI" verify "$a" || { echo "FAIL: verify"; exit 1; }
exec /usr/bin/python3 - "$a" "$b" <<'EOF'
import json, os, sys
a, b = sys.argv[1:3]
fails = []
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails.append(what)
ca = json.load(open(os.path.join(a, "summary.json")))["model_codegen"]
cb = json.load(open(os.path.join(b, "summary.json")))["model_codegen"]
check(ca["exec"] == "generated_c" and ca["cache"] in ("hit", "miss") and len(ca["source_sha256"]) == 64,
      "generated C with provenance: %s" % ca["note"])
check("-ffp-contract=off" in ca["flags"], "flags recorded: %s" % ca["flags"])
check(cb["exec"] == "interpreter" and "BL_EQ_JIT=0" in cb["note"], "BL_EQ_JIT=0: %s" % cb["note"])
src = open(os.path.join(a, "model", "generated.c")).read()
check("void bl_eq_ode_rhs(" in src and "void bl_eq_ode_jac(" in src, "model/generated.c holds the ODE functions")
check(not os.path.exists(os.path.join(b, "model", "generated.c")), "no generated.c when the interpreter ran")
check(open(os.path.join(a, "y.npy"), "rb").read() == open(os.path.join(b, "y.npy"), "rb").read(),
      "the trajectory: the same bytes either way")
sys.exit(1 if fails else 0)
EOF
