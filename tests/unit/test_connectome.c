/* CSR validation and connectome directories: round trips and the first fault
 * named with its file and index. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/synth.h"

#include "test_support.h"

BL_TEST_TMPDIR_GROUP("connectome")

/* 0 -> 1 (3 synapses), 0 -> 2 (1), 2 -> 0 (5, inhibitory) */
static const int64_t good_off[] = {0, 2, 2, 3};
static const int32_t good_tgt[] = {1, 2, 0};
static const int32_t good_cnt[] = {3, 1, -5};

static void expect_invalid(const int64_t *off, const int32_t *tgt, const int32_t *cnt, uint64_t n,
                           uint64_t e, const char *fragment)
{
    bl_error err = {0};
    assert_int_equal(bl_csr_validate("dir", n, e, off, tgt, cnt, &err), BL_ERR_INVALID);
    if (!strstr(err.message, fragment))
        fail_msg("message '%s' lacks '%s'", err.message, fragment);
}

static void csr_validation(void **unused)
{
    (void)unused;
    bl_error err = {0};
    assert_int_equal(bl_csr_validate("dir", 3, 3, good_off, good_tgt, good_cnt, &err), BL_OK);
    const int64_t off_start[] = {1, 2, 2, 3};
    expect_invalid(off_start, good_tgt, good_cnt, 3, 3, "offsets.npy: index 0");
    const int64_t off_dec[] = {0, 2, 1, 3};
    expect_invalid(off_dec, good_tgt, good_cnt, 3, 3, "offsets.npy: index 2");
    const int64_t off_end[] = {0, 2, 2, 2};
    expect_invalid(off_end, good_tgt, good_cnt, 3, 3, "offsets.npy: index 3");
    const int64_t off_big[] = {0, 2, 9, 3};
    expect_invalid(off_big, good_tgt, good_cnt, 3, 3, "exceeds the edge count");
    const int32_t tgt_range[] = {1, 3, 0};
    expect_invalid(good_off, tgt_range, good_cnt, 3, 3, "targets.npy: index 1");
    const int32_t tgt_neg[] = {1, 2, -1};
    expect_invalid(good_off, tgt_neg, good_cnt, 3, 3, "targets.npy: index 2");
    const int32_t tgt_dup[] = {1, 1, 0};
    expect_invalid(good_off, tgt_dup, good_cnt, 3, 3, "repeats");
    const int32_t tgt_desc[] = {2, 1, 0};
    expect_invalid(good_off, tgt_desc, good_cnt, 3, 3, "ascending");
    const int32_t cnt_zero[] = {3, 0, -5};
    expect_invalid(good_off, good_tgt, cnt_zero, 3, 3, "counts.npy: index 1");
}

static void adopt_copy(bl_connectome **c)
{
    int64_t *off = malloc(sizeof good_off);
    int32_t *tgt = malloc(sizeof good_tgt), *cnt = malloc(sizeof good_cnt);
    memcpy(off, good_off, sizeof good_off);
    memcpy(tgt, good_tgt, sizeof good_tgt);
    memcpy(cnt, good_cnt, sizeof good_cnt);
    bl_error err = {0};
    assert_int_equal(bl_connectome_adopt(3, 3, off, tgt, cnt, c, &err), BL_OK);
}

static void neuron_table(void **unused)
{
    (void)unused;
    bl_connectome *c;
    adopt_copy(&c);
    bl_error err = {0};
    assert_int_equal(bl_connectome_n_synapses(c), 9);
    const char *ids[] = {"AVAL", "AVAR", "ASHL"};
    assert_int_equal(bl_connectome_set_external_ids(c, ids, &err), BL_OK);
    int32_t idx;
    assert_int_equal(bl_connectome_find(c, "ASHL", &idx, &err), BL_OK);
    assert_int_equal(idx, 2);
    assert_int_equal(bl_connectome_find(c, "XYZ", &idx, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "XYZ"));
    const char *dup[] = {"A", "B", "A"};
    assert_int_equal(bl_connectome_set_external_ids(c, dup, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "'A'"));
    assert_string_equal(bl_connectome_external_id(c, 0), "AVAL"); /* unchanged after failure */
    const char *types[] = {"motor", "", "sensory, \"quoted\""};
    assert_int_equal(bl_connectome_add_column(c, "cell_type", types, &err), BL_OK);
    assert_int_equal(bl_connectome_add_column(c, "cell_type", types, &err), BL_ERR_INVALID);
    assert_int_equal(bl_connectome_add_column(c, "Bad Name", types, &err), BL_ERR_INVALID);
    assert_int_equal(bl_connectome_column(c, "cell_type"), 0);
    assert_int_equal(bl_connectome_column(c, "side"), -1);
    bl_connectome_destroy(c);
}

