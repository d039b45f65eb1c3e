/* Stimulus description: Poisson populations and explicit schedules. Drawing
 * happens in the backends through bl_stream_word, so the random tape is
 * virtual: no events are stored for Poisson populations. */
#include "stimulus/stimulus_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/stream.h"

bl_status bl_stimulus_create(bl_stimulus **out, bl_error *err)
{
    *out = calloc(1, sizeof **out);
    return *out ? BL_OK : bl_fail(err, BL_ERR_NOMEM, "cannot allocate a stimulus");
}

void bl_stimulus_destroy(bl_stimulus *s)
{
    if (!s)
        return;
    for (size_t p = 0; p < s->n_populations; p++)
        free(s->populations[p].neurons);
    free(s->populations);
    free(s->events);
    free(s->forced);
    free(s->targets);
    for (size_t k = 0; k < s->n_currents; k++) {
        free(s->currents[k].neurons);
        free(s->currents[k].variable);
        free(s->currents[k].values);
        free(s->currents[k].steps);
    }
    free(s->currents);
    free(s);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_pair(const void *a, const void *b)
{
    const int32_t *x = a, *y = b;
    if (x[0] != y[0])
        return (x[0] > y[0]) - (x[0] < y[0]);
    return (x[1] > y[1]) - (x[1] < y[1]);
}

static bl_status sorted_unique_copy(const int32_t *neurons, size_t n, const char *what, size_t index,
                                    int32_t **out, bl_error *err)
{
    int32_t *copy = malloc((n ? n : 1) * sizeof *copy);
    if (!copy)
        return bl_fail(err, BL_ERR_NOMEM, "%s %zu: cannot allocate", what, index);
    if (n)
        memcpy(copy, neurons, n * sizeof *copy);
    qsort(copy, n, sizeof *copy, cmp_i32);
    for (size_t i = 0; i < n; i++) {
        if (copy[i] < 0) {
            int32_t bad = copy[i];
            free(copy);
            return bl_fail(err, BL_ERR_INVALID, "%s %zu: negative neuron index %d", what, index, bad);
        }
        if (i && copy[i] == copy[i - 1]) {
            int32_t bad = copy[i];
            free(copy);
            return bl_fail(err, BL_ERR_INVALID, "%s %zu: neuron %d listed twice", what, index, bad);
        }
    }
    *out = copy;
    return BL_OK;
}

bl_status bl_stimulus_add_poisson(bl_stimulus *s, const int32_t *neurons, size_t n, double rate_hz,
                                  double start_ms, double stop_ms, bl_error *err)
{
    size_t index = s->n_populations;
    if (!(rate_hz >= 0) || !isfinite(rate_hz))
        return bl_fail(err, BL_ERR_INVALID, "stimulus population %zu: rate %g Hz must be >= 0", index,
                       rate_hz);
    if (!(start_ms >= 0) || !isfinite(start_ms) || !isfinite(stop_ms) ||
        (stop_ms >= 0 && stop_ms < start_ms))
        return bl_fail(err, BL_ERR_INVALID, "stimulus population %zu: window [%g, %g) ms is not valid",
                       index, start_ms, stop_ms);
    if (index >= UINT32_MAX)
        return bl_fail(err, BL_ERR_INVALID, "too many stimulus populations");
    bl_population *grown = realloc(s->populations, (index + 1) * sizeof *grown);
    if (!grown)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate stimulus population %zu", index);
    s->populations = grown;
    bl_population *p = &s->populations[index];
    memset(p, 0, sizeof *p);
    bl_status st = sorted_unique_copy(neurons, n, "stimulus population", index, &p->neurons, err);
    if (st)
        return st;
    p->n = n;
    p->rate_hz = rate_hz;
    p->start_ms = start_ms;
    p->stop_ms = stop_ms;
    s->n_populations++;
    return BL_OK;
}

/* Append pairs to a sorted (step, neuron) list. */
static bl_status add_pairs(int32_t **list, size_t *count, const int32_t *pairs, size_t n_events, const char *what,
                           bl_error *err)
{
    for (size_t i = 0; i < n_events; i++)
        if (pairs[2 * i] < 0 || pairs[2 * i + 1] < 0)
            return bl_fail(err, BL_ERR_INVALID, "%s %zu: step %d, neuron %d: negative value", what, *count + i,
                           pairs[2 * i], pairs[2 * i + 1]);
    if (n_events > (SIZE_MAX / 2 / sizeof(int32_t)) - *count)
        return bl_fail(err, BL_ERR_NOMEM, "too many %ss", what);
    int32_t *grown = realloc(*list, 2 * (*count + n_events + 1) * sizeof *grown);
    if (!grown)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate %zu %ss", n_events, what);
    *list = grown;
    if (n_events)
        memcpy(grown + 2 * *count, pairs, 2 * n_events * sizeof *pairs);
    *count += n_events;
    qsort(grown, *count, 2 * sizeof *grown, cmp_pair);
    return BL_OK;
}

bl_status bl_stimulus_add_forced_events(bl_stimulus *s, const int32_t *pairs, size_t n_events, bl_error *err)
{
    /* A repeat of (step, neuron) is one forced spike: a neuron spikes once a step. */
    return add_pairs(&s->forced, &s->n_forced, pairs, n_events, "forced spike", err);
}

bl_status bl_stimulus_set_force(bl_stimulus *s, size_t index, int force, bl_error *err)
{
    if (index >= s->n_populations)
        return bl_fail(err, BL_ERR_INVALID, "stimulus population %zu does not exist (%zu populations)", index,
                       s->n_populations);
    s->populations[index].force = force != 0;
    return BL_OK;
}

bl_status bl_stimulus_add_events(bl_stimulus *s, const int32_t *pairs, size_t n_events, bl_error *err)
{
    for (size_t i = 0; i < n_events; i++)
        if (pairs[2 * i] < 0 || pairs[2 * i + 1] < 0)
            return bl_fail(err, BL_ERR_INVALID, "stimulus event %zu: step %d, neuron %d: negative value",
                           s->n_events + i, pairs[2 * i], pairs[2 * i + 1]);
    if (n_events > (SIZE_MAX / 2 / sizeof(int32_t)) - s->n_events)
        return bl_fail(err, BL_ERR_NOMEM, "too many stimulus events");
    int32_t *grown = realloc(s->events, 2 * (s->n_events + n_events + 1) * sizeof *grown);
    if (!grown)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate %zu stimulus events", n_events);
    s->events = grown;
    if (n_events)
        memcpy(s->events + 2 * s->n_events, pairs, 2 * n_events * sizeof *pairs);
    s->n_events += n_events;
    /* Events of one step are applied in neuron order; duplicates each count. */
    qsort(s->events, s->n_events, 2 * sizeof *s->events, cmp_pair);
    return BL_OK;
}

bl_status bl_stimulus_set_targets(bl_stimulus *s, const int32_t *neurons, size_t n, bl_error *err)
{
    int32_t *copy;
    bl_status st = sorted_unique_copy(neurons, n, "stimulus targets", 0, &copy, err);
    if (st)
        return st;
    free(s->targets);
    s->targets = copy;
    s->n_targets = n;
    s->has_targets = 1;
    return BL_OK;
}

size_t bl_stimulus_n_populations(const bl_stimulus *s) { return s->n_populations; }
size_t bl_stimulus_n_events(const bl_stimulus *s) { return s->n_events; }

uint32_t bl_stream_word(uint64_t seed, uint32_t trial, uint32_t population, uint32_t neuron,
                        uint32_t step)
{
    return bl_stream_stimulus_word(seed, trial, population, neuron, step);
}

uint64_t bl_bernoulli_threshold(double rate_hz, double dt_ms)
{
    double p = rate_hz * (dt_ms / 1000.0);
    if (!(p > 0))
        return 0;
    if (p >= 1.0)
        return UINT64_C(1) << 32;
    return (uint64_t)floor(ldexp(p, 32));
}

bl_status bl_stimulus_add_current(bl_stimulus *s, const int32_t *neurons, size_t n, const bl_current *c,
                                  bl_error *err)
{
    size_t index = s->n_currents;
    if (!c || !c->variable || !*c->variable)
        return bl_fail(err, BL_ERR_INVALID, "current %zu: no variable named", index);
    if ((unsigned)c->kind > BL_CURRENT_NOISE)
        return bl_fail(err, BL_ERR_INVALID, "current %zu: unknown kind %d", index, (int)c->kind);
    if (c->start_step < 0 || (c->stop_step >= 0 && c->stop_step <= c->start_step))
        return bl_fail(err, BL_ERR_INVALID, "current %zu: window of steps [%lld, %lld) is empty or negative", index,
                       (long long)c->start_step, (long long)c->stop_step);
    if (!isfinite(c->amplitude) || !isfinite(c->from) || !isfinite(c->to) || !(c->sigma >= 0) || !isfinite(c->sigma))
        return bl_fail(err, BL_ERR_INVALID, "current %zu: amplitudes must be finite (sigma >= 0)", index);
    if (c->kind == BL_CURRENT_RAMP && c->stop_step < 0)
        return bl_fail(err, BL_ERR_INVALID, "current %zu: a ramp needs the step where it ends", index);
    int listed = c->kind == BL_CURRENT_STEP || c->kind == BL_CURRENT_TABLE;
    if (listed && (!c->n_values || !c->values || c->n_values > ((size_t)1 << 28)))
        return bl_fail(err, BL_ERR_INVALID, "current %zu: a step or table current needs 1 to 2^28 values", index);
    if (c->kind == BL_CURRENT_TABLE && c->every_steps < 1)
        return bl_fail(err, BL_ERR_INVALID, "current %zu: a table's values each last >= 1 step", index);
    for (size_t k = 0; listed && k < c->n_values; k++) {
        if (!isfinite(c->values[k]))
            return bl_fail(err, BL_ERR_INVALID, "current %zu: value %zu is not finite", index, k);
        if (c->kind == BL_CURRENT_STEP && (!c->steps || c->steps[k] < 0 || (k && c->steps[k] <= c->steps[k - 1])))
            return bl_fail(err, BL_ERR_INVALID, "current %zu: the steps where the values start must be >= 0 and "
                           "ascending (value %zu)", index, k);
    }
    bl_current_in *grown = realloc(s->currents, (index + 1) * sizeof *grown);
    if (!grown)
        return bl_fail(err, BL_ERR_NOMEM, "current %zu: cannot allocate", index);
    s->currents = grown;
    bl_current_in *in = &s->currents[index];
    memset(in, 0, sizeof *in);
    bl_status st = sorted_unique_copy(neurons, n, "current", index, &in->neurons, err);
    if (st)
        return st;
    in->n = n;
    in->c = *c;
    in->variable = strdup(c->variable);
    size_t nv = listed ? c->n_values : 0;
    in->values = malloc((nv ? nv : 1) * sizeof *in->values);
    in->steps = malloc((nv ? nv : 1) * sizeof *in->steps);
    if (!in->variable || !in->values || !in->steps) {
        free(in->neurons);
        free(in->variable);
        free(in->values);
        free(in->steps);
        return bl_fail(err, BL_ERR_NOMEM, "current %zu: cannot allocate", index);
    }
    if (nv)
        memcpy(in->values, c->values, nv * sizeof *in->values);
    if (nv && c->kind == BL_CURRENT_STEP)
        memcpy(in->steps, c->steps, nv * sizeof *in->steps);
    in->c.variable = in->variable;
    in->c.values = in->values;
    in->c.steps = in->steps;
    in->c.n_values = nv;
    s->n_currents++;
    return BL_OK;
}

size_t bl_stimulus_n_currents(const bl_stimulus *s) { return s ? s->n_currents : 0; }
