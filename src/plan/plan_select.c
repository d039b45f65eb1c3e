/* Population selectors: which neurons a [[stimulus]] or [[silence]] means.
 *     neurons = [3, 17]                      indices 0..N-1
 *     ids = ["720575940", 720575941]         external ids (integers are read as
 *                                            their decimal text: FlyWire root ids
 *                                            and CATMAID skeleton ids are numbers)
 *     select = { cell_type = "ORN", side = ["left", "right"] }
 *                                            metadata query: AND over columns,
 *                                            OR over the values of one column
 * The selector is kept in a normalised form (sorted, duplicates refused) so
 * that two plans that select the same way hash the same way. */
#include "plan/plan_impl.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A string element, or an integer read as its decimal text (into num). */
static bl_status text_element(const bl_pk_ctx *ctx, const bl_toml_node *v, const char *path,
                              char num[24], const char **out)
{
    int64_t x;
    size_t len;
    if (bl_toml_get_int(v, &x)) {
        snprintf(num, 24, "%" PRId64, x);
        *out = num;
        return BL_OK;
    }
    if (!bl_toml_get_string(v, out, &len)) {
        char got[160];
        bl_pk_describe(v, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "expected a string (or an integer id), got %s",
                          got);
    }
    if (strlen(*out) != len)
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "string holds a NUL character");
    return BL_OK;
}

static bl_status non_empty_array(const bl_pk_ctx *ctx, const bl_toml_node *v, const char *path,
                                 const char *what)
{
    if (bl_toml_type_of(v) != BL_TOML_ARRAY) {
        char got[160];
        bl_pk_describe(v, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "expected an array of %s, got %s", what, got);
    }
    if (bl_toml_array_size(v) == 0)
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "empty selection (an empty array of %s)", what);
    return BL_OK;
}

/* Sort the neurons and refuse repeats (a repeat is almost always a typo). */
static bl_status sort_unique(const bl_pk_ctx *ctx, const bl_toml_node *v, const char *path,
                             const bl_connectome *c, int by_id, int32_t *neurons, size_t n)
{
    qsort(neurons, n, sizeof *neurons, cmp_i32);
    for (size_t i = 1; i < n; i++)
        if (neurons[i] == neurons[i - 1]) {
            if (by_id) {
                char id[128];
                const char *s = bl_connectome_external_id(c, (uint64_t)neurons[i]);
                bl_pk_printable(id, sizeof id, s, strlen(s));
                return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "id \"%s\" is listed twice", id);
            }
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "neuron %" PRId32 " is listed twice",
                              neurons[i]);
        }
    return BL_OK;
}

static char *print_selector(cJSON *sel)
{
    char *text = sel ? cJSON_PrintUnformatted(sel) : NULL;
    cJSON_Delete(sel);
    return text;
}

static bl_status by_index(const bl_pk_ctx *ctx, const bl_connectome *c, const bl_toml_node *v,
                          const char *path, bl_pk_population *pop)
{
    bl_status st = non_empty_array(ctx, v, path, "neuron indices");
    if (st)
        return st;
    size_t n = bl_toml_array_size(v);
    uint64_t nn = bl_connectome_n_neurons(c);
    int32_t *neurons = malloc(n * sizeof *neurons);
    if (!neurons)
        return bl_pk_fail(ctx, BL_ERR_NOMEM, v, path, "cannot allocate %zu neuron indices", n);
    for (size_t i = 0; i < n; i++) {
        const bl_toml_node *e = bl_toml_array_at(v, i);
        char epath[BL_PK_PATH_MAX];
        int64_t x;
        bl_pk_index(epath, sizeof epath, path, i);
        if (!bl_toml_get_int(e, &x)) {
            char got[160];
            bl_pk_describe(e, got, sizeof got);
            free(neurons);
            return bl_pk_fail(ctx, BL_ERR_INVALID, e, epath, "expected a neuron index (integer), got %s",
                              got);
        }
        if (x < 0 || (uint64_t)x >= nn) {
            free(neurons);
            return bl_pk_fail(ctx, BL_ERR_INVALID, e, epath, "neuron index %" PRId64
                              " is out of range 0..%" PRIu64 " (the connectome has %" PRIu64 " neurons)",
                              x, nn ? nn - 1 : 0, nn);
        }
        neurons[i] = (int32_t)x;
    }
    if ((st = sort_unique(ctx, v, path, c, 0, neurons, n))) {
        free(neurons);
        return st;
    }
    cJSON *sel = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(sel, "neurons");
    for (size_t i = 0; arr && i < n; i++)
        if (!cJSON_AddItemToArray(arr, cJSON_CreateNumber(neurons[i])))
            arr = NULL;
    pop->selector = arr ? print_selector(sel) : (cJSON_Delete(sel), NULL);
    if (!pop->selector) {
        free(neurons);
        return bl_pk_fail(ctx, BL_ERR_NOMEM, v, path, "cannot render the selector");
    }
    pop->neurons = neurons;
    pop->view.n_neurons = n;
    return BL_OK;
}

