/* The flyvis application (include/brainlesslab/flyvis.h, docs/solvers.md
 * "The flyvis application"): the tiled optic-lobe connectome, the
 * graded-potential rate model under explicit Euler, and its discrete adjoint.
 *
 * Construction follows flyvis's ConnectomeFromAvgFilters (read for its facts,
 * written anew): cells type by type on the hexagonal lattice max(|u|, |v|,
 * |u+v|) <= extent with the type's (u, v) stride; each edge type's offsets
 * extended by the lattice points inside their convex hull (n_syn_fill
 * synapses each, appended in u-major order after the listed offsets); edges
 * offset by offset, source cell by source cell. flyvis decides "inside" with
 * matplotlib's crossing-number test on a Qhull hull; the same test on the
 * counter-clockwise monotone-chain hull gives the same points for every edge
 * type of the shipped file (checked against the SciPy/Qhull construction in
 * oracle.test_flyvis_torch, which also checks the published 45,669 cells and
 * 1,513,231 edges at extent 15). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "brainlesslab/flyvis.h"
#include "core/file.h"

#define MAX_JSON_BYTES ((size_t)64 << 20)
#define MAX_EXTENT 60
#define MAX_OFFSET 64 /* |du|, |dv| in the file: the shipped one stays within 10 */

struct bl_flyvis {
    int extent;
    size_t n_types, n_etypes, n_cells, n_edges;
    char (*type_name)[32];
    size_t *et_src, *et_tar; /* per edge type */
    int *et_sign;
    double *et_mean_nsyn;
    int32_t *cell_type, *cell_u, *cell_v;
    /* Edges in flyvis's order. */
    int64_t *e_src, *e_tar;
    int32_t *e_type;
    double *e_nsyn;
    /* Every column offset of every edge type (hull points included): its
     * sign * n_syn and edge type. An edge names its offset (16 bits), so a
     * weight is one lookup in a table that stays in the cache, and a step
     * streams 6 bytes per edge instead of 22. */
    size_t n_offs;
    double *off_coef;
    uint16_t *off_type;
    int32_t *e_off;
    /* The same edges by target (CSR), each row in flyvis's order. */
    size_t *row;
    int32_t *c_src;
    uint16_t *c_off;
    /* And by source (CSC) for the adjoint, each column in flyvis's order. */
    size_t *col;
    int32_t *t_tar;
    uint16_t *t_off;
    int *is_input;  /* per type: R1-R8 (the file's input_units) */
};

void bl_flyvis_destroy(bl_flyvis *f)
{
    if (!f)
        return;
    free(f->type_name);
    free(f->et_src);
    free(f->et_tar);
    free(f->et_sign);
    free(f->et_mean_nsyn);
    free(f->cell_type);
    free(f->cell_u);
    free(f->cell_v);
    free(f->e_src);
    free(f->e_tar);
    free(f->e_type);
    free(f->e_nsyn);
    free(f->row);
    free(f->c_src);
    free(f->c_off);
    free(f->col);
    free(f->t_tar);
    free(f->t_off);
    free(f->off_coef);
    free(f->off_type);
    free(f->e_off);
    free(f->is_input);
    free(f);
}

size_t bl_flyvis_n_cells(const bl_flyvis *f) { return f->n_cells; }
size_t bl_flyvis_n_edges(const bl_flyvis *f) { return f->n_edges; }
size_t bl_flyvis_n_types(const bl_flyvis *f) { return f->n_types; }
size_t bl_flyvis_n_edge_types(const bl_flyvis *f) { return f->n_etypes; }
const char *bl_flyvis_type_name(const bl_flyvis *f, size_t t) { return t < f->n_types ? f->type_name[t] : NULL; }

int bl_flyvis_type_index(const bl_flyvis *f, const char *name)
{
    for (size_t t = 0; name && t < f->n_types; t++)
        if (!strcmp(f->type_name[t], name))
            return (int)t;
    return -1;
}

void bl_flyvis_edge_type(const bl_flyvis *f, size_t k, size_t *src, size_t *tar, int *sign)
{
    *src = f->et_src[k];
    *tar = f->et_tar[k];
    *sign = f->et_sign[k];
}

void bl_flyvis_cells(const bl_flyvis *f, int32_t *type, int32_t *u, int32_t *v)
{
    memcpy(type, f->cell_type, f->n_cells * sizeof *type);
    memcpy(u, f->cell_u, f->n_cells * sizeof *u);
    memcpy(v, f->cell_v, f->n_cells * sizeof *v);
}

void bl_flyvis_edges(const bl_flyvis *f, int64_t *src, int64_t *tar, int32_t *type, double *n_syn)
{
    memcpy(src, f->e_src, f->n_edges * sizeof *src);
    memcpy(tar, f->e_tar, f->n_edges * sizeof *tar);
    memcpy(type, f->e_type, f->n_edges * sizeof *type);
    memcpy(n_syn, f->e_nsyn, f->n_edges * sizeof *n_syn);
}

