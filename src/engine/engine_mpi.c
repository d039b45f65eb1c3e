/* The "mpi" backend: the neurons are split across the ranks of an MPI job
 * (contiguous ranges balanced by neurons + incoming edges), each rank steps
 * its range with the exact partition kernel (src/engine/partition.c), and
 * the ranks exchange spikes once per window of `delay` steps (the minimum
 * synaptic delay, 18 steps) with two collectives, as NEST does:
 *
 *   MPI_Allgather  per rank: its spike count for every (trial, step) of the
 *                  window, plus a failure flag (so every rank stops together);
 *   MPI_Allgatherv the spiking neurons' global ids
 * (the two collectives are src/mpi/exchange_mpi.c).
 *
 * Why it is exact for any rank count: rank order is neuron order, so the
 * concatenation over ranks keeps every step's spikers ascending, which is the
 * order the partition kernel needs to sum input in the spec's order; Poisson
 * streams are keyed by (seed, trial, population, global neuron id, step), so
 * nothing depends on the partition. Every rank ends with every spike event
 * (it receives them all anyway), and the final v, g ranges are all-gathered,
 * so every rank's bl_result equals the single-process result.
 *
 * Threads inside a rank work as in the cpu backend: with at least as many
 * trials as threads, a bank of `threads` trials runs at once (one partition
 * per trial, the bank's windows exchanged in the same two collectives);
 * otherwise one trial's range is split into `threads` partitions.
 *
 * MPI calls are made by the main thread only (MPI_THREAD_FUNNELED). The job
 * (MPI initialisation, its communicator, replica groups, aborting) lives in
 * src/mpi/; this file is only the stepping backend over it. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/context_impl.h"
#include "engine/engine_impl.h"
#include "engine/partition.h"
#include "mpi/mpi_comm.h"

/* ---- the backend ---- */

typedef struct spike_window {
    uint64_t *start; /* step j's spikers are all.v[start[j] .. start[j+1]) */
    i32_list all;
} spike_window;

/* One trial in flight on this rank: its partitions cover [lo, hi). */
typedef struct mpi_trial {
    partition *parts;
    size_t *next_event; /* per partition */
    int n_parts;
    spike_window merged[2]; /* windows w-1 and w, by parity, over all ranks */
    i32_list out;           /* (step, neuron) pairs of the trial, all ranks */
} mpi_trial;

typedef struct mpi_state {
    const bl_network *net;
    bl_context *ctx; /* the job: communicator, replica groups, stats prefix */
    /* rank and size within this rank's replica group (comm), which splits
     * the neurons; group of groups, which split the trials */
    int rank, size, threads, skip_ok;
    MPI_Comm comm;
    int world_rank, world_size, group, groups;
    uint64_t bytes_replicas; /* received in the cross-group trial broadcasts */
    int32_t *bounds;  /* rank ranges, size + 1 */
    int32_t *indegree;
    mpi_trial *bank;
    int n_bank, parts;
    int *send_counts; /* [n_bank * delay + 1]: the last entry is the failure flag */
    int *all_counts;  /* [size][n_bank * delay + 1] */
    int *recv_counts, *displs, *cursor, *state_counts, *state_displs;
    i32_list send, recv;
    /* statistics (BL_MPI_STATS) */
    uint64_t windows, bytes_sent, bytes_received, spikes_local;
    double wall_compute, wall_exchange;
    /* Cancellation inside a trial (issue 26): world rank 0 asks the context
     * once per window and sends the answer as bit 2 of the exchange's
     * failure flag, so its replica group stops at the same window. */
    int cancel_asked; /* rank 0, this window: the context said stop */
    int cancelled;    /* this group stopped for it (BL_ERR_CANCELLED) */
    int64_t cancelled_at;
    /* Checkpoints within a trial (snapshot.h), in a job of one replica group
     * running one trial at a time: every rank writes its neurons into the
     * blob, the blobs are OR-ed into rank 0's (run_bank), which hands it out. */
    uint64_t snap_every;
    bl_engine_snapshot_fn snap_fn;
    void *snap_user;
    unsigned char *snap;
    size_t snap_cap;
    bl_status snap_status;
    bl_error snap_err;
    bl_snap_list resumes;
} mpi_state;

static double wall(void) { return MPI_Wtime(); }

static void trial_free(mpi_trial *t, int64_t delay)
{
    for (int q = 0; q < t->n_parts; q++)
        bl_partition_free(&t->parts[q], delay);
    free(t->parts);
    free(t->next_event);
    for (int k = 0; k < 2; k++) {
        free(t->merged[k].start);
        free(t->merged[k].all.v);
    }
    free(t->out.v);
    memset(t, 0, sizeof *t);
}

