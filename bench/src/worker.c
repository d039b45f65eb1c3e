/* One worker process of the benchmark: the command line of a case (ours or a
 * peer), spawned fresh, bounded in time, its timing report read back. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "bench_case.h"
#include "reservoir_sweep.h"
#include "brainlesslab/engine.h"
#include "brainlesslab/model.h"
#include "build_flags.h"
#include "build_info.h"

/* ---- one worker ------------------------------------------------------------ */

typedef struct argv_buf {
    char *argv[48];
    int n;
    char text[16][64];
    int nt;
} argv_buf;

static void arg(argv_buf *a, const char *s)
{
    if (a->n < 47)
        a->argv[a->n++] = (char *)s;
    a->argv[a->n] = NULL;
}

static const char *num(argv_buf *a, const char *fmt, double x)
{
    char *t = a->text[a->nt < 15 ? a->nt++ : 15];
    snprintf(t, 64, fmt, x);
    return t;
}

void bl_bench_eq_cache_dir(const char *worker_dir, char *buf, size_t size)
{
    const char *slash = strrchr(worker_dir, '/');
    int len = slash ? (int)(slash - worker_dir) : 1;
    snprintf(buf, size, "%.*s/code-cache", len, slash ? worker_dir : ".");
}

void bl_bench_mask_cache_dir(const bl_bench_ctx *ctx, cJSON *report)
{
    cJSON *cg = cJSON_GetObjectItemCaseSensitive(report, "model_codegen");
    const cJSON *dir = cJSON_GetObjectItemCaseSensitive(cg, "cache_dir");
    size_t n = strlen(ctx->work_dir);
    if (!cJSON_IsString(dir) || !n || strncmp(dir->valuestring, ctx->work_dir, n) != 0)
        return;
    char masked[4300];
    snprintf(masked, sizeof masked, "<work>%s", dir->valuestring + n);
    cJSON_ReplaceItemInObjectCaseSensitive(cg, "cache_dir", cJSON_CreateString(masked));
}

/* A TOML basic string cannot hold these unescaped: a path with one is refused. */
static int toml_plain(const char *s)
{
    for (; *s; s++)
        if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20 || *s == 0x7f)
            return 0;
    return 1;
}

/* The plan of a model_file case: the workload's connectome and the shipped
 * model file, nothing else (the stimulus comes on the command line, as the
 * hand-written cases get it, so both run the same schedule). */
static bl_status write_eq_plan(const bl_bench_ctx *ctx, const bl_bench_workload_def *w, const bl_bench_inputs *in,
                               const bl_bench_case_def *c, const char *path, bl_error *err)
{
    char model[4300];
    snprintf(model, sizeof model, "%s/%s", ctx->source_dir, c->model_file);
    if (!toml_plain(in->graph_dir) || !toml_plain(model))
        return bl_fail(err, BL_ERR_INVALID, "%s or %s: a path with a quote, backslash or control character "
                       "cannot be written into the case's plan", in->graph_dir, model);
    FILE *f = fopen(path, "w");
    if (!f)
        return bl_fail(err, BL_ERR_IO, "%s: cannot write the case's plan", path);
    fprintf(f, "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"bench-%s-%s\"\n"
               "operation = \"connectome\"\n[connectome]\npath = \"%s\"\n[run]\ntrials = %d\n"
               "duration_ms = %.17g\nseed = %llu\nbackend = \"%s\"\nthreads = %d\n[outputs]\nspikes = true\n"
               "counts = true\nstate = true\npropagation = false\n[model]\nfile = \"%s\"\n",
            w->id, c->id, in->graph_dir, w->trials, w->duration_ms, (unsigned long long)w->seed, c->backend,
            c->single_thread ? 1 : ctx->threads, model);
    if (fclose(f) != 0)
        return bl_fail(err, BL_ERR_IO, "%s: cannot write the case's plan", path);
    return BL_OK;
}
static bl_status run_worker(bl_bench_ctx *ctx, const bl_bench_workload_def *w, const bl_bench_inputs *in,
                            const bl_bench_case_def *c, const char *dir, const char *const *launcher,
                            const char *const *launcher_env, int n_threads, int bank, bl_bench_worker *wo,
                            bl_error *err);

