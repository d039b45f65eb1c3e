/* bl_table over CSV: detection, schema, nulls, conversions to `want`, batches
 * across the block boundary, read_all, and the messages of bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include <cmocka.h>

#include "brainlesslab/table.h"
#include "test_support.h"

BL_TEST_TMPDIR_GROUP("table")

static const char *write_file(const char *name, const char *text)
{
    const char *p = tmp_path(name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

static void test_csv_schema_and_types(void **state)
{
    (void)state;
    const char *p = write_file("a.csv", "id,w,name,flag\n1,2.5,alpha,true\n-7,,\"b, c\",0\n,3,,False\n");
    bl_table *t;
    bl_error err;
    assert_int_equal(bl_table_open(p, BL_TABLE_AUTO, &t, &err), BL_OK);
    assert_int_equal(bl_table_format_of(t), BL_TABLE_CSV);
    assert_int_equal(bl_table_n_columns(t), 4);
    assert_string_equal(bl_table_column_name(t, 2), "name");
    assert_int_equal(bl_table_column_type(t, 1), BL_COL_STRING);
    assert_true(bl_table_n_rows(t) == UINT64_MAX);
    const char *names[] = {"id", "w", "name", "flag"};
    const bl_col_type want[] = {BL_COL_INT64, BL_COL_DOUBLE, 0, BL_COL_BOOL};
    bl_column c[4] = {0};
    assert_int_equal(bl_table_read_all(t, names, want, 4, c, &err), BL_OK);
    assert_int_equal(c[0].n, 3);
    assert_int_equal(c[0].i64[0], 1);
    assert_int_equal(c[0].i64[1], -7);
    assert_non_null(c[0].valid);
    assert_int_equal(c[0].valid[2], 0);
    assert_true(c[1].f64[0] == 2.5 && c[1].f64[2] == 3.0);
    assert_int_equal(c[1].valid[1], 0);
    assert_int_equal(c[2].type, BL_COL_STRING);
    assert_int_equal(c[2].offsets[2] - c[2].offsets[1], 4);
    assert_memory_equal(c[2].data + c[2].offsets[1], "b, c", 4);
    assert_int_equal(c[2].valid[2], 0);
    assert_int_equal(c[3].i64[0], 1);
    assert_int_equal(c[3].i64[1], 0);
    assert_int_equal(c[3].i64[2], 0);
    assert_null(c[3].valid);
    for (int i = 0; i < 4; i++)
        bl_column_clear(&c[i]);
    bl_table_close(t);
}

/* FlyWire's annotation tables are tab-separated: empty fields (two tabs, a
 * leading tab) stay fields, a comma is data, and ".tsv" reads as CSV does. */
static void test_tsv(void **state)
{
    (void)state;
    const char *p = write_file("a.tsv", "root_id\tcell_type\tside\n7\tMN9, left\tleft\n8\t\tright\n\tx\t\n");
    bl_table *t;
    bl_error err;
    assert_int_equal(bl_table_open(p, BL_TABLE_AUTO, &t, &err), BL_OK);
    assert_int_equal(bl_table_format_of(t), BL_TABLE_CSV);
    assert_int_equal(bl_table_n_columns(t), 3);
    const char *names[] = {"root_id", "cell_type", "side"};
    const bl_col_type want[] = {BL_COL_INT64, 0, 0};
    bl_column c[3] = {0};
    assert_int_equal(bl_table_read_all(t, names, want, 3, c, &err), BL_OK);
    assert_int_equal(c[0].n, 3);
    assert_int_equal(c[0].i64[1], 8);
    assert_int_equal(c[0].valid[2], 0);
    assert_memory_equal(c[1].data + c[1].offsets[0], "MN9, left", 9);
    assert_int_equal(c[1].valid[1], 0);
    assert_memory_equal(c[1].data + c[1].offsets[2], "x", 1);
    assert_memory_equal(c[2].data + c[2].offsets[1], "right", 5);
    assert_int_equal(c[2].valid[2], 0);
    for (int k = 0; k < 3; k++)
        bl_column_clear(&c[k]);
    bl_table_close(t);
}

