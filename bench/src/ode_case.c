/* The execution-baselines families of `brainlesslab bench` (docs/benchmark.md,
 * "ODE and SSA families"): ours (`brainlesslab ode bench-case`, C with the
 * system's generated C) against the NumPy peer (bench/peers/ode_numpy.py,
 * the protocol's vectorised NumPy baseline) in the same run.
 *
 * A family is one row of the table below: its cases and what a warm call
 * is. Each case is qualified first (untimed), ours and the peer each in a
 * fresh process:
 *   ode-rhs       f bit-identical (the same operations in the same order;
 *                 the coupled sum through W @ s is NumPy's BLAS order, and
 *                 is held to 4 ulps of the largest |f| should it differ)
 *   ode-rk4-grad  the objective and the gradient within 1e-13 normwise
 *                 relative (NumPy's RK4 sums its stages in another order:
 *                 the last bits differ, measured and kept in the receipt)
 *   ssa-bank      not the same draws (NumPy's PCG64 is not our stream): each
 *                 bank's mean count at the horizon within 5 standard errors
 *                 of the analytic mean 100 (1 - e^-2) of the birth-death
 *                 process (variance = mean: Poisson)
 * Then each side runs in --repetitions fresh processes per case, in
 * alternating order; a process makes one cold call (apart) and warm_calls
 * warm samples, each sample a batch of calls long enough for the clock; the
 * ratio is of the medians of the per-process warm medians, by wall time and
 * by process CPU time (a loaded machine inflates the first). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ode_case.h"

static const bl_bench_ode_def full_defs[] = {
    {"ode-rhs", "structured RHS (hierarchical fixtures), ours (generated C) vs NumPy",
     "The protocol's synthetic hierarchical fixture (docs/solvers.md): G groups of S local stages, independent or "
     "coupled through W, g4-s2 and g16-s8. A warm call: f(t, y0, p0) through the system's RHS callback (generated "
     "C) against NumPy evaluating the same RHS vectorised. Target: >= 20x NumPy.",
     {"g4-s2-independent", "g4-s2-coupled", "g16-s8-independent", "g16-s8-coupled"}, 5, 0},
    {"ode-rk4-grad", "RK4, 64 steps, 256 states: rate gradient by the discrete adjoint, ours vs NumPy",
     "dy_i/dt = -k_i y_i (256 states, k_i = 0.5 + i/256, y_i(0) = 1 + i/256), RK4 with 64 steps over [0, 1], "
     "J = sum of the final states, dJ/dk (256 rates). Ours: the generic discrete adjoint (src/solvers/adjoint.c) "
     "over the generated RHS and the sparse vector-Jacobian products; NumPy: RK4 forward and the same adjoint "
     "recursion written by hand. Target: warm call <= 20 us; compile time apart.",
     {"n256"}, 5, 1},
    {"ssa-bank", "SSA direct method, banks of 16 and 64, ours vs a NumPy direct-method loop",
     "Birth-death 0 -> X (10), X -> 0 (0.1 X) from X = 0 to t = 20 (about 310 events per replicate), Gillespie's "
     "direct method, banks of 16 and 64 replicates on one thread; NumPy advances every unfinished replicate one "
     "event per loop iteration. Reported: events per second.",
     {"bank16", "bank64"}, 5, 2},
};
static const bl_bench_ode_def quick_defs[] = {
    {"ode-rhs", "structured RHS (quick: g4-s2 coupled)", "quick version of ode-rhs", {"g4-s2-coupled"}, 1, 0},
    {"ode-rk4-grad", "RK4 rate gradient (quick: 16 states)", "quick version of ode-rk4-grad", {"n16"}, 1, 1},
    {"ssa-bank", "SSA bank (quick: 16 replicates)", "quick version of ssa-bank", {"bank16"}, 1, 2},
};

const bl_bench_ode_def *bl_bench_ode_find(const char *id, int quick)
{
    const bl_bench_ode_def *d = quick ? quick_defs : full_defs;
    for (size_t k = 0; k < sizeof full_defs / sizeof full_defs[0]; k++)
        if (!strcmp(d[k].id, id))
            return &d[k];
    return NULL;
}

static cJSON *read_json(const char *dir, const char *name)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 22);
    size_t n = buf ? fread(buf, 1, (1 << 22) - 1, f) : 0;
    fclose(f);
    if (!buf)
        return NULL;
    buf[n] = '\0';
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    return j;
}

/* The peers: NumPy for every family (the one the targets are stated
 * against), and PyTorch eager autograd beside it for the gradient (optional:
 * without python3-torch it is reported unavailable and the family still
 * completes). */
