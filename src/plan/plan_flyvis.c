/* `operation = "flyvis"`: the flyvis optic-lobe rate model, a moving edge,
 * and the gradient of a response objective (docs/solvers.md, "The flyvis
 * application").
 *
 *   [flyvis]
 *   connectome = "../data/drosophila-optic-lobe-flyvis/fib25-fib19_v2.2.json"  # relative to the plan
 *   extent = 15             # hexagonal radius in columns, 0..30 (721 columns: 45,669 cells)
 *   n_syn_fill = 1.0        # synapses at the offsets inside each hull (0: none)
 *   dt = 0.005              # Euler step, s
 *   steps = 100
 *   edge_speed = 50.0       # columns / s; the edge starts at edge_start (default -extent)
 *   edge_on = 1.0           # photoreceptor input behind the edge, edge_off ahead of it
 *   edge_off = 0.0
 *   objective = "T4a"       # J = mean over steps 1..K and the type's cells of V^2
 *   gradients = true        # dJ/dtau, dJ/dbias per cell type, dJ/dstrength per edge type
 *   keep = "central"        # responses of each type's central cell; "all": every cell
 *   tau = [...]             # 65 values; default flyvis's initial 0.05 s
 *   bias = [...]            # 65; default 0.5
 *   strength = [...]        # one per edge type (605); default 0.01 / mean n_syn
 *
 * The JSON's bytes are read once, hashed as read and kept: the run builds
 * from exactly the bytes the plan names. The resolved plan writes every
 * parameter, so the hash changes with each. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/flyvis.h"
#include "brainlesslab/hash.h"
#include "core/file.h"
#include "plan/plan_cjson.h"
#include "plan/plan_flyvis.h"
#include "plan/plan_solvers.h"
#include "plan/toml_bridge.h"

#define MAX_JSON_BYTES ((size_t)64 << 20)

static bl_pk_flyvis *spec_of(const bl_plan *plan)
{
    return bl_pk_spec(plan);
}

void bl_pk_op_free_flyvis(bl_plan *plan)
{
    bl_pk_flyvis *s = spec_of(plan);
    if (!s)
        return;
    free(s->path);
    free(s->json);
    free(s->tau);
    free(s->bias);
    free(s->strength);
    free(s);
}

/* A parameter list: the plan's (exactly n values) or the defaults in *out. */
static bl_status params(const bl_pk_ctx *ctx, const bl_toml_node *sec, const char *key, size_t n, double *out,
                        int positive)
{
    double *v = NULL;
    size_t m = 0;
    char path[64];
    snprintf(path, sizeof path, "flyvis.%s", key);
    bl_status st = bl_pk_numbers(ctx, sec, "flyvis", key, 0, 1 << 20, &v, &m);
    if (st || !v)
        return st;
    if (m != n)
        st = bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(sec, key), path,
                        "needs %zu values (one per %s), not %zu", n, n == 65 ? "cell type" : "edge type", m);
    for (size_t i = 0; !st && positive && i < m; i++)
        if (!(v[i] > 0))
            st = bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(sec, key), path,
                            "element %zu is %g; time constants must be > 0", i, v[i]);
    if (!st)
        memcpy(out, v, n * sizeof *out);
    free(v);
    return st;
}

