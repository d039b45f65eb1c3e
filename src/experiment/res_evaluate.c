/* Evaluation = targets x blocks x trials of a task from the task table.
 *
 * Per trial: seeds from the plan's root (bl_seed_trial, src/core), a world
 * drawn by the task from the world seed, and either a reservoir (constructed
 * from the construction seed of its scope, driven by the task's observations
 * times input_gain and, with the Oosawa drive, by the noise tape of the drive
 * seed) or a control. Each world tick is the task's neural_frames node frames
 * (encode -> step -> accumulate), then the task advances.
 * Reservoir trials of a target run as batches of independent slots; a slot
 * leaves the batch (inactive) when its trial is over or has failed, so a
 * batch gives the same trials as one run per trial, in any thread count.
 *
 * Summary per target (the Python project's rules): block means over the
 * blocks whose trials all completed; recall_accuracy = their mean when no
 * trial failed; a 95% percentile bootstrap interval over block means (2000
 * resamples, Philox-drawn) when at least two blocks count. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "brainlesslab/hash.h"
#include "core/context_impl.h"
#include "core/threads.h"
#include "brainlesslab/task.h"
#include "core/np_random.h"
#include "plan/plan_reservoir.h"
#include "reservoir/res_impl.h"
#include "experiment/res_run_impl.h"
#include "tasks/task_ops.h"

#define BOOTSTRAP_RESAMPLES 2000

void bl_res_evaluation_destroy(bl_res_evaluation *ev)
{
    if (!ev)
        return;
    free(ev->trials);
    free(ev->summaries);
    free(ev->block_means);
    free(ev->probe_x);
    free(ev);
}

size_t bl_res_evaluation_n_trials(const bl_res_evaluation *ev) { return ev->n_trials; }

const bl_res_trial *bl_res_evaluation_trial(const bl_res_evaluation *ev, size_t i)
{
    return i < ev->n_trials ? &ev->trials[i] : NULL;
}

const bl_res_summary *bl_res_evaluation_summary(const bl_res_evaluation *ev, size_t target)
{
    return target < ev->n_targets ? &ev->summaries[target] : NULL;
}

const double *bl_res_evaluation_block_means(const bl_res_evaluation *ev, size_t target)
{
    return target < ev->n_targets ? ev->block_means + target * ev->blocks : NULL;
}

/* ---- one trial's world and state ---- */

typedef struct slot {
    bl_task_world world;
    bl_task_state state;
    bl_task_control control;
    uint32_t perm[BL_TASK_MAX_INPUTS]; /* shuffle_input */
    double *coins;                     /* reference_null under philox-host-v1 */
} slot;

static void slot_free(slot *x)
{
    bl_task_world_free(&x->world);
    bl_task_state_free(&x->state);
    free(x->coins);
    x->coins = NULL;
}

/* philox-host-v1 controls and interventions (the Python project's
 * evaluation): reference_null reads the k-th uniform of the control seed's
 * generator for round k (episode tasks: one array of the world's rounds) or
 * tick k (continuing tasks: a tape over the horizon); shuffle_input is
 * permutation(n_inputs) of the intervention seed's generator (its
 * input-shuffle stream), and the node's input r reads observation perm[r]. */
static bl_status host_slot(const bl_rp_target *t, const bl_res_trial *tr, slot *x, bl_error *err)
{
    if (t->controller == BL_CTRL_REFERENCE_NULL) {
        const int continuing = t->task.kind <= BL_TASK_CARTPOLE_PLANK_EASY;
        const uint32_t n = continuing ? t->horizon : x->world.n_rounds;
        const uint32_t m = n ? n : 1;
        x->coins = malloc(m * sizeof *x->coins);
        if (!x->coins)
            return bl_fail(err, BL_ERR_NOMEM, "evaluation: cannot allocate %u control draws", m);
        bl_np_rng g;
        bl_np_rng_seed_digest(&g, tr->rng.control.digest);
        for (uint32_t k = 0; k < m; k++)
            x->coins[k] = bl_np_random(&g);
        x->control.coins = x->coins;
        x->control.n_coins = m;
    }
    const uint32_t n = t->def.n_inputs;
    int32_t perm[BL_TASK_MAX_INPUTS];
    for (uint32_t k = 0; k < n; k++)
        perm[k] = (int32_t)k;
    bl_np_rng g;
    bl_np_rng_seed_digest(&g, tr->rng.intervention.digest);
    bl_np_shuffle_i32(&g, perm, n);
    for (uint32_t k = 0; k < n; k++)
        x->perm[k] = (uint32_t)perm[k];
    return BL_OK;
}

