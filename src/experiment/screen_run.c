/* Operation "screen": every condition of a plan's axes run on one loaded
 * connectome, into one sealed record.
 *
 * A condition is exactly the single plan that writes the change in: the base
 * plan's stimuli in order (a rate axis changes one rate in place), then the
 * stimulate axes' populations appended in axis order (so their Philox stream
 * index is the one a plan listing them in that order would give), the base
 * silences plus the silence axes' populations, and the model with the
 * parameter axes applied. Same seed for every condition (common random
 * numbers: conditions differ by their change, not by their draws).
 *
 * Conditions share the connectome (a network borrows it) and run in parallel:
 * with fewer trials than threads, several conditions at once, each engine on
 * threads / workers threads. Results never depend on it.
 *
 * Record: conditions.csv and conditions.json (the condition table: levels,
 * the resolved change, spikes, spikes_sha256), rates_mean_hz.npy [C][N],
 * counts.npy [C][T][N] int32 (outputs.counts), final_v/g.npy [C][T][N]
 * (outputs.state), spikes/condition-NNNN/trial-NNNN.h5 (outputs.spikes),
 * summary.json. spikes_sha256 is the stream's digest (xp_impl.h), the one a
 * connectome run's summary.json states. */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/analysis.h"
#include "brainlesslab/csv.h"
#include "brainlesslab/engine.h"
#include "brainlesslab/experiment.h"
#include "brainlesslab/hash.h"
#include "brainlesslab/sonata.h"
#include "core/context_impl.h"
#include "experiment/xp_impl.h"
#include "core/json_check.h"

typedef struct condition {
    size_t levels[16]; /* per axis (the plan allows any number; see MAX_AXES) */
    char label[512];
    uint64_t spikes;
    char sha256[65];
    bl_status status;
    bl_error err;
} condition;

#define MAX_AXES 16

struct bl_screen {
    char record_dir[4096];
    char plan_id[160];
    char backend[32];
    size_t n_conditions;
    uint32_t trials;
    double duration_ms, wall_run;
    int workers, threads_each;
    condition *conds;
    double *mean_rate; /* per condition, over neurons */
};

static void decompose(const bl_plan *plan, size_t c, size_t *levels)
{
    for (size_t a = bl_plan_n_axes(plan); a-- > 0;) {
        size_t k = bl_plan_axis_at(plan, a)->n_levels;
        levels[a] = c % k;
        c /= k;
    }
}

static void level_text(const bl_plan_axis *ax, size_t k, char *buf, size_t size)
{
    if (ax->kind <= BL_AXIS_STIMULATE)
        snprintf(buf, size, "%s", ax->populations[k] ? ax->populations[k]->name : "none");
    else /* the shortest text that reads back as the same double: 0.275, not 0.27500000000000002 */
        for (int digits = 15; digits <= 17; digits++) {
            snprintf(buf, size, "%.*g", digits, ax->values[k]);
            if (strtod(buf, NULL) == ax->values[k])
                break;
        }
}

