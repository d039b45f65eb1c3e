/* CSV tables, read through libcsv (quoting per RFC 4180) and zlib (a file
 * named *.gz is decompressed, with its inflation bounded; any other file is
 * read as is). Rows are pulled one at a time so that large edge lists stream.
 * Messages name path:line. Only regular files are opened. */
#ifndef BRAINLESSLAB_CSV_H
#define BRAINLESSLAB_CSV_H

#include "brainlesslab/export.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bl_csv bl_csv;

BL_API bl_status bl_csv_open(const char *path, bl_csv **out, bl_error *err);
/* A table already in memory (DATA, LEN bytes, not copied: it must outlive the
 * reader), never decompressed; NAME is used in messages. Loaders that hash
 * the bytes they read parse that very buffer. */
BL_API bl_status bl_csv_open_memory(const char *name, const void *data, size_t len, bl_csv **out,
                                    bl_error *err);
BL_API void bl_csv_close(bl_csv *csv);

/* Read the next row: returns 1 when a row was read, 0 at end of file, -1 on
 * error (err filled). Blank lines are skipped. */
BL_API int bl_csv_next(bl_csv *csv, bl_error *err);

BL_API size_t bl_csv_nfields(const bl_csv *csv);
BL_API const char *bl_csv_field(const bl_csv *csv, size_t i); /* "" when i is out of range */
BL_API uint64_t bl_csv_line(const bl_csv *csv);               /* 1-based line of the current row */
BL_API const char *bl_csv_path(const bl_csv *csv);

/* After reading the header row: the column called name, or an error naming the
 * file and the missing column. */
BL_API bl_status bl_csv_column(const bl_csv *csv, const char *name, size_t *index, bl_error *err);
/* Require exactly n fields in the current row. */
BL_API bl_status bl_csv_expect_fields(const bl_csv *csv, size_t n, bl_error *err);

/* Parse field i of the current row as a whole decimal integer in [min, max];
 * the message names path:line, the column number and the text. */
BL_API bl_status bl_csv_field_i64(const bl_csv *csv, size_t i, int64_t min, int64_t max, int64_t *out,
                                  bl_error *err);
BL_API bl_status bl_csv_field_f64(const bl_csv *csv, size_t i, double *out, bl_error *err);

/* Writing: one field at a time, quoted only when needed (libcsv's csv_fwrite). */
BL_API int bl_csv_write_field(FILE *f, const char *text, int last_in_row);

#ifdef __cplusplus
}
#endif
#endif
