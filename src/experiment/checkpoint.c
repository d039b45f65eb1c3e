/* Trial checkpoints of a connectome run (checkpoint.h). */
#include "experiment/checkpoint.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/hash.h"
#include "core/file.h"
#include "engine/network_impl.h"
#include "core/json_check.h"
#include "engine/snapshot.h"

#define DIR_NAME "checkpoint"
#define MANIFEST DIR_NAME "/checkpoint.json"
#define MANIFEST_MAX ((uint64_t)256 << 20)
#define MAGIC "BLCKPT01"

/* A trial's file: this header, then counts int32[n], final v and g [n] of
 * the state dtype, the PSTH row int32[psth_cells], probe v and g bytes.
 * Native byte order: a checkpoint is resumed by the build that wrote it. */
typedef struct blob_head {
    char magic[8];
    uint32_t trial, state_size;
    uint64_t n_neurons, psth_cells, probe_bytes;
    unsigned char digest[32];
} blob_head;

typedef struct entry {
    int listed, kept;
    char data_sha[65], spikes_sha[65];
    uint64_t data_bytes, spikes_bytes;
} entry;

/* A trial in flight, checkpointed within (bl_xp_ckpt_partial_*). */
typedef struct partial {
    int32_t *pend; /* (step, neuron) pairs since its last checkpoint */
    uint64_t n_pend, cap_pend; /* int32 values */
    uint64_t n_pairs;          /* pairs in its .pairs file, committed */
    char chain[65];            /* chain hash of those pairs, chunk by chunk */
    uint64_t *chunks;          /* pairs per checkpoint */
    uint64_t n_chunks;
    /* resume: what the checkpoint holds, verified, until it is applied */
    int ok;
    uint64_t step;
    int32_t *pairs;
    char *bin; /* the .bin file: head, chunks, probe rows, engine blob */
    uint64_t bin_len;
} partial;

struct bl_xp_ckpt {
    bl_record *rec;
    char plan[65], backend[32];
    int threads, ranks, spike_files, found;
    uint64_t events; /* spikes of the restored trials */
    uint32_t trials, kept, dropped;
    entry *e;
    partial **pt; /* [trials], allocated on first use per trial (within-trial checkpoints on) */
    uint32_t partials_kept, partials_dropped;
    uint64_t partial_from_step; /* the step the earliest resumed trial continues from */
    uint32_t partial_first;     /* that trial (trials: none) */
};

#define PART_MAGIC "BLPART01"
/* checkpoint/partial-NNNN.bin: this head (body_sha256 over the head with it
 * zeroed, then the rest), chunks uint64[n_chunks], probe v then g rows of
 * the trial (probe_bytes in all), the engine's blob (snapshot.h).
 * checkpoint/partial-NNNN.pairs: the trial's (step, neuron) int32 pairs from
 * its start; its first n_pairs are the checkpoint's (a kill between the
 * append and the .bin's rename leaves more, ignored and cut). chain: SHA-256
 * over the previous chain's hex and each chunk's bytes, so a checkpoint
 * names its prefix without hashing it again. */
typedef struct part_head {
    char magic[8];
    uint32_t trial, reserved;
    uint64_t step, n_pairs, n_chunks, probe_bytes, blob_len;
    char chain[65], body_sha256[65];
    char pad[6];
} part_head;

static bl_status unstash(bl_record *rec, bl_error *err);
static bl_status partial_load(bl_xp_ckpt *c, uint32_t t, const bl_result *res, bl_error *err);
static void partial_done(bl_xp_ckpt *c, uint32_t t);

static void partial_names(uint32_t t, char bin[64], char pairs[64])
{
    snprintf(bin, 64, DIR_NAME "/partial-%04" PRIu32 ".bin", t);
    snprintf(pairs, 64, DIR_NAME "/partial-%04" PRIu32 ".pairs", t);
}

static void partial_free(partial *p)
{
    if (!p)
        return;
    free(p->pend);
    free(p->chunks);
    free(p->pairs);
    free(p->bin);
    free(p);
}

static void trial_names(uint32_t t, char data[64], char spikes[64])
{
    snprintf(data, 64, DIR_NAME "/trial-%04" PRIu32 ".bin", t);
    snprintf(spikes, 64, "spikes/trial-%04" PRIu32 ".h5", t);
}

bl_status bl_xp_ckpt_fsync_dir_of(const char *path, bl_error *err)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int ok = fd >= 0 && fsync(fd) == 0;
    if (fd >= 0)
        close(fd);
    return ok ? BL_OK : bl_fail(err, BL_ERR_IO, "%s: cannot flush the directory: %s", dir, strerror(errno));
}

/* tmp + fsync + rename + fsync of the directory: the file at `path` is
 * always either the old one or this one, whole. */
bl_status bl_xp_ckpt_write_atomic(const char *path, const void *const *parts, const size_t *lens, int n_parts,
                                   bl_error *err)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd < 0)
        return bl_fail(err, BL_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
    int ok = 1;
    for (int p = 0; ok && p < n_parts; p++) {
        const char *b = parts[p];
        size_t done = 0;
        while (ok && done < lens[p]) {
            ssize_t w = write(fd, b + done, lens[p] - done);
            if (w < 0 && errno == EINTR)
                continue;
            ok = w > 0;
            done += w > 0 ? (size_t)w : 0;
        }
    }
    int e = errno;
    if (ok && fsync(fd) != 0)
        ok = 0, e = errno;
    if (close(fd) != 0 && ok)
        ok = 0, e = errno;
    if (ok && rename(tmp, path) != 0)
        ok = 0, e = errno;
    if (!ok) {
        unlink(tmp);
        return bl_fail(err, BL_ERR_IO, "%s: cannot write the checkpoint: %s", path, strerror(e));
    }
    return bl_xp_ckpt_fsync_dir_of(path, err);
}

