/* Unit tests for src/io/csv.c: quoting, CRLF, blank lines, gzip input, line
 * numbers in every message, integer and float fields, header lookup, the
 * pathological-input caps, and the quoting writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "brainlesslab/csv.h"

#include "test_support.h"

BL_TEST_TMPDIR_GROUP("csv")

static const char *write_file(const char *name, const char *text, size_t n)
{
    const char *path = tmp_path(name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (n)
        assert_int_equal(fwrite(text, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    return path;
}

static const char *write_text(const char *name, const char *text)
{
    return write_file(name, text, strlen(text));
}

static bl_csv *open_ok(const char *path)
{
    bl_csv *c = NULL;
    bl_error err;
    bl_status st = bl_csv_open(path, &c, &err);
    if (st)
        print_error("%s\n", err.message);
    assert_int_equal(st, BL_OK);
    assert_non_null(c);
    return c;
}

static void next_row(bl_csv *c, uint64_t line, size_t nfields)
{
    bl_error err;
    int r = bl_csv_next(c, &err);
    if (r != 1)
        print_error("bl_csv_next: %d (%s)\n", r, r < 0 ? err.message : "end of file");
    assert_int_equal(r, 1);
    assert_int_equal(bl_csv_line(c), line);
    assert_int_equal(bl_csv_nfields(c), nfields);
}

static void expect_end(bl_csv *c)
{
    bl_error err;
    assert_int_equal(bl_csv_next(c, &err), 0);
    assert_int_equal(bl_csv_next(c, &err), 0);
}

/* The next read fails with a one-line message naming path and containing fragment. */
static void expect_next_fail(bl_csv *c, const char *fragment)
{
    bl_error err;
    bl_error_clear(&err);
    int r = bl_csv_next(c, &err);
    if (r != -1 || !strstr(err.message, bl_csv_path(c)) || !strstr(err.message, fragment))
        print_error("got %d, \"%s\"; wanted \"%s\"\n", r, err.message, fragment);
    assert_int_equal(r, -1);
    assert_int_not_equal(err.status, BL_OK);
    assert_non_null(strstr(err.message, bl_csv_path(c)));
    assert_non_null(strstr(err.message, fragment));
    assert_null(strchr(err.message, '\n'));
    /* Errors are sticky. */
    bl_error again;
    assert_int_equal(bl_csv_next(c, &again), -1);
    assert_string_equal(again.message, err.message);
}

static void expect_msg(bl_status st, const bl_error *err, const char *path, const char *fragment)
{
    if (st == BL_OK || !strstr(err->message, path) || !strstr(err->message, fragment))
        print_error("status %d, \"%s\"; wanted \"%s\"\n", st, err->message, fragment);
    assert_int_not_equal(st, BL_OK);
    assert_non_null(strstr(err->message, path));
    assert_non_null(strstr(err->message, fragment));
    assert_null(strchr(err->message, '\n'));
}

static void test_quoting(void **state)
{
    (void)state;
    const char *path = write_text("quoted.csv", "name,note,n\n"
                                                "\"a, b\",\"he said \"\"hi\"\"\",1\n"
                                                "  padded  , \" kept \" ,2\n"
                                                "\"\",,3\n"
                                                "\"multi\nline\",x,4\n"
                                                "last,row,5");
    bl_csv *c = open_ok(path);
    next_row(c, 1, 3);
    assert_string_equal(bl_csv_field(c, 0), "name");
    next_row(c, 2, 3);
    assert_string_equal(bl_csv_field(c, 0), "a, b");
    assert_string_equal(bl_csv_field(c, 1), "he said \"hi\"");
    next_row(c, 3, 3);
    /* Unquoted fields are trimmed, quoted ones keep their spaces. */
    assert_string_equal(bl_csv_field(c, 0), "padded");
    assert_string_equal(bl_csv_field(c, 1), " kept ");
    next_row(c, 4, 3);
    assert_string_equal(bl_csv_field(c, 0), "");
    assert_string_equal(bl_csv_field(c, 1), "");
    assert_string_equal(bl_csv_field(c, 2), "3");
    next_row(c, 5, 3); /* a row is numbered by the line it starts on */
    assert_string_equal(bl_csv_field(c, 0), "multi\nline");
    next_row(c, 7, 3);
    assert_string_equal(bl_csv_field(c, 2), "5");
    assert_string_equal(bl_csv_field(c, 3), "");
    assert_string_equal(bl_csv_field(c, 99), "");
    expect_end(c);
    assert_string_equal(bl_csv_path(c), path);
    bl_csv_close(c);
}

