/* Evaluation = targets x blocks x trials of the delayed-cue task.
 *
 * Per trial: seeds from the plan's root (bl_seed_derive), a world drawn from
 * the world seed, and either a reservoir (constructed from the construction
 * seed of its scope, driven by the task's observations times input_gain and,
 * with the Oosawa drive, by the noise tape of the drive seed) or a control.
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

#include "brainlesslab/task.h"
#include "core/philox.h"
#include "plan/plan_reservoir.h"
#include "reservoir/res_impl.h"
#include "tasks/tasks_impl.h"

#define BOOTSTRAP_RESAMPLES 2000

void bl_res_evaluation_destroy(bl_res_evaluation *ev)
{
    if (!ev)
        return;
    free(ev->trials);
    free(ev->summaries);
    free(ev->block_means);
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

static uint64_t construction_seed(const bl_res_plan *rp, uint32_t block, uint32_t trial)
{
    uint32_t b = rp->scope == BL_SCOPE_EVALUATION ? BL_SEED_ANY : block;
    uint32_t t = rp->scope == BL_SCOPE_TRIAL ? trial : BL_SEED_ANY;
    return bl_seed_derive(rp->root_seed, rp->partition_word, BL_SEED_CONSTRUCTION, b, t);
}

/* ---- controls ---- */

static void run_control(const bl_rp_target *t, bl_res_trial *tr)
{
    bl_dc_control c;
    bl_dc_control_init(&c, t->controller, tr->seed_control);
    for (uint32_t tick = 0; tick < t->horizon; tick++) {
        double obs[BL_DC_INPUTS], eff[BL_DC_EFFECTORS];
        bl_dc_stimulus(&t->task, &tr->world, tick, obs);
        bl_dc_control_tick(&c, obs, eff);
        if (bl_dc_score_tick(&tr->score, &tr->world, tick, eff))
            break;
    }
}

/* ---- reservoirs ---- */

typedef struct chunk_ctx {
    const bl_res_plan *rp;
    const bl_rp_target *t;
    bl_res_trial *tr; /* the chunk's trials */
    size_t nb;
    int threads;
} chunk_ctx;

static bl_status run_chunk(const chunk_ctx *c, bl_error *err)
{
    const bl_rp_target *t = c->t;
    const size_t nb = c->nb;
    bl_res_state **built = calloc(nb, sizeof *built); /* distinct wirings, by construction seed */
    const bl_res_state **slots = calloc(nb, sizeof *slots);
    uint8_t *active = calloc(nb, 1);
    double *inputs = calloc(nb * BL_DC_INPUTS, sizeof *inputs);
    const int oosawa = t->node.kind == BL_RES_FALANDAYS && t->node.oosawa;
    double *noise = oosawa ? calloc(nb * (size_t)t->count, sizeof *noise) : NULL;
    bl_res_batch *batch = NULL;
    bl_status st = built && slots && active && inputs && (!oosawa || noise)
                       ? BL_OK
                       : bl_fail(err, BL_ERR_NOMEM, "evaluation: cannot allocate a batch of %zu", nb);
    size_t n_built = 0;
    for (size_t k = 0; !st && k < nb; k++) {
        size_t m = 0;
        while (m < k && c->tr[m].seed_construction != c->tr[k].seed_construction)
            m++;
        if (m < k) {
            slots[k] = slots[m];
            continue;
        }
        st = bl_res_state_construct(&t->node, t->count, BL_DC_INPUTS, BL_DC_EFFECTORS, c->tr[k].seed_construction,
                                    &built[n_built], err);
        if (!st)
            slots[k] = built[n_built++];
    }
    if (!st)
        st = bl_res_batch_create(nb, slots, &batch, err);
    for (size_t k = 0; k < n_built; k++)
        bl_res_state_destroy(built[k]); /* the batch holds copies */
    if (!st) {
        bl_res_batch_set_threads(batch, c->threads);
        for (size_t k = 0; k < nb; k++)
            active[k] = 1;
    }
    const int threads = batch ? bl_res_batch_threads(batch) : 1;
    const uint32_t n = t->count;
    for (uint32_t tick = 0; !st && tick < t->horizon; tick++) {
        size_t live = 0;
        for (size_t k = 0; k < nb; k++)
            live += active[k];
        if (!live)
            break;
        for (size_t k = 0; k < t->n_interventions; k++) {
            if (t->interventions[k].tick != tick + 1)
                continue;
            if (t->interventions[k].verb == BL_VERB_FREEZE_WEIGHTS)
                bl_res_batch_freeze_weights(batch, active);
            else
                bl_res_batch_freeze_plasticity(batch, active);
        }
        for (size_t k = 0; k < nb; k++) {
            double *u = inputs + k * BL_DC_INPUTS;
            bl_dc_stimulus(&t->task, &c->tr[k].world, tick, u);
            for (int q = 0; q < BL_DC_INPUTS; q++)
                u[q] = u[q] * t->input_gain;
        }
        if (oosawa) {
            const long long cells = (long long)nb * n;
            bl_res_trial *tr = c->tr;
#pragma omp parallel for num_threads(threads) if (threads > 1 && cells >= 4096) schedule(static)
            for (long long x = 0; x < cells; x++) {
                size_t k = (size_t)(x / n);
                uint32_t i = (uint32_t)(x % n);
                noise[x] = active[k] ? bl_res_noise(tr[k].seed_drive, tick, i) : 0.0;
            }
        }
        st = bl_res_batch_step(batch, inputs, noise, active, err);
        for (size_t k = 0; !st && k < nb; k++) {
            if (!active[k])
                continue;
            const bl_res_state *s = bl_res_batch_slot(batch, k);
            bl_res_trial *tr = &c->tr[k];
            if (!s->finite) {
                tr->score.failed = 1;
                active[k] = 0;
            } else if (bl_dc_score_tick(&tr->score, &tr->world, tick, s->effectors)) {
                active[k] = 0;
            }
        }
    }
    bl_res_batch_destroy(batch);
    free(built);
    free(slots);
    free(active);
    free(inputs);
    free(noise);
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

static bl_status summarise(const bl_res_plan *rp, bl_res_evaluation *ev, bl_error *err)
{
    const uint32_t blocks = rp->blocks, per = rp->trials_per_block;
    double *values = malloc(blocks * sizeof *values), *means = malloc(BOOTSTRAP_RESAMPLES * sizeof *means);
    if (!values || !means) {
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
                    s->ties += (uint32_t)tr->score.tie;
                    total = total + (double)tr->score.outcome;
                } else {
                    s->failed++;
                    complete = 0;
                }
            }
            bm[b] = complete ? total / (double)per : NAN;
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
        s->accuracy = total / (double)nv;
        if (nv < 2)
            continue;
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
    return BL_OK;
}

