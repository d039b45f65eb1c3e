/* The "equations" row's partition kernel (src/models/eq_part.c) against its
 * reference kernel (eq_row.c): spikes, counts and final state bit for bit on
 * the cpu backend at 1-4 threads (partitions split down to one edge each),
 * with retirement on and off (BL_EQ_RETIRE=0), for the issue-23 shiu2024
 * block, a conductance-based model (euler, on_pre choosing g or gi by the
 * weight's sign) and adversarial cases of the retirement rule
 * (docs/retirement.md, "Retirement for equation models"):
 *   - inputs (events, forced spikes) arriving at the very step a neuron
 *     would rest, and on the steps around it;
 *   - neurons resting at a fixed point that is not the rest state (euler's
 *     floating-point fixed point short of E_L, a decayed g that no longer
 *     changes);
 *   - a model whose drift reads t never retires (and would be wrong if it
 *     did: its drift starts after the network has gone quiet);
 *   - a refractory neuron held still by `(unless refractory)` at a reset
 *     below rest: its update is the identity, but it is not at rest;
 *   - a refractory period longer than the delay, and state probes of
 *     resting neurons every step;
 *   - injected currents of every kind (src/models/eq_current.c), applied
 *     by the partition kernel as the reference applies them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "brainlesslab/context.h"
#include "brainlesslab/engine.h"
#include "brainlesslab/eqmodel.h"
#include "brainlesslab/mpi.h"
#include "brainlesslab/synth.h"
#include "engine/snapshot.h"
#include "models/eq_part.h"
#include "models/eq_row.h"

static const double DT_MS = 0.1;

/* ---- helpers ---- */

static bl_eq_model *compile(const bl_eq_source *s)
{
    bl_eq_model *m = NULL;
    bl_error err;
    if (bl_eq_model_compile(s, DT_MS * 0.001, &m, &err))
        fail_msg("compile: %s", err.message);
    assert_int_equal(bl_eq_row_check(m, &err), BL_OK);
    return m;
}

/* The plan reader's parameters for a model from equations (plan_connectome.c). */
static bl_lif_params params_of(const bl_eq_model *m, double delay_ms)
{
    bl_lif_params p;
    bl_error err;
    assert_int_equal(bl_lif_params_preset("equations", &p, &err), BL_OK);
    int64_t rfc = bl_eq_row_refractory_steps(m);
    p.delay_ms = delay_ms;
    p.refractory_ms = rfc > 0 ? (double)rfc * DT_MS : 0.0;
    p.equations = m;
    if (bl_lif_params_validate(&p, &err))
        fail_msg("params: %s", err.message);
    return p;
}

static bl_connectome *synth(uint64_t n, double degree, uint64_t seed)
{
    bl_synth_params sp;
    bl_synth_defaults(&sp);
    sp.n_neurons = n;
    sp.mean_out_degree = degree;
    sp.seed = seed;
    bl_connectome *c = NULL;
    bl_error err;
    assert_int_equal(bl_synth_generate(&sp, &c, &err), BL_OK);
    return c;
}

typedef struct stim_spec {
    const int32_t *pop;
    size_t n_pop;
    double rate_hz, start_ms, stop_ms;
    const int32_t *events, *forced; /* (step, neuron) pairs, step-sorted */
    size_t n_events, n_forced;
} stim_spec;

static bl_network *network(const bl_connectome *c, const bl_lif_params *p, const stim_spec *s, bl_stimulus **stim)
{
    bl_error err;
    bl_network *net = NULL;
    assert_int_equal(bl_stimulus_create(stim, &err), BL_OK);
    if (s->n_pop)
        assert_int_equal(bl_stimulus_add_poisson(*stim, s->pop, s->n_pop, s->rate_hz, s->start_ms, s->stop_ms, &err),
                         BL_OK);
    if (s->n_events)
        assert_int_equal(bl_stimulus_add_events(*stim, s->events, s->n_events, &err), BL_OK);
    if (s->n_forced)
        assert_int_equal(bl_stimulus_add_forced_events(*stim, s->forced, s->n_forced, &err), BL_OK);
    if (bl_network_create(c, p, *stim, NULL, 0, 17, &net, &err))
        fail_msg("network: %s", err.message);
    return net;
}

/* n_trials x n_steps on a backend, BL_EQ_RETIRE = retire ("1" or "0"),
 * probing `n_probe` neurons from 0 every step when n_probe > 0. */
