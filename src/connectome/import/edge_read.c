/* Reading an edge table (edge_read.h): batch by batch, ids to indices,
 * weights checked, per-row signs or transmitters folded onto the
 * presynaptic neuron (rows that disagree are an error naming both rows). */
#include "connectome/import/edge_read.h"

#include <stdlib.h>
#include <string.h>

void bl_edge_read_free(bl_edge_read *r)
{
    for (uint64_t i = 0; r->nt && i < r->cap; i++)
        free(r->nt[i]);
    free(r->nt);
    free(r->sign);
    free(r->row);
    memset(r, 0, sizeof *r);
}

/* Per-neuron arrays follow the ids as they grow. */
static bl_status fit(bl_edge_read *r, uint64_t n, bl_error *err)
{
    if (n <= r->cap)
        return BL_OK;
    uint64_t cap = r->cap ? r->cap : 1024;
    while (cap < n)
        cap *= 2;
    char **nt = realloc(r->nt, (size_t)cap * sizeof *nt);
    if (nt)
        r->nt = nt;
    int8_t *sign = nt ? realloc(r->sign, (size_t)cap) : NULL;
    if (sign)
        r->sign = sign;
    uint64_t *row = sign ? realloc(r->row, (size_t)cap * sizeof *row) : NULL;
    if (!row)
        return bl_fail(err, BL_ERR_NOMEM, "out of memory");
    r->row = row;
    memset(r->nt + r->cap, 0, (size_t)(cap - r->cap) * sizeof *nt);
    memset(r->sign + r->cap, 0, (size_t)(cap - r->cap));
    memset(r->row + r->cap, 0, (size_t)(cap - r->cap) * sizeof *row);
    r->cap = cap;
    return BL_OK;
}

/* The index of an id cell (int or string column); -1 when unknown and not added. */
static bl_status id_of(const bl_edge_source *s, bl_ids *ids, const bl_column *c, uint64_t r, uint64_t row,
                       const char *col, int32_t *out, bl_error *err)
{
    if (c->valid && !c->valid[r])
        return bl_fail(err, BL_ERR_FORMAT, "%s: column %s, row %llu: empty id", s->path, col, (unsigned long long)row);
    int added;
    if (c->type == BL_COL_INT64) {
        if (s->add_unknown)
            return bl_ids_add_int(ids, c->i64[r], out, &added, err);
        *out = bl_ids_find_int(ids, c->i64[r]);
        return BL_OK;
    }
    const char *t = c->data + c->offsets[r];
    size_t len = (size_t)(c->offsets[r + 1] - c->offsets[r]);
    if (s->add_unknown)
        return bl_ids_add(ids, t, len, out, &added, err);
    *out = bl_ids_find(ids, t, len);
    return BL_OK;
}

