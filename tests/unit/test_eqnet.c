/* The network of equation models (include/brainlesslab/eqnet.h): the order
 * of a step (currents, update, threshold/reset, delivery after the delay in
 * queue order, recording), spike sources, the current rule, receptors, and
 * spike-pair STDP against the rule computed here by hand; every bad input
 * refused with a message naming the index at fault. The comparison with
 * pyNN.brian2 is tests/oracles/test_pynn_brian2.py. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "brainlesslab/eqnet.h"

/* A "neuron" that only integrates what arrives: g decays, c counts events.
 * With tau = 1e9 s the decay factor rounds to 1 - tiny; we read c for order. */
static const char *const INTEG = "dg/dt = -g/tau : 1\n"
                                 "c : 1\n"
                                 "tau : second\n";

static bl_eq_source integ_source(void)
{
    bl_eq_source s;
    memset(&s, 0, sizeof s);
    s.equations = INTEG;
    s.method = "euler";
    return s;
}

static uint32_t add_integ(bl_eq_net *net, uint32_t n)
{
    bl_eq_source s = integ_source();
    uint32_t pop;
    bl_error err = {0};
    assert_int_equal(bl_eq_net_add_neurons(net, &s, n, &pop, &err), BL_OK);
    double *tau = bl_eq_net_var(net, pop, "tau");
    assert_non_null(tau);
    for (uint32_t i = 0; i < n; i++)
        tau[i] = 1e9;
    return pop;
}

/* Delivery: delay d steps after the source's step, in queue order. The
 * receptor's statement records the order: c = c*10 + w, so the digits of c
 * are the weights in the order they arrived. */
static void delivery_order_and_delay(void **state)
{
    (void)state;
    bl_eq_net *net;
    bl_error err = {0};
    assert_int_equal(bl_eq_net_create(1e-4, 1, &net, &err), BL_OK);
    uint64_t off[4] = {0, 2, 3, 4};
    int64_t steps[4] = {2, 5, 3, 3};
    uint32_t src;
    assert_int_equal(bl_eq_net_add_array_source(net, 3, off, steps, &src, &err), BL_OK);
    uint32_t pop = add_integ(net, 2);
    uint32_t r;
    assert_int_equal(bl_eq_net_add_receptor(net, pop, "c = c*10 + w", "1", &r, &err), BL_OK);
    /* source 0 (step 2) delay 3 -> 5; source 1 (step 3) delay 2 -> 5;
     * source 2 (step 3) delay 2 -> 5, with weights 1, 2, 3, 4 (two edges of
     * source 2, in the order given); source 0's step-5 spike delay 0 -> 5 */
    uint32_t pre[5] = {0, 1, 2, 2, 0};
    uint32_t post[5] = {0, 0, 0, 0, 1};
    double w[5] = {1, 2, 3, 4, 5};
    uint32_t d[5] = {3, 2, 2, 2, 0};
    size_t proj;
    assert_int_equal(bl_eq_net_add_projection(net, src, pop, r, 5, pre, post, w, d, &proj, &err), BL_OK);
    assert_int_equal(proj, 0);
    assert_int_equal(bl_eq_net_record(net, pop, "c", &err), BL_OK);
    assert_int_equal(bl_eq_net_run(net, 8, &err), BL_OK);
    size_t ns;
    const double *c = bl_eq_net_samples(net, pop, "c", &ns);
    assert_int_equal(ns, 8);
    /* Brian2's queue: spikes of step 2 were queued first, then step 3's
     * (source 1, then source 2's two edges) */
    assert_true(c[4 * 2 + 0] == 0.0);
    assert_true(c[5 * 2 + 0] == 1234.0);
    /* neuron 1 got source 0's first spike (step 2, delay 0) at step 2 and
     * its second (step 5) at step 5 */
    assert_true(c[2 * 2 + 1] == 5.0);
    assert_true(c[5 * 2 + 1] == 55.0);
    const uint64_t *ss;
    const uint32_t *si;
    assert_int_equal(bl_eq_net_spikes(net, src, &ss, &si), 4);
    uint64_t want_s[4] = {2, 3, 3, 5};
    uint32_t want_i[4] = {0, 1, 2, 0};
    for (int k = 0; k < 4; k++) {
        assert_int_equal(ss[k], want_s[k]);
        assert_int_equal(si[k], want_i[k]);
    }
    bl_eq_net_destroy(net);
}

