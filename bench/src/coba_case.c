/* The COBA workload of `brainlesslab bench` (docs/benchmark.md, "COBA"):
 * issue 23's benchmark network, the Vogels-Abbott COBA network of Brian2's
 * examples/COBA.py (4,000 neurons, 2 % connectivity, 80/20 exc/inh,
 * conductance-based, exponential_euler), as an equation-model connectome
 * plan run by `brainlesslab simulate --plan`, against Brian2 2.5.1 C++
 * standalone on one thread (bench/peers/brian2_coba.py), in the same run.
 *
 * The network is made once, untimed, by bench/peers/coba_network.py (seeded
 * NumPy; cached under WORK/inputs) for both sides: the connectome with its
 * weights, the shared start (400 neurons spike at step 0) and our plan.
 *
 * Qualification first (untimed, one worker per case, each with its own
 * empty code cache): our reference backend's run is the reference; our cpu
 * run must equal it byte for byte (spike events of every trial, counts,
 * final v and g); Brian2 must give the same spike events and counts (the
 * first differing event is reported when it does not) and a final v within
 * 1e-12 V. Then every qualified case runs in --repetitions fresh processes,
 * the case order reversed on odd repetitions, each worker's outputs compared
 * again; a worker runs `trials` identical trials (trial 0 cold, the others
 * warm). Phases as in the connectome workloads (load, prepare, compile of
 * the generated C, or Brian2's build, apart; first and warm executions, wall
 * and CPU), raw samples, medians, ratios of the medians. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/engine.h"
#include "brainlesslab/npy.h"
#include "coba_case.h"

static const bl_bench_coba_def full_defs[] = {
    {"coba", "COBA (Vogels-Abbott, 4,000 neurons, 2 %), 1 s: ours (equations, cpu) vs Brian2 C++ standalone",
     "Brian2's examples/COBA.py network (4,000 neurons, p = 0.02 without self-edges, 80/20 exc/inh, "
     "conductance-based, exponential_euler, we = 6 nS, wi = 67 nS, refractory 5 ms) on a seeded connectome "
     "(bench/peers/coba_network.py, numpy default_rng(20261202)); delay one step (0.1 ms); start: v = El, "
     "ge = gi = 0, the same 400 neurons spike at step 0; self-sustained activity. Ours: the model as equations "
     "in a connectome plan (generated C), simulate --plan; Brian2 2.5.1 C++ standalone, one thread. 1000 ms; "
     "3 trials per worker (trial 0 cold, trials 1-2 warm). Target (issue 23): >= 5x Brian2.",
     1000.0, 3, 5.0},
    {"coba-10s", "COBA (Vogels-Abbott, 4,000 neurons, 2 %), 10 s: ours (equations, cpu) vs Brian2 C++ standalone",
     "The coba workload's network, start and cases, 10000 ms; 2 trials per worker (trial 0 cold, trial 1 warm). "
     "Target (issue 23): >= 5x Brian2.",
     10000.0, 2, 5.0},
};
static const bl_bench_coba_def quick_defs[] = {
    {"coba", "COBA (quick: 100 ms)", "quick version of coba: the same network and start, 100 ms, 2 trials", 100.0,
     2, 5.0},
    {"coba-10s", "COBA (quick: 200 ms)", "quick version of coba-10s: the same network and start, 200 ms, 2 trials",
     200.0, 2, 5.0},
};

const bl_bench_coba_def *bl_bench_coba_find(const char *id, int quick)
{
    const bl_bench_coba_def *d = quick ? quick_defs : full_defs;
    for (size_t k = 0; k < sizeof full_defs / sizeof full_defs[0]; k++)
        if (!strcmp(d[k].id, id))
            return &d[k];
    return NULL;
}

enum { C_REF, C_CPU, C_B2, N_COBA };
static const bl_bench_case_def coba_cases[N_COBA] = {
    {"bl-reference", "coba", BL_BENCH_OURS, "reference",
     "brainlesslab simulate --plan coba.toml --backend reference (the reference of this workload; the model from "
     "equations, generated C)",
     0.0, "V", "float64", 0, NULL},
    {"bl-cpu", "coba", BL_BENCH_OURS, "cpu",
     "brainlesslab simulate --plan coba.toml --backend cpu (the model from equations, generated C)", 0.0, "V",
     "float64", 0, NULL},
    {"brian2-cpp", "coba", BL_BENCH_BRIAN2_CPP, NULL,
     "Brian2 C++ standalone (bench/peers/brian2_coba.py; Brian2's default flags -O3 -ffast-math -march=native), "
     "one thread; each trial one execution of the compiled binary: trial_s its whole wall time (start, "
     "reading the synapses and writing results included), trial_cpu_s its network run's CPU time "
     "(results/last_run_info.txt, which Brian2 measures with std::clock() without OpenMP)",
     1e-12, "V", "float64", 1, NULL},
};

static void unavailable(bl_bench_ctx *ctx, const bl_bench_coba_def *d, cJSON *wj, const char *reason)
{
    cJSON_AddStringToObject(wj, "status", "unavailable");
    cJSON_AddStringToObject(wj, "reason", reason);
    bl_bench_logf(ctx, "[%s] unavailable: %s", d->id, reason);
    bl_bench_tablef(ctx, "%s: unavailable: %.300s\n\n", d->id, reason);
}

/* The network (untimed, once): WORK/inputs/coba-n4000-p0.02-s20261202. */
static int make_inputs(bl_bench_ctx *ctx, char *dir, size_t size, char *why, size_t why_len)
{
    snprintf(dir, size, "%s/inputs/coba-n4000-p0.02-s20261202", ctx->work_dir);
    char probe[4400], script[4400], log[4400], parent[4200];
    snprintf(probe, sizeof probe, "%s/network.json", dir);
    if (bl_bench_exists(probe))
        return 1;
    if (!ctx->python_ok) {
        snprintf(why, why_len, "the network is made by bench/peers/coba_network.py: %s", ctx->python_reason);
        return 0;
    }
    snprintf(script, sizeof script, "%s/bench/peers/coba_network.py", ctx->source_dir);
    if (!bl_bench_exists(script)) {
        snprintf(why, why_len, "peer script missing: bench/peers/coba_network.py");
        return 0;
    }
    snprintf(parent, sizeof parent, "%s/inputs", ctx->work_dir);
    bl_error err = {0};
    if (bl_bench_mkdirs(parent, &err)) {
        snprintf(why, why_len, "%s", err.message);
        return 0;
    }
    snprintf(log, sizeof log, "%s.log", dir);
    char *argv[] = {ctx->python, script, "--out", dir, NULL};
    static const char *const env[] = {"PYTHONDONTWRITEBYTECODE=1", NULL};
    bl_bench_proc p;
    if (bl_bench_spawn(argv, env, log, ctx->o->timeout_s > 600 ? ctx->o->timeout_s : 600, &p, &err)) {
        snprintf(why, why_len, "%s", err.message);
        return 0;
    }
    if (!p.exited || p.exit_status != 0 || !bl_bench_exists(probe)) {
        char tail[800];
        bl_bench_worker_failure(&p, 600, log, tail, sizeof tail);
        snprintf(why, why_len, "bench/peers/coba_network.py failed: %s", tail);
        return 0;
    }
    return 1;
}

