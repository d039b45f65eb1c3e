/* Seeded construction of both nodes (the spec's defaults). Every random
 * choice is one Philox draw named by (row, column, domain): the wiring is a
 * function of the seed alone, whatever order it is built in. The layouts are
 * listed in docs/reservoir.md; matching the Python or Julia generators is not
 * a goal of this scheme (bl-philox-v1). The Python project's own scheme,
 * philox-host-v1, is res_construct_host.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reservoir/res_impl.h"
#include "reservoir/res_kind.h"

static double U(uint64_t seed, uint32_t a, uint32_t b, uint32_t domain)
{
    return bl_res_uniform(seed, a, b, domain, 0);
}

/* ---- Falandays ---- */

bl_status bl_res_construct_falandays(const bl_res_params *p, uint32_t n, uint32_t r, uint32_t e,
                                     uint64_t seed, bl_res_state **out, bl_error *err)
{
    uint32_t *len = calloc(n, sizeof *len);
    if (!len)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate %u rows", n);
    /* Recurrent mask: j -> i with probability link_p, no self links. */
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++)
            if (j != i && U(seed, i, j, BL_RD_FAL_REC_MASK) < p->link_p)
                len[i]++;
    bl_res_state *s;
    bl_status st = bl_res_state_alloc(p, n, r, e, n, len, &s, err);
    free(len);
    if (st)
        return st;
    for (uint32_t i = 0; i < n; i++)
        s->sign[i] = (p->dale && U(seed, i, 0, BL_RD_FAL_SIGN) < p->inhibitory_frac) ? -1.0 : 1.0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t k = s->row_start[i];
        for (uint32_t j = 0; j < n; j++) {
            if (j == i || !(U(seed, i, j, BL_RD_FAL_REC_MASK) < p->link_p))
                continue;
            double z = bl_res_normal(seed, i, j, BL_RD_FAL_REC_W);
            double wv;
            if (p->dale) {
                wv = 1.0 + 0.2 * z;
                if (wv < 0.0)
                    wv = 0.0;
            } else if (p->weight_init_mode == 1) { /* pong_mixed */
                wv = U(seed, i, j, BL_RD_FAL_REC_INH) < 0.25 ? -1.0 + 0.1 * z
                                                             : 0.2 * bl_res_normal(seed, i, j, BL_RD_FAL_REC_W2);
            } else if (p->weight_init_mode == 2) { /* legacy_normal */
                wv = p->weight_init_std * z;
            } else {
                wv = p->input_weight + 0.1 * z;
            }
            s->col[k] = j;
            s->w[k] = wv * p->recurrent_init_scale;
            k++;
        }
        for (uint32_t q = 0; q < r; q++) {
            const double lp = p->n_input_link_p ? p->input_link_p[q] : p->link_p;
            s->w_in[(size_t)i * r + q] = U(seed, i, q, BL_RD_FAL_IN_MASK) < lp ? p->input_weight : 0.0;
        }
    }
    for (uint32_t x = 0; x < e; x++)
        for (uint32_t i = 0; i < n; i++)
            s->w_out[(size_t)x * n + i] = U(seed, x, i, BL_RD_FAL_OUT_MASK) < p->link_p ? 1.0 : 0.0;
    if (p->repair_masks) {
        /* Unsigned nodes: a unit with neither a recurrent nor an input link gets
         * one input link (when inputs can link at all); every effector pool
         * gets a unit when it has none. */
        /* Eligible receptors: those that can link at all. */
        uint32_t eligible = 0;
        for (uint32_t q = 0; q < r; q++)
            eligible += (p->n_input_link_p ? p->input_link_p[q] : p->link_p) > 0.0;
        if (!p->dale && eligible)
            for (uint32_t i = 0; i < n; i++) {
                int linked = s->row_start[i + 1] > s->row_start[i];
                for (uint32_t q = 0; q < r && !linked; q++)
                    linked = s->w_in[(size_t)i * r + q] != 0.0;
                if (linked)
                    continue;
                uint32_t pick = (uint32_t)(U(seed, i, 0, BL_RD_FAL_REPAIR_IN) * eligible);
                if (pick >= eligible)
                    pick = eligible - 1;
                for (uint32_t q = 0; q < r; q++)
                    if ((p->n_input_link_p ? p->input_link_p[q] : p->link_p) > 0.0 && pick-- == 0) {
                        s->w_in[(size_t)i * r + q] = p->input_weight;
                        break;
                    }
            }
        for (uint32_t x = 0; x < e; x++) {
            int any = 0;
            for (uint32_t i = 0; i < n && !any; i++)
                any = s->w_out[(size_t)x * n + i] != 0.0;
            if (!any) {
                uint32_t i = (uint32_t)(U(seed, x, 0, BL_RD_FAL_REPAIR_OUT) * n);
                s->w_out[(size_t)x * n + (i < n ? i : n - 1)] = 1.0;
            }
        }
    }
    for (uint32_t i = 0; i < n; i++)
        s->thr[i] = p->targ_min;
    bl_res_state_finish(s);
    *out = s;
    return BL_OK;
}

