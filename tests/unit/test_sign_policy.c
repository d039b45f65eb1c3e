/* Unit tests for src/connectome/sign_policy.c: lookups with case and blanks,
 * the unknown and default declarations, the unmapped-key error, describe()'s
 * canonical string, override files (good and malformed), and the built-in
 * larva and C. elegans policies. */
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

#include "brainlesslab/import.h"
#include "brainlesslab/sign_policy.h"

#include "test_support.h"

BL_TEST_TMPDIR_GROUP("sign")

static const char *write_file(const char *name, const char *text)
{
    static char path[600];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static bl_sign_policy *make(int def)
{
    bl_sign_policy *p = NULL;
    bl_error err = {0};
    assert_int_equal(bl_sign_policy_create(def, &p, &err), BL_OK);
    assert_int_equal(bl_sign_policy_set(p, "Acetylcholine", +1, &err), BL_OK);
    assert_int_equal(bl_sign_policy_set(p, "GABA", -1, &err), BL_OK);
    assert_int_equal(bl_sign_policy_set(p, "glutamate", -1, &err), BL_OK);
    return p;
}

static int sign_of(const bl_sign_policy *p, const char *key)
{
    int s = 99;
    bl_error err = {0};
    assert_int_equal(bl_sign_policy_lookup(p, key, "here", &s, &err), BL_OK);
    return s;
}

static void test_case_and_trim(void **state)
{
    (void)state;
    bl_sign_policy *p = make(0);
    assert_int_equal(sign_of(p, "gaba"), -1);
    assert_int_equal(sign_of(p, "GABA"), -1);
    assert_int_equal(sign_of(p, "  Gaba\t"), -1);
    assert_int_equal(sign_of(p, "ACETYLCHOLINE"), +1);
    assert_int_equal(sign_of(p, " glutamate "), -1);
    /* Set again under another spelling: replaces, does not add. */
    bl_error err = {0};
    assert_int_equal(bl_sign_policy_set(p, " Glutamate ", +1, &err), BL_OK);
    assert_int_equal(sign_of(p, "glutamate"), +1);
    assert_string_equal(bl_sign_policy_describe(p),
                        "acetylcholine=+1;gaba=-1;glutamate=+1;unknown=error;default=error");
    bl_sign_policy_destroy(p);
}

static void test_unknown_and_default(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_sign_policy *p = make(0);
    int s = 0;
    /* No unknown, no default: an empty key is an error naming where it was. */
    assert_int_equal(bl_sign_policy_lookup(p, "  ", "t.csv:4, column nt", &s, &err),
                     BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "t.csv:4, column nt"));
    assert_int_equal(bl_sign_policy_lookup(p, NULL, NULL, &s, &err), BL_ERR_INVALID);

    /* Default declared: empty and unmapped keys fall back to it. */
    assert_int_equal(bl_sign_policy_set_default(p, -1, &err), BL_OK);
    assert_int_equal(sign_of(p, ""), -1);
    assert_int_equal(sign_of(p, "dopamine"), -1);
    assert_string_equal(bl_sign_policy_describe(p),
                        "acetylcholine=+1;gaba=-1;glutamate=-1;unknown=-1;default=-1");

    /* Unknown declared: applies to empty keys only. */
    assert_int_equal(bl_sign_policy_set_unknown(p, +1, &err), BL_OK);
    assert_int_equal(sign_of(p, ""), +1);
    assert_int_equal(sign_of(p, NULL), +1);
    assert_int_equal(sign_of(p, "dopamine"), -1);
    assert_string_equal(bl_sign_policy_describe(p),
                        "acetylcholine=+1;gaba=-1;glutamate=-1;unknown=+1;default=-1");

    /* Unknown declared, default removed: unmapped keys are errors again. */
    assert_int_equal(bl_sign_policy_set_default(p, 0, &err), BL_OK);
    assert_int_equal(sign_of(p, ""), +1);
    assert_int_equal(bl_sign_policy_lookup(p, "Dopamine", "x.csv:9", &s, &err), BL_ERR_INVALID);
    bl_sign_policy_destroy(p);
}

