/* Connectome directories: save (write files, hash them, manifest last) and
 * load (manifest, hashes, dtypes, shapes, graph, neuron table), validating
 * everything and naming the file and the place of the first fault. */
#include "connectome/connectome_impl.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "brainlesslab/csv.h"
#include "brainlesslab/hash.h"
#include "brainlesslab/npy.h"
#include "core/json_check.h"
#include "core/file.h"

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
    /* The optional float edge columns, when the connectome has them. */
    const char *const *edge_files = bl_edge_column_files;
    const double *edge_cols[2] = {c->edge_weight, c->edge_delay_ms};
    for (int k = 0; k < 2; k++) {
        join(path, sizeof path, dir, edge_files[k]);
        if (edge_cols[k] && (st = bl_npy_write(path, BL_DTYPE_FLOAT64, 1, &e, edge_cols[k], err)))
            return st;
    }

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
    for (int k = 0; k < 2; k++) {
        char hex[BL_SHA256_HEX_LEN + 1];
        uint64_t bytes;
        if (!edge_cols[k])
            continue;
        join(path, sizeof path, dir, edge_files[k]);
        if ((st = bl_sha256_file(path, hex, &bytes, err))) {
            cJSON_Delete(m);
            return st;
        }
        cJSON *entry = cJSON_AddObjectToObject(files, edge_files[k]);
        cJSON_AddNumberToObject(entry, "bytes", (double)bytes);
        cJSON_AddStringToObject(entry, "sha256", hex);
    }
    char *text = bl_json_print(m, 1);
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