bl_status bl_res_evaluate_progress(const bl_res_plan *rp, int threads, int batch, FILE *progress,
                                   bl_res_evaluation **out, bl_error *err)
{
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
    ev->threads = threads >= 0 ? threads : rp->threads;
    if (ev->threads == 0)
        ev->threads = omp_get_num_procs();
    ev->batch = batch > 0 ? (uint32_t)batch : rp->batch_size;
    for (size_t ti = 0; ti < rp->n_targets; ti++)
        for (uint32_t b = 0; b < blocks; b++)
            for (uint32_t k = 0; k < per; k++) {
                bl_res_trial *tr = &ev->trials[(ti * blocks + b) * per + k];
                tr->target = (uint32_t)ti;
                tr->block = b;
                tr->trial = k;
                tr->seed_world = bl_seed_derive(rp->root_seed, rp->partition_word, BL_SEED_WORLD, b, k);
                tr->seed_construction = construction_seed(rp, b, k);
                tr->seed_drive = bl_seed_derive(rp->root_seed, rp->partition_word, BL_SEED_DRIVE, b, k);
                tr->seed_control = bl_seed_derive(rp->root_seed, rp->partition_word, BL_SEED_CONTROL, b, k);
                bl_dc_world_draw(&rp->targets[ti].task, tr->seed_world, &tr->world);
                bl_dc_score_init(&tr->score);
            }
    bl_status st = BL_OK;
    size_t done = 0;
    for (size_t ti = 0; !st && ti < rp->n_targets; ti++) {
        const bl_rp_target *t = &rp->targets[ti];
        bl_res_trial *first = &ev->trials[ti * blocks * per];
        const size_t jobs = (size_t)blocks * per;
        if (t->controller != BL_CTRL_RESERVOIR) {
            for (size_t j = 0; j < jobs; j++)
                run_control(t, &first[j]);
            done += jobs;
            continue;
        }
        for (size_t j0 = 0; !st && j0 < jobs; j0 += ev->batch) {
            chunk_ctx c = {rp, t, first + j0, jobs - j0 < ev->batch ? jobs - j0 : ev->batch, ev->threads};
            st = run_chunk(&c, err);
            done += c.nb;
            if (progress) {
                fprintf(progress, "\r%s: %zu / %zu trials", rp->id, done, n);
                fflush(progress);
            }
        }
    }
    if (progress && done)
        fprintf(progress, "\n");
    for (size_t i = 0; !st && i < n; i++) {
        bl_res_trial *tr = &ev->trials[i];
        tr->ticks = tr->score.ticks;
        tr->status = tr->score.failed ? BL_TRIAL_FAILED : tr->score.done ? BL_TRIAL_COMPLETED : BL_TRIAL_INCOMPLETE;
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