static int trial_alloc(mpi_trial *t, const mpi_state *s, int n_parts)
{
    const bl_network *net = s->net;
    int32_t lo = s->bounds[s->rank], hi = s->bounds[s->rank + 1];
    if (n_parts > hi - lo)
        n_parts = hi - lo > 0 ? hi - lo : 1;
    memset(t, 0, sizeof *t);
    int32_t *b = malloc(((size_t)n_parts + 1) * sizeof *b);
    t->parts = calloc((size_t)n_parts, sizeof *t->parts);
    t->next_event = calloc((size_t)n_parts, sizeof *t->next_event);
    t->n_parts = n_parts;
    int ok = b && t->parts && t->next_event;
    for (int k = 0; ok && k < 2; k++)
        ok = (t->merged[k].start = calloc((size_t)net->delay_steps + 1, sizeof(uint64_t))) != NULL;
    if (ok)
        bl_split_by_work(s->indegree, lo, hi, n_parts, b);
    for (int q = 0; ok && q < n_parts; q++)
        if ((ok = bl_partition_alloc(&t->parts[q], net, b[q], b[q + 1])))
            t->parts[q].window_mode = (int)bl_context_resolve(s->ctx)->cpu_window;
    free(b);
    return ok;
}

static void mpi_destroy(void *v)
{
    mpi_state *s = v;
    if (!s)
        return;
    const char *stats = bl_context_mpi_stats_prefix(s->ctx);
    if (stats && *stats && s->bounds) {
        char path[4096];
        snprintf(path, sizeof path, "%s.rank%d.json", stats, s->world_rank);
        FILE *f = fopen(path, "w");
        if (f) {
            struct rusage ru;
            getrusage(RUSAGE_SELF, &ru);
            fprintf(f,
                    "{\"rank\": %d, \"ranks\": %d, \"replica_group\": %d, \"replica_groups\": %d, "
                    "\"rank_in_group\": %d, \"threads\": %d, \"lo\": %" PRId32 ", \"hi\": %" PRId32
                    ", \"windows\": %" PRIu64 ", \"bytes_sent\": %" PRIu64 ", \"bytes_received\": %" PRIu64
                    ", \"bytes_replicas\": %" PRIu64 ", \"spikes_local\": %" PRIu64 ", \"wall_compute_s\": %.6f"
                    ", \"wall_exchange_s\": %.6f, \"peak_rss_kb\": %ld}\n",
                    s->world_rank, s->world_size, s->group, s->groups, s->rank, s->threads, s->bounds[s->rank],
                    s->bounds[s->rank + 1], s->windows, s->bytes_sent, s->bytes_received, s->bytes_replicas,
                    s->spikes_local, s->wall_compute, s->wall_exchange, ru.ru_maxrss);
            fclose(f);
        }
    }
    for (int k = 0; k < s->n_bank; k++)
        trial_free(&s->bank[k], s->net->delay_steps);
    free(s->bank);
    if (s->comm != MPI_COMM_NULL) {
        int fin = 0;
        MPI_Finalized(&fin);
        if (!fin)
            MPI_Comm_free(&s->comm);
    }
    void *blocks[] = {s->bounds, s->indegree, s->send_counts, s->all_counts, s->recv_counts, s->displs,
                      s->cursor, s->state_counts, s->state_displs, s->send.v, s->recv.v};
    for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; k++)
        free(blocks[k]);
    free(s->snap);
    bl_snap_list_free(&s->resumes);
    free(s);
}

static int mpi_set_threads(void *v, int threads)
{
    mpi_state *s = v;
    s->threads = threads;
    return s->threads;
}

