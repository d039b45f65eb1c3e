/* brainlesslab compare A B: two records (or conditions of screen records,
 * DIR@K) contrasted, into a small sealed record of its own.
 *
 * First the exact verdict: are the spikes the same, event for event? Each
 * side's spikes are reduced to one digest, SHA-256 over the trials in order
 * of each trial's SHA-256 of its (step, neuron) pairs (the stream's digest,
 * src/experiment/xp_impl.h), as a connectome run's summary.json or a
 * screen's conditions.json states it. Counts and final state are compared
 * byte for byte too. Then, neuron by neuron, the per-trial rates
 * of A and B: means, difference, Cohen's d, a t test and Benjamini-Hochberg
 * q-values (bl_bh_qvalues). The test is paired (bl_paired) when both sides
 * ran the same trials on the same input draws: the same seed, trial count
 * and duration (two conditions of a screen, or two runs that differ only in
 * what they silence or change), so that trial k of A and trial k of B differ
 * only by the change; otherwise Welch's (bl_welch). Each neuron's row names
 * it (external id, cell type, from the connectome the records ran) and says
 * whether it was tested; neurons that do not vary are reported as such.
 *
 * Both records are verified (bl_record_verify) before anything is read. */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/analysis.h"
#include "brainlesslab/csv.h"
#include "brainlesslab/experiment.h"
#include "brainlesslab/hash.h"
#include "experiment/xp_impl.h"
#include "plan/plan_op.h"

#define MAX_MANIFEST (64u << 20)
#define TOP_DIFFERENCES 20

typedef struct side {
    char dir[4096];
    long condition; /* -1: a whole record */
    char manifest_sha256[65];
    char spikes_sha256[65]; /* "" when the record holds no spikes */
    double duration_ms, dt_ms, seed;
    char connectome_manifest[4096]; /* the manifest.json the run read (record input) */
    char connectome_sha256[65];
    uint32_t trials;
    uint64_t n;
    int32_t *counts; /* [trials][n] */
    void *v, *g;     /* final state [trials][n], or NULL */
    size_t state_bytes;
} side;

struct bl_compare {
    char record_dir[4096];
    char a[4200], b[4200];
    int spikes_known, spikes_identical, counts_identical, state_known, state_identical;
    uint64_t n, tested, significant, constant_differs;
    double alpha;
    int paired;
};

static void side_free(side *s)
{
    free(s->counts);
    free(s->v);
    free(s->g);
}

static char *read_text(const char *path, size_t max)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(max + 1);
    size_t n = buf ? fread(buf, 1, max + 1, f) : 0;
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad || n > max) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

static double json_number(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, a), b);
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

/* One trial-major slice [trials][n] of a file's condition (or the whole file). */
static bl_status read_slice(side *s, const char *name, int want_dtype, void **out, size_t *elem, bl_error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", s->dir, name);
    bl_npy_array a;
    bl_status st = bl_npy_read(path, &a, err);
    if (st)
        return st;
    int expect_nd = s->condition < 0 ? 2 : 3;
    if (a.ndim != expect_nd || (want_dtype >= 0 && a.dtype != (bl_dtype)want_dtype) ||
        (s->condition >= 0 && (uint64_t)s->condition >= a.shape[0])) {
        bl_npy_free(&a);
        return bl_fail(err, BL_ERR_FORMAT, "%s: expected %s array%s", path,
                       expect_nd == 2 ? "a [trials][neurons]" : "a [conditions][trials][neurons]",
                       s->condition >= 0 ? " holding the condition asked for" : "");
    }
    uint64_t t = a.shape[expect_nd - 2], n = a.shape[expect_nd - 1];
    size_t e = bl_dtype_size(a.dtype);
    if (s->counts && (t != s->trials || n != s->n)) {
        bl_npy_free(&a);
        return bl_fail(err, BL_ERR_FORMAT, "%s: shape differs from counts.npy", path);
    }
    s->trials = (uint32_t)t;
    s->n = n;
    uint64_t bytes = t * n * e;
    void *slice = malloc(bytes > 0 ? bytes : 1);
    if (!slice) {
        bl_npy_free(&a);
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate a slice", path);
    }
    memcpy(slice, (char *)a.data + (s->condition >= 0 ? (uint64_t)s->condition * t * n * e : 0), t * n * e);
    bl_npy_free(&a);
    *out = slice;
    if (elem)
        *elem = e;
    return BL_OK;
}

