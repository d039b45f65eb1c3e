/* The flyvis-gradient workload of `brainlesslab bench` (docs/benchmark.md,
 * "flyvis"): the gradient of a response objective of the flyvis optic-lobe
 * rate model (docs/solvers.md, "The flyvis application") with respect to
 * every cell type's time constant and resting potential and every edge
 * type's strength, ours (`brainlesslab flyvis bench-case`, the discrete
 * adjoint in C) against PyTorch autograd on one thread
 * (bench/peers/flyvis_torch.py, flyvis's own formulation) in the same run.
 *
 * Qualified first (untimed): the peer runs the network ours wrote, and must
 * give the same trajectory bit for bit (its SHA-256) and the same gradients
 * to 1e-11 (normwise relative: another summation order). Then each side runs
 * in --repetitions fresh processes, in alternating order; a process makes one
 * cold call and warm_calls warm ones; the receipt keeps every sample, and the
 * ratio is of the medians of the per-process warm medians. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/npy.h"
#include "flyvis_case.h"

static const bl_bench_flyvis_def full_defs[] = {
    {"flyvis-grad", "flyvis optic lobe: gradient of T4a's response to a moving edge, ours vs PyTorch autograd",
     "The flyvis connectome (Lappalainen et al. 2024; data/drosophila-optic-lobe-flyvis) tiled at extent 15: 45,669 "
     "cells, 1,513,231 edges; flyvis's graded-potential rate model with flyvis's initial parameters, a bright edge "
     "moving at 50 columns/s over R1-R8, 50 explicit Euler steps of 5 ms; J = mean over the steps and the T4a cells "
     "of V^2; dJ/dtau and dJ/dbias (65 cell types each) and dJ/dstrength (605 edge types). Ours: the discrete "
     "adjoint in C, one thread; peer: PyTorch eager float64 autograd, torch.set_num_threads(1). Target: >= 10x.",
     15, 50, 3, 10.0},
};
static const bl_bench_flyvis_def quick_defs[] = {
    {"flyvis-grad", "flyvis gradient (quick: extent 3, 2,345 cells, 20 steps)", "quick version of flyvis-grad", 3, 20,
     1, 10.0},
};

const bl_bench_flyvis_def *bl_bench_flyvis_find(const char *id, int quick)
{
    const bl_bench_flyvis_def *d = quick ? quick_defs : full_defs;
    return !strcmp(d->id, id) ? d : NULL;
}

static void unavailable(bl_bench_ctx *ctx, const bl_bench_flyvis_def *d, cJSON *wj, const char *reason)
{
    cJSON_AddStringToObject(wj, "status", "unavailable");
    cJSON_AddStringToObject(wj, "reason", reason);
    bl_bench_tablef(ctx, "%s: unavailable: %s\n\n", d->id, reason);
}

static cJSON *read_json(const char *dir)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/timing.json", dir);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (!buf)
        return NULL;
    buf[n] = '\0';
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    return j;
}

/* One worker: ours (peer == 0) or the PyTorch peer, into dir; its timing.json. */
static cJSON *worker(bl_bench_ctx *ctx, const bl_bench_flyvis_def *d, int peer, int warm, const char *net,
                     const char *dir, char *why, size_t why_len, bl_bench_proc *p)
{
    char json[4300], script[4300], ext[16], steps[16], reps[16], log[4500];
    snprintf(json, sizeof json, "%s/data/drosophila-optic-lobe-flyvis/fib25-fib19_v2.2.json", ctx->source_dir);
    snprintf(script, sizeof script, "%s/bench/peers/flyvis_torch.py", ctx->source_dir);
    snprintf(ext, sizeof ext, "%d", d->extent);
    snprintf(steps, sizeof steps, "%d", d->steps);
    snprintf(reps, sizeof reps, "%d", warm);
    snprintf(log, sizeof log, "%s.log", dir);
    bl_error err = {0};
    if (bl_bench_rmtree(dir, &err) || bl_bench_mkdirs(dir, &err)) {
        snprintf(why, why_len, "%s", err.message);
        return NULL;
    }
    char *ours[] = {ctx->self_exe, "flyvis", "bench-case", "--connectome", json, "--extent", ext, "--steps", steps,
                    "--repeat", reps, "--out", (char *)dir, NULL};
    char *torch[] = {ctx->python, script, "--net", (char *)net, "--steps", steps, "--repeat", reps, "--out",
                     (char *)dir, NULL};
    static const char *const one_thread[] = {"OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1",
                                             NULL};
    if (bl_bench_spawn(peer ? torch : ours, one_thread, log, ctx->o->timeout_s, p, &err) || !p->exited ||
        p->exit_status) {
        char tail[900] = "", how[200];
        bl_bench_proc_describe(p, ctx->o->timeout_s, how, sizeof how);
        bl_bench_log_tail(log, tail, sizeof tail);
        snprintf(why, why_len, "%s: %s", how, tail[0] ? tail : err.message);
        return NULL;
    }
    cJSON *j = read_json(dir);
    if (!j)
        snprintf(why, why_len, "%s/timing.json missing or not JSON", dir);
    return j;
}

