/* The "ssa" runner: a bank of replicates of the plan's reactions, every
 * replicate on its own stream (docs/streams.md, SSA replicates), the counts
 * at the grid kept (counts.npy: replicates x times x species, events.npy),
 * and summary.json stating the method (tau-leap marked approximate), the
 * seed and stream layout, the events and what was retained. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/record.h"
#include "brainlesslab/solvers.h"
#include "core/threads.h"
#include "experiment/solvers_run.h"
#include "experiment/xp_impl.h"
#include "plan/plan_solvers.h"

static const char *const ssa_artifacts[] = {"t.npy", "counts.npy", "events.npy", "summary.json", NULL};

bl_status bl_xp_ssa_run(bl_plan *plan, const bl_experiment_options *opt, void **out, bl_error *err)
{
    const bl_pk_ssa *s = bl_pk_spec(plan);
    const size_t R = (size_t)s->replicates, nt = s->n_times, ns = s->n_species;
    solver_result *r = calloc(1, sizeof *r);
    int64_t *counts = calloc(R * nt * ns, sizeof *counts);
    uint64_t *events = calloc(R, sizeof *events);
    bl_ssa_model *m = NULL;
    bl_record *rec = NULL;
    bl_status st = BL_OK;
    if (!r || !counts || !events) {
        st = bl_fail(err, BL_ERR_NOMEM, "ssa: out of memory for %zu replicates x %zu times x %zu species", R, nt, ns);
        goto out;
    }
    const bl_ssa_system sys = {ns, s->n_reactions, s->change, s->order, s->rate, NULL, NULL};
    if ((st = bl_ssa_model_create(&sys, &m, err)))
        goto out;
    if ((st = bl_xp_reserve(plan, opt->root, &rec, err)))
        goto out;
    snprintf(r->dir, sizeof r->dir, "%s", bl_record_dir(rec));
    st = bl_xp_protect(rec, opt, 0, err);
    if (!st)
        st = bl_record_bind(rec, bl_plan_hash(plan), ssa_artifacts, 4, err);
    if (!st)
        st = bl_record_set_json(rec, "plan", bl_plan_resolved_json(plan), err);
    bl_ssa_options o;
    bl_ssa_options_default(&o);
    o.method = s->method;
    o.tau = s->tau;
    o.seed = s->seed;
    o.max_events = (uint64_t)s->max_events;
    o.threads = bl_xp_threads(opt, 0);
    if (!st)
        st = bl_ssa_run(m, &o, s->x0, s->t, nt, 0, R, counts, events, err);
    if (!st) {
        const uint64_t shape_t[1] = {nt}, shape_c[3] = {R, nt, ns}, shape_e[1] = {R};
        st = bl_xp_write_npy(rec, "t.npy", BL_DTYPE_FLOAT64, 1, shape_t, s->t, err);
        if (!st)
            st = bl_xp_write_npy(rec, "counts.npy", BL_DTYPE_INT64, 3, shape_c, counts, err);
        if (!st)
            st = bl_xp_write_npy(rec, "events.npy", BL_DTYPE_UINT64, 1, shape_e, events, err);
    }
    if (!st) {
        uint64_t total = 0;
        for (size_t i = 0; i < R; i++)
            total += events[i];
        const int tau = !strcmp(s->method, "tau-leap");
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "method", tau ? "tau-leap" : "direct");
        cJSON_AddBoolToObject(j, "approximate", tau);
        if (tau)
            cJSON_AddNumberToObject(j, "tau", s->tau);
        cJSON_AddNumberToObject(j, "replicates", (double)R);
        char seed[32];
        snprintf(seed, sizeof seed, "%" PRIu64, s->seed);
        cJSON_AddStringToObject(j, "seed", seed);
        cJSON_AddStringToObject(j, "stream", tau ? "philox4x32-10, key (seed lo, seed hi), counter (n, replicate, "
                                                   "0x55A20000 | reaction, leap attempt)"
                                                 : "philox4x32-10, key (seed lo, seed hi), counter (event lo, "
                                                   "replicate, 0x55A1, event hi)");
        cJSON_AddNumberToObject(j, tau ? "leaps" : "events", (double)total);
        cJSON_AddNumberToObject(j, "threads", (double)bl_threads_resolve(o.threads));
        cJSON *ret = cJSON_AddObjectToObject(j, "retained");
        cJSON_AddStringToObject(ret, "what", "every replicate's counts at every output time");
        cJSON_AddNumberToObject(ret, "values", (double)(R * nt * ns));
        cJSON_AddNumberToObject(ret, "bytes", 8.0 * (double)(R * nt * ns) + 8.0 * (double)R);
        st = bl_xp_write_json(rec, "summary.json", j, err);
        snprintf(r->line, sizeof r->line, "ssa %s: %zu replicates, %zu species, %" PRIu64 " %s", s->method, R, ns,
                 total, tau ? "leaps" : "events");
    }
    st = bl_xp_end(rec, NULL, st, err);
out:
    bl_record_destroy(rec);
    bl_ssa_model_destroy(m);
    free(counts);
    free(events);
    if (st) {
        free(r);
        return st;
    }
    *out = r;
    return BL_OK;
}