static bl_status slot_init(const bl_rp_target *t, const bl_res_trial *tr, slot *x, bl_error *err)
{
    memset(x, 0, sizeof *x);
    const bl_task_ops *ops = bl_task_ops_of(t->task.kind);
    x->world.kind = t->task.kind;
    /* The world seed of the scheme that runs (bl-philox-v1: rng.world.u64 = seed_world). */
    bl_status st = ops->world(&t->task, &tr->rng.world, t->horizon, &x->world, err);
    if (!st)
        st = bl_task_state_init(&x->world, &x->state, err);
    if (st) {
        slot_free(x);
        return st;
    }
    bl_task_control_init(&x->control, t->controller, &t->task, tr->seed_control);
    if (tr->rng.world.scheme == BL_RNG_PHILOX_HOST_V1) {
        if ((st = host_slot(t, tr, x, err)))
            slot_free(x);
        return st;
    }
    const uint32_t n = t->def.n_inputs;
    for (uint32_t k = 0; k < n; k++)
        x->perm[k] = k;
    /* One permutation per trial: Fisher-Yates from the end with draws
     * uniform(intervention seed, i, 1). */
    for (uint32_t i = n; i-- > 1;) {
        uint32_t j = (uint32_t)bl_stream_integer(tr->seed_intervention, i, 1, 0, i);
        uint32_t v = x->perm[i];
        x->perm[i] = x->perm[j];
        x->perm[j] = v;
    }
    return BL_OK;
}

/* The trial's record once it is over (or the horizon ran out). */
static void slot_close(const bl_rp_target *t, const slot *x, bl_res_trial *tr)
{
    const bl_task_world *w = &x->world;
    const bl_task_state *s = &x->state;
    bl_trial_score *sc = &tr->score;
    tr->world.label = w->n_rounds ? w->labels[0] : 0;
    tr->world.delay = t->task.kind == BL_TASK_DELAYED_CUE ? (uint32_t)w->meta[1] : 0;
    tr->world.length = w->length;
    tr->world.response_start = w->n_rounds ? w->starts[0] : 0;
    tr->world.response_end = w->n_rounds ? w->ends[0] : 0;
    sc->outcome = s->outcome;
    sc->evidence[0] = s->first_evidence[0];
    sc->evidence[1] = s->first_evidence[1];
    sc->decision = w->n_rounds && s->round ? s->decisions[0] : 0;
    sc->tie = w->n_rounds && s->round ? s->ties[0] : 0;
    for (uint32_t r = 0; r < s->round && r < w->n_rounds; r++)
        sc->ties += s->ties[r];
    sc->scored = s->scored;
    sc->hits = s->hits;
    sc->misses = s->misses;
    sc->longest_rally = s->longest_rally;
    sc->failed = !s->finite;
    /* Probe tasks complete when their episode ends; the others at the latest at the horizon. */
    sc->done = s->finite && (s->done || (!t->def.probe && s->ticks >= t->horizon));
    sc->ticks = s->ticks;
}

static int slot_running(const bl_rp_target *t, const slot *x)
{
    return x->state.finite && !x->state.done && x->state.ticks < t->horizon;
}

/* ---- interventions on a reservoir's input ---- */

typedef struct input_mods {
    int blind, shuffle;
} input_mods;

