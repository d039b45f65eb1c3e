/* The resolved plan as JSON. The canonical form (compact, every key in a
 * fixed order, numbers in their shortest round-trip text, integers exact
 * even past 2^53) is what the content hash covers, so nothing in it may
 * depend on the order of the plan file, the locale or the cJSON version:
 * numbers are written as raw text by this file, never by cJSON. */
#include "plan/plan_impl.h"
#include "brainlesslab/task.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Populations show this many indices when the rendering is abridged. */
#define ABRIDGED_NEURONS 8
#define ABRIDGED_SELECTOR 160

typedef struct builder {
    int ok; /* cleared by the first failed allocation */
} builder;

static cJSON *check(builder *b, cJSON *item)
{
    if (!item)
        b->ok = 0;
    return item;
}

static void add_int(builder *b, cJSON *o, const char *key, int64_t v)
{
    char text[24];
    snprintf(text, sizeof text, "%" PRId64, v);
    check(b, cJSON_AddRawToObject(o, key, text));
}

static void add_uint(builder *b, cJSON *o, const char *key, uint64_t v)
{
    char text[24];
    snprintf(text, sizeof text, "%" PRIu64, v);
    check(b, cJSON_AddRawToObject(o, key, text));
}

static void add_num(builder *b, cJSON *o, const char *key, double v)
{
    char text[40];
    bl_pk_number(text, sizeof text, v);
    check(b, cJSON_AddRawToObject(o, key, text));
}

static void add_str(builder *b, cJSON *o, const char *key, const char *v)
{
    check(b, cJSON_AddStringToObject(o, key, v));
}

static void add_bool(builder *b, cJSON *o, const char *key, int v)
{
    check(b, cJSON_AddBoolToObject(o, key, v));
}

static void add_neurons(builder *b, cJSON *o, const char *key, const int32_t *neurons, size_t n)
{
    cJSON *arr = check(b, cJSON_AddArrayToObject(o, key));
    for (size_t i = 0; arr && i < n; i++) {
        char text[16];
        snprintf(text, sizeof text, "%" PRId32, neurons[i]);
        cJSON *item = check(b, cJSON_CreateRaw(text));
        if (item && !cJSON_AddItemToArray(arr, item)) {
            cJSON_Delete(item);
            b->ok = 0;
        }
        if (!b->ok)
            return;
    }
}

static void add_population(builder *b, cJSON *arr, const bl_pk_population *p, int stimulus, int full,
                           int named)
{
    cJSON *o = check(b, cJSON_CreateObject());
    if (!o)
        return;
    if (!cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        b->ok = 0;
        return;
    }
    add_str(b, o, "name", p->name);
    /* The selector is already compact JSON; embed it as written. */
    size_t len = strlen(p->selector);
    if (full || len <= ABRIDGED_SELECTOR) {
        check(b, cJSON_AddRawToObject(o, "selector", p->selector));
    } else {
        /* Cut on a character boundary: ids may be UTF-8. */
        int keep = ABRIDGED_SELECTOR;
        while (keep > 0 && ((unsigned char)p->selector[keep] & 0xC0) == 0x80)
            keep--;
        char cut[ABRIDGED_SELECTOR + 64];
        snprintf(cut, sizeof cut, "%.*s... (%zu bytes)", keep, p->selector, len);
        add_str(b, o, "selector", cut);
    }
    if (stimulus && p->view.n_schedule) {
        add_uint(b, o, "schedule_events", p->view.n_schedule);
        add_str(b, o, "schedule_sha256", p->schedule_sha256);
    } else if (stimulus && p->view.n_segments) {
        cJSON *rows = check(b, cJSON_AddArrayToObject(o, "rates"));
        for (size_t k = 0; rows && k < p->view.n_segments; k++) {
            cJSON *row = check(b, cJSON_CreateArray());
            if (!row || !cJSON_AddItemToArray(rows, row)) {
                cJSON_Delete(row);
                b->ok = 0;
                break;
            }
            for (int j = 0; j < 3; j++) {
                char text[40];
                bl_pk_number(text, sizeof text, p->view.segments[3 * k + j]);
                cJSON *x = check(b, cJSON_CreateRaw(text));
                if (x && !cJSON_AddItemToArray(row, x)) {
                    cJSON_Delete(x);
                    b->ok = 0;
                }
            }
        }
    } else if (stimulus) {
        add_num(b, o, "rate_hz", p->view.rate_hz);
        add_num(b, o, "start_ms", p->view.start_ms);
        add_num(b, o, "stop_ms", p->view.stop_ms);
    }
    if (stimulus && p->view.force) /* only when forced: input plans keep their hash */
        add_str(b, o, "mode", "force");
    if (named && p->expect_count >= 0)
        add_int(b, o, "expect_count", p->expect_count);
    add_uint(b, o, "count", p->view.n_neurons);
    if (full || p->view.n_neurons <= ABRIDGED_NEURONS)
        add_neurons(b, o, "neurons", p->neurons, p->view.n_neurons);
    else
        add_neurons(b, o, "first_neurons", p->neurons, ABRIDGED_NEURONS);
}

