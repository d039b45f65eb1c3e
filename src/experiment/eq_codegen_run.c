/* Generated C for a connectome plan's equation model (src/models/lang/eq_cgen.c):
 * compiled, or loaded from the cache, once before the trials run; its cost
 * is reported apart (run.model_codegen.compile_ms), not inside the prepare
 * or run times. Generated code and the interpreter compute the same bits,
 * so how the model runs is not part of the plan: the record says which ran,
 * and keeps the source of what ran (model/generated.c) with the compiler's
 * identity and flags. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/eqmodel.h"
#include "experiment/xp_impl.h"

static bl_eq_model *model_of(const bl_plan *plan)
{
    /* The plan owns the compiled model; choosing its execution changes no
     * result, so the plan's const-ness does not cover it. */
    return (bl_eq_model *)(uintptr_t)bl_plan_lif_params(plan)->equations;
}

bl_status bl_xp_eq_codegen(const bl_plan *plan, bl_record *rec, bl_xp_log *log, bl_error *err)
{
    bl_eq_model *m = model_of(plan);
    if (!m)
        return BL_OK;
    bl_status st = bl_eq_model_codegen(m, BL_EQ_EXEC_AUTO, err);
    if (st)
        return st;
    if (log)
        bl_xp_logf(log, "model from equations: %s", bl_eq_model_exec_note(m));
    if (log && bl_eq_model_warnings(m))
        bl_xp_logf(log, "model from equations: warning: %s", bl_eq_model_warnings(m));
    const char *src = bl_eq_model_generated_source(m);
    if (!src || !rec)
        return BL_OK;
    char path[4096];
    if ((st = bl_record_path(rec, "model/generated.c", path, sizeof path, err)))
        return st;
    FILE *f = fopen(path, "w");
    int ok = f && fputs(src, f) >= 0;
    if (f && fclose(f))
        ok = 0;
    return ok ? BL_OK : bl_fail(err, BL_ERR_IO, "%s: cannot write", path);
}

void bl_xp_eq_codegen_json(const bl_plan *plan, cJSON *run)
{
    const bl_eq_model *m = bl_plan_lif_params(plan)->equations;
    char *text = m ? bl_eq_model_codegen_json(m) : NULL;
    cJSON *o = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (o)
        cJSON_AddItemToObject(run, "model_codegen", o);
}
