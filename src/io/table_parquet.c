/* The Parquet backend of bl_table: the file is read into memory once (hashed
 * as read, core/file.h), its footer parsed
 * once, and each `next` decodes one row group of the selected columns only,
 * touching nothing but their column chunks. Flat columns, required or
 * optional; nested and repeated columns, decimals, INT96 and fixed-length
 * byte arrays are listed but refused when selected.
 *
 * Bounds: every size the file declares is checked against the bytes it can
 * justify before anything is allocated (docs/formats.md, "Parquet"): chunks
 * lie inside the file, pages inside their chunk, an uncompressed size within
 * the codec's ratio or the page's values, and everything decoded within the
 * table budget (BL_TABLE_EXPANSION bytes per byte of the file, and the
 * caller's ceiling; table.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "io/parquet.h"
#include "io/table_impl.h"

static int bl_pq_sniff(const unsigned char *head, size_t len) { return len >= 4 && !memcmp(head, "PAR1", 4); }

static void reader_free(bl_pq_reader *r)
{
    if (!r)
        return;
    free((void *)(uintptr_t)r->map);
    bl_pq_file_meta_free(&r->meta);
    free(r->cols);
    free(r->rg_first_row);
    free(r->page);
    bl_pq_codecs_free(&r->codecs);
    free(r->path);
    free(r);
}

/* What a leaf column reads as, or why it cannot be read. */
static void classify(bl_pq_col *c, const bl_pq_schema_el *e)
{
    c->phys = e->type;
    c->optional = e->repetition == PQ_OPTIONAL;
    c->out = BL_COL_STRING;
    int decimal = e->converted == PQ_CT_DECIMAL || e->logical == PQ_LT_DECIMAL;
    if (e->repetition == PQ_REPEATED) {
        c->refused = "a repeated (list) column is not supported, only flat columns";
        return;
    }
    switch (e->type) {
    case PQ_BOOLEAN: c->out = BL_COL_BOOL; break;
    case PQ_INT32:
    case PQ_INT64:
        c->out = BL_COL_INT64;
        c->is_unsigned = (e->logical == PQ_LT_INTEGER && !e->int_signed) ||
                         (e->converted >= PQ_CT_UINT_8 && e->converted <= PQ_CT_UINT_64);
        break;
    case PQ_FLOAT:
    case PQ_DOUBLE: c->out = BL_COL_DOUBLE; break;
    case PQ_BYTE_ARRAY: c->out = BL_COL_STRING; break;
    case PQ_INT96: c->refused = "INT96 (legacy timestamp) is not supported"; return;
    case PQ_FIXED: c->refused = "FIXED_LEN_BYTE_ARRAY is not supported"; return;
    default: c->refused = "the physical type is missing or unknown"; return;
    }
    if (decimal)
        c->refused = "DECIMAL columns are not supported (their scale would be lost)";
}

/* Top-level fields of the schema tree; a group is one refused column whose
 * leaves are skipped. */
static bl_status build_columns(bl_pq_reader *r, bl_error *err)
{
    const bl_pq_file_meta *m = &r->meta;
    uint32_t k = (uint32_t)m->schema[0].num_children;
    if (k > m->n_schema - 1)
        return bl_fail(err, BL_ERR_FORMAT, "%s: footer schema: the root declares %u fields, %u elements follow",
                       r->path, k, m->n_schema - 1);
    if (k && !(r->cols = calloc(k, sizeof *r->cols)))
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory for %u columns", r->path, k);
    r->n_cols = k;
    uint32_t idx = 1, leaf = 0;
    for (uint32_t f = 0; f < k; f++) {
        if (idx >= m->n_schema)
            return bl_fail(err, BL_ERR_FORMAT, "%s: footer schema: field %u of %u is missing", r->path, f, k);
        const bl_pq_schema_el *e = &m->schema[idx++];
        bl_pq_col *c = &r->cols[f];
        c->name = e->name;
        bl_pq_printable(e->name, c->shown, sizeof c->shown);
        c->leaf = leaf;
        if (e->num_children > 0 || e->type < 0) {
            c->refused = "a nested (group) column is not supported, only flat columns";
            uint64_t need = (uint64_t)e->num_children;
            while (need > 0) {
                if (need > m->n_schema - idx)
                    return bl_fail(err, BL_ERR_FORMAT,
                                   "%s: column '%s': footer schema: the group declares more children than follow",
                                   r->path, c->shown);
                const bl_pq_schema_el *g = &m->schema[idx++];
                need--;
                if (g->num_children > 0)
                    need += (uint64_t)g->num_children;
                else
                    leaf++;
            }
        } else {
            classify(c, e);
            leaf++;
        }
    }
    if (idx != m->n_schema)
        return bl_fail(err, BL_ERR_FORMAT, "%s: footer schema: %u elements after the last field", r->path,
                       m->n_schema - idx);
    r->leaves = leaf;
    return BL_OK;
}