/* One worker of case c into dir (fresh): ours through simulate --plan, with
 * the code cache beside dir; Brian2 through its peer script. wo->ok: exited 0
 * with a timing report of `trials` trial times. */
static void run_worker(bl_bench_ctx *ctx, const bl_bench_coba_def *d, const char *inputs,
                       const bl_bench_case_def *c, const char *dir, bl_bench_worker *wo)
{
    memset(wo, 0, sizeof *wo);
    bl_error err = {0};
    if (bl_bench_rmtree(dir, &err) || bl_bench_mkdirs(dir, &err)) {
        snprintf(wo->reason, sizeof wo->reason, "%s", err.message);
        return;
    }
    char timing[4300], build[4300], plan[4300], script[4300], cache[4300], cache_env[4400];
    char threads[32], trials[32], dur[64];
    snprintf(wo->out_dir, sizeof wo->out_dir, "%s/out", dir);
    snprintf(wo->log_path, sizeof wo->log_path, "%s/log.txt", dir);
    snprintf(timing, sizeof timing, "%s/timing.json", dir);
    snprintf(build, sizeof build, "%s/brian2-build", dir);
    snprintf(plan, sizeof plan, "%s/coba.toml", inputs);
    snprintf(script, sizeof script, "%s/bench/peers/brian2_coba.py", ctx->source_dir);
    bl_bench_eq_cache_dir(dir, cache, sizeof cache);
    snprintf(cache_env, sizeof cache_env, "BL_CACHE_DIR=%s", cache);
    snprintf(threads, sizeof threads, "%d", c->single_thread ? 1 : ctx->threads);
    snprintf(trials, sizeof trials, "%d", d->trials);
    snprintf(dur, sizeof dur, "%.17g", d->duration_ms);
    char *ours[] = {ctx->self_exe, "simulate", "--plan", plan, "--backend", (char *)c->backend, "--threads", threads,
                    "--trials", trials, "--duration-ms", dur, "--timing", timing, "--out", wo->out_dir, NULL};
    char *peer[] = {ctx->python, script, "--inputs", (char *)inputs, "--ms", dur, "--trials", trials, "--out",
                    wo->out_dir, "--timing", timing, "--build-dir", build, NULL};
    const char *ours_env[] = {cache_env, NULL};
    static const char *const py_env[] = {"PYTHONDONTWRITEBYTECODE=1", "OMP_NUM_THREADS=1", NULL};
    const int is_ours = c->kind == BL_BENCH_OURS;
    if (bl_bench_spawn(is_ours ? ours : peer, is_ours ? ours_env : py_env, wo->log_path, ctx->o->timeout_s,
                       &wo->proc, &err)) {
        snprintf(wo->reason, sizeof wo->reason, "%s", err.message);
        return;
    }
    if (!wo->proc.exited || wo->proc.exit_status != 0) {
        bl_bench_worker_failure(&wo->proc, ctx->o->timeout_s, wo->log_path, wo->reason, sizeof wo->reason);
    } else {
        char *text = NULL;
        if (bl_bench_read_text(timing, &text, &err)) {
            snprintf(wo->reason, sizeof wo->reason, "no timing report: %s", err.message);
        } else {
            wo->timing = cJSON_Parse(text);
            free(text);
            bl_bench_mask_cache_dir(ctx, wo->timing);
            const cJSON *ts = cJSON_GetObjectItemCaseSensitive(wo->timing, "trial_s");
            if (!cJSON_IsArray(ts) || cJSON_GetArraySize(ts) != d->trials)
                snprintf(wo->reason, sizeof wo->reason, "timing report without %d trial_s values", d->trials);
            else
                wo->ok = 1;
        }
    }
    if (!ctx->o->keep_outputs)
        bl_bench_rmtree(build, &err);
}

