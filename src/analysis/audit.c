/* The audit's hierarchy: layers by shortest-path depth from a source
 * population, and edge statistics between every pair of layers (the seed's
 * visual_audit and layer_edge_stats, with excitatory and inhibitory edges
 * counted apart). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/analysis.h"

static int32_t edge_count(const bl_connectome *c, int64_t k)
{
    const int32_t *c32 = bl_connectome_counts(c);
    return c32 ? c32[k] : (int32_t)bl_connectome_counts16(c)[k];
}

bl_status bl_audit_layers(const bl_connectome *c, const int32_t *sources, size_t n_sources,
                          const uint8_t *split, int32_t *depth, uint8_t *layer, bl_audit_hierarchy *h,
                          bl_error *err)
{
    memset(h, 0, sizeof *h);
    bl_status st = bl_shortest_depths(c, sources, n_sources, depth, err);
    if (st)
        return st;
    static const char *const plain[] = {"sensory", "first_order", "second_order", "higher", "unreached"};
    static const char *const with_split[] = {"sensory", "first_order", "second_order", "higher", "central",
                                             "unreached"};
    h->n_layers = split ? 6 : 5;
    for (int l = 0; l < h->n_layers; l++)
        h->names[l] = split ? with_split[l] : plain[l];
    uint64_t n = bl_connectome_n_neurons(c);
    for (uint64_t i = 0; i < n; i++) {
        int32_t d = depth[i];
        int l = d < 0 ? h->n_layers - 1 : d < 3 ? d : (split && !split[i]) ? 4 : 3;
        layer[i] = (uint8_t)l;
        h->sizes[l]++;
    }
    const int64_t *off = bl_connectome_offsets(c);
    const int32_t *tgt = bl_connectome_targets(c);
    for (uint64_t i = 0; i < n; i++)
        for (int64_t k = off[i]; k < off[i + 1]; k++) {
            int32_t w = edge_count(c, k);
            int sign = w < 0;
            h->edges[0][sign][layer[i]][layer[tgt[k]]] += 1;
            h->edges[1][sign][layer[i]][layer[tgt[k]]] += w < 0 ? -(int64_t)w : w;
        }
    return BL_OK;
}

bl_status bl_degrees(const bl_connectome *c, int32_t *in_degree, int32_t *out_degree, bl_error *err)
{
    if (bl_connectome_parts(c) > 1)
        return bl_fail(err, BL_ERR_INVALID, "degrees: the connectome is part %d of %d; they need the whole graph",
                       bl_connectome_part(c), bl_connectome_parts(c));
    uint64_t n = bl_connectome_n_neurons(c);
    const int64_t *off = bl_connectome_offsets(c);
    const int32_t *tgt = bl_connectome_targets(c);
    memset(in_degree, 0, (n ? n : 1) * sizeof *in_degree);
    for (uint64_t i = 0; i < n; i++) {
        out_degree[i] = (int32_t)(off[i + 1] - off[i]);
        for (int64_t k = off[i]; k < off[i + 1]; k++)
            in_degree[tgt[k]]++;
    }
    return BL_OK;
}
