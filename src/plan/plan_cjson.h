/* The one canonical-JSON builder of plans (plan_cjson.c). Every row's
 * renderer builds its resolved plan with it, so the plan hash depends on one
 * way of writing JSON: keys in the order the renderer adds them, numbers as
 * raw text written here (shortest round-trip doubles, exact integers past
 * 2^53), never by cJSON, so no locale or cJSON version can change a hash.
 * The first failed allocation clears b->ok; later calls do nothing harmful
 * and bl_cj_finish then returns NULL. */
#ifndef BL_PLAN_CJSON_H
#define BL_PLAN_CJSON_H

#include <cjson/cJSON.h>
#include <stdint.h>

typedef struct bl_cj {
    int ok; /* cleared by the first failed allocation */
} bl_cj;

/* item, recording its failure (NULL) in b. */
cJSON *bl_cj_check(bl_cj *b, cJSON *item);
void bl_cj_int(bl_cj *b, cJSON *o, const char *key, int64_t v);
void bl_cj_uint(bl_cj *b, cJSON *o, const char *key, uint64_t v);
void bl_cj_num(bl_cj *b, cJSON *o, const char *key, double v);
void bl_cj_str(bl_cj *b, cJSON *o, const char *key, const char *v);
void bl_cj_bool(bl_cj *b, cJSON *o, const char *key, int v);
void bl_cj_null(bl_cj *b, cJSON *o, const char *key);
/* Already-compact JSON text, embedded as written. */
void bl_cj_raw(bl_cj *b, cJSON *o, const char *key, const char *json);
cJSON *bl_cj_obj(bl_cj *b, cJSON *o, const char *key);
cJSON *bl_cj_arr(bl_cj *b, cJSON *o, const char *key);
/* Append item (consumed) to array or object arr; under key when arr is an
 * object (key NULL for arrays). Returns item, or NULL after a failure. */
cJSON *bl_cj_append(bl_cj *b, cJSON *arr, const char *key, cJSON *item);
void bl_cj_append_num(bl_cj *b, cJSON *arr, double v);
void bl_cj_append_i32(bl_cj *b, cJSON *arr, int32_t v);
void bl_cj_append_str(bl_cj *b, cJSON *arr, const char *v);
/* root's text (canonical: compact, when pretty is 0) if every call
 * succeeded; root is deleted either way. */
char *bl_cj_finish(bl_cj *b, cJSON *root, int pretty);

#endif
