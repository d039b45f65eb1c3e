/* libFuzzer harness for the Arrow IPC / Feather reader (the table backend
 * alone: src/io/table_arrow.c and arrow_*.c). Beyond "never crash": every
 * failure has a one-line message naming the file, and every batch read has
 * columns of the batch's length with consistent string offsets. */
#include <stdint.h>

#include "fuzz_common.h"
#include "io/table_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_column(const bl_column *c, uint64_t rows)
{
    if (c->n != rows)
        abort();
    if (c->type == BL_COL_STRING) {
        if (!c->offsets || c->offsets[0] != 0)
            abort();
        for (uint64_t r = 0; r < rows; r++)
            if (c->offsets[r + 1] < c->offsets[r])
                abort();
    }
    for (uint64_t r = 0; c->valid && r < rows; r++)
        if (c->valid[r] > 1)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path(0, ".arrow");
    fuzz_write(path, data, size);
    void *state = NULL;
    bl_table_schema schema = {0};
    bl_error err;
    bl_status st = bl_table_arrow.open(path, &state, &schema, &err);
    if (st != BL_OK) {
        fuzz_check_error(&err, st, path);
    } else {
        /* Every readable column, then (a second pass is not possible on one
         * state) nothing more: unreadable columns are asked for one by one. */
        size_t cols[64], n = 0;
        for (size_t i = 0; i < schema.n_columns && n < 64; i++)
            cols[n++] = i;
        bl_column out[64];
        memset(out, 0, sizeof out);
        uint64_t rows = 1;
        for (int batches = 0; rows && batches < 1000; batches++) {
            for (size_t i = 0; i < n; i++)
                bl_column_clear(&out[i]);
            st = bl_table_arrow.next(state, cols, n, out, &rows, &err);
            if (st != BL_OK) {
                fuzz_check_error(&err, st, path);
                break;
            }
            for (size_t i = 0; rows && i < n; i++)
                check_column(&out[i], rows);
        }
        for (size_t i = 0; i < n; i++)
            bl_column_clear(&out[i]);
        bl_table_arrow.close(state);
    }
    for (size_t i = 0; schema.names && i < schema.n_columns; i++)
        free(schema.names[i]);
    free(schema.names);
    free(schema.types);
    return 0;
}
