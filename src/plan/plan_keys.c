/* Reading typed values out of the TOML view, with messages that name the
 * file, the position, the dotted key and the value at fault (plan_impl.h). */
#include "plan/plan_impl.h"
#include "core/text.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bl_status bl_pk_fail(const bl_pk_ctx *ctx, bl_status status, const bl_toml_node *node,
                     const char *key, const char *fmt, ...)
{
    char where[BL_ERROR_MESSAGE_MAX], what[BL_ERROR_MESSAGE_MAX];
    uint32_t line = bl_toml_line(node), col = bl_toml_column(node);
    if (node && line)
        snprintf(where, sizeof where, "%s:%u:%u", ctx->file, (unsigned)line, (unsigned)col);
    else
        snprintf(where, sizeof where, "%s", ctx->file);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (key && *key)
        return bl_fail(ctx->err, status, "%s: %s: %s", where, key, what);
    return bl_fail(ctx->err, status, "%s: %s", where, what);
}

void bl_pk_printable(char *dst, size_t size, const char *text, size_t len)
{
    bl_text_printable(dst, size, text, len);
}

void bl_pk_number(char *dst, size_t size, double x) { bl_text_number(dst, size, x); }

void bl_pk_describe(const bl_toml_node *node, char *dst, size_t size)
{
    const char *s;
    size_t len;
    int64_t i;
    double d;
    int b;
    char buf[128];
    switch (bl_toml_type_of(node)) {
    case BL_TOML_STRING:
        bl_toml_get_string(node, &s, &len);
        bl_pk_printable(buf, 72, s, len);
        snprintf(dst, size, "string \"%s\"", buf);
        break;
    case BL_TOML_INTEGER:
        bl_toml_get_int(node, &i);
        snprintf(dst, size, "integer %" PRId64, i);
        break;
    case BL_TOML_FLOAT:
        bl_toml_get_double(node, &d);
        bl_pk_number(buf, sizeof buf, d);
        snprintf(dst, size, "float %s", buf);
        break;
    case BL_TOML_BOOLEAN:
        bl_toml_get_bool(node, &b);
        snprintf(dst, size, "boolean %s", b ? "true" : "false");
        break;
    case BL_TOML_ARRAY:
        snprintf(dst, size, "array of %zu element%s", bl_toml_array_size(node),
                 bl_toml_array_size(node) == 1 ? "" : "s");
        break;
    case BL_TOML_TABLE:
        snprintf(dst, size, "table");
        break;
    case BL_TOML_DATE:
    case BL_TOML_TIME:
    case BL_TOML_DATE_TIME:
        bl_toml_get_datetime(node, &s);
        snprintf(dst, size, "%s %s", bl_toml_type_name(bl_toml_type_of(node)), s);
        break;
    }
}

void bl_pk_join(char *dst, size_t size, const char *parent, const char *key, size_t key_len)
{
    char k[BL_PK_PATH_MAX];
    bl_pk_printable(k, sizeof k, key, key_len);
    if (parent && *parent)
        snprintf(dst, size, "%s.%s", parent, k);
    else
        snprintf(dst, size, "%s", k);
}

void bl_pk_index(char *dst, size_t size, const char *parent, size_t i)
{
    snprintf(dst, size, "%s[%zu]", parent, i);
}

bl_status bl_pk_check_keys(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where,
                           const char *const *allowed)
{
    size_t n = bl_toml_table_size(node);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *key = bl_toml_table_key(node, i, &len);
        int known = 0;
        for (const char *const *a = allowed; *a && !known; a++)
            known = strlen(*a) == len && !memcmp(*a, key, len);
        if (known)
            continue;
        char path[BL_PK_PATH_MAX], list[512] = "";
        size_t o = 0;
        bl_pk_join(path, sizeof path, where, key, len);
        for (const char *const *a = allowed; *a && o < sizeof list; a++)
            o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", a == allowed ? "" : ", ", *a);
        char given[160];
        bl_pk_describe(bl_toml_table_value(node, i), given, sizeof given);
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_value(node, i), path,
                          "unknown key (given %s; allowed %s%s%s: %s)", given,
                          *where ? "in [" : "at the top level", where, *where ? "]" : "", list);
    }
    return BL_OK;
}