bl_status bl_edge_read_table(const bl_edge_source *s, bl_ids *ids, bl_edge_list *edges, bl_edge_read *r,
                             bl_error *err)
{
    bl_table *t = NULL;
    bl_status st = bl_table_open(s->path, BL_TABLE_AUTO, &t, err);
    if (st != BL_OK)
        return st;
    const char *names[4] = {s->pre, s->post, s->weight, s->sign ? s->sign : s->nt};
    size_t n = names[3] ? 4 : 3, cols[4];
    for (size_t i = 0; st == BL_OK && i < n; i++)
        st = bl_table_find(t, names[i], &cols[i], err);
    /* Ids keep their own type (integers are looked up without text); a
     * string id column is matched as text. */
    bl_col_type want[4] = {0, 0, BL_COL_INT64, s->sign ? BL_COL_INT64 : BL_COL_STRING};
    for (int k = 0; k < 2 && st == BL_OK; k++) {
        bl_col_type ty = bl_table_column_type(t, cols[k]);
        want[k] = ty == BL_COL_INT64 || ty == BL_COL_STRING ? ty : BL_COL_STRING;
        if (ty == BL_COL_DOUBLE || ty == BL_COL_BOOL)
            st = bl_fail(err, BL_ERR_FORMAT, "%s: id column %s holds %s values, not integers or text", s->path,
                         names[k], ty == BL_COL_DOUBLE ? "floating-point" : "bool");
    }
    bl_column c[4] = {{0}};
    uint64_t rows = 1, base = 0;
    while (st == BL_OK && rows) {
        st = bl_table_next(t, cols, want, n, c, &rows, err);
        for (uint64_t k = 0; st == BL_OK && k < rows; k++) {
            uint64_t row = base + k + 1;
            int32_t pre = -1, post = -1;
            if ((st = id_of(s, ids, &c[0], k, row, s->pre, &pre, err)) != BL_OK ||
                (st = id_of(s, ids, &c[1], k, row, s->post, &post, err)) != BL_OK ||
                (st = fit(r, ids->n, err)) != BL_OK)
                break;
            if (c[2].valid && !c[2].valid[k]) {
                st = bl_fail(err, BL_ERR_FORMAT, "%s: column %s, row %llu: empty weight", s->path, s->weight,
                             (unsigned long long)row);
                break;
            }
            int64_t w = c[2].i64[k];
            if (w < 0 || w > INT32_MAX) {
                st = bl_fail(err, BL_ERR_INVALID, "%s: column %s, row %llu: synapse count %lld is outside 0..%d",
                             s->path, s->weight, (unsigned long long)row, (long long)w, INT32_MAX);
                break;
            }
            if (pre < 0 || post < 0) {
                if (!s->drop_unknown) {
                    const bl_column *bad = pre < 0 ? &c[0] : &c[1];
                    char *txt = bl_import_cell(bad, k);
                    char shown[96];
                    bl_import_printable(shown, sizeof shown, txt ? txt : "");
                    free(txt);
                    st = bl_fail(err, BL_ERR_INVALID, "%s: column %s, row %llu: unknown neuron id %s%s%s", s->path,
                                 pre < 0 ? s->pre : s->post, (unsigned long long)row, shown,
                                 s->neurons_path ? " (not in " : "", s->neurons_path ? s->neurons_path : "");
                    if (s->neurons_path)
                        strncat(err->message, ")", sizeof err->message - strlen(err->message) - 1);
                    break;
                }
                r->dropped_rows++;
                r->dropped_synapses += (uint64_t)w;
                continue;
            }
            if (w == 0) {
                r->zero_rows++;
                continue;
            }
            if (s->sign) {
                if (c[3].valid && !c[3].valid[k]) {
                    st = bl_fail(err, BL_ERR_FORMAT, "%s: column %s, row %llu: empty sign", s->path, s->sign,
                                 (unsigned long long)row);
                    break;
                }
                int64_t sg = c[3].i64[k];
                if (sg != 1 && sg != -1) {
                    st = bl_fail(err, BL_ERR_INVALID, "%s: column %s, row %llu: sign %lld is not +1 or -1", s->path,
                                 s->sign, (unsigned long long)row, (long long)sg);
                    break;
                }
                if (r->sign[pre] && r->sign[pre] != sg) {
                    st = bl_fail(err, BL_ERR_INVALID,
                                 "%s: column %s, row %llu: neuron %s has sign %+lld here but %+d at row %llu", s->path,
                                 s->sign, (unsigned long long)row, ids->text[pre], (long long)sg, r->sign[pre],
                                 (unsigned long long)r->row[pre]);
                    break;
                }
                if (!r->sign[pre]) {
                    r->sign[pre] = (int8_t)sg;
                    r->row[pre] = row;
                }
            } else if (s->nt) {
                const char *txt = c[3].data + c[3].offsets[k];
                size_t len = (c[3].valid && !c[3].valid[k]) ? 0 : (size_t)(c[3].offsets[k + 1] - c[3].offsets[k]);
                if (!r->row[pre]) {
                    if (!(r->nt[pre] = malloc(len + 1))) {
                        st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
                        break;
                    }
                    memcpy(r->nt[pre], txt, len);
                    r->nt[pre][len] = '\0';
                    r->row[pre] = row;
                } else if (strlen(r->nt[pre]) != len || memcmp(r->nt[pre], txt, len)) {
                    char shown[96];
                    bl_import_printable(shown, sizeof shown, r->nt[pre]);
                    st = bl_fail(err, BL_ERR_INVALID,
                                 "%s: column %s, row %llu: neuron %s has transmitter '%.*s' here but '%s' at row %llu",
                                 s->path, s->nt, (unsigned long long)row, ids->text[pre], (int)(len < 60 ? len : 60), txt,
                                 shown, (unsigned long long)r->row[pre]);
                    break;
                }
            }
            st = bl_edge_list_push(edges, pre, post, (int32_t)w, row, err);
        }
        base += rows;
    }
    for (size_t i = 0; i < 4; i++)
        bl_column_clear(&c[i]);
    r->rows = base;
    bl_table_close(t);
    if (st == BL_OK)
        st = fit(r, ids->n, err);
    return st;
}

