/* The connectome loader's fast paths against their slow definitions (issue
 * 28): the external-id index against a strcmp sort, interned columns against
 * their values, the piecewise graph checks against bl_csr_validate (same
 * verdict and the same message, faults placed across piece boundaries), and
 * the CSV reader's plain-line split against libcsv on the same fields quoted. */
#define _GNU_SOURCE /* qsort_r */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/csv.h"
#include "brainlesslab/hash.h"
#include "brainlesslab/npy.h"

#include "test_support.h"

BL_TEST_TMPDIR_GROUP("connectome_load")

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* A graph of n neurons: row i has deg_of(i, n) edges, ascending from a
 * start that keeps them inside 0..n-1, counts in 1..9 with every third
 * negative. Returned arrays are the caller's. */
static uint64_t deg_of(uint64_t i, uint64_t n)
{
    return (i * 7) % 23 % (n + 1);
}

static void make_graph(uint64_t n, int64_t **off, int32_t **tgt, int32_t **cnt, uint64_t *e_out)
{
    uint64_t e = 0;
    for (uint64_t i = 0; i < n; i++)
        e += deg_of(i, n);
    *off = malloc((n + 1) * sizeof **off);
    *tgt = malloc((e ? e : 1) * sizeof **tgt);
    *cnt = malloc((e ? e : 1) * sizeof **cnt);
    assert_non_null(*off);
    assert_non_null(*tgt);
    assert_non_null(*cnt);
    uint64_t k = 0;
    (*off)[0] = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t deg = deg_of(i, n), start = (i * 131) % (n - deg + 1);
        for (uint64_t j = 0; j < deg; j++, k++) {
            (*tgt)[k] = (int32_t)(start + j);
            int32_t v = (int32_t)(1 + k % 9);
            (*cnt)[k] = k % 3 == 0 ? -v : v;
        }
        (*off)[i + 1] = (int64_t)k;
    }
    *e_out = e;
}

/* ---- the id index ---- */

static int cmp_ref(const void *a, const void *b, void *base)
{
    char **ids = base;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    int r = strcmp(ids[x], ids[y]);
    return r ? r : (x > y) - (x < y);
}

/* The message bl_connectome_set_external_ids must give for ids: the first
 * equal neighbours in (id, index) order, or "" when all are unique. */
static void expected_duplicate(char **ids, int32_t n, char *msg, size_t size)
{
    int32_t *order = malloc((size_t)n * sizeof *order);
    assert_non_null(order);
    for (int32_t i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, (size_t)n, sizeof *order, cmp_ref, ids);
    msg[0] = '\0';
    for (int32_t i = 1; i < n; i++)
        if (!strcmp(ids[order[i - 1]], ids[order[i]])) {
            int32_t a = order[i - 1], b = order[i];
            snprintf(msg, size, "external id '%s' is used by neurons %d and %d (ids must be unique)", ids[a],
                     a < b ? a : b, a < b ? b : a);
            break;
        }
    free(order);
}

/* Every id found at its index, near misses not found, duplicates named as a
 * strcmp sort names them. */
static void check_ids(char **ids, int32_t n)
{
    int64_t *off;
    int32_t *tgt, *cnt;
    uint64_t e;
    make_graph((uint64_t)n, &off, &tgt, &cnt, &e);
    bl_connectome *c;
    bl_error err = {0};
    assert_int_equal(bl_connectome_adopt((uint64_t)n, e, off, tgt, cnt, &c, &err), BL_OK);
    char want[512];
    expected_duplicate(ids, n, want, sizeof want);
    bl_status st = bl_connectome_set_external_ids(c, (const char *const *)ids, &err);
    if (want[0]) {
        assert_int_equal(st, BL_ERR_INVALID);
        assert_string_equal(err.message, want);
        bl_connectome_destroy(c);
        return;
    }
    assert_int_equal(st, BL_OK);
    for (int32_t i = 0; i < n; i++) {
        int32_t got = -1;
        assert_int_equal(bl_connectome_find(c, ids[i], &got, &err), BL_OK);
        assert_int_equal(got, i);
        assert_string_equal(bl_connectome_external_id(c, (uint64_t)i), ids[i]);
        char miss[96];
        snprintf(miss, sizeof miss, "%s~", ids[i]); /* longer than any id with this prefix here */
        assert_int_equal(bl_connectome_find(c, miss, &got, &err), BL_ERR_INVALID);
    }
    bl_connectome_destroy(c);
}