/* Largest |a - b| over two float64 v.npy of the same shape; INFINITY when
 * they cannot be compared; *bitwise: the bytes are equal. */
static double v_difference(const char *ref_dir, const char *got_dir, int *bitwise)
{
    char pa[4300], pb[4300];
    snprintf(pa, sizeof pa, "%s/v.npy", ref_dir);
    snprintf(pb, sizeof pb, "%s/v.npy", got_dir);
    bl_npy_array x = {0}, y = {0};
    bl_error err = {0};
    double worst = INFINITY;
    *bitwise = 0;
    if (!bl_npy_read(pa, &x, &err) && !bl_npy_read(pb, &y, &err) && x.dtype == BL_DTYPE_FLOAT64 &&
        y.dtype == BL_DTYPE_FLOAT64 && x.count == y.count) {
        const double *u = x.data, *v = y.data;
        worst = 0;
        for (uint64_t i = 0; i < x.count; i++) {
            double dd = fabs(u[i] - v[i]);
            if (!(dd <= worst)) /* larger, or NaN on either side */
                worst = dd == dd ? dd : INFINITY;
        }
        *bitwise = x.count == 0 || !memcmp(x.data, y.data, x.count * sizeof(double));
    }
    bl_npy_free(&x);
    bl_npy_free(&y);
    return worst;
}

/* Compare a worker's outputs with the reference's: 1 when they pass the
 * case's rule (ours: bit for bit; Brian2: events and counts, final v within
 * the tolerance; its g.npy holds ge, ours another variable, so g is not
 * compared). j (may be NULL) gets the comparison. */