static void add_screen(builder *b, cJSON *root, const bl_plan *plan)
{
    static const char *const kinds[] = {"silence", "stimulate", "rate", "parameter"};
    cJSON *axes = check(b, cJSON_AddArrayToObject(cJSON_AddObjectToObject(root, "screen"), "axis"));
    for (size_t i = 0; axes && b->ok && i < plan->n_axes; i++) {
        const bl_plan_axis *ax = &plan->axes[i];
        cJSON *o = check(b, cJSON_CreateObject());
        if (!o || !cJSON_AddItemToArray(axes, o)) {
            cJSON_Delete(o);
            b->ok = 0;
            return;
        }
        add_str(b, o, "kind", kinds[ax->kind]);
        add_str(b, o, "name", ax->name);
        cJSON *levels = check(b, cJSON_AddArrayToObject(o, "levels"));
        for (size_t k = 0; levels && k < ax->n_levels; k++) {
            cJSON *item;
            if (ax->kind <= BL_AXIS_STIMULATE) {
                item = check(b, cJSON_CreateString(ax->populations[k] ? ax->populations[k]->name : ""));
            } else {
                char text[40];
                bl_pk_number(text, sizeof text, ax->values[k]);
                item = check(b, cJSON_CreateRaw(text));
            }
            if (item && !cJSON_AddItemToArray(levels, item)) {
                cJSON_Delete(item);
                b->ok = 0;
            }
        }
        if (ax->kind == BL_AXIS_STIMULATE) {
            add_num(b, o, "rate_hz", ax->rate_hz);
            add_num(b, o, "start_ms", ax->start_ms);
            add_num(b, o, "stop_ms", ax->stop_ms);
        }
        if (ax->kind == BL_AXIS_RATE)
            add_str(b, o, "stimulus", plan->stimuli[ax->stimulus].name);
    }
}

static void add_audit(builder *b, cJSON *root, const bl_plan *plan, int full)
{
    cJSON *named = check(b, cJSON_AddArrayToObject(root, "population"));
    for (size_t i = 0; named && b->ok && i < plan->n_named; i++)
        add_population(b, named, &plan->named[i], 0, full, 1);
    cJSON *a = check(b, cJSON_AddObjectToObject(root, "audit"));
    if (!a)
        return;
    cJSON *pops = check(b, cJSON_AddArrayToObject(a, "populations"));
    for (size_t i = 0; pops && i < plan->audit.n_populations; i++) {
        cJSON *s = check(b, cJSON_CreateString(plan->audit.populations[i]->name));
        if (s && !cJSON_AddItemToArray(pops, s)) {
            cJSON_Delete(s);
            b->ok = 0;
        }
    }
    add_str(b, a, "source", plan->audit.source ? plan->audit.source->name : "");
    add_str(b, a, "split_higher", plan->audit.split ? plan->audit.split->name : "");
    cJSON *cols = check(b, cJSON_AddArrayToObject(a, "columns"));
    for (size_t i = 0; cols && i < plan->audit.n_columns; i++) {
        cJSON *s = check(b, cJSON_CreateString(plan->audit.columns[i]));
        if (s && !cJSON_AddItemToArray(cols, s)) {
            cJSON_Delete(s);
            b->ok = 0;
        }
    }
    add_str(b, a, "type_column", plan->audit.type_column);
    if (plan->has_seed)
        add_uint(b, a, "seed", plan->seed);
}

/* The canonical (hashed) form leaves the connectome's location out: the
 * manifest's SHA-256 names its content, so the same plan and data hash the
 * same in any clone or machine; the record lists the absolute paths as inputs. */
