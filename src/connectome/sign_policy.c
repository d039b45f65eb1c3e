#include "brainlesslab/sign_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/csv.h"
#include "connectome/import/import_common.h"

typedef struct entry {
    char *key; /* normalized */
    int sign;
} entry;

struct bl_sign_policy {
    entry *entries; /* sorted by key, bytewise, unique */
    size_t n, cap;
    int default_sign; /* +1, -1, or 0 = unmapped keys are an error */
    int unknown_sign; /* +1, -1, or 0 = use default_sign */
    char *description;
};

static int is_blank(unsigned char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '\v' || ch == '\f';
}

static unsigned char lower(unsigned char ch)
{
    /* ASCII only: locale-independent, so a policy means the same everywhere. */
    return (ch >= 'A' && ch <= 'Z') ? (unsigned char)(ch - 'A' + 'a') : ch;
}

/* The trimmed span of s. */
static void trim(const char *s, const char **begin, size_t *len)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    size_t a = 0;
    while (a < n && is_blank((unsigned char)s[a]))
        a++;
    while (n > a && is_blank((unsigned char)s[n - 1]))
        n--;
    *begin = s + a;
    *len = n - a;
}

/* Compare a normalized key with the normalized form of a raw span. */
static int cmp_span(const char *key, const char *raw, size_t len)
{
    size_t i = 0;
    for (; i < len && key[i]; i++) {
        unsigned char a = (unsigned char)key[i], b = lower((unsigned char)raw[i]);
        if (a != b)
            return a < b ? -1 : 1;
    }
    if (i == len)
        return key[i] ? 1 : 0;
    return -1; /* key ended first */
}

/* Position of the key, or where it would be inserted; *found says which. */
static size_t find(const bl_sign_policy *p, const char *raw, size_t len, int *found)
{
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_span(p->entries[mid].key, raw, len);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

static const char *sign_text(int sign)
{
    return sign > 0 ? "+1" : sign < 0 ? "-1" : "error";
}

static bl_status rebuild_description(bl_sign_policy *p, bl_error *err)
{
    size_t size = 64;
    for (size_t i = 0; i < p->n; i++)
        size += strlen(p->entries[i].key) + 5;
    char *d = malloc(size);
    if (!d)
        return bl_fail(err, BL_ERR_NOMEM, "sign policy: out of memory");
    size_t at = 0;
    for (size_t i = 0; i < p->n; i++) {
        size_t k = strlen(p->entries[i].key);
        memcpy(d + at, p->entries[i].key, k);
        at += k;
        d[at++] = '=';
        memcpy(d + at, sign_text(p->entries[i].sign), 2);
        at += 2;
        d[at++] = ';';
    }
    int unknown = p->unknown_sign ? p->unknown_sign : p->default_sign;
    snprintf(d + at, size - at, "unknown=%s;default=%s", sign_text(unknown),
             sign_text(p->default_sign));
    free(p->description);
    p->description = d;
    return BL_OK;
}

static bl_status check_sign(int sign, int allow_zero, const char *what, bl_error *err)
{
    if (sign == 1 || sign == -1 || (allow_zero && sign == 0))
        return BL_OK;
    return bl_fail(err, BL_ERR_INVALID, "sign policy: %s sign %d is not %s", what, sign,
                   allow_zero ? "+1, -1 or 0" : "+1 or -1");
}

bl_status bl_sign_policy_create(int default_sign, bl_sign_policy **out, bl_error *err)
{
    *out = NULL;
    bl_status st = check_sign(default_sign, 1, "default", err);
    if (st != BL_OK)
        return st;
    bl_sign_policy *p = calloc(1, sizeof *p);
    if (!p)
        return bl_fail(err, BL_ERR_NOMEM, "sign policy: out of memory");
    p->default_sign = default_sign;
    st = rebuild_description(p, err);
    if (st != BL_OK) {
        free(p);
        return st;
    }
    *out = p;
    return BL_OK;
}

void bl_sign_policy_destroy(bl_sign_policy *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        free(p->entries[i].key);
    free(p->entries);
    free(p->description);
    free(p);
}

bl_status bl_sign_policy_clone(const bl_sign_policy *p, bl_sign_policy **out, bl_error *err)
{
    *out = NULL;
    bl_sign_policy *q = NULL;
    bl_status st = bl_sign_policy_create(p->default_sign, &q, err);
    if (st != BL_OK)
        return st;
    q->unknown_sign = p->unknown_sign;
    if (p->n) {
        q->entries = calloc(p->n, sizeof *q->entries);
        if (!q->entries) {
            bl_sign_policy_destroy(q);
            return bl_fail(err, BL_ERR_NOMEM, "sign policy: out of memory");
        }
        q->cap = p->n;
        for (size_t i = 0; i < p->n; i++) {
            q->entries[i].key = bl_import_strdup(p->entries[i].key);
            q->entries[i].sign = p->entries[i].sign;
            if (!q->entries[i].key) {
                bl_sign_policy_destroy(q);
                return bl_fail(err, BL_ERR_NOMEM, "sign policy: out of memory");
            }
            q->n = i + 1;
        }
    }
    st = rebuild_description(q, err);
    if (st != BL_OK) {
        bl_sign_policy_destroy(q);
        return st;
    }
    *out = q;
    return BL_OK;
}

/* Normalize and validate a key for storing; *norm is malloc'd. */
static bl_status normalize_key(const char *key, char **norm, bl_error *err)
{
    *norm = NULL;
    const char *b;
    size_t len;
    trim(key, &b, &len);
    char shown[128];
    bl_import_printable(shown, sizeof shown, key);
    if (len == 0)
        return bl_fail(err, BL_ERR_INVALID,
                       "sign policy: empty key (set the unknown sign for empty keys instead)");
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)b[i];
        if (ch < 0x20 || ch == 0x7f || ch == ';' || ch == '=')
            return bl_fail(err, BL_ERR_INVALID,
                           "sign policy: key '%s' contains ';', '=' or a control character",
                           shown);
    }
    char *n = malloc(len + 1);
    if (!n)
        return bl_fail(err, BL_ERR_NOMEM, "sign policy: out of memory");
    for (size_t i = 0; i < len; i++)
        n[i] = (char)lower((unsigned char)b[i]);
    n[len] = '\0';
    if (!strcmp(n, "default") || !strcmp(n, "unknown")) {
        free(n);
        return bl_fail(err, BL_ERR_INVALID,
                       "sign policy: key '%s' is reserved (use set_default / set_unknown)", shown);
    }
    *norm = n;
    return BL_OK;
}