/* A whole file read once (at most `max` bytes), regular files only. */
bl_status bl_xp_ckpt_read_all(const char *path, uint64_t max, char **out, uint64_t *len, bl_error *err)
{
    int fd;
    uint64_t size;
    *out = NULL;
    bl_status st = bl_open_regular(path, &fd, &size, err);
    if (st)
        return st;
    if (size > max) {
        close(fd);
        return bl_fail(err, BL_ERR_INVALID, "%s: %" PRIu64 " bytes, more than a checkpoint holds", path, size);
    }
    char *b = malloc(size ? size : 1);
    uint64_t done = 0;
    while (b && done < size) {
        ssize_t r = read(fd, b + done, size - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        done += (uint64_t)r;
    }
    close(fd);
    if (!b || done != size) {
        free(b);
        return bl_fail(err, b ? BL_ERR_IO : BL_ERR_NOMEM, "%s: cannot read", path);
    }
    *out = b;
    *len = size;
    return BL_OK;
}

static bl_status hash_file_synced(const char *path, char hex[65], uint64_t *bytes, bl_error *err)
{
    bl_status st = bl_sha256_file(path, hex, bytes, err);
    if (st)
        return st;
    /* The spike file reaches the disk before the checkpoint names it. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    int ok = fd >= 0 && fsync(fd) == 0;
    if (fd >= 0)
        close(fd);
    return ok ? BL_OK : bl_fail(err, BL_ERR_IO, "%s: cannot flush to disk: %s", path, strerror(errno));
}

static bl_status read_manifest(bl_xp_ckpt *c, const char *path, bl_error *err)
{
    char *text;
    uint64_t len;
    bl_status st = bl_xp_ckpt_read_all(path, MANIFEST_MAX, &text, &len, err);
    if (st)
        return st;
    cJSON *m = cJSON_ParseWithLength(text, (size_t)len);
    free(text);
    const char *fmt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "format"));
    const char *plan = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "plan_sha256"));
    const char *backend = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "backend"));
    const cJSON *threads = cJSON_GetObjectItemCaseSensitive(m, "threads");
    const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(m, "ranks");
    const cJSON *trials = cJSON_GetObjectItemCaseSensitive(m, "trials");
    const cJSON *spikes = cJSON_GetObjectItemCaseSensitive(m, "spike_files");
    const cJSON *done = cJSON_GetObjectItemCaseSensitive(m, "done");
    if (!fmt || strcmp(fmt, "brainlesslab-checkpoint") || !plan || !backend || !cJSON_IsNumber(threads) || !cJSON_IsNumber(ranks) ||
        !cJSON_IsNumber(trials) || !cJSON_IsBool(spikes) || !cJSON_IsArray(done))
        st = bl_fail(err, BL_ERR_INVALID, "%s: not a checkpoint manifest this build wrote", path);
    else if (strcmp(plan, c->plan))
        st = bl_fail(err, BL_ERR_INVALID, "%s: the checkpoint is of plan %.12s, not of this plan (%.12s)", path,
                     plan, c->plan);
    else if (trials->valuedouble != (double)c->trials || cJSON_IsTrue(spikes) != !!c->spike_files)
        st = bl_fail(err, BL_ERR_INVALID, "%s: the checkpoint is of another run (trials or spike output)", path);
    else if (strcmp(backend, c->backend) || threads->valuedouble != (double)c->threads ||
             ranks->valuedouble != (double)c->ranks)
        st = bl_fail(err, BL_ERR_INVALID, "%s: the run ran on backend %s with %g thread(s) x %g rank(s); resume it "
                     "the same way (now %s with %d x %d)", path, backend, threads->valuedouble, ranks->valuedouble,
                     c->backend, c->threads, c->ranks);
    const cJSON *d;
    cJSON_ArrayForEach(d, done)
    {
        if (st)
            break;
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(d, "trial");
        const char *ds = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "data_sha256"));
        const char *ss = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "spikes_sha256"));
        const cJSON *db = cJSON_GetObjectItemCaseSensitive(d, "data_bytes");
        const cJSON *sb = cJSON_GetObjectItemCaseSensitive(d, "spikes_bytes");
        if (!cJSON_IsNumber(t) || t->valuedouble < 0 || t->valuedouble >= c->trials ||
            t->valuedouble != (double)(uint32_t)t->valuedouble || !ds || strlen(ds) != 64 ||
            !cJSON_IsNumber(db) || (c->spike_files && (!ss || strlen(ss) != 64 || !cJSON_IsNumber(sb)))) {
            st = bl_fail(err, BL_ERR_INVALID, "%s: a malformed trial entry", path);
            break;
        }
        entry *e = &c->e[(uint32_t)t->valuedouble];
        e->listed = 1;
        snprintf(e->data_sha, sizeof e->data_sha, "%s", ds);
        e->data_bytes = (uint64_t)db->valuedouble;
        if (c->spike_files) {
            snprintf(e->spikes_sha, sizeof e->spikes_sha, "%s", ss);
            e->spikes_bytes = (uint64_t)sb->valuedouble;
        }
    }
    cJSON_Delete(m);
    return st;
}

bl_status bl_xp_ckpt_open(bl_record *rec, const char *plan_sha256, uint32_t trials, const char *backend,
                          int threads, int ranks, int spike_files, int resume, bl_xp_ckpt **out, bl_error *err)
{
    *out = NULL;
    bl_xp_ckpt *c = calloc(1, sizeof *c);
    if (c)
        c->e = calloc(trials ? trials : 1, sizeof *c->e);
    if (!c || !c->e) {
        free(c);
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate a checkpoint of %" PRIu32 " trials", trials);
    }
    c->rec = rec;
    snprintf(c->plan, sizeof c->plan, "%s", plan_sha256);
    snprintf(c->backend, sizeof c->backend, "%s", backend);
    c->threads = threads;
    c->ranks = ranks;
    c->spike_files = spike_files;
    c->trials = trials;
    char path[4096];
    bl_status st = resume ? unstash(rec, err) : BL_OK;
    /* checkpoint/ is made by the first save: a run that fails before any
     * trial ends leaves no empty directory in its FAILED record. */
    snprintf(path, sizeof path, "%s/" MANIFEST, bl_record_dir(rec));
    struct stat sb;
    if (!st && resume && lstat(path, &sb) == 0) {
        c->found = 1;
        st = read_manifest(c, path, err);
    }
    if (st) {
        bl_xp_ckpt_destroy(c);
        return st;
    }
    *out = c;
    return BL_OK;
}

/* One listed trial: its data read once and hashed as read, its spike file
 * hashed; restored only when both match. */
static bl_status restore_one(bl_xp_ckpt *c, uint32_t t, bl_result *res, bl_xp_spikes *spikes, bl_error *err)
{
    entry *e = &c->e[t];
    char data[64], sp[64], path[4096], hex[65];
    trial_names(t, data, sp);
    if (c->spike_files) {
        uint64_t bytes = 0;
        bl_error ignored = {0};
        if (bl_record_path(c->rec, sp, path, sizeof path, err))
            return err->status;
        if (bl_sha256_file(path, hex, &bytes, &ignored) || bytes != e->spikes_bytes || strcmp(hex, e->spikes_sha))
            return BL_OK; /* missing or changed: the trial runs again */
    }
    char *b = NULL;
    uint64_t len = 0;
    bl_error ignored = {0};
    if (bl_record_path(c->rec, data, path, sizeof path, err))
        return err->status;
    if (bl_xp_ckpt_read_all(path, e->data_bytes, &b, &len, &ignored))
        return BL_OK;
    bl_sha256_buffer(b, (size_t)len, hex);
    size_t n = (size_t)bl_result_n_neurons(res), sz = bl_dtype_size(bl_result_state_dtype(res));
    size_t cells = bl_xp_spikes_psth_row(spikes), pb = bl_result_probe_trial_bytes(res);
    blob_head h;
    size_t want = sizeof h + n * 4 + 2 * n * sz + cells * 4 + 2 * pb;
    if (len != e->data_bytes || strcmp(hex, e->data_sha) || len != want) {
        free(b);
        return BL_OK;
    }
    memcpy(&h, b, sizeof h);
    if (memcmp(h.magic, MAGIC, 8) || h.trial != t || h.state_size != sz || h.n_neurons != n ||
        h.psth_cells != cells || h.probe_bytes != pb) {
        free(b);
        return BL_OK;
    }
    const char *p = b + sizeof h;
    const int32_t *counts = (const int32_t *)p;
    uint64_t events = 0;
    for (size_t i = 0; i < n; i++)
        events += (uint64_t)(counts[i] > 0 ? counts[i] : 0);
    const char *v = p + n * 4, *g = v + n * sz, *psth = g + n * sz, *pv = psth + cells * 4, *pg = pv + pb;
    bl_status st = bl_result_restore_trial(res, t, counts, v, g, pv, pg, err);
    if (!st)
        st = bl_xp_spikes_restore(spikes, t, h.digest, (const int32_t *)psth, err);
    free(b);
    if (!st) {
        e->kept = 1;
        c->events += events;
    }
    return st;
}

/* Remove what no kept trial owns. */
static bl_status clean(bl_xp_ckpt *c, bl_error *err)
{
    const char *root = bl_record_dir(c->rec);
    const char *dirs[] = {"", DIR_NAME, "spikes"};
    bl_status st = BL_OK;
    for (int d = 0; !st && d < 3; d++) {
        char dp[4096];
        snprintf(dp, sizeof dp, "%s%s%s", root, d ? "/" : "", dirs[d]);
        DIR *dir = opendir(dp);
        if (!dir) {
            if (d && errno == ENOENT)
                continue;
            return bl_fail(err, BL_ERR_IO, "%s: cannot list: %s", dp, strerror(errno));
        }
        struct dirent *de;
        while (!st && (de = readdir(dir))) {
            const char *nm = de->d_name;
            if (!strcmp(nm, ".") || !strcmp(nm, ".."))
                continue;
            char fp[4400];
            snprintf(fp, sizeof fp, "%s/%s", dp, nm);
            struct stat sb;
            if (lstat(fp, &sb) != 0)
                continue;
            int keep = 0;
            uint32_t t;
            char tail[8] = "";
            /* model/: the generated C of a model from equations, which this
             * run wrote before its checkpoint was opened (bl_xp_eq_codegen). */
            if (d == 0)
                keep = !strcmp(nm, ".RESERVED") || !strcmp(nm, "run.log") || !strcmp(nm, "plan.toml") ||
                       (S_ISDIR(sb.st_mode) &&
                        (!strcmp(nm, DIR_NAME) || !strcmp(nm, "spikes") || !strcmp(nm, "model")));
            else if (d == 1)
                keep = !strcmp(nm, "checkpoint.json") ||
                       (sscanf(nm, "trial-%" SCNu32 ".%4s", &t, tail) == 2 && !strcmp(tail, "bin") &&
                        t < c->trials && c->e[t].kept) ||
                       (sscanf(nm, "partial-%" SCNu32 ".%5s", &t, tail) == 2 &&
                        (!strcmp(tail, "bin") || !strcmp(tail, "pairs")) && t < c->trials && !c->e[t].kept &&
                        c->pt && c->pt[t] && c->pt[t]->ok);
            else
                keep = sscanf(nm, "trial-%" SCNu32 ".%3s", &t, tail) == 2 && !strcmp(tail, "h5") && t < c->trials &&
                       c->e[t].kept;
            if (keep)
                continue;
            if (S_ISDIR(sb.st_mode))
                st = bl_fail(err, BL_ERR_INVALID, "%s: a directory no run writes; a resumed run does not remove "
                             "it (move it away and resume again)", fp);
            else if (unlink(fp) != 0)
                st = bl_fail(err, BL_ERR_IO, "%s: cannot remove: %s", fp, strerror(errno));
        }
        closedir(dir);
    }
    return st;
}

bl_status bl_xp_ckpt_restore(bl_xp_ckpt *c, bl_result *res, bl_xp_spikes *spikes, bl_error *err)
{
    bl_status st = BL_OK;
    for (uint32_t t = 0; !st && t < c->trials; t++) {
        if (!c->e[t].listed)
            continue;
        st = restore_one(c, t, res, spikes, err);
        if (c->e[t].kept)
            c->kept++;
        else
            c->dropped++;
    }
    /* Trials not finished may have a checkpoint within them (when this run
     * checkpoints within trials: bl_xp_ckpt_partial_enable before). */
    for (uint32_t t = 0; !st && c->pt && t < c->trials; t++)
        if (!c->e[t].kept)
            st = partial_load(c, t, res, err);
    return st ? st : clean(c, err);
}

int bl_xp_ckpt_has(const bl_xp_ckpt *c, uint32_t trial) { return c && trial < c->trials && c->e[trial].kept; }
uint32_t bl_xp_ckpt_kept(const bl_xp_ckpt *c) { return c ? c->kept : 0; }
uint64_t bl_xp_ckpt_events(const bl_xp_ckpt *c) { return c ? c->events : 0; }
uint32_t bl_xp_ckpt_dropped(const bl_xp_ckpt *c) { return c ? c->dropped : 0; }
int bl_xp_ckpt_found(const bl_xp_ckpt *c) { return c && c->found; }

static bl_status commit(bl_xp_ckpt *c, bl_error *err)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "format", "brainlesslab-checkpoint");
    cJSON_AddNumberToObject(m, "format_version", 1);
    cJSON_AddStringToObject(m, "plan_sha256", c->plan);
    cJSON_AddStringToObject(m, "backend", c->backend);
    cJSON_AddNumberToObject(m, "threads", c->threads);
    cJSON_AddNumberToObject(m, "ranks", c->ranks);
    cJSON_AddNumberToObject(m, "trials", c->trials);
    cJSON_AddBoolToObject(m, "spike_files", c->spike_files);
    cJSON *done = cJSON_AddArrayToObject(m, "done");
    for (uint32_t t = 0; done && t < c->trials; t++) {
        if (!c->e[t].kept)
            continue;
        cJSON *d = cJSON_CreateObject();
        cJSON_AddNumberToObject(d, "trial", t);
        cJSON_AddStringToObject(d, "data_sha256", c->e[t].data_sha);
        cJSON_AddNumberToObject(d, "data_bytes", (double)c->e[t].data_bytes);
        if (c->spike_files) {
            cJSON_AddStringToObject(d, "spikes_sha256", c->e[t].spikes_sha);
            cJSON_AddNumberToObject(d, "spikes_bytes", (double)c->e[t].spikes_bytes);
        }
        cJSON_AddItemToArray(done, d);
    }
    char *text = bl_json_print(m, 0);
    cJSON_Delete(m);
    char path[4096];
    bl_status st = text ? bl_record_path(c->rec, MANIFEST, path, sizeof path, err)
                        : bl_fail(err, BL_ERR_NOMEM, "cannot render the checkpoint manifest");
    if (!st) {
        const void *parts[1] = {text};
        size_t lens[1] = {strlen(text)};
        st = bl_xp_ckpt_write_atomic(path, parts, lens, 1, err);
    }
    free(text);
    return st;
}

