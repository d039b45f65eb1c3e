/* The "equations" row of the model table: a connectome run of a model
 * written in the model language (include/brainlesslab/eqmodel.h), on the
 * reference backend, through the interpreter.
 *
 * The steps of a time step, and their order, are the preset's
 * (src/models/lif_shiu2024.c ref_trial): the stimulus rules belong to the
 * connectome engine, not to the model, so the same plan gives the same
 * spikes whichever way the model is written. Only the arithmetic comes from
 * the compiled blocks:
 *   1. refractoriness from integer steps (net->refractory_steps, so the
 *      Poisson-target rule applies unchanged), then the state update (the
 *      compiled update reads not_refractory for `(unless refractory)`);
 *   2. threshold, for neurons not refractory; 2b. forced spikes;
 *   3. delivery of the spikes of step - delay, sources ascending, each
 *      source's edges in CSR order, into non-refractory targets: on_pre with
 *      w = the weight block of the edge's count and sign;
 *   4. Poisson input then explicit events into non-refractory targets:
 *      on_input;
 *   5. reset of this step's spikers.
 * The final state written to the result is the variables named v and g
 * (g reads as zeros when the model has none).
 *
 * The initial state: [model.init], else the model's rest convention (a
 * state variable X with a parameter X_0 starts there; see
 * bl_eq_model_from_toml), else 0. The cpu and mpi backends run the same
 * steps through the partition kernel of src/models/eq_part.c. */
#include <stdlib.h>
#include <string.h>

#include "engine/kernel.h"
#include "models/eq_part.h"
#include "models/eq_edges.h"
#include "models/eq_current.h"
#include "models/eq_row.h"
#include "models/lang/eq_impl.h"

typedef struct eq_net_consts {
    const bl_eq_model *m;
} eq_net_consts;

static const bl_eq_model *M_of(const bl_network *net) { return ((const eq_net_consts *)net->consts)->m; }

static int var_slot(const bl_eq_model *m, const char *name)
{
    for (uint32_t v = 0; v < m->n_vars; v++)
        if (!strcmp(m->syms[m->var_sym[v]].name, name))
            return (int)v;
    return -1;
}

typedef struct eq_ws {
    uint64_t n;
    uint32_t nv;
    double *state;           /* nv arrays of n */
    double *r;               /* one register file */
    int64_t *last_spike;
    uint8_t *not_refractory;
    int32_t *ring;           /* spikers of the last delay + 1 steps, [slots][n] */
    uint64_t *ring_n;
    int32_t *spikers;
    double *zeros;           /* g of a model without g */
    uint64_t slots;          /* ring rows: largest delay + 1 */
    eq_edges *ed;            /* per-edge state (eq_edges.c), made by the first trial */
} eq_ws;

static void eq_free(void *p)
{
    eq_ws *s = p;
    if (!s)
        return;
    free(s->state);
    free(s->r);
    free(s->last_spike);
    free(s->not_refractory);
    free(s->ring);
    free(s->ring_n);
    free(s->spikers);
    free(s->zeros);
    eq_edges_destroy(s->ed);
    free(s);
}

static void *eq_alloc(const bl_network *net)
{
    const bl_eq_model *m = M_of(net);
    eq_ws *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    uint64_t n = net->n_neurons ? net->n_neurons : 1, slots = (uint64_t)net->delay_steps + 1;
    s->n = net->n_neurons;
    s->slots = slots;
    s->nv = m->n_vars;
    s->state = malloc((m->n_vars ? m->n_vars : 1) * n * sizeof *s->state);
    s->r = calloc(m->n_regs ? m->n_regs : 1, sizeof *s->r);
    s->last_spike = malloc(n * sizeof *s->last_spike);
    s->not_refractory = malloc(n);
    s->ring = malloc(slots * n * sizeof *s->ring);
    s->ring_n = calloc(slots, sizeof *s->ring_n);
    s->spikers = malloc(n * sizeof *s->spikers);
    s->zeros = calloc(n, sizeof *s->zeros);
    if (!(s->state && s->r && s->last_spike && s->not_refractory && s->ring && s->ring_n && s->spikers && s->zeros)) {
        eq_free(s);
        return NULL;
    }
    memcpy(s->r + EQ_CBASE, m->consts, m->n_consts * sizeof *m->consts);
    return s;
}

static inline void load(eq_ws *s, uint64_t i)
{
    for (uint32_t v = 0; v < s->nv; v++)
        s->r[EQ_VBASE + v] = s->state[(size_t)v * s->n + i];
    s->r[R_I] = (double)i;
}

static inline void store(eq_ws *s, uint64_t i)
{
    for (uint32_t v = 0; v < s->nv; v++)
        s->state[(size_t)v * s->n + i] = s->r[EQ_VBASE + v];
}