static cJSON *build(const bl_plan *plan, int full, int with_location)
{
    builder b = {1};
    cJSON *root = check(&b, cJSON_CreateObject());
    if (!root)
        return NULL;
    add_str(&b, root, "format", BL_PLAN_FORMAT);
    add_int(&b, root, "format_version", BL_PLAN_FORMAT_VERSION);
    add_str(&b, root, "id", plan->id);
    add_str(&b, root, "operation", plan->operation);
    add_str(&b, root, "description", plan->description);

    cJSON *c = check(&b, cJSON_AddObjectToObject(root, "connectome"));
    if (c) {
        if (with_location)
            add_str(&b, c, "path", plan->connectome_path);
        add_str(&b, c, "manifest_sha256", plan->manifest_sha256);
        add_uint(&b, c, "n_neurons", bl_connectome_n_neurons(plan->connectome));
        add_uint(&b, c, "n_edges", bl_connectome_n_edges(plan->connectome));
    }

    if (plan->audit_pops) { /* operation "audit": populations and the audit table only */
        add_audit(&b, root, plan, full);
        if (!b.ok) {
            cJSON_Delete(root);
            return NULL;
        }
        return root;
    }

    cJSON *m = check(&b, cJSON_AddObjectToObject(root, "model"));
    if (m) {
        add_str(&b, m, "preset", plan->preset);
        cJSON *p = check(&b, cJSON_AddObjectToObject(m, "parameters"));
        for (const char *const *n = bl_lif_param_names(); p && *n; n++)
            add_num(&b, p, *n, bl_lif_params_get(&plan->params, *n));
    }

    /* Only present when given, so that plans without named populations keep
     * the hash they had before [[population]] existed. */
    if (plan->n_named) {
        cJSON *named = check(&b, cJSON_AddArrayToObject(root, "population"));
        for (size_t i = 0; named && b.ok && i < plan->n_named; i++)
            add_population(&b, named, &plan->named[i], 0, full, 1);
    }
    cJSON *stim = check(&b, cJSON_AddArrayToObject(root, "stimulus"));
    for (size_t i = 0; stim && b.ok && i < plan->n_stimuli; i++)
        add_population(&b, stim, &plan->stimuli[i], 1, full, 0);
    cJSON *sil = check(&b, cJSON_AddArrayToObject(root, "silence"));
    for (size_t i = 0; sil && b.ok && i < plan->n_silences; i++)
        add_population(&b, sil, &plan->silences[i], 0, full, 0);

    cJSON *run = check(&b, cJSON_AddObjectToObject(root, "run"));
    if (run) {
        add_uint(&b, run, "trials", plan->trials);
        add_num(&b, run, "duration_ms", plan->duration_ms);
        add_uint(&b, run, "steps", plan->steps);
        add_uint(&b, run, "seed", plan->seed);
        add_str(&b, run, "backend", plan->backend);
        add_int(&b, run, "threads", plan->threads);
    }

    if (plan->n_axes)
        add_screen(&b, root, plan);

    cJSON *out = check(&b, cJSON_AddObjectToObject(root, "outputs"));
    if (out) {
        add_bool(&b, out, "spikes", plan->out_spikes);
        add_bool(&b, out, "counts", plan->out_counts);
        add_bool(&b, out, "state", plan->out_state);
        add_bool(&b, out, "propagation", plan->out_propagation);
        add_int(&b, out, "top_responders", plan->top_responders);
        /* Only when given: plans without them keep their hash. */
        if (plan->spikes_subset)
            add_str(&b, out, "spikes_subset", plan->spikes_subset->name);
        if (plan->n_psth_pops) {
            cJSON *ps = check(&b, cJSON_AddObjectToObject(out, "psth"));
            cJSON *names = ps ? check(&b, cJSON_AddArrayToObject(ps, "populations")) : NULL;
            for (size_t i = 0; names && i < plan->n_psth_pops; i++) {
                cJSON *s = check(&b, cJSON_CreateString(plan->psth_pops[i]->name));
                if (s && !cJSON_AddItemToArray(names, s)) {
                    cJSON_Delete(s);
                    b.ok = 0;
                }
            }
            if (ps)
                add_num(&b, ps, "bin_ms", plan->psth_bin_ms);
        }
    }
    if (!b.ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

char *bl_pk_render_json(const bl_plan *plan, int pretty, int full)
{
    if (plan->reservoir) /* operation "profile": its own canonical form */
        return bl_res_plan_render(plan->reservoir, pretty);
    cJSON *root = build(plan, full || !pretty, pretty);
    if (!root)
        return NULL;
    char *text = pretty ? cJSON_Print(root) : cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}