bl_status bl_xp_ckpt_save(bl_xp_ckpt *c, const bl_result *res, const bl_xp_spikes *spikes, uint32_t first,
                          uint32_t n, bl_error *err)
{
    size_t nn = (size_t)bl_result_n_neurons(res), sz = bl_dtype_size(bl_result_state_dtype(res));
    size_t cells = bl_xp_spikes_psth_row(spikes), pb = bl_result_probe_trial_bytes(res);
    uint64_t bins, samples;
    size_t np;
    const int32_t *psth = bl_xp_spikes_psth(spikes, &bins);
    const char *pv = bl_result_probe_v(res, &samples, &np), *pg = bl_result_probe_g(res);
    bl_status st = BL_OK;
    for (uint32_t t = first; !st && t < first + n && t < c->trials; t++) {
        const unsigned char *digest = bl_xp_spikes_trial_digest(spikes, t);
        if (!digest)
            return bl_fail(err, BL_ERR_INTERNAL, "checkpoint: trial %" PRIu32 " has not ended", t);
        uint32_t local = t - bl_result_first_trial(res);
        blob_head h;
        memset(&h, 0, sizeof h);
        memcpy(h.magic, MAGIC, 8);
        h.trial = t;
        h.state_size = (uint32_t)sz;
        h.n_neurons = nn;
        h.psth_cells = cells;
        h.probe_bytes = pb;
        memcpy(h.digest, digest, 32);
        const void *parts[7] = {&h,
                                bl_result_counts(res) + (size_t)local * nn,
                                (const char *)bl_result_final_v(res) + (size_t)local * nn * sz,
                                (const char *)bl_result_final_g(res) + (size_t)local * nn * sz,
                                psth ? (const void *)(psth + (size_t)t * cells) : (const void *)&h,
                                pb ? pv + (size_t)local * pb : (const char *)&h,
                                pb ? pg + (size_t)local * pb : (const char *)&h};
        size_t lens[7] = {sizeof h, nn * 4, nn * sz, nn * sz, cells * 4, pb, pb};
        char data[64], sp[64], path[4096];
        trial_names(t, data, sp);
        entry *e = &c->e[t];
        bl_sha256 *hh = bl_sha256_create();
        if (!hh)
            return bl_fail(err, BL_ERR_NOMEM, "cannot hash a checkpoint");
        e->data_bytes = 0;
        for (int k = 0; k < 7; k++) {
            bl_sha256_update(hh, parts[k], lens[k]);
            e->data_bytes += lens[k];
        }
        bl_sha256_finish(hh, e->data_sha);
        st = bl_record_path(c->rec, data, path, sizeof path, err);
        if (!st)
            st = bl_xp_ckpt_write_atomic(path, parts, lens, 7, err);
        if (!st && c->spike_files && !(st = bl_record_path(c->rec, sp, path, sizeof path, err)))
            st = hash_file_synced(path, e->spikes_sha, &e->spikes_bytes, err);
        if (!st)
            e->kept = 1;
    }
    if (!st)
        st = commit(c, err);
    for (uint32_t t = first; !st && t < first + n && t < c->trials; t++)
        partial_done(c, t);
    return st;
}