static bl_status mpi_create(bl_context *ctx, const bl_network *net, void **out, bl_error *err)
{
    *out = NULL;
    /* Created by name outside mpirun: a job of one rank (a singleton). */
    bl_status st = bl_mpi_job_join(ctx, 1, err);
    if (st)
        return st;
    if (net->n_neurons > INT32_MAX)
        return bl_fail(err, BL_ERR_UNSUPPORTED, "mpi backend: %" PRIu64 " neurons exceed int32 ids", net->n_neurons);
    mpi_state *s = calloc(1, sizeof *s);
    if (!s)
        return bl_fail(err, BL_ERR_NOMEM, "mpi backend: cannot allocate");
    s->net = net;
    s->ctx = ctx;
    MPI_Comm job = bl_mpi_job_comm(ctx);
    MPI_Comm_rank(job, &s->world_rank);
    MPI_Comm_size(job, &s->world_size);
    s->groups = bl_mpi_job_replica_groups(ctx);
    s->size = s->world_size / s->groups;
    s->group = s->world_rank / s->size;
    s->rank = s->world_rank % s->size;
    s->comm = MPI_COMM_NULL;
    if (MPI_Comm_split(job, s->group, s->world_rank, &s->comm) != MPI_SUCCESS) {
        int groups = s->groups;
        free(s);
        return bl_fail(err, BL_ERR_IO, "mpi backend: MPI_Comm_split into %d replica group(s) failed", groups);
    }
    s->skip_ok = bl_partition_rest_is_fixed_point(net);
    s->threads = 1;
    size_t n = net->n_neurons ? net->n_neurons : 1, r = (size_t)s->size;
    s->bounds = malloc((r + 1) * sizeof *s->bounds);
    s->indegree = calloc(n, sizeof *s->indegree);
    s->recv_counts = malloc(r * sizeof(int));
    s->displs = malloc(r * sizeof(int));
    s->cursor = malloc(r * sizeof(int));
    s->state_counts = malloc(r * sizeof(int));
    s->state_displs = malloc(r * sizeof(int));
    if (!s->bounds || !s->indegree || !s->recv_counts || !s->displs || !s->cursor || !s->state_counts ||
        !s->state_displs) {
        mpi_destroy(s);
        return bl_fail(err, BL_ERR_NOMEM, "mpi backend: cannot allocate state for %" PRIu64 " neurons",
                       net->n_neurons);
    }
    /* The rank ranges split the whole graph's work (deterministic, so every
     * rank computes the same ones). A connectome part knows the whole graph's
     * in-degrees and was cut with the same split: it must be this rank's. */
    const bl_connectome *c = net->connectome;
    const int parts = bl_connectome_parts(c);
    if (parts > 1 && (parts != s->size || bl_connectome_part(c) != s->rank)) {
        int part = bl_connectome_part(c);
        mpi_destroy(s);
        return bl_fail(err, BL_ERR_INVALID, "mpi backend: the connectome was loaded as part %d of %d, but this is "
                       "rank %d of %d ranks splitting the neurons (%d replica group(s) of the job's %d)", part, parts,
                       s->rank, s->size, s->groups, s->world_size);
    }
    if (parts > 1)
        memcpy(s->indegree, bl_connectome_in_degree(c), net->n_neurons * sizeof *s->indegree);
    else
        for (uint64_t e = 0; e < net->n_edges; e++)
            s->indegree[net->targets[e]]++;
    bl_split_by_work(s->indegree, 0, (int32_t)net->n_neurons, s->size, s->bounds);
    assert(parts == 1 || !memcmp(s->bounds, bl_connectome_part_bounds(c), ((size_t)s->size + 1) * sizeof *s->bounds));
    size_t sz = bl_model_state_size(net->model);
    for (int q = 0; q < s->size; q++) {
        uint64_t bytes = (uint64_t)(s->bounds[q + 1] - s->bounds[q]) * sz;
        if (bytes > INT_MAX) {
            mpi_destroy(s);
            return bl_fail(err, BL_ERR_UNSUPPORTED, "mpi backend: rank %d's state (%" PRIu64 " bytes) exceeds an "
                           "MPI count", q, bytes);
        }
        s->state_counts[q] = (int)bytes;
        s->state_displs[q] = (int)((uint64_t)s->bounds[q] * sz);
    }
    *out = s;
    return BL_OK;
}

static bl_status ensure_bank(mpi_state *s, int n_bank, int parts, bl_error *err)
{
    if (s->n_bank == n_bank && s->parts == parts)
        return BL_OK;
    for (int k = 0; k < s->n_bank; k++)
        trial_free(&s->bank[k], s->net->delay_steps);
    free(s->bank);
    free(s->send_counts);
    free(s->all_counts);
    s->n_bank = 0;
    s->parts = 0;
    size_t per = (size_t)n_bank * (size_t)s->net->delay_steps + 1;
    s->bank = calloc((size_t)n_bank, sizeof *s->bank);
    s->send_counts = malloc(per * sizeof(int));
    s->all_counts = malloc(per * (size_t)s->size * sizeof(int));
    if (!s->bank || !s->send_counts || !s->all_counts)
        return bl_fail(err, BL_ERR_NOMEM, "mpi backend: cannot allocate a bank of %d trials", n_bank);
    for (int k = 0; k < n_bank; k++) {
        s->n_bank = k + 1;
        if (!trial_alloc(&s->bank[k], s, parts))
            return bl_fail(err, BL_ERR_NOMEM, "mpi backend: cannot allocate state for neurons %" PRId32 "..%" PRId32,
                           s->bounds[s->rank], s->bounds[s->rank + 1]);
    }
    s->parts = parts;
    return BL_OK;
}