/* The condition's parameters, stimulus and silenced neurons. */
static bl_status build_condition(const bl_plan *plan, const size_t *levels, bl_lif_params *params,
                                 bl_stimulus **stim, int32_t **silenced, size_t *n_silenced, bl_error *err)
{
    *params = *bl_plan_lif_params(plan);
    *stim = NULL;
    *silenced = NULL;
    size_t na = bl_plan_n_axes(plan), ns = bl_plan_n_populations(plan);
    for (size_t a = 0; a < na; a++) {
        const bl_plan_axis *ax = bl_plan_axis_at(plan, a);
        if (ax->kind == BL_AXIS_PARAMETER) {
            bl_status st = bl_lif_params_set(params, ax->parameter, ax->values[levels[a]], err);
            if (st)
                return st;
        }
    }
    bl_status st = bl_stimulus_create(stim, err);
    double duration = bl_plan_duration_ms(plan);
    for (size_t i = 0; !st && i < ns; i++) {
        double rate = NAN; /* the plan's own protocol */
        for (size_t a = 0; a < na; a++) {
            const bl_plan_axis *ax = bl_plan_axis_at(plan, a);
            if (ax->kind == BL_AXIS_RATE && ax->stimulus == i)
                rate = ax->values[levels[a]];
        }
        st = bl_plan_add_stimulus(plan, bl_plan_population_at(plan, i), rate, *stim, err);
    }
    for (size_t a = 0; !st && a < na; a++) {
        const bl_plan_axis *ax = bl_plan_axis_at(plan, a);
        const bl_plan_population *p = ax->kind == BL_AXIS_STIMULATE ? ax->populations[levels[a]] : NULL;
        if (p)
            st = bl_stimulus_add_poisson(*stim, p->neurons, p->n_neurons, ax->rate_hz, ax->start_ms,
                                         ax->stop_ms >= duration ? -1.0 : ax->stop_ms, err);
    }
    size_t nb = 0;
    const int32_t *base = bl_plan_silenced(plan, &nb);
    size_t total = nb;
    for (size_t a = 0; a < na; a++) {
        const bl_plan_axis *ax = bl_plan_axis_at(plan, a);
        if (ax->kind == BL_AXIS_SILENCE && ax->populations[levels[a]])
            total += ax->populations[levels[a]]->n_neurons;
    }
    int32_t *sil = st ? NULL : malloc((total ? total : 1) * sizeof *sil);
    if (!st && !sil)
        st = bl_fail(err, BL_ERR_NOMEM, "cannot allocate %zu silenced neurons", total);
    if (st)
        return st;
    /* A flag per neuron gives the sorted union without a sort. */
    uint64_t n = bl_connectome_n_neurons(bl_plan_connectome(plan));
    uint8_t *flag = calloc(n ? n : 1, 1);
    if (!flag) {
        free(sil);
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate silence flags");
    }
    for (size_t i = 0; i < nb; i++)
        flag[base[i]] = 1;
    for (size_t a = 0; a < na; a++) {
        const bl_plan_axis *ax = bl_plan_axis_at(plan, a);
        const bl_plan_population *p = ax->kind == BL_AXIS_SILENCE ? ax->populations[levels[a]] : NULL;
        for (size_t i = 0; p && i < p->n_neurons; i++)
            flag[p->neurons[i]] = 1;
    }
    size_t u = 0;
    for (uint64_t i = 0; i < n; i++)
        if (flag[i])
            sil[u++] = (int32_t)i;
    free(flag);
    *silenced = sil;
    *n_silenced = u;
    return BL_OK;
}

typedef struct shared {
    bl_context *ctx;
    const char *population; /* the SONATA population: the connectome's name */
    const bl_plan *plan;
    bl_record *rec;
    const char *backend;
    int threads_each;
    uint64_t n;
    int32_t *counts; /* [C][T][N] */
    void *final_v, *final_g;
    size_t state_size;
    bl_dtype state_dtype;
    double *rates; /* [C][N] */
    int cancelled;          /* the context's cancel said stop: conditions not begun are not run */
    size_t done_at_cancel;  /* conditions finished when it did */
} shared;

