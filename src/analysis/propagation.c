/* Propagation statistics (the seed runtime's propagation_stats) and rates. */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/analysis.h"

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

void bl_rates(const int32_t *counts, uint32_t trials, uint64_t n, double duration_s, double *mean,
              double *sd)
{
    for (uint64_t i = 0; i < n; i++) {
        double sum = 0;
        for (uint32_t t = 0; t < trials; t++)
            sum += counts[(uint64_t)t * n + i] / duration_s;
        double m = sum / trials, ss = 0;
        for (uint32_t t = 0; t < trials; t++) {
            double d = counts[(uint64_t)t * n + i] / duration_s - m;
            ss += d * d;
        }
        mean[i] = m;
        sd[i] = trials > 1 ? sqrt(ss / (trials - 1)) : 0.0;
    }
}

static int contains_ci(const char *hay, const char *needle)
{
    size_t ln = strlen(needle);
    for (; *hay; hay++) {
        size_t k = 0;
        while (k < ln && hay[k] && tolower((unsigned char)hay[k]) == needle[k])
            k++;
        if (k == ln)
            return 1;
    }
    return 0;
}

static const char *const class_columns[] = {"cell_type", "super_class", "cell_class"};

static int class_matches(const bl_connectome *c, uint64_t neuron, int descending)
{
    for (size_t j = 0; j < sizeof class_columns / sizeof class_columns[0]; j++) {
        int col = bl_connectome_column(c, class_columns[j]);
        if (col < 0)
            continue;
        const char *v = bl_connectome_value(c, (size_t)col, neuron);
        if (descending ? ((tolower((unsigned char)v[0]) == 'd' && tolower((unsigned char)v[1]) == 'n') ||
                          contains_ci(v, "descending"))
                       : contains_ci(v, "motor"))
            return 1;
    }
    return 0;
}

int bl_neuron_is_descending(const bl_connectome *c, uint64_t neuron) { return class_matches(c, neuron, 1); }
int bl_neuron_is_motor(const bl_connectome *c, uint64_t neuron) { return class_matches(c, neuron, 0); }

bl_propagation bl_propagation_stats(const bl_connectome *c, const int32_t *counts,
                                    const uint8_t *stimulated, const int32_t *depth)
{
    bl_propagation p = {0};
    uint64_t n = bl_connectome_n_neurons(c);
    for (uint64_t i = 0; i < n; i++) {
        p.spikes += (uint64_t)counts[i];
        if (counts[i] <= 0)
            continue;
        p.active_neurons++;
        p.downstream_active_neurons += !stimulated[i];
        if (depth[i] > p.propagation_depth)
            p.propagation_depth = depth[i];
        p.descending_active_neurons += bl_neuron_is_descending(c, i);
        p.motor_active_neurons += bl_neuron_is_motor(c, i);
    }
    return p;
}
