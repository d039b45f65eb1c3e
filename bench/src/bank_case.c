/* The trial-bank workload of `brainlesslab bench` (docs/benchmark.md, "Trial
 * bank (w1-bank)"): the issue-28 question of how long 30 trials of w1 take on
 * T threads, and how much a second thread adds, measured in one run.
 *
 * `simulate --timing` alone runs every trial as its own engine call, so the
 * cpu backend never runs trials side by side there (w1's warm times are one
 * trial on T threads). Here each bl-cpu worker runs trial 0 alone (the cold
 * execution) and then trials 1..T-1 in one engine call (`--bank`), where the
 * cpu backend gives whole trials to threads; the bank is timed as a whole
 * (wall and process CPU seconds), since its trials overlap.
 *
 * Qualification: the shiu2024 reference backend runs the same trials one
 * engine call each (untimed); every thread count's bank must reproduce its
 * outputs bit for bit (events, counts, final v and g), in qualification and in
 * every timed worker. Thread counts are the points; they are timed in fresh
 * workers, forward order on even repetitions and reversed on odd ones, and
 * their speedups are taken against the first count of the list, all in the
 * same run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_case.h"
#include "brainlesslab/engine.h"

typedef struct bank_point {
    int threads;
    int timed;                 /* bl-cpu selected by --cases */
    char qual_status[32];      /* passed failed timeout error not_run unavailable not_selected */
    char reason[1200];
    cJSON *qualification;
    cJSON *samples;
    bl_bench_dvec load, prepare, first, bank, bank_cpu, per_trial, total, cpu_ratio, wall, rss;
    int n_ok, n_timeout, n_failed, n_mismatch;
    char observed_backend[64];
    int observed_threads;
} bank_point;

typedef struct bank_ref {
    char status[32]; /* reference timeout error unavailable */
    char reason[1200];
    char out[4200];
    uint64_t spikes, syn_events;
    cJSON *qualification;
} bank_ref;

static const bl_bench_case_def *case_def(const char *id)
{
    for (int i = 0; i < BL_BENCH_N_CASES; i++)
        if (!strcmp(bl_bench_case_defs[i].id, id))
            return &bl_bench_case_defs[i];
    return NULL;
}

static int backend_compiled(const char *name)
{
    for (const char *const *b = bl_engine_backends(); *b; b++)
        if (!strcmp(*b, name))
            return 1;
    return 0;
}

