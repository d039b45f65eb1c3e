/* Shared fixtures for the cmocka unit tests: a private temporary directory
 * per test group, removed (with the files written into it) afterwards. */
#ifndef BL_TEST_SUPPORT_H
#define BL_TEST_SUPPORT_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Create $TMPDIR/bl_test_<tag>_XXXXXX (or under /tmp) into dir. */
static inline int bl_test_make_tmpdir(char *dir, size_t size, const char *tag)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, size, "%s/bl_test_%s_XXXXXX", base && *base ? base : "/tmp", tag);
    return mkdtemp(dir) ? 0 : -1;
}

/* Remove path and everything below it; symbolic links are removed, never
 * followed (lstat), so a test's link cannot make this delete elsewhere. */
static inline void bl_test_remove_tmpdir(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return;
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        char sub[1024];
        while (d && (e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            bl_test_remove_tmpdir(sub);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* The usual group fixture: `tmpdir` made before the group and removed after
 * it (group_setup, group_teardown for cmocka_run_group_tests), and
 * tmp_path(name) = tmpdir/name (the last 8 results stay valid). */
#define BL_TEST_TMPDIR_GROUP(tag)                                                                  \
    static char tmpdir[512];                                                                       \
    static int group_setup(void **state)                                                           \
    {                                                                                              \
        (void)state;                                                                               \
        return bl_test_make_tmpdir(tmpdir, sizeof tmpdir, tag);                                    \
    }                                                                                              \
    static int group_teardown(void **state)                                                        \
    {                                                                                              \
        (void)state;                                                                               \
        bl_test_remove_tmpdir(tmpdir);                                                             \
        return 0;                                                                                  \
    }                                                                                              \
    static inline const char *tmp_path(const char *name)                                           \
    {                                                                                              \
        static char path[8][1024];                                                                 \
        static int next;                                                                           \
        char *p = path[next++ % 8];                                                                \
        snprintf(p, sizeof path[0], "%s/%s", tmpdir, name);                                        \
        return p;                                                                                  \
    }

#endif