void bl_flyvis_default_params(const bl_flyvis *f, double *tau, double *bias, double *strength)
{
    for (size_t t = 0; t < f->n_types; t++) {
        if (tau)
            tau[t] = 0.05;
        if (bias)
            bias[t] = 0.5;
    }
    for (size_t k = 0; strength && k < f->n_etypes; k++)
        strength[k] = 0.01 / f->et_mean_nsyn[k];
}

void bl_flyvis_options_default(const bl_flyvis *f, bl_flyvis_options *o)
{
    memset(o, 0, sizeof *o);
    o->dt = 0.005;
    o->steps = 100;
    o->edge_speed = 50;
    o->edge_start = -(double)(f ? f->extent : 0);
    o->edge_on = 1;
    o->edge_off = 0;
    const int t = f ? bl_flyvis_type_index(f, "T4a") : -1;
    o->objective_type = t >= 0 ? t : 0;
}

/* ---- construction ---- */

typedef struct offs {
    int (*uv)[2];
    double *n;
    size_t len, cap;
} offs;

static int offs_push(offs *o, int du, int dv, double n)
{
    if (o->len == o->cap) {
        size_t c = o->cap ? 2 * o->cap : 64;
        int(*uv)[2] = realloc(o->uv, c * sizeof *uv);
        if (!uv)
            return -1;
        o->uv = uv;
        double *nn = realloc(o->n, c * sizeof *nn);
        if (!nn)
            return -1;
        o->n = nn;
        o->cap = c;
    }
    o->uv[o->len][0] = du;
    o->uv[o->len][1] = dv;
    o->n[o->len++] = n;
    return 0;
}

static long cross(const int *o, const int *a, const int *b)
{
    return (long)(a[0] - o[0]) * (b[1] - o[1]) - (long)(a[1] - o[1]) * (b[0] - o[0]);
}
static int cmp_pt(const void *a, const void *b)
{
    const int *p = a, *q = b;
    return p[0] != q[0] ? (p[0] > q[0]) - (p[0] < q[0]) : (p[1] > q[1]) - (p[1] < q[1]);
}

/* The counter-clockwise convex hull of pts (n distinct sorted points) into h
 * (room for n + 1); returns its vertex count (collinear points dropped). */
static size_t hull(int (*pts)[2], size_t n, int (*h)[2])
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        while (k >= 2 && cross(h[k - 2], h[k - 1], pts[i]) <= 0)
            k--;
        h[k][0] = pts[i][0], h[k][1] = pts[i][1], k++;
    }
    for (size_t i = n - 1, lo = k + 1; i-- > 0;) {
        while (k >= lo && cross(h[k - 2], h[k - 1], pts[i]) <= 0)
            k--;
        h[k][0] = pts[i][0], h[k][1] = pts[i][1], k++;
    }
    return k - 1;
}

/* The crossing-number test as matplotlib's Path.contains_points does it
 * (half-open on edges: the choice that decides lattice points on the hull). */
static int inside(int (*h)[2], size_t n, double tx, double ty)
{
    int in = 0;
    double x0 = h[0][0], y0 = h[0][1];
    int yf0 = y0 >= ty;
    for (size_t i = 1; i <= n; i++) {
        const double x1 = h[i % n][0], y1 = h[i % n][1];
        const int yf1 = y1 >= ty;
        if (yf0 != yf1 && (((y1 - ty) * (x0 - x1) >= (x1 - tx) * (y0 - y1)) == yf1))
            in ^= 1;
        yf0 = yf1, x0 = x1, y0 = y1;
    }
    return in;
}

/* Append the lattice points inside the hull of o's first n points. */
static int fill_hull(offs *o, double fill)
{
    const size_t n = o->len;
    int(*p)[2] = malloc(n * sizeof *p), (*h)[2] = malloc((2 * n + 2) * sizeof *h);
    if (!p || !h) {
        free(p);
        free(h);
        return -1;
    }
    memcpy(p, o->uv, n * sizeof *p);
    qsort(p, n, sizeof *p, cmp_pt);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!m || cmp_pt(p[m - 1], p[i]))
            p[m][0] = p[i][0], p[m][1] = p[i][1], m++;
    int rc = 0;
    const size_t nh = m >= 3 ? hull(p, m, h) : 0;
    if (nh >= 3) {
        int u0 = p[0][0], u1 = p[0][0], v0 = p[0][1], v1 = p[0][1];
        for (size_t i = 0; i < m; i++) {
            u0 = p[i][0] < u0 ? p[i][0] : u0, u1 = p[i][0] > u1 ? p[i][0] : u1;
            v0 = p[i][1] < v0 ? p[i][1] : v0, v1 = p[i][1] > v1 ? p[i][1] : v1;
        }
        for (int u = u0; u <= u1 && !rc; u++)
            for (int v = v0; v <= v1 && !rc; v++) {
                const int q[2] = {u, v};
                if (!bsearch(q, p, m, sizeof *p, cmp_pt) && inside(h, nh, u, v))
                    rc = offs_push(o, u, v, fill);
            }
    }
    free(p);
    free(h);
    return rc;
}