static char **id_array(int32_t n)
{
    char **ids = calloc((size_t)n, sizeof *ids);
    assert_non_null(ids);
    return ids;
}

static void free_ids(char **ids, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        free(ids[i]);
    free(ids);
}

static void id_index(void **unused)
{
    (void)unused;
    enum { N = 3000 };
    char buf[96];
    /* FlyWire-like root ids: a long shared prefix, then digits. */
    char **ids = id_array(N);
    for (int32_t i = 0; i < N; i++) {
        snprintf(buf, sizeof buf, "7205759406%08llu", (unsigned long long)(rnd() % 100000000u));
        ids[i] = strdup(buf);
    }
    check_ids(ids, N); /* random: unique, or a duplicate named like the sort */
    for (int32_t i = 0; i < N; i++) {
        snprintf(buf, sizeof buf, "7205759406%08d", (int)((int64_t)i * 33331 % 100000000));
        free(ids[i]);
        ids[i] = strdup(buf);
    }
    check_ids(ids, N);
    /* Ties beyond the 8 key bytes after the shared prefix, varying lengths,
     * one id a prefix of another, bytes above 0x7f. */
    for (int32_t i = 0; i < N; i++) {
        int kind = i % 5;
        if (kind == 0)
            snprintf(buf, sizeof buf, "neuron_ABCDEFGH_%d", i);
        else if (kind == 1)
            snprintf(buf, sizeof buf, "neuron_ABCDEFGH_%d_x", i);
        else if (kind == 2)
            snprintf(buf, sizeof buf, "n%d", i);
        else if (kind == 3)
            snprintf(buf, sizeof buf, "neuron_\xc3\xa9%d", i);
        else
            snprintf(buf, sizeof buf, "neuron_ABCDEFG%d", i);
        free(ids[i]);
        ids[i] = strdup(buf);
    }
    check_ids(ids, N);
    /* Duplicates: three copies of one id and a pair of another, both long. */
    free(ids[100]);
    ids[100] = strdup(ids[2000]);
    free(ids[7]);
    ids[7] = strdup(ids[2000]);
    free(ids[55]);
    ids[55] = strdup(ids[56]);
    check_ids(ids, N);
    /* Duplicates that end inside the key. */
    for (int32_t i = 0; i < N; i++) {
        snprintf(buf, sizeof buf, "%d", i % 2999);
        free(ids[i]);
        ids[i] = strdup(buf);
    }
    check_ids(ids, N);
    free_ids(ids, N);
    /* Every id equal but one; a single neuron; the empty-prefix case. */
    ids = id_array(4);
    ids[0] = strdup("same");
    ids[1] = strdup("same");
    ids[2] = strdup("samf");
    ids[3] = strdup("s");
    check_ids(ids, 4);
    free(ids[1]);
    ids[1] = strdup("b");
    check_ids(ids, 4);
    check_ids(ids + 2, 1);
    free_ids(ids, 4);
}

/* ---- interned metadata columns ---- */