/* ---- checkpoints within a trial ---- */

static const char ZERO_CHAIN[65] = "0000000000000000000000000000000000000000000000000000000000000000";

static void chain_next(const char prev[65], const int32_t *pairs, uint64_t n, char out[65])
{
    bl_sha256 *h = bl_sha256_create();
    if (!h) { /* cannot hash: a chain nobody matches (the trial then runs again) */
        memset(out, 'x', 64);
        out[64] = '\0';
        return;
    }
    bl_sha256_update(h, prev, 64);
    if (n)
        bl_sha256_update(h, pairs, (size_t)n * 2 * sizeof *pairs);
    bl_sha256_finish(h, out);
}

bl_status bl_xp_ckpt_partial_enable(bl_xp_ckpt *c, bl_error *err)
{
    if (c->pt)
        return BL_OK;
    c->partial_first = c->trials;
    c->pt = calloc(c->trials ? c->trials : 1, sizeof *c->pt);
    return c->pt ? BL_OK : bl_fail(err, BL_ERR_NOMEM, "cannot allocate within-trial checkpoints of %" PRIu32 " trials",
                                   c->trials);
}

static partial *partial_of(bl_xp_ckpt *c, uint32_t t)
{
    if (!c->pt[t] && (c->pt[t] = calloc(1, sizeof *c->pt[t])))
        memcpy(c->pt[t]->chain, ZERO_CHAIN, sizeof ZERO_CHAIN);
    return c->pt[t];
}

