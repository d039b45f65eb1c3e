/* Connectome directories: save (write files, hash them, manifest last) and
 * load (manifest, hashes, dtypes, shapes, graph, neuron table), validating
 * everything and naming the file and the place of the first fault. */
#include "connectome/connectome_impl.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "brainlesslab/csv.h"
#include "brainlesslab/hash.h"
#include "brainlesslab/npy.h"

#define MANIFEST "manifest.json"
#define MANIFEST_MAX_BYTES (1 << 20)

static const char *const data_files[] = {"offsets.npy", "targets.npy", "counts.npy", "neurons.csv"};
enum { N_DATA_FILES = 4 };

static void join(char *buf, size_t size, const char *dir, const char *name)
{
    snprintf(buf, size, "%s/%s", dir, name);
}

/* A new or empty directory: a connectome is never written over another. */
static bl_status make_empty_dir(const char *dir, bl_error *err)
{
    if (mkdir(dir, 0777) == 0)
        return BL_OK;
    if (errno != EEXIST)
        return bl_fail(err, BL_ERR_IO, "%s: cannot create directory: %s", dir, strerror(errno));
    DIR *d = opendir(dir);
    if (!d)
        return bl_fail(err, BL_ERR_IO, "%s: exists and cannot be opened: %s", dir, strerror(errno));
    struct dirent *ent;
    int empty = 1;
    while ((ent = readdir(d)))
        if (strcmp(ent->d_name, ".") && strcmp(ent->d_name, ".."))
            empty = 0;
    closedir(d);
    return empty ? BL_OK
                 : bl_fail(err, BL_ERR_EXISTS, "%s: directory exists and is not empty; refusing "
                           "to overwrite a connectome", dir);
}

static bl_status write_neurons(const bl_connectome *c, const char *path, bl_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return bl_fail(err, BL_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    bl_csv_write_field(f, "index", 0);
    bl_csv_write_field(f, "external_id", c->n_columns == 0);
    for (size_t j = 0; j < c->n_columns; j++)
        bl_csv_write_field(f, c->column_names[j], j + 1 == c->n_columns);
    for (uint64_t i = 0; i < c->n_neurons; i++) {
        char idx[24];
        snprintf(idx, sizeof idx, "%" PRIu64, i);
        bl_csv_write_field(f, idx, 0);
        bl_csv_write_field(f, c->ids[i], c->n_columns == 0);
        for (size_t j = 0; j < c->n_columns; j++)
            bl_csv_write_field(f, c->column_values[j][i], j + 1 == c->n_columns);
    }
    int bad = ferror(f);
    if (fclose(f) || bad)
        return bl_fail(err, BL_ERR_IO, "%s: write failed", path);
    return BL_OK;
}

bl_status bl_connectome_save(const bl_connectome *c, const char *dir, bl_error *err)
{
    if (c->parts > 1)
        return bl_fail(err, BL_ERR_INVALID, "%s: a connectome part (%d of %d) holds only one rank's edges; only a "
                       "whole connectome can be saved", dir, c->part, c->parts);
    bl_status st = make_empty_dir(dir, err);
    if (st)
        return st;
    char path[4096];
    uint64_t n1 = c->n_neurons + 1, e = c->n_edges;
    join(path, sizeof path, dir, "offsets.npy");
    if ((st = bl_npy_write(path, BL_DTYPE_INT64, 1, &n1, c->offsets, err)))
        return st;
    join(path, sizeof path, dir, "targets.npy");
    if ((st = bl_npy_write(path, BL_DTYPE_INT32, 1, &e, c->targets, err)))
        return st;
    join(path, sizeof path, dir, "counts.npy");
    if ((st = bl_npy_write(path, BL_DTYPE_INT32, 1, &e, c->counts, err)))
        return st;
    join(path, sizeof path, dir, "neurons.csv");
    if ((st = write_neurons(c, path, err)))
        return st;

    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "format", BL_CONNECTOME_FORMAT);
    cJSON_AddNumberToObject(m, "format_version", BL_CONNECTOME_FORMAT_VERSION);
    for (int k = 0; k < BL_INFO_COUNT; k++)
        if (c->info[k])
            cJSON_AddStringToObject(m, bl_connectome_info_keys[k], c->info[k]);
    cJSON_AddBoolToObject(m, "synthetic", c->synthetic);
    cJSON_AddNumberToObject(m, "n_neurons", (double)c->n_neurons);
    cJSON_AddNumberToObject(m, "n_edges", (double)c->n_edges);
    cJSON_AddNumberToObject(m, "n_synapses", (double)c->n_synapses);
    cJSON *files = cJSON_AddObjectToObject(m, "files");
    for (int k = 0; k < N_DATA_FILES; k++) {
        char hex[BL_SHA256_HEX_LEN + 1];
        uint64_t bytes;
        join(path, sizeof path, dir, data_files[k]);
        if ((st = bl_sha256_file(path, hex, &bytes, err))) {
            cJSON_Delete(m);
            return st;
        }
        cJSON *entry = cJSON_AddObjectToObject(files, data_files[k]);
        cJSON_AddNumberToObject(entry, "bytes", (double)bytes);
        cJSON_AddStringToObject(entry, "sha256", hex);
    }
    char *text = cJSON_Print(m);
    cJSON_Delete(m);
    if (!text)
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot render manifest", dir);
    join(path, sizeof path, dir, MANIFEST);
    FILE *f = fopen(path, "w");
    int ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
    if (f && fclose(f))
        ok = 0;
    free(text);
    return ok ? BL_OK : bl_fail(err, BL_ERR_IO, "%s: cannot write manifest", path);
}