/* One partition's steps of window w (spikes of step - delay from merged[w-1]). */
static void run_window(const mpi_state *s, mpi_trial *t, int q, uint32_t trial, int64_t w, int64_t n_steps)
{
    const bl_network *net = s->net;
    const int64_t delay = net->delay_steps, s0 = w * delay;
    const int64_t s1 = s0 + delay < n_steps ? s0 + delay : n_steps;
    const spike_window *prev = &t->merged[(w - 1) & 1];
    partition *p = &t->parts[q];
    bl_partition_run_window(net, s->skip_ok, p, trial, s0, s1, w > 0 ? prev->all.v : NULL, prev->start,
                            &t->next_event[q]);
}

/* Exchange window w of the bank (in_bank trials): returns 0 when any rank
 * failed (every rank gets the same answer), with *why set. */
static int exchange(mpi_state *s, int in_bank, int64_t w, int64_t steps_in_window, const char **why)
{
    const int64_t delay = s->net->delay_steps;
    const int per = s->n_bank * (int)delay + 1;
    int failed = 0;
    uint64_t n_send = 0;
    for (int b = 0; b < s->n_bank; b++)
        for (int64_t j = 0; j < delay; j++) {
            uint64_t c = 0;
            if (b < in_bank && j < steps_in_window)
                for (int q = 0; q < s->bank[b].n_parts; q++) {
                    failed |= s->bank[b].parts[q].failed;
                    c += s->bank[b].parts[q].window[j].n;
                }
            failed |= c > INT_MAX;
            s->send_counts[b * delay + j] = (int)(c > INT_MAX ? 0 : c);
            n_send += c;
        }
    failed |= n_send > INT_MAX || !bl_list_reserve(&s->send, n_send ? n_send : 1);
    if (!failed) {
        s->send.n = 0;
        for (int b = 0; b < in_bank; b++)
            for (int64_t j = 0; j < steps_in_window; j++)
                for (int q = 0; q < s->bank[b].n_parts; q++) {
                    const i32_list *l = &s->bank[b].parts[q].window[j];
                    if (l->n)
                        memcpy(s->send.v + s->send.n, l->v, l->n * sizeof *l->v);
                    s->send.n += l->n;
                }
    }
    s->send_counts[per - 1] = failed | (s->cancel_asked ? 2 : 0);
    double t0 = wall();
    uint64_t total = 0;
    if (!bl_mpi_exchange_counts(s->comm, s->size, s->send_counts, per, s->all_counts, s->recv_counts, s->displs,
                                &total, &failed, why))
        return 0;
    if (failed) { /* every rank sees the same flags: all stop at this window */
        *why = failed & 1 ? "a rank ran out of memory for its active neurons or spikes" : "cancelled";
        s->cancelled = !(failed & 1);
        return 0;
    }
    /* A window's ids that do not fit in memory here: this rank alone knows, so
     * it ends the job (mpirun then stops every rank; rank 0 fails the record). */
    if (total > INT_MAX || !bl_list_reserve(&s->recv, total ? total : 1)) {
        *why = "out of memory for one window's spikes";
        bl_mpi_job_abort(s->ctx, "mpi backend: out of memory for one window's spikes", NULL);
        return 0; /* a job of one rank: nobody waits, the run fails */
    }
    if (!bl_mpi_exchange_ids(s->comm, s->send.v, (int)n_send, s->recv.v, s->recv_counts, s->displs, why))
        return 0;
    s->wall_exchange += wall() - t0;
    s->windows++;
    s->spikes_local += n_send;
    s->bytes_sent += ((uint64_t)per + n_send) * 4;
    s->bytes_received += ((uint64_t)per * (uint64_t)s->size + total) * 4;
    /* Unpack: rank r's block is ordered (trial, step); concatenating ranks in
     * order keeps each step ascending. */
    for (int r = 0; r < s->size; r++)
        s->cursor[r] = s->displs[r];
    for (int b = 0; b < in_bank; b++) {
        mpi_trial *t = &s->bank[b];
        spike_window *m = &t->merged[w & 1];
        m->all.n = 0;
        uint64_t need = 0;
        for (int r = 0; r < s->size; r++)
            for (int64_t j = 0; j < steps_in_window; j++)
                need += (uint64_t)s->all_counts[(size_t)r * (size_t)per + (size_t)(b * delay + j)];
        if (!bl_list_reserve(&m->all, need ? need : 1) || !bl_list_reserve(&t->out, t->out.n + 2 * need)) {
            *why = "out of memory for a trial's spikes";
            bl_mpi_job_abort(s->ctx, "mpi backend: out of memory for a trial's spikes", NULL);
            return 0;
        }
        for (int64_t j = 0; j < steps_in_window; j++) {
            m->start[j] = m->all.n;
            int32_t step = (int32_t)(w * delay + j);
            for (int r = 0; r < s->size; r++) {
                int c = s->all_counts[(size_t)r * (size_t)per + (size_t)(b * delay + j)];
                const int32_t *src = s->recv.v + s->cursor[r];
                if (c)
                    memcpy(m->all.v + m->all.n, src, (size_t)c * sizeof *src);
                m->all.n += (uint64_t)c;
                for (int k = 0; k < c; k++) {
                    t->out.v[t->out.n++] = step;
                    t->out.v[t->out.n++] = src[k];
                }
                s->cursor[r] += c;
            }
        }
        for (int64_t j = steps_in_window; j <= delay; j++)
            m->start[j] = m->all.n;
    }
    return 1;
}

