/* The resolved plan of the connectome family (connectome, audit, screen) as
 * JSON. The canonical form (compact, every key in a fixed order, numbers in
 * their shortest round-trip text, integers exact even past 2^53) is what the
 * content hash covers, so nothing in it may depend on the order of the plan
 * file, the locale or the cJSON version: it is built with the one canonical
 * builder of plans (plan_cjson.h), which writes numbers as raw text. */
#include "plan/plan_impl.h"
#include "plan/plan_cjson.h"
#include "plan/plan_op.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Populations show this many indices when the rendering is abridged. */
#define ABRIDGED_NEURONS 8
#define ABRIDGED_SELECTOR 160

static void add_neurons(bl_cj *b, cJSON *o, const char *key, const int32_t *neurons, size_t n)
{
    cJSON *arr = bl_cj_arr(b, o, key);
    for (size_t i = 0; arr && b->ok && i < n; i++)
        bl_cj_append_i32(b, arr, neurons[i]);
}

static void add_population(bl_cj *b, cJSON *arr, const bl_pk_population *p, int stimulus, int full,
                           int named)
{
    cJSON *o = bl_cj_append(b, arr, NULL, cJSON_CreateObject());
    if (!o)
        return;
    bl_cj_str(b, o, "name", p->name);
    /* The selector is already compact JSON; embed it as written. */
    size_t len = strlen(p->selector);
    if (full || len <= ABRIDGED_SELECTOR) {
        bl_cj_raw(b, o, "selector", p->selector);
    } else {
        /* Cut on a character boundary: ids may be UTF-8. */
        int keep = ABRIDGED_SELECTOR;
        while (keep > 0 && ((unsigned char)p->selector[keep] & 0xC0) == 0x80)
            keep--;
        char cut[ABRIDGED_SELECTOR + 64];
        snprintf(cut, sizeof cut, "%.*s... (%zu bytes)", keep, p->selector, len);
        bl_cj_str(b, o, "selector", cut);
    }
    if (stimulus && p->view.current) { /* only when given: other plans keep their hash */
        static const char *const kinds[] = {"dc", "step", "ramp", "table", "noise"};
        const bl_current *c = p->view.current;
        cJSON *cur = bl_cj_obj(b, o, "current");
        if (cur) {
            bl_cj_str(b, cur, "kind", kinds[c->kind]);
            bl_cj_str(b, cur, "variable", c->variable);
            bl_cj_int(b, cur, "start_step", c->start_step);
            bl_cj_int(b, cur, "stop_step", c->stop_step);
            if (c->kind == BL_CURRENT_DC || c->kind == BL_CURRENT_NOISE)
                bl_cj_num(b, cur, c->kind == BL_CURRENT_DC ? "amplitude" : "mean", c->amplitude);
            if (c->kind == BL_CURRENT_NOISE)
                bl_cj_num(b, cur, "sigma", c->sigma);
            if (c->kind == BL_CURRENT_RAMP) {
                bl_cj_num(b, cur, "start_amplitude", c->from);
                bl_cj_num(b, cur, "stop_amplitude", c->to);
            }
            if (c->kind == BL_CURRENT_TABLE)
                bl_cj_int(b, cur, "every_steps", c->every_steps);
            if (c->kind == BL_CURRENT_TABLE && p->current_sha256[0]) {
                bl_cj_uint(b, cur, "n_values", c->n_values);
                bl_cj_str(b, cur, "values_sha256", p->current_sha256);
            } else if (c->kind == BL_CURRENT_STEP || c->kind == BL_CURRENT_TABLE) {
                cJSON *vals = bl_cj_arr(b, cur, "values");
                for (size_t k = 0; vals && k < c->n_values; k++)
                    bl_cj_append_num(b, vals, c->values[k]);
            }
            if (c->kind == BL_CURRENT_STEP) {
                cJSON *steps = bl_cj_arr(b, cur, "steps");
                for (size_t k = 0; steps && k < c->n_values; k++)
                    bl_cj_append_num(b, steps, (double)c->steps[k]);
            }
        }
    } else if (stimulus && p->view.n_schedule) {
        bl_cj_uint(b, o, "schedule_events", p->view.n_schedule);
        bl_cj_str(b, o, "schedule_sha256", p->schedule_sha256);
    } else if (stimulus && p->view.n_segments) {
        cJSON *rows = bl_cj_arr(b, o, "rates");
        for (size_t k = 0; rows && k < p->view.n_segments; k++) {
            cJSON *row = bl_cj_append(b, rows, NULL, cJSON_CreateArray());
            if (!row)
                break;
            for (int j = 0; j < 3; j++)
                bl_cj_append_num(b, row, p->view.segments[3 * k + j]);
        }
    } else if (stimulus) {
        bl_cj_num(b, o, "rate_hz", p->view.rate_hz);
        bl_cj_num(b, o, "start_ms", p->view.start_ms);
        bl_cj_num(b, o, "stop_ms", p->view.stop_ms);
    }
    if (stimulus && p->view.force) /* only when forced: input plans keep their hash */
        bl_cj_str(b, o, "mode", "force");
    if (named && p->expect_count >= 0)
        bl_cj_int(b, o, "expect_count", p->expect_count);
    bl_cj_uint(b, o, "count", p->view.n_neurons);
    if (full || p->view.n_neurons <= ABRIDGED_NEURONS)
        add_neurons(b, o, "neurons", p->neurons, p->view.n_neurons);
    else
        add_neurons(b, o, "first_neurons", p->neurons, ABRIDGED_NEURONS);
}

