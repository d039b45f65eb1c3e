/* Named populations: [[population]] tables that stimuli, silences, observers,
 * screens and the audit refer to by name.
 *
 *     [[population]]
 *     name = "T4"
 *     select = { cell_type = "T4*", side = { not = "left" } }   metadata query
 *     neurons = [...] | ids = [...]                             explicit lists
 *     from = "ORN"  depth = 2 | { min = 1, max = 3 }            shortest directed
 *                                                               path from a population
 *     union = ["A", "B"]   intersect = ["A", "B"]               named populations
 *     exclude = ["C"]                                           minus these
 *     sample = 500                                              seeded subsample
 *     expect_count = 42                                         fail unless this size
 *
 * Every criterion given is ANDed (intersected); `exclude` is subtracted, then
 * `sample` draws. A population may name only populations defined above it, so
 * there are no cycles and the order of resolution is the order of the file.
 *
 * Subsample stream ownership: the draw for neuron i of the population at
 * ordinal k (0-based among [[population]] tables) is word 0 of Philox4x32-10
 * with the plan seed as key and counter (0, i, k, 0xFFFFFFFF). Trials never
 * reach 0xFFFFFFFF (BL_PLAN_MAX_TRIALS), so plan-time draws can never coincide
 * with a stimulus draw. The `sample` neurons with the smallest words (ties by
 * index) are kept: the same subset on every machine, whatever the order in
 * which the candidates were found. */
#include "plan/plan_impl.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/analysis.h"
#include "core/stream.h"


static const char *const population_keys[] = {"name", "neurons", "ids", "select", "from", "depth",
                                              "union", "intersect", "exclude", "sample",
                                              "expect_count", NULL};

bl_status bl_pk_find_named(const bl_pk_ctx *ctx, const bl_plan *plan, const bl_toml_node *v,
                           const char *path, size_t visible, const bl_pk_population **out)
{
    const char *name;
    size_t len;
    if (!bl_toml_get_string(v, &name, &len)) {
        char got[160];
        bl_pk_describe(v, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "expected a population name (string), got %s", got);
    }
    for (size_t i = 0; i < plan->n_named; i++)
        if (strlen(plan->named[i].name) == len && !memcmp(plan->named[i].name, name, len)) {
            if (i >= visible)
                return bl_pk_fail(ctx, BL_ERR_INVALID, v, path,
                                  "population \"%s\" is defined below this one (a population may only "
                                  "refer to populations above it)", plan->named[i].name);
            *out = &plan->named[i];
            return BL_OK;
        }
    char shown[160], list[512] = "";
    size_t o = 0;
    for (size_t i = 0; i < plan->n_named && o < sizeof list; i++)
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", plan->named[i].name);
    bl_pk_printable(shown, sizeof shown, name, len);
    return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "no [[population]] is named \"%s\" (%s%s)", shown,
                      plan->n_named ? "defined: " : "the plan defines none", list);
}

bl_status bl_pk_read_named(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_plan *plan)
{
    const bl_toml_node *arr = bl_toml_table_get(root, "population");
    if (!arr)
        return BL_OK;
    if (bl_toml_type_of(arr) != BL_TOML_ARRAY) {
        char got[160];
        bl_pk_describe(arr, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, arr, "population",
                          "expected an array of tables ([[population]]), got %s", got);
    }
    size_t n = bl_toml_array_size(arr);
    if (n > BL_PLAN_MAX_POPULATIONS)
        return bl_pk_fail(ctx, BL_ERR_INVALID, arr, "population", "%zu populations is more than the limit %d",
                          n, BL_PLAN_MAX_POPULATIONS);
    if (n == 0)
        return BL_OK;
    plan->named = calloc(n, sizeof *plan->named);
    if (!plan->named)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate %zu populations", n);
    plan->n_named = n;
    for (size_t i = 0; i < n; i++) {
        const bl_toml_node *node = bl_toml_array_at(arr, i);
        char where[BL_PK_PATH_MAX], path[BL_PK_PATH_MAX];
        bl_pk_index(where, sizeof where, "population", i);
        if (bl_toml_type_of(node) != BL_TOML_TABLE) {
            char got[160];
            bl_pk_describe(node, got, sizeof got);
            return bl_pk_fail(ctx, BL_ERR_INVALID, node, where, "expected a table, got %s", got);
        }
        const char *name;
        int64_t expect = -1;
        bl_status st = bl_pk_check_keys(ctx, node, where, population_keys);
        if (st || (st = bl_pk_string(ctx, node, where, "name", 1, &name, NULL)) ||
            (st = bl_pk_int(ctx, node, where, "expect_count", 0, 0, INT32_MAX, &expect, NULL)))
            return st;
        bl_pk_join(path, sizeof path, where, "name", 4);
        if (!bl_pk_valid_name(name, strlen(name))) {
            char shown[160];
            bl_pk_printable(shown, sizeof shown, name, strlen(name));
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "name"), path,
                              "\"%s\" is not a valid name (1..%d characters of A-Z a-z 0-9 . _ -)", shown,
                              BL_PLAN_MAX_NAME);
        }
        for (size_t j = 0; j < i; j++)
            if (!strcmp(plan->named[j].name, name))
                return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "name"), path,
                                  "population name \"%s\" is already used by population[%zu]", name, j);
        if (!(plan->named[i].name = bl_pk_strdup(name)))
            return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot copy a population name");
        plan->named[i].expect_count = expect;
    }
    return BL_OK;
}

