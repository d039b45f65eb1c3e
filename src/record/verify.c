/* bl_record_verify: re-read a record and report every way it differs from
 * what was sealed. Problems are collected rather than returned at the first
 * one, because someone looking at a damaged record wants the whole picture.
 *
 * Nothing named by the manifest or the checksums file is trusted as a path
 * until it has passed bl_record_bad_relpath, and every file is opened with
 * bl_record_open_inside, so a crafted record cannot make verify read (or
 * vouch for) a file outside it. */
#include "core/json_check.h"
#include "brainlesslab/record.h"

#include "record/record_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Larger control files are not ours: refuse instead of reading them whole.
 * Seal never writes a manifest over BL_RECORD_MANIFEST_MAX; older records
 * may hold up to this. */
#define CONTROL_MAX_BYTES ((size_t)256 << 20)

typedef struct problems {
    char **v;
    size_t n, cap;
    bool oom;
} problems;

static void add_problem(problems *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void add_problem(problems *p, const char *fmt, ...)
{
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* Paths and messages come from the record: escape anything that is not
     * printable ASCII, so a crafted manifest cannot print a line break (and a
     * forged "OK" line) or a terminal escape sequence. */
    char shown[sizeof line * 4];
    bl_escape_text(shown, sizeof shown, line);
    if (p->n == p->cap) {
        size_t ncap = p->cap ? p->cap * 2 : 16;
        char **nv = realloc(p->v, ncap * sizeof *nv);
        if (!nv) {
            p->oom = true;
            return;
        }
        p->v = nv;
        p->cap = ncap;
    }
    size_t len = strlen(shown) + 1;
    char *copy = malloc(len);
    if (!copy) {
        p->oom = true;
        return;
    }
    memcpy(copy, shown, len);
    p->v[p->n++] = copy;
}

typedef struct listed {
    const char *path;
    const char *sha256;
    uint64_t bytes; /* manifest only */
} listed;

static int compare_listed(const void *a, const void *b)
{
    return strcmp(((const listed *)a)->path, ((const listed *)b)->path);
}

static const listed *find_listed(const listed *v, size_t n, const char *path)
{
    listed key = {path, NULL, 0};
    return n ? bsearch(&key, v, n, sizeof *v, compare_listed) : NULL;
}

static bool is_sha256_hex(const char *s)
{
    if (strlen(s) != BL_SHA256_HEX_LEN)
        return false;
    for (size_t i = 0; i < BL_SHA256_HEX_LEN; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* Why a path from the manifest or the checksums file cannot be used. */
static const char *unusable_path(const char *path)
{
    const char *why = bl_record_bad_relpath(path);
    if (why)
        return why;
    if (bl_record_is_control_name(path))
        return "is a control file, not an artifact";
    return NULL;
}

/* Read a whole control file (NUL-terminated) from inside the record. */
static const char *read_control(int rootfd, const char *name, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    int fd = -1;
    bl_open_result res = bl_record_open_inside(rootfd, name, &fd);
    if (res != BL_OPEN_OK)
        return bl_record_open_result_text(res);
    struct stat sb;
    if (fstat(fd, &sb) != 0 || (uint64_t)sb.st_size > CONTROL_MAX_BYTES) {
        close(fd);
        return "is unreadable or too large";
    }
    size_t cap = (size_t)sb.st_size + 1, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return "cannot be read (out of memory)";
    }
    for (;;) {
        if (n + 1 >= cap) {
            if (cap > CONTROL_MAX_BYTES) {
                free(buf);
                close(fd);
                return "is too large";
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                close(fd);
                return "cannot be read (out of memory)";
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(buf);
            close(fd);
            return "cannot be read";
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return NULL;
}

/* The manifest's artifact list; strings point into MANIFEST. Entries with
 * unusable paths are reported and left out. */
static listed *manifest_artifacts(const cJSON *manifest, size_t *count, problems *p)
{
    *count = 0;
    const cJSON *arts = cJSON_GetObjectItemCaseSensitive(manifest, "artifacts");
    if (!cJSON_IsArray(arts)) {
        add_problem(p, "%s: has no \"artifacts\" list", BL_RECORD_MANIFEST);
        return NULL;
    }
    size_t n = (size_t)cJSON_GetArraySize(arts), m = 0, i = 0;
    listed *v = calloc(n ? n : 1, sizeof *v);
    if (!v) {
        p->oom = true;
        return NULL;
    }
    for (const cJSON *a = arts->child; a; a = a->next, i++) {
        const cJSON *path = cJSON_GetObjectItemCaseSensitive(a, "path");
        const cJSON *bytes = cJSON_GetObjectItemCaseSensitive(a, "bytes");
        const cJSON *sha = cJSON_GetObjectItemCaseSensitive(a, "sha256");
        if (!cJSON_IsString(path) || !cJSON_IsNumber(bytes) || !cJSON_IsString(sha)) {
            add_problem(p, "%s: artifacts[%zu]: needs string path, number bytes, string sha256",
                        BL_RECORD_MANIFEST, i);
            continue;
        }
        const char *why = unusable_path(path->valuestring);
        if (why) {
            add_problem(p, "%s: artifacts[%zu]: path '%s' %s; refused", BL_RECORD_MANIFEST, i,
                        path->valuestring, why);
            continue;
        }
        double b = bytes->valuedouble;
        if (!(b >= 0 && b <= 9007199254740992.0) || b != (double)(uint64_t)b) {
            add_problem(p, "%s: artifacts[%zu] (%s): bytes is not a byte count", BL_RECORD_MANIFEST,
                        i, path->valuestring);
            continue;
        }
        if (!is_sha256_hex(sha->valuestring)) {
            add_problem(p, "%s: artifacts[%zu] (%s): sha256 is not 64 lowercase hex digits",
                        BL_RECORD_MANIFEST, i, path->valuestring);
            continue;
        }
        v[m].path = path->valuestring;
        v[m].sha256 = sha->valuestring;
        v[m].bytes = (uint64_t)b;
        m++;
    }
    qsort(v, m, sizeof *v, compare_listed);
    *count = m;
    return v;
}

/* Parse checksums.sha256 in place: "<64 hex>  <path>\n" per line, exactly as
 * seal writes it. The manifest.json line is returned separately. */
static listed *parse_checksums(char *text, size_t len, size_t *count, const char **manifest_sha,
                               problems *p)
{
    *count = 0;
    *manifest_sha = NULL;
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    listed *v = calloc(lines + 1, sizeof *v);
    if (!v) {
        p->oom = true;
        return NULL;
    }
    size_t m = 0, lineno = 0;
    char *s = text, *end = text + len;
    while (s < end) {
        lineno++;
        char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl) {
            add_problem(p, "%s: line %zu: does not end with a newline", BL_RECORD_CHECKSUMS,
                        lineno);
            break;
        }
        *nl = '\0';
        size_t n = (size_t)(nl - s);
        if (n < BL_SHA256_HEX_LEN + 3 || s[BL_SHA256_HEX_LEN] != ' ' ||
            s[BL_SHA256_HEX_LEN + 1] != ' ') {
            add_problem(p, "%s: line %zu: not '<sha256>  <path>'", BL_RECORD_CHECKSUMS, lineno);
            s = nl + 1;
            continue;
        }
        s[BL_SHA256_HEX_LEN] = '\0';
        const char *path = s + BL_SHA256_HEX_LEN + 2;
        if (!is_sha256_hex(s)) {
            add_problem(p, "%s: line %zu: not a lowercase SHA-256", BL_RECORD_CHECKSUMS, lineno);
        } else if (!strcmp(path, BL_RECORD_MANIFEST)) {
            if (*manifest_sha)
                add_problem(p, "%s: lists %s twice", BL_RECORD_CHECKSUMS, BL_RECORD_MANIFEST);
            *manifest_sha = s;
        } else {
            const char *why = unusable_path(path);
            if (why) {
                add_problem(p, "%s: line %zu: path '%s' %s; refused", BL_RECORD_CHECKSUMS, lineno,
                            path, why);
            } else {
                v[m].path = path;
                v[m].sha256 = s;
                m++;
            }
        }
        s = nl + 1;
    }
    qsort(v, m, sizeof *v, compare_listed);
    *count = m;
    return v;
}

/* Drop repeated paths from a sorted list, reporting each. */
static size_t dedupe(listed *v, size_t n, const char *source, problems *p)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && !strcmp(v[m - 1].path, v[i].path)) {
            add_problem(p, "%s: %s: listed twice", v[i].path, source);
            continue;
        }
        v[m++] = v[i];
    }
    return m;
}

/* DONE (or FAILED) names the manifest's SHA-256: it must be this manifest's. */
static void check_marker_hash(int rootfd, const char *marker, const char *manifest_hex, const cJSON *manifest,
                              problems *p)
{
    char *text = NULL;
    size_t len = 0;
    if (read_control(rootfd, marker, &text, &len))
        return; /* reported by check_markers */
    /* Every byte of DONE derives from the manifest, which the checksums and
     * the signature cover: its text must be exactly what sealing writes
     * (record.c), so no free text rides along unhashed (issue 26). Records
     * sealed before this check carry exactly this text too. */
    const cJSON *fin = manifest ? cJSON_GetObjectItemCaseSensitive(manifest, "finished_utc") : NULL;
    if (manifest_hex && cJSON_IsString(fin) && strlen(fin->valuestring) < 64) {
        char want[256];
        int wl = snprintf(want, sizeof want, "status DONE\nfinished_utc %s\nmanifest_sha256 %s\n", fin->valuestring,
                          manifest_hex);
        if (wl < 0 || (size_t)wl != len || memcmp(want, text, len))
            add_problem(p, "%s: its text is not exactly what sealing writes (status, the manifest's finished_utc "
                        "and its SHA-256): edited after sealing", marker);
    }
    const char *at = strstr(text, "manifest_sha256 ");
    char named[BL_SHA256_HEX_LEN + 1] = "";
    if (at) {
        at += strlen("manifest_sha256 ");
        size_t k = strspn(at, "0123456789abcdef");
        if (k == BL_SHA256_HEX_LEN && (at[k] == '\n' || at[k] == '\0'))
            memcpy(named, at, BL_SHA256_HEX_LEN + 1), named[BL_SHA256_HEX_LEN] = '\0';
    }
    if (!named[0])
        add_problem(p, "%s: does not name the manifest's SHA-256 (no 'manifest_sha256 <hex>' line)", marker);
    else if (manifest_hex && strcmp(named, manifest_hex))
        add_problem(p, "%s: names manifest SHA-256 %.16s... but %s hashes to %.16s... (manifest replaced "
                    "after sealing)", marker, named, BL_RECORD_MANIFEST, manifest_hex);
    free(text);
}

static void check_markers(int rootfd, const cJSON *manifest, problems *p)
{
    struct stat sb;
    bool done = fstatat(rootfd, BL_RECORD_DONE, &sb, AT_SYMLINK_NOFOLLOW) == 0;
    bool done_regular = done && S_ISREG(sb.st_mode);
    bool failed = fstatat(rootfd, BL_RECORD_FAILED, &sb, AT_SYMLINK_NOFOLLOW) == 0;
    bool reserved = fstatat(rootfd, BL_RECORD_RESERVED, &sb, AT_SYMLINK_NOFOLLOW) == 0;
    const cJSON *status = manifest ? cJSON_GetObjectItemCaseSensitive(manifest, "status") : NULL;
    const cJSON *message = manifest ? cJSON_GetObjectItemCaseSensitive(manifest, "message") : NULL;
    if (failed)
        add_problem(p, "record is marked FAILED%s%s", cJSON_IsString(message) ? ": " : "",
                    cJSON_IsString(message) ? message->valuestring : "");
    if (!done && !failed)
        add_problem(p, "record was never sealed: no DONE marker%s",
                    reserved ? " and .RESERVED is still there (the run did not finish)" : "");
    if (done && !done_regular)
        add_problem(p, "%s: is not a regular file", BL_RECORD_DONE);
    if (done && failed)
        add_problem(p, "both DONE and FAILED markers are present");
    if (done && reserved)
        add_problem(p, "%s: still present beside DONE (a sealed record never keeps it)", BL_RECORD_RESERVED);
    if (done && fstatat(rootfd, BL_RECORD_BALLAST, &sb, AT_SYMLINK_NOFOLLOW) == 0)
        add_problem(p, "%s: still present beside DONE (a sealed record never keeps it)", BL_RECORD_BALLAST);
    if (done && manifest && (!cJSON_IsString(status) || strcmp(status->valuestring, "DONE")))
        add_problem(p, "%s: status is not \"DONE\" but the DONE marker is present",
                    BL_RECORD_MANIFEST);
}

static void check_format(const cJSON *manifest, problems *p)
{
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(manifest, "format");
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(manifest, "format_version");
    if (!cJSON_IsString(format) || strcmp(format->valuestring, BL_RECORD_FORMAT))
        add_problem(p, "%s: format is not \"%s\"", BL_RECORD_MANIFEST, BL_RECORD_FORMAT);
    if (!cJSON_IsNumber(version) || version->valuedouble < BL_RECORD_FORMAT_VERSION_MIN ||
        version->valuedouble > BL_RECORD_FORMAT_VERSION || version->valuedouble != (int)version->valuedouble)
        add_problem(p, "%s: format_version is not %d..%d", BL_RECORD_MANIFEST,
                    BL_RECORD_FORMAT_VERSION_MIN, BL_RECORD_FORMAT_VERSION);
}

static int format_version(const cJSON *manifest)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(manifest, "format_version");
    return cJSON_IsNumber(v) ? (int)v->valuedouble : 0;
}

