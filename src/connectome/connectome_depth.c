/* Shortest directed path depth (in edges) from a set of neurons: what a
 * selector's `from` + `depth` and a run's depth-from-stimulus both read.
 * Declared in connectome.h, beside the graph it searches. */
#include <inttypes.h>
#include <stdlib.h>

#include "brainlesslab/connectome.h"

bl_status bl_shortest_depths(const bl_connectome *c, const int32_t *sources, size_t n_sources,
                             int32_t *depth, bl_error *err)
{
    uint64_t n = bl_connectome_n_neurons(c);
    if (bl_connectome_parts(c) > 1)
        return bl_fail(err, BL_ERR_INVALID, "depth search: the connectome is part %d of %d (one rank's share of the "
                       "edges); use bl_shortest_depths_merged", bl_connectome_part(c), bl_connectome_parts(c));
    const int64_t *off = bl_connectome_offsets(c);
    const int32_t *tgt = bl_connectome_targets(c);
    int32_t *queue = malloc((n ? n : 1) * sizeof *queue);
    if (!queue)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate a search queue for %" PRIu64 " neurons", n);
    for (uint64_t i = 0; i < n; i++)
        depth[i] = -1;
    uint64_t head = 0, tail = 0;
    for (size_t s = 0; s < n_sources; s++) {
        int32_t i = sources[s];
        if (i < 0 || (uint64_t)i >= n) {
            free(queue);
            return bl_fail(err, BL_ERR_INVALID, "source %zu: neuron %" PRId32 " outside 0..%" PRIu64,
                           s, i, n ? n - 1 : 0);
        }
        if (depth[i] < 0) {
            depth[i] = 0;
            queue[tail++] = i;
        }
    }
    while (head < tail) {
        int32_t i = queue[head++];
        for (int64_t k = off[i]; k < off[i + 1]; k++)
            if (depth[tgt[k]] < 0) {
                depth[tgt[k]] = depth[i] + 1;
                queue[tail++] = tgt[k];
            }
    }
    free(queue);
    return BL_OK;
}

bl_status bl_shortest_depths_merged(const bl_connectome *c, const int32_t *sources, size_t n_sources,
                                    int32_t *depth, bl_depth_merge_fn merge, void *user, bl_error *err)
{
    uint64_t n = bl_connectome_n_neurons(c);
    const int64_t *off = bl_connectome_offsets(c);
    const int32_t *tgt = bl_connectome_targets(c);
    for (uint64_t i = 0; i < n; i++)
        depth[i] = -1;
    for (size_t s = 0; s < n_sources; s++) {
        int32_t i = sources[s];
        if (i < 0 || (uint64_t)i >= n)
            return bl_fail(err, BL_ERR_INVALID, "source %zu: neuron %" PRId32 " outside 0..%" PRIu64, s, i,
                           n ? n - 1 : 0);
        depth[i] = 0;
    }
    /* Every part starts each level with the same depths; a part can only find
     * its own neurons (the targets it stores), each at level + 1, so the
     * maximum over the parts is the union of what they found. */
    for (int32_t level = 0;; level++) {
        int found = 0;
        for (uint64_t i = 0; i < n; i++) {
            if (depth[i] != level)
                continue;
            for (int64_t k = off[i]; k < off[i + 1]; k++)
                if (depth[tgt[k]] < 0)
                    depth[tgt[k]] = level + 1;
        }
        bl_status st = merge(depth, n, user, err);
        if (st)
            return st;
        for (uint64_t i = 0; i < n && !found; i++)
            found = depth[i] == level + 1;
        if (!found)
            return BL_OK;
    }
}