static void interned_columns(void **unused)
{
    (void)unused;
    enum { N = 20000 };
    int64_t *off;
    int32_t *tgt, *cnt;
    uint64_t e;
    make_graph(N, &off, &tgt, &cnt, &e);
    bl_connectome *c;
    bl_error err = {0};
    assert_int_equal(bl_connectome_adopt(N, e, off, tgt, cnt, &c, &err), BL_OK);
    const char **few = calloc(N, sizeof *few), **many = calloc(N, sizeof *many);
    char **store = calloc(N, sizeof *store);
    assert_non_null(few);
    assert_non_null(many);
    assert_non_null(store);
    static const char *const types[] = {"interneuron", "sensory", "motor", "", NULL};
    for (int i = 0; i < N; i++) {
        few[i] = types[rnd() % 5];
        char buf[64];
        snprintf(buf, sizeof buf, "value_%llu", (unsigned long long)(rnd() % 9000)); /* ~8,000 distinct */
        store[i] = strdup(buf);
        many[i] = store[i];
    }
    assert_int_equal(bl_connectome_add_column(c, "cell_type", few, &err), BL_OK);
    assert_int_equal(bl_connectome_add_column(c, "label", many, &err), BL_OK);
    for (int i = 0; i < N; i++) {
        assert_string_equal(bl_connectome_value(c, 0, (uint64_t)i), few[i] ? few[i] : "");
        assert_string_equal(bl_connectome_value(c, 1, (uint64_t)i), many[i]);
    }
    /* Equal values share one copy. */
    for (int i = 1; i < N; i++)
        for (int j = i - 1; j >= 0 && j >= i - 50; j--) {
            int same = !strcmp(bl_connectome_value(c, 1, (uint64_t)i), bl_connectome_value(c, 1, (uint64_t)j));
            assert_int_equal(same, bl_connectome_value(c, 1, (uint64_t)i) == bl_connectome_value(c, 1, (uint64_t)j));
        }
    for (int i = 0; i < N; i++)
        free(store[i]);
    free(store);
    free(few);
    free(many);
    bl_connectome_destroy(c);
}

/* ---- the piecewise checks of a directory load ---- */

static int dup_id_row = -1; /* write_graph: this row repeats the previous row's id */

static void write_graph(const char *dir, uint64_t n, uint64_t e, const int64_t *off, const int32_t *tgt,
                        const int32_t *cnt, uint64_t synapses)
{
    bl_error err = {0};
    char path[600];
    assert_int_equal(mkdir(dir, 0777), 0);
    uint64_t n1 = n + 1;
    snprintf(path, sizeof path, "%s/offsets.npy", dir);
    assert_int_equal(bl_npy_write(path, BL_DTYPE_INT64, 1, &n1, off, &err), BL_OK);
    snprintf(path, sizeof path, "%s/targets.npy", dir);
    assert_int_equal(bl_npy_write(path, BL_DTYPE_INT32, 1, &e, tgt, &err), BL_OK);
    snprintf(path, sizeof path, "%s/counts.npy", dir);
    assert_int_equal(bl_npy_write(path, BL_DTYPE_INT32, 1, &e, cnt, &err), BL_OK);
    snprintf(path, sizeof path, "%s/neurons.csv", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "index,external_id\n");
    for (uint64_t i = 0; i < n; i++)
        fprintf(f, "%llu,id%llu\n", (unsigned long long)i,
                (unsigned long long)((int64_t)i == dup_id_row ? i - 1 : i));
    assert_int_equal(fclose(f), 0);
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"format\": \"%s\", \"format_version\": %d, \"n_neurons\": %llu, \"n_edges\": %llu, "
               "\"n_synapses\": %llu, \"files\": {", BL_CONNECTOME_FORMAT, BL_CONNECTOME_FORMAT_VERSION,
            (unsigned long long)n, (unsigned long long)e, (unsigned long long)synapses);
    static const char *const names[] = {"offsets.npy", "targets.npy", "counts.npy", "neurons.csv"};
    for (int k = 0; k < 4; k++) {
        char file[600], hex[BL_SHA256_HEX_LEN + 1];
        uint64_t bytes;
        snprintf(file, sizeof file, "%s/%s", dir, names[k]);
        assert_int_equal(bl_sha256_file(file, hex, &bytes, &err), BL_OK);
        fprintf(f, "%s\"%s\": {\"bytes\": %llu, \"sha256\": \"%s\"}", k ? ", " : "", names[k],
                (unsigned long long)bytes, hex);
    }
    fprintf(f, "}}\n");
    assert_int_equal(fclose(f), 0);
}