bl_status bl_pk_op_load_flyvis(const bl_operation *op, const bl_pk_ctx *ctx, const bl_toml_node *root,
                               const char *plan_dir, bl_plan *plan)
{
    (void)op;
    static const char *const top[] = {"format", "format_version", "id", "operation", "description", "flyvis", NULL};
    static const char *const keys[] = {"connectome", "extent", "n_syn_fill", "dt", "steps", "edge_speed",
                                       "edge_start", "edge_on", "edge_off", "objective", "gradients", "keep",
                                       "tau", "bias", "strength", NULL};
    bl_pk_flyvis *s = calloc(1, sizeof *s);
    if (!s)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "%s: out of memory for [flyvis]", ctx->file);
    plan->spec = s;
    const bl_toml_node *sec = NULL;
    const char *given = NULL, *objective = "T4a", *keep = "central";
    int has_start = 0;
    s->extent = 15;
    s->n_syn_fill = 1;
    s->dt = 0.005;
    s->steps = 100;
    s->edge_speed = 50;
    s->edge_on = 1;
    s->edge_off = 0;
    s->gradients = 1;
    bl_status st;
    if ((st = bl_pk_check_keys(ctx, root, "", top)) || (st = bl_pk_table(ctx, root, "", "flyvis", 1, &sec)) ||
        (st = bl_pk_check_keys(ctx, sec, "flyvis", keys)) ||
        (st = bl_pk_string(ctx, sec, "flyvis", "connectome", 1, &given, NULL)) ||
        (st = bl_pk_int(ctx, sec, "flyvis", "extent", 0, 0, 30, &s->extent, NULL)) ||
        (st = bl_pk_double(ctx, sec, "flyvis", "n_syn_fill", 0, &s->n_syn_fill, NULL)) ||
        (st = bl_pk_double(ctx, sec, "flyvis", "dt", 0, &s->dt, NULL)) ||
        (st = bl_pk_int(ctx, sec, "flyvis", "steps", 0, 1, 1 << 20, &s->steps, NULL)) ||
        (st = bl_pk_double(ctx, sec, "flyvis", "edge_speed", 0, &s->edge_speed, NULL)) ||
        (st = bl_pk_double(ctx, sec, "flyvis", "edge_start", 0, &s->edge_start, &has_start)) ||
        (st = bl_pk_double(ctx, sec, "flyvis", "edge_on", 0, &s->edge_on, NULL)) ||
        (st = bl_pk_double(ctx, sec, "flyvis", "edge_off", 0, &s->edge_off, NULL)) ||
        (st = bl_pk_string(ctx, sec, "flyvis", "objective", 0, &objective, NULL)) ||
        (st = bl_pk_bool(ctx, sec, "flyvis", "gradients", 0, &s->gradients, NULL)) ||
        (st = bl_pk_string(ctx, sec, "flyvis", "keep", 0, &keep, NULL)))
        return st;
    if (!has_start)
        s->edge_start = -(double)s->extent;
    if (!(s->n_syn_fill >= 0))
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(sec, "n_syn_fill"), "flyvis.n_syn_fill", "must be >= 0");
    if (!(s->dt > 0))
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(sec, "dt"), "flyvis.dt", "must be > 0");
    if (strcmp(keep, "central") && strcmp(keep, "all"))
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(sec, "keep"), "flyvis.keep",
                          "must be \"central\" (each type's central cell) or \"all\" (every cell), not \"%s\"", keep);
    s->keep_all = !strcmp(keep, "all");
    /* The connectome: relative to the plan, read once and hashed as read. */
    const bl_toml_node *cnode = bl_toml_table_get(sec, "connectome");
    if (!*given)
        return bl_pk_fail(ctx, BL_ERR_INVALID, cnode, "flyvis.connectome", "empty path");
    const size_t need = strlen(plan_dir) + strlen(given) + 2;
    char *joined = malloc(need);
    if (!joined)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate a path");
    snprintf(joined, need, "%s%s%s", given[0] == '/' ? "" : plan_dir, given[0] == '/' ? "" : "/", given);
    bl_error e = {0};
    st = bl_read_small(joined, MAX_JSON_BYTES, &s->json, &s->json_len, &e);
    s->path = joined;
    if (st)
        return bl_pk_fail(ctx, st, cnode, "flyvis.connectome", "%s", e.message);
    bl_sha256_buffer(s->json, s->json_len, s->sha256);
    if ((st = bl_pk_add_input(plan, "flyvis connectome", s->path, s->sha256, s->json_len, ctx->err)))
        return st;
    bl_flyvis *f = NULL;
    if (bl_flyvis_create_from_json(s->json, s->json_len, s->path, (int)s->extent, s->n_syn_fill, &f, &e))
        return bl_pk_fail(ctx, e.status, cnode, "flyvis.connectome", "%s", e.message);
    s->n_types = bl_flyvis_n_types(f);
    s->n_etypes = bl_flyvis_n_edge_types(f);
    s->n_cells = bl_flyvis_n_cells(f);
    s->n_edges = bl_flyvis_n_edges(f);
    s->objective_type = bl_flyvis_type_index(f, objective);
    snprintf(s->objective, sizeof s->objective, "%s", objective);
    if (s->objective_type < 0)
        st = bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(sec, "objective"), "flyvis.objective",
                        "\"%s\" is not a cell type of the connectome (e.g. T4a, T5a, Mi1, Tm3, L1)", s->objective);
    if (!st && (!(s->tau = malloc(s->n_types * sizeof *s->tau)) || !(s->bias = malloc(s->n_types * sizeof *s->bias)) ||
                !(s->strength = malloc(s->n_etypes * sizeof *s->strength))))
        st = bl_fail(ctx->err, BL_ERR_NOMEM, "%s: out of memory", ctx->file);
    if (!st) {
        bl_flyvis_default_params(f, s->tau, s->bias, s->strength);
        st = params(ctx, sec, "tau", s->n_types, s->tau, 1);
    }
    if (!st)
        st = params(ctx, sec, "bias", s->n_types, s->bias, 0);
    if (!st)
        st = params(ctx, sec, "strength", s->n_etypes, s->strength, 0);
    for (size_t t = 0; !st && t < s->n_types; t++)
        if (!(s->tau[t] >= s->dt))
            st = bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(sec, "tau"), "flyvis.tau",
                            "%s: tau = %g is below dt = %g (flyvis clamps it to dt; this model refuses it, so that "
                            "its gradient stays the derivative of one smooth map)", bl_flyvis_type_name(f, t),
                            s->tau[t], s->dt);
    /* The adjoint keeps the trajectory and each step's input sum: 16 bytes
     * per cell and step; 2^28 states (4 GiB of them) at most. */
    if (!st && (double)(s->steps + 1) * (double)s->n_cells > (double)((size_t)1 << 28))
        st = bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(sec, "steps"), "flyvis.steps",
                        "%" PRId64 " steps x %zu cells is more than 2^28 stored states (4 GiB with the adjoint's); "
                        "shorten the run or the extent", s->steps, s->n_cells);
    bl_flyvis_destroy(f);
    return st;
}

