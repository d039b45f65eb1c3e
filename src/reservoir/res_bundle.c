/* Explicit-state bundles: a directory of .npy files plus node.json (the kind,
 * the parameters and the plasticity flags). Any numeric dtype is accepted
 * where the value converts to float64 exactly (hand-written NumPy arrays are
 * often int64); everything is validated and a failure names the file and the
 * index. Layouts: reservoir.h and docs/reservoir.md. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "brainlesslab/npy.h"
#include "reservoir/res_impl.h"
#include "reservoir/res_kind.h"
#include "core/json_check.h"

#define BUNDLE_FORMAT "brainlesslab-reservoir-bundle"
#define BUNDLE_VERSION 1
#define NODE_JSON_MAX (1 << 20)

typedef struct arr {
    int found;
    int ndim;
    uint64_t shape[2];
    uint64_t count;
    double *v; /* malloc'd, count values (at least one slot) */
} arr;

static void arr_free(arr *a)
{
    free(a->v);
    memset(a, 0, sizeof *a);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void index_text(char *buf, size_t size, const arr *a, uint64_t flat)
{
    if (a->ndim == 2 && a->shape[1])
        snprintf(buf, size, "[%" PRIu64 ", %" PRIu64 "]", flat / a->shape[1], flat % a->shape[1]);
    else
        snprintf(buf, size, "[%" PRIu64 "]", flat);
}

bl_status bl_res_read_npy_f64(const char *path, int ndim, int allow_nonfinite, double **values, uint64_t *shape,
                              bl_error *err)
{
    *values = NULL;
    bl_npy_array a;
    bl_status st = bl_npy_read(path, &a, err);
    if (st)
        return st;
    if (a.ndim != ndim) {
        bl_npy_free(&a);
        return bl_fail(err, BL_ERR_FORMAT, "%s: expected %d dimension%s, got %d", path, ndim, ndim == 1 ? "" : "s",
                       a.ndim);
    }
    for (int d = 0; d < ndim; d++)
        shape[d] = a.shape[d];
    double *v = malloc((a.count ? a.count : 1) * sizeof *v);
    if (!v) {
        bl_npy_free(&a);
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate %" PRIu64 " values", path, a.count);
    }
    for (uint64_t k = 0; k < a.count && !st; k++) {
        double x = 0.0;
        int exact = 1;
        switch (a.dtype) {
        case BL_DTYPE_BOOL: x = ((const uint8_t *)a.data)[k] ? 1.0 : 0.0; break;
        case BL_DTYPE_INT8: x = ((const int8_t *)a.data)[k]; break;
        case BL_DTYPE_UINT8: x = ((const uint8_t *)a.data)[k]; break;
        case BL_DTYPE_INT32: x = ((const int32_t *)a.data)[k]; break;
        case BL_DTYPE_UINT32: x = ((const uint32_t *)a.data)[k]; break;
        case BL_DTYPE_INT64: {
            int64_t i = ((const int64_t *)a.data)[k];
            exact = i >= -(INT64_C(1) << 53) && i <= (INT64_C(1) << 53);
            x = (double)i;
            break;
        }
        case BL_DTYPE_UINT64: {
            uint64_t u = ((const uint64_t *)a.data)[k];
            exact = u <= (UINT64_C(1) << 53);
            x = (double)u;
            break;
        }
        case BL_DTYPE_FLOAT32: x = ((const float *)a.data)[k]; break;
        case BL_DTYPE_FLOAT64: x = ((const double *)a.data)[k]; break;
        }
        if (!exact || (!allow_nonfinite && !isfinite(x))) {
            char at[64];
            if (ndim == 2 && a.shape[1])
                snprintf(at, sizeof at, "[%" PRIu64 ", %" PRIu64 "]", k / a.shape[1], k % a.shape[1]);
            else if (ndim == 3 && a.shape[1] && a.shape[2])
                snprintf(at, sizeof at, "[%" PRIu64 ", %" PRIu64 ", %" PRIu64 "]", k / (a.shape[1] * a.shape[2]),
                         k / a.shape[2] % a.shape[1], k % a.shape[2]);
            else
                snprintf(at, sizeof at, "[%" PRIu64 "]", k);
            st = bl_fail(err, BL_ERR_INVALID, "%s: %s is %s", path, at,
                         exact ? "not finite" : "an integer too large to be a float64 exactly");
        }
        v[k] = x;
    }
    bl_npy_free(&a);
    if (st)
        free(v);
    else
        *values = v;
    return st;
}

/* Read DIR/NAME.npy (ndim 1 or 2, finite). Absent and not required: found = 0. */
static bl_status read_arr(const char *dir, const char *name, int required, int ndim, arr *out, bl_error *err)
{
    char path[4096];
    memset(out, 0, sizeof *out);
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    if (!is_file(path)) {
        if (required)
            return bl_fail(err, BL_ERR_IO, "%s: missing (the bundle needs %s.npy)", path, name);
        return BL_OK;
    }
    bl_status st = bl_res_read_npy_f64(path, ndim, 0, &out->v, out->shape, err);
    if (st)
        return st;
    out->found = 1;
    out->ndim = ndim;
    out->count = ndim == 1 ? out->shape[0] : out->shape[0] * out->shape[1];
    return BL_OK;
}

static bl_status expect_shape(const char *dir, const char *name, const arr *a, uint64_t d0, uint64_t d1,
                              bl_error *err)
{
    int ok = a->shape[0] == d0 && (a->ndim == 1 || a->shape[1] == d1);
    if (ok)
        return BL_OK;
    if (a->ndim == 1)
        return bl_fail(err, BL_ERR_FORMAT, "%s/%s.npy: shape (%" PRIu64 ",), expected (%" PRIu64 ",)", dir, name,
                       a->shape[0], d0);
    return bl_fail(err, BL_ERR_FORMAT, "%s/%s.npy: shape (%" PRIu64 ", %" PRIu64 "), expected (%" PRIu64 ", %" PRIu64
                   ")", dir, name, a->shape[0], a->shape[1], d0, d1);
}

static bl_status expect_binary(const char *dir, const char *name, const arr *a, bl_error *err)
{
    for (uint64_t k = 0; k < a->count; k++)
        if (a->v[k] != 0.0 && a->v[k] != 1.0) {
            char at[64];
            index_text(at, sizeof at, a, k);
            return bl_fail(err, BL_ERR_INVALID, "%s/%s.npy: %s = %.17g is not 0 or 1", dir, name, at, a->v[k]);
        }
    return BL_OK;
}

/* Weights must sit on links: w[i,j] != 0 needs mask[i,j] = 1. */
static bl_status expect_on_mask(const char *dir, const char *wname, const arr *w, const char *mname,
                                const arr *mask, bl_error *err)
{
    for (uint64_t k = 0; k < w->count; k++)
        if (w->v[k] != 0.0 && mask->v[k] == 0.0) {
            char at[64];
            index_text(at, sizeof at, w, k);
            return bl_fail(err, BL_ERR_INVALID, "%s/%s.npy: %s = %.17g but %s.npy has no link there "
                           "(weights off the link mask are not allowed)", dir, wname, at, w->v[k], mname);
        }
    return BL_OK;
}

static bl_status dims_ok(const char *dir, const char *what, uint64_t v, uint64_t lo, uint64_t hi, bl_error *err)
{
    if (v < lo || v > hi)
        return bl_fail(err, BL_ERR_INVALID, "%s: %s = %" PRIu64 " is out of range %" PRIu64 "..%" PRIu64, dir, what,
                       v, lo, hi);
    return BL_OK;
}

/* ---- node.json ---- */

static bl_status read_text(const char *path, char **out, bl_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return bl_fail(err, BL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    char *buf = malloc(NODE_JSON_MAX + 1);
    size_t n = buf ? fread(buf, 1, NODE_JSON_MAX + 1, f) : 0;
    int bad = ferror(f);
    fclose(f);
    if (!buf)
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate", path);
    if (bad || n > NODE_JSON_MAX) {
        free(buf);
        return bl_fail(err, bad ? BL_ERR_IO : BL_ERR_FORMAT, "%s: %s", path,
                       bad ? "read error" : "larger than 1 MiB");
    }
    buf[n] = '\0';
    *out = buf;
    return BL_OK;
}

typedef struct node_info {
    bl_res_params p;
    int learning_weights, learning; /* -1: not given */
    uint64_t frames;
    bl_res_dtype dtype; /* "dtype" (float64 when absent) */
} node_info;

static bl_status parse_node(const char *path, const char *text, node_info *ni, bl_error *err)
{
    cJSON *root = cJSON_Parse(text);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return bl_fail(err, BL_ERR_FORMAT, "%s: not a JSON object", path);
    }
    bl_status st = BL_OK;
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
    bl_res_kind k;
    char kinds[128];
    if (!cJSON_IsString(kind) || bl_res_kind_parse(kind->valuestring, &k))
        st = bl_fail(err, BL_ERR_INVALID, "%s: \"kind\" must be %s", path, bl_res_kind_names(kinds, sizeof kinds));
    else
        bl_res_params_default(k, &ni->p);
    ni->learning_weights = ni->learning = -1;
    ni->frames = 0;
    ni->dtype = BL_RES_FLOAT64;
    for (const cJSON *it = root->child; it && !st; it = it->next) {
        const char *key = it->string ? it->string : "";
        if (!strcmp(key, "kind")) {
            continue;
        } else if (!strcmp(key, "format")) {
            if (!cJSON_IsString(it) || strcmp(it->valuestring, BUNDLE_FORMAT))
                st = bl_fail(err, BL_ERR_INVALID, "%s: \"format\" must be \"%s\"", path, BUNDLE_FORMAT);
        } else if (!strcmp(key, "format_version")) {
            if (!cJSON_IsNumber(it) || it->valuedouble != BUNDLE_VERSION)
                st = bl_fail(err, BL_ERR_UNSUPPORTED, "%s: \"format_version\" must be %d", path, BUNDLE_VERSION);
        } else if (!strcmp(key, "learning_weights") || !strcmp(key, "learning")) {
            if (!cJSON_IsBool(it))
                st = bl_fail(err, BL_ERR_INVALID, "%s: \"%s\" must be true or false", path, key);
            else if (!strcmp(key, "learning"))
                ni->learning = cJSON_IsTrue(it);
            else
                ni->learning_weights = cJSON_IsTrue(it);
        } else if (!strcmp(key, "dtype")) {
            if (!cJSON_IsString(it) || bl_res_dtype_parse(it->valuestring, &ni->dtype))
                st = bl_fail(err, BL_ERR_INVALID, "%s: \"dtype\" must be \"float64\" or \"float32\"", path);
        } else if (!strcmp(key, "frames")) {
            if (!cJSON_IsNumber(it) || it->valuedouble < 0 || it->valuedouble > 9007199254740992.0 ||
                it->valuedouble != floor(it->valuedouble))
                st = bl_fail(err, BL_ERR_INVALID, "%s: \"frames\" must be a whole number >= 0", path);
            else
                ni->frames = (uint64_t)it->valuedouble;
        } else if (!strcmp(key, "parameters")) {
            if (!cJSON_IsObject(it)) {
                st = bl_fail(err, BL_ERR_INVALID, "%s: \"parameters\" must be an object", path);
                break;
            }
            for (const cJSON *q = it->child; q && !st; q = q->next) {
                const char *name = q->string ? q->string : "";
                if (cJSON_IsBool(q))
                    st = bl_res_params_set(&ni->p, name, cJSON_IsTrue(q) ? 1.0 : 0.0, err);
                else if (cJSON_IsNumber(q))
                    st = bl_res_params_set(&ni->p, name, q->valuedouble, err);
                else if (cJSON_IsString(q))
                    st = bl_res_params_set_string(&ni->p, name, q->valuestring, err);
                else
                    st = bl_fail(err, BL_ERR_INVALID, "parameter %s: expected a number, boolean or string", name);
                if (st)
                    bl_fail_context(err, "%s: parameters", path);
            }
        } else {
            st = bl_fail(err, BL_ERR_INVALID, "%s: unknown key \"%.64s\" (allowed: format, format_version, kind, "
                         "parameters, learning_weights, learning, frames, dtype)", path, key);
        }
    }
    cJSON_Delete(root);
    if (!st && (st = bl_res_params_validate(&ni->p, err)))
        bl_fail_context(err, "%s", path);
    return st;
}

static bl_status read_node(const char *dir, node_info *ni, int *found, bl_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/node.json", dir);
    *found = 0;
    if (!is_file(path))
        return BL_OK;
    char *text = NULL;
    bl_status st = read_text(path, &text, err);
    if (st)
        return st;
    st = parse_node(path, text, ni, err);
    free(text);
    *found = !st;
    return st;
}

bl_status bl_res_bundle_params(const char *dir, bl_res_params *out, int *found, bl_error *err)
{
    node_info ni;
    bl_status st = read_node(dir, &ni, found, err);
    if (!st && *found)
        *out = ni.p;
    return st;
}

/* ---- load ---- */

#define NARR 11

bl_status bl_res_load_falandays(const char *dir, const bl_res_params *p, bl_res_state **out, bl_error *err)
{
    arr w, mask, signs, w_in, w_out, acts, targets, spikes;
    arr *all[] = {&w, &mask, &signs, &w_in, &w_out, &acts, &targets, &spikes};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        memset(all[k], 0, sizeof(arr));
    bl_status st;
    if ((st = read_arr(dir, "w", 1, 2, &w, err)) || (st = read_arr(dir, "mask", 0, 2, &mask, err)) ||
        (st = read_arr(dir, "signs", 0, 1, &signs, err)) || (st = read_arr(dir, "w_in", 1, 2, &w_in, err)) ||
        (st = read_arr(dir, "w_out", 1, 2, &w_out, err)) || (st = read_arr(dir, "acts", 0, 1, &acts, err)) ||
        (st = read_arr(dir, "targets", 0, 1, &targets, err)) || (st = read_arr(dir, "spikes", 0, 1, &spikes, err)))
        goto done;
    const uint64_t n = w.shape[0];
    if ((st = dims_ok(dir, "units (w.npy rows)", n, 1, BL_RES_MAX_UNITS, err)) ||
        (st = expect_shape(dir, "w", &w, n, n, err)) ||
        (mask.found && (st = expect_shape(dir, "mask", &mask, n, n, err))) ||
        (mask.found && (st = expect_binary(dir, "mask", &mask, err))) ||
        (st = dims_ok(dir, "inputs (w_in.npy columns)", w_in.shape[1], 1, BL_RES_MAX_PORTS, err)) ||
        (st = expect_shape(dir, "w_in", &w_in, n, w_in.shape[1], err)) ||
        (st = dims_ok(dir, "effectors (w_out.npy rows)", w_out.shape[0], 1, BL_RES_MAX_PORTS, err)) ||
        (st = expect_shape(dir, "w_out", &w_out, w_out.shape[0], n, err)) ||
        (signs.found && (st = expect_shape(dir, "signs", &signs, n, 0, err))) ||
        (acts.found && (st = expect_shape(dir, "acts", &acts, n, 0, err))) ||
        (targets.found && (st = expect_shape(dir, "targets", &targets, n, 0, err))) ||
        (spikes.found && (st = expect_shape(dir, "spikes", &spikes, n, 0, err))) ||
        (spikes.found && (st = expect_binary(dir, "spikes", &spikes, err))) ||
        (mask.found && (st = expect_on_mask(dir, "w", &w, "mask", &mask, err))))
        goto done;
    for (uint64_t k = 0; signs.found && k < n; k++) {
        if (signs.v[k] != 1.0 && signs.v[k] != -1.0) {
            st = bl_fail(err, BL_ERR_INVALID, "%s/signs.npy: [%" PRIu64 "] = %.17g is not +1 or -1", dir, k, signs.v[k]);
            goto done;
        }
        if (!p->dale && signs.v[k] != 1.0) {
            st = bl_fail(err, BL_ERR_INVALID, "%s/signs.npy: [%" PRIu64 "] = -1 but the node is unsigned "
                         "(set dale = true / axis = \"dale\" for signed units)", dir, k);
            goto done;
        }
    }
    for (uint64_t k = 0; k < w_out.count; k++)
        if (w_out.v[k] < 0.0) {
            char at[64];
            index_text(at, sizeof at, &w_out, k);
            st = bl_fail(err, BL_ERR_INVALID, "%s/w_out.npy: %s = %.17g is negative", dir, at, w_out.v[k]);
            goto done;
        }
    {
        uint32_t *len = calloc(n, sizeof *len);
        if (!len) {
            st = bl_fail(err, BL_ERR_NOMEM, "cannot allocate %" PRIu64 " rows", n);
            goto done;
        }
        for (uint64_t i = 0; i < n; i++)
            for (uint64_t j = 0; j < n; j++)
                len[i] += mask.found ? mask.v[i * n + j] != 0.0 : w.v[i * n + j] != 0.0;
        bl_res_state *s;
        st = bl_res_state_alloc(p, (uint32_t)n, (uint32_t)w_in.shape[1], (uint32_t)w_out.shape[0], (uint32_t)n, len,
                                &s, err);
        free(len);
        if (st)
            goto done;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t k = s->row_start[i];
            for (uint64_t j = 0; j < n; j++) {
                int link = mask.found ? mask.v[i * n + j] != 0.0 : w.v[i * n + j] != 0.0;
                if (link) {
                    s->col[k] = (uint32_t)j;
                    s->w[k] = w.v[i * n + j];
                    k++;
                }
            }
            s->sign[i] = signs.found ? signs.v[i] : 1.0;
            s->acts[i] = acts.found ? acts.v[i] : 0.0;
            s->thr[i] = targets.found ? targets.v[i] : p->targ_min;
            s->spikes[i] = spikes.found ? spikes.v[i] : 0.0;
        }
        memcpy(s->w_in, w_in.v, w_in.count * sizeof *s->w_in);
        memcpy(s->w_out, w_out.v, w_out.count * sizeof *s->w_out);
        bl_res_state_finish(s);
        *out = s;
    }
done:
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        arr_free(all[k]);
    return st;
}