static uint64_t synapse_sum(const int32_t *cnt, uint64_t e)
{
    uint64_t s = 0;
    for (uint64_t k = 0; k < e; k++)
        s += (uint64_t)(cnt[k] < 0 ? -(int64_t)cnt[k] : cnt[k]);
    return s;
}

/* The load of these arrays succeeds exactly when bl_csr_validate accepts
 * them, and fails with its message when it does not. */
static void expect_load_like_validate(const char *name, uint64_t n, uint64_t e, const int64_t *off,
                                      const int32_t *tgt, const int32_t *cnt)
{
    const char *dir = tmp_path(name);
    write_graph(dir, n, e, off, tgt, cnt, synapse_sum(cnt, e));
    bl_error want = {0}, got = {0};
    bl_status vst = bl_csr_validate(dir, n, e, off, tgt, cnt, &want);
    bl_connectome *c = NULL;
    bl_status lst = bl_connectome_load(dir, &c, &got);
    if (lst != vst || (vst && strcmp(got.message, want.message)))
        fail_msg("%s: load %d '%s', validate %d '%s'", name, lst, got.message, vst, want.message);
    if (!vst) {
        assert_int_equal(bl_connectome_n_edges(c), e);
        assert_int_equal(bl_connectome_n_synapses(c), synapse_sum(cnt, e));
        assert_memory_equal(bl_connectome_targets(c), tgt, e * sizeof *tgt);
        assert_memory_equal(bl_connectome_counts(c), cnt, e * sizeof *cnt);
        char last[32];
        snprintf(last, sizeof last, "id%llu", (unsigned long long)(n - 1));
        assert_string_equal(bl_connectome_external_id(c, n - 1), last);
        int32_t idx;
        assert_int_equal(bl_connectome_find(c, "id1234", &idx, &got), BL_OK);
        assert_int_equal(idx, 1234);
    }
    bl_connectome_destroy(c);
}

