/* Records: reserve, collect, seal (or fail). Verification is in verify.c.
 *
 * Why the order of operations in seal matters: a crash at any point must
 * leave either a record without DONE (visibly unfinished) or a complete one.
 * So everything is inventoried and hashed first, manifest.json and
 * checksums.sha256 are written and fsynced together with every artifact and
 * directory, and only then is DONE written (and fsynced), and .RESERVED removed. */
#include "brainlesslab/record.h"

#include "brainlesslab/hash.h"
#include "core/invariant.h"
#include "record/record_impl.h"
#include "core/json_check.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

enum record_state { RECORD_OPEN, RECORD_DONE, RECORD_FAILED };

struct bl_record {
    char *dir;
    time_t created;
    cJSON *sections; /* object: manifest sections in the order they were set */
    cJSON *inputs;   /* array of {role, path, absolute_path, bytes, sha256} */
    enum record_state state;
    char *name;                 /* the last path component of dir */
    char plan_sha256[BL_SHA256_HEX_LEN + 1]; /* "" until bl_record_bind */
    cJSON *required;            /* array of artifact paths, or NULL */
    bl_sign_key *key;           /* NULL: unsigned */
};

/* Keys the record writes itself; a section may not shadow them. */
static const char *const own_keys[] = {"format",   "format_version", "status",
                                       "message",  "created_utc",    "finished_utc",
                                       "inputs",   "artifacts",      "inventory_problems",
                                       "software", "host",           "record_name",
                                       "plan_sha256", "required_artifacts", "signing"};

static char *dup_text(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* mkdir -p: every existing component must be a directory. */
static bl_status make_dirs(const char *path, bl_error *err)
{
    char *p = dup_text(path);
    if (!p)
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
    size_t len = strlen(p);
    while (len > 1 && p[len - 1] == '/')
        p[--len] = '\0';
    for (char *s = p + 1;; s++) {
        bool last = *s == '\0';
        if (*s != '/' && !last)
            continue;
        char saved = *s;
        *s = '\0';
        if (mkdir(p, 0777) != 0) {
            int e = errno;
            struct stat st;
            if (e != EEXIST || stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
                bl_status st_code = bl_fail(err, BL_ERR_IO, "%s: cannot create directory: %s",
                                            p, e == EEXIST ? "exists and is not a directory"
                                                           : strerror(e));
                free(p);
                return st_code;
            }
        }
        *s = saved;
        if (last)
            break;
    }
    free(p);
    return BL_OK;
}

static bl_status write_text_excl(int dirfd, const char *dir, const char *name, const char *text,
                                 size_t len, bl_error *err)
{
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        return bl_fail(err, errno == EEXIST ? BL_ERR_EXISTS : BL_ERR_IO, "%s/%s: cannot create: %s",
                       dir, name, strerror(errno));
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            unlinkat(dirfd, name, 0);
            return bl_fail(err, BL_ERR_IO, "%s/%s: write failed: %s", dir, name, strerror(e));
        }
        done += (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlinkat(dirfd, name, 0);
        return bl_fail(err, BL_ERR_IO, "%s/%s: cannot flush to disk: %s", dir, name, strerror(e));
    }
    return BL_OK;
}

/* The ballast (record_impl.h): real blocks (posix_fallocate, or zeros where
 * the file system cannot allocate), so that freeing them frees space. A disk
 * too full to hold it is found here, before the run, not after it. */
static bl_status make_ballast(int dirfd, const char *dir, bl_error *err)
{
    /* Never beyond the process's file size limit (ulimit -f): that would
     * raise SIGXFSZ here; a file no larger than the limit still holds room
     * for a manifest that, like every file, cannot exceed it either. */
    off_t bytes = BL_RECORD_BALLAST_BYTES;
    struct rlimit fsize;
    if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY && (off_t)fsize.rlim_cur < bytes)
        bytes = (off_t)fsize.rlim_cur;
    int fd = openat(dirfd, BL_RECORD_BALLAST, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return bl_fail(err, BL_ERR_IO, "%s/%s: cannot create: %s", dir, BL_RECORD_BALLAST, strerror(errno));
    int e = bytes > 0 ? posix_fallocate(fd, 0, bytes) : 0;
    if (e == EINVAL || e == EOPNOTSUPP) {
        static const char zeros[65536];
        e = 0;
        for (off_t done = 0; !e && done < bytes; done += (off_t)sizeof zeros) {
            size_t k = bytes - done < (off_t)sizeof zeros ? (size_t)(bytes - done) : sizeof zeros;
            if (write(fd, zeros, k) != (ssize_t)k)
                e = errno ? errno : EIO;
        }
        if (!e && fsync(fd) != 0)
            e = errno;
    }
    close(fd);
    if (e) {
        unlinkat(dirfd, BL_RECORD_BALLAST, 0);
        return bl_fail(err, BL_ERR_IO, "%s: no room for the record (it holds %lld bytes free until it is sealed, "
                       "to be able to end FAILED even on a full disk): %s", dir,
                       (long long)bytes, strerror(e));
    }
    return BL_OK;
}

