/* One reservoir node: storage (one arena per state), views, and the step
 * phases over the equations of falandays_eq.h and sorn_eq.h. The single-state
 * step here and the batch step (res_batch.c) call the same phase functions;
 * only the iteration differs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reservoir/falandays_eq.h"
#include "reservoir/res_impl.h"
#include "reservoir/sorn_eq.h"

#define ALIGN 64

static size_t align_up(size_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

/* Assign every array of s inside base (NULL: only measure). The order and
 * sizes depend on the dimensions alone, so a copy re-lays out identically. */
static size_t layout(bl_res_state *s, char *base)
{
    const int sorn = s->p.kind == BL_RES_SORN;
    const size_t n = s->n, rows = s->rows, r = s->r, e = s->e, ne = s->ne, ni = s->ni;
    size_t off = 0;
#define PLACE(field, count, type)                                            \
    do {                                                                     \
        size_t bytes_ = (size_t)(count) * sizeof(type);                      \
        if (bytes_) {                                                        \
            off = align_up(off);                                             \
            s->field = base ? (type *)(void *)(base + off) : NULL;           \
            off += bytes_;                                                   \
        } else {                                                             \
            s->field = NULL;                                                 \
        }                                                                    \
    } while (0)
    PLACE(row_start, rows + 1, uint64_t);
    PLACE(row_len, rows, uint32_t);
    PLACE(col, s->cap, uint32_t);
    PLACE(w, s->cap, double);
    PLACE(w_in, rows * r, double);
    PLACE(w_out, e * rows, double);
    PLACE(out_den, e, double);
    PLACE(sign, sorn ? 0 : n, double);
    PLACE(w_ei, sorn ? ne * ni : 0, double);
    PLACE(w_ie, sorn ? ni * ne : 0, double);
    PLACE(c_e, sorn ? ne : 0, double);
    PLACE(spikes, n, double);
    PLACE(prev, n, double);
    PLACE(margins, n, double);
    PLACE(thr, n, double);
    PLACE(acts, sorn ? 0 : n, double);
    PLACE(errors, sorn ? 0 : n, double);
    PLACE(kcount, n, uint32_t);
    PLACE(ok, n, uint8_t);
    PLACE(effectors, e, double);
    PLACE(list, sorn ? n + ne : n, uint32_t);
    PLACE(cptr, sorn ? 0 : ((n + BL_RES_BLOCK - 1) / BL_RES_BLOCK) * (n + 1), uint32_t);
    PLACE(cdst, sorn ? 0 : s->cap, uint32_t);
    PLACE(cpos, sorn ? 0 : s->cap, uint32_t);
#undef PLACE
    return align_up(off ? off : 1);
}

bl_status bl_res_state_alloc(const bl_res_params *p, uint32_t n, uint32_t r, uint32_t e,
                             uint32_t ne, const uint32_t *row_len, bl_res_state **out,
                             bl_error *err)
{
    *out = NULL;
    if (n < 1 || n > BL_RES_MAX_UNITS || r < 1 || r > BL_RES_MAX_PORTS || e < 1 || e > BL_RES_MAX_PORTS)
        return bl_fail(err, BL_ERR_INVALID, "reservoir dimensions out of range: %u units (1..%d), "
                       "%u inputs, %u effectors (1..%d)", n, BL_RES_MAX_UNITS, r, e, BL_RES_MAX_PORTS);
    if (p->kind == BL_RES_SORN && (ne < 1 || ne > n))
        return bl_fail(err, BL_ERR_INVALID, "SORN: %u excitatory units of %u (1..N)", ne, n);
    bl_res_state *s = calloc(1, sizeof *s);
    if (!s)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate a reservoir state");
    s->p = *p;
    s->n = n;
    s->r = r;
    s->e = e;
    s->ne = p->kind == BL_RES_SORN ? ne : n;
    s->ni = n - s->ne;
    s->rows = s->ne;
    uint64_t cap = 0;
    for (uint32_t i = 0; i < s->rows; i++) {
        if (row_len[i] > s->ne) {
            uint32_t sources = s->ne;
            free(s);
            return bl_fail(err, BL_ERR_INTERNAL, "row %u has %u links for %u sources", i, row_len[i], sources);
        }
        cap += row_len[i];
    }
    s->cap = cap;
    if (p->kind != BL_RES_SORN && cap > UINT32_MAX) { /* the source index holds 32-bit positions */
        free(s);
        return bl_fail(err, BL_ERR_INVALID, "Falandays: %llu links (at most %u)", (unsigned long long)cap, UINT32_MAX);
    }
    size_t bytes = layout(s, NULL);
    s->arena = aligned_alloc(ALIGN, bytes);
    if (!s->arena) {
        free(s);
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate %zu bytes for a reservoir of %u units", bytes, n);
    }
    memset(s->arena, 0, bytes);
    s->arena_bytes = bytes;
    layout(s, s->arena);
    uint64_t o = 0;
    for (uint32_t i = 0; i < s->rows; i++) {
        s->row_start[i] = o;
        s->row_len[i] = row_len[i];
        o += row_len[i];
    }
    s->row_start[s->rows] = o;
    s->finite = 1;
    s->learn_weights = s->learn = p->learn_on;
    *out = s;
    return BL_OK;
}