/* The manifest's promise for one data file: size and SHA-256. */
static bl_status expected_file(const cJSON *files, const char *mpath, const char *name,
                               bl_src_digest *want, bl_error *err)
{
    const cJSON *entry = cJSON_GetObjectItemCaseSensitive(files, name);
    const cJSON *sha = entry ? cJSON_GetObjectItemCaseSensitive(entry, "sha256") : NULL;
    if (!cJSON_IsObject(entry) || !cJSON_IsString(sha))
        return bl_fail(err, BL_ERR_FORMAT, "%s: files.%s: missing entry or sha256", mpath, name);
    const char *h = sha->valuestring;
    size_t len = strlen(h);
    if (len != BL_SHA256_HEX_LEN || strspn(h, "0123456789abcdef") != len)
        return bl_fail(err, BL_ERR_FORMAT, "%s: files.%s.sha256 is not 64 lowercase hex digits",
                       mpath, name);
    memcpy(want->sha256, h, BL_SHA256_HEX_LEN + 1);
    char epath[4096];
    snprintf(epath, sizeof epath, "%s: files.%s", mpath, name);
    return json_count(entry, epath, "bytes", UINT64_MAX / 2, &want->bytes, err);
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

/* neurons.csv parsed: cols[0] the external ids, cols[1 + j] metadata column
 * j named names[j]. Parsing needs only the text and the manifest's n, so the
 * loader parses while the edge arrays are still being read and hashed, and
 * attaches the table to the connectome afterwards (neuron_table_attach). */
typedef struct neuron_table {
    size_t nmeta;
    text_column *cols;
    char **names;
} neuron_table;

static void neuron_table_free(neuron_table *t)
{
    for (size_t j = 0; t->cols && j <= t->nmeta; j++) {
        free(t->cols[j].text);
        free(t->cols[j].at);
    }
    for (size_t j = 0; t->names && j < t->nmeta; j++)
        free(t->names[j]);
    free(t->cols);
    free(t->names);
    memset(t, 0, sizeof *t);
}

static bl_status parse_neurons(uint64_t n_neurons, const char *path, const char *text, size_t len,
                               neuron_table *t, bl_error *err)
{
    memset(t, 0, sizeof *t);
    bl_csv *csv;
    bl_status st = bl_csv_open_memory(path, text, len, &csv, err);
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
    size_t nmeta = ncol - 2, n = (size_t)n_neurons;
    t->nmeta = nmeta;
    text_column *cols = t->cols = calloc(nmeta + 1, sizeof *cols);
    st = cols ? BL_OK : bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate", path);
    for (size_t j = 0; !st && j <= nmeta; j++)
        if (!(cols[j].at = malloc((n ? n : 1) * sizeof *cols[j].at))) /* every row is written */
            st = bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate", path);
    /* Names are validated by add_column later; keep them for the calls. */
    char **names = t->names = calloc(nmeta ? nmeta : 1, sizeof *names);
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
        if (row >= n_neurons) {
            st = bl_fail(err, BL_ERR_INVALID, "%s:%" PRIu64 ": more rows than the %" PRIu64
                         " neurons of offsets.npy", path, bl_csv_line(csv), n_neurons);
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
    if (!st && row != n_neurons)
        st = bl_fail(err, BL_ERR_INVALID, "%s: %" PRIu64 " neuron rows, offsets.npy has %" PRIu64,
                     path, row, n_neurons);
    bl_csv_close(csv);
    if (st)
        neuron_table_free(t);
    return st;
}

/* The parsed table into c: ids, then each column, with the checks and
 * messages of bl_connectome_set_external_ids and bl_connectome_add_column.
 * Frees the table whatever happens. */
static bl_status neuron_table_attach(bl_connectome *c, const char *path, neuron_table *t, bl_error *err)
{
    bl_status st = BL_OK;
    size_t n = (size_t)c->n_neurons;
    for (size_t j = 0; !st && j <= t->nmeta; j++) {
        const char **v = text_values(&t->cols[j], n);
        free(t->cols[j].at); /* v holds the places now */
        t->cols[j].at = NULL;
        if (!v)
            st = bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate", path);
        else if (j == 0 && (st = bl_connectome_set_external_ids(c, v, err)))
            bl_fail_context(err, "%s", path);
        else if (j > 0 && (st = bl_connectome_add_column(c, t->names[j - 1], v, err)))
            bl_fail_context(err, "%s: header", path);
        free(v);
        free(t->cols[j].text); /* copied into the connectome */
        t->cols[j].text = NULL;
    }
    neuron_table_free(t);
    return st;
}

/* neurons.csv's text made into a neuron table: parsed, ids indexed and
 * columns interned into *stage, a connectome holding only them (n neurons, no
 * graph), which neurons_move later empties into the loaded one. None of it
 * needs the graph, so a load does it in neurons.csv's reading thread. Frees
 * text (*text set NULL) as soon as it is parsed: the indexing and interning
 * run beside the whole graph, at the load's peak of memory. */
static bl_status neurons_build(uint64_t n, const char *path, char **text, size_t len, bl_connectome **stage,
                               bl_error *err)
{
    *stage = NULL;
    neuron_table t;
    bl_status st = parse_neurons(n, path, *text, len, &t, err);
    free(*text);
    *text = NULL;
    if (st)
        return st;
    bl_connectome *s = calloc(1, sizeof *s);
    if (!s) {
        neuron_table_free(&t);
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate", path);
    }
    s->n_neurons = n;
    s->parts = 1;
    if ((st = neuron_table_attach(s, path, &t, err))) {
        bl_connectome_destroy(s);
        return st;
    }
    *stage = s;
    return BL_OK;
}

/* The neuron table of stage into c (which has none), stage destroyed. */
static void neurons_move(bl_connectome *c, bl_connectome *stage)
{
    c->ids = stage->ids;
    c->id_arena = stage->id_arena;
    c->id_sorted = stage->id_sorted;
    c->n_columns = stage->n_columns;
    c->column_names = stage->column_names;
    c->column_values = stage->column_values;
    c->column_arenas = stage->column_arenas;
    stage->ids = NULL;
    stage->id_arena = NULL;
    stage->id_sorted = NULL;
    stage->n_columns = 0;
    stage->column_names = NULL;
    stage->column_values = NULL;
    stage->column_arenas = NULL;
    bl_connectome_destroy(stage);
}

bl_status bl_connectome_load(const char *dir, bl_connectome **out, bl_error *err)
{
    return bl_connectome_load_part(dir, 0, 1, out, err);
}

/* neurons.csv read whole, hashed as it is read (bl_read_input): the digest
 * is of the very bytes then parsed. */
static bl_status read_neurons_text(const char *path, const bl_src_digest *want, char **text,
                                   bl_src_digest *got, bl_error *err)
{
    size_t len = 0;
    if (want->bytes > ((uint64_t)1 << 40))
        return bl_fail(err, BL_ERR_INVALID, "%s: manifest size %" PRIu64 " bytes is not plausible",
                       path, want->bytes);
    uint8_t *data = NULL;
    bl_status st = bl_read_input(path, want->bytes, &data, &len, got->sha256, err);
    *text = (char *)data;
    if (st)
        return st;
    if (len != want->bytes) {
        free(*text);
        *text = NULL;
        return bl_fail(err, BL_ERR_INVALID, "%s: size %zu bytes, manifest says %" PRIu64, path, len,
                       want->bytes);
    }
    got->bytes = len;
    if (strcmp(got->sha256, want->sha256)) {
        free(*text);
        *text = NULL;
        return bl_fail(err, BL_ERR_INVALID, "%s: SHA-256 %s differs from the manifest's %s", path,
                       got->sha256, want->sha256);
    }
    return BL_OK;
}

/* Elements per read of a large array: 256 KiB of int32, so that each piece
 * is hashed and checked while it is still in the core's cache, rather than
 * the whole array being read, then hashed, then validated from memory. */
#define READ_PIECE ((uint64_t)1 << 16)

/* Called on each piece of an array as it arrives (after it was hashed):
 * elements [first, first + count) of the array, at data + first. */
typedef void (*piece_fn)(void *ctx, const void *data, uint64_t first, uint64_t count);

/* One whole .npy array of N elements, read and hashed in one pass, piece by
 * piece; check (may be NULL) sees each piece. */
static bl_status read_array(const char *path, const bl_src_digest *want, bl_dtype dtype,
                            uint64_t n, const char *what, void **data, bl_src_digest *got,
                            piece_fn check, void *ctx, bl_error *err)
{
    *data = NULL;
    bl_npy_stream s;
    bl_status st = bl_npy_stream_open(path, want, dtype, &s, err);
    if (st)
        return st;
    bl_error ignored;
    if (s.header.count != n) {
        bl_npy_stream_close(&s, NULL, NULL, &ignored);
        return bl_fail(err, BL_ERR_INVALID, "%s: shape (%" PRIu64 ",), %s", path, s.header.count, what);
    }
    size_t item = bl_dtype_size(dtype);
    *data = bl_alloc_bulk((size_t)(n * item));
    if (!*data) {
        bl_npy_stream_close(&s, NULL, NULL, &ignored);
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate %" PRIu64 " elements", path, n);
    }
    for (uint64_t k = 0; !st && k < n; k += READ_PIECE) {
        uint64_t m = n - k < READ_PIECE ? n - k : READ_PIECE;
        st = bl_npy_stream_read(&s, (char *)*data + k * item, m, err);
        if (!st && check)
            check(ctx, *data, k, m);
    }
    if (!st)
        st = bl_npy_stream_close(&s, want, got, err);
    else
        bl_npy_stream_close(&s, NULL, NULL, &ignored);
    if (st) {
        free(*data);
        *data = NULL;
    }
    return st;
}

/* The piece checks (connectome_check.c) as read_array's callbacks. */
static void check_targets(void *ctx, const void *data, uint64_t first, uint64_t count)
{
    bl_check_targets_piece(ctx, data, first, count);
}

static void check_counts(void *ctx, const void *data, uint64_t first, uint64_t count)
{
    bl_check_counts_piece(ctx, (const int32_t *)data + first, count);
}

/* A whole load's three independent tasks: offsets.npy then targets.npy
 * (whose piece checks need the offsets), counts.npy, and neurons.csv (read,
 * parsed, ids indexed, columns interned). Plain threads rather than an
 * OpenMP region: a thread that finished first then sleeps in a join instead
 * of spinning at a barrier, and the pool does not spin on after the load
 * (together about 10 ms of CPU of a FlyWire-scale process). */
enum { LOAD_TASKS = 3 };
typedef struct load_tasks {
    const char *dir;
    uint64_t n, e;
    char (*paths)[4096];
    const bl_src_digest *want;
    bl_src_digest *got;
    bl_status *sts;
    bl_error *errs;
    const char *what_n, *what_e;
    void **off, **tgt, **cnt;
    bl_target_check *tc;
    bl_count_check *cc;
    int offsets_ok;
    bl_connectome **stage;
    bl_status *nst;
    bl_error *nerr;
    int parsed;
    atomic_int next; /* the next task to take */
} load_tasks;

static void load_task(load_tasks *x, int task)
{
    if (task == 0) {
        int k = BL_SRC_OFFSETS;
        x->sts[k] = read_array(x->paths[k], &x->want[k], BL_DTYPE_INT64, x->n + 1, x->what_n, x->off, &x->got[k],
                               NULL, NULL, &x->errs[k]);
        bl_error ignored;
        x->offsets_ok = !x->sts[k] && !bl_offsets_validate(x->dir, x->n, x->e, *x->off, &ignored);
        x->tc->off = *x->off;
        k = BL_SRC_TARGETS;
        if (!x->sts[BL_SRC_OFFSETS]) /* else that failure is the one reported */
            x->sts[k] = read_array(x->paths[k], &x->want[k], BL_DTYPE_INT32, x->e, x->what_e, x->tgt, &x->got[k],
                                   x->offsets_ok ? check_targets : NULL, x->tc, &x->errs[k]);
    } else if (task == 1) {
        int k = BL_SRC_COUNTS;
        x->sts[k] = read_array(x->paths[k], &x->want[k], BL_DTYPE_INT32, x->e, x->what_e, x->cnt, &x->got[k],
                               check_counts, x->cc, &x->errs[k]);
    } else {
        int k = BL_SRC_NEURONS;
        char *text = NULL;
        if (!(x->sts[k] = read_neurons_text(x->paths[k], &x->want[k], &text, &x->got[k], &x->errs[k]))) {
            *x->nst = neurons_build(x->n, x->paths[k], &text, (size_t)x->got[k].bytes, x->stage, x->nerr);
            x->parsed = 1;
        }
    }
}

static void *load_worker(void *arg)
{
    load_tasks *x = arg;
    for (int t; (t = atomic_fetch_add(&x->next, 1)) < LOAD_TASKS;)
        load_task(x, t);
    return NULL;
}

/* The tasks on `workers` threads (this one included), each taking the next
 * task when it is free; a thread that cannot be started leaves its share to
 * the others. */
static void run_load_tasks(load_tasks *x, int workers)
{
    pthread_t th[LOAD_TASKS];
    int started = 0;
    atomic_init(&x->next, 0);
    for (int w = 1; w < workers; w++)
        if (!pthread_create(&th[started], NULL, load_worker, x))
            started++;
    load_worker(x);
    for (int w = 0; w < started; w++)
        pthread_join(th[w], NULL);
}

bl_status bl_connectome_load_part(const char *dir, int part, int parts, bl_connectome **out, bl_error *err)
{
    *out = NULL;
    if (parts < 1 || part < 0 || part >= parts)
        return bl_fail(err, BL_ERR_INVALID, "%s: part %d of %d does not exist (parts are 0..%d)", dir, part, parts,
                       parts - 1);
    char mpath[4096];
    join(mpath, sizeof mpath, dir, MANIFEST);
    char *text = NULL;
    size_t text_len = 0;
    bl_status st = bl_read_small(mpath, MANIFEST_MAX_BYTES, &text, &text_len, err);
    if (st)
        return st;
    /* The manifest's digest is of the bytes parsed here, read once. */
    bl_src_digest got[BL_SRC_COUNT], want[BL_SRC_COUNT];
    memset(got, 0, sizeof got);
    memset(want, 0, sizeof want);
    got[BL_SRC_MANIFEST].bytes = text_len;
    bl_sha256_buffer(text, text_len, got[BL_SRC_MANIFEST].sha256);
    /* require_null_terminated: text after the object (or a NUL byte
     * cutting it short) is refused, not ignored. */
    const char *end = NULL;
    /* A UTF-8 BOM is refused, as for a plan and a record's manifest (cJSON
     * would skip it; Python's json refuses it): every reader agrees. */
    if (text_len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) {
        free(text);
        return bl_fail(err, BL_ERR_FORMAT, "%s: starts with a UTF-8 byte-order mark (BOM, bytes EF BB BF); save the "
                       "manifest as UTF-8 without a BOM", mpath);
    }
    cJSON *m = memchr(text, '\0', text_len) ? NULL : cJSON_ParseWithLengthOpts(text, text_len + 1, &end, 1);
    free(text);
    if (!cJSON_IsObject(m)) {
        cJSON_Delete(m);
        return bl_fail(err, BL_ERR_FORMAT, "%s: not a single JSON object (invalid JSON or text after it)", mpath);
    }
    const char *dup = bl_json_duplicate_key(m);
    if (dup) {
        char shown[80];
        snprintf(shown, sizeof shown, "%s", dup);
        for (char *q = shown; *q; q++)
            if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f)
                *q = '?';
        cJSON_Delete(m);
        return bl_fail(err, BL_ERR_FORMAT, "%s: key '%s' appears twice in one object", mpath, shown);
    }
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(m, "format");
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(m, "files");
    uint64_t version = 0, n = 0, e = 0, syn = 0;
    void *off = NULL, *tgt = NULL, *cnt = NULL;
    char *neurons_text = NULL;
    bl_connectome *stage = NULL; /* the neuron table (neurons_build) */
    bl_status nst = BL_OK;       /* neurons_build's status, once `parsed` */
    bl_error nerr;
    int parsed = 0;
    bl_error_clear(&nerr);
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
    for (int k = BL_SRC_OFFSETS; !st && k < BL_SRC_COUNT; k++)
        st = expected_file(files, mpath, bl_src_names[k], &want[k], err);
    /* A part reads the edge columns with its edges (one pass over the
     * files): their manifest entries first. */
    bl_src_digest col_want[2];
    const bl_src_digest *cols[2] = {NULL, NULL};
    for (int k = 0; !st && parts != 1 && k < 2; k++)
        if (cJSON_GetObjectItemCaseSensitive(files, bl_edge_column_files[k]) &&
            !(st = expected_file(files, mpath, bl_edge_column_files[k], &col_want[k], err)))
            cols[k] = &col_want[k];
    if (!st && parts != 1) {
        st = bl_connectome_read_part(dir, n, e, part, parts, want, cols, &c, err);
        if (!st) {
            for (int k = BL_SRC_OFFSETS; k < BL_SRC_NEURONS; k++)
                got[k] = want[k]; /* read_part compared every streamed byte to these */
        }
    } else if (!st) {
        /* The four files are independent: read and hash them side by side,
         * one thread each (the two edge arrays dominate). Each read is one
         * pass: the bytes land in their final array and are hashed there.
         * neurons.csv is parsed, its ids indexed and its columns interned by
         * its thread too, while the edge arrays are still being hashed; its
         * faults are reported in their usual place (after those of the
         * files and of the graph). */
        char paths[BL_SRC_COUNT][4096];
        bl_error errs[BL_SRC_COUNT];
        bl_status sts[BL_SRC_COUNT] = {0};
        char what_n[96], what_e[96];
        snprintf(what_n, sizeof what_n, "manifest n_neurons %" PRIu64 " needs (%" PRIu64 ",)", n, n + 1);
        snprintf(what_e, sizeof what_e, "manifest n_edges is %" PRIu64, e);
        for (int k = 0; k < BL_SRC_COUNT; k++) {
            join(paths[k], sizeof paths[k], dir, bl_src_names[k]);
            bl_error_clear(&errs[k]);
        }
        /* Three tasks: offsets then targets (whose piece checks need the
         * offsets), counts, neurons.csv. */
        bl_target_check tc = {NULL, n, 0, 0};
        bl_count_check cc = {0, 0};
        load_tasks lt = {dir, n, e, paths, want, got, sts, errs, what_n, what_e, &off, &tgt, &cnt, &tc, &cc, 0,
                         &stage, &nst, &nerr, 0, 0};
        int threads = omp_get_max_threads(); /* OMP_NUM_THREADS=1 keeps it serial */
        run_load_tasks(&lt, threads < LOAD_TASKS ? threads : LOAD_TASKS);
        const int offsets_ok = lt.offsets_ok;
        parsed = lt.parsed;
        for (int k = BL_SRC_OFFSETS; !st && k < BL_SRC_COUNT; k++)
            if (sts[k]) {
                *err = errs[k];
                st = sts[k];
            }
        /* The pieces passed every check: the graph is valid. Otherwise the
         * whole validation again, for its message naming the first fault. */
        if (!st && (!offsets_ok || tc.bad || cc.bad))
            st = bl_csr_validate(dir, n, e, off, tgt, cnt, err);
        if (!st) {
            st = bl_connectome_adopt_validated(n, e, off, tgt, cnt, &cc.synapses, 0, &c, err);
            off = tgt = cnt = NULL; /* adopted (or freed) */
        }
    }
    if (!st && parts != 1) {
        char npath[4096];
        join(npath, sizeof npath, dir, bl_src_names[BL_SRC_NEURONS]);
        st = read_neurons_text(npath, &want[BL_SRC_NEURONS], &neurons_text, &got[BL_SRC_NEURONS], err);
    }
    if (!st && c->n_synapses != syn)
        st = bl_fail(err, BL_ERR_INVALID, "%s: n_synapses %" PRIu64 " but counts.npy sums to %" PRIu64,
                     mpath, syn, c->n_synapses);
    if (!st) {
        char npath[4096];
        join(npath, sizeof npath, dir, bl_src_names[BL_SRC_NEURONS]);
        if (!parsed)
            nst = neurons_build(n, npath, &neurons_text, (size_t)got[BL_SRC_NEURONS].bytes, &stage, &nerr);
        if (nst) {
            *err = nerr;
            st = nst;
        } else {
            neurons_move(c, stage);
            stage = NULL;
        }
    }
    bl_connectome_destroy(stage);
    for (int k = 0; !st && k < BL_INFO_COUNT; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, bl_connectome_info_keys[k]);
        if (v && !cJSON_IsString(v))
            st = bl_fail(err, BL_ERR_FORMAT, "%s: key '%s' must be a string", mpath,
                         bl_connectome_info_keys[k]);
        else if (v)
            st = bl_connectome_set_info(c, bl_connectome_info_keys[k], v->valuestring, err);
    }
    if (!st)
        st = bl_connectome_read_edge_columns(c, dir, mpath, files, err);
    if (!st) {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(m, "synthetic");
        if (s && !cJSON_IsBool(s))
            st = bl_fail(err, BL_ERR_FORMAT, "%s: key 'synthetic' must be true or false", mpath);
        else
            bl_connectome_set_synthetic(c, cJSON_IsTrue(s));
    }
    cJSON_Delete(m);
    free(off);
    free(tgt);
    free(cnt);
    free(neurons_text);
    if (st) {
        bl_connectome_destroy(c);
        return st;
    }
    c->has_sources = 1;
    memcpy(c->sources, got, sizeof got);
    *out = c;
    return BL_OK;
}