bl_status bl_record_reserve(const char *root, const char *name, bl_record **out, bl_error *err)
{
    *out = NULL;
    if (!root || !*root)
        return bl_fail(err, BL_ERR_INVALID, "record root: empty path");
    const char *why = name ? bl_record_bad_relpath(name) : "is missing";
    if (!why && strchr(name, '/'))
        why = "must be a single path component";
    if (why)
        return bl_fail(err, BL_ERR_INVALID, "%s: record name '%s' %s", root, name ? name : "",
                       why);
    bl_status st = make_dirs(root, err);
    if (st)
        return st;
    bl_record *r = calloc(1, sizeof *r);
    size_t n = strlen(root) + strlen(name) + 2;
    if (r)
        r->dir = malloc(n);
    if (!r || !r->dir) {
        free(r);
        return bl_fail(err, BL_ERR_NOMEM, "%s/%s: out of memory", root, name);
    }
    bool slash = root[strlen(root) - 1] == '/';
    snprintf(r->dir, n, "%s%s%s", root, slash ? "" : "/", name);
    r->name = dup_text(name);
    if (!r->name) {
        free(r->dir);
        free(r);
        return bl_fail(err, BL_ERR_NOMEM, "%s/%s: out of memory", root, name);
    }
    /* mkdir is atomic and exclusive: two runs racing for one name cannot both win. */
    if (mkdir(r->dir, 0777) != 0) {
        int e = errno;
        st = bl_fail(err, e == EEXIST ? BL_ERR_EXISTS : BL_ERR_IO, "%s: %s", r->dir,
                     e == EEXIST ? "record already exists; records are written once, never reused"
                                 : strerror(e));
        free(r->dir);
        free(r->name);
        free(r);
        return st;
    }
    r->created = time(NULL);
    r->sections = cJSON_CreateObject();
    r->inputs = cJSON_CreateArray();
    if (!r->sections || !r->inputs) {
        bl_record_destroy(r);
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", root);
    }
    char host[256] = "unknown";
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    char when[32], text[512];
    bl_format_utc(r->created, when);
    int len = snprintf(text, sizeof text, "pid %ld\nhost %s\nreserved_utc %s\n", (long)getpid(),
                       host, when);
    int dfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        st = bl_fail(err, BL_ERR_IO, "%s: cannot open: %s", r->dir, strerror(errno));
    } else {
        st = write_text_excl(dfd, r->dir, BL_RECORD_RESERVED, text,
                             len > 0 ? (size_t)len : 0, err);
        if (!st && (st = make_ballast(dfd, r->dir, err)))
            unlinkat(dfd, BL_RECORD_RESERVED, 0);
        close(dfd);
    }
    if (st) {
        rmdir(r->dir); /* ours and still empty: give the name back */
        bl_record_destroy(r);
        return st;
    }
    *out = r;
    BL_ASSERT_SANE(bl_record_sane, r);
    return BL_OK;
}

static bool has_marker(const char *dir, const char *name);

/* A killed writer whose parent has not reaped it yet (mpirun killed with its
 * ranks) still answers kill(pid, 0): Linux says it is a zombie. */
static bool is_zombie(long pid)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    text[n > 0 ? n : 0] = '\0';
    const char *paren = strrchr(text, ')'); /* the command name may hold spaces */
    return paren && paren[1] == ' ' && paren[2] == 'Z';
}

/* A record left by a killed run (.RESERVED) or sealed FAILED, opened again to
 * be finished (run --resume). A DONE record is never reopened: it is final.
 * A reservation whose process is still alive on this host is refused, so two
 * writers never share a record. The old FAILED marker, manifest, checksums
 * and signature go (the new seal writes them again); every other file stays
 * for the caller to check or remove. */