/* Trial `trial` (the bank's only one) after window w, on every rank: each
 * writes its neurons, rank 0 ORs them together and hands the blob out. The
 * window's spikes and the pairs are the same on every rank. A failure of the
 * hand-out is rank 0's alone: it fails the record and ends the job. */
static int snapshot(mpi_state *s, uint32_t trial, int64_t w, const char **why)
{
    const bl_network *net = s->net;
    mpi_trial *t = &s->bank[0];
    const spike_window *m = &t->merged[w & 1];
    size_t len = bl_snap_len(net, m->all.n, t->out.n / 2);
    if (len > s->snap_cap) {
        unsigned char *b = realloc(s->snap, len);
        if (!b) {
            *why = "out of memory for a checkpoint";
            bl_mpi_job_abort(s->ctx, "mpi backend: out of memory for a checkpoint", NULL);
            return 0;
        }
        s->snap = b;
        s->snap_cap = len;
    }
    uint64_t step = (uint64_t)((w + 1) * net->delay_steps);
    bl_snap_write(s->snap, net, trial, step, m->start, &m->all, &t->out, t->parts, t->n_parts);
    size_t at = bl_snap_records_offset(net, m->all.n), n = (size_t)net->n_neurons * bl_partition_record_bytes(net);
    for (size_t a = 0; a < n; a += (size_t)INT_MAX) {
        int k = (int)(n - a < (size_t)INT_MAX ? n - a : (size_t)INT_MAX);
        void *buf = s->snap + at + a;
        if (MPI_Reduce(s->rank == 0 ? MPI_IN_PLACE : buf, buf, k, MPI_UNSIGNED_CHAR, MPI_BOR, 0, s->comm) !=
            MPI_SUCCESS) {
            *why = "MPI_Reduce of a checkpoint failed";
            return 0;
        }
    }
    if (s->world_rank == 0 && s->snap_fn) {
        s->snap_status = s->snap_fn(s->snap_user, trial, step, s->snap, len, &s->snap_err);
        if (s->snap_status) {
            *why = s->snap_err.message;
            return 0;
        }
    }
    return 1;
}

