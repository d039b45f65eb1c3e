/* The metadata query of a selector: AND over columns, each column
 *     values                 any of these (exact, or a glob: fnmatch * ? [..])
 *     { not = values }       none of these
 *     { min = a, max = b }   a number within [a, b] (either end optional); the
 *                            column must be numeric (every non-empty value a
 *                            number); empty values never match
 * Exact values are kept sorted for bsearch; globs are tried one by one. The
 * canonical form lists the columns in name order and the values sorted. */
#include "connectome/select_impl.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct condition {
    int column;
    const char *name;
    bl_select_match kind;
    const char **values; /* sorted (the caller's strings) */
    size_t n;
    int has_glob;
    int has_min, has_max;
    double min, max;
} condition;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_condition(const void *a, const void *b)
{
    return strcmp(((const condition *)a)->name, ((const condition *)b)->name);
}

static int is_glob(const char *s)
{
    return strpbrk(s, "*?[") != NULL;
}

/* A whole-string number (strtod), for numeric ranges. */
static int parse_number(const char *s, double *out)
{
    if (!*s)
        return 0;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno || v != v)
        return 0;
    *out = v;
    return 1;
}

static void free_conditions(condition *conds, size_t n)
{
    for (size_t k = 0; conds && k < n; k++)
        free(conds[k].values);
    free(conds);
}

/* The values of column k, sorted, no repeats. */
static bl_status read_values(bl_sel_ctx *x, const bl_select_column *col, long k, condition *cond)
{
    const char *sub = col->match == BL_SELECT_NOT ? "not" : NULL;
    size_t n = col->n_values;
    if (!col->values || n == 0)
        return bl_sel_fail(x, BL_ERR_INVALID, "select", k, sub, -1, "empty selection (an empty list of values)");
    cond->values = malloc(n * sizeof *cond->values);
    if (!cond->values)
        return bl_fail(x->err, BL_ERR_NOMEM, "cannot allocate %zu values", n);
    for (size_t j = 0; j < n; j++) {
        cond->values[j] = col->values[j] ? col->values[j] : "";
        cond->has_glob |= is_glob(cond->values[j]);
    }
    cond->n = n;
    qsort(cond->values, n, sizeof *cond->values, cmp_str);
    for (size_t j = 1; j < n; j++)
        if (!strcmp(cond->values[j], cond->values[j - 1])) {
            char shown[128];
            bl_sel_printable(shown, sizeof shown, cond->values[j], strlen(cond->values[j]));
            return bl_sel_fail(x, BL_ERR_INVALID, "select", k, sub, -1, "value \"%s\" is listed twice", shown);
        }
    return BL_OK;
}

static bl_status read_range(bl_sel_ctx *x, const bl_select_column *col, long k, condition *cond)
{
    if (!col->has_min && !col->has_max)
        return bl_sel_fail(x, BL_ERR_INVALID, "select", k, NULL, -1,
                           "empty condition: give values, { not = ... } or { min = ..., max = ... }");
    cond->has_min = col->has_min;
    cond->has_max = col->has_max;
    cond->min = col->min;
    cond->max = col->max;
    if ((cond->has_min && cond->min != cond->min) || (cond->has_max && cond->max != cond->max))
        return bl_sel_fail(x, BL_ERR_INVALID, "select", k, NULL, -1, "a range end is not a number");
    if (cond->has_min && cond->has_max && cond->min > cond->max)
        return bl_sel_fail(x, BL_ERR_INVALID, "select", k, NULL, -1, "min %g is above max %g", cond->min, cond->max);
    /* A range on a text column is a mistake, not an empty selection. */
    uint64_t nn = bl_connectome_n_neurons(x->c);
    for (uint64_t i = 0; i < nn; i++) {
        const char *value = bl_connectome_value(x->c, (size_t)cond->column, i);
        double v;
        if (*value && !parse_number(value, &v)) {
            char shown[128];
            bl_sel_printable(shown, sizeof shown, value, strlen(value));
            return bl_sel_fail(x, BL_ERR_INVALID, "select", k, NULL, -1,
                               "column '%s' is not numeric (neuron %" PRIu64 " has \"%s\"): a range needs numbers",
                               cond->name, i, shown);
        }
    }
    return BL_OK;
}

static bl_status read_condition(bl_sel_ctx *x, const bl_select_column *col, long k, condition *cond)
{
    cond->name = col->column ? col->column : "";
    cond->column = *cond->name ? bl_connectome_column(x->c, cond->name) : -1;
    if (cond->column < 0) {
        char list[512] = "";
        size_t o = 0, nc = bl_connectome_n_columns(x->c);
        for (size_t j = 0; j < nc && o < sizeof list; j++)
            o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", j ? ", " : "", bl_connectome_column_name(x->c, j));
        return bl_sel_fail(x, BL_ERR_INVALID, "select", k, NULL, -1, "unknown metadata column (%s%s)",
                           nc ? "available: " : "the connectome has no metadata columns", list);
    }
    cond->kind = col->match;
    switch (col->match) {
    case BL_SELECT_ANY:
    case BL_SELECT_NOT:
        return read_values(x, col, k, cond);
    case BL_SELECT_RANGE:
        return read_range(x, col, k, cond);
    }
    return bl_sel_fail(x, BL_ERR_INVALID, "select", k, NULL, -1, "unknown match kind %d", (int)col->match);
}