static bl_status by_id(const bl_pk_ctx *ctx, const bl_connectome *c, const bl_toml_node *v,
                       const char *path, bl_pk_population *pop)
{
    bl_status st = non_empty_array(ctx, v, path, "external ids");
    if (st)
        return st;
    size_t n = bl_toml_array_size(v);
    int32_t *neurons = malloc(n * sizeof *neurons);
    if (!neurons)
        return bl_pk_fail(ctx, BL_ERR_NOMEM, v, path, "cannot allocate %zu neuron ids", n);
    for (size_t i = 0; i < n; i++) {
        const bl_toml_node *e = bl_toml_array_at(v, i);
        char epath[BL_PK_PATH_MAX], num[24];
        const char *id;
        bl_pk_index(epath, sizeof epath, path, i);
        if ((st = text_element(ctx, e, epath, num, &id))) {
            free(neurons);
            return st;
        }
        if (bl_connectome_find(c, id, &neurons[i], NULL)) {
            char shown[128];
            bl_pk_printable(shown, sizeof shown, id, strlen(id));
            free(neurons);
            return bl_pk_fail(ctx, BL_ERR_INVALID, e, epath,
                              "unknown external id \"%s\" (no neuron of the connectome has it)", shown);
        }
    }
    if ((st = sort_unique(ctx, v, path, c, 1, neurons, n))) {
        free(neurons);
        return st;
    }
    /* Normalised: ids in lexicographic order. */
    const char **ids = malloc(n * sizeof *ids);
    cJSON *sel = ids ? cJSON_CreateObject() : NULL;
    cJSON *arr = sel ? cJSON_AddArrayToObject(sel, "ids") : NULL;
    if (arr) {
        for (size_t i = 0; i < n; i++)
            ids[i] = bl_connectome_external_id(c, (uint64_t)neurons[i]);
        qsort(ids, n, sizeof *ids, cmp_str);
        for (size_t i = 0; arr && i < n; i++)
            if (!cJSON_AddItemToArray(arr, cJSON_CreateString(ids[i])))
                arr = NULL;
    }
    free(ids);
    pop->selector = arr ? print_selector(sel) : (cJSON_Delete(sel), NULL);
    if (!pop->selector) {
        free(neurons);
        return bl_pk_fail(ctx, BL_ERR_NOMEM, v, path, "cannot render the selector");
    }
    pop->neurons = neurons;
    pop->view.n_neurons = n;
    return BL_OK;
}

/* One column of a metadata query. A column takes
 *     "value" or ["v1", "v2"]          any of these (exact, or a glob: fnmatch
 *                                      patterns with * ? [..], e.g. "T4*")
 *     { not = "v" or [..] }            none of these (exact or glob)
 *     { min = a, max = b }             a numeric range, both ends inclusive and
 *                                      either optional; the column must be
 *                                      numeric (every non-empty value a number);
 *                                      empty values never match
 * Exact values are kept sorted for bsearch; globs are tried one by one. */
enum { COND_ANY, COND_NOT, COND_RANGE };

typedef struct condition {
    int column;
    const char *name;
    int kind;
    char **values;
    size_t n;
    int has_glob;
    int has_min, has_max;
    double min, max;
} condition;

static void free_conditions(condition *conds, size_t n)
{
    for (size_t k = 0; conds && k < n; k++) {
        for (size_t j = 0; j < conds[k].n; j++)
            free(conds[k].values[j]);
        free(conds[k].values);
    }
    free(conds);
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
    double x = strtod(s, &end);
    if (*end || errno || x != x)
        return 0;
    *out = x;
    return 1;
}

