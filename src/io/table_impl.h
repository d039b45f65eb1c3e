/* The backend interface of bl_table (include/brainlesslab/table.h): table.c
 * holds the table of backends and dispatches; each format lives in its own
 * table_<format>.c and knows nothing of the others. */
#ifndef BL_IO_TABLE_IMPL_H
#define BL_IO_TABLE_IMPL_H

#include "brainlesslab/table.h"

typedef struct bl_table_schema {
    size_t n_columns;
    char **names;        /* malloc'd; owned by the bl_table after open */
    bl_col_type *types;  /* malloc'd; owned by the bl_table after open */
    uint64_t n_rows;     /* UINT64_MAX when unknown */
} bl_table_schema;

typedef struct bl_table_backend {
    const char *name;    /* "csv", "parquet", "arrow" */
    bl_table_format format;
    /* Does the file start like this format? (head: the first bytes, len of them) */
    int (*sniff)(const unsigned char *head, size_t len);
    /* Open path, read its schema into *schema. */
    bl_status (*open)(const char *path, void **state, bl_table_schema *schema, bl_error *err);
    /* Next batch of the selected columns in their own types (out zeroed by the
     * caller); *rows = 0 at the end. Conversion to `want` is done by table.c. */
    bl_status (*next)(void *state, const size_t *cols, size_t n, bl_column *out, uint64_t *rows,
                      bl_error *err);
    void (*close)(void *state);
} bl_table_backend;

extern const bl_table_backend bl_table_csv;     /* table_csv.c */
extern const bl_table_backend bl_table_parquet; /* table_parquet.c */
extern const bl_table_backend bl_table_arrow;   /* table_arrow.c */

#endif
