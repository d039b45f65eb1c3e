/* A population of N independent neurons (generated code or the
 * interpreter, eq_update_range and eq_exec), one step in
 * Brian2's schedule (groups, thresholds, resets):
 *   not_refractory = timestep(t - lastspike, dt) >= timestep(refractory, dt)
 *   state update at t = step*dt
 *   spike where the threshold holds (and not refractory, when a period is set);
 *   lastspike = t
 *   reset of the neurons that spiked
 * Refractoriness is computed from times exactly as Brian2's generated code
 * does (lastspike starts at -1e4 s), so the same steps are refractory. */
#include <stdlib.h>
#include <string.h>

#include "models/lang/eq_impl.h"

struct bl_eq_pop {
    const bl_eq_model *m;
    uint32_t n;
    uint64_t step;
    double *state;     /* n_vars arrays of n */
    double *lastspike; /* n */
    uint8_t *nr;       /* n: not_refractory after the last update */
    uint8_t *fire;     /* n: the threshold holds (this step) */
    double *r;         /* one register file */
    double **vars;     /* n_vars pointers into state, for eq_update_range */
    bl_eq_normal_fn normal;
    void *user;
};

bl_status bl_eq_pop_create(const bl_eq_model *m, uint32_t n, bl_eq_pop **out, bl_error *err)
{
    *out = NULL;
    if (!n || n > (1u << 28))
        return bl_fail(err, BL_ERR_INVALID, "population: %u neurons (1 to 2^28)", n);
    if (m->n_pn && m->pn_n < n)
        return bl_fail(err, BL_ERR_UNSUPPORTED, "population: [model.per_neuron] '%s' takes its values from a "
                       "connectome plan (a neurons.csv column, or draws with the plan's seed); here, leave it out and give "
                       "per-neuron values with --init NAME=FILE.npy", m->pn[0].name);
    bl_eq_pop *p = calloc(1, sizeof *p);
    if (!p)
        return bl_fail(err, BL_ERR_NOMEM, "population: out of memory");
    p->m = m;
    p->n = n;
    size_t nv = m->n_vars ? m->n_vars : 1;
    p->state = malloc(nv * n * sizeof *p->state);
    p->lastspike = malloc(n * sizeof *p->lastspike);
    p->nr = malloc(n);
    p->fire = malloc(n);
    p->r = calloc(m->n_regs, sizeof *p->r);
    p->vars = malloc(nv * sizeof *p->vars);
    if (!p->state || !p->lastspike || !p->nr || !p->fire || !p->r || !p->vars) {
        bl_eq_pop_destroy(p);
        return bl_fail(err, BL_ERR_NOMEM, "population: out of memory for %u neurons", n);
    }
    for (uint32_t v = 0; v < m->n_vars; v++) {
        p->vars[v] = p->state + (size_t)v * n;
        for (uint32_t i = 0; i < n; i++)
            p->state[(size_t)v * n + i] = m->var_init[v];
    }
    for (uint32_t i = 0; i < n; i++) {
        p->lastspike[i] = -1e4;
        p->nr[i] = 1;
    }
    memcpy(p->r + EQ_CBASE, m->consts, m->n_consts * sizeof *m->consts);
    *out = p;
    return BL_OK;
}

void bl_eq_pop_destroy(bl_eq_pop *p)
{
    if (!p)
        return;
    free(p->state);
    free(p->lastspike);
    free(p->nr);
    free(p->fire);
    free(p->r);
    free(p->vars);
    free(p);
}

uint32_t bl_eq_pop_size(const bl_eq_pop *p) { return p->n; }
uint64_t bl_eq_pop_steps(const bl_eq_pop *p) { return p->step; }

double *bl_eq_pop_var(bl_eq_pop *p, const char *name)
{
    for (uint32_t v = 0; v < p->m->n_vars; v++)
        if (!strcmp(p->m->syms[p->m->var_sym[v]].name, name))
            return p->state + (size_t)v * p->n;
    return NULL;
}

void bl_eq_pop_set_noise(bl_eq_pop *p, bl_eq_normal_fn fn, void *user)
{
    p->normal = fn;
    p->user = user;
}

static void load(bl_eq_pop *p, uint32_t i)
{
    for (uint32_t v = 0; v < p->m->n_vars; v++)
        p->r[EQ_VBASE + v] = p->state[(size_t)v * p->n + i];
    p->r[R_I] = (double)i;
}

static void store(bl_eq_pop *p, uint32_t i)
{
    for (uint32_t v = 0; v < p->m->n_vars; v++)
        p->state[(size_t)v * p->n + i] = p->r[EQ_VBASE + v];
}