static int compare(const bl_bench_case_def *c, const char *ref_dir, const char *got_dir, cJSON *j, char *why,
                   size_t why_len)
{
    bl_bench_cmp m;
    bl_error err = {0};
    if (bl_bench_compare_dirs(ref_dir, got_dir, &m, &err)) {
        snprintf(why, why_len, "outputs unreadable: %s", err.message);
        return 0;
    }
    if (c->kind == BL_BENCH_OURS) {
        if (j)
            cJSON_AddItemToObject(j, "comparison", bl_bench_cmp_json(&m, c));
        int ok = bl_bench_cmp_passes(&m, c);
        if (!ok)
            snprintf(why, why_len, "%s", !m.spikes_equal ? (m.first_difference[0] ? m.first_difference
                                                                                   : "spikes differ")
                                         : !m.counts_equal ? "counts differ"
                                                           : "final state differs");
        return ok;
    }
    int vbit = 0;
    double dv = v_difference(ref_dir, got_dir, &vbit);
    int ok = m.complete && m.spikes_equal && m.counts_equal && dv <= c->state_tol;
    if (j) {
        cJSON *o = cJSON_AddObjectToObject(j, "comparison");
        cJSON_AddNumberToObject(o, "reference_spikes", (double)m.ref_spikes);
        cJSON_AddNumberToObject(o, "candidate_spikes", (double)m.got_spikes);
        cJSON_AddBoolToObject(o, "spikes_equal", m.spikes_equal);
        cJSON_AddBoolToObject(o, "counts_equal", m.counts_equal);
        if (m.first_difference[0])
            cJSON_AddStringToObject(o, "first_difference", m.first_difference);
        cJSON_AddBoolToObject(o, "final_v_bitwise", vbit);
        cJSON_AddNumberToObject(o, "final_v_max_abs_diff", isfinite(dv) ? dv : -1);
        cJSON_AddNumberToObject(o, "final_v_tolerance", c->state_tol);
        cJSON_AddStringToObject(o, "state_units", c->state_units);
        cJSON_AddStringToObject(o, "final_g", "not compared: Brian2's g.npy holds ge, ours the model's "
                                              "second state variable");
    }
    if (!ok)
        snprintf(why, why_len, "%s", !m.spikes_equal ? (m.first_difference[0] ? m.first_difference : "spikes differ")
                                     : !m.counts_equal ? "counts differ"
                                                       : "final v outside the tolerance");
    return ok;
}

static void qualify(bl_bench_ctx *ctx, const bl_bench_coba_def *d, const char *inputs, const char *base,
                    bl_bench_case_run *cr, bl_bench_case_run *ref)
{
    const bl_bench_case_def *c = cr->def;
    const int is_ref = cr == ref;
    char dir[4400], why[1200] = "", cache[4400];
    snprintf(dir, sizeof dir, "%s/%s/qualification", base, c->id);
    cr->qualification = cJSON_CreateObject();
    cJSON *q = cr->qualification;
    if (!is_ref && strcmp(ref->qual_status, "reference") != 0) {
        snprintf(cr->qual_status, sizeof cr->qual_status, "not_run");
        cJSON_AddStringToObject(q, "status", "not_run");
        cJSON_AddStringToObject(q, "reason", "the reference run failed");
        return;
    }
    bl_error err = {0};
    bl_bench_eq_cache_dir(dir, cache, sizeof cache);
    bl_bench_rmtree(cache, &err); /* the qualification compiles cold */
    bl_bench_logf(ctx, "[%s] qualification: %s ...", d->id, c->id);
    bl_bench_worker wo;
    run_worker(ctx, d, inputs, c, dir, &wo);
    cJSON_AddNumberToObject(q, "worker_wall_s", wo.proc.wall_s);
    cJSON_AddNumberToObject(q, "worker_peak_rss_bytes", (double)wo.proc.peak_rss_bytes);
    const char *status;
    if (!wo.ok) {
        status = wo.proc.timed_out ? "timeout" : "error";
        snprintf(why, sizeof why, "%s", wo.reason);
        if (wo.proc.timed_out)
            cJSON_AddNumberToObject(q, "censored_at_s", ctx->o->timeout_s);
    } else if (is_ref) {
        status = "reference";
        snprintf(cr->ref_out, sizeof cr->ref_out, "%s", wo.out_dir);
    } else {
        status = compare(c, ref->ref_out, wo.out_dir, q, why, sizeof why) ? "passed" : "failed";
        if (!ctx->o->keep_outputs)
            bl_bench_rmtree(wo.out_dir, &err);
    }
    snprintf(cr->qual_status, sizeof cr->qual_status, "%s", status);
    cJSON_AddStringToObject(q, "status", status);
    if (why[0])
        cJSON_AddStringToObject(q, "reason", why);
    cJSON_AddStringToObject(q, "basis", is_ref ? "this is the reference of the workload: the other cases are "
                                                 "compared with its outputs"
                                      : c->kind == BL_BENCH_OURS ? "spike events of every trial, per-neuron counts "
                                                                   "and final v, g bit for bit equal to the reference's"
                                      : "spike events (trial, step, neuron) and per-neuron counts equal to the "
                                        "reference's (the first differing event reported); final v within the "
                                        "tolerance");
    if (wo.timing) {
        cJSON_AddItemToObject(q, "worker_report", cJSON_Duplicate(wo.timing, 1));
        const cJSON *cs = cJSON_GetObjectItemCaseSensitive(wo.timing, "compile_s");
        if (cJSON_IsNumber(cs)) { /* the cold compile: an empty code cache */
            cr->compile_cold = cJSON_CreateObject();
            cJSON_AddNumberToObject(cr->compile_cold, "compile_s", cs->valuedouble);
            const cJSON *cg = cJSON_GetObjectItemCaseSensitive(wo.timing, "model_codegen");
            cJSON_AddItemToObject(cr->compile_cold, "model_codegen", cg ? cJSON_Duplicate(cg, 1) : cJSON_CreateNull());
        }
    }
    bl_bench_logf(ctx, "[%s] qualification: %s %s%s%s", d->id, c->id, status, why[0] ? ": " : "", why);
    bl_bench_worker_free(&wo);
}

