/* bl_open_regular and friends: see file.h for why every input goes through them. */
#include "core/file.h"

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

bl_status bl_read_small(const char *path, size_t max, char **text, size_t *len, bl_error *err)
{
    *text = NULL;
    *len = 0;
    int fd;
    uint64_t size;
    bl_status st = bl_open_regular(path, &fd, &size, err);
    if (st)
        return st;
    if (size > max) {
        close(fd);
        return bl_fail(err, BL_ERR_FORMAT, "%s: %llu bytes, larger than the %zu-byte limit", path,
                       (unsigned long long)size, max);
    }
    /* One byte more than the size: a file that grew since fstat is seen. */
    char *buf = malloc((size_t)size + 2);
    if (!buf) {
        close(fd);
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate %llu bytes", path,
                       (unsigned long long)size);
    }
    size_t got = 0;
    for (;;) {
        ssize_t n = read(fd, buf + got, (size_t)size + 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return bl_fail(err, BL_ERR_IO, "%s: read error: %s", path, strerror(e));
        }
        if (n == 0 || (got += (size_t)n) > size)
            break;
    }
    close(fd);
    if (got != size) {
        free(buf);
        return bl_fail(err, BL_ERR_IO, "%s: changed size while being read", path);
    }
    buf[got] = '\0';
    *text = buf;
    *len = got;
    return BL_OK;
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
