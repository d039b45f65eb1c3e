/* The "flyvis" runner (row "flyvis" of operations.c; plan section
 * src/plan/plan_flyvis.c): build the tiled connectome from the plan's bytes,
 * run the rate model under the moving edge and, when asked, the discrete
 * adjoint; keep the responses (each cell type's central cell, or every cell)
 * and the gradients, and seal the record (docs/solvers.md, "The flyvis
 * application"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/flyvis.h"
#include "brainlesslab/record.h"
#include "experiment/solvers_run.h"
#include "experiment/xp_impl.h"
#include "plan/plan_flyvis.h"

bl_status bl_xp_flyvis_run(bl_plan *plan, const bl_experiment_options *opt, void **out, bl_error *err)
{
    const bl_pk_flyvis *s = bl_pk_spec(plan);
    const size_t K = (size_t)s->steps, nt = s->n_types, ne = s->n_etypes;
    solver_result *r = calloc(1, sizeof *r);
    bl_flyvis *f = NULL;
    bl_record *rec = NULL;
    double *V = NULL, *resp = NULL, *t = NULL, *gt = NULL, *gb = NULL, *gs = NULL, J = 0;
    int32_t *cells = NULL, *ty = NULL, *u = NULL, *v = NULL;
    size_t *central = NULL;
    bl_status st = BL_OK;
    if (!r) {
        st = bl_fail(err, BL_ERR_NOMEM, "flyvis: out of memory");
        goto out;
    }
    if ((st = bl_flyvis_create_from_json(s->json, s->json_len, s->path, (int)s->extent, s->n_syn_fill, &f, err)))
        goto out;
    const size_t n = bl_flyvis_n_cells(f);
    V = malloc((K + 1) * n * sizeof *V);
    resp = malloc((K + 1) * nt * sizeof *resp);
    t = malloc((K + 1) * sizeof *t);
    gt = malloc(nt * sizeof *gt);
    gb = malloc(nt * sizeof *gb);
    gs = malloc(ne * sizeof *gs);
    ty = malloc(n * sizeof *ty);
    u = malloc(n * sizeof *u);
    v = malloc(n * sizeof *v);
    cells = malloc(3 * n * sizeof *cells);
    central = malloc(nt * sizeof *central);
    if (!V || !resp || !t || !gt || !gb || !gs || !ty || !u || !v || !cells || !central) {
        st = bl_fail(err, BL_ERR_NOMEM, "flyvis: out of memory for %zu x %zu states", K + 1, n);
        goto out;
    }
    bl_flyvis_cells(f, ty, u, v);
    for (size_t i = 0; i < n; i++) {
        cells[3 * i] = ty[i], cells[3 * i + 1] = u[i], cells[3 * i + 2] = v[i];
        if (!u[i] && !v[i])
            central[ty[i]] = i; /* every pattern holds column (0, 0) */
    }
    bl_flyvis_options o;
    bl_flyvis_options_default(f, &o);
    o.dt = s->dt;
    o.steps = K;
    o.edge_speed = s->edge_speed;
    o.edge_start = s->edge_start;
    o.edge_on = s->edge_on;
    o.edge_off = s->edge_off;
    o.objective_type = s->objective_type;
    const char *artifacts[12];
    size_t na = 0;
    artifacts[na++] = "t.npy";
    artifacts[na++] = "responses.npy";
    artifacts[na++] = "summary.json";
    if (s->keep_all)
        artifacts[na++] = "V.npy", artifacts[na++] = "cells.npy";
    if (s->gradients)
        artifacts[na++] = "grad_tau.npy", artifacts[na++] = "grad_bias.npy", artifacts[na++] = "grad_strength.npy";
    artifacts[na] = NULL;
    if ((st = bl_xp_reserve(plan, opt->root, &rec, err)))
        goto out;
    snprintf(r->dir, sizeof r->dir, "%s", bl_record_dir(rec));
    st = bl_xp_protect(rec, opt, 0, err);
    if (!st)
        st = bl_record_bind(rec, bl_plan_hash(plan), artifacts, na, err);
    if (!st)
        st = bl_record_set_json(rec, "plan", bl_plan_resolved_json(plan), err);
    if (!st)
        st = bl_flyvis_run(f, &o, s->tau, s->bias, s->strength, V, 0, NULL, NULL, &J, s->gradients ? gt : NULL,
                           s->gradients ? gb : NULL, s->gradients ? gs : NULL, err);
    if (!st) {
        for (size_t k = 0; k <= K; k++) {
            t[k] = (double)k * s->dt;
            for (size_t c = 0; c < nt; c++)
                resp[k * nt + c] = V[k * n + central[c]];
        }
        const uint64_t sh_t[1] = {K + 1}, sh_r[2] = {K + 1, nt}, sh_v[2] = {K + 1, n}, sh_c[2] = {n, 3},
                       sh_nt[1] = {nt}, sh_ne[1] = {ne};
        st = bl_xp_write_npy(rec, "t.npy", BL_DTYPE_FLOAT64, 1, sh_t, t, err);
        if (!st)
            st = bl_xp_write_npy(rec, "responses.npy", BL_DTYPE_FLOAT64, 2, sh_r, resp, err);
        if (!st && s->keep_all)
            st = bl_xp_write_npy(rec, "V.npy", BL_DTYPE_FLOAT64, 2, sh_v, V, err);
        if (!st && s->keep_all)
            st = bl_xp_write_npy(rec, "cells.npy", BL_DTYPE_INT32, 2, sh_c, cells, err);
        if (!st && s->gradients)
            st = bl_xp_write_npy(rec, "grad_tau.npy", BL_DTYPE_FLOAT64, 1, sh_nt, gt, err);
        if (!st && s->gradients)
            st = bl_xp_write_npy(rec, "grad_bias.npy", BL_DTYPE_FLOAT64, 1, sh_nt, gb, err);
        if (!st && s->gradients)
            st = bl_xp_write_npy(rec, "grad_strength.npy", BL_DTYPE_FLOAT64, 1, sh_ne, gs, err);
    }
    if (!st) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "model", "tau dV/dt = -V + bias + sum_e sign n_syn strength relu(V_src) + x(t)");
        cJSON_AddStringToObject(j, "method", "euler");
        cJSON_AddNumberToObject(j, "dt", s->dt);
        cJSON_AddNumberToObject(j, "steps", (double)K);
        cJSON_AddNumberToObject(j, "cells", (double)n);
        cJSON_AddNumberToObject(j, "edges", (double)bl_flyvis_n_edges(f));
        cJSON_AddStringToObject(j, "objective", "mean over steps 1..K and the objective type's cells of V^2");
        cJSON_AddStringToObject(j, "objective_type", s->objective);
        cJSON_AddNumberToObject(j, "J", J);
        cJSON_AddStringToObject(j, "gradients",
                                s->gradients ? "discrete adjoint of the Euler map: the exact derivative of the "
                                               "computed trajectory"
                                             : "not asked");
        cJSON *types = cJSON_AddArrayToObject(j, "cell_types");
        for (size_t c = 0; c < nt; c++)
            cJSON_AddItemToArray(types, cJSON_CreateString(bl_flyvis_type_name(f, c)));
        cJSON *ets = cJSON_AddArrayToObject(j, "edge_types");
        for (size_t k = 0; k < ne; k++) {
            size_t a, b;
            int sg;
            bl_flyvis_edge_type(f, k, &a, &b, &sg);
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "src", bl_flyvis_type_name(f, a));
            cJSON_AddStringToObject(e, "tar", bl_flyvis_type_name(f, b));
            cJSON_AddNumberToObject(e, "sign", sg);
            cJSON_AddItemToArray(ets, e);
        }
        cJSON *ret = cJSON_AddObjectToObject(j, "retained");
        const double kept = (double)(K + 1) * (double)(s->keep_all ? n : nt);
        cJSON_AddStringToObject(ret, "what", s->keep_all ? "every cell's potential at every step (V.npy)"
                                                          : "each cell type's central cell at every step "
                                                            "(responses.npy); the full history only inside the run, "
                                                            "for the adjoint");
        cJSON_AddNumberToObject(ret, "values", kept);
        cJSON_AddNumberToObject(ret, "bytes", 8.0 * kept);
        cJSON_AddNumberToObject(ret, "run_memory_bytes", 8.0 * (double)(K + 1) * (double)n);
        st = bl_xp_write_json(rec, "summary.json", j, err);
        snprintf(r->line, sizeof r->line, "flyvis: %zu cells, %zu edges, %zu Euler steps, J(%s) = %.17g%s", n,
                 bl_flyvis_n_edges(f), K, s->objective, J, s->gradients ? ", gradients by the adjoint" : "");
    }
    st = bl_xp_end(rec, NULL, st, err);
out:
    bl_record_destroy(rec);
    bl_flyvis_destroy(f);
    free(V), free(resp), free(t), free(gt), free(gb), free(gs), free(cells), free(ty), free(u), free(v);
    free(central);
    if (st) {
        free(r);
        return st;
    }
    *out = r;
    return BL_OK;
}