static double grad_error(const char *a, const char *b)
{
    static const char *const names[] = {"grad_tau.npy", "grad_bias.npy", "grad_strength.npy"};
    double worst = 0;
    for (int k = 0; k < 3; k++) {
        char pa[4400], pb[4400];
        snprintf(pa, sizeof pa, "%s/%s", a, names[k]);
        snprintf(pb, sizeof pb, "%s/%s", b, names[k]);
        bl_npy_array x = {0}, y = {0};
        bl_error err = {0};
        if (bl_npy_read(pa, &x, &err) || bl_npy_read(pb, &y, &err) || x.dtype != BL_DTYPE_FLOAT64 ||
            y.dtype != BL_DTYPE_FLOAT64 || x.count != y.count) {
            bl_npy_free(&x);
            bl_npy_free(&y);
            return INFINITY;
        }
        const double *u = x.data, *v = y.data;
        double dmax = 0, vmax = 0;
        for (uint64_t i = 0; i < x.count; i++) {
            dmax = fmax(dmax, fabs(u[i] - v[i]));
            vmax = fmax(vmax, fabs(v[i]));
        }
        const double rel = vmax > 0 ? dmax / vmax : (dmax > 0 ? INFINITY : 0);
        worst = !(rel <= worst) ? rel : worst;
        bl_npy_free(&x);
        bl_npy_free(&y);
    }
    return worst;
}

static double warm_median(const cJSON *t, const char *key)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(t, key);
    const int n = cJSON_GetArraySize(w);
    double *x = calloc((size_t)(n > 0 ? n : 1), sizeof *x);
    if (!x)
        return NAN;
    for (int i = 0; i < n; i++)
        x[i] = cJSON_GetArrayItem(w, i)->valuedouble;
    const double m = bl_bench_median(x, (size_t)n);
    free(x);
    return m;
}

