/* The "ssa" runner: a bank of replicates of the plan's reactions, every
 * replicate on its own stream (docs/streams.md, SSA replicates), the counts
 * at the grid kept (counts.npy: replicates x times x species, events.npy),
 * and summary.json stating the method (tau-leap marked approximate), the
 * seed and stream layout, the events and what was retained.
 *
 * Under mpirun the bank is split over the ranks by replicate index (rank r of
 * R runs replicates [N r / R, N (r + 1) / R)); a replicate's stream depends
 * only on its index, so each runs as it would alone. Rank 0 reserves the
 * record, gathers the slices (bl_mpi_job_gather_bytes) and writes the same
 * counts.npy and events.npy as one process would, byte for byte. A job of
 * several ranks has the connectome job's watchdog (bl_xp_mpi_guard): a
 * SIGTERM, SIGINT or SIGHUP, mpirun's when the job is interrupted or a rank
 * dies, leaves the record FAILED naming the signal. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/record.h"
#include "brainlesslab/solvers.h"
#include "core/threads.h"
#include "experiment/solvers_run.h"
#include "experiment/xp_impl.h"
#include "mpi/mpi_job.h"
#include "plan/plan_solvers.h"

static const char *const ssa_artifacts[] = {"t.npy", "counts.npy", "events.npy", "summary.json", NULL};

/* What each rank's slice ended with, gathered on rank 0 with the slices. */
typedef struct slice_status {
    int32_t status;
    char message[sizeof(((bl_error *)0)->message)];
} slice_status;

