/* bl_json_print (core/json_check.h): every record, manifest and summary is
 * printed with it, so each number it prints must read back as the double
 * that was stored. cJSON's own printer keeps 15 digits whenever they read
 * back within one ulp (0.018950185027042404 printed as 0.0189501850270424);
 * otherwise its text is kept unchanged (integers, null for NaN). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/json_check.h"

static void exact_where_cjson_is_not(void **state)
{
    (void)state;
    const double lossy = 0.018950185027042404;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "lossy", lossy);
    char *theirs = cJSON_PrintUnformatted(o);
    /* The fault this printer exists for: cJSON's text is another double. */
    cJSON *back = cJSON_Parse(theirs);
    assert_true(cJSON_GetObjectItem(back, "lossy")->valuedouble != lossy);
    cJSON_Delete(back);
    free(theirs);
    char *ours = bl_json_print(o, 0);
    assert_string_equal(ours, "{\"lossy\":0.018950185027042404}");
    back = cJSON_Parse(ours);
    assert_true(cJSON_GetObjectItem(back, "lossy")->valuedouble == lossy);
    cJSON_Delete(back);
    free(ours);
    /* The tree itself is left as it was: still a number. */
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(o, "lossy")));
    cJSON_Delete(o);
}

/* Value by value: where cJSON's text reads back as the same double (or is
 * null for NaN and infinities), ours is the same text; where it does not,
 * ours differs and reads back exactly. 0.1 + 0.2 and 2^53 are of the
 * second kind (cJSON: 0.3 and 9.00719925474099e+15). */
static void same_text_as_cjson_otherwise(void **state)
{
    (void)state;
    const double values[] = {0,     -0.0,  1,       -3,        0.1,     1.0 / 3,  2.5e-310, 1e300,     -1e16,
                             1e15,  123456789, 0.25e-7, 2.2e-16, NAN, INFINITY, 0.1 + 0.2, 9007199254740992.0};
    int lossy = 0;
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        for (int pretty = 0; pretty < 2; pretty++) {
            cJSON *a = cJSON_CreateArray();
            cJSON_AddItemToArray(a, cJSON_CreateNumber(values[i]));
            char *ours = bl_json_print(a, pretty), *theirs = pretty ? cJSON_Print(a) : cJSON_PrintUnformatted(a);
            cJSON *b = cJSON_Parse(ours), *c = cJSON_Parse(theirs);
            const cJSON *e = cJSON_GetArrayItem(b, 0), *f = cJSON_GetArrayItem(c, 0);
            if (isnan(values[i]) || isinf(values[i])) {
                assert_true(cJSON_IsNull(e));
                assert_string_equal(ours, theirs);
            } else {
                assert_true(e->valuedouble == values[i]);
                assert_true(signbit(e->valuedouble) == signbit(values[i]));
                if (f->valuedouble == values[i])
                    assert_string_equal(ours, theirs);
                else {
                    assert_string_not_equal(ours, theirs);
                    lossy += !pretty;
                }
            }
            cJSON_Delete(b);
            cJSON_Delete(c);
            free(ours);
            free(theirs);
            cJSON_Delete(a);
        }
    }
    assert_true(lossy >= 2);
    /* Nested objects and arrays, strings and booleans pass through. */
    cJSON *o = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(o, "a");
    cJSON_AddItemToArray(arr, cJSON_CreateString("text"));
    cJSON_AddItemToArray(arr, cJSON_CreateTrue());
    cJSON *deep = cJSON_CreateObject();
    cJSON_AddNumberToObject(deep, "x", 0.1 + 0.2);
    cJSON_AddItemToArray(arr, deep);
    char *text = bl_json_print(o, 0);
    assert_string_equal(text, "{\"a\":[\"text\",true,{\"x\":0.30000000000000004}]}");
    free(text);
    cJSON_Delete(o);
    assert_null(bl_json_print(NULL, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_where_cjson_is_not),
        cmocka_unit_test(same_text_as_cjson_otherwise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