bl_status bl_res_load_sorn(const char *dir, const bl_res_params *p, bl_res_state **out, bl_error *err)
{
    arr w_ee, mask_ee, c_e, w_ei, w_ie, w_eu, w_out, t_e, t_i, x, y;
    arr *all[NARR] = {&w_ee, &mask_ee, &c_e, &w_ei, &w_ie, &w_eu, &w_out, &t_e, &t_i, &x, &y};
    for (size_t k = 0; k < NARR; k++)
        memset(all[k], 0, sizeof(arr));
    bl_status st;
    if ((st = read_arr(dir, "w_ee", 1, 2, &w_ee, err)) || (st = read_arr(dir, "mask_ee", 0, 2, &mask_ee, err)) ||
        (st = read_arr(dir, "c_e", 0, 1, &c_e, err)) || (st = read_arr(dir, "w_ei", 0, 2, &w_ei, err)) ||
        (st = read_arr(dir, "w_ie", 0, 2, &w_ie, err)) || (st = read_arr(dir, "w_eu", 1, 2, &w_eu, err)) ||
        (st = read_arr(dir, "w_out", 1, 2, &w_out, err)) || (st = read_arr(dir, "t_e", 1, 1, &t_e, err)) ||
        (st = read_arr(dir, "t_i", 0, 1, &t_i, err)) || (st = read_arr(dir, "x", 0, 1, &x, err)) ||
        (st = read_arr(dir, "y", 0, 1, &y, err)))
        goto done;
    const uint64_t ne = w_ee.shape[0], ni = t_i.found ? t_i.shape[0] : 0;
    if ((st = dims_ok(dir, "excitatory units (w_ee.npy rows)", ne, 1, BL_RES_MAX_UNITS, err)) ||
        (st = dims_ok(dir, "units (N_E + N_I)", ne + ni, 1, BL_RES_MAX_UNITS, err)) ||
        (st = expect_shape(dir, "w_ee", &w_ee, ne, ne, err)) ||
        (mask_ee.found && (st = expect_shape(dir, "mask_ee", &mask_ee, ne, ne, err))) ||
        (mask_ee.found && (st = expect_binary(dir, "mask_ee", &mask_ee, err))) ||
        (c_e.found && (st = expect_shape(dir, "c_e", &c_e, ne, 0, err))) ||
        (st = dims_ok(dir, "inputs (w_eu.npy columns)", w_eu.shape[1], 1, BL_RES_MAX_PORTS, err)) ||
        (st = expect_shape(dir, "w_eu", &w_eu, ne, w_eu.shape[1], err)) ||
        (st = dims_ok(dir, "effectors (w_out.npy rows)", w_out.shape[0], 1, BL_RES_MAX_PORTS, err)) ||
        (st = expect_shape(dir, "w_out", &w_out, w_out.shape[0], ne, err)) ||
        (st = expect_binary(dir, "w_out", &w_out, err)) ||
        (st = expect_shape(dir, "t_e", &t_e, ne, 0, err)) ||
        (x.found && (st = expect_shape(dir, "x", &x, ne, 0, err))) ||
        (x.found && (st = expect_binary(dir, "x", &x, err))) ||
        (y.found && (st = expect_shape(dir, "y", &y, ni, 0, err))) ||
        (y.found && (st = expect_binary(dir, "y", &y, err))) ||
        (mask_ee.found && (st = expect_on_mask(dir, "w_ee", &w_ee, "mask_ee", &mask_ee, err))))
        goto done;
    if (ni > 0 && (!w_ei.found || !w_ie.found)) {
        st = bl_fail(err, BL_ERR_IO, "%s: t_i.npy gives %" PRIu64 " inhibitory units, so w_ei.npy and w_ie.npy are "
                     "required", dir, ni);
        goto done;
    }
    if ((w_ei.found && (st = expect_shape(dir, "w_ei", &w_ei, ne, ni, err))) ||
        (w_ie.found && (st = expect_shape(dir, "w_ie", &w_ie, ni, ne, err))))
        goto done;
    {
        uint32_t *len = calloc(ne, sizeof *len);
        if (!len) {
            st = bl_fail(err, BL_ERR_NOMEM, "cannot allocate %" PRIu64 " rows", ne);
            goto done;
        }
        for (uint64_t i = 0; i < ne; i++)
            for (uint64_t j = 0; j < ne; j++)
                len[i] += mask_ee.found ? mask_ee.v[i * ne + j] != 0.0 : w_ee.v[i * ne + j] != 0.0;
        bl_res_state *s;
        st = bl_res_state_alloc(p, (uint32_t)(ne + ni), (uint32_t)w_eu.shape[1], (uint32_t)w_out.shape[0],
                                (uint32_t)ne, len, &s, err);
        free(len);
        if (st)
            goto done;
        for (uint64_t i = 0; i < ne; i++) {
            uint64_t k = s->row_start[i];
            double total = 0.0;
            for (uint64_t j = 0; j < ne; j++) {
                int link = mask_ee.found ? mask_ee.v[i * ne + j] != 0.0 : w_ee.v[i * ne + j] != 0.0;
                if (link) {
                    s->col[k] = (uint32_t)j;
                    s->w[k] = w_ee.v[i * ne + j];
                    total = total + s->w[k];
                    k++;
                }
            }
            s->c_e[i] = c_e.found ? c_e.v[i] : total; /* the ascending row sum by default */
            s->thr[i] = t_e.v[i];
            s->spikes[i] = x.found ? x.v[i] : 0.0;
        }
        for (uint64_t k = 0; k < ni; k++) {
            s->thr[ne + k] = t_i.v[k];
            s->spikes[ne + k] = y.found ? y.v[k] : 0.0;
        }
        if (ni > 0) {
            memcpy(s->w_ei, w_ei.v, w_ei.count * sizeof *s->w_ei);
            memcpy(s->w_ie, w_ie.v, w_ie.count * sizeof *s->w_ie);
        }
        memcpy(s->w_in, w_eu.v, w_eu.count * sizeof *s->w_in);
        memcpy(s->w_out, w_out.v, w_out.count * sizeof *s->w_out);
        bl_res_state_finish(s);
        *out = s;
    }
done:
    for (size_t k = 0; k < NARR; k++)
        arr_free(all[k]);
    return st;
}

