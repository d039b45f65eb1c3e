/* Placeholder until the Parquet reader lands: refuses every file. */
#include <string.h>

#include "io/table_impl.h"

static int pq_sniff(const unsigned char *head, size_t len) { return len >= 4 && !memcmp(head, "PAR1", 4); }

static bl_status pq_open(const char *path, void **state, bl_table_schema *schema, bl_error *err)
{
    (void)state;
    (void)schema;
    return bl_fail(err, BL_ERR_UNSUPPORTED, "%s: Parquet is not readable in this build yet", path);
}

static bl_status pq_next(void *state, const size_t *cols, size_t n, bl_column *out, uint64_t *rows, bl_error *err)
{
    (void)state, (void)cols, (void)n, (void)out, (void)rows;
    return bl_fail(err, BL_ERR_INTERNAL, "Parquet reader missing");
}

static void pq_close(void *state) { (void)state; }

const bl_table_backend bl_table_parquet = {"parquet", BL_TABLE_PARQUET, pq_sniff, pq_open, pq_next, pq_close};