const char *bl_connectome_source(const bl_connectome *c, size_t k, const char **name, uint64_t *bytes)
{
    if (!c || !c->has_sources || k >= BL_SRC_COUNT)
        return NULL;
    if (name)
        *name = bl_src_names[k];
    if (bytes)
        *bytes = c->sources[k].bytes;
    return c->sources[k].sha256;
}

/* ---- optional float edge columns (weights.npy, delays.npy) */

const double *bl_connectome_edge_weights(const bl_connectome *c) { return c ? c->edge_weight : NULL; }
const double *bl_connectome_edge_delays_ms(const bl_connectome *c) { return c ? c->edge_delay_ms : NULL; }

const char *const bl_edge_column_files[2] = {"weights.npy", "delays.npy"};

bl_status bl_edge_value_fail(bl_error *err, const char *path, int delays, uint64_t e, double x)
{
    return bl_fail(err, BL_ERR_INVALID, delays ? "%s: edge %" PRIu64 ": delay %g ms is not in (0, 1e6] ms"
                                               : "%s: edge %" PRIu64 ": weight %g is not finite or beyond 1e12 in "
                                                 "magnitude", path, e, x);
}

bl_status bl_connectome_set_edge_column(bl_connectome *c, const char *name, const double *values, bl_error *err)
{
    int k = !strcmp(name, "weights") ? 0 : !strcmp(name, "delays") ? 1 : -1;
    if (k < 0)
        return bl_fail(err, BL_ERR_INVALID, "edge column '%.40s': the columns are \"weights\" and \"delays\"", name);
    if (c->parts != 1)
        return bl_fail(err, BL_ERR_INVALID, "edge column %s: a connectome part holds only one rank's edges", name);
    double **slot = k == 0 ? &c->edge_weight : &c->edge_delay_ms;
    if (!values) {
        free(*slot);
        *slot = NULL;
        return BL_OK;
    }
    for (uint64_t e = 0; e < c->n_edges; e++)
        if (!bl_edge_value_ok(k, values[e]))
            return bl_fail(err, BL_ERR_INVALID, k == 0 ? "edge column weights: edge %" PRIu64 ": weight %g is not finite or "
                           "beyond 1e12 in magnitude" : "edge column delays: edge %" PRIu64 ": delay %g ms is not in "
                           "(0, 1e6] ms", e, values[e]);
    double *copy = malloc((c->n_edges ? c->n_edges : 1) * sizeof *copy);
    if (!copy)
        return bl_fail(err, BL_ERR_NOMEM, "edge column %s: cannot allocate %" PRIu64 " values", name, c->n_edges);
    if (c->n_edges)
        memcpy(copy, values, c->n_edges * sizeof *copy);
    free(*slot);
    *slot = copy;
    return BL_OK;
}

