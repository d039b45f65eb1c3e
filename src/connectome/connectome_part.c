/* Loading one part of a connectome (bl_connectome_load_part): what a rank of
 * an MPI job holds. A rank delivers spikes only into its own neurons, so it
 * keeps, for every presynaptic row, only the targets inside its range. The
 * whole graph is never in memory: targets.npy is streamed once to validate
 * the rows and count in-degrees (which decide the ranges, identically on
 * every rank), then targets.npy and counts.npy are streamed together and the
 * part's edges kept, with the values of the optional edge columns
 * (weights.npy, delays.npy) streamed beside them: a rank keeps the weights
 * and delays of its own edges only, in its edge order, so an equation model
 * that reads them runs on any number of ranks. Rows stay ascending, so the
 * engine's search for a range's edges inside a row works unchanged. */
#include "connectome/connectome_impl.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/npy.h"

/* Elements per streamed chunk: 4 MiB of int32 (8 MiB of an edge column),
 * small next to any graph worth splitting. */
#define CHUNK ((uint64_t)1 << 20)

/* Each pass reads its files once through a bl_npy_stream, which hashes every
 * byte it hands out and compares the digest with the manifest's at the end:
 * a file changed between or during the passes fails the load instead of
 * feeding the part bytes the manifest does not vouch for. */
static bl_status open_edges(const char *dir, const char *name, bl_dtype dtype, uint64_t e, const bl_src_digest *want,
                            char *path, size_t size, bl_npy_stream *s, bl_error *err)
{
    snprintf(path, size, "%s/%s", dir, name);
    bl_status st = bl_npy_stream_open(path, want, dtype, s, err);
    if (!st && s->header.count != e) {
        st = bl_fail(err, BL_ERR_INVALID, "%s: shape (%" PRIu64 ",), manifest n_edges is %" PRIu64, path,
                     s->header.count, e);
        bl_error ignored;
        bl_npy_stream_close(s, NULL, NULL, &ignored);
    }
    return st;
}

/* After a fault found mid-stream (OK false), the rest is still read and
 * hashed when WANT is given: a file that differs from the manifest is
 * reported as such (err replaced), which says more than the fault it caused. */
static bl_status close_edges(bl_npy_stream *s, int ok, const bl_src_digest *want, bl_error *err)
{
    if (!ok && want) {
        double sink[4096]; /* whole elements of any of the files' dtypes */
        const uint64_t item = bl_dtype_size(s->header.dtype), per = sizeof sink / item;
        uint64_t left = (s->size - s->pos) / item;
        bl_error ignored;
        while (left > 0) {
            uint64_t m = left < per ? left : per;
            if (bl_npy_stream_read(s, sink, m, &ignored))
                break;
            left -= m;
        }
        bl_error hash_err;
        if (left == 0 && bl_npy_stream_close(s, want, NULL, &hash_err) == BL_ERR_INVALID &&
            strstr(hash_err.message, "SHA-256")) {
            *err = hash_err;
            return BL_ERR_INVALID;
        }
        if (left != 0)
            bl_npy_stream_close(s, NULL, NULL, &ignored);
        return BL_OK;
    }
    if (!ok) {
        bl_error ignored;
        bl_npy_stream_close(s, NULL, NULL, &ignored);
        return BL_OK;
    }
    return bl_npy_stream_close(s, want, NULL, err);
}

