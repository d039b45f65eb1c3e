/* A reference network of equation models (include/brainlesslab/eqnet.h):
 * the engine under pyNN.brainlesslab. Plain and single-threaded: each
 * population is a bl_eq_pop run by the interpreter; projections keep their
 * edges by presynaptic neuron (CSR, edges in the order given) and a ring of
 * per-step queues, as Brian2's SpikeQueue does, so that the on_pre blocks of
 * one step run in Brian2's order (spikes of earlier steps first, then
 * presynaptic neurons ascending, then edges in creation order). A plastic
 * projection (spike-pair STDP) also keeps its edges by postsynaptic neuron,
 * for the postsynaptic side of the rule. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/eqnet.h"
#include "brainlesslab/stimulus.h"
#include "core/stream.h"
#include "models/lang/eq_impl.h"

enum { K_NEURONS, K_ARRAY, K_POISSON };

typedef struct net_rec {
    char name[BL_EQ_MAX_IDENT + 1];
    const double *var;
    double *data;
    size_t n_samples, cap;
} net_rec;

typedef struct net_receptor {
    bl_eq_model *m;
    double *regs;
} net_receptor;

/* A deep copy of a model's source, so receptors compile later from it. */
typedef struct src_copy {
    bl_eq_source s;
    char *text[9];
    char **names, **values, **init_names, **init_values;
} src_copy;

typedef struct net_pop {
    int kind;
    uint32_t n;
    src_copy *src;
    bl_eq_model *m;
    bl_eq_pop *p;
    net_receptor rec[BL_EQ_NET_MAX_RECEPTORS];
    uint32_t n_rec;
    uint64_t *off;    /* array: n+1 */
    int64_t *steps;   /* array */
    uint64_t *cursor; /* array: n */
    uint64_t *thr;    /* poisson: n */
    double *start, *stop;
    uint32_t *spiked;
    uint32_t n_spiked;
    uint64_t *sp_step;
    uint32_t *sp_idx;
    size_t n_sp, cap_sp;
    net_rec *recs;
    uint32_t n_recs;
} net_pop;

typedef struct net_queue {
    uint64_t *e;
    size_t n, cap;
} net_queue;

typedef struct net_proj {
    uint32_t pre, post, receptor;
    uint64_t *off; /* presynaptic n + 1 */
    uint32_t *tgt;
    double *w;
    uint32_t *d;
    uint32_t max_d;
    net_queue *ring; /* max_d + 1 */
    uint64_t *orig;  /* CSR slot -> the edge's index as given */
    /* spike-pair STDP (bl_eq_net_set_stdp), NULL when static */
    bl_eq_net_stdp *stdp;
    double *P, *M, *last; /* per edge (CSR slot): traces, time of the last update */
    uint64_t *by_post_off; /* post n + 1 */
    uint64_t *by_post;     /* CSR slots by postsynaptic neuron */
} net_proj;

typedef struct net_cur {
    uint32_t pop;
    double *var;
    uint32_t *targets;
    size_t n_targets;
    double *prev;
    int64_t *steps;
    double *amps;
    size_t n_changes, k;
} net_cur;

struct bl_eq_net {
    double dt;
    uint64_t seed;
    uint64_t step;
    net_pop *pops;
    uint32_t n_pops, cap_pops;
    net_proj *projs;
    size_t n_projs, cap_projs;
    net_cur *curs;
    size_t n_curs, cap_curs;
};

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 1;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    if (c > SIZE_MAX / elem)
        return 0;
    void *q = realloc(*p, c * elem);
    if (!q)
        return 0;
    *p = q;
    *cap = c;
    return 1;
}

static char *dup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static void src_free(src_copy *c)
{
    if (!c)
        return;
    for (int k = 0; k < 9; k++)
        free(c->text[k]);
    for (size_t k = 0; k < c->s.n_params; k++) {
        if (c->names)
            free(c->names[k]);
        if (c->values)
            free(c->values[k]);
    }
    for (size_t k = 0; k < c->s.n_init; k++) {
        if (c->init_names)
            free(c->init_names[k]);
        if (c->init_values)
            free(c->init_values[k]);
    }
    free(c->names);
    free(c->values);
    free(c->init_names);
    free(c->init_values);
    free(c);
}