static const struct {
    const char *label, *script;
} peer_defs[2] = {{"numpy", "ode_numpy.py"}, {"torch-autograd", "ode_torch.py"}};
static int n_peers(const bl_bench_ode_def *d) { return d->kind == 1 ? 2 : 1; }

/* One worker: ours (peer == 0) or peer number peer - 1, into dir; its timing.json. */
static cJSON *worker(bl_bench_ctx *ctx, const bl_bench_ode_def *d, const char *cas, int peer, int warm,
                     const char *dir, char *why, size_t why_len, bl_bench_proc *p)
{
    char script[4300], reps[16], log[4500];
    snprintf(script, sizeof script, "%s/bench/peers/%s", ctx->source_dir, peer_defs[peer ? peer - 1 : 0].script);
    snprintf(reps, sizeof reps, "%d", warm);
    snprintf(log, sizeof log, "%s.log", dir);
    bl_error err = {0};
    if (bl_bench_rmtree(dir, &err) || bl_bench_mkdirs(dir, &err)) {
        snprintf(why, why_len, "%s", err.message);
        return NULL;
    }
    char *ours[] = {ctx->self_exe, "ode", "bench-case", "--family", (char *)d->id, "--case", (char *)cas,
                    "--repeat", reps, "--out", (char *)dir, NULL};
    char *numpy[] = {ctx->python, script, "--family", (char *)d->id, "--case", (char *)cas, "--repeat", reps,
                     "--out", (char *)dir, NULL};
    static const char *const one_thread[] = {"OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1",
                                             NULL};
    if (bl_bench_spawn(peer ? numpy : ours, one_thread, log, ctx->o->timeout_s, p, &err) || !p->exited ||
        p->exit_status) {
        char tail[900] = "", how[200];
        bl_bench_proc_describe(p, ctx->o->timeout_s, how, sizeof how);
        bl_bench_log_tail(log, tail, sizeof tail);
        snprintf(why, why_len, "%s: %s", how, tail[0] ? tail : err.message);
        return NULL;
    }
    cJSON *j = read_json(dir, "timing.json");
    if (!j)
        snprintf(why, why_len, "%s/timing.json missing or not JSON", dir);
    return j;
}

static double num(const cJSON *t, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
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

/* Largest |a - b| over the arrays under key, and the largest |b|; -1: shapes differ. */
static int diff_arrays(const cJSON *a, const cJSON *b, const char *key, double *dmax, double *vmax, int *identical)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(a, key), *y = cJSON_GetObjectItemCaseSensitive(b, key);
    const int n = cJSON_GetArraySize(x);
    if (!cJSON_IsArray(x) || !cJSON_IsArray(y) || n != cJSON_GetArraySize(y) || n == 0)
        return -1;
    *dmax = *vmax = 0;
    *identical = 1;
    for (int i = 0; i < n; i++) {
        const double u = cJSON_GetArrayItem(x, i)->valuedouble, v = cJSON_GetArrayItem(y, i)->valuedouble;
        *identical &= !memcmp(&u, &v, sizeof u) || (u == 0 && v == 0);
        *dmax = fmax(*dmax, fabs(u - v));
        *vmax = fmax(*vmax, fabs(v));
    }
    return 0;
}

static double mean_of(const cJSON *a, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(a, key);
    const int n = cJSON_GetArraySize(x);
    double s = 0;
    for (int i = 0; i < n; i++)
        s += cJSON_GetArrayItem(x, i)->valuedouble;
    return n ? s / n : NAN;
}