/* Version 2: the record's name, its plan hash and the artifacts its plan's
 * outputs promise. NAME is the directory's last component. */
static void check_binding(const cJSON *manifest, const char *name, const listed *a, size_t na, problems *p)
{
    const cJSON *rn = cJSON_GetObjectItemCaseSensitive(manifest, "record_name");
    if (!cJSON_IsString(rn))
        add_problem(p, "%s: has no record_name", BL_RECORD_MANIFEST);
    else if (name && strcmp(rn->valuestring, name))
        add_problem(p, "%s: record_name is '%s' but the record directory is '%s' (renamed, or another "
                    "record's content)", BL_RECORD_MANIFEST, rn->valuestring, name);
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(manifest, "plan_sha256");
    if (ph) {
        char prefix[10];
        if (!cJSON_IsString(ph) || strlen(ph->valuestring) != BL_SHA256_HEX_LEN ||
            strspn(ph->valuestring, "0123456789abcdef") != BL_SHA256_HEX_LEN)
            add_problem(p, "%s: plan_sha256 is not 64 lowercase hex digits", BL_RECORD_MANIFEST);
        else if (snprintf(prefix, sizeof prefix, "-%.8s", ph->valuestring), name && !strstr(name, prefix))
            add_problem(p, "%s: the record name does not carry the plan hash %.8s", BL_RECORD_MANIFEST,
                        ph->valuestring);
        const cJSON *plan = cJSON_GetObjectItemCaseSensitive(manifest, "plan");
        const cJSON *plan_hash = plan ? cJSON_GetObjectItemCaseSensitive(plan, "hash") : NULL;
        if (cJSON_IsString(ph) && cJSON_IsString(plan_hash) && strcmp(plan_hash->valuestring, ph->valuestring))
            add_problem(p, "%s: plan_sha256 differs from the plan section's hash", BL_RECORD_MANIFEST);
    }
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(manifest, "required_artifacts");
    if (req && !cJSON_IsArray(req))
        add_problem(p, "%s: required_artifacts is not a list", BL_RECORD_MANIFEST);
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(manifest, "status");
    bool done = cJSON_IsString(status) && !strcmp(status->valuestring, "DONE");
    for (const cJSON *q = cJSON_IsArray(req) ? req->child : NULL; done && q; q = q->next) {
        if (!cJSON_IsString(q))
            add_problem(p, "%s: required_artifacts holds a non-string", BL_RECORD_MANIFEST);
        else if (!find_listed(a, na, q->valuestring))
            add_problem(p, "%s: promised by the plan's outputs but not among the artifacts", q->valuestring);
    }
}