static bl_result *run(const bl_network *net, const char *backend, int threads, uint32_t n_trials, uint64_t n_steps,
                      const char *retire, size_t n_probe)
{
    bl_engine *e = NULL;
    bl_result *r = NULL;
    bl_error err;
    assert_int_equal(setenv("BL_EQ_RETIRE", retire, 1), 0);
    if (bl_engine_create(NULL, net, backend, &e, &err))
        fail_msg("engine %s: %s", backend, err.message);
    assert_int_equal(unsetenv("BL_EQ_RETIRE"), 0);
    assert_string_equal(bl_engine_backend(e), backend); /* no fallback to the reference */
    assert_int_equal(bl_engine_set_threads(e, threads, &err), BL_OK);
    assert_int_equal(bl_result_create(net, 0, n_trials, &r, &err), BL_OK);
    if (n_probe) {
        int32_t probes[64];
        assert_true(n_probe <= 64);
        for (size_t k = 0; k < n_probe; k++)
            probes[k] = (int32_t)k;
        assert_int_equal(bl_result_set_probes(r, probes, n_probe, 1, n_steps, &err), BL_OK);
    }
    if (bl_engine_run(e, 0, n_trials, n_steps, r, &err))
        fail_msg("%s x%d: %s", backend, threads, err.message);
    bl_engine_destroy(e);
    return r;
}

static void assert_same(const bl_result *a, const bl_result *b, size_t n_probe)
{
    uint64_t ne = bl_result_n_events(a), cells = bl_result_n_trials(a) * bl_result_n_neurons(a);
    assert_int_equal(ne, bl_result_n_events(b));
    assert_memory_equal(bl_result_event_trials(a), bl_result_event_trials(b), ne * sizeof(int32_t));
    assert_memory_equal(bl_result_event_steps(a), bl_result_event_steps(b), ne * sizeof(int32_t));
    assert_memory_equal(bl_result_event_neurons(a), bl_result_event_neurons(b), ne * sizeof(int32_t));
    assert_memory_equal(bl_result_counts(a), bl_result_counts(b), cells * sizeof(int32_t));
    assert_memory_equal(bl_result_final_v(a), bl_result_final_v(b), cells * sizeof(double));
    assert_memory_equal(bl_result_final_g(a), bl_result_final_g(b), cells * sizeof(double));
    if (n_probe) {
        uint64_t sa, sb;
        size_t pa, pb;
        const void *va = bl_result_probe_v(a, &sa, &pa), *vb = bl_result_probe_v(b, &sb, &pb);
        assert_int_equal(sa, sb);
        assert_memory_equal(va, vb, sa * pa * sizeof(double));
        assert_memory_equal(bl_result_probe_g(a), bl_result_probe_g(b), sa * pa * sizeof(double));
    }
}

/* The reference, then cpu at 1-4 threads with retirement on and off, all
 * equal. Returns the reference; *skipped: neuron-steps retirement skipped
 * in the runs with it on. */
static bl_result *run_all(const bl_network *net, uint32_t n_trials, uint64_t n_steps, size_t n_probe,
                          uint64_t *skipped)
{
    bl_result *ref = run(net, "reference", 1, n_trials, n_steps, "1", n_probe);
    *skipped = 0;
    for (int t = 1; t <= 4; t++)
        for (int retire = 1; retire >= 0; retire--) {
            uint64_t before = bl_eq_part_skipped();
            bl_result *r = run(net, "cpu", t, n_trials, n_steps, retire ? "1" : "0", n_probe);
            uint64_t after = bl_eq_part_skipped();
            if (retire)
                *skipped += after - before;
            else
                assert_int_equal(after, before); /* BL_EQ_RETIRE=0: every neuron every step */
            assert_same(ref, r, n_probe);
            bl_result_destroy(r);
        }
    return ref;
}

/* What each case builds: a model compiled from `src`, its parameters with
 * `delay_ms`, a synthetic graph of n neurons (mean out-degree `degree`,
 * `seed`) and a network on it driven by `s`. */
typedef struct fixture {
    bl_eq_model *m;
    bl_lif_params p;
    bl_connectome *c;
    bl_stimulus *stim;
    bl_network *net;
} fixture;

static void fixture_build(fixture *f, const bl_eq_source *src, double delay_ms, uint64_t n, double degree,
                          uint64_t seed, const stim_spec *s)
{
    f->m = compile(src);
    f->p = params_of(f->m, delay_ms);
    f->c = synth(n, degree, seed);
    f->net = network(f->c, &f->p, s, &f->stim);
}

/* The network, its stimulus and graph; the model stays (f->m). */
static void fixture_free_network(fixture *f)
{
    bl_network_destroy(f->net);
    bl_stimulus_destroy(f->stim);
    bl_connectome_destroy(f->c);
}

static void fixture_free(fixture *f)
{
    fixture_free_network(f);
    bl_eq_model_destroy(f->m);
}

/* ---- models ---- */

static const char *const shiu_names[] = {"v_0", "v_rst", "v_th", "t_mbr", "tau", "t_rfc", "w_syn", "f_poi"};
static const char *const shiu_values[] = {"-52 mV", "-52 mV", "-45 mV", "20 ms", "5 ms", "2.2 ms", "0.275 mV", "250"};
static const char *const shiu_init_names[] = {"v"};
static const char *const shiu_init_values[] = {"-52 mV"};

