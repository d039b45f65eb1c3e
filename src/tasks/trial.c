/* One trial's changing state, and the two steps every task shares: the
 * effector check and accumulation, and advancing while the trial runs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/task_ops.h"

bl_status bl_task_state_init(const bl_task_world *w, bl_task_state *s, bl_error *err)
{
    memset(s, 0, sizeof *s);
    memcpy(s->physical, w->physical, sizeof s->physical);
    s->finite = 1;
    s->decisions = calloc((size_t)w->n_rounds + 1, 1);
    s->ties = calloc((size_t)w->n_rounds + 1, 1);
    if (!s->decisions || !s->ties) {
        bl_task_state_free(s);
        return bl_fail(err, BL_ERR_NOMEM, "task state: cannot allocate %u rounds", w->n_rounds);
    }
    return BL_OK;
}

void bl_task_state_free(bl_task_state *s)
{
    free(s->decisions);
    free(s->ties);
    s->decisions = s->ties = NULL;
}

static int valid(double v) { return isfinite(v) && v >= 0.0 && v <= 1.0; }

void bl_task_accumulate(const bl_task_world *w, bl_task_state *s, const double eff[2], uint32_t frame)
{
    if (s->done || !s->finite)
        return;
    for (int e = 0; e < 2; e++) {
        if (!valid(eff[e]))
            s->finite = 0;
        if (w->kind == BL_TASK_CARTPOLE_PLANK_EASY) {
            if (frame == 1)
                s->votes[e] = 0.0;
            s->votes[e] = s->votes[e] + eff[e];
        } else {
            s->last[e] = eff[e];
        }
    }
}

void bl_task_advance(const bl_task_world *w, bl_task_state *s, uint32_t warmup)
{
    if (s->done || !s->finite)
        return;
    bl_task_ops_of(w->kind)->advance(w, s, warmup);
    for (int k = 0; k < 8; k++)
        if (!isfinite(s->physical[k]))
            s->finite = 0;
    if (s->done && !isfinite(s->outcome))
        s->finite = 0;
}