/* Manifest and checksums must list the same artifacts with the same hashes. */
static void cross_check(const listed *a, size_t na, const listed *c, size_t nc, problems *p)
{
    size_t i = 0, j = 0;
    while (i < na || j < nc) {
        int cmp = i == na ? 1 : j == nc ? -1 : strcmp(a[i].path, c[j].path);
        if (cmp < 0) {
            add_problem(p, "%s: in %s but not in %s", a[i].path, BL_RECORD_MANIFEST,
                        BL_RECORD_CHECKSUMS);
            i++;
        } else if (cmp > 0) {
            add_problem(p, "%s: in %s but not in %s", c[j].path, BL_RECORD_CHECKSUMS,
                        BL_RECORD_MANIFEST);
            j++;
        } else {
            if (strcmp(a[i].sha256, c[j].sha256))
                add_problem(p, "%s: %s and %s disagree on its SHA-256", a[i].path,
                            BL_RECORD_MANIFEST, BL_RECORD_CHECKSUMS);
            i++;
            j++;
        }
    }
}

static size_t rehash(int rootfd, const listed *a, size_t na, problems *p)
{
    size_t verified = 0;
    for (size_t i = 0; i < na; i++) {
        int fd = -1;
        bl_open_result res = bl_record_open_inside(rootfd, a[i].path, &fd);
        if (res == BL_OPEN_MISSING) {
            add_problem(p, "%s: removed (listed in %s, missing on disk)", a[i].path,
                        BL_RECORD_MANIFEST);
            continue;
        }
        if (res != BL_OPEN_OK) {
            add_problem(p, "%s: %s", a[i].path, bl_record_open_result_text(res));
            continue;
        }
        char hex[BL_SHA256_HEX_LEN + 1];
        uint64_t bytes = 0;
        struct stat sb;
        if (fstat(fd, &sb) == 0 && sb.st_nlink > 1)
            add_problem(p, "%s: has %lu hard links; an artifact must be its own file, not shared with "
                        "another record or file", a[i].path, (unsigned long)sb.st_nlink);
        /* Sizes first: an artifact replaced by a 20 GiB (sparse) file is
         * found changed at once, not after hashing all of it. */
        if (fstat(fd, &sb) == 0 && (uint64_t)sb.st_size != a[i].bytes) {
            close(fd);
            add_problem(p, "%s: changed (now %llu bytes; manifest: %llu bytes, sha256 %.16s...)", a[i].path,
                        (unsigned long long)sb.st_size, (unsigned long long)a[i].bytes, a[i].sha256);
            continue;
        }
        int rc = bl_record_hash_fd(fd, hex, &bytes);
        close(fd);
        if (rc != 0)
            add_problem(p, "%s: cannot be read", a[i].path);
        else if (bytes != a[i].bytes || strcmp(hex, a[i].sha256))
            add_problem(p,
                        "%s: changed (now %llu bytes, sha256 %.16s...; manifest: %llu bytes, "
                        "sha256 %.16s...)",
                        a[i].path, (unsigned long long)bytes, hex,
                        (unsigned long long)a[i].bytes, a[i].sha256);
        else
            verified++;
    }
    return verified;
}

