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

/* The decoded-bytes budget of one open table (table.h, BL_TABLE_EXPANSION):
 * each backend that can expand (Parquet, Arrow) keeps one in its state,
 * initialised at open with the production defaults, and takes from it before
 * every allocation that grows with what the file claims. Direct users of a
 * backend (the tests, the fuzz harnesses) therefore run with exactly the
 * production bound. */
typedef struct bl_table_budget {
    uint64_t file_bytes, ceiling, used;
} bl_table_budget;

void bl_table_budget_init(bl_table_budget *b, uint64_t file_bytes);
/* min(ceiling, BL_TABLE_EXPANSION * file_bytes) */
uint64_t bl_table_budget_limit(const bl_table_budget *b);
uint64_t bl_table_budget_left(const bl_table_budget *b);
/* Take bytes from the budget, or fail (BL_ERR_FORMAT) naming `where` (which
 * begins with the file's path), the bytes asked for, the ratio and the ceiling. */
bl_status bl_table_budget_take(bl_table_budget *b, uint64_t bytes, const char *where, bl_error *err);
/* "N bytes (R decoded bytes per byte of this F-byte file, ceiling C bytes)"
 * into buf: the bound, for backends that phrase their own message. */
const char *bl_table_budget_explain(const bl_table_budget *b, char *buf, size_t cap);

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
    /* The caller's ceiling on decoded bytes (NULL: the backend has no budget). */
    void (*set_ceiling)(void *state, uint64_t bytes);
} bl_table_backend;

extern const bl_table_backend bl_table_csv;     /* table_csv.c */
extern const bl_table_backend bl_table_parquet; /* table_parquet.c */
extern const bl_table_backend bl_table_arrow;   /* table_arrow.c */

#endif
