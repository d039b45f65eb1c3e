/* The engine at the C level: bl_engine_* on small networks built in memory,
 * checked against traces computed by hand from the spec (its hex constants
 * for shiu2024, float32 arithmetic written out for phase4c), and every
 * backend against the reference at several thread counts. The toy model of
 * test_engine_toy.h proves that a new row of the model table is picked up by
 * the reference and cpu backends alike. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "brainlesslab/context.h"
#include "brainlesslab/engine.h"
#include "brainlesslab/synth.h"
#include "connectome/connectome_impl.h"
#include "engine/partition.h"
#include "engine/snapshot.h"
#include "models/lif_phase4c_retire.h"
#include "models/lif_shiu2024_retire.h"
#include "models/lif_shiu2024.h"
#include "models/model_table.h"
#include <float.h>
#include <math.h>
#include "test_engine_toy.h"

/* ---- helpers ---- */

typedef struct edge {
    int32_t pre, post, count;
} edge;

/* A connectome from an edge list sorted by (pre, post). */
static bl_connectome *graph(uint64_t n, const edge *edges, size_t n_edges)
{
    int64_t *off = calloc(n + 1, sizeof *off);
    int32_t *tgt = malloc((n_edges ? n_edges : 1) * sizeof *tgt);
    int32_t *cnt = malloc((n_edges ? n_edges : 1) * sizeof *cnt);
    assert_non_null(off);
    for (size_t k = 0; k < n_edges; k++) {
        off[edges[k].pre + 1]++;
        tgt[k] = edges[k].post;
        cnt[k] = edges[k].count;
    }
    for (uint64_t i = 0; i < n; i++)
        off[i + 1] += off[i];
    bl_connectome *c = NULL;
    bl_error err;
    assert_int_equal(bl_connectome_adopt(n, n_edges, off, tgt, cnt, &c, &err), BL_OK);
    assert_true(bl_connectome_sane(c, NULL));
    return c;
}

static bl_lif_params preset(const char *name)
{
    bl_lif_params p;
    assert_int_equal(bl_lif_params_preset(name, &p, NULL), BL_OK);
    return p;
}

/* Run n_trials x n_steps on a backend with some threads, in a context made
 * with BL_CPU_WINDOW = window ("0": one step at a time, the default; "1":
 * every window at once wherever the model can; "2": where it judges it
 * pays). */
static bl_result *run_window(const bl_network *net, const char *backend, int threads, uint32_t n_trials,
                             uint64_t n_steps, const char *window)
{
    bl_engine *e = NULL;
    bl_result *r = NULL;
    bl_context *ctx = NULL;
    bl_error err;
    assert_int_equal(setenv("BL_CPU_WINDOW", window, 1), 0);
    assert_int_equal(bl_context_create(&ctx, &err), BL_OK);
    assert_int_equal(unsetenv("BL_CPU_WINDOW"), 0);
    assert_int_equal(bl_engine_create(ctx, net, backend, &e, &err), BL_OK);
    assert_int_equal(bl_engine_set_threads(e, threads, &err), BL_OK);
    assert_int_equal(bl_result_create(net, 0, n_trials, &r, &err), BL_OK);
    if (bl_engine_run(e, 0, n_trials, n_steps, r, &err))
        fail_msg("%s x%d (window %s): %s", backend, threads, window, err.message);
    bl_engine_destroy(e);
    bl_context_destroy(ctx);
    return r;
}

static bl_result *run(const bl_network *net, const char *backend, int threads, uint32_t n_trials, uint64_t n_steps)
{
    return run_window(net, backend, threads, n_trials, n_steps, "0");
}

static void assert_same(const bl_result *a, const bl_result *b)
{
    uint64_t ne = bl_result_n_events(a), cells = bl_result_n_trials(a) * bl_result_n_neurons(a);
    size_t sz = bl_dtype_size(bl_result_state_dtype(a));
    assert_int_equal(ne, bl_result_n_events(b));
    assert_memory_equal(bl_result_event_trials(a), bl_result_event_trials(b), ne * sizeof(int32_t));
    assert_memory_equal(bl_result_event_steps(a), bl_result_event_steps(b), ne * sizeof(int32_t));
    assert_memory_equal(bl_result_event_neurons(a), bl_result_event_neurons(b), ne * sizeof(int32_t));
    assert_memory_equal(bl_result_counts(a), bl_result_counts(b), cells * sizeof(int32_t));
    assert_memory_equal(bl_result_final_v(a), bl_result_final_v(b), cells * sz);
    assert_memory_equal(bl_result_final_g(a), bl_result_final_g(b), cells * sz);
}

/* The reference, then cpu at 1..4 threads (partitions forced down to one
 * edge each, so even these graphs split), each with every window stepped at
 * once where the model can, one step at a time, and the two mixed as the
 * default's measurement picks them (it alternates on the first windows of
 * every cycle, so both ways and the switches between them are run), all
 * equal; returns the reference. */
static bl_result *run_all(const bl_network *net, uint32_t n_trials, uint64_t n_steps)
{
    bl_result *ref = run(net, "reference", 1, n_trials, n_steps);
    static const char *const modes[] = {"1", "0", "3"};
    for (int t = 1; t <= 4; t++)
        for (int w = 0; w < 3; w++) {
            bl_result *r = run_window(net, "cpu", t, n_trials, n_steps, modes[w]);
            assert_same(ref, r);
            bl_result_destroy(r);
        }
    return ref;
}

/* Steps at which neuron i spiked in trial 0 (up to max). */
static size_t spikes_of(const bl_result *r, int32_t i, int32_t *steps, size_t max)
{
    size_t k = 0;
    for (uint64_t a = 0; a < bl_result_n_events(r); a++)
        if (bl_result_event_trials(r)[a] == 0 && bl_result_event_neurons(r)[a] == i && k < max)
            steps[k++] = bl_result_event_steps(r)[a];
    return k;
}

static double v64(const bl_result *r, uint64_t i) { return ((const double *)bl_result_final_v(r))[i]; }
static double g64(const bl_result *r, uint64_t i) { return ((const double *)bl_result_final_g(r))[i]; }
static float v32(const bl_result *r, uint64_t i) { return ((const float *)bl_result_final_v(r))[i]; }
static float g32(const bl_result *r, uint64_t i) { return ((const float *)bl_result_final_g(r))[i]; }