bl_status bl_xp_ckpt_partial_pend(bl_xp_ckpt *c, uint32_t t, uint32_t step, const int32_t *neurons, size_t n,
                                  bl_error *err)
{
    if (!c || !c->pt || t >= c->trials || !n)
        return BL_OK;
    partial *p = partial_of(c, t);
    if (!p)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate the checkpoint of trial %" PRIu32, t);
    if (p->n_pend + 2 * (uint64_t)n > p->cap_pend) {
        uint64_t cap = p->cap_pend ? p->cap_pend : 4096;
        while (cap < p->n_pend + 2 * (uint64_t)n)
            cap *= 2;
        int32_t *b = realloc(p->pend, cap * sizeof *b);
        if (!b)
            return bl_fail(err, BL_ERR_NOMEM, "cannot keep %" PRIu64 " spikes of trial %" PRIu32 " for its checkpoint",
                           cap / 2, t);
        p->pend = b;
        p->cap_pend = cap;
    }
    for (size_t a = 0; a < n; a++) {
        p->pend[p->n_pend++] = (int32_t)step;
        p->pend[p->n_pend++] = neurons[a];
    }
    return BL_OK;
}

/* The pairs since the last checkpoint onto the trial's .pairs file, after
 * its committed prefix (whatever a kill left beyond it is cut), flushed. */