static bl_status bl_pq_open(const char *path, void **state, bl_table_schema *schema, bl_error *err)
{
    bl_pq_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
    }
    /* The file is read once into memory and hashed as read (a mapping would
     * show whatever the file holds when each page is touched): the bytes
     * decoded are the bytes whose digest the input ledger holds. */
    uint8_t *data = NULL;
    size_t size = 0;
    bl_status st = bl_read_input(path, UINT64_MAX, &data, &size, NULL, err);
    if (st)
        goto fail;
    r->map = data;
    r->size = size;
    if (r->size < 12) {
        st = bl_fail(err, BL_ERR_FORMAT, "%s: header: %zu bytes, too short for Parquet (PAR1 + footer need 12)",
                     path, r->size);
        goto fail;
    }
    bl_table_budget_init(&r->budget, r->size);
    const uint8_t *tail = r->map + r->size - 4;
    if (memcmp(r->map, "PAR1", 4) != 0) {
        st = bl_fail(err, BL_ERR_FORMAT, "%s: header at byte 0: no PAR1 magic, not a Parquet file", path);
        goto fail;
    }
    if (memcmp(tail, "PARE", 4) == 0) {
        st = bl_fail(err, BL_ERR_UNSUPPORTED, "%s: footer at byte %zu: encrypted Parquet (PARE) is not supported",
                     path, r->size - 4);
        goto fail;
    }
    if (memcmp(tail, "PAR1", 4) != 0) {
        st = bl_fail(err, BL_ERR_FORMAT, "%s: footer at byte %zu: no PAR1 magic at the end (truncated file?)", path,
                     r->size - 4);
        goto fail;
    }
    uint32_t mlen = bl_pq_le32(r->map + r->size - 8);
    if (mlen > r->size - 12) {
        st = bl_fail(err, BL_ERR_FORMAT, "%s: footer at byte %zu: metadata length %u runs past the file start "
                     "(%zu bytes)", path, r->size - 8, mlen, r->size);
        goto fail;
    }
    r->meta_at = r->size - 8 - mlen;
    bl_pq_why why = {{0}};
    if (bl_pq_parse_file_meta(r->map + r->meta_at, mlen, &r->meta, &why)) {
        st = bl_fail(err, BL_ERR_FORMAT, "%s: footer (metadata at bytes %zu..%zu): %s", path, r->meta_at,
                     r->size - 8, why.text);
        goto fail;
    }
    if ((st = build_columns(r, err)))
        goto fail;
    uint64_t total = 0;
    if (r->meta.n_row_groups && !(r->rg_first_row = malloc(r->meta.n_row_groups * sizeof *r->rg_first_row))) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    for (uint32_t g = 0; g < r->meta.n_row_groups; g++) {
        const bl_pq_row_group *rg = &r->meta.row_groups[g];
        if (rg->n_columns != r->leaves) {
            st = bl_fail(err, BL_ERR_FORMAT, "%s: footer: row group %u has %u column chunks, the schema %u leaf "
                         "columns", path, g, rg->n_columns, r->leaves);
            goto fail;
        }
        r->rg_first_row[g] = total;
        total += (uint64_t)rg->num_rows;
        /* A row read costs at least one decoded byte: rows beyond the
         * whole budget cannot be read, so the file is refused now. */
        if (total > bl_table_budget_limit(&r->budget)) {
            char bound[160];
            st = bl_fail(err, BL_ERR_FORMAT, "%s: footer: row group %u brings the rows to %llu, more than the %s "
                         "the file may decode to", path, g, (unsigned long long)total,
                         bl_table_budget_explain(&r->budget, bound, sizeof bound));
            goto fail;
        }
    }
    if (total != (uint64_t)r->meta.num_rows) {
        st = bl_fail(err, BL_ERR_FORMAT, "%s: footer: the row groups hold %llu rows, the file declares %lld", path,
                     (unsigned long long)total, (long long)r->meta.num_rows);
        goto fail;
    }
    schema->n_columns = r->n_cols;
    schema->n_rows = total;
    schema->names = calloc(r->n_cols ? r->n_cols : 1, sizeof *schema->names);
    schema->types = calloc(r->n_cols ? r->n_cols : 1, sizeof *schema->types);
    if (!schema->names || !schema->types) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        goto fail_schema;
    }
    for (size_t i = 0; i < r->n_cols; i++) {
        schema->types[i] = r->cols[i].out;
        if (!(schema->names[i] = strdup(r->cols[i].name))) {
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
            goto fail_schema;
        }
    }
    *state = r;
    return BL_OK;
fail_schema:
    if (schema->names)
        for (size_t i = 0; i < r->n_cols; i++)
            free(schema->names[i]);
    free(schema->names);
    free(schema->types);
    schema->names = NULL;
    schema->types = NULL;
fail:
    reader_free(r);
    return st;
}

static void bl_pq_close(void *state) { reader_free(state); }

static void bl_pq_set_ceiling(void *state, uint64_t bytes) { ((bl_pq_reader *)state)->budget.ceiling = bytes; }

static bl_status bl_pq_next(void *state, const size_t *cols, size_t n, bl_column *out, uint64_t *rows, bl_error *err)
{
    bl_pq_reader *r = state;
    *rows = 0;
    for (size_t i = 0; i < n; i++)
        if (cols[i] >= r->n_cols)
            return bl_fail(err, BL_ERR_INVALID, "%s: column index %zu out of range (%zu columns)", r->path, cols[i],
                           r->n_cols);
    /* An empty row group is no batch: 0 rows would read as the end. */
    while (r->next_rg < r->meta.n_row_groups && r->meta.row_groups[r->next_rg].num_rows == 0)
        r->next_rg++;
    if (r->next_rg >= r->meta.n_row_groups)
        return BL_OK;
    uint32_t g = r->next_rg;
    for (size_t i = 0; i < n; i++) {
        bl_status st = bl_pq_read_chunk(r, g, &r->cols[cols[i]], &out[i], err);
        if (st) {
            for (size_t j = 0; j < i; j++)
                bl_column_clear(&out[j]);
            return st;
        }
    }
    r->next_rg++;
    *rows = (uint64_t)r->meta.row_groups[g].num_rows;
    return BL_OK;
}

const bl_table_backend bl_table_parquet = {"parquet", BL_TABLE_PARQUET, bl_pq_sniff, bl_pq_open,
                                           bl_pq_next,      bl_pq_close,      bl_pq_set_ceiling};