/* Current sources: var += amplitude - previous, at the steps given; two
 * sources on one target add. */
static void current_rule(void **state)
{
    (void)state;
    bl_eq_net *net;
    bl_error err = {0};
    assert_int_equal(bl_eq_net_create(1e-4, 1, &net, &err), BL_OK);
    uint32_t pop = add_integ(net, 2);
    uint32_t t0[2] = {0, 1}, t1[1] = {1};
    int64_t s0[2] = {1, 4}, s1[2] = {2, 3};
    double a0[2] = {0.5, 0.0}, a1[2] = {0.25, -0.125};
    assert_int_equal(bl_eq_net_add_current(net, pop, "c", 2, t0, 2, s0, a0, &err), BL_OK);
    assert_int_equal(bl_eq_net_add_current(net, pop, "c", 1, t1, 2, s1, a1, &err), BL_OK);
    assert_int_equal(bl_eq_net_record(net, pop, "c", &err), BL_OK);
    assert_int_equal(bl_eq_net_run(net, 6, &err), BL_OK);
    size_t ns;
    const double *c = bl_eq_net_samples(net, pop, "c", &ns);
    double want0[6] = {0, 0.5, 0.5, 0.5, 0, 0}, want1[6] = {0, 0.5, 0.75, 0.375, -0.125, -0.125};
    for (int k = 0; k < 6; k++) {
        assert_true(c[k * 2] == want0[k]);
        assert_true(c[k * 2 + 1] == want1[k]);
    }
    bl_eq_net_destroy(net);
}

/* Poisson sources: reproducible from the seed, only in their window, and
 * at the Bernoulli rate. */
static void poisson_sources(void **state)
{
    (void)state;
    size_t counts[2] = {0, 0};
    for (int rep = 0; rep < 2; rep++) {
        bl_eq_net *net;
        bl_error err = {0};
        assert_int_equal(bl_eq_net_create(1e-4, 42, &net, &err), BL_OK);
        double rate[100], start[100], stop[100];
        for (int i = 0; i < 100; i++) {
            rate[i] = 500.0;
            start[i] = 0.01;
            stop[i] = 0.05;
        }
        uint32_t pop;
        assert_int_equal(bl_eq_net_add_poisson_source(net, 100, rate, start, stop, &pop, &err), BL_OK);
        assert_int_equal(bl_eq_net_run(net, 1000, &err), BL_OK);
        const uint64_t *s;
        const uint32_t *idx;
        counts[rep] = bl_eq_net_spikes(net, pop, &s, &idx);
        for (size_t k = 0; k < counts[rep]; k++)
            assert_true(s[k] >= 100 && s[k] <= 500);
        bl_eq_net_destroy(net);
    }
    assert_int_equal(counts[0], counts[1]);
    double mean = 100 * 500.0 * 0.0401;
    assert_true(fabs((double)counts[0] - mean) < 5 * sqrt(mean));
}

/* STDP: the weights after a few pre and post events, computed here from the
 * rule's text (eqnet.h), with the same operations in the same order. */
