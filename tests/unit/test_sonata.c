/* Unit tests for src/io/sonata.c: write/read round trips (with and without
 * the trial extension, each sorting), empty files, byte-reproducible output,
 * refusal to overwrite, data that contradicts its sorting attribute, and HDF5
 * failures reported as one line naming the path. */
/* nftw (teardown) is an X/Open function. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/hash.h"
#include "brainlesslab/sonata.h"

#include "test_support.h"

BL_TEST_TMPDIR_GROUP("sonata")

static const double times[] = {0.1, 0.1, 0.5, 1.25, 2.0, 2.0, 7.75};
static const uint64_t ids[] = {3, 0, 2, 3, 1, 4, 0};
static const uint32_t trials[] = {0, 0, 0, 1, 1, 1, 2};
#define N_SPIKES (sizeof times / sizeof times[0])

static void test_round_trip_by_time(void **state)
{
    (void)state;
    const char *path = tmp_path("by_time.h5");
    bl_error err = {0};
    assert_int_equal(
        bl_sonata_write_spikes(path, "brain", N_SPIKES, times, ids, trials, "by_time", &err),
        BL_OK);
    bl_sonata_spikes s;
    assert_int_equal(bl_sonata_read_spikes(path, NULL, &s, &err), BL_OK);
    assert_string_equal(s.population, "brain");
    assert_string_equal(s.sorting, "by_time");
    assert_int_equal(s.n, N_SPIKES);
    assert_true(s.has_trials);
    for (size_t i = 0; i < N_SPIKES; i++) {
        assert_true(s.timestamps_ms[i] == times[i]); /* bit-exact */
        assert_int_equal(s.node_ids[i], ids[i]);
        assert_int_equal(s.trials[i], trials[i]);
    }
    bl_sonata_spikes_free(&s);
    /* By name too. */
    assert_int_equal(bl_sonata_read_spikes(path, "brain", &s, &err), BL_OK);
    assert_int_equal(s.n, N_SPIKES);
    bl_sonata_spikes_free(&s);
    assert_int_equal(bl_sonata_read_spikes(path, "other", &s, &err), BL_ERR_FORMAT);
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, "/spikes/other"));
    assert_null(s.timestamps_ms);
}

static void test_round_trip_by_id_no_trials(void **state)
{
    (void)state;
    const double t[] = {5.0, 1.0, 2.0, 0.5, 0.5, 9.0};
    const uint64_t id[] = {0, 1, 1, 2, 7, 7};
    const char *path = tmp_path("by_id.h5");
    bl_error err = {0};
    assert_int_equal(bl_sonata_write_spikes(path, "pop", 6, t, id, NULL, "by_id", &err), BL_OK);
    bl_sonata_spikes s;
    assert_int_equal(bl_sonata_read_spikes(path, NULL, &s, &err), BL_OK);
    assert_string_equal(s.sorting, "by_id");
    assert_false(s.has_trials);
    assert_null(s.trials);
    assert_int_equal(s.n, 6);
    assert_memory_equal(s.timestamps_ms, t, sizeof t);
    assert_memory_equal(s.node_ids, id, sizeof id);
    bl_sonata_spikes_free(&s);

    const char *none = tmp_path("none.h5");
    assert_int_equal(bl_sonata_write_spikes(none, "pop", N_SPIKES, times, ids, NULL, "none", &err),
                     BL_OK);
    assert_int_equal(bl_sonata_read_spikes(none, NULL, &s, &err), BL_OK);
    assert_string_equal(s.sorting, "none");
    bl_sonata_spikes_free(&s);
}

static void test_empty(void **state)
{
    (void)state;
    const char *path = tmp_path("empty.h5");
    bl_error err = {0};
    assert_int_equal(bl_sonata_write_spikes(path, "silent", 0, NULL, NULL, NULL, "by_time", &err),
                     BL_OK);
    bl_sonata_spikes s;
    assert_int_equal(bl_sonata_read_spikes(path, "silent", &s, &err), BL_OK);
    assert_int_equal(s.n, 0);
    assert_null(s.timestamps_ms);
    assert_null(s.node_ids);
    assert_string_equal(s.sorting, "by_time");
    bl_sonata_spikes_free(&s);

    const uint32_t tr[1] = {0};
    const char *with_trial = tmp_path("empty_trial.h5");
    assert_int_equal(
        bl_sonata_write_spikes(with_trial, "silent", 0, times, ids, tr, "none", &err), BL_OK);
    assert_int_equal(bl_sonata_read_spikes(with_trial, NULL, &s, &err), BL_OK);
    assert_int_equal(s.n, 0);
    assert_true(s.has_trials);
    bl_sonata_spikes_free(&s);
}

