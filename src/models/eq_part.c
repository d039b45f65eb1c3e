/* The partition kernel of the "equations" row: a model written in the model
 * language on the cpu and mpi backends, bit for bit the reference kernel's
 * (src/models/eq_row.c eq_trial), with exact retirement by rule.
 *
 * Why it is exact. The reference steps every neuron through the same five
 * steps (refractoriness and update; threshold; forced spikes; on_pre of the
 * spikes of step - delay, sources ascending, each source's edges in CSR
 * order; on_input from Poisson populations then events; reset), and every
 * block reads and writes one neuron's own state only (the compiled blocks
 * see that neuron's state, t, i, not_refractory and, in on_pre, the edge's
 * w). So a neuron's final bits depend only on the sequence of blocks run on
 * it and the registers each sees. This kernel runs, for each owned neuron,
 * the same blocks in the same order with the same registers: a partition
 * owns a contiguous range of targets and receives every spike of step -
 * delay in ascending source order, so each target's on_pre statements run in
 * the reference's order, whatever the number of partitions (threads or MPI
 * ranks). Resting neurons are skipped only where skipping is the identity
 * (below, and docs/retirement.md "Retirement for equation models").
 *
 * State. Every bit of a neuron's state is in the partition's fields, so
 * that a snapshot within a trial (src/engine/snapshot.c) saves and restores
 * all of it: v and g (the final state and the probes read them; g is +0
 * for a model without g), ready, the first step the neuron is not
 * refractory (Brian2's not_refractory = step - lastspike >= rfc, with a
 * spiker not refractory = False for the rest of its step: ready = last +
 * max(rfc, 1), as shiu2024's kernel), and the state arrays (F_STATE, a
 * BL_PART_ARRAYS field of one lane per variable): state variable k of
 * neuron i is x[k * hi + i], indexed by the global neuron id, so that the
 * generated range loops of eq_impl.h, eq_update_range / eq_threshold_range,
 * address it as the reference's arrays (entries below lo are unused). v and
 * g are mirrors of the state arrays, written after every block. The
 * scratch buffers hold nothing a later step reads: buffer 0 the owned
 * neurons' state before the update and its bit differences (the retirement
 * test, within a step), buffer 1 the register file (the constants, set by
 * start_trial), then not_refractory and the fire mask of every owned neuron
 * (bytes, indexed by id as well), buffer 2 the weights (below).
 *
 * Currents (src/models/eq_current.c) set their per-neuron parameters at the
 * start of each step, for the partition's neurons only (a value depends on
 * its neuron alone), with every targeted neuron awake.
 *
 * Retirement. An active neuron whose step was: not refractory, an update that
 * returned every state bit unchanged, no threshold crossing, and no other
 * block (no input, no forced spike, no reset), rests. Its state S satisfies
 * update(S) == S bit for bit with not_refractory = 1 and threshold(S) false,
 * so every later step without input leaves it at S, provided the update and
 * the threshold read neither t nor noise (bl_eq_part_may_retire). It wakes,
 * with S, when an input or a forced spike reaches it. The first step of a
 * trial runs every neuron (the initial state need not be a fixed point).
 *
 * Vectorised. Steps 1-2 run in one of two ways, with the same bits:
 * - over the whole owned range, when at least 1/RANGE_DIV of them are awake
 *   (or retirement is off): the generated range loops (bl_eq_update_soa,
 *   then bl_eq_threshold_soa into a fire mask; GCC vectorises them at -O3
 *   as it does lif_shiu2024.c's loops), then a pass over the awake slots
 *   for the threshold rule, the spikes and the retirement test. Updating a
 *   resting neuron too is exact: its state is a fixed point of the update
 *   (not refractory, no t, no noise: the retirement rule above), and its
 *   threshold is false, so the range pass leaves it bit for bit as it was;
 * - else per awake slot through the register file (eq_exec), as before:
 *   with few neurons awake (the larva under sparse input) touching only
 *   them is cheaper than any loop over the range.
 * A model without generated code (no compiler) runs the range path through
 * eq_exec per neuron (eq_update_range's fallback): the same bits again. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernel.h"
#include "models/eq_current.h"
#include "models/eq_part.h"
#include "models/eq_row.h"
#include "models/lang/eq_impl.h"

#define NEVER_SPIKED (-(INT64_C(1) << 40))

enum { F_V, F_G, F_READY, F_STATE };
enum { BUF_OLD = 0, BUF_REGS = 1, BUF_WEIGHTS = 2 };
/* Weights of signed counts in [-WCOUNT, WCOUNT] are computed once per trial
 * when the weight is a function of count and sign alone. One that reads the
 * connectome's float `weight` column is computed once per trial for every
 * owned edge instead (the reference's eq_edges_weight, edge by edge):
 * BUF_WEIGHTS then holds, after the table, the first index of each source's
 * owned edges (N + 1 int64) and the owned edges' weights, in source order,
 * each source's owned edges in CSR order. */