static bl_status append_pairs(bl_xp_ckpt *c, uint32_t t, partial *p, bl_error *err)
{
    char bin[64], pn[64], path[4096];
    partial_names(t, bin, pn);
    bl_status st = bl_record_path(c->rec, pn, path, sizeof path, err);
    if (st)
        return st;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd < 0)
        return bl_fail(err, BL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    off_t at = (off_t)(p->n_pairs * 2 * sizeof(int32_t));
    int ok = ftruncate(fd, at) == 0 && lseek(fd, at, SEEK_SET) == at;
    const char *b = (const char *)p->pend;
    size_t len = (size_t)p->n_pend * sizeof *p->pend, done = 0;
    while (ok && done < len) {
        ssize_t w = write(fd, b + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        ok = w > 0;
        done += w > 0 ? (size_t)w : 0;
    }
    int e = errno;
    if (ok && fsync(fd) != 0)
        ok = 0, e = errno;
    close(fd);
    return ok ? BL_OK : bl_fail(err, BL_ERR_IO, "%s: cannot write the checkpoint's spikes: %s", path, strerror(e));
}

bl_status bl_xp_ckpt_partial_save(bl_xp_ckpt *c, const bl_result *res, uint32_t t, uint64_t step, const void *blob,
                                  size_t len, bl_error *err)
{
    if (!c || !c->pt || t >= c->trials)
        return BL_OK;
    partial *p = partial_of(c, t);
    uint64_t *chunks = p ? realloc(p->chunks, (p->n_chunks + 1) * sizeof *chunks) : NULL;
    if (!chunks)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate the checkpoint of trial %" PRIu32, t);
    p->chunks = chunks;
    bl_status st = append_pairs(c, t, p, err);
    if (st)
        return st;
    uint64_t added = p->n_pend / 2;
    char chain[65];
    chain_next(p->chain, p->pend, added, chain);
    p->chunks[p->n_chunks] = added;
    size_t pb = bl_result_probe_trial_bytes(res);
    uint64_t samples;
    size_t np;
    const char *pv = bl_result_probe_v(res, &samples, &np), *pg = bl_result_probe_g(res);
    uint32_t local = t - bl_result_first_trial(res);
    part_head h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, PART_MAGIC, 8);
    h.trial = t;
    h.step = step;
    h.n_pairs = p->n_pairs + added;
    h.n_chunks = p->n_chunks + 1;
    h.probe_bytes = 2 * (uint64_t)pb;
    h.blob_len = len;
    memcpy(h.chain, chain, sizeof h.chain);
    const void *parts[5] = {&h, p->chunks, pb ? pv + (size_t)local * pb : (const char *)&h,
                            pb ? pg + (size_t)local * pb : (const char *)&h, blob};
    size_t lens[5] = {sizeof h, (size_t)h.n_chunks * sizeof *p->chunks, pb, pb, len};
    bl_sha256 *hh = bl_sha256_create();
    if (!hh)
        return bl_fail(err, BL_ERR_NOMEM, "cannot hash a checkpoint");
    for (int k = 0; k < 5; k++)
        bl_sha256_update(hh, parts[k], lens[k]);
    bl_sha256_finish(hh, h.body_sha256);
    char bin[64], pn[64], path[4096];
    partial_names(t, bin, pn);
    st = bl_record_path(c->rec, bin, path, sizeof path, err);
    if (!st)
        st = bl_xp_ckpt_write_atomic(path, parts, lens, 5, err);
    if (st)
        return st;
    /* Committed: the pairs are the file's now. */
    p->n_pairs = h.n_pairs;
    p->n_chunks = h.n_chunks;
    memcpy(p->chain, chain, sizeof chain);
    p->n_pend = 0;
    return BL_OK;
}

/* Resume: trial t's checkpoint within it, read once and hashed as read; the
 * .pairs prefix re-hashed chunk by chunk. Anything that does not match
 * leaves the trial to run from its start (p->ok stays 0). */