static double num_or_nan(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void discard(const bl_bench_ctx *ctx, const char *dir)
{
    if (ctx->o->keep_outputs)
        return;
    bl_error ignore = {0};
    bl_bench_rmtree(dir, &ignore);
}

/* The reference: the shiu2024 reference backend, every trial its own engine
 * call (the path the other workloads qualify against), untimed. */
static void run_reference(bl_bench_ctx *ctx, const bl_bench_workload_def *w, const bl_bench_inputs *in,
                          const char *run_dir, bank_ref *ref)
{
    const bl_bench_case_def *c = case_def("bl-reference");
    ref->qualification = cJSON_CreateObject();
    cJSON *q = ref->qualification;
    cJSON_AddStringToObject(q, "case", c->id);
    cJSON_AddStringToObject(q, "mode", "sequential: every trial its own engine call (simulate --timing)");
    if (!backend_compiled(c->backend)) {
        snprintf(ref->status, sizeof ref->status, "unavailable");
        snprintf(ref->reason, sizeof ref->reason, "backend '%s' is not compiled into this binary", c->backend);
    } else {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/%s/qualification", run_dir, c->id);
        bl_bench_logf(ctx, "[%s] qualification: %s (the reference) ...", w->id, c->id);
        bl_bench_worker wo;
        bl_error err = {0};
        bl_status st = bl_bench_run_worker_bank(ctx, w, in, c, dir, ctx->threads, 0, &wo, &err);
        cJSON_AddNumberToObject(q, "worker_wall_s", wo.proc.wall_s);
        cJSON_AddNumberToObject(q, "worker_peak_rss_bytes", (double)wo.proc.peak_rss_bytes);
        if (st) {
            snprintf(ref->status, sizeof ref->status, "error");
            snprintf(ref->reason, sizeof ref->reason, "%s", err.message);
        } else if (!wo.ok) {
            snprintf(ref->status, sizeof ref->status, "%s", wo.proc.timed_out ? "timeout" : "error");
            snprintf(ref->reason, sizeof ref->reason, "%s", wo.reason);
            if (wo.proc.timed_out)
                cJSON_AddNumberToObject(q, "censored_at_s", ctx->o->timeout_s);
        } else if (bl_bench_count_events(wo.out_dir, in->offsets, in->n_neurons, &ref->spikes, &ref->syn_events,
                                          &err)) {
            snprintf(ref->status, sizeof ref->status, "error");
            snprintf(ref->reason, sizeof ref->reason, "%s", err.message);
        } else {
            snprintf(ref->status, sizeof ref->status, "reference");
            snprintf(ref->out, sizeof ref->out, "%s", wo.out_dir);
            cJSON_AddNumberToObject(q, "spikes", (double)ref->spikes);
            cJSON_AddNumberToObject(q, "synaptic_events", (double)ref->syn_events);
        }
        if (wo.timing)
            cJSON_AddItemToObject(q, "worker_report", cJSON_Duplicate(wo.timing, 1));
        bl_bench_worker_free(&wo);
    }
    cJSON_AddStringToObject(q, "status", ref->status);
    if (ref->reason[0])
        cJSON_AddStringToObject(q, "reason", ref->reason);
    bl_bench_logf(ctx, "[%s] qualification: bl-reference %s%s%s", w->id, ref->status, ref->reason[0] ? ": " : "",
                  ref->reason);
}

/* The outputs of a bank worker against the reference's: *readable, and in
 * why "" when they match bit for bit, else why not. */
static void compare(const bank_ref *ref, const bl_bench_worker *wo, const bl_bench_case_def *c, bl_bench_cmp *m,
                    int *readable, char *why, size_t size)
{
    bl_error err = {0};
    why[0] = '\0';
    *readable = 0;
    if (bl_bench_compare_dirs(ref->out, wo->out_dir, m, &err)) {
        snprintf(why, size, "outputs unreadable: %s", err.message);
        return;
    }
    *readable = 1;
    if (!bl_bench_cmp_passes(m, c))
        snprintf(why, size, "%s", !m->spikes_equal ? (m->first_difference[0] ? m->first_difference
                                                                              : "spikes differ")
                                  : !m->counts_equal ? "counts differ"
                                                     : "final state differs");
}

static void qualify_point(bl_bench_ctx *ctx, const bl_bench_workload_def *w, const bl_bench_inputs *in,
                          const bank_ref *ref, const char *run_dir, bank_point *p)
{
    const bl_bench_case_def *c = case_def("bl-cpu");
    p->qualification = cJSON_CreateObject();
    cJSON *q = p->qualification;
    const char *status;
    if (strcmp(ref->status, "reference") != 0) {
        status = "not_run";
        snprintf(p->reason, sizeof p->reason, "the reference run failed: %s", ref->reason);
    } else {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/bl-cpu-t%d/qualification", run_dir, p->threads);
        bl_bench_logf(ctx, "[%s] qualification: bl-cpu bank, %d thread(s) ...", w->id, p->threads);
        bl_bench_worker wo;
        bl_error err = {0};
        bl_status st = bl_bench_run_worker_bank(ctx, w, in, c, dir, p->threads, 1, &wo, &err);
        cJSON_AddNumberToObject(q, "worker_wall_s", wo.proc.wall_s);
        cJSON_AddNumberToObject(q, "worker_peak_rss_bytes", (double)wo.proc.peak_rss_bytes);
        if (st) {
            status = "error";
            snprintf(p->reason, sizeof p->reason, "%s", err.message);
        } else if (!wo.ok) {
            status = wo.proc.timed_out ? "timeout" : "error";
            snprintf(p->reason, sizeof p->reason, "%s", wo.reason);
            if (wo.proc.timed_out)
                cJSON_AddNumberToObject(q, "censored_at_s", ctx->o->timeout_s);
        } else {
            bl_bench_cmp m;
            int readable;
            compare(ref, &wo, c, &m, &readable, p->reason, sizeof p->reason);
            if (readable)
                cJSON_AddItemToObject(q, "comparison", bl_bench_cmp_json(&m, c));
            status = !readable ? "error" : p->reason[0] ? "failed" : "passed";
        }
        if (wo.timing)
            cJSON_AddItemToObject(q, "worker_report", cJSON_Duplicate(wo.timing, 1));
        discard(ctx, wo.out_dir);
        bl_bench_worker_free(&wo);
    }
    snprintf(p->qual_status, sizeof p->qual_status, "%s", status);
    cJSON_AddStringToObject(q, "status", status);
    if (p->reason[0])
        cJSON_AddStringToObject(q, "reason", p->reason);
    cJSON_AddStringToObject(q, "basis", "the bank's spike events (trial, step, neuron), per-neuron counts and final "
                                        "v, g bit for bit equal to the reference backend's, whose trials ran one "
                                        "engine call each");
    bl_bench_logf(ctx, "[%s] qualification: bl-cpu %d thread(s) %s%s%s", w->id, p->threads, status,
                  p->reason[0] ? ": " : "", p->reason);
}

/* The labelled phases of one ok bank worker into the sample and the point. */
static void record(bank_point *p, cJSON *s, const cJSON *t, const bl_bench_proc *proc)
{
    cJSON *ph = cJSON_AddObjectToObject(s, "phases");
    double load = num_or_nan(t, "load_s"), prep = num_or_nan(t, "prepare_s");
    const cJSON *t0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(t, "trial_s"), 0);
    double first = cJSON_IsNumber(t0) ? t0->valuedouble : NAN;
    double bank = num_or_nan(t, "bank_s"), bank_cpu = num_or_nan(t, "bank_cpu_s");
    double n = num_or_nan(t, "bank_trials");
    const struct { const char *name; double x; bl_bench_dvec *d; } v[] = {
        {"load_s", load, &p->load},
        {"prepare_s", prep, &p->prepare},
        {"first_execution_s", first, &p->first},
        {"bank_s", bank, &p->bank},
        {"bank_cpu_s", bank_cpu, &p->bank_cpu},
        {"bank_s_per_trial", bank / n, &p->per_trial},
        {"trials_total_s", first + bank, &p->total},
        {"bank_cpu_over_wall", bank > 0 ? bank_cpu / bank : NAN, &p->cpu_ratio},
    };
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        if (!isfinite(v[k].x))
            continue;
        cJSON_AddNumberToObject(ph, v[k].name, v[k].x);
        bl_bench_dvec_push(v[k].d, v[k].x);
    }
    bl_bench_dvec_push(&p->wall, proc->wall_s);
    bl_bench_dvec_push(&p->rss, (double)proc->peak_rss_bytes);
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(t, "backend");
    if (cJSON_IsString(b)) {
        cJSON_AddStringToObject(s, "backend_observed", b->valuestring);
        snprintf(p->observed_backend, sizeof p->observed_backend, "%s", b->valuestring);
    }
    double th = num_or_nan(t, "threads");
    if (isfinite(th)) {
        cJSON_AddNumberToObject(s, "threads_observed", th);
        p->observed_threads = (int)th;
    }
    cJSON_AddItemToObject(s, "worker_report", cJSON_Duplicate(t, 1));
}