bl_status bl_xp_ssa_run(bl_plan *plan, const bl_experiment_options *opt, void **out, bl_error *err)
{
    const bl_pk_ssa *s = bl_pk_spec(plan);
    const size_t R = (size_t)s->replicates, nt = s->n_times, ns = s->n_species;
    bl_context *ctx = bl_context_resolve(opt->context);
    if (!ctx)
        return bl_fail(err, BL_ERR_NOMEM, "ssa: cannot allocate the default context");
    bl_status st = bl_mpi_job_join(ctx, 0, err);
    if (st)
        return st;
    const int rank = bl_mpi_job_rank(ctx), ranks = bl_mpi_job_ranks(ctx), multi = ranks > 1;
    /* This rank's replicates: a split by index, so the bank is the same
     * whatever the rank count. */
    const size_t lo = (size_t)((uint64_t)R * (uint64_t)rank / (uint64_t)ranks);
    const size_t hi = (size_t)((uint64_t)R * (uint64_t)(rank + 1) / (uint64_t)ranks);
    const size_t per = nt * ns;
    solver_result *r = calloc(1, sizeof *r);
    /* Rank 0 holds the whole bank (it writes it); the others their slice. */
    const size_t held = rank == 0 ? R : hi - lo;
    int64_t *counts = calloc(held * per + 1, sizeof *counts);
    uint64_t *events = calloc(held + 1, sizeof *events);
    slice_status *all_status = rank == 0 ? calloc((size_t)ranks, sizeof *all_status) : NULL;
    slice_status mine;
    memset(&mine, 0, sizeof mine);
    bl_ssa_model *m = NULL;
    bl_record *rec = NULL;
    bl_xp_mpi_guard guard = {0};
    if (!r || !counts || !events || (rank == 0 && !all_status)) {
        st = bl_fail(err, BL_ERR_NOMEM, "ssa: out of memory for %zu replicates x %zu times x %zu species", held, nt,
                     ns);
        if (multi) /* the others would wait in the gather: end the job */
            bl_mpi_job_abort(ctx, err->message, NULL);
        goto out;
    }
    const bl_ssa_system sys = {ns, s->n_reactions, s->change, s->order, s->rate, NULL, NULL};
    if ((st = bl_ssa_model_create(&sys, &m, err))) { /* the same on every rank: the plan checked it */
        if (multi)
            bl_mpi_job_abort(ctx, err->message, NULL);
        goto out;
    }
    if (rank == 0) {
        st = bl_xp_reserve(plan, opt->root, &rec, err);
        if (!st) {
            snprintf(r->dir, sizeof r->dir, "%s", bl_record_dir(rec));
            /* one process: the record's own signal guard; a job: the watchdog */
            st = bl_xp_protect(rec, opt, multi, err);
            if (!st && multi)
                st = bl_xp_mpi_guard_start(&guard, ctx, rec, err);
            if (!st)
                st = bl_record_bind(rec, bl_plan_hash(plan), ssa_artifacts, 4, err);
            if (!st)
                st = bl_record_set_json(rec, "plan", bl_plan_resolved_json(plan), err);
        }
        if (st && multi) { /* the record FAILED, if there is one: end the job */
            if (rec) {
                bl_xp_mpi_guard_hold(&guard);
                st = bl_xp_end(rec, NULL, st, err);
                bl_xp_mpi_guard_end(&guard);
            }
            bl_mpi_job_abort(ctx, err->message, NULL);
        }
        if (st && !rec)
            goto out;
    }
    if (multi && (st = bl_mpi_job_bcast_string(ctx, r->dir, sizeof r->dir, err)))
        bl_mpi_job_abort(ctx, err->message, NULL);
    /* The others' watchdog: they wait for rank 0 to fail the record. */
    if (multi && rank > 0 && !st && (st = bl_xp_mpi_guard_start(&guard, ctx, NULL, err)))
        bl_mpi_job_abort(ctx, err->message, NULL);
    bl_ssa_options o;
    bl_ssa_options_default(&o);
    o.method = s->method;
    o.tau = s->tau;
    o.seed = s->seed;
    o.max_events = (uint64_t)s->max_events;
    o.threads = bl_xp_threads(opt, 0);
    bl_error e = {0};
    if (!st) {
        /* Rank 0's slice goes straight into its place in the bank. */
        int64_t *c0 = rank == 0 ? counts + lo * per : counts;
        uint64_t *e0 = rank == 0 ? events + lo : events;
        mine.status = (int32_t)bl_ssa_run(m, &o, s->x0, s->t, nt, lo, hi - lo, c0, e0, &e);
        if (mine.status)
            snprintf(mine.message, sizeof mine.message, "%s", e.message);
        if (multi) {
            /* Every rank takes part in every gather, failed or not. */
            bl_status g = bl_mpi_job_gather_bytes(ctx, &mine, (uint64_t)rank * sizeof mine,
                                                  (uint64_t)(rank + 1) * sizeof mine, all_status,
                                                  (uint64_t)ranks * sizeof mine, &e);
            if (!g)
                g = bl_mpi_job_gather_bytes(ctx, c0, lo * per * sizeof *counts, hi * per * sizeof *counts, counts,
                                            R * per * sizeof *counts, &e);
            if (!g)
                g = bl_mpi_job_gather_bytes(ctx, e0, lo * sizeof *events, hi * sizeof *events, events,
                                            R * sizeof *events, &e);
            if (g)
                bl_mpi_job_abort(ctx, e.message, NULL);
        } else if (rank == 0) {
            all_status[0] = mine;
        }
        if (rank > 0) { /* rank 0 speaks for the job */
            st = mine.status ? bl_fail(err, (bl_status)mine.status, "%s", mine.message) : BL_OK;
            goto out;
        }
        /* The lowest failing replicate: the first failing rank's (the slices are in index order). */
        for (int k = 0; k < ranks && !st; k++)
            if (all_status[k].status)
                st = bl_fail(err, (bl_status)all_status[k].status, "%s", all_status[k].message);
    }
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
        cJSON_AddNumberToObject(j, "ranks", (double)ranks);
        cJSON_AddStringToObject(j, "split", "by replicate index: rank r of R runs replicates [N r / R, N (r + 1) / R), "
                                            "gathered on rank 0");
        cJSON *ret = cJSON_AddObjectToObject(j, "retained");
        cJSON_AddStringToObject(ret, "what", "every replicate's counts at every output time");
        cJSON_AddNumberToObject(ret, "values", (double)(R * nt * ns));
        cJSON_AddNumberToObject(ret, "bytes", 8.0 * (double)(R * nt * ns) + 8.0 * (double)R);
        st = bl_xp_write_json(rec, "summary.json", j, err);
        snprintf(r->line, sizeof r->line, "ssa %s: %zu replicates, %zu species, %" PRIu64 " %s", s->method, R, ns,
                 total, tau ? "leaps" : "events");
    }
    bl_xp_mpi_guard_hold(&guard); /* the seal (or fail) is not interrupted */
    st = bl_xp_end(rec, NULL, st, err);
    bl_xp_mpi_guard_end(&guard); /* guard lives on this stack */
out:
    bl_record_destroy(rec);
    bl_ssa_model_destroy(m);
    free(counts);
    free(events);
    free(all_status);
    if (st) {
        free(r);
        return st;
    }
    *out = r;
    return BL_OK;
}