static void test_reproducible_bytes(void **state)
{
    (void)state;
    const char *a = tmp_path("same_a.h5");
    const char *b = tmp_path("same_b.h5");
    bl_error err = {0};
    assert_int_equal(bl_sonata_write_spikes(a, "p", N_SPIKES, times, ids, trials, "none", &err),
                     BL_OK);
    sleep(1); /* a stored modification time would now differ */
    assert_int_equal(bl_sonata_write_spikes(b, "p", N_SPIKES, times, ids, trials, "none", &err),
                     BL_OK);
    char ha[BL_SHA256_HEX_LEN + 1], hb[BL_SHA256_HEX_LEN + 1];
    assert_int_equal(bl_sha256_file(a, ha, NULL, &err), BL_OK);
    assert_int_equal(bl_sha256_file(b, hb, NULL, &err), BL_OK);
    assert_string_equal(ha, hb);
}

static void test_refusals(void **state)
{
    (void)state;
    bl_error err = {0};
    const char *path = tmp_path("refuse.h5");
    assert_int_equal(bl_sonata_write_spikes(path, "p", N_SPIKES, times, ids, NULL, "none", &err),
                     BL_OK);
    /* Written once. */
    assert_int_equal(bl_sonata_write_spikes(path, "p", N_SPIKES, times, ids, NULL, "none", &err),
                     BL_ERR_EXISTS);
    assert_non_null(strstr(err.message, path));

    /* Data that contradicts its sorting attribute, bad names, bad values. */
    const char *p2 = tmp_path("unsorted.h5");
    assert_int_equal(bl_sonata_write_spikes(p2, "p", N_SPIKES, times, ids, NULL, "by_id", &err),
                     BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "spike 1"));
    assert_int_equal(access(p2, F_OK), -1);
    const double back[] = {2.0, 1.0};
    const uint64_t two[] = {0, 1};
    assert_int_equal(bl_sonata_write_spikes(p2, "p", 2, back, two, NULL, "by_time", &err),
                     BL_ERR_INVALID);
    assert_int_equal(bl_sonata_write_spikes(p2, "p", 2, back, two, NULL, "by_node", &err),
                     BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "by_node"));
    assert_int_equal(bl_sonata_write_spikes(p2, "a/b", 2, back, two, NULL, "none", &err),
                     BL_ERR_INVALID);
    const double nan_t[] = {0.0, NAN};
    assert_int_equal(bl_sonata_write_spikes(p2, "p", 2, nan_t, two, NULL, "none", &err),
                     BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "timestamps_ms[1]"));
}

static void test_hdf5_errors_name_the_path(void **state)
{
    (void)state;
    bl_error err = {0};
    /* Unwritable location: a directory that does not exist. */
    const char *path = tmp_path("no/such/dir/spikes.h5");
    assert_int_equal(bl_sonata_write_spikes(path, "p", N_SPIKES, times, ids, NULL, "none", &err),
                     BL_ERR_IO);
    assert_non_null(strstr(err.message, path));
    assert_null(strchr(err.message, '\n'));

    /* Unwritable location: a read-only directory (root ignores permissions). */
    if (geteuid() != 0) {
        const char *ro = tmp_path("readonly");
        assert_int_equal(mkdir(ro, 0555), 0);
        char inside[600];
        snprintf(inside, sizeof inside, "%s/spikes.h5", ro);
        assert_int_equal(
            bl_sonata_write_spikes(inside, "p", N_SPIKES, times, ids, NULL, "none", &err),
            BL_ERR_IO);
        assert_non_null(strstr(err.message, inside));
        chmod(ro, 0755);
    }

    /* Reading something that is not HDF5, or is HDF5 without spikes. */
    const char *text = tmp_path("not.h5");
    FILE *f = fopen(text, "w");
    assert_non_null(f);
    fputs("not hdf5\n", f);
    fclose(f);
    bl_sonata_spikes s;
    assert_int_equal(bl_sonata_read_spikes(text, NULL, &s, &err), BL_ERR_FORMAT);
    assert_non_null(strstr(err.message, text));
    assert_int_equal(bl_sonata_read_spikes(tmp_path("missing.h5"), NULL, &s, &err), BL_ERR_IO);
    assert_non_null(strstr(err.message, "missing.h5"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_by_time), cmocka_unit_test(test_round_trip_by_id_no_trials),
        cmocka_unit_test(test_empty),              cmocka_unit_test(test_reproducible_bytes),
        cmocka_unit_test(test_refusals),           cmocka_unit_test(test_hdf5_errors_name_the_path),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
