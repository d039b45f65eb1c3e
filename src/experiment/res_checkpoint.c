/* Batch checkpoints of a reservoir evaluation (checkpoint.h, "Reservoir
 * operations"). A batch's file holds its trials' records (bl_res_trial, as
 * the evaluation left them before the statuses are settled) and their probe
 * cells, native byte order: a checkpoint is resumed by the build that wrote
 * it. The log is appended one line per batch, so a run of a million trials
 * does not rewrite a growing manifest; each line carries the batch file's
 * SHA-256, and a line cut short by a kill does not parse and is ignored. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/hash.h"
#include "experiment/checkpoint.h"
#include "experiment/res_run_impl.h"

#define LOG_NAME "checkpoint/batches.log"
#define LOG_MAX ((uint64_t)1 << 30)
#define HEAD "brainlesslab-reservoir-checkpoint 1"

struct bl_xp_res_ckpt {
    bl_record *rec;
    char plan[65], plan_file[65];
    int resume, log_fd;
    uint64_t kept, dropped, first_run;
};

bl_status bl_xp_res_ckpt_open(bl_record *rec, const char *plan_hash, const char *plan_file_sha256, int resume,
                              bl_xp_res_ckpt **out, bl_error *err)
{
    *out = NULL;
    bl_xp_res_ckpt *c = calloc(1, sizeof *c);
    if (!c)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate a checkpoint");
    c->rec = rec;
    c->resume = resume;
    c->log_fd = -1;
    c->first_run = UINT64_MAX;
    snprintf(c->plan, sizeof c->plan, "%s", plan_hash);
    snprintf(c->plan_file, sizeof c->plan_file, "%s", plan_file_sha256 ? plan_file_sha256 : "");
    *out = c;
    return BL_OK;
}

static size_t trial_bytes(const bl_res_evaluation *ev) { return sizeof(bl_res_trial) + 3 * ev->probe_width * sizeof(double); }

/* Every batch the log names whose file matches goes back into ev. */
static bl_status restore(void *user, bl_res_evaluation *ev, uint8_t *have, bl_error *err)
{
    bl_xp_res_ckpt *c = user;
    if (!c->resume)
        return BL_OK;
    char path[4096];
    snprintf(path, sizeof path, "%s/" LOG_NAME, bl_record_dir(c->rec));
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return BL_OK; /* no batch had ended: every trial runs */
    char *text = NULL;
    uint64_t len = 0;
    bl_status st = bl_xp_ckpt_read_all(path, LOG_MAX, &text, &len, err);
    if (st)
        return st;
    char *nl = memchr(text, '\n', (size_t)len);
    char head[256];
    snprintf(head, sizeof head, HEAD " %s %s %zu %u", c->plan, c->plan_file, ev->n_trials, ev->probe_width);
    if (!nl || (size_t)(nl - text) != strlen(head) || memcmp(text, head, strlen(head))) {
        free(text);
        return bl_fail(err, BL_ERR_INVALID, "%s: the checkpoint is of another plan, plan file or trial count "
                       "(expected \"%s\")", path, head);
    }
    const size_t tb = trial_bytes(ev), pw = 3 * (size_t)ev->probe_width;
    for (char *line = nl + 1; !st && line < text + len;) {
        char *end = memchr(line, '\n', (size_t)(text + len - line));
        if (!end)
            break; /* cut short by a kill */
        *end = '\0';
        uint64_t first, n, bytes;
        char sha[65], tail;
        if (sscanf(line, "%" SCNu64 " %" SCNu64 " %64s %" SCNu64 "%c", &first, &n, sha, &bytes, &tail) != 4 ||
            strlen(sha) != 64 || first >= ev->n_trials || n == 0 || n > ev->n_trials - first || bytes != n * tb) {
            line = end + 1;
            c->dropped++;
            continue;
        }
        line = end + 1;
        char bp[4200], hex[65], *b = NULL;
        uint64_t blen = 0;
        bl_error ignored = {0};
        snprintf(bp, sizeof bp, "%s/checkpoint/batch-%" PRIu64 ".bin", bl_record_dir(c->rec), first);
        if (bl_xp_ckpt_read_all(bp, bytes, &b, &blen, &ignored) || blen != bytes) {
            free(b);
            c->dropped++;
            continue;
        }
        bl_sha256_buffer(b, (size_t)blen, hex); /* the bytes read are the bytes used */
        if (strcmp(hex, sha)) {
            free(b);
            c->dropped++;
            continue;
        }
        for (uint64_t k = 0; k < n; k++) {
            const char *rec = b + k * tb;
            bl_res_trial tr;
            memcpy(&tr, rec, sizeof tr);
            /* The record must be the trial it claims to be (and the plan's). */
            const bl_res_trial *want = &ev->trials[first + k];
            if (tr.target != want->target || tr.block != want->block || tr.trial != want->trial ||
                tr.seed_world != want->seed_world || tr.seed_construction != want->seed_construction) {
                st = bl_fail(err, BL_ERR_INVALID, "%s: trial %" PRIu64 " is not the plan's", bp, first + k);
                break;
            }
            ev->trials[first + k] = tr;
            if (pw && ev->probe_x)
                memcpy(ev->probe_x + (first + k) * pw, rec + sizeof tr, pw * sizeof(double));
            if (!have[first + k])
                c->kept++;
            have[first + k] = 1;
        }
        free(b);
    }
    free(text);
    return st;
}