/* Files on disk that the manifest does not list. */
static void find_extras(int rootfd, const char *dir, const listed *a, size_t na, problems *p)
{
    bl_record_entry *entries = NULL;
    size_t n = 0;
    bl_error werr;
    bl_error_clear(&werr);
    if (bl_record_walk(rootfd, dir, false, &entries, &n, &werr) != BL_OK) {
        add_problem(p, "%s", werr.message);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const bl_record_entry *e = &entries[i];
        if (e->kind == BL_ENTRY_DIR) {
            /* Sorted by path: a directory's contents follow it as "dir/...".
             * Seal never leaves an empty directory, so one was added. */
            size_t len = strlen(e->path);
            if (i + 1 == n || strncmp(entries[i + 1].path, e->path, len) || entries[i + 1].path[len] != '/')
                add_problem(p, "%s: empty directory (not part of the sealed record)", e->path);
            continue;
        }
        if (find_listed(a, na, e->path))
            continue; /* listed entries were checked (and reported) by rehash */
        if (e->kind == BL_ENTRY_FILE)
            add_problem(p, "%s: not in %s (added after sealing)", e->path, BL_RECORD_MANIFEST);
        else if (e->kind == BL_ENTRY_SYMLINK)
            add_problem(p, "%s: symlink not in %s", e->path, BL_RECORD_MANIFEST);
        else
            add_problem(p, "%s: special file not in %s", e->path, BL_RECORD_MANIFEST);
    }
    bl_record_free_entries(entries, n);
}