/* The issue-23 block (shiu2024 written out); `equations` may be replaced. */
static bl_eq_source shiu_source(const char *equations)
{
    bl_eq_source s;
    memset(&s, 0, sizeof s);
    s.method = "linear";
    s.equations = equations ? equations
                            : "dv/dt = (v_0 - v + g) / t_mbr : volt (unless refractory)\n"
                              "dg/dt = -g / tau : volt (unless refractory)\n";
    s.threshold = "v > v_th";
    s.reset = "v = v_rst; g = 0*mV";
    s.refractory = "t_rfc";
    s.on_pre = "g += w";
    s.weight = "count * sign * w_syn";
    s.on_input = "v += f_poi * w_syn";
    s.n_params = 8;
    s.param_names = shiu_names;
    s.param_values = shiu_values;
    s.n_init = 1;
    s.init_names = shiu_init_names;
    s.init_values = shiu_init_values;
    return s;
}

/* Conductance-based, euler: excitatory g and inhibitory gi chosen by the
 * sign of the edge's weight, a refractory period (3 ms) longer than the
 * delay (1 ms), and an initial v away from E_L, so that neurons settle on
 * euler's floating-point fixed point (not E_L) and rest there. */
static const char *const coba_names[] = {"E_L", "E_e", "E_i", "t_m", "tau_e", "tau_i", "v_th", "v_r", "w_syn",
                                         "w_in"};
static const char *const coba_values[] = {"-60 mV", "0 mV", "-80 mV", "2 ms", "0.2 ms", "0.2 ms", "-50 mV", "-60 mV",
                                          "0.05", "2"};
static const char *const coba_init_names[] = {"v"};
static const char *const coba_init_values[] = {"-57 mV"};

static bl_eq_source coba_source(void)
{
    bl_eq_source s;
    memset(&s, 0, sizeof s);
    s.method = "euler";
    s.equations = "dv/dt = (E_L - v + g * (E_e - v) + gi * (E_i - v)) / t_m : volt (unless refractory)\n"
                  "dg/dt = -g / tau_e : 1\n"
                  "dgi/dt = -gi / tau_i : 1\n";
    s.threshold = "v > v_th";
    s.reset = "v = v_r";
    s.refractory = "3 ms";
    s.on_pre = "g += clip(w, 0, 1000); gi += clip(-w, 0, 1000)";
    s.weight = "count * sign * w_syn";
    s.on_input = "g += w_in";
    s.n_params = 10;
    s.param_names = coba_names;
    s.param_values = coba_values;
    s.n_init = 1;
    s.init_names = coba_init_names;
    s.init_values = coba_init_values;
    return s;
}

/* ---- tests ---- */

/* The shiu2024 block on a 600-neuron graph, Poisson input for the first 60
 * ms of 250: the network goes quiet and most neuron-steps are skipped. */
static void shiu_block_exact(void **unused)
{
    (void)unused;
    bl_eq_source src = shiu_source(NULL);
    int32_t pop[30];
    for (int i = 0; i < 30; i++)
        pop[i] = i * 19;
    stim_spec s = {pop, 30, 300.0, 0.0, 60.0, NULL, NULL, 0, 0};
    fixture f;
    fixture_build(&f, &src, 1.8, 600, 25, 11, &s);
    assert_true(bl_eq_part_supports(f.m, NULL));
    assert_true(bl_eq_part_may_retire(f.m));
    for (uint32_t trials = 1; trials <= 3; trials += 2) {
        uint64_t skipped;
        bl_result *ref = run_all(f.net, trials, 2500, 0, &skipped);
        print_message("shiu block, %u trial(s): %llu spikes, %llu neuron-steps retired over 4 thread counts "
                      "(of %llu)\n", trials, (unsigned long long)bl_result_n_events(ref),
                      (unsigned long long)skipped, (unsigned long long)(4ull * trials * 2500 * 600));
        assert_true(bl_result_n_events(ref) > 100);
        /* Quiet after 60 ms: the neurons no input reached rest from step 1;
         * those it reached rest once their g no longer changes (its decay
         * reaches a subnormal fixed point after some 36,000 steps, beyond
         * this run: see docs/retirement.md). */
        assert_true(skipped > 4ull * trials * 2500 * 600 / 4);
        bl_result_destroy(ref);
    }
    fixture_free(&f);
}

/* The conductance-based model: on_pre into g or gi by sign, euler, resting
 * at a fixed point that is not E_L. */