static bl_status spikes_digest(side *s, bl_error *err)
{
    char path[4200];
    if (s->condition >= 0) { /* a screen states each condition's digest */
        snprintf(path, sizeof path, "%s/conditions.json", s->dir);
        char *text = read_text(path, MAX_MANIFEST);
        cJSON *o = text ? cJSON_Parse(text) : NULL;
        free(text);
        const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "conditions"), (int)s->condition);
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(c, "spikes_sha256");
        if (cJSON_IsString(h) && strlen(h->valuestring) == 64)
            snprintf(s->spikes_sha256, sizeof s->spikes_sha256, "%s", h->valuestring);
        cJSON_Delete(o);
        return s->spikes_sha256[0] ? BL_OK : bl_fail(err, BL_ERR_FORMAT, "%s: no spikes_sha256 for condition %ld",
                                                     path, s->condition);
    }
    /* A connectome run's summary states the digest of the same stream. */
    snprintf(path, sizeof path, "%s/summary.json", s->dir);
    char *text = read_text(path, MAX_MANIFEST);
    cJSON *o = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "spikes_sha256");
    if (cJSON_IsString(h) && strlen(h->valuestring) == 64)
        snprintf(s->spikes_sha256, sizeof s->spikes_sha256, "%s", h->valuestring);
    cJSON_Delete(o);
    (void)err;
    return BL_OK; /* an older record without a digest: no verdict on spikes */
}

static bl_status load_side(const char *arg, side *s, bl_error *err)
{
    memset(s, 0, sizeof *s);
    s->condition = -1;
    snprintf(s->dir, sizeof s->dir, "%s", arg);
    char *at = strrchr(s->dir, '@');
    if (at) {
        char *end;
        long k = strtol(at + 1, &end, 10);
        if (at[1] == '\0' || *end || k < 0)
            return bl_fail(err, BL_ERR_INVALID, "%s: '@' must be followed by a condition number", arg);
        s->condition = k;
        *at = '\0';
    }
    bl_status st = bl_record_verify(s->dir, NULL, NULL, err);
    if (st)
        return bl_fail_context(err, "%s: the record does not verify", s->dir), st;
    char path[4200];
    snprintf(path, sizeof path, "%s/manifest.json", s->dir);
    bl_sha256_file(path, s->manifest_sha256, NULL, err);
    char *text = read_text(path, MAX_MANIFEST);
    cJSON *m = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *plan = cJSON_GetObjectItemCaseSensitive(m, "plan");
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(plan, "operation");
    s->duration_ms = json_number(plan, "run", "duration_ms");
    s->dt_ms = json_number(cJSON_GetObjectItemCaseSensitive(plan, "model"), "parameters", "dt_ms");
    s->seed = json_number(plan, "run", "seed");
    const cJSON *cm = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(plan, "connectome"),
                                                       "manifest_sha256");
    if (cJSON_IsString(cm) && strlen(cm->valuestring) == 64)
        snprintf(s->connectome_sha256, sizeof s->connectome_sha256, "%s", cm->valuestring);
    const cJSON *in;
    cJSON_ArrayForEach(in, cJSON_GetObjectItemCaseSensitive(m, "inputs")) {
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(in, "role"), *ip = cJSON_GetObjectItemCaseSensitive(in, "path");
        if (cJSON_IsString(role) && cJSON_IsString(ip) && !strcmp(role->valuestring, "connectome manifest"))
            snprintf(s->connectome_manifest, sizeof s->connectome_manifest, "%s", ip->valuestring);
    }
    /* What the record holds is its operation's row's word, not its name's. */
    const bl_operation *row = bl_xp_operation(cJSON_IsString(op) ? op->valuestring : NULL);
    int screen = row && (row->flags & BL_OP_RECORD_CONDITIONS);
    int connectome = row && (row->flags & BL_OP_RECORD_SPIKES);
    cJSON_Delete(m);
    if (!(screen || connectome) || !(s->duration_ms > 0) || !(s->dt_ms > 0))
        return bl_fail(err, BL_ERR_FORMAT, "%s: not the record of a connectome run or a screen (manifest plan)",
                       s->dir);
    if (screen != (s->condition >= 0))
        return bl_fail(err, BL_ERR_INVALID, screen ? "%s is a screen: name one of its conditions as %s@K"
                                                   : "%s is not a screen: it has no conditions (%s)",
                       s->dir, arg);
    size_t e;
    if ((st = read_slice(s, "counts.npy", BL_DTYPE_INT32, (void **)&s->counts, NULL, err)))
        return st;
    snprintf(path, sizeof path, "%s/final_v.npy", s->dir);
    FILE *probe = fopen(path, "rb");
    if (probe) {
        fclose(probe);
        if ((st = read_slice(s, "final_v.npy", -1, &s->v, &e, err)) ||
            (st = read_slice(s, "final_g.npy", -1, &s->g, &e, err)))
            return st;
        s->state_bytes = (size_t)s->trials * s->n * e;
    }
    return spikes_digest(s, err);
}