static void numbers(bl_cj *b, cJSON *o, const char *key, const double *v, size_t n)
{
    cJSON *a = bl_cj_arr(b, o, key);
    for (size_t i = 0; i < n; i++)
        bl_cj_append_num(b, a, v[i]);
}

char *bl_pk_op_render_flyvis(const bl_plan *plan, int pretty, int full)
{
    (void)full;
    const bl_pk_flyvis *s = spec_of(plan);
    bl_cj b = {1};
    cJSON *root = bl_cj_check(&b, cJSON_CreateObject());
    bl_cj_str(&b, root, "format", BL_PLAN_FORMAT);
    bl_cj_int(&b, root, "format_version", BL_PLAN_FORMAT_VERSION);
    bl_cj_str(&b, root, "id", bl_plan_id(plan));
    bl_cj_str(&b, root, "operation", bl_plan_operation(plan));
    cJSON *o = bl_cj_obj(&b, root, "flyvis");
    if (pretty) /* where it was read: not part of what the plan means */
        bl_cj_str(&b, o, "connectome", s->path);
    bl_cj_str(&b, o, "connectome_sha256", s->sha256);
    bl_cj_int(&b, o, "extent", s->extent);
    bl_cj_num(&b, o, "n_syn_fill", s->n_syn_fill);
    bl_cj_uint(&b, o, "cells", s->n_cells);
    bl_cj_uint(&b, o, "edges", s->n_edges);
    bl_cj_str(&b, o, "method", "euler");
    bl_cj_num(&b, o, "dt", s->dt);
    bl_cj_int(&b, o, "steps", s->steps);
    bl_cj_num(&b, o, "edge_speed", s->edge_speed);
    bl_cj_num(&b, o, "edge_start", s->edge_start);
    bl_cj_num(&b, o, "edge_on", s->edge_on);
    bl_cj_num(&b, o, "edge_off", s->edge_off);
    bl_cj_str(&b, o, "objective", s->objective);
    bl_cj_bool(&b, o, "gradients", s->gradients);
    bl_cj_str(&b, o, "keep", s->keep_all ? "all" : "central");
    numbers(&b, o, "tau", s->tau, s->n_types);
    numbers(&b, o, "bias", s->bias, s->n_types);
    numbers(&b, o, "strength", s->strength, s->n_etypes);
    return bl_cj_finish(&b, root, pretty);
}

void bl_pk_op_estimate_flyvis(const bl_plan *plan, bl_plan_estimate_t *e)
{
    const bl_pk_flyvis *s = spec_of(plan);
    const double states = (double)(s->steps + 1) * (double)s->n_cells;
    e->memory_bytes = 16.0 * states + 60.0 * (double)s->n_edges + 64.0 * (double)s->n_cells + (double)s->json_len * 4;
    e->disk_bytes = 8.0 * (s->keep_all ? states : (double)(s->steps + 1) * (double)s->n_types) + 65536.0;
    e->seconds_one_core = 1.5e-9 * (double)s->n_edges * (double)s->steps * (s->gradients ? 3.0 : 1.0);
}
