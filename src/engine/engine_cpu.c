/* The "cpu" backend: event-driven, multithreaded, bit-identical to the
 * reference backend for any thread count.
 *
 * Why it is exact:
 * - It calls the same inline model functions (src/models/) in the same order.
 * - It skips only neurons at the model's fixed point (shiu2024: v = v_0,
 *   g = 0; phase4c: v = v_rest, g = +0, not refractory), where one update
 *   step is the identity bit for bit, and wakes them before any input reaches
 *   them. The fixed-point property is checked numerically for the configured
 *   parameters; if it fails, no neuron is ever skipped.
 * - Partitions own disjoint, contiguous ranges of target neurons. Each
 *   delivers every spike of step s - delay, sources ascending, to the targets
 *   it owns, so each target sums its input in ascending source order: the
 *   spec's order, whatever the number of partitions.
 *
 * How it is parallel: every synaptic delay is `delay` steps, so the spikes of
 * a window of `delay` steps are first needed in the next window. Partitions
 * run a whole window independently and exchange spikes once per window
 * (shared memory here; MPI_Allgatherv in an MPI backend, which can reuse the
 * partition kernel unchanged). With more trials than threads, threads run
 * whole trials instead (one partition each), which needs no exchange at all.
 *
 * Why it is fast: neurons away from rest live in dense "active" slots
 * (structure of arrays), so the per-step update is a branch-free loop that
 * the compiler vectorises; everything else is driven by spikes. */
#include <inttypes.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/context_impl.h"
#include "engine/partition.h"

/* Spikes of one window, merged over partitions: step j's spikers are
 * v[start[j] .. start[j+1]). */
typedef struct spike_window {
    uint64_t *start;
    i32_list all;
} spike_window;

/* Everything one trial in flight needs. */
typedef struct runner {
    partition *parts;
    int n_parts;
    spike_window merged[2]; /* windows w-1 and w, by parity */
    i32_list out;           /* (step, neuron) pairs of the trial (since the last flush) */
    bl_status status;       /* a streaming sink's failure in this trial */
    bl_error err;
    unsigned char *snap;    /* a snapshot being handed out (snapshot.h) */
    size_t snap_cap;
} runner;

typedef struct cpu_state {
    const bl_network *net;
    const bl_context *ctx; /* asked to stop once per window (run_trial) */
    int threads;
    int skip_ok;
    runner *runners;
    int n_runners, parts_per_runner;
    uint64_t min_edges_per_partition; /* BL_CPU_PARTITION_MIN_EDGES, default 2^20 */
    int window_mode;                  /* BL_CPU_WINDOW: BL_WINDOW_NEVER (default), _ALWAYS or _AUTO */
    /* Checkpoints within a trial (snapshot.h). */
    uint64_t snap_every;
    bl_engine_snapshot_fn snap_fn;
    void *snap_user;
    bl_snap_list resumes; /* trials to continue from a snapshot (bl_engine_resume_trial) */
} cpu_state;

/* ---- trials ---- */

static void runner_free(runner *r, int64_t delay)
{
    for (int q = 0; q < r->n_parts; q++)
        bl_partition_free(&r->parts[q], delay);
    free(r->parts);
    for (int k = 0; k < 2; k++) {
        free(r->merged[k].start);
        free(r->merged[k].all.v);
    }
    free(r->out.v);
    free(r->snap);
    memset(r, 0, sizeof *r);
}

static int runner_alloc(runner *r, const bl_network *net, int n_parts, int window_mode)
{
    memset(r, 0, sizeof *r);
    int32_t *bounds = malloc(((size_t)n_parts + 1) * sizeof *bounds);
    r->parts = calloc((size_t)n_parts, sizeof *r->parts);
    r->n_parts = n_parts;
    int ok = bounds && r->parts;
    for (int k = 0; ok && k < 2; k++)
        ok = (r->merged[k].start = calloc((size_t)net->delay_steps + 1, sizeof(uint64_t))) != NULL;
    if (ok)
        ok = bl_partition_split(net, n_parts, bounds);
    for (int q = 0; ok && q < n_parts; q++)
        if ((ok = bl_partition_alloc(&r->parts[q], net, bounds[q], bounds[q + 1])))
            r->parts[q].window_mode = window_mode;
    free(bounds);
    return ok;
}

