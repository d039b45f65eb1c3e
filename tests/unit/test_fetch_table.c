/* Unit tests for the fetch table (src/connectome/import/fetch_sets.c): the
 * built-in rows are complete and consistent (every file has a checksum or
 * says none is published, every import option names one of the set's
 * files, every importer exists), a JSON table is read with its fields, and
 * a malformed one is an error naming the manifest and the key. The
 * downloads themselves are tested against a local server
 * (tests/cli/test_fetch.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "brainlesslab/fetch.h"
#include "brainlesslab/import.h"

#include "test_support.h"

BL_TEST_TMPDIR_GROUP("fetch")

static const char *write_file(const char *name, const char *text)
{
    const char *path = tmp_path(name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_builtin_rows(void **state)
{
    (void)state;
    assert_true(bl_fetch_set_count() >= 4);
    assert_non_null(bl_fetch_set_find("flywire"));
    assert_non_null(bl_fetch_set_find("malecns"));
    assert_null(bl_fetch_set_find("nosuch"));
    for (size_t i = 0; i < bl_fetch_set_count(); i++) {
        const bl_fetch_set *s = bl_fetch_set_at(i);
        assert_non_null(bl_importer_find(s->importer));
        assert_non_null(s->licence);
        assert_true(s->manual || s->n_files > 0);
        for (size_t k = 0; k < s->n_files; k++) {
            const bl_fetch_file *f = &s->files[k];
            assert_true(f->size || f->max_size);
            assert_non_null(f->source);
            size_t want = f->digest == BL_FETCH_SHA256 ? 64 : f->digest == BL_FETCH_MD5 ? 32
                          : f->digest == BL_FETCH_GIT_BLOB_SHA1 ? 40 : 0;
            if (want)
                assert_int_equal(strlen(f->hex), want);
            else
                assert_null(f->hex);
            assert_int_equal(strncmp(f->base_url, "https://", 8), 0);
        }
        for (size_t k = 0; k < s->n_import; k++) {
            int named = 0;
            for (size_t j = 0; j < s->n_files; j++)
                named |= s->import[k].file && !strcmp(s->import[k].file, s->files[j].name);
            assert_true(named || s->import[k].value);
        }
    }
    char url[256];
    bl_fetch_options o = {.mirror = "http://127.0.0.1:8/m/"};
    const bl_fetch_file *f = &bl_fetch_set_find("flywire")->files[0];
    assert_string_equal(bl_fetch_file_url(f, &o, url, sizeof url), "http://127.0.0.1:8/m/Completeness_783.csv");
}

static void test_json_table(void **state)
{
    (void)state;
    const char *p = write_file("good.json",
        "{\"sets\": [{\"name\": \"fw\", \"importer\": \"flywire\", \"licence\": \"L\", \"files\": ["
        "{\"name\": \"a.csv\", \"url\": \"http://h/x\", \"size\": 10, \"sha256\": "
        "\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"},"
        "{\"name\": \"b.parquet\", \"url\": \"http://h/y\", \"max_size\": 99, \"git_blob_sha1\": "
        "\"0123456789abcdef0123456789abcdef01234567\"},"
        "{\"name\": \"c.feather\", \"url\": \"http://h/z\", \"size\": 5}],"
        "\"import\": [[\"--neurons\", \"a.csv\"], [\"--select\", \"all\"]]}]}");
    bl_fetch_table *t = NULL;
    bl_error err = {0};
    assert_int_equal(bl_fetch_table_load(p, &t, &err), BL_OK);
    assert_int_equal(bl_fetch_table_count(t), 1);
    const bl_fetch_set *s = bl_fetch_table_find(t, "fw");
    assert_non_null(s);
    assert_int_equal(s->n_files, 3);
    assert_int_equal(s->files[0].digest, BL_FETCH_SHA256);
    assert_int_equal(s->files[0].size, 10);
    assert_int_equal(s->files[1].digest, BL_FETCH_GIT_BLOB_SHA1);
    assert_int_equal(s->files[1].max_size, 99);
    assert_int_equal(s->files[2].digest, BL_FETCH_UNPUBLISHED);
    assert_string_equal(s->import[0].file, "a.csv");
    assert_null(s->import[1].file);
    assert_string_equal(s->import[1].value, "all");
    bl_fetch_table_destroy(t);
}

static void expect_error(const char *name, const char *json, const char *needle)
{
    const char *p = write_file(name, json);
    bl_fetch_table *t = (bl_fetch_table *)1;
    bl_error err = {0};
    assert_int_not_equal(bl_fetch_table_load(p, &t, &err), BL_OK);
    assert_null(t);
    if (!strstr(err.message, needle) || !strstr(err.message, name))
        fail_msg("%s: '%s' lacks '%s' or the file name", name, err.message, needle);
}

#define SET(files) "{\"sets\": [{\"name\": \"s\", \"importer\": \"flywire\", \"licence\": \"L\", \"files\": [" files "]}]}"
#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_json_errors(void **state)
{
    (void)state;
    expect_error("e1.json", "not json", "not JSON");
    expect_error("e2.json", "{\"sets\": []}", "\"sets\" must be a non-empty array");
    expect_error("e3.json", SET("{\"name\": \"../x\", \"url\": \"u\", \"size\": 1}"), "must be a plain file name");
    expect_error("e4.json", SET("{\"name\": \"a\", \"url\": \"u\"}"), "needs exactly one of size and max_size");
    expect_error("e5.json", SET("{\"name\": \"a\", \"url\": \"u\", \"size\": -3}"), "sets[0].files[0].size");
    expect_error("e6.json", SET("{\"name\": \"a\", \"url\": \"u\", \"size\": 1.5}"), "whole number of bytes");
    expect_error("e7.json", SET("{\"name\": \"a\", \"url\": \"u\", \"size\": 1, \"sha256\": \"ABC\"}"),
                 "sha256 must be 64 lower-case hex digits");
    expect_error("e8.json", SET("{\"name\": \"a\", \"url\": \"u\", \"size\": 1, \"sha256\": \"" HEX64 "\", \"md5\": "
                                "\"0123456789abcdef0123456789abcdef\"}"), "more than one checksum");
    expect_error("e9.json", SET("{\"name\": \"a\", \"url\": \"u\", \"size\": 1}, {\"name\": \"a\", \"url\": \"u\", "
                                "\"size\": 2}"), "names 'a' twice");
    expect_error("e10.json", "{\"sets\": [{\"name\": \"s\", \"importer\": \"flywire\", \"files\": []}]}",
                 "sets[0].licence must be a non-empty string");
    expect_error("e11.json", "{\"sets\": [{\"name\": \"s\", \"importer\": \"flywire\", \"licence\": \"L\", \"files\": "
                 "[{\"name\": \"a\", \"url\": \"u\", \"size\": 1}], \"import\": [[\"neurons\", \"a\"]]}]}",
                 "import[0] must be");
    expect_error("e12.json", "{\"sets\": [{\"name\": \"s\", \"name\": \"t\"}]}", "appears twice");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_rows),
        cmocka_unit_test(test_json_table),
        cmocka_unit_test(test_json_errors),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
