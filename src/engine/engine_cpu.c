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
 * The one-trial-per-thread layout suits the field's usual many-trial
 * experiments; a single trial runs on one thread. */
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_impl.h"

#define NEVER_SPIKED (-(INT64_C(1) << 40))

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

/* Everything one thread needs to run one trial. */
typedef struct workspace {
    void *v, *g;            /* double (shiu2024) or float (phase4c) [n] */
    int64_t *last_spike;    /* shiu2024 */
    int32_t *refractory;    /* phase4c */
    int64_t *pending_until; /* phase4c: last step with input on its way */
    float *arrival_now;     /* phase4c: this step's summed input [n] */
    uint8_t *available;     /* phase4c: this step's availability of active neurons */
    uint8_t *is_active, *spiked;
    int32_t *active;
    uint64_t n_active;
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
    free(w->v);
    free(w->g);
    free(w->last_spike);
    free(w->refractory);
    free(w->pending_until);
    free(w->arrival_now);
    free(w->available);
    free(w->is_active);
    free(w->spiked);
    free(w->active);
    free(w->spikers.v);
    free(w->out.v);
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
    w->is_active = malloc(n);
    w->spiked = calloc(n, 1);
    w->active = malloc(n * sizeof *w->active);
    int ok = w->v && w->g && w->is_active && w->spiked && w->active;
    if (shiu) {
        w->last_spike = malloc(n * sizeof *w->last_spike);
        w->ring = calloc(slots, sizeof *w->ring);
        ok = ok && w->last_spike && w->ring;
    } else {
        w->refractory = malloc(n * sizeof *w->refractory);
        w->pending_until = malloc(n * sizeof *w->pending_until);
        w->arrival_now = calloc(n, sizeof *w->arrival_now);
        w->available = malloc(n);
        w->pending = calloc(slots, sizeof *w->pending);
        ok = ok && w->refractory && w->pending_until && w->arrival_now && w->available && w->pending;
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

/* Is the rest state a fixed point of one step, bit for bit, that never fires? */
static int rest_is_fixed_point(const bl_network *net)
{
    if (net->params.preset == BL_PRESET_SHIU2024) {
        double v0 = net->params.v_rest_mv * 0.001, v = v0, g = 0.0;
        bl_shiu_integrate(&net->shiu, &v, &g);
        return memcmp(&v, &v0, sizeof v) == 0 && g == 0.0 && !bl_shiu_crosses(&net->shiu, v0);
    }
    const bl_p4c_consts *k = &net->p4c;
    float g = bl_p4c_synapse(k, 0.0f, 0.0f);
    float v = bl_p4c_membrane(k, k->v_rest, g, 1);
    uint32_t gb;
    memcpy(&gb, &g, sizeof gb);
    return memcmp(&v, &k->v_rest, sizeof v) == 0 && gb == 0 && !bl_p4c_crosses(k, k->v_rest);
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

static inline void activate(workspace *w, int32_t i)
{
    if (!w->is_active[i]) {
        w->is_active[i] = 1;
        w->active[w->n_active++] = i;
    }
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Poisson draw of population p for neuron i (the stream contract). */
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

static void reset_activity(workspace *w, const bl_network *net, int skip_ok)
{
    uint64_t n = net->n_neurons;
    w->n_active = 0;
    w->spikers.n = 0;
    w->out.n = 0;
    w->failed = 0;
    memset(w->is_active, 0, n ? n : 1);
    if (!skip_ok) /* no exact fixed point: every neuron is updated every step */
        for (uint64_t i = 0; i < n; i++)
            activate(w, (int32_t)i);
}

/* ---- shiu2024 ---- */
static void run_shiu_trial(const bl_network *net, int skip_ok, workspace *w, uint32_t trial,
                           uint64_t n_steps)
{
    const bl_shiu_consts *k = &net->shiu;
    const uint64_t n = net->n_neurons, slots = (uint64_t)net->delay_steps + 1;
    const int32_t *rfc = net->refractory_steps;
    const double v0 = net->params.v_rest_mv * 0.001;
    double *v = w->v, *g = w->g;
    int64_t *last = w->last_spike;
    for (uint64_t i = 0; i < n; i++) {
        v[i] = v0;
        g[i] = 0.0;
        last[i] = NEVER_SPIKED;
    }
    for (uint64_t q = 0; q < slots; q++)
        w->ring[q].n = 0;
    reset_activity(w, net, skip_ok);
    size_t next_event = 0;

    for (int64_t step = 0; step < (int64_t)n_steps && !w->failed; step++) {
        /* 1-2. update and threshold the neurons that are not at rest. */
        w->spikers.n = 0;
        for (uint64_t a = 0; a < w->n_active;) {
            int32_t i = w->active[a];
            if (step - last[i] >= rfc[i]) {
                bl_shiu_integrate(k, &v[i], &g[i]);
                if (bl_shiu_crosses(k, v[i])) {
                    last[i] = step;
                    w->failed |= !list_push(&w->spikers, i);
                }
            }
            if (skip_ok && v[i] == v0 && g[i] == 0.0 && last[i] != step) {
                w->is_active[i] = 0; /* at rest: drop it; input re-activates it */
                w->active[a] = w->active[--w->n_active];
            } else {
                a++;
            }
        }
        if (w->spikers.n > 1)
            qsort(w->spikers.v, w->spikers.n, sizeof *w->spikers.v, cmp_i32);
        /* 3. deliver the spikes of step - delay in ascending source order. */
        if (step >= net->delay_steps) {
            const i32_list *src = &w->ring[(uint64_t)(step - net->delay_steps) % slots];
            for (uint64_t a = 0; a < src->n; a++)
                for (int64_t e = net->offsets[src->v[a]]; e < net->offsets[src->v[a] + 1]; e++) {
                    int32_t post = net->targets[e];
                    if (step - last[post] >= rfc[post] && last[post] != step) {
                        g[post] += net->weights64[e];
                        activate(w, post);
                    }
                }
        }
        /* 4. Poisson input, then explicit events. */
        for (size_t p = 0; p < net->n_populations; p++) {
            const bl_net_population *pop = &net->populations[p];
            if (!population_on(pop, step))
                continue;
            for (size_t a = 0; a < pop->n; a++) {
                int32_t i = pop->neurons[a];
                if (step - last[i] >= rfc[i] && last[i] != step && poisson_event(net, pop, p, trial, i, step)) {
                    v[i] += k->w_poisson;
                    activate(w, i);
                }
            }
        }
        while (next_event < net->n_events && net->events[2 * next_event] < step)
            next_event++;
        for (; next_event < net->n_events && net->events[2 * next_event] == step; next_event++) {
            int32_t i = net->events[2 * next_event + 1];
            if (step - last[i] >= rfc[i] && last[i] != step) {
                v[i] += k->w_poisson;
                activate(w, i);
            }
        }
        /* 5. resets; remember the spikers for delivery delay_steps later. */
        i32_list *slot = &w->ring[(uint64_t)step % slots];
        slot->n = 0;
        for (uint64_t a = 0; a < w->spikers.n; a++) {
            int32_t i = w->spikers.v[a];
            bl_shiu_reset(k, &v[i], &g[i]);
            w->failed |= !list_push(slot, i) || !list_push(&w->out, (int32_t)step) || !list_push(&w->out, i);
        }
    }
}

/* ---- phase4c ---- */
static void run_p4c_trial(const bl_network *net, int skip_ok, workspace *w, uint32_t trial,
                          uint64_t n_steps)
{
    const bl_p4c_consts *k = &net->p4c;
    const uint64_t n = net->n_neurons, slots = (uint64_t)net->delay_steps + 1;
    float *v = w->v, *g = w->g;
    int32_t *ref = w->refractory;
    for (uint64_t i = 0; i < n; i++) {
        v[i] = k->v_rest;
        g[i] = 0.0f;
        ref[i] = 0;
        w->pending_until[i] = -1;
    }
    for (uint64_t q = 0; q < slots; q++)
        w->pending[q].n = 0;
    reset_activity(w, net, skip_ok);
    size_t next_event = 0;

    for (int64_t step = 0; step < (int64_t)n_steps && !w->failed; step++) {
        /* Sum this step's input per target in the order it was sent. */
        arrival_list *in = &w->pending[(uint64_t)step % slots];
        for (uint64_t a = 0; a < in->n; a++)
            w->arrival_now[in->post[a]] += in->w[a];
        in->n = 0;
        /* 1-4 for the neurons not at rest (all others are exact fixed points). */
        w->spikers.n = 0;
        for (uint64_t a = 0; a < w->n_active;) {
            int32_t i = w->active[a];
            g[i] = bl_p4c_synapse(k, g[i], w->arrival_now[i]);
            w->arrival_now[i] = 0.0f;
            int avail = bl_p4c_available(&ref[i]);
            w->available[i] = (uint8_t)avail;
            v[i] = bl_p4c_membrane(k, v[i], g[i], avail);
            if (avail && bl_p4c_crosses(k, v[i])) {
                w->spiked[i] = 1;
                w->failed |= !list_push(&w->spikers, i);
            }
            uint32_t gb;
            memcpy(&gb, &g[i], sizeof gb);
            if (skip_ok && !w->spiked[i] && ref[i] == 0 && gb == 0 && v[i] == k->v_rest &&
                w->pending_until[i] <= step) {
                w->is_active[i] = 0;
                w->active[a] = w->active[--w->n_active];
            } else {
                a++;
            }
        }
        /* 5. forced spikes of available stimulated neurons (a neuron at rest
         *    is available: its refractory counter is 0). */
        for (size_t p = 0; p < net->n_populations; p++) {
            const bl_net_population *pop = &net->populations[p];
            if (!population_on(pop, step))
                continue;
            for (size_t a = 0; a < pop->n; a++) {
                int32_t i = pop->neurons[a];
                int avail = w->is_active[i] ? w->available[i] : 1;
                if (avail && !w->spiked[i] && poisson_event(net, pop, p, trial, i, step)) {
                    w->spiked[i] = 1;
                    w->failed |= !list_push(&w->spikers, i);
                }
            }
        }
        while (next_event < net->n_events && net->events[2 * next_event] < step)
            next_event++;
        for (; next_event < net->n_events && net->events[2 * next_event] == step; next_event++) {
            int32_t i = net->events[2 * next_event + 1];
            int avail = w->is_active[i] ? w->available[i] : 1;
            if (avail && !w->spiked[i]) {
                w->spiked[i] = 1;
                w->failed |= !list_push(&w->spikers, i);
            }
        }
        /* 6-7. resets and fan-out into the slot delay_steps ahead, sources ascending. */
        if (w->spikers.n > 1)
            qsort(w->spikers.v, w->spikers.n, sizeof *w->spikers.v, cmp_i32);
        arrival_list *future = &w->pending[(uint64_t)(step + net->delay_steps) % slots];
        for (uint64_t a = 0; a < w->spikers.n; a++) {
            int32_t i = w->spikers.v[a];
            w->spiked[i] = 0;
            bl_p4c_reset(k, &v[i], &ref[i]);
            activate(w, i);
            w->failed |= !list_push(&w->out, (int32_t)step) || !list_push(&w->out, i);
            for (int64_t e = net->offsets[i]; e < net->offsets[i + 1]; e++) {
                int32_t post = net->targets[e];
                w->failed |= !arrival_push(future, post, net->weights32[e]);
                w->pending_until[post] = step + net->delay_steps;
                activate(w, post);
            }
        }
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