static bl_status run_condition(shared *sh, size_t c, condition *cond)
{
    const bl_plan *plan = sh->plan;
    bl_error *err = &cond->err;
    bl_lif_params params;
    bl_stimulus *stim = NULL;
    int32_t *sil = NULL;
    size_t nsil = 0;
    bl_network *net = NULL;
    bl_engine *eng = NULL;
    bl_result *res = NULL;
    uint32_t trials = bl_plan_trials(plan);
    bl_status st = build_condition(plan, cond->levels, &params, &stim, &sil, &nsil, err);
    if (!st)
        st = bl_network_create(bl_plan_connectome(plan), &params, stim, sil, nsil, bl_plan_seed(plan), &net, err);
    if (!st)
        st = bl_engine_create(sh->ctx, net, sh->backend, &eng, err);
    if (!st)
        st = bl_engine_set_threads(eng, sh->threads_each, err);
    if (!st)
        st = bl_result_create(net, 0, trials, &res, err);
    /* Spikes stream out (spikes/condition-NNNN/trial-NNNN.h5 when asked for),
     * hashed on the way: a condition keeps no events in memory. */
    bl_xp_spikes *spikes = NULL;
    char dir[64];
    snprintf(dir, sizeof dir, "spikes/condition-%04zu", c);
    if (!st)
        st = bl_xp_spikes_open(sh->rec, dir, sh->population, trials, bl_plan_steps(plan), params.dt_ms, sh->n, NULL,
                               NULL, bl_plan_output_spikes(plan), &spikes, err);
    if (!st)
        bl_result_observe(res, bl_xp_spikes_sink, NULL, spikes);
    if (!st)
        st = bl_engine_run(eng, 0, trials, bl_plan_steps(plan), res, err);
    if (!st)
        st = bl_xp_spikes_end_trials(spikes, 0, trials, err);
    if (!st) {
        uint64_t n = sh->n, tn = (uint64_t)trials * n;
        memcpy(sh->counts + c * tn, bl_result_counts(res), tn * sizeof(int32_t));
        if (sh->final_v) {
            memcpy((char *)sh->final_v + c * tn * sh->state_size, bl_result_final_v(res), tn * sh->state_size);
            memcpy((char *)sh->final_g + c * tn * sh->state_size, bl_result_final_g(res), tn * sh->state_size);
        }
        double *sd = malloc((n ? n : 1) * sizeof *sd);
        if (!sd)
            st = bl_fail(err, BL_ERR_NOMEM, "cannot allocate rates");
        else
            bl_rates(bl_result_counts(res), trials, n, bl_plan_duration_ms(plan) / 1000.0, sh->rates + c * n, sd);
        free(sd);
        cond->spikes = bl_result_n_events(res);
        bl_xp_spikes_digest(spikes, cond->sha256);
    }
    bl_xp_spikes_destroy(spikes);
    if (st)
        bl_fail_context(err, "condition %zu (%s)", c, cond->label);
    bl_result_destroy(res);
    bl_engine_destroy(eng);
    bl_network_destroy(net);
    bl_stimulus_destroy(stim);
    free(sil);
    return st;
}

static cJSON *condition_json(const bl_plan *plan, const condition *cond, size_t c, double mean_rate)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "condition", (double)c);
    cJSON_AddStringToObject(o, "label", cond->label);
    cJSON *lv = cJSON_AddObjectToObject(o, "levels");
    cJSON *stim = cJSON_AddArrayToObject(o, "added_stimuli");
    cJSON *sil = cJSON_AddArrayToObject(o, "added_silences");
    cJSON *rates = cJSON_AddObjectToObject(o, "stimulus_rates_hz");
    cJSON *params = cJSON_AddObjectToObject(o, "parameters");
    for (size_t i = 0; i < bl_plan_n_populations(plan); i++)
        cJSON_AddNumberToObject(rates, bl_plan_population_at(plan, i)->name, bl_plan_population_at(plan, i)->rate_hz);
    for (size_t a = 0; a < bl_plan_n_axes(plan); a++) {
        const bl_plan_axis *ax = bl_plan_axis_at(plan, a);
        size_t k = cond->levels[a];
        char text[64];
        level_text(ax, k, text, sizeof text);
        cJSON_AddStringToObject(lv, ax->name, text);
        if (ax->kind == BL_AXIS_SILENCE && ax->populations[k])
            cJSON_AddItemToArray(sil, cJSON_CreateString(ax->populations[k]->name));
        if (ax->kind == BL_AXIS_STIMULATE && ax->populations[k]) {
            cJSON *s = cJSON_CreateObject();
            cJSON_AddStringToObject(s, "population", ax->populations[k]->name);
            cJSON_AddNumberToObject(s, "rate_hz", ax->rate_hz);
            cJSON_AddNumberToObject(s, "start_ms", ax->start_ms);
            cJSON_AddNumberToObject(s, "stop_ms", ax->stop_ms);
            cJSON_AddItemToArray(stim, s);
        }
        if (ax->kind == BL_AXIS_RATE) {
            cJSON_DeleteItemFromObjectCaseSensitive(rates, bl_plan_population_at(plan, ax->stimulus)->name);
            cJSON_AddNumberToObject(rates, bl_plan_population_at(plan, ax->stimulus)->name, ax->values[k]);
        }
        if (ax->kind == BL_AXIS_PARAMETER)
            cJSON_AddNumberToObject(params, ax->parameter, ax->values[k]);
    }
    cJSON_AddNumberToObject(o, "spikes", (double)cond->spikes);
    cJSON_AddNumberToObject(o, "mean_rate_hz", mean_rate);
    cJSON_AddStringToObject(o, "spikes_sha256", cond->sha256);
    return o;
}

