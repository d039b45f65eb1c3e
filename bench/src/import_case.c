/* The `import` workloads of `brainlesslab bench` (docs/benchmark.md,
 * "Import"): the FlyWire-scale Shiu pair and the male CNS-scale flat
 * connectome, generated once into the work directory by
 * bench/make_import_inputs.py (fake graphs in the real formats, written by the
 * npm oracles), then imported in fresh processes, timed (wall and CPU) and
 * measured (peak RSS of the process), against the targets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_case.h"
#include "import_case.h"

static const bl_bench_import_def full_defs[] = {
    {"import-flywire", "import flywire: Shiu's Completeness + Connectivity (Parquet) at FlyWire scale",
     "brainlesslab import flywire on a generated Completeness_783.csv (138,639 root ids) and Connectivity_783.parquet "
     "(15,091,983 rows, parquet-wasm, ZSTD): read, ids checked against the indices, summed, CSR built, directory "
     "written and hashed. Targets: <= 10 s and <= 1.5 GB peak on one core.",
     "flywire", 138639, 15091983, 10.0, 1.5},
    {"import-malecns", "import malecns --select all: three Feather files at male CNS scale",
     "brainlesslab import malecns --select all on generated flat-connectome Feather files (166,700 bodies, "
     "24,500,000 weight rows, apache-arrow): read, selected, joined, summed, CSR built, directory written and "
     "hashed. Targets: <= 15 s and <= 2 GB peak on one core.",
     "malecns", 166700, 24500000, 15.0, 2.0},
};
static const bl_bench_import_def quick_defs[] = {
    {"import-flywire", "import flywire (quick: 2,000 neurons, 20,000 rows)", "quick version of import-flywire",
     "flywire", 2000, 20000, 10.0, 1.5},
    {"import-malecns", "import malecns --select all (quick: 2,000 bodies, 20,000 rows)",
     "quick version of import-malecns", "malecns", 2000, 20000, 15.0, 2.0},
};

const bl_bench_import_def *bl_bench_import_find(const char *id, int quick)
{
    const bl_bench_import_def *defs = quick ? quick_defs : full_defs;
    for (size_t i = 0; i < 2; i++)
        if (!strcmp(defs[i].id, id))
            return &defs[i];
    return NULL;
}

const char *bl_bench_import_ids(void) { return "import-flywire, import-malecns"; }

static void unavailable(bl_bench_ctx *ctx, const bl_bench_import_def *d, cJSON *wj, const char *reason)
{
    cJSON_AddStringToObject(wj, "status", "unavailable");
    cJSON_AddStringToObject(wj, "reason", reason);
    bl_bench_tablef(ctx, "%s: unavailable: %s\n\n", d->id, reason);
}

void bl_bench_import_run(bl_bench_ctx *ctx, const bl_bench_import_def *d, cJSON *wj)
{
    double t0 = bl_bench_now();
    cJSON_AddStringToObject(wj, "kind", "import");
    char inputs[4400], run_dir[4400], log[4600], stamp[4600], reason[1400];
    snprintf(inputs, sizeof inputs, "%s/import-inputs/%s-%ld-%ld", ctx->work_dir, d->kind, d->neurons, d->rows);
    snprintf(run_dir, sizeof run_dir, "%s/%s", ctx->runs_dir, d->id);
    snprintf(stamp, sizeof stamp, "%s/complete", inputs);
    bl_error err = {0};
    if (bl_bench_mkdirs(run_dir, &err) != BL_OK || bl_bench_mkdirs(inputs, &err) != BL_OK) {
        unavailable(ctx, d, wj, err.message);
        return;
    }
    /* Inputs: generated once, reused while the stamp is there. */
    if (!bl_bench_exists(stamp)) {
        char script[4200], n[32], m[32];
        snprintf(script, sizeof script, "%s/bench/make_import_inputs.py", ctx->source_dir);
        snprintf(n, sizeof n, "%ld", d->neurons);
        snprintf(m, sizeof m, "%ld", d->rows);
        char *argv[] = {ctx->python, script, inputs, "--only", (char *)d->kind, "--neurons", n, "--rows", m, NULL};
        snprintf(log, sizeof log, "%s/generate.log", run_dir);
        bl_bench_proc p;
        bl_bench_logf(ctx, "[%s] generating inputs in %s", d->id, inputs);
        if (bl_bench_spawn(argv, NULL, log, 3600, &p, &err) != BL_OK || !p.exited || p.exit_status != 0) {
            char tail[1024] = "";
            bl_bench_log_tail(log, tail, sizeof tail);
            snprintf(reason, sizeof reason, "input generation failed (%s): %s", script, tail[0] ? tail : err.message);
            unavailable(ctx, d, wj, reason);
            return;
        }
        FILE *f = fopen(stamp, "w");
        if (f)
            fclose(f);
    }
    char a1[4600], a2[4600], a3[4600];
    int reps = ctx->o->repetitions;
    double *wall = calloc((size_t)reps, sizeof *wall), *cpu = calloc((size_t)reps, sizeof *cpu);
    double *rss = calloc((size_t)reps, sizeof *rss);
    int done = 0, failed = 0;
    char summary[1024] = "";
    for (int r = 0; r < reps && wall && cpu && rss; r++) {
        char out[4600];
        snprintf(out, sizeof out, "%s/out", run_dir);
        snprintf(log, sizeof log, "%s/import-%d.log", run_dir, r);
        bl_bench_rmtree(out, &err);
        char *argv[24];
        int k = 0;
        argv[k++] = ctx->self_exe;
        argv[k++] = "import";
        if (!strcmp(d->kind, "flywire")) {
            snprintf(a1, sizeof a1, "%s/flywire/Completeness_783.csv", inputs);
            snprintf(a2, sizeof a2, "%s/flywire/Connectivity_783.parquet", inputs);
            argv[k++] = "flywire", argv[k++] = "--neurons", argv[k++] = a1, argv[k++] = "--connectivity";
            argv[k++] = a2;
        } else {
            snprintf(a1, sizeof a1, "%s/malecns/body-annotations-male-cns-v0.9-minconf-0.5.feather", inputs);
            snprintf(a2, sizeof a2, "%s/malecns/body-neurotransmitters-male-cns-v0.9.feather", inputs);
            snprintf(a3, sizeof a3, "%s/malecns/connectome-weights-male-cns-v0.9-minconf-0.5.feather", inputs);
            argv[k++] = "malecns", argv[k++] = "--select", argv[k++] = "all", argv[k++] = "--annotations";
            argv[k++] = a1, argv[k++] = "--transmitters", argv[k++] = a2, argv[k++] = "--weights", argv[k++] = a3;
        }
        argv[k++] = "--out", argv[k++] = out, argv[k] = NULL;
        bl_bench_proc p;
        if (bl_bench_spawn(argv, NULL, log, ctx->o->timeout_s, &p, &err) != BL_OK || !p.exited || p.exit_status) {
            char what[256];
            bl_bench_proc_describe(&p, ctx->o->timeout_s, what, sizeof what);
            bl_bench_log_tail(log, summary, sizeof summary);
            bl_bench_logf(ctx, "[%s] repetition %d failed: %s: %s", d->id, r, what, summary);
            failed++;
            continue;
        }
        bl_bench_log_tail(log, summary, sizeof summary);
        wall[done] = p.wall_s;
        cpu[done] = p.user_s + p.sys_s;
        rss[done] = (double)p.peak_rss_bytes / 1e9;
        done++;
        if (!ctx->o->keep_outputs)
            bl_bench_rmtree(out, &err);
    }
    cJSON_AddStringToObject(wj, "inputs", inputs);
    cJSON_AddStringToObject(wj, "import_summary", summary);
    cJSON_AddItemToObject(wj, "wall_s", bl_bench_stat_json(wall, (size_t)done));
    cJSON_AddItemToObject(wj, "cpu_s", bl_bench_stat_json(cpu, (size_t)done));
    cJSON_AddItemToObject(wj, "peak_rss_gb", bl_bench_stat_json(rss, (size_t)done));
    cJSON_AddNumberToObject(wj, "target_s", d->target_s);
    cJSON_AddNumberToObject(wj, "target_peak_gb", d->target_gb);
    double mw = bl_bench_median(wall, (size_t)done), mc = bl_bench_median(cpu, (size_t)done);
    double maxrss = 0;
    for (int i = 0; i < done; i++)
        maxrss = rss[i] > maxrss ? rss[i] : maxrss;
    cJSON_AddBoolToObject(wj, "within_targets", done > 0 && mw <= d->target_s && maxrss <= d->target_gb);
    cJSON_AddNumberToObject(wj, "failed_repetitions", failed);
    cJSON_AddStringToObject(wj, "status", done ? "completed" : "failed");
    cJSON_AddNumberToObject(wj, "workload_wall_s", bl_bench_now() - t0);
    bl_bench_tablef(ctx, "%s: %s\n    %d of %d repetitions; median wall %.2f s, median CPU %.2f s (target %.0f s), "
                    "peak RSS %.2f GB (target %.1f GB): %s\n    %s\n\n",
                    d->id, d->title, done, reps, mw, mc, d->target_s, maxrss, d->target_gb,
                    done && mw <= d->target_s && maxrss <= d->target_gb ? "within targets" : "NOT within targets",
                    summary);
    free(wall);
    free(cpu);
    free(rss);
}
