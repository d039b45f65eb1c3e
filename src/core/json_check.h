/* Checks on parsed JSON that every reader of a manifest shares. */
#ifndef BL_CORE_JSON_CHECK_H
#define BL_CORE_JSON_CHECK_H

#include <cjson/cJSON.h>

/* The first key that appears twice in one object anywhere in V, or NULL.
 * cJSON keeps the first of two equal keys and Python's json the last, so a
 * document with one would read differently in the two: readers refuse it. */
const char *bl_json_duplicate_key(const cJSON *v);

#endif