/* ---- SORN ---- */

typedef struct keyed {
    double u;
    uint32_t index;
} keyed;

static int by_key(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->u != y->u)
        return x->u < y->u ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* mask[rows][cols]: probability p, optional no-self, and at least one link
 * per row when the row has a candidate (the lowest draw of the repair domain). */
static void random_mask(uint8_t *mask, uint32_t rows, uint32_t cols, double p, int no_self, uint64_t seed,
                        uint32_t domain, uint32_t repair_domain)
{
    for (uint32_t i = 0; i < rows; i++) {
        int any = 0;
        for (uint32_t j = 0; j < cols; j++) {
            uint8_t m = !(no_self && i == j) && U(seed, i, j, domain) < p;
            mask[(size_t)i * cols + j] = m;
            any |= m;
        }
        if (any)
            continue;
        double best = 2.0;
        uint32_t pick = UINT32_MAX;
        for (uint32_t j = 0; j < cols; j++) {
            if (no_self && i == j)
                continue;
            double u = U(seed, i, j, repair_domain);
            if (u < best) {
                best = u;
                pick = j;
            }
        }
        if (pick != UINT32_MAX)
            mask[(size_t)i * cols + pick] = 1;
    }
}

/* For each column c, the k rows with the smallest draws (a random k-subset). */
static bl_status fanout(uint8_t *mask, uint32_t rows, uint32_t cols, uint32_t k, uint64_t seed,
                        uint32_t domain, int column_major_draws, bl_error *err)
{
    keyed *keys = malloc((size_t)rows * sizeof *keys);
    if (!keys)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate %u draws", rows);
    for (uint32_t c = 0; c < cols; c++) {
        for (uint32_t i = 0; i < rows; i++)
            keys[i] = (keyed){U(seed, c, i, domain), i};
        qsort(keys, rows, sizeof *keys, by_key);
        for (uint32_t t = 0; t < k; t++) {
            uint32_t i = keys[t].index;
            if (column_major_draws)
                mask[(size_t)c * rows + i] = 1; /* [cols][rows] */
            else
                mask[(size_t)i * cols + c] = 1; /* [rows][cols] */
        }
    }
    free(keys);
    return BL_OK;
}

/* U(0,1) on the mask, each row scaled to sum to target: w * (target / total),
 * one rounding for the scale as the Python project does (so target 1 is the
 * old 1 / total exactly). A target of 0 leaves the whole block at 0, links
 * and all (its links stay in the mask). */
static void row_weights(double *w, const uint8_t *mask, uint32_t rows, uint32_t cols, uint64_t seed,
                        uint32_t domain, double target)
{
    for (uint32_t i = 0; i < rows; i++) {
        double *row = w + (size_t)i * cols;
        double total = 0.0;
        for (uint32_t j = 0; j < cols; j++) {
            row[j] = target != 0.0 && mask[(size_t)i * cols + j] ? U(seed, i, j, domain) : 0.0;
            total = total + row[j];
        }
        if (total > 0.0) {
            double scale = target / total;
            for (uint32_t j = 0; j < cols; j++)
                row[j] = row[j] * scale;
        }
    }
}

static uint32_t round_count(double x, uint32_t lo, uint32_t hi)
{
    double v = nearbyint(x); /* ties to even, as Python's round */
    if (!(v >= (double)lo))
        return lo;
    return v > (double)hi ? hi : (uint32_t)v;
}