/* ---- sorted neuron sets ---- */

typedef struct nset {
    int32_t *v;
    size_t n;
    int all; /* no criterion applied yet: every neuron */
} nset;

/* a := a AND b (b sorted, unique). */
static void intersect_with(nset *a, const int32_t *b, size_t nb)
{
    size_t i = 0, j = 0, o = 0;
    while (i < a->n && j < nb) {
        if (a->v[i] < b[j])
            i++;
        else if (a->v[i] > b[j])
            j++;
        else {
            a->v[o++] = a->v[i];
            i++;
            j++;
        }
    }
    a->n = o;
}

static void subtract(nset *a, const int32_t *b, size_t nb)
{
    size_t i = 0, j = 0, o = 0;
    while (i < a->n) {
        while (j < nb && b[j] < a->v[i])
            j++;
        if (j < nb && b[j] == a->v[i])
            i++;
        else
            a->v[o++] = a->v[i++];
    }
    a->n = o;
}

/* AND a criterion's neurons into the set. */
static bl_status apply(const bl_pk_ctx *ctx, nset *s, uint64_t nn, const int32_t *b, size_t nb)
{
    if (s->all) {
        s->v = malloc((nn ? nn : 1) * sizeof *s->v);
        if (!s->v)
            return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate a selection of %" PRIu64 " neurons", nn);
        memcpy(s->v, b, nb * sizeof *b);
        s->n = nb;
        s->all = 0;
        return BL_OK;
    }
    intersect_with(s, b, nb);
    return BL_OK;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A list of population names (`key` = union | intersect | exclude): checks
 * each, returns them sorted for the normalised selector. */
static bl_status name_list(const bl_pk_ctx *ctx, const bl_plan *plan, size_t self, const bl_toml_node *v,
                           const char *path, const bl_pk_population ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (bl_toml_type_of(v) != BL_TOML_ARRAY || bl_toml_array_size(v) == 0) {
        char got[160];
        bl_pk_describe(v, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "expected a non-empty array of population names, got %s",
                          got);
    }
    size_t k = bl_toml_array_size(v);
    const bl_pk_population **pops = calloc(k, sizeof *pops);
    if (!pops)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate a list of populations");
    for (size_t i = 0; i < k; i++) {
        char epath[BL_PK_PATH_MAX];
        bl_pk_index(epath, sizeof epath, path, i);
        bl_status st = bl_pk_find_named(ctx, plan, bl_toml_array_at(v, i), epath, self, &pops[i]);
        for (size_t j = 0; !st && j < i; j++)
            if (pops[j] == pops[i])
                st = bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_array_at(v, i), epath,
                                "population \"%s\" is listed twice", pops[i]->name);
        if (st) {
            free(pops);
            return st;
        }
    }
    *out = pops;
    *n = k;
    return BL_OK;
}

