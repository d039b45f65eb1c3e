/* Parquet metadata from its Thrift compact form: FileMetaData (schema, row
 * groups, column chunks) and page headers. Only the fields the reader uses
 * are kept; everything else is skipped by type. Field ids follow
 * parquet-format's parquet.thrift. */
#include <stdlib.h>
#include <string.h>

#include "io/parquet.h"

/* The loop over a struct's fields: `FIELDS(t) { switch (id) ... }`. */
#define FIELD_LOOP(t, id, ft)                                                                      \
    for (int16_t last_ = 0;;)                                                                      \
        if (bl_pq_t_field(t, &last_, &id, &ft))                                                       \
            return -1;                                                                             \
        else if (ft == PQ_T_STOP)                                                                  \
            break;                                                                                 \
        else

static int parse_int_type(bl_pq_thrift *t, bl_pq_schema_el *e)
{
    int16_t id;
    int ft;
    FIELD_LOOP(t, id, ft)
    {
        int32_t v;
        int b;
        if (id == 1) {
            if (bl_pq_t_i32(t, ft, &v))
                return -1;
            e->int_bits = v;
        } else if (id == 2) {
            if (bl_pq_t_bool(t, ft, &b))
                return -1;
            e->int_signed = b;
        } else if (bl_pq_t_skip(t, ft)) {
            return -1;
        }
    }
    return 0;
}

static int parse_logical(bl_pq_thrift *t, bl_pq_schema_el *e)
{
    int16_t id;
    int ft;
    FIELD_LOOP(t, id, ft)
    {
        /* A union: the member's field id is the logical type. */
        e->logical = id;
        if (id == PQ_LT_INTEGER) {
            if (bl_pq_t_struct_begin(t, ft) || parse_int_type(t, e))
                return -1;
            bl_pq_t_struct_end(t);
        } else if (bl_pq_t_skip(t, ft)) {
            return -1;
        }
    }
    return 0;
}

static int parse_schema_el(bl_pq_thrift *t, bl_pq_schema_el *e)
{
    int16_t id;
    int ft;
    e->type = e->repetition = e->converted = -1;
    FIELD_LOOP(t, id, ft)
    {
        const uint8_t *p;
        uint32_t n;
        switch (id) {
        case 1: if (bl_pq_t_i32(t, ft, &e->type)) return -1; break;
        case 3: if (bl_pq_t_i32(t, ft, &e->repetition)) return -1; break;
        case 4:
            if (bl_pq_t_binary(t, ft, &p, &n))
                return -1;
            free(e->name);
            if (!(e->name = malloc((size_t)n + 1)))
                return bl_pq_fail(t->why, "out of memory for a column name");
            memcpy(e->name, p, n);
            e->name[n] = '\0';
            break;
        case 5: if (bl_pq_t_i32(t, ft, &e->num_children)) return -1; break;
        case 6: if (bl_pq_t_i32(t, ft, &e->converted)) return -1; break;
        case 10:
            if (bl_pq_t_struct_begin(t, ft) || parse_logical(t, e))
                return -1;
            bl_pq_t_struct_end(t);
            break;
        default: if (bl_pq_t_skip(t, ft)) return -1;
        }
    }
    if (!e->name)
        return bl_pq_fail(t->why, "schema element without a name at byte %zu", bl_pq_t_offset(t));
    if (e->num_children < 0) {
        char shown[80];
        return bl_pq_fail(t->why, "schema element '%s' has %d children", bl_pq_printable(e->name, shown, sizeof shown),
                       (int)e->num_children);
    }
    return 0;
}

static int parse_col_meta(bl_pq_thrift *t, bl_pq_chunk_meta *c)
{
    int16_t id;
    int ft;
    c->has_meta = 1;
    c->type = c->codec = -1;
    c->num_values = c->total_compressed = c->total_uncompressed = c->data_page_offset = -1;
    FIELD_LOOP(t, id, ft)
    {
        switch (id) {
        case 1: if (bl_pq_t_i32(t, ft, &c->type)) return -1; break;
        case 2: {
            int elem;
            uint32_t n;
            if (bl_pq_t_list(t, ft, &elem, &n))
                return -1;
            for (uint32_t i = 0; i < n; i++) {
                int32_t e;
                if (bl_pq_t_elem_i32(t, elem, &e))
                    return -1;
                if (e >= 0 && e < 32)
                    c->encodings |= 1u << e;
            }
            break;
        }
        case 4: if (bl_pq_t_i32(t, ft, &c->codec)) return -1; break;
        case 5: if (bl_pq_t_i64(t, ft, &c->num_values)) return -1; break;
        case 6: if (bl_pq_t_i64(t, ft, &c->total_uncompressed)) return -1; break;
        case 7: if (bl_pq_t_i64(t, ft, &c->total_compressed)) return -1; break;
        case 9: if (bl_pq_t_i64(t, ft, &c->data_page_offset)) return -1; break;
        case 11:
            if (bl_pq_t_i64(t, ft, &c->dict_page_offset))
                return -1;
            c->has_dict_offset = 1;
            break;
        default: if (bl_pq_t_skip(t, ft)) return -1;
        }
    }
    if (c->type < 0 || c->codec < 0 || c->num_values < 0 || c->total_compressed < 0 || c->data_page_offset < 0)
        return bl_pq_fail(t->why, "column metadata lacks a type, codec, value count, size or data page offset "
                               "(or has a negative one) before byte %zu", bl_pq_t_offset(t));
    return 0;
}

