#!/usr/bin/env bash
# Plans of the solver operations (`operation = "ode"` and `"ssa"`,
# docs/solvers.md): check shows the resolved plan and hash (and the hash moves
# with a key), run seals a record that verifies, an RK4 record's y.npy is the
# NumPy loop's bit for bit, an SSA bank is the same on 1 and 2 threads and run
# twice, a stiff system given to dopri5 leaves a FAILED record naming the step
# limit, and malformed plans fail with one line naming the file and the key.
set -u
. "$(dirname "$0")/checks_common.sh"
checks_work solver_plans

ode_plan() { # $1 id, $2 extra lines
    plan_top "$1" ode
    cat <<EOF
system = "vdp"
method = "rk4"
substeps = 20
t_end = 10.0
outputs = 11
$2
EOF
}
ssa_plan() { # $1 id, $2 extra [ssa] lines, $3 extra reaction lines
    plan_top "$1" ssa
    cat <<EOF
species = ["A", "B", "C"]
x0 = [100, 80, 0]
replicates = 16
seed = 7
t_end = 5.0
outputs = 11
$2
[[ssa.reaction]]
rate = 0.01
reactants = { A = 1, B = 1 }
products = { C = 1 }
$3
[[ssa.reaction]]
rate = 0.5
reactants = { C = 1 }
products = { A = 1, B = 1 }
EOF
}
mkdir -p "$work/rec"

# check: resolved plan and hash; the hash follows the keys
ode_plan vdp "sensitivities = true" >"$work/vdp.toml"
ode_plan vdp "substeps = 21" | sed '/^substeps = 20$/d' >"$work/vdp21.toml"
h1=$("$BL_CLI" check "$work/vdp.toml" | sed -n 's/^plan hash: //p')
h2=$("$BL_CLI" check "$work/vdp21.toml" | sed -n 's/^plan hash: //p')
if [ -n "$h1" ] && [ -n "$h2" ] && [ "$h1" != "$h2" ]; then ok "ode check: hash $h1, another with substeps = 21"; else fail "ode check hashes '$h1' '$h2'"; fi

# run + verify + the NumPy loop
if "$BL_CLI" run "$work/vdp.toml" --root "$work/rec" --quiet >"$work/run.out" 2>&1; then
    dir=$(ls -d "$work"/rec/vdp-* | head -1)
    "$BL_CLI" verify "$dir" >/dev/null 2>&1 && ok "ode run: $(cat "$work/run.out" | tail -1)" || fail "ode record does not verify"
    if PYTHONPATH="$here" /usr/bin/python3 - "$dir" <<'EOF'; then ok "ode rk4 record: y.npy = the NumPy RK4 loop bit for bit; sensitivities.npy present"; else fail "ode y.npy differs from NumPy"; fi
import sys, numpy as np
import vdp_numpy
d = sys.argv[1]
t, y, s = np.load(d + "/t.npy"), np.load(d + "/y.npy"), np.load(d + "/sensitivities.npy")
sys.exit(0 if np.array_equal(vdp_numpy.rk4(t, 20).view(np.uint64), y.view(np.uint64)) and s.shape == (11, 2, 1) else 1)
EOF
else
    cat "$work/run.out" >&2
    fail "ode run failed"
fi

# ssa: 1 thread = 2 threads = again
ssa_plan abc "" "" >"$work/abc.toml"
"$BL_CLI" run "$work/abc.toml" --root "$work/rec" --threads 1 --quiet >/dev/null 2>&1 || fail "ssa run (1 thread)"
sleep 1
"$BL_CLI" run "$work/abc.toml" --root "$work/rec" --threads 2 --quiet >/dev/null 2>&1 || fail "ssa run (2 threads)"
n_same=$(sha256sum "$work"/rec/abc-*/counts.npy | awk '{print $1}' | sort -u | wc -l)
n_rec=$(ls -d "$work"/rec/abc-* | wc -l)
if [ "$n_rec" = 2 ] && [ "$n_same" = 1 ]; then ok "ssa run: 2 records (1 and 2 threads), identical counts.npy"; else fail "ssa records $n_rec, distinct counts $n_same"; fi
for d in "$work"/rec/abc-*; do "$BL_CLI" verify "$d" >/dev/null 2>&1 || fail "ssa record $d does not verify"; done
grep -q '"approximate":	false' "$work"/rec/abc-*/summary.json 2>/dev/null && ok "ssa summary says the direct method is exact" || fail "ssa summary lacks approximate: false"