/* The values (one or a list) of `v` into cond->values, sorted, no repeats. */
static bl_status read_values(const bl_pk_ctx *ctx, const bl_toml_node *v, const char *kpath,
                             condition *cond)
{
    int is_list = bl_toml_type_of(v) == BL_TOML_ARRAY;
    size_t n = is_list ? bl_toml_array_size(v) : 1;
    if (n == 0)
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, kpath, "empty selection (an empty list of values)");
    cond->values = calloc(n, sizeof *cond->values);
    if (!cond->values)
        return bl_pk_fail(ctx, BL_ERR_NOMEM, v, kpath, "cannot allocate %zu values", n);
    for (size_t j = 0; j < n; j++) {
        const bl_toml_node *e = is_list ? bl_toml_array_at(v, j) : v;
        char epath[BL_PK_PATH_MAX], num[24];
        const char *text;
        if (is_list)
            bl_pk_index(epath, sizeof epath, kpath, j);
        else
            snprintf(epath, sizeof epath, "%s", kpath);
        bl_status st = text_element(ctx, e, epath, num, &text);
        if (st)
            return st;
        if (!(cond->values[j] = bl_pk_strdup(text)))
            return bl_pk_fail(ctx, BL_ERR_NOMEM, e, epath, "cannot copy a value");
        cond->n = j + 1;
        cond->has_glob |= is_glob(text);
    }
    qsort(cond->values, n, sizeof *cond->values, cmp_str);
    for (size_t j = 1; j < n; j++)
        if (!strcmp(cond->values[j], cond->values[j - 1])) {
            char shown[128];
            bl_pk_printable(shown, sizeof shown, cond->values[j], strlen(cond->values[j]));
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, kpath, "value \"%s\" is listed twice", shown);
        }
    return BL_OK;
}

static bl_status read_range(const bl_pk_ctx *ctx, const bl_connectome *c, const bl_toml_node *v,
                            const char *kpath, condition *cond)
{
    static const char *const keys[] = {"min", "max", NULL};
    bl_status st = bl_pk_check_keys(ctx, v, kpath, keys);
    if (st || (st = bl_pk_double(ctx, v, kpath, "min", 0, &cond->min, &cond->has_min)) ||
        (st = bl_pk_double(ctx, v, kpath, "max", 0, &cond->max, &cond->has_max)))
        return st;
    if (cond->has_min && cond->has_max && cond->min > cond->max)
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, kpath, "min %g is above max %g", cond->min, cond->max);
    /* A range on a text column is a mistake, not an empty selection. */
    uint64_t nn = bl_connectome_n_neurons(c);
    for (uint64_t i = 0; i < nn; i++) {
        const char *value = bl_connectome_value(c, (size_t)cond->column, i);
        double x;
        if (*value && !parse_number(value, &x)) {
            char shown[128];
            bl_pk_printable(shown, sizeof shown, value, strlen(value));
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, kpath,
                              "column '%s' is not numeric (neuron %" PRIu64 " has \"%s\"): a range needs numbers",
                              cond->name, i, shown);
        }
    }
    return BL_OK;
}

static bl_status read_condition(const bl_pk_ctx *ctx, const bl_connectome *c,
                                const bl_toml_node *sel, size_t k, const char *path, condition *cond)
{
    size_t klen;
    const char *key = bl_toml_table_key(sel, k, &klen);
    const bl_toml_node *v = bl_toml_table_value(sel, k);
    char kpath[BL_PK_PATH_MAX];
    bl_pk_join(kpath, sizeof kpath, path, key, klen);
    cond->name = key;
    cond->column = strlen(key) == klen ? bl_connectome_column(c, key) : -1;
    if (cond->column < 0) {
        char list[512] = "";
        size_t o = 0, nc = bl_connectome_n_columns(c);
        for (size_t j = 0; j < nc && o < sizeof list; j++)
            o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", j ? ", " : "",
                                  bl_connectome_column_name(c, j));
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, kpath, "unknown metadata column (%s%s)",
                          nc ? "available: " : "the connectome has no metadata columns", list);
    }
    if (bl_toml_type_of(v) != BL_TOML_TABLE) {
        cond->kind = COND_ANY;
        return read_values(ctx, v, kpath, cond);
    }
    const bl_toml_node *neg = bl_toml_table_get(v, "not");
    if (neg) {
        static const char *const keys[] = {"not", NULL};
        bl_status st = bl_pk_check_keys(ctx, v, kpath, keys);
        if (st)
            return st;
        char npath[BL_PK_PATH_MAX];
        bl_pk_join(npath, sizeof npath, kpath, "not", 3);
        cond->kind = COND_NOT;
        return read_values(ctx, neg, npath, cond);
    }
    if (bl_toml_table_size(v) == 0)
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, kpath,
                          "empty condition: give values, { not = ... } or { min = ..., max = ... }");
    cond->kind = COND_RANGE;
    return read_range(ctx, c, v, kpath, cond);
}