static src_copy *src_dup(const bl_eq_source *s)
{
    src_copy *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    const char *t[9] = {s->equations, s->method, s->threshold, s->reset, s->refractory,
                        s->on_pre,    s->on_post, s->on_input, s->weight};
    int bad = 0;
    for (int k = 0; k < 9; k++)
        if (t[k] && !(c->text[k] = dup(t[k])))
            bad = 1;
    c->s.equations = c->text[0];
    c->s.method = c->text[1];
    c->s.threshold = c->text[2];
    c->s.reset = c->text[3];
    c->s.refractory = c->text[4];
    c->s.on_post = c->text[6];
    c->s.on_input = c->text[7];
    /* on_pre and weight belong to the receptors */
    c->names = calloc(s->n_params + 1, sizeof *c->names);
    c->values = calloc(s->n_params + 1, sizeof *c->values);
    c->init_names = calloc(s->n_init + 1, sizeof *c->init_names);
    c->init_values = calloc(s->n_init + 1, sizeof *c->init_values);
    c->s.n_params = s->n_params;
    c->s.n_init = s->n_init;
    if (bad || !c->names || !c->values || !c->init_names || !c->init_values) {
        src_free(c);
        return NULL;
    }
    for (size_t k = 0; k < s->n_params; k++)
        if (!(c->names[k] = dup(s->param_names[k])) || !(c->values[k] = dup(s->param_values[k])))
            bad = 1;
    for (size_t k = 0; k < s->n_init; k++)
        if (!(c->init_names[k] = dup(s->init_names[k])) || !(c->init_values[k] = dup(s->init_values[k])))
            bad = 1;
    if (bad) {
        src_free(c);
        return NULL;
    }
    c->s.param_names = (const char *const *)c->names;
    c->s.param_values = (const char *const *)c->values;
    c->s.init_names = (const char *const *)c->init_names;
    c->s.init_values = (const char *const *)c->init_values;
    return c;
}

bl_status bl_eq_net_create(double dt_s, uint64_t seed, bl_eq_net **out, bl_error *err)
{
    *out = NULL;
    if (!(dt_s > 0 && dt_s <= 1.0))
        return bl_fail(err, BL_ERR_INVALID, "network: time step %g s (must be in (0, 1] s)", dt_s);
    bl_eq_net *net = calloc(1, sizeof *net);
    if (!net)
        return bl_fail(err, BL_ERR_NOMEM, "network: out of memory");
    net->dt = dt_s;
    net->seed = seed;
    *out = net;
    return BL_OK;
}

static void pop_free(net_pop *q)
{
    for (uint32_t r = 0; r < q->n_rec; r++) {
        bl_eq_model_destroy(q->rec[r].m);
        free(q->rec[r].regs);
    }
    bl_eq_pop_destroy(q->p);
    bl_eq_model_destroy(q->m);
    src_free(q->src);
    free(q->off);
    free(q->steps);
    free(q->cursor);
    free(q->thr);
    free(q->start);
    free(q->stop);
    free(q->spiked);
    free(q->sp_step);
    free(q->sp_idx);
    for (uint32_t k = 0; k < q->n_recs; k++)
        free(q->recs[k].data);
    free(q->recs);
}

void bl_eq_net_destroy(bl_eq_net *net)
{
    if (!net)
        return;
    for (uint32_t k = 0; k < net->n_pops; k++)
        pop_free(&net->pops[k]);
    free(net->pops);
    for (size_t k = 0; k < net->n_projs; k++) {
        net_proj *j = &net->projs[k];
        free(j->off);
        free(j->tgt);
        free(j->w);
        free(j->d);
        free(j->orig);
        free(j->stdp);
        free(j->P);
        free(j->M);
        free(j->last);
        free(j->by_post_off);
        free(j->by_post);
        if (j->ring)
            for (uint32_t s = 0; s <= j->max_d; s++)
                free(j->ring[s].e);
        free(j->ring);
    }
    free(net->projs);
    for (size_t k = 0; k < net->n_curs; k++) {
        free(net->curs[k].targets);
        free(net->curs[k].prev);
        free(net->curs[k].steps);
        free(net->curs[k].amps);
    }
    free(net->curs);
    free(net);
}

/* A new population slot (zeroed), or NULL with err set. */
static net_pop *pop_new(bl_eq_net *net, int kind, uint32_t n, bl_error *err)
{
    if (net->step)
        return bl_fail(err, BL_ERR_INVALID, "network: populations are added before the first step"), NULL;
    if (!n || n > BL_EQ_NET_MAX_NEURONS)
        return bl_fail(err, BL_ERR_INVALID, "network: population %u has %u neurons (1 to %u)", net->n_pops, n,
                       BL_EQ_NET_MAX_NEURONS),
               NULL;
    if (net->n_pops >= BL_EQ_NET_MAX_POPS)
        return bl_fail(err, BL_ERR_INVALID, "network: more than %u populations", BL_EQ_NET_MAX_POPS), NULL;
    size_t cap = net->cap_pops;
    if (!grow((void **)&net->pops, &cap, (size_t)net->n_pops + 1, sizeof *net->pops))
        return bl_fail(err, BL_ERR_NOMEM, "network: out of memory"), NULL;
    net->cap_pops = (uint32_t)cap;
    net_pop *q = &net->pops[net->n_pops];
    memset(q, 0, sizeof *q);
    q->kind = kind;
    q->n = n;
    q->spiked = malloc((size_t)n * sizeof *q->spiked);
    if (!q->spiked)
        return bl_fail(err, BL_ERR_NOMEM, "network: out of memory for population %u", net->n_pops), NULL;
    return q;
}

