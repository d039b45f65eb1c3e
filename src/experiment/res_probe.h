/* The probe over a reservoir evaluation (res_probe.c), private to src/experiment. */
#ifndef BL_EXPERIMENT_RES_PROBE_H
#define BL_EXPERIMENT_RES_PROBE_H

#include "experiment/res_run_impl.h"

/* probe.json (malloc'd; NULL when out of memory). */
char *bl_res_probe_json(const bl_res_plan *rp, const bl_res_evaluation *ev);

#endif