bl_status bl_res_construct_sorn(const bl_res_params *p, uint32_t n, uint32_t r, uint32_t e, uint64_t seed,
                                bl_res_state **out, bl_error *err)
{
    const uint32_t ne = round_count((double)n / (1.0 + p->inhibitory_fraction), 1, n), ni = n - ne;
    size_t big = (size_t)ne * (ne > ni ? ne : ni);
    uint8_t *mask = calloc(big ? big : 1, 1);
    uint8_t *pools = calloc((size_t)(r > e ? r : e) * ne, 1);
    double *dense = calloc(big ? big : 1, sizeof *dense);
    uint32_t *len = calloc(ne, sizeof *len);
    bl_res_state *s = NULL;
    bl_status st = mask && pools && dense && len ? BL_OK : bl_fail(err, BL_ERR_NOMEM, "SORN construction: out of memory");
    if (!st) {
        random_mask(mask, ne, ne, p->p_ee, 1, seed, BL_RD_SORN_EE_MASK, BL_RD_SORN_EE_REPAIR);
        for (uint32_t i = 0; i < ne; i++)
            for (uint32_t j = 0; j < ne; j++)
                len[i] += mask[(size_t)i * ne + j];
        st = bl_res_state_alloc(p, n, r, e, ne, len, &s, err);
    }
    if (!st) {
        row_weights(dense, mask, ne, ne, seed, BL_RD_SORN_EE_W, p->ee_row_sum);
        for (uint32_t i = 0; i < ne; i++) {
            uint64_t k = s->row_start[i];
            double c = 0.0;
            for (uint32_t j = 0; j < ne; j++) {
                if (!mask[(size_t)i * ne + j])
                    continue;
                s->col[k] = j;
                s->w[k] = dense[(size_t)i * ne + j];
                c = c + s->w[k];
                k++;
            }
            s->c_e[i] = c;
        }
        if (ni > 0) {
            random_mask(mask, ne, ni, p->p_ei, 0, seed, BL_RD_SORN_EI_MASK, BL_RD_SORN_EI_REPAIR);
            row_weights(s->w_ei, mask, ne, ni, seed, BL_RD_SORN_EI_W, p->ei_row_sum);
            random_mask(mask, ni, ne, p->p_ie, 0, seed, BL_RD_SORN_IE_MASK, BL_RD_SORN_IE_REPAIR);
            row_weights(s->w_ie, mask, ni, ne, seed, BL_RD_SORN_IE_W, p->ie_row_sum);
        }
        /* Each input channel reaches round(p_input N_E) E units; rows scaled to 1. */
        memset(pools, 0, (size_t)(r > e ? r : e) * ne);
        st = fanout(pools, ne, r, round_count(p->p_input * ne, 1, ne), seed, BL_RD_SORN_IN_PICK, 0, err);
    }
    if (!st) {
        row_weights(s->w_in, pools, ne, r, seed, BL_RD_SORN_EU_W, p->input_row_sum);
        memset(pools, 0, (size_t)(r > e ? r : e) * ne);
        st = fanout(pools, ne, e, round_count(p->p_output * ne, 1, ne), seed, BL_RD_SORN_OUT_PICK, 1, err);
    }
    if (!st) {
        for (size_t k = 0; k < (size_t)e * ne; k++)
            s->w_out[k] = pools[k] ? 1.0 : 0.0;
        for (uint32_t i = 0; i < ne; i++)
            s->thr[i] = p->T_E_max * U(seed, i, 0, BL_RD_SORN_TE);
        for (uint32_t k = 0; k < ni; k++)
            s->thr[ne + k] = p->T_I_max * U(seed, k, 0, BL_RD_SORN_TI);
        bl_res_state_finish(s);
    }
    free(mask);
    free(pools);
    free(dense);
    free(len);
    if (st) {
        bl_res_state_destroy(s);
        return st;
    }
    *out = s;
    return BL_OK;
}

static bl_status construct_checks(const bl_res_params *p, uint32_t n_units, uint32_t n_inputs,
                                  uint32_t n_effectors, bl_error *err)
{
    bl_status st = bl_res_params_validate(p, err);
    if (st)
        return st;
    if (n_units < 1 || n_units > BL_RES_MAX_UNITS || n_inputs < 1 || n_inputs > BL_RES_MAX_PORTS ||
        n_effectors < 1 || n_effectors > BL_RES_MAX_PORTS)
        return bl_fail(err, BL_ERR_INVALID, "reservoir dimensions out of range: %u units (1..%d), %u inputs, "
                       "%u effectors (1..%d)", n_units, BL_RES_MAX_UNITS, n_inputs, n_effectors, BL_RES_MAX_PORTS);
    if (p->n_input_link_p && p->n_input_link_p != n_inputs) /* only kinds that take them have any */
        return bl_fail(err, BL_ERR_INVALID, "parameter input_link_p: %u probabilities for %u receptors",
                       p->n_input_link_p, n_inputs);
    return BL_OK;
}

bl_status bl_res_state_construct(const bl_res_params *p, uint32_t n_units, uint32_t n_inputs,
                                 uint32_t n_effectors, uint64_t seed, bl_res_state **out, bl_error *err)
{
    *out = NULL;
    bl_status st = construct_checks(p, n_units, n_inputs, n_effectors, err);
    if (st)
        return st;
    return bl_res_kind_of(p->kind)->construct(p, n_units, n_inputs, n_effectors, seed, out, err);
}

bl_status bl_res_state_construct_rng(const bl_res_params *p, uint32_t n_units, uint32_t n_inputs,
                                     uint32_t n_effectors, const bl_rng_seed *seed, bl_res_state **out,
                                     bl_error *err)
{
    if (seed->scheme != BL_RNG_PHILOX_HOST_V1)
        return bl_res_state_construct(p, n_units, n_inputs, n_effectors, seed->u64, out, err);
    *out = NULL;
    bl_status st = construct_checks(p, n_units, n_inputs, n_effectors, err);
    if (st)
        return st;
    return bl_res_construct_host(p, n_units, n_inputs, n_effectors, seed->digest, out, err);
}