bl_status bl_eq_net_add_neurons(bl_eq_net *net, const bl_eq_source *src, uint32_t n, uint32_t *pop, bl_error *err)
{
    net_pop *q = pop_new(net, K_NEURONS, n, err);
    if (!q)
        return err ? err->status : BL_ERR_INVALID;
    bl_status st = BL_OK;
    if (!(q->src = src_dup(src)))
        st = bl_fail(err, BL_ERR_NOMEM, "network: out of memory for population %u", net->n_pops);
    else if ((st = bl_eq_model_compile(&q->src->s, net->dt, &q->m, err)))
        bl_fail_context(err, "population %u", net->n_pops);
    else if ((st = bl_eq_pop_create(q->m, n, &q->p, err)))
        bl_fail_context(err, "population %u", net->n_pops);
    else if (bl_eq_model_uses_noise(q->m))
        st = bl_fail(err, BL_ERR_UNSUPPORTED, "population %u: noise (xi) is not supported in a network yet",
                     net->n_pops);
    if (st) {
        pop_free(q);
        return st;
    }
    *pop = net->n_pops++;
    return BL_OK;
}

static net_pop *neurons(bl_eq_net *net, uint32_t pop, bl_error *err)
{
    if (pop >= net->n_pops)
        return bl_fail(err, BL_ERR_INVALID, "network: no population %u (%u exist)", pop, net->n_pops), NULL;
    if (net->pops[pop].kind != K_NEURONS)
        return bl_fail(err, BL_ERR_INVALID, "network: population %u is a spike source, not neurons", pop), NULL;
    return &net->pops[pop];
}

bl_status bl_eq_net_add_receptor(bl_eq_net *net, uint32_t pop, const char *on_pre, const char *w_unit,
                                 uint32_t *receptor, bl_error *err)
{
    net_pop *q = neurons(net, pop, err);
    if (!q)
        return err ? err->status : BL_ERR_INVALID;
    if (!on_pre || !w_unit)
        return bl_fail(err, BL_ERR_INVALID, "population %u: a receptor needs on_pre and the unit of w", pop);
    if (q->n_rec >= BL_EQ_NET_MAX_RECEPTORS)
        return bl_fail(err, BL_ERR_INVALID, "population %u: more than %u receptors", pop, BL_EQ_NET_MAX_RECEPTORS);
    bl_eq_source s = q->src->s;
    s.on_pre = on_pre;
    s.weight = w_unit; /* only w's dimension: the network passes each edge's w */
    bl_eq_model *m;
    bl_status st = bl_eq_model_compile(&s, net->dt, &m, err);
    if (st)
        return bl_fail_context(err, "population %u receptor '%s'", pop, on_pre), st;
    if (!eq_same_layout(q->m, m)) {
        bl_eq_model_destroy(m);
        return bl_fail(err, BL_ERR_INTERNAL, "population %u receptor '%s': state layout differs from the model", pop,
                       on_pre);
    }
    double *regs = calloc(m->n_regs ? m->n_regs : 1, sizeof *regs);
    if (!regs) {
        bl_eq_model_destroy(m);
        return bl_fail(err, BL_ERR_NOMEM, "population %u: out of memory", pop);
    }
    memcpy(regs + EQ_CBASE, m->consts, m->n_consts * sizeof *m->consts);
    q->rec[q->n_rec].m = m;
    q->rec[q->n_rec].regs = regs;
    *receptor = q->n_rec++;
    return BL_OK;
}

/* offsets[0..n] and steps of n array sources: each neuron's steps >= 0 and
 * strictly increasing. */
static bl_status check_array(const char *what, uint32_t n, const uint64_t *offsets, const int64_t *steps,
                             bl_error *err)
{
    if (offsets && offsets[0] != 0)
        return bl_fail(err, BL_ERR_INVALID, "%s: offsets[0] is %llu, not 0", what, (unsigned long long)offsets[0]);
    for (uint32_t i = 0; offsets && i < n; i++) {
        if (offsets[i + 1] < offsets[i])
            return bl_fail(err, BL_ERR_INVALID, "%s: offsets decrease at neuron %u", what, i);
        for (uint64_t k = offsets[i]; k < offsets[i + 1]; k++) {
            if (steps[k] < 0)
                return bl_fail(err, BL_ERR_INVALID, "%s: neuron %u spike %llu at step %lld < 0", what, i,
                               (unsigned long long)(k - offsets[i]), (long long)steps[k]);
            if (k > offsets[i] && steps[k] <= steps[k - 1])
                return bl_fail(err, BL_ERR_INVALID,
                               "%s: neuron %u spike %llu at step %lld, not after the previous one "
                               "(two spikes in one step, or times not increasing)",
                               what, i, (unsigned long long)(k - offsets[i]), (long long)steps[k]);
        }
    }
    return BL_OK;
}

/* q's spike lists become offsets/steps (checked), each neuron's cursor at
 * its first spike: the step loop skips those before the step it runs, so
 * spikes in the past are dropped, as Brian2's SpikeGeneratorGroup drops
 * them after set_spikes. On failure q is unchanged. */
