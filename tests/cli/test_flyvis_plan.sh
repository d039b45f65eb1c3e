#!/usr/bin/env bash
# Plans of `operation = "flyvis"` (docs/solvers.md, "The flyvis application"):
# check shows the resolved plan and its hash (which moves with a key), run
# seals a record that verifies, the record's responses are its V.npy at each
# type's central cell, its gradients are finite and not all zero, and
# malformed plans fail with one line naming the file and the key.
set -u
. "$(dirname "$0")/checks_common.sh"
: "${BL_SOURCE_DIR:?BL_SOURCE_DIR must name the repository root}"
checks_work flyvis_plan
json="$BL_SOURCE_DIR/data/drosophila-optic-lobe-flyvis/fib25-fib19_v2.2.json"

plan() { # $1 id, $2 extra lines
    cat <<EOF
format = "brainlesslab-plan"
format_version = 4
id = "$1"
operation = "flyvis"
[flyvis]
connectome = "$json"
extent = 3
steps = 40
keep = "all"
$2
EOF
}
plan small "" >"$work/small.toml"
plan small 'objective = "T5a"' >"$work/small-t5.toml"
h1=$("$BL_CLI" check "$work/small.toml" | sed -n 's/^plan hash: //p')
h2=$("$BL_CLI" check "$work/small-t5.toml" | sed -n 's/^plan hash: //p')
if [ -n "$h1" ] && [ -n "$h2" ] && [ "$h1" != "$h2" ]; then ok "check: hash $h1, another with objective T5a"; else fail "check hashes '$h1' '$h2'"; fi
"$BL_CLI" check "$work/small.toml" | grep -q '"cells":[[:space:]]*2345' && ok "check: 2345 cells at extent 3" || fail "check does not state 2345 cells"

mkdir -p "$work/rec"
if "$BL_CLI" run "$work/small.toml" --root "$work/rec" >"$work/run.out" 2>&1; then
    ok "run: $(cat "$work/run.out")"
    dir=$(ls -d "$work"/rec/small-* | head -1)
    "$BL_CLI" verify "$dir" >/dev/null 2>&1 && ok "verify: the record is intact" || fail "verify failed on $dir"
    if /usr/bin/python3 - "$dir" <<'EOF'; then ok "record: responses = V.npy at each type's central cell; 735 finite gradients, not all zero"; else fail "record arrays"; fi
import json, sys
import numpy as np
d = sys.argv[1]
V, R, cells = np.load(d + "/V.npy"), np.load(d + "/responses.npy"), np.load(d + "/cells.npy")
s = json.load(open(d + "/summary.json"))
central = [int(np.nonzero((cells[:, 0] == t) & (cells[:, 1] == 0) & (cells[:, 2] == 0))[0][0]) for t in range(65)]
assert V.shape == (41, 2345) and R.shape == (41, 65)
assert np.array_equal(R, V[:, central])
g = [np.load(d + "/grad_%s.npy" % k) for k in ("tau", "bias", "strength")]
assert [x.size for x in g] == [65, 65, 605] and all(np.all(np.isfinite(x)) for x in g) and all(np.any(x) for x in g)
t4 = s["cell_types"].index("T4a")
J = np.mean(V[1:, cells[:, 0] == t4] ** 2)
assert abs(J - s["J"]) <= 1e-13 * abs(J), (J, s["J"])
EOF
else
    fail "run: $(cat "$work/run.out")"
fi

# malformed plans: exit 1, one line naming the file and the key
plan a 'objective = "T9z"' | bad unknown-type "flyvis.objective"
plan a 'tau = [0.001]' | bad tau-length "flyvis.tau"
plan a "tau = [$(python3 -c 'print(", ".join(["0.001"] * 65))')]" | bad tau-below-dt "flyvis.tau"
plan a 'strength = [1.0, 2.0]' | bad strength-length "flyvis.strength"
plan a '' | sed 's/^keep = .*/keep = "some"/' | bad keep "flyvis.keep"
plan a 'dt = 0.0' | bad dt-zero "flyvis.dt"
plan a 'stepsize = 1' | bad unknown-key "stepsize"
plan a '' | sed 's/^extent = .*/extent = 31/' | bad extent-too-large "flyvis.extent"
plan a '' | sed 's/^steps = .*/steps = 200000/' | bad too-many-states "flyvis.steps"
plan a "" | sed 's|^connectome = .*|connectome = "nowhere.json"|' | bad missing-json "flyvis.connectome"
printf '{"nodes": [{"name": "A", "pattern": ["stride", [1, 1]]}], "edges": [{"src": "A", "tar": "B", "alpha": 1, "offsets": [[[0, 0], 1]]}]}' >"$work/bad.json"
plan a "" | sed "s|^connectome = .*|connectome = \"$work/bad.json\"|" | bad bad-edge "edges\[0\].tar"

# A diverging run leaves a FAILED record naming the cell and the step.
plan diverge "strength = [$(python3 -c 'print(", ".join(["1e10"] * 605))')]" >"$work/diverge.toml"
"$BL_CLI" run "$work/diverge.toml" --root "$work/rec" >"$work/diverge.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "is not finite after 40 steps" "$work/diverge.out" && [ -e "$(ls -d "$work"/rec/diverge-* | head -1)/FAILED" ]; then
    ok "diverging rates: $(tail -1 "$work/diverge.out")"
else
    fail "diverging run: rc $rc: $(cat "$work/diverge.out")"
fi

checks_done "flyvis plans"
