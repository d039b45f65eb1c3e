/* The external ids of an import: text, with an index each. Integer ids (body
 * ids, root ids, skids) are looked up by value without formatting; any other
 * text by a 64-bit hash that is always checked against the text. */
#ifndef BL_CONNECTOME_IMPORT_IDS_H
#define BL_CONNECTOME_IMPORT_IDS_H

#include "connectome/import/kit.h"

typedef struct bl_ids {
    uint64_t n, cap, map_cap_hint;
    char **text;     /* [n] the ids as text */
    int64_t *key;    /* [n] the integer, or the hash */
    uint8_t *hashed; /* [n] 1 when key is a hash */
    bl_idmap *map;
} bl_ids;

bl_status bl_ids_init(bl_ids *ids, uint64_t expect, bl_error *err);
void bl_ids_free(bl_ids *ids);
/* Add an id (or find it): *index, and *added = 1 when it was new. */
bl_status bl_ids_add(bl_ids *ids, const char *s, size_t len, int32_t *index, int *added, bl_error *err);
bl_status bl_ids_add_int(bl_ids *ids, int64_t v, int32_t *index, int *added, bl_error *err);
int32_t bl_ids_find(const bl_ids *ids, const char *s, size_t len); /* -1 when absent */
int32_t bl_ids_find_int(const bl_ids *ids, int64_t v);
/* Sort the ids (integers ascending, then text bytewise); old_to_new[i] is
 * the new index of old index i (malloc'd). */
bl_status bl_ids_sort(bl_ids *ids, int32_t **old_to_new, bl_error *err);
int64_t bl_ids_key(const char *s, size_t len, int *hashed);

#endif