static bl_status fill_array(net_pop *q, const uint64_t *offsets, const int64_t *steps, bl_error *err)
{
    uint32_t n = q->n;
    uint64_t total = offsets ? offsets[n] : 0;
    uint64_t *off = malloc(((size_t)n + 1) * sizeof *off);
    int64_t *st = malloc((total ? total : 1) * sizeof *st);
    uint64_t *cursor = calloc(n, sizeof *cursor);
    if (!off || !st || !cursor) {
        free(off);
        free(st);
        free(cursor);
        return bl_fail(err, BL_ERR_NOMEM, "spike source array: out of memory for %llu spikes",
                       (unsigned long long)total);
    }
    for (uint32_t i = 0; i <= n; i++)
        off[i] = offsets ? offsets[i] : 0;
    if (total)
        memcpy(st, steps, total * sizeof *steps);
    for (uint32_t i = 0; i < n; i++)
        cursor[i] = off[i];
    free(q->off);
    free(q->steps);
    free(q->cursor);
    q->off = off;
    q->steps = st;
    q->cursor = cursor;
    return BL_OK;
}

bl_status bl_eq_net_add_array_source(bl_eq_net *net, uint32_t n, const uint64_t *offsets, const int64_t *steps,
                                     uint32_t *pop, bl_error *err)
{
    bl_status st = check_array("spike source array", n, offsets, steps, err);
    if (st)
        return st;
    net_pop *q = pop_new(net, K_ARRAY, n, err);
    if (!q)
        return err ? err->status : BL_ERR_INVALID;
    st = fill_array(q, offsets, steps, err);
    if (st) {
        pop_free(q);
        return st;
    }
    *pop = net->n_pops++;
    return BL_OK;
}

bl_status bl_eq_net_set_array_source(bl_eq_net *net, uint32_t pop, const uint64_t *offsets, const int64_t *steps,
                                     bl_error *err)
{
    if (pop >= net->n_pops || net->pops[pop].kind != K_ARRAY)
        return bl_fail(err, BL_ERR_INVALID, "set spike source array: population %u is not a spike source array", pop);
    net_pop *q = &net->pops[pop];
    bl_status st = check_array("set spike source array", q->n, offsets, steps, err);
    return st ? st : fill_array(q, offsets, steps, err);
}

static bl_status check_poisson(const char *what, uint32_t n, const double *rate_hz, const double *start_s,
                               const double *stop_s, bl_error *err)
{
    for (uint32_t i = 0; i < n; i++)
        if (!(rate_hz[i] >= 0 && rate_hz[i] < 1e9) || isnan(start_s[i]) || isnan(stop_s[i]))
            return bl_fail(err, BL_ERR_INVALID, "%s: neuron %u: rate %g Hz, window [%g, %g] s", what, i, rate_hz[i],
                           start_s[i], stop_s[i]);
    return BL_OK;
}

bl_status bl_eq_net_set_poisson_source(bl_eq_net *net, uint32_t pop, const double *rate_hz, const double *start_s,
                                       const double *stop_s, bl_error *err)
{
    if (pop >= net->n_pops || net->pops[pop].kind != K_POISSON)
        return bl_fail(err, BL_ERR_INVALID, "set spike source poisson: population %u is not a Poisson source", pop);
    net_pop *q = &net->pops[pop];
    bl_status st = check_poisson("set spike source poisson", q->n, rate_hz, start_s, stop_s, err);
    if (st)
        return st;
    for (uint32_t i = 0; i < q->n; i++) {
        q->thr[i] = bl_bernoulli_threshold(rate_hz[i], net->dt * 1000.0);
        q->start[i] = start_s[i];
        q->stop[i] = stop_s[i];
    }
    return BL_OK;
}

bl_status bl_eq_net_add_poisson_source(bl_eq_net *net, uint32_t n, const double *rate_hz, const double *start_s,
                                       const double *stop_s, uint32_t *pop, bl_error *err)
{
    bl_status st = check_poisson("spike source poisson", n, rate_hz, start_s, stop_s, err);
    if (st)
        return st;
    net_pop *q = pop_new(net, K_POISSON, n, err);
    if (!q)
        return err ? err->status : BL_ERR_INVALID;
    q->thr = malloc((size_t)n * sizeof *q->thr);
    q->start = malloc((size_t)n * sizeof *q->start);
    q->stop = malloc((size_t)n * sizeof *q->stop);
    if (!q->thr || !q->start || !q->stop) {
        pop_free(q);
        return bl_fail(err, BL_ERR_NOMEM, "spike source poisson: out of memory");
    }
    for (uint32_t i = 0; i < n; i++) {
        q->thr[i] = bl_bernoulli_threshold(rate_hz[i], net->dt * 1000.0);
        q->start[i] = start_s[i];
        q->stop[i] = stop_s[i];
    }
    *pop = net->n_pops++;
    return BL_OK;
}