bl_status bl_neuron_table_read(const char *path, const char *id_col, bl_ids *ids, bl_meta *meta,
                               const char *const *skip, size_t n_skip, bl_error *err)
{
    bl_table *t = NULL;
    bl_status st = bl_table_open(path, BL_TABLE_AUTO, &t, err);
    if (st != BL_OK)
        return st;
    size_t nc = bl_table_n_columns(t), idc = 0;
    if (id_col)
        st = bl_table_find(t, id_col, &idc, err);
    else if (nc == 0)
        st = bl_fail(err, BL_ERR_FORMAT, "%s: no columns", path);
    bl_column *c = calloc(nc ? nc : 1, sizeof *c);
    const char **names = calloc(nc ? nc : 1, sizeof *names);
    if (st == BL_OK && (!c || !names))
        st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
    /* Columns of a type we cannot read (lists, timestamps...) are left out. */
    size_t m = 0, id_at = 0;
    for (size_t i = 0; st == BL_OK && i < nc; i++) {
        if (i == idc)
            id_at = m;
        if (i == idc || bl_table_column_type(t, i))
            names[m++] = bl_table_column_name(t, i);
    }
    nc = m;
    idc = id_at;
    if (st == BL_OK)
        st = bl_table_read_all(t, names, NULL, nc, c, err);
    uint64_t n = st == BL_OK ? c[idc].n : 0;
    if (st == BL_OK && n > BL_MAX_NEURONS)
        st = bl_fail(err, BL_ERR_INVALID, "%s: %llu neurons is too many", path, (unsigned long long)n);
    if (st == BL_OK && c[idc].type != BL_COL_INT64 && c[idc].type != BL_COL_STRING)
        st = bl_fail(err, BL_ERR_FORMAT, "%s: id column %s holds neither integers nor text", path, names[idc]);
    for (uint64_t r = 0; st == BL_OK && r < n; r++) {
        char *txt = bl_import_cell(&c[idc], r);
        int32_t j;
        int added = 0;
        if (!txt) {
            st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
            break;
        }
        if (!txt[0])
            st = bl_fail(err, BL_ERR_FORMAT, "%s: column %s, row %llu: empty id", path, names[idc],
                         (unsigned long long)r + 1);
        else if ((st = bl_ids_add(ids, txt, strlen(txt), &j, &added, err)) == BL_OK && !added)
            st = bl_fail(err, BL_ERR_INVALID, "%s: column %s, row %llu: id %s given twice (first at row %llu)", path,
                         names[idc], (unsigned long long)r + 1, txt, (unsigned long long)j + 1);
        free(txt);
    }
    /* Every other column becomes metadata, its name made [a-z0-9_]; names
     * the connectome reserves get a "source_" prefix. */
    if (st == BL_OK)
        st = bl_meta_init(meta, n, err);
    for (size_t k = 0; st == BL_OK && k < nc; k++) {
        int skipped = k == idc;
        for (size_t s = 0; s < n_skip; s++)
            skipped |= !strcmp(names[k], skip[s]);
        if (skipped || !c[k].type)
            continue;
        char name[128], base[100];
        bl_import_column_name(names[k], base, sizeof base);
        if (!strcmp(base, "index") || !strcmp(base, "external_id") || !strcmp(base, "sign"))
            snprintf(name, sizeof name, "source_%s", base);
        else
            snprintf(name, sizeof name, "%s", base);
        for (size_t q = 0, bump = 2; q < meta->n_columns; q++)
            if (!strcmp(meta->names[q], name)) {
                snprintf(name, sizeof name, "%s_%zu", base, bump++);
                q = (size_t)-1;
            }
        char **v = calloc((size_t)(n ? n : 1), sizeof *v);
        for (uint64_t r = 0; v && r < n; r++) {
            v[r] = bl_import_cell(&c[k], r);
            for (char *p = v[r]; p && *p; p++)
                if (*p == '\n' || *p == '\r')
                    *p = ' '; /* a metadata value is one line */
        }
        st = v ? bl_meta_add(meta, name, v, err) : bl_fail(err, BL_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; c && i < nc; i++)
        bl_column_clear(&c[i]);
    free(c);
    free(names);
    bl_table_close(t);
    return st;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* A metadata name not yet taken: base, else base_2, base_3... */
static void unique_name(const bl_meta *meta, const char *src, char *name, size_t size)
{
    char base[100];
    bl_import_column_name(src, base, sizeof base);
    if (!strcmp(base, "index") || !strcmp(base, "external_id") || !strcmp(base, "sign"))
        snprintf(name, size, "source_%s", base);
    else
        snprintf(name, size, "%s", base);
    for (size_t q = 0, bump = 2; q < meta->n_columns; q++)
        if (!strcmp(meta->names[q], name)) {
            snprintf(name, size, "%s_%zu", base, bump++);
            q = (size_t)-1;
        }
}

bl_status bl_neuron_join(const char *path, const char *id_col, const char *const *wanted, size_t n_wanted,
                         const bl_ids *ids, bl_meta *meta, bl_report *report, bl_error *err)
{
    bl_table *t = NULL;
    bl_status st = bl_table_open(path, BL_TABLE_AUTO, &t, err);
    if (st != BL_OK)
        return st;
    size_t nc = bl_table_n_columns(t), idc = 0, m = 0;
    const char **names = calloc(nc + 1, sizeof *names);
    bl_col_type *want = calloc(nc + 1, sizeof *want);
    bl_column *c = calloc(nc + 1, sizeof *c);
    if (!names || !want || !c)
        st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
    if (st == BL_OK)
        st = bl_table_find(t, id_col, &idc, err);
    if (st == BL_OK) {
        names[m++] = id_col;
        for (size_t i = 0; i < nc; i++) {
            const char *nm = bl_table_column_name(t, i);
            int take = i != idc && bl_table_column_type(t, i) != 0;
            if (take && n_wanted) {
                take = 0;
                for (size_t w = 0; w < n_wanted; w++)
                    take |= !strcmp(wanted[w], nm);
            }
            if (take) {
                want[m] = 0;
                names[m++] = nm;
            }
        }
        st = bl_table_read_all(t, names, want, m, c, err);
    }
    char ***vals = calloc(m ? m : 1, sizeof *vals);
    if (st == BL_OK && !vals)
        st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
    for (size_t k = 1; st == BL_OK && k < m; k++) {
        char name[128];
        unique_name(meta, names[k], name, sizeof name);
        st = bl_meta_add_empty(meta, name, &vals[k], err);
    }
    uint64_t *seen = calloc((size_t)(ids->n ? ids->n : 1), sizeof *seen);
    uint64_t unknown = 0;
    if (st == BL_OK && !seen)
        st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
    for (uint64_t r = 0; st == BL_OK && r < c[0].n; r++) {
        char *id = bl_import_cell(&c[0], r);
        int32_t j = id ? bl_ids_find(ids, id, strlen(id)) : -1;
        if (!id) {
            st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
        } else if (j < 0) {
            unknown++;
        } else if (seen[j]) {
            st = bl_fail(err, BL_ERR_INVALID, "%s: column %s, row %llu: id %s given twice (first at row %llu)", path,
                         id_col, (unsigned long long)r + 1, id, (unsigned long long)seen[j]);
        } else {
            seen[j] = r + 1;
            for (size_t k = 1; k < m && st == BL_OK; k++) {
                if (!(vals[k][j] = bl_import_cell(&c[k], r)))
                    st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
                for (char *p = vals[k][j]; p && *p; p++)
                    if (*p == '\n' || *p == '\r')
                        *p = ' ';
            }
        }
        free(id);
    }
    uint64_t missing = 0;
    for (uint64_t i = 0; st == BL_OK && i < ids->n; i++)
        missing += !seen[i];
    if (st == BL_OK && unknown)
        bl_report_add(report, "%s: %llu rows name ids that are not neurons of the import: ignored", base_name(path),
                      (unsigned long long)unknown);
    if (st == BL_OK && missing)
        bl_report_add(report, "%s: %llu neurons have no row: their columns from it are empty", base_name(path),
                      (unsigned long long)missing);
    free(seen);
    for (size_t k = 0; c && k < m; k++)
        bl_column_clear(&c[k]);
    free(c);
    free(vals);
    free(names);
    free(want);
    bl_table_close(t);
    return st;
}
