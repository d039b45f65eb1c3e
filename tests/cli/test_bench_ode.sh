#!/usr/bin/env bash
# `brainlesslab bench --quick --workloads ode-rhs,ode-rk4-grad,ssa-bank`
# (docs/benchmark.md, "ODE and SSA families"): the receipt's structure, the
# exact subset of cases executed, and the qualification of the NumPy peer per
# case (RHS bit-identical, gradient within 1e-13, SSA means within 5 standard
# errors of the analytic mean; PyTorch autograd for the gradient when
# python3-torch is installed) before any timing. No timing is checked.
# Skips (77) when NumPy is missing (the peer is then unavailable).
set -u
: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
work=$(mktemp -d "${TMPDIR:-/tmp}/bl_bench_ode.XXXXXX")
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -c "import numpy" 2>/dev/null || { echo "skip: python3-numpy is not installed"; exit 77; }
if ! "$BL_CLI" bench --quick --workloads ode-rhs,ode-rk4-grad,ssa-bank --repetitions 3 --threads 1 \
    --work "$work/w" --receipt "$work/r.json" >"$work/out" 2>&1; then
    cat "$work/out"
    echo "FAIL: bench exited non-zero" >&2
    exit 1
fi
cat "$work/out"
exec /usr/bin/python3 - "$work/r.json" <<'EOF'
import json, math, sys
r = json.load(open(sys.argv[1]))
fails = []
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails.append(what)
ws = {w["id"]: w for w in r["workloads"]}
check(sorted(ws) == ["ode-rhs", "ode-rk4-grad", "ssa-bank"], "three families: %s" % sorted(ws))
want = {"ode-rhs": ["g4-s2-coupled"], "ode-rk4-grad": ["n16"], "ssa-bank": ["bank16"]}
for wid, w in ws.items():
    check(w["status"] == "completed", "%s completed: %s" % (wid, w["status"]))
    check(w["cases_executed"] == want[wid], "%s: the exact subset executed listed: %s" % (wid, w["cases_executed"]))
    for c in w["cases"]:
        q = c["qualification"]
        check(q["status"] == "passed", "%s %s qualified: %s" % (wid, c["case"], q))
        kinds = [s["case"] for s in c["samples"]]
        sides = ["bl-c"] + [k for k in c["peers"] if c["peers"][k]["qualification"]["status"] == "passed"]
        reps = [[s["case"] for s in c["samples"] if s["repetition"] == r] for r in range(3)]
        check(all(sorted(x) == sorted(sides) for x in reps) and
              all(reps[r][0] == sides[r % len(sides)] for r in range(3)),
              "%s: fresh processes, the order rotated each repetition: %s" % (wid, kinds))
        check(all(math.isfinite(c[k]) and c[k] > 0 for k in ("ratio_peer_over_ours", "cpu_ratio_peer_over_ours")),
              "%s: ratios %.1f (wall), %.1f (CPU)" % (wid, c["ratio_peer_over_ours"], c["cpu_ratio_peer_over_ours"]))
        check(all(s["compile_s"] >= 0 for s in c["samples"]), "%s: compile time reported apart" % wid)
rhs = ws["ode-rhs"]["cases"][0]
check(rhs["qualification"]["bit_identical"], "RHS bit-identical to NumPy")
check(rhs["codegen"]["exec"] in ("generated_c", "interpreter"), "codegen provenance: %s" % rhs["codegen"]["exec"])
g = ws["ode-rk4-grad"]["cases"][0]["qualification"]
check(g["gradient_max_normwise_relative_error"] <= 1e-13, "gradient vs NumPy adjoint: %.2e" % g["gradient_max_normwise_relative_error"])
check(ws["ssa-bank"]["cases"][0]["ours_events_per_s"] > 0, "SSA events per second reported")
t = ws["ode-rk4-grad"]["cases"][0]["peers"]["torch-autograd"]["qualification"]
if t["status"] == "peer unavailable":
    print("note: PyTorch peer unavailable: %s" % t.get("reason", "")[:200])
else:
    check(t["status"] == "passed", "gradient vs PyTorch autograd: %.2e" % t["gradient_max_normwise_relative_error"])
sys.exit(1 if fails else 0)
EOF
