/* Task options by name: one descriptor per option (type, bounds, where it
 * lives in bl_task_options), so the plan reader sets any task's options
 * without knowing the task, and the canonical plan renders them all. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "tasks/task_ops.h"

typedef enum opt_type { OPT_UINT, OPT_REAL, OPT_FLAG, OPT_MODE, OPT_DELAYS, OPT_OFFSETS, OPT_RANGE, OPT_RANGES,
                        OPT_MAYBE } opt_type;

typedef struct opt_desc {
    const char *name;
    opt_type type;
    size_t offset;
    uint32_t min;                /* OPT_UINT */
    const char *const *modes;    /* OPT_MODE: names, index = stored int */
    size_t has_offset;           /* OPT_MAYBE: the has_ flag */
} opt_desc;

static const char *const cue_modes[] = {"transient", "persistent", "hidden", NULL};
static const char *const distractor_modes[] = {"random", "matched", "opposite", "absent", NULL};
static const char *const congruencies[] = {"mixed", "congruent", "conflicting", NULL};
static const char *const visibility[] = {"hidden", "visible", NULL};

#define OFF(f) offsetof(bl_task_options, f)
static const opt_desc descs[] = {
    {"cue_ticks", OPT_UINT, OFF(cue_ticks), 1, NULL, 0},
    {"delays", OPT_DELAYS, OFF(delays), 0, NULL, 0},
    {"delay", OPT_UINT, OFF(delay), 0, NULL, 0},
    {"gap", OPT_UINT, OFF(gap), 0, NULL, 0},
    {"response_ticks", OPT_UINT, OFF(response_ticks), 1, NULL, 0},
    {"distractors", OPT_UINT, OFF(distractors), 0, NULL, 0},
    {"distractor_ticks", OPT_UINT, OFF(distractor_ticks), 1, NULL, 0},
    {"cue_mode", OPT_MODE, OFF(cue_mode), 0, cue_modes, 0},
    {"distractor_mode", OPT_MODE, OFF(distractor_mode), 0, distractor_modes, 0},
    {"pulse_count", OPT_UINT, OFF(pulse_count), 4, NULL, 0},
    {"evidence_fraction", OPT_REAL, OFF(evidence_fraction), 0, NULL, 0},
    {"pulse_ticks", OPT_UINT, OFF(pulse_ticks), 1, NULL, 0},
    {"input_mode", OPT_MODE, OFF(input_visible), 0, visibility, 0},
    {"context_mode", OPT_MODE, OFF(context_mode), 0, cue_modes, 0},
    {"congruency", OPT_MODE, OFF(congruency), 0, congruencies, 0},
    {"terminal_ticks", OPT_UINT, OFF(terminal_ticks), 1, NULL, 0},
    {"rounds", OPT_UINT, OFF(rounds), 48, NULL, 0},
    {"feedback_ticks", OPT_UINT, OFF(feedback_ticks), 1, NULL, 0},
    {"reversal_range", OPT_RANGE, OFF(reversal_lo), 2, NULL, 0},
    {"feedback_mode", OPT_MODE, OFF(feedback_visible), 0, visibility, 0},
    {"stim_speed_rad", OPT_REAL, OFF(stim_speed_rad), 0, NULL, 0},
    {"movement_amp", OPT_REAL, OFF(movement_amp), 0, NULL, 0},
    {"eye_offset_deg", OPT_REAL, OFF(eye_offset_deg), 0, NULL, 0},
    {"sensor_offsets_deg", OPT_OFFSETS, OFF(sensor_offsets_deg), 0, NULL, 0},
    {"sensory_gain", OPT_REAL, OFF(sensory_gain), 0, NULL, 0},
    {"randomize_start", OPT_FLAG, OFF(randomize_start), 0, NULL, 0},
    {"theta0", OPT_MAYBE, OFF(theta0), 0, NULL, OFF(has_theta0)},
    {"phi0", OPT_MAYBE, OFF(phi0), 0, NULL, OFF(has_phi0)},
    {"direction0", OPT_MAYBE, OFF(direction0), 0, NULL, OFF(has_direction0)},
    {"initial_ranges", OPT_RANGES, OFF(initial_ranges), 0, NULL, 0},
};
#undef OFF