static double num(const cJSON *t, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

void bl_bench_flyvis_run(bl_bench_ctx *ctx, const bl_bench_flyvis_def *d, cJSON *wj)
{
    const double t0 = bl_bench_now();
    cJSON_AddStringToObject(wj, "kind", "flyvis-gradient");
    char base[4400], qo[4500], qp[4500], dir[4600], why[1400];
    snprintf(base, sizeof base, "%s/%s", ctx->runs_dir, d->id);
    snprintf(qo, sizeof qo, "%s/qual-ours", base);
    snprintf(qp, sizeof qp, "%s/qual-torch", base);
    bl_error err = {0};
    if (bl_bench_mkdirs(base, &err)) {
        unavailable(ctx, d, wj, err.message);
        return;
    }
    /* Qualification. */
    bl_bench_proc p;
    cJSON *to = worker(ctx, d, 0, 0, NULL, qo, why, sizeof why, &p);
    if (!to) {
        unavailable(ctx, d, wj, why);
        return;
    }
    cJSON *tp = worker(ctx, d, 1, 0, qo, qp, why, sizeof why, &p);
    cJSON *q = cJSON_AddObjectToObject(wj, "qualification");
    int qualified = 0;
    if (!tp) {
        cJSON_AddStringToObject(q, "status", "peer unavailable");
        cJSON_AddStringToObject(q, "reason", why);
    } else {
        const cJSON *ha = cJSON_GetObjectItemCaseSensitive(to, "V_sha256"),
                    *hb = cJSON_GetObjectItemCaseSensitive(tp, "V_sha256");
        const int same = cJSON_IsString(ha) && cJSON_IsString(hb) && !strcmp(ha->valuestring, hb->valuestring);
        const double ge = grad_error(qo, qp);
        qualified = same && ge <= 1e-11;
        cJSON_AddStringToObject(q, "status", qualified ? "passed" : "failed");
        cJSON_AddBoolToObject(q, "trajectory_bit_identical", same);
        cJSON_AddNumberToObject(q, "gradient_max_normwise_relative_error", ge);
        cJSON_AddNumberToObject(q, "gradient_tolerance", 1e-11);
        cJSON_AddNumberToObject(q, "J_ours", num(to, "J"));
        cJSON_AddNumberToObject(q, "J_peer", num(tp, "J"));
        cJSON_AddItemToObject(q, "peer_implementation",
                              cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(tp, "implementation"), 1));
    }
    cJSON_AddNumberToObject(wj, "cells", num(to, "cells"));
    cJSON_AddNumberToObject(wj, "edges", num(to, "edges"));
    cJSON_AddNumberToObject(wj, "steps", d->steps);
    cJSON_Delete(tp);
    /* Timing: fresh processes, alternating which side goes first. */
    const int reps = ctx->o->repetitions;
    double *ow = calloc((size_t)reps, sizeof *ow), *pw = calloc((size_t)reps, sizeof *pw),
           *of = calloc((size_t)reps, sizeof *of), *pf = calloc((size_t)reps, sizeof *pf),
           *oc = calloc((size_t)reps, sizeof *oc), *pc = calloc((size_t)reps, sizeof *pc);
    size_t no = 0, np = 0;
    cJSON *samples = cJSON_AddArrayToObject(wj, "samples");
    for (int r = 0; r < reps && ow && pw && of && pf && oc && pc; r++) {
        for (int side = 0; side < 2; side++) {
            const int peer = (r % 2) ? !side : side;
            if (peer && !qualified)
                continue;
            snprintf(dir, sizeof dir, "%s/rep%d-%s", base, r, peer ? "torch" : "ours");
            cJSON *t = worker(ctx, d, peer, d->warm_calls, qo, dir, why, sizeof why, &p);
            cJSON *s = cJSON_CreateObject();
            cJSON_AddStringToObject(s, "case", peer ? "torch-autograd" : "bl-adjoint");
            cJSON_AddNumberToObject(s, "repetition", r);
            if (!t) {
                cJSON_AddStringToObject(s, "failed", why);
            } else {
                const double wm = warm_median(t, "warm_s"), wc = warm_median(t, "warm_cpu_s"),
                             fs = num(t, "first_s");
                cJSON_AddNumberToObject(s, "first_s", fs);
                cJSON_AddItemToObject(s, "warm_s", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(t, "warm_s"), 1));
                cJSON_AddItemToObject(s, "warm_cpu_s",
                                      cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(t, "warm_cpu_s"), 1));
                cJSON_AddNumberToObject(s, "load_s", num(t, "load_s"));
                cJSON_AddNumberToObject(s, "process_wall_s", p.wall_s);
                cJSON_AddNumberToObject(s, "peak_rss_bytes", (double)p.peak_rss_bytes);
                if (peer)
                    pw[np] = wm, pc[np] = wc, pf[np++] = fs;
                else
                    ow[no] = wm, oc[no] = wc, of[no++] = fs;
                cJSON_Delete(t);
            }
            cJSON_AddItemToArray(samples, s);
            if (!ctx->o->keep_outputs)
                bl_bench_rmtree(dir, &err);
        }
    }
    const double mo = bl_bench_median(ow, no), mp = bl_bench_median(pw, np);
    const double ratio = mp / mo;
    cJSON_AddItemToObject(wj, "ours_warm_s", bl_bench_stat_json(ow, no));
    cJSON_AddItemToObject(wj, "peer_warm_s", bl_bench_stat_json(pw, np));
    cJSON_AddItemToObject(wj, "ours_cold_s", bl_bench_stat_json(of, no));
    cJSON_AddItemToObject(wj, "peer_cold_s", bl_bench_stat_json(pf, np));
    /* Process CPU time per warm call: on a machine shared with other work
     * the wall time also counts the time the process waited for a core. */
    cJSON_AddItemToObject(wj, "ours_warm_cpu_s", bl_bench_stat_json(oc, no));
    cJSON_AddItemToObject(wj, "peer_warm_cpu_s", bl_bench_stat_json(pc, np));
    const double cpu_ratio = bl_bench_median(pc, np) / bl_bench_median(oc, no);
    cJSON_AddNumberToObject(wj, "cpu_ratio_peer_over_ours", no && np ? cpu_ratio : NAN);
    /* What one warm call must at least stream: every step reads each edge
     * once forward (its source and its column offset: 6 bytes, the 16-bit
     * offset naming its weight in a table that stays in the cache) and once
     * backward (its target and offset: 6 bytes), plus about twelve per-cell
     * vectors of doubles; the random reads of relu(V) and of the adjoint are
     * not counted (they hit the cache as far as it holds). */
    const double edges = num(to, "edges"), cells = num(to, "cells");
    const double bytes = (double)d->steps * (edges * (6.0 + 6.0) + cells * 8.0 * 12.0);
    cJSON *floor = cJSON_AddObjectToObject(wj, "compute_floor");
    cJSON_AddNumberToObject(floor, "bytes_per_call", bytes);
    cJSON_AddNumberToObject(floor, "edge_steps_per_call", edges * d->steps);
    cJSON_AddNumberToObject(floor, "ours_achieved_gb_per_s", no ? bytes / mo / 1e9 : NAN);
    cJSON_AddNumberToObject(floor, "ours_ns_per_edge_step", no ? mo / (edges * d->steps) * 1e9 : NAN);
    cJSON_AddNumberToObject(floor, "peer_ns_per_edge_step", np ? mp / (edges * d->steps) * 1e9 : NAN);
    cJSON_AddNumberToObject(wj, "ratio_peer_over_ours", no && np ? ratio : NAN);
    cJSON_AddNumberToObject(wj, "target_ratio", d->target_ratio);
    cJSON_AddBoolToObject(wj, "within_target", no && np && ratio >= d->target_ratio);
    cJSON_AddStringToObject(wj, "status", no ? "completed" : "failed");
    cJSON_AddNumberToObject(wj, "workload_wall_s", bl_bench_now() - t0);
    bl_bench_tablef(ctx, "%s: %s\n    qualification: %s; ours warm median %.4f s (%zu processes), PyTorch %.4f s "
                    "(%zu): %.1fx (target %.0fx), CPU time %.1fx; %.2f ns per edge-step, %.2f GB/s of the %.0f MB a call must move\n\n",
                    d->id, d->title, qualified ? "passed (trajectory bit-identical, gradients <= 1e-11)" : "NOT passed",
                    mo, no, mp, np, no && np ? ratio : NAN, d->target_ratio, no && np ? cpu_ratio : NAN, no ? mo / (edges * d->steps) * 1e9 : NAN,
                    no ? bytes / mo / 1e9 : NAN, bytes / 1e6);
    cJSON_Delete(to);
    free(ow), free(pw), free(of), free(pf), free(oc), free(pc);
}