static void test_crlf_and_blank_lines(void **state)
{
    (void)state;
    const char *path = write_text("crlf.csv", "\r\n"
                                              "a,b\r\n"
                                              "\r\n"
                                              "   \r\n"
                                              "1,2\r\n"
                                              "\"x\r\ny\",3\r\n"
                                              "\n\n"
                                              "4,5\r"      /* old Mac line end */
                                              "6,7\r\n");
    bl_csv *c = open_ok(path);
    next_row(c, 2, 2);
    assert_string_equal(bl_csv_field(c, 1), "b");
    next_row(c, 5, 2);
    assert_string_equal(bl_csv_field(c, 1), "2");
    next_row(c, 6, 2);
    assert_string_equal(bl_csv_field(c, 0), "x\r\ny");
    next_row(c, 10, 2);
    assert_string_equal(bl_csv_field(c, 1), "5");
    next_row(c, 11, 2);
    assert_string_equal(bl_csv_field(c, 1), "7");
    expect_end(c);
    bl_csv_close(c);

    c = open_ok(write_text("empty.csv", ""));
    expect_end(c);
    bl_csv_close(c);
    c = open_ok(write_text("blank.csv", "\n \n\r\n\t\n"));
    expect_end(c);
    bl_csv_close(c);
}

static void test_gzip(void **state)
{
    (void)state;
    const char *path = tmp_path("table.csv.gz");
    gzFile gz = gzopen(path, "wb");
    assert_non_null(gz);
    gzputs(gz, "id,value\n");
    for (int i = 0; i < 50000; i++)
        gzprintf(gz, "%d,-%d.25\n", i, i);
    assert_int_equal(gzclose(gz), Z_OK);

    bl_csv *c = open_ok(path);
    bl_error err;
    next_row(c, 1, 2);
    size_t id_col, value_col;
    assert_int_equal(bl_csv_column(c, "id", &id_col, &err), BL_OK);
    assert_int_equal(bl_csv_column(c, "value", &value_col, &err), BL_OK);
    assert_int_equal(value_col, 1);
    for (int i = 0; i < 50000; i++) {
        next_row(c, (uint64_t)i + 2, 2);
        int64_t id;
        double v;
        assert_int_equal(bl_csv_field_i64(c, id_col, 0, INT64_MAX, &id, &err), BL_OK);
        assert_int_equal(id, i);
        assert_int_equal(bl_csv_field_f64(c, value_col, &v, &err), BL_OK);
        assert_true(v == -(i + 0.25));
    }
    expect_end(c);
    bl_csv_close(c);

    /* A truncated gzip stream is an error, not a short table. */
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static unsigned char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(n > 1000);
    const char *cut = write_file("cut.csv.gz", (const char *)buf, n / 2);
    c = open_ok(cut);
    int r;
    while ((r = bl_csv_next(c, &err)) == 1) {
    }
    assert_int_equal(r, -1);
    assert_non_null(strstr(err.message, cut));
    assert_non_null(strstr(err.message, "cannot read"));
    bl_csv_close(c);

    /* Corrupt deflate data. */
    memset(buf + 20, 0xff, 64);
    c = open_ok(write_file("corrupt.csv.gz", (const char *)buf, n));
    while ((r = bl_csv_next(c, &err)) == 1) {
    }
    assert_int_equal(r, -1);
    assert_non_null(strstr(err.message, "corrupt.csv.gz"));
    bl_csv_close(c);
}

