/* Shared by the libFuzzer harnesses: the readers take paths, so each input is
 * written to a private temporary file first. */
#ifndef BL_FUZZ_COMMON_H
#define BL_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "brainlesslab/error.h"

static char fuzz_paths[2][64];

static void fuzz_cleanup(void)
{
    for (int i = 0; i < 2; i++)
        if (fuzz_paths[i][0])
            unlink(fuzz_paths[i]);
}

/* Temporary file i (0 or 1), created once per process. */
static const char *fuzz_path(int i, const char *suffix)
{
    if (!fuzz_paths[i][0]) {
        snprintf(fuzz_paths[i], sizeof fuzz_paths[i], "/tmp/bl_fuzz_XXXXXX%s", suffix);
        int fd = mkstemps(fuzz_paths[i], (int)strlen(suffix));
        if (fd < 0)
            abort();
        close(fd);
        static int registered;
        if (!registered++)
            atexit(fuzz_cleanup);
    }
    return fuzz_paths[i];
}

static void fuzz_write(const char *path, const unsigned char *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        abort();
}

/* Every failure must leave a status and a one-line message naming the file. */
static void fuzz_check_error(const bl_error *err, bl_status st, const char *path)
{
    if (st == BL_OK || err->status != st || !strstr(err->message, path) ||
        strchr(err->message, '\n')) {
        fprintf(stderr, "bad error report: status %d/%d message \"%s\"\n", (int)st,
                (int)err->status, err->message);
        abort();
    }
}

#endif
