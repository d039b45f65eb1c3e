/* The reference backend: each trial is its model's reference kernel (the
 * plainest loop over the model's equations, one neuron at a time, in the
 * spec's order; src/models/lif_<model>.c). It is not optimised; it is the truth every
 * other backend is compared with. */
#include <inttypes.h>
#include <stdlib.h>

#include "engine/engine_impl.h"

typedef struct ref_state {
    const bl_network *net;
    const bl_context *ctx; /* asked to stop once per delay window (below) */
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
    s->ctx = ctx;
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
    /* The kernels (src/models/) know nothing of contexts; they append every
     * step's spikes to the result, which asks the context at the end of each
     * delay window while this run is in flight (bl_result_poll_cancel). */
    bl_result_poll_cancel(result, s->ctx, (uint64_t)s->net->delay_steps);
    bl_status st = BL_OK;
    for (uint32_t t = first_trial; !st && t < first_trial + n_trials; t++) {
        st = s->net->model->ref->trial(s->ws, s->net, t, n_steps, result, err);
        if (!st)
            bl_result_add_steps(result, n_steps); /* the reference reports whole trials */
    }
    bl_result_poll_cancel(result, NULL, 0);
    return st;
}

/* No snapshots: the trial's state is the model kernel's own working memory
 * (src/models/); a reference run resumes at trial boundaries. */
const bl_backend bl_backend_reference = {
    .name = "reference",
    .caps = BL_BACKEND_REF_KERNEL | BL_BACKEND_PROBES,
    .create = ref_create,
    .run = ref_run,
    .destroy = ref_destroy,
};
