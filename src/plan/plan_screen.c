/* The [screen] table of operation "screen": axes over conditions.
 *
 *     [[screen.axis]]
 *     silence = ["PN", "LN"]          one level per [[population]] silenced
 *     include_none = true             and a first level with nothing more
 *     [[screen.axis]]
 *     stimulate = ["A", "B"]          one level per population stimulated
 *     rate_hz = 150  start_ms = 0  stop_ms = end
 *     [[screen.axis]]
 *     rate = [50, 100, 150]           levels of the rate of one [[stimulus]]
 *     stimulus = "ORN"
 *     [[screen.axis]]
 *     parameter = "w_syn_mv"          levels of one model parameter
 *     values = [0.2, 0.275]
 *
 * Conditions are the cartesian product of the axes, the first axis varying
 * slowest (bl_plan_axis in plan.h). Every level is checked here, so that a
 * screen never fails in its 17th condition over a value the plan could have
 * refused. */
#include "plan/plan_impl.h"
#include "plan/plan_op.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CONDITIONS 100000

static const char *const screen_keys[] = {"axis", NULL};
static const char *const axis_keys[] = {"silence", "stimulate", "rate", "parameter", "include_none", "rate_hz",
                                        "start_ms", "stop_ms", "stimulus", "values", NULL};

void bl_pk_op_free_screen(bl_plan *plan)
{
    bl_pk_screen *sc = plan->spec;
    if (!sc)
        return;
    for (size_t i = 0; sc->axes && i < sc->n_axes; i++) {
        free(sc->axes[i].populations);
        free(sc->axes[i].values);
        free((char *)sc->axes[i].name);
    }
    free(sc->axes);
    free(sc);
    plan->spec = NULL;
}

static bl_status number_list(const bl_pk_ctx *ctx, const bl_toml_node *v, const char *path, double **out,
                             size_t *n)
{
    if (bl_toml_type_of(v) != BL_TOML_ARRAY || bl_toml_array_size(v) == 0) {
        char got[160];
        bl_pk_describe(v, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "expected a non-empty array of numbers, got %s", got);
    }
    *n = bl_toml_array_size(v);
    *out = malloc(*n * sizeof **out);
    if (!*out)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate %zu levels", *n);
    for (size_t i = 0; i < *n; i++) {
        const bl_toml_node *e = bl_toml_array_at(v, i);
        char epath[BL_PK_PATH_MAX];
        bl_pk_index(epath, sizeof epath, path, i);
        if (bl_toml_type_of(e) == BL_TOML_BOOLEAN || !bl_toml_get_double(e, &(*out)[i]) || !isfinite((*out)[i])) {
            char got[160];
            bl_pk_describe(e, got, sizeof got);
            return bl_pk_fail(ctx, BL_ERR_INVALID, e, epath, "expected a finite number, got %s", got);
        }
    }
    return BL_OK;
}

static bl_status check_rate(const bl_pk_ctx *ctx, const bl_plan *plan, const bl_toml_node *v, const char *path,
                            double rate)
{
    double max_rate = 1000.0 / plan->params.dt_ms;
    if (rate >= 0 && rate <= max_rate)
        return BL_OK;
    char a[64], b[64];
    bl_pk_number(a, sizeof a, rate);
    bl_pk_number(b, sizeof b, max_rate);
    return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "%s Hz is out of range 0..%s (at most one event per step)", a,
                      b);
}

