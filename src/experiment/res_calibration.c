/* Reference-null calibration and normalised scores.
 *
 * A calibrate plan runs the reference_null control on its own seed bank
 * ("calibration"); its record's calibration.json holds, per target, the null
 * mean of the task's outcome, its standard error and bootstrap interval, the
 * task's upper bound and a signature (SHA-256 of task, resolved options,
 * horizon and warmup) naming exactly which task the numbers describe.
 *
 * Normalised score = (raw - null mean) / (upper bound - null mean): for the
 * binary episode tasks the analytic null (chance 0.5, bound 1); for the
 * continuing tasks the null of a calibration record with the same signature
 * (`run --calibration RECORD`), else none ("calibration_unavailable"). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/hash.h"
#include "experiment/res_calibration.h"
#include "plan/plan_reservoir.h"
#include "tasks/task_ops.h"
#include "core/json_check.h"

void bl_res_signature(const bl_rp_target *t, char hex[65])
{
    char text[16384];
    size_t used = (size_t)snprintf(text, sizeof text, "%s|%u|%u", bl_task_name(t->task.kind), t->horizon, t->warmup);
    for (const char *const *n = bl_task_option_names(t->task.kind); *n && used < sizeof text; n++) {
        char v[4096];
        if (bl_task_option_json(&t->task, *n, v, sizeof v))
            snprintf(v, sizeof v, "?");
        used += (size_t)snprintf(text + used, sizeof text - used, "|%s=%s", *n, v);
    }
    bl_sha256_buffer(text, strlen(text), hex);
}

static double *completed_outcomes(const bl_res_evaluation *ev, size_t ti, size_t per_target, size_t *n)
{
    double *v = malloc((per_target + 1) * sizeof *v);
    *n = 0;
    for (size_t i = 0; v && i < per_target; i++) {
        const bl_res_trial *tr = bl_res_evaluation_trial(ev, ti * per_target + i);
        if (tr->status == BL_TRIAL_COMPLETED)
            v[(*n)++] = tr->score.outcome;
    }
    return v;
}

char *bl_res_calibration_json(const bl_res_plan *rp, const bl_res_evaluation *ev)
{
    cJSON *root = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(root, "calibrations");
    const size_t per = (size_t)rp->blocks * rp->trials_per_block;
    for (size_t ti = 0; ti < rp->n_targets; ti++) {
        const bl_rp_target *t = &rp->targets[ti];
        const bl_res_summary *s = bl_res_evaluation_summary(ev, ti);
        size_t n;
        double *v = completed_outcomes(ev, ti, per, &n);
        double mean = NAN, se = NAN;
        if (v && n) {
            double total = 0.0;
            for (size_t k = 0; k < n; k++)
                total = total + v[k];
            mean = total / (double)n;
            if (n > 1) {
                double ss = 0.0;
                for (size_t k = 0; k < n; k++)
                    ss = ss + (v[k] - mean) * (v[k] - mean);
                se = sqrt(ss / (double)(n - 1)) / sqrt((double)n);
            }
        }
        free(v);
        char sig[65];
        bl_res_signature(t, sig);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(list, o);
        cJSON_AddStringToObject(o, "target", t->id);
        cJSON_AddStringToObject(o, "task", bl_task_name(t->task.kind));
        cJSON_AddStringToObject(o, "key", t->def.outcome_key);
        cJSON_AddStringToObject(o, "signature", sig);
        cJSON_AddNumberToObject(o, "horizon", t->horizon);
        cJSON_AddNumberToObject(o, "warmup", t->warmup);
        cJSON_AddStringToObject(o, "null_policy", "reference_null (iid uniform random action)");
        cJSON_AddStringToObject(o, "rng_scheme", BL_SEED_SCHEME);
        cJSON_AddStringToObject(o, "seed_partition", rp->partition);
        cJSON_AddStringToObject(o, "method", "empirical");
        cJSON_AddNumberToObject(o, "trajectories", (double)n);
        cJSON_AddNumberToObject(o, "upper_bound", t->def.upper_bound);
        if (isfinite(mean))
            cJSON_AddNumberToObject(o, "null_mean", mean);
        else
            cJSON_AddNullToObject(o, "null_mean");
        if (isfinite(se))
            cJSON_AddNumberToObject(o, "null_standard_error", se);
        else
            cJSON_AddNullToObject(o, "null_standard_error");
        if (s && isfinite(s->low)) {
            cJSON *iv = cJSON_AddArrayToObject(o, "null_interval");
            cJSON_AddItemToArray(iv, cJSON_CreateNumber(s->low));
            cJSON_AddItemToArray(iv, cJSON_CreateNumber(s->high));
        } else {
            cJSON_AddNullToObject(o, "null_interval");
        }
    }
    char *text = bl_json_print(root, 1);
    cJSON_Delete(root);
    return text;
}

struct bl_res_calibration {
    size_t n;
    char (*sig)[65];
    double *null_mean, *upper;
    char path[4096];
};

bl_status bl_res_calibration_load(const char *record, bl_res_calibration **out, bl_error *err)
{
    *out = NULL;
    bl_res_calibration *c = calloc(1, sizeof *c);
    if (!c)
        return bl_fail(err, BL_ERR_NOMEM, "out of memory");
    snprintf(c->path, sizeof c->path, "%s/calibration.json", record);
    FILE *f = fopen(c->path, "rb");
    char *text = NULL;
    long len = -1;
    if (f && !fseek(f, 0, SEEK_END) && (len = ftell(f)) >= 0 && len < (1 << 24) && !fseek(f, 0, SEEK_SET)) {
        text = malloc((size_t)len + 1);
        if (text && fread(text, 1, (size_t)len, f) == (size_t)len)
            text[len] = 0;
        else {
            free(text);
            text = NULL;
        }
    }
    if (f)
        fclose(f);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "calibrations");
    const int n = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : -1;
    if (n < 0) {
        cJSON_Delete(root);
        bl_status st = bl_fail(err, BL_ERR_FORMAT, "%s: not a calibration record (no readable calibrations list)",
                               c->path);
        free(c);
        return st;
    }
    c->sig = calloc((size_t)n + 1, sizeof *c->sig);
    c->null_mean = calloc((size_t)n + 1, sizeof *c->null_mean);
    c->upper = calloc((size_t)n + 1, sizeof *c->upper);
    if (!c->sig || !c->null_mean || !c->upper) {
        cJSON_Delete(root);
        bl_res_calibration_destroy(c);
        return bl_fail(err, BL_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; k < n; k++) {
        const cJSON *o = cJSON_GetArrayItem(list, k);
        const cJSON *sig = cJSON_GetObjectItemCaseSensitive(o, "signature");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "null_mean");
        const cJSON *u = cJSON_GetObjectItemCaseSensitive(o, "upper_bound");
        if (!cJSON_IsString(sig) || strlen(sig->valuestring) != 64 || !cJSON_IsNumber(u)) {
            cJSON_Delete(root);
            bl_res_calibration_destroy(c);
            return bl_fail(err, BL_ERR_FORMAT, "calibration.json: calibrations[%d]: signature or upper_bound missing", k);
        }
        snprintf(c->sig[c->n], 65, "%s", sig->valuestring);
        c->null_mean[c->n] = cJSON_IsNumber(m) ? m->valuedouble : NAN;
        c->upper[c->n] = u->valuedouble;
        c->n++;
    }
    cJSON_Delete(root);
    *out = c;
    return BL_OK;
}

void bl_res_calibration_destroy(bl_res_calibration *c)
{
    if (!c)
        return;
    free(c->sig);
    free(c->null_mean);
    free(c->upper);
    free(c);
}

double bl_res_normalised(const bl_rp_target *t, double raw, const bl_res_calibration *c, const char **status)
{
    *status = "calibration_unavailable";
    if (!isfinite(raw)) {
        *status = "no_scalar_outcome";
        return NAN;
    }
    double null_mean = NAN, upper = t->def.upper_bound;
    if (t->def.probe && isfinite(t->def.chance)) {
        null_mean = t->def.chance;
        *status = "null_adjusted_analytic";
    } else if (c) {
        char sig[65];
        bl_res_signature(t, sig);
        for (size_t k = 0; k < c->n; k++)
            if (!strcmp(c->sig[k], sig)) {
                null_mean = c->null_mean[k];
                upper = c->upper[k];
                *status = "null_adjusted_empirical";
            }
    }
    if (!isfinite(null_mean))
        return NAN;
    const double denominator = upper - null_mean;
    if (!(denominator > 0.0)) {
        *status = "invalid_calibration_denominator";
        return NAN;
    }
    return (raw - null_mean) / denominator;
}

bl_status bl_res_calibration_check(const bl_res_plan *rp, const bl_res_calibration *c, bl_error *err)
{
    size_t needing = 0;
    for (size_t ti = 0; ti < rp->n_targets; ti++) {
        const bl_rp_target *t = &rp->targets[ti];
        if (t->def.probe && isfinite(t->def.chance))
            continue; /* normalised by the task's analytic chance, never by a calibration */
        needing++;
        char sig[65];
        bl_res_signature(t, sig);
        int found = 0;
        for (size_t k = 0; k < c->n && !found; k++)
            found = !strcmp(c->sig[k], sig);
        if (!found)
            return bl_fail(err, BL_ERR_INVALID,
                           "%s: calibrates no target like target \"%s\" (task %s with its options, horizon and "
                           "warmup; signature %.12s...): run the matching calibrate plan, or leave --calibration out",
                           c->path, t->id, bl_task_name(t->task.kind), sig);
    }
    if (!needing)
        return bl_fail(err, BL_ERR_INVALID,
                       "%s: the plan has no target a calibration normalises (its tasks are normalised by their "
                       "analytic chance): leave --calibration out", c->path);
    return BL_OK;
}
