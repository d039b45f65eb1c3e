/* Receipt builders: raw samples into per-phase vectors, per-case summaries
 * (median, min, max over the ok samples), throughput figures, ratios between
 * cases measured in the same run, and the human table. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_case.h"
#include "brainlesslab/model.h"

void bl_bench_dvec_push(bl_bench_dvec *d, double x)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 16;
        double *v = realloc(d->v, cap * sizeof *v);
        if (!v)
            return; /* a lost sample under memory exhaustion; the raw sample stays in the receipt */
        d->v = v;
        d->cap = cap;
    }
    d->v[d->n++] = x;
}

void bl_bench_dvec_free(bl_bench_dvec *d)
{
    free(d->v);
    memset(d, 0, sizeof *d);
}

void bl_bench_case_run_free(bl_bench_case_run *cr)
{
    bl_bench_dvec_free(&cr->load);
    bl_bench_dvec_free(&cr->prepare);
    bl_bench_dvec_free(&cr->build);
    bl_bench_dvec_free(&cr->first);
    bl_bench_dvec_free(&cr->warm);
    bl_bench_dvec_free(&cr->warm_proc_median);
    bl_bench_dvec_free(&cr->wall);
    bl_bench_dvec_free(&cr->rss);
    bl_bench_dvec_free(&cr->live);
    bl_bench_dvec_free(&cr->first_cpu);
    bl_bench_dvec_free(&cr->warm_cpu);
    bl_bench_dvec_free(&cr->warm_cpu_proc_median);
    bl_bench_dvec_free(&cr->compile);
    cJSON_Delete(cr->compile_cold);
    cr->compile_cold = NULL;
    cJSON_Delete(cr->qualification);
    cJSON_Delete(cr->samples);
    cJSON_Delete(cr->observed_versions);
    cr->qualification = cr->samples = cr->observed_versions = NULL;
}

static int get_num(const cJSON *o, const char *key, double *x)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        return 0;
    *x = v->valuedouble;
    return 1;
}