/* The neurons' external ids and cell types, from the connectome side A ran,
 * when it is still where the record says and still the same bytes (its
 * manifest's SHA-256 is the plan's); NULL with *why set otherwise: the rows
 * then carry the index alone. */
static bl_connectome *names_source(const side *a, uint64_t n, const char **why)
{
    *why = "the record names no connectome";
    if (!a->connectome_manifest[0])
        return NULL;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", a->connectome_manifest);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    bl_connectome *c = NULL;
    bl_error e = {0};
    *why = "the connectome the record ran is no longer where the record says";
    if (bl_connectome_load(dir, &c, &e))
        return NULL;
    const char *sha = bl_connectome_source(c, 0, &(const char *){NULL}, &(uint64_t){0});
    if (!sha || strcmp(sha, a->connectome_sha256) || bl_connectome_n_neurons(c) != n) {
        *why = "the connectome at the record's path is not the one it ran (its manifest changed)";
        bl_connectome_destroy(c);
        return NULL;
    }
    *why = NULL;
    return c;
}

static bl_status body(bl_compare *x, side *a, side *b, bl_record *rec, bl_error *err)
{
    if (a->n != b->n)
        return bl_fail(err, BL_ERR_INVALID, "the records have %" PRIu64 " and %" PRIu64 " neurons: not comparable",
                       a->n, b->n);
    uint64_t n = a->n;
    x->n = n;
    x->alpha = 0.05;
    x->spikes_known = a->spikes_sha256[0] && b->spikes_sha256[0];
    x->spikes_identical = x->spikes_known && !strcmp(a->spikes_sha256, b->spikes_sha256);
    x->counts_identical = a->trials == b->trials && !memcmp(a->counts, b->counts, (size_t)a->trials * n * 4);
    x->state_known = a->v && b->v && a->state_bytes == b->state_bytes;
    x->state_identical = x->state_known && !memcmp(a->v, b->v, a->state_bytes) && !memcmp(a->g, b->g, a->state_bytes);

    /* Paired when trial k of both sides drew the same input: same seed, same
     * trials, same duration (the streams are keyed by seed and trial). */
    x->paired = a->trials == b->trials && a->seed == b->seed && !isnan(a->seed) && a->duration_ms == b->duration_ms &&
                a->dt_ms == b->dt_ms;
    const char *names_why = NULL;
    bl_connectome *meta = names_source(a, n, &names_why);
    int col_type = meta ? bl_connectome_column(meta, "cell_type") : -1;
    bl_contrast *c = malloc((n ? n : 1) * sizeof *c);
    double *p = malloc((n ? n : 1) * sizeof *p), *q = malloc((n ? n : 1) * sizeof *q);
    double *ra = malloc((a->trials ? a->trials : 1) * sizeof *ra), *rb = malloc((b->trials ? b->trials : 1) * sizeof *rb);
    bl_status st = c && p && q && ra && rb ? BL_OK : bl_fail(err, BL_ERR_NOMEM, "cannot allocate the contrasts");
    for (uint64_t i = 0; !st && i < n; i++) {
        for (uint32_t t = 0; t < a->trials; t++)
            ra[t] = a->counts[(uint64_t)t * n + i] / (a->duration_ms / 1000.0);
        for (uint32_t t = 0; t < b->trials; t++)
            rb[t] = b->counts[(uint64_t)t * n + i] / (b->duration_ms / 1000.0);
        if (x->paired)
            bl_paired(ra, rb, a->trials, &c[i]);
        else
            bl_welch(ra, a->trials, rb, b->trials, &c[i]);
        p[i] = c[i].p;
    }
    if (!st)
        st = bl_bh_qvalues(p, n, q, err);
    char path[4096];
    FILE *f = NULL;
    if (!st && !(st = bl_record_path(rec, "rate_differences.csv", path, sizeof path, err)) && !(f = fopen(path, "w")))
        st = bl_fail(err, BL_ERR_IO, "%s: cannot create", path);
    cJSON *o = cJSON_CreateObject(), *top = NULL;
    if (!st) {
        const char *head[] = {"index", "external_id", "cell_type", "status", "mean_a_hz", "mean_b_hz", "diff_hz",
                              "cohen_d", "t", "df", "p", "q_bh"};
        for (int k = 0; k < 12; k++)
            bl_csv_write_field(f, head[k], k == 11);
        for (uint64_t i = 0; i < n; i++) {
            double v[8] = {c[i].mean_a, c[i].mean_b, c[i].diff, c[i].cohen_d, c[i].t, c[i].df, c[i].p, q[i]};
            char buf[40];
            snprintf(buf, sizeof buf, "%" PRIu64, i);
            bl_csv_write_field(f, buf, 0);
            bl_csv_write_field(f, meta ? bl_connectome_external_id(meta, i) : "", 0);
            bl_csv_write_field(f, col_type >= 0 ? bl_connectome_value(meta, (size_t)col_type, i) : "", 0);
            bl_csv_write_field(f, bl_contrast_status_name(c[i].status), 0);
            for (int k = 0; k < 8; k++) {
                if (isnan(v[k]))
                    buf[0] = '\0';
                else
                    snprintf(buf, sizeof buf, "%.17g", v[k]);
                bl_csv_write_field(f, buf, k == 7);
            }
            if (!isnan(p[i]))
                x->tested++;
            if (!isnan(q[i]) && q[i] < x->alpha)
                x->significant++;
            x->constant_differs += c[i].status == BL_CONTRAST_CONSTANT_DIFFERS;
        }
        int bad = ferror(f);
        if (fclose(f) || bad)
            st = bl_fail(err, BL_ERR_IO, "%s: write failed", path);
    }
    if (!st) {
        cJSON *v = cJSON_AddObjectToObject(o, "verdict");
        if (x->spikes_known)
            cJSON_AddBoolToObject(v, "spikes_identical", x->spikes_identical);
        else
            cJSON_AddNullToObject(v, "spikes_identical");
        cJSON_AddBoolToObject(v, "counts_identical", x->counts_identical);
        if (x->state_known)
            cJSON_AddBoolToObject(v, "final_state_identical", x->state_identical);
        else
            cJSON_AddNullToObject(v, "final_state_identical");
        side *sides[2] = {a, b};
        const char *names[2] = {"a", "b"};
        for (int k = 0; k < 2; k++) {
            cJSON *s = cJSON_AddObjectToObject(o, names[k]);
            cJSON_AddStringToObject(s, "record", sides[k]->dir);
            if (sides[k]->condition >= 0)
                cJSON_AddNumberToObject(s, "condition", (double)sides[k]->condition);
            cJSON_AddStringToObject(s, "manifest_sha256", sides[k]->manifest_sha256);
            cJSON_AddStringToObject(s, "spikes_sha256", sides[k]->spikes_sha256);
            cJSON_AddNumberToObject(s, "trials", sides[k]->trials);
            cJSON_AddNumberToObject(s, "duration_ms", sides[k]->duration_ms);
        }
        cJSON *t = cJSON_AddObjectToObject(o, "rates");
        cJSON_AddStringToObject(t, "test", x->paired ? "paired t test on per-trial rates (Hz), two-sided" :
                                                       "Welch two-sample t test on per-trial rates (Hz), two-sided");
        cJSON_AddStringToObject(t, "why", x->paired ? "both sides ran the same trials on the same input draws (same "
                                                      "seed, trials and duration): trial k of A pairs with trial k of B"
                                                    : "the sides did not share their input draws (seed, trials or "
                                                      "duration differ)");
        cJSON_AddStringToObject(t, "effect_size", x->paired ? "Cohen's d_z: mean difference / SD of the differences"
                                                            : "Cohen's d: difference / pooled sample SD");
        cJSON_AddStringToObject(t, "q", "Benjamini-Hochberg over the neurons tested");
        cJSON_AddStringToObject(t, "status", "tested; constant_equal: no variation and no difference (not tested); "
                                "constant_differs: no variation yet a difference the t test cannot weigh (not "
                                "tested, counted apart); too_few_trials: fewer than 2 trials");
        cJSON_AddNumberToObject(t, "constant_differs", (double)x->constant_differs);
        if (names_why)
            cJSON_AddStringToObject(t, "names_missing", names_why);
        cJSON_AddNumberToObject(t, "neurons", (double)n);
        cJSON_AddNumberToObject(t, "tested", (double)x->tested);
        cJSON_AddNumberToObject(t, "alpha", x->alpha);
        cJSON_AddNumberToObject(t, "significant_q_below_alpha", (double)x->significant);
        top = cJSON_AddArrayToObject(t, "largest_significant_effects");
        /* The TOP_DIFFERENCES significant neurons with the largest |d| (a selection, no sort of all n). */
        uint8_t *taken = calloc(n ? n : 1, 1);
        for (int k = 0; taken && k < TOP_DIFFERENCES; k++) {
            int64_t best = -1;
            for (uint64_t i = 0; i < n; i++)
                if (!taken[i] && !isnan(q[i]) && q[i] < x->alpha &&
                    (best < 0 || fabs(c[i].cohen_d) > fabs(c[best].cohen_d)))
                    best = (int64_t)i;
            if (best < 0)
                break;
            taken[best] = 1;
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "index", (double)best);
            if (meta)
                cJSON_AddStringToObject(e, "external_id", bl_connectome_external_id(meta, (uint64_t)best));
            if (col_type >= 0)
                cJSON_AddStringToObject(e, "cell_type", bl_connectome_value(meta, (size_t)col_type, (uint64_t)best));
            cJSON_AddNumberToObject(e, "mean_a_hz", c[best].mean_a);
            cJSON_AddNumberToObject(e, "mean_b_hz", c[best].mean_b);
            cJSON_AddNumberToObject(e, "cohen_d", c[best].cohen_d); /* finite: tested neurons only */
            cJSON_AddNumberToObject(e, "q_bh", q[best]);
            cJSON_AddItemToArray(top, e);
        }
        free(taken);
        st = bl_xp_write_json(rec, "compare.json", o, err);
        o = NULL;
    }
    cJSON_Delete(o);
    bl_connectome_destroy(meta);
    free(c);
    free(p);
    free(q);
    free(ra);
    free(rb);
    return st;
}