/* Qualify one case: 1 passed, 0 failed; its evidence into q. */
static int qualify(const bl_bench_ode_def *d, const char *qo, const char *qp, cJSON *q)
{
    cJSON *a = read_json(qo, "result.json"), *b = read_json(qp, "result.json");
    int ok = 0;
    if (!a || !b) {
        cJSON_AddStringToObject(q, "status", "failed");
        cJSON_AddStringToObject(q, "reason", "result.json missing or not JSON");
    } else if (d->kind == 0) {
        double dm, vm;
        int same;
        ok = !diff_arrays(a, b, "f", &dm, &vm, &same) && (same || dm <= 4 * 0x1p-52 * vm);
        cJSON_AddBoolToObject(q, "bit_identical", ok && same);
        cJSON_AddNumberToObject(q, "max_abs_difference", dm);
        cJSON_AddStringToObject(q, "tolerance", "bit-identical; the coupled sum W @ s (BLAS order) within 4 ulps of max |f|");
    } else if (d->kind == 1) {
        double dm, vm;
        int same;
        const double va = num(a, "value"), vb = num(b, "value");
        const double verr = fabs(va - vb) / fabs(vb);
        ok = !diff_arrays(a, b, "grad", &dm, &vm, &same) && dm <= 1e-13 * vm && verr <= 1e-13;
        cJSON_AddBoolToObject(q, "gradient_bit_identical", ok && same);
        cJSON_AddNumberToObject(q, "gradient_max_normwise_relative_error", vm > 0 ? dm / vm : dm);
        cJSON_AddNumberToObject(q, "objective_relative_error", verr);
        cJSON_AddNumberToObject(q, "J_ours", va);
        cJSON_AddNumberToObject(q, "J_peer", vb);
        cJSON_AddStringToObject(q, "tolerance", "1e-13 normwise relative (NumPy's RK4 sums the stages in another order)");
    } else {
        const int n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(a, "final"));
        const double mu = 100.0 * (1.0 - exp(-2.0)), se = sqrt(mu / (n > 0 ? n : 1));
        const double ma = mean_of(a, "final"), mb = mean_of(b, "final");
        ok = n > 0 && fabs(ma - mu) <= 5 * se && fabs(mb - mu) <= 5 * se;
        cJSON_AddNumberToObject(q, "analytic_mean", mu);
        cJSON_AddNumberToObject(q, "standard_error", se);
        cJSON_AddNumberToObject(q, "mean_ours", ma);
        cJSON_AddNumberToObject(q, "mean_peer", mb);
        cJSON_AddNumberToObject(q, "events_ours", num(a, "events"));
        cJSON_AddNumberToObject(q, "events_peer", num(b, "events"));
        cJSON_AddStringToObject(q, "tolerance", "each bank's mean at t = 20 within 5 standard errors of the analytic mean "
                                                "(different random streams: statistics, not bits)");
    }
    cJSON_AddStringToObject(q, "status", ok ? "passed" : "failed");
    cJSON_Delete(a);
    cJSON_Delete(b);
    return ok;
}

/* What a warm call must at least compute (docs/benchmark.md gives the
 * counts): floating-point operations, from which a floor at a stated rate. */
static double floor_flops(const bl_bench_ode_def *d, const char *cas, const cJSON *to)
{
    if (d->kind == 0) { /* the RHS instructions of the generated function */
        return num(to, "rhs_instructions");
    }
    if (d->kind == 1) {
        /* per step and state: forward 4 RHS (2) + stage inputs (3 x 2) + the
         * combination (8) = 22; reverse: the recomputed step (22) + kbar (7)
         * + J^T and P^T products (4 x 2 x 2) + lambda (4) = 49 */
        unsigned n = 0;
        sscanf(cas, "n%u", &n);
        return 64.0 * n * (22.0 + 49.0);
    }
    return NAN;
}