static bl_status partial_load(bl_xp_ckpt *c, uint32_t t, const bl_result *res, bl_error *err)
{
    char bin[64], pn[64], path[4096];
    partial_names(t, bin, pn);
    struct stat sb;
    bl_status st = bl_record_path(c->rec, bin, path, sizeof path, err);
    if (st || lstat(path, &sb) != 0)
        return st;
    partial *p = partial_of(c, t);
    if (!p)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate the checkpoint of trial %" PRIu32, t);
    bl_error ignored = {0};
    char *b = NULL;
    uint64_t len = 0;
    c->partials_dropped++; /* until it proves whole */
    if (bl_xp_ckpt_read_all(path, (uint64_t)sb.st_size, &b, &len, &ignored))
        return BL_OK;
    part_head h;
    size_t pb = bl_result_probe_trial_bytes(res);
    if (len < sizeof h) {
        free(b);
        return BL_OK;
    }
    memcpy(&h, b, sizeof h);
    char want[65];
    memcpy(want, h.body_sha256, sizeof want);
    memset(((part_head *)b)->body_sha256, 0, sizeof h.body_sha256);
    char got[65];
    bl_sha256_buffer(b, (size_t)len, got);
    int ok = !memcmp(h.magic, PART_MAGIC, 8) && h.trial == t && want[64] == '\0' && !strcmp(got, want) &&
             h.probe_bytes == 2 * (uint64_t)pb && h.n_chunks <= len / 8 &&
             len == sizeof h + h.n_chunks * 8 + h.probe_bytes + h.blob_len && h.chain[64] == '\0';
    uint64_t sum = 0;
    const uint64_t *chunks = (const uint64_t *)(b + sizeof h);
    for (uint64_t k = 0; ok && k < h.n_chunks; k++)
        ok = (sum += chunks[k]) <= h.n_pairs && chunks[k] <= h.n_pairs;
    ok = ok && sum == h.n_pairs;
    int32_t *pairs = NULL;
    if (ok) {
        /* The .pairs prefix: exactly n_pairs read (the file may hold more). */
        char pp[4096];
        int fd = -1;
        uint64_t size = 0;
        ok = !bl_record_path(c->rec, pn, pp, sizeof pp, &ignored) && !bl_open_regular(pp, &fd, &size, &ignored);
        ok = ok && h.n_pairs <= size / (2 * sizeof(int32_t));
        uint64_t bytes = ok ? h.n_pairs * 2 * sizeof(int32_t) : 0;
        ok = ok && (pairs = malloc(bytes ? bytes : 1)) != NULL;
        uint64_t done = 0;
        while (ok && done < bytes) {
            ssize_t r = read(fd, (char *)pairs + done, bytes - done);
            if (r < 0 && errno == EINTR)
                continue;
            ok = r > 0;
            done += r > 0 ? (uint64_t)r : 0;
        }
        if (fd >= 0)
            close(fd);
        char chain[65];
        memcpy(chain, ZERO_CHAIN, sizeof chain);
        for (uint64_t k = 0, at = 0; ok && k < h.n_chunks; at += chunks[k], k++)
            chain_next(chain, pairs + 2 * at, chunks[k], chain);
        ok = ok && !strcmp(chain, h.chain);
        /* Replayed through the sink, which indexes counts and PSTH rows by
         * neuron: each pair must be of this trial before its step, in
         * (step, neuron) order, in the network. */
        uint64_t nn = bl_result_n_neurons(res);
        for (uint64_t k = 0; ok && k < h.n_pairs; k++) {
            int32_t st_k = pairs[2 * k], ne = pairs[2 * k + 1];
            ok = st_k >= 0 && (uint64_t)st_k < h.step && ne >= 0 && (uint64_t)ne < nn &&
                 (k == 0 || st_k > pairs[2 * k - 2] || (st_k == pairs[2 * k - 2] && ne > pairs[2 * k - 1]));
        }
    }
    if (!ok || !(p->chunks = malloc((h.n_chunks ? h.n_chunks : 1) * sizeof *p->chunks))) {
        free(pairs);
        free(b);
        return BL_OK;
    }
    memcpy(p->chunks, chunks, h.n_chunks * sizeof *p->chunks);
    p->n_chunks = h.n_chunks;
    p->n_pairs = h.n_pairs;
    memcpy(p->chain, h.chain, sizeof p->chain);
    p->step = h.step;
    p->pairs = pairs;
    p->bin = b;
    p->bin_len = len;
    p->ok = 1;
    c->partials_dropped--;
    c->partials_kept++;
    if (c->partial_first == c->trials || t < c->partial_first) {
        c->partial_first = t;
        c->partial_from_step = h.step;
    }
    return BL_OK;
}

bl_status bl_xp_ckpt_partial_apply(bl_xp_ckpt *c, bl_result *res, bl_engine *eng, bl_error *err)
{
    return bl_xp_ckpt_partial_apply_also(c, res, eng, NULL, NULL, err);
}

bl_status bl_xp_ckpt_partial_apply_also(bl_xp_ckpt *c, bl_result *res, bl_engine *eng,
                                        bl_status (*also)(void *user, uint32_t trial, const void *blob, size_t len,
                                                          bl_error *err),
                                        void *user, bl_error *err)
{
    bl_status st = BL_OK;
    if (c && c->pt) /* named again below: the trials the engine took */
        c->partial_first = c->trials;
    for (uint32_t t = 0; c && c->pt && !st && t < c->trials; t++) {
        partial *p = c->pt[t];
        if (!p || !p->ok)
            continue;
        part_head h;
        memcpy(&h, p->bin, sizeof h);
        const char *probe = p->bin + sizeof h + h.n_chunks * 8, *blob = probe + h.probe_bytes;
        /* The engine checks the state first: one it refuses (another
         * network's, or malformed) leaves the trial to run from its start. */
        bl_error refused = {0};
        if (bl_engine_resume_trial(eng, t, blob, (size_t)h.blob_len, &refused)) {
            if (refused.status != BL_ERR_INVALID) {
                *err = refused;
                st = refused.status;
            }
            c->partials_kept--;
            c->partials_dropped++;
            p->n_pairs = 0;
            p->n_chunks = 0;
            memcpy(p->chain, ZERO_CHAIN, sizeof ZERO_CHAIN);
        } else {
            /* The spikes before the checkpoint, through the sink as they
             * first came (the spike file, its digest, the PSTH, the counts);
             * they are in the .pairs file already, so not pending. */
            st = bl_result_append_pairs(res, t, p->pairs, p->n_pairs, err);
            p->n_pend = 0;
            if (!st && also)
                st = also(user, t, blob, (size_t)h.blob_len, err);
            if (c->partial_first == c->trials) {
                c->partial_first = t;
                c->partial_from_step = h.step;
            }
            if (!st && h.probe_bytes) {
                void *v, *g;
                bl_result_probe_rows(res, t, 0, &v, &g);
                memcpy(v, probe, h.probe_bytes / 2);
                memcpy(g, probe + h.probe_bytes / 2, h.probe_bytes / 2);
            }
        }
        free(p->pairs);
        free(p->bin);
        p->pairs = NULL;
        p->bin = NULL;
        p->ok = 0;
    }
    return st;
}