static void apply_interventions(const bl_rp_target *t, uint32_t tick, bl_res_batch *batch, const uint8_t *active,
                                input_mods *mods)
{
    for (size_t k = 0; k < t->n_interventions; k++) {
        if (t->interventions[k].tick != tick + 1)
            continue;
        switch (t->interventions[k].verb) {
        case BL_VERB_FREEZE_WEIGHTS: bl_res_batch_freeze_weights(batch, active); break;
        case BL_VERB_FREEZE_PLASTICITY: bl_res_batch_freeze_plasticity(batch, active); break;
        case BL_VERB_BLIND_INPUT: mods->blind = 1; break;
        case BL_VERB_SHUFFLE_INPUT: mods->shuffle = 1; break;
        }
    }
}

/* ---- controls ---- */

static bl_status run_control(const bl_rp_target *t, bl_res_trial *tr, bl_error *err)
{
    slot x;
    bl_status st = slot_init(t, tr, &x, err);
    if (st)
        return st;
    double obs[BL_TASK_MAX_INPUTS], eff[2];
    const bl_task_ops *ops = bl_task_ops_of(t->task.kind);
    while (slot_running(t, &x)) {
        const uint32_t tick = x.state.ticks;
        for (uint32_t f = 1; f <= t->def.neural_frames; f++) {
            ops->encode(&x.world, &x.state, f, obs);
            bl_task_control_step(&x.control, obs, t->def.n_inputs, tick, x.state.round, &x.world, &x.state, eff);
            bl_task_accumulate(&x.world, &x.state, eff, f);
        }
        bl_task_advance(&x.world, &x.state, t->warmup);
    }
    slot_close(t, &x, tr);
    slot_free(&x);
    return BL_OK;
}

/* ---- reservoirs ---- */

typedef struct chunk_ctx {
    const bl_res_plan *rp;
    const bl_rp_target *t;
    bl_res_trial *tr; /* the chunk's trials */
    size_t nb;
    int threads;
    bl_res_evaluation *ev; /* probe storage (ev->probe_x NULL: no probe) */
} chunk_ctx;

/* The probe's points: after the frame of the cue's last tick, the delay's
 * last tick and the response window's last tick (first round). */
static void probe_capture(const chunk_ctx *c, size_t k, uint32_t tick, const bl_task_world *w, const bl_res_state *s)
{
    bl_res_evaluation *ev = c->ev;
    if (!ev->probe_x || !w->n_rounds)
        return;
    const uint32_t at[3] = {w->cue_ends[0], w->starts[0], w->ends[0]};
    const size_t trial = (size_t)(&c->tr[k] - ev->trials);
    for (int p = 0; p < 3; p++)
        if (tick + 1 == at[p]) {
            double *dst = ev->probe_x + (trial * 3 + (size_t)p) * ev->probe_width;
            for (uint32_t i = 0; i < s->n && i < ev->probe_width; i++)
                dst[i] = s->spikes[i];
        }
}

