/* The "cpu" backend: event-driven and multithreaded, bit-identical to the
 * reference backend.
 *
 * Why it is exact:
 * - It calls the same inline model functions (src/models/) in the same order.
 * - It skips only neurons at the model's fixed point (shiu2024: v = v_0,
 *   g = 0; phase4c: v = v_rest, g = +0, not refractory, no pending input),
 *   where one update step is the identity bit for bit. That property is
 *   checked numerically for the configured parameters when the engine is
 *   created; if it fails, no neuron is ever skipped.
 * - Synaptic input reaches each target in ascending source order (spikers are
 *   sorted before delivery), the spec's summation order.
 * - Threads run whole trials (each trial is sequential), so results cannot
 *   depend on scheduling; per-trial spikes are appended in trial order.
 *
 * Why it is fast: the neurons away from rest live in dense "active" slots
 * (structure of arrays), so the per-step update is a branch-free loop that the
 * compiler vectorises; everything else is driven by spikes. */
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_impl.h"

#define NEVER_SPIKED (-(INT64_C(1) << 40))

enum { FLAG_SPIKE = 1, FLAG_REST = 2, FLAG_AVAILABLE = 4 };

/* A growable list; slot lists of the delay ring and per-trial spike output. */
typedef struct i32_list {
    int32_t *v;
    uint64_t n, cap;
} i32_list;

static int list_push(i32_list *l, int32_t x)
{
    if (l->n == l->cap) {
        uint64_t cap = l->cap ? 2 * l->cap : 256;
        int32_t *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return 0;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = x;
    return 1;
}

/* phase4c pending input: (target, weight) in the order it was sent. */
typedef struct arrival_list {
    int32_t *post;
    float *w;
    uint64_t n, cap;
} arrival_list;

static int arrival_push(arrival_list *l, int32_t post, float w)
{
    if (l->n == l->cap) {
        uint64_t cap = l->cap ? 2 * l->cap : 1024;
        int32_t *p = realloc(l->post, cap * sizeof *p);
        if (p)
            l->post = p;
        float *x = realloc(l->w, cap * sizeof *x);
        if (x)
            l->w = x;
        if (!p || !x)
            return 0;
        l->cap = cap;
    }
    l->post[l->n] = post;
    l->w[l->n] = w;
    l->n++;
    return 1;
}

/* Everything one thread needs to run one trial. Neuron state lives in v/g
 * (indexed by neuron) while a neuron rests and in the active slots (indexed
 * by slot, slot_of[neuron] >= 0) while it does not. */
typedef struct workspace {
    void *v, *g;            /* double (shiu2024) or float (phase4c) [n] */
    int64_t *ready;         /* shiu2024 [n]: first step the neuron is not refractory */
    int32_t *slot_of;       /* [n], -1 when resting */
    /* active slots [n] */
    int32_t *act_neuron;
    void *act_v, *act_g;
    int64_t *act_ready;     /* shiu2024 */
    int32_t *act_ref;       /* phase4c: remaining refractory steps */
    float *act_arrival;     /* phase4c: this step's summed input */
    int64_t *act_pending;   /* phase4c: last step with input on its way */
    uint8_t *act_flag;
    uint64_t n_active, act_cap; /* slots grow on demand: activity is usually sparse */
    uint8_t *spiked;        /* phase4c [n]: dedupes natural and forced spikes */
    i32_list spikers;
    i32_list *ring;         /* shiu2024: spikers of recent steps, delay + 1 slots */
    arrival_list *pending;  /* phase4c: input in flight, delay + 1 slots */
    i32_list out;           /* this trial's spikes: (step, neuron) pairs */
    int failed;
} workspace;

typedef struct cpu_state {
    const bl_network *net;
    int threads;
    int skip_ok; /* the rest state is an exact fixed point */
    workspace *ws;
    int n_ws;
} cpu_state;

static void ws_free(workspace *w, uint64_t slots)
{
    void *blocks[] = {w->v, w->g, w->ready, w->slot_of, w->act_neuron, w->act_v, w->act_g,
                      w->act_ready, w->act_ref, w->act_arrival, w->act_pending,
                      w->act_flag, w->spiked, w->spikers.v, w->out.v};
    for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; k++)
        free(blocks[k]);
    if (w->ring)
        for (uint64_t k = 0; k < slots; k++)
            free(w->ring[k].v);
    free(w->ring);
    if (w->pending)
        for (uint64_t k = 0; k < slots; k++) {
            free(w->pending[k].post);
            free(w->pending[k].w);
        }
    free(w->pending);
    memset(w, 0, sizeof *w);
}