static bl_status write_tables(bl_screen *s, const bl_plan *plan, bl_record *rec, bl_error *err)
{
    char path[4096];
    bl_status st = bl_record_path(rec, "conditions.csv", path, sizeof path, err);
    if (st)
        return st;
    FILE *f = fopen(path, "w");
    if (!f)
        return bl_fail(err, BL_ERR_IO, "%s: cannot create", path);
    size_t na = bl_plan_n_axes(plan);
    bl_csv_write_field(f, "condition", 0);
    bl_csv_write_field(f, "label", 0);
    for (size_t a = 0; a < na; a++)
        bl_csv_write_field(f, bl_plan_axis_at(plan, a)->name, 0);
    bl_csv_write_field(f, "spikes", 0);
    bl_csv_write_field(f, "mean_rate_hz", 0);
    bl_csv_write_field(f, "spikes_sha256", 1);
    cJSON *arr = cJSON_CreateArray();
    for (size_t c = 0; c < s->n_conditions; c++) {
        const condition *cond = &s->conds[c];
        char buf[64];
        snprintf(buf, sizeof buf, "%zu", c);
        bl_csv_write_field(f, buf, 0);
        bl_csv_write_field(f, cond->label, 0);
        for (size_t a = 0; a < na; a++) {
            level_text(bl_plan_axis_at(plan, a), cond->levels[a], buf, sizeof buf);
            bl_csv_write_field(f, buf, 0);
        }
        snprintf(buf, sizeof buf, "%" PRIu64, cond->spikes);
        bl_csv_write_field(f, buf, 0);
        snprintf(buf, sizeof buf, "%.17g", s->mean_rate[c]);
        bl_csv_write_field(f, buf, 0);
        bl_csv_write_field(f, cond->sha256, 1);
        cJSON_AddItemToArray(arr, condition_json(plan, cond, c, s->mean_rate[c]));
    }
    int bad = ferror(f);
    if (fclose(f) || bad) {
        cJSON_Delete(arr);
        return bl_fail(err, BL_ERR_IO, "%s: write failed", path);
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "order", "the cartesian product of the axes, the first axis varying slowest");
    cJSON_AddItemToObject(o, "conditions", arr);
    return bl_xp_write_json(rec, "conditions.json", o, err);
}