bl_status bl_connectome_read_edge_columns(bl_connectome *c, const char *dir, const char *mpath,
                                          const struct cJSON *files, bl_error *err)
{
    const char *const *names = bl_edge_column_files;
    double **slot[2] = {&c->edge_weight, &c->edge_delay_ms};
    if (c->parts != 1) /* a part read its share of them with its edges (connectome_part.c) */
        return BL_OK;
    for (int k = 0; k < 2; k++) {
        if (!cJSON_GetObjectItemCaseSensitive(files, names[k]))
            continue;
        bl_src_digest want, got;
        bl_status st = expected_file(files, mpath, names[k], &want, err);
        if (st)
            return st;
        char path[4096], what[96];
        join(path, sizeof path, dir, names[k]);
        snprintf(what, sizeof what, "manifest n_edges is %" PRIu64, c->n_edges);
        void *data = NULL;
        if ((st = read_array(path, &want, BL_DTYPE_FLOAT64, c->n_edges, what, &data, &got, NULL, NULL, err)))
            return st;
        const double *x = data;
        for (uint64_t e = 0; e < c->n_edges; e++) {
            if (!bl_edge_value_ok(k, x[e])) {
                double bad = x[e];
                free(data);
                return bl_edge_value_fail(err, path, k, e, bad);
            }
        }
        *slot[k] = data;
    }
    return BL_OK;
}