static void coba_exact(void **unused)
{
    (void)unused;
    bl_eq_source src = coba_source();
    int32_t pop[40];
    for (int i = 0; i < 40; i++)
        pop[i] = i * 11;
    stim_spec s = {pop, 40, 400.0, 0.0, 80.0, NULL, NULL, 0, 0};
    fixture f;
    fixture_build(&f, &src, 1.0, 500, 20, 5, &s);
    assert_true(bl_eq_part_may_retire(f.m));
    uint64_t skipped;
    bl_result *ref = run_all(f.net, 2, 3000, 0, &skipped);
    print_message("coba: %llu spikes, %llu neuron-steps retired\n", (unsigned long long)bl_result_n_events(ref),
                  (unsigned long long)skipped);
    assert_true(bl_result_n_events(ref) > 100);
    assert_true(skipped > 0);
    /* Some neuron ends at a fixed point that is not E_L (-60 mV). */
    const double *v = bl_result_final_v(ref);
    int off_rest = 0;
    for (uint64_t i = 0; i < 500; i++)
        off_rest += v[i] != -60 * 0.001;
    print_message("coba: %d of 500 neurons end away from E_L\n", off_rest);
    assert_true(off_rest > 0);
    bl_result_destroy(ref);
    fixture_free(&f);
}

/* Inputs at the step a neuron would rest. Every neuron starts at the rest
 * fixed point (v_0, 0): step 0's update leaves it unchanged, so without
 * input all of them rest after step 0. Events land on neurons 1-4 at steps
 * 0, 1, 2 (the first steps a resting neuron is skipped), at 40 and 41,
 * forced spikes at step 0 and at the step its refractory period ends, and a
 * probe watches neurons 0-15 every step (a probe reads a resting neuron's
 * stored state). Nothing else drives the network. */
static void inputs_at_rest_boundary(void **unused)
{
    (void)unused;
    bl_eq_source src = shiu_source(NULL);
    const int32_t ev[] = {0, 1, 0, 2, 1, 1, 1, 3, 2, 4, 2, 1, 40, 2, 41, 2, 41, 3, 300, 4, 301, 4};
    const int32_t fo[] = {0, 5, 22, 5, 23, 5, 45, 6, 46, 6};
    stim_spec s = {NULL, 0, 0, 0, 0, ev, fo, sizeof ev / sizeof ev[0] / 2, sizeof fo / sizeof fo[0] / 2};
    fixture f;
    fixture_build(&f, &src, 1.8, 200, 15, 3, &s);
    uint64_t skipped;
    bl_result *ref = run_all(f.net, 1, 800, 16, &skipped);
    print_message("inputs at the rest boundary: %llu spikes, %llu neuron-steps retired\n",
                  (unsigned long long)bl_result_n_events(ref), (unsigned long long)skipped);
    assert_true(bl_result_n_events(ref) >= 4); /* the forced spikes at least */
    assert_true(skipped > 0);
    bl_result_destroy(ref);
    fixture_free(&f);
}

/* A drift that reads t: from 100 ms on, every neuron is pushed up (a ramp
 * of t). Before then the network is quiet and every state is a fixed point
 * of one step, so a rule that ignored t would rest every neuron and miss the
 * ramp. The rule refuses (may_retire is 0, nothing is skipped) and the cpu
 * backend matches the reference, spikes from the ramp included. */
static void time_dependent_never_retires(void **unused)
{
    (void)unused;
    bl_eq_source src = shiu_source("dv/dt = (v_0 - v + g + ramp) / t_mbr : volt (unless refractory)\n"
                                   "dg/dt = -g / tau : volt (unless refractory)\n"
                                   "ramp = 40*mV * clip(t/(100*ms) - 1, 0, 1) : volt\n");
    src.method = "euler";
    stim_spec s = {NULL, 0, 0, 0, 0, NULL, NULL, 0, 0};
    fixture f;
    fixture_build(&f, &src, 1.8, 150, 10, 9, &s);
    assert_false(bl_eq_part_may_retire(f.m));
    uint64_t skipped;
    bl_result *ref = run_all(f.net, 1, 2500, 0, &skipped);
    print_message("t in the drift: %llu spikes, %llu neuron-steps retired\n",
                  (unsigned long long)bl_result_n_events(ref), (unsigned long long)skipped);
    assert_int_equal(skipped, 0);
    assert_true(bl_result_n_events(ref) > 150); /* the ramp makes every neuron fire */
    bl_result_destroy(ref);
    fixture_free(&f);
}

/* The mpi backend runs the same kernel: as a single process it must equal
 * the reference too (mpirun with 2 ranks: tests/cli/test_equation_plan.sh). */
static void mpi_single_process(void **unused)
{
    (void)unused;
    if (!bl_mpi_available()) {
        print_message("skipped: built without MPI\n");
        return;
    }
    /* Under the sanitizers (BL_SANITIZED, scripts/test.sh) Open MPI's own
     * allocations outlive MPI_Finalize and the leak check would blame this
     * test, as in test_engine; the mpirun passes of test_equation_plan run
     * the same kernel there without the leak check. */
    if (getenv("BL_SANITIZED")) {
        print_message("skipped under the sanitizers (Open MPI's leaks)\n");
        return;
    }
    bl_eq_source src = coba_source();
    int32_t pop[20];
    for (int i = 0; i < 20; i++)
        pop[i] = i * 13;
    stim_spec s = {pop, 20, 400.0, 0.0, 50.0, NULL, NULL, 0, 0};
    fixture f;
    fixture_build(&f, &src, 1.0, 300, 20, 6, &s);
    bl_result *ref = run(f.net, "reference", 1, 2, 1000, "1", 0);
    for (int t = 1; t <= 2; t++) {
        bl_result *r = run(f.net, "mpi", t, 2, 1000, "1", 0);
        assert_same(ref, r, 0);
        bl_result_destroy(r);
    }
    bl_result_destroy(ref);
    fixture_free(&f);
}

