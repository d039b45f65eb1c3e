#!/usr/bin/env bash
# `brainlesslab bench --quick --workloads flyvis-grad` (docs/benchmark.md,
# "flyvis"): the receipt's structure and the qualification of the PyTorch
# peer (trajectory bit-identical, gradients within 1e-11). No timing is
# checked. Skips (77) when PyTorch is missing (the peer is then unavailable).
set -u
: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
work=$(mktemp -d "${TMPDIR:-/tmp}/bl_bench_flyvis.XXXXXX")
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -c "import torch" 2>/dev/null || { echo "skip: python3-torch is not installed"; exit 77; }
if ! "$BL_CLI" bench --quick --workloads flyvis-grad --repetitions 3 --work "$work/w" --receipt "$work/r.json" >"$work/out" 2>&1; then
    cat "$work/out"
    echo "FAIL: bench exited non-zero" >&2
    exit 1
fi
exec /usr/bin/python3 - "$work/r.json" <<'EOF'
import json, math, sys
r = json.load(open(sys.argv[1]))
w = r["workloads"][0]
fails = []
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails.append(what)
check(w["id"] == "flyvis-grad" and w["status"] == "completed", "workload completed: %s" % w.get("status"))
q = w["qualification"]
check(q["status"] == "passed" and q["trajectory_bit_identical"], "qualification passed, trajectory bit-identical")
check(q["gradient_max_normwise_relative_error"] <= 1e-11,
      "gradients vs autograd: %.2e" % q["gradient_max_normwise_relative_error"])
check(w["cells"] == 2345 and w["edges"] == 63209, "quick network: %s cells, %s edges" % (w["cells"], w["edges"]))
cases = [s["case"] for s in w["samples"]]
check(cases == ["bl-adjoint", "torch-autograd", "torch-autograd", "bl-adjoint", "bl-adjoint", "torch-autograd"],
      "fresh processes in alternating order: %s" % cases)
check(all(len(s["warm_s"]) == 1 and len(s["warm_cpu_s"]) == 1 for s in w["samples"]), "one warm call per process (quick)")
check(all(math.isfinite(w[k]) and w[k] > 0 for k in ("ratio_peer_over_ours", "cpu_ratio_peer_over_ours")),
      "ratios present: %.1f (wall), %.1f (CPU)" % (w["ratio_peer_over_ours"], w["cpu_ratio_peer_over_ours"]))
check(w["compute_floor"]["bytes_per_call"] > 0, "floor: %.0f bytes per call" % w["compute_floor"]["bytes_per_call"])
sys.exit(1 if fails else 0)
EOF