bl_status bl_bench_run_worker(bl_bench_ctx *ctx, const bl_bench_workload_def *w, const bl_bench_inputs *in,
                              const bl_bench_case_def *c, const char *dir, bl_bench_worker *wo, bl_error *err)
{
    return run_worker(ctx, w, in, c, dir, NULL, NULL, ctx->threads, 0, wo, err);
}

bl_status bl_bench_run_worker_launched(bl_bench_ctx *ctx, const bl_bench_workload_def *w,
                                       const bl_bench_inputs *in, const bl_bench_case_def *c, const char *dir,
                                       const char *const *launcher, const char *const *launcher_env,
                                       bl_bench_worker *wo, bl_error *err)
{
    return run_worker(ctx, w, in, c, dir, launcher, launcher_env, ctx->threads, 0, wo, err);
}

bl_status bl_bench_run_worker_bank(bl_bench_ctx *ctx, const bl_bench_workload_def *w, const bl_bench_inputs *in,
                                   const bl_bench_case_def *c, const char *dir, int n_threads, int bank,
                                   bl_bench_worker *wo, bl_error *err)
{
    memset(wo, 0, sizeof *wo);
    if (bank && c->kind != BL_BENCH_OURS)
        return bl_fail(err, BL_ERR_INVALID, "%s: a trial bank runs our backends only", c->id);
    return run_worker(ctx, w, in, c, dir, NULL, NULL, n_threads, bank, wo, err);
}

/* A bank worker's report: trial 0 alone in trial_s, then the bank of the
 * other trials (bank_trials of them, bank_s and bank_cpu_s). */
static int bank_report_ok(const cJSON *t, int trials)
{
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(t, "trial_s");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(t, "bank_trials");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(t, "bank_s");
    const cJSON *bc = cJSON_GetObjectItemCaseSensitive(t, "bank_cpu_s");
    return cJSON_IsArray(ts) && cJSON_GetArraySize(ts) == 1 && cJSON_IsNumber(n) &&
           n->valuedouble == (double)(trials - 1) && cJSON_IsNumber(b) && cJSON_IsNumber(bc);
}