static uint64_t b64(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static uint32_t b32(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* The contract's constants (docs/connectome-lif.md), SI units. */
#define SPEC_L2 0x1.f5dc99badec5bp-1
#define SPEC_L10 0x1.fd7246927d28bp-1
#define SPEC_L8 (-0x1.0ff306a505980p-12)
#define SPEC_L9 0x1.439cce9a65d5bp-8
static const double V0 = -52 * 0.001, W_SYN = 0.275 * 0.001, W_POI = 0.275 * 0.001 * 250;

/* A network with explicit events (step, neuron) and silenced neurons. */
static bl_network *network(const bl_connectome *c, const bl_lif_params *p, bl_stimulus **stim, const int32_t *events,
                           size_t n_events, const int32_t *silenced, size_t n_silenced)
{
    bl_error err;
    bl_network *net = NULL;
    assert_int_equal(bl_stimulus_create(stim, &err), BL_OK);
    if (n_events)
        assert_int_equal(bl_stimulus_add_events(*stim, events, n_events, &err), BL_OK);
    if (bl_network_create(c, p, *stim, silenced, n_silenced, 7, &net, &err))
        fail_msg("%s", err.message);
    return net;
}

static int group_setup(void **state)
{
    (void)state;
    /* Split even these small graphs into partitions (cpu backend). */
    return setenv("BL_CPU_PARTITION_MIN_EDGES", "1", 1);
}

/* ---- shiu2024: hand traces ---- */

/* Neuron 0, kicked by one event at step 0, spikes at step 1; its spike
 * reaches neuron 1 exactly 18 steps later (step 19), after that step's
 * update: so g1 is w at the end of step 19 and 0 before, and step 20 is the
 * first update that sees it. */
static void shiu_spike_delay(void **unused)
{
    (void)unused;
    edge e[] = {{0, 1, 100}};
    bl_connectome *c = graph(2, e, 1);
    bl_lif_params p = preset("shiu2024");
    bl_stimulus *stim;
    int32_t ev[] = {0, 0};
    bl_network *net = network(c, &p, &stim, ev, 1, NULL, 0);
    const double w = 100.0 * W_SYN;
    for (uint64_t n_steps = 1; n_steps <= 22; n_steps++) {
        bl_result *r = run_all(net, 1, n_steps);
        int32_t s[4];
        size_t k0 = spikes_of(r, 0, s, 4);
        assert_int_equal(k0, n_steps >= 2);
        if (k0)
            assert_int_equal(s[0], 1);
        assert_int_equal(spikes_of(r, 1, s, 4), 0);
        if (n_steps == 1) /* v0 + the event, not yet integrated */
            assert_true(b64(v64(r, 0)) == b64(V0 + W_POI));
        else /* reset, then (Poisson target: no refractory period) the rest point */
            assert_true(b64(v64(r, 0)) == b64(V0) && g64(r, 0) == 0.0);
        double g = 0.0, v = V0;
        if (n_steps >= 20)
            g = w;
        if (n_steps >= 21) {
            v = SPEC_L8 + ((SPEC_L9 * w) + (SPEC_L10 * V0));
            g = SPEC_L2 * w;
        }
        if (n_steps >= 22) {
            double g1 = SPEC_L2 * g;
            v = SPEC_L8 + ((SPEC_L9 * g) + (SPEC_L10 * v));
            g = g1;
        }
        assert_true(b64(g64(r, 1)) == b64(g));
        assert_true(b64(v64(r, 1)) == b64(v));
        bl_result_destroy(r);
    }
    bl_network_destroy(net);
    bl_stimulus_destroy(stim);
    bl_connectome_destroy(c);
}

/* Events at every step into one neuron: with the refractory period (22
 * steps) it spikes at 1, 24, 47, ...; as a Poisson target (spec: no
 * refractory period) at every other step, since the event on its own spike
 * step is lost. */
static void shiu_refractory(void **unused)
{
    (void)unused;
    bl_connectome *c = graph(1, NULL, 0);
    int32_t ev[200];
    for (int s = 0; s < 100; s++)
        ev[2 * s] = s, ev[2 * s + 1] = 0;
    for (int rule = 0; rule <= 1; rule++) {
        bl_lif_params p = preset("shiu2024");
        p.poisson_refractory_zero = rule;
        bl_stimulus *stim;
        bl_network *net = network(c, &p, &stim, ev, 100, NULL, 0);
        bl_result *r = run_all(net, 1, 100);
        int32_t s[100];
        size_t k = spikes_of(r, 0, s, 100);
        int period = rule ? 2 : 23;
        assert_int_equal(k, rule ? 50 : 5);
        for (size_t a = 0; a < k; a++)
            assert_int_equal(s[a], 1 + period * (int)a);
        bl_result_destroy(r);
        bl_network_destroy(net);
        bl_stimulus_destroy(stim);
    }
    bl_connectome_destroy(c);
}

/* A silenced neuron still fires; its targets never see it. */
static void shiu_silencing(void **unused)
{
    (void)unused;
    edge e[] = {{0, 1, 400}, {0, 2, 400}, {3, 2, 400}};
    bl_connectome *c = graph(4, e, 3);
    bl_lif_params p = preset("shiu2024");
    int32_t ev[] = {0, 0, 0, 3};
    for (int silence = 0; silence <= 1; silence++) {
        bl_stimulus *stim;
        int32_t sil[] = {0};
        bl_network *net = network(c, &p, &stim, ev, 2, sil, (size_t)silence);
        bl_result *r = run_all(net, 1, 60);
        int32_t s[8];
        assert_int_equal(spikes_of(r, 0, s, 8), 1);
        assert_int_equal(s[0], 1);
        if (silence) {
            assert_int_equal(spikes_of(r, 1, s, 8), 0);
            assert_true(b64(v64(r, 1)) == b64(V0) && b64(g64(r, 1)) == 0);
        } else {
            assert_int_equal(spikes_of(r, 1, s, 8), 1);
            assert_true(s[0] > 19);
        }
        /* neuron 2 hears neuron 3 either way */
        assert_true(spikes_of(r, 2, s, 8) >= 1);
        bl_result_destroy(r);
        bl_network_destroy(net);
        bl_stimulus_destroy(stim);
    }
    bl_connectome_destroy(c);
}

/* ---- phase4c: hand traces in float32 ---- */

/* A forced spike happens on its own step (0); it lands in the arrival slot
 * of step 18, added to g after the decay: g = 0*gd + w, then the membrane
 * step sees it at once. */
static void phase4c_spike_delay(void **unused)
{
    (void)unused;
    edge e[] = {{0, 1, 100}};
    bl_connectome *c = graph(2, e, 1);
    bl_lif_params p = preset("phase4c");
    bl_stimulus *stim;
    int32_t ev[] = {0, 0};
    bl_network *net = network(c, &p, &stim, ev, 1, NULL, 0);
    const float gd = (float)(1.0 - 0.1 / 5.0), alpha = (float)(0.1 / 20.0), vr = -52.0f;
    const float w = (float)100 * (float)0.275;
    for (uint64_t n_steps = 17; n_steps <= 21; n_steps++) {
        bl_result *r = run_all(net, 1, n_steps);
        int32_t s[4];
        assert_int_equal(spikes_of(r, 0, s, 4), 1);
        assert_int_equal(s[0], 0);
        float g = 0.0f, v = vr;
        for (uint64_t step = 18; step < n_steps; step++) {
            float decayed = g * gd;
            g = decayed + (step == 18 ? w : 0.0f);
            float leak = v - vr, drive = g - leak, dv = alpha * drive;
            v = v + dv;
        }
        assert_int_equal(b32(g32(r, 1)), b32(g));
        assert_int_equal(b32(v32(r, 1)), b32(v));
        bl_result_destroy(r);
    }
    bl_network_destroy(net);
    bl_stimulus_destroy(stim);
    bl_connectome_destroy(c);
}

/* ---- the exact-rest skip ---- */

/* A partition driven by hand: the neuron wakes on its input, and returns to
 * rest (leaves the active slots) once its state is the rest point again. */
static void exact_rest_skip(void **unused)
{
    (void)unused;
    bl_connectome *c = graph(3, NULL, 0);
    int32_t ev[] = {0, 1};
    const char *names[] = {"shiu2024", "phase4c"};
    /* shiu2024: event at 0, spike at 1 (reset to rest), back to rest after the
     * update of step 2. phase4c: forced spike at 0, refractory 22 steps,
     * available again (and at rest) at step 22. */
    const uint64_t active_until[] = {2, 22};
    for (int m = 0; m < 2; m++) {
        bl_lif_params p = preset(names[m]);
        bl_stimulus *stim;
        bl_network *net = network(c, &p, &stim, ev, 1, NULL, 0);
        assert_true(bl_partition_rest_is_fixed_point(net));
        partition part;
        memset(&part, 0, sizeof part);
        assert_true(bl_partition_alloc(&part, net, 0, 3));
        bl_partition_reset(&part, net, 1);
        assert_true(bl_partition_sane(&part, NULL));
        assert_int_equal(part.n_active, 0);
        size_t cursor = 0;
        i32_list spikers = {0};
        for (int64_t step = 0; step < 30; step++) {
            bl_partition_step(net, 1, &part, 0, step, NULL, 0, &cursor, &spikers);
            assert_true(bl_partition_sane(&part, NULL));
            assert_int_equal(part.n_active, (uint64_t)step < active_until[m] ? 1 : 0);
        }
        bl_partition_settle(&part);
        /* the neuron is back at the rest point, bit for bit */
        bl_result *r = run(net, "reference", 1, 1, 30);
        size_t sz = bl_dtype_size(bl_result_state_dtype(r));
        assert_memory_equal(part.v, bl_result_final_v(r), 3 * sz);
        assert_memory_equal(part.g, bl_result_final_g(r), 3 * sz);
        bl_result_destroy(r);
        free(spikers.v);
        bl_partition_free(&part, net->delay_steps);
        bl_network_destroy(net);
        bl_stimulus_destroy(stim);
    }
    bl_connectome_destroy(c);
}

/* When rest is not a fixed point (v_rest above threshold: every neuron fires
 * by itself) nothing may be skipped, and cpu still equals the reference. */
static void no_skip_without_fixed_point(void **unused)
{
    (void)unused;
    edge e[] = {{0, 1, 3}, {1, 2, -2}, {2, 0, 5}};
    bl_connectome *c = graph(4, e, 3);
    const char *names[] = {"shiu2024", "phase4c"};
    for (int m = 0; m < 2; m++) {
        bl_lif_params p = preset(names[m]);
        p.v_rest_mv = -40.0;
        bl_stimulus *stim;
        bl_network *net = network(c, &p, &stim, NULL, 0, NULL, 0);
        assert_false(bl_partition_rest_is_fixed_point(net));
        bl_result *r = run_all(net, 2, 400);
        /* all four fire unprompted at step 0 and again after relaxing back */
        assert_true(bl_result_n_events(r) > 16);
        bl_result_destroy(r);
        bl_network_destroy(net);
        bl_stimulus_destroy(stim);
    }
    bl_connectome_destroy(c);
}

/* ---- the delay ring's edges ---- */

/* Delays of 1, 2, 3 and 18 steps; a source spiking at every step it can
 * (events at every step, no refractory period for it) so that every ring
 * slot is filled and reused; trials ending just before, at and just after a
 * delivery and a window boundary. Hand check: the first spike (step 1)
 * reaches neuron 1 at step 1 + d, so g1 is exactly w at the end of that step. */
static void delay_ring_edges(void **unused)
{
    (void)unused;
    edge e[] = {{0, 1, 2}, {2, 1, 1}, {2, 3, 7}};
    bl_connectome *c = graph(4, e, 3);
    int32_t ev[2 * 120];
    for (int s = 0; s < 60; s++) {
        ev[4 * s] = 2 * s, ev[4 * s + 1] = 0;     /* neuron 0: every even step */
        ev[4 * s + 2] = 2 * s + 1, ev[4 * s + 3] = 2; /* neuron 2: every odd step */
    }
    const int delays[] = {1, 2, 3, 18};
    for (int m = 0; m < 2; m++)
        for (size_t di = 0; di < sizeof delays / sizeof delays[0]; di++) {
            int d = delays[di];
            bl_lif_params p = preset(m ? "phase4c" : "shiu2024");
            p.delay_ms = 0.1 * d;
            bl_stimulus *stim;
            bl_network *net = network(c, &p, &stim, ev, 120, NULL, 0);
            assert_int_equal(net->delay_steps, d);
            uint64_t lengths[] = {1, (uint64_t)d, (uint64_t)d + 1, (uint64_t)d + 2, (uint64_t)d + 3,
                                  2 * (uint64_t)d, 2 * (uint64_t)d + 1, 3 * (uint64_t)d + 2, 100};
            for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
                bl_result *r = run_all(net, 2, lengths[li]);
                if (!m && lengths[li] == (uint64_t)d + 2) {
                    /* shiu2024: neuron 0 spikes at 1 (event at 0); its spike is the
                     * only one delivered by the end of step 1 + d */
                    assert_true(b64(g64(r, 1)) == b64(2.0 * W_SYN));
                    assert_true(b64(v64(r, 1)) == b64(V0));
                }
                bl_result_destroy(r);
            }
            bl_network_destroy(net);
            bl_stimulus_destroy(stim);
        }
    bl_connectome_destroy(c);
}

/* ---- reference against cpu on a random graph ---- */

/* A 600-neuron synthetic graph, mean out-degree 25. */
static bl_connectome *synth_graph(uint64_t seed)
{
    bl_synth_params sp;
    bl_synth_defaults(&sp);
    sp.n_neurons = 600;
    sp.mean_out_degree = 25;
    sp.seed = seed;
    bl_connectome *c = NULL;
    bl_error err;
    assert_int_equal(bl_synth_generate(&sp, &c, &err), BL_OK);
    assert_true(bl_connectome_sane(c, NULL));
    return c;
}

/* A network driven by one Poisson population from step 0 to stop_ms. */
static bl_network *poisson_network(const bl_connectome *c, const bl_lif_params *p, bl_stimulus **stim,
                                   const int32_t *pop, size_t n, double rate_hz, double stop_ms,
                                   const int32_t *silenced, size_t n_silenced, uint64_t seed)
{
    bl_error err;
    bl_network *net = NULL;
    assert_int_equal(bl_stimulus_create(stim, &err), BL_OK);
    assert_int_equal(bl_stimulus_add_poisson(*stim, pop, n, rate_hz, 0.0, stop_ms, &err), BL_OK);
    if (bl_network_create(c, p, *stim, silenced, n_silenced, seed, &net, &err))
        fail_msg("%s", err.message);
    return net;
}

static void reference_vs_cpu_threads(void **unused)
{
    (void)unused;
    bl_connectome *c = synth_graph(11);
    int32_t pop[30], sil[] = {5, 17};
    for (int i = 0; i < 30; i++)
        pop[i] = i * 19;
    const char *names[] = {"shiu2024", "phase4c"};
    for (int m = 0; m < 2; m++) {
        bl_lif_params p = preset(names[m]);
        bl_stimulus *stim;
        bl_network *net = poisson_network(c, &p, &stim, pop, 30, 300.0, 150.0, sil, 2, 99);
        for (uint32_t trials = 1; trials <= 3; trials += 2) {
            bl_result *r = run_all(net, trials, 2500);
            assert_true(bl_result_n_events(r) > 100);
            bl_result_destroy(r);
        }
        bl_network_destroy(net);
        bl_stimulus_destroy(stim);
    }
    bl_connectome_destroy(c);
}

/* Cancellation inside a trial (issue 26): every backend asks the context
 * once per delay window, so a callback that says stop at its k-th question
 * stops a single long trial after about k windows, with BL_ERR_CANCELLED
 * naming the step and trial; a callback that never says stop changes no
 * bit of the result. */
/* The mpi backend as a job of one rank (MPI's singleton start), in builds
 * with it. Not under the sanitizers (BL_SANITIZED, scripts/test.sh): Open
 * MPI's own allocations outlive MPI_Finalize, which LeakSanitizer would
 * blame on this test; test_resume's mpirun pass covers the same paths. */
static int mpi_here(void) { return bl_backend_known("mpi", NULL, 0) && !getenv("BL_SANITIZED"); }

typedef struct asker {
    int asked, stop_at;
} asker;

static int ask(void *user)
{
    asker *a = user;
    return ++a->asked >= a->stop_at;
}

static void cancel_inside_a_trial(void **unused)
{
    (void)unused;
    bl_connectome *c = synth_graph(14);
    int32_t pop[30];
    for (int i = 0; i < 30; i++)
        pop[i] = i * 19;
    bl_lif_params p = preset("shiu2024");
    bl_stimulus *stim;
    bl_network *net = poisson_network(c, &p, &stim, pop, 30, 300.0, 1000.0, NULL, 0, 99);
    const uint64_t steps = 20000, delay = (uint64_t)net->delay_steps, windows = (steps + delay - 1) / delay;
    const struct {
        const char *backend;
        int threads;
        uint32_t trials;
    } cases[] = {{"reference", 1, 1}, {"cpu", 1, 1}, {"cpu", 2, 1}, {"cpu", 2, 2}, {"mpi", 1, 1}, {"mpi", 2, 1}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        if (!strcmp(cases[k].backend, "mpi") && !mpi_here())
            continue;
        for (int stop_at = 3; stop_at <= 1000000; stop_at += 999997) {
            bl_context *ctx = NULL;
            bl_engine *e = NULL;
            bl_result *r = NULL;
            bl_error err;
            asker a = {0, stop_at};
            assert_int_equal(bl_context_create(&ctx, &err), BL_OK);
            bl_context_set_cancel(ctx, ask, &a);
            assert_int_equal(bl_engine_create(ctx, net, cases[k].backend, &e, &err), BL_OK);
            assert_int_equal(bl_engine_set_threads(e, cases[k].threads, &err), BL_OK);
            assert_int_equal(bl_result_create(net, 0, cases[k].trials, &r, &err), BL_OK);
            bl_status st = bl_engine_run(e, 0, cases[k].trials, steps, r, &err);
            if (stop_at == 3) {
                assert_int_equal(st, BL_ERR_CANCELLED);
                char want[96];
                snprintf(want, sizeof want, "cancelled after %" PRIu64 " of %" PRIu64 " steps of trial 0",
                         3 * delay, steps);
                if (!strstr(err.message, want))
                    fail_msg("%s x%d: '%s' lacks '%s'", cases[k].backend, cases[k].threads, err.message, want);
                assert_int_equal(a.asked, 3);
            } else {
                /* Never told to stop: asked once per window but the last, the same bits. */
                assert_int_equal(st, BL_OK);
                assert_true((uint64_t)a.asked >= windows - 1 && (uint64_t)a.asked <= windows * cases[k].trials);
                bl_result *want = run(net, "reference", 1, cases[k].trials, steps);
                assert_same(want, r);
                bl_result_destroy(want);
            }
            bl_result_destroy(r);
            bl_engine_destroy(e);
            bl_context_destroy(ctx);
        }
    }
    bl_network_destroy(net);
    bl_stimulus_destroy(stim);
    bl_connectome_destroy(c);
}

/* Checkpoints within a trial (snapshot.h): the cpu backend's snapshots,
 * taken every 7 windows of 2 trials at 1 and 2 threads (2 threads: one
 * trial per thread, and with one trial the trial split in 2 partitions),
 * handed back to a fresh engine at 1 or 2 threads, continue each trial to
 * the same spikes and final state as the reference gives uninterrupted,
 * for both models, stepping one step or one window at a time. A blob of
 * another network, a truncated one and the reference backend are refused. */
typedef struct snaps {
    size_t n;
    uint32_t trial[512];
    uint64_t step[512];
    unsigned char *blob[512];
    size_t len[512];
} snaps;

static bl_status keep_snapshot(void *user, uint32_t trial, uint64_t step, const void *blob, size_t len, bl_error *err)
{
    snaps *k = user;
    (void)err;
#pragma omp critical(keep_snapshot)
    if (k->n < 512) {
        k->trial[k->n] = trial;
        k->step[k->n] = step;
        k->blob[k->n] = malloc(len);
        memcpy(k->blob[k->n], blob, len);
        k->len[k->n++] = len;
    }
    return BL_OK;
}

static const char *snap_backend = "cpu";

static bl_result *run_snap(const bl_network *net, int threads, uint32_t first, uint32_t n_trials, uint64_t steps,
                           const char *window, snaps *keep, const snaps *from, size_t which)
{
    bl_engine *e = NULL;
    bl_result *r = NULL;
    bl_context *ctx = NULL;
    bl_error err;
    assert_int_equal(setenv("BL_CPU_WINDOW", window, 1), 0);
    assert_int_equal(bl_context_create(&ctx, &err), BL_OK);
    assert_int_equal(unsetenv("BL_CPU_WINDOW"), 0);
    assert_int_equal(bl_engine_create(ctx, net, snap_backend, &e, &err), BL_OK);
    assert_true(bl_engine_can_snapshot(e));
    assert_int_equal(bl_engine_set_threads(e, threads, &err), BL_OK);
    if (keep)
        bl_engine_set_snapshots(e, 7, keep_snapshot, keep);
    if (from && bl_engine_resume_trial(e, from->trial[which], from->blob[which], from->len[which], &err))
        fail_msg("resume: %s", err.message);
    assert_int_equal(bl_result_create(net, first, n_trials, &r, &err), BL_OK);
    if (bl_engine_run(e, first, n_trials, steps, r, &err))
        fail_msg("cpu x%d: %s", threads, err.message);
    bl_engine_destroy(e);
    bl_context_destroy(ctx);
    return r;
}

static void snapshot_resume(void **unused)
{
    (void)unused;
    bl_connectome *c = synth_graph(15);
    int32_t pop[30];
    for (int i = 0; i < 30; i++)
        pop[i] = i * 19;
    const char *names[] = {"shiu2024", "phase4c"};
    const uint64_t steps = 3000;
    for (int m = 0; m < 2; m++) {
        bl_lif_params p = preset(names[m]);
        bl_stimulus *stim;
        bl_network *net = poisson_network(c, &p, &stim, pop, 30, 300.0, 250.0, NULL, 0, 99);
        /* cpu at 1-2 threads; mpi (a job of one rank, in builds with it)
         * one trial at a time, the only way it snapshots. */
        for (int b = 0; b < 2; b++)
        for (int threads = 1; threads <= (b ? 1 : 2); threads++)
            for (uint32_t n_trials = 1; n_trials <= 2; n_trials++)
                for (int w = 0; w < 2; w++) {
                    snap_backend = b ? "mpi" : "cpu";
                    if (b && !mpi_here())
                        continue;
                    const char *window = w ? "1" : "0";
                    snaps k = {0};
                    bl_result *whole = run_snap(net, threads, 0, n_trials, steps, window, &k, NULL, 0);
                    bl_result *ref = run(net, "reference", 1, n_trials, steps);
                    assert_same(ref, whole); /* taking snapshots changes nothing */
                    uint64_t windows = (steps + (uint64_t)net->delay_steps - 1) / (uint64_t)net->delay_steps;
                    assert_int_equal(k.n, n_trials * ((windows - 1) / 7));
                    for (size_t a = 0; a < k.n; a += k.n / 3 + 1)
                        for (int rt = 1; rt <= (b ? 1 : 2); rt++) {
                            bl_result *want = NULL;
                            bl_error err;
                            assert_int_equal(bl_result_create(net, k.trial[a], 1, &want, &err), BL_OK);
                            bl_engine *e = NULL;
                            assert_int_equal(bl_engine_create(NULL, net, "reference", &e, &err), BL_OK);
                            assert_int_equal(bl_engine_run(e, k.trial[a], 1, steps, want, &err), BL_OK);
                            bl_engine_destroy(e);
                            bl_result *got = run_snap(net, rt, k.trial[a], 1, steps, window, NULL, &k, a);
                            assert_same(want, got);
                            bl_result_destroy(want);
                            bl_result_destroy(got);
                        }
                    /* Refusals: truncated, another trial's number, the reference backend. */
                    bl_engine *e = NULL;
                    bl_error err;
                    assert_int_equal(bl_engine_create(NULL, net, snap_backend, &e, &err), BL_OK);
                    assert_int_equal(bl_engine_resume_trial(e, k.trial[0], k.blob[0], k.len[0] - 1, &err), BL_ERR_INVALID);
                    assert_int_equal(bl_engine_resume_trial(e, k.trial[0] + 5, k.blob[0], k.len[0], &err), BL_ERR_INVALID);
                    bl_engine_destroy(e);
                    assert_int_equal(bl_engine_create(NULL, net, "reference", &e, &err), BL_OK);
                    assert_false(bl_engine_can_snapshot(e));
                    assert_int_equal(bl_engine_resume_trial(e, k.trial[0], k.blob[0], k.len[0], &err), BL_ERR_UNSUPPORTED);
                    bl_engine_destroy(e);
                    for (size_t a = 0; a < k.n; a++)
                        free(k.blob[a]);
                    bl_result_destroy(whole);
                    bl_result_destroy(ref);
                }
        bl_network_destroy(net);
        bl_stimulus_destroy(stim);
    }
    bl_connectome_destroy(c);
}

/* The partition update holds refractory slots still only when it must: when
 * the reset state (v_rst, +0) is a one-step fixed point below threshold (the
 * published parameters, v_reset = v_rest) a refractory neuron sits exactly
 * there, and updating it anyway changes no bit (lif_shiu2024.c,
 * shiu_update_body). Resets at rest, below it, between rest and threshold
 * and just under threshold, with a refractory period long enough that
 * refractory neurons stay in active slots for many updates, and inputs
 * strong enough that many spike: cpu equals the reference at 1-4 threads. */
static void reset_state_gating(void **unused)
{
    (void)unused;
    bl_connectome *c = synth_graph(12);
    int32_t pop[40];
    for (int i = 0; i < 40; i++)
        pop[i] = i * 13;
    const double resets[] = {-52.0, -60.0, -48.0, -45.5};
    const int fixed[] = {1, 0, 0, 0};
    for (size_t q = 0; q < sizeof resets / sizeof resets[0]; q++) {
        bl_lif_params p = preset("shiu2024");
        p.v_reset_mv = resets[q];
        p.refractory_ms = 6.0;
        p.w_syn_mv = 1.5;
        bl_shiu_consts k = bl_shiu_consts_make(&p);
        assert_int_equal(bl_shiu_reset_is_fixed_point(&k), fixed[q]);
        bl_stimulus *stim;
        bl_network *net = poisson_network(c, &p, &stim, pop, 40, 400.0, 200.0, NULL, 0, 77);
        bl_result *r = run_all(net, 2, 3000);
        assert_true(bl_result_n_events(r) > 500);
        bl_result_destroy(r);
        bl_network_destroy(net);
        bl_stimulus_destroy(stim);
    }
    bl_connectome_destroy(c);
}

/* The window path (kernel_shiu2024.c, part_window; docs/retirement.md, "One
 * pass per window"): run_all steps every window at once and one step at a
 * time, at 1-4 threads and 2 trials, against the reference, with inputs on a
 * window's first and last steps (events at 18w and 18w + 17, twice on the
 * same neuron and step, forced spikes there too), a Poisson population that
 * switches on and off mid-window, a forced population, refractory periods
 * longer than a window (22 steps) and shorter (5), resets at rest and away
 * from it (the gated update), trials that end 10 steps into their last
 * window, and a quiet stretch after which retired neurons are woken
 * mid-window (steps 9005 and 9009). */
static void window_path(void **unused)
{
    (void)unused;
    bl_connectome *c = synth_graph(13);
    int32_t in_pop[24], force_pop[6], ev[2 * 64], fev[2 * 16];
    for (int i = 0; i < 24; i++)
        in_pop[i] = 7 + i * 23;
    for (int i = 0; i < 6; i++)
        force_pop[i] = 11 + i * 97;
    size_t n_ev = 0, n_fev = 0;
    for (int w = 1; w <= 40; w += 3) { /* first and last step of window w, onto neurons 40 + w and 41 + w */
        ev[2 * n_ev] = 18 * w, ev[2 * n_ev + 1] = 40 + w, n_ev++;
        ev[2 * n_ev] = 18 * w + 17, ev[2 * n_ev + 1] = 41 + w, n_ev++;
    }
    ev[2 * n_ev] = 18 * 41 + 17, ev[2 * n_ev + 1] = 90, n_ev++; /* twice the same neuron and step */
    ev[2 * n_ev] = 18 * 41 + 17, ev[2 * n_ev + 1] = 90, n_ev++;
    const int32_t late[] = {9005, 9005, 9009}; /* mid-window, after the quiet stretch */
    for (int q = 0; q < 3; q++)
        for (int i = 0; i < 8; i++)
            ev[2 * n_ev] = late[q], ev[2 * n_ev + 1] = 100 + 50 * i + q, n_ev++;
    for (int w = 2; w <= 30; w += 4) {
        fev[2 * n_fev] = 18 * w, fev[2 * n_fev + 1] = 200 + w, n_fev++;
        fev[2 * n_fev] = 18 * w + 17, fev[2 * n_fev + 1] = 300 + w, n_fev++;
    }
    /* events sorted by (step, neuron) */
    for (size_t a = 0; a < n_ev; a++)
        for (size_t b = a + 1; b < n_ev; b++)
            if (ev[2 * b] < ev[2 * a] || (ev[2 * b] == ev[2 * a] && ev[2 * b + 1] < ev[2 * a + 1])) {
                int32_t t0 = ev[2 * a], t1 = ev[2 * a + 1];
                ev[2 * a] = ev[2 * b], ev[2 * a + 1] = ev[2 * b + 1], ev[2 * b] = t0, ev[2 * b + 1] = t1;
            }
    const double resets[] = {-52.0, -60.0, -48.0};
    const double refractory[] = {2.2, 2.2, 0.5};
    for (int q = 0; q < 3; q++) {
        bl_lif_params p = preset("shiu2024");
        p.v_reset_mv = resets[q];
        p.refractory_ms = refractory[q];
        bl_stimulus *stim;
        bl_network *net = NULL;
        bl_error err;
        assert_int_equal(bl_stimulus_create(&stim, &err), BL_OK);
        assert_int_equal(bl_stimulus_add_poisson(stim, in_pop, 24, 400.0, 3.3, 80.1, &err), BL_OK);
        assert_int_equal(bl_stimulus_add_poisson(stim, force_pop, 6, 150.0, 0.0, 60.0, &err), BL_OK);
        assert_int_equal(bl_stimulus_set_force(stim, 1, 1, &err), BL_OK);
        assert_int_equal(bl_stimulus_add_events(stim, ev, n_ev, &err), BL_OK);
        assert_int_equal(bl_stimulus_add_forced_events(stim, fev, n_fev, &err), BL_OK);
        if (bl_network_create(c, &p, stim, NULL, 0, 5, &net, &err))
            fail_msg("%s", err.message);
        for (int len = 0; len < 2; len++) {
            bl_result *r = run_all(net, 2, len ? 9100 : 1000);
            assert_true(bl_result_n_events(r) > 200);
            bl_result_destroy(r);
        }
        bl_network_destroy(net);
        bl_stimulus_destroy(stim);
    }
    bl_connectome_destroy(c);
}

/* ---- retirement (docs/retirement.md) ---- */

static bl_shiu_consts shiu_consts(void)
{
    bl_lif_params p = preset("shiu2024");
    return bl_shiu_consts_make(&p);
}

/* The integer map on subnormal units is the hardware's multiply, bit for bit. */
/* The default window mode (BL_WINDOW_TUNE) probes both paths at the start
 * of every cycle, then keeps the one it measured cheaper: both run, and the
 * partition's state after any mix of them is the step-by-step state. */
static void window_tune(void **unused)
{
    (void)unused;
    bl_connectome *c = synth_graph(13);
    int32_t pop[40];
    for (int i = 0; i < 40; i++)
        pop[i] = 3 + i * 14;
    bl_stimulus *stim;
    bl_network *net = NULL;
    bl_error err;
    assert_int_equal(bl_stimulus_create(&stim, &err), BL_OK);
    assert_int_equal(bl_stimulus_add_poisson(stim, pop, 40, 300.0, 0.0, 1e9, &err), BL_OK);
    bl_lif_params lp = preset("shiu2024");
    if (bl_network_create(c, &lp, stim, NULL, 0, 9, &net, &err))
        fail_msg("%s", err.message);
    const int64_t n = (int64_t)bl_connectome_n_neurons(c), delay = net->delay_steps;
    const int64_t windows = 2 * BL_TUNE_CYCLE + 5;
    size_t sz = 0;
    void *state[2][2] = {{0}};
    for (int mode = 0; mode < 2; mode++) { /* BL_WINDOW_NEVER, then BL_WINDOW_TUNE */
        partition part;
        memset(&part, 0, sizeof part);
        assert_true(bl_partition_alloc(&part, net, 0, (int32_t)n));
        part.window_mode = mode ? BL_WINDOW_TUNE : BL_WINDOW_NEVER;
        bl_partition_reset(&part, net, 1);
        size_t cursor = 0;
        for (int64_t w = 0; w < windows; w++) /* no recurrent arrivals: the same for both modes */
            bl_partition_run_window(net, 1, &part, 0, w * delay, (w + 1) * delay, NULL, NULL, &cursor);
        assert_false(part.failed);
        assert_true(bl_partition_sane(&part, NULL));
        if (mode) {
            assert_int_equal(part.tune.taken[0] + part.tune.taken[1], windows);
            /* two whole probes each way at least (cycles 0 and 1), whichever wins */
            assert_true(part.tune.taken[0] >= BL_TUNE_PROBE && part.tune.taken[1] >= BL_TUNE_PROBE);
        } else {
            assert_int_equal(part.tune.taken[0] + part.tune.taken[1], 0);
        }
        bl_partition_settle(&part);
        sz = part.k->field[0].size;
        for (int f = 0; f < 2; f++) {
            state[mode][f] = malloc((size_t)n * sz);
            memcpy(state[mode][f], f ? part.g : part.v, (size_t)n * sz);
        }
        bl_partition_free(&part, delay);
    }
    for (int f = 0; f < 2; f++) {
        assert_memory_equal(state[0][f], state[1][f], (size_t)n * sz);
        free(state[0][f]);
        free(state[1][f]);
    }
    bl_network_destroy(net);
    bl_stimulus_destroy(stim);
    bl_connectome_destroy(c);
}

static void retire_subnormal_map(void **unused)
{
    (void)unused;
    bl_shiu_consts k = shiu_consts();
    uint64_t x = 88172645463325252ull;
    for (int t = 0; t < 200000; t++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t units = t < 64 ? (uint64_t)t : t < 128 ? (UINT64_C(1) << 52) - (uint64_t)(t - 63) : x >> (12 + t % 50);
        double g = ldexp((double)units, -1074);
        volatile double vg = g; /* the multiply itself, at run time */
        double hw = k.L2 * vg;
        assert_true(ldexp(hw, 1074) == (double)bl_shiu_subnormal_step(&k, units));
    }
    /* fl(SPEC_L2 * k units) = k for k <= 25: g sticks at 25 units (the spec) */
    assert_int_equal(bl_shiu_subnormal_step(&k, 25), 25);
    assert_int_equal(bl_shiu_subnormal_step(&k, 26), 25);
}

/* g_after equals the plain iteration, across the normal range, into the
 * subnormals and onto their fixed point, for either sign. */
static void retire_g_after(void **unused)
{
    (void)unused;
    bl_shiu_consts k = shiu_consts();
    const double starts[] = {0.275e-3, -0.55e-3, 68.75e-3, 1e-300, -3 * DBL_MIN, 5e-324, 0.0, -0.0};
    for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++) {
        volatile double g = starts[i];
        for (int64_t n = 0; n <= 40000; n++) {
            if (n % 997 == 0 || n < 50 || (n > 35000 && n % 13 == 0)) {
                double r = bl_shiu_g_after(&k, starts[i], n);
                assert_true(b64(r) == b64(g));
            }
            g = k.L2 * g;
        }
    }
    /* the absorption limit: below it an arriving w_syn (the smallest weight)
     * swallows g whole, either sign; at four times it, not always */
    double lim = bl_shiu_absorb_limit(&k), w = k.w_syn;
    double below = nextafter(lim, 0.0);
    assert_true(w + below == w && w - below == w && -w + below == -w);
    assert_true(w + 2 * lim != w || w - 2 * lim != w);
}