static void stdp_by_hand(void **state)
{
    (void)state;
    bl_eq_net *net;
    bl_error err = {0};
    const double dt = 1e-4;
    assert_int_equal(bl_eq_net_create(dt, 1, &net, &err), BL_OK);
    uint64_t off_pre[2] = {0, 3};
    int64_t pre_steps[3] = {10, 40, 90};
    uint64_t off_post[2] = {0, 2};
    int64_t post_steps[2] = {30, 60};
    uint32_t pre, post_src;
    assert_int_equal(bl_eq_net_add_array_source(net, 1, off_pre, pre_steps, &pre, &err), BL_OK);
    /* the postsynaptic neuron spikes when its threshold says: v > 0.5,
     * driven by an explicit source onto v through a second receptor */
    assert_int_equal(bl_eq_net_add_array_source(net, 1, off_post, post_steps, &post_src, &err), BL_OK);
    bl_eq_source s;
    memset(&s, 0, sizeof s);
    s.equations = "dv/dt = 0/second : 1\ng : 1\n";
    s.method = "euler";
    s.threshold = "v > 0.5";
    s.reset = "v = 0";
    uint32_t pop;
    assert_int_equal(bl_eq_net_add_neurons(net, &s, 1, &pop, &err), BL_OK);
    uint32_t rg, rv;
    assert_int_equal(bl_eq_net_add_receptor(net, pop, "g += w", "1", &rg, &err), BL_OK);
    assert_int_equal(bl_eq_net_add_receptor(net, pop, "v += w", "1", &rv, &err), BL_OK);
    uint32_t i0 = 0;
    double w0 = 0.02, one = 1.0;
    uint32_t d2 = 2, d0 = 0;
    size_t plastic, kick;
    assert_int_equal(bl_eq_net_add_projection(net, pre, pop, rg, 1, &i0, &i0, &w0, &d2, &plastic, &err), BL_OK);
    assert_int_equal(bl_eq_net_add_projection(net, post_src, pop, rv, 1, &i0, &i0, &one, &d0, &kick, &err), BL_OK);
    bl_eq_net_stdp rule = {0.02, 0.015, 0.01, 0.012, 0.0, 0.05};
    assert_int_equal(bl_eq_net_set_stdp(net, plastic, &rule, &err), BL_OK);
    /* the kick arrives in the synapses slot, after the threshold: the neuron
     * spikes one step after its source (steps 31 and 61) */
    assert_int_equal(bl_eq_net_run(net, 100, &err), BL_OK);
    const uint64_t *ps;
    const uint32_t *pi;
    assert_int_equal(bl_eq_net_spikes(net, pop, &ps, &pi), 2);
    assert_int_equal(ps[0], 31);
    assert_int_equal(ps[1], 61);
    /* events at the edge: pre arrives 12, post 31, pre 42, post 61, pre 92 */
    struct {
        int pre;
        uint64_t step;
    } ev[5] = {{1, 12}, {0, 31}, {1, 42}, {0, 61}, {1, 92}};
    double P = 0, M = 0, w = w0, last = 0, g = 0;
    for (int k = 0; k < 5; k++) {
        double t = (double)ev[k].step * dt;
        double el = -(t - last);
        M = M * exp(el / rule.tau_minus_s);
        P = P * exp(el / rule.tau_plus_s);
        if (ev[k].pre) {
            P += rule.a_plus;
            w += M * rule.w_max;
            w = (double)(w >= rule.w_min) * w + (double)(w < rule.w_min) * rule.w_min;
            g += w;
        } else {
            M -= rule.a_minus;
            w += P * rule.w_max;
            w = (double)(w > rule.w_max) * rule.w_max + (double)(w <= rule.w_max) * w;
        }
        last = t;
    }
    double got;
    assert_int_equal(bl_eq_net_n_edges(net, plastic), 1);
    assert_int_equal(bl_eq_net_weights(net, plastic, &got, 1, &err), BL_OK);
    assert_memory_equal(&got, &w, sizeof w);
    assert_true(w != w0);
    double *gv = bl_eq_net_var(net, pop, "g");
    assert_non_null(gv);
    assert_memory_equal(gv, &g, sizeof g);
    bl_eq_net_destroy(net);
}

static void expect_fail(bl_status st, const bl_error *err, const char *want)
{
    assert_int_not_equal(st, BL_OK);
    if (!strstr(err->message, want)) {
        fprintf(stderr, "message '%s' lacks '%s'\n", err->message, want);
        fail();
    }
}