/* ---- loading ---- */

static bl_status read_small_file(const char *path, size_t max, char **out, bl_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return bl_fail(err, BL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    char *buf = malloc(max + 1);
    size_t n = buf ? fread(buf, 1, max + 1, f) : 0;
    fclose(f);
    if (!buf)
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate", path);
    if (n > max) {
        free(buf);
        return bl_fail(err, BL_ERR_FORMAT, "%s: larger than %zu bytes", path, max);
    }
    buf[n] = '\0';
    *out = buf;
    return BL_OK;
}

static bl_status json_count(const cJSON *m, const char *path, const char *key, uint64_t max,
                            uint64_t *out, bl_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, key);
    if (!cJSON_IsNumber(v))
        return bl_fail(err, BL_ERR_FORMAT, "%s: key '%s' missing or not a number", path, key);
    double d = v->valuedouble;
    if (!(d >= 0 && d <= (double)max) || d != (double)(uint64_t)d)
        return bl_fail(err, BL_ERR_INVALID, "%s: key '%s': %g is not a whole number in 0..%" PRIu64,
                       path, key, d, max);
    *out = (uint64_t)d;
    return BL_OK;
}

/* Check one data file against its manifest entry (size and SHA-256). */
static bl_status check_file(const char *dir, const cJSON *files, const char *mpath,
                            const char *name, bl_error *err)
{
    const cJSON *entry = cJSON_GetObjectItemCaseSensitive(files, name);
    const cJSON *sha = entry ? cJSON_GetObjectItemCaseSensitive(entry, "sha256") : NULL;
    uint64_t bytes_expected = 0;
    if (!cJSON_IsObject(entry) || !cJSON_IsString(sha))
        return bl_fail(err, BL_ERR_FORMAT, "%s: files.%s: missing entry or sha256", mpath, name);
    char epath[4096];
    snprintf(epath, sizeof epath, "%s: files.%s", mpath, name);
    bl_status st = json_count(entry, epath, "bytes", UINT64_MAX / 2, &bytes_expected, err);
    if (st)
        return st;
    char path[4096], hex[BL_SHA256_HEX_LEN + 1];
    uint64_t bytes;
    join(path, sizeof path, dir, name);
    if ((st = bl_sha256_file(path, hex, &bytes, err)))
        return st;
    if (bytes != bytes_expected)
        return bl_fail(err, BL_ERR_INVALID, "%s: size %" PRIu64 " bytes, manifest says %" PRIu64,
                       path, bytes, bytes_expected);
    if (strcmp(hex, sha->valuestring))
        return bl_fail(err, BL_ERR_INVALID, "%s: SHA-256 %s differs from the manifest's %s", path,
                       hex, sha->valuestring);
    return BL_OK;
}

/* One column of neurons.csv while it is read: the values back to back in
 * one growing block (not one malloc per value), at[row] their offsets. */
typedef struct text_column {
    char *text;
    size_t len, cap;
    uint64_t *at;
} text_column;

static int text_append(text_column *t, uint64_t row, const char *v)
{
    size_t need = strlen(v) + 1;
    if (t->len + need > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + need)
            cap *= 2;
        char *grown = realloc(t->text, cap);
        if (!grown)
            return 0;
        t->text = grown;
        t->cap = cap;
    }
    memcpy(t->text + t->len, v, need);
    t->at[row] = t->len;
    t->len += need;
    return 1;
}

/* The values as a pointer array (for set_external_ids / add_column). */
static const char **text_values(const text_column *t, uint64_t n)
{
    const char **v = malloc((n ? n : 1) * sizeof *v);
    for (uint64_t i = 0; v && i < n; i++)
        v[i] = t->text + t->at[i];
    return v;
}