/* Neurons driven into every regime of the rule, for 4.1 simulated seconds
 * (long enough for g to reach its subnormal fixed point), on the reference,
 * and on cpu at 1-4 threads; and one partition stepped by hand to see that
 * neurons really leave the active set while g is still far from 0. Sources
 * 0-3 spike one step after their events; neurons 4-9 listen:
 *   4: one excitatory input (source 0 at 20), silence until g sits on its
 *      subnormal fixed point, then input (source 10 at 40,019);
 *   5: one inhibitory input (source 1 at 20), then silence to the end;
 *   6: inputs before g is absorbed, after, after v is fixed (retired), and
 *      after g's subnormal fixed point (source 2);
 *   7: as 4, then zero-weight input (silenced source 3) while retired, in the
 *      normal and the subnormal range of g;
 *   8: as 4, then explicit events (v jumps: a retired neuron woken with its
 *      exact g) at 9,000 and 39,000;
 *   9: spikes (reset, refractory, retired at once), then input again;
 *   6 is also forced to spike (docs/forcing.md) at 30,000 while retired. */
/* The schedule above in shiu2024's time scale; phase4c's regimes come about
 * 7.5 times sooner (inert after ~1,100 steps, g on its subnormal fixed point
 * after ~4,900), so its times are scaled by 2/15. */
