#!/usr/bin/env bash
# [ode.gradient] from plans (docs/solvers.md, "Derivatives from plans"): the
# record's gradient.npy / hessian.npy are the C API's (tests/tools/solve_tool,
# bl_ode_gradient and bl_ode_hessian called directly) bit for bit on the same
# computation; the adjoint gradient and the Hessian agree with central finite
# differences of the objective computed in NumPy from the records' y.npy
# (a tolerance: the differences' own truncation and rounding error, printed);
# cvode-bdf's gradient (CVODES sensitivities) agrees with rk4's at a fine
# mesh; adding [ode.gradient] moves the hash; bad gradient sections fail with
# one line naming the key.
set -u
. "$(dirname "$0")/checks_common.sh"
TOOL="${BL_BUILD_DIR:-build}/tests/solve_tool"
checks_work ode_gradient

plan() { # $1 id, $2 method lines, $3 mu, $4 w, $5 gradient lines
    cat <<EOF
format = "brainlesslab-plan"
format_version = 4
id = "$1"
operation = "ode"
[ode]
equations = """
dx/dt = v : 1
dv/dt = mu * (1 - x**2) * v - x * w : 1
"""
$2
t_end = 4.0
outputs = 9
[ode.parameters]
mu = $3
w = $4
[ode.init]
x = 2.0
$5
EOF
}
RK4='method = "rk4"
substeps = 40'
mkdir -p "$work/rec"
run() { # $1 plan file -> record dir on stdout
    "$BL_CLI" run "$1" --root "$work/rec" --quiet >"$1.out" 2>"$1.err" || { cat "$1.err" >&2; return 1; }
    ls -d "$work"/rec/"$(basename "$1" .toml)"-* | head -1
}

# 1. hashes: a plan without [ode.gradient] hashes as before (the golden
#    hashes check that); adding one moves it.
plan g "$RK4" 1.0 1.3 "" >"$work/plain.toml"
plan g "$RK4" 1.0 1.3 '[ode.gradient]
objective = "(x - 1)**2 + x * v"
hessian = true' >"$work/g.toml"
h1=$("$BL_CLI" check "$work/plain.toml" | sed -n 's/^plan hash: //p')
h2=$("$BL_CLI" check "$work/g.toml" | sed -n 's/^plan hash: //p')
if [ -n "$h1" ] && [ -n "$h2" ] && [ "$h1" != "$h2" ]; then ok "hash moves with [ode.gradient]"; else fail "hashes '$h1' '$h2'"; fi

# 2. the nonlinear objective: gradient and Hessian against central
#    differences of NumPy's objective over the records' y.npy.
G=$(run "$work/g.toml") || fail "gradient plan did not run"
"$BL_CLI" verify "$G" >/dev/null 2>&1 && ok "gradient record verifies" || fail "gradient record does not verify"
eps=1e-5
for pm in "1.00001 1.3 mup" "0.99999 1.3 mum" "1.0 1.30001 wp" "1.0 1.29999 wm"; do
    set -- $pm
    plan "$3" "$RK4" "$1" "$2" '[ode.gradient]
objective = "(x - 1)**2 + x * v"' >"$work/$3.toml"
    run "$work/$3.toml" >"$work/$3.dir" || fail "finite-difference plan $3 did not run"
done
if /usr/bin/python3 - "$G" "$work" "$eps" <<'EOF'; then ok "adjoint gradient and Hessian = central differences (above)"; else fail "gradient/Hessian against central differences"; fi
import json, sys, numpy as np
g, work, eps = sys.argv[1], sys.argv[2], float(sys.argv[3])
d = {k: open(f"{work}/{k}.dir").read().strip() for k in ("mup", "mum", "wp", "wm")}
L = lambda y: float(np.sum((y[:, 0] - 1) ** 2 + y[:, 0] * y[:, 1]))
grad, hess = np.load(g + "/gradient.npy"), np.load(g + "/hessian.npy")
obj = json.load(open(g + "/objective.json"))
ok = abs(obj["value"] - L(np.load(g + "/y.npy"))) <= 1e-12 * abs(obj["value"])
fd = np.array([(L(np.load(d[p + "p"] + "/y.npy")) - L(np.load(d[p + "m"] + "/y.npy"))) / (2 * eps) for p in ("mu", "w")])
hfd = np.array([(np.load(d[p + "p"] + "/gradient.npy") - np.load(d[p + "m"] + "/gradient.npy")) / (2 * eps)
                for p in ("mu", "w")])
eg = np.max(np.abs(grad - fd)) / np.max(np.abs(grad))
eh = np.max(np.abs(hess - hfd)) / np.max(np.abs(hess))
print(f"     gradient {grad}, central differences {fd}: max relative difference {eg:.2e}")
print(f"     Hessian symmetric to {abs(hess[0,1]-hess[1,0]):.1e}; against differences of the gradient: {eh:.2e}")
sys.exit(0 if ok and eg < 1e-7 and eh < 1e-6 and abs(hess[0, 1] - hess[1, 0]) <= 1e-9 * np.max(np.abs(hess)) else 1)
EOF

# 3. bit for bit against the C API (solve_tool grad/hess: L = w . y(t_end)),
#    by weights and by the same linear objective written as an expression.
if [ -x "$TOOL" ]; then
    plan cw "$RK4" 1.0 1.3 '[ode.gradient]
weights = [2.0, -3.0]
at = "final"
hessian = true' >"$work/cw.toml"
    plan ce "$RK4" 1.0 1.3 '[ode.gradient]