void bl_bench_record_sample(bl_bench_ctx *ctx, bl_bench_case_run *cr, cJSON *sample, const cJSON *timing,
                            const bl_bench_proc *proc)
{
    (void)ctx;
    if (!timing)
        return;
    cJSON *ph = cJSON_AddObjectToObject(sample, "phases");
    double x;
    if (get_num(timing, "load_s", &x)) {
        cJSON_AddNumberToObject(ph, "load_s", x);
        bl_bench_dvec_push(&cr->load, x);
    }
    if (get_num(timing, "prepare_s", &x)) {
        cJSON_AddNumberToObject(ph, "prepare_s", x);
        bl_bench_dvec_push(&cr->prepare, x);
    }
    if (get_num(timing, "build_s", &x) && cr->def->kind == BL_BENCH_BRIAN2_CPP) {
        cJSON_AddNumberToObject(ph, "build_s", x);
        bl_bench_dvec_push(&cr->build, x);
    }
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(timing, "trial_s");
    int n = cJSON_GetArraySize(ts);
    cJSON *warm = cJSON_CreateArray();
    double *mine = calloc(n > 1 ? (size_t)n : 1, sizeof *mine);
    int nm = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetArrayItem(ts, i);
        if (!cJSON_IsNumber(v))
            continue;
        if (i == 0) {
            cJSON_AddNumberToObject(ph, "first_execution_s", v->valuedouble);
            bl_bench_dvec_push(&cr->first, v->valuedouble);
        } else {
            cJSON_AddItemToArray(warm, cJSON_CreateNumber(v->valuedouble));
            bl_bench_dvec_push(&cr->warm, v->valuedouble);
            if (mine)
                mine[nm++] = v->valuedouble;
        }
    }
    cJSON_AddItemToObject(ph, "warm_execution_s", warm);
    if (nm)
        bl_bench_dvec_push(&cr->warm_proc_median, bl_bench_median(mine, (size_t)nm));
    /* The same trials' process CPU seconds, where the worker reports them
     * (simulate's trial_cpu_s): on a shared machine wall time also counts
     * the time a worker waited for a core, CPU time does not. */
    const cJSON *tc = cJSON_GetObjectItemCaseSensitive(timing, "trial_cpu_s");
    if (cJSON_IsArray(tc) && cJSON_GetArraySize(tc) == n) {
        cJSON *warm_cpu = cJSON_CreateArray();
        nm = 0;
        for (int i = 0; i < n; i++) {
            const cJSON *v = cJSON_GetArrayItem(tc, i);
            if (!cJSON_IsNumber(v))
                continue;
            if (i == 0) {
                cJSON_AddNumberToObject(ph, "first_execution_cpu_s", v->valuedouble);
                bl_bench_dvec_push(&cr->first_cpu, v->valuedouble);
            } else {
                cJSON_AddItemToArray(warm_cpu, cJSON_CreateNumber(v->valuedouble));
                bl_bench_dvec_push(&cr->warm_cpu, v->valuedouble);
                if (mine)
                    mine[nm++] = v->valuedouble;
            }
        }
        cJSON_AddItemToObject(ph, "warm_execution_cpu_s", warm_cpu);
        if (nm)
            bl_bench_dvec_push(&cr->warm_cpu_proc_median, bl_bench_median(mine, (size_t)nm));
    }
    free(mine);
    /* A model from equations: compiling (or loading from the code cache) the
     * generated C, after prepare and before the trials, apart from both. */
    if (get_num(timing, "compile_s", &x)) {
        cJSON_AddNumberToObject(ph, "compile_s", x);
        bl_bench_dvec_push(&cr->compile, x);
        const cJSON *cache = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(timing, "model_codegen"), "cache");
        if (cJSON_IsString(cache))
            cJSON_AddStringToObject(sample, "code_cache", cache->valuestring);
    }
    bl_bench_dvec_push(&cr->wall, proc->wall_s);
    bl_bench_dvec_push(&cr->rss, (double)proc->peak_rss_bytes);
    if (get_num(timing, "engine_bytes", &x)) /* the engine's own live bytes, when the worker reports them */
        bl_bench_dvec_push(&cr->live, x);
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(timing, "backend");
    if (cJSON_IsString(b)) {
        cJSON_AddStringToObject(sample, "backend_observed", b->valuestring);
        snprintf(cr->observed_backend, sizeof cr->observed_backend, "%s", b->valuestring);
    }
    if (get_num(timing, "threads", &x)) {
        cJSON_AddNumberToObject(sample, "threads_observed", x);
        cr->observed_threads = (int)x;
    }
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(timing, "versions");
    if (ver && !cr->observed_versions)
        cr->observed_versions = cJSON_Duplicate(ver, 1);
    cJSON_AddItemToObject(sample, "worker_report", cJSON_Duplicate(timing, 1));
}

cJSON *bl_bench_rate_json(double work, const bl_bench_dvec *d)
{
    cJSON *o = cJSON_CreateObject();
    double med = bl_bench_median(d->v, d->n), lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < d->n; i++) {
        lo = d->v[i] < lo ? d->v[i] : lo;
        hi = d->v[i] > hi ? d->v[i] : hi;
    }
    cJSON_AddNumberToObject(o, "median", med > 0 ? work / med : 0);
    cJSON_AddNumberToObject(o, "min", hi > 0 ? work / hi : 0);
    cJSON_AddNumberToObject(o, "max", lo > 0 ? work / lo : 0);
    return o;
}

static const bl_bench_case_run *family_ref(const bl_bench_case_run *runs, const bl_bench_case_def *c)
{
    return &runs[!strcmp(c->preset, "shiu2024") ? 0 : 4];
}

const char *bl_bench_case_status(const bl_bench_case_run *cr, char *why, size_t size)
{
    why[0] = '\0';
    if (!cr->timed)
        return "not_selected";
    if (!cr->available) {
        snprintf(why, size, "%s", cr->reason);
        return "unavailable";
    }
    const char *q = cr->qual_status;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(cr->qualification, "reason");
    if (cJSON_IsString(r))
        snprintf(why, size, "%s", r->valuestring);
    if (!strcmp(q, "failed"))
        return "failed_qualification";
    if (!strcmp(q, "timeout"))
        return "qualification_timeout";
    if (!strcmp(q, "error"))
        return "qualification_error";
    if (!strcmp(q, "not_run"))
        return "not_run";
    why[0] = '\0';
    if (cr->n_ok > 0)
        return "measured";
    if (cr->n_timeout > 0 && cr->n_failed == 0 && cr->n_mismatch == 0)
        return "timeout";
    return "failed";
}

