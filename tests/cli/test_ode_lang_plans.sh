#!/usr/bin/env bash
# Plans of ODE systems in the model language (docs/solvers.md, "Systems in the
# model language"): equations with named parameters, initial state and
# observations; system = "hierarchical" (the protocol's fixture, compiled);
# retain = "observations" keeps no state history (and the record says so, with
# the memory held); the RK4 record's observations are NumPy's bit for bit and
# equal to those of the run that keeps the history; bad systems fail naming the
# equation and the term; built-in plans keep their hashes (tests/golden).
set -u
. "$(dirname "$0")/checks_common.sh"
checks_work ode_lang

lang_plan() { # $1 id, $2 extra [ode] lines, $3 equations
    plan_top "$1" ode
    cat <<EOF
equations = """
${3:-dx/dt = v : 1
dv/dt = mu * (1 - x**2) * v - x : 1}
"""
method = "rk4"
substeps = 20
t_end = 10.0
outputs = 11
observe = { energy = "x**2 + v*v", phase = "t * mu + x" }
$2
[ode.parameters]
mu = 1.0
[ode.init]
x = 2.0
EOF
}
mkdir -p "$work/rec"
lang_plan keep "" >"$work/keep.toml"
lang_plan obs 'retain = "observations"' >"$work/obs.toml"
if "$BL_CLI" check "$work/keep.toml" >"$work/check.out" 2>&1 && grep -q '"equations"' "$work/check.out" &&
    grep -q '"param_names"' "$work/check.out"; then
    ok "check: the resolved plan lists the equations and the parameter names"
else
    cat "$work/check.out" >&2
    fail "check of a language plan"
fi
for id in keep obs; do
    if ! "$BL_CLI" run "$work/$id.toml" --root "$work/rec" --quiet >"$work/$id.out" 2>&1; then
        cat "$work/$id.out" >&2
        fail "run $id"
    fi
done
dk=$(ls -d "$work"/rec/keep-* | head -1)
do=$(ls -d "$work"/rec/obs-* | head -1)
"$BL_CLI" verify "$dk" >/dev/null 2>&1 && "$BL_CLI" verify "$do" >/dev/null 2>&1 && ok "both records verify" ||
    fail "a language record does not verify"
if PYTHONPATH="$here" /usr/bin/python3 - "$dk" "$do" <<'EOF'; then ok "observations: NumPy's bit for bit, the same with and without the history; retained and held memory stated"; else fail "observation records"; fi
import json, os, sys
import numpy as np
import vdp_numpy
dk, do = sys.argv[1], sys.argv[2]
t, y, ok_ = np.load(dk + "/t.npy"), np.load(dk + "/y.npy"), np.load(dk + "/observations.npy")
oo = np.load(do + "/observations.npy")
Y = vdp_numpy.rk4(t, 20)
on = np.stack([Y[:, 0] * Y[:, 0] + Y[:, 1] * Y[:, 1], t * 1.0 + Y[:, 0]], axis=1)
sk, so = json.load(open(dk + "/summary.json")), json.load(open(do + "/summary.json"))
print("     keep:", sk["retained"], sk["held"])
print("     obs: ", so["retained"], so["held"])
good = (np.array_equal(Y.view(np.uint64), y.view(np.uint64)) and np.array_equal(on.view(np.uint64), ok_.view(np.uint64))
        and np.array_equal(oo.view(np.uint64), ok_.view(np.uint64)) and not os.path.exists(do + "/y.npy")
        and so["retained"]["state_history"] == "not retained" and so["retained"]["bytes"] == 8 * 11 * 2
        and so["held"]["values"] < sk["held"]["values"] and sk["observations"] == ["energy", "phase"]
        and so["steps_accepted"] == sk["steps_accepted"] == 200)
sys.exit(0 if good else 1)
EOF