bl_status bl_compare_records(const char *a_arg, const char *b_arg, const char *root, bl_compare **out, bl_error *err)
{
    *out = NULL;
    bl_compare *x = calloc(1, sizeof *x);
    side a, b;
    if (!x)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate a comparison");
    snprintf(x->a, sizeof x->a, "%s", a_arg);
    snprintf(x->b, sizeof x->b, "%s", b_arg);
    bl_status st = load_side(a_arg, &a, err);
    if (!st)
        st = load_side(b_arg, &b, err);
    else
        memset(&b, 0, sizeof b);
    bl_record *rec = NULL;
    if (!st) {
        char both[140], hash[65];
        snprintf(both, sizeof both, "%s%s", a.manifest_sha256, b.manifest_sha256);
        bl_sha256_buffer(both, strlen(both), hash);
        st = bl_xp_reserve_named(root, "compare", hash, &rec, err);
    }
    if (!st) {
        snprintf(x->record_dir, sizeof x->record_dir, "%s", bl_record_dir(rec));
        char path[4200];
        snprintf(path, sizeof path, "%s/manifest.json", a.dir);
        st = bl_record_add_input(rec, "record a manifest", path, err);
        snprintf(path, sizeof path, "%s/manifest.json", b.dir);
        if (!st)
            st = bl_record_add_input(rec, "record b manifest", path, err);
        if (!st)
            st = body(x, &a, &b, rec, err);
        st = bl_xp_finish(rec, st, err);
    }
    bl_record_destroy(rec);
    side_free(&a);
    side_free(&b);
    if (st) {
        free(x);
        return st;
    }
    *out = x;
    return BL_OK;
}