static void time_sample(bl_bench_ctx *ctx, const bl_bench_coba_def *d, const char *inputs, const char *base,
                        bl_bench_case_run *cr, const bl_bench_case_run *ref, int rep, int position, int reversed)
{
    const bl_bench_case_def *c = cr->def;
    char dir[4400], why[1200] = "";
    snprintf(dir, sizeof dir, "%s/%s/rep%d", base, c->id, rep);
    bl_bench_worker wo;
    run_worker(ctx, d, inputs, c, dir, &wo);
    cJSON *s = bl_bench_sample_json(rep, position, reversed);
    const char *status = "ok";
    if (!wo.ok) {
        status = wo.proc.timed_out ? "timeout" : "failed";
        snprintf(why, sizeof why, "%s", wo.reason);
    } else {
        char diff[1100] = "";
        int match = compare(c, ref->ref_out, wo.out_dir, NULL, diff, sizeof diff);
        cJSON_AddBoolToObject(s, "outputs_match_reference", match);
        if (!match) {
            status = strncmp(diff, "outputs unreadable", 18) ? "mismatch" : "failed";
            snprintf(why, sizeof why, "%s%s", strcmp(status, "mismatch") ? "" : "outputs differ from the reference: ",
                     diff);
        }
    }
    bl_error err = {0};
    if (!ctx->o->keep_outputs)
        bl_bench_rmtree(wo.out_dir, &err);
    cJSON_AddStringToObject(s, "status", status);
    if (why[0])
        cJSON_AddStringToObject(s, "reason", why);
    bl_bench_process_json(ctx, &wo.proc, s);
    bl_bench_record_sample(ctx, cr, s, !strcmp(status, "ok") ? wo.timing : NULL, &wo.proc);
    if (!strcmp(status, "ok"))
        cr->n_ok++;
    else if (!strcmp(status, "timeout"))
        cr->n_timeout++;
    else if (!strcmp(status, "mismatch"))
        cr->n_mismatch++;
    else
        cr->n_failed++;
    cJSON_AddItemToArray(cr->samples, s);
    bl_bench_logf(ctx, "[%s] rep %d/%d %-14s %s%s%s", d->id, rep + 1, ctx->o->repetitions, c->id, status,
                  why[0] ? ": " : "", why);
    bl_bench_worker_free(&wo);
}

static void set_availability(bl_bench_ctx *ctx, bl_bench_case_run *cr)
{
    const bl_bench_case_def *c = cr->def;
    char script[4300];
    snprintf(script, sizeof script, "%s/bench/peers/brian2_coba.py", ctx->source_dir);
    cr->available = 1;
    if (c->kind == BL_BENCH_OURS) {
        int found = 0;
        for (const char *const *b = bl_engine_backends(); *b; b++)
            found |= !strcmp(*b, c->backend);
        if (!found) {
            cr->available = 0;
            snprintf(cr->reason, sizeof cr->reason, "backend '%s' is not compiled into this binary", c->backend);
        }
    } else if (ctx->sanitized) {
        cr->available = 0;
        snprintf(cr->reason, sizeof cr->reason, "skipped: BL_SANITIZED=1 (a sanitized test build; a Brian2 C++ "
                 "standalone build takes minutes per fresh worker)");
    } else if (ctx->o->quick) {
        cr->available = 0;
        snprintf(cr->reason, sizeof cr->reason, "skipped in --quick: a Brian2 C++ standalone build takes one to "
                 "two minutes per fresh worker");
    } else if (!ctx->python_ok) {
        cr->available = 0;
        snprintf(cr->reason, sizeof cr->reason, "%s", ctx->python_reason);
    } else if (!bl_bench_exists(script)) {
        cr->available = 0;
        snprintf(cr->reason, sizeof cr->reason, "peer script missing: bench/peers/brian2_coba.py");
    } else if (!ctx->brian2_versions) {
        cr->available = 0;
        snprintf(cr->reason, sizeof cr->reason, "%s (Debian: apt-get install python3-brian)", ctx->brian2_reason);
    }
    snprintf(cr->qual_status, sizeof cr->qual_status, "%s", cr->available ? "not_run" : "unavailable");
}