/* Merge window w's per-partition spike lists (partition order is neuron
 * order, so concatenation keeps each step ascending) and record them. */
static int merge_window(runner *r, int64_t w, int64_t steps_in_window, int64_t delay)
{
    spike_window *m = &r->merged[w & 1];
    m->all.n = 0;
    int ok = 1;
    for (int64_t j = 0; j < steps_in_window; j++) {
        m->start[j] = m->all.n;
        for (int q = 0; q < r->n_parts; q++) {
            const i32_list *l = &r->parts[q].window[j];
            for (uint64_t s = 0; s < l->n; s++)
                ok &= bl_list_push(&m->all, l->v[s]) & bl_list_push(&r->out, (int32_t)(w * delay + j)) &
                      bl_list_push(&r->out, l->v[s]);
        }
    }
    for (int64_t j = steps_in_window; j <= delay; j++)
        m->start[j] = m->all.n;
    return ok;
}

/* Probes of this partition's neurons after `step`: an awake neuron's slot,
 * else the model's peek (which knows a resting neuron's exact state), else
 * its range entry. Written straight into the sample's rows: with a sample
 * every step this loop runs for every probe at every step. */
static inline void copy_state(char *dst, const char *src, size_t sz)
{
    if (sz == 8)
        memcpy(dst, src, 8);
    else if (sz == 4)
        memcpy(dst, src, 4);
    else
        memcpy(dst, src, sz);
}

static void probe(const bl_network *net, partition *p, bl_result *result, uint32_t trial, int64_t step)
{
    int64_t sample = bl_result_probe_sample(result, step);
    if (sample < 0)
        return;
    const size_t sz = p->k->field[0].size, n = bl_result_n_probes(result);
    const int32_t *neuron = bl_result_probe_neurons(result);
    void *vrow, *grow;
    bl_result_probe_rows(result, trial, sample, &vrow, &grow);
    for (size_t k = 0; k < n; k++) {
        int32_t i = neuron[k];
        if (i < p->lo || i >= p->hi)
            continue;
        char *v = (char *)vrow + k * sz, *g = (char *)grow + k * sz;
        int32_t a = p->slot_of[i - p->lo];
        if (a >= 0) {
            copy_state(v, (const char *)p->act[0] + (size_t)a * sz, sz);
            copy_state(g, (const char *)p->act[1] + (size_t)a * sz, sz);
        } else if (p->k->peek) {
            p->k->peek(net, p, i, step, v, g);
        } else {
            copy_state(v, (const char *)p->rng[0] + (size_t)(i - p->lo) * sz, sz);
            copy_state(g, (const char *)p->rng[1] + (size_t)(i - p->lo) * sz, sz);
        }
    }
}

/* One partition's steps of window w (bl_partition_run_window decides how),
 * or step by step with the probes sampled after each. */
static void run_window(const cpu_state *s, runner *r, int q, uint32_t trial, int64_t w, int64_t n_steps,
                       size_t *next_event, bl_result *result)
{
    const bl_network *net = s->net;
    const int64_t delay = net->delay_steps, s0 = w * delay;
    const int64_t s1 = s0 + delay < n_steps ? s0 + delay : n_steps;
    const spike_window *prev = &r->merged[(w - 1) & 1]; /* spikes of step - delay */
    partition *p = &r->parts[q];
    const int32_t *all = w > 0 ? prev->all.v : NULL;
    if (bl_result_n_probes(result) == 0) {
        bl_partition_run_window(net, s->skip_ok, p, trial, s0, s1, all, prev->start, next_event);
    } else {
        for (int64_t step = s0; step < s1 && !p->failed; step++) {
            int64_t j = step - s0;
            const int32_t *arr = all ? all + prev->start[j] : NULL;
            uint64_t n_arr = all ? prev->start[j + 1] - prev->start[j] : 0;
            bl_partition_step(net, s->skip_ok, p, trial, step, arr, n_arr, next_event, &p->window[j]);
            probe(net, p, result, trial, step);
        }
    }
    if (!p->failed)
        BL_ASSERT_SANE(bl_partition_sane, p);
}

/* A whole trial on one runner; its partitions run in parallel when there are
 * several, meeting once per window to merge spikes. */