static bl_status summarize(const char *dir, problems *p, FILE *report, bl_error *err)
{
    if (p->oom)
        return bl_fail(err, BL_ERR_NOMEM, "record %s: out of memory while verifying", dir);
    char shown[1024];
    bl_escape_text(shown, sizeof shown, dir);
    for (size_t i = 0; report && i < p->n; i++)
        fprintf(report, "%s: %s\n", shown, p->v[i]);
    char summary[BL_ERROR_MESSAGE_MAX];
    size_t len = (size_t)snprintf(summary, sizeof summary, "record %s: %zu problem%s: ", shown, p->n,
                                  p->n == 1 ? "" : "s");
    for (size_t i = 0; i < p->n && len < sizeof summary; i++)
        len += (size_t)snprintf(summary + len, sizeof summary - len, "%s%s", i ? "; " : "",
                                p->v[i]);
    if (len >= sizeof summary)
        memcpy(summary + sizeof summary - 5, " ...", 5);
    return bl_fail(err, BL_ERR_INVALID, "%s", summary);
}

/* The last component of DIR (trailing slashes ignored), malloc'd. */
static char *record_name_of(const char *dir)
{
    char *real = realpath(dir, NULL);
    const char *base = real ? real : dir;
    size_t len = strlen(base);
    while (len > 1 && base[len - 1] == '/')
        len--;
    size_t start = len;
    while (start > 0 && base[start - 1] != '/')
        start--;
    char *name = malloc(len - start + 1);
    if (name) {
        memcpy(name, base + start, len - start);
        name[len - start] = '\0';
    }
    free(real);
    return name;
}