static int on_lattice(int u, int v, int e)
{
    return u >= -e && u <= e && v >= -e && v <= e && u + v >= -e && u + v <= e;
}

static bl_status parse_nodes(bl_flyvis *f, const cJSON *nodes, const char *path, int (**stride)[2],
                             bl_error *err)
{
    const int n = cJSON_GetArraySize(nodes);
    if (!cJSON_IsArray(nodes) || n < 1 || n > 65535)
        return bl_fail(err, BL_ERR_FORMAT, "%s: \"nodes\" must be a list of 1 to 65535 cell types", path);
    f->n_types = (size_t)n;
    f->type_name = calloc((size_t)n, sizeof *f->type_name);
    f->is_input = calloc((size_t)n, sizeof *f->is_input);
    *stride = calloc((size_t)n, sizeof **stride);
    if (!f->type_name || !f->is_input || !*stride)
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory for %d cell types", path, n);
    for (int t = 0; t < n; t++) {
        const cJSON *node = cJSON_GetArrayItem(nodes, t), *name = cJSON_GetObjectItemCaseSensitive(node, "name"),
                    *pat = cJSON_GetObjectItemCaseSensitive(node, "pattern");
        if (!cJSON_IsString(name) || !*name->valuestring || strlen(name->valuestring) >= sizeof f->type_name[0])
            return bl_fail(err, BL_ERR_FORMAT, "%s: nodes[%d].name must be a name of 1 to 31 characters", path, t);
        snprintf(f->type_name[t], sizeof f->type_name[t], "%s", name->valuestring);
        for (int s = 0; s < t; s++)
            if (!strcmp(f->type_name[s], f->type_name[t]))
                return bl_fail(err, BL_ERR_FORMAT, "%s: nodes[%d].name \"%s\" repeats nodes[%d]", path, t,
                               f->type_name[t], s);
        const cJSON *kind = cJSON_GetArrayItem(pat, 0), *arg = cJSON_GetArrayItem(pat, 1);
        int su = 0, sv = 0;
        if (cJSON_IsArray(pat) && cJSON_GetArraySize(pat) == 2 && cJSON_IsString(kind)) {
            if (!strcmp(kind->valuestring, "stride") && cJSON_GetArraySize(arg) == 2 &&
                cJSON_IsNumber(cJSON_GetArrayItem(arg, 0)) && cJSON_IsNumber(cJSON_GetArrayItem(arg, 1))) {
                su = cJSON_GetArrayItem(arg, 0)->valueint;
                sv = cJSON_GetArrayItem(arg, 1)->valueint;
            } else if (!strcmp(kind->valuestring, "tile") && cJSON_IsNumber(arg)) {
                su = sv = arg->valueint;
            } else if (!strcmp(kind->valuestring, "single")) {
                su = sv = -1; /* one cell, at (0, 0) */
            }
        }
        if (!su || su < -1 || sv < -1 || su > 64 || sv > 64)
            return bl_fail(err, BL_ERR_FORMAT,
                           "%s: nodes[%d].pattern must be [\"stride\", [su, sv]], [\"tile\", n] (1..64) or "
                           "[\"single\", null]", path, t);
        (*stride)[t][0] = su, (*stride)[t][1] = sv;
    }
    return BL_OK;
}

bl_status bl_flyvis_create(const char *path, int extent, double n_syn_fill, bl_flyvis **out, bl_error *err)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    bl_status st = bl_read_small(path, MAX_JSON_BYTES, &text, &len, err);
    if (st)
        return st;
    st = bl_flyvis_create_from_json(text, len, path, extent, n_syn_fill, out, err);
    free(text);
    return st;
}

