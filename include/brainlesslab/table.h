/* Column tables from the files people bring: CSV (plain, or gzip when the name
 * ends in .gz), Parquet, and Feather v2 / Arrow IPC (file or stream).
 *
 * One small API with one backend per format (src/io/table_<format>.c), as the
 * engines are backends of one stepping interface. A table is opened, its
 * schema read, and then only the columns asked for are read, one batch at a
 * time (a Parquet row group, an Arrow record batch, a block of CSV rows), so
 * memory stays bounded by what the caller keeps, not by the file. Every
 * message names the file and the column, and the row, row group, batch or
 * byte offset at fault. */
#ifndef BRAINLESSLAB_TABLE_H
#define BRAINLESSLAB_TABLE_H

#include "brainlesslab/export.h"
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bl_table_format {
    BL_TABLE_AUTO = 0, /* by magic bytes, then by name (.csv, .csv.gz, .parquet, .feather, .arrow) */
    BL_TABLE_CSV = 1,
    BL_TABLE_PARQUET = 2,
    BL_TABLE_ARROW = 3 /* Feather v2 = Arrow IPC file; an Arrow IPC stream is read too */
} bl_table_format;

/* What a column holds once read. Integers of every width and signedness are
 * widened to int64 (a uint64 value above INT64_MAX is an error naming the
 * row); float is widened to double; bool is 0/1 in i64; strings (utf8,
 * large_utf8, dictionary-encoded strings, CSV fields) are offsets into one
 * byte buffer. */
typedef enum bl_col_type {
    BL_COL_BOOL = 1,
    BL_COL_INT64 = 2,
    BL_COL_DOUBLE = 3,
    BL_COL_STRING = 4
} bl_col_type;

typedef struct bl_column {
    bl_col_type type;
    uint64_t n;       /* rows */
    int64_t *i64;     /* BL_COL_INT64, BL_COL_BOOL: n values */
    double *f64;      /* BL_COL_DOUBLE: n values */
    int64_t *offsets; /* BL_COL_STRING: n + 1 offsets into data */
    char *data;       /* BL_COL_STRING: the bytes (not NUL-terminated), offsets[n] of them */
    uint8_t *valid;   /* NULL: no nulls; else n bytes, 1 = present, 0 = null (value is 0 / "") */
} bl_column;

/* Free a column's arrays and zero it (safe on a zeroed column). */
BL_API void bl_column_clear(bl_column *c);

typedef struct bl_table bl_table;

BL_API bl_status bl_table_open(const char *path, bl_table_format format, bl_table **out, bl_error *err);
BL_API void bl_table_close(bl_table *t);

/* How much memory a Parquet or Arrow file may decode into: at most
 * BL_TABLE_EXPANSION bytes per byte of the file (values, validity, string
 * offsets and bytes, inflated Arrow buffers, all batches of one open table
 * together), and never more than a ceiling the caller sets (bytes; default
 * BL_TABLE_DEFAULT_CEILING). A file asking for more is refused with a message
 * naming both numbers, before the memory is allocated. Legitimate files stay
 * far below the ratio (docs/formats.md, "Expansion bound"); run-length and
 * dictionary encodings and compressed bodies are what a hostile file uses to
 * go above it. The fuzz harnesses build with these same values. */
#define BL_TABLE_EXPANSION 1024u
#define BL_TABLE_DEFAULT_CEILING ((uint64_t)64 << 30)
/* Set the ceiling (0: back to the default). Applies to what is decoded from
 * now on; bytes already decoded count against it. CSV tables ignore it (their
 * bound is the gzip inflation limit and the field limits). */
BL_API void bl_table_set_max_decoded(bl_table *t, uint64_t bytes);

BL_API const char *bl_table_path(const bl_table *t);
BL_API bl_table_format bl_table_format_of(const bl_table *t);
BL_API size_t bl_table_n_columns(const bl_table *t);
BL_API const char *bl_table_column_name(const bl_table *t, size_t i);
/* The type a column reads as (CSV: BL_COL_STRING for every column; convert
 * with the `want` argument of bl_table_next). */
BL_API bl_col_type bl_table_column_type(const bl_table *t, size_t i);
/* Rows in the file when the format says so (Parquet footer, Arrow file
 * footer blocks); UINT64_MAX when unknown until read (CSV, Arrow stream). */
BL_API uint64_t bl_table_n_rows(const bl_table *t);
/* The column called name, or an error naming the file and the column (and
 * the columns the file has). */
BL_API bl_status bl_table_find(const bl_table *t, const char *name, size_t *index, bl_error *err);

/* Read the next batch of the n columns cols[0..n-1] into out[0..n-1]
 * (cleared first). want[i] is the type the caller needs for column i, or 0
 * for the column's own type; a string column converts to INT64/DOUBLE/BOOL
 * by parsing each value (whole decimal integers; finite decimals; true/false/
 * 1/0), a numeric column never converts to string, INT64 converts to DOUBLE
 * only when exact. A value that does not convert is an error naming file,
 * column and row. *rows is the batch's row count; 0 means the end (out left
 * empty). Every out[i] has the same n. */
BL_API bl_status bl_table_next(bl_table *t, const size_t *cols, const bl_col_type *want, size_t n,
                               bl_column *out, uint64_t *rows, bl_error *err);

/* Convenience: read every remaining batch of the columns named names[0..n-1]
 * and concatenate them into out[0..n-1]. */
BL_API bl_status bl_table_read_all(bl_table *t, const char *const *names, const bl_col_type *want, size_t n,
                                   bl_column *out, bl_error *err);

/* Writing Parquet (the spike tables of the Python package, test fixtures):
 * one row group per call of bl_parquet_writer_write; PLAIN encoding for
 * numbers, dictionary encoding for strings; codec "zstd", "snappy" or "none". */
typedef struct bl_parquet_writer bl_parquet_writer;
typedef struct bl_parquet_column_spec {
    const char *name;
    bl_col_type type;  /* BL_COL_INT64, BL_COL_DOUBLE, BL_COL_STRING, BL_COL_BOOL */
    int nullable;
} bl_parquet_column_spec;
BL_API bl_status bl_parquet_writer_create(const char *path, const bl_parquet_column_spec *columns, size_t n,
                                          const char *codec, bl_parquet_writer **out, bl_error *err);
/* A key-value pair of the file's metadata (FileMetaData.key_value_metadata),
 * e.g. the "pandas" schema that pandas and pyarrow read to restore a frame's
 * index and dtypes; written in the footer, in the order set; keys unique. */
BL_API bl_status bl_parquet_writer_set_metadata(bl_parquet_writer *w, const char *key, const char *value,
                                                bl_error *err);
/* columns[i].n must all be equal; types must match the spec. */
BL_API bl_status bl_parquet_writer_write(bl_parquet_writer *w, const bl_column *columns, bl_error *err);
/* Writes the footer and closes the file; destroys w whatever happens. */
BL_API bl_status bl_parquet_writer_finish(bl_parquet_writer *w, bl_error *err);
BL_API void bl_parquet_writer_abort(bl_parquet_writer *w); /* removes the partial file */

#ifdef __cplusplus
}
#endif
#endif
