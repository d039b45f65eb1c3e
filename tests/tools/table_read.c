/* Read every column of a table, batch by batch, as the importers would.
 *   usage: table_read FILE [COLUMN...]
 * Prints "N rows, C columns" on success; on failure one line on stderr (the
 * reader's message) and exit status 1. For the malformed-input tests. */
#include <stdio.h>
#include <stdlib.h>

#include "brainlesslab/table.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: table_read FILE [COLUMN...]\n");
        return 2;
    }
    bl_table *t;
    bl_error err = {0};
    if (bl_table_open(argv[1], BL_TABLE_AUTO, &t, &err) != BL_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    size_t n = argc > 2 ? (size_t)(argc - 2) : bl_table_n_columns(t);
    size_t *cols = calloc(n ? n : 1, sizeof *cols);
    bl_column *out = calloc(n ? n : 1, sizeof *out);
    bl_status st = BL_OK;
    for (size_t i = 0; i < n && st == BL_OK; i++) {
        if (argc > 2)
            st = bl_table_find(t, argv[2 + i], &cols[i], &err);
        else
            cols[i] = i;
    }
    uint64_t rows = 1, total = 0;
    while (st == BL_OK && rows) {
        st = bl_table_next(t, cols, NULL, n, out, &rows, &err);
        total += rows;
    }
    for (size_t i = 0; i < n; i++)
        bl_column_clear(&out[i]);
    free(out);
    free(cols);
    bl_table_close(t);
    if (st != BL_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    printf("%llu rows, %zu columns\n", (unsigned long long)total, n);
    return 0;
}
