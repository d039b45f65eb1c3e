/* Checks on parsed JSON that every reader of a manifest shares. */
#ifndef BL_CORE_JSON_CHECK_H
#define BL_CORE_JSON_CHECK_H

#include <cjson/cJSON.h>

/* The first key that appears twice in one object anywhere in V, or NULL.
 * cJSON keeps the first of two equal keys and Python's json the last, so a
 * document with one would read differently in the two: readers refuse it. */
const char *bl_json_duplicate_key(const cJSON *v);

/* cJSON_Print (pretty) or cJSON_PrintUnformatted with exact numbers. cJSON
 * keeps a double's 15-digit text whenever it reads back within one ulp, so a
 * record would hold 0.0189501850270424 for the 0.018950185027042404 that ran.
 * This prints each number as cJSON does (NaN and infinities as null, else
 * %1.15g) except that the 15 digits are kept only when they
 * read back as the same double, else %1.17g. V is not changed. Caller frees;
 * NULL when out of memory. Every record, manifest and summary is printed
 * with it. */
char *bl_json_print(const cJSON *v, int pretty);

#endif
