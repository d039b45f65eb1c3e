/* Batches of independent reservoir slots, stepped together.
 *
 * Exactness: a slot's frame is computed by the same phase functions as a
 * single state's (res_state.c); work is split into (slot, unit range) items
 * and every item writes only its own units, so neither the thread count nor
 * the schedule can change a bit. Phases are separated by OpenMP barriers
 * (the implicit one at the end of each `omp for`) because each reads what the
 * previous one wrote for every unit of the slot: previous spikes (A), the new
 * state (B, B2), the learned weights (C) before the readout (D). */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "reservoir/res_impl.h"
#include "core/threads.h"

/* Units per work item: small enough to spread one slot over several threads,
 * large enough that scheduling costs stay negligible. */
#define CHUNK BL_RES_BLOCK
#define WORK_PER_THREAD 32768

/* Links the slot's rows were built with (an upper bound after pruning). */
static uint64_t cur_links(const bl_res_state *s) { return s->cap + (uint64_t)s->ni * s->ne; }

struct bl_res_batch {
    size_t size;
    bl_res_state **cur;
    bl_res_state **init;  /* slots started from the same state share one copy */
    uint8_t *owns_init;
    int threads;
    uint64_t grain;   /* work per thread below which fewer threads are used */
    size_t *stepping; /* scratch: the slots of this frame */
};

void bl_res_batch_set_grain(bl_res_batch *b, uint64_t work) { b->grain = work ? work : 1; }

bl_status bl_res_batch_create(size_t batch, const bl_res_state *const *initial, bl_res_batch **out,
                              bl_error *err)
{
    *out = NULL;
    if (batch < 1 || !initial)
        return bl_fail(err, BL_ERR_INVALID, "a reservoir batch needs at least one slot");
    const bl_res_state *first = initial[0];
    for (size_t b = 0; b < batch; b++) {
        const bl_res_state *s = initial[b];
        if (!s)
            return bl_fail(err, BL_ERR_INVALID, "reservoir batch: slot %zu has no initial state", b);
        if (s->p.kind != first->p.kind || s->n != first->n || s->ne != first->ne || s->r != first->r ||
            s->e != first->e)
            return bl_fail(err, BL_ERR_INVALID,
                           "reservoir batch: slot %zu (%s, %u units, %u excitatory, %u inputs, %u effectors) "
                           "differs from slot 0 (%s, %u, %u, %u, %u)", b, bl_res_kind_name(s->p.kind), s->n,
                           s->ne, s->r, s->e, bl_res_kind_name(first->p.kind), first->n, first->ne, first->r,
                           first->e);
        if (s->dtype != first->dtype)
            return bl_fail(err, BL_ERR_INVALID, "reservoir batch: slot %zu is %s, slot 0 %s (one dtype per batch)", b,
                           bl_res_dtype_name(s->dtype), bl_res_dtype_name(first->dtype));
    }
    bl_res_batch *bt = calloc(1, sizeof *bt);
    if (!bt)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate a reservoir batch");
    bt->size = batch;
    bt->cur = calloc(batch, sizeof *bt->cur);
    bt->init = calloc(batch, sizeof *bt->init);
    bt->stepping = calloc(batch, sizeof *bt->stepping);
    bt->owns_init = calloc(batch, 1);
    if (!bt->cur || !bt->init || !bt->stepping || !bt->owns_init) {
        bl_res_batch_destroy(bt);
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate a reservoir batch of %zu slots", batch);
    }
    for (size_t b = 0; b < batch; b++) {
        bl_status st = bl_res_state_copy(initial[b], &bt->cur[b], err);
        /* consecutive slots from one state (a block's trials, a benchmark) share its copy */
        if (!st && b > 0 && initial[b - 1] == initial[b]) {
            bt->init[b] = bt->init[b - 1];
        } else if (!st) {
            st = bl_res_state_copy(initial[b], &bt->init[b], err);
            bt->owns_init[b] = !st;
        }
        if (st) {
            bl_res_batch_destroy(bt);
            return st;
        }
    }
    bt->threads = 1;
    bt->grain = WORK_PER_THREAD;
    *out = bt;
    return BL_OK;
}

void bl_res_batch_destroy(bl_res_batch *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->size; i++) {
        if (b->cur)
            bl_res_state_destroy(b->cur[i]);
        if (b->init && b->owns_init && b->owns_init[i])
            bl_res_state_destroy(b->init[i]);
    }
    free(b->cur);
    free(b->init);
    free(b->stepping);
    free(b->owns_init);
    free(b);
}

void bl_res_batch_set_threads(bl_res_batch *b, int threads)
{
    b->threads = bl_threads_resolve(threads);
}

