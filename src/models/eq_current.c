/* Current injection into a model from equations: DC, steps, ramps, tables
 * over time and Gaussian noise, each a value per step written into the
 * model's input variable (a per-neuron parameter such as `I_inj : amp`)
 * before the state update reads it. Brian2 writes such a drive as a
 * TimedArray read by the update; setting the parameter before the update is
 * the same value at the same t = step * dt (tests/oracles/test_current_brian2.py).
 *
 * The noise is drawn, not stored: one standard normal per (trial, neuron,
 * step, current) from the counter-based streams, so a neuron's noise is the
 * same whichever other neurons the current targets, and whichever backend,
 * thread or order computes it. */
#include "models/eq_current.h"

#include <math.h>
#include <string.h>

#include "core/stream.h"
#include "models/lang/eq_impl.h"
#include "stimulus/stimulus_impl.h"

/* The counter word that makes current noise its own stream: Poisson
 * populations use word 2 for their index, which never reaches 2^30. */
#define NOISE_STREAM UINT32_C(0xC0000000)

static int var_slot(const bl_eq_model *m, const char *name, int *is_param)
{
    for (uint32_t v = 0; v < m->n_vars; v++)
        if (!strcmp(m->syms[m->var_sym[v]].name, name)) {
            *is_param = m->syms[m->var_sym[v]].kind == S_PARAM_N;
            return (int)v;
        }
    return -1;
}

bl_status bl_eq_current_check(const bl_eq_model *m, const bl_current_in *currents, size_t n_currents, bl_error *err)
{
    for (size_t k = 0; k < n_currents; k++) {
        int is_param = 0;
        int slot = var_slot(m, currents[k].variable, &is_param);
        if (slot < 0 || !is_param)
            return bl_fail(err, BL_ERR_INVALID, "current %zu sets '%.64s', which the model does not declare as a "
                           "per-neuron parameter (a line '%.64s : amp' in its equations)", k, currents[k].variable,
                           currents[k].variable);
        /* A current sets its variable every step: per-neuron values would be
         * overwritten at the first step without a word. */
        if (m->pn_of[slot])
            return bl_fail(err, BL_ERR_INVALID, "current %zu sets '%.64s', which [model.per_neuron] also sets: a "
                           "current replaces the value at every step (declare another variable for it)", k,
                           currents[k].variable);
    }
    return BL_OK;
}

/* Box-Muller on the four words of one block: two uniforms in [0, 1) of 53
 * bits each; 1 - u1 is in (0, 1], so the logarithm is finite. */
static double block_normal(const uint32_t w[4])
{
    double u1 = (double)((((uint64_t)w[0] << 32) | w[1]) >> 11) * 0x1p-53;
    double u2 = (double)((((uint64_t)w[2] << 32) | w[3]) >> 11) * 0x1p-53;
    double r = sqrt(-2.0 * log(1.0 - u1));
    return r * cos(6.283185307179586 * u2);
}

double bl_eq_current_normal(uint64_t seed, uint32_t k, uint32_t trial, uint32_t neuron, uint64_t step)
{
    uint32_t w[4];
    bl_stream_block(seed, (uint32_t)step, neuron, NOISE_STREAM | k, trial, w);
    return block_normal(w);
}

/* The model's own noise (xi) is another counter word: 0xE0000000 | k, k the
 * xi index (below 256), above every current's 0xC0000000 | k (a plan cannot
 * hold 2^29 currents) and every Poisson population's index. */
#define XI_STREAM UINT32_C(0xE0000000)

double bl_eq_xi_normal(uint64_t seed, uint32_t k, uint32_t trial, uint32_t neuron, uint64_t step)
{
    uint32_t w[4];
    bl_stream_block(seed, (uint32_t)step, neuron, XI_STREAM | k, trial, w);
    return block_normal(w);
}

double bl_eq_xi_draw(void *user, uint32_t neuron, uint64_t step, uint32_t k)
{
    const bl_eq_xi_stream *x = user;
    return bl_eq_xi_normal(x->seed, k, x->trial, neuron, step);
}

/* The value of a current at a step for a neuron, or 0 when it is off. */
static double value_at(const bl_network *net, const bl_current_in *in, uint32_t k, uint32_t trial, int64_t step,
                       int32_t neuron)
{
    const bl_current *c = &in->c;
    if (step < c->start_step || (c->stop_step >= 0 && step >= c->stop_step))
        return 0.0;
    switch (c->kind) {
    case BL_CURRENT_DC:
        return c->amplitude;
    case BL_CURRENT_STEP: {
        /* the last value whose start is at or before the step */
        size_t lo = 0, hi = c->n_values;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (c->steps[mid] <= step)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo ? c->values[lo - 1] : 0.0;
    }
    case BL_CURRENT_RAMP:
        return c->from + (c->to - c->from) * ((double)(step - c->start_step) / (double)(c->stop_step - c->start_step));
    case BL_CURRENT_TABLE: {
        uint64_t idx = (uint64_t)(step - c->start_step) / (uint64_t)c->every_steps;
        return idx < c->n_values ? c->values[idx] : 0.0;
    }
    case BL_CURRENT_NOISE:
        return c->amplitude + c->sigma * bl_eq_current_normal(net->seed, k, trial, (uint32_t)neuron, (uint64_t)step);
    }
    return 0.0;
}

/* The first of the sorted neurons at or above x. */
static size_t first_at_or_above(const int32_t *v, size_t n, int32_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void bl_eq_current_apply_range(const bl_network *net, const bl_eq_model *m, uint32_t trial, int64_t step,
                               double *state, uint64_t stride, int32_t lo, int32_t hi)
{
    int is_param;
    /* Zero every targeted variable first, then add: several currents on one
     * neuron add, in the order they were given. A neuron's value depends on
     * that neuron alone (value_at), so a partition that applies its own
     * range writes the bits the reference writes for the whole network. */
    for (size_t k = 0; k < net->n_currents; k++) {
        const bl_current_in *in = &net->currents[k];
        double *x = state + (size_t)var_slot(m, in->variable, &is_param) * stride;
        for (size_t a = first_at_or_above(in->neurons, in->n, lo); a < in->n && in->neurons[a] < hi; a++)
            x[in->neurons[a]] = 0.0;
    }
    for (size_t k = 0; k < net->n_currents; k++) {
        const bl_current_in *in = &net->currents[k];
        double *x = state + (size_t)var_slot(m, in->variable, &is_param) * stride;
        for (size_t a = first_at_or_above(in->neurons, in->n, lo); a < in->n && in->neurons[a] < hi; a++)
            x[in->neurons[a]] += value_at(net, in, (uint32_t)k, trial, step, in->neurons[a]);
    }
}

void bl_eq_current_apply(const bl_network *net, const bl_eq_model *m, uint32_t trial, int64_t step, double *state,
                         uint64_t n)
{
    bl_eq_current_apply_range(net, m, trial, step, state, n, 0, (int32_t)n);
}

size_t bl_eq_current_owned(const bl_network *net, size_t k, int32_t lo, int32_t hi, const int32_t **neurons)
{
    const bl_current_in *in = &net->currents[k];
    size_t a = first_at_or_above(in->neurons, in->n, lo), b = first_at_or_above(in->neurons, in->n, hi);
    *neurons = b > a ? in->neurons + a : NULL;
    return b - a;
}