objective = "2 * x + (-3) * v"
at = "final"
hessian = true' >"$work/ce.toml"
    CW=$(run "$work/cw.toml") || fail "weights plan did not run"
    CE=$(run "$work/ce.toml") || fail "expression plan did not run"
    mkdir -p "$work/api"
    printf 'param mu 1.0\nparam w 1.3\ninit x 2.0\n---\ndx/dt = v : 1\ndv/dt = mu * (1 - x**2) * v - x * w : 1\n' >"$work/api/sys.txt"
    if /usr/bin/python3 - "$CW" "$CE" "$work/api" "$TOOL" <<'EOF'; then ok "plan gradient/Hessian = bl_ode_gradient/bl_ode_hessian bit for bit (weights and expression)"; else fail "plan gradient differs from the C API"; fi
import subprocess, sys, numpy as np
cw, ce, api, tool = sys.argv[1:5]
np.load(cw + "/t.npy").tofile(api + "/t.f64")
np.array([2.0, 0.0]).tofile(api + "/y0.f64")
np.array([1.0, 1.3]).tofile(api + "/p.f64")
np.array([2.0, -3.0]).tofile(api + "/w.f64")
ok = True
for mode in ("grad", "hess"):
    r = subprocess.run([tool, mode, "lang:" + api + "/sys.txt", "0", "rk4", "40", "1e-6", "1e-9", "100000", api],
                       capture_output=True, text=True)
    if r.returncode:
        print(r.stderr); sys.exit(1)
    g = np.fromfile(api + "/grad.f64")
    for rec in (cw, ce):
        ok &= np.array_equal(np.load(rec + "/gradient.npy").view(np.uint64), g.view(np.uint64))
        if mode == "grad":
            ok &= np.array_equal(np.load(rec + "/gradient_y0.npy").view(np.uint64),
                                 np.fromfile(api + "/grady0.f64").view(np.uint64))
        else:
            ok &= np.array_equal(np.load(rec + "/hessian.npy").ravel().view(np.uint64),
                                 np.fromfile(api + "/hess.f64").view(np.uint64))
print("     gradient", np.load(cw + "/gradient.npy"), "Hessian", np.load(cw + "/hessian.npy").ravel())
sys.exit(0 if ok else 1)
EOF
else
    echo "skip the C API comparison: $TOOL not built"
fi

# 4. cvode-bdf: CVODES's sensitivities contracted with dg/dy, against rk4 at a
#    fine mesh (both near the ODE's gradient: a tolerance).
plan cv 'method = "cvode-bdf"
rtol = 1e-10
atol = 1e-12' 1.0 1.3 '[ode.gradient]
objective = "(x - 1)**2 + x * v"' >"$work/cv.toml"
plan fine 'method = "rk4"
substeps = 400' 1.0 1.3 '[ode.gradient]
objective = "(x - 1)**2 + x * v"' >"$work/fine.toml"
CV=$(run "$work/cv.toml") || fail "cvode-bdf gradient plan did not run"
FI=$(run "$work/fine.toml") || fail "fine rk4 gradient plan did not run"
if /usr/bin/python3 - "$CV" "$FI" <<'EOF'; then ok "cvode-bdf gradient (CVODES) = rk4's at a fine mesh (above)"; else fail "cvode-bdf gradient"; fi
import json, sys, numpy as np
a, b = np.load(sys.argv[1] + "/gradient.npy"), np.load(sys.argv[2] + "/gradient.npy")
e = np.max(np.abs(a - b)) / np.max(np.abs(b))
print(f"     cvode-bdf {a}, rk4 x400 {b}: relative difference {e:.2e};",
      json.load(open(sys.argv[1] + "/objective.json"))["method"])
sys.exit(0 if e < 1e-6 else 1)
EOF

# 5. bad gradient sections
bad() { # $1 name, $2 expected text; stdin: plan (looser than checks_common.sh's: any non-zero exit, up to 2 lines)
    cat >"$work/$1.toml"
    "$BL_CLI" check "$work/$1.toml" >/dev/null 2>"$work/$1.err"
    rc=$?
    if [ $rc -ne 0 ] && [ "$(wc -l <"$work/$1.err")" -le 2 ] && grep -q -- "$2" "$work/$1.err"; then
        ok "$1: $(head -1 "$work/$1.err")"
    else
        fail "$1: rc $rc, stderr: $(cat "$work/$1.err")"
    fi
}
plan b "$RK4" 1 1 '[ode.gradient]
objective = "x * mu"' | bad reads-param "reads a parameter"
plan b "$RK4" 1 1 '[ode.gradient]
objective = "x * q"' | bad unknown-symbol "ode.gradient.objective"
plan b "$RK4" 1 1 '[ode.gradient]
objective = "x"
weights = [1, 2]' | bad both "either objective"
plan b "$RK4" 1 1 '[ode.gradient]
weights = [1, 2, 3]' | bad weights-length "ode.gradient.weights"
plan b 'method = "dopri5"' 1 1 '[ode.gradient]
weights = [1, 2]' | bad dopri5 "no derivatives"
plan b 'method = "cvode-bdf"' 1 1 '[ode.gradient]
weights = [1, 2]
hessian = true' | bad hessian-cvode "ode.gradient.hessian"
plan b "$RK4" 1 1 '[ode.gradient]
weights = [1, 2]
at = "middle"' | bad at "ode.gradient.at"
plan b "$RK4" 1 1 '[ode.gradient]
weights = [1, 2]
step = 1' | bad unknown-key "step"

checks_done "ode gradient plans"