static bl_status screen_body(bl_screen *s, const bl_plan *plan, const bl_experiment_options *opt, bl_record *rec,
                             bl_xp_log *log, bl_error *err)
{
    const bl_connectome *c = bl_plan_connectome(plan);
    uint64_t n = bl_connectome_n_neurons(c);
    uint32_t trials = bl_plan_trials(plan);
    size_t C = s->n_conditions;
    shared sh = {.ctx = bl_context_resolve(opt->context), .plan = plan, .rec = rec, .n = n};
    sh.population = bl_connectome_info(c, "name") ? bl_connectome_info(c, "name") : "connectome";
    /* Every condition's counts are kept: refuse sizes whose product overflows. */
    uint64_t cells = (uint64_t)C * trials, rate_cells = (uint64_t)C * n;
    if (n && cells > (UINT64_MAX / 8) / n)
        return bl_fail(err, BL_ERR_INVALID, "%s: %zu conditions x %u trials x %" PRIu64 " neurons is too large",
                       bl_plan_path(plan), C, trials, n);
    cells = cells * n > 0 ? cells * n : 1;
    rate_cells = rate_cells > 0 ? rate_cells : 1;
    s->conds = calloc(C, sizeof *s->conds);
    s->mean_rate = calloc(C, sizeof *s->mean_rate);
    sh.counts = malloc(cells * sizeof *sh.counts);
    sh.rates = malloc(rate_cells * sizeof *sh.rates);
    bl_status st = s->conds && s->mean_rate && sh.counts && sh.rates
                       ? BL_OK
                       : bl_fail(err, BL_ERR_NOMEM, "cannot allocate %zu conditions x %u trials x %" PRIu64
                                 " neurons", C, trials, n);
    for (size_t k = 0; !st && k < C; k++) {
        decompose(plan, k, s->conds[k].levels);
        size_t o = 0;
        for (size_t a = 0; a < bl_plan_n_axes(plan) && o < sizeof s->conds[k].label; a++) {
            char text[64];
            level_text(bl_plan_axis_at(plan, a), s->conds[k].levels[a], text, sizeof text);
            o += (size_t)snprintf(s->conds[k].label + o, sizeof s->conds[k].label - o, "%s%s=%s", a ? "," : "",
                                  bl_plan_axis_at(plan, a)->name, text);
        }
    }

    /* The backend: "auto" is chosen once, on the first condition's network. */
    const char *requested = opt->backend ? opt->backend : bl_plan_backend(plan);
    int threads = bl_xp_threads(opt, bl_plan_threads(plan));
    if (!st) {
        bl_lif_params params;
        bl_stimulus *stim = NULL;
        int32_t *sil = NULL;
        size_t nsil = 0;
        bl_network *net = NULL;
        bl_engine *eng = NULL;
        bl_result *probe = NULL;
        st = build_condition(plan, s->conds[0].levels, &params, &stim, &sil, &nsil, err);
        if (!st)
            st = bl_network_create(c, &params, stim, sil, nsil, bl_plan_seed(plan), &net, err);
        if (!st)
            st = bl_engine_create(sh.ctx, net, requested, &eng, err);
        if (!st)
            st = bl_engine_set_threads(eng, threads, err);
        if (!st)
            st = bl_result_create(net, 0, 1, &probe, err);
        if (!st) {
            snprintf(s->backend, sizeof s->backend, "%s", bl_engine_backend(eng));
            threads = bl_engine_threads(eng);
            /* The state's dtype is the model's (a result knows it). */
            sh.state_size = bl_dtype_size(bl_result_state_dtype(probe));
            sh.state_dtype = bl_result_state_dtype(probe);
        }
        bl_result_destroy(probe);
        bl_engine_destroy(eng);
        bl_network_destroy(net);
        bl_stimulus_destroy(stim);
        free(sil);
    }
    if (!st && (bl_backend_caps(s->backend) & BL_BACKEND_JOB))
        st = bl_fail(err, BL_ERR_UNSUPPORTED, "%s: a screen runs in one process (the %s backend is not supported)",
                     bl_plan_path(plan), s->backend);
    if (st)
        goto out;
    /* Trials fill the threads first; spare threads take further conditions. */
    int workers = threads > (int)trials ? threads / (int)trials : 1;
    if ((size_t)workers > C)
        workers = (int)C;
    if (workers < 1)
        workers = 1;
    s->workers = workers;
    s->threads_each = threads / workers > 0 ? threads / workers : 1;
    sh.backend = s->backend;
    sh.threads_each = s->threads_each;
    if (bl_plan_output_state(plan)) {
        sh.final_v = malloc(cells * sh.state_size);
        sh.final_g = malloc(cells * sh.state_size);
        if (!sh.final_v || !sh.final_g)
            st = bl_fail(err, BL_ERR_NOMEM, "cannot allocate the final state of %zu conditions", C);
    }
    if (!st) /* before the clock starts: compilation is reported apart (run.model_codegen) */
        st = bl_xp_eq_codegen(plan, rec, log, err);
    bl_xp_logf(log, "%zu conditions x %u trials, backend %s, %d condition(s) at once x %d thread(s)", C, trials,
               s->backend, workers, s->threads_each);

    double t0 = bl_xp_now();
    size_t done = 0;
    if (!st) {
#pragma omp parallel for num_threads(workers) schedule(dynamic, 1) if (workers > 1)
        for (size_t k = 0; k < C; k++) {
            if (__atomic_load_n(&sh.cancelled, __ATOMIC_ACQUIRE)) {
                s->conds[k].status = bl_fail(&s->conds[k].err, BL_ERR_CANCELLED, "cancelled after %zu of %zu conditions",
                                             sh.done_at_cancel, C);
                continue;
            }
            s->conds[k].status = run_condition(&sh, k, &s->conds[k]);
#pragma omp critical(bl_screen_progress)
            {
                done++;
                /* Asked one worker at a time, never after the last condition. */
                if (done < C && !sh.cancelled && bl_context_cancelled(sh.ctx)) {
                    sh.done_at_cancel = done;
                    __atomic_store_n(&sh.cancelled, 1, __ATOMIC_RELEASE);
                }
                bl_xp_logf(log, "condition %zu (%s): %" PRIu64 " spikes", k, s->conds[k].label, s->conds[k].spikes);
                /* Progress in trials: a condition's trials count when it ends. */
                if (sh.ctx && sh.ctx->progress)
                    sh.ctx->progress(sh.ctx->progress_user, (uint32_t)(done * trials), (uint32_t)(C * trials),
                                     (double)(done * trials) * bl_plan_duration_ms(plan) / 1000.0, bl_xp_now() - t0);
            }
        }
    }
    s->wall_run = bl_xp_now() - t0;
    for (size_t k = 0; !st && k < C; k++)
        if (s->conds[k].status) {
            *err = s->conds[k].err;
            st = s->conds[k].status;
        }
    for (size_t k = 0; !st && k < C; k++) {
        double sum = 0;
        for (uint64_t i = 0; i < n; i++)
            sum += sh.rates[k * n + i];
        s->mean_rate[k] = n ? sum / (double)n : 0.0;
    }
    uint64_t shape3[3] = {C, trials, n}, shape2[2] = {C, n};
    if (!st)
        st = bl_xp_write_npy(rec, "rates_mean_hz.npy", BL_DTYPE_FLOAT64, 2, shape2, sh.rates, err);
    if (!st && bl_plan_output_counts(plan))
        st = bl_xp_write_npy(rec, "counts.npy", BL_DTYPE_INT32, 3, shape3, sh.counts, err);
    if (!st && sh.final_v) {
        bl_dtype dt = sh.state_dtype;
        st = bl_xp_write_npy(rec, "final_v.npy", dt, 3, shape3, sh.final_v, err);
        if (!st)
            st = bl_xp_write_npy(rec, "final_g.npy", dt, 3, shape3, sh.final_g, err);
    }
    if (!st)
        st = write_tables(s, plan, rec, err);
    if (!st) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "plan_id", bl_plan_id(plan));
        cJSON_AddStringToObject(o, "plan_hash", bl_plan_hash(plan));
        cJSON_AddStringToObject(o, "backend", s->backend);
        cJSON_AddNumberToObject(o, "conditions", (double)C);
        cJSON_AddNumberToObject(o, "conditions_at_once", workers);
        cJSON_AddNumberToObject(o, "threads_per_condition", s->threads_each);
        cJSON_AddNumberToObject(o, "trials", trials);
        cJSON_AddNumberToObject(o, "duration_ms", bl_plan_duration_ms(plan));
        cJSON_AddNumberToObject(o, "wall_run_s", s->wall_run);
        st = bl_xp_write_json(rec, "summary.json", o, err);
    }
    if (!st) {
        cJSON *run = cJSON_CreateObject();
        cJSON_AddStringToObject(run, "backend_requested", requested);
        cJSON_AddStringToObject(run, "backend", s->backend);
        cJSON_AddNumberToObject(run, "threads", threads);
        cJSON_AddNumberToObject(run, "conditions", (double)C);
        cJSON_AddNumberToObject(run, "wall_run_s", s->wall_run);
        bl_xp_eq_codegen_json(plan, run);
        char *text = bl_json_print(run, 0);
        cJSON_Delete(run);
        st = text ? bl_record_set_json(rec, "run", text, err) : bl_fail(err, BL_ERR_NOMEM, "run section");
        free(text);
    }