static bl_status read_axis(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where, bl_plan *plan,
                           bl_plan_axis *ax)
{
    static const char *const kinds[] = {"silence", "stimulate", "rate", "parameter"};
    bl_status st = bl_pk_check_keys(ctx, node, where, axis_keys);
    if (st)
        return st;
    int kind = -1;
    for (int k = 0; k < 4; k++)
        if (bl_toml_table_get(node, kinds[k])) {
            if (kind >= 0) {
                char path[BL_PK_PATH_MAX];
                bl_pk_join(path, sizeof path, where, kinds[k], strlen(kinds[k]));
                return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, kinds[k]), path,
                                  "an axis varies one thing, and '%s' is given too", kinds[kind]);
            }
            kind = k;
        }
    if (kind < 0)
        return bl_pk_fail(ctx, BL_ERR_INVALID, node, where,
                          "an axis needs one of silence = [...], stimulate = [...], rate = [...] or "
                          "parameter = \"name\"");
    /* Keys that belong to another kind of axis are mistakes. */
    static const char *const only[][4] = {{"include_none", NULL}, {"include_none", "rate_hz", "start_ms", "stop_ms"},
                                          {"stimulus", NULL}, {"values", NULL}};
    for (size_t i = 0; i < bl_toml_table_size(node); i++) {
        size_t len;
        const char *key = bl_toml_table_key(node, i, &len);
        int allowed = len == strlen(kinds[kind]) && !memcmp(key, kinds[kind], len);
        for (int j = 0; j < 4 && only[kind][j] && !allowed; j++)
            allowed = len == strlen(only[kind][j]) && !memcmp(key, only[kind][j], len);
        if (!allowed) {
            char path[BL_PK_PATH_MAX];
            bl_pk_join(path, sizeof path, where, key, len);
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_value(node, i), path,
                              "not a key of a '%s' axis", kinds[kind]);
        }
    }
    ax->kind = (bl_axis_kind)kind;
    char path[BL_PK_PATH_MAX];
    bl_pk_join(path, sizeof path, where, kinds[kind], strlen(kinds[kind]));
    const bl_toml_node *v = bl_toml_table_get(node, kinds[kind]);

    if (kind <= 1) { /* silence, stimulate: populations */
        int none = 0;
        if ((st = bl_pk_bool(ctx, node, where, "include_none", 0, &none, NULL)))
            return st;
        if (bl_toml_type_of(v) != BL_TOML_ARRAY || bl_toml_array_size(v) == 0) {
            char got[160];
            bl_pk_describe(v, got, sizeof got);
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "expected a non-empty array of population names, got %s",
                              got);
        }
        size_t k = bl_toml_array_size(v);
        ax->n_levels = k + (size_t)none;
        ax->populations = calloc(ax->n_levels, sizeof *ax->populations);
        if (!ax->populations)
            return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate an axis");
        for (size_t i = 0; i < k; i++) {
            char epath[BL_PK_PATH_MAX];
            const bl_pk_population *p;
            bl_pk_index(epath, sizeof epath, path, i);
            if ((st = bl_pk_find_named(ctx, plan, bl_toml_array_at(v, i), epath, plan->n_named, &p)))
                return st;
            ax->populations[i + (size_t)none] = &p->view;
        }
        ax->name = bl_pk_strdup(kinds[kind]);
        if (kind == 1) {
            ax->start_ms = 0;
            ax->stop_ms = plan->duration_ms;
            if ((st = bl_pk_double(ctx, node, where, "rate_hz", 1, &ax->rate_hz, NULL)) ||
                (st = bl_pk_double(ctx, node, where, "start_ms", 0, &ax->start_ms, NULL)) ||
                (st = bl_pk_double(ctx, node, where, "stop_ms", 0, &ax->stop_ms, NULL)))
                return st;
            bl_pk_join(path, sizeof path, where, "rate_hz", 7);
            if ((st = check_rate(ctx, plan, bl_toml_table_get(node, "rate_hz"), path, ax->rate_hz)))
                return st;
            if (!(ax->start_ms >= 0 && ax->start_ms < plan->duration_ms && ax->stop_ms > ax->start_ms &&
                  ax->stop_ms <= plan->duration_ms))
                return bl_pk_fail(ctx, BL_ERR_INVALID, node, where,
                                  "the window [start_ms, stop_ms) must lie inside the trial [0, %g) ms",
                                  plan->duration_ms);
        }
    } else if (kind == 2) { /* rate of one stimulus */
        const char *name;
        if ((st = number_list(ctx, v, path, &ax->values, &ax->n_levels)) ||
            (st = bl_pk_string(ctx, node, where, "stimulus", 1, &name, NULL)))
            return st;
        size_t s = 0;
        while (s < plan->n_stimuli && strcmp(plan->stimuli[s].name, name))
            s++;
        if (s == plan->n_stimuli) {
            char spath[BL_PK_PATH_MAX], shown[160];
            bl_pk_join(spath, sizeof spath, where, "stimulus", 8);
            bl_pk_printable(shown, sizeof shown, name, strlen(name));
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "stimulus"), spath,
                              "no [[stimulus]] is named \"%s\"", shown);
        }
        ax->stimulus = s;
        if (plan->stimuli[s].view.n_schedule) {
            char spath[BL_PK_PATH_MAX];
            bl_pk_join(spath, sizeof spath, where, "stimulus", 8);
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "stimulus"), spath,
                              "stimulus \"%s\" follows a schedule: it has no rate to vary", name);
        }
        for (size_t i = 0; i < ax->n_levels; i++) {
            char epath[BL_PK_PATH_MAX];
            bl_pk_index(epath, sizeof epath, path, i);
            if ((st = check_rate(ctx, plan, bl_toml_array_at(v, i), epath, ax->values[i])))
                return st;
        }
        size_t len = strlen(name) + 6;
        char *label = malloc(len);
        if (label)
            snprintf(label, len, "rate:%s", name);
        ax->name = label;
    } else { /* a model parameter */
        const char *name;
        const bl_toml_node *values = bl_toml_table_get(node, "values");
        if ((st = bl_pk_string(ctx, node, where, "parameter", 1, &name, NULL)))
            return st;
        if (!values)
            return bl_pk_fail(ctx, BL_ERR_INVALID, node, where, "a parameter axis needs values = [...]");
        char vpath[BL_PK_PATH_MAX];
        bl_pk_join(vpath, sizeof vpath, where, "values", 6);
        if ((st = number_list(ctx, values, vpath, &ax->values, &ax->n_levels)))
            return st;
        if (isnan(bl_lif_params_get(&plan->params, name)))
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "unknown model parameter");
        /* A model from equations has its own parameters, which a screen
         * cannot vary yet: a LIF field would silently change nothing. */
        if (plan->eq)
            return bl_pk_fail(ctx, BL_ERR_UNSUPPORTED, v, path, "a screen cannot vary the parameters of a model "
                              "from equations yet (write one plan per value)");
        /* The step count and the trial windows are fixed by dt. */
        if (!strcmp(name, "dt_ms"))
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "dt_ms cannot vary within a screen (the steps of "
                              "a trial would change); write one screen per dt");
        for (size_t i = 0; i < ax->n_levels; i++) {
            bl_lif_params p = plan->params;
            bl_error e = {0};
            char epath[BL_PK_PATH_MAX];
            bl_pk_index(epath, sizeof epath, vpath, i);
            if (bl_lif_params_set(&p, name, ax->values[i], &e) || bl_lif_params_validate(&p, &e))
                return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_array_at(values, i), epath, "%s", e.message);
        }
        ax->name = bl_pk_strdup(name);
        ax->parameter = ax->name;
    }
    return ax->name ? BL_OK : bl_fail(ctx->err, BL_ERR_NOMEM, "cannot copy an axis name");
}

