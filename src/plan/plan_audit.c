/* The "audit" operation: describe a connectome's populations and its
 * hierarchy from a source population, without simulating anything.
 *
 *     [connectome] path = "dir"
 *     [[population]] ...                 (plan_population.c)
 *     [audit]
 *     populations = ["A", "B"]           broken down by every metadata column
 *                                        (default: every [[population]])
 *     source = "sensory"                 hierarchy source: depth 0 (optional)
 *     split_higher = "optic"             depth >= 3 inside it is "higher",
 *                                        outside "central" (optional)
 *     columns = ["cell_type", ...]       breakdown columns (default: all)
 *     type_column = "cell_type"          per-layer sizes by this column
 *     seed = 1                           for populations with `sample` */
#include "plan/plan_impl.h"
#include "plan/plan_op.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *const top_keys[] = {"format", "format_version", "id", "operation", "description",
                                       "connectome", "population", "audit", NULL};
static const char *const audit_keys[] = {"populations", "source", "split_higher", "columns", "type_column",
                                         "seed", NULL};

static bl_status column_name(const bl_pk_ctx *ctx, const bl_connectome *c, const bl_toml_node *v,
                             const char *path, const char **out)
{
    size_t len;
    if (!bl_toml_get_string(v, out, &len) || strlen(*out) != len) {
        char got[160];
        bl_pk_describe(v, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "expected a metadata column name, got %s", got);
    }
    if (bl_connectome_column(c, *out) < 0) {
        char shown[160];
        bl_pk_printable(shown, sizeof shown, *out, len);
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "the connectome has no metadata column \"%s\"", shown);
    }
    return BL_OK;
}

