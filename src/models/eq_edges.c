/* Per-edge state of an equation model (src/models/eq_edges.h). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/eq_edges.h"

/* The ring of recent spikers holds (largest delay + 1) x N entries: bounded
 * so that a hostile delays.npy cannot make the engine allocate without end. */
#define EQ_RING_MAX_ENTRIES (UINT64_C(1) << 28)

void eq_edges_destroy(eq_edges *x)
{
    if (!x)
        return;
    free(x->delay);
    free(x->val);
    free(x->lastupdate);
    free(x->in_off);
    free(x->in_edge);
    free(x);
}

/* The connectome's columns a model reads: weights.npy when the weight
 * expression reads `weight`; delays.npy for delay = "connectome", each
 * rounded to steps as Brian2's queue does (into delay[] when not NULL) with
 * the smallest and largest. Called by the plan (so `check` refuses what the
 * run would) and again when the network is made. */
static bl_status columns(const bl_connectome *c, const bl_eq_model *m, int32_t *delay, int64_t *dmin, int64_t *dmax,
                         bl_error *err)
{
    const uint64_t E = bl_connectome_n_stored_edges(c), N = bl_connectome_n_neurons(c);
    int32_t sw = eq_sym_find(m, "weight");
    if (m->has_weight && sw >= 0 && m->syms[sw].kind == S_EXTERN && !bl_connectome_edge_weights(c))
        return bl_fail(err, BL_ERR_INVALID, "model 'equations': the weight expression reads `weight`, but the "
                       "connectome has no weights.npy (docs/connectome-format.md)");
    if (!m->delay_per_edge)
        return BL_OK;
    const double *d = bl_connectome_edge_delays_ms(c);
    if (!d)
        return bl_fail(err, BL_ERR_INVALID, "model 'equations': delay = \"connectome\", but the connectome has no "
                       "delays.npy (docs/connectome-format.md)");
    for (uint64_t e = 0; e < E; e++) {
        /* Brian2 2.5.1's spike queue (cspikequeue.cpp, which its numpy
         * runtime uses whenever the compiled extension is there, and C++
         * standalone too): (int)(delay / dt + 0.5), delay in seconds (the
         * column's milliseconds times 0.001, as `d*ms`): a tie rounds up.
         * (Its pure-Python fallback queue, np.round, would round a tie to
         * even; the oracle runs the compiled one.) */
        double q = (d[e] * 0.001) / m->dt + 0.5;
        double steps = q < 1e300 ? floor(q) : q;
        if (!(steps >= 1))
            return bl_fail(err, BL_ERR_INVALID, "model 'equations': edge %" PRIu64 " (delays.npy): delay %.17g ms is "
                           "%g steps of %g ms after rounding; the smallest delay is one step", e, d[e], steps,
                           m->dt * 1000.0);
        if (steps > 1e7 || (steps + 1) * (double)(N ? N : 1) > (double)EQ_RING_MAX_ENTRIES)
            return bl_fail(err, BL_ERR_INVALID, "model 'equations': edge %" PRIu64 " (delays.npy): delay %.17g ms is "
                           "%g steps: too long for a ring of %" PRIu64 " neurons", e, d[e], steps, N);
        if (delay)
            delay[e] = (int32_t)steps;
        if (e == 0 || steps < (double)*dmin)
            *dmin = (int64_t)steps;
        if (e == 0 || steps > (double)*dmax)
            *dmax = (int64_t)steps;
    }
    if (E == 0)
        *dmin = *dmax = 1;
    return BL_OK;
}

bl_status eq_edges_check_connectome(const bl_connectome *c, const bl_eq_model *m, bl_error *err)
{
    int64_t dmin = 1, dmax = 1;
    return columns(c, m, NULL, &dmin, &dmax, err);
}