bl_status bl_eq_net_add_projection(bl_eq_net *net, uint32_t pre, uint32_t post, uint32_t receptor, size_t n_edges,
                                   const uint32_t *pre_idx, const uint32_t *post_idx, const double *weight,
                                   const uint32_t *delay_steps, size_t *proj, bl_error *err)
{
    size_t id = net->n_projs;
    if (pre >= net->n_pops)
        return bl_fail(err, BL_ERR_INVALID, "projection %zu: no presynaptic population %u", id, pre);
    net_pop *q = neurons(net, post, err);
    if (!q)
        return bl_fail_context(err, "projection %zu", id), err ? err->status : BL_ERR_INVALID;
    if (receptor >= q->n_rec)
        return bl_fail(err, BL_ERR_INVALID, "projection %zu: population %u has no receptor %u", id, post, receptor);
    if (n_edges > BL_EQ_NET_MAX_EDGES)
        return bl_fail(err, BL_ERR_INVALID, "projection %zu: %zu edges (at most %llu)", id, n_edges,
                       (unsigned long long)BL_EQ_NET_MAX_EDGES);
    uint32_t npre = net->pops[pre].n, max_d = 0;
    for (size_t e = 0; e < n_edges; e++) {
        if (pre_idx[e] >= npre || post_idx[e] >= q->n)
            return bl_fail(err, BL_ERR_INVALID, "projection %zu edge %zu: %u -> %u outside %u x %u neurons", id, e,
                           pre_idx[e], post_idx[e], npre, q->n);
        if (!isfinite(weight[e]))
            return bl_fail(err, BL_ERR_INVALID, "projection %zu edge %zu: weight %g", id, e, weight[e]);
        if (delay_steps[e] > BL_EQ_NET_MAX_DELAY)
            return bl_fail(err, BL_ERR_INVALID, "projection %zu edge %zu: delay %u steps (at most %u)", id, e,
                           delay_steps[e], BL_EQ_NET_MAX_DELAY);
        if (delay_steps[e] > max_d)
            max_d = delay_steps[e];
    }
    if (!grow((void **)&net->projs, &net->cap_projs, net->n_projs + 1, sizeof *net->projs))
        return bl_fail(err, BL_ERR_NOMEM, "projection %zu: out of memory", id);
    net_proj *j = &net->projs[net->n_projs];
    memset(j, 0, sizeof *j);
    j->pre = pre;
    j->post = post;
    j->receptor = receptor;
    j->max_d = max_d;
    j->off = calloc((size_t)npre + 1, sizeof *j->off);
    j->tgt = malloc((n_edges ? n_edges : 1) * sizeof *j->tgt);
    j->w = malloc((n_edges ? n_edges : 1) * sizeof *j->w);
    j->d = malloc((n_edges ? n_edges : 1) * sizeof *j->d);
    j->ring = calloc((size_t)max_d + 1, sizeof *j->ring);
    j->orig = malloc((n_edges ? n_edges : 1) * sizeof *j->orig);
    if (!j->off || !j->tgt || !j->w || !j->d || !j->ring || !j->orig) {
        free(j->off);
        free(j->tgt);
        free(j->w);
        free(j->d);
        free(j->ring);
        free(j->orig);
        return bl_fail(err, BL_ERR_NOMEM, "projection %zu: out of memory for %zu edges", id, n_edges);
    }
    /* CSR by presynaptic neuron, a stable counting sort: edges of one
     * source keep the order given (Brian2's synapse creation order). */
    for (size_t e = 0; e < n_edges; e++)
        j->off[pre_idx[e] + 1]++;
    for (uint32_t i = 0; i < npre; i++)
        j->off[i + 1] += j->off[i];
    uint64_t *fill = malloc(((size_t)npre + 1) * sizeof *fill);
    if (!fill) {
        free(j->off);
        free(j->tgt);
        free(j->w);
        free(j->d);
        free(j->ring);
        free(j->orig);
        return bl_fail(err, BL_ERR_NOMEM, "projection %zu: out of memory", id);
    }
    memcpy(fill, j->off, ((size_t)npre + 1) * sizeof *fill);
    for (size_t e = 0; e < n_edges; e++) {
        uint64_t k = fill[pre_idx[e]]++;
        j->tgt[k] = post_idx[e];
        j->w[k] = weight[e];
        j->d[k] = delay_steps[e];
        j->orig[k] = e;
    }
    free(fill);
    *proj = net->n_projs++;
    return BL_OK;
}

