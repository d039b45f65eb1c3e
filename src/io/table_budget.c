/* The decoded-bytes budget shared by the Parquet and Arrow backends: one
 * ratio (BL_TABLE_EXPANSION decoded bytes per file byte) and one caller-set
 * ceiling, so that production and the fuzz harnesses bound memory the same
 * way (docs/formats.md, "Expansion bound"). */
#include <inttypes.h>
#include <stdio.h>

#include "io/table_impl.h"

void bl_table_budget_init(bl_table_budget *b, uint64_t file_bytes)
{
    b->file_bytes = file_bytes;
    b->ceiling = BL_TABLE_DEFAULT_CEILING;
    b->used = 0;
}

uint64_t bl_table_budget_limit(const bl_table_budget *b)
{
    uint64_t ratio = b->file_bytes > UINT64_MAX / BL_TABLE_EXPANSION ? UINT64_MAX
                                                                      : b->file_bytes * BL_TABLE_EXPANSION;
    return ratio < b->ceiling ? ratio : b->ceiling;
}

uint64_t bl_table_budget_left(const bl_table_budget *b)
{
    uint64_t limit = bl_table_budget_limit(b);
    return b->used < limit ? limit - b->used : 0;
}

const char *bl_table_budget_explain(const bl_table_budget *b, char *buf, size_t cap)
{
    snprintf(buf, cap, "%" PRIu64 " bytes (%u decoded bytes per byte of this %" PRIu64 "-byte file, ceiling %" PRIu64
             " bytes)", bl_table_budget_limit(b), BL_TABLE_EXPANSION, b->file_bytes, b->ceiling);
    return buf;
}

bl_status bl_table_budget_take(bl_table_budget *b, uint64_t bytes, const char *where, bl_error *err)
{
    if (bytes > bl_table_budget_left(b)) {
        char bound[160];
        return bl_fail(err, BL_ERR_FORMAT,
                       "%s: decoding needs %" PRIu64 " more bytes after %" PRIu64 ", beyond the %s this file may "
                       "expand to; refused as an expansion bomb",
                       where, bytes, b->used, bl_table_budget_explain(b, bound, sizeof bound));
    }
    b->used += bytes;
    return BL_OK;
}