int bl_res_batch_threads(const bl_res_batch *b) { return b->threads; }
size_t bl_res_batch_size(const bl_res_batch *b) { return b->size; }

const bl_res_state *bl_res_batch_slot(const bl_res_batch *b, size_t slot)
{
    return slot < b->size ? b->cur[slot] : NULL;
}

static size_t chunks(uint32_t units) { return ((size_t)units + CHUNK - 1) / CHUNK; }

bl_status bl_res_batch_step(bl_res_batch *b, const double *inputs, const double *noise,
                            const uint8_t *active, bl_error *err)
{
    if (!inputs)
        return bl_fail(err, BL_ERR_INVALID, "reservoir batch step: inputs are NULL");
    size_t ns = 0;
    for (size_t i = 0; i < b->size; i++)
        if ((!active || active[i]) && b->cur[i]->finite)
            b->stepping[ns++] = i;
    if (ns == 0)
        return BL_OK;
    const bl_res_state *s0 = b->cur[0];
    const uint32_t n = s0->n, r = s0->r, rows = s0->rows, ni = s0->ni;
    const int b2 = bl_res_needs_b2(s0);
    const size_t nb = chunks(n), nc = chunks(rows), n2 = chunks(ni);
    bl_res_state **cur = b->cur;
    const size_t *stepping = b->stepping;
    /* A frame costs a few barriers; below ~32k unit and link visits per thread
     * they cost more than they save (and an oversubscribed machine turns them
     * into sleeps), so small frames use fewer threads. The bits do not depend
     * on it. */
    uint64_t work = 0;
    for (size_t k = 0; k < ns; k++)
        work += (uint64_t)n + cur_links(b->cur[b->stepping[k]]);
    int threads = b->threads > 0 ? b->threads : 1;
    if ((uint64_t)threads > work / b->grain)
        threads = (int)(work / b->grain > 0 ? work / b->grain : 1);
    if ((size_t)threads > ns * nb)
        threads = (int)(ns * nb);

#pragma omp parallel num_threads(threads) if (threads > 1) default(none) \
    shared(cur, stepping, inputs, noise) firstprivate(ns, n, r, rows, ni, b2, nb, nc, n2)
    {
#pragma omp for schedule(static)
        for (size_t k = 0; k < ns; k++)
            bl_res_phase_a(cur[stepping[k]]);
#pragma omp for schedule(dynamic, 1)
        for (size_t it = 0; it < ns * nb; it++) {
            size_t slot = stepping[it / nb];
            uint32_t lo = (uint32_t)((it % nb) * CHUNK), hi = lo + CHUNK < n ? lo + CHUNK : n;
            bl_res_phase_b(cur[slot], lo, hi, inputs + slot * r, noise ? noise + slot * n : NULL);
        }
        if (b2) {
#pragma omp for schedule(static)
            for (size_t k = 0; k < ns; k++)
                bl_res_phase_b2_list(cur[stepping[k]]);
#pragma omp for schedule(dynamic, 1)
            for (size_t it = 0; it < ns * n2; it++) {
                size_t slot = stepping[it / n2];
                uint32_t lo = (uint32_t)((it % n2) * CHUNK), hi = lo + CHUNK < ni ? lo + CHUNK : ni;
                bl_res_phase_b2(cur[slot], lo, hi);
            }
        }
#pragma omp for schedule(dynamic, 1)
        for (size_t it = 0; it < ns * nc; it++) {
            size_t slot = stepping[it / nc];
            uint32_t lo = (uint32_t)((it % nc) * CHUNK), hi = lo + CHUNK < rows ? lo + CHUNK : rows;
            bl_res_phase_c(cur[slot], lo, hi);
        }
#pragma omp for schedule(static)
        for (size_t k = 0; k < ns; k++)
            bl_res_phase_d(cur[stepping[k]]);
    }
    return BL_OK;
}

void bl_res_batch_freeze_weights(bl_res_batch *b, const uint8_t *selected)
{
    for (size_t i = 0; i < b->size; i++)
        if (!selected || selected[i])
            bl_res_state_freeze_weights(b->cur[i]);
}

void bl_res_batch_freeze_plasticity(bl_res_batch *b, const uint8_t *selected)
{
    for (size_t i = 0; i < b->size; i++)
        if (!selected || selected[i])
            bl_res_state_freeze_plasticity(b->cur[i]);
}

void bl_res_batch_reset(bl_res_batch *b, const uint8_t *selected)
{
    for (size_t i = 0; i < b->size; i++)
        if (!selected || selected[i])
            bl_res_state_assign(b->cur[i], b->init[i]);
}