#define WCOUNT 255

static _Atomic uint64_t skipped_total;

uint64_t bl_eq_part_skipped(void) { return atomic_load(&skipped_total); }

static inline const bl_eq_model *M_of(const bl_network *net) { return net->params.equations; }

static int var_slot(const bl_eq_model *m, const char *name)
{
    for (uint32_t v = 0; v < m->n_vars; v++)
        if (!strcmp(m->syms[m->var_sym[v]].name, name))
            return (int)v;
    return -1;
}

/* One block on one register file: the single place the kernel runs model
 * code, so that a compiled backend can take it over (the interpreter today). */
static inline void eq_part_run(const eq_prog *p, double *r, const eq_vm_ctx *ctx) { eq_exec(p, r, ctx); }

/* Does the program read a register below the constants other than those
 * listed (the state, t, i, not_refractory, the externals)? */
static int reads_other_than(const eq_prog *p, uint32_t ok1, uint32_t ok2, uint32_t ok3);

/* Does the weight expression read the connectome's float weight column? */
static int reads_weight_column(const bl_eq_model *m);

int bl_eq_part_supports(const bl_eq_model *m, const char **why)
{
    /* A weight is a function of the edge's count, sign and weight column: the
     * reference evaluates it with whatever neuron was loaded last in its
     * registers, so one that read state, t or i would mean nothing (and this
     * kernel's table of weights by count, or its per-edge weights, below,
     * would not be the reference's). */
    const char *no = !m               ? "no compiled model"
                     : m->has_on_post ? "its cpu/mpi kernel does not run on_post yet"
                     : m->has_weight && reads_other_than(&m->weight, R_COUNT, R_SIGN, R_EWEIGHT)
                         ? "its weight expression reads more than count, sign, weight and parameters"
                     /* Per-edge variables and per-edge delays change the
                      * reference's delivery loop (edge state loaded and
                      * stored around each event; a ring of several delays):
                      * this kernel does not mirror them, so it must not run
                      * them. on_pre by sign, the weight column and delivery
                      * into refractory targets it mirrors (part_step, 3). */
                     : m->has_syn        ? "its cpu/mpi kernel does not run per-edge variables (synapses) yet"
                     : m->delay_per_edge ? "its cpu/mpi kernel does not run per-edge delays yet"
                                         : NULL;
    if (why)
        *why = no;
    return no == NULL;
}

/* Which operands an instruction reads (eq_vm_run passes all three to
 * eq_apply, which ignores those an operation does not take). */
static int operands(int op)
{
    switch (op) {
    case O_XI: return 0;
    case O_CLIP: case O_SEL: return 3;
    case O_ADD: case O_SUB: case O_MUL: case O_DIV: case O_POW: case O_LT: case O_GT: case O_LE: case O_GE:
    case O_EQ: case O_NE: case O_AND: case O_OR: return 2;
    default: return 1;
    }
}

static int reads_other_than(const eq_prog *p, uint32_t ok1, uint32_t ok2, uint32_t ok3)
{
    for (uint32_t k = 0; k < p->n_code; k++) {
        const eq_insn *c = &p->code[k];
        const uint32_t in[3] = {c->a, c->b, c->c};
        for (int j = 0; j < operands(c->op); j++)
            if (in[j] < EQ_CBASE && in[j] != ok1 && in[j] != ok2 && in[j] != ok3)
                return 1;
        if (c->op == O_XI)
            return 1;
    }
    /* a block that is one register (weight = "count", or a state variable) */
    return p->result < EQ_CBASE && p->result != ok1 && p->result != ok2 && p->result != ok3;
}

static int reads_weight_column(const bl_eq_model *m)
{
    /* reads_other_than with R_EWEIGHT left out of the allowed registers */
    return m->has_weight && !reads_other_than(&m->weight, R_COUNT, R_SIGN, R_EWEIGHT) &&
           reads_other_than(&m->weight, R_COUNT, R_SIGN, R_COUNT);
}

