# `brainlesslab bench --quick`: runs the benchmark protocol on tiny workloads and
# checks the receipt's structure (docs/benchmark.md): required keys, a
# qualification status for every case, our backends qualified against the
# reference, raw sample arrays, medians/min/max consistent with the samples,
# alternating order across >= 3 fresh-process repetitions, censored timeouts
# with their bound, reasons for unavailable cases, and the strong-scaling
# section of bl-mpi (rank counts qualified, per-rank BL_MPI_STATS counters; or
# unavailable with a reason without MPI). The reservoir workloads r1 (quick
# grid) and r2 (quick closed loop: Falandays on tracking, 128 trials in one
# batch) are checked the same way: every point qualified bit for bit against
# the NumPy oracle by its trajectory SHA-256 (r2: with the task oracle in the
# loop, the same mean outcome), ours and the oracle timed in alternating
# order, ratios consistent with the medians. bl-cpu-eq (the shiu2024 model
# from models/shiu2024.toml, generated C, cpu backend) must qualify bit for bit
# on w1 and w3 (unavailable on w2, with the reason), with its compile apart
# (cold in the qualification, warm in the timed workers) and its comparison
# with bl-cpu in the receipt. The trial bank w1-bank (issue 28) runs in a
# second, short receipt with --threads 1,2 and one background spinner: both
# thread counts' banks bit for bit equal to the reference, the speedup entries
# consistent with the medians, the load recorded. No timing
# thresholds: how fast anything ran is never checked here.
set -euo pipefail

: "${BL_CLI:?BL_CLI must name the brainlesslab binary}"
: "${BL_SOURCE_DIR:?BL_SOURCE_DIR must name the repository root}"
PY=/usr/bin/python3