static void piecewise_checks(void **unused)
{
    (void)unused;
    enum { N = 20000 };
    int64_t *off;
    int32_t *tgt, *cnt;
    uint64_t e;
    make_graph(N, &off, &tgt, &cnt, &e);
    assert_true(e > 3 * 65536); /* several pieces */
    expect_load_like_validate("valid", N, e, off, tgt, cnt);
    /* A row that straddles a piece boundary (pieces are 65536 elements). */
    uint64_t row = 0, straddle = 0;
    for (uint64_t b = 65536; b < e && !straddle; b += 65536) {
        row = 0;
        while ((uint64_t)off[row + 1] <= b)
            row++;
        if ((uint64_t)off[row] < b && (uint64_t)off[row + 1] > b + 1)
            straddle = b;
    }
    assert_true(straddle > 0);
    char name[64];
    int variant = 0;
    /* Target faults at, just before and just after a piece boundary inside
     * one row, at the first and last edge, elsewhere; count faults there. */
    const int64_t places[] = {(int64_t)straddle - 1, (int64_t)straddle, (int64_t)straddle + 1, 0, -1, 65536,
                              131072, 100000};
    for (size_t p = 0; p < sizeof places / sizeof places[0]; p++) {
        uint64_t k = places[p] < 0 ? e - 1 : (uint64_t)places[p];
        int32_t keep_t = tgt[k], keep_c = cnt[k];
        tgt[k] = k > 0 ? tgt[k - 1] : N; /* a repeat (or out of range at edge 0) */
        snprintf(name, sizeof name, "bad%d", variant++);
        expect_load_like_validate(name, N, e, off, tgt, cnt);
        tgt[k] = -1;
        snprintf(name, sizeof name, "bad%d", variant++);
        expect_load_like_validate(name, N, e, off, tgt, cnt);
        tgt[k] = keep_t;
        cnt[k] = 0;
        snprintf(name, sizeof name, "bad%d", variant++);
        expect_load_like_validate(name, N, e, off, tgt, cnt);
        cnt[k] = INT32_MIN;
        snprintf(name, sizeof name, "bad%d", variant++);
        expect_load_like_validate(name, N, e, off, tgt, cnt);
        cnt[k] = keep_c;
    }
    /* Both files faulty: the earlier edge is named, the target first at a tie. */
    const int32_t t70 = tgt[70000], t90 = tgt[90000], c70 = cnt[70000], c90 = cnt[90000];
    tgt[70000] = N + 5;
    cnt[90000] = 0;
    expect_load_like_validate("both1", N, e, off, tgt, cnt);
    tgt[70000] = t70;
    tgt[90000] = N + 5;
    cnt[90000] = c90;
    cnt[70000] = 0;
    expect_load_like_validate("both2", N, e, off, tgt, cnt);
    cnt[70000] = c70;
    cnt[90000] = 0;
    expect_load_like_validate("both3", N, e, off, tgt, cnt);
    tgt[90000] = t90;
    cnt[90000] = c90;
    /* Faulty offsets: the offsets' own message, whatever the edges hold. */
    int64_t keep = off[row];
    off[row] = off[row + 1] + 1;
    expect_load_like_validate("badoff", N, e, off, tgt, cnt);
    off[row] = keep;
    /* n_synapses that disagrees with the counts: named by the loader. */
    const char *dir = tmp_path("badsyn");
    write_graph(dir, N, e, off, tgt, cnt, synapse_sum(cnt, e) + 1);
    bl_connectome *c = NULL;
    bl_error err = {0};
    assert_int_equal(bl_connectome_load(dir, &c, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "n_synapses"));
    assert_null(c);
    /* A neuron table fault is reported after those of the graph and of
     * n_synapses, though neurons.csv is parsed beside the edge arrays. */
    dup_id_row = 6;
    dir = tmp_path("dupid");
    write_graph(dir, N, e, off, tgt, cnt, synapse_sum(cnt, e));
    assert_int_equal(bl_connectome_load(dir, &c, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "neurons.csv: external id 'id5' is used by neurons 5 and 6"));
    dir = tmp_path("dupid_syn");
    write_graph(dir, N, e, off, tgt, cnt, synapse_sum(cnt, e) + 1);
    assert_int_equal(bl_connectome_load(dir, &c, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "n_synapses"));
    int32_t t0 = tgt[100000];
    tgt[100000] = -7;
    expect_load_like_validate("dupid_graph", N, e, off, tgt, cnt);
    tgt[100000] = t0;
    dup_id_row = -1;
    free(off);
    free(tgt);
    free(cnt);
}

/* ---- plain CSV lines against libcsv ---- */

/* Every row of text read through a csv named name: fields joined by '|',
 * each row prefixed by its line, then the final status and message. */
static char *transcript(const char *name, const char *text)
{
    bl_csv *c;
    bl_error err = {0};
    assert_int_equal(bl_csv_open_memory(name, text, strlen(text), &c, &err), BL_OK);
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    out[0] = '\0';
    int r;
    while ((r = bl_csv_next(c, &err)) > 0) {
        if (len + 4096 > cap) { /* rows here are short */
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
        len += (size_t)snprintf(out + len, cap - len, "%llu:", (unsigned long long)bl_csv_line(c));
        for (size_t i = 0; i < bl_csv_nfields(c); i++)
            len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? "|" : "", bl_csv_field(c, i));
        len += (size_t)snprintf(out + len, cap - len, "\n");
    }
    snprintf(out + len, cap - len, "end %d %s", r, r < 0 ? err.message : "");
    bl_csv_close(c);
    return out;
}

