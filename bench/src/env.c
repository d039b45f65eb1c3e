/* The benchmark's environment: the machine, its load and CPU affinity, and
 * which peers (Python, Brian2, PyTorch) can run here. */
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

/* ---- environment ---------------------------------------------------------- */

static void read_first_line_matching(const char *path, const char *key, char *out, size_t size)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[1024];
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0)
            continue;
        char *p = strchr(line, ':');
        p = p ? p + 1 : line + klen;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strlen(p);
        while (n && (p[n - 1] == '\n' || p[n - 1] == ' '))
            p[--n] = '\0';
        snprintf(out, size, "%s", p);
        break;
    }
    fclose(f);
}

cJSON *bl_bench_loadavg_json(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double a[3] = {NAN, NAN, NAN};
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &a[0], &a[1], &a[2]) != 3)
            a[0] = a[1] = a[2] = NAN;
        fclose(f);
    }
    if (isnan(a[0]))
        return cJSON_CreateNull();
    return cJSON_CreateDoubleArray(a, 3);
}

int bl_bench_affinity_count(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 0;
    return CPU_COUNT(&set);
}

cJSON *bl_bench_environment_json(bl_bench_ctx *ctx)
{
    cJSON *env = cJSON_CreateObject();
    cJSON_AddStringToObject(env, "brainlesslab_version", BL_VERSION);
    cJSON_AddStringToObject(env, "source_revision", BL_SOURCE_REVISION);
    if (BL_SOURCE_DIRTY_SHA256[0])
        cJSON_AddStringToObject(env, "source_dirty_sha256", BL_SOURCE_DIRTY_SHA256);
    else
        cJSON_AddNullToObject(env, "source_dirty_sha256");
    cJSON_AddBoolToObject(env, "source_dirty", BL_SOURCE_DIRTY_SHA256[0] != '\0');
    cJSON_AddStringToObject(env, "compiler_and_flags", BL_BUILD_FLAGS);
    cJSON_AddBoolToObject(env, "sanitized_build", ctx->sanitized);
    char buf[512];
    read_first_line_matching("/proc/cpuinfo", "model name", buf, sizeof buf);
    cJSON_AddStringToObject(env, "cpu_model", buf[0] ? buf : "unknown");
    cJSON_AddNumberToObject(env, "cores_online", (double)sysconf(_SC_NPROCESSORS_ONLN));
    cJSON_AddNumberToObject(env, "affinity_cpus", (double)bl_bench_affinity_count());
    read_first_line_matching("/proc/meminfo", "MemTotal", buf, sizeof buf);
    cJSON_AddStringToObject(env, "memory_total", buf[0] ? buf : "unknown");
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
        cJSON_AddStringToObject(env, "kernel", buf);
    }
    cJSON_AddItemToObject(env, "loadavg_at_start", bl_bench_loadavg_json());
    cJSON_AddNumberToObject(env, "threads_requested", ctx->o->threads);
    cJSON_AddNumberToObject(env, "threads_given_to_every_case", ctx->threads);
    cJSON *backends = cJSON_AddArrayToObject(env, "backends_compiled");
    for (const char *const *b = bl_engine_backends(); *b; b++)
        cJSON_AddItemToArray(backends, cJSON_CreateString(*b));
    cJSON *py = cJSON_AddObjectToObject(env, "python");
    cJSON_AddStringToObject(py, "executable", ctx->python);
    cJSON_AddBoolToObject(py, "available", ctx->python_ok);
    if (!ctx->python_ok)
        cJSON_AddStringToObject(py, "reason", ctx->python_reason);
    cJSON *peers = cJSON_AddObjectToObject(env, "peer_packages");
    if (ctx->brian2_versions)
        cJSON_AddItemToObject(peers, "brian2", cJSON_Duplicate(ctx->brian2_versions, 1));
    else
        cJSON_AddStringToObject(peers, "brian2", ctx->brian2_reason);
    if (ctx->torch_versions)
        cJSON_AddItemToObject(peers, "torch", cJSON_Duplicate(ctx->torch_versions, 1));
    else
        cJSON_AddStringToObject(peers, "torch", ctx->torch_reason);
    return env;
}

/* ---- peers: availability probes ------------------------------------------ */

cJSON *bl_bench_probe_python(bl_bench_ctx *ctx, const char *name, const char *code, const char *const *env,
                             char *reason, size_t rsize)
{
    char out[4200], log[4200];
    snprintf(out, sizeof out, "%s/probe-%s.json", ctx->runs_dir, name);
    snprintf(log, sizeof log, "%s/probe-%s.log", ctx->runs_dir, name);
    char *argv[] = {ctx->python, "-c", (char *)code, out, NULL};
    static const char *const plain_env[] = {"PYTHONDONTWRITEBYTECODE=1", NULL};
    bl_bench_proc p;
    bl_error err = {0};
    if (bl_bench_spawn(argv, env ? env : plain_env, log, 300, &p, &err)) {
        snprintf(reason, rsize, "%s", err.message);
        return NULL;
    }
    if (!p.exited || p.exit_status != 0) {
        char how[128], tail[400];
        bl_bench_proc_describe(&p, 300, how, sizeof how);
        bl_bench_log_tail(log, tail, sizeof tail);
        snprintf(reason, rsize, "%s cannot import %s (%s): %s", ctx->python, name, how, tail);
        return NULL;
    }
    char *text = NULL;
    if (bl_bench_read_text(out, &text, &err)) {
        snprintf(reason, rsize, "%s", err.message);
        return NULL;
    }
    cJSON *j = cJSON_Parse(text);
    free(text);
    if (!j)
        snprintf(reason, rsize, "probe of %s wrote no JSON", name);
    return j;
}

/* One peer's probe: its versions when a selected case needs it, else the reason it was not probed. */
static void probe_peer(bl_bench_ctx *ctx, int need, const char *module, const char *label, const char *code,
                       cJSON **versions, char *reason, size_t size)
{
    if (!need)
        snprintf(reason, size, "not probed: no %s case selected", label);
    else
        *versions = bl_bench_probe_python(ctx, module, code, NULL, reason, size);
}

void bl_bench_probe_peers(bl_bench_ctx *ctx)
{
    ctx->python_ok = access(ctx->python, X_OK) == 0;
    if (!ctx->python_ok) {
        snprintf(ctx->python_reason, sizeof ctx->python_reason, "%s: not an executable (%s)", ctx->python,
                 strerror(errno));
        snprintf(ctx->brian2_reason, sizeof ctx->brian2_reason, "%s", ctx->python_reason);
        snprintf(ctx->torch_reason, sizeof ctx->torch_reason, "%s", ctx->python_reason);
        return;
    }
    probe_peer(ctx, ctx->need_brian2, "brian2", "Brian2",
               "import sys, json, numpy, brian2\n"
               "json.dump({'python': sys.version.split()[0], 'numpy': numpy.__version__, "
               "'brian2': brian2.__version__}, open(sys.argv[1], 'w'))\n",
               &ctx->brian2_versions, ctx->brian2_reason, sizeof ctx->brian2_reason);
    probe_peer(ctx, ctx->need_torch, "torch", "torch",
               "import sys, json, numpy, torch\n"
               "json.dump({'python': sys.version.split()[0], 'numpy': numpy.__version__, "
               "'torch': torch.__version__, 'default_threads': torch.get_num_threads(), "
               "'parallel_info': torch.__config__.parallel_info().splitlines()[:8]}, open(sys.argv[1], 'w'))\n",
               &ctx->torch_versions, ctx->torch_reason, sizeof ctx->torch_reason);
}