/* SIGNATURE against checksums.sha256 (its bytes as read, before parsing). */
static void check_signature(int rootfd, const cJSON *manifest, const char *sums, size_t sums_len,
                            const char *trusted, problems *p)
{
    const cJSON *signing = manifest ? cJSON_GetObjectItemCaseSensitive(manifest, "signing") : NULL;
    const cJSON *pub = signing ? cJSON_GetObjectItemCaseSensitive(signing, "public_key") : NULL;
    struct stat sb;
    bool present = fstatat(rootfd, BL_RECORD_SIGNATURE, &sb, AT_SYMLINK_NOFOLLOW) == 0;
    if (!signing && !present && !trusted)
        return; /* an unsigned record, verified as such */
    if (!present) {
        add_problem(p, "%s: missing%s", BL_RECORD_SIGNATURE,
                    trusted ? " (--key asks for a signed record)" : " but the manifest says the record is signed");
        return;
    }
    if (!signing && manifest)
        add_problem(p, "%s: present but the manifest names no signing key", BL_RECORD_SIGNATURE);
    if (signing && !cJSON_IsString(pub))
        add_problem(p, "%s: signing.public_key is not a string", BL_RECORD_MANIFEST);
    if (!sums)
        return; /* checksums.sha256 unreadable: reported already */
    char *text = NULL;
    size_t len = 0;
    const char *why = read_control(rootfd, BL_RECORD_SIGNATURE, &text, &len);
    char key_hex[65];
    if (!why)
        why = bl_sign_check(text, len, sums, sums_len, cJSON_IsString(pub) ? pub->valuestring : NULL, trusted,
                            key_hex);
    if (why)
        add_problem(p, "%s: %s", BL_RECORD_SIGNATURE, why);
    free(text);
}

bl_status bl_record_verify(const char *dir, FILE *report, size_t *artifacts, bl_error *err)
{
    return bl_record_verify_with(dir, NULL, report, artifacts, err);
}