static cJSON *names_json(const bl_pk_population **pops, size_t n)
{
    const char **names = malloc((n ? n : 1) * sizeof *names);
    cJSON *arr = names ? cJSON_CreateArray() : NULL;
    for (size_t i = 0; arr && i < n; i++)
        names[i] = pops[i]->name;
    if (arr)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; arr && i < n; i++)
        if (!cJSON_AddItemToArray(arr, cJSON_CreateString(names[i]))) {
            cJSON_Delete(arr);
            arr = NULL;
        }
    free(names);
    return arr;
}

/* depth = d or { min = a, max = b } (b optional: no upper bound). */
static bl_status read_depth(const bl_pk_ctx *ctx, const bl_toml_node *v, const char *path, int64_t *lo,
                            int64_t *hi)
{
    *lo = 0;
    *hi = INT32_MAX;
    if (!v)
        return BL_OK;
    int64_t d;
    if (bl_toml_get_int(v, &d)) {
        if (d < 0 || d > INT32_MAX)
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "depth %" PRId64 " is out of range 0..%d", d,
                              INT32_MAX);
        *lo = *hi = d;
        return BL_OK;
    }
    if (bl_toml_type_of(v) != BL_TOML_TABLE) {
        char got[160];
        bl_pk_describe(v, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path,
                          "expected a depth (integer) or { min = a, max = b }, got %s", got);
    }
    static const char *const keys[] = {"min", "max", NULL};
    bl_status st = bl_pk_check_keys(ctx, v, path, keys);
    if (st || (st = bl_pk_int(ctx, v, path, "min", 0, 0, INT32_MAX, lo, NULL)) ||
        (st = bl_pk_int(ctx, v, path, "max", 0, 0, INT32_MAX, hi, NULL)))
        return st;
    if (*lo > *hi)
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "min %" PRId64 " is above max %" PRId64, *lo, *hi);
    return BL_OK;
}

typedef struct sample_key {
    uint32_t word;
    int32_t neuron;
} sample_key;

static int cmp_sample(const void *a, const void *b)
{
    const sample_key *x = a, *y = b;
    if (x->word != y->word)
        return x->word < y->word ? -1 : 1;
    return (x->neuron > y->neuron) - (x->neuron < y->neuron);
}

static bl_status draw_sample(const bl_pk_ctx *ctx, const bl_plan *plan, size_t ordinal, nset *s, size_t k)
{
    sample_key *keys = malloc((s->n ? s->n : 1) * sizeof *keys);
    if (!keys)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate a sample of %zu neurons", s->n);
    for (size_t i = 0; i < s->n; i++)
        keys[i] = (sample_key){bl_stream_sample_word(plan->seed, (uint32_t)ordinal, (uint32_t)s->v[i]), s->v[i]};
    qsort(keys, s->n, sizeof *keys, cmp_sample);
    for (size_t i = 0; i < k; i++)
        s->v[i] = keys[i].neuron;
    free(keys);
    s->n = k;
    qsort(s->v, k, sizeof *s->v, cmp_i32);
    return BL_OK;
}

/* Add a basic selector's JSON (its one member) into the combined selector. */
static int merge_basic(cJSON *into, const char *basic)
{
    cJSON *b = cJSON_Parse(basic);
    cJSON *item = b ? b->child : NULL;
    if (!item) {
        cJSON_Delete(b);
        return 0;
    }
    cJSON_DetachItemViaPointer(b, item);
    int ok = cJSON_AddItemToObject(into, item->string, item);
    if (!ok)
        cJSON_Delete(item);
    cJSON_Delete(b);
    return ok;
}