static void refusals(void **state)
{
    (void)state;
    bl_eq_net *net;
    bl_error err = {0};
    expect_fail(bl_eq_net_create(0.0, 1, &net, &err), &err, "time step 0");
    expect_fail(bl_eq_net_create(NAN, 1, &net, &err), &err, "time step");
    assert_int_equal(bl_eq_net_create(1e-4, 1, &net, &err), BL_OK);
    uint32_t pop = add_integ(net, 3), src, r, x;
    size_t proj;
    bl_eq_source s = integ_source();
    expect_fail(bl_eq_net_add_neurons(net, &s, 0, &x, &err), &err, "0 neurons");
    expect_fail(bl_eq_net_add_neurons(net, &s, BL_EQ_NET_MAX_NEURONS + 1, &x, &err), &err, "neurons (1 to");
    s.equations = "dg/dt = -g/nope : 1";
    expect_fail(bl_eq_net_add_neurons(net, &s, 2, &x, &err), &err, "unknown variable 'nope'");
    s.equations = "dg/dt = -g/tau + xi/sqrt(tau) : 1\ntau : second";
    expect_fail(bl_eq_net_add_neurons(net, &s, 2, &x, &err), &err, "noise");
    uint64_t off[2] = {0, 2};
    int64_t bad_steps[2] = {4, 4};
    expect_fail(bl_eq_net_add_array_source(net, 1, off, bad_steps, &x, &err), &err, "neuron 0 spike 1 at step 4");
    int64_t neg[2] = {-1, 3};
    expect_fail(bl_eq_net_add_array_source(net, 1, off, neg, &x, &err), &err, "spike 0 at step -1");
    uint64_t off_bad[2] = {1, 2};
    expect_fail(bl_eq_net_add_array_source(net, 1, off_bad, neg, &x, &err), &err, "offsets[0]");
    double rate = -1, st0 = 0, st1 = 1, inf = INFINITY, nan = NAN;
    expect_fail(bl_eq_net_add_poisson_source(net, 1, &rate, &st0, &st1, &x, &err), &err, "rate -1");
    rate = inf;
    expect_fail(bl_eq_net_add_poisson_source(net, 1, &rate, &st0, &st1, &x, &err), &err, "rate inf");
    rate = 10;
    expect_fail(bl_eq_net_add_poisson_source(net, 1, &rate, &nan, &st1, &x, &err), &err, "window");
    int64_t ok_steps[2] = {1, 2};
    assert_int_equal(bl_eq_net_add_array_source(net, 1, off, ok_steps, &src, &err), BL_OK);
    expect_fail(bl_eq_net_add_receptor(net, src, "g += w", "1", &r, &err), &err, "spike source, not neurons");
    expect_fail(bl_eq_net_add_receptor(net, 9, "g += w", "1", &r, &err), &err, "no population 9");
    expect_fail(bl_eq_net_add_receptor(net, pop, "q += w", "1", &r, &err), &err, "unknown variable 'q'");
    expect_fail(bl_eq_net_add_receptor(net, pop, "g += w", "1 volt", &r, &err), &err, "dimension mismatch");
    expect_fail(bl_eq_net_add_receptor(net, pop, NULL, "1", &r, &err), &err, "needs on_pre");
    for (uint32_t k = 0; k < BL_EQ_NET_MAX_RECEPTORS; k++)
        assert_int_equal(bl_eq_net_add_receptor(net, pop, "g += w", "1", &r, &err), BL_OK);
    expect_fail(bl_eq_net_add_receptor(net, pop, "g += w", "1", &r, &err), &err, "more than 16 receptors");
    uint32_t i0 = 0, i5 = 5;
    double w = 1, wn = NAN;
    uint32_t d1 = 1, dbig = BL_EQ_NET_MAX_DELAY + 1;
    expect_fail(bl_eq_net_add_projection(net, src, pop, 0, 1, &i0, &i5, &w, &d1, &proj, &err), &err,
                "edge 0: 0 -> 5 outside 1 x 3");
    expect_fail(bl_eq_net_add_projection(net, src, pop, 0, 1, &i5, &i0, &w, &d1, &proj, &err), &err,
                "edge 0: 5 -> 0");
    expect_fail(bl_eq_net_add_projection(net, src, pop, 0, 1, &i0, &i0, &wn, &d1, &proj, &err), &err,
                "edge 0: weight nan");
    expect_fail(bl_eq_net_add_projection(net, src, pop, 0, 1, &i0, &i0, &w, &dbig, &proj, &err), &err,
                "delay 1000001 steps");
    expect_fail(bl_eq_net_add_projection(net, src, pop, 99, 1, &i0, &i0, &w, &d1, &proj, &err), &err,
                "no receptor 99");
    expect_fail(bl_eq_net_add_projection(net, 77, pop, 0, 1, &i0, &i0, &w, &d1, &proj, &err), &err,
                "no presynaptic population 77");
    expect_fail(bl_eq_net_add_projection(net, pop, src, 0, 1, &i0, &i0, &w, &d1, &proj, &err), &err,
                "spike source, not neurons");
    assert_int_equal(bl_eq_net_add_projection(net, src, pop, 0, 1, &i0, &i0, &w, &d1, &proj, &err), BL_OK);
    bl_eq_net_stdp rule = {0.02, 0.02, 0.01, 0.01, 0.0, 1.0};
    expect_fail(bl_eq_net_set_stdp(net, 3, &rule, &err), &err, "no projection 3");
    rule.tau_minus_s = -1;
    expect_fail(bl_eq_net_set_stdp(net, proj, &rule, &err), &err, "tau_minus -1 s");
    rule.tau_minus_s = 0.02;
    rule.w_min = 2.0;
    expect_fail(bl_eq_net_set_stdp(net, proj, &rule, &err), &err, "w_min 2, w_max 1");
    double out[2];
    expect_fail(bl_eq_net_weights(net, proj, out, 2, &err), &err, "has 1 edges, asked for 2");
    uint32_t t9 = 9;
    int64_t cs[2] = {3, 3};
    double ca[2] = {1, 2};
    expect_fail(bl_eq_net_add_current(net, pop, "zz", 1, &i0, 1, cs, ca, &err), &err, "no variable 'zz'");
    expect_fail(bl_eq_net_add_current(net, pop, "c", 1, &t9, 1, cs, ca, &err), &err, "target 0 is neuron 9 of 3");
    expect_fail(bl_eq_net_add_current(net, pop, "c", 1, &i0, 2, cs, ca, &err), &err, "change 1 at step 3");
    ca[0] = INFINITY;
    expect_fail(bl_eq_net_add_current(net, pop, "c", 1, &i0, 1, cs, ca, &err), &err, "amplitude inf");
    expect_fail(bl_eq_net_add_current(net, src, "c", 1, &i0, 1, cs, ca, &err), &err, "current source 0");
    expect_fail(bl_eq_net_record(net, pop, "zz", &err), &err, "no variable 'zz'");
    assert_null(bl_eq_net_var(net, src, "c"));
    assert_null(bl_eq_net_var(net, 1234, "c"));
    assert_int_equal(bl_eq_net_pop_size(net, 1234), 0);
    expect_fail(bl_eq_net_run(net, UINT64_MAX, &err), &err, "too many");
    assert_int_equal(bl_eq_net_run(net, 3, &err), BL_OK);
    expect_fail(bl_eq_net_add_neurons(net, &s, 2, &x, &err), &err, "before the first step");
    rule.w_min = 0.0;
    expect_fail(bl_eq_net_set_stdp(net, proj, &rule, &err), &err, "before the first step");
    bl_eq_net_clear_recordings(net);
    const uint64_t *ss;
    const uint32_t *si;
    assert_int_equal(bl_eq_net_spikes(net, src, &ss, &si), 0);
    assert_int_equal(bl_eq_net_spikes(net, 999, &ss, &si), 0);
    bl_eq_net_destroy(net);
    bl_eq_net_destroy(NULL);
}

