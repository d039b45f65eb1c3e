/* Model constants and random streams: known answers from the spec and from
 * Random123's published test vectors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "brainlesslab/model.h"
#include "brainlesslab/stimulus.h"
#include "brainlesslab/seed.h"
#include "core/philox.h"
#include "core/stream.h"
#include "models/lif_phase4c.h"
#include "models/lif_shiu2024.h"
#include "models/model_table.h"

static void philox_known_answers(void **unused)
{
    (void)unused;
    /* Random123 kat_vectors: philox4x32 10 rounds. */
    const struct { uint32_t ctr[4], key[2], out[4]; } kat[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
        {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
         {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
        {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
         {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    };
    for (size_t i = 0; i < sizeof kat / sizeof kat[0]; i++) {
        uint32_t out[4];
        bl_philox4x32(kat[i].ctr, kat[i].key, out);
        assert_memory_equal(out, kat[i].out, sizeof out);
    }
}

static void stimulus_stream_layout(void **unused)
{
    (void)unused;
    /* key = (seed lo, seed hi), counter = (step, neuron, population, trial). */
    uint64_t seed = 0x299f31d0a4093822ull;
    uint32_t w = bl_stream_word(seed, 0x03707344, 0x13198a2e, 0x85a308d3, 0x243f6a88);
    assert_int_equal(w, 0xd16cfe09);
}

static void bernoulli_thresholds(void **unused)
{
    (void)unused;
    assert_int_equal(bl_bernoulli_threshold(0.0, 0.1), 0);
    assert_int_equal(bl_bernoulli_threshold(1e4, 0.1), UINT64_C(1) << 32);
    assert_int_equal(bl_bernoulli_threshold(2e4, 0.1), UINT64_C(1) << 32);
    /* 150 Hz at 0.1 ms: p = 0.015, floor(0.015 * 2^32). */
    assert_int_equal(bl_bernoulli_threshold(150.0, 0.1), 64424509u);
}

static uint64_t bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static void shiu2024_brian2_constants(void **unused)
{
    (void)unused;
    bl_lif_params p;
    assert_int_equal(bl_lif_params_preset("shiu2024", &p, NULL), BL_OK);
    bl_shiu_consts k = bl_shiu_consts_make(&p);
    /* The spec's values, from glibc's correctly rounded exp. */
    assert_int_equal(bits(k.L2), bits(0x1.f5dc99badec5bp-1));
    assert_int_equal(bits(k.L10), bits(0x1.fd7246927d28bp-1));
    assert_int_equal(bits(k.L8), bits(-0x1.0ff306a505980p-12));
    assert_int_equal(bits(k.L9), bits(0x1.439cce9a65d5bp-8));
    assert_int_equal(bits(k.v_rst), bits(-0.052000000000000005));
    assert_int_equal(bits(k.v_th), bits(-0.045));
    assert_int_equal(bits(k.w_syn), bits(0.000275));
    assert_int_equal(bits(k.w_poisson), bits(0.06875));
    assert_int_equal(bl_lif_refractory_steps(&p), 22);
    assert_int_equal(bl_lif_delay_steps(&p), 18);
}

static void phase4c_constants(void **unused)
{
    (void)unused;
    bl_lif_params p;
    assert_int_equal(bl_lif_params_preset("phase4c", &p, NULL), BL_OK);
    bl_p4c_consts k = bl_p4c_consts_make(&p);
    assert_true(k.gd == (float)0.98);
    assert_true(k.alpha == (float)0.005);
    assert_true(k.v_th == -45.0f);
    assert_int_equal(k.refractory_steps, 22);
    /* Weight of a 3-synapse inhibitory edge: float32(-3) * float32(0.275). */
    assert_true(bl_p4c_edge_weight(&k, -3) == -3.0f * 0.275f);
    /* >= threshold, unlike shiu2024's strict >. */
    assert_true(bl_p4c_crosses(&k, -45.0f));
}

static void parameter_overrides(void **unused)
{
    (void)unused;
    bl_lif_params p;
    bl_error err = {0};
    assert_int_equal(bl_lif_params_preset("shiu2024", &p, &err), BL_OK);
    assert_int_equal(bl_lif_params_set(&p, "v_th_mv", -40.0, &err), BL_OK);
    assert_true(p.v_th_mv == -40.0);
    assert_int_equal(bl_lif_params_set(&p, "no_such", 1.0, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "no_such"));
    assert_int_equal(bl_lif_params_set(&p, "delay_ms", 1.85, &err), BL_OK);
    assert_int_equal(bl_lif_params_validate(&p, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "delay_ms"));
    assert_int_equal(bl_lif_params_preset("brian", &p, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "brian"));
}

/* One stream design: each layout is bl_stream_block with its counter, and
 * that is Philox4x32-10 keyed by the seed as (lo, hi). The record text that
 * names the connectome layout is pinned byte for byte (sealed records hold it). */
static void one_stream_design(void **unused)
{
    (void)unused;
    const uint64_t seed = UINT64_C(0x0123456789abcdef);
    const uint32_t key[2] = {0x89abcdefu, 0x01234567u};
    uint32_t raw[4], via[4];
    const uint32_t c_stim[4] = {7, 11, 2, 3};
    bl_philox4x32(c_stim, key, raw);
    assert_int_equal(bl_stream_stimulus_word(seed, 3, 2, 11, 7), raw[0]);
    assert_int_equal(bl_stream_word(seed, 3, 2, 11, 7), raw[0]);
    const uint32_t c_sample[4] = {0, 42, 5, 0xFFFFFFFFu};
    bl_philox4x32(c_sample, key, raw);
    assert_int_equal(bl_stream_sample_word(seed, 5, 42), raw[0]);
    const uint32_t c_seed[4] = {4, 9, BL_SEED_DRIVE, 0xdeadbeefu};
    bl_philox4x32(c_seed, key, raw);
    assert_true(bl_seed_derive(seed, 0xdeadbeefu, BL_SEED_DRIVE, 4, 9) == ((uint64_t)raw[0] | (uint64_t)raw[1] << 32));
    bl_stream_block(seed, 4, 9, BL_SEED_DRIVE, 0xdeadbeefu, via);
    assert_memory_equal(raw, via, sizeof raw);
    char text[512];
    bl_stream_connectome_seeds_json(17, 0, text, sizeof text);
    assert_string_equal(text, "{\"seed\": 17, \"stream\": \"philox4x32-10\", \"key\": \"(seed & 0xffffffff, seed >> 32)\", "
                              "\"counter\": \"(step, neuron, population, trial)\", \"event\": \"word0 < floor(rate*dt*2^32)\"}");
    bl_stream_connectome_seeds_json(17, 1, text, sizeof text);
    assert_string_equal(text, "{\"seed\": 17, \"stream\": \"philox4x32-10\", \"key\": \"(seed & 0xffffffff, seed >> 32)\", "
                              "\"counter\": \"(step, neuron, population, trial)\", \"event\": \"word0 < floor(rate*dt*2^32)\", "
                              "\"sample\": \"counter (0, neuron, population ordinal, 0xffffffff); smallest word0 kept\"}");
}

/* One rule for every caller: the row's parameter table refuses for the
 * library what it refuses for a plan, and the message names the parameter. */
static void one_parameter_rule(void **unused)
{
    (void)unused;
    static const struct {
        const char *key;
        double value;
    } bad[] = {{"tau_m_ms", 0.05},   {"tau_syn_ms", 1e-300}, {"v_rest_mv", 1e300}, {"w_syn_mv", 2000.0},
               {"f_poi", 2e6},       {"dt_ms", 20.0},        {"refractory_ms", 0.15}, {"delay_ms", 0.0},
               {"delay_ms", 2e4},    {"v_th_mv", -60.0}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        for (int m = 0; m < 2; m++) {
            bl_lif_params p;
            bl_error err = {0};
            assert_int_equal(bl_lif_params_preset(m ? "phase4c" : "shiu2024", &p, NULL), BL_OK);
            assert_int_equal(bl_lif_params_validate(&p, &err), BL_OK);
            assert_int_equal(bl_lif_params_set(&p, bad[i].key, bad[i].value, &err), BL_OK);
            assert_int_equal(bl_lif_params_validate(&p, &err), BL_ERR_INVALID);
            assert_non_null(strstr(err.message, bad[i].key));
        }
    /* A tonically firing neuron (rest above threshold) is a model, not an error. */
    bl_lif_params p;
    assert_int_equal(bl_lif_params_preset("shiu2024", &p, NULL), BL_OK);
    p.v_rest_mv = -40.0;
    assert_int_equal(bl_lif_params_validate(&p, NULL), BL_OK);
    /* shiu2024's own rule, from its row. */
    p.tau_m_ms = p.tau_syn_ms;
    assert_int_equal(bl_lif_params_validate(&p, NULL), BL_ERR_INVALID);
}

/* The known models come from the table: every row by name, its id, and the
 * list a message shows. */
static void model_table_rows(void **unused)
{
    (void)unused;
    char known[256];
    bl_model_names(known, sizeof known);
    assert_string_equal(known, "shiu2024, phase4c, equations");
    bl_preset id;
    /* The "equations" row runs a compiled model (a plan's [model] equations):
     * its parameters without one are refused, naming why. */
    bl_lif_params q;
    bl_error qe = {0};
    assert_int_equal(bl_lif_params_preset("equations", &q, NULL), BL_OK);
    assert_null(q.equations);
    assert_int_equal(bl_lif_params_validate(&q, &qe), BL_ERR_INVALID);
    assert_non_null(strstr(qe.message, "no compiled model"));
    assert_non_null(bl_model_by_name("phase4c", &id));
    assert_int_equal(id, BL_PRESET_PHASE4C);
    assert_string_equal(bl_preset_name(id), "phase4c");
    assert_null(bl_model_of((bl_preset)99));
    bl_error err = {0};
    bl_lif_params p;
    assert_int_equal(bl_lif_params_preset("brian", &p, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "shiu2024, phase4c"));
    /* Every public parameter name is a row of the table, with a unit column. */
    const char *const *names = bl_lif_param_names();
    size_t n = 0;
    for (; names[n]; n++)
        assert_string_equal(names[n], bl_lif_param_table[n].name);
    assert_null(bl_lif_param_table[n].name);
    assert_string_equal(bl_lif_param_table[0].unit, "ms");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(philox_known_answers),
        cmocka_unit_test(stimulus_stream_layout),
        cmocka_unit_test(bernoulli_thresholds),
        cmocka_unit_test(shiu2024_brian2_constants),
        cmocka_unit_test(phase4c_constants),
        cmocka_unit_test(parameter_overrides),
        cmocka_unit_test(one_stream_design),
        cmocka_unit_test(one_parameter_rule),
        cmocka_unit_test(model_table_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