/* Does the program read t, or draw noise? expr: it is an expression (the
 * threshold), whose value may be a bare register (statements have no result). */
static int reads_time_or_noise(const eq_prog *p, int expr)
{
    for (uint32_t k = 0; k < p->n_code; k++) {
        const eq_insn *c = &p->code[k];
        int n = operands(c->op);
        if (c->op == O_XI || (n >= 1 && c->a == R_T) || (n >= 2 && c->b == R_T) || (n >= 3 && c->c == R_T))
            return 1;
    }
    return expr && p->result == R_T;
}

int bl_eq_part_may_retire(const bl_eq_model *m)
{
    const char *env = getenv("BL_EQ_RETIRE");
    if (env && !strcmp(env, "0"))
        return 0;
    return m && !m->uses_noise && !reads_time_or_noise(&m->update, 0) &&
           !reads_time_or_noise(&m->threshold, 1);
}

int bl_eq_part_supports_net(const bl_network *net, const bl_eq_model *m, const char **why)
{
    if (!bl_eq_part_supports(m, why))
        return 0;
    if (m->n_by && m->by_n != net->n_neurons) {
        if (why)
            *why = "on_pre_by: the sources' values were not read (a connectome plan reads them)";
        return 0;
    }
    if (reads_weight_column(m) && !bl_connectome_edge_weights(net->connectome)) {
        if (why)
            *why = "its weight expression reads `weight` and the connectome has no weights.npy";
        return 0;
    }
    return 1;
}

static void part_initial(const bl_network *net, int f, void *value)
{
    const bl_eq_model *m = M_of(net);
    int sv = var_slot(m, "v"), sg = var_slot(m, "g");
    double v0 = sv >= 0 ? m->var_init[sv] : 0.0, g0 = sg >= 0 ? m->var_init[sg] : 0.0;
    int64_t never = NEVER_SPIKED;
    memcpy(value, f == F_V ? (const void *)&v0 : f == F_G ? (const void *)&g0 : (const void *)&never, 8);
}

static void part_step(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t step,
                      const int32_t *arrivals, uint64_t n_arrivals, size_t *next_event, i32_list *spikers);
static void start_trial(const bl_network *net, partition *p);

/* F_STATE: one lane per state variable (a model declares at least v). */
static uint32_t part_lanes(const bl_network *net, int f)
{
    (void)f;
    return M_of(net)->n_vars ? M_of(net)->n_vars : 1;
}

const bl_part_kernel bl_eq_part_kernel = {
    .n_fields = 4,
    .field = {{8, BL_PART_BOTH}, {8, BL_PART_BOTH}, {8, BL_PART_BOTH}, {8, BL_PART_ARRAYS}},
    .initial = part_initial,
    .step = part_step,
    .lanes = part_lanes,
    .start = start_trial,
};

/* What a step needs, resolved once. */
typedef struct eq_step {
    const bl_eq_model *m;
    partition *p;
    uint32_t nv;
    int sv, sg;
    double *x;       /* the state arrays: variable k of neuron i at x[k * hi + i] */
    double *r;       /* the register file */
    eq_vm_ctx ctx;
} eq_step;

/* Scratch layout (above): the register file's length, and where the byte
 * arrays start after it. */
static inline size_t n_regs_of(const bl_eq_model *m) { return m->n_regs > EQ_TBASE ? m->n_regs : EQ_TBASE; }

/* Neuron i (slot a) into the registers, with its not_refractory flag and w.
 * (Locals with restrict: the register stores cannot move s's fields.) */
static inline void load(const eq_step *s, int32_t i, double nr, double w)
{
    const uint32_t nv = s->nv;
    const size_t stride = (size_t)s->p->hi;
    const double *restrict x = s->x + i;
    double *restrict r = s->r;
    for (uint32_t k = 0; k < nv; k++)
        r[EQ_VBASE + k] = x[k * stride];
    r[R_I] = (double)i;
    r[R_NR] = nr;
    r[R_W] = w;
}