/* A bank of in_bank trials, first .. first + in_bank - 1, on every rank. */
static int run_bank(mpi_state *s, int in_bank, uint32_t first, int64_t n_steps, const char **why)
{
    const int64_t delay = s->net->delay_steps, windows = (n_steps + delay - 1) / delay;
    const int parts = s->bank[0].n_parts, tasks = in_bank * parts;
    for (int b = 0; b < in_bank; b++) {
        mpi_trial *t = &s->bank[b];
        t->out.n = 0;
        for (int k = 0; k < 2; k++)
            memset(t->merged[k].start, 0, ((size_t)delay + 1) * sizeof(uint64_t));
        for (int q = 0; q < t->n_parts; q++) {
            bl_partition_reset(&t->parts[q], s->net, s->skip_ok);
            t->next_event[q] = 0;
        }
    }
    int ok = 1;
    /* A trial continued from a snapshot (one trial a bank: the bank's trials
     * step their windows together, so they could only start together). */
    int64_t w0 = 0;
    const unsigned char *blob = in_bank == 1 ? bl_snap_list_find(&s->resumes, first) : NULL;
    if (blob) {
        mpi_trial *t = &s->bank[0];
        const unsigned char *records = NULL;
        spike_window *m = &t->merged[((int64_t)bl_snap_step(blob) / delay - 1) & 1];
        if ((w0 = bl_snap_restore(s->net, blob, m->start, &m->all, &t->out, &records)) < 0) {
            *why = "out of memory restoring a checkpoint";
            bl_mpi_job_abort(s->ctx, "mpi backend: out of memory restoring a checkpoint", NULL);
            return 0;
        }
        for (int q = 0; q < t->n_parts; q++) {
            if (!bl_partition_load(&t->parts[q], records, w0 * delay))
                t->parts[q].failed = 1; /* seen by every rank at the first exchange */
            while (t->next_event[q] < s->net->n_events && s->net->events[2 * t->next_event[q]] < w0 * delay)
                t->next_event[q]++;
        }
    }
    const int snaps = s->snap_every && s->groups == 1 && in_bank == 1;
    for (int64_t w = w0; ok && w < windows; w++) {
        double t0 = wall();
#pragma omp parallel for num_threads(tasks) schedule(static, 1) if (tasks > 1)
        for (int k = 0; k < tasks; k++)
            run_window(s, &s->bank[k / parts], k % parts, first + (uint32_t)(k / parts), w, n_steps);
        s->wall_compute += wall() - t0;
        int64_t in_window = (w + 1) * delay < n_steps ? delay : n_steps - w * delay;
        s->cancel_asked = s->world_rank == 0 && w + 1 < windows && bl_context_cancelled(s->ctx);
        ok = exchange(s, in_bank, w, in_window, why);
        if (s->cancelled)
            s->cancelled_at = (w + 1) * delay;
        if (ok && snaps && (w + 1) % (int64_t)s->snap_every == 0 && w + 1 < windows)
            ok = snapshot(s, first, w, why);
    }
    for (int b = 0; b < in_bank; b++)
        for (int q = 0; q < s->bank[b].n_parts; q++)
            bl_partition_settle(&s->bank[b].parts[q]);
    return ok;
}

/* Copy one finished trial into the result: all its spikes (every rank holds
 * them) and the final state, all-gathered from the ranks' ranges. */
static bl_status publish(mpi_state *s, const mpi_trial *t, uint32_t trial, bl_result *res, bl_error *err)
{
    bl_status st = bl_result_append_pairs(res, trial, t->out.v, t->out.n / 2, err);
    if (st)
        return st;
    size_t sz = bl_model_state_size(s->net->model);
    void *rows[2] = {bl_result_v_row(res, trial), bl_result_g_row(res, trial)};
    for (int k = 0; k < 2; k++) {
        for (int q = 0; q < t->n_parts; q++) {
            const partition *p = &t->parts[q];
            memcpy((char *)rows[k] + (size_t)p->lo * sz, k ? p->g : p->v, (size_t)(p->hi - p->lo) * sz);
        }
        if (MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rows[k], s->state_counts, s->state_displs, MPI_BYTE,
                           s->comm) != MPI_SUCCESS)
            return bl_fail(err, BL_ERR_IO, "mpi backend: MPI_Allgatherv of the final state of trial %" PRIu32
                           " failed", trial);
    }
    return BL_OK;
}

/* The trials of one replica group, in banks of `threads` (or one trial split
 * over the threads), into res. Collective over the group only. */