# The adaptive methods observe as the run goes too, on the same mesh: the observations and the steps are those of
# the run that keeps the history, bit for bit, and no state history is held
for m in dopri5 cvode-bdf arkode-dopri5 arkode-rk4; do
    lang_plan "keep-$m" "" | sed "s/^method = \"rk4\"/method = \"$m\"/" >"$work/keep-$m.toml"
    lang_plan "obs-$m" 'retain = "observations"' | sed "s/^method = \"rk4\"/method = \"$m\"/" >"$work/obs-$m.toml"
    "$BL_CLI" run "$work/keep-$m.toml" --root "$work/rec" --quiet >/dev/null 2>&1 || fail "run keep-$m"
    "$BL_CLI" run "$work/obs-$m.toml" --root "$work/rec" --quiet >/dev/null 2>&1 || fail "run obs-$m"
    if /usr/bin/python3 - "$(ls -d "$work"/rec/keep-$m-* | head -1)" "$(ls -d "$work"/rec/obs-$m-* | head -1)" <<'EOF'; then ok "$m: observations as the run goes = from the stored history, bit for bit, same steps, no history held"; else fail "$m: streamed observations"; fi
import json, os, sys
import numpy as np
dk, do = sys.argv[1], sys.argv[2]
ok_, oo = np.load(dk + "/observations.npy"), np.load(do + "/observations.npy")
sk, so = json.load(open(dk + "/summary.json")), json.load(open(do + "/summary.json"))
print(f"     {sk['method']}: {so['steps_accepted']} accepted, {so['steps_rejected']} rejected; held {so['held']}")
good = (np.array_equal(oo.view(np.uint64), ok_.view(np.uint64)) and not os.path.exists(do + "/y.npy")
        and so["steps_accepted"] == sk["steps_accepted"] and so["steps_rejected"] == sk["steps_rejected"]
        and so["held"]["values"] == 11 * 2 and sk["held"]["values"] == 11 * 2 + 11 * 2
        and "no state history held" in so["held"]["how"])
sys.exit(0 if good else 1)
EOF
done

# hierarchical: compiled fixture, the same trajectory as the hand-written built-in
{ plan_top hier ode; cat <<'EOF'; } >"$work/hier.toml"
system = "hierarchical"
groups = 4
stages = 2
coupling = "coupled"
method = "rk4"
substeps = 8
t_end = 2.0
outputs = 5
sensitivities = true
EOF
sed 's/^system = "hierarchical"/system = "hier-g4-s2-coupled"/; /^groups/d; /^stages/d; /^coupling/d; s/^id = "hier"/id = "builtin"/' \
    "$work/hier.toml" >"$work/builtin.toml"
"$BL_CLI" run "$work/hier.toml" --root "$work/rec" --quiet >/dev/null 2>&1 || fail "run hierarchical"
"$BL_CLI" run "$work/builtin.toml" --root "$work/rec" --quiet >/dev/null 2>&1 || fail "run built-in hier"
if cmp -s "$work"/rec/hier-*/y.npy "$work"/rec/builtin-*/y.npy &&
    /usr/bin/python3 -c "import numpy as np,sys; a,b=np.load(sys.argv[1]),np.load(sys.argv[2]); sys.exit(0 if a.shape==(5,8,12) and np.max(np.abs(a-b))<=1e-15*np.max(np.abs(b)) else 1)" \
        "$(ls "$work"/rec/hier-*/sensitivities.npy)" "$(ls "$work"/rec/builtin-*/sensitivities.npy)"; then
    ok "hierarchical g4-s2 coupled (compiled): y.npy identical to the hand-written built-in's; sensitivities within 1e-15"
else
    fail "hierarchical compiled vs built-in"
fi

# bad systems: one line naming the file, the key, the equation and the term
lang_plan a "" "dx/dt = v : 1
dv/dt = mu * (1 - x**2) * v - x * omega : 1" | bad unknown-symbol "unknown variable 'omega'"
lang_plan a "" | sed 's/phase = "t \* mu + x"/phase = "x > v"/' | bad observe-condition "observe phase"
lang_plan a "" | sed 's/energy = "x\*\*2 + v\*v"/energy = "x**2 + w"/' | bad observe-unknown "unknown variable 'w'"
lang_plan a 'retain = "nothing"' | bad retain "ode.retain"
lang_plan a "" | sed 's/^x = 2.0/z = 2.0/' | bad init-unknown "'z' is not a state"
lang_plan a 'system = "vdp"' | bad system-and-equations "either system or equations"
lang_plan a "" "dx/dt = v : 1
dv/dt = log(x - 2) : 1" >"$work/nonfinite.toml"
if "$BL_CLI" run "$work/nonfinite.toml" --root "$work/rec" --quiet >"$work/nonfinite.out" 2>&1; then
    fail "a non-finite RHS at the start ran"