out:
    free(sh.counts);
    free(sh.rates);
    free(sh.final_v);
    free(sh.final_g);
    return st;
}

bl_status bl_screen_run(const bl_plan *plan, const bl_experiment_options *opt, bl_screen **out, bl_error *err)
{
    *out = NULL;
    size_t na = bl_plan_n_axes(plan);
    if (!na)
        return bl_fail(err, BL_ERR_INVALID, "%s: operation \"%s\" is not a screen", bl_plan_path(plan),
                       bl_plan_operation(plan));
    if (na > MAX_AXES)
        return bl_fail(err, BL_ERR_INVALID, "%s: a screen has at most %d axes (%zu given)", bl_plan_path(plan),
                       MAX_AXES, na);
    bl_screen *s = calloc(1, sizeof *s);
    if (!s)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate a screen");
    s->n_conditions = 1;
    for (size_t a = 0; a < na; a++)
        s->n_conditions *= bl_plan_axis_at(plan, a)->n_levels;
    s->trials = bl_plan_trials(plan);
    s->duration_ms = bl_plan_duration_ms(plan);
    snprintf(s->plan_id, sizeof s->plan_id, "%s", bl_plan_id(plan));
    bl_record *rec = NULL;
    bl_status st = bl_xp_reserve(plan, opt->root, &rec, err);
    if (st) {
        free(s);
        return st;
    }
    snprintf(s->record_dir, sizeof s->record_dir, "%s", bl_record_dir(rec));
    bl_xp_log log;
    bl_xp_log_open(&log, rec);
    bl_xp_logf(&log, "screen %s (plan %.12s)", bl_plan_id(plan), bl_plan_hash(plan));
    st = bl_xp_protect(rec, opt, 0, err);
    if (!st)
        st = bl_xp_begin(plan, rec, err);
    if (!st)
        st = screen_body(s, plan, opt, rec, &log, err);
    st = bl_xp_end(rec, &log, st, err);
    bl_record_destroy(rec);
    if (st) {
        bl_screen_destroy(s);
        return st;
    }
    *out = s;
    return BL_OK;
}

