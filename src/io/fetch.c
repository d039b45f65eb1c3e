/* Downloading one published file (include/brainlesslab/fetch.h) with libcurl.
 *
 * The bytes go to DIR/NAME.part and are hashed as they are written; when the
 * transfer ends the size and checksum are compared with the table's, and
 * only a verified file is renamed to DIR/NAME. A partial file left by a
 * broken or stalled transfer is continued with an HTTP Range request: its
 * bytes are hashed from disk first, so the digest always covers exactly the
 * bytes of the final file. The transfer is bounded: the write callback
 * refuses any byte past the table's size, redirects are limited and stay on
 * http(s), and a transfer slower than 1 byte/s for the stall timeout ends. */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/fetch.h"
#include "brainlesslab/hash.h"
#include "core/file.h"

const char *bl_fetch_digest_name(bl_fetch_digest d)
{
    switch (d) {
    case BL_FETCH_SHA256: return "sha256";
    case BL_FETCH_MD5: return "md5";
    case BL_FETCH_GIT_BLOB_SHA1: return "git-blob-sha1";
    case BL_FETCH_UNPUBLISHED: return "unpublished";
    }
    return "?";
}

const char *bl_fetch_file_url(const bl_fetch_file *f, const bl_fetch_options *opt, char *buf, size_t size)
{
    const char *base = opt && opt->mirror && *opt->mirror ? opt->mirror : f->base_url;
    size_t n = strlen(base);
    snprintf(buf, size, "%.*s/%s", (int)(n && base[n - 1] == '/' ? n - 1 : n), base, f->name);
    return buf;
}

/* The two digests a transfer keeps: the table's (to verify) and SHA-256 (to report). */
typedef struct digests {
    EVP_MD_CTX *check; /* NULL for BL_FETCH_UNPUBLISHED and SHA-256 (then sha carries it) */
    bl_sha256 *sha;
} digests;

static void digests_free(digests *d)
{
    if (d->check)
        EVP_MD_CTX_free(d->check);
    if (d->sha) {
        char hex[BL_SHA256_HEX_LEN + 1];
        bl_sha256_finish(d->sha, hex);
    }
    memset(d, 0, sizeof *d);
}

static void digests_update(digests *d, const void *p, size_t n)
{
    bl_sha256_update(d->sha, p, n);
    if (d->check)
        EVP_DigestUpdate(d->check, p, n);
}

/* total: the file's full size, which a Git blob id covers in its header. */
static bl_status digests_start(digests *d, const bl_fetch_file *f, uint64_t total, bl_error *err)
{
    memset(d, 0, sizeof *d);
    if (!(d->sha = bl_sha256_create()))
        return bl_fail(err, BL_ERR_NOMEM, "out of memory");
    const EVP_MD *md = f->digest == BL_FETCH_MD5 ? EVP_md5() : f->digest == BL_FETCH_GIT_BLOB_SHA1 ? EVP_sha1() : NULL;
    if (!md)
        return BL_OK;
    if (!(d->check = EVP_MD_CTX_new()) || EVP_DigestInit_ex(d->check, md, NULL) != 1) {
        digests_free(d);
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot start the %s digest", f->name, bl_fetch_digest_name(f->digest));
    }
    if (f->digest == BL_FETCH_GIT_BLOB_SHA1) {
        char head[64];
        int n = snprintf(head, sizeof head, "blob %" PRIu64, total);
        EVP_DigestUpdate(d->check, head, (size_t)n + 1); /* with its NUL */
    }
    return BL_OK;
}

/* Finish both digests: sha256 into res, the verdict against the table in *ok. */
static void digests_finish(digests *d, const bl_fetch_file *f, char sha256[65], char got[129], int *ok)
{
    bl_sha256_finish(d->sha, sha256);
    d->sha = NULL;
    if (f->digest == BL_FETCH_SHA256) {
        snprintf(got, 129, "%s", sha256);
    } else if (d->check) {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        EVP_DigestFinal_ex(d->check, md, &len);
        for (unsigned i = 0; i < len && 2 * i + 2 < 129; i++)
            snprintf(got + 2 * i, 3, "%02x", md[i]);
    } else {
        got[0] = '\0';
    }
    *ok = f->digest == BL_FETCH_UNPUBLISHED || (f->hex && !strcmp(got, f->hex));
    digests_free(d);
}