elif grep -q "dv/dt is not finite" "$work/nonfinite.out" && grep -q "log(x - 2)" "$work/nonfinite.out"; then
    ok "non-finite start named by its equation: $(head -c 200 "$work/nonfinite.out")"
else
    cat "$work/nonfinite.out" >&2
    fail "non-finite start message"
fi
lang_plan stiff 'max_steps = 3000' | sed 's/^method = "rk4"/method = "dopri5"/; s/^mu = 1.0/mu = 1000.0/; s/^t_end = 10.0/t_end = 3000.0/' >"$work/stiff.toml"
if "$BL_CLI" run "$work/stiff.toml" --root "$work/rec" --quiet >"$work/stiff.out" 2>&1; then
    fail "a stiff language system under dopri5 ran to the end"
elif grep -q "step limit 3000 reached" "$work/stiff.out" && grep -q "looks stiff" "$work/stiff.out"; then
    ok "stiff language system under dopri5: $(head -c 200 "$work/stiff.out")..."
else
    cat "$work/stiff.out" >&2
    fail "stiff message"
fi

# failures during the solve: a FAILED record whose message names what happened
run_fails() { # $1 name, $2.. expected texts; the plan is $work/$1.toml
    local name=$1
    shift
    if "$BL_CLI" run "$work/$name.toml" --root "$work/rec" --quiet >"$work/$name.out" 2>&1; then
        fail "$name ran to the end"
        return
    fi
    for want in "$@"; do
        if ! grep -q -- "$want" "$work/$name.out"; then
            cat "$work/$name.out" >&2
            fail "$name: no '$want' in the message"
            return
        fi
    done
    if [ -e "$(ls -d "$work"/rec/"$name"-* | head -1)/FAILED" ]; then
        ok "$name: $(head -c 240 "$work/$name.out")"
    else
        fail "$name: no FAILED record"
    fi
}
# dx/dt = x^2 from x = 2 blows up at t = 1/2: dopri5's step collapses there
lang_plan collapse "" "dx/dt = x**2 : 1
dv/dt = -v : 1" | sed '/^observe/d; /^mu = /d; s/^t_end = 10.0/t_end = 2.0/; s/^method = "rk4"/method = "dopri5"/' >"$work/collapse.toml"
run_fails collapse "step size collapsed" "at t = 0.5000"
# the step limit on a system that is not stiff: no stiffness advice
lang_plan steplimit 'max_steps = 5' | sed 's/^method = "rk4"/method = "dopri5"/' >"$work/steplimit.toml"
run_fails steplimit "step limit 5 reached" "positive on 0 steps"
if grep -q "looks stiff" "$work/steplimit.out"; then fail "steplimit: a non-stiff system called stiff"; fi
# cvode-bdf's own step limit (CVODES's mxstep) is reported with the time reached
lang_plan cvlimit 'max_steps = 5' | sed 's/^method = "rk4"/method = "cvode-bdf"/' >"$work/cvlimit.toml"
run_fails cvlimit "cvode-bdf" "mxstep steps taken"
# a fixed-step method whose state becomes non-finite: the state is named by its equation
lang_plan blowup "" "dx/dt = x**2 : 1
dv/dt = -v : 1" | sed '/^observe/d; /^mu = /d; s/^t_end = 10.0/t_end = 2.0/; s/^substeps = 20/substeps = 2/' >"$work/blowup.toml"
run_fails blowup "became non-finite" "dx/dt = x\*\*2"

checks_done "ode language plans"