static bl_status load_neurons(bl_connectome *c, const char *path, bl_error *err)
{
    bl_csv *csv;
    bl_status st = bl_csv_open(path, &csv, err);
    if (st)
        return st;
    int r = bl_csv_next(csv, err);
    if (r <= 0) {
        bl_csv_close(csv);
        return r < 0 ? err->status : bl_fail(err, BL_ERR_FORMAT, "%s: empty, expected a header", path);
    }
    size_t ncol = bl_csv_nfields(csv);
    if (ncol < 2 || strcmp(bl_csv_field(csv, 0), "index") || strcmp(bl_csv_field(csv, 1), "external_id")) {
        uint64_t line = bl_csv_line(csv);
        bl_csv_close(csv);
        return bl_fail(err, BL_ERR_FORMAT, "%s:%" PRIu64 ": header must start with index,external_id",
                       path, line);
    }
    /* cols[0] holds the external ids, cols[1 + j] metadata column j. */
    size_t nmeta = ncol - 2, n = (size_t)c->n_neurons;
    text_column *cols = calloc(nmeta + 1, sizeof *cols);
    st = cols ? BL_OK : bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate", path);
    for (size_t j = 0; !st && j <= nmeta; j++)
        if (!(cols[j].at = calloc(n ? n : 1, sizeof *cols[j].at)))
            st = bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate", path);
    /* Names are validated by add_column later; keep them for the calls. */
    char **names = calloc(nmeta ? nmeta : 1, sizeof *names);
    for (size_t j = 0; !st && names && j < nmeta; j++) {
        const char *h = bl_csv_field(csv, j + 2);
        names[j] = malloc(strlen(h) + 1);
        if (names[j])
            strcpy(names[j], h);
        else
            st = bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate", path);
    }
    if (!st && !names)
        st = bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate", path);
    uint64_t row = 0;
    while (!st && (r = bl_csv_next(csv, err)) > 0) {
        if (row >= c->n_neurons) {
            st = bl_fail(err, BL_ERR_INVALID, "%s:%" PRIu64 ": more rows than the %" PRIu64
                         " neurons of offsets.npy", path, bl_csv_line(csv), c->n_neurons);
            break;
        }
        if ((st = bl_csv_expect_fields(csv, ncol, err)))
            break;
        int64_t idx;
        if ((st = bl_csv_field_i64(csv, 0, 0, INT64_MAX, &idx, err)))
            break;
        if ((uint64_t)idx != row) {
            st = bl_fail(err, BL_ERR_INVALID, "%s:%" PRIu64 ": index %" PRId64 ", expected %" PRIu64
                         " (rows must list neurons 0..N-1 in order)", path, bl_csv_line(csv), idx, row);
            break;
        }
        for (size_t j = 0; !st && j <= nmeta; j++)
            if (!text_append(&cols[j], row, bl_csv_field(csv, j + 1)))
                st = bl_fail(err, BL_ERR_NOMEM, "%s:%" PRIu64 ": cannot allocate", path, bl_csv_line(csv));
        row++;
    }
    if (!st && r < 0)
        st = err->status;
    if (!st && row != c->n_neurons)
        st = bl_fail(err, BL_ERR_INVALID, "%s: %" PRIu64 " neuron rows, offsets.npy has %" PRIu64,
                     path, row, c->n_neurons);
    bl_csv_close(csv);
    for (size_t j = 0; !st && j <= nmeta; j++) {
        const char **v = text_values(&cols[j], n);
        if (!v)
            st = bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate", path);
        else if (j == 0 && (st = bl_connectome_set_external_ids(c, v, err)))
            bl_fail_context(err, "%s", path);
        else if (j > 0 && (st = bl_connectome_add_column(c, names[j - 1], v, err)))
            bl_fail_context(err, "%s: header", path);
        free(v);
        free(cols[j].text); /* copied into the connectome */
        cols[j].text = NULL;
    }
    for (size_t j = 0; cols && j <= nmeta; j++) {
        free(cols[j].text);
        free(cols[j].at);
    }
    for (size_t j = 0; names && j < nmeta; j++)
        free(names[j]);
    free(cols);
    free(names);
    return st;
}

bl_status bl_connectome_load(const char *dir, bl_connectome **out, bl_error *err)
{
    return bl_connectome_load_part(dir, 0, 1, out, err);
}