/* Hash the first LEN bytes of an existing file into D. */
static bl_status digests_file(digests *d, const char *path, uint64_t len, bl_error *err)
{
    int fd;
    uint64_t size;
    bl_status st = bl_open_regular(path, &fd, &size, err);
    if (st != BL_OK)
        return st;
    enum { CHUNK = 1 << 16 };
    unsigned char *buf = malloc(CHUNK);
    if (!buf) {
        close(fd);
        return bl_fail(err, BL_ERR_NOMEM, "out of memory");
    }
    for (uint64_t done = 0; done < len;) {
        size_t want = len - done < CHUNK ? (size_t)(len - done) : CHUNK;
        if (bl_read_full(fd, buf, want) != 0) {
            free(buf);
            close(fd);
            return bl_fail(err, BL_ERR_IO, "%s: cannot read: %s", path, errno ? strerror(errno) : "file shrank");
        }
        digests_update(d, buf, want);
        done += want;
    }
    free(buf);
    close(fd);
    return BL_OK;
}

typedef struct transfer {
    const bl_fetch_file *f;
    const bl_fetch_options *opt;
    CURL *curl;
    FILE *out;
    const char *part;
    uint64_t offset;  /* bytes already in the partial file when the request was sent */
    uint64_t written; /* bytes written by this transfer */
    uint64_t limit;   /* most bytes the file may have */
    uint64_t total;   /* the size the server declares (0: unknown) */
    int started;      /* the first body byte arrived: status checked, file opened, digests primed */
    long status;
    int64_t range_start; /* the first byte of a 206 answer (Content-Range), -1 when none was seen */
    digests dg;
    bl_error *err;
    bl_status st; /* the reason the write callback stopped the transfer */
} transfer;

/* Called with the first body byte: decides, from the status, whether the
 * partial file is continued or restarted, and primes the digests with it. */
static bl_status start_body(transfer *t)
{
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &t->status);
    curl_off_t cl = -1;
    curl_easy_getinfo(t->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
    if (t->status == 200 || t->offset == 0) {
        t->offset = 0; /* the server sent the whole file: start again */
    } else if (t->status != 206) {
        return bl_fail(t->err, BL_ERR_IO, "%s: HTTP %ld", t->f->name, t->status);
    } else if (t->range_start != (int64_t)t->offset) {
        /* Appending bytes from elsewhere would only fail the checksum later. */
        return bl_fail(t->err, BL_ERR_INVALID, "%s: asked for the bytes from %" PRIu64 ", the server answered with %s",
                       t->f->name, t->offset, t->range_start < 0 ? "no Content-Range" : "another range");
    }
    t->total = cl >= 0 ? t->offset + (uint64_t)cl : 0;
    if (t->total > t->limit)
        return bl_fail(t->err, BL_ERR_INVALID, "%s: the server announces %" PRIu64 " bytes, the table allows %" PRIu64,
                       t->f->name, t->total, t->limit);
    if (t->f->digest == BL_FETCH_GIT_BLOB_SHA1 && !t->f->size && !t->total)
        return bl_fail(t->err, BL_ERR_UNSUPPORTED, "%s: the server does not say the size, which its Git blob id covers",
                       t->f->name);
    bl_status st = digests_start(&t->dg, t->f, t->f->size ? t->f->size : t->total, t->err);
    if (st == BL_OK && t->offset)
        st = digests_file(&t->dg, t->part, t->offset, t->err);
    if (st != BL_OK)
        return st;
    if (!(t->out = fopen(t->part, t->offset ? "r+b" : "wb")))
        return bl_fail(t->err, BL_ERR_IO, "%s: cannot open: %s", t->part, strerror(errno));
    if (t->offset && (ftruncate(fileno(t->out), (off_t)t->offset) != 0 || fseeko(t->out, (off_t)t->offset, SEEK_SET) != 0))
        return bl_fail(t->err, BL_ERR_IO, "%s: cannot continue at byte %" PRIu64 ": %s", t->part, t->offset,
                       strerror(errno));
    t->started = 1;
    return BL_OK;
}

static size_t on_body(char *p, size_t one, size_t n, void *user)
{
    transfer *t = user;
    size_t len = one * n;
    if (!t->started) {
        curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &t->status);
        if (t->status < 200 || t->status >= 300)
            return len; /* an error page or an unfollowed redirect: dropped; the status is reported after */
        if ((t->st = start_body(t)) != BL_OK)
            return 0;
    }
    if (t->offset + t->written + len > t->limit) {
        t->st = bl_fail(t->err, BL_ERR_INVALID, "%s: the server sends more than the %" PRIu64 " bytes the table allows",
                        t->f->name, t->limit);
        return 0;
    }
    if (len && fwrite(p, 1, len, t->out) != len) {
        t->st = bl_fail(t->err, BL_ERR_IO, "%s: cannot write: %s", t->part, strerror(errno));
        return 0;
    }
    digests_update(&t->dg, p, len);
    t->written += len;
    return len;
}