static void add_screen(bl_cj *b, cJSON *root, const bl_plan *plan, const bl_pk_screen *sc)
{
    static const char *const kinds[] = {"silence", "stimulate", "rate", "parameter"};
    cJSON *axes = bl_cj_arr(b, bl_cj_obj(b, root, "screen"), "axis");
    for (size_t i = 0; axes && b->ok && i < sc->n_axes; i++) {
        const bl_plan_axis *ax = &sc->axes[i];
        cJSON *o = bl_cj_append(b, axes, NULL, cJSON_CreateObject());
        if (!o)
            return;
        bl_cj_str(b, o, "kind", kinds[ax->kind]);
        bl_cj_str(b, o, "name", ax->name);
        cJSON *levels = bl_cj_arr(b, o, "levels");
        for (size_t k = 0; levels && k < ax->n_levels; k++) {
            if (ax->kind <= BL_AXIS_STIMULATE)
                bl_cj_append_str(b, levels, ax->populations[k] ? ax->populations[k]->name : "");
            else
                bl_cj_append_num(b, levels, ax->values[k]);
        }
        if (ax->kind == BL_AXIS_STIMULATE) {
            bl_cj_num(b, o, "rate_hz", ax->rate_hz);
            bl_cj_num(b, o, "start_ms", ax->start_ms);
            bl_cj_num(b, o, "stop_ms", ax->stop_ms);
        }
        if (ax->kind == BL_AXIS_RATE)
            bl_cj_str(b, o, "stimulus", plan->stimuli[ax->stimulus].name);
    }
}

static void add_audit(bl_cj *b, cJSON *root, const bl_plan *plan, const bl_plan_audit *audit, int full)
{
    cJSON *named = bl_cj_arr(b, root, "population");
    for (size_t i = 0; named && b->ok && i < plan->n_named; i++)
        add_population(b, named, &plan->named[i], 0, full, 1);
    cJSON *a = bl_cj_obj(b, root, "audit");
    if (!a)
        return;
    cJSON *pops = bl_cj_arr(b, a, "populations");
    for (size_t i = 0; pops && i < audit->n_populations; i++)
        bl_cj_append_str(b, pops, audit->populations[i]->name);
    bl_cj_str(b, a, "source", audit->source ? audit->source->name : "");
    bl_cj_str(b, a, "split_higher", audit->split ? audit->split->name : "");
    cJSON *cols = bl_cj_arr(b, a, "columns");
    for (size_t i = 0; cols && i < audit->n_columns; i++)
        bl_cj_append_str(b, cols, audit->columns[i]);
    bl_cj_str(b, a, "type_column", audit->type_column);
    if (plan->has_seed)
        bl_cj_uint(b, a, "seed", plan->seed);
}

/* The canonical (hashed) form leaves the connectome's location out: the
 * manifest's SHA-256 names its content, so the same plan and data hash the
 * same in any clone or machine; the record lists the absolute paths as inputs. */