static double median_of(const bl_bench_dvec *v) { return bl_bench_median(v->v, v->n); }

/* Spikes (per trial) and synaptic events of the reference's outputs. */
static void count_reference(const char *ref_out, const char *inputs, const bl_bench_coba_def *d, cJSON *wj,
                            uint64_t *edges_out, double *syn_per_trial)
{
    char conn[4300];
    snprintf(conn, sizeof conn, "%s/conn", inputs);
    bl_connectome *g = NULL;
    bl_error err = {0};
    *edges_out = 0;
    *syn_per_trial = NAN;
    cJSON *counts = cJSON_AddObjectToObject(wj, "counts");
    if (bl_connectome_load(conn, &g, &err)) {
        cJSON_AddStringToObject(counts, "error", err.message);
        return;
    }
    uint64_t n = bl_connectome_n_neurons(g), spikes = 0, syn = 0;
    *edges_out = bl_connectome_n_edges(g);
    if (bl_bench_count_events(ref_out, bl_connectome_offsets(g), n, &spikes, &syn, &err)) {
        cJSON_AddStringToObject(counts, "error", err.message);
    } else {
        const double sim_s = d->duration_ms / 1000.0;
        *syn_per_trial = (double)syn / d->trials;
        cJSON_AddNumberToObject(counts, "neurons", (double)n);
        cJSON_AddNumberToObject(counts, "edges", (double)*edges_out);
        cJSON_AddNumberToObject(counts, "steps_per_trial", d->duration_ms / 0.1);
        cJSON_AddNumberToObject(counts, "neuron_steps_per_trial", (double)n * (d->duration_ms / 0.1));
        cJSON_AddNumberToObject(counts, "spikes_per_trial", (double)spikes / d->trials);
        cJSON_AddNumberToObject(counts, "spikes_per_simulated_s", (double)spikes / d->trials / sim_s);
        cJSON_AddNumberToObject(counts, "mean_rate_hz", (double)spikes / d->trials / sim_s / (double)n);
        cJSON_AddNumberToObject(counts, "synaptic_events_per_trial", (double)syn / d->trials);
        cJSON_AddStringToObject(counts, "source", "the reference backend's qualification run");
    }
    bl_connectome_destroy(g);
}