static bl_status run_chunk(const chunk_ctx *c, bl_error *err)
{
    const bl_rp_target *t = c->t;
    const size_t nb = c->nb;
    const uint32_t R = t->def.n_inputs, F = t->def.neural_frames;
    const bl_task_ops *ops = bl_task_ops_of(t->task.kind);
    bl_res_state **built = calloc(nb, sizeof *built); /* distinct wirings, by construction seed */
    const bl_res_state **states = calloc(nb, sizeof *states);
    slot *slots = calloc(nb, sizeof *slots);
    uint8_t *active = calloc(nb, 1);
    double *inputs = calloc(nb * R, sizeof *inputs);
    const int oosawa = t->node.kind == BL_RES_FALANDAYS && t->node.oosawa;
    double *noise = oosawa ? calloc(nb * (size_t)t->count, sizeof *noise) : NULL;
    /* philox-host-v1: each trial's noise tape is its drive generator's
     * standard normals, n per frame it steps, in order (NoiseTape). */
    const int host = nb && c->tr[0].rng.drive.scheme == BL_RNG_PHILOX_HOST_V1;
    bl_np_rng *tapes = oosawa && host ? calloc(nb, sizeof *tapes) : NULL;
    bl_res_batch *batch = NULL;
    bl_status st = built && states && slots && active && inputs && (!oosawa || noise) && (!oosawa || !host || tapes)
                       ? BL_OK
                       : bl_fail(err, BL_ERR_NOMEM, "evaluation: cannot allocate a batch of %zu", nb);
    size_t n_slots = 0, n_built = 0;
    for (size_t k = 0; !st && k < nb; k++) {
        if ((st = slot_init(t, &c->tr[k], &slots[k], err)))
            break;
        n_slots = k + 1;
        size_t m = 0;
        while (m < k && !bl_rng_seed_equal(&c->tr[m].rng.construction, &c->tr[k].rng.construction))
            m++;
        if (m < k) {
            states[k] = states[m];
            continue;
        }
        st = bl_res_state_construct_rng(&t->node, t->count, R, t->def.n_effectors, &c->tr[k].rng.construction,
                                        &built[n_built], err);
        if (!st && c->rp->dtype != BL_RES_FLOAT64) { /* numerics.dtype: construction is float64, then cast */
            bl_res_state *cast = NULL;
            st = bl_res_state_cast(built[n_built], c->rp->dtype, &cast, err);
            bl_res_state_destroy(built[n_built]);
            built[n_built] = cast;
        }
        if (!st)
            states[k] = built[n_built++];
    }
    if (!st)
        st = bl_res_batch_create(nb, states, &batch, err);
    for (size_t k = 0; k < n_built; k++)
        bl_res_state_destroy(built[k]); /* the batch holds copies */
    for (size_t k = 0; !st && tapes && k < nb; k++)
        bl_np_rng_seed_digest(&tapes[k], c->tr[k].rng.drive.digest);
    if (!st) {
        bl_res_batch_set_threads(batch, c->threads);
        for (size_t k = 0; k < nb; k++)
            active[k] = 1;
    }
    const int threads = batch ? bl_res_batch_threads(batch) : 1;
    const uint32_t n = t->count;
    input_mods mods = {0, 0};
    for (uint32_t tick = 0; !st && tick < t->horizon; tick++) {
        size_t live = 0;
        for (size_t k = 0; k < nb; k++)
            live += active[k];
        if (!live)
            break;
        apply_interventions(t, tick, batch, active, &mods);
        for (uint32_t f = 1; !st && f <= F; f++) {
            for (size_t k = 0; k < nb; k++) {
                double *u = inputs + k * R;
                if (!active[k]) {
                    memset(u, 0, R * sizeof *u);
                    continue;
                }
                double obs[BL_TASK_MAX_INPUTS];
                ops->encode(&slots[k].world, &slots[k].state, f, obs);
                for (uint32_t q = 0; q < R; q++) {
                    double v = mods.blind ? 0.0 : mods.shuffle ? obs[slots[k].perm[q]] : obs[q];
                    u[q] = v * t->input_gain;
                }
            }
            if (tapes) {
                for (size_t k = 0; k < nb; k++)
                    for (uint32_t i = 0; i < n; i++)
                        noise[k * n + i] = active[k] ? bl_np_standard_normal(&tapes[k]) : 0.0;
            } else if (oosawa) {
                const uint64_t frame = (uint64_t)tick * F + (f - 1);
                const long long cells = (long long)nb * n;
                bl_res_trial *tr = c->tr;
#pragma omp parallel for num_threads(threads) if (threads > 1 && cells >= 4096) schedule(static)
                for (long long x = 0; x < cells; x++) {
                    size_t k = (size_t)(x / n);
                    uint32_t i = (uint32_t)(x % n);
                    noise[x] = active[k] ? bl_res_noise(tr[k].seed_drive, frame, i) : 0.0;
                }
            }
            st = bl_res_batch_step(batch, inputs, noise, active, err);
            for (size_t k = 0; !st && k < nb; k++) {
                if (!active[k])
                    continue;
                const bl_res_state *s = bl_res_batch_slot(batch, k);
                if (!s->finite) {
                    slots[k].state.finite = 0;
                } else {
                    bl_task_accumulate(&slots[k].world, &slots[k].state, s->effectors, f);
                    if (f == F)
                        probe_capture(c, k, tick, &slots[k].world, s);
                }
            }
        }
        for (size_t k = 0; !st && k < nb; k++) {
            if (!active[k])
                continue;
            bl_task_advance(&slots[k].world, &slots[k].state, t->warmup);
            if (!slot_running(t, &slots[k]))
                active[k] = 0;
        }
    }
    for (size_t k = 0; k < n_slots; k++) {
        if (!st)
            slot_close(t, &slots[k], &c->tr[k]);
        slot_free(&slots[k]);
    }
    bl_res_batch_destroy(batch);
    free(built);
    free(states);
    free(slots);
    free(active);
    free(inputs);
    free(noise);
    free(tapes);
    return st;
}