static bl_status run_group(mpi_state *s, uint32_t first_trial, uint32_t n_trials, uint64_t n_steps, bl_result *res,
                           bl_error *err)
{
    if (n_trials == 0)
        return BL_OK;
    int trial_parallel = (uint32_t)s->threads <= n_trials || s->threads == 1;
    int n_bank = trial_parallel ? (s->threads < (int)n_trials ? s->threads : (int)n_trials) : 1;
    int parts = trial_parallel ? 1 : s->threads;
    bl_status st = ensure_bank(s, n_bank, parts, err);
    /* Every rank of the group must agree that the bank exists before any collective. */
    int bad = st != BL_OK, any_bad = 0;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, s->comm);
    if (any_bad)
        return st ? st : bl_fail(err, BL_ERR_NOMEM, "mpi backend: another rank could not allocate its state");
    for (uint32_t wave = 0; !st && wave < n_trials; wave += (uint32_t)n_bank) {
        int in_bank = (int)(n_trials - wave < (uint32_t)n_bank ? n_trials - wave : (uint32_t)n_bank);
        const char *why = "failed";
        int ran = run_bank(s, in_bank, first_trial + wave, (int64_t)n_steps, &why);
        bl_snap_list_drop(&s->resumes, first_trial + wave, (uint32_t)in_bank); /* used once */
        if (!ran && s->snap_status) { /* rank 0 could not save a checkpoint: its message */
            *err = s->snap_err;
            return s->snap_status;
        }
        if (!ran) {
            if (s->cancelled) /* every rank of the group stopped at the same window */
                return bl_fail(err, BL_ERR_CANCELLED, "cancelled after %" PRId64 " of %" PRIu64 " steps of trial %"
                               PRIu32, s->cancelled_at, n_steps, first_trial + wave);
            return bl_fail(err, BL_ERR_NOMEM, "mpi backend (rank %d of %d): trials %" PRIu32 "..%" PRIu32 ": %s",
                           s->world_rank, s->world_size, first_trial + wave,
                           first_trial + wave + (uint32_t)in_bank - 1, why);
        }
        for (int b = 0; !st && b < in_bank; b++)
            st = publish(s, &s->bank[b], first_trial + wave + (uint32_t)b, res, err);
    }
    return st;
}

/* Group g's share of n trials: [n*g/G, n*(g+1)/G). */
static uint32_t group_first(uint32_t n, int g, int groups)
{
    return (uint32_t)((uint64_t)n * (uint64_t)g / (uint64_t)groups);
}

/* Trial `trial` (its pairs and final state, as the owning group's leader
 * holds them in `mine`) from world rank `root` to every rank, appended to res
 * in trial order. */
static bl_status share_trial(mpi_state *s, int root, const bl_result *mine, uint64_t *cursor, uint32_t trial,
                             bl_result *res, bl_error *err)
{
    size_t sz = bl_model_state_size(s->net->model);
    uint64_t n = s->net->n_neurons, n_pairs = 0;
    int32_t *pairs = NULL;
    if (s->world_rank == root) {
        const int32_t *et = bl_result_event_trials(mine), *es = bl_result_event_steps(mine);
        const int32_t *en = bl_result_event_neurons(mine);
        uint64_t a = *cursor, total = bl_result_n_events(mine);
        while (a < total && et[a] == (int32_t)trial)
            a++;
        n_pairs = a - *cursor;
        pairs = malloc((n_pairs ? n_pairs : 1) * 2 * sizeof *pairs);
        for (uint64_t k = 0; pairs && k < n_pairs; k++) {
            pairs[2 * k] = es[*cursor + k];
            pairs[2 * k + 1] = en[*cursor + k];
        }
        *cursor = a;
        if (!pairs) /* this rank alone knows: end the job (rank 0 fails the record) */
            return bl_mpi_job_abort(s->ctx, "mpi backend: out of memory sharing a trial between replica groups", err);
    }
    if (MPI_Bcast(&n_pairs, 1, MPI_UINT64_T, root, bl_mpi_job_comm(s->ctx)) != MPI_SUCCESS)
        return bl_fail(err, BL_ERR_IO, "mpi backend: MPI_Bcast of trial %" PRIu32 " failed", trial);
    if (s->world_rank != root && !(pairs = malloc((n_pairs ? n_pairs : 1) * 2 * sizeof *pairs)))
        return bl_mpi_job_abort(s->ctx, "mpi backend: out of memory receiving a trial from another replica group",
                                err);
    bl_status st = BL_OK;
    for (uint64_t a = 0; !st && a < 2 * n_pairs; a += (uint64_t)INT_MAX) {
        int k = (int)(2 * n_pairs - a < (uint64_t)INT_MAX ? 2 * n_pairs - a : (uint64_t)INT_MAX);
        if (MPI_Bcast(pairs + a, k, MPI_INT32_T, root, bl_mpi_job_comm(s->ctx)) != MPI_SUCCESS)
            st = bl_fail(err, BL_ERR_IO, "mpi backend: MPI_Bcast of trial %" PRIu32 "'s spikes failed", trial);
    }
    if (!st)
        st = bl_result_append_pairs(res, trial, pairs, n_pairs, err);
    free(pairs);
    /* Final state: the owner's rows (v, then g) to everyone. */
    const void *src[2] = {NULL, NULL};
    void *dst[2] = {bl_result_v_row(res, trial), bl_result_g_row(res, trial)};
    if (s->world_rank == root) {
        src[0] = (const char *)bl_result_final_v(mine) + (size_t)(trial - bl_result_first_trial(mine)) * n * sz;
        src[1] = (const char *)bl_result_final_g(mine) + (size_t)(trial - bl_result_first_trial(mine)) * n * sz;
        memcpy(dst[0], src[0], n * sz);
        memcpy(dst[1], src[1], n * sz);
    }
    for (int k = 0; !st && k < 2; k++)
        for (uint64_t a = 0; !st && a < n * sz; a += (uint64_t)INT_MAX) {
            int m = (int)(n * sz - a < (uint64_t)INT_MAX ? n * sz - a : (uint64_t)INT_MAX);
            if (MPI_Bcast((char *)dst[k] + a, m, MPI_BYTE, root, bl_mpi_job_comm(s->ctx)) != MPI_SUCCESS)
                st = bl_fail(err, BL_ERR_IO, "mpi backend: MPI_Bcast of trial %" PRIu32 "'s final state failed", trial);
        }
    if (s->world_rank != root)
        s->bytes_replicas += 8 + 8 * n_pairs + 2 * n * sz;
    return st;
}