static int match_values(const condition *cond, const char *value)
{
    if (!cond->has_glob)
        return bsearch(&value, cond->values, cond->n, sizeof(char *), cmp_str) != NULL;
    for (size_t j = 0; j < cond->n; j++)
        if (is_glob(cond->values[j]) ? fnmatch(cond->values[j], value, 0) == 0
                                     : strcmp(cond->values[j], value) == 0)
            return 1;
    return 0;
}

static int match(const condition *cond, const char *value)
{
    double x;
    switch (cond->kind) {
    case COND_ANY:
        return match_values(cond, value);
    case COND_NOT:
        return !match_values(cond, value);
    default:
        return parse_number(value, &x) && (!cond->has_min || x >= cond->min) &&
               (!cond->has_max || x <= cond->max);
    }
}

static cJSON *condition_json(const condition *cond)
{
    if (cond->kind == COND_RANGE) {
        cJSON *o = cJSON_CreateObject();
        char text[40];
        if (o && cond->has_min) {
            bl_pk_number(text, sizeof text, cond->min);
            if (!cJSON_AddRawToObject(o, "min", text))
                return cJSON_Delete(o), NULL;
        }
        if (o && cond->has_max) {
            bl_pk_number(text, sizeof text, cond->max);
            if (!cJSON_AddRawToObject(o, "max", text))
                return cJSON_Delete(o), NULL;
        }
        return o;
    }
    cJSON *arr = cJSON_CreateArray();
    for (size_t j = 0; arr && j < cond->n; j++)
        if (!cJSON_AddItemToArray(arr, cJSON_CreateString(cond->values[j])))
            return cJSON_Delete(arr), NULL;
    if (!arr || cond->kind == COND_ANY)
        return arr;
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToObject(o, "not", arr)) {
        cJSON_Delete(o);
        cJSON_Delete(arr);
        return NULL;
    }
    return o;
}

static bl_status by_query(const bl_pk_ctx *ctx, const bl_connectome *c, const bl_toml_node *sel,
                          const char *path, bl_pk_population *pop)
{
    if (bl_toml_type_of(sel) != BL_TOML_TABLE) {
        char got[160];
        bl_pk_describe(sel, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, sel, path,
                          "expected a table of metadata column = value(s), got %s", got);
    }
    size_t nk = bl_toml_table_size(sel);
    if (nk == 0)
        return bl_pk_fail(ctx, BL_ERR_INVALID, sel, path, "empty selection (no metadata column given)");
    condition *conds = calloc(nk, sizeof *conds);
    if (!conds)
        return bl_pk_fail(ctx, BL_ERR_NOMEM, sel, path, "cannot allocate a query");
    bl_status st = BL_OK;
    for (size_t k = 0; k < nk && !st; k++)
        st = read_condition(ctx, c, sel, k, path, &conds[k]);
    if (st) {
        free_conditions(conds, nk);
        return st;
    }
    qsort(conds, nk, sizeof *conds, cmp_condition);

    uint64_t nn = bl_connectome_n_neurons(c);
    size_t count = 0;
    int32_t *neurons = malloc((nn ? nn : 1) * sizeof *neurons);
    if (!neurons) {
        free_conditions(conds, nk);
        return bl_pk_fail(ctx, BL_ERR_NOMEM, sel, path, "cannot allocate the selection");
    }
    for (uint64_t i = 0; i < nn; i++) {
        int ok = 1;
        for (size_t k = 0; k < nk && ok; k++)
            ok = match(&conds[k], bl_connectome_value(c, (size_t)conds[k].column, i));
        if (ok)
            neurons[count++] = (int32_t)i;
    }
    if (count == 0) {
        free(neurons);
        free_conditions(conds, nk);
        return bl_pk_fail(ctx, BL_ERR_INVALID, sel, path,
                          "empty selection: no neuron matches this metadata query");
    }

    cJSON *json = cJSON_CreateObject();
    cJSON *query = json ? cJSON_AddObjectToObject(json, "select") : NULL;
    for (size_t k = 0; query && k < nk; k++) {
        cJSON *item = condition_json(&conds[k]);
        if (!item || !cJSON_AddItemToObject(query, conds[k].name, item)) {
            cJSON_Delete(item);
            query = NULL;
        }
    }
    free_conditions(conds, nk);
    pop->selector = query ? print_selector(json) : (cJSON_Delete(json), NULL);
    if (!pop->selector) {
        free(neurons);
        return bl_pk_fail(ctx, BL_ERR_NOMEM, sel, path, "cannot render the selector");
    }
    pop->neurons = neurons;
    pop->view.n_neurons = count;
    return BL_OK;
}