static void test_csv_errors(void **state)
{
    (void)state;
    const char *p = write_file("b.csv", "x,y\n1,2\n3,z\n");
    bl_table *t;
    bl_error err;
    assert_int_equal(bl_table_open(p, BL_TABLE_AUTO, &t, &err), BL_OK);
    size_t idx;
    assert_int_equal(bl_table_find(t, "q", &idx, &err), BL_ERR_FORMAT);
    assert_non_null(strstr(err.message, "no column 'q' (the file has: x, y)"));
    const char *names[] = {"y"};
    const bl_col_type want[] = {BL_COL_INT64};
    bl_column c = {0};
    assert_int_equal(bl_table_read_all(t, names, want, 1, &c, &err), BL_ERR_FORMAT);
    assert_non_null(strstr(err.message, "column y, row 2: 'z' does not convert to int64"));
    assert_null(c.i64);
    bl_table_close(t);

    p = write_file("c.csv", "x,y\n1,2\n3\n");
    assert_int_equal(bl_table_open(p, BL_TABLE_AUTO, &t, &err), BL_OK);
    assert_int_equal(bl_table_read_all(t, names, NULL, 1, &c, &err), BL_ERR_FORMAT);
    assert_non_null(strstr(err.message, "c.csv:3"));
    bl_table_close(t);

    p = write_file("d.txt", "x,y\n");
    assert_int_equal(bl_table_open(p, BL_TABLE_AUTO, &t, &err), BL_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "cannot tell the table format"));
    assert_int_equal(bl_table_open(p, BL_TABLE_CSV, &t, &err), BL_OK);
    bl_table_close(t);
    p = write_file("e.csv", "");
    assert_int_equal(bl_table_open(p, BL_TABLE_AUTO, &t, &err), BL_ERR_FORMAT);
    assert_non_null(strstr(err.message, "empty file"));
    p = write_file("f.csv", "a,b,a\n");
    assert_int_equal(bl_table_open(p, BL_TABLE_AUTO, &t, &err), BL_ERR_FORMAT);
    assert_non_null(strstr(err.message, "'a' appears twice"));
}

/* 150001 rows in a gzip file: three blocks, batches concatenate in order. */
static void test_csv_gz_batches(void **state)
{
    (void)state;
    const char *p = tmp_path("big.csv.gz");
    gzFile gz = gzopen(p, "wb");
    assert_non_null(gz);
    gzprintf(gz, "pre,post\n");
    const int n = 150001;
    for (int i = 0; i < n; i++)
        gzprintf(gz, "%d,%d\n", i, n - i);
    gzclose(gz);
    bl_table *t;
    bl_error err;
    assert_int_equal(bl_table_open(p, BL_TABLE_AUTO, &t, &err), BL_OK);
    size_t cols[2] = {1, 0};
    const bl_col_type want[] = {BL_COL_INT64, BL_COL_DOUBLE};
    bl_column c[2] = {0};
    uint64_t rows, total = 0, batches = 0;
    while (bl_table_next(t, cols, want, 2, c, &rows, &err) == BL_OK && rows) {
        for (uint64_t r = 0; r < rows; r++) {
            assert_int_equal(c[0].i64[r], n - (int64_t)(total + r));
            assert_true(c[1].f64[r] == (double)(total + r));
        }
        total += rows;
        batches++;
    }
    assert_int_equal(total, n);
    assert_true(batches >= 3);
    assert_int_equal(c[0].n, 0);
    assert_int_equal(bl_table_next(t, cols, want, 2, c, &rows, &err), BL_OK);
    assert_int_equal(rows, 0);
    bl_table_close(t);
}

/* Numeric conversions between numbers: int64 -> double only when exact. */
static void test_conversions(void **state)
{
    (void)state;
    const char *p = write_file("g.csv", "a\n9007199254740993\n");
    bl_table *t;
    bl_error err;
    assert_int_equal(bl_table_open(p, BL_TABLE_AUTO, &t, &err), BL_OK);
    const char *names[] = {"a"};
    const bl_col_type want[] = {BL_COL_DOUBLE};
    bl_column c = {0};
    assert_int_equal(bl_table_read_all(t, names, want, 1, &c, &err), BL_OK); /* strtod rounds: a decimal */
    bl_column_clear(&c);
    bl_table_close(t);
    p = write_file("h.csv", "a\nnan\n");
    assert_int_equal(bl_table_open(p, BL_TABLE_AUTO, &t, &err), BL_OK);
    assert_int_equal(bl_table_read_all(t, names, want, 1, &c, &err), BL_ERR_FORMAT);
    bl_table_close(t);
    p = write_file("i.csv", "a\n99999999999999999999\n");
    const bl_col_type wi[] = {BL_COL_INT64};
    assert_int_equal(bl_table_open(p, BL_TABLE_AUTO, &t, &err), BL_OK);
    assert_int_equal(bl_table_read_all(t, names, wi, 1, &c, &err), BL_ERR_FORMAT);
    bl_table_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_schema_and_types),
        cmocka_unit_test(test_csv_errors),
        cmocka_unit_test(test_tsv),
        cmocka_unit_test(test_csv_gz_batches),
        cmocka_unit_test(test_conversions),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