bl_status bl_flyvis_create_from_json(const char *text, size_t len, const char *path, int extent, double n_syn_fill,
                                     bl_flyvis **out, bl_error *err)
{
    *out = NULL;
    bl_status st = BL_OK;
    if (extent < 0 || extent > MAX_EXTENT)
        return bl_fail(err, BL_ERR_INVALID, "flyvis: extent %d is outside 0..%d", extent, MAX_EXTENT);
    if (!(n_syn_fill >= 0) || !isfinite(n_syn_fill))
        return bl_fail(err, BL_ERR_INVALID, "flyvis: n_syn_fill must be a finite number >= 0");
    cJSON *doc = len ? cJSON_ParseWithLength(text, len) : NULL;
    if (!doc)
        return bl_fail(err, BL_ERR_FORMAT, "%s: not JSON", path);
    bl_flyvis *f = calloc(1, sizeof *f);
    int(*stride)[2] = NULL;
    int32_t *at = NULL; /* per type, per lattice point: the cell index or -1 */
    offs o = {0};
    if (!f) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        goto out;
    }
    f->extent = extent;
    if ((st = parse_nodes(f, cJSON_GetObjectItemCaseSensitive(doc, "nodes"), path, &stride, err)))
        goto out;
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(doc, "input_units"), *in;
    cJSON_ArrayForEach(in, inputs)
    {
        const int t = cJSON_IsString(in) ? bl_flyvis_type_index(f, in->valuestring) : -1;
        if (t < 0) {
            st = bl_fail(err, BL_ERR_FORMAT, "%s: input_units names %s, not a cell type of \"nodes\"", path,
                         cJSON_IsString(in) ? in->valuestring : "a non-string");
            goto out;
        }
        f->is_input[t] = 1;
    }
    /* Cells. */
    const int side = 2 * extent + 1;
    const size_t per = (size_t)side * (size_t)side;
    if (!(at = malloc(f->n_types * per * sizeof *at)) ||
        !(f->cell_type = malloc(f->n_types * per * sizeof *f->cell_type)) ||
        !(f->cell_u = malloc(f->n_types * per * sizeof *f->cell_u)) ||
        !(f->cell_v = malloc(f->n_types * per * sizeof *f->cell_v))) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory for the cells at extent %d", path, extent);
        goto out;
    }
    for (size_t t = 0; t < f->n_types; t++) {
        const int single = stride[t][0] < 0, e = single ? 0 : extent;
        for (size_t k = 0; k < per; k++)
            at[t * per + k] = -1;
        for (int u = -e; u <= e; u++)
            for (int v = (-e > -e - u ? -e : -e - u); v <= (e < e - u ? e : e - u); v++)
                if (single || (u % stride[t][0] == 0 && v % stride[t][1] == 0)) {
                    at[t * per + (size_t)(u + extent) * (size_t)side + (size_t)(v + extent)] = (int32_t)f->n_cells;
                    f->cell_type[f->n_cells] = (int32_t)t;
                    f->cell_u[f->n_cells] = u;
                    f->cell_v[f->n_cells++] = v;
                }
    }
    if (f->n_cells > INT32_MAX / 2) {
        st = bl_fail(err, BL_ERR_INVALID, "flyvis: %zu cells at extent %d are too many", f->n_cells, extent);
        goto out;
    }
    /* Edge types, then edges. */
    const cJSON *edges = cJSON_GetObjectItemCaseSensitive(doc, "edges");
    const int ne = cJSON_GetArraySize(edges);
    if (!cJSON_IsArray(edges) || ne < 1 || ne > 65535) {
        st = bl_fail(err, BL_ERR_FORMAT, "%s: \"edges\" must be a list of 1 to 65535 edge types", path);
        goto out;
    }
    f->n_etypes = (size_t)ne;
    f->et_src = calloc((size_t)ne, sizeof *f->et_src);
    f->et_tar = calloc((size_t)ne, sizeof *f->et_tar);
    f->et_sign = calloc((size_t)ne, sizeof *f->et_sign);
    f->et_mean_nsyn = calloc((size_t)ne, sizeof *f->et_mean_nsyn);
    size_t cap = 0;
    if (!f->et_src || !f->et_tar || !f->et_sign || !f->et_mean_nsyn) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory for %d edge types", path, ne);
        goto out;
    }
    for (int k = 0; k < ne; k++) {
        const cJSON *e = cJSON_GetArrayItem(edges, k), *src = cJSON_GetObjectItemCaseSensitive(e, "src"),
                    *tar = cJSON_GetObjectItemCaseSensitive(e, "tar"),
                    *alpha = cJSON_GetObjectItemCaseSensitive(e, "alpha"),
                    *list = cJSON_GetObjectItemCaseSensitive(e, "offsets"), *item;
        const int ts = cJSON_IsString(src) ? bl_flyvis_type_index(f, src->valuestring) : -1,
                  tt = cJSON_IsString(tar) ? bl_flyvis_type_index(f, tar->valuestring) : -1;
        if (ts < 0 || tt < 0) {
            st = bl_fail(err, BL_ERR_FORMAT, "%s: edges[%d].%s is not a cell type of \"nodes\"", path, k,
                         ts < 0 ? "src" : "tar");
            goto out;
        }
        if (!cJSON_IsNumber(alpha) || (alpha->valuedouble != 1 && alpha->valuedouble != -1)) {
            st = bl_fail(err, BL_ERR_FORMAT, "%s: edges[%d].alpha (the sign) must be 1 or -1", path, k);
            goto out;
        }
        f->et_src[k] = (size_t)ts, f->et_tar[k] = (size_t)tt, f->et_sign[k] = alpha->valuedouble > 0 ? 1 : -1;
        o.len = 0;
        int j = 0;
        cJSON_ArrayForEach(item, list)
        {
            const cJSON *d = cJSON_GetArrayItem(item, 0), *n = cJSON_GetArrayItem(item, 1);
            const cJSON *du = cJSON_GetArrayItem(d, 0), *dv = cJSON_GetArrayItem(d, 1);
            /* The range first: only then may a value be cast to int. */
            if (cJSON_GetArraySize(item) != 2 || cJSON_GetArraySize(d) != 2 || !cJSON_IsNumber(du) ||
                !cJSON_IsNumber(dv) || !cJSON_IsNumber(n) || !(fabs(du->valuedouble) <= MAX_OFFSET) ||
                !(fabs(dv->valuedouble) <= MAX_OFFSET) || du->valuedouble != (int)du->valuedouble ||
                dv->valuedouble != (int)dv->valuedouble || !isfinite(n->valuedouble) || n->valuedouble < 0) {
                st = bl_fail(err, BL_ERR_FORMAT,
                             "%s: edges[%d].offsets[%d] must be [[du, dv], n_syn] (integers within %d, n_syn >= 0)",
                             path, k, j, MAX_OFFSET);
                goto out;
            }
            if (offs_push(&o, du->valueint, dv->valueint, n->valuedouble)) {
                st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
                goto out;
            }
            j++;
        }
        if (!cJSON_IsArray(list) || !j) {
            st = bl_fail(err, BL_ERR_FORMAT, "%s: edges[%d].offsets must be a non-empty list", path, k);
            goto out;
        }
        if (n_syn_fill > 0 && o.len >= 3 && fill_hull(&o, n_syn_fill)) {
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
            goto out;
        }
        if (f->n_offs + o.len > 65535) {
            st = bl_fail(err, BL_ERR_INVALID, "%s: edges[%d]: more than 65535 column offsets in all (hull points "
                         "included)", path, k);
            goto out;
        }
        double *oc = realloc(f->off_coef, (f->n_offs + o.len) * sizeof *oc);
        if (oc)
            f->off_coef = oc;
        uint16_t *ot = oc ? realloc(f->off_type, (f->n_offs + o.len) * sizeof *ot) : NULL;
        if (!ot) {
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
            goto out;
        }
        f->off_type = ot;
        for (size_t q = 0; q < o.len; q++) {
            f->off_coef[f->n_offs + q] = (double)f->et_sign[k] * o.n[q];
            f->off_type[f->n_offs + q] = (uint16_t)k;
        }
        double sum = 0, osum = 0;
        size_t count = 0;
        for (size_t q = 0; q < o.len; q++) {
            osum += o.n[q];
            const int du = o.uv[q][0], dv = o.uv[q][1];
            for (size_t c = 0; c < f->n_cells; c++) {
                if (f->cell_type[c] != ts)
                    continue;
                const int u = f->cell_u[c] + du, v = f->cell_v[c] + dv;
                if (!on_lattice(u, v, extent))
                    continue;
                const int32_t tc = at[(size_t)tt * per + (size_t)(u + extent) * (size_t)side + (size_t)(v + extent)];
                if (tc < 0)
                    continue;
                if (f->n_edges == cap) {
                    size_t nc = cap ? 2 * cap : 4096;
                    int64_t *a = realloc(f->e_src, nc * sizeof *a), *b = a ? realloc(f->e_tar, nc * sizeof *b) : NULL;
                    if (a)
                        f->e_src = a;
                    if (b)
                        f->e_tar = b;
                    int32_t *ty = b ? realloc(f->e_type, nc * sizeof *ty) : NULL;
                    if (ty)
                        f->e_type = ty;
                    double *ns = ty ? realloc(f->e_nsyn, nc * sizeof *ns) : NULL;
                    if (ns)
                        f->e_nsyn = ns;
                    int32_t *eo = ns ? realloc(f->e_off, nc * sizeof *eo) : NULL;
                    if (!eo) {
                        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory for %zu edges", path, nc);
                        goto out;
                    }
                    f->e_off = eo;
                    cap = nc;
                }
                f->e_src[f->n_edges] = (int64_t)c;
                f->e_tar[f->n_edges] = tc;
                f->e_type[f->n_edges] = k;
                f->e_off[f->n_edges] = (int32_t)(f->n_offs + q);
                f->e_nsyn[f->n_edges++] = o.n[q];
                sum += o.n[q];
                count++;
            }
        }
        f->n_offs += o.len;
        /* flyvis: 1 / (the mean n_syn of the type's edges); a type with no
         * tiled edge (a tiny extent) takes the mean over its offsets. */
        f->et_mean_nsyn[k] = count ? sum / (double)count : osum / (double)o.len;
        if (!(f->et_mean_nsyn[k] > 0) || !isfinite(f->et_mean_nsyn[k])) {
            st = bl_fail(err, BL_ERR_FORMAT, "%s: edges[%d]: the mean n_syn is %g (0 or beyond a double)", path, k,
                         f->et_mean_nsyn[k]);
            goto out;
        }
    }
    if (f->n_edges > INT32_MAX) {
        st = bl_fail(err, BL_ERR_INVALID, "flyvis: %zu edges are too many", f->n_edges);
        goto out;
    }
    /* By target, each row in flyvis's order (a stable counting sort). */
    f->row = calloc(f->n_cells + 1, sizeof *f->row);
    f->c_src = malloc((f->n_edges + 1) * sizeof *f->c_src);
    f->c_off = malloc((f->n_edges + 1) * sizeof *f->c_off);
    if (!f->row || !f->c_src || !f->c_off) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory for %zu edges", path, f->n_edges);
        goto out;
    }
    for (size_t e = 0; e < f->n_edges; e++)
        f->row[f->e_tar[e] + 1]++;
    for (size_t i = 0; i < f->n_cells; i++)
        f->row[i + 1] += f->row[i];
    size_t *fillp = malloc((f->n_cells + 1) * sizeof *fillp);
    if (!fillp) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        goto out;
    }
    memcpy(fillp, f->row, (f->n_cells + 1) * sizeof *fillp);
    for (size_t e = 0; e < f->n_edges; e++) {
        const size_t p = fillp[f->e_tar[e]]++;
        f->c_src[p] = (int32_t)f->e_src[e];
        f->c_off[p] = (uint16_t)f->e_off[e];
    }
    /* By source, likewise: the adjoint gathers instead of scattering. */
    f->col = calloc(f->n_cells + 1, sizeof *f->col);
    f->t_tar = malloc((f->n_edges + 1) * sizeof *f->t_tar);
    f->t_off = malloc((f->n_edges + 1) * sizeof *f->t_off);
    if (!f->col || !f->t_tar || !f->t_off) {
        free(fillp);
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory for %zu edges", path, f->n_edges);
        goto out;
    }
    for (size_t e = 0; e < f->n_edges; e++)
        f->col[f->e_src[e] + 1]++;
    for (size_t i = 0; i < f->n_cells; i++)
        f->col[i + 1] += f->col[i];
    memcpy(fillp, f->col, (f->n_cells + 1) * sizeof *fillp);
    for (size_t e = 0; e < f->n_edges; e++) {
        const size_t p = fillp[f->e_src[e]]++;
        f->t_tar[p] = (int32_t)f->e_tar[e];
        f->t_off[p] = (uint16_t)f->e_off[e];
    }
    free(fillp);