bl_status bl_record_reopen(const char *dir, bl_record **out, bl_error *err)
{
    *out = NULL;
    struct stat sb;
    if (!dir || !*dir || lstat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return bl_fail(err, BL_ERR_INVALID, "%s: not a record directory", dir ? dir : "");
    if (has_marker(dir, BL_RECORD_DONE))
        return bl_fail(err, BL_ERR_EXISTS, "%s: sealed DONE; a DONE record is final and never resumed", dir);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (dfd < 0)
        return bl_fail(err, BL_ERR_IO, "%s: cannot open: %s", dir, strerror(errno));
    char host[256] = "unknown";
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    bool failed = has_marker(dir, BL_RECORD_FAILED), reserved = has_marker(dir, BL_RECORD_RESERVED);
    if (!failed && !reserved) {
        close(dfd);
        return bl_fail(err, BL_ERR_INVALID, "%s: neither reserved nor FAILED: not a record to resume", dir);
    }
    if (reserved) { /* the writer may still be at work */
        char text[512] = "", other[256] = "";
        long pid = 0;
        int fd = openat(dfd, BL_RECORD_RESERVED, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
        if (fd >= 0)
            close(fd);
        text[n > 0 ? n : 0] = '\0';
        if (sscanf(text, "pid %ld\nhost %255s", &pid, other) == 2 && !strcmp(other, host) && pid > 0 &&
            pid != (long)getpid() && (kill((pid_t)pid, 0) == 0 || errno == EPERM) && !is_zombie(pid)) {
            close(dfd);
            return bl_fail(err, BL_ERR_EXISTS, "%s: still reserved by process %ld on this host, which is "
                           "running; resume it once that process has ended", dir, pid);
        }
    }
    bl_record *r = calloc(1, sizeof *r);
    const char *slash = strrchr(dir, '/');
    if (r) {
        r->dir = dup_text(dir);
        r->name = dup_text(slash ? slash + 1 : dir);
        r->sections = cJSON_CreateObject();
        r->inputs = cJSON_CreateArray();
    }
    if (!r || !r->dir || !r->name || !r->sections || !r->inputs) {
        close(dfd);
        bl_record_destroy(r);
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", dir);
    }
    size_t len = strlen(r->dir);
    while (len > 1 && r->dir[len - 1] == '/')
        r->dir[--len] = '\0';
    slash = strrchr(r->dir, '/');
    free(r->name);
    r->name = dup_text(slash ? slash + 1 : r->dir);
    r->created = time(NULL);
    char when[32], text[512];
    bl_format_utc(r->created, when);
    int tl = snprintf(text, sizeof text, "pid %ld\nhost %s\nreserved_utc %s\nresumed\n", (long)getpid(), host, when);
    /* The reservation first (written aside and renamed over the old one: a
     * kill never leaves the record without a marker), then the old seal
     * goes: a crash in between leaves a record visibly unfinished (and
     * resumable again). */
    static const char tmp[] = BL_RECORD_RESERVED ".new";
    unlinkat(dfd, tmp, 0);
    bl_status st = r->name ? write_text_excl(dfd, r->dir, tmp, text, tl > 0 ? (size_t)tl : 0, err)
                           : bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", dir);
    if (!st && renameat(dfd, tmp, dfd, BL_RECORD_RESERVED) != 0)
        st = bl_fail(err, BL_ERR_IO, "%s/%s: cannot write: %s", r->dir, BL_RECORD_RESERVED, strerror(errno));
    const char *old[] = {BL_RECORD_FAILED, BL_RECORD_SIGNATURE, BL_RECORD_CHECKSUMS, BL_RECORD_MANIFEST};
    for (size_t k = 0; !st && k < sizeof old / sizeof *old; k++)
        if (unlinkat(dfd, old[k], 0) != 0 && errno != ENOENT)
            st = bl_fail(err, BL_ERR_IO, "%s/%s: cannot remove: %s", r->dir, old[k], strerror(errno));
    if (!st && fsync(dfd) != 0)
        st = bl_fail(err, BL_ERR_IO, "%s: cannot flush: %s", r->dir, strerror(errno));
    close(dfd);
    if (st) {
        bl_record_destroy(r);
        return st;
    }
    *out = r;
    return BL_OK;
}

static bl_status require_open(const bl_record *r, bl_error *err)
{
    if (r->state != RECORD_OPEN)
        return bl_fail(err, BL_ERR_INVALID, "%s: record is already %s; it cannot change", r->dir,
                       r->state == RECORD_DONE ? "sealed" : "marked FAILED");
    return BL_OK;
}

/* Is NAME present at the top of DIR (without following a symlink)? */
static bool has_marker(const char *dir, const char *name)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return false;
    struct stat sb;
    bool there = fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0;
    close(dfd);
    return there;
}

bool bl_record_sane(const bl_record *r, bl_error *why)
{
    if (!r || !r->dir || !r->name || !r->sections || !r->inputs)
        return BL_BROKEN(why, "record: a handle without its directory, name, sections or inputs");
    bool done = has_marker(r->dir, BL_RECORD_DONE), failed = has_marker(r->dir, BL_RECORD_FAILED);
    switch (r->state) {
    case RECORD_OPEN:
        if (done || failed || !has_marker(r->dir, BL_RECORD_RESERVED))
            return BL_BROKEN(why, "%s: open record, but on disk %s", r->dir,
                             done ? "DONE is there" : failed ? "FAILED is there" : "the reservation is missing");
        return true;
    case RECORD_DONE:
        if (!done || failed || !has_marker(r->dir, BL_RECORD_MANIFEST))
            return BL_BROKEN(why, "%s: sealed record, but on disk %s", r->dir,
                             !done ? "DONE is missing" : failed ? "FAILED is there" : "the manifest is missing");
        return true;
    case RECORD_FAILED:
        if (!failed || done || !has_marker(r->dir, BL_RECORD_MANIFEST))
            return BL_BROKEN(why, "%s: failed record, but on disk %s", r->dir,
                             !failed ? "FAILED is missing" : done ? "DONE is there" : "the manifest is missing");
        return true;
    }
    return BL_BROKEN(why, "%s: record state %d is none of open, sealed, failed", r->dir, (int)r->state);
}

static bool is_hex64(const char *s)
{
    return s && strlen(s) == BL_SHA256_HEX_LEN && strspn(s, "0123456789abcdef") == BL_SHA256_HEX_LEN;
}

bl_status bl_record_bind(bl_record *r, const char *plan_sha256, const char *const *required,
                         size_t n_required, bl_error *err)
{
    bl_status st = require_open(r, err);
    if (st)
        return st;
    if (!is_hex64(plan_sha256))
        return bl_fail(err, BL_ERR_INVALID, "%s: plan hash is not 64 lowercase hex digits", r->dir);
    char prefix[10];
    snprintf(prefix, sizeof prefix, "-%.8s", plan_sha256);
    if (!strstr(r->name, prefix))
        return bl_fail(err, BL_ERR_INVALID, "%s: record name does not carry the plan hash %.8s", r->dir,
                       plan_sha256);
    cJSON *list = cJSON_CreateArray();
    for (size_t i = 0; list && i < n_required; i++) {
        const char *why = bl_record_bad_relpath(required[i]);
        if (why) {
            cJSON_Delete(list);
            return bl_fail(err, BL_ERR_INVALID, "%s: required artifact '%s' %s", r->dir, required[i], why);
        }
        if (!cJSON_AddItemToArray(list, cJSON_CreateString(required[i]))) {
            cJSON_Delete(list);
            list = NULL;
        }
    }
    if (!list)
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", r->dir);
    cJSON_Delete(r->required);
    r->required = list;
    memcpy(r->plan_sha256, plan_sha256, BL_SHA256_HEX_LEN + 1);
    return BL_OK;
}

bl_status bl_record_sign_with(bl_record *r, const char *key_path, bl_error *err)
{
    bl_status st = require_open(r, err);
    if (st)
        return st;
    bl_sign_key *k = NULL;
    if ((st = bl_sign_key_load(key_path, &k, err)))
        return st;
    bl_sign_key_free(r->key);
    r->key = k;
    return BL_OK;
}

const char *bl_record_dir(const bl_record *r)
{
    return r->dir;
}


bl_status bl_record_path(bl_record *r, const char *relname, char *buf, size_t size,
                         bl_error *err)
{
    bl_status st = require_open(r, err);
    if (st)
        return st;
    const char *why = relname ? bl_record_bad_relpath(relname) : "is missing";
    if (!why) {
        size_t first = strcspn(relname, "/");
        char head[64];
        if (first < sizeof head) {
            memcpy(head, relname, first);
            head[first] = '\0';
            if (bl_record_is_control_name(head))
                why = "is a record control file name";
        }
    }
    if (why)
        return bl_fail(err, BL_ERR_INVALID, "%s: artifact name '%s' %s", r->dir,
                       relname ? relname : "", why);
    int n = snprintf(buf, size, "%s/%s", r->dir, relname);
    if (n < 0 || (size_t)n >= size)
        return bl_fail(err, BL_ERR_INVALID, "%s/%s: path longer than the %zu-byte buffer", r->dir,
                       relname, size);
    /* Create parents one by one, refusing symlinks so that an artifact can
     * never be written outside the record. */
    size_t base = strlen(r->dir) + 1;
    for (size_t i = base; buf[i]; i++) {
        if (buf[i] != '/')
            continue;
        buf[i] = '\0';
        struct stat sb;
        if (mkdir(buf, 0777) != 0 &&
            (errno != EEXIST || lstat(buf, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
            int e = errno;
            st = bl_fail(err, BL_ERR_IO, "%s: cannot create directory: %s", buf,
                         e == EEXIST ? "exists and is not a directory" : strerror(e));
            buf[i] = '/';
            return st;
        }
        buf[i] = '/';
    }
    return BL_OK;
}

static bl_status add_input_entry(bl_record *r, const char *role, const char *path, const char *hex,
                                 uint64_t bytes, bl_error *err)
{
    char *abs = realpath(path, NULL);
    cJSON *e = cJSON_CreateObject();
    bool ok = e && cJSON_AddStringToObject(e, "role", role) &&
              cJSON_AddStringToObject(e, "path", path) &&
              cJSON_AddStringToObject(e, "absolute_path", abs ? abs : path) &&
              cJSON_AddNumberToObject(e, "bytes", (double)bytes) &&
              cJSON_AddStringToObject(e, "sha256", hex) && cJSON_AddItemToArray(r->inputs, e);
    free(abs);
    if (!ok) {
        cJSON_Delete(e);
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory recording input", path);
    }
    return BL_OK;
}

bl_status bl_record_add_input_digest(bl_record *r, const char *role, const char *path,
                                     const char *sha256, uint64_t bytes, bl_error *err)
{
    bl_status st = require_open(r, err);
    if (st)
        return st;
    if (!role || !*role || !path || !*path)
        return bl_fail(err, BL_ERR_INVALID, "%s: record input needs a role and a path", r->dir);
    if (!is_hex64(sha256))
        return bl_fail(err, BL_ERR_INVALID, "%s: record input '%s': SHA-256 is not 64 lowercase hex digits",
                       path, role);
    return add_input_entry(r, role, path, sha256, bytes, err);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bl_status add_input_file(bl_record *r, const char *role, const char *path, bl_error *err)
{
    char hex[BL_SHA256_HEX_LEN + 1];
    uint64_t bytes = 0;
    bl_status st = bl_sha256_file(path, hex, &bytes, err);
    if (st)
        return bl_fail_context(err, "record input '%s'", role);
    return add_input_entry(r, role, path, hex, bytes, err);
}

static bl_status add_input_dir(bl_record *r, const char *role, const char *path, int depth,
                               bl_error *err)
{
    if (depth > 64)
        return bl_fail(err, BL_ERR_INVALID, "%s: input directories nested too deeply", path);
    char **names = NULL;
    size_t n = 0;
    bl_status st = bl_record_list_dir(path, &names, &n, err);
    if (st)
        return st;
    qsort(names, n, sizeof *names, compare_names);
    for (size_t i = 0; i < n && !st; i++) {
        size_t len = strlen(path) + strlen(names[i]) + 2;
        char *child = malloc(len);
        if (!child) {
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
            break;
        }
        snprintf(child, len, "%s/%s", path, names[i]);
        struct stat lst, sb;
        if (lstat(child, &lst) != 0 || stat(child, &sb) != 0)
            st = bl_fail(err, BL_ERR_IO, "%s: cannot stat input: %s", child, strerror(errno));
        else if (S_ISDIR(sb.st_mode) && S_ISLNK(lst.st_mode))
            st = bl_fail(err, BL_ERR_INVALID,
                         "%s: input directory holds a symlink to a directory; not followed",
                         child);
        else if (S_ISDIR(sb.st_mode))
            st = add_input_dir(r, role, child, depth + 1, err);
        else if (S_ISREG(sb.st_mode))
            st = add_input_file(r, role, child, err);
        else
            st = bl_fail(err, BL_ERR_INVALID, "%s: input is not a regular file", child);
        free(child);
    }
    bl_record_free_names(names, n);
    return st;
}

bl_status bl_record_add_input(bl_record *r, const char *role, const char *path, bl_error *err)
{
    bl_status st = require_open(r, err);
    if (st)
        return st;
    if (!role || !*role || !path || !*path)
        return bl_fail(err, BL_ERR_INVALID, "%s: record input needs a role and a path", r->dir);
    struct stat sb;
    if (stat(path, &sb) != 0)
        return bl_fail(err, BL_ERR_IO, "%s: record input '%s': %s", path, role, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return add_input_dir(r, role, path, 0, err);
    if (!S_ISREG(sb.st_mode))
        return bl_fail(err, BL_ERR_INVALID, "%s: record input '%s' is not a file or directory",
                       path, role);
    return add_input_file(r, role, path, err);
}

bl_status bl_record_set_json(bl_record *r, const char *key, const char *json_text,
                             bl_error *err)
{
    bl_status st = require_open(r, err);
    if (st)
        return st;
    if (!key || !*key || strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "0123456789_-") != strlen(key))
        return bl_fail(err, BL_ERR_INVALID, "%s: manifest section name '%s' must be [A-Za-z0-9_-]+",
                       r->dir, key ? key : "");
    for (size_t i = 0; i < sizeof own_keys / sizeof own_keys[0]; i++)
        if (!strcmp(key, own_keys[i]))
            return bl_fail(err, BL_ERR_INVALID,
                           "%s: manifest section '%s' is reserved for the record itself", r->dir,
                           key);
    if (cJSON_GetObjectItemCaseSensitive(r->sections, key))
        return bl_fail(err, BL_ERR_EXISTS, "%s: manifest section '%s' is already set", r->dir,
                       key);
    if (!json_text)
        return bl_fail(err, BL_ERR_INVALID, "%s: manifest section '%s': no JSON text", r->dir,
                       key);
    const char *end = NULL;
    cJSON *value = cJSON_ParseWithOpts(json_text, &end, 1);
    if (!value) {
        size_t at = end && end >= json_text ? (size_t)(end - json_text) : 0;
        return bl_fail(err, BL_ERR_FORMAT,
                       "%s: manifest section '%s': invalid JSON near byte %zu", r->dir, key, at);
    }
    if (!cJSON_AddItemToObject(r->sections, key, value)) {
        cJSON_Delete(value);
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", r->dir);
    }
    return BL_OK;
}

/* ---- sealing --------------------------------------------------------------- */

typedef struct artifact {
    char *path;
    uint64_t bytes;
    char sha256[BL_SHA256_HEX_LEN + 1];
} artifact;

/* Inventory and hash. STRICT (sealing DONE): anything that is not a regular
 * file is an error. Otherwise (FAILED) such entries go to PROBLEMS. */
static bl_status inventory(const bl_record *r, int rootfd, bool strict, artifact **out,
                           size_t *count, cJSON *problems, bl_error *err)
{
    *out = NULL;
    *count = 0;
    bl_record_entry *entries = NULL;
    size_t n = 0;
    bl_status st = bl_record_walk(rootfd, r->dir, true, &entries, &n, err);
    if (st)
        return st;
    artifact *arts = calloc(n ? n : 1, sizeof *arts);
    if (!arts) {
        bl_record_free_entries(entries, n);
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", r->dir);
    }
    size_t m = 0;
    for (size_t i = 0; i < n && !st; i++) {
        const bl_record_entry *e = &entries[i];
        const char *why = NULL;
        if (e->kind == BL_ENTRY_DIR)
            continue;
        if (e->kind == BL_ENTRY_SYMLINK)
            why = "is a symlink; a record holds only regular files";
        else if (e->kind == BL_ENTRY_OTHER)
            why = "is not a regular file (device, fifo or socket)";
        else if (bl_record_bad_relpath(e->path))
            why = "has a name that cannot be listed in checksums.sha256 (backslash or line break)";
        int fd = -1;
        if (!why) {
            bl_open_result res = bl_record_open_inside(rootfd, e->path, &fd);
            if (res != BL_OPEN_OK)
                why = bl_record_open_result_text(res);
        }
        if (!why) {
            /* fsync each artifact: DONE must never reach the disk before the
             * bytes it vouches for. */
            if (fsync(fd) != 0 && errno != EINVAL)
                why = "cannot be flushed to disk";
            else if (bl_record_hash_fd(fd, arts[m].sha256, &arts[m].bytes) != 0)
                why = "cannot be read";
        }
        if (fd >= 0)
            close(fd);
        if (why) {
            if (strict) {
                st = bl_fail(err, BL_ERR_INVALID, "%s/%s: %s", r->dir, e->path, why);
            } else {
                char line[1200];
                snprintf(line, sizeof line, "%s: %s", e->path, why);
                if (!cJSON_AddItemToArray(problems, cJSON_CreateString(line)))
                    st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", r->dir);
            }
            continue;
        }
        arts[m].path = e->path;
        entries[i].path = NULL; /* ownership moves to the artifact */
        m++;
    }
    bl_record_free_entries(entries, n);
    if (st) {
        for (size_t i = 0; i < m; i++)
            free(arts[i].path);
        free(arts);
        return st;
    }
    *out = arts;
    *count = m;
    return BL_OK;
}

static void free_artifacts(artifact *arts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(arts[i].path);
    free(arts);
}

static cJSON *build_manifest(const bl_record *r, const char *status, const char *message,
                             const char *finished, const artifact *arts, size_t n,
                             cJSON *problems, bool skip_sections)
{
    cJSON *m = cJSON_CreateObject();
    if (!m)
        return NULL;
    char created[32];
    bl_format_utc(r->created, created);
    bool ok = cJSON_AddStringToObject(m, "format", BL_RECORD_FORMAT) &&
              cJSON_AddNumberToObject(m, "format_version", BL_RECORD_FORMAT_VERSION) &&
              cJSON_AddStringToObject(m, "status", status);
    if (ok && message)
        ok = cJSON_AddStringToObject(m, "message", message) != NULL;
    ok = ok && cJSON_AddStringToObject(m, "created_utc", created) &&
         cJSON_AddStringToObject(m, "finished_utc", finished) &&
         cJSON_AddStringToObject(m, "record_name", r->name);
    if (ok && r->plan_sha256[0])
        ok = cJSON_AddStringToObject(m, "plan_sha256", r->plan_sha256) != NULL;
    if (ok && r->required) {
        cJSON *copy = cJSON_Duplicate(r->required, 1);
        ok = copy && cJSON_AddItemToObject(m, "required_artifacts", copy);
        if (!ok)
            cJSON_Delete(copy);
    }
    if (ok && r->key) {
        char pub[65];
        bl_sign_key_public_hex(r->key, pub);
        cJSON *sg = cJSON_AddObjectToObject(m, "signing");
        ok = sg && cJSON_AddStringToObject(sg, "algorithm", "ed25519") &&
             cJSON_AddStringToObject(sg, "public_key", pub) &&
             cJSON_AddStringToObject(sg, "signature_file", BL_RECORD_SIGNATURE);
    }
    for (cJSON *s = skip_sections ? NULL : r->sections->child; ok && s; s = s->next) {
        cJSON *copy = cJSON_Duplicate(s, 1);
        ok = copy && cJSON_AddItemToObject(m, s->string, copy);
        if (!ok)
            cJSON_Delete(copy);
    }
    cJSON *inputs = ok ? cJSON_Duplicate(r->inputs, 1) : NULL;
    ok = inputs && cJSON_AddItemToObject(m, "inputs", inputs);
    if (!ok)
        cJSON_Delete(inputs);
    cJSON *list = ok ? cJSON_AddArrayToObject(m, "artifacts") : NULL;
    ok = list != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        cJSON *a = cJSON_CreateObject();
        ok = a && cJSON_AddStringToObject(a, "path", arts[i].path) &&
             cJSON_AddNumberToObject(a, "bytes", (double)arts[i].bytes) &&
             cJSON_AddStringToObject(a, "sha256", arts[i].sha256);
        if (ok)
            ok = cJSON_AddItemToArray(list, a);
        if (!ok)
            cJSON_Delete(a);
    }
    if (ok && problems && cJSON_GetArraySize(problems) > 0) {
        cJSON *copy = cJSON_Duplicate(problems, 1);
        ok = copy && cJSON_AddItemToObject(m, "inventory_problems", copy);
        if (!ok)
            cJSON_Delete(copy);
    }
    cJSON *sw = ok ? bl_identity_software() : NULL;
    ok = sw && cJSON_AddItemToObject(m, "software", sw);
    if (!ok)
        cJSON_Delete(sw);
    cJSON *host = ok ? bl_identity_host() : NULL;
    ok = host && cJSON_AddItemToObject(m, "host", host);
    if (!ok) {
        cJSON_Delete(host);
        cJSON_Delete(m);
        return NULL;
    }
    return m;
}

/* Append "<hex>  <path>\n" (the `sha256sum` text format). */
static bool append_line(char **buf, size_t *len, size_t *cap, const char *hex, const char *path)
{
    size_t need = BL_SHA256_HEX_LEN + 2 + strlen(path) + 1;
    if (*len + need + 1 > *cap) {
        size_t ncap = (*cap ? *cap * 2 : 4096);
        while (ncap < *len + need + 1)
            ncap *= 2;
        char *nb = realloc(*buf, ncap);
        if (!nb)
            return false;
        *buf = nb;
        *cap = ncap;
    }
    *len += (size_t)snprintf(*buf + *len, *cap - *len, "%s  %s\n", hex, path);
    return true;
}

/* Is every artifact the plan promised in the inventory? NULL, or the first missing. */
static const char *missing_required(const bl_record *r, const artifact *arts, size_t n)
{
    for (const cJSON *q = r->required ? r->required->child : NULL; q; q = q->next) {
        size_t i = 0;
        while (i < n && strcmp(arts[i].path, q->valuestring))
            i++;
        if (i == n)
            return q->valuestring;
    }
    return NULL;
}

static bl_status finish_locked(bl_record *r, const char *status, const char *message, bl_error *err);

static bl_status finish(bl_record *r, const char *status, const char *message, bl_error *err)
{
    /* Serialised with the signal guard (guard.c): a signal that arrives
     * while this runs is handled after it, and finds the record closed. */
    bl_record_lock();
    bl_status st = finish_locked(r, status, message, err);
    bl_record_unlock();
    BL_ASSERT_SANE(bl_record_sane, r);
    return st;
}

static bl_status finish_locked(bl_record *r, const char *status, const char *message, bl_error *err)
{
    bl_status st = require_open(r, err);
    if (st)
        return st;
    bool done = !strcmp(status, "DONE");
    int rootfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0)
        return bl_fail(err, BL_ERR_IO, "%s: cannot open record: %s", r->dir, strerror(errno));
    /* The space held since reservation is what the manifest, checksums and
     * marker are written into when the run filled the disk. */
    unlinkat(rootfd, BL_RECORD_BALLAST, 0);
    cJSON *problems = cJSON_CreateArray();
    artifact *arts = NULL;
    size_t n = 0;
    cJSON *manifest = NULL;
    char *manifest_text = NULL, *sums = NULL;
    size_t sums_len = 0, sums_cap = 0;
    bool wrote_manifest = false, wrote_sums = false, wrote_sig = false;
    if (!problems) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", r->dir);
        goto out;
    }
    st = inventory(r, rootfd, done, &arts, &n, problems, err);
    if (st)
        goto out;
    const char *missing = done ? missing_required(r, arts, n) : NULL;
    if (missing) {
        st = bl_fail(err, BL_ERR_INVALID, "%s: artifact '%s' promised by the plan's outputs was not written",
                     r->dir, missing);
        goto out;
    }
    char finished[32];
    bl_format_utc(time(NULL), finished);
    manifest = build_manifest(r, status, message, finished, arts, n, problems, false);
    manifest_text = manifest ? bl_json_print(manifest, 1) : NULL;
    /* A sealed record must always verify, and verify reads manifests up to
     * BL_RECORD_MANIFEST_MAX: a larger DONE is refused (the caller fails the
     * record instead); a larger FAILED drops the caller's sections. */
    if (manifest_text && strlen(manifest_text) + 1 > BL_RECORD_MANIFEST_MAX) {
        if (done) {
            st = bl_fail(err, BL_ERR_INVALID,
                         "%s: manifest.json would be %zu bytes, over the %zu-byte limit that verify reads; "
                         "the plan asks for too much to list inline",
                         r->dir, strlen(manifest_text) + 1, (size_t)BL_RECORD_MANIFEST_MAX);
            goto out;
        }
        free(manifest_text);
        cJSON_Delete(manifest);
        manifest = build_manifest(r, status, message, finished, arts, n, problems, true);
        manifest_text = manifest ? bl_json_print(manifest, 1) : NULL;
    }
    char *text2 = manifest_text ? realloc(manifest_text, strlen(manifest_text) + 2) : NULL;
    if (!text2) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory building manifest.json", r->dir);
        goto out;
    }
    manifest_text = text2;
    strcat(manifest_text, "\n");
    size_t manifest_len = strlen(manifest_text);
    char manifest_hex[BL_SHA256_HEX_LEN + 1];
    bl_sha256_buffer(manifest_text, manifest_len, manifest_hex);
    for (size_t i = 0; i < n; i++)
        if (!append_line(&sums, &sums_len, &sums_cap, arts[i].sha256, arts[i].path)) {
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory building checksums", r->dir);
            goto out;
        }
    if (!append_line(&sums, &sums_len, &sums_cap, manifest_hex, BL_RECORD_MANIFEST)) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory building checksums", r->dir);
        goto out;
    }
    st = write_text_excl(rootfd, r->dir, BL_RECORD_MANIFEST, manifest_text, manifest_len, err);
    if (st)
        goto out;
    wrote_manifest = true;
    st = write_text_excl(rootfd, r->dir, BL_RECORD_CHECKSUMS, sums, sums_len, err);
    if (st)
        goto out;
    wrote_sums = true;
    if (r->key) {
        char *sig = bl_sign_text(r->key, sums, sums_len, BL_RECORD_CHECKSUMS);
        if (!sig) {
            st = bl_fail(err, BL_ERR_INTERNAL, "%s: cannot sign checksums.sha256 (libcrypto)", r->dir);
            goto out;
        }
        st = write_text_excl(rootfd, r->dir, BL_RECORD_SIGNATURE, sig, strlen(sig), err);
        free(sig);
        if (st)
            goto out;
        wrote_sig = true;
    }
    if (fsync(rootfd) != 0) {
        st = bl_fail(err, BL_ERR_IO, "%s: cannot flush directory: %s", r->dir, strerror(errno));
        goto out;
    }
    char marker[256];
    int ml = snprintf(marker, sizeof marker, "status %s\nfinished_utc %s\nmanifest_sha256 %s\n",
                      status, finished, manifest_hex);
    const char *marker_name = done ? BL_RECORD_DONE : BL_RECORD_FAILED;
    st = write_text_excl(rootfd, r->dir, marker_name, marker, ml > 0 ? (size_t)ml : 0, err);
    if (st)
        goto out;
    if (fsync(rootfd) != 0) {
        /* The marker exists but may not be durable: take it back so that a
         * half-durable DONE cannot outlive a crash. */
        st = bl_fail(err, BL_ERR_IO, "%s: cannot flush directory: %s", r->dir, strerror(errno));
        unlinkat(rootfd, marker_name, 0);
        goto out;
    }
    r->state = done ? RECORD_DONE : RECORD_FAILED;
    if (unlinkat(rootfd, BL_RECORD_RESERVED, 0) != 0 && errno != ENOENT)
        st = bl_fail(err, BL_ERR_IO, "%s/%s: record sealed %s but the marker cannot be removed: %s",
                     r->dir, BL_RECORD_RESERVED, status, strerror(errno));
    else
        fsync(rootfd);
out:
    if (st && r->state == RECORD_OPEN) {
        if (wrote_sig)
            unlinkat(rootfd, BL_RECORD_SIGNATURE, 0);
        if (wrote_sums)
            unlinkat(rootfd, BL_RECORD_CHECKSUMS, 0);
        if (wrote_manifest)
            unlinkat(rootfd, BL_RECORD_MANIFEST, 0);
    }
    close(rootfd);
    free(sums);
    free(manifest_text);
    cJSON_Delete(manifest);
    cJSON_Delete(problems);
    free_artifacts(arts, n);
    return st;
}

bl_status bl_record_seal(bl_record *r, bl_error *err)
{
    return finish(r, "DONE", NULL, err);
}

bl_status bl_record_fail(bl_record *r, const char *message, bl_error *err)
{
    return finish(r, "FAILED", message && *message ? message : "unspecified failure", err);
}

void bl_record_destroy(bl_record *r)
{
    if (!r)
        return;
    bl_record_guard_forget(r);
    cJSON_Delete(r->required);
    bl_sign_key_free(r->key);
    free(r->name);
    cJSON_Delete(r->sections);
    cJSON_Delete(r->inputs);
    free(r->dir);
    free(r);
}