/* With a streaming result, a trial's spikes leave once this many (step,
 * neuron) pairs are waiting: the memory of a trial does not grow with its
 * length. Progress is reported every STEP_REPORT windows. */
#define FLUSH_PAIRS (1u << 16)
#define STEP_REPORT 64

/* ---- checkpoints within a trial (snapshot.h) ---- */

/* Runner r's trial after window w (its spikes merged, the unflushed pairs in
 * r->out), handed to the snapshot callback. Called by one thread. */
static int snapshot(const cpu_state *s, runner *r, uint32_t trial, int64_t w)
{
    const bl_network *net = s->net;
    const spike_window *m = &r->merged[w & 1];
    size_t len = bl_snap_len(net, m->all.n, r->out.n / 2);
    if (len > r->snap_cap) {
        unsigned char *b = realloc(r->snap, len);
        if (!b) {
            r->status = bl_fail(&r->err, BL_ERR_NOMEM, "cpu backend: cannot allocate a %zu-byte checkpoint", len);
            return 0;
        }
        r->snap = b;
        r->snap_cap = len;
    }
    uint64_t step = (uint64_t)((w + 1) * net->delay_steps);
    bl_snap_write(r->snap, net, trial, step, m->start, &m->all, &r->out, r->parts, r->n_parts);
    r->status = s->snap_fn(s->snap_user, trial, step, r->snap, len, &r->err);
    return r->status == BL_OK;
}

/* Cancellation inside a trial (issue 26): the thread that called the run
 * (runner 0's partition 0) asks the context once per window, after stepping
 * it, and raises *cancel; every runner reads it at the window's merge, where
 * the partitions agree on stopping, so a Ctrl-C is answered within a window.
 * Asking costs a load and a branch when no callback is set. */
static int run_trial(const cpu_state *s, runner *r, uint32_t trial, int64_t n_steps, bl_result *result,
                     int asks, int *cancel)
{
    const int64_t delay = s->net->delay_steps, windows = (n_steps + delay - 1) / delay;
    int failed = 0;
    r->out.n = 0;
    r->status = BL_OK;
    for (int k = 0; k < 2; k++)
        memset(r->merged[k].start, 0, ((size_t)delay + 1) * sizeof(uint64_t));
    /* A trial continued from a snapshot starts at its window (snapshot.h). */
    const unsigned char *blob = bl_snap_list_find(&s->resumes, trial), *records = NULL;
    int64_t w0 = 0;
    if (blob) {
        uint64_t step = bl_snap_step(blob);
        spike_window *m = &r->merged[((int64_t)step / delay - 1) & 1];
        if ((w0 = bl_snap_restore(s->net, blob, m->start, &m->all, &r->out, &records)) < 0)
            return 0;
    }
    int64_t reported = w0 * delay;
#pragma omp parallel num_threads(r->n_parts) if (r->n_parts > 1)
    {
        int q = omp_get_thread_num();
        size_t next_event = 0;
        bl_partition_reset(&r->parts[q], s->net, s->skip_ok);
        if (blob) {
            if (!bl_partition_load(&r->parts[q], records, w0 * delay))
                r->parts[q].failed = 1;
            while (next_event < s->net->n_events && s->net->events[2 * next_event] < w0 * delay)
                next_event++;
        }
        /* A failed load is seen at the first merge, as every failure is. */
        for (int64_t w = w0; w < windows; w++) {
            run_window(s, r, q, trial, w, n_steps, &next_event, result);
            if (asks && q == 0 && bl_context_cancelled(s->ctx))
                __atomic_store_n(cancel, 1, __ATOMIC_RELAXED);
#pragma omp barrier
#pragma omp single
            {
                for (int k = 0; k < r->n_parts; k++)
                    failed |= r->parts[k].failed;
                if (!failed && w + 1 < windows && __atomic_load_n(cancel, __ATOMIC_RELAXED)) {
                    r->status = bl_fail(&r->err, BL_ERR_CANCELLED, "cancelled after %" PRId64 " of %" PRId64
                                        " steps of trial %" PRIu32, (w + 1) * delay, n_steps, trial);
                    failed = 1;
                }
                if (!failed)
                    failed |= !merge_window(r, w, (w + 1) * delay < n_steps ? delay : n_steps - w * delay, delay);
                if (!failed && bl_result_streams(result) && r->out.n >= 2 * (uint64_t)FLUSH_PAIRS) {
                    r->status = bl_result_append_pairs(result, trial, r->out.v, r->out.n / 2, &r->err);
                    failed |= r->status != BL_OK;
                    r->out.n = 0;
                }
                /* A checkpoint every snap_every windows (not after the last:
                 * the finished trial is checkpointed by the caller). Every
                 * spike so far goes to the sink first, so that the caller's
                 * stream holds exactly the steps before the snapshot. */
                if (!failed && s->snap_every && (w + 1) % (int64_t)s->snap_every == 0 && w + 1 < windows) {
                    if (bl_result_streams(result) && r->out.n) {
                        r->status = bl_result_append_pairs(result, trial, r->out.v, r->out.n / 2, &r->err);
                        r->out.n = 0;
                    }
                    failed |= r->status != BL_OK || !snapshot(s, r, trial, w);
                }
                if (w + 1 == windows || (w + 1) % STEP_REPORT == 0) {
                    int64_t done = (w + 1) * delay < n_steps ? (w + 1) * delay : n_steps;
                    bl_result_add_steps(result, (uint64_t)(done - reported));
                    reported = done;
                }
                for (int k = 0; k < r->n_parts; k++)
                    r->parts[k].failed |= failed; /* every partition stops at the same window */
            }
            if (r->parts[q].failed)
                break;
        }
        bl_partition_settle(&r->parts[q]);
    }
    return !failed;
}

