/* What every operation's runner shares (src/experiment): reserving a fresh
 * record, filling its manifest from the plan (inputs, resolved plan, seeds, a
 * copy of the plan file), writing JSON and .npy artifacts, a run log kept in
 * the record, and sealing or failing it at the end. */
#ifndef BL_XP_IMPL_H
#define BL_XP_IMPL_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "brainlesslab/npy.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/record.h"

/* ROOT/<plan id>-<UTC time>-<hash prefix>[-k]: a new name for every run. */
bl_status bl_xp_reserve(const bl_plan *plan, const char *root, bl_record **rec, bl_error *err);
/* The same for a record that no plan describes (compare): ROOT/<id>-<time>-<hash prefix>. */
bl_status bl_xp_reserve_named(const char *root, const char *id, const char *hash, bl_record **rec, bl_error *err);
/* Inputs (hashed), the resolved plan, the seeds section, and plan.toml: a
 * byte copy of the plan file as it was read (its hash is the "plan" input's). */
bl_status bl_xp_begin(const bl_plan *plan, bl_record *rec, bl_error *err);
/* Write o (consumed) as indented JSON at name inside the record. */
bl_status bl_xp_write_json(bl_record *rec, const char *name, cJSON *o, bl_error *err);
bl_status bl_xp_write_npy(bl_record *rec, const char *name, bl_dtype dt, int nd, const uint64_t *shape,
                          const void *data, bl_error *err);
/* st == BL_OK: seal DONE; otherwise mark FAILED with err's message, adding
 * the record's name to err. Returns the final status. */
bl_status bl_xp_finish(bl_record *rec, bl_status st, bl_error *err);

/* run.log inside the record: one line per event, "elapsed_s  message", so
 * that a record tells how its run went (phases, waves, progress). */
typedef struct bl_xp_log {
    FILE *f;
    double t0;
} bl_xp_log;
void bl_xp_log_open(bl_xp_log *log, bl_record *rec);
void bl_xp_logf(bl_xp_log *log, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void bl_xp_log_close(bl_xp_log *log);

double bl_xp_now(void);

#endif
