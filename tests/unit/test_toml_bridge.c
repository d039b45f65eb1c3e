/* Unit tests for src/plan/toml_bridge.cpp: the C view of a TOML document
 * (types, values, positions, document order, lookups), parse errors with
 * file:line:col, and hostile inputs (embedded NUL keys, deep nesting). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan/toml_bridge.h"

static bl_toml_doc *parse_ok(const char *text)
{
    bl_toml_doc *doc = NULL;
    bl_error err = {0};
    bl_status st = bl_toml_parse_text(text, strlen(text), "t.toml", &doc, &err);
    if (st)
        fail_msg("unexpected parse failure: %s", err.message);
    assert_non_null(doc);
    return doc;
}

static void test_types_and_values(void **state)
{
    (void)state;
    bl_toml_doc *doc = parse_ok("s = \"h\\u00e9llo\"\n"
                                "i = -42\n"
                                "f = 2.5\n"
                                "b = true\n"
                                "d = 1979-05-27\n"
                                "t = 07:32:00\n"
                                "dt = 1979-05-27T07:32:00Z\n"
                                "a = [1, 2.0, \"x\"]\n"
                                "[tab]\n"
                                "k = 1\n");
    const bl_toml_node *root = bl_toml_root(doc);
    assert_int_equal(bl_toml_type_of(root), BL_TOML_TABLE);
    assert_int_equal(bl_toml_table_size(root), 9);

    const char *s;
    size_t len;
    assert_true(bl_toml_get_string(bl_toml_table_get(root, "s"), &s, &len));
    assert_string_equal(s, "h\xc3\xa9llo");
    assert_int_equal(len, 6);

    int64_t i = 0;
    assert_true(bl_toml_get_int(bl_toml_table_get(root, "i"), &i));
    assert_int_equal(i, -42);
    double d = 0;
    assert_true(bl_toml_get_double(bl_toml_table_get(root, "f"), &d));
    assert_true(d == 2.5);
    /* Integers are accepted where floats are expected... */
    assert_true(bl_toml_get_double(bl_toml_table_get(root, "i"), &d));
    assert_true(d == -42.0);
    /* ...but not the other way round. */
    assert_false(bl_toml_get_int(bl_toml_table_get(root, "f"), &i));
    int b = 0;
    assert_true(bl_toml_get_bool(bl_toml_table_get(root, "b"), &b));
    assert_int_equal(b, 1);
    assert_false(bl_toml_get_bool(bl_toml_table_get(root, "i"), &b));
    assert_false(bl_toml_get_string(bl_toml_table_get(root, "i"), &s, NULL));

    assert_int_equal(bl_toml_type_of(bl_toml_table_get(root, "d")), BL_TOML_DATE);
    assert_int_equal(bl_toml_type_of(bl_toml_table_get(root, "t")), BL_TOML_TIME);
    assert_int_equal(bl_toml_type_of(bl_toml_table_get(root, "dt")), BL_TOML_DATE_TIME);
    assert_true(bl_toml_get_datetime(bl_toml_table_get(root, "d"), &s));
    assert_string_equal(s, "1979-05-27");
    assert_true(bl_toml_get_datetime(bl_toml_table_get(root, "dt"), &s));
    assert_non_null(strstr(s, "1979-05-27T07:32:00"));
    assert_false(bl_toml_get_datetime(bl_toml_table_get(root, "s"), &s));

    const bl_toml_node *a = bl_toml_table_get(root, "a");
    assert_int_equal(bl_toml_type_of(a), BL_TOML_ARRAY);
    assert_int_equal(bl_toml_array_size(a), 3);
    assert_int_equal(bl_toml_type_of(bl_toml_array_at(a, 0)), BL_TOML_INTEGER);
    assert_int_equal(bl_toml_type_of(bl_toml_array_at(a, 1)), BL_TOML_FLOAT);
    assert_int_equal(bl_toml_type_of(bl_toml_array_at(a, 2)), BL_TOML_STRING);
    assert_null(bl_toml_array_at(a, 3));
    assert_null(bl_toml_table_get(a, "x")); /* not a table */
    assert_int_equal(bl_toml_table_size(a), 0);

    const bl_toml_node *tab = bl_toml_table_get(root, "tab");
    assert_int_equal(bl_toml_type_of(tab), BL_TOML_TABLE);
    assert_int_equal(bl_toml_array_size(tab), 0); /* not an array */
    assert_null(bl_toml_table_get(root, "missing"));

    assert_string_equal(bl_toml_type_name(BL_TOML_DATE_TIME), "date-time");
    assert_string_equal(bl_toml_type_name(BL_TOML_BOOLEAN), "boolean");
    bl_toml_destroy(doc);
}