/* text with every field of every line quoted (no field here holds a quote,
 * a delimiter or a line break), which libcsv alone reads; blank lines stay
 * blank. */
static char *quoted(const char *text, char delim)
{
    size_t n = strlen(text);
    char *q = malloc(3 * n + 3), *o = q;
    assert_non_null(q);
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && text[j] != '\n' && text[j] != '\r')
            j++;
        if (j > i) { /* the line's content, fields quoted */
            *o++ = '"';
            for (size_t k = i; k < j; k++) {
                if (text[k] == delim) {
                    *o++ = '"';
                    *o++ = delim;
                    *o++ = '"';
                } else {
                    *o++ = text[k];
                }
            }
            *o++ = '"';
        }
        while (j < n && (text[j] == '\n' || text[j] == '\r'))
            *o++ = text[j++];
        i = j;
    }
    *o = '\0';
    return q;
}

static void plain_lines(void **unused)
{
    (void)unused;
    static const char *const texts[] = {
        "index,external_id,cell_type\n0,720575940,sensory\n1,720575941,\n2,,motor\n",
        ",a,\n,,\nx\n\n\n7,8,9\nlast,line,no newline",
        "a,b\r\nc,d\r\ne,f\n\r\ng,h\n",
        "h1,h2\n1,2\n3,4,5\n6\n",
        "x,y\n\n\n\n1,2\n",
        "a,b\nc,d\xff\xfe,e\n",
    };
    for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
        char *q = quoted(texts[t], ',');
        char *a = transcript("plain.csv", texts[t]), *b = transcript("plain.csv", q);
        if (strcmp(a, b))
            fail_msg("text %zu:\nplain:\n%s\nquoted:\n%s", t, a, b);
        free(a);
        free(b);
        free(q);
    }
    /* Blanks around fields are libcsv's to trim: such lines are never split here. */
    char *sp = transcript("sp.csv", " a , b\t,c\n d,e \n");
    assert_string_equal(sp, "1:a|b|c\n2:d|e\nend 0 ");
    free(sp);
    /* A tab-separated table: tabs split, never trim; commas are data. */
    const char *tsv = "a\tb,c\t\nd\t\te\n";
    char *q = quoted(tsv, '\t');
    char *a = transcript("plain.tsv", tsv), *b = transcript("plain.tsv", q);
    assert_string_equal(a, b);
    assert_non_null(strstr(a, "1:a|b,c|\n2:d||e\n"));
    free(a);
    free(b);
    free(q);
    /* A NUL byte inside a plain field: the callbacks' own message, on its line. */
    static const char nul[] = "a,b\nc,d\0e\n";
    bl_csv *c;
    bl_error err = {0};
    assert_int_equal(bl_csv_open_memory("nul.csv", nul, sizeof nul - 1, &c, &err), BL_OK);
    assert_int_equal(bl_csv_next(c, &err), 1);
    assert_int_equal(bl_csv_next(c, &err), -1);
    assert_non_null(strstr(err.message, "nul.csv:2: column 2: field contains a NUL byte"));
    bl_csv_close(c);
    /* Many plain rows across the 64 KiB read chunks, some lines straddling them. */
    size_t cap = 400000, len = 0;
    char *big = malloc(cap);
    assert_non_null(big);
    for (int i = 0; len < cap - 100; i++)
        len += (size_t)snprintf(big + len, cap - len, i % 97 == 0 ? "%d,\"q %d\",x\n" : "%d,v%d,x\n", i, i * 7);
    a = transcript("big.csv", big);
    int rows = 0;
    for (char *line = a; (line = strchr(line, '\n')); line++)
        rows++;
    assert_true(rows > 10000);
    assert_non_null(strstr(a, "\n98:97|q 679|x\n99:98|v686|x\n"));
    assert_non_null(strstr(a, "end 0"));
    free(a);
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(id_index),
        cmocka_unit_test(interned_columns),
        cmocka_unit_test(piecewise_checks),
        cmocka_unit_test(plain_lines),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