void bl_compare_destroy(bl_compare *x) { free(x); }
const char *bl_compare_record_dir(const bl_compare *x) { return x->record_dir; }
int bl_compare_identical(const bl_compare *x)
{
    return x->spikes_known ? x->spikes_identical && x->counts_identical : x->counts_identical;
}

void bl_compare_print(const bl_compare *x, FILE *f)
{
    fprintf(f, "compare %s\n    and %s\n", x->a, x->b);
    fprintf(f, "  spikes: %s\n", !x->spikes_known ? "not recorded on both sides (no verdict)"
                                 : x->spikes_identical ? "IDENTICAL, event for event" : "DIFFERENT");
    fprintf(f, "  counts: %s; final state: %s\n", x->counts_identical ? "identical" : "different",
            !x->state_known ? "not comparable" : x->state_identical ? "identical" : "different");
    fprintf(f, "  rates: %" PRIu64 " of %" PRIu64 " neurons tested differ (%s t test, BH q < %.2f)\n",
            x->significant, x->tested, x->paired ? "paired" : "Welch", x->alpha);
    if (x->constant_differs)
        fprintf(f, "         %" PRIu64 " more differ without varying from trial to trial (not tested; "
                "rate_differences.csv: constant_differs)\n", x->constant_differs);
    fprintf(f, "  record: %s\n", x->record_dir);
}