static void test_quote_errors(void **state)
{
    (void)state;
    bl_csv *c = open_ok(write_text("unterminated.csv", "a,b\n1,2\n3,\"open\n4,5\n\n6,7\n"));
    next_row(c, 1, 2);
    next_row(c, 2, 2);
    expect_next_fail(c, ":3: unterminated quoted field");
    bl_csv_close(c);

    c = open_ok(write_text("stray.csv", "a,b\n1,x\"y\n"));
    next_row(c, 1, 2);
    expect_next_fail(c, "stray.csv:2:4: malformed quoting");
    bl_csv_close(c);

    c = open_ok(write_text("after.csv", "a,b\r\n\r\n1,\"xy\"z\r\n"));
    next_row(c, 1, 2);
    expect_next_fail(c, "after.csv:3:7: malformed quoting");
    bl_csv_close(c);

    c = open_ok(write_file("nul.csv", "a,b\n1,x\0y\n", 10));
    next_row(c, 1, 2);
    expect_next_fail(c, "nul.csv:2: column 2: field contains a NUL byte");
    bl_csv_close(c);
}

static void test_integers(void **state)
{
    (void)state;
    const char *path = write_text("ints.csv", "v\n"
                                              "42\n"
                                              "-7\n"
                                              "007\n"
                                              "9223372036854775807\n"
                                              "-9223372036854775808\n"
                                              "abc\n"
                                              "1.5\n"
                                              "\n"
                                              "\"\"\n"
                                              "+1\n"
                                              "9223372036854775808\n"
                                              "-9223372036854775809\n"
                                              "99999999999999999999999\n"
                                              "\" 1\"\n"
                                              "1e3\n"
                                              "-\n"
                                              "101\n");
    bl_csv *c = open_ok(path);
    bl_error err;
    int64_t v;
    next_row(c, 1, 1);
    static const int64_t good[] = {42, -7, 7, INT64_MAX, INT64_MIN};
    for (int i = 0; i < 5; i++) {
        next_row(c, (uint64_t)i + 2, 1);
        assert_int_equal(bl_csv_field_i64(c, 0, INT64_MIN, INT64_MAX, &v, &err), BL_OK);
        assert_true(v == good[i]);
    }
    static const struct {
        uint64_t line;
        const char *msg;
    } bad[] = {
        {7, "ints.csv:7: column 1: 'abc' is not an integer in [-100, 100]"},
        {8, "ints.csv:8: column 1: '1.5' is not an integer"},
        {10, "ints.csv:10: column 1: '' is not an integer"},
        {11, "ints.csv:11: column 1: '+1' is not an integer"},
        {12, "'9223372036854775808' is not an integer"},
        {13, "'-9223372036854775809' is not an integer"},
        {14, "'99999999999999999999999' is not an integer"},
        {15, "' 1' is not an integer"},
        {16, "'1e3' is not an integer"},
        {17, "'-' is not an integer"},
        {18, "ints.csv:18: column 1: '101' is not an integer in [-100, 100]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        next_row(c, bad[i].line, 1);
        v = 12345;
        expect_msg(bl_csv_field_i64(c, 0, -100, 100, &v, &err), &err, path, bad[i].msg);
        assert_int_equal(v, 12345);
    }
    /* Column past the end of the row. */
    expect_msg(bl_csv_field_i64(c, 3, 0, 1, &v, &err), &err, path,
               ":18: column 4 is missing (the row has 1 fields)");
    expect_end(c);
    bl_csv_close(c);

    /* A long bad field is quoted in part, not in whole. */
    char text[4096];
    memset(text, '9', sizeof text - 2);
    text[sizeof text - 2] = '\n';
    text[sizeof text - 1] = '\0';
    c = open_ok(write_text("long.csv", text));
    next_row(c, 1, 1);
    bl_status st = bl_csv_field_i64(c, 0, 0, 10, &v, &err);
    expect_msg(st, &err, "long.csv", "...' is not an integer in [0, 10]");
    assert_true(strlen(err.message) < 300);
    bl_csv_close(c);

    /* Control bytes in a field are escaped so that the message stays one line. */
    c = open_ok(write_text("ctl.csv", "\"1\r\n2\"\n"));
    next_row(c, 1, 1);
    st = bl_csv_field_i64(c, 0, 0, 10, &v, &err);
    expect_msg(st, &err, "ctl.csv", "ctl.csv:1: column 1: '1\\x0d\\x0a2' is not an integer");
    double d;
    st = bl_csv_field_f64(c, 0, &d, &err);
    expect_msg(st, &err, "ctl.csv", "'1\\x0d\\x0a2' is not a finite number");
    bl_csv_close(c);
}

static void test_floats(void **state)
{
    (void)state;
    const char *path = write_text("floats.csv", "1.5,-2e-3,0,1e-400,0x1p3\n"
                                                "nan,inf,1e999,,abc\n"
                                                "1.5x,\" 2\",-\n");
    bl_csv *c = open_ok(path);
    bl_error err;
    double v;
    next_row(c, 1, 5);
    static const double good[] = {1.5, -2e-3, 0.0, 0.0, 8.0};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(bl_csv_field_f64(c, i, &v, &err), BL_OK);
        assert_true(v == good[i]);
    }
    next_row(c, 2, 5);
    expect_msg(bl_csv_field_f64(c, 0, &v, &err), &err, path,
               "floats.csv:2: column 1: 'nan' is not a finite number");
    expect_msg(bl_csv_field_f64(c, 1, &v, &err), &err, path, "column 2: 'inf'");
    expect_msg(bl_csv_field_f64(c, 2, &v, &err), &err, path, "column 3: '1e999'");
    expect_msg(bl_csv_field_f64(c, 3, &v, &err), &err, path, "column 4: ''");
    expect_msg(bl_csv_field_f64(c, 4, &v, &err), &err, path, "column 5: 'abc'");
    expect_msg(bl_csv_field_f64(c, 5, &v, &err), &err, path, "column 6 is missing");
    next_row(c, 3, 3);
    expect_msg(bl_csv_field_f64(c, 0, &v, &err), &err, path, ":3: column 1: '1.5x'");
    expect_msg(bl_csv_field_f64(c, 1, &v, &err), &err, path, "column 2: ' 2'");
    expect_msg(bl_csv_field_f64(c, 2, &v, &err), &err, path, "column 3: '-'");
    bl_csv_close(c);
}