/* A refractory neuron held still is not at rest. With v_rst = -60 mV, below
 * v_0, and every variable `(unless refractory)`, a neuron that spikes sits
 * at (v_rst, 0) for its 22 refractory steps, its update leaving every bit
 * unchanged; then it drifts back up to v_0. Resting it while refractory
 * (a rule without condition 1) would leave it at v_rst for good. Forced
 * spikes, no other input. */
static void refractory_hold_is_not_rest(void **unused)
{
    (void)unused;
    static const char *const values[] = {"-52 mV", "-60 mV", "-45 mV", "20 ms", "5 ms", "2.2 ms", "0.275 mV", "250"};
    bl_eq_source src = shiu_source(NULL);
    src.param_values = values;
    int32_t fo[20];
    for (int k = 0; k < 10; k++) {
        fo[2 * k] = 5 + k;
        fo[2 * k + 1] = 3 * k;
    }
    stim_spec s = {NULL, 0, 0, 0, 0, NULL, fo, 0, 10};
    fixture f;
    fixture_build(&f, &src, 1.8, 100, 5, 4, &s);
    uint64_t skipped;
    bl_result *ref = run_all(f.net, 1, 400, 8, &skipped);
    const double v0 = -52 * 0.001, vr = -60 * 0.001, v = ((const double *)bl_result_final_v(ref))[0];
    print_message("refractory hold: neuron 0 ends at %.17g V (v_rst %.17g, v_0 %.17g); %llu neuron-steps retired\n",
                  v, vr, v0, (unsigned long long)skipped);
    assert_true(v > vr && v < v0); /* it recovered from the reset, and is still on its way */
    assert_true(skipped > 0);
    bl_result_destroy(ref);
    fixture_free(&f);
}

/* What the partition kernel does not run is named (the engine then falls
 * back to the reference backend, or refuses mpi). Noise it runs (each draw
 * keyed by trial, neuron, step and k: cli.test_eq_noise_plan) but forbids
 * retirement. */
static void unsupported_named(void **unused)
{
    (void)unused;
    bl_eq_source s = shiu_source("dv/dt = (v_0 - v + g) / t_mbr + 0.5*mV * xi * t_mbr**-0.5 : volt\n"
                                 "dg/dt = -g / tau : volt\n");
    s.method = "euler";
    bl_eq_model *m = NULL;
    bl_error err;
    if (bl_eq_model_compile(&s, DT_MS * 0.001, &m, &err))
        fail_msg("compile (noise): %s", err.message);
    const char *why = NULL;
    assert_true(bl_eq_part_supports(m, &why));
    assert_null(why);
    assert_false(bl_eq_part_may_retire(m));
    bl_eq_model_destroy(m);
    s = shiu_source(NULL);
    s.on_post = "v += 1*mV";
    if (bl_eq_model_compile(&s, DT_MS * 0.001, &m, &err))
        fail_msg("compile (on_post): %s", err.message);
    assert_false(bl_eq_part_supports(m, &why));
    assert_non_null(strstr(why, "on_post"));
    bl_eq_model_destroy(m);
    assert_false(bl_eq_part_supports(NULL, &why));
    /* A weight that reads neuron state means nothing per edge (the reference
     * evaluates it with the last neuron it loaded): the cpu backend falls
     * back to the reference, and mpi is refused. */
    s = shiu_source(NULL);
    s.weight = "count * sign * w_syn * (2 + v/v_0)";
    stim_spec st = {NULL, 0, 0, 0, 0, NULL, NULL, 0, 0};
    fixture f;
    fixture_build(&f, &s, 1.8, 50, 5, 2, &st);
    assert_false(bl_eq_part_supports(f.m, &why));
    assert_non_null(strstr(why, "weight"));
    bl_engine *e = NULL;
    assert_int_equal(bl_engine_create(NULL, f.net, "cpu", &e, &err), BL_OK);
    assert_string_equal(bl_engine_backend(e), "reference");
    bl_engine_destroy(e);
    assert_int_not_equal(bl_engine_create(NULL, f.net, "mpi", &e, &err), BL_OK);
    assert_non_null(strstr(err.message, "weight expression"));
    fixture_free(&f);
    s = shiu_source(NULL);
    m = compile(&s);
    assert_true(bl_eq_part_supports(m, &why));
    assert_null(why);
    /* BL_EQ_RETIRE=0 turns retirement off; anything else leaves it on */
    assert_int_equal(setenv("BL_EQ_RETIRE", "0", 1), 0);
    assert_false(bl_eq_part_may_retire(m));
    assert_int_equal(setenv("BL_EQ_RETIRE", "1", 1), 0);
    assert_true(bl_eq_part_may_retire(m));
    assert_int_equal(unsetenv("BL_EQ_RETIRE"), 0);
    bl_eq_model_destroy(m);
}