/* Run one statement block on neuron i (its not_refractory flag as of now). */
static inline void run_block(eq_ws *s, const eq_prog *p, uint64_t i, double w, eq_vm_ctx *ctx)
{
    load(s, i);
    s->r[R_NR] = s->not_refractory[i];
    s->r[R_W] = w;
    ctx->neuron = (uint32_t)i;
    eq_exec(p, s->r, ctx);
    store(s, i);
}

/* One event of edge e into neuron `post` (docs/models.md "Synapses"): the
 * target's variables and the edge's (event-driven ones advanced to now),
 * the pathway's statements, then both back. */
static inline void edge_event(eq_ws *s, const eq_prog *p, int64_t e, int32_t post, double w, eq_vm_ctx *ctx)
{
    const bl_eq_model *m = s->ed->m;
    load(s, (uint64_t)post);
    s->r[R_NR] = s->not_refractory[post];
    s->r[R_W] = w;
    ctx->neuron = (uint32_t)post;
    if (m->has_syn)
        eq_edges_load(s->ed, e, s->r[R_T], s->r);
    eq_exec(p, s->r, ctx);
    if (m->has_syn)
        eq_edges_store(s->ed, e, s->r[R_T], s->r);
    store(s, (uint64_t)post);
}

/* The per-edge state, once per engine: its errors (a delay below one step,
 * a missing column) are the first trial's. The ring grows to the largest
 * per-edge delay. */
static bl_status edges_ready(eq_ws *s, const bl_network *net, const bl_eq_model *m, bl_error *err)
{
    if (s->ed)
        return BL_OK;
    bl_status st = eq_edges_create(net, m, &s->ed, err);
    if (st)
        return st;
    uint64_t slots = (uint64_t)s->ed->dmax + 1, n = s->n ? s->n : 1;
    if (slots > s->slots) {
        int32_t *ring = realloc(s->ring, slots * n * sizeof *ring);
        uint64_t *ring_n = realloc(s->ring_n, slots * sizeof *ring_n);
        if (ring)
            s->ring = ring;
        if (ring_n)
            s->ring_n = ring_n;
        if (!ring || !ring_n) {
            eq_edges_destroy(s->ed);
            s->ed = NULL;
            return bl_fail(err, BL_ERR_NOMEM, "model 'equations': out of memory for a delay ring of %llu steps",
                           (unsigned long long)slots);
        }
        s->slots = slots;
    }
    return BL_OK;
}