bl_status bl_connectome_load_part(const char *dir, int part, int parts, bl_connectome **out, bl_error *err)
{
    *out = NULL;
    if (parts < 1 || part < 0 || part >= parts)
        return bl_fail(err, BL_ERR_INVALID, "%s: part %d of %d does not exist (parts are 0..%d)", dir, part, parts,
                       parts - 1);
    char mpath[4096], path[4096];
    join(mpath, sizeof mpath, dir, MANIFEST);
    char *text = NULL;
    bl_status st = read_small_file(mpath, MANIFEST_MAX_BYTES, &text, err);
    if (st)
        return st;
    cJSON *m = cJSON_Parse(text);
    free(text);
    if (!cJSON_IsObject(m)) {
        cJSON_Delete(m);
        return bl_fail(err, BL_ERR_FORMAT, "%s: not a JSON object", mpath);
    }
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(m, "format");
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(m, "files");
    uint64_t version = 0, n = 0, e = 0, syn = 0;
    bl_npy_array off = {0}, tgt = {0}, cnt = {0};
    bl_connectome *c = NULL;
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, BL_CONNECTOME_FORMAT))
        st = bl_fail(err, BL_ERR_FORMAT, "%s: key 'format' must be \"%s\"", mpath, BL_CONNECTOME_FORMAT);
    else if ((st = json_count(m, mpath, "format_version", 1000, &version, err)))
        ;
    else if (version != BL_CONNECTOME_FORMAT_VERSION)
        st = bl_fail(err, BL_ERR_UNSUPPORTED, "%s: format_version %" PRIu64 " (this build reads %d)",
                     mpath, version, BL_CONNECTOME_FORMAT_VERSION);
    else if ((st = json_count(m, mpath, "n_neurons", BL_MAX_NEURONS, &n, err)) ||
             (st = json_count(m, mpath, "n_edges", INT64_MAX / 8, &e, err)) ||
             (st = json_count(m, mpath, "n_synapses", UINT64_MAX / 2, &syn, err)))
        ;
    else if (!cJSON_IsObject(files))
        st = bl_fail(err, BL_ERR_FORMAT, "%s: key 'files' missing or not an object", mpath);
    for (int k = 0; !st && k < N_DATA_FILES; k++)
        st = check_file(dir, files, mpath, data_files[k], err);
    if (!st && parts != 1) {
        st = bl_connectome_read_part(dir, n, e, part, parts, &c, err);
    } else if (!st) {
        join(path, sizeof path, dir, "offsets.npy");
        st = bl_npy_read_expect(path, BL_DTYPE_INT64, 1, &off, err);
        if (!st && off.shape[0] != n + 1)
            st = bl_fail(err, BL_ERR_INVALID, "%s: shape (%" PRIu64 ",), manifest n_neurons %" PRIu64
                         " needs (%" PRIu64 ",)", path, off.shape[0], n, n + 1);
    }
    if (!st && !c) {
        join(path, sizeof path, dir, "targets.npy");
        st = bl_npy_read_expect(path, BL_DTYPE_INT32, 1, &tgt, err);
        if (!st && tgt.shape[0] != e)
            st = bl_fail(err, BL_ERR_INVALID, "%s: shape (%" PRIu64 ",), manifest n_edges is %" PRIu64,
                         path, tgt.shape[0], e);
    }
    if (!st && !c) {
        join(path, sizeof path, dir, "counts.npy");
        st = bl_npy_read_expect(path, BL_DTYPE_INT32, 1, &cnt, err);
        if (!st && cnt.shape[0] != e)
            st = bl_fail(err, BL_ERR_INVALID, "%s: shape (%" PRIu64 ",), manifest n_edges is %" PRIu64,
                         path, cnt.shape[0], e);
    }
    if (!st && !c) {
        st = bl_csr_validate(dir, n, e, off.data, tgt.data, cnt.data, err);
        if (!st) {
            st = bl_connectome_adopt_validated(n, e, off.data, tgt.data, cnt.data, &c, err);
            off.data = tgt.data = cnt.data = NULL; /* adopted (or freed) */
        }
    }
    if (!st && c->n_synapses != syn)
        st = bl_fail(err, BL_ERR_INVALID, "%s: n_synapses %" PRIu64 " but counts.npy sums to %" PRIu64,
                     mpath, syn, c->n_synapses);
    if (!st) {
        join(path, sizeof path, dir, "neurons.csv");
        st = load_neurons(c, path, err);
    }
    for (int k = 0; !st && k < BL_INFO_COUNT; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, bl_connectome_info_keys[k]);
        if (v && !cJSON_IsString(v))
            st = bl_fail(err, BL_ERR_FORMAT, "%s: key '%s' must be a string", mpath,
                         bl_connectome_info_keys[k]);
        else if (v)
            st = bl_connectome_set_info(c, bl_connectome_info_keys[k], v->valuestring, err);
    }
    if (!st) {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(m, "synthetic");
        if (s && !cJSON_IsBool(s))
            st = bl_fail(err, BL_ERR_FORMAT, "%s: key 'synthetic' must be true or false", mpath);
        else
            bl_connectome_set_synthetic(c, cJSON_IsTrue(s));
    }
    cJSON_Delete(m);
    bl_npy_free(&off);
    bl_npy_free(&tgt);
    bl_npy_free(&cnt);
    if (st) {
        bl_connectome_destroy(c);
        return st;
    }
    *out = c;
    return BL_OK;
}