work=$(mktemp -d "${TMPDIR:-/tmp}/bl_bench_receipt.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# Bad invocations fail with a usage error and no receipt.
if "$BL_CLI" bench --repetitions 2 --work "$work/bad" --receipt "$work/bad.json" 2>"$work/err"; then
    fail "bench accepted --repetitions 2"
fi
grep -q "repetitions" "$work/err" || fail "no message naming --repetitions: $(cat "$work/err")"
if "$BL_CLI" bench --quick --workloads w9 --work "$work/bad" --receipt "$work/bad.json" 2>"$work/err"; then
    fail "bench accepted workload w9"
fi
grep -q "w9" "$work/err" || fail "no message naming w9: $(cat "$work/err")"
for bad in "--threads 2,1" "--threads 1,1" "--threads 1,x" "--threads 0,2" "--background-load 65"; do
    # shellcheck disable=SC2086 # the option and its value are two words
    if "$BL_CLI" bench --quick --workloads w1-bank $bad --work "$work/bad" --receipt "$work/bad.json" 2>"$work/err"; then
        fail "bench accepted $bad"
    fi
    grep -qE -- "--(threads|background-load)" "$work/err" || fail "$bad: no message naming the option: $(cat "$work/err")"
done
[[ ! -e $work/bad.json ]] || fail "a receipt was written for a bad invocation"

start=$(date +%s)
"$BL_CLI" bench --quick --workloads w1,w2,w3,r1,r2 --receipt "$work/R.json" --work "$work/cache" >"$work/table.txt" 2>"$work/log.txt" || {
    tail -40 "$work/log.txt" >&2
    fail "bench --quick exited $?"
}
echo "bench --quick took $(($(date +%s) - start)) s (informational)"
cat "$work/table.txt"

"$PY" - "$work/R.json" <<'EOF'
import json, math, statistics, sys

path = sys.argv[1]
r = json.load(open(path))
problems = []


def need(obj, keys, where):
    for k in keys:
        if k not in obj:
            problems.append(f"{where}: missing key '{k}'")


def close(a, b):
    return a == b or (a is not None and b is not None and abs(a - b) <= 1e-12 * max(1.0, abs(a), abs(b)))


def check_stat(st, where):
    need(st, ["samples", "n", "median", "min", "max"], where)
    s = st.get("samples", [])
    if not isinstance(s, list) or not all(isinstance(x, (int, float)) for x in s):
        problems.append(f"{where}: samples is not a list of numbers")
        return
    if st.get("n") != len(s):
        problems.append(f"{where}: n {st.get('n')} != {len(s)} samples")
    if s:
        for key, want in (("median", statistics.median(s)), ("min", min(s)), ("max", max(s))):
            if not close(st.get(key), want):
                problems.append(f"{where}: {key} {st.get(key)} inconsistent with samples ({want})")
    elif any(st.get(k) is not None for k in ("median", "min", "max")):
        problems.append(f"{where}: statistics without samples")


need(r, ["receipt", "receipt_version", "status", "started_utc", "finished_utc", "wall_s", "options", "protocol",
         "environment", "case_definitions", "workloads"], "receipt")
if r.get("receipt") != "brainlesslab-bench" or r.get("receipt_version") != 1:
    problems.append("receipt: wrong format name or version")
if r.get("status") != "complete":
    problems.append(f"receipt: status {r.get('status')!r}, expected 'complete'")
env = r.get("environment", {})
need(env, ["source_revision", "source_dirty_sha256", "brainlesslab_version", "compiler_and_flags", "cpu_model",
           "cores_online", "affinity_cpus", "threads_requested", "threads_given_to_every_case",
           "backends_compiled", "python", "peer_packages", "loadavg_at_start", "loadavg_at_end"], "environment")
opts = r.get("options", {})
need(opts, ["workloads", "repetitions", "timeout_s", "quick", "threads_requested", "threads_resolved"], "options")
reps = opts.get("repetitions", 0)
if reps < 3:
    problems.append(f"options: {reps} repetitions (< 3)")
if opts.get("quick") is not True:
    problems.append("options: quick is not true")
need(r.get("protocol", {}), ["fresh_process_per_measurement", "order", "qualification", "phases", "timeout_s"],
     "protocol")
case_ids = [c["id"] for c in r.get("case_definitions", [])]
for want in ("bl-reference", "bl-cpu", "brian2-cpp", "brian2-numpy", "bl-reference-phase4c", "bl-cpu-phase4c",
             "torch-eager", "bl-cpu-eq"):
    if want not in case_ids:
        problems.append(f"case_definitions: no {want}")

STATUSES = {"measured", "failed_qualification", "qualification_timeout", "qualification_error", "not_run",
            "unavailable", "not_selected", "timeout", "failed"}
QSTATUS = {"reference", "passed", "failed", "timeout", "error", "not_run", "unavailable"}
SAMPLE = {"ok", "timeout", "failed", "mismatch"}
wids = [w.get("id") for w in r.get("workloads", [])]
if wids != ["w1", "w2", "w3", "r1", "r2"]:
    problems.append(f"workloads: {wids}, expected w1, w2, w3, r1, r2")
n_measured = 0
n_points = 0


def check_reservoir(w):
    """The reservoir sweep: points qualified by hash, then timed."""
    global n_points
    wid = w.get("id")
    need(w, ["id", "title", "definition", "kind", "status", "inputs", "case_definitions", "points", "wall_s",
             "order", "phases"], wid)
    if w.get("status") != "completed":
        problems.append(f"{wid}: status {w.get('status')!r}: {w.get('reason')}")
        return
    inp = w.get("inputs", {})
    need(inp, ["nodes", "units", "batch", "frames_by_units", "seed", "threads_ours", "threads_numpy",
               "warm_runs_per_worker_ours", "warm_runs_per_worker_numpy"], f"{wid}.inputs")
    closed = wid == "r2"
    want_nodes = ["falandays"] if closed else ["falandays", "sorn"]
    if sorted(inp.get("nodes", [])) != want_nodes:
        problems.append(f"{wid}: nodes {inp.get('nodes')}, expected {want_nodes}")
    if closed and (inp.get("task") != "tracking" or inp.get("batch") != [128] or
                   inp.get("horizon_ticks") != inp.get("frames_by_units", {}).get(str((inp.get("units") or [0])[0]))):
        problems.append(f"{wid}: inputs {inp.get('task')!r}, batch {inp.get('batch')}, horizon "
                        f"{inp.get('horizon_ticks')}: expected tracking, [128], the frames")
    defs = {c.get("id"): c for c in w.get("case_definitions", [])}
    if sorted(defs) != ["bl-reservoir", "numpy-oracle"]:
        problems.append(f"{wid}: case definitions {sorted(defs)}")
    env = defs.get("numpy-oracle", {}).get("environment", {})
    if env.get("OPENBLAS_NUM_THREADS") != "1" or env.get("OMP_NUM_THREADS") != "1":
        problems.append(f"{wid}: the oracle's thread environment is not recorded as 1: {env}")
    pts = w.get("points", [])
    want = len(inp.get("nodes", [])) * len(inp.get("units", [])) * len(inp.get("batch", []))
    if len(pts) != want or want == 0:
        problems.append(f"{wid}: {len(pts)} points, expected {want} (nodes x units x batch)")
    warm_want = {"bl-reservoir": inp.get("warm_runs_per_worker_ours"),
                 "numpy-oracle": inp.get("warm_runs_per_worker_numpy")}
    for p in pts:
        where = f"{wid}.{p.get('node')}-N{p.get('units')}-B{p.get('batch')}"
        need(p, ["node", "units", "batch", "frames", "seed", "status", "qualification", "bit_identical",
                 "trajectory_sha256", "counts", "cases", "ratios", "wall_s"], where)
        if p.get("frames") != inp.get("frames_by_units", {}).get(str(p.get("units"))):
            problems.append(f"{where}: frames {p.get('frames')} differ from inputs.frames_by_units")
        st = p.get("status")
        if st == "unavailable":
            if not p.get("reason"):
                problems.append(f"{where}: unavailable without a reason")
            continue
        # Correctness (not speed): ours must equal the oracle bit for bit.
        if st != "measured" or p.get("bit_identical") is not True:
            problems.append(f"{where}: status {st!r}, bit_identical {p.get('bit_identical')}: {p.get('reason')}")
            continue
        n_points += 1
        h = p.get("trajectory_sha256") or ""
        if len(h) != 64 or any(ch not in "0123456789abcdef" for ch in h):
            problems.append(f"{where}: trajectory_sha256 {h!r}")
        q = p.get("qualification", {})
        if q.get("status") != "passed" or q.get("ours", {}).get("trajectory_sha256") != h or \
                q.get("numpy", {}).get("trajectory_sha256") != h:
            problems.append(f"{where}: qualification {q.get('status')!r} does not show both hashes equal to {h[:12]}")
        if closed:
            ro = q.get("ours", {}).get("worker_report", {})
            rn = q.get("numpy", {}).get("worker_report", {})
            if ro.get("task") != "tracking" or rn.get("task") != "tracking" or \
                    ro.get("outcome_mean") != rn.get("outcome_mean") or ro.get("trials_failed") != 0 or \
                    rn.get("trials_failed") != 0:
                problems.append(f"{where}: closed-loop reports differ or failed: ours {ro.get('task')} "
                                f"{ro.get('outcome_mean')} {ro.get('trials_failed')}, numpy {rn.get('task')} "
                                f"{rn.get('outcome_mean')} {rn.get('trials_failed')}")
        need(p.get("counts", {}), ["unit_updates_per_run", "synaptic_events_per_run", "spikes_per_run"],
             f"{where}.counts")
        if p.get("counts", {}).get("unit_updates_per_run") != p.get("frames", 0) * p.get("batch", 0) * p.get("units", 0):
            problems.append(f"{where}: unit_updates_per_run != frames x batch x units")
        cases = {c.get("id"): c for c in p.get("cases", [])}
        if sorted(cases) != ["bl-reservoir", "numpy-oracle"]:
            problems.append(f"{where}: cases {sorted(cases)}")
            continue
        order_by_rep = {}
        for cid, c in cases.items():
            cw = f"{where}.{cid}"
            need(c, ["kind", "status", "threads_requested", "threads_observed", "samples", "summary", "figures"], cw)
            samples = c.get("samples", [])
            if c.get("status") != "measured" or len(samples) != reps:
                problems.append(f"{cw}: status {c.get('status')!r}, {len(samples)} samples (want {reps})")
            for s in samples:
                need(s, ["repetition", "position", "order", "status", "process"], f"{cw}.sample")
                if s.get("status") != "ok":
                    problems.append(f"{cw}: sample {s.get('status')!r}: {s.get('reason')}")
                    continue
                if s.get("outputs_match_reference") is not True or s.get("trajectory_sha256") != h:
                    problems.append(f"{cw}: ok sample whose hash is not the qualified one")
                ph = s.get("phases", {})
                need(ph, ["construct_s", "first_execution_s", "warm_execution_s"], f"{cw}.sample.phases")
                if len(ph.get("warm_execution_s", [])) != warm_want.get(cid):
                    problems.append(f"{cw}: {len(ph.get('warm_execution_s', []))} warm runs, want {warm_want.get(cid)}")
                if s.get("process", {}).get("peak_rss_bytes", 0) <= 0:
                    problems.append(f"{cw}: no peak RSS")
                order_by_rep.setdefault(s.get("repetition"), []).append((s.get("position"), cid, s.get("order")))
            summ = c.get("summary", {})
            need(summ, ["n_samples", "n_ok", "construct_s", "first_execution_s", "warm_execution_s",
                        "warm_execution_s_per_frame", "process_wall_s", "peak_rss_bytes"], f"{cw}.summary")
            for key in ("construct_s", "first_execution_s", "warm_execution_s", "warm_execution_s_per_frame",
                        "process_wall_s", "peak_rss_bytes"):
                if key in summ:
                    check_stat(summ[key], f"{cw}.summary.{key}")
            firsts = [s["phases"]["first_execution_s"] for s in samples if s.get("status") == "ok"]
            warms = [x for s in samples if s.get("status") == "ok" for x in s["phases"]["warm_execution_s"]]
            if sorted(firsts) != sorted(summ.get("first_execution_s", {}).get("samples", [])) or \
                    sorted(warms) != sorted(summ.get("warm_execution_s", {}).get("samples", [])):
                problems.append(f"{cw}: summary samples differ from the raw samples")
            for ph in ("first_execution", "warm_execution"):
                need(c.get("figures", {}).get(ph, {}), ["unit_updates_per_s", "synaptic_events_per_s", "frames_per_s"],
                     f"{cw}.figures.{ph}")
        seq = {k: [cid for _, cid, _ in sorted(v)] for k, v in order_by_rep.items()}
        if seq.get(0) != ["bl-reservoir", "numpy-oracle"] or seq.get(1) != ["numpy-oracle", "bl-reservoir"]:
            problems.append(f"{where}: order by repetition {seq} does not alternate ours/numpy")
        for k, v in order_by_rep.items():
            if any(o != ("reversed" if k % 2 else "forward") for _, _, o in v):
                problems.append(f"{where}: repetition {k} samples mislabelled")
        for phase in ("first_execution_s", "warm_execution_s", "process_wall_s"):
            ra = p.get("ratios", {}).get(phase)
            if ra is None:
                problems.append(f"{where}: no {phase} ratio")
                continue
            ours_m = cases["bl-reservoir"]["summary"][phase]["median"]
            np_m = cases["numpy-oracle"]["summary"][phase]["median"]
            if not (close(ra.get("ours_median_s"), ours_m) and close(ra.get("numpy_median_s"), np_m) and
                    close(ra.get("numpy_over_ours"), np_m / ours_m)):
                problems.append(f"{where}: {phase} ratio inconsistent with the medians")


for w in r.get("workloads", []):
    wid = w.get("id")
    if w.get("kind") == "reservoir":
        check_reservoir(w)
        continue
    need(w, ["id", "title", "definition", "status"], f"{wid}")
    if w.get("status") == "unavailable":
        if not w.get("reason"):
            problems.append(f"{wid}: unavailable without a reason")
        continue
    need(w, ["inputs", "counts", "cases", "ratios", "wall_s"], wid)
    inp = w.get("inputs", {})
    need(inp, ["connectome", "stimulus", "duration_ms", "steps_per_trial", "trials_per_worker", "shapes"],
         f"{wid}.inputs")
    need(inp.get("connectome", {}), ["n_neurons", "n_edges", "n_synapses", "origin"], f"{wid}.inputs.connectome")
    need(inp.get("stimulus", {}), ["n_neurons", "rate_hz", "seed", "events", "events_sha256"], f"{wid}.inputs.stimulus")
    trials = inp.get("trials_per_worker", 0)
    for preset, cts in w.get("counts", {}).items():
        need(cts, ["steps_per_trial", "neuron_steps_per_trial", "spikes_per_trial", "synaptic_events_per_trial"],
             f"{wid}.counts.{preset}")
    cases = {c.get("id"): c for c in w.get("cases", [])}
    if sorted(cases) != sorted(case_ids):
        problems.append(f"{wid}: cases {sorted(cases)} != definitions")
    order_by_rep = {}
    for cid, c in cases.items():
        where = f"{wid}.{cid}"
        need(c, ["preset", "kind", "status", "qualification", "samples", "summary", "figures", "threads_requested",
                 "threads_observed", "dtype"], where)
        st = c.get("status")
        if st not in STATUSES:
            problems.append(f"{where}: status {st!r}")
        q = c.get("qualification", {})
        if q.get("status") not in QSTATUS:
            problems.append(f"{where}: qualification status {q.get('status')!r}")
        if st == "unavailable" and not c.get("reason"):
            problems.append(f"{where}: unavailable without a reason")
        if st in ("failed_qualification", "qualification_error", "not_run", "failed") and not c.get("reason"):
            problems.append(f"{where}: {st} without a reason")
        if q.get("status") == "passed":
            cmp = q.get("comparison", {})
            if not (cmp.get("spikes_equal") and cmp.get("counts_equal")):
                problems.append(f"{where}: qualification passed but spikes/counts differ")
        # Correctness (not speed): our backends must equal the reference.
        if c.get("kind") == "ours" and st != "unavailable":
            want_q = "reference" if cid.startswith("bl-reference") else "passed"
            if q.get("status") != want_q:
                problems.append(f"{where}: qualification {q.get('status')!r} (want {want_q!r}): {q.get('reason')}")
            if st != "measured":
                problems.append(f"{where}: our case not measured ({st}): {c.get('reason')}")
        samples = c.get("samples", [])
        if not isinstance(samples, list):
            problems.append(f"{where}: samples not a list")
            continue
        if st == "measured":
            n_measured += 1
            if len(samples) != reps:
                problems.append(f"{where}: {len(samples)} samples, expected {reps} (one per repetition)")
        if q.get("status") not in ("reference", "passed") and samples:
            problems.append(f"{where}: timed although not qualified")
        ok = 0
        for s in samples:
            need(s, ["repetition", "position", "order", "status", "process"], f"{where}.sample")
            need(s.get("process", {}), ["wall_s", "peak_rss_bytes"], f"{where}.sample.process")
            if s.get("status") not in SAMPLE:
                problems.append(f"{where}: sample status {s.get('status')!r}")
            if s.get("status") == "timeout" and "censored_at_s" not in s:
                problems.append(f"{where}: timeout sample without censored_at_s")
            if s.get("status") == "ok":
                ok += 1
                ph = s.get("phases", {})
                need(ph, ["load_s", "prepare_s", "first_execution_s", "warm_execution_s"], f"{where}.sample.phases")
                if len(ph.get("warm_execution_s", [])) != trials - 1:
                    problems.append(f"{where}: {len(ph.get('warm_execution_s', []))} warm samples in a worker, "
                                    f"expected {trials - 1}")
                if s.get("outputs_match_reference") is not True:
                    problems.append(f"{where}: ok sample whose outputs were not matched")
                if s.get("process", {}).get("peak_rss_bytes", 0) <= 0:
                    problems.append(f"{where}: no peak RSS")
            order_by_rep.setdefault(s.get("repetition"), []).append((s.get("position"), cid, s.get("order")))
        summ = c.get("summary", {})
        need(summ, ["n_samples", "n_ok", "n_timeout", "n_failed", "n_mismatch", "load_s", "prepare_s",
                    "first_execution_s", "warm_execution_s", "process_wall_s", "peak_rss_bytes"], f"{where}.summary")
        if summ.get("n_ok") != ok or summ.get("n_samples") != len(samples):
            problems.append(f"{where}: summary counts disagree with the samples")
        for key in ("load_s", "prepare_s", "first_execution_s", "warm_execution_s", "process_wall_s",
                    "peak_rss_bytes"):
            if key in summ:
                check_stat(summ[key], f"{where}.summary.{key}")
        # medians consistent with the raw samples of the ok workers
        firsts = [s["phases"]["first_execution_s"] for s in samples if s.get("status") == "ok"]
        warms = [x for s in samples if s.get("status") == "ok" for x in s["phases"]["warm_execution_s"]]
        if sorted(firsts) != sorted(summ.get("first_execution_s", {}).get("samples", [])):
            problems.append(f"{where}: first_execution_s samples differ from the raw samples")
        if sorted(warms) != sorted(summ.get("warm_execution_s", {}).get("samples", [])):
            problems.append(f"{where}: warm_execution_s samples differ from the raw samples")
        if st == "measured":
            for ph in ("first_execution", "warm_execution"):
                f = c.get("figures", {}).get(ph)
                if f is None:
                    problems.append(f"{where}: no {ph} figures")
                    continue
                need(f, ["wall_s_per_simulated_s", "neuron_steps_per_s", "synaptic_events_per_s"],
                     f"{where}.figures.{ph}")
                check_stat(f.get("wall_s_per_simulated_s", {}), f"{where}.figures.{ph}.wall_s_per_simulated_s")
    # Alternating order: repetition 1 runs the cases in the reverse order of repetition 0.
    seq = {k: [cid for _, cid, _ in sorted(v)] for k, v in order_by_rep.items()}
    if 0 in seq and 1 in seq and seq[1] != list(reversed(seq[0])):
        problems.append(f"{wid}: repetition 1 order {seq[1]} is not the reverse of {seq[0]}")
    for k, v in order_by_rep.items():
        want = "reversed" if k % 2 else "forward"
        if any(o != want for _, _, o in v):
            problems.append(f"{wid}: repetition {k} samples not labelled {want}")
    for ra in w.get("ratios", []):
        need(ra, ["a", "b", "phase", "a_median_s", "b_median_s", "a_over_b"], f"{wid}.ratio")
        if "a_median_s" in ra and "b_median_s" in ra and ra["b_median_s"] > 0:
            if not close(ra["a_over_b"], ra["a_median_s"] / ra["b_median_s"]):
                problems.append(f"{wid}: ratio {ra['a']}/{ra['b']} inconsistent with its medians")

# bl-cpu-eq (issue 23): the shiu2024 model from its equations (models/shiu2024.toml,
# generated C) on the cpu backend, on w1 and w3 only: qualified bit for bit
# against the reference like bl-cpu, compared with bl-cpu in the same run, the
# compile reported apart (cold: the qualification's empty code cache; warm:
# the timed workers' populated one). Format only, no timing asserted.
for w in r.get("workloads", []):
    wid = w.get("id")
    if w.get("kind") == "reservoir" or w.get("status") == "unavailable":
        continue
    eq = {c.get("id"): c for c in w.get("cases", [])}.get("bl-cpu-eq", {})
    if wid not in ("w1", "w3"):
        if eq.get("status") != "unavailable" or "w1 and w3" not in eq.get("reason", ""):
            problems.append(f"{wid}.bl-cpu-eq: status {eq.get('status')!r} ({eq.get('reason')}), expected "
                            f"unavailable on {wid}")
        continue
    q = eq.get("qualification", {})
    cmp = q.get("comparison", {})
    if q.get("status") != "passed" or not (cmp.get("spikes_equal") and cmp.get("counts_equal") and
                                           cmp.get("final_state_bitwise")):
        problems.append(f"{wid}.bl-cpu-eq: not bit-identical to the reference: {q.get('status')!r} {q.get('reason')}")
    rep = q.get("worker_report", {})
    cg = rep.get("model_codegen") or {}
    if not isinstance(rep.get("compile_s"), (int, float)) or cg.get("exec") not in ("generated_c", "interpreter"):
        problems.append(f"{wid}.bl-cpu-eq: qualification report without compile_s / model_codegen: {rep}")
    generated = cg.get("exec") == "generated_c"
    if generated and cg.get("cache") != "miss":
        problems.append(f"{wid}.bl-cpu-eq: the qualification's code cache was not cold: {cg.get('cache')!r}")
    summ = eq.get("summary", {})
    need(summ, ["compile_warm_s", "compile_cold", "warm_execution_cpu_s", "first_execution_cpu_s"],
         f"{wid}.bl-cpu-eq.summary")
    check_stat(summ.get("compile_warm_s", {}), f"{wid}.bl-cpu-eq.summary.compile_warm_s")
    for s in eq.get("samples", []):
        if s.get("status") != "ok":
            continue
        ph = s.get("phases", {})
        if "compile_s" not in ph or len(ph.get("warm_execution_cpu_s", [])) != len(ph.get("warm_execution_s", [])):
            problems.append(f"{wid}.bl-cpu-eq: sample phases without compile_s or CPU times: {sorted(ph)}")
        if generated and s.get("code_cache") != "hit":
            problems.append(f"{wid}.bl-cpu-eq: a timed worker did not find the code cache warm: {s.get('code_cache')!r}")
    g = w.get("generated_vs_hand_written")
    if not isinstance(g, dict) or g.get("generated") != "bl-cpu-eq" or g.get("hand_written") != "bl-cpu":
        problems.append(f"{wid}: no generated_vs_hand_written comparison (bl-cpu-eq vs bl-cpu): {g}")
    else:
        need(g, ["target", "warm_execution_s", "warm_execution_cpu_s", "within_target", "compile_warm_s",
                 "compile_cold"], f"{wid}.generated_vs_hand_written")
        ws = g.get("warm_execution_s", {})
        a, b = ws.get("generated_median_s"), ws.get("hand_written_median_s")
        if not (isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0 and
                close(ws.get("generated_over_hand_written"), a / b)):
            problems.append(f"{wid}.generated_vs_hand_written: ratio inconsistent with its medians: {ws}")
    if not any(ra.get("a") == "bl-cpu-eq" and ra.get("b") == "bl-cpu" for ra in w.get("ratios", [])):
        problems.append(f"{wid}: no ratio bl-cpu-eq / bl-cpu in ratios[]")

# Strong scaling over MPI ranks (bl-mpi, the workload's "scaling" section): on
# w1 in --quick when the binary has the mpi backend and mpirun is found,
# "unavailable" with a reason otherwise (a build without MPI skips it).
mpi = env.get("mpi", {})
need(mpi, ["backend_compiled", "available", "launcher", "ranks", "threads_per_rank"], "environment.mpi")
if not mpi.get("available"):
    print(f"scaling: bl-mpi unavailable ({mpi.get('reason')}); its checks are skipped")
    if not mpi.get("reason"):
        problems.append("environment.mpi: unavailable without a reason")
PSTAT = STATUSES
for w in r.get("workloads", []):
    wid = w.get("id")
    if w.get("status") == "unavailable" or not str(wid).startswith("w"):
        continue  # reservoir workloads (r*) have no rank scaling
    sc = w.get("scaling")
    if not isinstance(sc, dict):
        problems.append(f"{wid}: no scaling section")
        continue
    need(sc, ["case", "status", "launcher", "points", "threads_per_rank", "simulated_s_per_worker",
              "baseline_single_process", "bytes_counted"], f"{wid}.scaling")
    if sc.get("status") in ("unavailable", "not_selected"):
        if not sc.get("reason"):
            problems.append(f"{wid}.scaling: {sc.get('status')} without a reason")
        if mpi.get("available") and wid == "w1":
            problems.append(f"{wid}.scaling: {sc.get('status')} although mpirun and the mpi backend are available")
        continue
    pts = sc.get("points", [])
    if [p.get("ranks") for p in pts] != mpi.get("ranks"):
        problems.append(f"{wid}.scaling: points {[p.get('ranks') for p in pts]} != ranks {mpi.get('ranks')}")
    sim = sc.get("simulated_s_per_worker") or 0
    positions = {}
    for c in w.get("cases", []):
        for s in c.get("samples", []):
            positions.setdefault(s.get("repetition"), []).append(s.get("position"))
    for p in pts:
        R = p.get("ranks")
        where = f"{wid}.scaling.R{R}"
        need(p, ["ranks", "oversubscribed", "status", "qualification", "samples", "summary", "exchange", "speedup",
                 "figures", "threads_per_rank"], where)
        if p.get("status") not in PSTAT:
            problems.append(f"{where}: status {p.get('status')!r}")
        # Correctness (not speed): every rank count reproduces the reference.
        q = p.get("qualification", {})
        if q.get("status") != "passed" or p.get("status") != "measured":
            problems.append(f"{where}: qualification {q.get('status')!r}, status {p.get('status')!r}: "
                            f"{p.get('reason') or q.get('reason')}")
            continue
        cmp = q.get("comparison", {})
        if not (cmp.get("spikes_equal") and cmp.get("counts_equal") and cmp.get("final_state_bitwise")):
            problems.append(f"{where}: qualification passed but outputs differ")
        samples = p.get("samples", [])
        if len(samples) != reps:
            problems.append(f"{where}: {len(samples)} samples, expected {reps}")
        summ = p.get("summary", {})
        need(summ, ["n_ok", "first_execution_s", "warm_execution_s", "process_wall_s", "peak_rss_bytes",
                    "peak_rss_per_rank_bytes", "peak_rss_max_over_ranks_bytes"], f"{where}.summary")
        ok = [s for s in samples if s.get("status") == "ok"]
        if summ.get("n_ok") != len(ok):
            problems.append(f"{where}: summary n_ok disagrees with the samples")
        for key in ("first_execution_s", "warm_execution_s", "process_wall_s", "peak_rss_bytes",
                    "peak_rss_max_over_ranks_bytes"):
            check_stat(summ.get(key, {}), f"{where}.summary.{key}")
        prr = summ.get("peak_rss_per_rank_bytes", [])
        if len(prr) != R:
            problems.append(f"{where}: {len(prr)} per-rank peak RSS entries, expected {R}")
        for k, st in enumerate(prr):
            check_stat(st, f"{where}.summary.peak_rss_per_rank_bytes[{k}]")
        x = p.get("exchange", {})
        need(x, ["bytes_sent_per_simulated_s", "bytes_received_per_simulated_s", "windows_per_worker",
                 "windows_per_simulated_s", "exchange_wall_s_per_simulated_s"], f"{where}.exchange")
        for s in samples:
            positions.setdefault(s.get("repetition"), []).append(s.get("position"))
            want = "reversed" if s.get("repetition", 0) % 2 else "forward"
            if s.get("order") != want or s.get("ranks") != R:
                problems.append(f"{where}: sample order {s.get('order')!r} / ranks {s.get('ranks')!r}")
        for s in ok:
            mr = s.get("mpi_ranks", [])
            if [m.get("rank") for m in mr] != list(range(R)):
                problems.append(f"{where}: sample without the BL_MPI_STATS of ranks 0..{R - 1}")
                continue
            if s.get("outputs_match_reference") is not True:
                problems.append(f"{where}: ok sample whose outputs were not matched")
            for m in mr:
                need(m, ["bytes_sent", "bytes_received", "windows", "wall_exchange_s", "peak_rss_bytes", "lo", "hi"],
                     f"{where}.mpi_ranks")
                if m.get("peak_rss_bytes", 0) <= 0 or m.get("windows", 0) <= 0:
                    problems.append(f"{where}: rank {m.get('rank')} without windows or peak RSS")
            # every rank receives every rank's counts and ids: the same bytes
            if len({m.get("bytes_received") for m in mr}) != 1:
                problems.append(f"{where}: ranks received different byte counts")
            if sim > 0:
                tot = sum(m.get("bytes_sent", 0) for m in mr) / sim
                if not any(close(tot, v) for v in x.get("bytes_sent_per_simulated_s", {})
                           .get("sum_over_ranks", {}).get("samples", [])):
                    problems.append(f"{where}: bytes_sent_per_simulated_s.sum_over_ranks inconsistent with mpi_ranks")
        sp = p.get("speedup", {})
        if R != 1 and any(q.get("ranks") == 1 for q in pts) and not isinstance(sp.get("vs_1_rank"), dict):
            problems.append(f"{where}: no speedup against 1 rank")
    # one position per worker of a repetition, cases and rank counts together
    for rep, pos in positions.items():
        if sorted(pos) != list(range(len(pos))):
            problems.append(f"{wid}: repetition {rep} positions {sorted(pos)} are not 0..{len(pos) - 1}")

if n_measured == 0:
    problems.append("no case was measured")
if n_points == 0:
    problems.append("no reservoir point was measured")
for p in problems:
    print("PROBLEM:", p)
print(f"receipt checked: {len(wids)} workloads, {n_measured} measured cases, {n_points} reservoir points, "
      f"{len(problems)} problems")
sys.exit(1 if problems else 0)
EOF

# The trial bank: trial 0 alone, then the other trials in one engine call, at
# 1 and 2 threads in the same run, beside one spinning process.
if "$BL_CLI" simulate --connectome "$work/nowhere" --preset shiu2024 --duration-ms 10 --trials 3 --bank \
    --out "$work/nowhere-out" 2>"$work/err"; then
    fail "simulate accepted --bank without --timing"
fi
grep -q -- "--bank needs --timing" "$work/err" || fail "no message naming --bank: $(cat "$work/err")"
start=$(date +%s)
"$BL_CLI" bench --quick --workloads w1-bank --threads 1,2 --background-load 1 --receipt "$work/B.json" \
    --work "$work/cache" >"$work/bank_table.txt" 2>"$work/bank_log.txt" || {
    tail -40 "$work/bank_log.txt" >&2
    fail "bench --quick --workloads w1-bank exited $?"
}
echo "bench --quick --workloads w1-bank took $(($(date +%s) - start)) s (informational)"
cat "$work/bank_table.txt"
grep -q "^w1-bank: " "$work/bank_table.txt" || fail "the table has no w1-bank block"

"$PY" - "$work/B.json" <<'EOF'
import json, statistics, sys

r = json.load(open(sys.argv[1]))
problems = []


def need(obj, keys, where):
    for k in keys:
        if k not in obj:
            problems.append(f"{where}: missing key '{k}'")


def close(a, b):
    return a == b or (a is not None and b is not None and abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b)))


