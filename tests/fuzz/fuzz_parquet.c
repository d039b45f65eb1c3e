/* libFuzzer harness for the Parquet reader (src/io/table_parquet.c and its
 * layers). Beyond "never crash": every failure is one line naming the file,
 * and every batch that reads is well formed (each column has the batch's
 * rows, string offsets rise within the data, validity bytes are 0 or 1, a
 * null's value is zero). Built with the production expansion bound
 * (BL_TABLE_EXPANSION, the backend's default budget; run_fuzz.sh sets no
 * override), so what it explores is the bound that ships: an input of
 * -max_len bytes decodes to at most BL_TABLE_EXPANSION times that.
 * Seeds (tests/fuzz/corpus/parquet): small files from parquet-wasm (every
 * codec, v1/v2 pages, dictionary and delta encodings) and from our writer. */
#include <stdint.h>

#include "brainlesslab/table.h"
#include "fuzz_common.h"
#include "io/table_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_column(const bl_column *c, uint64_t rows)
{
    if (c->n != rows)
        abort();
    for (uint64_t r = 0; r < rows; r++) {
        if (c->valid && c->valid[r] > 1)
            abort();
        int null = c->valid && !c->valid[r];
        if (c->type == BL_COL_STRING) {
            if (c->offsets[r + 1] < c->offsets[r] || (null && c->offsets[r + 1] != c->offsets[r]))
                abort();
        } else if (c->type == BL_COL_DOUBLE) {
            if (null && c->f64[r] != 0)
                abort();
        } else if (null && c->i64[r] != 0) {
            abort();
        } else if (c->type == BL_COL_BOOL && (c->i64[r] < 0 || c->i64[r] > 1)) {
            abort();
        }
    }
    if (c->type == BL_COL_STRING && (c->offsets[0] != 0 || !c->data))
        abort();
}

static void free_schema(bl_table_schema *s)
{
    for (size_t i = 0; i < s->n_columns; i++)
        free(s->names[i]);
    free(s->names);
    free(s->types);
    memset(s, 0, sizeof *s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path(0, ".parquet");
    fuzz_write(path, data, size);
    void *state;
    bl_table_schema schema = {0};
    bl_error err;
    bl_status st = bl_table_parquet.open(path, &state, &schema, &err);
    if (st) {
        fuzz_check_error(&err, st, path);
        return 0;
    }
    size_t n = schema.n_columns < 16 ? schema.n_columns : 16;
    size_t cols[16];
    bl_column out[16];
    memset(out, 0, sizeof out);
    for (size_t i = 0; i < n; i++)
        cols[i] = i;
    uint64_t rows, total = 0;
    /* All columns together; when that fails, each alone (so that one bad
     * column does not hide the others from the fuzzer). */
    for (;;) {
        st = bl_table_parquet.next(state, cols, n, out, &rows, &err);
        if (st) {
            fuzz_check_error(&err, st, path);
            break;
        }
        if (rows == 0)
            break;
        for (size_t i = 0; i < n; i++) {
            check_column(&out[i], rows);
            bl_column_clear(&out[i]);
        }
        total += rows;
        if (total > schema.n_rows)
            abort();
    }
    bl_table_parquet.close(state);
    if (st && n > 1) {
        for (size_t i = 0; i < n; i++) {
            bl_table_schema again = {0};
            if (bl_table_parquet.open(path, &state, &again, &err) != BL_OK)
                abort(); /* opened once, opens again */
            free_schema(&again);
            while ((st = bl_table_parquet.next(state, &cols[i], 1, out, &rows, &err)) == BL_OK && rows) {
                check_column(&out[0], rows);
                bl_column_clear(&out[0]);
            }
            if (st)
                fuzz_check_error(&err, st, path);
            bl_table_parquet.close(state);
        }
    }
    free_schema(&schema);
    return 0;
}