static void readout(bl_res_state *s)
{
    for (uint32_t e = 0; e < s->e; e++)
        s->effectors[e] = s->p.kind == BL_RES_SORN ? bl_sorn_effector(s, e) : bl_fal_effector(s, e);
}

/* The Falandays source index (res_impl.h), from the rows. */
static void build_source_index(bl_res_state *s)
{
    const size_t n = s->n, stride = n + 1, blocks = (n + BL_RES_BLOCK - 1) / BL_RES_BLOCK;
    uint32_t *cp = s->cptr;
    memset(cp, 0, blocks * stride * sizeof *cp);
    for (uint32_t i = 0; i < s->rows; i++)
        for (uint32_t t = 0; t < s->row_len[i]; t++)
            cp[(i / BL_RES_BLOCK) * stride + s->col[s->row_start[i] + t]]++;
    uint32_t run = 0;
    for (size_t b = 0; b < blocks; b++) {
        for (size_t j = 0; j < n; j++) {
            uint32_t c = cp[b * stride + j];
            cp[b * stride + j] = run;
            run += c;
        }
        cp[b * stride + n] = run;
    }
    for (uint32_t i = 0; i < s->rows; i++)
        for (uint32_t t = 0; t < s->row_len[i]; t++) {
            uint64_t pos = s->row_start[i] + t;
            uint32_t e = cp[(i / BL_RES_BLOCK) * stride + s->col[pos]]++;
            s->cdst[e] = i;
            s->cpos[e] = (uint32_t)pos;
        }
    /* each start was advanced to the next one's: shift back */
    for (size_t b = 0; b < blocks; b++) {
        uint32_t first = b == 0 ? 0 : cp[(b - 1) * stride + n];
        for (size_t j = n - 1; j >= 1; j--)
            cp[b * stride + j] = cp[b * stride + j - 1];
        cp[b * stride] = first;
    }
}

void bl_res_state_finish(bl_res_state *s)
{
    if (s->p.kind != BL_RES_SORN)
        build_source_index(s);
    for (uint32_t e = 0; e < s->e; e++) {
        const double *out = s->w_out + (size_t)e * s->rows;
        double den = 0.0;
        for (uint32_t i = 0; i < s->rows; i++)
            den = den + (s->p.kind == BL_RES_SORN ? (out[i] != 0.0 ? 1.0 : 0.0) : out[i]);
        s->out_den[e] = den;
    }
    readout(s);
    s->finite = 1;
    s->learn_weights = s->learn = s->p.learn_on;
}

bl_status bl_res_state_copy(const bl_res_state *s, bl_res_state **out, bl_error *err)
{
    *out = NULL;
    bl_res_state *c = malloc(sizeof *c);
    if (!c)
        return bl_fail(err, BL_ERR_NOMEM, "cannot copy a reservoir state");
    *c = *s;
    c->arena = aligned_alloc(ALIGN, s->arena_bytes);
    if (!c->arena) {
        free(c);
        return bl_fail(err, BL_ERR_NOMEM, "cannot copy a reservoir state (%zu bytes)", s->arena_bytes);
    }
    memcpy(c->arena, s->arena, s->arena_bytes);
    layout(c, c->arena);
    *out = c;
    return BL_OK;
}

void bl_res_state_assign(bl_res_state *dst, const bl_res_state *src)
{
    void *arena = dst->arena;
    *dst = *src;
    dst->arena = arena;
    memcpy(arena, src->arena, src->arena_bytes);
    layout(dst, arena);
}

void bl_res_state_destroy(bl_res_state *s)
{
    if (!s)
        return;
    free(s->arena);
    free(s);
}

const bl_res_params *bl_res_state_params(const bl_res_state *s) { return &s->p; }
uint32_t bl_res_state_units(const bl_res_state *s) { return s->n; }
uint32_t bl_res_state_inputs(const bl_res_state *s) { return s->r; }
uint32_t bl_res_state_effectors(const bl_res_state *s) { return s->e; }
uint32_t bl_res_state_excitatory(const bl_res_state *s) { return s->ne; }
int bl_res_state_finite(const bl_res_state *s) { return s->finite; }
uint64_t bl_res_state_frames(const bl_res_state *s) { return s->frames; }
int bl_res_state_learning_weights(const bl_res_state *s) { return s->learn_weights; }
int bl_res_state_learning(const bl_res_state *s) { return s->learn; }

const double *bl_res_state_view(const bl_res_state *s, bl_res_view which)
{
    switch (which) {
    case BL_RES_SPIKES: return s->spikes;
    case BL_RES_MARGINS: return s->margins;
    case BL_RES_THRESHOLDS: return s->thr;
    case BL_RES_ACTS: return s->acts;
    case BL_RES_ERRORS: return s->errors;
    case BL_RES_EFFECTORS: return s->effectors;
    }
    return NULL;
}