/* Pass 1: every row ascending, unique and in range; in-degrees counted. */
static bl_status scan_targets(const char *dir, uint64_t n, uint64_t e, const int64_t *off, int32_t *in_degree,
                              int32_t *buf, const bl_src_digest *want, bl_error *err)
{
    char path[4096];
    bl_npy_stream r;
    bl_status st = open_edges(dir, "targets.npy", BL_DTYPE_INT32, e, &want[BL_SRC_TARGETS], path, sizeof path, &r,
                              err);
    if (st)
        return st;
    uint64_t i = 0;
    int32_t prev = 0;
    for (uint64_t k0 = 0; !st && k0 < e; k0 += CHUNK) {
        uint64_t m = e - k0 < CHUNK ? e - k0 : CHUNK;
        if ((st = bl_npy_stream_read(&r, buf, m, err)))
            break;
        for (uint64_t j = 0; j < m; j++) {
            int64_t k = (int64_t)(k0 + j);
            while (k >= off[i + 1])
                i++;
            int32_t t = buf[j];
            if (t < 0 || (uint64_t)t >= n) {
                st = bl_fail(err, BL_ERR_INVALID, "%s/targets.npy: index %" PRId64 " (row %" PRIu64 "): target %" PRId32
                             " outside 0..%" PRIu64, dir, k, i, t, n ? n - 1 : 0);
                break;
            }
            if (k > off[i] && t <= prev) {
                st = bl_fail(err, BL_ERR_INVALID, "%s/targets.npy: index %" PRId64 " (row %" PRIu64 "): target %" PRId32
                             " %s previous target %" PRId32 " (rows must be ascending, no duplicates)", dir, k, i, t,
                             t == prev ? "repeats the" : "is below the", prev);
                break;
            }
            prev = t;
            in_degree[t]++;
        }
    }
    bl_status cst = close_edges(&r, !st, &want[BL_SRC_TARGETS], err);
    return cst ? cst : st;
}

/* The part's synapse counts: int16 while every count fits (real connectomes:
 * counts in the hundreds or thousands), which halves their memory; widened
 * to int32 at the first count that does not. */
typedef struct kept_counts {
    int16_t *c16;
    int32_t *c32;
    uint64_t n;
} kept_counts;

static bl_status widen(kept_counts *kc, uint64_t done, const char *dir, bl_error *err)
{
    kc->c32 = malloc((kc->n ? kc->n : 1) * sizeof *kc->c32);
    if (!kc->c32)
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate %" PRIu64 " synapse counts", dir, kc->n);
    for (uint64_t k = 0; k < done; k++)
        kc->c32[k] = kc->c16[k];
    free(kc->c16);
    kc->c16 = NULL;
    return BL_OK;
}

/* The optional edge columns of a part while they are read: the manifest's
 * digest (NULL: the directory has no such column), the stream, a chunk and
 * the part's values. Index 0 weights.npy, 1 delays.npy. */
typedef struct kept_columns {
    const bl_src_digest *want[2];
    bl_npy_stream s[2];
    char path[2][4096];
    double *buf[2], *kept[2];
} kept_columns;

/* Pass 2: counts checked and summed over the whole graph, every value of
 * the edge columns checked; the edges into [lo, hi) copied with their
 * column values, row lengths into kept_off[i + 1]. A bad column value is
 * reported after the graph's own faults and after its file's hash, in the
 * order the whole loader finds them (bl_csr_validate first, then each
 * column read whole, hashed, then checked). */
