/* Shared by the runners of every operation (see xp_impl.h). */
#include "experiment/xp_impl.h"

#include "core/stream.h"
#include "core/json_check.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bl_xp_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

bl_status bl_xp_reserve(const bl_plan *plan, const char *root, bl_record **rec, bl_error *err)
{
    return bl_xp_reserve_named(root, bl_plan_id(plan), bl_plan_hash(plan), rec, err);
}

bl_status bl_xp_reserve_named(const char *root, const char *id, const char *hash, bl_record **rec, bl_error *err)
{
    char stamp[32], name[256];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    for (int k = 1; k < 1000; k++) {
        if (k == 1)
            snprintf(name, sizeof name, "%s-%s-%.8s", id, stamp, hash);
        else
            snprintf(name, sizeof name, "%s-%s-%.8s-%d", id, stamp, hash, k);
        bl_status st = bl_record_reserve(root, name, rec, err);
        if (st != BL_ERR_EXISTS)
            return st;
    }
    return bl_fail(err, BL_ERR_EXISTS, "%s: could not find a free record name for %s", root, id);
}

/* The plan's bytes as they were read and parsed (kept in the plan, never
 * re-read: a plan edited during the run would otherwise be recorded in place
 * of the one that ran; issue 26): a record is then rerunnable from itself. */
bl_status bl_xp_copy_plan(const bl_plan *plan, bl_record *rec, bl_error *err)
{
    char dst[4096];
    bl_status st = bl_record_path(rec, "plan.toml", dst, sizeof dst, err);
    if (st)
        return st;
    size_t len = 0;
    const char *text = bl_plan_text(plan, &len);
    if (!text)
        return bl_fail(err, BL_ERR_INTERNAL, "%s: the plan's text was not kept", bl_plan_path(plan));
    FILE *out = fopen(dst, "wb");
    int ok = out != NULL && (len == 0 || fwrite(text, 1, len, out) == len);
    if (out && fclose(out))
        ok = 0;
    return ok ? BL_OK : bl_fail(err, BL_ERR_IO, "%s: cannot write the plan: %s", dst, strerror(errno));
}

bl_status bl_xp_begin(const bl_plan *plan, bl_record *rec, bl_error *err)
{
    bl_status st = BL_OK;
    for (size_t i = 0; !st && i < bl_plan_n_inputs(plan); i++) {
        const bl_plan_input *in = bl_plan_input_at(plan, i);
        /* Hashed when the plan and its connectome were read: never re-read (issue 16). */
        st = bl_record_add_input_digest(rec, in->role, in->path, in->sha256, in->bytes, err);
    }
    if (!st)
        st = bl_record_set_json(rec, "plan", bl_plan_resolved_json(plan), err);
    if (!st) {
        char seeds[512];
        bl_stream_connectome_seeds_json(bl_plan_seed(plan), 1, seeds, sizeof seeds);
        st = bl_record_set_json(rec, "seeds", seeds, err);
    }
    return st ? st : bl_xp_copy_plan(plan, rec, err);
}

bl_status bl_xp_write_json(bl_record *rec, const char *name, cJSON *o, bl_error *err)
{
    char path[4096];
    char *text = o ? bl_json_print(o, 1) : NULL;
    cJSON_Delete(o);
    bl_status st = text ? bl_record_path(rec, name, path, sizeof path, err)
                        : bl_fail(err, BL_ERR_NOMEM, "cannot render %s", name);
    if (!st) {
        FILE *f = fopen(path, "w");
        int ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
        if (f && fclose(f))
            ok = 0;
        if (!ok)
            st = bl_fail(err, BL_ERR_IO, "%s: cannot write", path);
    }
    free(text);
    return st;
}

bl_status bl_xp_write_npy(bl_record *rec, const char *name, bl_dtype dt, int nd, const uint64_t *shape,
                          const void *data, bl_error *err)
{
    char path[4096];
    static const int64_t empty = 0;
    bl_status st = bl_record_path(rec, name, path, sizeof path, err);
    return st ? st : bl_npy_write(path, dt, nd, shape, data ? data : &empty, err);
}

bl_status bl_xp_finish(bl_record *rec, bl_status st, bl_error *err)
{
    if (!st)
        st = bl_record_seal(rec, err);
    if (st) {
        bl_error ferr = {0};
        if (bl_record_fail(rec, err->message, &ferr))
            bl_fail_context(err, "and the FAILED record could not be written (%s)", ferr.message);
        bl_fail_context(err, "record %s FAILED", bl_record_dir(rec));
    }
    return st;
}

bl_status bl_xp_protect(bl_record *rec, const bl_experiment_options *opt, int multi, bl_error *err)
{
    bl_status st = BL_OK;
    if (opt->sign_key)
        st = bl_record_sign_with(rec, opt->sign_key, err);
    /* Handlers are process-wide: only when the program asked (the CLI does;
     * an embedding such as Python keeps its own). */
    if (!st && !multi && opt->guard_signals)
        st = bl_record_guard_signals(rec, err);
    return st;
}

bl_status bl_xp_end(bl_record *rec, bl_xp_log *log, bl_status st, bl_error *err)
{
    if (log) {
        bl_xp_logf(log, st ? "failed: %s" : "sealing%s", st ? err->message : "");
        bl_xp_log_close(log);
    }
    return bl_xp_finish(rec, st, err);
}

int bl_xp_threads(const bl_experiment_options *opt, int plan_threads)
{
    return opt->threads >= 0 ? opt->threads : plan_threads;
}

void bl_xp_log_open(bl_xp_log *log, bl_record *rec)
{
    char path[4096];
    bl_error e = {0};
    log->t0 = bl_xp_now();
    log->f = NULL;
    /* A log that cannot be opened costs the record its log, not the run. */
    if (!bl_record_path(rec, "run.log", path, sizeof path, &e))
        log->f = fopen(path, "w");
}

void bl_xp_log_reopen(bl_xp_log *log, bl_record *rec)
{
    char path[4096];
    bl_error e = {0};
    log->t0 = bl_xp_now();
    log->f = NULL;
    if (!bl_record_path(rec, "run.log", path, sizeof path, &e))
        log->f = fopen(path, "a");
}

void bl_xp_logf(bl_xp_log *log, const char *fmt, ...)
{
    if (!log || !log->f)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(log->f, "%10.3f  ", bl_xp_now() - log->t0);
    vfprintf(log->f, fmt, ap);
    fputc('\n', log->f);
    fflush(log->f);
    va_end(ap);
}

void bl_xp_log_close(bl_xp_log *log)
{
    if (log && log->f)
        fclose(log->f);
    if (log)
        log->f = NULL;
}