static void time_point(bl_bench_ctx *ctx, const bl_bench_workload_def *w, const bl_bench_inputs *in,
                       const bank_ref *ref, const char *run_dir, bank_point *p, int rep, int position, int reversed)
{
    const bl_bench_case_def *c = case_def("bl-cpu");
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/bl-cpu-t%d/rep%d", run_dir, p->threads, rep);
    bl_bench_worker wo;
    bl_error err = {0};
    bl_status st = bl_bench_run_worker_bank(ctx, w, in, c, dir, p->threads, 1, &wo, &err);
    cJSON *s = bl_bench_sample_json(rep, position, reversed);
    cJSON_AddNumberToObject(s, "threads", p->threads);
    const char *status = "ok";
    char reason[1200] = "";
    if (st) {
        status = "failed";
        snprintf(reason, sizeof reason, "%s", err.message);
    } else if (!wo.ok) {
        status = wo.proc.timed_out ? "timeout" : "failed";
        snprintf(reason, sizeof reason, "%s", wo.reason);
    } else {
        bl_bench_cmp m;
        int readable;
        char why[1000];
        compare(ref, &wo, c, &m, &readable, why, sizeof why);
        if (!readable) {
            status = "failed";
            snprintf(reason, sizeof reason, "%s", why);
        } else {
            cJSON_AddBoolToObject(s, "outputs_match_reference", why[0] == '\0');
            if (why[0]) {
                status = "mismatch";
                snprintf(reason, sizeof reason, "outputs differ from the reference: %s", why);
            }
        }
    }
    discard(ctx, wo.out_dir);
    cJSON_AddStringToObject(s, "status", status);
    if (reason[0])
        cJSON_AddStringToObject(s, "reason", reason);
    bl_bench_process_json(ctx, &wo.proc, s);
    if (!strcmp(status, "ok")) {
        record(p, s, wo.timing, &wo.proc);
        p->n_ok++;
    } else if (!strcmp(status, "timeout")) {
        p->n_timeout++;
    } else if (!strcmp(status, "mismatch")) {
        p->n_mismatch++;
    } else {
        p->n_failed++;
    }
    cJSON_AddItemToArray(p->samples, s);
    bl_bench_logf(ctx, "[%s] rep %d/%d bl-cpu bank, %d thread(s): %s%s%s", w->id, rep + 1, ctx->o->repetitions,
                  p->threads, status, reason[0] ? ": " : "", reason);
    bl_bench_worker_free(&wo);
}