/* Sources changed between runs (PyNN's set() of spike_times, rate, start,
 * duration): the new spikes from the next step on, those before it dropped;
 * a Poisson source's rate and window replaced; bad input refused with the
 * neuron at fault, leaving the source as it was. */
static void sources_changed_between_runs(void **state)
{
    (void)state;
    bl_eq_net *net;
    bl_error err = {0};
    assert_int_equal(bl_eq_net_create(1e-4, 7, &net, &err), BL_OK);
    uint64_t off[3] = {0, 2, 3};
    int64_t steps[3] = {1, 8, 2};
    uint32_t src, poi;
    assert_int_equal(bl_eq_net_add_array_source(net, 2, off, steps, &src, &err), BL_OK);
    double rate[2] = {0.0, 0.0}, start[2] = {0.0, 0.0}, stop[2] = {1.0, 1.0};
    assert_int_equal(bl_eq_net_add_poisson_source(net, 2, rate, start, stop, &poi, &err), BL_OK);
    assert_int_equal(bl_eq_net_run(net, 5, &err), BL_OK);
    /* neuron 0: 3 (past: dropped), 6; neuron 1: 5, 9 */
    uint64_t off2[3] = {0, 2, 4};
    int64_t steps2[4] = {3, 6, 5, 9};
    assert_int_equal(bl_eq_net_set_array_source(net, src, off2, steps2, &err), BL_OK);
    /* both Poisson neurons fire at every step from 7 (rate near 1/dt) */
    double rate2[2] = {9999.0, 9999.0}, start2[2] = {7e-4, 7e-4}, stop2[2] = {1.0, 1.0};
    assert_int_equal(bl_eq_net_set_poisson_source(net, poi, rate2, start2, stop2, &err), BL_OK);
    assert_int_equal(bl_eq_net_run(net, 5, &err), BL_OK);
    const uint64_t *ss;
    const uint32_t *si;
    size_t n = bl_eq_net_spikes(net, src, &ss, &si);
    uint64_t want_s[5] = {1, 2, 5, 6, 9};
    uint32_t want_i[5] = {0, 1, 1, 0, 1};
    assert_int_equal(n, 5);
    for (int k = 0; k < 5; k++) {
        assert_int_equal(ss[k], want_s[k]);
        assert_int_equal(si[k], want_i[k]);
    }
    n = bl_eq_net_spikes(net, poi, &ss, &si);
    assert_true(n >= 4);
    for (size_t k = 0; k < n; k++)
        assert_true(ss[k] >= 7);
    /* refusals: the source keeps its spikes */
    int64_t bad[4] = {3, 3, 5, 9};
    expect_fail(bl_eq_net_set_array_source(net, src, off2, bad, &err), &err, "neuron 0 spike 1 at step 3");
    expect_fail(bl_eq_net_set_array_source(net, poi, off2, steps2, &err), &err, "population 1 is not a spike source");
    expect_fail(bl_eq_net_set_array_source(net, 9, off2, steps2, &err), &err, "population 9");
    double neg[2] = {1.0, -1.0};
    expect_fail(bl_eq_net_set_poisson_source(net, poi, neg, start2, stop2, &err), &err, "neuron 1: rate -1");
    expect_fail(bl_eq_net_set_poisson_source(net, src, rate2, start2, stop2, &err), &err, "not a Poisson source");
    bl_eq_net_destroy(net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(delivery_order_and_delay),
        cmocka_unit_test(current_rule),
        cmocka_unit_test(poisson_sources),
        cmocka_unit_test(stdp_by_hand),
        cmocka_unit_test(refusals),
        cmocka_unit_test(sources_changed_between_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