bl_status bl_eq_net_set_stdp(bl_eq_net *net, size_t proj, const bl_eq_net_stdp *rule, bl_error *err)
{
    if (proj >= net->n_projs)
        return bl_fail(err, BL_ERR_INVALID, "stdp: no projection %zu (%zu exist)", proj, net->n_projs);
    if (net->step)
        return bl_fail(err, BL_ERR_INVALID, "stdp: projection %zu: set before the first step", proj);
    net_proj *j = &net->projs[proj];
    if (j->stdp)
        return bl_fail(err, BL_ERR_INVALID, "stdp: projection %zu already has a rule", proj);
    if (!(rule->tau_plus_s > 0) || !(rule->tau_minus_s > 0) || !isfinite(rule->tau_plus_s) ||
        !isfinite(rule->tau_minus_s))
        return bl_fail(err, BL_ERR_INVALID, "stdp: projection %zu: tau_plus %g s, tau_minus %g s (must be > 0)", proj,
                       rule->tau_plus_s, rule->tau_minus_s);
    if (!isfinite(rule->a_plus) || !isfinite(rule->a_minus) || !isfinite(rule->w_min) || !isfinite(rule->w_max) ||
        rule->w_min > rule->w_max)
        return bl_fail(err, BL_ERR_INVALID, "stdp: projection %zu: A_plus %g, A_minus %g, w_min %g, w_max %g", proj,
                       rule->a_plus, rule->a_minus, rule->w_min, rule->w_max);
    const net_pop *pre = &net->pops[j->pre], *post = &net->pops[j->post];
    uint64_t ne = j->off[pre->n];
    j->stdp = malloc(sizeof *j->stdp);
    j->P = calloc(ne ? ne : 1, sizeof *j->P);
    j->M = calloc(ne ? ne : 1, sizeof *j->M);
    j->last = calloc(ne ? ne : 1, sizeof *j->last);
    j->by_post_off = calloc((size_t)post->n + 1, sizeof *j->by_post_off);
    j->by_post = malloc((ne ? ne : 1) * sizeof *j->by_post);
    uint64_t *fill = malloc(((size_t)post->n + 1) * sizeof *fill);
    if (!j->stdp || !j->P || !j->M || !j->last || !j->by_post_off || !j->by_post || !fill) {
        free(fill);
        free(j->stdp);
        free(j->P);
        free(j->M);
        free(j->last);
        free(j->by_post_off);
        free(j->by_post);
        j->stdp = NULL;
        j->P = j->M = j->last = NULL;
        j->by_post_off = j->by_post = NULL;
        return bl_fail(err, BL_ERR_NOMEM, "stdp: projection %zu: out of memory for %llu edges", proj,
                       (unsigned long long)ne);
    }
    *j->stdp = *rule;
    for (uint64_t k = 0; k < ne; k++)
        j->by_post_off[j->tgt[k] + 1]++;
    for (uint32_t i = 0; i < post->n; i++)
        j->by_post_off[i + 1] += j->by_post_off[i];
    memcpy(fill, j->by_post_off, ((size_t)post->n + 1) * sizeof *fill);
    for (uint64_t k = 0; k < ne; k++)
        j->by_post[fill[j->tgt[k]]++] = k;
    free(fill);
    return BL_OK;
}

size_t bl_eq_net_n_edges(const bl_eq_net *net, size_t proj)
{
    return proj < net->n_projs ? (size_t)net->projs[proj].off[net->pops[net->projs[proj].pre].n] : 0;
}

bl_status bl_eq_net_weights(const bl_eq_net *net, size_t proj, double *out, size_t n, bl_error *err)
{
    size_t ne = bl_eq_net_n_edges(net, proj);
    if (proj >= net->n_projs || n != ne)
        return bl_fail(err, BL_ERR_INVALID, "weights: projection %zu has %zu edges, asked for %zu", proj, ne, n);
    const net_proj *j = &net->projs[proj];
    for (size_t k = 0; k < ne; k++)
        out[j->orig[k]] = j->w[k];
    return BL_OK;
}

bl_status bl_eq_net_add_current(bl_eq_net *net, uint32_t pop, const char *var, size_t n_targets,
                                const uint32_t *targets, size_t n_changes, const int64_t *steps, const double *amps,
                                bl_error *err)
{
    size_t id = net->n_curs;
    net_pop *q = neurons(net, pop, err);
    if (!q)
        return bl_fail_context(err, "current source %zu", id), err ? err->status : BL_ERR_INVALID;
    double *v = bl_eq_pop_var(q->p, var ? var : "");
    if (!v)
        return bl_fail(err, BL_ERR_INVALID, "current source %zu: population %u has no variable '%s'", id, pop,
                       var ? var : "(null)");
    for (size_t k = 0; k < n_targets; k++)
        if (targets[k] >= q->n)
            return bl_fail(err, BL_ERR_INVALID, "current source %zu: target %zu is neuron %u of %u", id, k,
                           targets[k], q->n);
    for (size_t k = 0; k < n_changes; k++) {
        if (steps[k] < 0 || (k && steps[k] <= steps[k - 1]))
            return bl_fail(err, BL_ERR_INVALID, "current source %zu: change %zu at step %lld (steps must be >= 0 and "
                           "increasing)", id, k, (long long)steps[k]);
        if (!isfinite(amps[k]))
            return bl_fail(err, BL_ERR_INVALID, "current source %zu: change %zu amplitude %g", id, k, amps[k]);
    }
    if (!grow((void **)&net->curs, &net->cap_curs, net->n_curs + 1, sizeof *net->curs))
        return bl_fail(err, BL_ERR_NOMEM, "current source %zu: out of memory", id);
    net_cur *c = &net->curs[id];
    memset(c, 0, sizeof *c);
    c->pop = pop;
    c->var = v;
    c->n_targets = n_targets;
    c->n_changes = n_changes;
    c->targets = malloc((n_targets ? n_targets : 1) * sizeof *c->targets);
    c->prev = calloc(n_targets ? n_targets : 1, sizeof *c->prev);
    c->steps = malloc((n_changes ? n_changes : 1) * sizeof *c->steps);
    c->amps = malloc((n_changes ? n_changes : 1) * sizeof *c->amps);
    if (!c->targets || !c->prev || !c->steps || !c->amps) {
        free(c->targets);
        free(c->prev);
        free(c->steps);
        free(c->amps);
        return bl_fail(err, BL_ERR_NOMEM, "current source %zu: out of memory", id);
    }
    if (n_targets)
        memcpy(c->targets, targets, n_targets * sizeof *targets);
    if (n_changes) {
        memcpy(c->steps, steps, n_changes * sizeof *steps);
        memcpy(c->amps, amps, n_changes * sizeof *amps);
    }
    /* changes already past (a source added after a run) are skipped */
    while (c->k < c->n_changes && c->steps[c->k] < (int64_t)net->step)
        c->k++;
    net->n_curs++;
    return BL_OK;
}