static int ws_alloc(workspace *w, const bl_network *net)
{
    uint64_t n = net->n_neurons ? net->n_neurons : 1, slots = (uint64_t)net->delay_steps + 1;
    int shiu = net->params.preset == BL_PRESET_SHIU2024;
    size_t sz = shiu ? sizeof(double) : sizeof(float);
    w->v = malloc(n * sz);
    w->g = malloc(n * sz);
    w->slot_of = malloc(n * sizeof *w->slot_of);
    uint64_t cap = n < 4096 ? n : 4096;
    w->act_cap = cap;
    w->act_neuron = malloc(cap * sizeof *w->act_neuron);
    w->act_v = malloc(cap * sz);
    w->act_g = malloc(cap * sz);
    w->act_flag = malloc(cap);
    int ok = w->v && w->g && w->slot_of && w->act_neuron && w->act_v && w->act_g && w->act_flag;
    if (shiu) {
        w->ready = malloc(n * sizeof *w->ready);
        w->act_ready = malloc(cap * sizeof *w->act_ready);
        w->ring = calloc(slots, sizeof *w->ring);
        ok = ok && w->ready && w->act_ready && w->ring;
    } else {
        w->act_ref = malloc(cap * sizeof *w->act_ref);
        w->act_arrival = malloc(cap * sizeof *w->act_arrival);
        w->act_pending = malloc(cap * sizeof *w->act_pending);
        w->spiked = calloc(n, 1);
        w->pending = calloc(slots, sizeof *w->pending);
        ok = ok && w->act_ref && w->act_arrival && w->act_pending && w->spiked && w->pending;
    }
    return ok;
}

static void cpu_destroy(void *p)
{
    cpu_state *s = p;
    if (!s)
        return;
    for (int t = 0; t < s->n_ws; t++)
        ws_free(&s->ws[t], (uint64_t)s->net->delay_steps + 1);
    free(s->ws);
    free(s);
}

