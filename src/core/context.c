/* The context (context.h): what used to be process-wide, held per caller.
 * This file is the only place in the library that reads the environment for
 * tunables; everything else asks the context. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context_impl.h"

static bl_status set_string(char **slot, const char *value, bl_error *err)
{
    char *copy = NULL;
    if (value && *value) {
        copy = strdup(value);
        if (!copy)
            return bl_fail(err, BL_ERR_NOMEM, "context: cannot copy a string of %zu bytes", strlen(value));
    }
    free(*slot);
    *slot = copy;
    return BL_OK;
}

/* A positive integer, or unset/empty (0); anything else names the variable. */
static bl_status env_u64(const char *name, uint64_t *out, bl_error *err)
{
    const char *text = getenv(name);
    *out = 0;
    if (!text || !*text)
        return BL_OK;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-')
        return bl_fail(err, BL_ERR_INVALID, "environment variable %s='%s': not a non-negative integer", name, text);
    *out = (uint64_t)v;
    return BL_OK;
}

bl_status bl_context_create(bl_context **out, bl_error *err)
{
    *out = NULL;
    bl_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate a context");
    ctx->job.ranks = 1;
    ctx->job.replicas = 1;
    /* Tests set BL_CPU_PARTITION_MIN_EDGES=1 to split even small graphs; the
     * benchmark sets BL_MPI_STATS for the per-rank counters of its workers. */
    bl_status st = env_u64("BL_CPU_PARTITION_MIN_EDGES", &ctx->cpu_partition_min_edges, err);
    /* BL_CPU_WINDOW picks the cpu and mpi backends' window path (the values
     * of partition.h's BL_WINDOW_*): 0 one step at a time, 1 every window
     * at once where the model can, 2 where the kernel judges it pays, 3 (the
     * default, unset) whichever the partition measures to be faster. Tests
     * and A/B timings set it; every value gives the same bits. */
    if (!st)
        st = env_u64("BL_CPU_WINDOW", &ctx->cpu_window, err);
    const char *window = getenv("BL_CPU_WINDOW");
    if (!st && (!window || !*window))
        ctx->cpu_window = 3;
    if (!st && ctx->cpu_window > 3)
        st = bl_fail(err, BL_ERR_INVALID, "environment variable BL_CPU_WINDOW=%llu: must be 0 (never), 1 (always), "
                     "2 (auto) or 3 (measured, the default)", (unsigned long long)ctx->cpu_window);
    if (!st)
        st = set_string(&ctx->mpi_stats_prefix, getenv("BL_MPI_STATS"), err);
    if (st) {
        bl_context_destroy(ctx);
        return st;
    }
    *out = ctx;
    return BL_OK;
}

void bl_context_destroy(bl_context *ctx)
{
    if (!ctx)
        return;
    if (ctx->job.release)
        ctx->job.release(&ctx->job);
    free(ctx->mpi_stats_prefix);
    free(ctx);
}

/* The default context: created once, on first use, and kept for the life of
 * the process (what NULL means). The one deliberate process-wide object. */
static bl_context *default_ctx;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void default_create(void)
{
    bl_error e = {0};
    if (bl_context_create(&default_ctx, &e)) {
        /* An unparsable tunable must not make NULL unusable: fall back to the
         * built-in defaults (bl_context_create reports it to explicit callers). */
        default_ctx = calloc(1, sizeof *default_ctx);
        if (default_ctx) {
            default_ctx->job.ranks = 1;
            default_ctx->job.replicas = 1;
        }
    }
}

bl_context *bl_context_default(void)
{
    pthread_once(&default_once, default_create);
    return default_ctx;
}

bl_context *bl_context_resolve(bl_context *ctx) { return ctx ? ctx : bl_context_default(); }

void bl_context_set_log(bl_context *ctx, bl_log_fn fn, void *user)
{
    ctx = bl_context_resolve(ctx);
    ctx->log = fn;
    ctx->log_user = user;
}

void bl_context_set_progress(bl_context *ctx, bl_progress_fn fn, void *user)
{
    ctx = bl_context_resolve(ctx);
    ctx->progress = fn;
    ctx->progress_user = user;
}

void bl_context_set_cancel(bl_context *ctx, bl_cancel_fn fn, void *user)
{
    ctx = bl_context_resolve(ctx);
    ctx->cancel = fn;
    ctx->cancel_user = user;
}

/* Engines ask once per delay window, and a screen steps several engines on
 * worker threads at once: the callback is still called one thread at a time
 * (its documented contract), under this lock. Asked only when a callback is
 * set, so a run without one pays a load and a branch per window. */
static pthread_mutex_t cancel_mutex = PTHREAD_MUTEX_INITIALIZER;

int bl_context_cancelled(const bl_context *ctx)
{
    const bl_context *c = ctx ? ctx : bl_context_default();
    if (!c || !c->cancel)
        return 0;
    pthread_mutex_lock(&cancel_mutex);
    int stop = c->cancel(c->cancel_user) != 0;
    pthread_mutex_unlock(&cancel_mutex);
    return stop;
}

void bl_context_log(const bl_context *ctx, const char *fmt, ...)
{
    if (!ctx || !ctx->log)
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    ctx->log(ctx->log_user, line);
}

bl_status bl_context_set_mpi_stats_prefix(bl_context *ctx, const char *prefix, bl_error *err)
{
    return set_string(&bl_context_resolve(ctx)->mpi_stats_prefix, prefix, err);
}

const char *bl_context_mpi_stats_prefix(const bl_context *ctx)
{
    const bl_context *c = ctx ? ctx : bl_context_default();
    return c->mpi_stats_prefix;
}

void bl_context_set_cpu_partition_min_edges(bl_context *ctx, uint64_t edges)
{
    bl_context_resolve(ctx)->cpu_partition_min_edges = edges;
}

uint64_t bl_context_cpu_partition_min_edges(const bl_context *ctx)
{
    const bl_context *c = ctx ? ctx : bl_context_default();
    return c->cpu_partition_min_edges;
}