void bl_bench_coba_run(bl_bench_ctx *ctx, const bl_bench_coba_def *d, cJSON *wj)
{
    const double t0 = bl_bench_now();
    cJSON_AddStringToObject(wj, "kind", "coba");
    char inputs[4200], why[1400], base[4400];
    if (!make_inputs(ctx, inputs, sizeof inputs, why, sizeof why)) {
        unavailable(ctx, d, wj, why);
        return;
    }
    snprintf(base, sizeof base, "%s/%s", ctx->runs_dir, d->id);
    bl_error err = {0};
    if (bl_bench_mkdirs(base, &err)) {
        unavailable(ctx, d, wj, err.message);
        return;
    }
    cJSON_AddNumberToObject(wj, "input_preparation_s", bl_bench_now() - t0);
    const double sim_s = d->duration_ms / 1000.0;
    cJSON *inp = cJSON_AddObjectToObject(wj, "inputs");
    char path[4400], *text = NULL;
    snprintf(path, sizeof path, "%s/network.json", inputs);
    cJSON *net = bl_bench_read_text(path, &text, &err) ? NULL : cJSON_Parse(text);
    free(text);
    cJSON_AddItemToObject(inp, "network", net ? net : cJSON_CreateNull());
    cJSON_AddStringToObject(inp, "made_by", "bench/peers/coba_network.py (cached under WORK/inputs)");
    cJSON_AddStringToObject(inp, "plan", "coba.toml beside the connectome: [model] as equations, [[stimulus]] "
                                         "mode = \"force\" of the 400 start neurons at step 0");
    cJSON_AddNumberToObject(inp, "duration_ms", d->duration_ms);
    cJSON_AddNumberToObject(inp, "simulated_s_per_trial", sim_s);
    cJSON_AddNumberToObject(inp, "trials_per_worker", d->trials);
    cJSON_AddNumberToObject(inp, "dt_ms", 0.1);

    bl_bench_case_run runs[N_COBA];
    memset(runs, 0, sizeof runs);
    for (int i = 0; i < N_COBA; i++) {
        runs[i].def = &coba_cases[i];
        runs[i].timed = 1;
        runs[i].samples = cJSON_CreateArray();
        set_availability(ctx, &runs[i]);
    }
    /* Qualification: the reference first. */
    for (int i = 0; i < N_COBA; i++)
        if (runs[i].available)
            qualify(ctx, d, inputs, base, &runs[i], &runs[C_REF]);
    uint64_t edges = 0;
    double syn = NAN;
    if (!strcmp(runs[C_REF].qual_status, "reference"))
        count_reference(runs[C_REF].ref_out, inputs, d, wj, &edges, &syn);
    /* Timing: fresh workers, the case order reversed on odd repetitions. */
    int order[N_COBA], n_order = 0;
    for (int i = 0; i < N_COBA; i++)
        if (!strcmp(runs[i].qual_status, "reference") || !strcmp(runs[i].qual_status, "passed"))
            order[n_order++] = i;
    for (int rep = 0; rep < ctx->o->repetitions; rep++) {
        int reversed = rep % 2;
        for (int k = 0; k < n_order; k++)
            time_sample(ctx, d, inputs, base, &runs[order[reversed ? n_order - 1 - k : k]], &runs[C_REF], rep, k,
                        reversed);
    }

    /* Per case: what every case of the connectome workloads holds. */
    cJSON *cases = cJSON_AddArrayToObject(wj, "cases");
    for (int i = 0; i < N_COBA; i++) {
        bl_bench_case_run *cr = &runs[i];
        cJSON *c = cJSON_CreateObject();
        cJSON_AddItemToArray(cases, c);
        cJSON_AddStringToObject(c, "id", cr->def->id);
        cJSON_AddStringToObject(c, "kind", cr->def->kind == BL_BENCH_OURS ? "ours" : "peer");
        cJSON_AddStringToObject(c, "implementation", cr->def->implementation);
        char cwhy[1200];
        const char *status = bl_bench_case_status(cr, cwhy, sizeof cwhy);
        cJSON_AddStringToObject(c, "status", status);
        if (cwhy[0])
            cJSON_AddStringToObject(c, "reason", cwhy);
        cJSON_AddStringToObject(c, "dtype", cr->def->dtype);
        cJSON_AddNumberToObject(c, "threads_requested", cr->def->single_thread ? 1 : ctx->threads);
        cJSON *sum = bl_bench_case_common_json(ctx, cr, c);
        if (cr->def->kind == BL_BENCH_BRIAN2_CPP)
            cJSON_AddItemToObject(sum, "build_s", bl_bench_stat_json(cr->build.v, cr->build.n));
        cJSON *fig = cJSON_AddObjectToObject(c, "figures");
        const bl_bench_dvec *ph[4] = {&cr->first, &cr->warm, &cr->first_cpu, &cr->warm_cpu};
        const char *names[4] = {"first_execution_s_per_simulated_s", "warm_execution_s_per_simulated_s",
                                "first_execution_cpu_s_per_simulated_s", "warm_execution_cpu_s_per_simulated_s"};
        for (int k = 0; k < 4; k++)
            if (ph[k]->n)
                cJSON_AddNumberToObject(fig, names[k], median_of(ph[k]) / sim_s);
        if (cr->warm.n && isfinite(syn)) {
            cJSON_AddItemToObject(fig, "warm_synaptic_events_per_s", bl_bench_rate_json(syn, &cr->warm));
            cJSON_AddItemToObject(fig, "warm_neuron_steps_per_s",
                                  bl_bench_rate_json(4000.0 * d->duration_ms / 0.1, &cr->warm));
        }
    }
    /* Ratios of the medians, same run: bl-cpu against Brian2 and against
     * the reference backend; phases wall and CPU. */
    cJSON *ratios = cJSON_AddArrayToObject(wj, "ratios");
    const int pairs[2][2] = {{C_CPU, C_B2}, {C_CPU, C_REF}};
    for (int p = 0; p < 2; p++) {
        const bl_bench_case_run *A = &runs[pairs[p][0]], *B = &runs[pairs[p][1]];
        const bl_bench_dvec *pa[5] = {&A->first, &A->warm, &A->wall, &A->first_cpu, &A->warm_cpu};
        const bl_bench_dvec *pb[5] = {&B->first, &B->warm, &B->wall, &B->first_cpu, &B->warm_cpu};
        const char *names[5] = {"first_execution_s", "warm_execution_s", "process_wall_s", "first_execution_cpu_s",
                                "warm_execution_cpu_s"};
        for (int k = 0; k < 5; k++) {
            if (!A->n_ok || !B->n_ok || !pa[k]->n || !pb[k]->n)
                continue;
            double ma = median_of(pa[k]), mb = median_of(pb[k]);
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "a", A->def->id);
            cJSON_AddStringToObject(r, "b", B->def->id);
            cJSON_AddStringToObject(r, "b_kind", B->def->kind == BL_BENCH_OURS ? "ours" : "peer");
            cJSON_AddStringToObject(r, "phase", names[k]);
            cJSON_AddNumberToObject(r, "a_median_s", ma);
            cJSON_AddNumberToObject(r, "b_median_s", mb);
            cJSON_AddNumberToObject(r, "a_over_b", mb > 0 ? ma / mb : 0);
            cJSON_AddNumberToObject(r, "speedup_of_a", ma > 0 ? mb / ma : 0);
            cJSON_AddItemToArray(ratios, r);
        }
    }
    /* Issue 23's target: Brian2's warm execution over ours >= 5. */
    const bl_bench_case_run *cpu = &runs[C_CPU], *b2 = &runs[C_B2];
    cJSON *t = cJSON_AddObjectToObject(wj, "target");
    cJSON_AddStringToObject(t, "what", "issue 23: ours (cpu, one thread) at least 5x Brian2 C++ standalone (one "
                                       "thread): Brian2's warm execution median over ours");
    cJSON_AddNumberToObject(t, "target_ratio", d->target_ratio);
    const int both = cpu->warm.n && b2->warm.n;
    const double rw = both ? median_of(&b2->warm) / median_of(&cpu->warm) : NAN;
    const double rc = cpu->warm_cpu.n && b2->warm_cpu.n ? median_of(&b2->warm_cpu) / median_of(&cpu->warm_cpu) : NAN;
    cJSON_AddNumberToObject(t, "brian2_over_ours_wall", isfinite(rw) ? rw : -1);
    cJSON_AddNumberToObject(t, "brian2_over_ours_cpu", isfinite(rc) ? rc : -1);
    cJSON_AddStringToObject(t, "note", "Brian2's trial CPU time is its network run's (last_run_info.txt: "
                                       "std::clock(), processor time); its trial wall time is the binary's whole "
                                       "run (start and file I/O included), an upper bound; on a loaded machine "
                                       "read the CPU ratio");
    if (both)
        cJSON_AddBoolToObject(t, "within_target", rw >= d->target_ratio);
    else
        cJSON_AddNullToObject(t, "within_target");
    int all = 1;
    for (int i = 0; i < N_COBA; i++)
        all &= !runs[i].available || runs[i].n_ok > 0;
    cJSON_AddStringToObject(wj, "status", strcmp(runs[C_REF].qual_status, "reference") ? "failed"
                                          : all ? "completed" : "partial");
    cJSON_AddNumberToObject(wj, "wall_s", bl_bench_now() - t0);

    bl_bench_tablef(ctx, "%s: %s\n    %.0f ms x %d trials per worker; reference: %s\n", d->id, d->title,
                    d->duration_ms, d->trials, runs[C_REF].qual_status);
    bl_bench_tablef(ctx, "    %-14s %-22s %8s %8s %9s %9s %9s %8s\n", "case", "status", "first_s", "warm_s",
                    "warm_cpu", "s/sim_s", "compile", "build_s");
    for (int i = 0; i < N_COBA; i++) {
        const bl_bench_case_run *cr = &runs[i];
        char cwhy[1200];
        const char *st = bl_bench_case_status(cr, cwhy, sizeof cwhy);
        const double vals[6] = {median_of(&cr->first), median_of(&cr->warm), median_of(&cr->warm_cpu),
                                median_of(&cr->warm) / sim_s, median_of(&cr->compile), median_of(&cr->build)};
        char f[6][32];
        for (int k = 0; k < 6; k++) /* "-": not measured (or not this case's phase) */
            snprintf(f[k], sizeof f[k], isfinite(vals[k]) ? "%.3g" : "-", vals[k]);
        bl_bench_tablef(ctx, "    %-14s %-22s %8s %8s %9s %9s %9s %8s\n", cr->def->id, st, f[0], f[1], f[2], f[3],
                        f[4], f[5]);
        if (cwhy[0] && strcmp(st, "measured") != 0)
            bl_bench_tablef(ctx, "      (%.150s)\n", cwhy);
    }
    if (both)
        bl_bench_tablef(ctx, "    Brian2 / ours (warm execution): %.3gx wall, %.3gx CPU (target >= %.0fx: %s)\n\n", rw,
                        rc, d->target_ratio, rw >= d->target_ratio ? "met" : "NOT met");
    else
        bl_bench_tablef(ctx, "    Brian2 / ours: not measured (target >= %.0fx)\n\n", d->target_ratio);
    for (int i = 0; i < N_COBA; i++) {
        if (runs[i].ref_out[0] && !ctx->o->keep_outputs)
            bl_bench_rmtree(runs[i].ref_out, &err);
        bl_bench_case_run_free(&runs[i]);
    }
}