double bl_bench_sim_seconds(const bl_bench_inputs *in)
{
    bl_lif_params p;
    bl_error e = {0};
    if (bl_lif_params_preset("shiu2024", &p, &e))
        return NAN;
    return (double)in->steps * p.dt_ms / 1000.0;
}

cJSON *bl_bench_sample_json(int rep, int position, int reversed)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddNumberToObject(s, "repetition", rep);
    cJSON_AddNumberToObject(s, "position", position);
    cJSON_AddStringToObject(s, "order", reversed ? "reversed" : "forward");
    return s;
}

cJSON *bl_bench_proc_json(const bl_bench_proc *proc)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "wall_s", proc->wall_s);
    cJSON_AddNumberToObject(p, "user_s", proc->user_s);
    cJSON_AddNumberToObject(p, "sys_s", proc->sys_s);
    cJSON_AddNumberToObject(p, "peak_rss_bytes", (double)proc->peak_rss_bytes);
    if (proc->exited)
        cJSON_AddNumberToObject(p, "exit_status", proc->exit_status);
    if (proc->term_signal)
        cJSON_AddNumberToObject(p, "signal", proc->term_signal);
    return p;
}

cJSON *bl_bench_process_json(const bl_bench_ctx *ctx, const bl_bench_proc *proc, cJSON *sample)
{
    if (proc->timed_out)
        cJSON_AddNumberToObject(sample, "censored_at_s", ctx->o->timeout_s);
    cJSON *p = bl_bench_proc_json(proc);
    cJSON_AddItemToObject(sample, "process", p);
    return p;
}

cJSON *bl_bench_summary_json(const bl_bench_ctx *ctx, cJSON *c, const cJSON *samples, int n_ok, int n_timeout,
                             int n_failed, int n_mismatch)
{
    cJSON *sum = cJSON_AddObjectToObject(c, "summary");
    cJSON_AddNumberToObject(sum, "n_samples", cJSON_GetArraySize(samples));
    cJSON_AddNumberToObject(sum, "n_ok", n_ok);
    cJSON_AddNumberToObject(sum, "n_timeout", n_timeout);
    cJSON_AddNumberToObject(sum, "n_failed", n_failed);
    cJSON_AddNumberToObject(sum, "n_mismatch", n_mismatch);
    if (n_timeout)
        cJSON_AddNumberToObject(sum, "censored_at_s", ctx->o->timeout_s);
    return sum;
}

