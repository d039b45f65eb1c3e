/* libFuzzer harness for the CSV reader. Beyond "never crash": failures come
 * with a proper message, line numbers never go backwards, and every table that
 * reads cleanly is written back with bl_csv_write_field and reads back the same. */
#include <stdint.h>

#include "brainlesslab/csv.h"
#include "fuzz_common.h"

#define MAX_ROWS 4096
#define MAX_CELLS 65536

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void probe_fields(bl_csv *c)
{
    bl_error err;
    size_t n = bl_csv_nfields(c);
    for (size_t i = 0; i <= n && i < 8; i++) {
        int64_t v;
        double d;
        bl_status st = bl_csv_field_i64(c, i, -1000, 1000, &v, &err);
        if (st)
            fuzz_check_error(&err, st, bl_csv_path(c));
        else if (v < -1000 || v > 1000)
            abort();
        st = bl_csv_field_f64(c, i, &d, &err);
        if (st)
            fuzz_check_error(&err, st, bl_csv_path(c));
    }
    size_t index;
    bl_status st = bl_csv_column(c, "a", &index, &err);
    if (st)
        fuzz_check_error(&err, st, bl_csv_path(c));
    else if (index >= n || strcmp(bl_csv_field(c, index), "a") != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path(0, ".csv");
    fuzz_write(path, data, size);
    bl_csv *c;
    bl_error err;
    if (bl_csv_open(path, &c, &err) != BL_OK)
        abort();

    /* Keep the rows (up to a bound) for the write-back check. */
    static char *cells[MAX_CELLS];
    static size_t row_len[MAX_ROWS];
    size_t rows = 0, ncells = 0;
    int complete = 1;
    uint64_t last_line = 0;
    int r;
    while ((r = bl_csv_next(c, &err)) == 1) {
        uint64_t line = bl_csv_line(c);
        if (line < 1 || line <= last_line || bl_csv_nfields(c) == 0)
            abort();
        last_line = line;
        probe_fields(c);
        size_t n = bl_csv_nfields(c);
        /* One empty field is written as a blank line, which reads as no row. */
        int single_empty = n == 1 && bl_csv_field(c, 0)[0] == '\0';
        if (rows < MAX_ROWS && ncells + n <= MAX_CELLS && !single_empty) {
            row_len[rows++] = n;
            for (size_t i = 0; i < n; i++)
                if (!(cells[ncells++] = strdup(bl_csv_field(c, i))))
                    abort();
        } else {
            complete = 0;
        }
    }
    if (r < 0)
        fuzz_check_error(&err, err.status, path);
    bl_csv_close(c);

    /* A plain file that starts with the gzip magic is read as gzip (zlib
     * decides by those two bytes), so such a table cannot be written back plain. */
    int gzip_magic = rows > 0 && cells[0][0] == '\x1f' && cells[0][1] == '\x8b';
    if (r == 0 && complete && !gzip_magic) {
        const char *copy = fuzz_path(1, ".csv");
        FILE *f = fopen(copy, "wb");
        if (!f)
            abort();
        for (size_t k = 0, at = 0; k < rows; at += row_len[k], k++)
            for (size_t i = 0; i < row_len[k]; i++)
                if (bl_csv_write_field(f, cells[at + i], i + 1 == row_len[k]) != 0)
                    abort();
        if (fclose(f) != 0 || bl_csv_open(copy, &c, &err) != BL_OK)
            abort();
        for (size_t k = 0, at = 0; k < rows; at += row_len[k], k++) {
            if (bl_csv_next(c, &err) != 1 || bl_csv_nfields(c) != row_len[k]) {
                fprintf(stderr, "write-back: row %zu: %s\n", k, err.message);
                abort();
            }
            for (size_t i = 0; i < row_len[k]; i++)
                if (strcmp(bl_csv_field(c, i), cells[at + i]) != 0) {
                    fprintf(stderr, "write-back: row %zu field %zu: [%s] != [%s]\n", k, i,
                            bl_csv_field(c, i), cells[at + i]);
                    abort();
                }
        }
        if (bl_csv_next(c, &err) != 0)
            abort();
        bl_csv_close(c);
    }
    for (size_t i = 0; i < ncells; i++)
        free(cells[i]);
    return 0;
}