out:
    cJSON_Delete(doc);
    free(stride);
    free(at);
    free(o.uv);
    free(o.n);
    if (st) {
        bl_flyvis_destroy(f);
        return st;
    }
    *out = f;
    return BL_OK;
}

/* ---- the model and its adjoint ---- */

/* The photoreceptor input of cell i at time t (0 for non-input cells). */
static double input_at(const bl_flyvis *f, const bl_flyvis_options *o, size_t i, double t)
{
    if (!f->is_input[f->cell_type[i]])
        return 0.0;
    const double p = (double)f->cell_u[i] + 0.5 * (double)f->cell_v[i];
    return p <= o->edge_start + o->edge_speed * t ? o->edge_on : o->edge_off;
}

bl_status bl_flyvis_run(const bl_flyvis *f, const bl_flyvis_options *o, const double *tau, const double *bias,
                        const double *strength, double *V, size_t n_keep, const size_t *keep, double *kept,
                        double *J, double *g_tau, double *g_bias, double *g_strength, bl_error *err)
{
    const size_t n = f->n_cells, K = o->steps, nt = f->n_types;
    const double dt = o->dt;
    if (!(dt > 0) || !isfinite(dt) || K < 1 || K > ((size_t)1 << 24))
        return bl_fail(err, BL_ERR_INVALID, "flyvis: dt must be > 0 and steps within 1..%d", 1 << 24);
    if (o->objective_type < 0 || (size_t)o->objective_type >= nt)
        return bl_fail(err, BL_ERR_INVALID, "flyvis: objective cell type %d does not exist", o->objective_type);
    if (!isfinite(o->edge_speed) || !isfinite(o->edge_start) || !isfinite(o->edge_on) || !isfinite(o->edge_off))
        return bl_fail(err, BL_ERR_INVALID, "flyvis: the edge stimulus needs finite numbers");
    for (size_t t = 0; t < nt; t++)
        if (!(tau[t] >= dt) || !isfinite(tau[t]) || !isfinite(bias[t]))
            return bl_fail(err, BL_ERR_INVALID,
                           "flyvis: cell type %zu (%s): tau = %g must be finite and >= dt = %g, bias finite", t,
                           f->type_name[t], tau[t], dt);
    for (size_t k = 0; k < f->n_etypes; k++)
        if (!isfinite(strength[k]))
            return bl_fail(err, BL_ERR_INVALID, "flyvis: edge type %zu strength is not finite", k);
    for (size_t j = 0; j < n_keep; j++)
        if (keep[j] >= n)
            return bl_fail(err, BL_ERR_INVALID, "flyvis: kept cell %zu does not exist (%zu cells)", keep[j], n);
    const int adjoint = g_tau || g_bias || g_strength;
    if ((K + 1) > SIZE_MAX / sizeof(double) / n)
        return bl_fail(err, BL_ERR_NOMEM, "flyvis: %zu steps x %zu cells overflow", K, n);
    double *Vown = NULL, *w = malloc((f->n_offs + 1) * sizeof *w), *r = malloc(n * sizeof *r),
           *cb = malloc(n * sizeof *cb), *cit = malloc(n * sizeof *cit), *lam = NULL, *gv = NULL, *mu = NULL,
           *gt = NULL, *gb = NULL, *gs = NULL, *A = NULL;
    bl_status st = BL_OK;
    if (!V && !(V = Vown = malloc((K + 1) * n * sizeof *V)))
        st = bl_fail(err, BL_ERR_NOMEM, "flyvis: out of memory for %zu x %zu states", K + 1, n);
    if (!st && (!w || !r || !cb || !cit))
        st = bl_fail(err, BL_ERR_NOMEM, "flyvis: out of memory");
    if (!st && adjoint &&
        (!(lam = malloc(n * sizeof *lam)) || !(gv = malloc(n * sizeof *gv)) || !(mu = malloc(n * sizeof *mu)) ||
         !(gt = calloc(nt, sizeof *gt)) || !(gb = calloc(nt, sizeof *gb)) || !(A = malloc(K * n * sizeof *A)) ||

         !(gs = calloc(f->n_etypes + 1, sizeof *gs))))
        st = bl_fail(err, BL_ERR_NOMEM, "flyvis: out of memory for the adjoint");
    if (st)
        goto out;
    /* Per edge and per cell, as the PyTorch oracle forms them:
     * w = (sign * n_syn) * strength, 1 / tau gathered per cell. */
    for (size_t q = 0; q < f->n_offs; q++)
        w[q] = f->off_coef[q] * strength[f->off_type[q]]; /* per offset: every edge's weight */
    for (size_t i = 0; i < n; i++) {
        cb[i] = bias[f->cell_type[i]];
        cit[i] = 1.0 / tau[f->cell_type[i]];
        V[i] = cb[i];
    }
    /* Forward: V_{k+1} = V_k + dt * ((1/tau) * (((-V_k + b) + s) + x)),
     * s_i = sum over row i in order of w_e * relu(V_src). */
    for (size_t k = 0; k < K; k++) {
        const double *v = V + k * n;
        double *vn = V + (k + 1) * n;
        const double t = (double)k * dt;
        for (size_t i = 0; i < n; i++)
            r[i] = v[i] > 0 ? v[i] : 0.0;
        /* Two rows at a time: each row's sum keeps its own order (so the
         * result is unchanged), and the two dependent chains of additions
         * overlap in the pipeline. */
        for (size_t i = 0; i < n; i += 2) {
            const size_t i1 = i + 1 < n ? i + 1 : i;
            size_t e0 = f->row[i], e1 = f->row[i1];
            const size_t end0 = f->row[i + 1], end1 = i1 > i ? f->row[i1 + 1] : e1;
            double s0 = 0.0, s1 = 0.0;
            for (; e0 < end0 && e1 < end1; e0++, e1++) {
                s0 += w[f->c_off[e0]] * r[f->c_src[e0]];
                s1 += w[f->c_off[e1]] * r[f->c_src[e1]];
            }
            for (; e0 < end0; e0++)
                s0 += w[f->c_off[e0]] * r[f->c_src[e0]];
            for (; e1 < end1; e1++)
                s1 += w[f->c_off[e1]] * r[f->c_src[e1]];
            for (size_t q = i; q <= i1; q++) {
                const double a = -v[q] + cb[q] + (q == i ? s0 : s1) + input_at(f, o, q, t);
                if (A) /* kept for the adjoint's dJ/dtau */
                    A[k * n + q] = a;
                vn[q] = v[q] + dt * (cit[q] * a);
            }
        }
    }
    /* A diverged run (strengths too large for dt) is an error, not a record
     * of NaNs: a non-finite potential stays non-finite to the last step. */
    for (size_t i = 0; i < n; i++)
        if (!isfinite(V[K * n + i])) {
            st = bl_fail(err, BL_ERR_INVALID,
                         "flyvis: the potential of cell %zu (%s, column %d, %d) is not finite after %zu steps: the "
                         "rates diverged (lower the strengths or dt)", i, f->type_name[f->cell_type[i]],
                         f->cell_u[i], f->cell_v[i], K);
            goto out;
        }
    /* J = sum_{k=1..K} sum_{i of the type} V^2 / (K n_c). */
    const int ct = o->objective_type;
    size_t nc = 0;
    for (size_t i = 0; i < n; i++)
        nc += f->cell_type[i] == ct;
    const double scale = 1.0 / ((double)K * (double)nc);
    double acc = 0;
    for (size_t k = 1; k <= K; k++)
        for (size_t i = 0; i < n; i++)
            if (f->cell_type[i] == ct)
                acc += V[k * n + i] * V[k * n + i];
    if (J)
        *J = acc * scale;
    for (size_t j = 0; kept && j < n_keep; j++)
        for (size_t k = 0; k <= K; k++)
            kept[k * n_keep + j] = V[k * n + keep[j]];
    if (!adjoint)
        goto out;
    /* Backward. lam = dJ/dV_{k+1}; mu_i = lam_i * dt * (1/tau_i) = dJ/da_i.
     *   dJ/dV_k,j = lam_j - mu_j + relu'(V_k,j) sum_i w_ij mu_i (+ the seed at k >= 1)
     *   dJ/db_t += mu_i, dJ/dtau_t += lam_i dt a_i d(1/tau)/dtau = -mu_i a_i / tau_i
     *   dJ/dstrength_k += mu_i * sign * n_syn * relu(V_k,src)
     * and finally dJ/db_t += dJ/dV_0,i (V_0 = b). */
    for (size_t i = 0; i < n; i++)
        lam[i] = f->cell_type[i] == ct ? scale * (2.0 * V[K * n + i]) : 0.0;
    for (size_t k = K; k-- > 0;) {
        const double *v = V + k * n, *ak = A + k * n;
        for (size_t i = 0; i < n; i++)
            mu[i] = lam[i] * dt * cit[i];
        /* By source j: both of its terms carry relu(V_j) or relu'(V_j), so
         * an inactive source adds nothing (skipping it changes no value).
         * A column holds its edge types in runs (flyvis's order is edge type
         * first): each run's sum of sign * n_syn * mu_target is scaled by
         * relu(V_j) once, into its strength's gradient. */
        for (size_t j = 0; j < n; j++) {
            double l = lam[j] - mu[j];
            if (v[j] > 0) {
                const double rj = v[j];
                double g = 0.0;
                for (size_t e = f->col[j], end = f->col[j + 1]; e < end;) {
                    const uint16_t et = f->off_type[f->t_off[e]];
                    double run = 0.0;
                    for (; e < end && f->off_type[f->t_off[e]] == et; e++) {
                        const double m = mu[f->t_tar[e]];
                        g += w[f->t_off[e]] * m;
                        run += f->off_coef[f->t_off[e]] * m;
                    }
                    gs[et] += rj * run;
                }
                l += g;
            }
            if (k >= 1 && f->cell_type[j] == ct)
                l += scale * (2.0 * v[j]);
            lam[j] = l; /* mu holds what the other cells need of the old lam */
        }
        for (size_t i = 0; i < n; i++)
            if (mu[i] != 0.0) {
                const size_t ty = (size_t)f->cell_type[i];
                gb[ty] += mu[i];
                gt[ty] -= mu[i] * ak[i] * cit[i];
            }
    }
    for (size_t i = 0; i < n; i++)
        gb[f->cell_type[i]] += lam[i];
    for (size_t q = 0; q < nt + nt + f->n_etypes; q++) {
        const double g = q < nt ? gt[q] : q < 2 * nt ? gb[q - nt] : gs[q - 2 * nt];
        if (!isfinite(g)) {
            st = bl_fail(err, BL_ERR_INVALID, "flyvis: the gradient with respect to %s %zu is not finite (the "
                         "adjoint overflowed: lower the strengths or dt)",
                         q < nt ? "tau of cell type" : q < 2 * nt ? "bias of cell type" : "strength of edge type",
                         q < nt ? q : q < 2 * nt ? q - nt : q - 2 * nt);
            goto out;
        }
    }
    if (g_tau)
        memcpy(g_tau, gt, nt * sizeof *gt);
    if (g_bias)
        memcpy(g_bias, gb, nt * sizeof *gb);
    if (g_strength)
        memcpy(g_strength, gs, f->n_etypes * sizeof *gs);
out:
    free(Vown);
    free(w);
    free(r);
    free(cb);
    free(cit);
    free(lam);
    free(gv);
    free(mu);
    free(gt);
    free(gb);
    free(gs);
    free(A);
    return st;
}