bl_status bl_sign_policy_set(bl_sign_policy *p, const char *key, int sign, bl_error *err)
{
    bl_status st = check_sign(sign, 0, "key", err);
    if (st != BL_OK)
        return st;
    char *norm = NULL;
    st = normalize_key(key, &norm, err);
    if (st != BL_OK)
        return st;
    int found = 0;
    size_t at = find(p, norm, strlen(norm), &found);
    if (found) {
        free(norm);
        p->entries[at].sign = sign;
        return rebuild_description(p, err);
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        if (cap > SIZE_MAX / sizeof *p->entries) {
            free(norm);
            return bl_fail(err, BL_ERR_NOMEM, "sign policy: too many keys");
        }
        entry *grown = realloc(p->entries, cap * sizeof *grown);
        if (!grown) {
            free(norm);
            return bl_fail(err, BL_ERR_NOMEM, "sign policy: out of memory");
        }
        p->entries = grown;
        p->cap = cap;
    }
    memmove(p->entries + at + 1, p->entries + at, (p->n - at) * sizeof *p->entries);
    p->entries[at].key = norm;
    p->entries[at].sign = sign;
    p->n++;
    return rebuild_description(p, err);
}

bl_status bl_sign_policy_set_unknown(bl_sign_policy *p, int sign, bl_error *err)
{
    bl_status st = check_sign(sign, 1, "unknown", err);
    if (st != BL_OK)
        return st;
    p->unknown_sign = sign;
    return rebuild_description(p, err);
}

bl_status bl_sign_policy_set_default(bl_sign_policy *p, int sign, bl_error *err)
{
    bl_status st = check_sign(sign, 1, "default", err);
    if (st != BL_OK)
        return st;
    p->default_sign = sign;
    return rebuild_description(p, err);
}

bl_status bl_sign_policy_lookup(const bl_sign_policy *p, const char *key, const char *where,
                                int *sign, bl_error *err)
{
    const char *b;
    size_t len;
    trim(key, &b, &len);
    *sign = 0;
    const char *w = where ? where : "sign policy";
    if (len == 0) {
        int s = p->unknown_sign ? p->unknown_sign : p->default_sign;
        if (!s)
            return bl_fail(err, BL_ERR_INVALID,
                           "%s: empty key, and the sign policy declares neither an unknown "
                           "nor a default sign",
                           w);
        *sign = s;
        return BL_OK;
    }
    int found = 0;
    size_t at = find(p, b, len, &found);
    if (found) {
        *sign = p->entries[at].sign;
        return BL_OK;
    }
    if (!p->default_sign) {
        char shown[128];
        bl_import_printable(shown, sizeof shown, key);
        return bl_fail(err, BL_ERR_INVALID,
                       "%s: '%s' is not mapped by the sign policy, which declares no default",
                       w, shown);
    }
    *sign = p->default_sign;
    return BL_OK;
}

const char *bl_sign_policy_describe(const bl_sign_policy *p)
{
    return p->description;
}

/* --- override files --- */

typedef struct override {
    char *key; /* normalized; "default" / "unknown" for the reserved rows */
    int sign;
    uint64_t line;
} override;