uint32_t bl_xp_ckpt_partial_kept(const bl_xp_ckpt *c) { return c ? c->partials_kept : 0; }
uint32_t bl_xp_ckpt_partial_dropped(const bl_xp_ckpt *c) { return c ? c->partials_dropped : 0; }
uint32_t bl_xp_ckpt_partial_first(const bl_xp_ckpt *c, uint64_t *step)
{
    *step = c && c->pt ? c->partial_from_step : 0;
    return c && c->pt ? c->partial_first : (c ? c->trials : 0);
}

/* A trial has ended and is checkpointed whole: its partial files go. */
static void partial_done(bl_xp_ckpt *c, uint32_t t)
{
    if (!c->pt || !c->pt[t])
        return;
    partial_free(c->pt[t]);
    c->pt[t] = NULL;
    char bin[64], pn[64], path[4096];
    bl_error ignored = {0};
    partial_names(t, bin, pn);
    if (!bl_record_path(c->rec, bin, path, sizeof path, &ignored))
        unlink(path);
    if (!bl_record_path(c->rec, pn, path, sizeof path, &ignored))
        unlink(path);
}

/* A flat directory (the checkpoint's) and its files; the manifest first, so
 * that a kill half-way leaves no manifest naming missing files. */
static bl_status remove_flat(const char *dp, bl_error *err)
{
    DIR *dir = opendir(dp);
    if (!dir)
        return errno == ENOENT ? BL_OK : bl_fail(err, BL_ERR_IO, "%s: cannot list: %s", dp, strerror(errno));
    struct dirent *de;
    bl_status st = BL_OK;
    char fp[4400];
    snprintf(fp, sizeof fp, "%s/checkpoint.json", dp);
    if (unlink(fp) != 0 && errno != ENOENT)
        st = bl_fail(err, BL_ERR_IO, "%s: cannot remove: %s", fp, strerror(errno));
    while (!st && (de = readdir(dir))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        snprintf(fp, sizeof fp, "%s/%s", dp, de->d_name);
        if (unlink(fp) != 0 && errno != ENOENT)
            st = bl_fail(err, BL_ERR_IO, "%s: cannot remove: %s", fp, strerror(errno));
    }
    closedir(dir);
    if (!st && rmdir(dp) != 0 && errno != ENOENT)
        st = bl_fail(err, BL_ERR_IO, "%s: cannot remove: %s", dp, strerror(errno));
    return st;
}

/* ROOT/.NAME.checkpoint: where the checkpoint waits while the record is
 * sealed (outside the record, so the seal does not inventory it). */
static void stash_path(const bl_record *rec, char *buf, size_t size)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", bl_record_dir(rec));
    char *slash = strrchr(dir, '/');
    const char *name = slash ? slash + 1 : dir;
    if (slash && slash != dir) {
        *slash = '\0';
        snprintf(buf, size, "%s/.%s.checkpoint", dir, name);
    } else {
        snprintf(buf, size, "%s.%s.checkpoint", slash ? "/" : "", name);
    }
}

bl_status bl_xp_ckpt_stash(bl_xp_ckpt *c, bl_error *err)
{
    if (!c)
        return BL_OK;
    char dp[4096], sp[4200];
    snprintf(dp, sizeof dp, "%s/" DIR_NAME, bl_record_dir(c->rec));
    stash_path(c->rec, sp, sizeof sp);
    bl_status st = remove_flat(sp, err); /* a stale one of an earlier seal */
    if (!st && rename(dp, sp) != 0 && errno != ENOENT)
        st = bl_fail(err, BL_ERR_IO, "%s: cannot move the checkpoint out of the record: %s", dp, strerror(errno));
    if (!st)
        st = bl_xp_ckpt_fsync_dir_of(dp, err);
    return st ? st : bl_xp_ckpt_fsync_dir_of(sp, err);
}

void bl_xp_ckpt_discard(bl_xp_ckpt *c)
{
    if (!c)
        return;
    char sp[4200];
    bl_error ignored = {0};
    stash_path(c->rec, sp, sizeof sp);
    remove_flat(sp, &ignored); /* the record is sealed: a leftover is only disk */
}

/* A resume after a kill during the seal: the stashed checkpoint goes back. */
static bl_status unstash(bl_record *rec, bl_error *err)
{
    char dp[4096], sp[4200], mp[4300];
    struct stat sb;
    snprintf(dp, sizeof dp, "%s/" DIR_NAME, bl_record_dir(rec));
    stash_path(rec, sp, sizeof sp);
    snprintf(mp, sizeof mp, "%s/checkpoint.json", sp);
    if (lstat(sp, &sb) != 0)
        return BL_OK;
    snprintf(mp, sizeof mp, "%s/checkpoint.json", dp);
    if (lstat(mp, &sb) == 0) /* the record's own is newer */
        return remove_flat(sp, err);
    bl_status st = remove_flat(dp, err);
    if (!st && rename(sp, dp) != 0)
        st = bl_fail(err, BL_ERR_IO, "%s: cannot move the checkpoint back: %s", sp, strerror(errno));
    return st ? st : bl_xp_ckpt_fsync_dir_of(dp, err);
}

void bl_xp_ckpt_destroy(bl_xp_ckpt *c)
{
    if (!c)
        return;
    for (uint32_t t = 0; c->pt && t < c->trials; t++)
        partial_free(c->pt[t]);
    free(c->pt);
    free(c->e);
    free(c);
}