static const char *point_status(const bank_point *p)
{
    if (!p->timed)
        return "not_selected";
    const char *q = p->qual_status;
    if (!strcmp(q, "unavailable"))
        return "unavailable";
    if (!strcmp(q, "failed"))
        return "failed_qualification";
    if (!strcmp(q, "timeout"))
        return "qualification_timeout";
    if (!strcmp(q, "error"))
        return "qualification_error";
    if (!strcmp(q, "not_run"))
        return "not_run";
    if (p->n_ok > 0)
        return "measured";
    if (p->n_timeout > 0 && p->n_failed == 0 && p->n_mismatch == 0)
        return "timeout";
    return "failed";
}

static double med(const bl_bench_dvec *d) { return bl_bench_median(d->v, d->n); }

static cJSON *point_json(const bl_bench_ctx *ctx, const bank_point *p, const bank_ref *ref,
                         const bl_bench_workload_def *w, const bl_bench_inputs *in, double sim_s)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "case", "bl-cpu");
    cJSON_AddNumberToObject(j, "threads_requested", p->threads);
    const char *status = point_status(p);
    cJSON_AddStringToObject(j, "status", status);
    if (strcmp(status, "measured") != 0 && p->reason[0])
        cJSON_AddStringToObject(j, "reason", p->reason);
    if (p->observed_backend[0]) {
        cJSON_AddStringToObject(j, "backend_observed", p->observed_backend);
        cJSON_AddNumberToObject(j, "threads_observed", p->observed_threads);
    } else {
        cJSON_AddNullToObject(j, "backend_observed");
        cJSON_AddNullToObject(j, "threads_observed");
    }
    cJSON *q = p->qualification ? cJSON_Duplicate(p->qualification, 1) : cJSON_CreateObject();
    if (!cJSON_GetObjectItemCaseSensitive(q, "status"))
        cJSON_AddStringToObject(q, "status", p->qual_status);
    cJSON_AddItemToObject(j, "qualification", q);
    cJSON_AddItemToObject(j, "samples", cJSON_Duplicate(p->samples, 1));
    cJSON *sum = bl_bench_summary_json(ctx, j, p->samples, p->n_ok, p->n_timeout, p->n_failed, p->n_mismatch);
    const bl_bench_dvec *d[] = {&p->load, &p->prepare, &p->first, &p->bank, &p->bank_cpu, &p->per_trial,
                                &p->total, &p->cpu_ratio, &p->wall, &p->rss};
    const char *names[] = {"load_s", "prepare_s", "first_execution_s", "bank_s", "bank_cpu_s", "bank_s_per_trial",
                           "trials_total_s", "bank_cpu_over_wall", "process_wall_s", "peak_rss_bytes"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        cJSON_AddItemToObject(sum, names[k], bl_bench_stat_json(d[k]->v, d[k]->n));
    /* Throughput of the bank, per trial-equivalent (bank_s / its trials). */
    cJSON *fig = cJSON_AddObjectToObject(j, "figures");
    if (p->per_trial.n && sim_s > 0 && !strcmp(ref->status, "reference")) {
        cJSON *f = cJSON_AddObjectToObject(fig, "bank");
        double *rtf = malloc(p->per_trial.n * sizeof *rtf);
        for (size_t k = 0; rtf && k < p->per_trial.n; k++)
            rtf[k] = p->per_trial.v[k] / sim_s;
        cJSON_AddItemToObject(f, "wall_s_per_simulated_s", bl_bench_stat_json(rtf, rtf ? p->per_trial.n : 0));
        free(rtf);
        cJSON_AddItemToObject(f, "neuron_steps_per_s",
                              bl_bench_rate_json((double)in->n_neurons * (double)in->steps, &p->per_trial));
        cJSON_AddItemToObject(f, "synaptic_events_per_s",
                              bl_bench_rate_json((double)ref->syn_events / w->trials, &p->per_trial));
        cJSON_AddItemToObject(f, "spikes_per_s", bl_bench_rate_json((double)ref->spikes / w->trials, &p->per_trial));
    }
    return j;
}