static bl_status resolve_one(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where, bl_plan *plan,
                             size_t self)
{
    bl_pk_population *pop = &plan->named[self];
    const bl_connectome *c = plan->connectome;
    uint64_t nn = bl_connectome_n_neurons(c);
    nset s = {NULL, 0, 1};
    cJSON *json = cJSON_CreateObject();
    bl_status st = json ? BL_OK : bl_fail(ctx->err, BL_ERR_NOMEM, "cannot render a selector");
    char path[BL_PK_PATH_MAX];
    int criteria = 0;

    /* Basic selectors: neurons, ids, select. */
    static const char *const basic[] = {"neurons", "ids", "select"};
    for (int k = 0; !st && k < 3; k++) {
        const bl_toml_node *v = bl_toml_table_get(node, basic[k]);
        if (!v)
            continue;
        bl_pk_population tmp = {0};
        bl_pk_join(path, sizeof path, where, basic[k], strlen(basic[k]));
        st = bl_pk_select_basic(ctx, c, k, v, path, &tmp);
        if (!st)
            st = apply(ctx, &s, nn, tmp.neurons, tmp.view.n_neurons);
        if (!st && !merge_basic(json, tmp.selector))
            st = bl_fail(ctx->err, BL_ERR_NOMEM, "cannot render a selector");
        free(tmp.neurons);
        free(tmp.selector);
        criteria++;
    }

    /* Hierarchy depth from another population. */
    const bl_toml_node *from = bl_toml_table_get(node, "from"), *depth = bl_toml_table_get(node, "depth");
    if (!st && depth && !from) {
        bl_pk_join(path, sizeof path, where, "depth", 5);
        st = bl_pk_fail(ctx, BL_ERR_INVALID, depth, path, "depth needs from = \"POPULATION\" (depth from what?)");
    }
    if (!st && from) {
        const bl_pk_population *src = NULL;
        int64_t lo, hi;
        bl_pk_join(path, sizeof path, where, "from", 4);
        st = bl_pk_find_named(ctx, plan, from, path, self, &src);
        if (!st && bl_connectome_parts(c) > 1)
            st = bl_pk_fail(ctx, BL_ERR_UNSUPPORTED, from, path,
                            "a depth selector needs the whole graph, and this rank holds a part of it "
                            "(run this plan without mpirun, or select the neurons another way)");
        if (!st) {
            bl_pk_join(path, sizeof path, where, "depth", 5);
            st = read_depth(ctx, depth, path, &lo, &hi);
        }
        int32_t *d = st ? NULL : malloc((nn ? nn : 1) * sizeof *d);
        int32_t *hit = st ? NULL : malloc((nn ? nn : 1) * sizeof *hit);
        if (!st && (!d || !hit))
            st = bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate a depth search of %" PRIu64 " neurons", nn);
        if (!st)
            st = bl_shortest_depths(c, src->neurons, src->view.n_neurons, d, ctx->err);
        size_t nh = 0;
        for (uint64_t i = 0; !st && i < nn; i++)
            if (d[i] >= 0 && d[i] >= lo && d[i] <= hi)
                hit[nh++] = (int32_t)i;
        if (!st)
            st = apply(ctx, &s, nn, hit, nh);
        free(d);
        free(hit);
        if (!st) {
            cJSON *dj = cJSON_CreateObject();
            char text[24];
            snprintf(text, sizeof text, "%" PRId64, lo);
            if (!cJSON_AddStringToObject(json, "from", src->name) || !dj ||
                !cJSON_AddItemToObject(json, "depth", dj) || !cJSON_AddRawToObject(dj, "min", text))
                st = bl_fail(ctx->err, BL_ERR_NOMEM, "cannot render a selector");
            snprintf(text, sizeof text, "%" PRId64, hi);
            if (!st && hi < INT32_MAX && !cJSON_AddRawToObject(dj, "max", text))
                st = bl_fail(ctx->err, BL_ERR_NOMEM, "cannot render a selector");
        }
        criteria++;
    }

    /* Set algebra over named populations. */
    static const char *const algebra[] = {"union", "intersect", "exclude"};
    for (int k = 0; !st && k < 3; k++) {
        const bl_toml_node *v = bl_toml_table_get(node, algebra[k]);
        if (!v)
            continue;
        const bl_pk_population **pops = NULL;
        size_t np = 0;
        bl_pk_join(path, sizeof path, where, algebra[k], strlen(algebra[k]));
        st = name_list(ctx, plan, self, v, path, &pops, &np);
        if (!st && k == 0) { /* union: merge, then AND into the set */
            size_t total = 0;
            for (size_t i = 0; i < np; i++)
                total += pops[i]->view.n_neurons;
            int32_t *u = malloc((total ? total : 1) * sizeof *u);
            if (!u)
                st = bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate a union of %zu neurons", total);
            size_t o = 0;
            for (size_t i = 0; !st && i < np; i++) {
                memcpy(u + o, pops[i]->neurons, pops[i]->view.n_neurons * sizeof *u);
                o += pops[i]->view.n_neurons;
            }
            if (!st) {
                qsort(u, o, sizeof *u, cmp_i32);
                size_t w = 0;
                for (size_t i = 0; i < o; i++)
                    if (w == 0 || u[i] != u[w - 1])
                        u[w++] = u[i];
                st = apply(ctx, &s, nn, u, w);
            }
            free(u);
        } else if (!st && k == 1) {
            for (size_t i = 0; !st && i < np; i++)
                st = apply(ctx, &s, nn, pops[i]->neurons, pops[i]->view.n_neurons);
        }
        if (!st && k < 2)
            criteria++;
        if (!st && k == 2 && !criteria)
            st = bl_pk_fail(ctx, BL_ERR_INVALID, v, path,
                            "exclude needs something to exclude from (a selector, from, union or intersect)");
        if (!st && k == 2)
            for (size_t i = 0; i < np; i++)
                subtract(&s, pops[i]->neurons, pops[i]->view.n_neurons);
        cJSON *names = st ? NULL : names_json(pops, np);
        if (!st && (!names || !cJSON_AddItemToObject(json, algebra[k], names))) {
            cJSON_Delete(names);
            st = bl_fail(ctx->err, BL_ERR_NOMEM, "cannot render a selector");
        }
        free(pops);
    }
    if (!st && !criteria)
        st = bl_pk_fail(ctx, BL_ERR_INVALID, node, where,
                        "no selector: give neurons, ids, select, from (+ depth), union or intersect");
    if (!st && s.n == 0)
        st = bl_pk_fail(ctx, BL_ERR_INVALID, node, where, "empty selection: population \"%s\" has no neurons",
                        pop->name);

    /* Subsample. */
    const bl_toml_node *sample = bl_toml_table_get(node, "sample");
    if (!st && sample) {
        int64_t k;
        bl_pk_join(path, sizeof path, where, "sample", 6);
        st = bl_pk_int(ctx, node, where, "sample", 0, 1, INT32_MAX, &k, NULL);
        if (!st && (uint64_t)k > s.n)
            st = bl_pk_fail(ctx, BL_ERR_INVALID, sample, path,
                            "sample %" PRId64 " is more than the %zu neurons selected", k, s.n);
        if (!st && !plan->has_seed)
            st = bl_pk_fail(ctx, BL_ERR_INVALID, sample, path,
                            "a sample is drawn from the plan seed, and the plan gives none ([run] seed)");
        if (!st)
            st = draw_sample(ctx, plan, self, &s, (size_t)k);
        char text[24];
        snprintf(text, sizeof text, "%" PRId64, k);
        if (!st && !cJSON_AddRawToObject(json, "sample", text))
            st = bl_fail(ctx->err, BL_ERR_NOMEM, "cannot render a selector");
    }
    if (!st && pop->expect_count >= 0 && (uint64_t)pop->expect_count != s.n) {
        bl_pk_join(path, sizeof path, where, "expect_count", 12);
        st = bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "expect_count"), path,
                        "population \"%s\" has %zu neurons, not the %" PRId64 " expected", pop->name, s.n,
                        pop->expect_count);
    }
    if (!st && !(pop->selector = cJSON_PrintUnformatted(json)))
        st = bl_fail(ctx->err, BL_ERR_NOMEM, "cannot render a selector");
    cJSON_Delete(json);
    if (st) {
        free(s.v);
        return st;
    }
    pop->neurons = s.v;
    pop->view.n_neurons = s.n;
    pop->view.name = pop->name;
    pop->view.selector = pop->selector;
    pop->view.neurons = pop->neurons;
    return BL_OK;
}

bl_status bl_pk_resolve_named(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_plan *plan)
{
    const bl_toml_node *arr = bl_toml_table_get(root, "population");
    for (size_t i = 0; i < plan->n_named; i++) {
        char where[BL_PK_PATH_MAX];
        bl_pk_index(where, sizeof where, "population", i);
        bl_status st = resolve_one(ctx, bl_toml_array_at(arr, i), where, plan, i);
        if (st)
            return st;
    }
    return BL_OK;
}
