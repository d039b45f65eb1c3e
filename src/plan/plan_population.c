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
 * Which neurons each means is the library's (bl_select, select.h; the
 * translation from TOML is plan_select.c). A population's sample draws from
 * stream = its ordinal among the [[population]] tables (0-based) with the
 * plan seed as key, so the same plan draws the same subset everywhere. */
#include "plan/plan_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const char *const population_keys[] = {"name", "neurons", "ids", "select", "from", "depth",
                                              "union", "intersect", "exclude", "sample",
                                              "expect_count", NULL};

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

static bl_status resolve_one(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where, bl_plan *plan,
                             size_t self)
{
    bl_pk_population *pop = &plan->named[self];
    bl_status st = bl_pk_select(ctx, plan, node, where, self, pop->expect_count, pop);
    if (st)
        return st;
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