/* ---- summary ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile of sorted a[n] by linear interpolation between order
 * statistics (NumPy's default "linear" method). */
static double quantile(const double *a, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo + 1 >= n)
        return a[n - 1];
    double frac = pos - (double)lo;
    return a[lo] + (a[lo + 1] - a[lo]) * frac;
}

/* np.quantile(sorted a, q) ("linear"): index (n - 1) q, and NumPy's lerp,
 * which interpolates from the upper neighbour when the fraction is >= 0.5. */
static double np_quantile(const double *a, size_t n, double q)
{
    const double v = (double)(n - 1) * q;
    const double lo = floor(v);
    size_t i = (size_t)lo;
    if (i + 1 >= n)
        return a[n - 1];
    const double g = v - lo, x = a[i], y = a[i + 1], d = y - x;
    return g >= 0.5 ? y - d * (1.0 - g) : x + d * g;
}

/* np.mean of n values: (0 + pairwise sum) / n. */
static double np_mean(const double *a, size_t n) { return (0.0 + bl_np_pairwise_sum(a, n)) / (double)n; }

/* The Python project's summary-bootstrap stream of a target under
 * philox-host-v1: seed_for(root, partition, "summary-bootstrap", digest) with
 * digest = SHA-256 hex of the JSON {"composition", "interventions",
 * "mechanism", "pairing"} (sort_keys, compact). 0 when the plan gave no JSON form. */
static int host_bootstrap_seed(const bl_res_plan *rp, const bl_rp_target *t, uint8_t digest[32], bl_error *err)
{
    if (!t->py_head || !t->py_params || !t->py_tail)
        return 0;
    char *mech = bl_rp_py_string(t->mechanism_key), *pair = bl_rp_py_string(t->pairing_key);
    const size_t cap = strlen(t->py_head) + strlen(t->py_params) + strlen(t->py_tail) + 128 * (t->n_interventions + 1) +
                       (mech ? strlen(mech) : 0) + (pair ? strlen(pair) : 0);
    char *json = mech && pair ? malloc(cap) : NULL;
    int ok = 0;
    if (json) {
        size_t n = (size_t)snprintf(json, cap, "{\"composition\":%s%s%s,\"interventions\":[", t->py_head, t->py_params,
                                    t->py_tail);
        for (size_t k = 0; k < t->n_interventions; k++)
            n += (size_t)snprintf(json + n, cap - n, "%s{\"tick\":%u,\"verb\":\"%s\"}", k ? "," : "",
                                  t->interventions[k].tick, bl_rp_verb_name(t->interventions[k].verb));
        snprintf(json + n, cap - n, "],\"mechanism\":%s,\"pairing\":%s}", mech, pair);
        char hex[BL_SHA256_HEX_LEN + 1];
        bl_sha256_buffer(json, strlen(json), hex);
        const bl_np_key key = {hex, 0};
        ok = !bl_np_seed_for(rp->root_seed, rp->partition, "summary-bootstrap", &key, 1, digest, err);
    }
    free(json);
    free(mech);
    free(pair);
    return ok;
}