/* The retirement regimes' network (see retire_regimes_of), on a time scale
 * num/den of shiu2024's. */
static bl_network *retire_network(const char *name, int32_t num, int32_t den, bl_connectome **c, bl_stimulus **stim)
{
    edge e[] = {{0, 4, 3},  {0, 6, 2}, {0, 7, 3}, {0, 8, 3}, {1, 5, -4}, {1, 9, 1},
                {2, 6, 1},  {2, 9, 300}, {3, 7, 5}, {10, 4, 2}};
    *c = graph(11, e, 10);
    int32_t ev[64];
    size_t n = 0;
#define EV(step, neuron) (ev[2 * n] = (step) * num / den, ev[2 * n + 1] = (neuron), n++)
    EV(0, 0), EV(0, 1), EV(0, 3);
    EV(1400, 2), EV(3000, 2), EV(8000, 2), EV(38000, 2);
    EV(7000, 3), EV(39000, 3), EV(40000, 10);
    EV(9000, 8), EV(39000, 8);
#undef EV
    /* events must be sorted by step */
    for (size_t a = 0; a < n; a++)
        for (size_t b = a + 1; b < n; b++)
            if (ev[2 * b] < ev[2 * a] || (ev[2 * b] == ev[2 * a] && ev[2 * b + 1] < ev[2 * a + 1])) {
                int32_t t0 = ev[2 * a], t1 = ev[2 * a + 1];
                ev[2 * a] = ev[2 * b], ev[2 * a + 1] = ev[2 * b + 1], ev[2 * b] = t0, ev[2 * b + 1] = t1;
            }
    bl_lif_params p = preset(name);
    int32_t sil[] = {3};
    /* 6 is also forced to spike at 30,000, while retired (its exact g first) */
    int32_t forced[] = {30000 * num / den, 6};
    bl_network *net = NULL;
    bl_error err;
    assert_int_equal(bl_stimulus_create(stim, &err), BL_OK);
    assert_int_equal(bl_stimulus_add_events(*stim, ev, n, &err), BL_OK);
    assert_int_equal(bl_stimulus_add_forced_events(*stim, forced, 1, &err), BL_OK);
    if (bl_network_create(*c, &p, *stim, sil, 1, 7, &net, &err))
        fail_msg("%s", err.message);
    return net;
}