def check_stat(st, where):
    s = st.get("samples", [])
    if st.get("n") != len(s):
        problems.append(f"{where}: n {st.get('n')} != {len(s)} samples")
    for key, fn in (("median", statistics.median), ("min", min), ("max", max)):
        if s and not close(st.get(key), fn(s)):
            problems.append(f"{where}: {key} {st.get(key)} inconsistent with the samples")


if r.get("status") != "complete":
    problems.append(f"receipt: status {r.get('status')!r}")
opts = r.get("options", {})
if opts.get("threads_list") != [1, 2] or opts.get("threads_resolved") != 1 or opts.get("background_load") != 1:
    problems.append(f"options: threads_list {opts.get('threads_list')}, threads_resolved "
                    f"{opts.get('threads_resolved')}, background_load {opts.get('background_load')}")
bg = r.get("environment", {}).get("background_load", {})
ran = bg.get("ran", {})
if bg.get("processes") != 1 or not bg.get("what") or ran.get("processes") != 1 or len(ran.get("cpu_s", [])) != 1:
    problems.append(f"environment.background_load: {bg}")
elif not (ran["cpu_s"][0] > 0 and ran.get("wall_s", 0) > 0):
    problems.append(f"environment.background_load: the spinner got no CPU time: {ran}")
reps = opts.get("repetitions", 0)
ws = r.get("workloads", [])
if [w.get("id") for w in ws] != ["w1-bank"]:
    problems.append(f"workloads: {[w.get('id') for w in ws]}")