static int parse_chunk(bl_pq_thrift *t, bl_pq_chunk_meta *c)
{
    int16_t id;
    int ft;
    FIELD_LOOP(t, id, ft)
    {
        if (id == 1) {
            c->has_file_path = 1;
            if (bl_pq_t_skip(t, ft))
                return -1;
        } else if (id == 3) {
            if (bl_pq_t_struct_begin(t, ft) || parse_col_meta(t, c))
                return -1;
            bl_pq_t_struct_end(t);
        } else if (bl_pq_t_skip(t, ft)) {
            return -1;
        }
    }
    return 0;
}

static int parse_row_group(bl_pq_thrift *t, bl_pq_row_group *g)
{
    int16_t id;
    int ft;
    int have_rows = 0;
    FIELD_LOOP(t, id, ft)
    {
        if (id == 1) {
            int elem;
            uint32_t n;
            if (g->columns)
                return bl_pq_fail(t->why, "row group lists its columns twice");
            if (bl_pq_t_list(t, ft, &elem, &n))
                return -1;
            if (n && !(g->columns = calloc(n, sizeof *g->columns)))
                return bl_pq_fail(t->why, "out of memory for %u column chunks", n);
            g->n_columns = n;
            for (uint32_t i = 0; i < n; i++) {
                if (bl_pq_t_struct_begin(t, elem) || parse_chunk(t, &g->columns[i]))
                    return -1;
                bl_pq_t_struct_end(t);
            }
        } else if (id == 3) {
            if (bl_pq_t_i64(t, ft, &g->num_rows))
                return -1;
            have_rows = 1;
        } else if (bl_pq_t_skip(t, ft)) {
            return -1;
        }
    }
    if (!have_rows || g->num_rows < 0)
        return bl_pq_fail(t->why, "row group without a row count (or a negative one) before byte %zu",
                          bl_pq_t_offset(t));
    return 0;
}

int bl_pq_parse_file_meta(const uint8_t *p, size_t n, bl_pq_file_meta *m, bl_pq_why *why)
{
    bl_pq_thrift t;
    bl_pq_t_init(&t, p, n, why);
    memset(m, 0, sizeof *m);
    m->num_rows = -1;
    int16_t id;
    int ft;
    int have_schema = 0;
    for (int16_t last = 0;;) {
        if (bl_pq_t_field(&t, &last, &id, &ft))
            return -1;
        if (ft == PQ_T_STOP)
            break;
        int elem;
        uint32_t k;
        if (id == 2) {
            if (have_schema++)
                return bl_pq_fail(why, "file metadata lists its schema twice");
            if (bl_pq_t_list(&t, ft, &elem, &k))
                return -1;
            if (k && !(m->schema = calloc(k, sizeof *m->schema)))
                return bl_pq_fail(why, "out of memory for %u schema elements", k);
            m->n_schema = k;
            for (uint32_t i = 0; i < k; i++) {
                if (bl_pq_t_struct_begin(&t, elem) || parse_schema_el(&t, &m->schema[i])) {
                    char inner[sizeof why->text];
                    memcpy(inner, why->text, sizeof inner);
                    return bl_pq_fail(why, "schema element %u: %s", i, inner);
                }
                bl_pq_t_struct_end(&t);
            }
        } else if (id == 3) {
            if (bl_pq_t_i64(&t, ft, &m->num_rows))
                return -1;
        } else if (id == 4) {
            if (m->row_groups)
                return bl_pq_fail(why, "file metadata lists its row groups twice");
            if (bl_pq_t_list(&t, ft, &elem, &k))
                return -1;
            if (k && !(m->row_groups = calloc(k, sizeof *m->row_groups)))
                return bl_pq_fail(why, "out of memory for %u row groups", k);
            m->n_row_groups = k;
            for (uint32_t i = 0; i < k; i++) {
                if (bl_pq_t_struct_begin(&t, elem) || parse_row_group(&t, &m->row_groups[i])) {
                    char inner[sizeof why->text];
                    memcpy(inner, why->text, sizeof inner);
                    return bl_pq_fail(why, "row group %u: %s", i, inner);
                }
                bl_pq_t_struct_end(&t);
            }
        } else if (bl_pq_t_skip(&t, ft)) {
            return -1;
        }
    }
    if (!have_schema || m->n_schema == 0)
        return bl_pq_fail(why, "file metadata has no schema");
    if (m->num_rows < 0)
        return bl_pq_fail(why, "file metadata has no row count (or a negative one)");
    return 0;
}

