/* One reservoir node: storage (one arena per state), views, the float32
 * cast, and the step phases over the equations of falandays_eq.h and
 * sorn_eq.h. The single-state step here and the batch step (res_batch.c) call
 * the same phase functions; only the iteration differs.
 *
 * The equations and phases are templates compiled twice: as float64 on the
 * state itself (the names unchanged) and as float32 on a bl_res_k32 view of
 * the state's float arrays (names ending in _f32). A phase picks the instance
 * once per call. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reservoir/res_impl.h"

#define BL_REAL double
#define BL_STATE bl_res_state
#define BL_PARAMS bl_res_params
#define BL_EQ(name) name
#include "reservoir/falandays_eq.h"
#include "reservoir/sorn_eq.h"
#include "reservoir/res_phases.h"
#undef BL_REAL
#undef BL_STATE
#undef BL_PARAMS
#undef BL_EQ

#define BL_REAL float
#define BL_STATE bl_res_k32
#define BL_PARAMS bl_res_params32
#define BL_EQ(name) name##_f32
#include "reservoir/falandays_eq.h"
#include "reservoir/sorn_eq.h"
#include "reservoir/res_phases.h"
#undef BL_REAL
#undef BL_STATE
#undef BL_PARAMS
#undef BL_EQ

#define ALIGN 64

static size_t align_up(size_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

/* Assign every array of s inside base (NULL: only measure). The order and
 * sizes depend on the dimensions alone, so a copy re-lays out identically. */