# a stiff system given to the explicit method: FAILED record naming the step limit
ode_plan stiff "" | sed 's/^method = "rk4"/method = "dopri5"\nmax_steps = 2000\nparams = [1000.0]/; s/^t_end = 10.0/t_end = 3000.0/' >"$work/stiff.toml"
if "$BL_CLI" run "$work/stiff.toml" --root "$work/rec" --quiet >"$work/stiff.out" 2>&1; then
    fail "a stiff Van der Pol under dopri5 ran to the end"
else
    if grep -q "step limit 2000 reached" "$work/stiff.out" && [ -e "$(ls -d "$work"/rec/stiff-* | head -1)/FAILED" ]; then
        ok "stiff dopri5 refused: $(head -c 160 "$work/stiff.out")..."
    else
        cat "$work/stiff.out" >&2
        fail "stiff run: no step-limit message or no FAILED record"
    fi
fi

# a built-in system whose right-hand side is not finite at the initial state: the state is named
ode_plan nonfinite "y0 = [1e200, 1e200]" >"$work/nonfinite.toml"
if "$BL_CLI" run "$work/nonfinite.toml" --root "$work/rec" --quiet >"$work/nonfinite.out" 2>&1; then
    fail "a non-finite start ran"
elif grep -q "right-hand side of state 1 is not finite (-inf) at the initial state, t = 0" "$work/nonfinite.out"; then
    ok "non-finite start of a built-in: $(head -c 200 "$work/nonfinite.out")"
else
    cat "$work/nonfinite.out" >&2
    fail "non-finite start message"
fi
# ARKODE's RK4 table on the fixed-step mesh from a plan: substeps resolved, y.npy within rounding of rk4's
ode_plan arkrk4 "" | sed 's/^method = "rk4"/method = "arkode-rk4"/' >"$work/arkrk4.toml"
ode_plan ownrk4 "" >"$work/ownrk4.toml"
if "$BL_CLI" check "$work/arkrk4.toml" 2>/dev/null | grep -q '"substeps":' &&
    "$BL_CLI" run "$work/arkrk4.toml" --root "$work/rec" --quiet >/dev/null 2>&1 &&
    "$BL_CLI" run "$work/ownrk4.toml" --root "$work/rec" --quiet >/dev/null 2>&1 &&
    /usr/bin/python3 -c "import numpy as np,sys; a,b=np.load(sys.argv[1]),np.load(sys.argv[2]); d=np.max(np.abs(a-b)); print('     arkode-rk4 vs rk4: max abs', d); sys.exit(0 if a.shape==b.shape and d<1e-12 else 1)" \
        "$(ls "$work"/rec/arkrk4-*/y.npy)" "$(ls "$work"/rec/ownrk4-*/y.npy)"; then
    ok "arkode-rk4 plan: substeps resolved, the trajectory within rounding of rk4's"
else
    fail "arkode-rk4 plan"
fi

# malformed plans: exit 1, one line naming the file and the key
ode_plan a "" | sed 's/"vdp"/"lorenz"/' | bad unknown-system "ode.system"
ode_plan a "" | sed 's/"rk4"/"rk5"/' | bad unknown-method "ode.method"
ode_plan a "params = [1.0, 2.0]" | bad params-length "ode.params"
ode_plan a "y0 = [1.0, \"x\"]" | bad y0-string "ode.y0\[1\]"
ode_plan a "t = [0.0, 2.0, 1.0]" | sed '/^t_end/d; /^outputs/d' | bad t-decreasing "ode.t"
ode_plan a "sensitivities = true" | sed 's/"rk4"/"dopri5"/' | bad sens-dopri5 "ode.sensitivities"
ode_plan a "stepsize = 1" | bad unknown-key "stepsize"
ssa_plan a "" "" | sed 's/reactants = { C = 1 }/reactants = { D = 1 }/' | bad unknown-species "ssa.reaction\[1\].reactants.D"
ssa_plan a "" "" | sed 's/^rate = 0.5/rate = -0.5/' | bad negative-rate "ssa.reaction\[1\].rate"
ssa_plan a 'method = "gillespie"' "" | bad ssa-method "ssa.method"
ssa_plan a "" "" | sed 's/^x0 = .*/x0 = [100, -1, 0]/' | bad negative-count "ssa.x0\[1\]"

checks_done "solver plans"