for w in ws:
    need(w, ["kind", "status", "inputs", "counts", "reference", "points", "speedup", "wall_s"], "w1-bank")
    if w.get("kind") != "bank" or w.get("status") != "completed":
        problems.append(f"w1-bank: kind {w.get('kind')!r}, status {w.get('status')!r}: {w.get('reason')}")
        continue
    inp = w["inputs"]
    trials = inp.get("trials_per_worker")
    if inp.get("bank_trials_per_worker") != trials - 1 or inp.get("threads") != [1, 2] or \
            inp.get("background_load") != 1:
        problems.append(f"w1-bank.inputs: {trials} trials, bank {inp.get('bank_trials_per_worker')}, threads "
                        f"{inp.get('threads')}, background_load {inp.get('background_load')}")
    ref = w["reference"]
    if ref.get("status") != "reference" or not ref.get("spikes"):
        problems.append(f"w1-bank.reference: {ref.get('status')!r} ({ref.get('spikes')} spikes): {ref.get('reason')}")
    if len(ref.get("worker_report", {}).get("trial_s", [])) != trials:
        problems.append("w1-bank.reference: not one trial_s per trial (the reference runs them one call each)")
    need(w["counts"].get("shiu2024", {}), ["spikes_per_trial", "synaptic_events_per_trial"], "w1-bank.counts")
    pts = w["points"]
    if [p.get("threads_requested") for p in pts] != [1, 2]:
        problems.append(f"w1-bank: points {[p.get('threads_requested') for p in pts]}, expected 1, 2")
    seq = {}
    for p in pts:
        T = p.get("threads_requested")
        where = f"w1-bank.T{T}"
        need(p, ["case", "status", "qualification", "samples", "summary", "figures", "threads_observed"], where)
        q = p.get("qualification", {})
        cmp = q.get("comparison", {})
        # Correctness (not speed): the bank equals the reference's one-call-per-trial run.
        if p.get("status") != "measured" or q.get("status") != "passed" or not (
                cmp.get("spikes_equal") and cmp.get("counts_equal") and cmp.get("final_state_bitwise")):
            problems.append(f"{where}: status {p.get('status')!r}, qualification {q.get('status')!r}: "
                            f"{p.get('reason') or q.get('reason')}")
            continue
        if p.get("threads_observed") != T or p.get("backend_observed") != "cpu":
            problems.append(f"{where}: observed {p.get('backend_observed')} with {p.get('threads_observed')} threads")
        samples = p.get("samples", [])
        if len(samples) != reps:
            problems.append(f"{where}: {len(samples)} samples, expected {reps}")
        for s in samples:
            seq.setdefault(s.get("repetition"), []).append((s.get("position"), T, s.get("order")))
            if s.get("status") != "ok" or s.get("outputs_match_reference") is not True:
                problems.append(f"{where}: sample {s.get('status')!r}: {s.get('reason')}")
                continue
            ph = s.get("phases", {})
            need(ph, ["load_s", "prepare_s", "first_execution_s", "bank_s", "bank_cpu_s", "bank_s_per_trial",
                      "trials_total_s", "bank_cpu_over_wall"], f"{where}.sample.phases")
            rep_ = s.get("worker_report", {})
            if rep_.get("bank_trials") != trials - 1 or len(rep_.get("trial_s", [])) != 1:
                problems.append(f"{where}: worker report without trial 0 alone and a bank of {trials - 1}: {rep_}")
            if "bank_s" in ph and "first_execution_s" in ph and not (
                    close(ph["trials_total_s"], ph["first_execution_s"] + ph["bank_s"]) and
                    close(ph["bank_s_per_trial"], ph["bank_s"] / (trials - 1))):
                problems.append(f"{where}: trials_total_s or bank_s_per_trial inconsistent with bank_s")
        summ = p.get("summary", {})
        for key in ("first_execution_s", "bank_s", "bank_cpu_s", "bank_s_per_trial", "trials_total_s",
                    "process_wall_s", "peak_rss_bytes"):
            if key not in summ:
                problems.append(f"{where}.summary: no {key}")
                continue
            check_stat(summ[key], f"{where}.summary.{key}")
        banks = sorted(s["phases"]["bank_s"] for s in samples if s.get("status") == "ok")
        if banks != sorted(summ.get("bank_s", {}).get("samples", [])):
            problems.append(f"{where}: summary bank_s samples differ from the raw samples")
        need(p.get("figures", {}).get("bank", {}), ["wall_s_per_simulated_s", "synaptic_events_per_s"],
             f"{where}.figures.bank")
    order = {k: [T for _, T, _ in sorted(v)] for k, v in seq.items()}
    if order.get(0) != [1, 2] or order.get(1) != [2, 1]:
        problems.append(f"w1-bank: order by repetition {order} does not alternate")
    for k, v in seq.items():
        if any(o != ("reversed" if k % 2 else "forward") for _, _, o in v):
            problems.append(f"w1-bank: repetition {k} samples mislabelled")
    med = {p.get("threads_requested"): p.get("summary", {}) for p in pts}
    phases = sorted(x.get("phase") for x in w["speedup"])
    if phases != ["bank_s", "first_execution_s", "process_wall_s", "trials_total_s"]:
        problems.append(f"w1-bank.speedup: phases {phases}")
    for x in w["speedup"]:
        ph = x.get("phase")
        a, b = med.get(2, {}).get(ph, {}).get("median"), med.get(1, {}).get(ph, {}).get("median")
        if x.get("threads") != 2 or x.get("baseline_threads") != 1 or not a or not b or not (
                close(x.get("median_s"), a) and close(x.get("baseline_median_s"), b) and
                close(x.get("speedup"), b / a) and close(x.get("parallel_efficiency"), b / a / 2)):
            problems.append(f"w1-bank.speedup {ph}: inconsistent with the medians: {x}")
for p in problems:
    print("PROBLEM:", p)
print(f"bank receipt checked: {len(problems)} problems")
sys.exit(1 if problems else 0)
EOF
echo PASS