bl_status bl_pk_load_audit_plan(const bl_pk_ctx *ctx, const bl_toml_node *root, const char *plan_dir,
                                bl_plan *plan)
{
    const bl_toml_node *audit = NULL;
    int64_t seed = 0;
    bl_status st = bl_pk_check_keys(ctx, root, "", top_keys);
    if (st || (st = bl_pk_table(ctx, root, "", "audit", 0, &audit)) ||
        (audit && (st = bl_pk_check_keys(ctx, audit, "audit", audit_keys))) ||
        (audit && (st = bl_pk_int(ctx, audit, "audit", "seed", 0, 0, INT64_MAX, &seed, &plan->has_seed))))
        return st;
    plan->seed = (uint64_t)seed;
    /* Checked before the (possibly long) load: the shapes of the keys. */
    static const char *const lists[] = {"populations", "columns"};
    for (int k = 0; k < 2; k++) {
        const bl_toml_node *v = bl_toml_table_get(audit, lists[k]);
        char path[BL_PK_PATH_MAX];
        bl_pk_join(path, sizeof path, "audit", lists[k], strlen(lists[k]));
        if (v && (bl_toml_type_of(v) != BL_TOML_ARRAY || bl_toml_array_size(v) == 0)) {
            char got[160];
            bl_pk_describe(v, got, sizeof got);
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "expected a non-empty array of names, got %s", got);
        }
    }
    if ((st = bl_pk_read_named(ctx, root, plan)) || (st = bl_pk_load_connectome_dir(ctx, root, plan_dir, plan)) ||
        (st = bl_pk_resolve_named(ctx, root, plan)))
        return st;
    bl_pk_audit *spec = calloc(1, sizeof *spec);
    if (!spec)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate the audit");
    plan->spec = spec; /* the plan owns it from here (bl_pk_op_free_audit) */

    /* Populations to break down. */
    const bl_toml_node *pops = bl_toml_table_get(audit, "populations");
    size_t np = pops ? bl_toml_array_size(pops) : plan->n_named;
    spec->pops = calloc(np ? np : 1, sizeof *spec->pops);
    if (!spec->pops)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate the audit's populations");
    for (size_t i = 0; i < np; i++) {
        if (!pops) {
            spec->pops[i] = &plan->named[i].view;
            continue;
        }
        const bl_pk_population *p;
        char path[BL_PK_PATH_MAX];
        bl_pk_index(path, sizeof path, "audit.populations", i);
        if ((st = bl_pk_find_named(ctx, plan, bl_toml_array_at(pops, i), path, plan->n_named, &p)))
            return st;
        spec->pops[i] = &p->view;
    }
    spec->view.populations = spec->pops;
    spec->view.n_populations = np;

    /* Hierarchy. */
    static const char *const refs[] = {"source", "split_higher"};
    for (int k = 0; k < 2; k++) {
        const bl_toml_node *v = bl_toml_table_get(audit, refs[k]);
        if (!v)
            continue;
        const bl_pk_population *p;
        char path[BL_PK_PATH_MAX];
        bl_pk_join(path, sizeof path, "audit", refs[k], strlen(refs[k]));
        if ((st = bl_pk_find_named(ctx, plan, v, path, plan->n_named, &p)))
            return st;
        if (k == 0)
            spec->view.source = &p->view;
        else
            spec->view.split = &p->view;
    }
    if (spec->view.split && !spec->view.source)
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(audit, "split_higher"), "audit.split_higher",
                          "split_higher divides the hierarchy, and there is none without audit.source");
    if (spec->view.source && bl_connectome_parts(plan->connectome) > 1)
        return bl_fail(ctx->err, BL_ERR_UNSUPPORTED, "%s: an audit needs the whole graph (run it without mpirun)",
                       ctx->file);

    /* Columns. */
    const bl_connectome *c = plan->connectome;
    const bl_toml_node *cols = bl_toml_table_get(audit, "columns");
    size_t nc = cols ? bl_toml_array_size(cols) : bl_connectome_n_columns(c);
    spec->columns = calloc(nc ? nc : 1, sizeof *spec->columns);
    if (!spec->columns)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate the audit's columns");
    spec->view.n_columns = nc;
    for (size_t i = 0; i < nc; i++) {
        const char *name = cols ? NULL : bl_connectome_column_name(c, i);
        if (cols) {
            char path[BL_PK_PATH_MAX];
            bl_pk_index(path, sizeof path, "audit.columns", i);
            if ((st = column_name(ctx, c, bl_toml_array_at(cols, i), path, &name)))
                return st;
            for (size_t j = 0; j < i; j++)
                if (!strcmp(spec->columns[j], name))
                    return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_array_at(cols, i), path,
                                      "column \"%s\" is listed twice", name);
        }
        if (!(spec->columns[i] = bl_pk_strdup(name)))
            return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot copy a column name");
    }
    spec->view.columns = (const char *const *)spec->columns;
    const char *type_column = bl_connectome_column(c, "cell_type") >= 0 ? "cell_type" : "";
    const bl_toml_node *tc = bl_toml_table_get(audit, "type_column");
    if (tc && (st = column_name(ctx, c, tc, "audit.type_column", &type_column)))
        return st;
    /* Points into the connectome's own column name: it lives as long as the plan. */
    int col = type_column[0] ? bl_connectome_column(c, type_column) : -1;
    spec->view.type_column = col >= 0 ? bl_connectome_column_name(c, (size_t)col) : "";
    return BL_OK;
}

/* The row of operation "audit" (plan_op.h). */
void bl_pk_op_free_audit(bl_plan *plan)
{
    bl_pk_audit *spec = plan->spec;
    if (!spec)
        return;
    free(spec->pops);
    for (size_t i = 0; spec->columns && i < spec->view.n_columns; i++)
        free(spec->columns[i]);
    free(spec->columns);
    free(spec);
    plan->spec = NULL;
}

bl_status bl_pk_op_load_audit(const bl_operation *op, const bl_pk_ctx *ctx, const bl_toml_node *root,
                              const char *plan_dir, bl_plan *plan)
{
    (void)op;
    return bl_pk_load_audit_plan(ctx, root, plan_dir, plan);
}
