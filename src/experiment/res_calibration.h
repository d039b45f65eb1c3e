/* Reference-null calibrations and normalised scores (res_calibration.c),
 * private to src/experiment. */
#ifndef BL_EXPERIMENT_RES_CALIBRATION_H
#define BL_EXPERIMENT_RES_CALIBRATION_H

#include "brainlesslab/task.h"
#include "plan/plan_reservoir.h"

typedef struct bl_res_calibration bl_res_calibration;

/* SHA-256 (hex) of the task, its resolved options, horizon and warmup. */
void bl_res_signature(const bl_rp_target *t, char hex[65]);
/* calibration.json of a calibrate run (malloc'd; NULL when out of memory). */
char *bl_res_calibration_json(const bl_res_plan *rp, const bl_res_evaluation *ev);
bl_status bl_res_calibration_load(const char *record, bl_res_calibration **out, bl_error *err);
void bl_res_calibration_destroy(bl_res_calibration *c);
/* A calibration given for a plan must calibrate every target that it would
 * normalise (continuing tasks; episode probe tasks use their analytic chance):
 * BL_ERR_INVALID naming the first target it does not match, or saying that
 * no target needs one. Refused before a record is reserved. */
bl_status bl_res_calibration_check(const bl_res_plan *rp, const bl_res_calibration *c, bl_error *err);
/* (raw - null) / (upper - null), NaN with *status saying why not. */
double bl_res_normalised(const bl_rp_target *t, double raw, const bl_res_calibration *c, const char **status);

#endif
