/* `operation = "ssa"`: a bank of stochastic simulation replicates.
 *
 *   [ssa]
 *   species = ["A", "B", "C"]
 *   x0 = [100, 80, 0]
 *   method = "direct"          # or "tau-leap" (approximate; then tau = 0.01)
 *   replicates = 64
 *   seed = 7                   # the bank's stream (docs/streams.md, SSA replicates)
 *   t_end = 10.0               # with outputs = 21, or t = [...]
 *   outputs = 21
 *   max_events = 100000000     # per replicate
 *   [[ssa.reaction]]
 *   rate = 0.01                # mass action: rate * prod C(x_s, order_s)
 *   reactants = { A = 1, B = 1 }
 *   products = { C = 1 }
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/solvers.h"
#include "plan/plan_cjson.h"
#include "plan/plan_solvers.h"
#include "plan/toml_bridge.h"

#define MAX_SPECIES 1024
#define MAX_REACTIONS 4096

static bl_pk_ssa *spec_of(const bl_plan *plan)
{
    return bl_pk_spec(plan);
}

void bl_pk_op_free_ssa(bl_plan *plan)
{
    bl_pk_ssa *s = spec_of(plan);
    if (!s)
        return;
    free(s->species);
    free(s->x0);
    free(s->change);
    free(s->order);
    free(s->rate);
    free(s->t);
    free(s);
}

/* reactants / products = { NAME = count }: add sign * count to row. */
static bl_status stoich(const bl_pk_ctx *ctx, const bl_pk_ssa *s, const bl_toml_node *r, const char *where,
                        const char *key, int64_t *row, int64_t max)
{
    char path[300];
    bl_pk_join(path, sizeof path, where, key, strlen(key));
    const bl_toml_node *t = bl_toml_table_get(r, key);
    if (!t)
        return BL_OK;
    if (bl_toml_type_of(t) != BL_TOML_TABLE)
        return bl_pk_fail(ctx, BL_ERR_INVALID, t, path, "must be a table { SPECIES = count }");
    for (size_t i = 0; i < bl_toml_table_size(t); i++) {
        size_t len;
        const char *name = bl_toml_table_key(t, i, &len);
        size_t sp = s->n_species;
        for (size_t q = 0; q < s->n_species; q++)
            if (strlen(s->species[q]) == len && !memcmp(s->species[q], name, len))
                sp = q;
        char at[400];
        bl_pk_join(at, sizeof at, path, name, len);
        if (sp == s->n_species)
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_value(t, i), at, "is not a species of ssa.species");
        int64_t c;
        if (!bl_toml_get_int(bl_toml_table_value(t, i), &c) || c < 0 || c > max)
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_value(t, i), at, "must be an integer in 0..%lld",
                              (long long)max);
        row[sp] += c;
    }
    return BL_OK;
}

