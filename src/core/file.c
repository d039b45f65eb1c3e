/* bl_open_regular and friends: see file.h for why every input goes through them. */
#include "core/file.h"

#include "brainlesslab/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO (named pipe)";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a regular file";
}

bl_status bl_open_regular(const char *path, int *fd_out, uint64_t *size, bl_error *err)
{
    *fd_out = -1;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return bl_fail(err, BL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return bl_fail(err, BL_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return bl_fail(err, BL_ERR_INVALID, "%s: is %s; only regular files are read", path,
                       kind_of(sb.st_mode));
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        int e = errno;
        close(fd);
        return bl_fail(err, BL_ERR_IO, "%s: cannot set blocking mode: %s", path, strerror(e));
    }
    if (size)
        *size = (uint64_t)sb.st_size;
    *fd_out = fd;
    return BL_OK;
}

int bl_read_full(int fd, void *buf, size_t len)
{
    unsigned char *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len > ((size_t)1 << 30) ? (size_t)1 << 30 : len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) {
            errno = 0;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* ---- the input ledger ---- */
typedef struct ledger_entry {
    char *path;
    char hex[65];
    uint64_t bytes;
    int conflict;
} ledger_entry;

static _Thread_local struct {
    int depth;
    ledger_entry *e;
    size_t n, cap;
} ledger;

void bl_inputs_begin(void) { ledger.depth++; }

void bl_inputs_end(void)
{
    if (ledger.depth <= 0 || --ledger.depth > 0)
        return;
    for (size_t i = 0; i < ledger.n; i++)
        free(ledger.e[i].path);
    free(ledger.e);
    ledger.e = NULL;
    ledger.n = ledger.cap = 0;
}

static void ledger_note(const char *path, const char *hex, uint64_t bytes)
{
    if (ledger.depth <= 0)
        return;
    for (size_t i = 0; i < ledger.n; i++)
        if (!strcmp(ledger.e[i].path, path)) {
            if (strcmp(ledger.e[i].hex, hex) || ledger.e[i].bytes != bytes)
                ledger.e[i].conflict = 1;
            return;
        }
    if (ledger.n == ledger.cap) {
        size_t cap = ledger.cap ? 2 * ledger.cap : 8;
        ledger_entry *e = realloc(ledger.e, cap * sizeof *e);
        if (!e)
            return; /* then bl_inputs_find says "not read", and the importer fails */
        ledger.e = e;
        ledger.cap = cap;
    }
    char *p = strdup(path);
    if (!p)
        return;
    ledger_entry *e = &ledger.e[ledger.n++];
    e->path = p;
    memcpy(e->hex, hex, 65);
    e->bytes = bytes;
    e->conflict = 0;
}

int bl_inputs_find(const char *path, char hex[65], uint64_t *bytes)
{
    for (size_t i = 0; ledger.depth > 0 && i < ledger.n; i++)
        if (!strcmp(ledger.e[i].path, path)) {
            if (ledger.e[i].conflict)
                return -1;
            memcpy(hex, ledger.e[i].hex, 65);
            if (bytes)
                *bytes = ledger.e[i].bytes;
            return 1;
        }
    return 0;
}

/* ---- inputs read once, hashed as read ---- */
bl_status bl_input_open(bl_input *in, const char *path, bl_error *err)
{
    memset(in, 0, sizeof *in);
    in->fd = -1;
    bl_status st = bl_open_regular(path, &in->fd, &in->size, err);
    if (st)
        return st;
    if (!(in->sha = bl_sha256_create()) || !(in->path = strdup(path))) {
        bl_input_close(in);
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
    }
    return BL_OK;
}

long long bl_input_read(bl_input *in, void *buf, size_t cap, bl_error *err)
{
    if (in->ended || in->fd < 0)
        return 0;
    for (;;) {
        ssize_t n = read(in->fd, buf, cap > ((size_t)1 << 30) ? (size_t)1 << 30 : cap);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return bl_fail(err, BL_ERR_IO, "%s: read error at byte %llu: %s", in->path, (unsigned long long)in->done,
                           strerror(errno)), -1;
        if (n == 0) {
            bl_sha256_finish(in->sha, in->hex);
            in->sha = NULL;
            in->ended = 1;
            ledger_note(in->path, in->hex, in->done);
            return 0;
        }
        bl_sha256_update(in->sha, buf, (size_t)n);
        in->done += (uint64_t)n;
        return n;
    }
}

void bl_input_close(bl_input *in)
{
    if (in->fd >= 0)
        close(in->fd);
    if (in->sha) {
        char hex[65];
        bl_sha256_finish(in->sha, hex); /* frees it; an unfinished read is noted nowhere */
    }
    free(in->path);
    memset(in, 0, sizeof *in);
    in->fd = -1;
}

/* Read the whole input into a buffer (size+1 bytes, NUL-terminated), checking
 * it did not grow or shrink since fstat. */
static bl_status input_slurp(bl_input *in, uint64_t max, uint8_t **data, size_t *len, char *hex, bl_error *err)
{
    if (in->size > max)
        return bl_fail(err, BL_ERR_FORMAT, "%s: %llu bytes, larger than the %llu-byte limit", in->path,
                       (unsigned long long)in->size, (unsigned long long)max);
    if (in->size > (uint64_t)SIZE_MAX - 2)
        return bl_fail(err, BL_ERR_NOMEM, "%s: %llu bytes do not fit in memory", in->path,
                       (unsigned long long)in->size);
    /* One byte more than the size: a file that grew since fstat is seen. */
    uint8_t *buf = malloc((size_t)in->size + 2);
    if (!buf)
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate %llu bytes", in->path,
                       (unsigned long long)in->size);
    size_t got = 0;
    long long n;
    while ((n = bl_input_read(in, buf + got, (size_t)in->size + 1 - got, err)) > 0)
        if ((got += (size_t)n) > in->size)
            break;
    if (n < 0) {
        free(buf);
        return BL_ERR_IO;
    }
    if (got != in->size || !in->ended) {
        free(buf);
        return bl_fail(err, BL_ERR_IO, "%s: changed size while being read", in->path);
    }
    if (hex)
        memcpy(hex, in->hex, 65);
    buf[got] = '\0';
    *data = buf;
    *len = got;
    return BL_OK;
}

bl_status bl_read_input(const char *path, uint64_t max, uint8_t **data, size_t *len, char hex[65], bl_error *err)
{
    *data = NULL;
    *len = 0;
    bl_input in;
    bl_status st = bl_input_open(&in, path, err);
    if (!st)
        st = input_slurp(&in, max, data, len, hex, err);
    bl_input_close(&in);
    return st;
}

bl_status bl_read_small(const char *path, size_t max, char **text, size_t *len, bl_error *err)
{
    uint8_t *data;
    bl_status st = bl_read_input(path, max, &data, len, NULL, err);
    *text = (char *)data;
    return st;
}

void *bl_alloc_bulk(size_t bytes)
{
    enum { HUGE = 2u << 20 };
    if (bytes < HUGE)
        return malloc(bytes ? bytes : 1);
    void *p = NULL;
    if (posix_memalign(&p, HUGE, bytes) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    /* Advice only: a kernel without THP, or with it off, says EINVAL and the
     * ordinary pages serve exactly as before. */
    (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}
