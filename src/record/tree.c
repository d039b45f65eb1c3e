/* Walking and opening files inside a record without ever following a
 * symlink: a record must not vouch for, or be tricked into reading, anything
 * outside its own directory. Every open goes through openat(..., O_NOFOLLOW)
 * one path component at a time, so a swapped-in symlink anywhere on the way
 * is seen rather than followed. */
#include "record/record_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WALK_MAX_DEPTH 128

bool bl_record_is_control_name(const char *name)
{
    return !strcmp(name, BL_RECORD_MANIFEST) || !strcmp(name, BL_RECORD_CHECKSUMS) ||
           !strcmp(name, BL_RECORD_DONE) || !strcmp(name, BL_RECORD_FAILED) ||
           !strcmp(name, BL_RECORD_RESERVED) || !strcmp(name, BL_RECORD_SIGNATURE) ||
           !strcmp(name, BL_RECORD_BALLAST);
}

const char *bl_record_bad_relpath(const char *path)
{
    if (!*path)
        return "is empty";
    if (path[0] == '/')
        return "is absolute";
    if (strpbrk(path, "\\\n\r"))
        return "contains a backslash or a line break";
    const char *p = path;
    for (;;) {
        size_t n = strcspn(p, "/");
        if (n == 0)
            return "has an empty component";
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return "contains '..'";
        if (n == 1 && p[0] == '.')
            return "has a '.' component";
        if (!p[n])
            return NULL;
        p += n + 1;
    }
}

typedef struct entry_list {
    bl_record_entry *v;
    size_t n, cap;
} entry_list;

static bool push_entry(entry_list *list, const char *prefix, const char *name,
                       bl_entry_kind kind)
{
    if (list->n == list->cap) {
        size_t ncap = list->cap ? list->cap * 2 : 64;
        bl_record_entry *nv = realloc(list->v, ncap * sizeof *nv);
        if (!nv)
            return false;
        list->v = nv;
        list->cap = ncap;
    }
    size_t len = (prefix ? strlen(prefix) + 1 : 0) + strlen(name) + 1;
    char *path = malloc(len);
    if (!path)
        return false;
    if (prefix)
        snprintf(path, len, "%s/%s", prefix, name);
    else
        snprintf(path, len, "%s", name);
    list->v[list->n].path = path;
    list->v[list->n].kind = kind;
    list->n++;
    return true;
}

/* Takes ownership of DFD. PREFIX is the relative path of this directory
 * (NULL at the top of the record). */
static bl_status walk_dir(int dfd, const char *prefix, const char *dir, bool fsync_dirs,
                          int depth, entry_list *list, bl_error *err)
{
    const char *where = prefix ? prefix : ".";
    if (depth > WALK_MAX_DEPTH) {
        close(dfd);
        return bl_fail(err, BL_ERR_INVALID, "%s/%s: directories nested deeper than %d", dir,
                       where, WALK_MAX_DEPTH);
    }
    DIR *d = fdopendir(dfd);
    if (!d) {
        int e = errno;
        close(dfd);
        return bl_fail(err, BL_ERR_IO, "%s/%s: cannot list directory: %s", dir, where,
                       strerror(e));
    }
    bl_status st = BL_OK;
    struct dirent *de;
    errno = 0;
    while (!st && (de = readdir(d)) != NULL) {
        const char *name = de->d_name;
        if (!strcmp(name, ".") || !strcmp(name, ".."))
            continue;
        if (!prefix && bl_record_is_control_name(name))
            continue;
        struct stat sb;
        if (fstatat(dirfd(d), name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
            st = bl_fail(err, BL_ERR_IO, "%s/%s%s%s: cannot stat: %s", dir, prefix ? prefix : "",
                         prefix ? "/" : "", name, strerror(errno));
            break;
        }
        bl_entry_kind kind = S_ISREG(sb.st_mode)   ? BL_ENTRY_FILE
                             : S_ISDIR(sb.st_mode) ? BL_ENTRY_DIR
                             : S_ISLNK(sb.st_mode) ? BL_ENTRY_SYMLINK
                                                   : BL_ENTRY_OTHER;
        if (!push_entry(list, prefix, name, kind)) {
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory listing files", dir);
            break;
        }
        if (kind == BL_ENTRY_DIR) {
            const char *child_path = list->v[list->n - 1].path;
            int cfd = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (cfd < 0)
                st = bl_fail(err, BL_ERR_IO, "%s/%s: cannot open directory: %s", dir, child_path,
                             strerror(errno));
            else
                st = walk_dir(cfd, child_path, dir, fsync_dirs, depth + 1, list, err);
        }
        errno = 0;
    }
    if (!st && errno != 0)
        st = bl_fail(err, BL_ERR_IO, "%s/%s: cannot list directory: %s", dir, where,
                     strerror(errno));
    if (!st && fsync_dirs && fsync(dirfd(d)) != 0 && errno != EINVAL)
        st = bl_fail(err, BL_ERR_IO, "%s/%s: cannot flush directory: %s", dir, where,
                     strerror(errno));
    closedir(d);
    return st;
}

static int compare_entries(const void *a, const void *b)
{
    return strcmp(((const bl_record_entry *)a)->path, ((const bl_record_entry *)b)->path);
}

bl_status bl_record_walk(int rootfd, const char *dir, bool fsync_dirs, bl_record_entry **out,
                         size_t *count, bl_error *err)
{
    *out = NULL;
    *count = 0;
    int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return bl_fail(err, BL_ERR_IO, "%s: cannot open record: %s", dir, strerror(errno));
    entry_list list = {0};
    bl_status st = walk_dir(fd, NULL, dir, fsync_dirs, 0, &list, err);
    if (st) {
        bl_record_free_entries(list.v, list.n);
        return st;
    }
    if (list.n)
        qsort(list.v, list.n, sizeof *list.v, compare_entries);
    *out = list.v;
    *count = list.n;
    return BL_OK;
}

void bl_record_free_entries(bl_record_entry *entries, size_t count)
{
    if (!entries)
        return;
    for (size_t i = 0; i < count; i++)
        free(entries[i].path);
    free(entries);
}

bl_status bl_record_list_dir(const char *path, char ***names, size_t *count, bl_error *err)
{
    *names = NULL;
    *count = 0;
    DIR *d = opendir(path);
    if (!d)
        return bl_fail(err, BL_ERR_IO, "%s: cannot list directory: %s", path, strerror(errno));
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    bl_status st = BL_OK;
    errno = 0;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 32;
            char **nv = realloc(v, ncap * sizeof *nv);
            if (!nv) {
                st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory listing directory", path);
                break;
            }
            v = nv;
            cap = ncap;
        }
        size_t len = strlen(de->d_name) + 1;
        v[n] = malloc(len);
        if (!v[n]) {
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory listing directory", path);
            break;
        }
        memcpy(v[n++], de->d_name, len);
        errno = 0;
    }
    if (!st && errno != 0)
        st = bl_fail(err, BL_ERR_IO, "%s: cannot list directory: %s", path, strerror(errno));
    closedir(d);
    if (st) {
        bl_record_free_names(v, n);
        return st;
    }
    *names = v;
    *count = n;
    return BL_OK;
}

