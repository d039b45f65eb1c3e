/* The delayed-cue task: worlds, observations, native scoring and controls,
 * and the seed derivation shared by every evaluation
 * (../shared/spec/reservoir-models.md, "Delayed-cue task"). */
#include <math.h>
#include <string.h>

#include "brainlesslab/hash.h"
#include "brainlesslab/task.h"
#include "core/philox.h"
#include "reservoir/res_impl.h"

/* ---- seeds ---- */

uint32_t bl_seed_partition_word(const char *partition)
{
    char hex[BL_SHA256_HEX_LEN + 1];
    bl_sha256_buffer(partition, strlen(partition), hex);
    uint32_t w = 0;
    for (int byte = 3; byte >= 0; byte--) { /* bytes 0..3 of the digest, little-endian */
        unsigned v = 0;
        for (int k = 0; k < 2; k++) {
            char c = hex[2 * byte + k];
            v = v * 16 + (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
        }
        w = (w << 8) | v;
    }
    return w;
}

uint64_t bl_seed_derive(uint64_t root_seed, uint32_t partition_word, bl_seed_purpose purpose, uint32_t block,
                        uint32_t trial)
{
    const uint32_t counter[4] = {block, trial, (uint32_t)purpose, partition_word};
    const uint32_t key[2] = {(uint32_t)root_seed, (uint32_t)(root_seed >> 32)};
    uint32_t out[4];
    bl_philox4x32(counter, key, out);
    return (uint64_t)out[0] | ((uint64_t)out[1] << 32);
}

/* ---- options ---- */

static const char *const cue_modes[] = {"transient", "persistent", "hidden"};

const char *bl_cue_mode_name(bl_cue_mode mode) { return cue_modes[mode]; }

int bl_cue_mode_parse(const char *name, bl_cue_mode *out)
{
    for (int k = 0; k < 3; k++)
        if (!strcmp(name, cue_modes[k])) {
            *out = (bl_cue_mode)k;
            return 0;
        }
    return -1;
}

void bl_dc_defaults(bl_dc_options *o)
{
    memset(o, 0, sizeof *o);
    o->cue_ticks = 8;
    o->response_ticks = 8;
    o->n_delays = 3;
    o->delays[0] = 8;
    o->delays[1] = 32;
    o->delays[2] = 128;
    o->cue_mode = BL_CUE_TRANSIENT;
}

uint32_t bl_dc_horizon(const bl_dc_options *o)
{
    uint32_t longest = 0;
    for (uint32_t k = 0; k < o->n_delays; k++)
        if (o->delays[k] > longest)
            longest = o->delays[k];
    return o->cue_ticks + longest + o->response_ticks;
}

bl_status bl_dc_validate(const bl_dc_options *o, bl_error *err)
{
    if (o->cue_ticks < 1 || o->response_ticks < 1)
        return bl_fail(err, BL_ERR_INVALID, "delayed_cue: cue_ticks and response_ticks must be >= 1");
    if (o->n_delays < 1 || o->n_delays > BL_DC_MAX_DELAYS)
        return bl_fail(err, BL_ERR_INVALID, "delayed_cue: delays needs 1..%d values", BL_DC_MAX_DELAYS);
    for (uint32_t k = 0; k < o->n_delays; k++)
        for (uint32_t m = 0; m < k; m++)
            if (o->delays[k] == o->delays[m])
                return bl_fail(err, BL_ERR_INVALID, "delayed_cue: delays[%u] = %u repeats delays[%u]", k,
                               o->delays[k], m);
    uint64_t longest = 0;
    for (uint32_t k = 0; k < o->n_delays; k++)
        if (o->delays[k] > longest)
            longest = o->delays[k];
    if ((uint64_t)o->cue_ticks + longest + o->response_ticks > BL_DC_MAX_TICKS)
        return bl_fail(err, BL_ERR_INVALID, "delayed_cue: a trial of more than %d ticks", BL_DC_MAX_TICKS);
    return BL_OK;
}

/* ---- worlds ---- */

void bl_dc_world_draw(const bl_dc_options *o, uint64_t world_seed, bl_dc_world *w)
{
    double u0 = bl_res_uniform(world_seed, 0, 0, 1, 0);
    double u1 = bl_res_uniform(world_seed, 0, 0, 2, 0);
    uint32_t k = (uint32_t)(u1 * (double)o->n_delays);
    if (k >= o->n_delays)
        k = o->n_delays - 1;
    w->label = u0 >= 0.5 ? 2 : 1;
    w->delay = o->delays[k];
    w->response_start = o->cue_ticks + w->delay;
    w->length = w->response_start + o->response_ticks;
    w->response_end = w->length;
}

void bl_dc_stimulus(const bl_dc_options *o, const bl_dc_world *w, uint32_t tick, double out[BL_DC_INPUTS])
{
    out[0] = out[1] = out[2] = 0.0;
    if (tick >= w->length || o->cue_mode == BL_CUE_HIDDEN)
        return;
    if (o->cue_mode == BL_CUE_PERSISTENT || tick < o->cue_ticks)
        out[w->label - 1] = 1.0;
}

const char *bl_trial_status_name(bl_trial_status s)
{
    return s == BL_TRIAL_COMPLETED ? "completed" : s == BL_TRIAL_FAILED ? "failed" : "incomplete";
}

/* ---- scoring ---- */

void bl_dc_score_init(bl_dc_score *s) { memset(s, 0, sizeof *s); }

int bl_dc_score_tick(bl_dc_score *s, const bl_dc_world *w, uint32_t tick, const double eff[BL_DC_EFFECTORS])
{
    if (s->done || s->failed)
        return 1;
    for (int e = 0; e < BL_DC_EFFECTORS; e++)
        if (!isfinite(eff[e]) || eff[e] < 0.0 || eff[e] > 1.0) {
            s->failed = 1;
            return 1;
        }
    if (tick >= w->response_start && tick < w->response_end) {
        s->evidence[0] = s->evidence[0] + eff[0];
        s->evidence[1] = s->evidence[1] + eff[1];
    }
    s->ticks = tick + 1;
    if (tick + 1 == w->response_end) {
        s->decision = s->evidence[1] > s->evidence[0] ? 2 : 1;
        s->tie = s->evidence[0] == s->evidence[1];
    }
    if (tick + 1 >= w->length) {
        s->done = 1;
        s->outcome = s->decision == (int)w->label;
    }
    return s->done;
}

/* ---- controls ---- */

static const char *const controllers[] = {"reservoir", "oracle", "constant_left", "constant_right",
                                          "reference_null"};

const char *bl_controller_name(bl_controller c) { return controllers[c]; }

int bl_controller_parse(const char *name, bl_controller *out)
{
    for (int k = 0; k < 5; k++)
        if (!strcmp(name, controllers[k])) {
            *out = (bl_controller)k;
            return 0;
        }
    return -1;
}

void bl_dc_control_init(bl_dc_control *c, bl_controller kind, uint64_t control_seed)
{
    c->kind = kind;
    c->first = 0;
    c->coin = bl_res_uniform(control_seed, 0, 0, 1, 0) >= 0.5 ? 2 : 1;
}

void bl_dc_control_tick(bl_dc_control *c, const double obs[BL_DC_INPUTS], double eff[BL_DC_EFFECTORS])
{
    int choice = 1;
    switch (c->kind) {
    case BL_CTRL_ORACLE:
        /* It sees what a reservoir sees: the first cue shown, if any. */
        if (!c->first && obs[0] + obs[1] > 0.0)
            c->first = obs[1] > obs[0] ? 2 : 1;
        choice = c->first ? c->first : 1;
        break;
    case BL_CTRL_CONSTANT_RIGHT: choice = 2; break;
    case BL_CTRL_REFERENCE_NULL: choice = c->coin; break;
    default: choice = 1; break;
    }
    eff[0] = choice == 1 ? 1.0 : 0.0;
    eff[1] = choice == 2 ? 1.0 : 0.0;
}