bl_status bl_pk_read_screen(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_plan *plan)
{
    const bl_toml_node *screen, *axes;
    bl_status st = bl_pk_table(ctx, root, "", "screen", 1, &screen);
    if (st || (st = bl_pk_check_keys(ctx, screen, "screen", screen_keys)))
        return st;
    axes = bl_toml_table_get(screen, "axis");
    if (!axes || bl_toml_type_of(axes) != BL_TOML_ARRAY || bl_toml_array_size(axes) == 0)
        return bl_pk_fail(ctx, BL_ERR_INVALID, axes ? axes : screen, "screen.axis",
                          "a screen needs at least one [[screen.axis]] table");
    size_t n = bl_toml_array_size(axes);
    bl_pk_screen *sc = calloc(1, sizeof *sc);
    if (!sc)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate the screen");
    plan->spec = sc; /* the plan owns it from here (bl_pk_op_free_screen) */
    sc->axes = calloc(n, sizeof *sc->axes);
    if (!sc->axes)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate %zu axes", n);
    sc->n_axes = n;
    uint64_t conditions = 1;
    for (size_t i = 0; i < n; i++) {
        char where[BL_PK_PATH_MAX];
        const bl_toml_node *node = bl_toml_array_at(axes, i);
        bl_pk_index(where, sizeof where, "screen.axis", i);
        if (bl_toml_type_of(node) != BL_TOML_TABLE)
            return bl_pk_fail(ctx, BL_ERR_INVALID, node, where, "expected a table");
        if ((st = read_axis(ctx, node, where, plan, &sc->axes[i])))
            return st;
        conditions *= sc->axes[i].n_levels;
        if (conditions > MAX_CONDITIONS)
            return bl_pk_fail(ctx, BL_ERR_INVALID, node, where, "the screen has more than %d conditions",
                              MAX_CONDITIONS);
    }
    return BL_OK;
}