static void retire_regimes_of(const char *name, int32_t num, int32_t den, int64_t retire_lo, int64_t retire_hi)
{
    const int shiu = !strcmp(name, "shiu2024");
    bl_connectome *c;
    bl_stimulus *stim;
    bl_network *net = retire_network(name, num, den, &c, &stim);
    const uint64_t steps = (uint64_t)(41000 * num / den);
    bl_result *ref = run_all(net, 1, steps);
    int32_t s[16];
    assert_true(spikes_of(ref, 9, s, 16) >= 1); /* 9 spikes on input from 2 (reset, refractory) */
    assert_true(spikes_of(ref, 6, s, 16) >= 1 && s[0] == 30000 * num / den);
    /* 5 ends with g on its subnormal fixed point (25 units), v on its own */
    if (shiu)
        assert_true(b64(g64(ref, 5)) == b64(-25 * 0x1p-1074) && b64(v64(ref, 5)) != b64(V0));
    else
        assert_true(b32(g32(ref, 5)) == b32(-25 * 0x1p-149f) && b32(v32(ref, 5)) != b32(-52.0f));

    /* by hand: neuron 4 leaves the active set once inert, long before its g
     * reaches the subnormals, and the settled state is the reference's */
    partition part;
    memset(&part, 0, sizeof part);
    assert_true(bl_partition_alloc(&part, net, 0, 11));
    bl_partition_reset(&part, net, 1);
    size_t cursor = 0;
    int64_t retired_at = -1;
    for (int64_t step = 0; step < (int64_t)steps; step++) {
        const int32_t *arr = NULL;
        uint64_t n_arr = 0;
        int64_t j = step - net->delay_steps;
        i32_list *w = &part.window[step % net->delay_steps];
        /* window[j % delay] holds step j's spikers until step j + delay reads them */
        static int32_t held[16]; /* the step's spikers, before this step overwrites them */
        if (j >= 0) {
            n_arr = w->n;
            if (n_arr)
                memcpy(held, w->v, n_arr * sizeof *held);
            arr = held;
        }
        bl_partition_step(net, 1, &part, 0, step, arr, n_arr, &cursor, w);
        assert_true(bl_partition_sane(&part, NULL));
        if (retired_at < 0 && step > 100 && part.slot_of[4] < 0)
            retired_at = step;
    }
    bl_partition_settle(&part);
    assert_true(retired_at > retire_lo && retired_at < retire_hi);
    size_t sz = bl_dtype_size(bl_result_state_dtype(ref));
    assert_memory_equal(part.v, bl_result_final_v(ref), 11 * sz);
    assert_memory_equal(part.g, bl_result_final_g(ref), 11 * sz);
    bl_partition_free(&part, net->delay_steps);
    bl_result_destroy(ref);
    bl_network_destroy(net);
    bl_stimulus_destroy(stim);
    bl_connectome_destroy(c);
}

