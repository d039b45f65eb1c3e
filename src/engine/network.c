/* Network resolution: model constants, per-neuron refractory periods, stimulus windows
 * and thresholds are computed once here, so backends only iterate. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/invariant.h"
#include "engine/network_impl.h"
#include "models/model_table.h"
#include "models/eq_current.h"
#include "stimulus/stimulus_impl.h"

static bl_status check_neuron(int32_t neuron, uint64_t n, const char *what, size_t index, bl_error *err)
{
    if (neuron < 0 || (uint64_t)neuron >= n)
        return bl_fail(err, BL_ERR_INVALID, "%s %zu: neuron index %" PRId32 " outside 0..%" PRIu64,
                       what, index, neuron, n ? n - 1 : 0);
    return BL_OK;
}

#ifndef NDEBUG
/* (step, neuron) pairs in order, each neuron below n: the event streams the
 * kernels walk with one cursor (bl_events_at, bl_forced_at). */
static int pairs_sane(const char *what, const int32_t *pairs, size_t count, uint64_t n, bl_error *why)
{
    for (size_t i = 0; i < count; i++) {
        const int32_t *q = pairs + 2 * i;
        if (q[0] < 0 || q[1] < 0 || (uint64_t)q[1] >= n)
            return BL_BROKEN(why, "network: %s %zu is (step %d, neuron %d), outside the network", what, i, q[0], q[1]);
        if (i && (q[0] < q[-2] || (q[0] == q[-2] && q[1] < q[-1])))
            return BL_BROKEN(why, "network: %s %zu (step %d, neuron %d) comes after (step %d, neuron %d)", what, i,
                             q[0], q[1], q[-2], q[-1]);
    }
    return 1;
}

/* What the backends rely on when they read a network: its model row and
 * constants, a delay of at least one step, each population's neurons
 * ascending, unique and in range, and its event streams in order. */
static int network_sane(const bl_network *net, bl_error *why)
{
    if (!net->model || !net->consts || net->delay_steps < 1)
        return BL_BROKEN(why, "network: no model row or constants, or a delay of %" PRId64 " steps",
                         net->delay_steps);
    for (size_t p = 0; p < net->n_populations; p++) {
        const bl_net_population *q = &net->populations[p];
        for (size_t i = 0; i < q->n; i++)
            if (q->neurons[i] < 0 || (uint64_t)q->neurons[i] >= net->n_neurons || (i && q->neurons[i] <= q->neurons[i - 1]))
                return BL_BROKEN(why, "network: population %zu, entry %zu (neuron %d) is out of range or not "
                                 "ascending", p, i, q->neurons[i]);
        if (q->start_step < 0 || q->stop_step < q->start_step)
            return BL_BROKEN(why, "network: population %zu is on over steps [%" PRId64 ", %" PRId64 ")", p,
                             q->start_step, q->stop_step);
    }
    return pairs_sane("event", net->events, net->n_events, net->n_neurons, why) &&
           pairs_sane("forced spike", net->forced, net->n_forced, net->n_neurons, why);
}
#endif