/* Speedup of every measured point over the first thread count's, per phase:
 * median at the first count / median here; efficiency = speedup x T0 / T. */
static cJSON *speedups_json(const bank_point *pts, int n)
{
    cJSON *arr = cJSON_CreateArray();
    const bank_point *b = &pts[0];
    if (!b->n_ok)
        return arr;
    for (int i = 1; i < n; i++) {
        const bank_point *p = &pts[i];
        if (!p->n_ok)
            continue;
        const bl_bench_dvec *pb[] = {&b->bank, &b->total, &b->first, &b->wall};
        const bl_bench_dvec *pp[] = {&p->bank, &p->total, &p->first, &p->wall};
        const char *names[] = {"bank_s", "trials_total_s", "first_execution_s", "process_wall_s"};
        for (int k = 0; k < 4; k++) {
            if (!pb[k]->n || !pp[k]->n)
                continue;
            double mb = med(pb[k]), mp = med(pp[k]);
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "phase", names[k]);
            cJSON_AddNumberToObject(r, "threads", p->threads);
            cJSON_AddNumberToObject(r, "baseline_threads", b->threads);
            cJSON_AddNumberToObject(r, "median_s", mp);
            cJSON_AddNumberToObject(r, "baseline_median_s", mb);
            double sp = mp > 0 ? mb / mp : 0;
            cJSON_AddNumberToObject(r, "speedup", sp);
            cJSON_AddNumberToObject(r, "parallel_efficiency", sp * b->threads / p->threads);
            cJSON_AddItemToArray(arr, r);
        }
    }
    return arr;
}

static const char *phase_label(const char *phase)
{
    if (!strcmp(phase, "bank_s"))
        return "bank";
    if (!strcmp(phase, "trials_total_s"))
        return "all trials";
    if (!strcmp(phase, "first_execution_s"))
        return "first";
    return "whole-worker";
}