/* The registers back into neuron i's state, v and g mirrored into slot a. */
static inline void store(const eq_step *s, int32_t i, int32_t a)
{
    const uint32_t nv = s->nv;
    const size_t stride = (size_t)s->p->hi;
    double *restrict x = s->x + i;
    const double *restrict r = s->r;
    for (uint32_t k = 0; k < nv; k++)
        x[k * stride] = r[EQ_VBASE + k];
    ((double *)s->p->act[F_V])[a] = x[(size_t)s->sv * stride];
    ((double *)s->p->act[F_G])[a] = s->sg >= 0 ? x[(size_t)s->sg * stride] : 0.0;
}

/* A statement block on neuron i (awake in slot a): the reference's run_block. */
static inline void run_block(eq_step *s, const eq_prog *prog, int32_t i, int32_t a, double nr, double w)
{
    load(s, i, nr, w);
    s->ctx.neuron = (uint32_t)i;
    eq_part_run(prog, s->r, &s->ctx);
    store(s, i, a);
}

/* The slot of owned neuron i, waking it (its state is the one it rested
 * with: resting is the identity). An input makes it ineligible to rest at
 * the end of this step (act_flag = 0). */
static inline int32_t wake(partition *p, int32_t i)
{
    int32_t a = bl_part_wake(p, &bl_eq_part_kernel, i);
    p->act_flag[a] = 0;
    return a;
}

static inline void spike(partition *p, i32_list *spikers, int32_t a, int32_t i, int64_t step, const int32_t *rfc)
{
    int64_t ready = step + (rfc[i] > 1 ? rfc[i] : 1);
    ((int64_t *)p->rng[F_READY])[i - p->lo] = ((int64_t *)p->act[F_READY])[a] = ready;
    p->act_flag[a] = 0;
    p->failed |= !bl_list_push(spikers, i);
}

/* The weight of an edge of signed count c: the reference's edge_weight
 * (eq_row.c), on the registers R_COUNT and R_SIGN. */
static inline double edge_weight(const bl_eq_model *m, double *r, int32_t c, double column, const eq_vm_ctx *ctx)
{
    if (!m->has_weight)
        return (double)c;
    r[R_COUNT] = c < 0 ? -(double)c : (double)c;
    r[R_SIGN] = c < 0 ? -1.0 : c > 0 ? 1.0 : 0.0;
    r[R_EWEIGHT] = column;
    eq_part_run(&m->weight, r, ctx);
    return r[m->weight.result];
}

/* The per-edge weights of BUF_WEIGHTS (WCOUNT, above): first[src] .. first[src + 1]. */
static inline int64_t *edge_first(double *wt) { return (int64_t *)(wt + 2 * WCOUNT + 1); }
static inline double *edge_w(double *wt, uint64_t n_neurons) { return wt + 2 * WCOUNT + 1 + n_neurons + 1; }

/* The start of a trial (the kernel's `start`, from bl_partition_reset):
 * every owned neuron at the initial state, awake, and the scratch that the
 * steps read (constants, weights). A trial continued from a snapshot has
 * its fields loaded over these and starts at a later step. */
static void start_trial(const bl_network *net, partition *p)
{
    const bl_eq_model *m = M_of(net);
    uint64_t n = (uint64_t)(p->hi - p->lo), nv = m->n_vars ? m->n_vars : 1, N = net->n_neurons;
    const int per_edge = reads_weight_column(m);
    const double *col = per_edge ? bl_connectome_edge_weights(net->connectome) : NULL;
    if (per_edge && !col) { /* bl_eq_part_supports_net refuses this */
        p->failed = 1;
        return;
    }
    uint64_t owned = 0;
    for (uint64_t src = 0; per_edge && src < N; src++) {
        int64_t e0, e1;
        bl_owned_edges(net, p, (int32_t)src, &e0, &e1);
        owned += (uint64_t)(e1 - e0);
    }
    uint64_t H = (uint64_t)p->hi;
    double *x = p->rng[F_STATE];
    double *old = bl_partition_buf(p, BUF_OLD, (size_t)((nv + 1) * (n ? n : 1)) * sizeof *old);
    double *r = bl_partition_buf(p, BUF_REGS, n_regs_of(m) * sizeof *r + 2 * (size_t)(H ? H : 1));
    double *wt = bl_partition_buf(p, BUF_WEIGHTS,
                                  (2 * WCOUNT + 1 + (per_edge ? N + 1 + owned : 0)) * sizeof *wt);
    if (!old || !r || !wt)
        return;
    memset(r, 0, n_regs_of(m) * sizeof *r);
    memcpy(r + EQ_CBASE, m->consts, m->n_consts * sizeof *m->consts);
    eq_vm_ctx ctx = {NULL, NULL, 0, 0};
    for (int32_t c = -WCOUNT; c <= WCOUNT; c++)
        wt[c + WCOUNT] = edge_weight(m, r, c, 0.0, &ctx);
    if (per_edge) {
        int64_t *first = edge_first(wt);
        double *w = edge_w(wt, N);
        uint64_t q = 0;
        for (uint64_t src = 0; src < N; src++) {
            int64_t e0, e1;
            bl_owned_edges(net, p, (int32_t)src, &e0, &e1);
            first[src] = (int64_t)q;
            const bl_net_fanout f = bl_net_fanout_of(net, (int32_t)src);
            for (int64_t e = e0; e < e1; e++)
                w[q++] = edge_weight(m, r, bl_net_fanout_count(&f, e), col[e], &ctx);
        }
        first[N] = (int64_t)q;
    }
    for (uint32_t k = 0; k < m->n_vars; k++)
        for (int32_t i = p->lo; i < p->hi; i++)
            x[(size_t)k * H + (size_t)i] = eq_var_start(m, k, (uint64_t)i);
    for (int32_t i = p->lo; i < p->hi && !p->failed; i++)
        bl_part_wake(p, &bl_eq_part_kernel, i);
}

