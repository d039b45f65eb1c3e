#!/usr/bin/env bash
# `brainlesslab bench --quick --workloads coba` (docs/benchmark.md, "COBA"):
# the COBA network (bench/peers/coba_network.py) as an equation-model plan
# run by `simulate --plan`, 100 ms x 2 trials per worker. Checked: the
# receipt's structure, the qualification (our cpu run bit for bit equal to
# our reference run), the phases (compile apart, cold in each case's
# qualification and warm in its timed workers; wall and CPU times), fresh
# processes in alternating order, and the Brian2 peer listed as unavailable
# with its reason (its C++ build is skipped in --quick). No timing is checked.
# Skips (77) when NumPy is missing (the network cannot be made).
set -u
: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
work=$(mktemp -d "${TMPDIR:-/tmp}/bl_bench_coba.XXXXXX")
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -c "import numpy" 2>/dev/null || { echo "skip: python3-numpy is not installed"; exit 77; }
if ! "$BL_CLI" bench --quick --workloads coba --repetitions 3 --threads 1 \
    --work "$work/w" --receipt "$work/r.json" >"$work/out" 2>"$work/log"; then
    cat "$work/out" "$work/log"
    echo "FAIL: bench exited non-zero" >&2
    exit 1
fi
cat "$work/out"
exec /usr/bin/python3 - "$work/r.json" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
fails = []
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails.append(what)
check(r.get("status") == "complete" and r["options"]["quick"] is True, "receipt complete, quick")
(w,) = r["workloads"]
check(w["id"] == "coba" and w["kind"] == "coba", "one workload: coba")
check(w["status"] == "completed", "status completed (every available case measured): %s %s"
      % (w["status"], w.get("reason", "")))
net = w["inputs"]["network"]
check(net["neurons"] == 4000 and net["forced_at_step_0"] == 400 and 300000 < net["edges"] < 340000,
      "network: %d neurons, %d edges" % (net["neurons"], net["edges"]))
check(w["inputs"]["trials_per_worker"] == 2 and w["inputs"]["duration_ms"] == 100, "100 ms x 2 trials")
check(w["counts"]["spikes_per_trial"] >= 400, "reference spikes per trial: %s" % w["counts"]["spikes_per_trial"])
cases = {c["id"]: c for c in w["cases"]}
check(sorted(cases) == ["bl-cpu", "bl-reference", "brian2-cpp"], "cases: %s" % sorted(cases))
b2 = cases["brian2-cpp"]
# --quick says so; a sanitized build says that first (both skip the build)
check(b2["status"] == "unavailable" and ("--quick" in b2.get("reason", "") or "BL_SANITIZED" in b2.get("reason", "")),
      "brian2-cpp unavailable in --quick, with why")
check(cases["bl-reference"]["qualification"]["status"] == "reference", "bl-reference is the reference")
q = cases["bl-cpu"]["qualification"]
cmp = q.get("comparison", {})
check(q["status"] == "passed" and cmp.get("spikes_equal") and cmp.get("counts_equal") and cmp.get("final_state_bitwise"),
      "bl-cpu bit for bit equal to the reference: %s %s" % (q["status"], q.get("reason", "")))
order = {}
for cid in ("bl-reference", "bl-cpu"):
    c = cases[cid]
    check(c["status"] == "measured" and len(c["samples"]) == 3, "%s measured, 3 samples" % cid)
    cg = c["qualification"]["worker_report"].get("model_codegen") or {}
    if cg.get("exec") == "generated_c":
        check(cg.get("cache") == "miss", "%s: the qualification compiled cold (cache %s)" % (cid, cg.get("cache")))
        check(all(s.get("code_cache") == "hit" for s in c["samples"]), "%s: timed workers found the cache warm" % cid)
    else:
        print("note: %s ran interpreted: %s" % (cid, cg.get("note")))
    summ = c["summary"]
    for k in ("first_execution_s", "warm_execution_s", "first_execution_cpu_s", "warm_execution_cpu_s",
              "compile_warm_s", "process_wall_s", "peak_rss_bytes"):
        st = summ.get(k, {})
        ok = st.get("n") == len(st.get("samples", [])) > 0 and st.get("median") == statistics.median(st["samples"])
        check(ok, "%s summary.%s: %d samples, median consistent" % (cid, k, st.get("n", 0)))
    check(isinstance(summ.get("compile_cold"), dict), "%s: the cold compile reported apart" % cid)
    for s in c["samples"]:
        ph = s.get("phases", {})
        check(s["status"] == "ok" and s.get("outputs_match_reference") is True and "compile_s" in ph and
              len(ph["warm_execution_s"]) == 1 and len(ph["warm_execution_cpu_s"]) == 1 and
              s["process"]["user_s"] >= 0 and s["process"]["peak_rss_bytes"] > 0,
              "%s rep %d: ok, outputs matched, phases labelled" % (cid, s["repetition"]))
        order.setdefault(s["repetition"], []).append((s["position"], cid, s["order"]))
seq = {k: [c for _, c, _ in sorted(v)] for k, v in order.items()}
check(seq[0] == ["bl-reference", "bl-cpu"] and seq[1] == ["bl-cpu", "bl-reference"] and seq[2] == seq[0],
      "alternating order: %s" % seq)
check(all(o == ("reversed" if k % 2 else "forward") for k, v in order.items() for _, _, o in v), "orders labelled")
ra = [x for x in w["ratios"] if x["a"] == "bl-cpu" and x["b"] == "bl-reference" and x["phase"] == "warm_execution_s"]
check(len(ra) == 1 and abs(ra[0]["a_over_b"] - ra[0]["a_median_s"] / ra[0]["b_median_s"]) < 1e-12,
      "ratio bl-cpu / bl-reference consistent with the medians")
t = w["target"]
check(t["target_ratio"] == 5 and t["within_target"] is None, "target stated, not judged without Brian2")
sys.exit(1 if fails else 0)
PY