static bl_status append_line(bl_xp_res_ckpt *c, const char *line, bl_error *err)
{
    size_t len = strlen(line), done = 0;
    while (done < len) {
        ssize_t w = write(c->log_fd, line + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return bl_fail(err, BL_ERR_IO, "%s/" LOG_NAME ": cannot append: %s", bl_record_dir(c->rec),
                           strerror(errno));
        done += (size_t)w;
    }
    return fsync(c->log_fd) == 0 ? BL_OK
                                 : bl_fail(err, BL_ERR_IO, "%s/" LOG_NAME ": cannot flush: %s", bl_record_dir(c->rec),
                                           strerror(errno));
}

static bl_status saved(void *user, const bl_res_evaluation *ev, size_t first, size_t n, bl_error *err)
{
    bl_xp_res_ckpt *c = user;
    char path[4096], rel[64], line[256];
    bl_status st = BL_OK;
    if (first < c->first_run)
        c->first_run = first;
    if (c->log_fd < 0) { /* the first batch: the log, with its head when new */
        if ((st = bl_record_path(c->rec, LOG_NAME, path, sizeof path, err)))
            return st;
        struct stat sb;
        int fresh = lstat(path, &sb) != 0;
        c->log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (c->log_fd < 0)
            return bl_fail(err, BL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        if (!fresh && sb.st_size > 0) {
            /* A torn last line (a kill mid-append) would glue onto ours. */
            char last = '\n';
            int rfd = open(path, O_RDONLY | O_CLOEXEC);
            if (rfd >= 0) {
                if (pread(rfd, &last, 1, sb.st_size - 1) != 1)
                    last = '\n';
                close(rfd);
            }
            if (last != '\n' && (st = append_line(c, "\n", err)))
                return st;
        }
        if (fresh) {
            char head[256];
            snprintf(head, sizeof head, HEAD " %s %s %zu %u\n", c->plan, c->plan_file, ev->n_trials, ev->probe_width);
            if ((st = append_line(c, head, err)) || (st = bl_xp_ckpt_fsync_dir_of(path, err)))
                return st;
        }
    }
    const size_t tb = trial_bytes(ev), pw = 3 * (size_t)ev->probe_width;
    char *b = malloc(n * tb > 0 ? n * tb : 1);
    if (!b)
        return bl_fail(err, BL_ERR_NOMEM, "cannot checkpoint %zu trials", n);
    for (size_t k = 0; k < n; k++) {
        memcpy(b + k * tb, &ev->trials[first + k], sizeof(bl_res_trial));
        if (pw)
            memcpy(b + k * tb + sizeof(bl_res_trial), ev->probe_x + (first + k) * pw, pw * sizeof(double));
    }
    char hex[65];
    bl_sha256_buffer(b, n * tb, hex);
    snprintf(rel, sizeof rel, "checkpoint/batch-%zu.bin", first);
    st = bl_record_path(c->rec, rel, path, sizeof path, err);
    if (!st) {
        const void *parts[1] = {b};
        size_t lens[1] = {n * tb};
        st = bl_xp_ckpt_write_atomic(path, parts, lens, 1, err);
    }
    free(b);
    snprintf(line, sizeof line, "%zu %zu %s %zu\n", first, n, hex, n * tb);
    return st ? st : append_line(c, line, err);
}

void bl_xp_res_ckpt_hooks(bl_xp_res_ckpt *c, bl_res_resume_hooks *hooks)
{
    hooks->user = c;
    hooks->restore = restore;
    hooks->saved = saved;
}

uint64_t bl_xp_res_ckpt_kept(const bl_xp_res_ckpt *c) { return c ? c->kept : 0; }
uint64_t bl_xp_res_ckpt_dropped(const bl_xp_res_ckpt *c) { return c ? c->dropped : 0; }
uint64_t bl_xp_res_ckpt_first_run(const bl_xp_res_ckpt *c) { return c ? c->first_run : UINT64_MAX; }

void bl_xp_res_ckpt_destroy(bl_xp_res_ckpt *c)
{
    if (!c)
        return;
    if (c->log_fd >= 0)
        close(c->log_fd);
    free(c);
}