double *bl_eq_net_var(bl_eq_net *net, uint32_t pop, const char *name)
{
    if (pop >= net->n_pops || net->pops[pop].kind != K_NEURONS || !name)
        return NULL;
    return bl_eq_pop_var(net->pops[pop].p, name);
}

uint32_t bl_eq_net_pop_size(const bl_eq_net *net, uint32_t pop) { return pop < net->n_pops ? net->pops[pop].n : 0; }
uint64_t bl_eq_net_steps(const bl_eq_net *net) { return net->step; }

bl_status bl_eq_net_record(bl_eq_net *net, uint32_t pop, const char *var, bl_error *err)
{
    net_pop *q = neurons(net, pop, err);
    if (!q)
        return err ? err->status : BL_ERR_INVALID;
    const double *v = var ? bl_eq_pop_var(q->p, var) : NULL;
    if (!v)
        return bl_fail(err, BL_ERR_INVALID, "record: population %u has no variable '%s'", pop, var ? var : "(null)");
    for (uint32_t k = 0; k < q->n_recs; k++)
        if (!strcmp(q->recs[k].name, var))
            return BL_OK;
    net_rec *r = realloc(q->recs, ((size_t)q->n_recs + 1) * sizeof *r);
    if (!r)
        return bl_fail(err, BL_ERR_NOMEM, "record: out of memory");
    q->recs = r;
    memset(&r[q->n_recs], 0, sizeof *r);
    snprintf(r[q->n_recs].name, sizeof r[q->n_recs].name, "%s", var);
    r[q->n_recs].var = v;
    q->n_recs++;
    return BL_OK;
}

static int emit(net_pop *q, uint64_t step)
{
    size_t cap = q->cap_sp, cap2 = q->cap_sp;
    if (!grow((void **)&q->sp_step, &cap, q->n_sp + q->n_spiked, sizeof *q->sp_step) ||
        !grow((void **)&q->sp_idx, &cap2, q->n_sp + q->n_spiked, sizeof *q->sp_idx))
        return 0;
    q->cap_sp = cap < cap2 ? cap : cap2;
    for (uint32_t k = 0; k < q->n_spiked; k++) {
        q->sp_step[q->n_sp + k] = step;
        q->sp_idx[q->n_sp + k] = q->spiked[k];
    }
    q->n_sp += q->n_spiked;
    return 1;
}