bl_status bl_res_state_load(const char *dir, const bl_res_params *params, bl_res_state **out, bl_error *err)
{
    *out = NULL;
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return bl_fail(err, BL_ERR_IO, "%s: not a bundle directory (a directory of .npy files; .npz is not read, "
                       "unpack it first)", dir);
    node_info ni;
    int found = 0;
    bl_status st = read_node(dir, &ni, &found, err);
    if (st)
        return st;
    if (params) {
        if ((st = bl_res_params_validate(params, err)))
            return st;
        ni.p = *params;
        found = 0; /* the given parameters replace node.json, flags included */
    } else if (!found) {
        return bl_fail(err, BL_ERR_IO, "%s: no node.json and no parameters given (which node kind is it?)", dir);
    }
    st = bl_res_kind_of(ni.p.kind)->load(dir, &ni.p, out, err);
    if (st || !found)
        return st;
    if (ni.learning_weights >= 0)
        (*out)->learn_weights = ni.learning_weights && (*out)->p.learn_on;
    if (ni.learning >= 0)
        (*out)->learn = ni.learning && (*out)->p.learn_on;
    if (!(*out)->learn)
        (*out)->learn_weights = 0;
    (*out)->frames = ni.frames;
    if (ni.dtype != BL_RES_FLOAT64) {
        /* saved from a float32 state: its values are floats, so the cast is exact */
        bl_res_state *c;
        st = bl_res_state_cast(*out, ni.dtype, &c, err);
        bl_res_state_destroy(*out);
        *out = st ? NULL : c;
        if (st)
            bl_fail_context(err, "%s", dir);
    }
    return st;
}

