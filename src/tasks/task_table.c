/* The task table and what every task shares: names, controls, the world
 * stream and world storage (src/tasks/task_ops.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/task_ops.h"

extern const bl_task_ops bl_task_tracking, bl_task_pong, bl_task_cartpole, bl_task_delayed_cue,
    bl_task_recall_interference, bl_task_delayed_xor, bl_task_evidence_accumulation, bl_task_context_integration,
    bl_task_temporal_order, bl_task_reversal_adaptation;

/* Indexed by bl_task_kind. */
static const bl_task_ops *const table[BL_TASK_COUNT] = {
    &bl_task_tracking,           &bl_task_pong,
    &bl_task_cartpole,           &bl_task_delayed_cue,
    &bl_task_recall_interference, &bl_task_delayed_xor,
    &bl_task_evidence_accumulation, &bl_task_context_integration,
    &bl_task_temporal_order,     &bl_task_reversal_adaptation,
};

const bl_task_ops *bl_task_ops_of(bl_task_kind kind) { return table[kind]; }

const char *bl_task_name(bl_task_kind kind) { return table[kind]->name; }

int bl_task_parse(const char *name, bl_task_kind *out)
{
    for (int k = 0; k < BL_TASK_COUNT; k++)
        if (!strcmp(name, table[k]->name)) {
            *out = (bl_task_kind)k;
            return 0;
        }
    return -1;
}

void bl_task_defaults(bl_task_kind kind, bl_task_options *o)
{
    memset(o, 0, sizeof *o);
    o->kind = kind;
    table[kind]->defaults(o);
}

bl_status bl_task_validate(const bl_task_options *o, bl_error *err) { return table[o->kind]->validate(o, err); }

void bl_task_definition_of(const bl_task_options *o, bl_task_definition *d)
{
    memset(d, 0, sizeof *d);
    d->n_effectors = 2;
    d->neural_frames = 1;
    d->upper_bound = 1.0;
    d->chance = NAN;
    table[o->kind]->definition(o, d);
}

int bl_task_controller_allowed(bl_task_kind kind, bl_controller c)
{
    return (unsigned)c < BL_CTRL_COUNT && (table[kind]->controls >> c & 1u);
}

/* ---- controllers by name ---- */

static const char *const controllers[BL_CTRL_COUNT] = {
    "reservoir", "oracle", "constant_left", "constant_right", "reference_null", "memoryless",
    "last",      "first",  "context_blind", "irrelevant",     "bag",            "fixed_mapping"};

const char *bl_controller_name(bl_controller c) { return controllers[c]; }

int bl_controller_parse(const char *name, bl_controller *out)
{
    for (int k = 0; k < BL_CTRL_COUNT; k++)
        if (!strcmp(name, controllers[k])) {
            *out = (bl_controller)k;
            return 0;
        }
    if (!strcmp(name, "reference_nullblindpolicy")) { /* the Python project's older name */
        *out = BL_CTRL_REFERENCE_NULL;
        return 0;
    }
    return -1;
}

/* ---- worlds ---- */

bl_status bl_task_world_alloc(bl_task_world *w, uint32_t length, uint32_t width, uint32_t rounds, bl_error *err)
{
    w->length = length;
    w->width = width;
    w->n_rounds = rounds;
    w->stimuli = calloc((size_t)length * width + 1, sizeof *w->stimuli);
    w->starts = calloc((size_t)rounds + 1, sizeof *w->starts);
    w->ends = calloc((size_t)rounds + 1, sizeof *w->ends);
    w->cue_ends = calloc((size_t)rounds + 1, sizeof *w->cue_ends);
    w->labels = calloc((size_t)rounds + 1, sizeof *w->labels);
    if (!w->stimuli || !w->starts || !w->ends || !w->cue_ends || !w->labels) {
        bl_task_world_free(w);
        return bl_fail(err, BL_ERR_NOMEM, "task world: cannot allocate %u ticks x %u inputs", length, width);
    }
    return BL_OK;
}

void bl_task_world_free(bl_task_world *w)
{
    if (!w)
        return;
    free(w->stimuli);
    free(w->starts);
    free(w->ends);
    free(w->cue_ends);
    free(w->labels);
    free(w->draws);
    w->stimuli = w->draws = NULL;
    w->starts = w->ends = w->cue_ends = w->labels = NULL;
}

void bl_task_mark(bl_task_world *w, uint32_t start, uint32_t end, uint32_t c, double v)
{
    if (end > w->length)
        end = w->length;
    for (uint32_t t = start; t < end; t++)
        bl_task_stim(w, t)[c] = v;
}

void bl_task_rng_init(bl_task_rng *r, const bl_rng_seed *seed)
{
    memset(r, 0, sizeof *r);
    r->host = seed->scheme == BL_RNG_PHILOX_HOST_V1;
    if (r->host)
        bl_np_rng_seed_digest(&r->np, seed->digest);
    else
        r->seed = seed->u64;
}

double bl_task_rng_uniform(bl_task_rng *r)
{
    if (r->host)
        return bl_np_random(&r->np);
    return bl_stream_uniform(r->seed, r->n++, BL_TASK_WORLD_DOMAIN);
}

int bl_task_rng_int(bl_task_rng *r, int lo, int hi)
{
    if (r->host)
        return (int)bl_np_integers(&r->np, lo, (int64_t)hi + 1);
    return (int)bl_stream_integer(r->seed, r->n++, BL_TASK_WORLD_DOMAIN, lo, hi);
}

uint32_t bl_task_rng_choice(bl_task_rng *r, uint32_t n)
{
    if (r->host)
        return (uint32_t)bl_np_choice_index(&r->np, n);
    return (uint32_t)bl_task_rng_int(r, 0, (int)n - 1);
}

void bl_task_rng_shuffle(bl_task_rng *r, uint32_t *a, uint32_t n)
{
    if (r->host) {
        bl_np_shuffle_u32(&r->np, a, n);
        return;
    }
    /* Fisher-Yates from the end: position i swaps with j = floor(u (i + 1)). */
    for (uint32_t i = n; i-- > 1;) {
        uint32_t j = (uint32_t)bl_task_rng_int(r, 0, (int)i);
        uint32_t x = a[i];
        a[i] = a[j];
        a[j] = x;
    }
}