static void retire_regimes(void **unused)
{
    (void)unused;
    retire_regimes_of("shiu2024", 1, 1, 1000, 8000);
}

static void retire_regimes_phase4c(void **unused)
{
    (void)unused;
    retire_regimes_of("phase4c", 2, 15, 500, 3000);
}

/* State probes of retired neurons (part_peek rebuilds their g, and stores it
 * back so that the next sample replays only the steps since this one): every
 * neuron of the retirement regimes probed every `every` steps, cpu at 1-4
 * threads equal to the reference, bit for bit, sample for sample. */
static bl_result *run_probed(const bl_network *net, const char *backend, int threads, uint64_t n_steps,
                             uint64_t every)
{
    bl_engine *e = NULL;
    bl_result *r = NULL;
    bl_error err;
    int32_t all[11];
    for (int32_t i = 0; i < 11; i++)
        all[i] = i;
    assert_int_equal(bl_engine_create(NULL, net, backend, &e, &err), BL_OK);
    assert_int_equal(bl_engine_set_threads(e, threads, &err), BL_OK);
    assert_int_equal(bl_result_create(net, 0, 1, &r, &err), BL_OK);
    assert_int_equal(bl_result_set_probes(r, all, 11, every, n_steps, &err), BL_OK);
    if (bl_engine_run(e, 0, 1, n_steps, r, &err))
        fail_msg("%s x%d: %s", backend, threads, err.message);
    bl_engine_destroy(e);
    return r;
}