bl_status bl_record_verify_with(const char *dir, const bl_verify_options *opt, FILE *report,
                                size_t *artifacts, bl_error *err)
{
    if (artifacts)
        *artifacts = 0;
    /* The trusted key first, read once (never a FIFO, never a large file): a
     * missing --key file says so instead of "not an Ed25519 public key". */
    char *trusted = NULL;
    if (opt && opt->public_key) {
        bl_status kst = bl_sign_read_trusted(opt->public_key, &trusted, err);
        if (kst)
            return kst;
    }
    int rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) {
        char shown[1024];
        bl_escape_text(shown, sizeof shown, dir);
        free(trusted);
        return bl_fail(err, BL_ERR_IO, "record %s: cannot open directory: %s", shown, strerror(errno));
    }
    problems p = {0};
    char *mtext = NULL, *ctext = NULL, *name = record_name_of(dir);
    size_t mlen = 0, clen = 0, na = 0, nc = 0, verified = 0;
    cJSON *manifest = NULL;
    listed *a = NULL, *c = NULL;
    char manifest_hex[BL_SHA256_HEX_LEN + 1] = "";

    const char *why = read_control(rootfd, BL_RECORD_MANIFEST, &mtext, &mlen);
    const char *end = NULL;
    if (why) {
        add_problem(&p, "%s: %s", BL_RECORD_MANIFEST, why);
    } else {
        bl_sha256_buffer(mtext, mlen, manifest_hex);
        /* One JSON object and nothing after it: require_null_terminated
         * refuses trailing text, and a NUL byte would hide it. A UTF-8 BOM
         * (which cJSON skips, and JSON readers such as Python's refuse) is
         * refused here too, so that every reader of a record agrees. */
        if (mlen >= 3 && !memcmp(mtext, "\xEF\xBB\xBF", 3)) {
            add_problem(&p, "%s: starts with a UTF-8 byte-order mark (BOM); a record's manifest is plain UTF-8 "
                        "JSON", BL_RECORD_MANIFEST);
        } else if (memchr(mtext, '\0', mlen) ||
            !(manifest = cJSON_ParseWithLengthOpts(mtext, mlen + 1, &end, 1)) || !cJSON_IsObject(manifest)) {
            add_problem(&p, "%s: not a single JSON object (invalid JSON, or text after it)", BL_RECORD_MANIFEST);
            cJSON_Delete(manifest);
            manifest = NULL;
        }
    }
    const char *dup = manifest ? bl_json_duplicate_key(manifest) : NULL;
    if (dup)
        add_problem(&p, "%s: key '%s' appears twice in one object", BL_RECORD_MANIFEST, dup);
    check_markers(rootfd, manifest, &p);
    struct stat msb;
    if (fstatat(rootfd, BL_RECORD_DONE, &msb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(msb.st_mode))
        check_marker_hash(rootfd, BL_RECORD_DONE, manifest_hex[0] ? manifest_hex : NULL, manifest, &p);
    if (manifest) {
        check_format(manifest, &p);
        a = manifest_artifacts(manifest, &na, &p);
        na = dedupe(a, na, BL_RECORD_MANIFEST, &p);
        if (format_version(manifest) >= 2)
            check_binding(manifest, name, a, na, &p);
    }

    why = read_control(rootfd, BL_RECORD_CHECKSUMS, &ctext, &clen);
    const char *manifest_sha = NULL;
    check_signature(rootfd, manifest, why ? NULL : ctext, clen, trusted, &p);
    free(trusted);
    if (why) {
        add_problem(&p, "%s: %s", BL_RECORD_CHECKSUMS, why);
    } else {
        c = parse_checksums(ctext, clen, &nc, &manifest_sha, &p);
        nc = dedupe(c, nc, BL_RECORD_CHECKSUMS, &p);
        if (!manifest_sha) {
            add_problem(&p, "%s: does not list %s", BL_RECORD_CHECKSUMS, BL_RECORD_MANIFEST);
        } else if (mtext) {
            if (strcmp(manifest_hex, manifest_sha))
                add_problem(&p, "%s: edited (its SHA-256 does not match %s)", BL_RECORD_MANIFEST,
                            BL_RECORD_CHECKSUMS);
        }
    }
    if (manifest && c)
        cross_check(a, na, c, nc, &p);
    if (manifest) {
        verified = rehash(rootfd, a, na, &p);
        find_extras(rootfd, dir, a, na, &p);
    }

    bl_status st = BL_OK;
    if (p.n || p.oom)
        st = summarize(dir, &p, report, err);
    else if (artifacts)
        *artifacts = verified;
    for (size_t i = 0; i < p.n; i++)
        free(p.v[i]);
    free(p.v);
    free(a);
    free(c);
    free(name);
    cJSON_Delete(manifest);
    free(mtext);
    free(ctext);
    close(rootfd);
    return st;
}
