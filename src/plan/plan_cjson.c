/* The canonical-JSON builder of plans (see plan_cjson.h). */
#include "plan/plan_cjson.h"

#include <inttypes.h>
#include <stdio.h>

#include "plan/plan_impl.h"
#include "core/json_check.h"

cJSON *bl_cj_check(bl_cj *b, cJSON *item)
{
    if (!item)
        b->ok = 0;
    return item;
}

static void add_raw_text(bl_cj *b, cJSON *o, const char *key, const char *text)
{
    bl_cj_check(b, cJSON_AddRawToObject(o, key, text));
}

void bl_cj_int(bl_cj *b, cJSON *o, const char *key, int64_t v)
{
    char text[24];
    snprintf(text, sizeof text, "%" PRId64, v);
    add_raw_text(b, o, key, text);
}

void bl_cj_uint(bl_cj *b, cJSON *o, const char *key, uint64_t v)
{
    char text[24];
    snprintf(text, sizeof text, "%" PRIu64, v);
    add_raw_text(b, o, key, text);
}

void bl_cj_num(bl_cj *b, cJSON *o, const char *key, double v)
{
    char text[40];
    bl_pk_number(text, sizeof text, v);
    add_raw_text(b, o, key, text);
}

void bl_cj_str(bl_cj *b, cJSON *o, const char *key, const char *v)
{
    bl_cj_check(b, cJSON_AddStringToObject(o, key, v));
}

void bl_cj_bool(bl_cj *b, cJSON *o, const char *key, int v) { bl_cj_check(b, cJSON_AddBoolToObject(o, key, v)); }
void bl_cj_null(bl_cj *b, cJSON *o, const char *key) { bl_cj_check(b, cJSON_AddNullToObject(o, key)); }
void bl_cj_raw(bl_cj *b, cJSON *o, const char *key, const char *json) { add_raw_text(b, o, key, json); }
cJSON *bl_cj_obj(bl_cj *b, cJSON *o, const char *key) { return bl_cj_check(b, cJSON_AddObjectToObject(o, key)); }
cJSON *bl_cj_arr(bl_cj *b, cJSON *o, const char *key) { return bl_cj_check(b, cJSON_AddArrayToObject(o, key)); }

cJSON *bl_cj_append(bl_cj *b, cJSON *arr, const char *key, cJSON *item)
{
    if (!bl_cj_check(b, item))
        return NULL;
    if (!arr || !(key ? cJSON_AddItemToObject(arr, key, item) : cJSON_AddItemToArray(arr, item))) {
        cJSON_Delete(item);
        b->ok = 0;
        return NULL;
    }
    return item;
}

void bl_cj_append_num(bl_cj *b, cJSON *arr, double v)
{
    char text[40];
    bl_pk_number(text, sizeof text, v);
    bl_cj_append(b, arr, NULL, cJSON_CreateRaw(text));
}

void bl_cj_append_i32(bl_cj *b, cJSON *arr, int32_t v)
{
    char text[16];
    snprintf(text, sizeof text, "%" PRId32, v);
    bl_cj_append(b, arr, NULL, cJSON_CreateRaw(text));
}

void bl_cj_append_str(bl_cj *b, cJSON *arr, const char *v) { bl_cj_append(b, arr, NULL, cJSON_CreateString(v)); }

char *bl_cj_finish(bl_cj *b, cJSON *root, int pretty)
{
    char *text = b->ok && root ? (pretty ? bl_json_print(root, 1) : bl_json_print(root, 0)) : NULL;
    cJSON_Delete(root);
    return text;
}
