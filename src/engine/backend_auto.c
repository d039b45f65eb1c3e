/* "auto": pick the fastest backend that reproduces the reference exactly on
 * this machine (the seed runtime's eligibility rule). Every candidate runs a
 * small regression network with the caller's model parameters; a candidate
 * whose spikes, counts or final-state bits differ from the reference's in any
 * way is not eligible. Among the eligible, the shortest regression run wins. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "brainlesslab/synth.h"
#include "engine/engine_impl.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* memcmp of n bytes; n = 0 is equal whatever the pointers (a result with no
 * events may hold NULL arrays, and memcmp(NULL, ...) is undefined even for 0). */
static int same_bytes(const void *p, const void *q, size_t n) { return n == 0 || !memcmp(p, q, n); }

static int same_result(const bl_result *a, const bl_result *b)
{
    uint64_t ne = bl_result_n_events(a), cells = bl_result_n_trials(a) * bl_result_n_neurons(a);
    size_t sz = bl_dtype_size(bl_result_state_dtype(a));
    return ne == bl_result_n_events(b) &&
           same_bytes(bl_result_event_trials(a), bl_result_event_trials(b), ne * sizeof(int32_t)) &&
           same_bytes(bl_result_event_steps(a), bl_result_event_steps(b), ne * sizeof(int32_t)) &&
           same_bytes(bl_result_event_neurons(a), bl_result_event_neurons(b), ne * sizeof(int32_t)) &&
           same_bytes(bl_result_counts(a), bl_result_counts(b), cells * sizeof(int32_t)) &&
           same_bytes(bl_result_final_v(a), bl_result_final_v(b), cells * sz) &&
           same_bytes(bl_result_final_g(a), bl_result_final_g(b), cells * sz);
}

bl_status bl_backend_auto_choose(bl_context *ctx, const bl_network *target, int threads, const char **chosen,
                                 char *report, size_t report_size, bl_error *err)
{
    bl_synth_params sp;
    bl_synth_defaults(&sp);
    /* Sparse activity in a few thousand neurons, like real stimulus experiments. */
    sp.n_neurons = 4000;
    sp.mean_out_degree = 30;
    sp.seed = 20240;
    bl_connectome *c = NULL;
    bl_stimulus *stim = NULL;
    bl_network *net = NULL;
    bl_result *ref = NULL;
    int32_t stimulated[40];
    for (int i = 0; i < 40; i++)
        stimulated[i] = i * 19;
    const uint32_t trials = 2;
    const uint64_t steps = 2000;
    bl_status st = bl_synth_generate(&sp, &c, err);
    if (!st)
        st = bl_stimulus_create(&stim, err);
    if (!st)
        st = bl_stimulus_add_poisson(stim, stimulated, 40, 200.0, 0.0, -1.0, err);
    if (!st)
        st = bl_network_create(c, &target->params, stim, stimulated, 2, 1, &net, err);
    size_t used = 0;
    *chosen = "reference";
    double best = 0;
    const char *const *names = bl_engine_backends();
    for (int b = 0; !st && names[b]; b++) {
        bl_engine *e = NULL;
        bl_result *r = NULL;
        st = bl_engine_create(ctx, net, names[b], &e, err);
        if (!st)
            st = bl_engine_set_threads(e, threads, err);
        /* The best of three runs, so that a busy machine rarely decides. */
        double wall = 1e300;
        for (int rep = 0; !st && rep < 3; rep++) {
            bl_result_destroy(r);
            r = NULL;
            double t0 = now();
            st = bl_result_create(net, 0, trials, &r, err);
            if (!st)
                st = bl_engine_run(e, 0, trials, steps, r, err);
            double dt = now() - t0;
            wall = dt < wall ? dt : wall;
        }
        int eligible = 0;
        if (!st && b == 0) {
            ref = r; /* names[0] is the reference */
            r = NULL;
            eligible = 1;
        } else if (!st) {
            eligible = same_result(ref, r);
        }
        if (!st) {
            used += (size_t)snprintf(report + used, used < report_size ? report_size - used : 0,
                                     "%s{\"backend\": \"%s\", \"eligible\": %s, \"regression_wall_s\": %.6f, "
                                     "\"spikes\": %" PRIu64 "}", b ? ", " : "[", names[b],
                                     eligible ? "true" : "false", wall, bl_result_n_events(ref));
            if (eligible && (b == 0 || wall < best)) {
                best = wall;
                *chosen = names[b];
            }
        }
        bl_result_destroy(r);
        bl_engine_destroy(e);
    }
    if (!st)
        snprintf(report + used, used < report_size ? report_size - used : 0, "]");
    /* A model from equations may not fire on the regression network at all
     * (say, one without on_input): nothing qualifies a fast backend, so it
     * runs on the reference backend, which is exact by definition. */
    if (!st && bl_result_n_events(ref) < 100 && target->model->part_supports) {
        *chosen = "reference";
        snprintf(report + used, used < report_size ? report_size - used : 0, ", {\"backend\": \"reference\", "
                 "\"why\": \"the regression network produced only %" PRIu64 " spikes with this model\"}]",
                 bl_result_n_events(ref));
    } else if (!st && bl_result_n_events(ref) < 100)
        st = bl_fail(err, BL_ERR_INTERNAL, "auto backend: the regression network produced only %" PRIu64
                     " spikes; it cannot qualify a backend", bl_result_n_events(ref));
    bl_result_destroy(ref);
    bl_network_destroy(net);
    bl_stimulus_destroy(stim);
    bl_connectome_destroy(c);
    return st;
}