void bl_screen_destroy(bl_screen *s)
{
    if (!s)
        return;
    free(s->conds);
    free(s->mean_rate);
    free(s);
}

const char *bl_screen_record_dir(const bl_screen *s) { return s->record_dir; }

void bl_screen_print(const bl_screen *s, FILE *f)
{
    double sim = (double)s->n_conditions * s->trials * s->duration_ms / 1000.0;
    fprintf(f, "%s: %zu conditions x %u trial(s) x %.0f ms, %s backend, %d at once x %d thread(s)\n", s->plan_id,
            s->n_conditions, s->trials, s->duration_ms, s->backend, s->workers, s->threads_each);
    fprintf(f, "  simulated %.1f s in %.2f s wall\n\n", sim, s->wall_run);
    fprintf(f, "  %-9s  %-48s  %10s  %14s\n", "condition", "levels", "spikes", "mean rate (Hz)");
    for (size_t c = 0; c < s->n_conditions && c < 64; c++)
        fprintf(f, "  %-9zu  %-48.48s  %10" PRIu64 "  %14.3f\n", c, s->conds[c].label, s->conds[c].spikes,
                s->mean_rate[c]);
    if (s->n_conditions > 64)
        fprintf(f, "  ... %zu more in conditions.csv\n", s->n_conditions - 64);
    fprintf(f, "\n  record: %s\n", s->record_dir);
}
