/* The whole of a small test file in memory, for the oracle tools
 * (tests/tools/table_oracle.c, tests/parquet/parquet_oracle.c). */
#ifndef BL_TESTS_TOOLS_SLURP_H
#define BL_TESTS_TOOLS_SLURP_H

#include <stdio.h>
#include <stdlib.h>

/* path's bytes plus a terminating NUL (malloc'd), their count in *n when n is
 * not NULL; NULL when the file cannot be read. */
static char *bl_test_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)len + 1);
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) {
        b[len] = '\0';
        if (n)
            *n = (size_t)len;
    }
    return b;
}

#endif