/* Copy one finished trial into the result (called in trial order). */
static bl_status publish(const runner *r, const bl_network *net, uint32_t trial, bl_result *res, bl_error *err)
{
    bl_status st = bl_result_append_pairs(res, trial, r->out.v, r->out.n / 2, err);
    if (st)
        return st;
    size_t sz = bl_model_state_size(net->model);
    for (int q = 0; q < r->n_parts; q++) {
        const partition *p = &r->parts[q];
        size_t n = (size_t)(p->hi - p->lo);
        memcpy((char *)bl_result_v_row(res, trial) + (size_t)p->lo * sz, p->v, n * sz);
        memcpy((char *)bl_result_g_row(res, trial) + (size_t)p->lo * sz, p->g, n * sz);
    }
    return BL_OK;
}

/* ---- the backend ---- */

static void cpu_destroy(void *v)
{
    cpu_state *s = v;
    if (!s)
        return;
    for (int k = 0; k < s->n_runners; k++)
        runner_free(&s->runners[k], s->net->delay_steps);
    free(s->runners);
    bl_snap_list_free(&s->resumes);
    free(s);
}

static void cpu_set_snapshots(void *v, uint64_t every_windows, bl_engine_snapshot_fn fn, void *user)
{
    cpu_state *s = v;
    s->snap_every = fn ? every_windows : 0;
    s->snap_fn = fn;
    s->snap_user = user;
}

/* A blob is checked in full before it is kept (snapshot.c). */
static bl_status cpu_resume_trial(void *v, uint32_t trial, const void *blob, size_t len, bl_error *err)
{
    cpu_state *s = v;
    return bl_snap_list_add(&s->resumes, s->net, trial, blob, len, err);
}

static int cpu_set_threads(void *v, int threads)
{
    cpu_state *s = v;
    s->threads = threads;
    return s->threads;
}

static bl_status cpu_create(bl_context *ctx, const bl_network *net, void **out, bl_error *err)
{
    cpu_state *s = calloc(1, sizeof *s);
    if (!s)
        return bl_fail(err, BL_ERR_NOMEM, "cpu backend: cannot allocate");
    s->net = net;
    s->ctx = ctx;
    s->skip_ok = bl_partition_rest_is_fixed_point(net);
    /* Tests set BL_CPU_PARTITION_MIN_EDGES=1 (read into the context) to
     * split even small graphs. */
    uint64_t min_edges = bl_context_cpu_partition_min_edges(ctx);
    s->min_edges_per_partition = min_edges > 0 ? min_edges : UINT64_C(1) << 20;
    s->window_mode = (int)bl_context_resolve(ctx)->cpu_window;
    s->threads = 1;
    *out = s;
    return BL_OK;
}