static int override_cmp(const void *a, const void *b)
{
    const override *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return x->line < y->line ? -1 : x->line > y->line ? 1 : 0;
}

static void free_overrides(override *o, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(o[i].key);
    free(o);
}

/* Parse the sign column: "+1", "1", "-1"; "error" (as 0) where allowed. */
static bl_status parse_sign(const bl_csv *csv, size_t col, int allow_error, int *sign,
                            bl_error *err)
{
    const char *b;
    size_t len;
    trim(bl_csv_field(csv, col), &b, &len);
    if ((len == 2 && !strncmp(b, "+1", 2)) || (len == 1 && b[0] == '1')) {
        *sign = 1;
        return BL_OK;
    }
    if (len == 2 && !strncmp(b, "-1", 2)) {
        *sign = -1;
        return BL_OK;
    }
    if (allow_error && len == 5 && cmp_span("error", b, len) == 0) {
        *sign = 0;
        return BL_OK;
    }
    char shown[64];
    bl_import_printable(shown, sizeof shown, bl_csv_field(csv, col));
    return bl_fail(err, BL_ERR_FORMAT, "%s:%llu, column sign: '%s' is not +1 or -1%s",
                   bl_csv_path(csv), (unsigned long long)bl_csv_line(csv), shown,
                   allow_error ? " or error" : "");
}

bl_status bl_sign_policy_load_overrides(bl_sign_policy *p, const char *path, bl_error *err)
{
    static const char *const columns[] = {"key", "sign"};
    size_t idx[2], nfields = 0;
    bl_csv *csv = NULL;
    bl_status st = bl_import_open_table(path, columns, 2, idx, &nfields, &csv, err);
    if (st != BL_OK)
        return st;

    override *rows = NULL;
    size_t n = 0, cap = 0;
    int r;
    while ((r = bl_csv_next(csv, err)) == 1) {
        st = bl_csv_expect_fields(csv, nfields, err);
        if (st != BL_OK)
            goto fail;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            override *grown = ncap <= SIZE_MAX / sizeof *grown ? realloc(rows, ncap * sizeof *grown)
                                                               : NULL;
            if (!grown) {
                st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
                goto fail;
            }
            rows = grown;
            cap = ncap;
        }
        override *o = &rows[n];
        o->key = NULL;
        o->line = bl_csv_line(csv);
        const char *b;
        size_t len;
        trim(bl_csv_field(csv, idx[0]), &b, &len);
        int reserved_default = len == 7 && cmp_span("default", b, len) == 0;
        int reserved_unknown = len == 7 && cmp_span("unknown", b, len) == 0;
        if (reserved_default || reserved_unknown) {
            o->key = bl_import_strdup(reserved_default ? "default" : "unknown");
            if (!o->key) {
                st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
                goto fail;
            }
        } else {
            st = normalize_key(bl_csv_field(csv, idx[0]), &o->key, err);
            if (st != BL_OK) {
                /* normalize_key's message has no location; add it. */
                bl_fail_context(err, "%s:%llu, column key", path, (unsigned long long)o->line);
                goto fail;
            }
        }
        n++;
        st = parse_sign(csv, idx[1], reserved_default, &o->sign, err);
        if (st != BL_OK)
            goto fail;
    }
    if (r < 0) {
        st = err ? err->status : BL_ERR_FORMAT;
        goto fail;
    }
    bl_csv_close(csv);
    csv = NULL;

    if (n > 1)
        qsort(rows, n, sizeof *rows, override_cmp);
    for (size_t i = 1; i < n; i++) {
        if (!strcmp(rows[i].key, rows[i - 1].key)) {
            st = bl_fail(err, BL_ERR_INVALID, "%s:%llu: key '%s' already given at line %llu",
                         path, (unsigned long long)rows[i].line, rows[i].key,
                         (unsigned long long)rows[i - 1].line);
            goto fail;
        }
    }

    /* Apply to a copy and swap it in, so a failure leaves p unchanged. */
    bl_sign_policy *q = NULL;
    st = bl_sign_policy_clone(p, &q, err);
    if (st != BL_OK)
        goto fail;
    for (size_t i = 0; i < n && st == BL_OK; i++) {
        if (!strcmp(rows[i].key, "default"))
            st = bl_sign_policy_set_default(q, rows[i].sign, err);
        else if (!strcmp(rows[i].key, "unknown"))
            st = bl_sign_policy_set_unknown(q, rows[i].sign, err);
        else
            st = bl_sign_policy_set(q, rows[i].key, rows[i].sign, err);
    }
    if (st != BL_OK) {
        bl_sign_policy_destroy(q);
        goto fail;
    }
    bl_sign_policy tmp = *p;
    *p = *q;
    *q = tmp;
    bl_sign_policy_destroy(q);
    free_overrides(rows, n);
    return BL_OK;

fail:
    if (csv)
        bl_csv_close(csv);
    free_overrides(rows, n);
    return st;
}
