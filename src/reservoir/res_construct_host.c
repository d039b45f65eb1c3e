/* Construction under philox-host-v1: the Python BrainlessLab's wirings.
 *
 * One NumPy Generator(Philox) seeded by the construction digest, drawn in
 * the Python project's order and by its methods (docs/reservoir.md, "Seeds"):
 * whole arrays row-major, every entry drawn whether or not it is used (the
 * diagonal, off-mask weights), so that every later draw lands where NumPy's
 * does. Only the sums that NumPy computes pairwise (SORN's c_e = np.sum(w_ee,
 * axis=1)) are summed pairwise here; the row totals the Python code sums
 * with the builtin sum() stay sequential. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/np_random.h"
#include "reservoir/res_impl.h"
#include "reservoir/res_kind.h"

/* ---- Falandays (models/falandays.py, construct) ---- */

static double input_p(const bl_res_params *p, uint32_t q)
{
    return p->n_input_link_p ? p->input_link_p[q] : p->link_p;
}

bl_status bl_res_host_falandays(const bl_res_params *p, uint32_t n, uint32_t r, uint32_t e, bl_np_rng *g,
                                bl_res_state **out, bl_error *err)
{
    const size_t nn = (size_t)n * n;
    uint8_t *mask = malloc(nn ? nn : 1), *in = malloc((size_t)n * r), *om = malloc((size_t)n * e);
    uint8_t *inh = p->weight_init_mode == 1 ? malloc(nn ? nn : 1) : NULL;
    double *sign = malloc(n * sizeof *sign);
    uint32_t *len = calloc(n, sizeof *len), *eligible = malloc((r ? r : 1) * sizeof *eligible);
    bl_res_state *s = NULL;
    bl_status st = mask && in && om && sign && len && eligible && (p->weight_init_mode != 1 || inh)
                       ? BL_OK
                       : bl_fail(err, BL_ERR_NOMEM, "philox-host-v1 Falandays construction: cannot allocate %u units",
                                 n);
    if (!st) {
        /* signs (Dale only), then the three masks, each one array of uniforms. */
        for (uint32_t i = 0; i < n; i++)
            sign[i] = 1.0;
        if (p->dale)
            for (uint32_t i = 0; i < n; i++)
                if (bl_np_random(g) < p->inhibitory_frac)
                    sign[i] = -1.0;
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < n; j++) {
                const double u = bl_np_random(g);
                mask[(size_t)i * n + j] = i != j && u < p->link_p;
            }
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t q = 0; q < r; q++)
                in[(size_t)i * r + q] = bl_np_random(g) < input_p(p, q);
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t x = 0; x < e; x++)
                om[(size_t)i * e + x] = bl_np_random(g) < p->link_p; /* [unit, effector] as drawn */
        if (p->repair_masks) {
            /* Receptors that can link (a nonzero probability), then a unit with
             * neither link gets one of them (unsigned only); then each empty
             * effector pool gets a unit. */
            uint32_t n_el = 0;
            for (uint32_t q = 0; q < r; q++)
                if (input_p(p, q) != 0.0)
                    eligible[n_el++] = q;
            if (!p->dale && n_el)
                for (uint32_t i = 0; i < n; i++) {
                    int linked = 0;
                    for (uint32_t j = 0; j < n && !linked; j++)
                        linked = mask[(size_t)i * n + j];
                    for (uint32_t q = 0; q < r && !linked; q++)
                        linked = in[(size_t)i * r + q];
                    if (!linked)
                        in[(size_t)i * r + eligible[bl_np_choice_index(g, n_el)]] = 1;
                }
            for (uint32_t x = 0; x < e; x++) {
                int any = 0;
                for (uint32_t i = 0; i < n && !any; i++)
                    any = om[(size_t)i * e + x];
                if (!any)
                    om[(size_t)bl_np_integers(g, 0, n) * e + x] = 1;
            }
        }
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < n; j++)
                len[i] += mask[(size_t)i * n + j];
        st = bl_res_state_alloc(p, n, r, e, n, len, &s, err);
    }
    if (!st) {
        for (uint32_t i = 0; i < n; i++) {
            uint64_t k = s->row_start[i];
            for (uint32_t j = 0; j < n; j++)
                if (mask[(size_t)i * n + j])
                    s->col[k++] = j;
        }
        /* Weights: whole [n, n] arrays of normals; only the linked entries are
         * kept (NumPy multiplies the rest by the mask's 0). pong_mixed draws
         * its inhibitory coins, then the inhibitory normals, then the others. */
        if (p->weight_init_mode == 1 && !p->dale) {
            for (size_t x = 0; x < nn; x++)
                inh[x] = bl_np_random(g) < 0.25;
            for (int pass = 0; pass < 2; pass++) {
                uint64_t k = 0;
                for (uint32_t i = 0; i < n; i++)
                    for (uint32_t j = 0; j < n; j++) {
                        const double z = bl_np_standard_normal(g);
                        const size_t x = (size_t)i * n + j;
                        if (!mask[x])
                            continue;
                        if (pass == 0 && inh[x])
                            s->w[k] = -1.0 + 0.1 * z;
                        else if (pass == 1 && !inh[x])
                            s->w[k] = 0.2 * z;
                        k++;
                    }
            }
        } else {
            uint64_t k = 0;
            for (uint32_t i = 0; i < n; i++)
                for (uint32_t j = 0; j < n; j++) {
                    const double z = bl_np_standard_normal(g);
                    if (!mask[(size_t)i * n + j])
                        continue;
                    double v;
                    if (p->dale) {
                        v = 1.0 + 0.2 * z;
                        v = v > 0.0 ? v : 0.0; /* np.maximum(0.0, v) */
                    } else if (p->weight_init_mode == 2) {
                        v = p->weight_init_std * z;
                    } else {
                        v = p->input_weight + 0.1 * z;
                    }
                    s->w[k++] = v;
                }
        }
        for (uint64_t k = 0; k < s->row_start[n]; k++)
            s->w[k] = s->w[k] * p->recurrent_init_scale;
        for (uint32_t i = 0; i < n; i++) {
            s->sign[i] = sign[i];
            s->thr[i] = p->targ_min;
            for (uint32_t q = 0; q < r; q++)
                s->w_in[(size_t)i * r + q] = in[(size_t)i * r + q] ? p->input_weight : 0.0;
            for (uint32_t x = 0; x < e; x++)
                s->w_out[(size_t)x * n + i] = om[(size_t)i * e + x] ? 1.0 : 0.0;
        }
        bl_res_state_finish(s);
    }
    free(mask);
    free(in);
    free(om);
    free(inh);
    free(sign);
    free(len);
    free(eligible);
    if (st) {
        bl_res_state_destroy(s);
        return st;
    }
    *out = s;
    return BL_OK;
}