static cJSON *build(const bl_plan *plan, int full, int with_location)
{
    bl_cj b = {1};
    cJSON *root = bl_cj_check(&b, cJSON_CreateObject());
    if (!root)
        return NULL;
    bl_cj_str(&b, root, "format", BL_PLAN_FORMAT);
    bl_cj_int(&b, root, "format_version", BL_PLAN_FORMAT_VERSION);
    bl_cj_str(&b, root, "id", plan->id);
    bl_cj_str(&b, root, "operation", plan->operation);
    bl_cj_str(&b, root, "description", plan->description);

    cJSON *c = bl_cj_obj(&b, root, "connectome");
    if (c) {
        if (with_location)
            bl_cj_str(&b, c, "path", plan->connectome_path);
        bl_cj_str(&b, c, "manifest_sha256", plan->manifest_sha256);
        bl_cj_uint(&b, c, "n_neurons", bl_connectome_n_neurons(plan->connectome));
        bl_cj_uint(&b, c, "n_edges", bl_connectome_n_edges(plan->connectome));
    }

    if (plan->op->flags & BL_OP_SPEC_AUDIT) { /* operation "audit": populations and the audit table only */
        add_audit(&b, root, plan, &((const bl_pk_audit *)plan->spec)->view, full);
        if (!b.ok) {
            cJSON_Delete(root);
            return NULL;
        }
        return root;
    }

    cJSON *m = bl_cj_obj(&b, root, "model");
    if (m) {
        bl_cj_str(&b, m, "preset", plan->preset);
        if (plan->eq_json) /* a written model: its text is part of the plan */
            bl_cj_raw(&b, m, "equations", plan->eq_json);
        cJSON *p = bl_cj_obj(&b, m, "parameters");
        for (const char *const *n = bl_lif_param_names(); p && *n; n++)
            bl_cj_num(&b, p, *n, bl_lif_params_get(&plan->params, *n));
    }

    /* Only present when given, so that plans without named populations keep
     * the hash they had before [[population]] existed. */
    if (plan->n_named) {
        cJSON *named = bl_cj_arr(&b, root, "population");
        for (size_t i = 0; named && b.ok && i < plan->n_named; i++)
            add_population(&b, named, &plan->named[i], 0, full, 1);
    }
    cJSON *stim = bl_cj_arr(&b, root, "stimulus");
    for (size_t i = 0; stim && b.ok && i < plan->n_stimuli; i++)
        add_population(&b, stim, &plan->stimuli[i], 1, full, 0);
    cJSON *sil = bl_cj_arr(&b, root, "silence");
    for (size_t i = 0; sil && b.ok && i < plan->n_silences; i++)
        add_population(&b, sil, &plan->silences[i], 0, full, 0);

    cJSON *run = bl_cj_obj(&b, root, "run");
    if (run) {
        bl_cj_uint(&b, run, "trials", plan->trials);
        bl_cj_num(&b, run, "duration_ms", plan->duration_ms);
        bl_cj_uint(&b, run, "steps", plan->steps);
        bl_cj_uint(&b, run, "seed", plan->seed);
        bl_cj_str(&b, run, "backend", plan->backend);
        bl_cj_int(&b, run, "threads", plan->threads);
    }

    if (plan->op->flags & BL_OP_SPEC_SCREEN)
        add_screen(&b, root, plan, plan->spec);

    cJSON *out = bl_cj_obj(&b, root, "outputs");
    if (out) {
        bl_cj_bool(&b, out, "spikes", plan->out_spikes);
        bl_cj_bool(&b, out, "counts", plan->out_counts);
        bl_cj_bool(&b, out, "state", plan->out_state);
        bl_cj_bool(&b, out, "propagation", plan->out_propagation);
        bl_cj_int(&b, out, "top_responders", plan->top_responders);
        /* Only when given: plans without them keep their hash. */
        if (plan->probe_pop) {
            cJSON *pr = bl_cj_obj(&b, out, "probes");
            if (pr) {
                bl_cj_str(&b, pr, "population", plan->probe_pop->name);
                bl_cj_num(&b, pr, "every_ms", plan->probe_every_ms);
            }
        }
        if (plan->spikes_subset)
            bl_cj_str(&b, out, "spikes_subset", plan->spikes_subset->name);
        if (plan->n_psth_pops) {
            cJSON *ps = bl_cj_obj(&b, out, "psth");
            cJSON *names = ps ? bl_cj_arr(&b, ps, "populations") : NULL;
            for (size_t i = 0; names && i < plan->n_psth_pops; i++)
                bl_cj_append_str(&b, names, plan->psth_pops[i]->name);
            if (ps)
                bl_cj_num(&b, ps, "bin_ms", plan->psth_bin_ms);
        }
    }
    if (!b.ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

/* The connectome family's renderer (connectome, audit, screen: plan_op.h). */
char *bl_pk_op_render_network(const bl_plan *plan, int pretty, int full)
{
    cJSON *root = build(plan, full || !pretty, pretty);
    if (!root)
        return NULL;
    bl_cj b = {1};
    return bl_cj_finish(&b, root, pretty);
}
