/* Shared by the harnesses that need a directory of files (a connectome, a
 * record): one private directory per process, and a tiny container format
 * that cuts one fuzzer input into named files:
 *     repeat { 1 byte: file index; 2 bytes little-endian: length; bytes }
 * so that the fuzzer can grow, shrink and splice each file on its own. */
#ifndef BL_FUZZ_DIR_H
#define BL_FUZZ_DIR_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fuzz_root[64];

static void fuzz_rm_tree(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return;
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char child[1024];
            snprintf(child, sizeof child, "%s/%s", path, e->d_name);
            fuzz_rm_tree(child);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static void fuzz_root_cleanup(void)
{
    if (fuzz_root[0])
        fuzz_rm_tree(fuzz_root);
}

/* The process's private directory (created once). */
static const char *fuzz_dir(void)
{
    if (!fuzz_root[0]) {
        /* Memory-backed when the machine has /dev/shm: every execution
         * writes and removes a directory of files. */
        struct stat sb;
        const char *base = stat("/dev/shm", &sb) == 0 && S_ISDIR(sb.st_mode) ? "/dev/shm" : "/tmp";
        snprintf(fuzz_root, sizeof fuzz_root, "%s/bl_fuzzdir_XXXXXX", base);
        if (!mkdtemp(fuzz_root))
            abort();
        atexit(fuzz_root_cleanup);
    }
    return fuzz_root;
}

typedef struct fuzz_part {
    const uint8_t *data;
    size_t len;
    int present;
} fuzz_part;

/* Cut DATA into at most N parts (a later part with the same index replaces
 * an earlier one). */
static void fuzz_split(const uint8_t *data, size_t size, fuzz_part *parts, int n)
{
    memset(parts, 0, sizeof *parts * (size_t)n);
    size_t at = 0;
    while (at + 3 <= size) {
        int idx = data[at] % n;
        size_t len = (size_t)data[at + 1] | (size_t)data[at + 2] << 8;
        at += 3;
        if (len > size - at)
            len = size - at;
        parts[idx].data = data + at;
        parts[idx].len = len;
        parts[idx].present = 1;
        at += len;
    }
}

static void fuzz_put(const char *dir, const char *name, const void *data, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0)
        abort();
}

#endif
