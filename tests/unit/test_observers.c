/* Unit tests for the observers' and comparisons' building blocks: the SONATA
 * writer in pieces (round trip across chunks, time order enforced, written
 * once, abort removes the file), Welch's test with Cohen's d (hand values and
 * the documented degenerate cases) and Benjamini-Hochberg q-values. */
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

#include "brainlesslab/analysis.h"
#include "brainlesslab/sonata.h"

#include "test_support.h"

BL_TEST_TMPDIR_GROUP("observers")

static void test_writer_round_trip(void **state)
{
    (void)state;
    const char *path = tmp_path("pieces.h5");
    bl_error err = {0};
    bl_sonata_writer *w = NULL;
    assert_int_equal(bl_sonata_writer_open(path, "pop", &w, &err), BL_OK);
    enum { N = 40000, PIECE = 7001 };
    double *ts = malloc(N * sizeof *ts);
    uint64_t *ids = malloc(N * sizeof *ids);
    assert_non_null(ts);
    assert_non_null(ids);
    for (int i = 0; i < N; i++) {
        ts[i] = (i / 3) * 0.1;
        ids[i] = (uint64_t)((i * 7919) % 1000);
    }
    for (int a = 0; a < N; a += PIECE)
        assert_int_equal(bl_sonata_writer_append(w, (uint64_t)(N - a < PIECE ? N - a : PIECE), ts + a, ids + a, &err),
                         BL_OK);
    assert_int_equal(bl_sonata_writer_n(w), N);
    /* Back in time: refused, naming the path; the writer stays usable. */
    double early = 0.0;
    uint64_t one = 1;
    assert_int_equal(bl_sonata_writer_append(w, 1, &early, &one, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "pieces.h5"));
    assert_int_equal(bl_sonata_writer_close(w, &err), BL_OK);

    bl_sonata_spikes sp;
    assert_int_equal(bl_sonata_read_spikes(path, NULL, &sp, &err), BL_OK);
    assert_string_equal(sp.population, "pop");
    assert_string_equal(sp.sorting, "by_time");
    assert_int_equal(sp.n, N);
    assert_int_equal(sp.has_trials, 0);
    assert_memory_equal(sp.timestamps_ms, ts, N * sizeof *ts);
    assert_memory_equal(sp.node_ids, ids, N * sizeof *ids);
    bl_sonata_spikes_free(&sp);
    free(ts);
    free(ids);

    /* Written once. */
    assert_int_equal(bl_sonata_writer_open(path, "pop", &w, &err), BL_ERR_EXISTS);
}

static void test_writer_empty_and_abort(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_sonata_writer *w = NULL;
    const char *empty = tmp_path("empty.h5");
    assert_int_equal(bl_sonata_writer_open(empty, "pop", &w, &err), BL_OK);
    assert_int_equal(bl_sonata_writer_close(w, &err), BL_OK);
    bl_sonata_spikes sp;
    assert_int_equal(bl_sonata_read_spikes(empty, "pop", &sp, &err), BL_OK);
    assert_int_equal(sp.n, 0);
    bl_sonata_spikes_free(&sp);

    const char *gone = tmp_path("aborted.h5");
    assert_int_equal(bl_sonata_writer_open(gone, "pop", &w, &err), BL_OK);
    bl_sonata_writer_abort(w);
    struct stat sb;
    assert_int_not_equal(lstat(gone, &sb), 0);
    assert_int_equal(bl_sonata_writer_open(tmp_path("bad.h5"), "a/b", &w, &err), BL_ERR_INVALID);
}