static bl_status one_step(bl_eq_net *net, bl_error *err)
{
    uint64_t s = net->step;
    double t = (double)s * net->dt;
    /* start: current sources */
    for (size_t k = 0; k < net->n_curs; k++) {
        net_cur *c = &net->curs[k];
        if (c->k < c->n_changes && c->steps[c->k] == (int64_t)s) {
            double a = c->amps[c->k++];
            for (size_t i = 0; i < c->n_targets; i++) {
                c->var[c->targets[i]] += a - c->prev[i];
                c->prev[i] = a;
            }
        }
    }
    /* groups and thresholds */
    for (uint32_t p = 0; p < net->n_pops; p++) {
        net_pop *q = &net->pops[p];
        q->n_spiked = 0;
        if (q->kind == K_NEURONS) {
            bl_status st = bl_eq_pop_step(q->p, q->spiked, &q->n_spiked, err);
            if (st)
                return bl_fail_context(err, "population %u step %llu", p, (unsigned long long)s), st;
        } else if (q->kind == K_ARRAY) {
            for (uint32_t i = 0; i < q->n; i++) {
                while (q->cursor[i] < q->off[i + 1] && q->steps[q->cursor[i]] < (int64_t)s)
                    q->cursor[i]++; /* spikes before a run's start are skipped, as Brian2 does */
                if (q->cursor[i] < q->off[i + 1] && q->steps[q->cursor[i]] == (int64_t)s) {
                    q->spiked[q->n_spiked++] = i;
                    q->cursor[i]++;
                }
            }
        } else {
            if (s > UINT32_MAX)
                return bl_fail(err, BL_ERR_INVALID, "population %u: step %llu beyond the Poisson stream's counter", p,
                               (unsigned long long)s);
            for (uint32_t i = 0; i < q->n; i++)
                if (t >= q->start[i] && t <= q->stop[i] && q->thr[i] &&
                    (uint64_t)bl_stream_stimulus_word(net->seed, 0, p, i, (uint32_t)s) < q->thr[i])
                    q->spiked[q->n_spiked++] = i;
        }
        if (q->n_spiked && !emit(q, s))
            return bl_fail(err, BL_ERR_NOMEM, "population %u: out of memory for spikes", p);
    }
    /* synapses */
    for (size_t k = 0; k < net->n_projs; k++) {
        net_proj *j = &net->projs[k];
        net_pop *src = &net->pops[j->pre], *dst = &net->pops[j->post];
        uint32_t ring = j->max_d + 1;
        for (uint32_t x = 0; x < src->n_spiked; x++) {
            uint32_t i = src->spiked[x];
            for (uint64_t e = j->off[i]; e < j->off[i + 1]; e++) {
                net_queue *qq = &j->ring[(s + j->d[e]) % ring];
                if (!grow((void **)&qq->e, &qq->cap, qq->n + 1, sizeof *qq->e))
                    return bl_fail(err, BL_ERR_NOMEM, "projection %zu: out of memory for queued spikes", k);
                qq->e[qq->n++] = e;
            }
        }
        net_queue *now = &j->ring[s % ring];
        net_receptor *r = &dst->rec[j->receptor];
        const bl_eq_net_stdp *R = j->stdp;
        for (size_t x = 0; x < now->n; x++) {
            uint64_t e = now->e[x];
            if (R) {
                /* Brian2's event-driven update, in its generated order */
                double el = -(t - j->last[e]);
                j->M[e] = j->M[e] * exp(el / R->tau_minus_s);
                j->P[e] = j->P[e] * exp(el / R->tau_plus_s);
                j->P[e] += R->a_plus;
                j->w[e] += j->M[e] * R->w_max;
                j->w[e] = (double)(j->w[e] >= R->w_min) * j->w[e] + (double)(j->w[e] < R->w_min) * R->w_min;
                j->last[e] = t;
            }
            eq_pop_run_other(dst->p, r->m, &r->m->on_pre, r->regs, j->tgt[e], j->w[e]);
        }
        now->n = 0;
    }
    /* the postsynaptic pathways of plastic projections (Brian2 orders them after every presynaptic one) */
    for (size_t k = 0; k < net->n_projs; k++) {
        net_proj *j = &net->projs[k];
        const bl_eq_net_stdp *R = j->stdp;
        if (!R)
            continue;
        const net_pop *dst = &net->pops[j->post];
        for (uint32_t x = 0; x < dst->n_spiked; x++) {
            uint32_t i = dst->spiked[x];
            for (uint64_t q = j->by_post_off[i]; q < j->by_post_off[i + 1]; q++) {
                uint64_t e = j->by_post[q];
                double el = -(t - j->last[e]);
                j->M[e] = j->M[e] * exp(el / R->tau_minus_s);
                j->P[e] = j->P[e] * exp(el / R->tau_plus_s);
                j->M[e] -= R->a_minus;
                j->w[e] += j->P[e] * R->w_max;
                j->w[e] = (double)(j->w[e] > R->w_max) * R->w_max + (double)(j->w[e] <= R->w_max) * j->w[e];
                j->last[e] = t;
            }
        }
    }
    /* end: recording */
    for (uint32_t p = 0; p < net->n_pops; p++) {
        net_pop *q = &net->pops[p];
        for (uint32_t k = 0; k < q->n_recs; k++) {
            net_rec *r = &q->recs[k];
            size_t need = (r->n_samples + 1) * q->n;
            if (!grow((void **)&r->data, &r->cap, need, sizeof *r->data))
                return bl_fail(err, BL_ERR_NOMEM, "record: out of memory for population %u '%s'", p, r->name);
            memcpy(r->data + r->n_samples * q->n, r->var, (size_t)q->n * sizeof *r->data);
            r->n_samples++;
        }
    }
    net->step++;
    return BL_OK;
}

bl_status bl_eq_net_run(bl_eq_net *net, uint64_t n_steps, bl_error *err)
{
    if (n_steps > (UINT64_C(1) << 40))
        return bl_fail(err, BL_ERR_INVALID, "network: %llu steps is too many", (unsigned long long)n_steps);
    for (uint64_t k = 0; k < n_steps; k++) {
        bl_status st = one_step(net, err);
        if (st)
            return st;
    }
    return BL_OK;
}

size_t bl_eq_net_spikes(const bl_eq_net *net, uint32_t pop, const uint64_t **steps, const uint32_t **idx)
{
    if (pop >= net->n_pops) {
        *steps = NULL;
        *idx = NULL;
        return 0;
    }
    *steps = net->pops[pop].sp_step;
    *idx = net->pops[pop].sp_idx;
    return net->pops[pop].n_sp;
}

const double *bl_eq_net_samples(const bl_eq_net *net, uint32_t pop, const char *var, size_t *n_samples)
{
    *n_samples = 0;
    if (pop >= net->n_pops || !var)
        return NULL;
    const net_pop *q = &net->pops[pop];
    for (uint32_t k = 0; k < q->n_recs; k++)
        if (!strcmp(q->recs[k].name, var)) {
            *n_samples = q->recs[k].n_samples;
            return q->recs[k].data;
        }
    return NULL;
}

void bl_eq_net_clear_recordings(bl_eq_net *net)
{
    for (uint32_t p = 0; p < net->n_pops; p++) {
        net->pops[p].n_sp = 0;
        for (uint32_t k = 0; k < net->pops[p].n_recs; k++)
            net->pops[p].recs[k].n_samples = 0;
    }
}