static void retire_probes(void **unused)
{
    (void)unused;
    const char *names[] = {"shiu2024", "phase4c"};
    const int32_t num[] = {1, 2}, den[] = {1, 15};
    for (int m = 0; m < 2; m++) {
        bl_connectome *c;
        bl_stimulus *stim;
        bl_network *net = retire_network(names[m], num[m], den[m], &c, &stim);
        const uint64_t steps = (uint64_t)(41000 * num[m] / den[m]), every[] = {1, 7};
        for (int q = 0; q < 2; q++) {
            bl_result *ref = run_probed(net, "reference", 1, steps, every[q]);
            uint64_t samples;
            size_t np, sz = bl_dtype_size(bl_result_state_dtype(ref));
            const void *rv = bl_result_probe_v(ref, &samples, &np);
            assert_int_equal(samples, steps / every[q]);
            for (int t = 1; t <= 4; t++) {
                bl_result *r = run_probed(net, "cpu", t, steps, every[q]);
                assert_same(ref, r);
                uint64_t s2;
                size_t np2;
                assert_memory_equal(bl_result_probe_v(r, &s2, &np2), rv, samples * np * sz);
                assert_memory_equal(bl_result_probe_g(r), bl_result_probe_g(ref), samples * np * sz);
                bl_result_destroy(r);
            }
            bl_result_destroy(ref);
        }
        bl_network_destroy(net);
        bl_stimulus_destroy(stim);
        bl_connectome_destroy(c);
    }
}

/* phase4c's g map: the integer form in the float32 subnormals is the
 * hardware's multiply, and g_after is the plain iteration. */
static void retire_p4c_g_after(void **unused)
{
    (void)unused;
    bl_lif_params p = preset("phase4c");
    bl_p4c_consts k = bl_p4c_consts_make(&p);
    for (uint32_t units = 0; units < (UINT32_C(1) << 23); units += units < 4096 ? 1 : 37) {
        volatile float g = ldexpf((float)units, -149);
        float hw = bl_p4c_synapse(&k, g, 0.0f);
        assert_true(ldexpf(hw, 149) == (float)bl_p4c_subnormal_step(&k, units));
    }
    const float starts[] = {0.275f, -0.55f, 68.75f, 1e-30f, -3 * FLT_MIN, 1e-45f, 0.0f, -0.0f};
    for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++) {
        volatile float g = starts[i];
        for (int64_t n = 0; n <= 8000; n++) {
            assert_true(b32(bl_p4c_g_after(&k, starts[i], n)) == b32(g));
            g = bl_p4c_synapse(&k, g, 0.0f);
        }
    }
}

/* ---- a new model row ---- */

static void toy_model_row(void **unused)
{
    (void)unused;
    bl_preset id;
    bl_error err;
    assert_int_equal(bl_model_register(&bl_test_toy_model, &id, &err), BL_OK);
    assert_int_equal(bl_model_register(&bl_test_toy_model, &id, &err), BL_ERR_EXISTS);
    bl_lif_params p;
    assert_int_equal(bl_lif_params_preset("toy", &p, &err), BL_OK);
    assert_int_equal(p.preset, id);
    assert_string_equal(bl_preset_name(id), "toy");
    edge e[] = {{0, 1, 2}, {0, 2, 1}, {1, 2, 1}, {1, 3, -1}, {2, 0, 1}, {2, 3, 3}, {3, 1, 2}};
    bl_connectome *c = graph(5, e, 7);
    int32_t ev[] = {0, 0, 3, 4, 40, 0};
    bl_stimulus *stim;
    bl_network *net = network(c, &p, &stim, ev, 3, NULL, 0);
    assert_ptr_equal(net->model, &bl_test_toy_model);
    bl_result *r = run_all(net, 2, 200);
    /* hand trace of the toy: neuron 0 is kicked to 4 at step 0, so it spikes
     * at 0; neuron 4 (no edges) at 3, then rests. */
    int32_t s[64];
    assert_true(spikes_of(r, 0, s, 64) >= 2 && s[0] == 0);
    assert_int_equal(spikes_of(r, 4, s, 64), 1);
    assert_int_equal(s[0], 3);
    assert_int_equal(bl_result_state_dtype(r), BL_DTYPE_FLOAT64);
    bl_result_destroy(r);
    bl_network_destroy(net);
    bl_stimulus_destroy(stim);
    bl_connectome_destroy(c);
}

/* The backend rows answer what engine.c, the plans and the runners ask of
 * a backend (BL_BACKEND_*, bl_backend_caps), never its name: each row's
 * flags; bl_engine_backends() is the rows that run trials and are not
 * job-level; an unknown name is refused naming it and the known ones; and a
 * model whose partition kernel cannot run a network (the toy's row with a
 * part_supports that says no) runs on the reference backend where the row
 * falls back (cpu, auto: the report names the backend asked and why) and
 * is refused, naming the backend, where it does not (mpi). */
static int toy_part_never(const bl_network *net, const char **why)
{
    (void)net;
    *why = "the test says no";
    return 0;
}