static void test_unmapped_message(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_sign_policy *p = make(0);
    int s = 7;
    assert_int_equal(bl_sign_policy_lookup(p, "Octapamine", "data/nt.csv:12, column neurotransmitter",
                                           &s, &err),
                     BL_ERR_INVALID);
    assert_string_equal(err.message, "data/nt.csv:12, column neurotransmitter: 'Octapamine' is "
                                     "not mapped by the sign policy, which declares no default");
    assert_int_equal(s, 0);
    /* A hostile key cannot break the one-line message. */
    assert_int_equal(bl_sign_policy_lookup(p, "a\nb", NULL, &s, &err), BL_ERR_INVALID);
    assert_null(strchr(err.message, '\n'));
    bl_sign_policy_destroy(p);
}

static void test_bad_keys_and_signs(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_sign_policy *p = NULL;
    assert_int_equal(bl_sign_policy_create(2, &p, &err), BL_ERR_INVALID);
    assert_null(p);
    p = make(+1);
    assert_int_equal(bl_sign_policy_set(p, "x", 0, &err), BL_ERR_INVALID);
    assert_int_equal(bl_sign_policy_set(p, "  ", 1, &err), BL_ERR_INVALID);
    assert_int_equal(bl_sign_policy_set(p, "a;b", 1, &err), BL_ERR_INVALID);
    assert_int_equal(bl_sign_policy_set(p, "a=b", 1, &err), BL_ERR_INVALID);
    assert_int_equal(bl_sign_policy_set(p, "a\tb", 1, &err), BL_ERR_INVALID);
    assert_int_equal(bl_sign_policy_set(p, "Default", 1, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "reserved"));
    assert_int_equal(bl_sign_policy_set(p, "unknown", 1, &err), BL_ERR_INVALID);
    assert_int_equal(bl_sign_policy_set_unknown(p, 5, &err), BL_ERR_INVALID);
    assert_int_equal(bl_sign_policy_set_default(p, -2, &err), BL_ERR_INVALID);
    /* Nothing changed. */
    assert_string_equal(bl_sign_policy_describe(p),
                        "acetylcholine=+1;gaba=-1;glutamate=-1;unknown=+1;default=+1");
    bl_sign_policy_destroy(p);
}

static void test_order_independent(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_sign_policy *a = NULL, *b = NULL;
    assert_int_equal(bl_sign_policy_create(+1, &a, &err), BL_OK);
    assert_int_equal(bl_sign_policy_create(+1, &b, &err), BL_OK);
    const char *keys[] = {"zeta", "alpha", "MB-FBN", "ln", "kc", "b"};
    for (int i = 0; i < 6; i++)
        assert_int_equal(bl_sign_policy_set(a, keys[i], i % 2 ? -1 : 1, &err), BL_OK);
    for (int i = 5; i >= 0; i--)
        assert_int_equal(bl_sign_policy_set(b, keys[i], i % 2 ? -1 : 1, &err), BL_OK);
    assert_string_equal(bl_sign_policy_describe(a), bl_sign_policy_describe(b));
    assert_string_equal(bl_sign_policy_describe(a),
                        "alpha=-1;b=-1;kc=+1;ln=-1;mb-fbn=+1;zeta=+1;unknown=+1;default=+1");
    for (int i = 0; i < 6; i++)
        assert_int_equal(sign_of(a, keys[i]), i % 2 ? -1 : 1);
    bl_sign_policy *c = NULL;
    assert_int_equal(bl_sign_policy_clone(a, &c, &err), BL_OK);
    assert_string_equal(bl_sign_policy_describe(c), bl_sign_policy_describe(a));
    bl_sign_policy_destroy(a);
    assert_int_equal(sign_of(c, "Zeta"), 1);
    bl_sign_policy_destroy(b);
    bl_sign_policy_destroy(c);
}

static void test_override_file(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_sign_policy *p = make(0);
    const char *path = write_file("ok.csv", "key,sign\n"
                                            "Glutamate,+1\n"
                                            "\"Dopamine\",-1\n"
                                            " octopamine , 1 \n"
                                            "default,+1\n"
                                            "UNKNOWN,-1\n");
    assert_int_equal(bl_sign_policy_load_overrides(p, path, &err), BL_OK);
    assert_string_equal(bl_sign_policy_describe(p), "acetylcholine=+1;dopamine=-1;gaba=-1;"
                                                    "glutamate=+1;octopamine=+1;unknown=-1;"
                                                    "default=+1");
    assert_int_equal(sign_of(p, ""), -1);
    assert_int_equal(sign_of(p, "serotonin"), +1);

    path = write_file("err.csv", "sign,key\nerror,default\n"); /* columns in any order */
    assert_int_equal(bl_sign_policy_load_overrides(p, path, &err), BL_OK);
    assert_string_equal(bl_sign_policy_describe(p), "acetylcholine=+1;dopamine=-1;gaba=-1;"
                                                    "glutamate=+1;octopamine=+1;unknown=-1;"
                                                    "default=error");
    bl_sign_policy_destroy(p);
}

