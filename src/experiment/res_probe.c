/* The probe over an evaluation (docs/reservoir.md, "Probe"): for each
 * reservoir target, block and point (cue_end, delay_end, response), one split
 * of the block's whole trials into fit / validation / evaluation (the same
 * split in every block: a permutation from split_seed), the ridge probe with
 * lambda chosen on validation from {1e-4, 1e-2, 1, 100}, a label-permutation
 * null (fit and validation labels permuted separately from permutation_seed,
 * evaluation truth kept) and the constant baseline (the fit trials' majority
 * label, 1 on a tie). Events: probe_events.npy; results: probe.json. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/probe.h"
#include "experiment/res_probe.h"
#include "plan/plan_reservoir.h"
#include "core/json_check.h"

static const char *const points[3] = {"cue_end", "delay_end", "response"};
static const double grid[4] = {1e-4, 1e-2, 1.0, 100.0};

static cJSON *ids(const uint32_t *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t k = 0; a && k < n; k++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[k]));
    return a;
}

static double share(const int *pred, const int *labels, const uint32_t *idx, size_t n)
{
    size_t right = 0;
    for (size_t k = 0; k < n; k++)
        right += pred[idx[k]] == labels[idx[k]];
    return (double)right / (double)n;
}

static int both_classes(const int *labels, const uint32_t *idx, size_t n)
{
    int seen[3] = {0, 0, 0};
    for (size_t k = 0; k < n; k++)
        seen[labels[idx[k]]] = 1;
    return seen[1] && seen[2];
}

static void decode_one(const bl_res_plan *rp, const bl_res_evaluation *ev, size_t ti, uint32_t b, int point,
                       const uint32_t *order, const uint32_t *pfit, const uint32_t *pval, cJSON *list)
{
    const bl_rp_target *t = &rp->targets[ti];
    const size_t per = rp->trials_per_block, f = t->count, W = ev->probe_width;
    const size_t nf = rp->probe_fit, nv = rp->probe_validation, ne = rp->probe_evaluation;
    const uint32_t *fit = order, *val = order + nf, *eva = order + nf + nv;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(list, o);
    cJSON_AddStringToObject(o, "target", t->id);
    cJSON_AddStringToObject(o, "task", bl_task_name(t->task.kind));
    cJSON_AddNumberToObject(o, "block", b);
    cJSON_AddStringToObject(o, "point", points[point]);
    cJSON_AddStringToObject(o, "channel", "emitted_activity");
    double *x = malloc(per * f * sizeof *x + 1);
    int *labels = malloc(per * sizeof *labels + 1), *perm = malloc(per * sizeof *perm + 1);
    double *native = malloc(per * sizeof *native + 1);
    const char *status = NULL;
    if (!x || !labels || !perm || !native)
        status = "out_of_memory";
    for (size_t k = 0; !status && k < per; k++) {
        const bl_res_trial *tr = &ev->trials[(ti * rp->blocks + b) * per + k];
        if (tr->status != BL_TRIAL_COMPLETED) {
            status = "a_trial_did_not_complete";
            break;
        }
        labels[k] = (int)tr->world.label;
        native[k] = tr->score.outcome;
        const double *src = ev->probe_x + (((ti * rp->blocks + b) * per + k) * 3 + (size_t)point) * W;
        for (size_t j = 0; j < f; j++) {
            if (!isfinite(src[j]))
                status = "a_point_was_not_reached";
            x[k * f + j] = src[j];
        }
    }
    if (!status && per != nf + nv + ne)
        status = "trials_per_block_is_not_fit_plus_validation_plus_evaluation";
    if (!status && !(both_classes(labels, fit, nf) && both_classes(labels, val, nv) && both_classes(labels, eva, ne)))
        status = "a_split_lacks_a_class";
    bl_probe_fit fitted = {0}, null = {0};
    bl_error err = {0};
    if (!status) {
        memcpy(perm, labels, per * sizeof *perm);
        for (size_t k = 0; k < nf; k++)
            perm[fit[k]] = labels[fit[pfit[k]]];
        for (size_t k = 0; k < nv; k++)
            perm[val[k]] = labels[val[pval[k]]];
        if (bl_probe_ridge(x, labels, per, f, fit, nf, val, nv, grid, 4, &fitted, &err) ||
            bl_probe_ridge(x, perm, per, f, fit, nf, val, nv, grid, 4, &null, &err))
            status = "solve_failed";
    }
    cJSON_AddStringToObject(o, "status", status ? status : "fitted");
    if (!status) {
        size_t ones = 0;
        for (size_t k = 0; k < nf; k++)
            ones += labels[fit[k]] == 1;
        const int constant = 2 * ones >= nf ? 1 : 2;
        size_t right = 0;
        double nat = 0.0;
        for (size_t k = 0; k < ne; k++) {
            right += labels[eva[k]] == constant;
            nat = nat + native[eva[k]];
        }
        cJSON_AddNumberToObject(o, "accuracy", share(fitted.predictions, labels, eva, ne));
        cJSON_AddNumberToObject(o, "permutation_accuracy", share(null.predictions, labels, eva, ne));
        cJSON_AddNumberToObject(o, "constant_accuracy", (double)right / (double)ne);
        cJSON_AddNumberToObject(o, "constant_prediction", constant);
        cJSON_AddNumberToObject(o, "native_accuracy", nat / (double)ne);
        cJSON_AddNumberToObject(o, "chance_accuracy", 0.5);
        cJSON_AddNumberToObject(o, "lambda", fitted.lambda);
        cJSON_AddNumberToObject(o, "validation_accuracy", fitted.validation_accuracy);
        cJSON_AddNumberToObject(o, "permutation_lambda", null.lambda);
        cJSON_AddNumberToObject(o, "intercept", fitted.intercept);
        cJSON *wts = cJSON_AddArrayToObject(o, "weights");
        for (size_t j = 0; j < f; j++)
            cJSON_AddItemToArray(wts, cJSON_CreateNumber(fitted.weights[j]));
        cJSON *pl = cJSON_AddArrayToObject(o, "permutation_labels");
        for (size_t k = 0; k < per; k++)
            cJSON_AddItemToArray(pl, cJSON_CreateNumber(perm[k]));
    }
    cJSON_AddItemToObject(o, "fit_trials", ids(fit, nf));
    cJSON_AddItemToObject(o, "validation_trials", ids(val, nv));
    cJSON_AddItemToObject(o, "evaluation_trials", ids(eva, ne));
    bl_probe_fit_free(&fitted);
    bl_probe_fit_free(&null);
    free(x);
    free(labels);
    free(perm);
    free(native);
}

char *bl_res_probe_json(const bl_res_plan *rp, const bl_res_evaluation *ev)
{
    const size_t per = rp->trials_per_block;
    uint32_t *order = malloc(per * sizeof *order + 1), *pfit = malloc((rp->probe_fit + 1) * sizeof *pfit);
    uint32_t *pval = malloc((rp->probe_validation + 1) * sizeof *pval);
    cJSON *root = cJSON_CreateObject();
    char *text = NULL;
    if (order && pfit && pval && root) {
        bl_probe_permutation(rp->probe_split_seed, 1, order, per);
        bl_probe_permutation(rp->probe_permutation_seed, 2, pfit, rp->probe_fit);
        bl_probe_permutation(rp->probe_permutation_seed, 3, pval, rp->probe_validation);
        cJSON_AddStringToObject(root, "split", "order = permutation(split_seed, domain 1) of the block's trials: "
                                              "fit, validation, evaluation in that order");
        cJSON *list = cJSON_AddArrayToObject(root, "results");
        for (size_t ti = 0; ti < rp->n_targets; ti++)
            for (uint32_t b = 0; b < rp->blocks; b++)
                for (int p = 0; p < 3; p++)
                    decode_one(rp, ev, ti, b, p, order, pfit, pval, list);
        text = bl_json_print(root, 1);
    }
    cJSON_Delete(root);
    free(order);
    free(pfit);
    free(pval);
    return text;
}