static void test_columns(void **state)
{
    (void)state;
    const char *path = write_text("cols.csv", "Source , Target,Weight,Weight2\n"
                                              "I1L , I2L           ,10,1\n"
                                              "x,y\n");
    bl_csv *c = open_ok(path);
    bl_error err;
    size_t i = 99;
    next_row(c, 1, 4);
    assert_int_equal(bl_csv_column(c, "Target", &i, &err), BL_OK);
    assert_int_equal(i, 1);
    assert_int_equal(bl_csv_column(c, "Weight", &i, &err), BL_OK);
    assert_int_equal(i, 2);
    expect_msg(bl_csv_column(c, "Type", &i, &err), &err, path,
               "cols.csv:1: missing column 'Type'");
    assert_int_equal(bl_csv_expect_fields(c, 4, &err), BL_OK);
    next_row(c, 2, 4);
    assert_string_equal(bl_csv_field(c, 1), "I2L");
    int64_t w;
    assert_int_equal(bl_csv_field_i64(c, 2, 0, 1000, &w, &err), BL_OK);
    assert_int_equal(w, 10);
    next_row(c, 3, 2);
    expect_msg(bl_csv_expect_fields(c, 4, &err), &err, path, "cols.csv:3: expected 4 fields, found 2");
    bl_csv_close(c);

    c = open_ok(write_text("dup.csv", "a,b,a\n"));
    next_row(c, 1, 3);
    expect_msg(bl_csv_column(c, "a", &i, &err), &err, "dup.csv",
               "column 'a' appears twice (columns 1 and 3)");
    bl_csv_close(c);

    expect_msg(bl_csv_open(tmp_path("missing.csv"), &c, &err), &err, "missing.csv",
               "cannot open");
    assert_null(c);
}

