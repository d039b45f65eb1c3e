/* The table importers' kit: id keys (integers by value, text by checked
 * hash), their canonical order, the edge list's sort and sums, and the
 * report. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "connectome/import/ids.h"

static void test_ids(void **state)
{
    (void)state;
    bl_ids ids;
    bl_error err;
    int32_t j;
    int added;
    assert_int_equal(bl_ids_init(&ids, 2, &err), BL_OK);
    /* Enough ids to make the map grow several times. */
    for (int i = 0; i < 5000; i++) {
        char buf[32];
        int len = snprintf(buf, sizeof buf, "%d", 7919 * (i + 1));
        assert_int_equal(bl_ids_add(&ids, buf, (size_t)len, &j, &added, &err), BL_OK);
        assert_int_equal(j, i);
        assert_int_equal(added, 1);
    }
    assert_int_equal(bl_ids_add(&ids, "AVAL", 4, &j, &added, &err), BL_OK);
    assert_int_equal(j, 5000);
    assert_int_equal(bl_ids_add_int(&ids, 7919, &j, &added, &err), BL_OK);
    assert_int_equal(j, 0);
    assert_int_equal(added, 0);
    assert_int_equal(bl_ids_find(&ids, "7919", 4), 0);
    assert_int_equal(bl_ids_find_int(&ids, 7919 * 5000), 4999);
    /* Non-canonical integer text is text: "007919" is not 7919. */
    assert_int_equal(bl_ids_find(&ids, "007919", 6), -1);
    assert_int_equal(bl_ids_find(&ids, "AVAL", 4), 5000);
    assert_int_equal(bl_ids_find(&ids, "AVAR", 4), -1);
    assert_int_equal(bl_ids_find_int(&ids, 1), -1);
    /* Sorted: integers ascending, then text. */
    int32_t *remap = NULL;
    assert_int_equal(bl_ids_add(&ids, "-5", 2, &j, &added, &err), BL_OK);
    assert_int_equal(bl_ids_sort(&ids, &remap, &err), BL_OK);
    assert_string_equal(ids.text[0], "-5");
    assert_string_equal(ids.text[1], "7919");
    assert_string_equal(ids.text[5001], "AVAL");
    assert_int_equal(remap[5001], 0);
    assert_int_equal(remap[0], 1);
    assert_int_equal(bl_ids_find(&ids, "AVAL", 4), 5001);
    assert_int_equal(bl_ids_find_int(&ids, 7919 * 2), 2);
    free(remap);
    bl_ids_free(&ids);
}

static void test_edges(void **state)
{
    (void)state;
    bl_edge_list l = {0};
    bl_error err;
    /* rows: (2,1) (0,3) (2,1) (0,1) (0,3) (1,0) */
    const int32_t pre[] = {2, 0, 2, 0, 0, 1}, post[] = {1, 3, 1, 1, 3, 0}, cnt[] = {5, 1, 2, 4, 7, 1};
    for (int i = 0; i < 6; i++)
        assert_int_equal(bl_edge_list_push(&l, pre[i], post[i], cnt[i], (uint64_t)i + 1, &err), BL_OK);
    uint64_t merged = 0;
    assert_int_equal(bl_edge_list_sum(&l, "t", &merged, &err), BL_OK);
    assert_int_equal(merged, 2);
    assert_int_equal(l.n, 4);
    const int32_t want[4][4] = {{0, 1, 4, 4}, {0, 3, 8, 2}, {1, 0, 1, 6}, {2, 1, 7, 1}};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(l.e[i].pre, want[i][0]);
        assert_int_equal(l.e[i].post, want[i][1]);
        assert_int_equal(l.e[i].count, want[i][2]);
        assert_int_equal(l.e[i].line, (uint32_t)want[i][3]); /* the first row of the pair */
    }
    /* A sum past INT32_MAX is an error naming the first row. */
    bl_edge_list_free(&l);
    assert_int_equal(bl_edge_list_push(&l, 0, 0, INT32_MAX, 9, &err), BL_OK);
    assert_int_equal(bl_edge_list_push(&l, 0, 0, 1, 10, &err), BL_OK);
    assert_int_equal(bl_edge_list_sum(&l, "t.csv", &merged, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "t.csv: row 9"));
    bl_edge_list_free(&l);
}

static void test_report_and_names(void **state)
{
    (void)state;
    bl_report r = {0};
    bl_report_add(&r, "a %d", 1);
    bl_report_add(&r, "b");
    assert_string_equal(r.text, "a 1\nb\n");
    bl_report_free(&r);
    char name[32];
    bl_import_column_name("Soma Side", name, sizeof name);
    assert_string_equal(name, "soma_side");
    bl_import_column_name("", name, sizeof name);
    assert_string_equal(name, "column");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_report_and_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