static bl_status keep_edges(const char *dir, uint64_t e, const int64_t *off, int32_t lo, int32_t hi,
                            int64_t *kept_off, int32_t *kept_t, kept_counts *kc, kept_columns *kx,
                            uint64_t *synapses, int32_t *tbuf, int32_t *cbuf, const bl_src_digest *want,
                            bl_error *err)
{
    char tpath[4096], cpath[4096];
    bl_npy_stream rt, rc;
    int open_cols = 0;
    bl_status st = open_edges(dir, "targets.npy", BL_DTYPE_INT32, e, &want[BL_SRC_TARGETS], tpath, sizeof tpath,
                              &rt, err);
    if (st)
        return st;
    st = open_edges(dir, "counts.npy", BL_DTYPE_INT32, e, &want[BL_SRC_COUNTS], cpath, sizeof cpath, &rc, err);
    const int counts_open = !st;
    for (int q = 0; !st && q < 2; q++)
        if (kx->want[q] && !(st = open_edges(dir, bl_edge_column_files[q], BL_DTYPE_FLOAT64, e, kx->want[q],
                                             kx->path[q], sizeof kx->path[q], &kx->s[q], err)))
            open_cols |= 1 << q;
    if (st) { /* err says which file did not open; the others are closed unread */
        bl_error ignored;
        for (int q = 0; q < 2; q++)
            if (open_cols & (1 << q))
                close_edges(&kx->s[q], 0, NULL, &ignored);
        if (counts_open)
            close_edges(&rc, 0, NULL, &ignored);
        close_edges(&rt, 0, NULL, &ignored);
        return st;
    }
    uint64_t i = 0, kept = 0, syn = 0;
    uint64_t bad_at[2] = {UINT64_MAX, UINT64_MAX}; /* each column's first value out of bounds */
    double bad_x[2] = {0.0, 0.0};
    for (uint64_t k0 = 0; !st && k0 < e; k0 += CHUNK) {
        uint64_t m = e - k0 < CHUNK ? e - k0 : CHUNK;
        if ((st = bl_npy_stream_read(&rt, tbuf, m, err)) || (st = bl_npy_stream_read(&rc, cbuf, m, err)))
            break;
        for (int q = 0; !st && q < 2; q++)
            if (kx->want[q] && !(st = bl_npy_stream_read(&kx->s[q], kx->buf[q], m, err)))
                for (uint64_t j = 0; bad_at[q] == UINT64_MAX && j < m; j++)
                    if (!bl_edge_value_ok(q, kx->buf[q][j])) {
                        bad_at[q] = k0 + j;
                        bad_x[q] = kx->buf[q][j];
                    }
        if (st)
            break;
        for (uint64_t j = 0; j < m; j++) {
            int64_t k = (int64_t)(k0 + j);
            while (k >= off[i + 1])
                i++;
            int32_t t = tbuf[j], c = cbuf[j];
            if (c == 0 || c == INT32_MIN) {
                st = c == 0 ? bl_fail(err, BL_ERR_INVALID, "%s/counts.npy: index %" PRId64 " (edge %" PRIu64 "->%" PRId32
                                      "): synapse count is 0", dir, k, i, t)
                            : bl_fail(err, BL_ERR_INVALID, "%s/counts.npy: index %" PRId64
                                      ": synapse count out of range", dir, k);
                break;
            }
            syn += (uint64_t)(c < 0 ? -(int64_t)c : c);
            if (t >= lo && t < hi) {
                if (kc->c16 && (c < INT16_MIN || c > INT16_MAX) && (st = widen(kc, kept, dir, err)))
                    break;
                kept_t[kept] = t;
                if (kc->c16)
                    kc->c16[kept] = (int16_t)c;
                else
                    kc->c32[kept] = c;
                for (int q = 0; q < 2; q++)
                    if (kx->want[q])
                        kx->kept[q][kept] = kx->buf[q][j];
                kept++;
                kept_off[i + 1]++;
            }
        }
    }
    bl_status ct = close_edges(&rt, !st, &want[BL_SRC_TARGETS], err);
    if (!st)
        st = ct;
    bl_status cc = close_edges(&rc, !st, &want[BL_SRC_COUNTS], err);
    if (!st)
        st = cc;
    for (int q = 0; q < 2; q++) {
        if (!kx->want[q])
            continue;
        bl_status cq = close_edges(&kx->s[q], !st, kx->want[q], err);
        if (!st)
            st = cq;
        if (!st && bad_at[q] != UINT64_MAX)
            st = bl_edge_value_fail(err, kx->path[q], q, bad_at[q], bad_x[q]);
    }
    *synapses = syn;
    return st;
}