static void test_limits(void **state)
{
    (void)state;
    /* One field over 1 MiB. */
    size_t n = (1u << 20) + 100;
    char *big = malloc(n + 8);
    assert_non_null(big);
    memcpy(big, "a\n", 2);
    memset(big + 2, 'x', n);
    memcpy(big + 2 + n, "\n", 2);
    bl_csv *c = open_ok(write_file("bigfield.csv", big, n + 3));
    next_row(c, 1, 1);
    expect_next_fail(c, "bigfield.csv:2: column 1: field longer than 1048576 bytes");
    bl_csv_close(c);

    /* An unterminated quote swallowing the rest of a large file names the line it opened. */
    big[0] = '"';
    c = open_ok(write_file("bigquote.csv", big, n + 3));
    expect_next_fail(c, "bigquote.csv:1: field longer than 1048576 bytes (unterminated quote?)");
    bl_csv_close(c);

    /* More than 100000 fields in a row. */
    size_t fields = 100001;
    char *wide = realloc(big, 2 * fields + 1);
    assert_non_null(wide);
    for (size_t i = 0; i < fields; i++) {
        wide[2 * i] = '1';
        wide[2 * i + 1] = i + 1 == fields ? '\n' : ',';
    }
    c = open_ok(write_file("wide.csv", wide, 2 * fields));
    expect_next_fail(c, "wide.csv:1: row has more than 100000 fields");
    bl_csv_close(c);

    /* Exactly 100000 is fine. */
    wide[2 * (fields - 2) + 1] = '\n';
    c = open_ok(write_file("wide_ok.csv", wide, 2 * (fields - 1)));
    next_row(c, 1, fields - 1);
    expect_end(c);
    bl_csv_close(c);
    free(wide);
}

static void test_writer(void **state)
{
    (void)state;
    static const char *cells[][4] = {
        {"plain", "with, comma", "with \"quote\"", "multi\nline"},
        {" lead", "trail ", "", "cr\rhere"},
        {"123", "-4.5", "a\tb", "\ttab"},
    };
    const char *path = tmp_path("written.csv");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 4; k++)
            assert_int_equal(bl_csv_write_field(f, cells[r][k], k == 3), 0);
    assert_int_equal(fclose(f), 0);

    /* Plain text is written plain; only what needs quoting is quoted. */
    char buf[512];
    f = fopen(path, "rb");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    assert_string_equal(buf, "plain,\"with, comma\",\"with \"\"quote\"\"\",\"multi\n");
    fclose(f);

    bl_csv *c = open_ok(path);
    bl_error err;
    for (int r = 0; r < 3; r++) {
        assert_int_equal(bl_csv_next(c, &err), 1);
        assert_int_equal(bl_csv_nfields(c), 4);
        for (int k = 0; k < 4; k++)
            assert_string_equal(bl_csv_field(c, (size_t)k), cells[r][k]);
    }
    expect_end(c);
    bl_csv_close(c);
    assert_int_equal(bl_csv_write_field(NULL, "x", 1), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quoting),      cmocka_unit_test(test_crlf_and_blank_lines),
        cmocka_unit_test(test_gzip),         cmocka_unit_test(test_quote_errors),
        cmocka_unit_test(test_integers),     cmocka_unit_test(test_floats),
        cmocka_unit_test(test_columns),      cmocka_unit_test(test_limits),
        cmocka_unit_test(test_writer),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