static bl_status eq_trial(void *ws, const bl_network *net, uint32_t trial, uint64_t n_steps, bl_result *result,
                          bl_error *err)
{
    eq_ws *s = ws;
    const bl_eq_model *m = M_of(net);
    bl_status est = edges_ready(s, net, m, err);
    if (est)
        return est;
    const uint64_t n = s->n, slots = s->slots;
    const int sv = var_slot(m, "v"), sg = var_slot(m, "g");
    double *v = s->state + (size_t)sv * n, *g = sg >= 0 ? s->state + (size_t)sg * n : s->zeros;
    /* xi: the trial's normal stream, keyed by (seed, trial, neuron, step, k) */
    bl_eq_xi_stream xs = {net->seed, trial};
    eq_vm_ctx ctx = {m->uses_noise ? bl_eq_xi_draw : NULL, &xs, 0, 0};
    for (uint32_t k = 0; k < s->nv; k++)
        for (uint64_t i = 0; i < n; i++)
            s->state[(size_t)k * n + i] = eq_var_start(m, k, i);
    for (uint64_t i = 0; i < n; i++)
        s->last_spike[i] = INT64_MIN / 2;
    memset(s->ring_n, 0, slots * sizeof *s->ring_n);
    eq_edges_reset(s->ed, net, s->r);
    eq_edges *ed = s->ed;
    const int by_sign = m->has_on_pre_exc || m->has_on_pre_inh;
    if (m->n_by && m->by_n != n)
        return bl_fail(err, BL_ERR_INVALID, "model 'equations': on_pre_by: the sources' values of column '%s' were "
                       "not read for this network's %llu neurons (a connectome plan reads them from neurons.csv)",
                       m->by_column, (unsigned long long)n);
    size_t cursor = 0, fcursor = 0;

    for (int64_t step = 0; step < (int64_t)n_steps; step++) {
        ctx.step = (uint64_t)step;
        s->r[R_T] = (double)step * m->dt;
        /* 0. current injection sets its variables (src/models/eq_current.c) */
        if (net->n_currents)
            bl_eq_current_apply(net, m, trial, step, s->state, n);
        /* 1. refractoriness, then the update */
        for (uint64_t i = 0; i < n; i++) {
            s->not_refractory[i] = (step - s->last_spike[i]) >= net->refractory_steps[i];
            run_block(s, &m->update, i, 0.0, &ctx);
        }
        /* 2. thresholds */
        uint64_t n_spikers = 0;
        for (uint64_t i = 0; i < n; i++) {
            if (!s->not_refractory[i])
                continue;
            load(s, i);
            s->r[R_NR] = 1;
            ctx.neuron = (uint32_t)i;
            eq_exec(&m->threshold, s->r, &ctx);
            if (s->r[m->threshold.result] != 0) {
                s->spikers[n_spikers++] = (int32_t)i;
                s->not_refractory[i] = 0;
                s->last_spike[i] = step;
            }
        }
        /* 2b. forced spikes (docs/forcing.md) */
        uint64_t n_natural = n_spikers;
        for (size_t p = 0; p < net->n_populations; p++)
            if (net->populations[p].force && bl_population_on(&net->populations[p], step))
                for (size_t a = 0; a < net->populations[p].n; a++) {
                    int32_t i = net->populations[p].neurons[a];
                    if (s->not_refractory[i] && bl_poisson_draw(net, p, trial, i, step)) {
                        s->spikers[n_spikers++] = i;
                        s->not_refractory[i] = 0;
                        s->last_spike[i] = step;
                    }
                }
        size_t f0, f1;
        bl_forced_at(net, step, &fcursor, &f0, &f1);
        for (size_t ev = f0; ev < f1; ev++) {
            int32_t i = net->forced[2 * ev + 1];
            if (s->not_refractory[i]) {
                s->spikers[n_spikers++] = i;
                s->not_refractory[i] = 0;
                s->last_spike[i] = step;
            }
        }
        if (n_spikers > n_natural)
            qsort(s->spikers, n_spikers, sizeof *s->spikers, bl_cmp_i32);
        /* 3. synapses: the spikes whose delay ends now, delivered oldest
         * first (Brian2's spike queue: a step's events in the order they were
         * pushed), sources ascending, each source's edges in CSR order, with
         * only the edges of that delay when delays are per edge; into targets
         * not refractory unless refractory_input = "deliver". Then on_post
         * for this step's spikers (Brian2 runs the post pathway after the
         * pre one), each spiker's incoming edges in edge order. */
        if (m->has_on_pre || by_sign || m->n_by)
            for (int64_t d = ed->dmax; d >= ed->dmin; d--) {
                if (step < d)
                    continue;
                uint64_t slot = (uint64_t)(step - d) % slots;
                const int32_t *src = s->ring + slot * n;
                for (uint64_t a = 0; a < s->ring_n[slot]; a++) {
                    const bl_net_fanout f = bl_net_fanout_of(net, src[a]);
                    for (int64_t e = net->offsets[src[a]]; e < net->offsets[src[a] + 1]; e++) {
                        int32_t post = net->targets[e];
                        if ((ed->delay && ed->delay[e] != d) || (!m->deliver_refractory && !s->not_refractory[post]))
                            continue;
                        int32_t c = bl_net_fanout_count(&f, e);
                        const eq_prog *p = &m->on_pre;
                        if (m->n_by) {
                            /* the source's value of the on_pre_by column chooses */
                            if (!(p = eq_by_block(m, src[a], c)))
                                continue;
                        } else if (by_sign) {
                            /* the edge's sign chooses; a silenced source (count 0) reaches nobody */
                            if (!(c > 0 ? m->has_on_pre_exc : c < 0 ? m->has_on_pre_inh : 0))
                                continue;
                            p = c > 0 ? &m->on_pre_exc : &m->on_pre_inh;
                        } else if (m->has_syn && c == 0) {
                            continue;
                        }
                        double w = m->has_syn && m->syn.w_slot >= 0 ? 0.0 : eq_edges_weight(ed, c, e, s->r);
                        edge_event(s, p, e, post, w, &ctx);
                    }
                }
            }
        if (m->has_on_post)
            for (uint64_t a = 0; a < n_spikers; a++) {
                int32_t post = s->spikers[a];
                for (int64_t k = ed->in_off[post]; k < ed->in_off[post + 1]; k++)
                    edge_event(s, &m->on_post, ed->in_edge[k], post, 0.0, &ctx);
            }
        /* 4. Poisson input, then explicit events */
        if (m->has_on_input) {
            for (size_t p = 0; p < net->n_populations; p++)
                if (!net->populations[p].force && bl_population_on(&net->populations[p], step))
                    for (size_t a = 0; a < net->populations[p].n; a++) {
                        int32_t i = net->populations[p].neurons[a];
                        if (s->not_refractory[i] && bl_poisson_draw(net, p, trial, i, step))
                            run_block(s, &m->on_input, (uint64_t)i, 0.0, &ctx);
                    }
            size_t e0, e1;
            bl_events_at(net, step, &cursor, &e0, &e1);
            for (size_t ev = e0; ev < e1; ev++) {
                int32_t i = net->events[2 * ev + 1];
                if (s->not_refractory[i])
                    run_block(s, &m->on_input, (uint64_t)i, 0.0, &ctx);
            }
        }
        /* 5. resets (the reset block sees not_refractory = 0, as Brian2's) */
        if (m->has_reset)
            for (uint64_t a = 0; a < n_spikers; a++)
                run_block(s, &m->reset, (uint64_t)s->spikers[a], 0.0, &ctx);
        uint64_t slot = (uint64_t)step % slots;
        memcpy(s->ring + slot * n, s->spikers, n_spikers * sizeof *s->spikers);
        s->ring_n[slot] = n_spikers;
        bl_result_probe_arrays(result, trial, step, v, g);
        bl_status st = bl_result_append_spikes(result, trial, (uint32_t)step, s->spikers, n_spikers, err);
        if (st)
            return st;
    }
    if (m->has_syn && m->syn.w_slot >= 0) {
        /* final per-edge weights: final_w.npy in the record */
        double *row = bl_result_edge_w_row(result, trial, ed->n_edges, err);
        if (!row)
            return err ? err->status : BL_ERR_NOMEM;
        memcpy(row, ed->val + (size_t)(m->syn.w_slot - (int32_t)m->syn.first) * ed->n_edges,
               ed->n_edges * sizeof *row);
    }
    memcpy(bl_result_v_row(result, trial), v, n * sizeof *v);
    memcpy(bl_result_g_row(result, trial), g, n * sizeof *g);
    return BL_OK;
}