static bl_status run_worker(bl_bench_ctx *ctx, const bl_bench_workload_def *w, const bl_bench_inputs *in,
                            const bl_bench_case_def *c, const char *dir, const char *const *launcher,
                            const char *const *launcher_env, int n_threads, int bank, bl_bench_worker *wo,
                            bl_error *err)
{
    memset(wo, 0, sizeof *wo);
    bl_status st = bl_bench_rmtree(dir, err);
    if (!st)
        st = bl_bench_mkdirs(dir, err);
    if (st)
        return st;
    char timing[4200], log[4200], build[4200], script[4200], plan[4300], cache_env[4400];
    snprintf(wo->out_dir, sizeof wo->out_dir, "%s/out", dir);
    snprintf(timing, sizeof timing, "%s/timing.json", dir);
    snprintf(log, sizeof log, "%s/log.txt", dir);
    snprintf(build, sizeof build, "%s/brian2-build", dir);
    snprintf(wo->log_path, sizeof wo->log_path, "%s", log);
    argv_buf a = {0};
    const char *py_env[] = {"PYTHONDONTWRITEBYTECODE=1", NULL};
    const char *const *env = NULL;
    const char *threads = num(&a, "%.0f", c->single_thread ? 1 : n_threads);
    const char *trials = num(&a, "%.0f", w->trials);
    const char *steps = num(&a, "%.0f", (double)in->steps);
    const char *eq_env[] = {cache_env, NULL};
    if (c->kind == BL_BENCH_OURS) {
        for (const char *const *l = launcher; l && *l; l++)
            arg(&a, *l);
        env = launcher_env;
        arg(&a, ctx->self_exe);
        arg(&a, "simulate");
        if (c->model_file) {
            /* The model from equations: a plan naming the model file; the
             * code cache beside the worker's directory (cold for the
             * qualification run, which starts it empty; warm after). */
            snprintf(plan, sizeof plan, "%s/plan.toml", dir);
            if ((st = write_eq_plan(ctx, w, in, c, plan, err)))
                return st;
            char cache[4300];
            bl_bench_eq_cache_dir(dir, cache, sizeof cache);
            snprintf(cache_env, sizeof cache_env, "BL_CACHE_DIR=%s", cache);
            env = eq_env;
            arg(&a, "--plan"), arg(&a, plan);
        } else {
            arg(&a, "--connectome"), arg(&a, in->graph_dir);
            arg(&a, "--preset"), arg(&a, c->preset);
        }
        arg(&a, "--duration-ms"), arg(&a, num(&a, "%.17g", w->duration_ms));
        arg(&a, "--trials"), arg(&a, trials);
        arg(&a, "--seed"), arg(&a, num(&a, "%.0f", (double)w->seed));
        arg(&a, "--backend"), arg(&a, c->backend);
        arg(&a, "--threads"), arg(&a, threads);
        arg(&a, "--schedule"), arg(&a, in->events_path);
        if (!strcmp(c->preset, "shiu2024"))
            arg(&a, "--poisson-targets"), arg(&a, in->targets_path);
        arg(&a, "--timing"), arg(&a, timing);
        if (bank)
            arg(&a, "--bank");
        arg(&a, "--out"), arg(&a, wo->out_dir);
    } else {
        env = py_env;
        int brian = c->kind != BL_BENCH_TORCH;
        snprintf(script, sizeof script, "%s/bench/peers/%s", ctx->source_dir,
                 brian ? "brian2_shiu2024.py" : "torch_phase4c.py");
        arg(&a, ctx->python);
        arg(&a, script);
        arg(&a, "--connectome"), arg(&a, in->graph_dir);
        arg(&a, "--events"), arg(&a, in->events_path);
        if (brian) {
            arg(&a, "--targets"), arg(&a, in->targets_path);
            arg(&a, "--target"), arg(&a, c->kind == BL_BENCH_BRIAN2_CPP ? "cpp_standalone" : "numpy");
            arg(&a, "--build-dir"), arg(&a, build);
        }
        arg(&a, "--n-steps"), arg(&a, steps);
        arg(&a, "--trials"), arg(&a, trials);
        arg(&a, "--threads"), arg(&a, threads);
        arg(&a, "--timing"), arg(&a, timing);
        arg(&a, "--out"), arg(&a, wo->out_dir);
    }
    st = bl_bench_spawn(a.argv, env, log, ctx->o->timeout_s, &wo->proc, err);
    if (st)
        return st;
    if (!wo->proc.exited || wo->proc.exit_status != 0) {
        bl_bench_worker_failure(&wo->proc, ctx->o->timeout_s, log, wo->reason, sizeof wo->reason);
    } else {
        char *text = NULL;
        bl_error e2 = {0};
        if (bl_bench_read_text(timing, &text, &e2)) {
            snprintf(wo->reason, sizeof wo->reason, "no timing report: %s", e2.message);
        } else {
            wo->timing = cJSON_Parse(text);
            free(text);
            bl_bench_mask_cache_dir(ctx, wo->timing);
            const cJSON *ts = cJSON_GetObjectItemCaseSensitive(wo->timing, "trial_s");
            if (bank && !bank_report_ok(wo->timing, w->trials))
                snprintf(wo->reason, sizeof wo->reason, "timing report without trial 0 alone and a bank of %d "
                         "trials (trial_s, bank_trials, bank_s, bank_cpu_s)", w->trials - 1);
            else if (bank)
                wo->ok = 1;
            else if (!cJSON_IsArray(ts) || cJSON_GetArraySize(ts) != w->trials)
                snprintf(wo->reason, sizeof wo->reason, "timing report without %d trial_s values", w->trials);
            else
                wo->ok = 1;
        }
    }
    if (!ctx->o->keep_outputs) {
        bl_error ignore = {0};
        bl_bench_rmtree(build, &ignore);
    }
    return BL_OK;
}

void bl_bench_worker_free(bl_bench_worker *wo)
{
    cJSON_Delete(wo->timing);
    wo->timing = NULL;
}