/* The synapse features the partition kernel mirrors (on_pre chosen by sign,
 * the weight column; tests/oracles/test_eq_part_synapses.py runs them
 * against the reference) are supported; per-edge delays are not. A weight
 * that reads the column on a connectome without weights.npy leaves cpu to
 * the reference backend, which then names the missing file. */
static void synapse_features(void **state)
{
    (void)state;
    bl_eq_source s = shiu_source("dv/dt = (v_0 - v + g - h) / t_mbr : volt (unless refractory)\n"
                                 "dg/dt = -g / tau : volt\n"
                                 "dh/dt = -h / tau : volt\n");
    s.method = "euler";
    s.on_pre = NULL;
    s.on_pre_exc = "g += w";
    s.on_pre_inh = "h += w";
    s.weight = "weight * w_syn";
    stim_spec st = {NULL, 0, 0, 0, 0, NULL, NULL, 0, 0};
    fixture f;
    fixture_build(&f, &s, 1.8, 50, 5, 2, &st);
    const char *why = "unset";
    assert_true(bl_eq_part_supports(f.m, &why));
    assert_null(why);
    assert_false(bl_eq_row_reference_only(f.m, NULL));
    assert_false(bl_eq_part_supports_net(f.net, f.m, &why));
    assert_non_null(strstr(why, "weights.npy"));
    bl_engine *e = NULL;
    bl_error err;
    assert_int_equal(bl_engine_create(NULL, f.net, "cpu", &e, &err), BL_OK);
    assert_string_equal(bl_engine_backend(e), "reference");
    bl_engine_destroy(e);
    fixture_free_network(&f);
    bl_eq_row_set_edge_delays(f.m, 1);
    assert_false(bl_eq_part_supports(f.m, &why));
    assert_non_null(strstr(why, "per-edge delays"));
    assert_true(bl_eq_row_reference_only(f.m, &why));
    bl_eq_model_destroy(f.m);
}

/* Injected currents (docs/models.md, "Current injection") on the partition
 * kernel: every kind at once, overlapping on some neurons (they add), with
 * windows that open and close mid-trial, on a graph whose synapses carry
 * the driven neurons' spikes on. The cpu backend applies them itself (no
 * fallback: run() checks the backend) at 1-4 threads, retirement on and
 * off, probes every step, bit for bit the reference's; the neurons no
 * current reaches retire, and a driven neuron whose current ends retires
 * too. The mpi backend (one process) likewise. */
static const char *const cur_names[] = {"v_0", "v_rst", "v_th", "t_mbr", "tau", "t_rfc", "w_syn", "f_poi", "C"};
static const char *const cur_values[] = {"-52 mV", "-52 mV", "-45 mV", "20 ms", "5 ms",
                                         "2.2 ms", "0.275 mV", "250", "200 pF"};

/* The model and network of currents_exact (also resumed from snapshots). */
static bl_network *currents_network(bl_eq_model **model, bl_connectome **conn, bl_stimulus **stimulus)
{
    bl_eq_source src = shiu_source("dv/dt = (v_0 - v + g) / t_mbr + I_inj / C : volt (unless refractory)\n"
                                   "dg/dt = -g / tau : volt (unless refractory)\n"
                                   "I_inj : amp\n");
    src.method = "euler";
    src.n_params = 9;
    src.param_names = cur_names;
    src.param_values = cur_values;
    bl_eq_model *m = compile(&src);
    assert_true(bl_eq_part_may_retire(m));
    bl_lif_params p = params_of(m, 1.8);
    bl_connectome *c = synth(400, 15, 21);
    bl_error err;
    bl_stimulus *stim = NULL;
    assert_int_equal(bl_stimulus_create(&stim, &err), BL_OK);
    int32_t a[40], b[30], r[10], t[12], z[60];
    for (int i = 0; i < 40; i++)
        a[i] = i * 7; /* 0 .. 273, across every partition */
    for (int i = 0; i < 30; i++)
        b[i] = 3 + i * 11;
    for (int i = 0; i < 10; i++)
        r[i] = 100 + i;
    for (int i = 0; i < 12; i++)
        t[i] = 390 - i * 3;
    for (int i = 0; i < 60; i++)
        z[i] = i * 6 + 1;
    double sv[3] = {0.3e-9, 0.05e-9, 0.25e-9}, tv[4] = {0.2e-9, 0.0, 0.35e-9, 0.1e-9};
    int64_t ss[3] = {100, 300, 700};
    const bl_current cur[5] = {
        {.kind = BL_CURRENT_DC, .variable = "I_inj", .start_step = 50, .stop_step = 900, .amplitude = 0.2e-9},
        {.kind = BL_CURRENT_STEP, .variable = "I_inj", .stop_step = 1200, .values = sv, .steps = ss, .n_values = 3},
        {.kind = BL_CURRENT_RAMP, .variable = "I_inj", .start_step = 200, .stop_step = 800, .from = 0.0,
         .to = 0.4e-9},
        {.kind = BL_CURRENT_TABLE, .variable = "I_inj", .start_step = 10, .stop_step = -1, .values = tv,
         .n_values = 4, .every_steps = 250},
        {.kind = BL_CURRENT_NOISE, .variable = "I_inj", .start_step = 0, .stop_step = 1000, .amplitude = 0.1e-9,
         .sigma = 0.15e-9},
    };
    const int32_t *who[5] = {a, b, r, t, z};
    const size_t n_who[5] = {40, 30, 10, 12, 60};
    for (int k = 0; k < 5; k++)
        if (bl_stimulus_add_current(stim, who[k], n_who[k], &cur[k], &err))
            fail_msg("current %d: %s", k, err.message);
    bl_network *net = NULL;
    if (bl_network_create(c, &p, stim, NULL, 0, 17, &net, &err))
        fail_msg("network: %s", err.message);
    *model = m;
    *conn = c;
    *stimulus = stim;
    return net;
}