static void test_document_order_and_positions(void **state)
{
    (void)state;
    /* toml++ sorts keys; the bridge gives them back in the file's order. */
    bl_toml_doc *doc = parse_ok("zeta = 1\n"
                                "alpha = 2\n"
                                "[mid]\n"
                                "  y = \"v\"\n"
                                "  b = [ 10,\n"
                                "        20 ]\n");
    const bl_toml_node *root = bl_toml_root(doc);
    size_t len;
    assert_string_equal(bl_toml_table_key(root, 0, &len), "zeta");
    assert_int_equal(len, 4);
    assert_string_equal(bl_toml_table_key(root, 1, NULL), "alpha");
    assert_string_equal(bl_toml_table_key(root, 2, NULL), "mid");
    assert_null(bl_toml_table_key(root, 3, NULL));
    assert_null(bl_toml_table_value(root, 3));

    const bl_toml_node *zeta = bl_toml_table_value(root, 0);
    assert_int_equal(bl_toml_line(zeta), 1);
    assert_int_equal(bl_toml_column(zeta), 8);
    const bl_toml_node *mid = bl_toml_table_value(root, 2);
    assert_string_equal(bl_toml_table_key(mid, 0, NULL), "y");
    assert_string_equal(bl_toml_table_key(mid, 1, NULL), "b");
    const bl_toml_node *y = bl_toml_table_get(mid, "y");
    assert_int_equal(bl_toml_line(y), 4);
    assert_int_equal(bl_toml_column(y), 7);
    const bl_toml_node *twenty = bl_toml_array_at(bl_toml_table_get(mid, "b"), 1);
    assert_int_equal(bl_toml_line(twenty), 6);
    assert_int_equal(bl_toml_column(twenty), 9);
    assert_int_equal(bl_toml_line(NULL), 0);
    bl_toml_destroy(doc);
}

static void test_nul_in_key_and_string(void **state)
{
    (void)state;
    /* "a\0b" must not be mistaken for "a" by a C string comparison. */
    bl_toml_doc *doc = parse_ok("\"a\\u0000b\" = 1\ns = \"x\\u0000y\"\n");
    const bl_toml_node *root = bl_toml_root(doc);
    size_t len;
    const char *key = bl_toml_table_key(root, 0, &len);
    assert_int_equal(len, 3);
    assert_int_equal(strlen(key), 1);
    assert_null(bl_toml_table_get(root, "a"));
    const char *s;
    assert_true(bl_toml_get_string(bl_toml_table_get(root, "s"), &s, &len));
    assert_int_equal(len, 3);
    assert_int_equal(strlen(s), 1);
    bl_toml_destroy(doc);
}

static void expect_parse_error(const char *text, const char *needle)
{
    bl_toml_doc *doc = (bl_toml_doc *)1;
    bl_error err = {0};
    bl_status st = bl_toml_parse_text(text, strlen(text), "bad.toml", &doc, &err);
    assert_int_not_equal(st, BL_OK);
    assert_null(doc);
    if (!strstr(err.message, needle))
        fail_msg("message '%s' lacks '%s'", err.message, needle);
    assert_null(strchr(err.message, '\n'));
}