static void backend_rows(void **unused)
{
    (void)unused;
    const unsigned ref = bl_backend_caps("reference"), cpu = bl_backend_caps("cpu"), aut = bl_backend_caps("auto"),
                   mpi = bl_backend_caps("mpi");
    assert_int_equal(ref, BL_BACKEND_REF_KERNEL | BL_BACKEND_PROBES);
    assert_int_equal(cpu, BL_BACKEND_PART_KERNEL | BL_BACKEND_FALLS_BACK | BL_BACKEND_PROBES);
    assert_int_equal(aut, BL_BACKEND_CHOOSES | BL_BACKEND_FALLS_BACK);
    assert_int_equal(mpi, bl_backend_known("mpi", NULL, 0)
                              ? (unsigned)(BL_BACKEND_PART_KERNEL | BL_BACKEND_RUNS_PARTS | BL_BACKEND_JOB) : 0u);
    assert_int_equal(bl_backend_caps(NULL), ref);
    assert_int_equal(bl_backend_caps("gpu"), 0);
    assert_int_equal(bl_backend_caps("Reference"), 0);
    /* bl_engine_backends(): the known rows that run trials and are not job-level, in order */
    char known[128];
    assert_false(bl_backend_known("gpu", known, sizeof known));
    assert_false(bl_backend_known(NULL, NULL, 0));
    assert_string_equal(known, mpi ? "auto, reference, cpu, mpi" : "auto, reference, cpu");
    const char *const *names = bl_engine_backends();
    size_t n = 0;
    for (char *tok = strtok(known, ", "); tok; tok = strtok(NULL, ", ")) {
        unsigned c = bl_backend_caps(tok);
        assert_true(bl_backend_known(tok, NULL, 0));
        if (!(c & (BL_BACKEND_CHOOSES | BL_BACKEND_JOB))) {
            assert_non_null(names[n]);
            assert_string_equal(names[n], tok);
            n++;
        }
    }
    assert_null(names[n]);
    /* an unknown name */
    bl_lif_params p = preset("shiu2024");
    edge e[] = {{0, 1, 2}, {1, 2, 1}};
    bl_connectome *c = graph(3, e, 2);
    bl_stimulus *stim;
    bl_network *net = network(c, &p, &stim, NULL, 0, NULL, 0);
    bl_engine *eng = NULL;
    bl_error err;
    assert_int_equal(bl_engine_create(NULL, net, "gpu", &eng, &err), BL_ERR_INVALID);
    assert_null(eng);
    assert_non_null(strstr(err.message, "unknown backend 'gpu' (known: auto, reference, cpu"));
    bl_network_destroy(net);
    bl_stimulus_destroy(stim);
    /* a model row whose partition kernel says no */
    static bl_model row;
    row = bl_test_toy_model;
    row.name = "toy_ref_only";
    row.part_supports = toy_part_never;
    bl_preset id;
    assert_int_equal(bl_model_register(&row, &id, &err), BL_OK);
    assert_int_equal(bl_lif_params_preset("toy_ref_only", &p, &err), BL_OK);
    int32_t ev[] = {0, 0};
    net = network(c, &p, &stim, ev, 1, NULL, 0);
    const char *asked[] = {"reference", "cpu", "auto"};
    for (int k = 0; k < 3; k++) {
        assert_int_equal(bl_engine_create(NULL, net, asked[k], &eng, &err), BL_OK);
        assert_string_equal(bl_engine_backend(eng), "reference");
        const char *rep = bl_engine_auto_report(eng);
        if (k == 0) {
            assert_string_equal(rep, "");
        } else {
            char want[160];
            snprintf(want, sizeof want, "model 'toy_ref_only': the test says no: backend '%s' runs as reference",
                     asked[k]);
            if (!strstr(rep, want))
                fail_msg("%s: report %s lacks %s", asked[k], rep, want);
        }
        bl_engine_destroy(eng);
    }
    if (mpi) {
        assert_int_equal(bl_engine_create(NULL, net, "mpi", &eng, &err), BL_ERR_UNSUPPORTED);
        assert_non_null(strstr(err.message, "backend 'mpi': model 'toy_ref_only' runs on the reference backend only "
                                            "(the test says no; use backend \"auto\", \"reference\" or \"cpu\")"));
    }
    bl_network_destroy(net);
    bl_stimulus_destroy(stim);
    bl_connectome_destroy(c);
}

/* ---- the invariant checkers catch what they promise ---- */

static void sane_checkers(void **unused)
{
    (void)unused;
    bl_error why = {0};
    edge e[] = {{0, 1, 2}, {0, 2, 1}, {1, 2, -1}};
    bl_connectome *c = graph(3, e, 3);
    assert_true(bl_connectome_sane(c, &why));
    c->targets[1] = 1; /* not ascending */
    assert_false(bl_connectome_sane(c, &why));
    assert_int_equal(why.status, BL_ERR_INTERNAL);
    assert_non_null(strstr(why.message, "row 0 targets not ascending and unique at edge 1"));
    c->targets[1] = 2;
    c->counts[2] = 0;
    assert_false(bl_connectome_sane(c, &why));
    assert_non_null(strstr(why.message, "edge 2 (row 1) has count 0"));
    c->counts[2] = -1;
    c->offsets[3] = 2;
    assert_false(bl_connectome_sane(c, NULL));
    c->offsets[3] = 3;
    assert_true(bl_connectome_sane(c, NULL));

    bl_lif_params p = preset("shiu2024");
    bl_stimulus *stim;
    int32_t ev[] = {0, 0, 0, 2};
    bl_network *net = network(c, &p, &stim, ev, 2, NULL, 0);
    partition part;
    memset(&part, 0, sizeof part);
    assert_true(bl_partition_alloc(&part, net, 0, 3));
    bl_partition_reset(&part, net, 1);
    size_t cursor = 0;
    bl_partition_step(net, 1, &part, 0, 0, NULL, 0, &cursor, &part.window[0]);
    assert_int_equal(part.n_active, 2);
    assert_true(bl_partition_sane(&part, &why));
    part.slot_of[2] = 0; /* two neurons claim slot 0 */
    assert_false(bl_partition_sane(&part, &why));
    assert_non_null(strstr(why.message, "holds neuron 2, whose slot_of is 0"));
    part.slot_of[2] = 1;
    part.act_neuron[1] = 1; /* a slot points at a resting neuron */
    assert_false(bl_partition_sane(&part, &why));
    assert_non_null(strstr(why.message, "active slot 1 holds neuron 1"));
    part.act_neuron[1] = 2;
    assert_true(bl_partition_sane(&part, NULL));
    part.window[1].n = 2;
    bl_list_reserve(&part.window[1], 2);
    part.window[1].v[0] = 2, part.window[1].v[1] = 1; /* window not ascending */
    assert_false(bl_partition_sane(&part, &why));
    assert_non_null(strstr(why.message, "spike window 1 entry 1 (neuron 1)"));
    part.window[1].v[0] = 0;
    assert_true(bl_partition_sane(&part, NULL));
    bl_partition_free(&part, net->delay_steps);
    bl_network_destroy(net);
    bl_stimulus_destroy(stim);
    bl_connectome_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shiu_spike_delay),
        cmocka_unit_test(cancel_inside_a_trial),
        cmocka_unit_test(snapshot_resume),
        cmocka_unit_test(shiu_refractory),
        cmocka_unit_test(shiu_silencing),
        cmocka_unit_test(phase4c_spike_delay),
        cmocka_unit_test(exact_rest_skip),
        cmocka_unit_test(no_skip_without_fixed_point),
        cmocka_unit_test(delay_ring_edges),
        cmocka_unit_test(reference_vs_cpu_threads),
        cmocka_unit_test(reset_state_gating),
        cmocka_unit_test(window_path),
        cmocka_unit_test(window_tune),
        cmocka_unit_test(retire_subnormal_map),
        cmocka_unit_test(retire_g_after),
        cmocka_unit_test(retire_regimes),
        cmocka_unit_test(retire_regimes_phase4c),
        cmocka_unit_test(retire_probes),
        cmocka_unit_test(retire_p4c_g_after),
        cmocka_unit_test(toy_model_row),
        cmocka_unit_test(backend_rows),
        cmocka_unit_test(sane_checkers),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