static void expect_override_error(const char *name, const char *text, const char *needle)
{
    bl_error err = {0};
    bl_sign_policy *p = make(+1);
    char before[256];
    snprintf(before, sizeof before, "%s", bl_sign_policy_describe(p));
    const char *path = write_file(name, text);
    char path_copy[600];
    snprintf(path_copy, sizeof path_copy, "%s", path);
    assert_int_not_equal(bl_sign_policy_load_overrides(p, path_copy, &err), BL_OK);
    if (!strstr(err.message, needle) || !strstr(err.message, name))
        fail_msg("message '%s' lacks '%s' or the file name", err.message, needle);
    assert_null(strchr(err.message, '\n'));
    /* A failed load leaves the policy as it was. */
    assert_string_equal(bl_sign_policy_describe(p), before);
    bl_sign_policy_destroy(p);
}

static void test_override_malformed(void **state)
{
    (void)state;
    expect_override_error("empty.csv", "", "empty file");
    expect_override_error("nokey.csv", "name,sign\nx,+1\n", "missing column 'key'");
    expect_override_error("badsign.csv", "key,sign\ngaba,+1\nglutamate,minus\n",
                          "badsign.csv:3, column sign: 'minus'");
    expect_override_error("zero.csv", "key,sign\ngaba,0\n", "zero.csv:2, column sign");
    expect_override_error("dup.csv", "key,sign\nGABA,-1\nx,1\n gaba ,+1\n",
                          "dup.csv:4: key 'gaba' already given at line 2");
    expect_override_error("emptykey.csv", "key,sign\n,+1\n", "emptykey.csv:2, column key");
    expect_override_error("semi.csv", "key,sign\n\"a;b\",+1\n", "semi.csv:2, column key");
    expect_override_error("fields.csv", "key,sign\ngaba,-1,extra\n", "fields.csv:2");
    expect_override_error("unkerr.csv", "key,sign\nunknown,error\n", "unkerr.csv:2, column sign");
    /* A later bad row: nothing of the earlier good rows is applied. */
    expect_override_error("late.csv", "key,sign\nacetylcholine,-1\ngaba,x\n", "late.csv:3");
    bl_error err = {0};
    bl_sign_policy *p = make(+1);
    assert_int_equal(bl_sign_policy_load_overrides(p, "/nonexistent/dir/x.csv", &err), BL_ERR_IO);
    assert_non_null(strstr(err.message, "/nonexistent/dir/x.csv"));
    bl_sign_policy_destroy(p);
}

static void test_builtin_policies(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_sign_policy *l = NULL, *w = NULL;
    assert_int_equal(bl_sign_policy_default_larva(&l, &err), BL_OK);
    assert_string_equal(bl_sign_policy_describe(l),
                        "kc=+1;ln=-1;pn=+1;sensory=+1;unknown=+1;default=+1");
    assert_int_equal(sign_of(l, "LN"), -1);
    assert_int_equal(sign_of(l, "MBON"), +1);
    assert_int_equal(sign_of(l, ""), +1);
    assert_int_equal(bl_sign_policy_default_celegans(&w, &err), BL_OK);
    assert_int_equal(sign_of(w, "GABA"), -1);
    assert_int_equal(sign_of(w, "Glutamate"), +1);
    assert_int_equal(sign_of(w, "Octapamine"), +1);
    assert_int_equal(sign_of(w, "FMRFamide"), +1);
    assert_int_equal(sign_of(w, ""), +1);
    int s = 0;
    assert_int_equal(bl_sign_policy_lookup(w, "Histamine", "h", &s, &err), BL_ERR_INVALID);
    bl_sign_policy_destroy(l);
    bl_sign_policy_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_case_and_trim),      cmocka_unit_test(test_unknown_and_default),
        cmocka_unit_test(test_unmapped_message),   cmocka_unit_test(test_bad_keys_and_signs),
        cmocka_unit_test(test_order_independent),  cmocka_unit_test(test_override_file),
        cmocka_unit_test(test_override_malformed), cmocka_unit_test(test_builtin_policies),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