/* Headers of every response (redirects included): only Content-Range is kept. */
static size_t on_header(char *p, size_t one, size_t n, void *user)
{
    transfer *t = user;
    size_t len = one * n;
    static const char key[] = "content-range:";
    if (len >= 5 && !strncmp(p, "HTTP/", 5))
        t->range_start = -1; /* a new response */
    if (len > sizeof key - 1 && !strncasecmp(p, key, sizeof key - 1)) {
        char buf[128];
        size_t m = len < sizeof buf - 1 ? len : sizeof buf - 1;
        memcpy(buf, p, m);
        buf[m] = '\0';
        unsigned long long start;
        if (sscanf(buf + sizeof key - 1, " bytes %llu-", &start) == 1 && start <= INT64_MAX)
            t->range_start = (int64_t)start;
    }
    return len;
}

static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    (void)ultotal, (void)ulnow;
    transfer *t = user;
    if (t->opt && t->opt->progress && t->started) {
        uint64_t total = t->f->size ? t->f->size : dltotal > 0 ? t->offset + (uint64_t)dltotal : 0;
        t->opt->progress(t->opt->progress_user, t->f->name, t->offset + (uint64_t)(dlnow > 0 ? dlnow : 0), total,
                         t->offset);
    }
    return 0;
}

static int file_size(const char *path, uint64_t *size)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return 0;
    *size = (uint64_t)sb.st_size;
    return 1;
}

/* A finished DIR/NAME is kept when it verifies; a wrong one is an error (never overwritten silently). */
static bl_status check_present(const bl_fetch_file *f, const char *path, uint64_t size, bl_fetch_result *res,
                               bl_error *err)
{
    digests d;
    bl_status st = digests_start(&d, f, size, err);
    if (st == BL_OK)
        st = digests_file(&d, path, size, err);
    if (st != BL_OK) {
        digests_free(&d);
        return st;
    }
    char got[129];
    int ok;
    digests_finish(&d, f, res->sha256, got, &ok);
    if (!ok || (f->size && size != f->size))
        return bl_fail(err, BL_ERR_EXISTS, "%s: already there but it is not the published file (%" PRIu64 " bytes, %s %s; "
                       "the table says %" PRIu64 " bytes, %s); remove it to fetch it again",
                       path, size, bl_fetch_digest_name(f->digest), got, f->size, f->hex ? f->hex : "-");
    res->bytes = size;
    res->already_present = 1;
    return BL_OK;
}

static int curl_ready;