static void test_parse_errors(void **state)
{
    (void)state;
    expect_parse_error("a = 1\nb = = 2\n", "bad.toml:2:");
    expect_parse_error("[run\n", "bad.toml:1:");
    expect_parse_error("a = 1\na = 2\n", "bad.toml:2:");          /* redefinition */
    expect_parse_error("x = 99999999999999999999\n", "bad.toml:1:"); /* int64 overflow */
    expect_parse_error("s = \"\xff\"\n", "bad.toml:1:");             /* invalid UTF-8 */
    expect_parse_error("a = [1,\n", "bad.toml:");

    /* Deep nesting is refused (by toml++ or by the bridge), never a crash. */
    size_t depth = 5000;
    char *deep = malloc(2 * depth + 8);
    assert_non_null(deep);
    strcpy(deep, "a = ");
    for (size_t i = 0; i < depth; i++)
        deep[4 + i] = '[';
    for (size_t i = 0; i < depth; i++)
        deep[4 + depth + i] = ']';
    deep[4 + 2 * depth] = '\0';
    expect_parse_error(deep, "bad.toml");
    free(deep);

    /* Dotted keys are not bounded by toml++'s nesting limit; 10^5 parts once
     * overflowed the stack inside toml++. Headers too. */
    size_t parts = 100000;
    char *dotted = malloc(2 * parts + 16);
    assert_non_null(dotted);
    for (size_t i = 0; i < parts; i++)
        memcpy(dotted + 2 * i, "a.", 2);
    strcpy(dotted + 2 * parts, "a = 1\n");
    expect_parse_error(dotted, "dotted key parts");
    dotted[0] = '[';
    strcpy(dotted + 2 * parts, "a]\n");
    expect_parse_error(dotted, "bad.toml:1:");
    free(dotted);
    /* Dots in strings, comments and numbers do not count. */
    char *dots = malloc(8000);
    assert_non_null(dots);
    strcpy(dots, "s = \"");
    for (int i = 0; i < 1000; i++)
        strcat(dots, ".");
    strcat(dots, "\" # ....................\nf = [\n");
    for (int i = 0; i < 600; i++)
        strcat(dots, "1.5,");
    strcat(dots, "\n]\n");
    bl_toml_doc *many = parse_ok(dots);
    assert_int_equal(bl_toml_array_size(bl_toml_table_get(bl_toml_root(many), "f")), 600);
    bl_toml_destroy(many);
    free(dots);

    /* Just inside what a plan may hold: fine. */
    bl_toml_doc *doc = parse_ok("a = [[[[[[[[1]]]]]]]]\n");
    bl_toml_destroy(doc);
}

static void test_files(void **state)
{
    (void)state;
    bl_toml_doc *doc = (bl_toml_doc *)1;
    bl_error err = {0};
    assert_int_equal(bl_toml_parse_file("/nonexistent/plan.toml", &doc, &err), BL_ERR_IO);
    assert_null(doc);
    assert_non_null(strstr(err.message, "/nonexistent/plan.toml: cannot open"));

    char path[] = "/tmp/bl_test_toml_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "x = 1\n[t]\ny = \"z\"\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    assert_int_equal(bl_toml_parse_file(path, &doc, &err), BL_OK);
    int64_t x;
    assert_true(bl_toml_get_int(bl_toml_table_get(bl_toml_root(doc), "x"), &x));
    assert_int_equal(x, 1);
    bl_toml_destroy(doc);

    /* An error in a file names the file and the position. */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("x = 1\ny = \n", f);
    fclose(f);
    assert_int_equal(bl_toml_parse_file(path, &doc, &err), BL_ERR_FORMAT);
    char want[64];
    snprintf(want, sizeof want, "%s:2:", path);
    assert_non_null(strstr(err.message, want));
    unlink(path);

    /* A directory is not a plan. */
    assert_int_not_equal(bl_toml_parse_file("/tmp", &doc, &err), BL_OK);
    assert_non_null(strstr(err.message, "/tmp"));
    bl_toml_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_types_and_values),
        cmocka_unit_test(test_document_order_and_positions),
        cmocka_unit_test(test_nul_in_key_and_string),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