static void table(bl_bench_ctx *ctx, const bl_bench_workload_def *w, const bl_bench_inputs *in, const bank_ref *ref,
                  const bank_point *pts, int n, const cJSON *speedups)
{
    bl_bench_tablef(ctx, "%s: %s\n    %llu neurons, %llu edges; %zu stimulated at %g Hz; %g ms x %d trials per "
                    "worker (trial 0 alone, then a bank of %d); background load %d\n",
                    w->id, w->title, (unsigned long long)in->n_neurons, (unsigned long long)in->n_edges, in->n_stim,
                    w->rate_hz, w->duration_ms, w->trials, w->trials - 1, ctx->o->background_load);
    if (!strcmp(ref->status, "reference"))
        bl_bench_tablef(ctx, "    shiu2024 reference (trials one engine call each): %.0f spikes/trial\n",
                        (double)ref->spikes / w->trials);
    else
        bl_bench_tablef(ctx, "    reference %s: %.*s\n", ref->status, 150, ref->reason);
    bl_bench_tablef(ctx, "    %-7s %-22s %8s %8s %10s %9s %8s %8s\n", "threads", "status", "first_s", "bank_s",
                    "per_trial", "total_s", "cpu/wall", "RSS_MiB");
    for (int i = 0; i < n; i++) {
        const bank_point *p = &pts[i];
        const char *status = point_status(p);
        char f[32] = "-", b[32] = "-", pt[32] = "-", t[32] = "-", cw[32] = "-", rss[32] = "-";
        if (p->first.n)
            snprintf(f, sizeof f, "%.3g", med(&p->first));
        if (p->bank.n)
            snprintf(b, sizeof b, "%.3g", med(&p->bank));
        if (p->per_trial.n)
            snprintf(pt, sizeof pt, "%.3g", med(&p->per_trial));
        if (p->total.n)
            snprintf(t, sizeof t, "%.3g", med(&p->total));
        if (p->cpu_ratio.n)
            snprintf(cw, sizeof cw, "%.2f", med(&p->cpu_ratio));
        if (p->rss.n)
            snprintf(rss, sizeof rss, "%.0f", med(&p->rss) / 1048576.0);
        char st[64];
        snprintf(st, sizeof st, "%s%s", status, p->n_timeout ? "+censored" : "");
        bl_bench_tablef(ctx, "    %-7d %-22s %8s %8s %10s %9s %8s %8s\n", p->threads, st, f, b, pt, t, cw, rss);
        if (strcmp(status, "measured") != 0 && p->reason[0])
            bl_bench_tablef(ctx, "      (%.*s)\n", 150, p->reason);
    }
    const cJSON *r;
    int any = 0;
    cJSON_ArrayForEach(r, speedups)
    {
        const char *phase = cJSON_GetObjectItemCaseSensitive(r, "phase")->valuestring;
        if (!any)
            bl_bench_tablef(ctx, "    speedup over %d thread(s) = median there / median here, same run:",
                            pts[0].threads);
        if (!strcmp(phase, "bank_s"))
            bl_bench_tablef(ctx, "\n      %d threads:", (int)num_or_nan(r, "threads"));
        bl_bench_tablef(ctx, " %s %.3gx", phase_label(phase), num_or_nan(r, "speedup"));
        any = 1;
    }
    bl_bench_tablef(ctx, "%s\n", any ? "\n" : "    (no speedup: fewer than two measured thread counts)\n");
}