static int match_values(const condition *cond, const char *value)
{
    if (!cond->has_glob)
        return bsearch(&value, cond->values, cond->n, sizeof(char *), cmp_str) != NULL;
    for (size_t j = 0; j < cond->n; j++)
        if (is_glob(cond->values[j]) ? fnmatch(cond->values[j], value, 0) == 0 : strcmp(cond->values[j], value) == 0)
            return 1;
    return 0;
}

static int match(const condition *cond, const char *value)
{
    double v;
    switch (cond->kind) {
    case BL_SELECT_ANY:
        return match_values(cond, value);
    case BL_SELECT_NOT:
        return !match_values(cond, value);
    default:
        return parse_number(value, &v) && (!cond->has_min || v >= cond->min) && (!cond->has_max || v <= cond->max);
    }
}

static cJSON *condition_json(const condition *cond)
{
    if (cond->kind == BL_SELECT_RANGE) {
        cJSON *o = cJSON_CreateObject();
        char text[40];
        if (o && cond->has_min) {
            bl_sel_number(text, sizeof text, cond->min);
            if (!cJSON_AddRawToObject(o, "min", text))
                return cJSON_Delete(o), NULL;
        }
        if (o && cond->has_max) {
            bl_sel_number(text, sizeof text, cond->max);
            if (!cJSON_AddRawToObject(o, "max", text))
                return cJSON_Delete(o), NULL;
        }
        return o;
    }
    cJSON *arr = cJSON_CreateArray();
    for (size_t j = 0; arr && j < cond->n; j++)
        if (!cJSON_AddItemToArray(arr, cJSON_CreateString(cond->values[j])))
            return cJSON_Delete(arr), NULL;
    if (!arr || cond->kind == BL_SELECT_ANY)
        return arr;
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToObject(o, "not", arr)) {
        cJSON_Delete(o);
        cJSON_Delete(arr);
        return NULL;
    }
    return o;
}

bl_status bl_sel_query(bl_sel_ctx *x, const bl_selector *sel, int32_t **out, size_t *count, cJSON *json)
{
    size_t nk = sel->n_columns;
    *out = NULL;
    *count = 0;
    if (nk == 0)
        return bl_sel_fail(x, BL_ERR_INVALID, "select", -1, NULL, -1, "empty selection (no metadata column given)");
    condition *conds = calloc(nk, sizeof *conds);
    if (!conds)
        return bl_fail(x->err, BL_ERR_NOMEM, "cannot allocate a query");
    bl_status st = BL_OK;
    for (size_t k = 0; k < nk && !st; k++)
        st = read_condition(x, &sel->columns[k], (long)k, &conds[k]);
    for (size_t k = 0; !st && k < nk; k++)
        for (size_t j = 0; !st && j < k; j++)
            if (!strcmp(conds[j].name, conds[k].name))
                st = bl_sel_fail(x, BL_ERR_INVALID, "select", (long)k, NULL, -1, "column '%s' is given twice",
                                 conds[k].name);
    if (st) {
        free_conditions(conds, nk);
        return st;
    }
    qsort(conds, nk, sizeof *conds, cmp_condition);

    uint64_t nn = bl_connectome_n_neurons(x->c);
    size_t n = 0;
    int32_t *neurons = malloc((nn ? nn : 1) * sizeof *neurons);
    if (!neurons) {
        free_conditions(conds, nk);
        return bl_fail(x->err, BL_ERR_NOMEM, "cannot allocate the selection");
    }
    for (uint64_t i = 0; i < nn; i++) {
        int ok = 1;
        for (size_t k = 0; k < nk && ok; k++)
            ok = match(&conds[k], bl_connectome_value(x->c, (size_t)conds[k].column, i));
        if (ok)
            neurons[n++] = (int32_t)i;
    }
    if (n == 0) {
        free(neurons);
        free_conditions(conds, nk);
        return bl_sel_fail(x, BL_ERR_INVALID, "select", -1, NULL, -1,
                           "empty selection: no neuron matches this metadata query");
    }
    cJSON *query = cJSON_AddObjectToObject(json, "select");
    for (size_t k = 0; query && k < nk; k++) {
        cJSON *item = condition_json(&conds[k]);
        if (!item || !cJSON_AddItemToObject(query, conds[k].name, item)) {
            cJSON_Delete(item);
            query = NULL;
        }
    }
    free_conditions(conds, nk);
    if (!query) {
        free(neurons);
        return bl_fail(x->err, BL_ERR_NOMEM, "cannot render a selector");
    }
    *out = neurons;
    *count = n;
    return BL_OK;
}