void bl_record_free_names(char **names, size_t count)
{
    if (!names)
        return;
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

/* Why openat failed, looked at without following anything. */
static bl_open_result classify(int dfd, const char *name, bool want_dir)
{
    struct stat sb;
    if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT || errno == ENOTDIR ? BL_OPEN_MISSING : BL_OPEN_IO;
    if (S_ISLNK(sb.st_mode))
        return BL_OPEN_SYMLINK;
    if (want_dir && !S_ISDIR(sb.st_mode))
        return BL_OPEN_MISSING; /* a file where a directory of the path should be */
    if (!want_dir && !S_ISREG(sb.st_mode))
        return BL_OPEN_NOT_FILE;
    return BL_OPEN_IO;
}

bl_open_result bl_record_open_inside(int rootfd, const char *relpath, int *fd_out)
{
    *fd_out = -1;
    size_t len = strlen(relpath) + 1;
    char *copy = malloc(len);
    if (!copy)
        return BL_OPEN_IO;
    memcpy(copy, relpath, len);
    bl_open_result res = BL_OPEN_OK;
    int cur = rootfd;
    char *comp = copy;
    for (;;) {
        char *slash = strchr(comp, '/');
        if (slash)
            *slash = '\0';
        /* O_NONBLOCK: opening a fifo planted in a record must not hang. */
        int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (slash ? O_DIRECTORY : O_NONBLOCK);
        int fd = openat(cur, comp, flags);
        if (fd < 0) {
            res = classify(cur, comp, slash != NULL);
            break;
        }
        if (cur != rootfd)
            close(cur);
        cur = fd;
        if (!slash) {
            struct stat sb;
            if (fstat(fd, &sb) != 0)
                res = BL_OPEN_IO;
            else if (!S_ISREG(sb.st_mode))
                res = BL_OPEN_NOT_FILE;
            else {
                fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
                *fd_out = fd;
                cur = rootfd; /* handed to the caller */
            }
            break;
        }
        comp = slash + 1;
    }
    if (cur != rootfd)
        close(cur);
    free(copy);
    return res;
}

const char *bl_record_open_result_text(bl_open_result result)
{
    switch (result) {
    case BL_OPEN_OK: return "ok";
    case BL_OPEN_MISSING: return "is missing";
    case BL_OPEN_SYMLINK: return "is a symlink or lies under one";
    case BL_OPEN_NOT_FILE: return "is not a regular file";
    case BL_OPEN_IO: return "cannot be opened";
    }
    return "cannot be opened";
}

int bl_record_hash_fd(int fd, char hex[BL_SHA256_HEX_LEN + 1], uint64_t *bytes)
{
    static const size_t chunk = (size_t)1 << 20;
    unsigned char *buf = malloc(chunk);
    bl_sha256 *h = bl_sha256_create();
    if (!buf || !h) {
        free(buf);
        if (h)
            bl_sha256_finish(h, hex);
        return -1;
    }
    uint64_t total = 0;
    int rc = 0;
    for (;;) {
        ssize_t n = read(fd, buf, chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = -1;
            break;
        }
        if (n == 0)
            break;
        bl_sha256_update(h, buf, (size_t)n);
        total += (uint64_t)n;
    }
    bl_sha256_finish(h, hex);
    free(buf);
    if (bytes)
        *bytes = total;
    return rc;
}