void bl_res_state_dense_weights(const bl_res_state *s, double *out, uint8_t *mask)
{
    const size_t rows = s->rows;
    memset(out, 0, rows * rows * sizeof *out);
    if (mask)
        memset(mask, 0, rows * rows);
    for (uint32_t i = 0; i < s->rows; i++)
        for (uint32_t t = 0; t < s->row_len[i]; t++) {
            uint64_t k = s->row_start[i] + t;
            out[(size_t)i * rows + s->col[k]] = s->w[k];
            if (mask)
                mask[(size_t)i * rows + s->col[k]] = 1;
        }
}

uint64_t bl_res_state_links(const bl_res_state *s)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < s->rows; i++)
        total += s->row_len[i];
    return total;
}

/* ---- phases ---- */

void bl_res_phase_a(bl_res_state *s)
{
    memcpy(s->prev, s->spikes, (size_t)s->n * sizeof *s->prev);
    if (s->p.kind != BL_RES_SORN) {
        uint32_t na = 0;
        for (uint32_t j = 0; j < s->n; j++)
            if (s->prev[j] != 0.0)
                s->list[na++] = j;
        s->n_list_x = na;
        return;
    }
    uint32_t nx = 0, ny = 0;
    for (uint32_t j = 0; j < s->ne; j++)
        if (s->prev[j] != 0.0)
            s->list[nx++] = j;
    for (uint32_t k = 0; k < s->ni; k++)
        if (s->prev[s->ne + k] != 0.0)
            s->list[s->ne + ny++] = k;
    s->n_list_x = nx;
    s->n_list_y = ny;
}

void bl_res_phase_b(bl_res_state *s, uint32_t lo, uint32_t hi, const double *u, const double *xi)
{
    if (s->p.kind != BL_RES_SORN) {
        for (uint32_t b = lo / BL_RES_BLOCK; b * BL_RES_BLOCK < hi; b++)
            bl_fal_integrate_block(s, b, u, xi);
        return;
    }
    for (uint32_t i = lo; i < hi; i++) {
        if (i < s->ne)
            bl_sorn_integrate_e(s, i, u);
        else if (!s->p.fast_inhibition)
            bl_sorn_integrate_i(s, i - s->ne, s->prev, s->list, s->n_list_x); /* old x */
    }
}

int bl_res_needs_b2(const bl_res_state *s)
{
    return s->p.kind == BL_RES_SORN && s->p.fast_inhibition && s->ni > 0;
}

void bl_res_phase_b2_list(bl_res_state *s)
{
    uint32_t nx = 0;
    for (uint32_t j = 0; j < s->ne; j++)
        if (s->spikes[j] != 0.0)
            s->list[s->n + nx++] = j;
    s->n_list_new = nx;
}

void bl_res_phase_b2(bl_res_state *s, uint32_t lo, uint32_t hi)
{
    for (uint32_t k = lo; k < hi; k++)
        bl_sorn_integrate_i(s, k, s->spikes, s->list + s->n, s->n_list_new); /* new x */
}

void bl_res_phase_c(bl_res_state *s, uint32_t lo, uint32_t hi)
{
    if (s->p.kind == BL_RES_SORN) {
        for (uint32_t i = lo; i < hi; i++)
            bl_sorn_adapt(s, i);
    } else {
        for (uint32_t b = lo / BL_RES_BLOCK; b * BL_RES_BLOCK < hi; b++)
            bl_fal_learn_block(s, b);
    }
}

void bl_res_phase_d(bl_res_state *s)
{
    readout(s);
    int finite = 1;
    uint64_t events = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        finite &= s->ok[i];
        events += s->kcount[i];
    }
    for (uint32_t e = 0; e < s->e; e++)
        finite &= isfinite(s->effectors[e]) != 0;
    s->events += events;
    s->frames++;
    if (!finite)
        s->finite = 0;
}

bl_status bl_res_state_step(bl_res_state *s, const double *inputs, const double *noise, bl_error *err)
{
    if (!inputs)
        return bl_fail(err, BL_ERR_INVALID, "reservoir step: inputs are NULL");
    if (!s->finite)
        return BL_OK; /* a failed trajectory holds its last frame */
    bl_res_phase_a(s);
    bl_res_phase_b(s, 0, s->n, inputs, noise);
    if (bl_res_needs_b2(s)) {
        bl_res_phase_b2_list(s);
        bl_res_phase_b2(s, 0, s->ni);
    }
    bl_res_phase_c(s, 0, s->rows);
    bl_res_phase_d(s);
    return BL_OK;
}

void bl_res_state_freeze_weights(bl_res_state *s) { s->learn_weights = 0; }

void bl_res_state_freeze_plasticity(bl_res_state *s)
{
    s->learn_weights = 0;
    s->learn = 0;
}