static bl_status ensure_runners(cpu_state *s, int n_runners, int parts, bl_error *err)
{
    if (s->n_runners == n_runners && s->parts_per_runner == parts)
        return BL_OK;
    for (int k = 0; k < s->n_runners; k++)
        runner_free(&s->runners[k], s->net->delay_steps);
    free(s->runners);
    s->n_runners = 0;
    s->runners = calloc((size_t)n_runners, sizeof *s->runners);
    if (!s->runners)
        return bl_fail(err, BL_ERR_NOMEM, "cpu backend: cannot allocate %d runners", n_runners);
    for (int k = 0; k < n_runners; k++) {
        s->n_runners = k + 1;
        if (!runner_alloc(&s->runners[k], s->net, parts, s->window_mode))
            return bl_fail(err, BL_ERR_NOMEM, "cpu backend: cannot allocate state for %" PRIu64 " neurons",
                           s->net->n_neurons);
    }
    s->parts_per_runner = parts;
    return BL_OK;
}

static bl_status cpu_run(void *v, uint32_t first_trial, uint32_t n_trials, uint64_t n_steps,
                         bl_result *result, bl_error *err)
{
    cpu_state *s = v;
    /* Whole trials per thread when there are enough trials (no exchange at
     * all); otherwise each trial is split into `threads` partitions. */
    int trial_parallel = (uint32_t)s->threads <= n_trials || s->threads == 1;
    int n_runners = trial_parallel ? (s->threads < (int)n_trials ? s->threads : (int)n_trials) : 1;
    int parts = trial_parallel ? 1 : s->threads;
    /* Splitting a trial costs a barrier per window; it pays only when each
     * partition has enough synapses to deliver. */
    uint64_t max_parts = 1 + s->net->n_edges / s->min_edges_per_partition;
    if ((uint64_t)parts > max_parts)
        parts = (int)max_parts;
    if ((uint64_t)parts > s->net->n_neurons)
        parts = s->net->n_neurons ? (int)s->net->n_neurons : 1;
    bl_status st = ensure_runners(s, n_runners, parts, err);
    int cancel = 0;
    /* Trials go in waves of n_runners; each wave is published in trial order. */
    for (uint32_t wave = 0; !st && wave < n_trials; wave += (uint32_t)n_runners) {
        int in_wave = (int)(n_trials - wave < (uint32_t)n_runners ? n_trials - wave : (uint32_t)n_runners);
        int ok[64] = {0}, *okp = ok;
        int *heap_ok = in_wave > 64 ? calloc((size_t)in_wave, sizeof *heap_ok) : NULL;
        if (in_wave > 64 && !(okp = heap_ok))
            return bl_fail(err, BL_ERR_NOMEM, "cpu backend: cannot allocate");
#pragma omp parallel for num_threads(in_wave) schedule(static, 1) if (in_wave > 1)
        for (int t = 0; t < in_wave; t++)
            okp[t] = run_trial(s, &s->runners[t], first_trial + wave + (uint32_t)t, (int64_t)n_steps, result, t == 0,
                               &cancel);
        for (int t = 0; !st && t < in_wave; t++) {
            if (s->runners[t].status) { /* the sink failed: its message */
                *err = s->runners[t].err;
                st = s->runners[t].status;
                break;
            }
            st = okp[t] ? publish(&s->runners[t], s->net, first_trial + wave + (uint32_t)t, result, err)
                        : bl_fail(err, BL_ERR_NOMEM, "cpu backend: out of memory in trial %" PRIu32,
                                  first_trial + wave + (uint32_t)t);
        }
        free(heap_ok);
        /* Snapshots handed back are used once: the wave's trials ran from them. */
        bl_snap_list_drop(&s->resumes, first_trial + wave, (uint32_t)in_wave);
    }
    return st;
}

/* A network its partition kernel cannot run goes to the reference backend
 * (BL_BACKEND_FALLS_BACK): a cpu run is a run on one machine, and the
 * reference is one too. */
const bl_backend bl_backend_cpu = {
    .name = "cpu",
    .caps = BL_BACKEND_PART_KERNEL | BL_BACKEND_FALLS_BACK | BL_BACKEND_PROBES,
    .create = cpu_create,
    .run = cpu_run,
    .destroy = cpu_destroy,
    .set_threads = cpu_set_threads,
    .set_snapshots = cpu_set_snapshots,
    .resume_trial = cpu_resume_trial,
};