static void currents_exact(void **unused)
{
    (void)unused;
    bl_eq_model *m;
    bl_connectome *c;
    bl_stimulus *stim;
    bl_network *net = currents_network(&m, &c, &stim);
    uint64_t skipped;
    bl_result *ref = run_all(net, 2, 1500, 24, &skipped);
    print_message("currents: %llu spikes, %llu neuron-steps retired\n", (unsigned long long)bl_result_n_events(ref),
                  (unsigned long long)skipped);
    assert_true(bl_result_n_events(ref) > 100);
    assert_true(skipped > 0);
    if (bl_mpi_available() && !getenv("BL_SANITIZED"))
        for (int th = 1; th <= 2; th++) {
            bl_result *q = run(net, "mpi", th, 2, 1500, "1", 0);
            assert_same(ref, q, 0);
            bl_result_destroy(q);
        }
    bl_result_destroy(ref);
    bl_network_destroy(net);
    bl_stimulus_destroy(stim);
    bl_connectome_destroy(c);
    bl_eq_model_destroy(m);
}

/* Checkpoints within a trial (src/engine/snapshot.h): the partition
 * kernel's state arrays are partition fields (BL_PART_ARRAYS), so a
 * snapshot holds every state variable. Snapshots every 7 windows of 1-2
 * trials on cpu at 1 and 2 threads (one trial per thread, or one trial
 * split in 2 partitions), retirement on and off, and on mpi (a job of one
 * process), for the conductance model (synapses by sign, Poisson input,
 * retirement at a fixed point off E_L) and the currents model (every kind
 * of current, noise among them): taking them changes no bit, and each,
 * handed to a fresh engine at 1 or 2 threads, continues its trial to the
 * reference's uninterrupted spikes and final state. A truncated blob,
 * another trial's and another network's are refused. */
typedef struct snaps {
    size_t n;
    uint32_t trial[256];
    unsigned char *blob[256];
    size_t len[256];
} snaps;

static bl_status keep_snapshot(void *user, uint32_t trial, uint64_t step, const void *blob, size_t len, bl_error *err)
{
    snaps *k = user;
    (void)err;
    (void)step;
#pragma omp critical(keep_eq_snapshot)
    if (k->n < 256) {
        k->trial[k->n] = trial;
        k->blob[k->n] = malloc(len);
        memcpy(k->blob[k->n], blob, len);
        k->len[k->n++] = len;
    }
    return BL_OK;
}

static bl_result *run_snap(const bl_network *net, const char *backend, int threads, uint32_t first, uint32_t n_trials,
                           uint64_t steps, const char *retire, snaps *keep, const snaps *from, size_t which)
{
    bl_engine *e = NULL;
    bl_result *r = NULL;
    bl_error err;
    assert_int_equal(setenv("BL_EQ_RETIRE", retire, 1), 0);
    if (bl_engine_create(NULL, net, backend, &e, &err))
        fail_msg("engine %s: %s", backend, err.message);
    assert_int_equal(unsetenv("BL_EQ_RETIRE"), 0);
    assert_string_equal(bl_engine_backend(e), backend);
    assert_true(bl_engine_can_snapshot(e));
    assert_int_equal(bl_engine_set_threads(e, threads, &err), BL_OK);
    if (keep)
        bl_engine_set_snapshots(e, 7, keep_snapshot, keep);
    if (from && bl_engine_resume_trial(e, from->trial[which], from->blob[which], from->len[which], &err))
        fail_msg("resume: %s", err.message);
    assert_int_equal(bl_result_create(net, first, n_trials, &r, &err), BL_OK);
    if (bl_engine_run(e, first, n_trials, steps, r, &err))
        fail_msg("%s x%d: %s", backend, threads, err.message);
    bl_engine_destroy(e);
    return r;
}

