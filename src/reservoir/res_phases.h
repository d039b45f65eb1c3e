/* The step phases over the equations, written once for both precisions.
 *
 * A template, like falandays_eq.h and sorn_eq.h (included after them):
 * res_state.c includes it once per precision with BL_REAL, BL_STATE,
 * BL_PARAMS and BL_EQ set. The public phase functions (res_state.c) choose the
 * instance once per call, never per element, so the float64 instance is the
 * same code as before float32 existed. */
#ifndef BL_REAL
#error "res_phases.h is a template: define BL_REAL, BL_STATE, BL_PARAMS and BL_EQ first (res_state.c)"
#endif

/* The indices of the nonzero values of v[0..n), ascending, into list; their count. */
static inline uint32_t BL_EQ(res_list_active)(const BL_REAL *v, uint32_t n, uint32_t *list)
{
    uint32_t na = 0;
    for (uint32_t j = 0; j < n; j++)
        if (v[j] != 0.0)
            list[na++] = j;
    return na;
}

static inline void BL_EQ(res_phase_b)(BL_STATE *s, uint32_t lo, uint32_t hi, const double *u, const double *xi)
{
    if (s->p.kind != BL_RES_SORN) {
        for (uint32_t b = lo / BL_RES_BLOCK; b * BL_RES_BLOCK < hi; b++)
            BL_EQ(bl_fal_integrate_block)(s, b, u, xi);
        return;
    }
    for (uint32_t i = lo; i < hi; i++) {
        if (i < s->ne)
            BL_EQ(bl_sorn_integrate_e)(s, i, u);
        else if (!s->p.fast_inhibition)
            BL_EQ(bl_sorn_integrate_i)(s, i - s->ne, s->prev, s->list, s->n_list_x); /* old x */
    }
}

static inline void BL_EQ(res_phase_b2)(BL_STATE *s, uint32_t lo, uint32_t hi)
{
    for (uint32_t k = lo; k < hi; k++)
        BL_EQ(bl_sorn_integrate_i)(s, k, s->spikes, s->list + s->n, s->n_list_new); /* new x */
}

static inline void BL_EQ(res_phase_c)(BL_STATE *s, uint32_t lo, uint32_t hi)
{
    if (s->p.kind == BL_RES_SORN) {
        for (uint32_t i = lo; i < hi; i++)
            BL_EQ(bl_sorn_adapt)(s, i);
    } else {
        for (uint32_t b = lo / BL_RES_BLOCK; b * BL_RES_BLOCK < hi; b++)
            BL_EQ(bl_fal_learn_block)(s, b);
    }
}

static inline void BL_EQ(res_readout)(BL_STATE *s)
{
    for (uint32_t e = 0; e < s->e; e++)
        s->effectors[e] = s->p.kind != BL_RES_SORN ? BL_EQ(bl_fal_effector)(s, e) : BL_EQ(bl_sorn_effector)(s, e);
}

/* Falandays sum_i out[e,i] (ascending) / SORN the pool size, in this precision. */
static inline void BL_EQ(res_out_den)(BL_STATE *s)
{
    for (uint32_t e = 0; e < s->e; e++) {
        const BL_REAL *out = s->w_out + (size_t)e * s->rows;
        BL_REAL den = 0.0;
        for (uint32_t i = 0; i < s->rows; i++)
            den = den + (s->p.kind == BL_RES_SORN ? (out[i] != 0.0 ? (BL_REAL)1 : (BL_REAL)0) : out[i]);
        s->out_den[e] = den;
    }
}