bl_status bl_pk_select_basic(const bl_pk_ctx *ctx, const bl_connectome *c, int kind,
                             const bl_toml_node *v, const char *path, bl_pk_population *pop)
{
    if (kind == 0)
        return by_index(ctx, c, v, path, pop);
    if (kind == 1)
        return by_id(ctx, c, v, path, pop);
    return by_query(ctx, c, v, path, pop);
}

/* population = "NAME": the neurons of a [[population]] table. */
static bl_status by_name(const bl_pk_ctx *ctx, const bl_plan *plan, const bl_toml_node *v,
                         const char *path, bl_pk_population *pop)
{
    const bl_pk_population *named;
    bl_status st = bl_pk_find_named(ctx, plan, v, path, plan->n_named, &named);
    if (st)
        return st;
    size_t n = named->view.n_neurons;
    pop->neurons = malloc(n * sizeof *pop->neurons);
    cJSON *sel = cJSON_CreateObject();
    if (!pop->neurons || !sel || !cJSON_AddStringToObject(sel, "population", named->name)) {
        cJSON_Delete(sel);
        return bl_pk_fail(ctx, BL_ERR_NOMEM, v, path, "cannot copy population \"%s\"", named->name);
    }
    memcpy(pop->neurons, named->neurons, n * sizeof *pop->neurons);
    pop->view.n_neurons = n;
    pop->selector = print_selector(sel);
    return pop->selector ? BL_OK : bl_pk_fail(ctx, BL_ERR_NOMEM, v, path, "cannot render the selector");
}

bl_status bl_pk_resolve_selector(const bl_pk_ctx *ctx, const bl_plan *plan,
                                 const bl_toml_node *node, const char *where,
                                 bl_pk_population *pop)
{
    static const char *const kinds[] = {"neurons", "ids", "select", "population"};
    const bl_toml_node *given = NULL;
    int kind = -1;
    for (int k = 0; k < 4; k++) {
        const bl_toml_node *v = bl_toml_table_get(node, kinds[k]);
        if (!v)
            continue;
        if (given) {
            char path[BL_PK_PATH_MAX];
            bl_pk_join(path, sizeof path, where, kinds[k], strlen(kinds[k]));
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, path,
                              "a population takes exactly one selector, and '%s' is given too "
                              "(choose neurons, ids, select or population)", kinds[kind]);
        }
        given = v;
        kind = k;
    }
    if (!given)
        return bl_pk_fail(ctx, BL_ERR_INVALID, node, where,
                          "no selector: give exactly one of neurons = [...], ids = [...], "
                          "select = { column = value } or population = \"NAME\"");
    char path[BL_PK_PATH_MAX];
    bl_pk_join(path, sizeof path, where, kinds[kind], strlen(kinds[kind]));
    if (kind == 3)
        return by_name(ctx, plan, given, path, pop);
    return bl_pk_select_basic(ctx, plan->connectome, kind, given, path, pop);
}