cJSON *bl_bench_case_common_json(const bl_bench_ctx *ctx, const bl_bench_case_run *cr, cJSON *c)
{
    if (cr->observed_backend[0]) {
        cJSON_AddStringToObject(c, "backend_observed", cr->observed_backend);
        cJSON_AddNumberToObject(c, "threads_observed", cr->observed_threads);
    } else {
        cJSON_AddNullToObject(c, "backend_observed");
        cJSON_AddNullToObject(c, "threads_observed");
    }
    if (cr->observed_versions)
        cJSON_AddItemToObject(c, "versions", cJSON_Duplicate(cr->observed_versions, 1));
    cJSON *q = cr->qualification ? cJSON_Duplicate(cr->qualification, 1) : cJSON_CreateObject();
    if (!cJSON_GetObjectItemCaseSensitive(q, "status"))
        cJSON_AddStringToObject(q, "status", cr->qual_status);
    if (!cr->available && !cJSON_GetObjectItemCaseSensitive(q, "reason"))
        cJSON_AddStringToObject(q, "reason", cr->reason);
    cJSON_AddItemToObject(c, "qualification", q);
    cJSON_AddItemToObject(c, "samples", cJSON_Duplicate(cr->samples, 1));
    cJSON *sum = bl_bench_summary_json(ctx, c, cr->samples, cr->n_ok, cr->n_timeout, cr->n_failed, cr->n_mismatch);
    const bl_bench_dvec *phase[] = {&cr->load, &cr->prepare, &cr->first, &cr->warm, &cr->warm_proc_median,
                                    &cr->wall, &cr->rss, &cr->first_cpu, &cr->warm_cpu, &cr->warm_cpu_proc_median};
    const char *names[] = {"load_s", "prepare_s", "first_execution_s", "warm_execution_s",
                           "warm_execution_per_process_median_s", "process_wall_s", "peak_rss_bytes",
                           "first_execution_cpu_s", "warm_execution_cpu_s",
                           "warm_execution_cpu_per_process_median_s"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        cJSON_AddItemToObject(sum, names[k], bl_bench_stat_json(phase[k]->v, phase[k]->n));
    if (cr->def->model_file || cr->compile.n || cr->compile_cold) {
        /* a model from equations: warm, the timed workers, which find the
         * code cache populated; cold, the qualification worker, which
         * started it empty */
        cJSON_AddItemToObject(sum, "compile_warm_s", bl_bench_stat_json(cr->compile.v, cr->compile.n));
        cJSON_AddItemToObject(sum, "compile_cold", cr->compile_cold ? cJSON_Duplicate(cr->compile_cold, 1)
                                                                    : cJSON_CreateNull());
    }
    return sum;
}

void bl_bench_case_figures_json(const bl_bench_case_run *cr, const bl_bench_case_run *ref,
                                const bl_bench_workload_def *w, const bl_bench_inputs *in, double sim_s, cJSON *c)
{
    cJSON *fig = cJSON_AddObjectToObject(c, "figures");
    if (strcmp(ref->qual_status, "reference") != 0 || !(sim_s > 0))
        return;
    double ns = (double)in->n_neurons * (double)in->steps;
    double syn = (double)ref->ref_syn_events / w->trials;
    double spk = (double)ref->ref_spikes / w->trials;
    const bl_bench_dvec *ph[2] = {&cr->first, &cr->warm};
    const char *names[2] = {"first_execution", "warm_execution"};
    for (int k = 0; k < 2; k++) {
        if (!ph[k]->n)
            continue;
        cJSON *f = cJSON_AddObjectToObject(fig, names[k]);
        double *rtf = malloc(ph[k]->n * sizeof *rtf);
        for (size_t j = 0; rtf && j < ph[k]->n; j++)
            rtf[j] = ph[k]->v[j] / sim_s;
        cJSON_AddItemToObject(f, "wall_s_per_simulated_s", bl_bench_stat_json(rtf, rtf ? ph[k]->n : 0));
        free(rtf);
        cJSON_AddItemToObject(f, "neuron_steps_per_s", bl_bench_rate_json(ns, ph[k]));
        cJSON_AddItemToObject(f, "synaptic_events_per_s", bl_bench_rate_json(syn, ph[k]));
        cJSON_AddItemToObject(f, "spikes_per_s", bl_bench_rate_json(spk, ph[k]));
    }
    /* Memory per edge: the whole worker's peak RSS (graph, engine, outputs,
     * interpreter for peers) over the graph's edges, the scale figure the
     * 10x workload is judged by. */
    if (cr->rss.n && in->n_edges) {
        double *b = malloc(cr->rss.n * sizeof *b);
        for (size_t j = 0; b && j < cr->rss.n; j++)
            b[j] = cr->rss.v[j] / (double)in->n_edges;
        cJSON_AddItemToObject(fig, "peak_rss_bytes_per_edge", bl_bench_stat_json(b, b ? cr->rss.n : 0));
        free(b);
    }
}

const bl_bench_case_run *bl_bench_hand_written(const bl_bench_case_run *runs, const bl_bench_case_run *eq)
{
    if (!eq->def->model_file || eq->def->kind != BL_BENCH_OURS)
        return NULL;
    for (int i = 0; i < BL_BENCH_N_CASES; i++) {
        const bl_bench_case_def *d = runs[i].def;
        if (d->kind == BL_BENCH_OURS && !d->model_file && !strcmp(d->preset, eq->def->preset) &&
            !strcmp(d->backend, eq->def->backend))
            return &runs[i];
    }
    return NULL;
}

/* Issue 23's target for a model_file case: its execution time against the
 * hand-written kernel's, same preset and backend, same run and input, by
 * wall and by CPU time; the compile time beside it, never inside it. */
static void eq_vs_hand_written(const bl_bench_case_run *runs, cJSON *wj)
{
    for (int i = 0; i < BL_BENCH_N_CASES; i++) {
        const bl_bench_case_run *A = &runs[i], *B = bl_bench_hand_written(runs, A);
        if (!B || !A->timed || !B->timed || !A->available)
            continue;
        cJSON *o = cJSON_AddObjectToObject(wj, "generated_vs_hand_written");
        cJSON_AddStringToObject(o, "generated", A->def->id);
        cJSON_AddStringToObject(o, "hand_written", B->def->id);
        cJSON_AddStringToObject(o, "target", "issue 23: the generated kernel's execution within 5 % of the "
                                             "hand-written one (generated / hand-written <= 1.05)");
        const bl_bench_dvec *pa[4] = {&A->warm, &A->warm_cpu, &A->first, &A->first_cpu};
        const bl_bench_dvec *pb[4] = {&B->warm, &B->warm_cpu, &B->first, &B->first_cpu};
        const char *names[4] = {"warm_execution_s", "warm_execution_cpu_s", "first_execution_s",
                                "first_execution_cpu_s"};
        int measured = 0, within = 1;
        for (int k = 0; k < 4; k++) {
            cJSON *r = cJSON_AddObjectToObject(o, names[k]);
            if (!pa[k]->n || !pb[k]->n) {
                cJSON_AddNullToObject(r, "generated_over_hand_written");
                continue;
            }
            double ma = bl_bench_median(pa[k]->v, pa[k]->n), mb = bl_bench_median(pb[k]->v, pb[k]->n);
            cJSON_AddNumberToObject(r, "generated_median_s", ma);
            cJSON_AddNumberToObject(r, "hand_written_median_s", mb);
            cJSON_AddNumberToObject(r, "generated_over_hand_written", mb > 0 ? ma / mb : 0);
            if (k < 2) {
                measured++;
                within &= mb > 0 && ma / mb <= 1.05;
            }
        }
        if (measured == 2)
            cJSON_AddBoolToObject(o, "within_target", within);
        else
            cJSON_AddNullToObject(o, "within_target");
        cJSON_AddItemToObject(o, "compile_warm_s", bl_bench_stat_json(A->compile.v, A->compile.n));
        cJSON_AddItemToObject(o, "compile_cold", A->compile_cold ? cJSON_Duplicate(A->compile_cold, 1)
                                                                 : cJSON_CreateNull());
        return; /* one model_file case per preset and backend */
    }
}

void bl_bench_inputs_json(const bl_bench_workload_def *w, const bl_bench_inputs *in, cJSON *wj)
{
    double sim_s = bl_bench_sim_seconds(in);
    cJSON *inp = cJSON_AddObjectToObject(wj, "inputs");
    cJSON *g = cJSON_AddObjectToObject(inp, "connectome");
    cJSON_AddStringToObject(g, "origin", in->graph_origin);
    cJSON_AddStringToObject(g, "name", in->graph_name);
    cJSON_AddBoolToObject(g, "synthetic", in->synthetic);
    cJSON_AddNumberToObject(g, "n_neurons", (double)in->n_neurons);
    cJSON_AddNumberToObject(g, "n_edges", (double)in->n_edges);
    cJSON_AddNumberToObject(g, "n_synapses", (double)in->n_synapses);
    if (in->graph_files)
        cJSON_AddItemToObject(g, "manifest", cJSON_Duplicate(in->graph_files, 1));
    cJSON *s = cJSON_AddObjectToObject(inp, "stimulus");
    cJSON_AddStringToObject(s, "selection", w->stim == BL_BENCH_STIM_TOP_SENSORY ? "top_sensory_by_out_strength"
                                            : w->stim == BL_BENCH_STIM_ALL_SENSORY ? "all_sensory"
                                                                                   : "olfactory_sensory");
    cJSON_AddNumberToObject(s, "n_neurons", (double)in->n_stim);
    cJSON *nl = cJSON_AddArrayToObject(s, "neurons");
    for (size_t i = 0; i < in->n_stim && i < 64; i++)
        cJSON_AddItemToArray(nl, cJSON_CreateNumber(in->stim[i]));
    if (in->n_stim > 64)
        cJSON_AddStringToObject(s, "neurons_note", "first 64 listed; all in targets.npy (targets_sha256)");
    cJSON_AddNumberToObject(s, "rate_hz", w->rate_hz);
    cJSON_AddNumberToObject(s, "seed", (double)w->seed);
    cJSON_AddStringToObject(s, "draws", "Philox4x32-10, population 0, trial 0 (= simulate --poisson "
                                        "RATE:targets.npy --seed SEED, trial 0); replayed as --schedule in "
                                        "every trial");
    cJSON_AddNumberToObject(s, "events", (double)in->n_events);
    cJSON_AddStringToObject(s, "events_sha256", in->events_sha256);
    cJSON_AddStringToObject(s, "targets_sha256", in->targets_sha256);
    cJSON_AddNumberToObject(inp, "duration_ms", w->duration_ms);
    cJSON_AddNumberToObject(inp, "steps_per_trial", (double)in->steps);
    cJSON_AddNumberToObject(inp, "simulated_s_per_trial", sim_s);
    cJSON_AddNumberToObject(inp, "trials_per_worker", w->trials);
    cJSON *shapes = cJSON_AddObjectToObject(inp, "shapes");
    cJSON_AddNumberToObject(shapes, "state", (double)in->n_neurons);
    cJSON_AddNumberToObject(shapes, "csr_edges", (double)in->n_edges);
    cJSON_AddNumberToObject(shapes, "schedule_rows", (double)in->n_events);
}

void bl_bench_finish_workload(bl_bench_ctx *ctx, const bl_bench_workload_def *w, const bl_bench_inputs *in,
                              bl_bench_case_run *runs, cJSON *wj)
{
    double sim_s = bl_bench_sim_seconds(in);
    bl_bench_inputs_json(w, in, wj);

    cJSON *counts = cJSON_AddObjectToObject(wj, "counts");
    for (int r = 0; r < BL_BENCH_N_CASES; r += 4) {
        const bl_bench_case_run *ref = &runs[r];
        if (strcmp(ref->qual_status, "reference") != 0)
            continue;
        cJSON *c = cJSON_AddObjectToObject(counts, ref->def->preset);
        double trials = w->trials;
        cJSON_AddNumberToObject(c, "steps_per_trial", (double)in->steps);
        cJSON_AddNumberToObject(c, "neuron_steps_per_trial", (double)in->n_neurons * (double)in->steps);
        cJSON_AddNumberToObject(c, "spikes_total", (double)ref->ref_spikes);
        cJSON_AddNumberToObject(c, "spikes_per_trial", (double)ref->ref_spikes / trials);
        cJSON_AddNumberToObject(c, "spikes_per_simulated_s", (double)ref->ref_spikes / trials / sim_s);
        cJSON_AddNumberToObject(c, "synaptic_events_total", (double)ref->ref_syn_events);
        cJSON_AddNumberToObject(c, "synaptic_events_per_trial", (double)ref->ref_syn_events / trials);
        cJSON_AddStringToObject(c, "source", "the reference backend's qualification run");
    }

    cJSON *cases = cJSON_AddArrayToObject(wj, "cases");
    for (int i = 0; i < BL_BENCH_N_CASES; i++) {
        bl_bench_case_run *cr = &runs[i];
        const bl_bench_case_def *d = cr->def;
        cJSON *c = cJSON_CreateObject();
        cJSON_AddItemToArray(cases, c);
        cJSON_AddStringToObject(c, "id", d->id);
        cJSON_AddStringToObject(c, "preset", d->preset);
        cJSON_AddStringToObject(c, "kind", d->kind == BL_BENCH_OURS ? "ours" : "peer");
        char why[1200];
        const char *status = bl_bench_case_status(cr, why, sizeof why);
        cJSON_AddStringToObject(c, "status", status);
        if (why[0])
            cJSON_AddStringToObject(c, "reason", why);
        cJSON_AddStringToObject(c, "dtype", d->dtype);
        cJSON_AddNumberToObject(c, "threads_requested", d->single_thread ? 1 : ctx->threads);
        cJSON *sum = bl_bench_case_common_json(ctx, cr, c);
        if (d->kind == BL_BENCH_BRIAN2_CPP)
            cJSON_AddItemToObject(sum, "build_s", bl_bench_stat_json(cr->build.v, cr->build.n));
        if (cr->live.n)
            cJSON_AddItemToObject(sum, "engine_live_bytes", bl_bench_stat_json(cr->live.v, cr->live.n));
        else
            cJSON_AddNullToObject(sum, "engine_live_bytes");

        bl_bench_case_figures_json(cr, family_ref(runs, d), w, in, sim_s, c);
    }

    /* Ratios between cases of one preset measured in this run: ours against
     * every peer, and our other backends against the reference backend. */
    cJSON *ratios = cJSON_AddArrayToObject(wj, "ratios");
    for (int a = 0; a < BL_BENCH_N_CASES; a++) {
        const bl_bench_case_run *A = &runs[a];
        if (A->def->kind != BL_BENCH_OURS || !A->n_ok)
            continue;
        for (int b = 0; b < BL_BENCH_N_CASES; b++) {
            const bl_bench_case_run *B = &runs[b];
            if (a == b || !B->n_ok || strcmp(A->def->preset, B->def->preset) != 0)
                continue;
            int b_is_ref = B == family_ref(runs, B->def);
            /* ours against ours: against the reference backend, and a model
             * from equations against its hand-written kernel */
            if (B->def->kind == BL_BENCH_OURS && !(b_is_ref && A != family_ref(runs, A->def)) &&
                bl_bench_hand_written(runs, A) != B)
                continue;
            const bl_bench_dvec *pa[5] = {&A->first, &A->warm, &A->wall, &A->first_cpu, &A->warm_cpu};
            const bl_bench_dvec *pb[5] = {&B->first, &B->warm, &B->wall, &B->first_cpu, &B->warm_cpu};
            const char *names[5] = {"first_execution_s", "warm_execution_s", "process_wall_s",
                                    "first_execution_cpu_s", "warm_execution_cpu_s"};
            for (int k = 0; k < 5; k++) {
                if (!pa[k]->n || !pb[k]->n)
                    continue;
                double ma = bl_bench_median(pa[k]->v, pa[k]->n), mb = bl_bench_median(pb[k]->v, pb[k]->n);
                cJSON *r = cJSON_CreateObject();
                cJSON_AddStringToObject(r, "preset", A->def->preset);
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
    }
    eq_vs_hand_written(runs, wj);
}

/* ---- the human table -------------------------------------------------------- */

static void tprintf(bl_bench_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void tprintf(bl_bench_ctx *ctx, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = strlen(line);
    if (ctx->table_len + len + 1 > ctx->table_cap) {
        size_t cap = ctx->table_cap ? ctx->table_cap * 2 : 4096;
        while (cap < ctx->table_len + len + 1)
            cap *= 2;
        char *t = realloc(ctx->table, cap);
        if (!t)
            return;
        ctx->table = t;
        ctx->table_cap = cap;
    }
    memcpy(ctx->table + ctx->table_len, line, len + 1);
    ctx->table_len += len;
}

void bl_bench_tablef(bl_bench_ctx *ctx, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n >= 0)
        tprintf(ctx, "%s", line);
}

static void fmt_s(char *buf, size_t size, const bl_bench_dvec *d)
{
    if (!d->n)
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.3g", bl_bench_median(d->v, d->n));
}

void bl_bench_table_workload(bl_bench_ctx *ctx, const bl_bench_workload_def *w, const bl_bench_inputs *in,
                             const bl_bench_case_run *runs, const cJSON *wj)
{
    if (!in) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(wj, "reason");
        tprintf(ctx, "%s: unavailable: %s\n\n", w->id, cJSON_IsString(r) ? r->valuestring : "?");
        return;
    }
    double sim_s = bl_bench_sim_seconds(in);
    tprintf(ctx, "%s: %s\n    %llu neurons, %llu edges; %zu stimulated at %g Hz; %g ms x %d trials per worker\n",
            w->id, w->title, (unsigned long long)in->n_neurons, (unsigned long long)in->n_edges, in->n_stim,
            w->rate_hz, w->duration_ms, w->trials);
    for (int r = 0; r < BL_BENCH_N_CASES; r += 4)
        if (!strcmp(runs[r].qual_status, "reference"))
            tprintf(ctx, "    %s reference: %.0f spikes/trial, %.3g synaptic events/trial\n", runs[r].def->preset,
                    (double)runs[r].ref_spikes / w->trials, (double)runs[r].ref_syn_events / w->trials);
    tprintf(ctx, "    %-21s %-8s %-22s %7s %7s %8s %8s %8s %10s %10s %8s\n", "case", "preset", "status", "load_s",
            "prep_s", "first_s", "warm_s", "s/sim_s", "nrn-st/s", "syn-ev/s", "RSS_MiB");
    for (int i = 0; i < BL_BENCH_N_CASES; i++) {
        const bl_bench_case_run *cr = &runs[i];
        char why[1200];
        const char *status = bl_bench_case_status(cr, why, sizeof why);
        if (!strcmp(status, "not_selected"))
            continue;
        char l[32], p[32], f[32], wm[32], rtf[32] = "-", nsps[32] = "-", syn[32] = "-", rss[32] = "-";
        fmt_s(l, sizeof l, &cr->load);
        fmt_s(p, sizeof p, &cr->prepare);
        fmt_s(f, sizeof f, &cr->first);
        fmt_s(wm, sizeof wm, &cr->warm);
        const bl_bench_dvec *basis = cr->warm.n ? &cr->warm : &cr->first;
        const bl_bench_case_run *ref = family_ref(runs, cr->def);
        if (basis->n && sim_s > 0) {
            double m = bl_bench_median(basis->v, basis->n);
            snprintf(rtf, sizeof rtf, "%.3g", m / sim_s);
            snprintf(nsps, sizeof nsps, "%.3g", (double)in->n_neurons * (double)in->steps / m);
            if (!strcmp(ref->qual_status, "reference"))
                snprintf(syn, sizeof syn, "%.3g", (double)ref->ref_syn_events / w->trials / m);
        }
        if (cr->rss.n)
            snprintf(rss, sizeof rss, "%.0f", bl_bench_median(cr->rss.v, cr->rss.n) / 1048576.0);
        char st[64];
        snprintf(st, sizeof st, "%s%s", status, cr->n_timeout ? "+censored" : "");
        tprintf(ctx, "    %-21s %-8s %-22s %7s %7s %8s %8s %8s %10s %10s %8s\n", cr->def->id, cr->def->preset, st,
                l, p, f, wm, rtf, nsps, syn, rss);
        if (why[0] && strcmp(status, "measured") != 0)
            tprintf(ctx, "      (%.*s)\n", 150, why);
    }
    /* One line per pair: speedup of a over b (median b / median a) per phase. */
    const cJSON *ratios = cJSON_GetObjectItemCaseSensitive(wj, "ratios");
    const cJSON *r;
    char pair[128] = "";
    int any = 0;
    cJSON_ArrayForEach(r, ratios)
    {
        const cJSON *phase = cJSON_GetObjectItemCaseSensitive(r, "phase");
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(r, "a"), *b = cJSON_GetObjectItemCaseSensitive(r, "b");
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "speedup_of_a");
        if (!cJSON_IsString(phase) || !cJSON_IsString(a) || !cJSON_IsString(b) || !cJSON_IsNumber(s))
            continue;
        char this_pair[128];
        snprintf(this_pair, sizeof this_pair, "%s vs %s", a->valuestring, b->valuestring);
        if (!any)
            tprintf(ctx, "    speedup = median b / median a (> 1: a is faster), same run, same input:");
        if (strcmp(pair, this_pair) != 0) {
            tprintf(ctx, "\n      %-40s", this_pair);
            snprintf(pair, sizeof pair, "%s", this_pair);
        }
        const char *ph = phase->valuestring;
        tprintf(ctx, " %s %.3gx", !strcmp(ph, "first_execution_s")       ? "first"
                                  : !strcmp(ph, "warm_execution_s")      ? "warm"
                                  : !strcmp(ph, "first_execution_cpu_s") ? "first-CPU"
                                  : !strcmp(ph, "warm_execution_cpu_s")  ? "warm-CPU"
                                                                         : "whole-worker",
                s->valuedouble);
        any = 1;
    }
    tprintf(ctx, "%s\n", any ? "\n" : "    (no ratios: fewer than two measured cases per preset)\n");
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(wj, "generated_vs_hand_written");
    if (g) {
        const cJSON *gw = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(g, "warm_execution_s"),
                                                          "generated_over_hand_written");
        const cJSON *gc = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(g, "warm_execution_cpu_s"), "generated_over_hand_written");
        const cJSON *cw = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(g, "compile_warm_s"),
                                                           "median");
        const cJSON *cc = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(g, "compile_cold"),
                                                           "compile_s");
        const cJSON *wt = cJSON_GetObjectItemCaseSensitive(g, "within_target");
        tprintf(ctx, "    generated / hand-written (warm execution): %.3gx wall, %.3gx CPU (target <= 1.05: %s); "
                     "compile apart: cold %.3g s, warm %.3g s\n\n",
                cJSON_IsNumber(gw) ? gw->valuedouble : NAN, cJSON_IsNumber(gc) ? gc->valuedouble : NAN,
                cJSON_IsBool(wt) ? (cJSON_IsTrue(wt) ? "met" : "NOT met") : "not measured",
                cJSON_IsNumber(cc) ? cc->valuedouble : NAN, cJSON_IsNumber(cw) ? cw->valuedouble : NAN);
    }
}