/* The range path when at least 1/RANGE_DIV of the owned neurons are awake:
 * on the larva (issue-23 block, 3 x 1 s, one thread) 2 cost 0.54 CPU s,
 * 4, 8, 16 and "always" 0.34 (a vectorised pass over every neuron is
 * cheaper than a call per awake one down to a small fraction awake). */
#define RANGE_DIV 8
/* On the range path the retirement test (a copy of the state and a
 * comparison of every bit) runs every REST_EVERY steps only; between them
 * no neuron rests. Exact either way: resting is allowed only on a step whose
 * test passed, and a neuron kept awake is stepped as the reference steps
 * it. A neuron that could rest does so at most REST_EVERY - 1 steps later. */
#define REST_EVERY 8

static void part_step(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t step,
                      const int32_t *arrivals, uint64_t n_arrivals, size_t *next_event, i32_list *spikers)
{
    const bl_eq_model *m = M_of(net);
    const int32_t *rfc = net->refractory_steps, lo = p->lo, hi = p->hi;
    spikers->n = 0;
    if (p->failed) /* start_trial ran out of memory */
        return;
    /* xi: the reference's stream (eq_row.c), so every draw is the same at any
     * partition; a noisy model never retires, so every neuron draws each step */
    bl_eq_xi_stream xs = {net->seed, trial};
    eq_step s = {m, p, m->n_vars, var_slot(m, "v"), var_slot(m, "g"), p->rng[F_STATE], p->buf[BUF_REGS],
                 {m->uses_noise ? bl_eq_xi_draw : NULL, &xs, 0, (uint64_t)step}};
    int64_t *ready = p->rng[F_READY];
    const double *wt = p->buf[BUF_WEIGHTS];
    s.r[R_T] = (double)step * m->dt;
    /* 0. injected currents set their variables before the update, as the
     *    reference's eq_trial 0 does, for this partition's neurons. A
     *    targeted neuron is woken first: its parameter may change under it,
     *    so skipping it would not be the identity. Woken every step, it may
     *    still rest at the end of one (its update left every bit as the
     *    current set it), and is woken again at the next. */
    if (net->n_currents) {
        for (size_t k = 0; k < net->n_currents; k++) {
            const int32_t *tg;
            size_t n_tg = bl_eq_current_owned(net, k, lo, hi, &tg);
            for (size_t a = 0; a < n_tg; a++)
                bl_part_wake(p, &bl_eq_part_kernel, tg[a]);
        }
        bl_eq_current_apply_range(net, m, trial, step, s.x, (uint64_t)hi, lo, hi);
    }
    if (skip_ok)
        atomic_fetch_add_explicit(&skipped_total, (uint64_t)(hi - lo) - p->n_active, memory_order_relaxed);

    /* 1-2. the update of every awake neuron, then its threshold when it is
     *      not refractory. act_flag: may it rest after this step? */
    int64_t *aready = p->act[F_READY];
    const uint64_t n_owned = (uint64_t)(hi - lo);
    int rest_test = skip_ok; /* may a neuron rest after this step? (REST_EVERY) */
    if (p->n_active * RANGE_DIV >= n_owned && n_owned) {
        /* the range path (the comment at the top) */
        const size_t H = (size_t)hi;
        uint8_t *nr = (uint8_t *)(s.r + n_regs_of(m)), *fire = nr + H;
        double *vars[BL_EQ_MAX_VARS];
        for (uint32_t k = 0; k < s.nv; k++)
            vars[k] = s.x + k * H;
        for (int32_t i = lo; i < hi; i++)
            nr[i] = step >= ready[i - lo];
        /* the state before, for the retirement test: whole arrays (a
         * contiguous copy and a vectorisable compare, cheaper than
         * gathering the awake slots) */
        double *old = p->buf[BUF_OLD];
        rest_test = skip_ok && step % REST_EVERY == 0;
        if (rest_test)
            for (uint32_t k = 0; k < s.nv; k++)
                memcpy(old + (size_t)k * n_owned, vars[k] + lo, n_owned * sizeof *old);
        eq_update_range(m, (uint64_t)lo, (uint64_t)hi, vars, nr, s.r[R_T], s.r, &s.ctx);
        eq_threshold_range(m, (uint64_t)lo, (uint64_t)hi, vars, nr, s.r[R_T], s.r, &s.ctx, fire);
        s.r[R_T] = (double)step * m->dt; /* the fallbacks leave t there; kept for the blocks below */
        /* nr becomes "may rest": not refractory and every state bit
         * unchanged (the bits' differences or-ed per neuron: 64-bit
         * operations only, which GCC vectorises) */
        if (rest_test) {
            uint64_t *restrict diff = (uint64_t *)(old + (size_t)s.nv * n_owned);
            memset(diff, 0, n_owned * sizeof *diff);
            for (uint32_t k = 0; k < s.nv; k++) {
                const double *restrict now = vars[k] + lo, *restrict was = old + (size_t)k * n_owned;
                for (uint64_t q = 0; q < n_owned; q++)
                    diff[q] |= bl_bits64(now[q]) ^ bl_bits64(was[q]);
            }
            uint8_t *restrict keep = nr + lo;
            for (uint64_t q = 0; q < n_owned; q++)
                keep[q] = (uint8_t)(keep[q] & (diff[q] == 0));
        }
        double *av = p->act[F_V], *ag = p->act[F_G];
        const double *xv = vars[s.sv], *xg = s.sg >= 0 ? vars[s.sg] : NULL;
        for (uint64_t a = 0; a < p->n_active; a++) {
            const int32_t i = p->act_neuron[a];
            av[a] = xv[i];
            ag[a] = xg ? xg[i] : 0.0;
            const int not_refractory = step >= aready[a];
            p->act_flag[a] = (uint8_t)(rest_test && nr[i]);
            if (not_refractory && fire[i])
                spike(p, spikers, (int32_t)a, i, step, rfc);
        }
    } else {
        for (uint64_t a = 0; a < p->n_active; a++) {
            const int32_t i = p->act_neuron[a];
            const int nr = step >= aready[a];
            load(&s, i, nr, 0.0);
            s.ctx.neuron = (uint32_t)i;
            eq_part_run(&m->update, s.r, &s.ctx);
            int same = nr;
            for (uint32_t k = 0; k < s.nv && same; k++)
                same = bl_bits64(s.r[EQ_VBASE + k]) == bl_bits64(s.x[(size_t)k * (size_t)hi + (size_t)i]);
            store(&s, i, (int32_t)a);
            p->act_flag[a] = (uint8_t)same;
            if (!nr)
                continue;
            /* the reference's threshold pass: the neuron's state, not_refractory = 1 */
            s.r[R_NR] = 1;
            eq_part_run(&m->threshold, s.r, &s.ctx);
            if (s.r[m->threshold.result] != 0)
                spike(p, spikers, (int32_t)a, i, step, rfc);
        }
    }
    /* 2b. forced spikes (docs/forcing.md), as in the reference trial */
    for (size_t q = 0; q < net->n_populations; q++) {
        if (!net->populations[q].force || !bl_population_on(&net->populations[q], step))
            continue;
        for (size_t k = p->pop_first[q]; k < p->pop_last[q]; k++) {
            int32_t i = net->populations[q].neurons[k];
            if (step >= ready[i - lo] && bl_poisson_draw(net, q, trial, i, step))
                spike(p, spikers, wake(p, i), i, step, rfc);
        }
    }
    size_t f0, f1;
    bl_forced_at(net, step, &p->next_forced, &f0, &f1);
    for (size_t ev = f0; ev < f1; ev++) {
        int32_t i = net->forced[2 * ev + 1];
        if (i >= lo && i < hi && step >= ready[i - lo])
            spike(p, spikers, wake(p, i), i, step, rfc);
    }
    /* 3. synapses: sources ascending, each source's owned edges in CSR
     *    order, into targets not refractory (unless refractory_input =
     *    "deliver": then into every target, its not_refractory in the
     *    block), the statements chosen by the edge's sign when the model has
     *    on_pre_exc / on_pre_inh (count 0 reaches nobody), w the weight of
     *    the edge's count and sign, or the edge's own weight: the
     *    reference's eq_trial 3, for this partition's targets. */
    const int by_sign = m->has_on_pre_exc || m->has_on_pre_inh, per_edge = reads_weight_column(m);
    const int64_t *first = per_edge ? edge_first(p->buf[BUF_WEIGHTS]) : NULL;
    const double *ew = per_edge ? edge_w(p->buf[BUF_WEIGHTS], net->n_neurons) : NULL;
    if (m->has_on_pre || by_sign || m->n_by)
        for (uint64_t k = 0; k < n_arrivals; k++) {
            int64_t e0, e1;
            bl_owned_edges(net, p, arrivals[k], &e0, &e1);
            const bl_net_fanout f = bl_net_fanout_of(net, arrivals[k]);
            const int64_t w0 = per_edge ? first[arrivals[k]] - e0 : 0;
            for (int64_t e = e0; e < e1; e++) {
                int32_t post = net->targets[e];
                const int nr = step >= ready[post - lo];
                if (!nr && !m->deliver_refractory)
                    continue;
                int32_t c = bl_net_fanout_count(&f, e);
                const eq_prog *prog = &m->on_pre;
                if (m->n_by) { /* the source's on_pre_by value chooses, as the reference */
                    if (!(prog = eq_by_block(m, arrivals[k], c)))
                        continue;
                } else if (by_sign) {
                    if (!(c > 0 ? m->has_on_pre_exc : c < 0 ? m->has_on_pre_inh : 0))
                        continue;
                    prog = c > 0 ? &m->on_pre_exc : &m->on_pre_inh;
                }
                double w = per_edge                      ? ew[w0 + e]
                           : c >= -WCOUNT && c <= WCOUNT ? wt[c + WCOUNT]
                                                         : edge_weight(m, s.r, c, 0.0, &s.ctx);
                run_block(&s, prog, post, wake(p, post), nr ? 1.0 : 0.0, w);
            }
        }
    /* 4. Poisson input, then explicit events */
    if (m->has_on_input) {
        for (size_t q = 0; q < net->n_populations; q++) {
            if (net->populations[q].force || !bl_population_on(&net->populations[q], step))
                continue;
            for (size_t k = p->pop_first[q]; k < p->pop_last[q]; k++) {
                int32_t i = net->populations[q].neurons[k];
                if (step >= ready[i - lo] && bl_poisson_draw(net, q, trial, i, step))
                    run_block(&s, &m->on_input, i, wake(p, i), 1.0, 0.0);
            }
        }
        size_t e0, e1;
        bl_events_at(net, step, next_event, &e0, &e1);
        for (size_t ev = e0; ev < e1; ev++) {
            int32_t i = net->events[2 * ev + 1];
            if (i >= lo && i < hi && step >= ready[i - lo])
                run_block(&s, &m->on_input, i, wake(p, i), 1.0, 0.0);
        }
    }
    /* Out of memory waking a neuron (slot 0 absorbed its writes and a
     * spiker may have no slot): the trial stops at this window. */
    if (p->failed)
        return;
    /* 5. resets (not_refractory = 0 in the block, as the reference's) */
    bl_sort_spikers(spikers);
    if (m->has_reset)
        for (uint64_t k = 0; k < spikers->n; k++)
            run_block(&s, &m->reset, spikers->v[k], p->slot_of[spikers->v[k] - lo], 0.0, 0.0);
    /* Retirement: descending, so that the slot moved into a hole was scanned. */
    if (rest_test)
        for (uint64_t a = p->n_active; a-- > 0;)
            if (p->act_flag[a])
                bl_part_rest(p, &bl_eq_part_kernel, (int32_t)a);
}