bl_status bl_pk_op_load_ssa(const bl_operation *op, const bl_pk_ctx *ctx, const bl_toml_node *root,
                            const char *plan_dir, bl_plan *plan)
{
    (void)op;
    (void)plan_dir;
    static const char *const top[] = {"format", "format_version", "id", "operation", "description", "ssa", NULL};
    static const char *const keys[] = {"species", "x0", "method", "tau", "replicates", "seed", "t", "t_end",
                                       "outputs", "max_events", "reaction", NULL};
    static const char *const rkeys[] = {"rate", "reactants", "products", NULL};
    bl_pk_ssa *s = calloc(1, sizeof *s);
    if (!s)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "%s: out of memory for [ssa]", ctx->file);
    plan->spec = s;
    const bl_toml_node *ssa = NULL;
    const char *method = "direct";
    int64_t seed = 0;
    s->tau = 0.01;
    s->max_events = 100000000;
    bl_status st;
    if ((st = bl_pk_check_keys(ctx, root, "", top)) || (st = bl_pk_table(ctx, root, "", "ssa", 1, &ssa)) ||
        (st = bl_pk_check_keys(ctx, ssa, "ssa", keys)) ||
        (st = bl_pk_string(ctx, ssa, "ssa", "method", 0, &method, NULL)) ||
        (st = bl_pk_double(ctx, ssa, "ssa", "tau", 0, &s->tau, NULL)) ||
        (st = bl_pk_int(ctx, ssa, "ssa", "replicates", 1, 1, 1 << 20, &s->replicates, NULL)) ||
        (st = bl_pk_int(ctx, ssa, "ssa", "seed", 1, 0, INT64_MAX, &seed, NULL)) ||
        (st = bl_pk_int(ctx, ssa, "ssa", "max_events", 0, 1, INT64_MAX, &s->max_events, NULL)) ||
        (st = bl_pk_grid(ctx, ssa, "ssa", &s->t, &s->n_times)))
        return st;
    if (strcmp(method, "direct") && strcmp(method, "tau-leap"))
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(ssa, "method"), "ssa.method",
                          "\"%s\" is not a method (direct, tau-leap)", method);
    snprintf(s->method, sizeof s->method, "%s", method);
    if (!(s->tau > 0))
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(ssa, "tau"), "ssa.tau", "must be > 0");
    s->seed = (uint64_t)seed;
    /* species */
    const bl_toml_node *sp = bl_toml_table_get(ssa, "species");
    if (!sp || bl_toml_type_of(sp) != BL_TOML_ARRAY || bl_toml_array_size(sp) == 0 ||
        bl_toml_array_size(sp) > MAX_SPECIES)
        return bl_pk_fail(ctx, BL_ERR_INVALID, sp ? sp : ssa, "ssa.species", "must be a list of 1 to %d names",
                          MAX_SPECIES);
    s->n_species = bl_toml_array_size(sp);
    s->species = calloc(s->n_species, sizeof *s->species);
    s->x0 = calloc(s->n_species, sizeof *s->x0);
    if (!s->species || !s->x0)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "%s: out of memory", ctx->file);
    for (size_t i = 0; i < s->n_species; i++) {
        const char *name;
        size_t len;
        char at[64];
        bl_pk_index(at, sizeof at, "ssa.species", i);
        if (!bl_toml_get_string(bl_toml_array_at(sp, i), &name, &len) || !bl_pk_valid_name(name, len) ||
            len >= sizeof s->species[0])
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_array_at(sp, i), at, "must be a name ([A-Za-z0-9._-])");
        memcpy(s->species[i], name, len);
        for (size_t q = 0; q < i; q++)
            if (!strcmp(s->species[q], s->species[i]))
                return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_array_at(sp, i), at, "repeats species \"%s\"",
                                  s->species[i]);
    }
    const bl_toml_node *x0 = bl_toml_table_get(ssa, "x0");
    if (!x0 || bl_toml_type_of(x0) != BL_TOML_ARRAY || bl_toml_array_size(x0) != s->n_species)
        return bl_pk_fail(ctx, BL_ERR_INVALID, x0 ? x0 : ssa, "ssa.x0", "must list %zu initial counts (one per species)",
                          s->n_species);
    for (size_t i = 0; i < s->n_species; i++) {
        char at[64];
        bl_pk_index(at, sizeof at, "ssa.x0", i);
        if (!bl_toml_get_int(bl_toml_array_at(x0, i), &s->x0[i]) || s->x0[i] < 0 || s->x0[i] > (INT64_C(1) << 52))
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_array_at(x0, i), at, "must be an integer count in 0..2^52");
    }
    /* reactions */
    const bl_toml_node *rs = bl_toml_table_get(ssa, "reaction");
    if (!rs || bl_toml_type_of(rs) != BL_TOML_ARRAY || bl_toml_array_size(rs) == 0 ||
        bl_toml_array_size(rs) > MAX_REACTIONS)
        return bl_pk_fail(ctx, BL_ERR_INVALID, rs ? rs : ssa, "ssa.reaction", "needs 1 to %d [[ssa.reaction]] tables",
                          MAX_REACTIONS);
    s->n_reactions = bl_toml_array_size(rs);
    const size_t cells = s->n_reactions * s->n_species;
    s->change = calloc(cells, sizeof *s->change);
    s->order = calloc(cells, sizeof *s->order);
    s->rate = calloc(s->n_reactions, sizeof *s->rate);
    if (!s->change || !s->order || !s->rate)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "%s: out of memory", ctx->file);
    int64_t *prod = calloc(s->n_species, sizeof *prod);
    if (!prod)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "%s: out of memory", ctx->file);
    for (size_t j = 0; j < s->n_reactions && !st; j++) {
        const bl_toml_node *r = bl_toml_array_at(rs, j);
        char at[64];
        bl_pk_index(at, sizeof at, "ssa.reaction", j);
        if (bl_toml_type_of(r) != BL_TOML_TABLE) {
            st = bl_pk_fail(ctx, BL_ERR_INVALID, r, at, "must be a table");
            break;
        }
        int64_t *ord = s->order + j * s->n_species;
        memset(prod, 0, s->n_species * sizeof *prod);
        if ((st = bl_pk_check_keys(ctx, r, at, rkeys)) || (st = bl_pk_double(ctx, r, at, "rate", 1, &s->rate[j], NULL)) ||
            (st = stoich(ctx, s, r, at, "reactants", ord, 3)) || (st = stoich(ctx, s, r, at, "products", prod, 1000)))
            break;
        if (!(s->rate[j] >= 0)) {
            char k[80];
            bl_pk_join(k, sizeof k, at, "rate", 4);
            st = bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(r, "rate"), k, "must be >= 0 (a propensity is "
                            "never negative)");
            break;
        }
        for (size_t q = 0; q < s->n_species; q++) {
            if (ord[q] > 3) {
                st = bl_pk_fail(ctx, BL_ERR_INVALID, r, at, "reactant order %lld of %s exceeds 3", (long long)ord[q],
                                s->species[q]);
                break;
            }
            s->change[j * s->n_species + q] = prod[q] - ord[q];
        }
    }
    free(prod);
    if (!st && (uint64_t)s->replicates * s->n_times * s->n_species > ((uint64_t)1 << 31))
        st = bl_pk_fail(ctx, BL_ERR_INVALID, ssa, "ssa.replicates", "%lld replicates x %zu times x %zu species is too "
                        "many counts to keep", (long long)s->replicates, s->n_times, s->n_species);
    return st;
}