bl_status eq_edges_create(const bl_network *net, const bl_eq_model *m, eq_edges **out, bl_error *err)
{
    *out = NULL;
    const uint64_t E = net->n_edges, N = net->n_neurons;
    eq_edges *x = calloc(1, sizeof *x);
    if (!x)
        return bl_fail(err, BL_ERR_NOMEM, "model 'equations': out of memory for the edges");
    x->n_edges = E;
    x->m = m;
    x->dmin = x->dmax = net->delay_steps;
    x->wcol = bl_connectome_edge_weights(net->connectome);
    bl_status st = BL_OK;
    if (m->delay_per_edge && !(x->delay = malloc((E ? E : 1) * sizeof *x->delay)))
        st = bl_fail(err, BL_ERR_NOMEM, "model 'equations': out of memory for %" PRIu64 " delays", E);
    if (!st)
        st = columns(net->connectome, m, x->delay, &x->dmin, &x->dmax, err);
    if (!st && m->has_syn) {
        x->val = malloc((size_t)m->syn.n * (E ? E : 1) * sizeof *x->val);
        x->lastupdate = malloc((E ? E : 1) * sizeof *x->lastupdate);
        if (!x->val || !x->lastupdate)
            st = bl_fail(err, BL_ERR_NOMEM, "model 'equations': out of memory for %" PRIu64 " edges' variables", E);
    }
    if (!st && m->has_on_post) {
        /* Incoming edges per target, ascending edge index: Brian2's order of
         * a post-synaptic neuron's synapses when they are made in CSR order. */
        x->in_off = calloc(N + 1, sizeof *x->in_off);
        x->in_edge = malloc((E ? E : 1) * sizeof *x->in_edge);
        int64_t *fill = x->in_off && x->in_edge ? malloc((N ? N : 1) * sizeof *fill) : NULL;
        if (!fill)
            st = bl_fail(err, BL_ERR_NOMEM, "model 'equations': out of memory for the incoming edges");
        else {
            for (uint64_t e = 0; e < E; e++)
                x->in_off[net->targets[e] + 1]++;
            for (uint64_t i = 0; i < N; i++)
                x->in_off[i + 1] += x->in_off[i];
            memcpy(fill, x->in_off, N * sizeof *fill);
            for (uint64_t src = 0; src < N; src++)
                for (int64_t e = net->offsets[src]; e < net->offsets[src + 1]; e++)
                    x->in_edge[fill[net->targets[e]]++] = e;
        }
        free(fill);
    }
    if (st) {
        eq_edges_destroy(x);
        return st;
    }
    *out = x;
    return BL_OK;
}

double eq_edges_weight(const eq_edges *x, int32_t signed_count, int64_t e, double *r)
{
    const bl_eq_model *m = x->m;
    if (!m->has_weight)
        return (double)signed_count;
    r[R_COUNT] = signed_count < 0 ? -(double)signed_count : (double)signed_count;
    r[R_SIGN] = signed_count < 0 ? -1.0 : signed_count > 0 ? 1.0 : 0.0;
    r[R_EWEIGHT] = x->wcol ? x->wcol[e] : 0.0;
    eq_vm_ctx ctx = {NULL, NULL, 0, 0};
    eq_exec(&m->weight, r, &ctx);
    return r[m->weight.result];
}

void eq_edges_reset(eq_edges *x, const bl_network *net, double *r)
{
    const bl_eq_model *m = x->m;
    if (!m->has_syn)
        return;
    const uint64_t E = x->n_edges;
    for (uint32_t k = 0; k < m->syn.n; k++) {
        double *v = x->val + (size_t)k * E, init = m->var_init[m->syn.first + k];
        for (uint64_t e = 0; e < E; e++)
            v[e] = init;
    }
    if (m->syn.w_slot >= 0 && m->has_weight) {
        double *w = x->val + (size_t)(m->syn.w_slot - (int32_t)m->syn.first) * E;
        for (uint64_t e = 0; e < E; e++)
            w[e] = eq_edges_weight(x, net->counts ? net->counts[e] : (int32_t)net->counts16[e], (int64_t)e, r);
    }
    for (uint64_t e = 0; e < E; e++)
        x->lastupdate[e] = 0.0;
}

void eq_edges_load(const eq_edges *x, int64_t e, double t, double *r)
{
    const bl_eq_model *m = x->m;
    const uint64_t E = x->n_edges;
    for (uint32_t k = 0; k < m->syn.n; k++)
        r[EQ_VBASE + m->syn.first + k] = x->val[(size_t)k * E + (size_t)e];
    /* Brian2 2.5.1's event-driven update (numpy target), in its operations:
     * _x = x * exp(_lio * (- (t - lastupdate))), _lio = 1.0/tau. */
    const double minus_elapsed = -(t - x->lastupdate[e]);
    for (uint32_t k = 0; k < m->syn.n_ed; k++) {
        double *xr = &r[EQ_VBASE + (uint32_t)m->syn.ed_slot[k]];
        *xr = *xr * exp(m->syn.ed_lio[k] * minus_elapsed);
    }
}

void eq_edges_store(eq_edges *x, int64_t e, double t, const double *r)
{
    const bl_eq_model *m = x->m;
    const uint64_t E = x->n_edges;
    for (uint32_t k = 0; k < m->syn.n; k++)
        x->val[(size_t)k * E + (size_t)e] = r[EQ_VBASE + m->syn.first + k];
    x->lastupdate[e] = t;
}