bl_status bl_connectome_read_part(const char *dir, uint64_t n, uint64_t e, int part, int parts,
                                  const bl_src_digest *want, const bl_src_digest *const columns[2],
                                  bl_connectome **out, bl_error *err)
{
    *out = NULL;
    if (parts < 1 || part < 0 || part >= parts)
        return bl_fail(err, BL_ERR_INVALID, "%s: part %d of %d does not exist (parts are 0..%d)", dir, part, parts,
                       parts - 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/offsets.npy", dir);
    bl_npy_array off = {0};
    bl_npy_stream os;
    bl_status st = bl_npy_stream_open(path, &want[BL_SRC_OFFSETS], BL_DTYPE_INT64, &os, err);
    if (st)
        return st;
    if (os.header.count != n + 1) {
        st = bl_fail(err, BL_ERR_INVALID, "%s: shape (%" PRIu64 ",), manifest n_neurons %" PRIu64
                     " needs (%" PRIu64 ",)", path, os.header.count, n, n + 1);
        close_edges(&os, 0, NULL, err);
        return st;
    }
    off.data = malloc((n + 1) * sizeof(int64_t));
    if (!off.data) {
        close_edges(&os, 0, NULL, err);
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate %" PRIu64 " offsets", path, n + 1);
    }
    st = bl_npy_stream_read(&os, off.data, n + 1, err);
    bl_status cst = close_edges(&os, !st, &want[BL_SRC_OFFSETS], err);
    if (st || cst) {
        free(off.data);
        return st ? st : cst;
    }
    const int64_t *offsets = off.data;
    int32_t *in_degree = calloc(n ? n : 1, sizeof *in_degree);
    int32_t *bounds = malloc(((size_t)parts + 1) * sizeof *bounds);
    int32_t *tbuf = malloc(CHUNK * sizeof *tbuf), *cbuf = malloc(CHUNK * sizeof *cbuf);
    int64_t *kept_off = NULL;
    int32_t *kept_t = NULL;
    kept_counts kc = {0};
    kept_columns *kx = calloc(1, sizeof *kx);
    uint64_t kept = 0, synapses = 0;
    for (int q = 0; kx && q < 2; q++)
        if ((kx->want[q] = columns ? columns[q] : NULL) && !(kx->buf[q] = malloc(CHUNK * sizeof *kx->buf[q])))
            st = bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate a chunk of %s", dir, bl_edge_column_files[q]);
    if (!st && (!kx || !in_degree || !bounds || !tbuf || !cbuf))
        st = bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate part loading state for %" PRIu64 " neurons", dir, n);
    if (!st)
        st = bl_offsets_validate(dir, n, e, offsets, err);
    if (!st)
        st = scan_targets(dir, n, e, offsets, in_degree, tbuf, want, err);
    if (!st) {
        bl_split_by_work(in_degree, 0, (int32_t)n, parts, bounds);
        for (int32_t t = bounds[part]; t < bounds[part + 1]; t++)
            kept += (uint64_t)in_degree[t];
        kept_off = calloc(n + 1, sizeof *kept_off);
        kept_t = malloc((kept ? kept : 1) * sizeof *kept_t);
        kc.n = kept;
        kc.c16 = malloc((kept ? kept : 1) * sizeof *kc.c16);
        int cols_ok = 1;
        for (int q = 0; q < 2; q++)
            if (kx->want[q] && !(kx->kept[q] = malloc((kept ? kept : 1) * sizeof *kx->kept[q])))
                cols_ok = 0;
        if (!kept_off || !kept_t || !kc.c16 || !cols_ok)
            st = bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate the %" PRIu64 " edges of part %d", dir, kept, part);
    }
    if (!st)
        st = keep_edges(dir, e, offsets, bounds[part], bounds[part + 1], kept_off, kept_t, &kc, kx, &synapses, tbuf,
                        cbuf, want, err);
    free(tbuf);
    free(cbuf);
    double *kept_cols[2] = {NULL, NULL};
    for (int q = 0; kx && q < 2; q++) {
        free(kx->buf[q]);
        kept_cols[q] = kx->kept[q];
    }
    free(kx);
    bl_npy_free(&off);
    if (st) {
        free(in_degree);
        free(bounds);
        free(kept_off);
        free(kept_t);
        free(kc.c16);
        free(kc.c32);
        free(kept_cols[0]);
        free(kept_cols[1]);
        return st;
    }
    for (uint64_t i = 0; i < n; i++)
        kept_off[i + 1] += kept_off[i];
    assert((uint64_t)kept_off[n] == kept);
    bl_connectome *c = NULL;
    if ((st = bl_connectome_adopt_validated(n, kept, kept_off, kept_t, kc.c32, &synapses, 0, &c, err))) {
        free(in_degree);
        free(bounds);
        free(kc.c16);
        free(kept_cols[0]);
        free(kept_cols[1]);
        return st;
    }
    c->counts16 = kc.c16;
    c->edge_weight = kept_cols[0];
    c->edge_delay_ms = kept_cols[1];
    c->n_edges = e;
    c->n_synapses = synapses;
    c->part = part;
    c->parts = parts;
    c->part_bounds = bounds;
    c->in_degree = in_degree;
    *out = c;
    return BL_OK;
}