static const opt_desc *find(const char *name)
{
    for (size_t k = 0; k < sizeof descs / sizeof *descs; k++)
        if (!strcmp(descs[k].name, name))
            return &descs[k];
    return NULL;
}

static int listed(const char *name, const char *const *names)
{
    for (; *names; names++)
        if (!strcmp(*names, name))
            return 1;
    return 0;
}

static bl_status want_uint(const char *name, const bl_task_value *v, uint32_t min, uint32_t *out, bl_error *err)
{
    if (v->type != BL_TV_NUMBER || !v->integer || !(v->number >= min) || v->number > BL_DC_MAX_TICKS)
        return bl_fail(err, BL_ERR_INVALID, "%s must be an integer in %u..%d", name, min, BL_DC_MAX_TICKS);
    *out = (uint32_t)v->number;
    return BL_OK;
}

bl_status bl_task_set_option(bl_task_options *o, const char *name, const bl_task_value *v, bl_error *err)
{
    const bl_task_ops *ops = bl_task_ops_of(o->kind);
    const opt_desc *d = find(name);
    if (!d || !listed(name, ops->option_names))
        return bl_fail(err, BL_ERR_INVALID, "\"%s\" is not an option of %s", name, ops->name);
    char *base = (char *)o;
    switch (d->type) {
    case OPT_UINT: return want_uint(name, v, d->min, (uint32_t *)(base + d->offset), err);
    case OPT_REAL:
    case OPT_MAYBE:
        if (v->type != BL_TV_NUMBER || !isfinite(v->number))
            return bl_fail(err, BL_ERR_INVALID, "%s must be a finite number", name);
        *(double *)(base + d->offset) = v->number;
        if (d->type == OPT_MAYBE)
            *(int *)(base + d->has_offset) = 1;
        return BL_OK;
    case OPT_FLAG:
        if (v->type != BL_TV_BOOL)
            return bl_fail(err, BL_ERR_INVALID, "%s must be a boolean", name);
        *(int *)(base + d->offset) = v->boolean;
        return BL_OK;
    case OPT_MODE:
        if (v->type == BL_TV_STRING)
            for (int k = 0; d->modes[k]; k++)
                if (!strcmp(d->modes[k], v->string)) {
                    *(int *)(base + d->offset) = k;
                    return BL_OK;
                }
        return bl_fail(err, BL_ERR_INVALID, "%s must be one of %s%s%s%s%s%s%s", name, d->modes[0],
                       d->modes[1] ? ", " : "", d->modes[1] ? d->modes[1] : "", d->modes[2] ? ", " : "",
                       d->modes[2] ? d->modes[2] : "", d->modes[2] && d->modes[3] ? ", " : "",
                       d->modes[2] && d->modes[3] ? d->modes[3] : "");
    case OPT_DELAYS:
        if (v->type != BL_TV_LIST || v->width != 1 || v->n < 1 || v->n > BL_DC_MAX_DELAYS)
            return bl_fail(err, BL_ERR_INVALID, "delays must be an array of 1..%d distinct integers", BL_DC_MAX_DELAYS);
        for (size_t k = 0; k < v->n; k++) {
            double x = v->list[k];
            if (!(x >= 0) || x > BL_DC_MAX_TICKS || x != floor(x))
                return bl_fail(err, BL_ERR_INVALID, "delays[%zu] must be an integer in 0..%d", k, BL_DC_MAX_TICKS);
            for (size_t m = 0; m < k; m++)
                if (v->list[m] == x)
                    return bl_fail(err, BL_ERR_INVALID, "delays[%zu] = %.0f repeats delays[%zu] (delays must be distinct)",
                                   k, x, m);
            o->delays[k] = (uint32_t)x;
        }
        o->n_delays = (uint32_t)v->n;
        return BL_OK;
    case OPT_OFFSETS:
        if (v->type != BL_TV_LIST || v->width != 1 || v->n < 1 || v->n > BL_TASK_MAX_OFFSETS)
            return bl_fail(err, BL_ERR_INVALID, "sensor_offsets_deg must be an array of 1..%d finite numbers",
                           BL_TASK_MAX_OFFSETS);
        for (size_t k = 0; k < v->n; k++) {
            if (!isfinite(v->list[k]))
                return bl_fail(err, BL_ERR_INVALID, "sensor_offsets_deg[%zu] must be finite", k);
            o->sensor_offsets_deg[k] = v->list[k];
        }
        o->n_offsets = (uint32_t)v->n;
        return BL_OK;
    case OPT_RANGE:
        if (v->type != BL_TV_LIST || v->width != 1 || v->n != 2)
            return bl_fail(err, BL_ERR_INVALID, "reversal_range needs two integer endpoints");
        for (int k = 0; k < 2; k++)
            if (!(v->list[k] >= 2) || v->list[k] > BL_TASK_MAX_ROUNDS || v->list[k] != floor(v->list[k]))
                return bl_fail(err, BL_ERR_INVALID, "reversal_range[%d] must be an integer >= 2", k);
        o->reversal_lo = (uint32_t)v->list[0];
        o->reversal_hi = (uint32_t)v->list[1];
        return BL_OK;
    case OPT_RANGES:
        if (v->type != BL_TV_LIST || v->width != 2 || v->n != 8)
            return bl_fail(err, BL_ERR_INVALID, "initial_ranges needs four [low, high] pairs");
        for (int k = 0; k < 8; k++) {
            if (!isfinite(v->list[k]))
                return bl_fail(err, BL_ERR_INVALID, "initial_ranges must be finite");
            o->initial_ranges[k / 2][k % 2] = v->list[k];
        }
        return BL_OK;
    }
    return BL_ERR_INVALID;
}