/* ---- save ---- */

static bl_status put(const char *dir, const char *name, bl_dtype dt, int ndim, uint64_t d0, uint64_t d1,
                     const void *data, bl_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    const uint64_t shape[2] = {d0, d1};
    static const double empty = 0.0;
    return bl_npy_write(path, dt, ndim, shape, data ? data : &empty, err);
}

static bl_status save_node(const bl_res_state *s, bl_res_dtype dtype, const char *dir, bl_error *err)
{
    cJSON *root = cJSON_CreateObject(), *params = cJSON_CreateObject();
    if (!root || !params) {
        cJSON_Delete(root);
        cJSON_Delete(params);
        return bl_fail(err, BL_ERR_NOMEM, "cannot build node.json");
    }
    cJSON_AddStringToObject(root, "format", BUNDLE_FORMAT);
    cJSON_AddNumberToObject(root, "format_version", BUNDLE_VERSION);
    cJSON_AddStringToObject(root, "kind", bl_res_kind_name(s->p.kind));
    for (const char *const *n = bl_res_param_names(s->p.kind); *n; n++) {
        double v = bl_res_params_get(&s->p, *n);
        if (bl_res_param_is_bool(s->p.kind, *n))
            cJSON_AddBoolToObject(params, *n, v != 0.0);
        else
            cJSON_AddNumberToObject(params, *n, v); /* cJSON prints %.17g when %.15g does not round-trip */
    }
    cJSON_AddItemToObject(root, "parameters", params);
    cJSON_AddBoolToObject(root, "learning_weights", s->learn_weights);
    cJSON_AddBoolToObject(root, "learning", s->learn);
    cJSON_AddNumberToObject(root, "frames", (double)s->frames);
    if (dtype != BL_RES_FLOAT64) /* float64 bundles stay as they were */
        cJSON_AddStringToObject(root, "dtype", bl_res_dtype_name(dtype));
    char *text = bl_json_print(root, 1);
    cJSON_Delete(root);
    if (!text)
        return bl_fail(err, BL_ERR_NOMEM, "cannot render node.json");
    char path[4096];
    snprintf(path, sizeof path, "%s/node.json", dir);
    FILE *f = fopen(path, "wb");
    bl_status st = BL_OK;
    if (!f || fprintf(f, "%s\n", text) < 0)
        st = bl_fail(err, BL_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    if (f && fclose(f) && !st)
        st = bl_fail(err, BL_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    free(text);
    return st;
}

static bl_status save_f64(const bl_res_state *s, bl_res_dtype dtype, const char *dir, bl_error *err);

bl_status bl_res_state_save(const bl_res_state *s, const char *dir, bl_error *err)
{
    if (s->dtype == BL_RES_FLOAT64)
        return save_f64(s, BL_RES_FLOAT64, dir, err);
    /* float32: its values widened exactly, and node.json says float32 */
    bl_res_state *wide;
    bl_status st = bl_res_state_cast(s, BL_RES_FLOAT64, &wide, err);
    if (!st)
        st = save_f64(wide, s->dtype, dir, err);
    bl_res_state_destroy(wide);
    return st;
}

/* Each kind's arrays, as the Python project's bundles name them. */
bl_status bl_res_save_falandays(const bl_res_state *s, const double *dense, const uint8_t *mask, const char *dir,
                                bl_error *err)
{
    bl_status st;
    if (!(st = put(dir, "w", BL_DTYPE_FLOAT64, 2, s->n, s->n, dense, err)) &&
        !(st = put(dir, "mask", BL_DTYPE_UINT8, 2, s->n, s->n, mask, err)) &&
        !(st = put(dir, "signs", BL_DTYPE_FLOAT64, 1, s->n, 0, s->sign, err)) &&
        !(st = put(dir, "w_in", BL_DTYPE_FLOAT64, 2, s->n, s->r, s->w_in, err)) &&
        !(st = put(dir, "w_out", BL_DTYPE_FLOAT64, 2, s->e, s->n, s->w_out, err)) &&
        !(st = put(dir, "acts", BL_DTYPE_FLOAT64, 1, s->n, 0, s->acts, err)) &&
        !(st = put(dir, "targets", BL_DTYPE_FLOAT64, 1, s->n, 0, s->thr, err)))
        st = put(dir, "spikes", BL_DTYPE_FLOAT64, 1, s->n, 0, s->spikes, err);
    return st;
}

bl_status bl_res_save_sorn(const bl_res_state *s, const double *dense, const uint8_t *mask, const char *dir,
                           bl_error *err)
{
    bl_status st;
    if (!(st = put(dir, "w_ee", BL_DTYPE_FLOAT64, 2, s->ne, s->ne, dense, err)) &&
        !(st = put(dir, "mask_ee", BL_DTYPE_UINT8, 2, s->ne, s->ne, mask, err)) &&
        !(st = put(dir, "c_e", BL_DTYPE_FLOAT64, 1, s->ne, 0, s->c_e, err)) &&
        !(st = put(dir, "w_ei", BL_DTYPE_FLOAT64, 2, s->ne, s->ni, s->w_ei, err)) &&
        !(st = put(dir, "w_ie", BL_DTYPE_FLOAT64, 2, s->ni, s->ne, s->w_ie, err)) &&
        !(st = put(dir, "w_eu", BL_DTYPE_FLOAT64, 2, s->ne, s->r, s->w_in, err)) &&
        !(st = put(dir, "w_out", BL_DTYPE_FLOAT64, 2, s->e, s->ne, s->w_out, err)) &&
        !(st = put(dir, "t_e", BL_DTYPE_FLOAT64, 1, s->ne, 0, s->thr, err)) &&
        !(st = put(dir, "t_i", BL_DTYPE_FLOAT64, 1, s->ni, 0, s->ni ? s->thr + s->ne : NULL, err)) &&
        !(st = put(dir, "x", BL_DTYPE_FLOAT64, 1, s->ne, 0, s->spikes, err)))
        st = put(dir, "y", BL_DTYPE_FLOAT64, 1, s->ni, 0, s->ni ? s->spikes + s->ne : NULL, err);
    return st;
}

static bl_status save_f64(const bl_res_state *s, bl_res_dtype dtype, const char *dir, bl_error *err)
{
    if (mkdir(dir, 0777) != 0)
        return bl_fail(err, errno == EEXIST ? BL_ERR_EXISTS : BL_ERR_IO, "%s: cannot create the bundle directory: %s",
                       dir, strerror(errno));
    const size_t rows = s->rows;
    const size_t cells = rows * rows;
    double *dense = malloc((cells ? cells : 1) * sizeof *dense);
    uint8_t *mask = malloc(cells ? cells : 1);
    bl_status st = dense && mask ? BL_OK : bl_fail(err, BL_ERR_NOMEM, "cannot allocate %zu weights", rows * rows);
    if (!st)
        bl_res_state_dense_weights(s, dense, mask);
    if (!st)
        st = bl_res_kind_of(s->p.kind)->save(s, dense, mask, dir, err);
    free(dense);
    free(mask);
    if (!st)
        st = save_node(s, dtype, dir, err);
    return st;
}