static size_t layout(bl_res_state *s, char *base)
{
    const int sorn = s->p.kind == BL_RES_SORN;
    const size_t n = s->n, rows = s->rows, r = s->r, e = s->e, ne = s->ne, ni = s->ni;
    /* d: arrays only float64 keeps; f: their float32 twins; views exist in both */
    const size_t d = s->dtype == BL_RES_FLOAT64, f = !d;
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
    PLACE(w, d * s->cap, double);
    PLACE(w_in, d * rows * r, double);
    PLACE(w_out, d * e * rows, double);
    PLACE(out_den, d * e, double);
    PLACE(sign, sorn ? 0 : d * n, double);
    PLACE(w_ei, sorn ? d * ne * ni : 0, double);
    PLACE(w_ie, sorn ? d * ni * ne : 0, double);
    PLACE(c_e, sorn ? d * ne : 0, double);
    PLACE(spikes, n, double);
    PLACE(prev, d * n, double);
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
    PLACE(w32, f * s->cap, float);
    PLACE(w_in32, f * rows * r, float);
    PLACE(w_out32, f * e * rows, float);
    PLACE(out_den32, f * e, float);
    PLACE(sign32, sorn ? 0 : f * n, float);
    PLACE(w_ei32, sorn ? f * ne * ni : 0, float);
    PLACE(w_ie32, sorn ? f * ni * ne : 0, float);
    PLACE(c_e32, sorn ? f * ne : 0, float);
    PLACE(spikes32, f * n, float);
    PLACE(prev32, f * n, float);
    PLACE(margins32, f * n, float);
    PLACE(thr32, f * n, float);
    PLACE(acts32, sorn ? 0 : f * n, float);
    PLACE(errors32, sorn ? 0 : f * n, float);
    PLACE(effectors32, f * e, float);
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

/* The float32 instance's view of s (res_impl.h). */
static void view32(bl_res_state *s, bl_res_k32 *k)
{
    k->p = s->p32;
    k->n = s->n;
    k->r = s->r;
    k->e = s->e;
    k->ne = s->ne;
    k->ni = s->ni;
    k->rows = s->rows;
    k->learn_weights = s->learn_weights;
    k->learn = s->learn;
    k->row_start = s->row_start;
    k->row_len = s->row_len;
    k->col = s->col;
    k->w = s->w32;
    k->w_in = s->w_in32;
    k->w_out = s->w_out32;
    k->out_den = s->out_den32;
    k->sign = s->sign32;
    k->w_ei = s->w_ei32;
    k->w_ie = s->w_ie32;
    k->c_e = s->c_e32;
    k->spikes = s->spikes32;
    k->prev = s->prev32;
    k->margins = s->margins32;
    k->thr = s->thr32;
    k->acts = s->acts32;
    k->errors = s->errors32;
    k->effectors = s->effectors32;
    k->kcount = s->kcount;
    k->ok = s->ok;
    k->list = s->list;
    k->n_list_x = s->n_list_x;
    k->n_list_y = s->n_list_y;
    k->n_list_new = s->n_list_new;
    k->cptr = s->cptr;
    k->cdst = s->cdst;
    k->cpos = s->cpos;
}

static void widen(double *dst, const float *src, size_t count)
{
    for (size_t i = 0; i < count; i++)
        dst[i] = (double)src[i];
}

void bl_res_state_widen_views(bl_res_state *s)
{
    if (s->dtype != BL_RES_FLOAT32)
        return;
    widen(s->spikes, s->spikes32, s->n);
    widen(s->margins, s->margins32, s->n);
    widen(s->thr, s->thr32, s->n);
    if (s->acts)
        widen(s->acts, s->acts32, s->n);
    if (s->errors)
        widen(s->errors, s->errors32, s->n);
    widen(s->effectors, s->effectors32, s->e);
}

static void readout(bl_res_state *s)
{
    if (s->dtype == BL_RES_FLOAT32) {
        bl_res_k32 k;
        view32(s, &k);
        res_readout_f32(&k);
    } else {
        res_readout(s);
    }
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
    res_out_den(s); /* construction and bundles build float64 states (bl_res_state_cast makes float32) */
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
            out[(size_t)i * rows + s->col[k]] = s->dtype == BL_RES_FLOAT32 ? (double)s->w32[k] : s->w[k];
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

/* ---- dtypes ---- */

const char *bl_res_dtype_name(bl_res_dtype dtype) { return dtype == BL_RES_FLOAT32 ? "float32" : "float64"; }

int bl_res_dtype_parse(const char *name, bl_res_dtype *out)
{
    if (name && !strcmp(name, "float64"))
        *out = BL_RES_FLOAT64;
    else if (name && !strcmp(name, "float32"))
        *out = BL_RES_FLOAT32;
    else
        return -1;
    return 0;
}

bl_res_dtype bl_res_state_dtype(const bl_res_state *s) { return s->dtype; }

/* One parameter to float: finite, and > 0 where the equations need it. */
static bl_status param32(const char *name, double v, int positive, float *out, bl_error *err)
{
    *out = (float)v;
    if (!isfinite(*out))
        return bl_fail(err, BL_ERR_INVALID, "float32: parameter %s = %.17g is not finite as a float (overflow)",
                       name, v);
    if (positive && !(*out > 0.0f))
        return bl_fail(err, BL_ERR_INVALID, "float32: parameter %s = %.17g is %g as a float (it must stay > 0)",
                       name, v, (double)*out);
    return BL_OK;
}

static bl_status params_to_f32(const bl_res_params *p, bl_res_params32 *q, bl_error *err)
{
    memset(q, 0, sizeof *q);
    q->kind = p->kind;
    q->rectify = p->rectify;
    q->dale = p->dale;
    q->oosawa = p->oosawa;
    q->fast_inhibition = p->fast_inhibition;
    q->pruning = p->pruning;
    bl_status st;
    if (p->kind == BL_RES_SORN) {
        if ((st = param32("eta_stdp", p->eta_stdp, 0, &q->eta_stdp, err)) ||
            (st = param32("eta_ip", p->eta_ip, 0, &q->eta_ip, err)))
            return st;
        return param32("H_ip", p->H_ip, 0, &q->H_ip, err);
    }
    if ((st = param32("leak", p->leak, 0, &q->leak, err)) ||
        (st = param32("lrate_wmat", p->lrate_wmat, 0, &q->lrate_wmat, err)) ||
        (st = param32("lrate_targ", p->lrate_targ, 0, &q->lrate_targ, err)) ||
        (st = param32("threshold_mult", p->threshold_mult, 1, &q->threshold_mult, err)) ||
        (st = param32("targ_min", p->targ_min, 1, &q->targ_min, err)) ||
        (st = param32("membrane_noise", p->membrane_noise, 0, &q->membrane_noise, err)))
        return st;
    return param32("noise_gain", p->noise_gain, 0, &q->noise_gain, err);
}

bl_status bl_res_params_check_dtype(const bl_res_params *p, bl_res_dtype dtype, bl_error *err)
{
    bl_res_params32 q;
    return dtype == BL_RES_FLOAT32 ? params_to_f32(p, &q, err) : BL_OK;
}

/* dst[k] = src[k] rounded to float, k < count; a value that is not finite as
 * a float fails, named name[k] (cols > 0: name[k / cols, k % cols]) plus off
 * to the first index. */
static bl_status narrow(float *dst, const double *src, size_t count, const char *name, size_t cols, size_t off,
                        bl_error *err)
{
    for (size_t k = 0; k < count; k++) {
        dst[k] = (float)src[k];
        if (isfinite(dst[k]) || !isfinite(src[k]))
            continue; /* a non-finite source value only occurs in a failed state's outputs */
        if (cols)
            return bl_fail(err, BL_ERR_INVALID, "float32: %s[%zu, %zu] = %.17g is not finite as a float (overflow)",
                           name, k / cols, k % cols, src[k]);
        return bl_fail(err, BL_ERR_INVALID, "float32: %s[%zu] = %.17g is not finite as a float (overflow)", name,
                       k + off, src[k]);
    }
    return BL_OK;
}

/* The float arrays of d (float32) from the double arrays of s (float64), named
 * as in a bundle (reservoir.h). */
static bl_status narrow_state(bl_res_state *d, const bl_res_state *s, bl_error *err)
{
    const int sorn = s->p.kind == BL_RES_SORN;
    const size_t n = s->n, ne = s->ne, ni = s->ni, rows = s->rows;
    const char *wname = sorn ? "w_ee" : "w";
    for (uint32_t i = 0; i < s->rows; i++)
        for (uint32_t t = 0; t < s->row_len[i]; t++) {
            const uint64_t k = s->row_start[i] + t;
            d->w32[k] = (float)s->w[k];
            if (!isfinite(d->w32[k]))
                return bl_fail(err, BL_ERR_INVALID, "float32: %s[%u, %u] = %.17g is not finite as a float (overflow)",
                               wname, i, s->col[k], s->w[k]);
        }
    bl_status st;
    if ((st = narrow(d->w_in32, s->w_in, rows * s->r, sorn ? "w_eu" : "w_in", s->r, 0, err)) ||
        (st = narrow(d->w_out32, s->w_out, (size_t)s->e * rows, "w_out", rows, 0, err)) ||
        (st = narrow(d->prev32, s->prev, n, "previous spikes", 0, 0, err)) ||
        (st = narrow(d->margins32, s->margins, n, "margins", 0, 0, err)))
        return st;
    if (!sorn)
        return (st = narrow(d->sign32, s->sign, n, "signs", 0, 0, err)) ||
                       (st = narrow(d->acts32, s->acts, n, "acts", 0, 0, err)) ||
                       (st = narrow(d->errors32, s->errors, n, "errors", 0, 0, err)) ||
                       (st = narrow(d->thr32, s->thr, n, "targets", 0, 0, err))
                   ? st
                   : narrow(d->spikes32, s->spikes, n, "spikes", 0, 0, err);
    if ((st = narrow(d->c_e32, s->c_e, ne, "c_e", 0, 0, err)) ||
        (st = narrow(d->w_ei32, s->w_ei, ne * ni, "w_ei", ni, 0, err)) ||
        (st = narrow(d->w_ie32, s->w_ie, ni * ne, "w_ie", ne, 0, err)) ||
        (st = narrow(d->thr32, s->thr, ne, "t_e", 0, 0, err)) ||
        (st = narrow(d->thr32 + ne, s->thr + ne, ni, "t_i", 0, 0, err)) ||
        (st = narrow(d->spikes32, s->spikes, ne, "x", 0, 0, err)))
        return st;
    return narrow(d->spikes32 + ne, s->spikes + ne, ni, "y", 0, 0, err);
}

/* The double arrays of d (float64) from the float arrays of s: exact. */
static void widen_state(bl_res_state *d, const bl_res_state *s)
{
    const int sorn = s->p.kind == BL_RES_SORN;
    const size_t n = s->n, ne = s->ne, ni = s->ni, rows = s->rows;
    for (uint32_t i = 0; i < s->rows; i++)
        for (uint32_t t = 0; t < s->row_len[i]; t++)
            d->w[s->row_start[i] + t] = (double)s->w32[s->row_start[i] + t];
    widen(d->w_in, s->w_in32, rows * s->r);
    widen(d->w_out, s->w_out32, (size_t)s->e * rows);
    widen(d->prev, s->prev32, n);
    widen(d->margins, s->margins32, n);
    widen(d->thr, s->thr32, n);
    widen(d->spikes, s->spikes32, n);
    if (sorn) {
        widen(d->c_e, s->c_e32, ne);
        widen(d->w_ei, s->w_ei32, ne * ni);
        widen(d->w_ie, s->w_ie32, ni * ne);
    } else {
        widen(d->sign, s->sign32, n);
        widen(d->acts, s->acts32, n);
        widen(d->errors, s->errors32, n);
    }
}

bl_status bl_res_state_cast(const bl_res_state *s, bl_res_dtype dtype, bl_res_state **out, bl_error *err)
{
    *out = NULL;
    if (dtype != BL_RES_FLOAT64 && dtype != BL_RES_FLOAT32)
        return bl_fail(err, BL_ERR_INVALID, "reservoir cast: unknown dtype %d", (int)dtype);
    if (dtype == s->dtype)
        return bl_res_state_copy(s, out, err);
    bl_res_params32 p32;
    bl_status st = dtype == BL_RES_FLOAT32 ? params_to_f32(&s->p, &p32, err) : BL_OK;
    if (st)
        return st;
    bl_res_state *d = malloc(sizeof *d);
    if (!d)
        return bl_fail(err, BL_ERR_NOMEM, "cannot cast a reservoir state");
    *d = *s;
    d->dtype = dtype;
    size_t bytes = layout(d, NULL);
    d->arena = aligned_alloc(ALIGN, bytes);
    if (!d->arena) {
        free(d);
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate %zu bytes for a reservoir of %u units", bytes, s->n);
    }
    memset(d->arena, 0, bytes);
    d->arena_bytes = bytes;
    layout(d, d->arena);
    /* the integer arrays are the same in both dtypes */
    const int sorn = s->p.kind == BL_RES_SORN;
    memcpy(d->row_start, s->row_start, ((size_t)s->rows + 1) * sizeof *d->row_start);
    memcpy(d->row_len, s->row_len, (size_t)s->rows * sizeof *d->row_len);
    if (s->cap)
        memcpy(d->col, s->col, s->cap * sizeof *d->col);
    memcpy(d->kcount, s->kcount, (size_t)s->n * sizeof *d->kcount);
    memcpy(d->ok, s->ok, s->n);
    memcpy(d->list, s->list, (size_t)(sorn ? s->n + s->ne : s->n) * sizeof *d->list);
    if (!sorn) {
        const size_t blocks = ((size_t)s->n + BL_RES_BLOCK - 1) / BL_RES_BLOCK;
        memcpy(d->cptr, s->cptr, blocks * ((size_t)s->n + 1) * sizeof *d->cptr);
        if (s->cap) {
            memcpy(d->cdst, s->cdst, s->cap * sizeof *d->cdst);
            memcpy(d->cpos, s->cpos, s->cap * sizeof *d->cpos);
        }
    }
    if (dtype == BL_RES_FLOAT32) {
        d->p32 = p32;
        st = narrow_state(d, s, err);
        if (!st) {
            bl_res_k32 k;
            view32(d, &k);
            res_out_den_f32(&k); /* as the float32 kernel would sum it */
        }
    } else {
        widen_state(d, s);
        res_out_den(d);
    }
    if (st) {
        bl_res_state_destroy(d);
        return st;
    }
    readout(d); /* the effectors of the same spikes, in the new precision */
    bl_res_state_widen_views(d);
    *out = d;
    return BL_OK;
}

/* ---- phases ---- */

void bl_res_phase_a(bl_res_state *s)
{
    if (s->dtype == BL_RES_FLOAT32) {
        memcpy(s->prev32, s->spikes32, (size_t)s->n * sizeof *s->prev32);
        s->n_list_x = res_list_active_f32(s->prev32, s->ne, s->list); /* Falandays: ne = n, ni = 0 */
        s->n_list_y = s->ni ? res_list_active_f32(s->prev32 + s->ne, s->ni, s->list + s->ne) : 0;
        return;
    }
    memcpy(s->prev, s->spikes, (size_t)s->n * sizeof *s->prev);
    s->n_list_x = res_list_active(s->prev, s->ne, s->list);
    s->n_list_y = s->ni ? res_list_active(s->prev + s->ne, s->ni, s->list + s->ne) : 0;
}

void bl_res_phase_b(bl_res_state *s, uint32_t lo, uint32_t hi, const double *u, const double *xi)
{
    if (s->dtype == BL_RES_FLOAT32) {
        bl_res_k32 k;
        view32(s, &k);
        res_phase_b_f32(&k, lo, hi, u, xi);
    } else {
        res_phase_b(s, lo, hi, u, xi);
    }
}

int bl_res_needs_b2(const bl_res_state *s)
{
    return s->p.kind == BL_RES_SORN && s->p.fast_inhibition && s->ni > 0;
}

void bl_res_phase_b2_list(bl_res_state *s)
{
    s->n_list_new = s->dtype == BL_RES_FLOAT32 ? res_list_active_f32(s->spikes32, s->ne, s->list + s->n)
                                               : res_list_active(s->spikes, s->ne, s->list + s->n);
}

void bl_res_phase_b2(bl_res_state *s, uint32_t lo, uint32_t hi)
{
    if (s->dtype == BL_RES_FLOAT32) {
        bl_res_k32 k;
        view32(s, &k);
        res_phase_b2_f32(&k, lo, hi);
    } else {
        res_phase_b2(s, lo, hi);
    }
}

void bl_res_phase_c(bl_res_state *s, uint32_t lo, uint32_t hi)
{
    if (s->dtype == BL_RES_FLOAT32) {
        bl_res_k32 k;
        view32(s, &k);
        res_phase_c_f32(&k, lo, hi);
    } else {
        res_phase_c(s, lo, hi);
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
    bl_res_state_widen_views(s); /* float32: widening keeps (non-)finiteness */
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