static void snapshot_resume(void **unused)
{
    (void)unused;
    const uint64_t steps = 1200;
    bl_eq_source src = coba_source();
    bl_eq_model *models[2];
    bl_connectome *conns[2];
    bl_stimulus *stims[2];
    bl_network *nets[2];
    models[0] = compile(&src);
    bl_lif_params p = params_of(models[0], 1.0);
    conns[0] = synth(300, 20, 8);
    int32_t pop[30];
    for (int i = 0; i < 30; i++)
        pop[i] = i * 9;
    stim_spec st = {pop, 30, 400.0, 0.0, 60.0, NULL, NULL, 0, 0};
    nets[0] = network(conns[0], &p, &st, &stims[0]);
    nets[1] = currents_network(&models[1], &conns[1], &stims[1]);
    const int mpi = bl_mpi_available() && !getenv("BL_SANITIZED");
    size_t resumed = 0;
    for (int nm = 0; nm < 2; nm++) {
        const bl_network *net = nets[nm];
        for (int b = 0; b < (mpi ? 3 : 2); b++) /* cpu retiring, cpu stepping every neuron, mpi */
            for (int threads = 1; threads <= (b == 2 ? 1 : 2); threads++)
                for (uint32_t n_trials = 1; n_trials <= 2; n_trials++) {
                    const char *backend = b == 2 ? "mpi" : "cpu", *retire = b == 1 ? "0" : "1";
                    snaps k = {0};
                    bl_result *whole = run_snap(net, backend, threads, 0, n_trials, steps, retire, &k, NULL, 0);
                    bl_result *ref = run(net, "reference", 1, n_trials, steps, "1", 0);
                    assert_same(ref, whole, 0); /* taking snapshots changes nothing */
                    assert_true(k.n >= 2 * n_trials); /* 1200 steps: >= 9 snapshots a trial */
                    for (size_t a = 0; a < k.n; a += k.n / 3 + 1)
                        for (int rt = 1; rt <= (b == 2 ? 1 : 2); rt++) {
                            /* the reference's trial k.trial[a], uninterrupted */
                            bl_result *want = NULL;
                            bl_engine *e = NULL;
                            bl_error err;
                            assert_int_equal(bl_result_create(net, k.trial[a], 1, &want, &err), BL_OK);
                            assert_int_equal(bl_engine_create(NULL, net, "reference", &e, &err), BL_OK);
                            assert_int_equal(bl_engine_run(e, k.trial[a], 1, steps, want, &err), BL_OK);
                            bl_engine_destroy(e);
                            bl_result *got = run_snap(net, backend, rt, k.trial[a], 1, steps, retire, NULL, &k, a);
                            assert_same(want, got, 0);
                            resumed++;
                            bl_result_destroy(want);
                            bl_result_destroy(got);
                        }
                    /* refusals: truncated, another trial's number, another network's */
                    bl_engine *e = NULL;
                    bl_error err;
                    assert_int_equal(bl_engine_create(NULL, net, backend, &e, &err), BL_OK);
                    assert_int_equal(bl_engine_resume_trial(e, k.trial[0], k.blob[0], k.len[0] - 1, &err),
                                     BL_ERR_INVALID);
                    assert_int_equal(bl_engine_resume_trial(e, k.trial[0] + 5, k.blob[0], k.len[0], &err),
                                     BL_ERR_INVALID);
                    bl_engine_destroy(e);
                    assert_int_equal(bl_engine_create(NULL, nets[1 - nm], backend, &e, &err), BL_OK);
                    assert_int_equal(bl_engine_resume_trial(e, k.trial[0], k.blob[0], k.len[0], &err),
                                     BL_ERR_INVALID);
                    bl_engine_destroy(e);
                    for (size_t a = 0; a < k.n; a++)
                        free(k.blob[a]);
                    bl_result_destroy(whole);
                    bl_result_destroy(ref);
                }
    }
    print_message("equation snapshots: %zu resumes, each the reference's trial\n", resumed);
    for (int nm = 0; nm < 2; nm++) {
        bl_network_destroy(nets[nm]);
        bl_stimulus_destroy(stims[nm]);
        bl_connectome_destroy(conns[nm]);
        bl_eq_model_destroy(models[nm]);
    }
}

static int group_setup(void **state)
{
    (void)state;
    /* Split even these small graphs into partitions (cpu backend). */
    return setenv("BL_CPU_PARTITION_MIN_EDGES", "1", 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shiu_block_exact),
        cmocka_unit_test(coba_exact),
        cmocka_unit_test(inputs_at_rest_boundary),
        cmocka_unit_test(time_dependent_never_retires),
        cmocka_unit_test(mpi_single_process),
        cmocka_unit_test(refractory_hold_is_not_rest),
        cmocka_unit_test(unsupported_named),
        cmocka_unit_test(synapse_features),
        cmocka_unit_test(currents_exact),
        cmocka_unit_test(snapshot_resume),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