bl_status bl_fetch_file_get(const bl_fetch_file *f, const char *dir, const bl_fetch_options *opt,
                            bl_fetch_result *res, bl_error *err)
{
    bl_fetch_result dummy;
    if (!res)
        res = &dummy;
    memset(res, 0, sizeof *res);
    if (!f || !f->name || !*f->name || strchr(f->name, '/') || !strcmp(f->name, ".") || !strcmp(f->name, ".."))
        return bl_fail(err, BL_ERR_INVALID, "fetch: a file name must be a plain name ('%s')", f && f->name ? f->name : "");
    if (f->digest != BL_FETCH_UNPUBLISHED && (!f->hex || !*f->hex))
        return bl_fail(err, BL_ERR_INVALID, "%s: the table gives no %s checksum", f->name, bl_fetch_digest_name(f->digest));
    if (f->digest == BL_FETCH_UNPUBLISHED && !(opt && opt->allow_unverified))
        return bl_fail(err, BL_ERR_INVALID, "%s: no checksum is published for this file; fetch it only if you accept "
                       "an unverified file (--allow-unverified; its SHA-256 is printed so you can pin it)", f->name);
    uint64_t limit = f->size ? f->size : f->max_size;
    if (!limit)
        return bl_fail(err, BL_ERR_INVALID, "%s: the table gives neither a size nor a bound", f->name);

    char path[4096], part[4200], url[4096];
    snprintf(path, sizeof path, "%s/%s", dir, f->name);
    snprintf(part, sizeof part, "%s.part", path);
    bl_fetch_file_url(f, opt, url, sizeof url);
    uint64_t have = 0;
    if (file_size(path, &have))
        return check_present(f, path, have, res, err);

    uint64_t offset = 0;
    if (file_size(part, &offset) && offset > limit) {
        unlink(part); /* longer than the file can be: not ours to continue */
        offset = 0;
    }
    if (!curl_ready) {
        /* Not thread-safe in old libcurl; the CLI fetches from one thread. */
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
            return bl_fail(err, BL_ERR_INTERNAL, "libcurl: cannot initialise");
        curl_ready = 1;
    }
    CURL *curl = curl_easy_init();
    if (!curl)
        return bl_fail(err, BL_ERR_NOMEM, "libcurl: cannot create a transfer");
    transfer t = {.f = f, .opt = opt, .curl = curl, .part = part, .offset = offset, .limit = limit, .err = err,
                  .range_start = -1};
    char curl_msg[CURL_ERROR_SIZE] = "";
    char range[48];
    long redirects = opt && opt->max_redirects ? opt->max_redirects : 5;
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, redirects > 0 ? 1L : 0L);
    curl_easy_setopt(curl, CURLOPT_MAXREDIRS, redirects > 0 ? redirects : 0L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, opt && opt->connect_timeout_s > 0 ? opt->connect_timeout_s : 30L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, opt && opt->stall_timeout_s > 0 ? opt->stall_timeout_s : 60L);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "brainlesslab-fetch/" "0.1.0");
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_msg);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    /* Identity encoding: the bytes counted and hashed are the file's own. */
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, NULL);
    if (offset) {
        snprintf(range, sizeof range, "%" PRIu64 "-", offset);
        curl_easy_setopt(curl, CURLOPT_RANGE, range);
    }
    CURLcode rc = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(curl);
    bl_status st = t.st;
    int keep_part = 1;
    if (t.out && fclose(t.out) != 0 && st == BL_OK && rc == CURLE_OK)
        st = bl_fail(err, BL_ERR_IO, "%s: cannot write: %s", part, strerror(errno));
    if (st != BL_OK) {
        keep_part = st != BL_ERR_INVALID; /* more bytes than allowed: the partial file is not to be trusted */
    } else if (status == 416 && offset == limit && f->size) {
        /* The partial file already holds every byte: verify it below. */
        st = digests_start(&t.dg, f, f->size, err);
        if (st == BL_OK)
            st = digests_file(&t.dg, part, offset, err);
        t.started = st == BL_OK;
    } else if (status == 416) {
        st = bl_fail(err, BL_ERR_IO, "%s: the server refuses to continue at byte %" PRIu64 " (HTTP 416); the partial file "
                     "is removed, run again to start afresh", url, offset);
        keep_part = 0;
    } else if (status >= 400) {
        st = bl_fail(err, BL_ERR_IO, "%s: HTTP %ld", url, status);
    } else if (rc == CURLE_TOO_MANY_REDIRECTS) {
        st = bl_fail(err, BL_ERR_IO, "%s: more than %ld redirects", url, redirects);
    } else if (rc == CURLE_OPERATION_TIMEDOUT) {
        st = bl_fail(err, BL_ERR_IO, "%s: stalled or timed out after %" PRIu64 " bytes (%s); run again to resume", url,
                     offset + t.written, curl_msg[0] ? curl_msg : curl_easy_strerror(rc));
    } else if (rc != CURLE_OK) {
        st = bl_fail(err, BL_ERR_IO, "%s: transfer failed after %" PRIu64 " bytes: %s; run again to resume", url,
                     offset + t.written, curl_msg[0] ? curl_msg : curl_easy_strerror(rc));
    } else if (!t.started && status >= 300) {
        st = bl_fail(err, BL_ERR_IO, "%s: HTTP %ld without a file (redirects are followed at most %ld times)", url, status,
                     redirects);
    } else if (!t.started) {
        /* An empty body: the file is empty, or a 206 with nothing more. */
        t.offset = status == 206 ? offset : 0;
        st = digests_start(&t.dg, f, t.offset, err);
        if (st == BL_OK && t.offset)
            st = digests_file(&t.dg, part, t.offset, err);
        if (st == BL_OK && !t.offset) {
            FILE *e = fopen(part, "wb");
            if (!e || fclose(e) != 0)
                st = bl_fail(err, BL_ERR_IO, "%s: cannot create: %s", part, strerror(errno));
        }
        t.started = st == BL_OK;
    }
    uint64_t got_bytes = t.offset + t.written;
    if (st == BL_OK && f->size && got_bytes != f->size) {
        st = bl_fail(err, BL_ERR_IO, "%s: the transfer ended at %" PRIu64 " of %" PRIu64 " bytes; run again to resume", url,
                     got_bytes, f->size);
    } else if (st == BL_OK && t.total && got_bytes != t.total) {
        st = bl_fail(err, BL_ERR_IO, "%s: the transfer ended at %" PRIu64 " of the %" PRIu64 " bytes announced; run again "
                     "to resume", url, got_bytes, t.total);
    }
    if (st == BL_OK) {
        char got[129];
        int ok;
        digests_finish(&t.dg, f, res->sha256, got, &ok);
        if (!ok) {
            unlink(part);
            return bl_fail(err, BL_ERR_INVALID, "%s: checksum mismatch: %s %s, the table says %s (from %s); the download "
                           "is removed", f->name, bl_fetch_digest_name(f->digest), got, f->hex, url);
        }
        if (rename(part, path) != 0)
            return bl_fail(err, BL_ERR_IO, "%s: cannot rename to %s: %s", part, path, strerror(errno));
        res->bytes = got_bytes;
        res->downloaded = t.written;
        res->resumed_from = t.offset;
        return BL_OK;
    }
    digests_free(&t.dg);
    if (!keep_part)
        unlink(part);
    return st;
}