static void test_welch(void **state)
{
    (void)state;
    const double a[] = {1, 2, 3, 4}, b[] = {2, 4, 6, 8};
    bl_contrast c;
    bl_welch(a, 4, b, 4, &c);
    /* var a = 5/3, var b = 20/3; se^2 = (5/3 + 20/3) / 4 = 25/12 */
    assert_float_equal(c.mean_a, 2.5, 1e-15);
    assert_float_equal(c.mean_b, 5.0, 1e-15);
    assert_float_equal(c.diff, 2.5, 1e-15);
    assert_float_equal(c.t, 2.5 / sqrt(25.0 / 12.0), 1e-12);
    double sa = 5.0 / 12.0, sb = 20.0 / 12.0;
    assert_float_equal(c.df, (sa + sb) * (sa + sb) / (sa * sa / 3 + sb * sb / 3), 1e-12);
    assert_float_equal(c.cohen_d, 2.5 / sqrt((5.0 / 3.0 + 20.0 / 3.0) / 2.0), 1e-12);
    assert_true(c.p > 0.05 && c.p < 0.2); /* t = 1.73 on ~4.4 df */

    assert_int_equal(c.status, BL_CONTRAST_TESTED);

    const double z[] = {0, 0, 0}, one[] = {1, 1, 1};
    bl_welch(z, 3, z, 3, &c); /* nothing varies: not tested */
    assert_true(isnan(c.p) && isnan(c.t) && isnan(c.cohen_d));
    assert_int_equal(c.status, BL_CONTRAST_CONSTANT_EQUAL);
    bl_welch(z, 3, one, 3, &c); /* no variance, different means: reported as such, never d = inf */
    assert_true(isnan(c.t) && isnan(c.p) && isnan(c.cohen_d) && c.diff == 1.0);
    assert_int_equal(c.status, BL_CONTRAST_CONSTANT_DIFFERS);
    assert_string_equal(bl_contrast_status_name(c.status), "constant_differs");
    bl_welch(z, 1, one, 3, &c); /* one trial: no test */
    assert_true(isnan(c.p));
    assert_int_equal(c.status, BL_CONTRAST_TOO_FEW_TRIALS);
}

static void test_paired(void **state)
{
    (void)state;
    /* Differences 1, 2, 2, 3: mean 2, sample variance 2/3. */
    const double a[] = {10, 20, 30, 40}, b[] = {11, 22, 32, 43};
    bl_contrast c;
    bl_paired(a, b, 4, &c);
    assert_int_equal(c.status, BL_CONTRAST_TESTED);
    assert_float_equal(c.diff, 2.0, 1e-15);
    assert_float_equal(c.t, 2.0 / (sqrt(2.0 / 3.0) / 2.0), 1e-12);
    assert_float_equal(c.df, 3.0, 0);
    assert_float_equal(c.cohen_d, 2.0 / sqrt(2.0 / 3.0), 1e-12);
    /* The unpaired test cannot see this difference through the trials' spread. */
    bl_contrast w;
    bl_welch(a, 4, b, 4, &w);
    assert_true(c.p < 0.05 && w.p > 0.5); /* t = 4.9 on 3 df against t = 0.2 */
    const double shifted[] = {12, 22, 32, 42};
    bl_paired(a, shifted, 4, &c); /* every trial +2: no variance in the differences */
    assert_int_equal(c.status, BL_CONTRAST_CONSTANT_DIFFERS);
    assert_true(isnan(c.t) && isnan(c.cohen_d));
    bl_paired(a, a, 4, &c);
    assert_int_equal(c.status, BL_CONTRAST_CONSTANT_EQUAL);
    bl_paired(a, b, 1, &c);
    assert_int_equal(c.status, BL_CONTRAST_TOO_FEW_TRIALS);
}

static void test_bh(void **state)
{
    (void)state;
    const double p[] = {0.01, 0.04, 0.03, NAN, 0.5};
    double q[5];
    bl_error err = {0};
    assert_int_equal(bl_bh_qvalues(p, 5, q, &err), BL_OK);
    /* m = 4 tested: sorted 0.01, 0.03, 0.04, 0.5 -> 0.04, 0.0533, 0.0533, 0.5 */
    assert_float_equal(q[0], 0.04, 1e-15);
    assert_float_equal(q[2], 0.04 * 4 / 3, 1e-15);
    assert_float_equal(q[1], 0.04 * 4 / 3, 1e-15);
    assert_true(isnan(q[3]));
    assert_float_equal(q[4], 0.5, 1e-15);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writer_round_trip),
        cmocka_unit_test(test_writer_empty_and_abort),
        cmocka_unit_test(test_welch),
        cmocka_unit_test(test_paired),
        cmocka_unit_test(test_bh),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