static bl_status summarise(const bl_res_plan *rp, bl_res_evaluation *ev, bl_error *err)
{
    const uint32_t blocks = rp->blocks, per = rp->trials_per_block;
    double *values = malloc(blocks * sizeof *values), *means = malloc(BOOTSTRAP_RESAMPLES * sizeof *means);
    if (!values || !means) {
        free(values);
        free(means);
        return bl_fail(err, BL_ERR_NOMEM, "evaluation: cannot summarise");
    }
    /* philox-host-v1: the Python project's means (NumPy's pairwise sums) and bootstrap. */
    const int host = bl_res_plan_scheme(rp) == BL_RNG_PHILOX_HOST_V1;
    double *outcomes = host ? malloc((per ? per : 1) * sizeof *outcomes) : NULL;
    if (host && !outcomes) {
        free(values);
        free(means);
        return bl_fail(err, BL_ERR_NOMEM, "evaluation: cannot summarise");
    }
    for (size_t ti = 0; ti < rp->n_targets; ti++) {
        bl_res_summary *s = &ev->summaries[ti];
        double *bm = ev->block_means + ti * blocks;
        memset(s, 0, sizeof *s);
        size_t nv = 0;
        for (uint32_t b = 0; b < blocks; b++) {
            double total = 0.0;
            int complete = 1;
            for (uint32_t k = 0; k < per; k++) {
                const bl_res_trial *tr = &ev->trials[((size_t)ti * blocks + b) * per + k];
                if (tr->status == BL_TRIAL_COMPLETED) {
                    s->completed++;
                    s->ties += tr->score.ties;
                    total = total + tr->score.outcome;
                    if (host)
                        outcomes[k] = tr->score.outcome;
                } else {
                    s->failed++;
                    complete = 0;
                }
            }
            bm[b] = !complete ? NAN : host ? np_mean(outcomes, per) : total / (double)per;
            if (complete)
                values[nv++] = bm[b];
        }
        s->blocks = (uint32_t)nv;
        s->accuracy = s->low = s->high = NAN;
        if (s->failed || nv == 0)
            continue;
        double total = 0.0;
        for (size_t k = 0; k < nv; k++)
            total = total + values[k];
        s->accuracy = host ? np_mean(values, nv) : total / (double)nv;
        if (nv < 2)
            continue;
        uint8_t digest[32];
        if (host && host_bootstrap_seed(rp, &rp->targets[ti], digest, err)) {
            /* integers(0, n, (2000, n)) row-major; each row's mean; np.quantile. */
            bl_np_rng g;
            bl_np_rng_seed_digest(&g, digest);
            double *row = malloc(nv * sizeof *row);
            if (!row) {
                free(values);
                free(means);
                free(outcomes);
                return bl_fail(err, BL_ERR_NOMEM, "evaluation: cannot summarise");
            }
            for (uint32_t r = 0; r < BOOTSTRAP_RESAMPLES; r++) {
                for (size_t k = 0; k < nv; k++)
                    row[k] = values[bl_np_integers(&g, 0, (int64_t)nv)];
                means[r] = np_mean(row, nv);
            }
            free(row);
            qsort(means, BOOTSTRAP_RESAMPLES, sizeof *means, cmp_double);
            s->low = np_quantile(means, BOOTSTRAP_RESAMPLES, 0.025);
            s->high = np_quantile(means, BOOTSTRAP_RESAMPLES, 0.975);
            continue;
        }
        /* Resample r, draw k: index = (word 0 of counter (r, k, 1, 0)) * nv >> 32. */
        uint64_t seed = bl_seed_derive(rp->root_seed, rp->partition_word, BL_SEED_BOOTSTRAP, (uint32_t)ti,
                                       BL_SEED_ANY);
        for (uint32_t r = 0; r < BOOTSTRAP_RESAMPLES; r++) {
            double sum = 0.0;
            for (size_t k = 0; k < nv; k++) {
                uint32_t w[4];
                bl_res_philox(seed, r, (uint32_t)k, 1, 0, w);
                sum = sum + values[((uint64_t)w[0] * nv) >> 32];
            }
            means[r] = sum / (double)nv;
        }
        qsort(means, BOOTSTRAP_RESAMPLES, sizeof *means, cmp_double);
        s->low = quantile(means, BOOTSTRAP_RESAMPLES, 0.025);
        s->high = quantile(means, BOOTSTRAP_RESAMPLES, 0.975);
    }
    free(values);
    free(means);
    free(outcomes);
    return BL_OK;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Progress goes to the context's sink, as a connectome run's does: trials
 * done of all, no model time (a reservoir trial has no simulated seconds). */
static void report(const bl_context *ctx, size_t done, size_t n, double t0)
{
    if (ctx && ctx->progress)
        ctx->progress(ctx->progress_user, (uint32_t)done, (uint32_t)n, 0.0, now_s() - t0);
}

bl_status bl_res_evaluate_progress(const bl_res_plan *rp, int threads, int batch, const bl_context *ctx,
                                   bl_res_evaluation **out, bl_error *err)
{
    return bl_res_evaluate_resumable(rp, threads, batch, ctx, NULL, out, err);
}

bl_status bl_res_evaluate_resumable(const bl_res_plan *rp, int threads, int batch, const bl_context *ctx,
                                    const bl_res_resume_hooks *hooks, bl_res_evaluation **out, bl_error *err)
{
    const double t0 = now_s();
    *out = NULL;
    const uint32_t blocks = rp->blocks, per = rp->trials_per_block;
    const size_t n = rp->n_targets * (size_t)blocks * per;
    bl_res_evaluation *ev = calloc(1, sizeof *ev);
    if (!ev)
        return bl_fail(err, BL_ERR_NOMEM, "evaluation: out of memory");
    ev->n_trials = n;
    ev->n_targets = rp->n_targets;
    ev->blocks = blocks;
    ev->trials = calloc(n, sizeof *ev->trials);
    ev->summaries = calloc(rp->n_targets, sizeof *ev->summaries);
    ev->block_means = calloc(rp->n_targets * (size_t)blocks, sizeof *ev->block_means);
    if (!ev->trials || !ev->summaries || !ev->block_means) {
        bl_res_evaluation_destroy(ev);
        return bl_fail(err, BL_ERR_NOMEM, "evaluation: cannot allocate %zu trials", n);
    }
    if (rp->probe) {
        for (size_t ti = 0; ti < rp->n_targets; ti++)
            if (rp->targets[ti].count > ev->probe_width)
                ev->probe_width = rp->targets[ti].count;
        const size_t cells = n * 3 * (size_t)ev->probe_width;
        ev->probe_x = malloc(cells * sizeof *ev->probe_x + 1);
        if (!ev->probe_x) {
            bl_res_evaluation_destroy(ev);
            return bl_fail(err, BL_ERR_NOMEM, "evaluation: cannot allocate the probe's %zu values", cells);
        }
        for (size_t k = 0; k < cells; k++)
            ev->probe_x[k] = NAN;
    }
    ev->threads = bl_threads_resolve(threads >= 0 ? threads : rp->threads);
    ev->batch = batch > 0 ? (uint32_t)batch : rp->batch_size;
    const int host = bl_res_plan_scheme(rp) == BL_RNG_PHILOX_HOST_V1;
    bl_status st = BL_OK;
    for (size_t ti = 0; !st && ti < rp->n_targets; ti++)
        for (uint32_t b = 0; !st && b < blocks; b++)
            for (uint32_t k = 0; !st && k < per; k++) {
                bl_res_trial *tr = &ev->trials[(ti * blocks + b) * per + k];
                /* Each purpose draws from the bank of its key (the defaults: the partition's). */
                const bl_rp_target *t = &rp->targets[ti];
                bl_trial_seeds pw, cw, mw;
                bl_seed_trial(rp->root_seed, rp->partition_word ^ t->pairing_word, rp->scope, b, k, &pw);
                bl_seed_trial(rp->root_seed, rp->partition_word ^ t->construction_word, rp->scope, b, k, &cw);
                bl_seed_trial(rp->root_seed, rp->partition_word ^ t->mechanism_word, rp->scope, b, k, &mw);
                tr->target = (uint32_t)ti;
                tr->block = b;
                tr->trial = k;
                tr->seed_world = pw.world;
                tr->seed_construction = cw.construction;
                tr->seed_drive = mw.drive;
                tr->seed_control = pw.control;
                tr->seed_intervention = mw.intervention;
                bl_trial_rng *g = &tr->rng;
                bl_seed_trial_rng(rp->root_seed, rp->partition_word, rp->scope, b, k, g);
                g->world.u64 = pw.world;
                g->construction.u64 = cw.construction;
                g->drive.u64 = mw.drive;
                g->control.u64 = pw.control;
                g->intervention.u64 = mw.intervention;
                if (host) {
                    /* The Python project's names: the target's keys, the node and task kinds, the sizes. */
                    const bl_host_trial_keys keys = {t->pairing_key, t->construction_key, t->mechanism_key,
                                                     bl_res_kind_name(t->node.kind), bl_task_name(t->task.kind),
                                                     t->count, t->def.n_inputs, t->def.n_effectors};
                    st = bl_seed_trial_host(rp->root_seed, rp->partition, rp->scope, &keys, b, k, g, err);
                }
            }
    uint8_t *have = NULL;
    if (!st && hooks && !(have = calloc(n ? n : 1, 1)))
        st = bl_fail(err, BL_ERR_NOMEM, "evaluation: cannot list %zu trials", n);
    if (!st && hooks && hooks->restore)
        st = hooks->restore(hooks->user, ev, have, err);
    if (st) {
        free(have);
        bl_res_evaluation_destroy(ev);
        return st;
    }
    size_t done = 0;
    for (size_t ti = 0; !st && ti < rp->n_targets; ti++) {
        const bl_rp_target *t = &rp->targets[ti];
        bl_res_trial *first = &ev->trials[ti * blocks * per];
        const size_t jobs = (size_t)blocks * per;
        if (t->controller != BL_CTRL_RESERVOIR) {
            for (size_t j = 0; !st && j < jobs; j++)
                st = run_control(t, &first[j], err);
            done += jobs;
            report(ctx, done, n, t0);
            if (!st && done < n && bl_context_cancelled(ctx))
                st = bl_fail(err, BL_ERR_CANCELLED, "%s: cancelled after %zu of %zu trials", rp->id, done, n);
            continue;
        }
        const size_t base = ti * blocks * per;
        for (size_t j0 = 0; !st && j0 < jobs;) {
            if (have && have[base + j0]) { /* restored (a resumed run) */
                j0++;
                done++;
                continue;
            }
            size_t nb = 0; /* the next batch of trials still to run */
            while (j0 + nb < jobs && nb < ev->batch && !(have && have[base + j0 + nb]))
                nb++;
            chunk_ctx c = {rp, t, first + j0, nb, ev->threads, ev};
            st = run_chunk(&c, err);
            if (!st && hooks && hooks->saved)
                st = hooks->saved(hooks->user, ev, base + j0, nb, err);
            j0 += nb;
            done += c.nb;
            report(ctx, done, n, t0);
            if (!st && done < n && bl_context_cancelled(ctx))
                st = bl_fail(err, BL_ERR_CANCELLED, "%s: cancelled after %zu of %zu trials", rp->id, done, n);
        }
    }
    free(have);
    for (size_t i = 0; !st && i < n; i++) {
        bl_res_trial *tr = &ev->trials[i];
        tr->ticks = tr->score.ticks;
        tr->status = tr->score.failed ? BL_TRIAL_FAILED : tr->score.done ? BL_TRIAL_COMPLETED : BL_TRIAL_INCOMPLETE;
        if (tr->status != BL_TRIAL_COMPLETED)
            tr->score.outcome = NAN;
    }
    if (!st)
        st = summarise(rp, ev, err);
    if (st) {
        bl_res_evaluation_destroy(ev);
        return st;
    }
    *out = ev;
    return BL_OK;
}

bl_status bl_res_evaluate(const bl_res_plan *rp, int threads, int batch, bl_res_evaluation **out, bl_error *err)
{
    return bl_res_evaluate_progress(rp, threads, batch, NULL, out, err);
}
