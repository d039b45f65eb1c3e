/* External ids as keys (ids.h): integer ids are their own key, other text is
 * hashed, and a hashed key is always checked against the text it stands for,
 * so two ids can never be confused. */
#include "connectome/import/ids.h"

#include <stdlib.h>
#include <string.h>

/* A canonical decimal int64 ("0", "-12", no '+', no leading zeros). */
static int canonical_int(const char *s, size_t len, int64_t *v)
{
    if (len == 0 || len > 20)
        return 0;
    size_t i = s[0] == '-';
    if (i == len || (s[i] == '0' && len > i + 1) || (i && s[i] == '0'))
        return 0;
    uint64_t x = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return 0;
        x = x * 10 + d;
    }
    if (s[0] == '-') {
        if (x > (uint64_t)INT64_MAX + 1)
            return 0;
        *v = x == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)x;
    } else {
        if (x > (uint64_t)INT64_MAX)
            return 0;
        *v = (int64_t)x;
    }
    return 1;
}

int64_t bl_ids_key(const char *s, size_t len, int *hashed)
{
    int64_t v;
    if (canonical_int(s, len, &v)) {
        *hashed = 0;
        return v;
    }
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    *hashed = 1;
    return (int64_t)h;
}

bl_status bl_ids_init(bl_ids *ids, uint64_t expect, bl_error *err)
{
    memset(ids, 0, sizeof *ids);
    ids->map_cap_hint = expect * 2 + 32;
    return bl_idmap_create(expect, &ids->map, err);
}

void bl_ids_free(bl_ids *ids)
{
    for (uint64_t i = 0; i < ids->n; i++)
        free(ids->text[i]);
    free(ids->text);
    free(ids->key);
    free(ids->hashed);
    bl_idmap_destroy(ids->map);
    memset(ids, 0, sizeof *ids);
}

int32_t bl_ids_find(const bl_ids *ids, const char *s, size_t len)
{
    int hashed;
    int64_t k = bl_ids_key(s, len, &hashed);
    int32_t j = bl_idmap_get(ids->map, k);
    if (j < 0 || ids->hashed[j] != hashed)
        return -1;
    if (hashed && (strlen(ids->text[j]) != len || memcmp(ids->text[j], s, len)))
        return -1;
    return j;
}

int32_t bl_ids_find_int(const bl_ids *ids, int64_t v)
{
    int32_t j = bl_idmap_get(ids->map, v);
    return j >= 0 && !ids->hashed[j] ? j : -1;
}

bl_status bl_ids_add(bl_ids *ids, const char *s, size_t len, int32_t *index, int *added, bl_error *err)
{
    int hashed;
    int64_t k = bl_ids_key(s, len, &hashed);
    int32_t j = bl_idmap_get(ids->map, k);
    *added = 0;
    if (j >= 0) {
        if (ids->hashed[j] == hashed && (!hashed || (strlen(ids->text[j]) == len && !memcmp(ids->text[j], s, len)))) {
            *index = j;
            return BL_OK;
        }
        return bl_fail(err, BL_ERR_INTERNAL, "ids '%.60s' and '%.60s' share a 64-bit key", ids->text[j], s);
    }
    if (ids->n >= BL_MAX_NEURONS)
        return bl_fail(err, BL_ERR_INVALID, "more than %llu neurons", (unsigned long long)BL_MAX_NEURONS);
    if (ids->n == ids->cap) {
        uint64_t cap = ids->cap ? ids->cap * 2 : 1024;
        char **t = realloc(ids->text, (size_t)cap * sizeof *t);
        if (t)
            ids->text = t;
        int64_t *kk = t ? realloc(ids->key, (size_t)cap * sizeof *kk) : NULL;
        if (kk)
            ids->key = kk;
        uint8_t *h = kk ? realloc(ids->hashed, (size_t)cap) : NULL;
        if (!h)
            return bl_fail(err, BL_ERR_NOMEM, "out of memory for %llu ids", (unsigned long long)cap);
        ids->hashed = h;
        ids->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return bl_fail(err, BL_ERR_NOMEM, "out of memory");
    memcpy(copy, s, len);
    copy[len] = '\0';
    j = (int32_t)ids->n;
    ids->text[j] = copy;
    ids->key[j] = k;
    ids->hashed[j] = (uint8_t)hashed;
    ids->n++;
    if (ids->n * 2 + 16 > ids->map_cap_hint) {
        /* Rebuild the map at twice the size (amortised O(1) per id). */
        bl_idmap *m = NULL;
        bl_status st = bl_idmap_create(ids->n * 2, &m, err);
        if (st != BL_OK)
            return st;
        for (uint64_t i = 0; i < ids->n; i++)
            bl_idmap_put(m, ids->key[i], (int32_t)i);
        bl_idmap_destroy(ids->map);
        ids->map = m;
        ids->map_cap_hint = ids->n * 4 + 32;
    } else {
        bl_idmap_put(ids->map, k, j);
    }
    *index = j;
    *added = 1;
    return BL_OK;
}

bl_status bl_ids_add_int(bl_ids *ids, int64_t v, int32_t *index, int *added, bl_error *err)
{
    int32_t j = bl_idmap_get(ids->map, v);
    if (j >= 0 && !ids->hashed[j]) {
        *index = j;
        *added = 0;
        return BL_OK;
    }
    char buf[24];
    int len = snprintf(buf, sizeof buf, "%lld", (long long)v);
    return bl_ids_add(ids, buf, (size_t)len, index, added, err);
}

/* Order: integers ascending, then other text bytewise. */
static const bl_ids *sort_ids;
static int cmp_ids(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    int hx = sort_ids->hashed[x], hy = sort_ids->hashed[y];
    if (hx != hy)
        return hx - hy;
    if (!hx)
        return sort_ids->key[x] < sort_ids->key[y] ? -1 : sort_ids->key[x] > sort_ids->key[y];
    return strcmp(sort_ids->text[x], sort_ids->text[y]);
}

bl_status bl_ids_sort(bl_ids *ids, int32_t **old_to_new, bl_error *err)
{
    uint64_t n = ids->n;
    int32_t *order = malloc((size_t)(n ? n : 1) * sizeof *order);
    int32_t *inv = malloc((size_t)(n ? n : 1) * sizeof *inv);
    char **text = malloc((size_t)(n ? n : 1) * sizeof *text);
    int64_t *key = malloc((size_t)(n ? n : 1) * sizeof *key);
    uint8_t *hashed = malloc((size_t)(n ? n : 1));
    bl_idmap *m = NULL;
    bl_status st = order && inv && text && key && hashed ? bl_idmap_create(n, &m, err)
                                                         : bl_fail(err, BL_ERR_NOMEM, "out of memory");
    if (st != BL_OK) {
        free(order), free(inv), free(text), free(key), free(hashed);
        return st;
    }
    for (uint64_t i = 0; i < n; i++)
        order[i] = (int32_t)i;
    sort_ids = ids;
    qsort(order, (size_t)n, sizeof *order, cmp_ids);
    for (uint64_t i = 0; i < n; i++) {
        int32_t o = order[i];
        inv[o] = (int32_t)i;
        text[i] = ids->text[o];
        key[i] = ids->key[o];
        hashed[i] = ids->hashed[o];
        bl_idmap_put(m, key[i], (int32_t)i);
    }
    free(ids->text), free(ids->key), free(ids->hashed);
    bl_idmap_destroy(ids->map);
    ids->text = text, ids->key = key, ids->hashed = hashed, ids->map = m;
    ids->cap = n;
    ids->map_cap_hint = n * 4 + 32;
    free(order);
    *old_to_new = inv;
    return BL_OK;
}