bl_status bl_eq_pop_step(bl_eq_pop *p, uint32_t *spiked, uint32_t *n_spiked, bl_error *err)
{
    const bl_eq_model *m = p->m;
    *n_spiked = 0;
    if (m->uses_noise && !p->normal)
        return bl_fail(err, BL_ERR_INVALID, "population: the model draws noise (xi) but no normal stream is set");
    double dt = m->dt, t = (double)p->step * dt;
    eq_vm_ctx ctx = {p->normal, p->user, 0, p->step};
    uint32_t ns = 0;
    /* not_refractory of every neuron, then the update of all, then the
     * threshold of all (over ranges: generated loops when there are; the
     * neurons are independent, so the same bits as neuron by neuron), then
     * the spikes and resets in neuron order */
    for (uint32_t i = 0; i < p->n; i++) {
        int nr = 1;
        if (m->ref_steps >= 0) {
            double el = ((t - p->lastspike[i]) + 1e-3 * dt) / dt;
            nr = (int64_t)el >= m->ref_steps;
        }
        p->nr[i] = (uint8_t)nr;
    }
    eq_update_range(m, 0, p->n, p->vars, p->nr, t, p->r, &ctx);
    if (m->has_threshold)
        eq_threshold_range(m, 0, p->n, p->vars, p->nr, t, p->r, &ctx, p->fire);
    p->r[R_T] = t;
    for (uint32_t i = 0; m->has_threshold && i < p->n; i++) {
        if (!p->fire[i] || (m->ref_steps >= 0 && !p->nr[i]))
            continue;
        spiked[ns++] = i;
        p->lastspike[i] = t;
        p->nr[i] = 0;
        if (m->has_reset) {
            load(p, i);
            p->r[R_NR] = 0;
            ctx.neuron = i;
            eq_exec(&m->reset, p->r, &ctx);
            store(p, i);
        }
    }
    *n_spiked = ns;
    p->step++;
    return BL_OK;
}

static bl_status run_block(bl_eq_pop *p, const eq_prog *prog, int has, const char *what, uint32_t neuron, double w,
                           bl_error *err)
{
    if (!has)
        return bl_fail(err, BL_ERR_INVALID, "population: the model has no %s statements", what);
    if (neuron >= p->n)
        return bl_fail(err, BL_ERR_INVALID, "population: neuron %u of %u", neuron, p->n);
    eq_vm_ctx ctx = {p->normal, p->user, neuron, p->step};
    load(p, neuron);
    p->r[R_T] = (double)p->step * p->m->dt;
    p->r[R_NR] = p->nr[neuron];
    p->r[R_W] = w;
    eq_exec(prog, p->r, &ctx);
    store(p, neuron);
    return BL_OK;
}

bl_status bl_eq_pop_input(bl_eq_pop *p, uint32_t neuron, bl_error *err)
{
    return run_block(p, &p->m->on_input, p->m->has_on_input, "on_input", neuron, 0.0, err);
}

bl_status bl_eq_pop_on_pre(bl_eq_pop *p, uint32_t neuron, double w, bl_error *err)
{
    return run_block(p, &p->m->on_pre, p->m->has_on_pre, "on_pre", neuron, w, err);
}

int eq_same_layout(const bl_eq_model *a, const bl_eq_model *b)
{
    if (a->n_vars != b->n_vars)
        return 0;
    for (uint32_t v = 0; v < a->n_vars; v++)
        if (strcmp(a->syms[a->var_sym[v]].name, b->syms[b->var_sym[v]].name))
            return 0;
    return 1;
}

void eq_pop_run_other(bl_eq_pop *p, const bl_eq_model *other, const eq_prog *prog, double *regs, uint32_t neuron,
                      double w)
{
    eq_vm_ctx ctx = {p->normal, p->user, neuron, p->step};
    for (uint32_t v = 0; v < p->m->n_vars; v++)
        regs[EQ_VBASE + v] = p->state[(size_t)v * p->n + neuron];
    regs[R_I] = (double)neuron;
    /* called after the step: t is the step's own time, as in Brian2's synapses slot */
    regs[R_T] = (double)(p->step ? p->step - 1 : 0) * p->m->dt;
    regs[R_NR] = p->nr[neuron];
    regs[R_W] = w;
    eq_exec(prog, regs, &ctx);
    (void)other;
    for (uint32_t v = 0; v < p->m->n_vars; v++)
        p->state[(size_t)v * p->n + neuron] = regs[EQ_VBASE + v];
}