char *bl_pk_op_render_ssa(const bl_plan *plan, int pretty, int full)
{
    (void)full;
    const bl_pk_ssa *s = spec_of(plan);
    bl_cj b = {1};
    cJSON *root = bl_cj_check(&b, cJSON_CreateObject());
    bl_cj_str(&b, root, "format", BL_PLAN_FORMAT);
    bl_cj_int(&b, root, "format_version", BL_PLAN_FORMAT_VERSION);
    bl_cj_str(&b, root, "id", bl_plan_id(plan));
    bl_cj_str(&b, root, "operation", bl_plan_operation(plan));
    cJSON *o = bl_cj_obj(&b, root, "ssa");
    bl_cj_str(&b, o, "method", s->method);
    if (!strcmp(s->method, "tau-leap")) {
        bl_cj_num(&b, o, "tau", s->tau);
        bl_cj_bool(&b, o, "approximate", 1);
    }
    bl_cj_int(&b, o, "replicates", s->replicates);
    bl_cj_uint(&b, o, "seed", s->seed);
    bl_cj_int(&b, o, "max_events", s->max_events);
    cJSON *sp = bl_cj_arr(&b, o, "species");
    for (size_t i = 0; i < s->n_species; i++)
        bl_cj_append_str(&b, sp, s->species[i]);
    cJSON *x0 = bl_cj_arr(&b, o, "x0");
    for (size_t i = 0; i < s->n_species; i++)
        bl_cj_append_num(&b, x0, (double)s->x0[i]);
    cJSON *rs = bl_cj_arr(&b, o, "reactions");
    for (size_t j = 0; j < s->n_reactions; j++) {
        cJSON *r = bl_cj_append(&b, rs, NULL, cJSON_CreateObject());
        if (!r)
            break;
        bl_cj_num(&b, r, "rate", s->rate[j]);
        cJSON *ord = bl_cj_arr(&b, r, "order"), *ch = bl_cj_arr(&b, r, "change");
        for (size_t q = 0; q < s->n_species; q++) {
            bl_cj_append_num(&b, ord, (double)s->order[j * s->n_species + q]);
            bl_cj_append_num(&b, ch, (double)s->change[j * s->n_species + q]);
        }
    }
    cJSON *t = bl_cj_arr(&b, o, "t");
    for (size_t k = 0; k < s->n_times; k++)
        bl_cj_append_num(&b, t, s->t[k]);
    return bl_cj_finish(&b, root, pretty);
}

void bl_pk_op_estimate_ssa(const bl_plan *plan, bl_plan_estimate_t *e)
{
    const bl_pk_ssa *s = spec_of(plan);
    const double counts = (double)s->replicates * (double)s->n_times * (double)s->n_species;
    e->memory_bytes = 8.0 * counts + 8.0 * (double)s->replicates;
    e->disk_bytes = 8.0 * counts + 4096.0;
    e->seconds_one_core = 1e-7 * counts;
}