/* ---- SORN (models/sorn.py, construct) ---- */

/* mask[rows][cols] < p, the diagonal cleared (no_self), then each empty row
 * gets one of its candidate columns (a choice among them). */
static void host_mask(uint8_t *mask, uint32_t rows, uint32_t cols, double p, int no_self, bl_np_rng *g)
{
    for (uint32_t i = 0; i < rows; i++)
        for (uint32_t j = 0; j < cols; j++) {
            const double u = bl_np_random(g);
            mask[(size_t)i * cols + j] = !(no_self && i == j) && u < p;
        }
    if (!cols)
        return;
    for (uint32_t i = 0; i < rows; i++) {
        int any = 0;
        for (uint32_t j = 0; j < cols && !any; j++)
            any = mask[(size_t)i * cols + j];
        if (any)
            continue;
        const uint32_t candidates = no_self && i < cols ? cols - 1 : cols;
        if (!candidates)
            continue;
        uint32_t j = (uint32_t)bl_np_choice_index(g, candidates);
        if (no_self && j >= i)
            j++; /* the candidates skip the row's own column */
        mask[(size_t)i * cols + j] = 1;
    }
}

/* For each column, the first k entries of a permutation of the rows. */
static bl_status host_fanout(uint8_t *mask, uint32_t rows, uint32_t cols, double fraction, bl_np_rng *g,
                             bl_error *err)
{
    int32_t *perm = malloc((rows ? rows : 1) * sizeof *perm);
    if (!perm)
        return bl_fail(err, BL_ERR_NOMEM, "philox-host-v1 SORN construction: cannot allocate %u rows", rows);
    double v = nearbyint(fraction * rows); /* Python's round: ties to even */
    uint32_t k = v < 1.0 ? 1 : v > rows ? rows : (uint32_t)v;
    for (uint32_t c = 0; c < cols; c++) {
        for (uint32_t i = 0; i < rows; i++)
            perm[i] = (int32_t)i;
        bl_np_shuffle_i32(g, perm, rows);
        for (uint32_t t = 0; t < k; t++)
            mask[(size_t)perm[t] * cols + c] = 1;
    }
    free(perm);
    return BL_OK;
}

/* Uniforms on the mask (row-major), each row scaled by target / total with
 * total summed left to right (the builtin sum); target 0 draws nothing. */
static void host_weights(double *w, const uint8_t *mask, uint32_t rows, uint32_t cols, double target,
                         bl_np_rng *g)
{
    memset(w, 0, (size_t)rows * cols * sizeof *w);
    if (target == 0.0)
        return;
    for (size_t x = 0; x < (size_t)rows * cols; x++)
        if (mask[x])
            w[x] = bl_np_random(g);
    for (uint32_t i = 0; i < rows; i++) {
        double *row = w + (size_t)i * cols;
        double total = 0.0;
        for (uint32_t j = 0; j < cols; j++)
            total = total + row[j];
        if (total > 0.0) {
            const double scale = target / total;
            for (uint32_t j = 0; j < cols; j++)
                row[j] = row[j] * scale;
        }
    }
}

/* NumPy's pairwise summation of a contiguous float64 run (what np.sum does
 * along the last axis): 8 interleaved partial sums up to 128 values, halves
 * (at a multiple of 8) above. */
