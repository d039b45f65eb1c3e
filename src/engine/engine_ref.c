/* The reference backend: each trial is its model's reference kernel (the
 * plainest loop over the model's equations, one neuron at a time, in the
 * spec's order; src/models/lif_<model>.c). It is not optimised; it is the truth every
 * other backend is compared with. */
#include <inttypes.h>
#include <stdlib.h>

#include "engine/engine_impl.h"

typedef struct ref_state {
    const bl_network *net;
    void *ws; /* the kernel's working memory */
} ref_state;

static void ref_destroy(void *p)
{
    ref_state *s = p;
    if (!s)
        return;
    if (s->ws)
        s->net->model->ref->free(s->ws);
    free(s);
}

static bl_status ref_create(bl_context *ctx, const bl_network *net, void **out, bl_error *err)
{
    ref_state *s = calloc(1, sizeof *s);
    if (!s)
        return bl_fail(err, BL_ERR_NOMEM, "reference backend: cannot allocate");
    s->net = net;
    if (!(s->ws = net->model->ref->alloc(net))) {
        ref_destroy(s);
        return bl_fail(err, BL_ERR_NOMEM, "reference backend: cannot allocate %s state for %" PRIu64 " neurons",
                       net->model->name, net->n_neurons);
    }
    *out = s;
    return BL_OK;
}

static bl_status ref_run(void *p, uint32_t first_trial, uint32_t n_trials, uint64_t n_steps,
                         bl_result *result, bl_error *err)
{
    ref_state *s = p;
    for (uint32_t t = first_trial; t < first_trial + n_trials; t++) {
        bl_status st = s->net->model->ref->trial(s->ws, s->net, t, n_steps, result, err);
        if (st)
            return st;
        bl_result_add_steps(result, n_steps); /* the reference reports whole trials */
    }
    return BL_OK;
}

const bl_backend bl_backend_reference = {"reference", ref_create, ref_run, ref_destroy, NULL};