const char *const *bl_task_option_names(bl_task_kind kind) { return bl_task_ops_of(kind)->option_names; }

/* For the canonical plan: the option's resolved value as a JSON text. */
int bl_task_option_json(const bl_task_options *o, const char *name, char *buf, size_t cap)
{
    const opt_desc *d = find(name);
    if (!d)
        return -1;
    const char *base = (const char *)o;
    size_t used = 0;
#define PUT(...) (used += (size_t)snprintf(buf + used, used < cap ? cap - used : 0, __VA_ARGS__))
    switch (d->type) {
    case OPT_UINT: PUT("%u", *(const uint32_t *)(base + d->offset)); break;
    case OPT_REAL: PUT("%.17g", *(const double *)(base + d->offset)); break;
    case OPT_MAYBE:
        if (*(const int *)(base + d->has_offset))
            PUT("%.17g", *(const double *)(base + d->offset));
        else
            PUT("null");
        break;
    case OPT_FLAG: PUT("%s", *(const int *)(base + d->offset) ? "true" : "false"); break;
    case OPT_MODE: PUT("\"%s\"", d->modes[*(const int *)(base + d->offset)]); break;
    case OPT_DELAYS:
        PUT("[");
        for (uint32_t k = 0; k < o->n_delays; k++)
            PUT("%s%u", k ? "," : "", o->delays[k]);
        PUT("]");
        break;
    case OPT_OFFSETS:
        PUT("[");
        for (uint32_t k = 0; k < o->n_offsets; k++)
            PUT("%s%.17g", k ? "," : "", o->sensor_offsets_deg[k]);
        PUT("]");
        break;
    case OPT_RANGE: PUT("[%u,%u]", o->reversal_lo, o->reversal_hi); break;
    case OPT_RANGES:
        PUT("[");
        for (int k = 0; k < 4; k++)
            PUT("%s[%.17g,%.17g]", k ? "," : "", o->initial_ranges[k][0], o->initial_ranges[k][1]);
        PUT("]");
        break;
    }
#undef PUT
    return used < cap ? 0 : -1;
}