double bl_np_pairwise_sum(const double *a, size_t n)
{
    if (n < 8) {
        double res = -0.0;
        for (size_t i = 0; i < n; i++)
            res = res + a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        size_t i;
        for (int k = 0; k < 8; k++)
            r[k] = a[k];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int k = 0; k < 8; k++)
                r[k] = r[k] + a[i + (size_t)k];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res = res + a[i];
        return res;
    }
    size_t n2 = n / 2;
    n2 -= n2 % 8;
    return bl_np_pairwise_sum(a, n2) + bl_np_pairwise_sum(a + n2, n - n2);
}

/* The row-sum targets of the Python project's SORNConfig (ee_row_sum,
 * ei_row_sum, ie_row_sum, input_row_sum; bl_res_params, default 1); a target
 * of 0 draws nothing, as in Python. */
#define BL_SORN_ROW_SUM(p, which) ((p)->which##_row_sum)

bl_status bl_res_host_sorn(const bl_res_params *p, uint32_t n, uint32_t r, uint32_t e, bl_np_rng *g,
                           bl_res_state **out, bl_error *err)
{
    double v = nearbyint((double)n / (1.0 + p->inhibitory_fraction));
    const uint32_t ne = v < 1.0 ? 1 : v > n ? n : (uint32_t)v, ni = n - ne;
    uint8_t *ee = calloc((size_t)ne * ne, 1), *ei = calloc((size_t)ne * ni + 1, 1),
            *ie = calloc((size_t)ni * ne + 1, 1), *pin = calloc((size_t)ne * r, 1), *pout = calloc((size_t)ne * e, 1);
    double *dense = malloc((size_t)ne * ne * sizeof *dense), *eu = malloc((size_t)ne * r * sizeof *eu);
    uint32_t *len = calloc(ne, sizeof *len);
    bl_res_state *s = NULL;
    bl_status st = ee && ei && ie && pin && pout && dense && eu && len
                       ? BL_OK
                       : bl_fail(err, BL_ERR_NOMEM, "philox-host-v1 SORN construction: cannot allocate %u units", n);
    if (!st) {
        host_mask(ee, ne, ne, p->p_ee, 1, g);
        host_mask(ei, ne, ni, p->p_ei, 0, g);
        host_mask(ie, ni, ne, p->p_ie, 0, g);
        st = host_fanout(pin, ne, r, p->p_input, g, err);
    }
    if (!st)
        st = host_fanout(pout, ne, e, p->p_output, g, err);
    if (!st) {
        for (uint32_t i = 0; i < ne; i++)
            for (uint32_t j = 0; j < ne; j++)
                len[i] += ee[(size_t)i * ne + j];
        st = bl_res_state_alloc(p, n, r, e, ne, len, &s, err);
    }
    if (!st) {
        host_weights(dense, ee, ne, ne, BL_SORN_ROW_SUM(p, ee), g);
        for (uint32_t i = 0; i < ne; i++) {
            uint64_t k = s->row_start[i];
            for (uint32_t j = 0; j < ne; j++)
                if (ee[(size_t)i * ne + j]) {
                    s->col[k] = j;
                    s->w[k] = dense[(size_t)i * ne + j];
                    k++;
                }
            s->c_e[i] = 0.0 + bl_np_pairwise_sum(dense + (size_t)i * ne, ne);
        }
        if (ni) {
            host_weights(s->w_ei, ei, ne, ni, BL_SORN_ROW_SUM(p, ei), g);
            host_weights(s->w_ie, ie, ni, ne, BL_SORN_ROW_SUM(p, ie), g);
        }
        host_weights(eu, pin, ne, r, BL_SORN_ROW_SUM(p, input), g);
        memcpy(s->w_in, eu, (size_t)ne * r * sizeof *eu);
        for (uint32_t x = 0; x < e; x++)
            for (uint32_t i = 0; i < ne; i++)
                s->w_out[(size_t)x * ne + i] = pout[(size_t)i * e + x] ? 1.0 : 0.0;
        for (uint32_t i = 0; i < ne; i++)
            s->thr[i] = p->T_E_max * bl_np_random(g);
        for (uint32_t k = 0; k < ni; k++)
            s->thr[ne + k] = p->T_I_max * bl_np_random(g);
        bl_res_state_finish(s);
    }
    free(ee);
    free(ei);
    free(ie);
    free(pin);
    free(pout);
    free(dense);
    free(eu);
    free(len);
    if (st) {
        bl_res_state_destroy(s);
        return st;
    }
    *out = s;
    return BL_OK;
}

bl_status bl_res_construct_host(const bl_res_params *p, uint32_t n, uint32_t r, uint32_t e,
                                const uint8_t digest[32], bl_res_state **out, bl_error *err)
{
    bl_np_rng g;
    bl_np_rng_seed_digest(&g, digest);
    return bl_res_kind_of(p->kind)->construct_host(p, n, r, e, &g, out, err);
}