static inline uint64_t bits64(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static inline uint32_t bits32(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* Is the rest state a fixed point of one step, bit for bit, that never fires? */
static int rest_is_fixed_point(const bl_network *net)
{
    if (net->params.preset == BL_PRESET_SHIU2024) {
        double v0 = net->params.v_rest_mv * 0.001, v = v0, g = 0.0;
        bl_shiu_integrate(&net->shiu, &v, &g);
        return bits64(v) == bits64(v0) && g == 0.0 && !bl_shiu_crosses(&net->shiu, v0);
    }
    const bl_p4c_consts *k = &net->p4c;
    float g = bl_p4c_synapse(k, 0.0f, 0.0f);
    float v = bl_p4c_membrane(k, k->v_rest, g, 1);
    return bits32(v) == bits32(k->v_rest) && bits32(g) == 0 && !bl_p4c_crosses(k, k->v_rest);
}

static int cpu_set_threads(void *p, int threads)
{
    cpu_state *s = p;
    int t = threads > 0 ? threads : omp_get_num_procs();
    s->threads = t < 1 ? 1 : t;
    return s->threads;
}

static bl_status cpu_create(const bl_network *net, void **out, bl_error *err)
{
    cpu_state *s = calloc(1, sizeof *s);
    if (!s)
        return bl_fail(err, BL_ERR_NOMEM, "cpu backend: cannot allocate");
    s->net = net;
    s->skip_ok = rest_is_fixed_point(net);
    cpu_set_threads(s, 0);
    *out = s;
    return BL_OK;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static inline int poisson_event(const bl_network *net, const bl_net_population *pop, size_t p,
                                uint32_t trial, int32_t i, int64_t step)
{
    uint32_t word = bl_stream_word(net->seed, trial, (uint32_t)p, (uint32_t)i, (uint32_t)step);
    return (uint64_t)word < pop->threshold;
}

static inline int population_on(const bl_net_population *pop, int64_t step)
{
    return step >= pop->start_step && step < pop->stop_step && pop->threshold != 0;
}

/* Room for one more active slot. On failure the trial is marked failed and
 * slot 0 (which always exists) absorbs the writes until the step loop stops. */
static int grow_active(workspace *w)
{
    if (w->n_active < w->act_cap)
        return 1;
    uint64_t cap = 2 * w->act_cap;
    size_t sz = w->act_ready ? sizeof(double) : sizeof(float);
    int ok = 1;
#define GROW(field, size)                                  \
    do {                                                   \
        void *p_ = realloc(w->field, cap * (size));        \
        if (p_)                                            \
            w->field = p_;                                 \
        else                                               \
            ok = 0;                                        \
    } while (0)
    GROW(act_neuron, sizeof(int32_t));
    GROW(act_v, sz);
    GROW(act_g, sz);
    GROW(act_flag, 1);
    if (w->act_ready)
        GROW(act_ready, sizeof(int64_t));
    else {
        GROW(act_ref, sizeof(int32_t));
        GROW(act_arrival, sizeof(float));
        GROW(act_pending, sizeof(int64_t));
    }
#undef GROW
    if (ok)
        w->act_cap = cap;
    else
        w->failed = 1;
    return ok;
}

/* ---- shiu2024 ---- */

static inline int32_t shiu_activate(workspace *w, int32_t i)
{
    int32_t a = w->slot_of[i];
    if (a >= 0)
        return a;
    if (!grow_active(w))
        return 0;
    a = (int32_t)w->n_active++;
    w->slot_of[i] = a;
    w->act_neuron[a] = i;
    ((double *)w->act_v)[a] = ((double *)w->v)[i];
    ((double *)w->act_g)[a] = ((double *)w->g)[i];
    w->act_ready[a] = w->ready[i];
    return a;
}

static inline void shiu_deactivate(workspace *w, int32_t a)
{
    double *av = w->act_v, *ag = w->act_g;
    int32_t i = w->act_neuron[a], b = (int32_t)--w->n_active;
    ((double *)w->v)[i] = av[a];
    ((double *)w->g)[i] = ag[a];
    w->slot_of[i] = -1;
    if (a != b) {
        w->act_neuron[a] = w->act_neuron[b];
        av[a] = av[b];
        ag[a] = ag[b];
        w->act_ready[a] = w->act_ready[b];
        w->act_flag[a] = w->act_flag[b];
        w->slot_of[w->act_neuron[a]] = a;
    }
}

/* Spec steps 1-2 over the active slots: branch-free, so it vectorises. */
__attribute__((target_clones("avx2", "default")))
static void shiu_update(const bl_shiu_consts *k, int64_t step, uint64_t n, double *restrict av,
                        double *restrict ag, const int64_t *restrict ready, uint8_t *restrict flag,
                        uint64_t v0_bits)
{
    for (uint64_t a = 0; a < n; a++) {
        int nr = step >= ready[a];
        double v = av[a], g = ag[a], v1 = v, g1 = g;
        bl_shiu_integrate(k, &v1, &g1);
        v = nr ? v1 : v;
        g = nr ? g1 : g;
        av[a] = v;
        ag[a] = g;
        flag[a] = (uint8_t)((nr & bl_shiu_crosses(k, v)) | ((bits64(v) == v0_bits) & (g == 0.0)) << 1);
    }
}

static void run_shiu_trial(const bl_network *net, int skip_ok, workspace *w, uint32_t trial,
                           uint64_t n_steps)
{
    const bl_shiu_consts *k = &net->shiu;
    const uint64_t n = net->n_neurons, slots = (uint64_t)net->delay_steps + 1;
    const int32_t *rfc = net->refractory_steps;
    const double v0 = net->params.v_rest_mv * 0.001;
    double *v = w->v, *g = w->g; /* act_v/act_g move when the slots grow: never cached */
    /* Brian2's not_refractory = (step - last_spike >= rfc), and a neuron that
     * spikes is not_refractory = False for the rest of its step even when
     * rfc = 0. Both rules are one comparison with ready = last + max(rfc, 1). */
    int64_t *ready = w->ready;
    for (uint64_t i = 0; i < n; i++) {
        v[i] = v0;
        g[i] = 0.0;
        ready[i] = NEVER_SPIKED;
        w->slot_of[i] = -1;
    }
    for (uint64_t q = 0; q < slots; q++)
        w->ring[q].n = 0;
    w->n_active = 0;
    w->out.n = 0;
    w->failed = 0;
    if (!skip_ok) /* no exact fixed point: every neuron is updated every step */
        for (uint64_t i = 0; i < n; i++)
            shiu_activate(w, (int32_t)i);
    size_t next_event = 0;

    for (int64_t step = 0; step < (int64_t)n_steps && !w->failed; step++) {
        /* 1-2. update and threshold the neurons away from rest. */
        shiu_update(k, step, w->n_active, w->act_v, w->act_g, w->act_ready, w->act_flag, bits64(v0));
        w->spikers.n = 0;
        for (uint64_t a = w->n_active; a-- > 0;) { /* descending: swap-removal keeps the scan valid */
            uint8_t f = w->act_flag[a];
            if (f & FLAG_SPIKE) {
                int32_t i = w->act_neuron[a];
                ready[i] = w->act_ready[a] = step + (rfc[i] > 1 ? rfc[i] : 1);
                w->failed |= !list_push(&w->spikers, i);
            } else if ((f & FLAG_REST) && skip_ok) {
                shiu_deactivate(w, (int32_t)a);
            }
        }
        if (w->spikers.n > 1)
            qsort(w->spikers.v, w->spikers.n, sizeof *w->spikers.v, cmp_i32);
        /* 3. deliver the spikes of step - delay in ascending source order,
         *    only into neurons that are not refractory (nor spiking now). */
        if (step >= net->delay_steps) {
            const i32_list *src = &w->ring[(uint64_t)(step - net->delay_steps) % slots];
            for (uint64_t s = 0; s < src->n; s++)
                for (int64_t e = net->offsets[src->v[s]]; e < net->offsets[src->v[s] + 1]; e++) {
                    int32_t post = net->targets[e];
                    if (step >= ready[post]) {
                        int32_t a = shiu_activate(w, post);
                        ((double *)w->act_g)[a] += net->weights64[e];
                    }
                }
        }
        /* 4. Poisson input, then explicit events. */
        for (size_t p = 0; p < net->n_populations; p++) {
            const bl_net_population *pop = &net->populations[p];
            if (!population_on(pop, step))
                continue;
            for (size_t s = 0; s < pop->n; s++) {
                int32_t i = pop->neurons[s];
                if (step >= ready[i] && poisson_event(net, pop, p, trial, i, step)) {
                    int32_t a = shiu_activate(w, i);
                    ((double *)w->act_v)[a] += k->w_poisson;
                }
            }
        }
        while (next_event < net->n_events && net->events[2 * next_event] < step)
            next_event++;
        for (; next_event < net->n_events && net->events[2 * next_event] == step; next_event++) {
            int32_t i = net->events[2 * next_event + 1];
            if (step >= ready[i]) {
                int32_t a = shiu_activate(w, i);
                ((double *)w->act_v)[a] += k->w_poisson;
            }
        }
        /* 5. resets; remember the spikers for delivery delay_steps later. */
        i32_list *ring = &w->ring[(uint64_t)step % slots];
        ring->n = 0;
        for (uint64_t s = 0; s < w->spikers.n; s++) {
            int32_t i = w->spikers.v[s], a = w->slot_of[i];
            bl_shiu_reset(k, &((double *)w->act_v)[a], &((double *)w->act_g)[a]);
            w->failed |= !list_push(ring, i) || !list_push(&w->out, (int32_t)step) || !list_push(&w->out, i);
        }
    }
    for (uint64_t a = 0; a < w->n_active; a++) { /* final state of the active slots */
        v[w->act_neuron[a]] = ((double *)w->act_v)[a];
        g[w->act_neuron[a]] = ((double *)w->act_g)[a];
    }
}

/* ---- phase4c ---- */

static inline int32_t p4c_activate(workspace *w, int32_t i)
{
    int32_t a = w->slot_of[i];
    if (a >= 0)
        return a;
    if (!grow_active(w))
        return 0;
    a = (int32_t)w->n_active++;
    w->slot_of[i] = a;
    w->act_neuron[a] = i;
    ((float *)w->act_v)[a] = ((float *)w->v)[i];
    ((float *)w->act_g)[a] = ((float *)w->g)[i];
    w->act_ref[a] = 0; /* a resting neuron is never refractory */
    w->act_arrival[a] = 0.0f;
    w->act_pending[a] = -1;
    return a;
}

static inline void p4c_deactivate(workspace *w, int32_t a)
{
    float *av = w->act_v, *ag = w->act_g;
    int32_t i = w->act_neuron[a], b = (int32_t)--w->n_active;
    ((float *)w->v)[i] = av[a];
    ((float *)w->g)[i] = ag[a];
    w->slot_of[i] = -1;
    if (a != b) {
        w->act_neuron[a] = w->act_neuron[b];
        av[a] = av[b];
        ag[a] = ag[b];
        w->act_ref[a] = w->act_ref[b];
        w->act_arrival[a] = w->act_arrival[b];
        w->act_pending[a] = w->act_pending[b];
        w->act_flag[a] = w->act_flag[b];
        w->slot_of[w->act_neuron[a]] = a;
    }
}

/* Spec steps 1-4 over the active slots, branch-free. */
__attribute__((target_clones("avx2", "default")))
static void p4c_update(const bl_p4c_consts *k, int64_t step, uint64_t n, float *restrict av,
                       float *restrict ag, int32_t *restrict ref, float *restrict arrival,
                       const int64_t *restrict pending, uint8_t *restrict flag)
{
    const uint32_t rest_bits = bits32(k->v_rest);
    for (uint64_t a = 0; a < n; a++) {
        float g = bl_p4c_synapse(k, ag[a], arrival[a]);
        arrival[a] = 0.0f;
        int32_t r = ref[a];
        int avail = bl_p4c_available(&r);
        float v = bl_p4c_membrane(k, av[a], g, avail);
        ref[a] = r;
        av[a] = v;
        ag[a] = g;
        int rest = (r == 0) & (bits32(g) == 0) & (bits32(v) == rest_bits) & (pending[a] <= step);
        flag[a] = (uint8_t)((avail & bl_p4c_crosses(k, v)) | rest << 1 | avail << 2);
    }
}

static void p4c_spike(workspace *w, int32_t i)
{
    if (!w->spiked[i]) {
        w->spiked[i] = 1;
        w->failed |= !list_push(&w->spikers, i);
    }
}

static void run_p4c_trial(const bl_network *net, int skip_ok, workspace *w, uint32_t trial,
                          uint64_t n_steps)
{
    const bl_p4c_consts *k = &net->p4c;
    const uint64_t n = net->n_neurons, slots = (uint64_t)net->delay_steps + 1;
    float *v = w->v, *g = w->g; /* act_v/act_g move when the slots grow: never cached */
    for (uint64_t i = 0; i < n; i++) {
        v[i] = k->v_rest;
        g[i] = 0.0f;
        w->slot_of[i] = -1;
    }
    for (uint64_t q = 0; q < slots; q++)
        w->pending[q].n = 0;
    w->n_active = 0;
    w->out.n = 0;
    w->failed = 0;
    if (!skip_ok)
        for (uint64_t i = 0; i < n; i++)
            p4c_activate(w, (int32_t)i);
    size_t next_event = 0;

    for (int64_t step = 0; step < (int64_t)n_steps && !w->failed; step++) {
        /* This step's input, summed per target in the order it was sent
         * (ascending source); its targets are active (activated when sent). */
        arrival_list *in = &w->pending[(uint64_t)step % slots];
        for (uint64_t s = 0; s < in->n; s++)
            w->act_arrival[w->slot_of[in->post[s]]] += in->w[s];
        in->n = 0;
        /* 1-4 over the active slots. */
        p4c_update(k, step, w->n_active, w->act_v, w->act_g, w->act_ref, w->act_arrival, w->act_pending, w->act_flag);
        w->spikers.n = 0;
        for (uint64_t a = w->n_active; a-- > 0;) {
            uint8_t f = w->act_flag[a];
            if (f & FLAG_SPIKE)
                p4c_spike(w, w->act_neuron[a]);
            else if ((f & FLAG_REST) && skip_ok)
                p4c_deactivate(w, (int32_t)a);
        }
        /* 5. forced spikes of available stimulated neurons (a resting neuron
         *    is available: its refractory counter is 0). */
        for (size_t p = 0; p < net->n_populations; p++) {
            const bl_net_population *pop = &net->populations[p];
            if (!population_on(pop, step))
                continue;
            for (size_t s = 0; s < pop->n; s++) {
                int32_t i = pop->neurons[s], a = w->slot_of[i];
                int avail = a < 0 || (w->act_flag[a] & FLAG_AVAILABLE);
                if (avail && !w->spiked[i] && poisson_event(net, pop, p, trial, i, step))
                    p4c_spike(w, i);
            }
        }
        while (next_event < net->n_events && net->events[2 * next_event] < step)
            next_event++;
        for (; next_event < net->n_events && net->events[2 * next_event] == step; next_event++) {
            int32_t i = net->events[2 * next_event + 1], a = w->slot_of[i];
            if (a < 0 || (w->act_flag[a] & FLAG_AVAILABLE))
                p4c_spike(w, i);
        }
        /* 6-7. resets and fan-out into the slot delay_steps ahead, sources ascending. */
        if (w->spikers.n > 1)
            qsort(w->spikers.v, w->spikers.n, sizeof *w->spikers.v, cmp_i32);
        arrival_list *future = &w->pending[(uint64_t)(step + net->delay_steps) % slots];
        for (uint64_t s = 0; s < w->spikers.n; s++) {
            int32_t i = w->spikers.v[s], a = p4c_activate(w, i);
            w->spiked[i] = 0;
            bl_p4c_reset(k, &((float *)w->act_v)[a], &w->act_ref[a]);
            w->failed |= !list_push(&w->out, (int32_t)step) || !list_push(&w->out, i);
            for (int64_t e = net->offsets[i]; e < net->offsets[i + 1]; e++) {
                int32_t post = net->targets[e];
                w->failed |= !arrival_push(future, post, net->weights32[e]);
                int32_t b = p4c_activate(w, post);
                w->act_pending[b] = step + net->delay_steps;
            }
        }
    }
    for (uint64_t a = 0; a < w->n_active; a++) {
        v[w->act_neuron[a]] = ((float *)w->act_v)[a];
        g[w->act_neuron[a]] = ((float *)w->act_g)[a];
    }
}

/* Copy one finished trial into the result (called in trial order). */
static bl_status publish(workspace *w, const bl_network *net, uint32_t trial, bl_result *r, bl_error *err)
{
    if (w->failed)
        return bl_fail(err, BL_ERR_NOMEM, "cpu backend: out of memory in trial %" PRIu32, trial);
    uint64_t a = 0;
    while (a < w->out.n) {
        int32_t step = w->out.v[a];
        uint64_t b = a;
        int32_t batch[256];
        size_t nb = 0;
        bl_status st = BL_OK;
        while (b < w->out.n && w->out.v[b] == step) {
            batch[nb++] = w->out.v[b + 1];
            b += 2;
            if (nb == 256) {
                st = bl_result_append_spikes(r, trial, (uint32_t)step, batch, nb, err);
                nb = 0;
                if (st)
                    return st;
            }
        }
        if (nb && (st = bl_result_append_spikes(r, trial, (uint32_t)step, batch, nb, err)))
            return st;
        a = b;
    }
    size_t sz = net->params.preset == BL_PRESET_SHIU2024 ? sizeof(double) : sizeof(float);
    memcpy(bl_result_v_row(r, trial), w->v, net->n_neurons * sz);
    memcpy(bl_result_g_row(r, trial), w->g, net->n_neurons * sz);
    return BL_OK;
}

static void run_trial(const cpu_state *s, workspace *w, uint32_t trial, uint64_t n_steps)
{
    if (s->net->params.preset == BL_PRESET_SHIU2024)
        run_shiu_trial(s->net, s->skip_ok, w, trial, n_steps);
    else
        run_p4c_trial(s->net, s->skip_ok, w, trial, n_steps);
}

static bl_status ensure_workspaces(cpu_state *s, int count, bl_error *err)
{
    if (s->n_ws >= count)
        return BL_OK;
    workspace *ws = realloc(s->ws, (size_t)count * sizeof *ws);
    if (!ws)
        return bl_fail(err, BL_ERR_NOMEM, "cpu backend: cannot allocate %d workspaces", count);
    s->ws = ws;
    for (int t = s->n_ws; t < count; t++) {
        memset(&ws[t], 0, sizeof ws[t]);
        if (!ws_alloc(&ws[t], s->net)) {
            ws_free(&ws[t], (uint64_t)s->net->delay_steps + 1);
            s->n_ws = t;
            return bl_fail(err, BL_ERR_NOMEM, "cpu backend: cannot allocate state for %" PRIu64
                           " neurons", s->net->n_neurons);
        }
    }
    s->n_ws = count;
    return BL_OK;
}

static bl_status cpu_run(void *p, uint32_t first_trial, uint32_t n_trials, uint64_t n_steps,
                         bl_result *result, bl_error *err)
{
    cpu_state *s = p;
    int threads = s->threads < (int)n_trials ? s->threads : (int)n_trials;
    /* Trials go in waves of `threads`; each wave is published in trial order
     * before the next starts, so memory holds at most one wave of spikes. */
    bl_status st = ensure_workspaces(s, threads, err);
    for (uint32_t wave = 0; !st && wave < n_trials; wave += (uint32_t)threads) {
        int in_wave = (int)(n_trials - wave < (uint32_t)threads ? n_trials - wave : (uint32_t)threads);
#pragma omp parallel for num_threads(in_wave) schedule(static, 1)
        for (int t = 0; t < in_wave; t++)
            run_trial(s, &s->ws[t], first_trial + wave + (uint32_t)t, n_steps);
        for (int t = 0; !st && t < in_wave; t++)
            st = publish(&s->ws[t], s->net, first_trial + wave + (uint32_t)t, result, err);
    }
    return st;
}

const bl_backend bl_backend_cpu = {"cpu", cpu_create, cpu_run, cpu_destroy, cpu_set_threads};
