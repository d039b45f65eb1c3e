/* bl_neuron_import_run (common_run.h). */
#include "connectome/import/common_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bl_status bl_neuron_import_run(bl_neuron_import *p, bl_ids *ids, bl_meta *meta, char **nt, bl_connectome **out,
                               char **report_out, bl_report *report, bl_error *err)
{
    *out = NULL;
    uint64_t n = ids->n;
    bl_edge_list edges = {0};
    bl_status st = BL_OK;
    for (size_t f = 0; st == BL_OK && f < p->n_edge_paths; f++) {
        bl_edge_read r = {0};
        bl_edge_source src = {p->edge_paths[f], p->pre, p->post, p->weight, NULL, NULL, 0, p->drop_unknown,
                              p->neurons_path};
        st = bl_edge_read_table(&src, ids, &edges, &r, err);
        if (st == BL_OK) {
            bl_report_add(report, "%s: %llu rows read", bl_import_base_name(p->edge_paths[f]), (unsigned long long)r.rows);
            if (r.dropped_rows)
                bl_report_add(report, "%s: %llu rows (%llu synapses) name a neuron outside the selection: dropped",
                              bl_import_base_name(p->edge_paths[f]), (unsigned long long)r.dropped_rows,
                              (unsigned long long)r.dropped_synapses);
            if (r.zero_rows)
                bl_report_add(report, "%s: %llu rows of weight 0 left out", bl_import_base_name(p->edge_paths[f]),
                              (unsigned long long)r.zero_rows);
        }
        bl_edge_read_free(&r);
    }
    uint64_t merged = 0;
    if (st == BL_OK)
        st = bl_edge_list_sum(&edges, p->edge_paths[0], &merged, err);
    if (st == BL_OK && merged)
        bl_report_add(report, "%llu rows summed into the edge of an earlier row with the same (pre, post)",
                      (unsigned long long)merged);
    if (st == BL_OK && p->min_synapses > 1) {
        uint64_t w = 0, cut = 0, cut_syn = 0;
        for (uint64_t e = 0; e < edges.n; e++) {
            if (edges.e[e].count < p->min_synapses) {
                cut++;
                cut_syn += (uint64_t)edges.e[e].count;
            } else {
                edges.e[w++] = edges.e[e];
            }
        }
        edges.n = w;
        bl_report_add(report, "--min-synapses %lld: %llu pairs (%llu synapses) below it dropped", (long long)p->min_synapses,
                      (unsigned long long)cut, (unsigned long long)cut_syn);
    }
    int8_t *signs = calloc((size_t)(n ? n : 1), 1);
    char **tcol = NULL;
    if (st == BL_OK && !signs)
        st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
    if (st == BL_OK)
        st = bl_meta_add_empty(meta, "transmitter", &tcol, err);
    uint64_t unknown = 0;
    for (uint64_t i = 0; st == BL_OK && i < n; i++) {
        const char *key = nt && nt[i] ? nt[i] : "";
        unknown += !key[0];
        if (!(tcol[i] = bl_import_strdup(key))) {
            st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
            break;
        }
        char where[512];
        snprintf(where, sizeof where, "neuron %s, %s %s", ids->text[i], p->nt_col ? "column" : "(no transmitter column)",
                 p->nt_col ? p->nt_col : "");
        int sg = 0;
        st = bl_sign_policy_lookup(p->policy, key, where, &sg, err);
        signs[i] = (int8_t)sg;
    }
    if (st == BL_OK && unknown)
        bl_report_add(report, "%llu neurons have no transmitter: they get the policy's unknown sign",
                      (unsigned long long)unknown);
    if (st == BL_OK)
        st = bl_import_finish(p->edge_paths[0], &edges, n, signs, ids->text, meta, p->policy, &p->info, report, out, err);
    if (st == BL_OK) {
        *report_out = report->text;
        report->text = NULL;
    }
    free(signs);
    bl_edge_list_free(&edges);
    return st;
}

void bl_neuron_import_release(char **nt, bl_ids *ids, bl_meta *meta, bl_report *report, bl_sign_policy *policy)
{
    for (uint64_t i = 0; nt && i < ids->n; i++)
        free(nt[i]);
    free(nt);
    bl_report_free(report);
    bl_meta_free(meta);
    bl_ids_free(ids);
    bl_sign_policy_destroy(policy);
}