static const bl_ref_kernel eq_ref = {eq_alloc, eq_free, eq_trial};

static void make_consts(const bl_lif_params *p, void *out)
{
    ((eq_net_consts *)out)->m = p->equations;
}

/* What the connectome engine needs of a compiled model. */
bl_status bl_eq_row_check(const bl_eq_model *m, bl_error *err)
{
    if (!m)
        return bl_fail(err, BL_ERR_INVALID, "model 'equations': no compiled model (the [model] table's equations)");
    if (var_slot(m, "v") < 0)
        return bl_fail(err, BL_ERR_UNSUPPORTED, "model 'equations': the connectome engine records v and g: the "
                       "equations declare no variable 'v'");
    if (!m->has_threshold)
        return bl_fail(err, BL_ERR_UNSUPPORTED, "model 'equations': a connectome model needs a threshold");
    if (m->has_on_post && !m->has_syn)
        return bl_fail(err, BL_ERR_UNSUPPORTED, "model 'equations': on_post changes per-edge variables: declare them "
                       "in `synapses` (docs/models.md \"Synapses\")");
    return BL_OK;
}

void bl_eq_row_set_edge_delays(bl_eq_model *m, int on) { m->delay_per_edge = on; }

int bl_eq_row_reference_only(const bl_eq_model *m, const char **why)
{
    /* on_pre_exc / on_pre_inh, the weight column and refractory_input =
     * "deliver" run on the partition kernel too (eq_part.c, part_step 3). */
    const char *w = m->has_syn          ? "per-edge variables (synapses)"
                    : m->has_on_post    ? "on_post"
                    : m->delay_per_edge ? "per-edge delays"
                                        : NULL;
    if (why)
        *why = w;
    return w != NULL;
}

int64_t bl_eq_row_refractory_steps(const bl_eq_model *m) { return m->ref_steps; }

static bl_status validate(const bl_lif_params *p, bl_error *err) { return bl_eq_row_check(p->equations, err); }

/* Retirement by rule (eq_part.c): allowed unless the model reads t or noise
 * (a noisy model steps every neuron every step: each draws its own xi). */
static int rest_is_fixed_point(const bl_network *net) { return bl_eq_part_may_retire(M_of(net)); }

static int part_supports(const bl_network *net, const char **why) { return bl_eq_part_supports_net(net, M_of(net), why); }

const bl_model bl_model_equations = {
    .name = "equations",
    .state_dtype = BL_DTYPE_FLOAT64,
    .defaults = {.preset = BL_PRESET_SHIU2024, .dt_ms = 0.1, .v_rest_mv = -52.0, .v_reset_mv = -52.0,
                 .v_th_mv = -45.0, .tau_m_ms = 20.0, .tau_syn_ms = 5.0, .refractory_ms = 2.2, .delay_ms = 1.8,
                 .w_syn_mv = 0.275, .f_poi = 250.0, .poisson_refractory_zero = 1},
    .consts_size = sizeof(eq_net_consts),
    .make_consts = make_consts,
    .validate = validate,
    .rest_is_fixed_point = rest_is_fixed_point,
    .ref = &eq_ref,
    .part = &bl_eq_part_kernel,
    .part_supports = part_supports,
};
