/* Shared fixtures for the cmocka unit tests: a private temporary directory
 * per test group, removed (with the files written into it) afterwards. */
#ifndef BL_TEST_SUPPORT_H
#define BL_TEST_SUPPORT_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Create $TMPDIR/bl_test_<tag>_XXXXXX (or under /tmp) into dir. */
static inline int bl_test_make_tmpdir(char *dir, size_t size, const char *tag)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, size, "%s/bl_test_%s_XXXXXX", base && *base ? base : "/tmp", tag);
    return mkdtemp(dir) ? 0 : -1;
}

/* Remove the files directly inside dir, then dir itself. */
static inline void bl_test_remove_tmpdir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[1024];
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

#endif