void bl_bench_bank_run(bl_bench_ctx *ctx, const bl_bench_workload_def *w, cJSON *wj)
{
    cJSON_AddStringToObject(wj, "kind", "bank");
    char run_dir[4200];
    snprintf(run_dir, sizeof run_dir, "%s/%s", ctx->runs_dir, w->id);
    bl_error err = {0};
    bl_bench_inputs in;
    double t0 = bl_bench_now();
    bl_bench_logf(ctx, "[%s] preparing inputs (%s)", w->id, w->title);
    bl_status st = bl_bench_mkdirs(run_dir, &err);
    if (!st)
        st = bl_bench_inputs_prepare(w, ctx->self_exe, ctx->source_dir, ctx->work_dir, run_dir,
                                     ctx->o->timeout_s > 600 ? ctx->o->timeout_s : 600, &in, &err);
    if (st) {
        cJSON_AddStringToObject(wj, "status", "unavailable");
        cJSON_AddStringToObject(wj, "reason", err.message);
        bl_bench_logf(ctx, "[%s] unavailable: %s", w->id, err.message);
        bl_bench_tablef(ctx, "%s: unavailable: %s\n\n", w->id, err.message);
        return;
    }
    cJSON_AddNumberToObject(wj, "input_preparation_s", bl_bench_now() - t0);

    int n = ctx->n_thread_list;
    bank_point *pts = calloc((size_t)n, sizeof *pts);
    if (!pts) {
        cJSON_AddStringToObject(wj, "status", "unavailable");
        cJSON_AddStringToObject(wj, "reason", "out of memory");
        bl_bench_inputs_free(&in);
        return;
    }
    int cpu_ok = backend_compiled("cpu");
    for (int i = 0; i < n; i++) {
        bank_point *p = &pts[i];
        p->threads = ctx->thread_list[i];
        p->timed = bl_bench_listed(ctx->o->cases, "bl-cpu");
        p->samples = cJSON_CreateArray();
        snprintf(p->qual_status, sizeof p->qual_status, "%s", !p->timed ? "not_selected"
                                                              : cpu_ok  ? "not_run"
                                                                        : "unavailable");
        if (p->timed && !cpu_ok)
            snprintf(p->reason, sizeof p->reason, "backend 'cpu' is not compiled into this binary");
    }
    bank_ref ref;
    memset(&ref, 0, sizeof ref);
    int any = 0;
    for (int i = 0; i < n; i++)
        any |= pts[i].timed && cpu_ok;
    if (any) {
        run_reference(ctx, w, &in, run_dir, &ref);
        for (int i = 0; i < n; i++)
            if (pts[i].timed)
                qualify_point(ctx, w, &in, &ref, run_dir, &pts[i]);
    } else {
        snprintf(ref.status, sizeof ref.status, "not_run");
        snprintf(ref.reason, sizeof ref.reason, "no bl-cpu point to qualify (--cases, or no cpu backend)");
        ref.qualification = cJSON_CreateObject();
        cJSON_AddStringToObject(ref.qualification, "status", ref.status);
        cJSON_AddStringToObject(ref.qualification, "reason", ref.reason);
    }
    /* Timing: the qualified thread counts, fresh workers, alternating order. */
    int *order = calloc((size_t)n, sizeof *order), n_order = 0;
    for (int i = 0; order && i < n; i++)
        if (!strcmp(pts[i].qual_status, "passed"))
            order[n_order++] = i;
    for (int rep = 0; rep < ctx->o->repetitions; rep++) {
        int reversed = rep % 2;
        for (int k = 0; k < n_order; k++)
            time_point(ctx, w, &in, &ref, run_dir, &pts[order[reversed ? n_order - 1 - k : k]], rep, k, reversed);
    }
    free(order);

    double sim_s = bl_bench_sim_seconds(&in);
    cJSON_AddStringToObject(wj, "status", "completed");
    cJSON_AddNumberToObject(wj, "wall_s", bl_bench_now() - t0);
    bl_bench_inputs_json(w, &in, wj);
    cJSON *inp = cJSON_GetObjectItemCaseSensitive(wj, "inputs");
    cJSON_AddNumberToObject(inp, "bank_trials_per_worker", w->trials - 1);
    cJSON_AddNumberToObject(inp, "background_load", ctx->o->background_load);
    cJSON *tl = cJSON_AddArrayToObject(inp, "threads");
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(tl, cJSON_CreateNumber(pts[i].threads));
    cJSON *counts = cJSON_AddObjectToObject(wj, "counts");
    if (!strcmp(ref.status, "reference")) {
        cJSON *c = cJSON_AddObjectToObject(counts, "shiu2024");
        cJSON_AddNumberToObject(c, "steps_per_trial", (double)in.steps);
        cJSON_AddNumberToObject(c, "neuron_steps_per_trial", (double)in.n_neurons * (double)in.steps);
        cJSON_AddNumberToObject(c, "spikes_total", (double)ref.spikes);
        cJSON_AddNumberToObject(c, "spikes_per_trial", (double)ref.spikes / w->trials);
        cJSON_AddNumberToObject(c, "synaptic_events_total", (double)ref.syn_events);
        cJSON_AddNumberToObject(c, "synaptic_events_per_trial", (double)ref.syn_events / w->trials);
        cJSON_AddStringToObject(c, "source", "the reference backend's qualification run");
    }
    cJSON_AddItemToObject(wj, "reference", ref.qualification);
    ref.qualification = NULL;
    cJSON *pj = cJSON_AddArrayToObject(wj, "points");
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(pj, point_json(ctx, &pts[i], &ref, w, &in, sim_s));
    cJSON *sp = speedups_json(pts, n);
    cJSON_AddItemToObject(wj, "speedup", sp);
    table(ctx, w, &in, &ref, pts, n, sp);

    if (ref.out[0])
        discard(ctx, ref.out);
    for (int i = 0; i < n; i++) {
        bank_point *p = &pts[i];
        bl_bench_dvec *d[] = {&p->load, &p->prepare, &p->first, &p->bank, &p->bank_cpu, &p->per_trial,
                              &p->total, &p->cpu_ratio, &p->wall, &p->rss};
        for (size_t k = 0; k < sizeof d / sizeof d[0]; k++)
            bl_bench_dvec_free(d[k]);
        cJSON_Delete(p->qualification);
        cJSON_Delete(p->samples);
    }
    free(pts);
    bl_bench_inputs_free(&in);
}