static void directory_round_trip(void **unused)
{
    (void)unused;
    const char *dir = tmp_path("c");
    bl_connectome *c, *d;
    adopt_copy(&c);
    bl_error err = {0};
    const char *ids[] = {"10", "20", "30"};
    const char *types[] = {"motor", "", "sensory, \"quoted\""};
    assert_int_equal(bl_connectome_set_external_ids(c, ids, &err), BL_OK);
    assert_int_equal(bl_connectome_add_column(c, "cell_type", types, &err), BL_OK);
    assert_int_equal(bl_connectome_set_info(c, "name", "tiny", &err), BL_OK);
    assert_int_equal(bl_connectome_save(c, dir, &err), BL_OK);
    /* A second save into the same directory is refused. */
    assert_int_equal(bl_connectome_save(c, dir, &err), BL_ERR_EXISTS);
    assert_int_equal(bl_connectome_load(dir, &d, &err), BL_OK);
    assert_int_equal(bl_connectome_n_neurons(d), 3);
    assert_memory_equal(bl_connectome_offsets(d), good_off, sizeof good_off);
    assert_memory_equal(bl_connectome_targets(d), good_tgt, sizeof good_tgt);
    assert_memory_equal(bl_connectome_counts(d), good_cnt, sizeof good_cnt);
    assert_string_equal(bl_connectome_external_id(d, 1), "20");
    assert_string_equal(bl_connectome_value(d, 0, 2), "sensory, \"quoted\"");
    assert_string_equal(bl_connectome_info(d, "name"), "tiny");
    bl_connectome_destroy(d);

    /* Tampering with a data file breaks its hash. */
    char path[300];
    snprintf(path, sizeof path, "%s/counts.npy", dir);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, -1, SEEK_END);
    fputc(7, f);
    fclose(f);
    assert_int_equal(bl_connectome_load(dir, &d, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "counts.npy"));
    assert_non_null(strstr(err.message, "SHA-256"));
    bl_connectome_destroy(c);
}

static void synth_is_deterministic(void **unused)
{
    (void)unused;
    bl_synth_params p;
    bl_synth_defaults(&p);
    p.n_neurons = 2000;
    p.mean_out_degree = 20;
    p.seed = 7;
    bl_connectome *a, *b;
    bl_error err = {0};
    assert_int_equal(bl_synth_generate(&p, &a, &err), BL_OK);
    assert_int_equal(bl_synth_generate(&p, &b, &err), BL_OK);
    assert_int_equal(bl_connectome_n_edges(a), bl_connectome_n_edges(b));
    assert_memory_equal(bl_connectome_targets(a), bl_connectome_targets(b),
                        bl_connectome_n_edges(a) * sizeof(int32_t));
    assert_memory_equal(bl_connectome_counts(a), bl_connectome_counts(b),
                        bl_connectome_n_edges(a) * sizeof(int32_t));
    assert_true(bl_connectome_synthetic(a));
    /* Roughly the requested mean degree (duplicates and self-loops removed). */
    double mean = (double)bl_connectome_n_edges(a) / 2000.0;
    assert_true(mean > 17 && mean < 21);
    bl_connectome_destroy(a);
    bl_connectome_destroy(b);
    p.n_neurons = 1;
    assert_int_equal(bl_synth_generate(&p, &b, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "neurons"));
}

/* The optional float edge columns (docs/connectome-format.md): set, saved,
 * loaded back bit for bit, bad values refused naming the edge, tampering
 * caught by the manifest's hash. */
static void edge_columns_round_trip(void **unused)
{
    (void)unused;
    const char *dir = tmp_path("edge_cols");
    bl_connectome *c, *d;
    adopt_copy(&c);
    bl_error err = {0};
    assert_null(bl_connectome_edge_weights(c));
    const double w[3] = {0.5, -1.25e-3, 0.1 + 0.2}, dl[3] = {1.8, 0.05, 1e6};
    const double bad_w[3] = {0.5, 0.0 / 0.0 + 1.0, 2.0}, bad_d[3] = {1.0, 2.0, 0.0};
    assert_int_equal(bl_connectome_set_edge_column(c, "weights", bad_w, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "edge 1"));
    assert_int_equal(bl_connectome_set_edge_column(c, "delays", bad_d, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "edge 2"));
    assert_int_equal(bl_connectome_set_edge_column(c, "weight", w, &err), BL_ERR_INVALID);
    assert_null(bl_connectome_edge_weights(c));
    assert_int_equal(bl_connectome_set_edge_column(c, "weights", w, &err), BL_OK);
    assert_int_equal(bl_connectome_set_edge_column(c, "delays", dl, &err), BL_OK);
    assert_int_equal(bl_connectome_save(c, dir, &err), BL_OK);
    assert_int_equal(bl_connectome_load(dir, &d, &err), BL_OK);
    assert_memory_equal(bl_connectome_edge_weights(d), w, sizeof w);
    assert_memory_equal(bl_connectome_edge_delays_ms(d), dl, sizeof dl);
    bl_connectome_destroy(d);
    /* Removing a column: a second save has none. */
    assert_int_equal(bl_connectome_set_edge_column(c, "delays", NULL, &err), BL_OK);
    assert_null(bl_connectome_edge_delays_ms(c));
    char path[300];
    snprintf(path, sizeof path, "%s/weights.npy", dir);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, -1, SEEK_END);
    fputc(0x7f, f);
    fclose(f);
    assert_int_equal(bl_connectome_load(dir, &d, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "weights.npy"));
    bl_connectome_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(csr_validation),
        cmocka_unit_test(neuron_table),
        cmocka_unit_test(directory_round_trip),
        cmocka_unit_test(edge_columns_round_trip),
        cmocka_unit_test(synth_is_deterministic),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