/* The value at key, or a failure when required and absent. */
static bl_status lookup(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where,
                        const char *key, int required, const bl_toml_node **value, char *path,
                        size_t path_size)
{
    bl_pk_join(path, path_size, where, key, strlen(key));
    *value = bl_toml_table_get(node, key);
    /* A missing key has no position; point at its table (unless the root). */
    if (!*value && required)
        return bl_pk_fail(ctx, BL_ERR_INVALID, *where ? node : NULL, path, "required key is missing%s%s%s",
                          *where ? " (in [" : "", where, *where ? "])" : "");
    return BL_OK;
}

static bl_status wrong_type(const bl_pk_ctx *ctx, const bl_toml_node *value, const char *path,
                            const char *expected)
{
    char got[160];
    bl_pk_describe(value, got, sizeof got);
    return bl_pk_fail(ctx, BL_ERR_INVALID, value, path, "expected %s, got %s", expected, got);
}

bl_status bl_pk_table(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where,
                      const char *key, int required, const bl_toml_node **out)
{
    char path[BL_PK_PATH_MAX];
    const bl_toml_node *v;
    bl_status st = lookup(ctx, node, where, key, 0, &v, path, sizeof path);
    *out = NULL;
    if (st)
        return st;
    if (!v)
        return required ? bl_pk_fail(ctx, BL_ERR_INVALID, NULL, path, "required table [%s] is missing",
                                     path)
                        : BL_OK;
    if (bl_toml_type_of(v) != BL_TOML_TABLE)
        return wrong_type(ctx, v, path, "a table");
    *out = v;
    return BL_OK;
}

bl_status bl_pk_string(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where,
                       const char *key, int required, const char **out, int *found)
{
    char path[BL_PK_PATH_MAX];
    const bl_toml_node *v;
    bl_status st = lookup(ctx, node, where, key, required, &v, path, sizeof path);
    if (found)
        *found = v != NULL;
    if (st || !v)
        return st;
    const char *s;
    size_t len;
    if (!bl_toml_get_string(v, &s, &len))
        return wrong_type(ctx, v, path, "a string");
    if (strlen(s) != len)
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "string holds a NUL character");
    *out = s;
    return BL_OK;
}

bl_status bl_pk_int(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where,
                    const char *key, int required, int64_t min, int64_t max, int64_t *out,
                    int *found)
{
    char path[BL_PK_PATH_MAX];
    const bl_toml_node *v;
    bl_status st = lookup(ctx, node, where, key, required, &v, path, sizeof path);
    if (found)
        *found = v != NULL;
    if (st || !v)
        return st;
    int64_t x;
    if (!bl_toml_get_int(v, &x))
        return wrong_type(ctx, v, path, "an integer");
    if (x < min || x > max)
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "%" PRId64 " is out of range %" PRId64
                          "..%" PRId64, x, min, max);
    *out = x;
    return BL_OK;
}

bl_status bl_pk_double(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where,
                       const char *key, int required, double *out, int *found)
{
    char path[BL_PK_PATH_MAX];
    const bl_toml_node *v;
    bl_status st = lookup(ctx, node, where, key, required, &v, path, sizeof path);
    if (found)
        *found = v != NULL;
    if (st || !v)
        return st;
    double x;
    if (!bl_toml_get_double(v, &x))
        return wrong_type(ctx, v, path, "a number");
    if (!isfinite(x)) {
        char got[64];
        bl_pk_describe(v, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "expected a finite number, got %s", got);
    }
    *out = x;
    return BL_OK;
}

bl_status bl_pk_bool(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where,
                     const char *key, int required, int *out, int *found)
{
    char path[BL_PK_PATH_MAX];
    const bl_toml_node *v;
    bl_status st = lookup(ctx, node, where, key, required, &v, path, sizeof path);
    if (found)
        *found = v != NULL;
    if (st || !v)
        return st;
    if (!bl_toml_get_bool(v, out))
        return wrong_type(ctx, v, path, "a boolean (true or false)");
    return BL_OK;
}

int bl_pk_valid_name(const char *s, size_t len)
{
    if (len == 0 || len > BL_PLAN_MAX_NAME)
        return 0;
    /* Names become directory names (records): one starting with '.' would be
     * hidden ("..", ".x"), and one starting with '-' reads as an option. */
    if (s[0] == '.' || s[0] == '-')
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

char *bl_pk_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}