void bl_pq_file_meta_free(bl_pq_file_meta *m)
{
    for (uint32_t i = 0; i < m->n_schema; i++)
        free(m->schema[i].name);
    free(m->schema);
    for (uint32_t i = 0; i < m->n_row_groups; i++)
        free(m->row_groups[i].columns);
    free(m->row_groups);
    memset(m, 0, sizeof *m);
}

static int parse_data_header(bl_pq_thrift *t, bl_pq_page_header *h)
{
    int16_t id;
    int ft;
    h->has_data = 1;
    FIELD_LOOP(t, id, ft)
    {
        switch (id) {
        case 1: if (bl_pq_t_i32(t, ft, &h->num_values)) return -1; break;
        case 2: if (bl_pq_t_i32(t, ft, &h->encoding)) return -1; break;
        case 3: if (bl_pq_t_i32(t, ft, &h->def_encoding)) return -1; break;
        case 4: if (bl_pq_t_i32(t, ft, &h->rep_encoding)) return -1; break;
        default: if (bl_pq_t_skip(t, ft)) return -1;
        }
    }
    return 0;
}

static int parse_dict_header(bl_pq_thrift *t, bl_pq_page_header *h)
{
    int16_t id;
    int ft;
    h->has_dict = 1;
    FIELD_LOOP(t, id, ft)
    {
        switch (id) {
        case 1: if (bl_pq_t_i32(t, ft, &h->num_values)) return -1; break;
        case 2: if (bl_pq_t_i32(t, ft, &h->encoding)) return -1; break;
        default: if (bl_pq_t_skip(t, ft)) return -1;
        }
    }
    return 0;
}

static int parse_v2_header(bl_pq_thrift *t, bl_pq_page_header *h)
{
    int16_t id;
    int ft;
    h->has_v2 = 1;
    h->is_compressed = 1; /* the Thrift default */
    FIELD_LOOP(t, id, ft)
    {
        switch (id) {
        case 1: if (bl_pq_t_i32(t, ft, &h->num_values)) return -1; break;
        case 2: if (bl_pq_t_i32(t, ft, &h->num_nulls)) return -1; break;
        case 3: if (bl_pq_t_i32(t, ft, &h->num_rows)) return -1; break;
        case 4: if (bl_pq_t_i32(t, ft, &h->encoding)) return -1; break;
        case 5: if (bl_pq_t_i32(t, ft, &h->def_len)) return -1; break;
        case 6: if (bl_pq_t_i32(t, ft, &h->rep_len)) return -1; break;
        case 7: if (bl_pq_t_bool(t, ft, &h->is_compressed)) return -1; break;
        default: if (bl_pq_t_skip(t, ft)) return -1;
        }
    }
    return 0;
}

int bl_pq_parse_page_header(const uint8_t *p, size_t n, bl_pq_page_header *h, size_t *used, bl_pq_why *why)
{
    bl_pq_thrift t;
    bl_pq_t_init(&t, p, n, why);
    memset(h, 0, sizeof *h);
    h->type = h->uncompressed = h->compressed = -1;
    int16_t id;
    int ft;
    bl_pq_thrift *tp = &t;
    FIELD_LOOP(tp, id, ft)
    {
        int r = 0;
        switch (id) {
        case 1: r = bl_pq_t_i32(tp, ft, &h->type); break;
        case 2: r = bl_pq_t_i32(tp, ft, &h->uncompressed); break;
        case 3: r = bl_pq_t_i32(tp, ft, &h->compressed); break;
        case 5: r = bl_pq_t_struct_begin(tp, ft) || parse_data_header(tp, h); bl_pq_t_struct_end(tp); break;
        case 7: r = bl_pq_t_struct_begin(tp, ft) || parse_dict_header(tp, h); bl_pq_t_struct_end(tp); break;
        case 8: r = bl_pq_t_struct_begin(tp, ft) || parse_v2_header(tp, h); bl_pq_t_struct_end(tp); break;
        default: r = bl_pq_t_skip(tp, ft);
        }
        if (r)
            return -1;
    }
    if (h->type < 0 || h->uncompressed < 0 || h->compressed < 0)
        return bl_pq_fail(why, "page header lacks a type or a size, or has a negative size");
    if (h->num_values < 0 || h->num_nulls < 0 || h->num_rows < 0 || h->def_len < 0 || h->rep_len < 0)
        return bl_pq_fail(why, "page header has a negative count or length");
    *used = bl_pq_t_offset(&t);
    return 0;
}