bl_status bl_network_create(const bl_connectome *c, const bl_lif_params *params,
                            const bl_stimulus *stim, const int32_t *silenced, size_t n_silenced,
                            uint64_t seed, bl_network **out, bl_error *err)
{
    *out = NULL;
    bl_status st = bl_lif_params_validate(params, err);
    if (st)
        return st;
    BL_ASSERT_SANE(bl_connectome_sane, c);
    bl_network *net = calloc(1, sizeof *net);
    if (!net)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate a network");
    /* For a connectome part (an MPI rank's share) only the stored edges. */
    uint64_t n = bl_connectome_n_neurons(c), e = bl_connectome_n_stored_edges(c);
    net->connectome = c;
    net->model = bl_model_of(params->preset); /* validated above: never NULL */
    net->params = *params;
    net->n_neurons = n;
    net->n_edges = e;
    net->offsets = bl_connectome_offsets(c);
    net->targets = bl_connectome_targets(c);
    net->delay_steps = bl_lif_delay_steps(params);
    net->seed = seed;
    net->silenced = calloc(n ? n : 1, 1);
    net->refractory_steps = malloc((n ? n : 1) * sizeof *net->refractory_steps);
    if (!net->silenced || !net->refractory_steps) {
        bl_network_destroy(net);
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate network state for %" PRIu64 " neurons", n);
    }
    for (size_t i = 0; i < n_silenced; i++) {
        if ((st = check_neuron(silenced[i], n, "silenced neuron", i, err))) {
            bl_network_destroy(net);
            return st;
        }
        net->silenced[silenced[i]] = 1;
    }

    /* Stimulus: validate indices, resolve windows to steps. */
    size_t np = stim ? stim->n_populations : 0;
    net->populations = calloc(np ? np : 1, sizeof *net->populations);
    if (!net->populations) {
        bl_network_destroy(net);
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate stimulus populations");
    }
    for (size_t p = 0; p < np; p++) {
        const bl_population *src = &stim->populations[p];
        bl_net_population *dst = &net->populations[p];
        for (size_t i = 0; i < src->n; i++)
            if ((st = check_neuron(src->neurons[i], n, "stimulus population", p, err))) {
                bl_network_destroy(net);
                return st;
            }
        dst->neurons = src->neurons;
        dst->n = src->n;
        dst->threshold = bl_bernoulli_threshold(src->rate_hz, params->dt_ms);
        dst->start_step = (int64_t)llround(src->start_ms / params->dt_ms);
        dst->stop_step = src->stop_ms < 0 ? INT64_MAX : (int64_t)llround(src->stop_ms / params->dt_ms);
        dst->force = src->force;
    }
    net->n_populations = np;
    if (stim) {
        for (size_t i = 0; i < stim->n_events; i++)
            if ((st = check_neuron(stim->events[2 * i + 1], n, "stimulus event", i, err))) {
                bl_network_destroy(net);
                return st;
            }
        net->events = stim->events;
        net->n_events = stim->n_events;
        for (size_t i = 0; i < stim->n_forced; i++)
            if ((st = check_neuron(stim->forced[2 * i + 1], n, "forced spike", i, err))) {
                bl_network_destroy(net);
                return st;
            }
        net->forced = stim->forced;
        net->n_forced = stim->n_forced;
        /* A current sets a variable of a model from equations; a preset has
         * no such variable, and silently ignoring the current would run
         * another experiment than the one asked for. */
        if (stim->n_currents && !params->equations) {
            bl_network_destroy(net);
            return bl_fail(err, BL_ERR_UNSUPPORTED, "current injection needs a model from equations that declares "
                           "the variable it sets (I_inj : amp); model '%s' has none",
                           bl_model_of(params->preset)->name);
        }
        if (stim->n_currents && (st = bl_eq_current_check(params->equations, stim->currents, stim->n_currents, err))) {
            bl_network_destroy(net);
            return st;
        }
        for (size_t k = 0; k < stim->n_currents; k++)
            for (size_t i = 0; i < stim->currents[k].n; i++)
                if ((st = check_neuron(stim->currents[k].neurons[i], n, "current", k, err))) {
                    bl_network_destroy(net);
                    return st;
                }
        net->currents = stim->currents;
        net->n_currents = stim->n_currents;
    }

    /* Refractory periods: Shiu's model.py sets rfc = 0 for every Poisson target. */
    int32_t rfc = (int32_t)bl_lif_refractory_steps(params);
    for (uint64_t i = 0; i < n; i++)
        net->refractory_steps[i] = rfc;
    if (params->poisson_refractory_zero && stim) {
        if (stim->has_targets) {
            for (size_t i = 0; i < stim->n_targets; i++) {
                if ((st = check_neuron(stim->targets[i], n, "stimulus target", i, err))) {
                    bl_network_destroy(net);
                    return st;
                }
                net->refractory_steps[stim->targets[i]] = 0;
            }
        } else {
            /* Input targets only: a forced neuron keeps its refractory period. */
            for (size_t p = 0; p < np; p++)
                for (size_t i = 0; !stim->populations[p].force && i < stim->populations[p].n; i++)
                    net->refractory_steps[stim->populations[p].neurons[i]] = 0;
            for (size_t i = 0; i < stim->n_events; i++)
                net->refractory_steps[stim->events[2 * i + 1]] = 0;
        }
    }

    net->counts = bl_connectome_counts(c);
    net->counts16 = bl_connectome_counts16(c);
    /* The model's row is chosen here, once; its constants are computed once. */
    void *consts = calloc(1, net->model->consts_size ? net->model->consts_size : 1);
    if (!consts) {
        bl_network_destroy(net);
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate the constants of model '%s'", net->model->name);
    }
    net->model->make_consts(params, consts);
    net->consts = consts;
    BL_ASSERT_SANE(network_sane, net);
    *out = net;
    return BL_OK;
}

void bl_network_destroy(bl_network *net)
{
    if (!net)
        return;
    free(net->refractory_steps);
    free((void *)net->consts);
    free(net->populations);
    free(net->silenced);
    free(net);
}