/* With replica groups every group runs its share of the trials into a
 * result of its own; then, trial by trial in order, the owning group's
 * leader broadcasts the trial, so every rank ends with the whole result,
 * events in trial order, exactly as one group would give it. */
static bl_status mpi_run(void *v, uint32_t first_trial, uint32_t n_trials, uint64_t n_steps, bl_result *result,
                         bl_error *err)
{
    mpi_state *s = v;
    s->cancelled = 0;
    if (s->groups == 1)
        return run_group(s, first_trial, n_trials, n_steps, result, err);
    uint32_t lo = group_first(n_trials, s->group, s->groups), hi = group_first(n_trials, s->group + 1, s->groups);
    bl_result *mine = NULL;
    bl_status st = BL_OK;
    if (hi > lo && !(st = bl_result_create(s->net, first_trial + lo, hi - lo, &mine, err)))
        st = run_group(s, first_trial + lo, hi - lo, n_steps, mine, err);
    /* Cancelled: the other groups may still be stepping; rank 0 does not
     * wait for them in a collective, it fails the record and ends the job. */
    if (s->cancelled) {
        bl_result_destroy(mine);
        return st;
    }
    /* Every group must have succeeded before any trial is shared. */
    int bad = st != BL_OK, any_bad = 0;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, bl_mpi_job_comm(s->ctx));
    if (any_bad) {
        bl_result_destroy(mine);
        return st ? st : bl_fail(err, BL_ERR_NOMEM, "mpi backend: another replica group failed");
    }
    uint64_t cursor = 0;
    for (int g = 0; !st && g < s->groups; g++)
        for (uint32_t t = group_first(n_trials, g, s->groups); !st && t < group_first(n_trials, g + 1, s->groups); t++)
            st = share_trial(s, g * s->size, mine, &cursor, first_trial + t, result, err);
    bl_result_destroy(mine);
    return st;
}

static void mpi_set_snapshots(void *v, uint64_t every_windows, bl_engine_snapshot_fn fn, void *user)
{
    mpi_state *s = v;
    s->snap_every = every_windows;
    s->snap_fn = fn;
    s->snap_user = user;
}

/* A blob is checked in full before it is kept (snapshot.c); every rank is
 * handed the same blob. */
static bl_status mpi_resume_trial(void *v, uint32_t trial, const void *blob, size_t len, bl_error *err)
{
    mpi_state *s = v;
    return bl_snap_list_add(&s->resumes, s->net, trial, blob, len, err);
}

/* Snapshots within a trial when the job is one replica group running one
 * trial at a time (one thread a rank, or a trial split over the threads);
 * otherwise it checkpoints at trial boundaries (bl_engine_can_snapshot says
 * yes; the caller checks bl_engine_trials_at_once). */
/* No fallback to the reference (whose trial runs whole on one process: an
 * MPI job splits the neurons over its ranks), no probes yet; it alone steps
 * a connectome loaded as one rank's part. */
static const bl_backend backend_mpi = {
    .name = "mpi",
    .caps = BL_BACKEND_PART_KERNEL | BL_BACKEND_RUNS_PARTS | BL_BACKEND_JOB,
    .create = mpi_create,
    .run = mpi_run,
    .destroy = mpi_destroy,
    .set_threads = mpi_set_threads,
    .set_snapshots = mpi_set_snapshots,
    .resume_trial = mpi_resume_trial,
};
const bl_backend *const bl_backend_mpi_or_null = &backend_mpi;