void bl_bench_ode_run(bl_bench_ctx *ctx, const bl_bench_ode_def *d, cJSON *wj)
{
    const double t0 = bl_bench_now();
    cJSON_AddStringToObject(wj, "kind", d->kind == 0 ? "ode-rhs" : d->kind == 1 ? "ode-rk4-grad" : "ssa-bank");
    cJSON *executed = cJSON_AddArrayToObject(wj, "cases_executed");
    cJSON *cj_all = cJSON_AddArrayToObject(wj, "cases");
    const int reps = ctx->o->repetitions, npeer = n_peers(d), nside = 1 + npeer;
    int all_ok = 1, any = 0;
    bl_bench_tablef(ctx, "%s: %s\n", d->id, d->title);
    for (int c = 0; c < 4 && d->cases[c]; c++) {
        const char *cas = d->cases[c];
        cJSON_AddItemToArray(executed, cJSON_CreateString(cas));
        cJSON *cj = cJSON_CreateObject();
        cJSON_AddItemToArray(cj_all, cj);
        cJSON_AddStringToObject(cj, "case", cas);
        char base[4400], qdir[3][4500], dir[4600], why[1400];
        snprintf(base, sizeof base, "%s/%s/%s", ctx->runs_dir, d->id, cas);
        for (int k = 0; k < nside; k++)
            snprintf(qdir[k], sizeof qdir[k], "%s/qual-%s", base, k ? peer_defs[k - 1].label : "ours");
        bl_error err = {0};
        bl_bench_proc p;
        cJSON *to = bl_bench_mkdirs(base, &err) ? NULL : worker(ctx, d, cas, 0, 0, qdir[0], why, sizeof why, &p);
        if (!to) {
            cJSON_AddStringToObject(cj, "status", "unavailable");
            cJSON_AddStringToObject(cj, "reason", err.message[0] ? err.message : why);
            bl_bench_tablef(ctx, "    %s: unavailable: %s\n", cas, err.message[0] ? err.message : why);
            all_ok = 0;
            continue;
        }
        /* Qualification of every peer against ours; the first (NumPy) is
         * the case's "qualification", the others under "peers". */
        int qualified[3] = {1, 0, 0};
        cJSON *peers = cJSON_AddObjectToObject(cj, "peers");
        for (int k = 1; k < nside; k++) {
            cJSON *tp = worker(ctx, d, cas, k, 0, qdir[k], why, sizeof why, &p);
            cJSON *pj = cJSON_AddObjectToObject(peers, peer_defs[k - 1].label);
            cJSON *q = cJSON_AddObjectToObject(pj, "qualification");
            if (!tp) {
                cJSON_AddStringToObject(q, "status", "peer unavailable");
                cJSON_AddStringToObject(q, "reason", why);
            } else {
                qualified[k] = qualify(d, qdir[0], qdir[k], q);
                cJSON_AddItemToObject(q, "peer_implementation",
                                      cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(tp, "implementation"), 1));
            }
            if (k == 1)
                cJSON_AddItemToObject(cj, "qualification", cJSON_Duplicate(q, 1));
            cJSON_Delete(tp);
        }
        cJSON_AddItemToObject(cj, "codegen", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(to, "codegen"), 1));
        cJSON_AddNumberToObject(cj, "ours_compile_s", num(to, "compile_s"));
        /* per side: warm wall, warm CPU, cold; compile (ours) */
        double *w[3], *wc[3], *fs[3], *cs = calloc((size_t)reps, sizeof *cs);
        size_t nw[3] = {0, 0, 0};
        int mem = cs != NULL;
        for (int k = 0; k < 3; k++) {
            w[k] = calloc((size_t)reps, sizeof *w[k]);
            wc[k] = calloc((size_t)reps, sizeof *wc[k]);
            fs[k] = calloc((size_t)reps, sizeof *fs[k]);
            mem &= w[k] && wc[k] && fs[k];
        }
        double events = num(to, "events");
        cJSON *samples = cJSON_AddArrayToObject(cj, "samples");
        /* fresh processes, the order rotated each repetition (ours first, then the peer first, ...) */
        for (int r = 0; r < reps && mem; r++) {
            for (int j = 0; j < nside; j++) {
                const int side = (j + r) % nside;
                if (!qualified[side])
                    continue;
                snprintf(dir, sizeof dir, "%s/rep%d-%s", base, r, side ? peer_defs[side - 1].label : "ours");
                cJSON *t = worker(ctx, d, cas, side, d->warm_calls, dir, why, sizeof why, &p);
                cJSON *sj = cJSON_CreateObject();
                cJSON_AddStringToObject(sj, "case", side ? peer_defs[side - 1].label : "bl-c");
                cJSON_AddNumberToObject(sj, "repetition", r);
                if (!t) {
                    cJSON_AddStringToObject(sj, "failed", why);
                } else {
                    cJSON_AddNumberToObject(sj, "first_s", num(t, "first_s"));
                    cJSON_AddNumberToObject(sj, "compile_s", num(t, "compile_s"));
                    cJSON_AddNumberToObject(sj, "batch", num(t, "batch"));
                    cJSON_AddItemToObject(sj, "warm_s", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(t, "warm_s"), 1));
                    cJSON_AddItemToObject(sj, "warm_cpu_s",
                                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(t, "warm_cpu_s"), 1));
                    if (d->kind == 2)
                        cJSON_AddNumberToObject(sj, "events", num(t, "events"));
                    cJSON_AddNumberToObject(sj, "process_wall_s", p.wall_s);
                    cJSON_AddNumberToObject(sj, "peak_rss_bytes", (double)p.peak_rss_bytes);
                    if (!side)
                        cs[nw[0]] = num(t, "compile_s");
                    w[side][nw[side]] = warm_median(t, "warm_s");
                    wc[side][nw[side]] = warm_median(t, "warm_cpu_s");
                    fs[side][nw[side]++] = num(t, "first_s");
                    cJSON_Delete(t);
                }
                cJSON_AddItemToArray(samples, sj);
                if (!ctx->o->keep_outputs)
                    bl_bench_rmtree(dir, &err);
            }
        }
        const size_t no = nw[0], np = nw[1];
        const double mo = bl_bench_median(w[0], no), co = bl_bench_median(wc[0], no);
        cJSON_AddItemToObject(cj, "ours_warm_s", bl_bench_stat_json(w[0], no));
        cJSON_AddItemToObject(cj, "ours_cold_s", bl_bench_stat_json(fs[0], no));
        cJSON_AddItemToObject(cj, "ours_warm_cpu_s", bl_bench_stat_json(wc[0], no));
        cJSON_AddItemToObject(cj, "ours_compile_s_all", bl_bench_stat_json(cs, no));
        double ratio = NAN, cpu_ratio = NAN, mp = NAN, cp = NAN;
        char others[300] = "";
        for (int k = 1; k < nside; k++) {
            const double m = bl_bench_median(w[k], nw[k]), cm = bl_bench_median(wc[k], nw[k]);
            cJSON *pj = cJSON_GetObjectItemCaseSensitive(peers, peer_defs[k - 1].label);
            cJSON_AddItemToObject(pj, "warm_s", bl_bench_stat_json(w[k], nw[k]));
            cJSON_AddItemToObject(pj, "cold_s", bl_bench_stat_json(fs[k], nw[k]));
            cJSON_AddItemToObject(pj, "warm_cpu_s", bl_bench_stat_json(wc[k], nw[k]));
            cJSON_AddNumberToObject(pj, "ratio_peer_over_ours", no && nw[k] ? m / mo : NAN);
            cJSON_AddNumberToObject(pj, "cpu_ratio_peer_over_ours", no && nw[k] ? cm / co : NAN);
            if (k == 1) {
                mp = m, cp = cm, ratio = m / mo, cpu_ratio = cm / co;
                cJSON_AddItemToObject(cj, "peer_warm_s", bl_bench_stat_json(w[k], nw[k]));
                cJSON_AddItemToObject(cj, "peer_cold_s", bl_bench_stat_json(fs[k], nw[k]));
                cJSON_AddItemToObject(cj, "peer_warm_cpu_s", bl_bench_stat_json(wc[k], nw[k]));
            } else {
                const size_t len = strlen(others);
                snprintf(others + len, sizeof others - len, "; %s %s: CPU %.3g s, %.1fx",
                         peer_defs[k - 1].label, qualified[k] ? "qualified" : "not qualified/unavailable", cm, cm / co);
            }
        }
        cJSON_AddNumberToObject(cj, "ratio_peer_over_ours", no && np ? ratio : NAN);
        cJSON_AddNumberToObject(cj, "cpu_ratio_peer_over_ours", no && np ? cpu_ratio : NAN);
        char target[200] = "";
        int met = 0;
        if (d->kind == 0) {
            met = no && np && ratio >= 20.0;
            snprintf(target, sizeof target, ">= 20x NumPy: %s (%.1fx wall, %.1fx CPU)", met ? "met" : "NOT met", ratio,
                     cpu_ratio);
        } else if (d->kind == 1) {
            met = no && mo <= 20e-6;
            snprintf(target, sizeof target, "warm call <= 20 us: %s (%.1f us wall, %.1f us CPU)", met ? "met" : "NOT met",
                     mo * 1e6, co * 1e6);
        } else {
            cJSON_AddNumberToObject(cj, "events_per_call", events);
            cJSON_AddNumberToObject(cj, "ours_events_per_s", no ? events / mo : NAN);
            cJSON_AddNumberToObject(cj, "ours_events_per_cpu_s", no ? events / co : NAN);
            cJSON_AddNumberToObject(cj, "ours_ns_per_event_cpu", no ? co / events * 1e9 : NAN);
            snprintf(target, sizeof target, "events per second (no numeric target): ours %.3g, NumPy %.3g",
                     no ? events / mo : NAN, np ? events / mp : NAN);
            met = no > 0;
        }
        cJSON_AddStringToObject(cj, "target", target);
        cJSON_AddBoolToObject(cj, "within_target", met);
        const double flops = floor_flops(d, cas, to);
        if (isfinite(flops)) {
            cJSON *fl = cJSON_AddObjectToObject(cj, "compute_floor");
            cJSON_AddNumberToObject(fl, "flops_per_call", flops);
            /* the floor at 8 double operations per cycle (two 4-wide vector
             * ports, no fused multiply-add: the exact kernels forbid it) and
             * 3 GHz; and at one scalar operation per cycle */
            cJSON_AddNumberToObject(fl, "floor_s_vector_8_per_cycle_3ghz", flops / 24e9);
            cJSON_AddNumberToObject(fl, "floor_s_scalar_1_per_cycle_3ghz", flops / 3e9);
            cJSON_AddNumberToObject(fl, "ours_gflops_cpu", no ? flops / co / 1e9 : NAN);
        }
        cJSON_AddStringToObject(cj, "status", no ? "completed" : "failed");
        bl_bench_tablef(ctx, "    %s: qualification %s; ours warm %.3g s (CPU %.3g s, %zu processes), NumPy %.3g s (CPU %.3g s, "
                        "%zu): %.1fx wall, %.1fx CPU%s; compile %.3g s apart; %s\n",
                        cas, qualified[1] ? "passed" : "NOT passed", mo, co, no, mp, cp, np, ratio, cpu_ratio, others,
                        bl_bench_median(cs, no), target);
        all_ok &= no > 0 && qualified[1];
        any |= no > 0;
        cJSON_Delete(to);
        for (int k = 0; k < 3; k++)
            free(w[k]), free(wc[k]), free(fs[k]);
        free(cs);
    }
    bl_bench_tablef(ctx, "\n");
    cJSON_AddStringToObject(wj, "status", all_ok ? "completed" : any ? "partial" : "failed");
    cJSON_AddNumberToObject(wj, "workload_wall_s", bl_bench_now() - t0);
}
