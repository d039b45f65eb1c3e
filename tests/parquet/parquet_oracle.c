/* The Parquet reader against an independent writer, and the writer against an
 * independent reader (tests/cli/test_parquet_oracle.sh drives both).
 *
 *   parquet_oracle read DIR    read every fixture DIR/expected.json lists
 *                              (written by tests/js/parquet_fixtures.mjs with
 *                              parquet-wasm) through bl_table_parquet and
 *                              compare every value; one line per fixture and
 *                              a summary per codec, encoding and type.
 *   parquet_oracle write DIR   write fixtures with bl_parquet_writer_* and
 *                              DIR/ours.json with their values, for
 *                              tests/js/parquet_readback.mjs.
 *
 * The encodings named are those the file's column chunk metadata lists, read
 * here from the footer, not what the generator asked for. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "brainlesslab/table.h"
#include "io/parquet.h"
#include "io/table_impl.h"
#include "../tools/slurp.h"

/* ---- tallies for the summary ---- */
typedef struct tally {
    char key[96];
    unsigned long long values;
} tally;
#define MAX_TALLY 128
static tally by_codec[MAX_TALLY], by_encoding[MAX_TALLY], by_type[MAX_TALLY];

static void count(tally *t, const char *key, unsigned long long n)
{
    for (int i = 0; i < MAX_TALLY; i++) {
        if (!t[i].key[0])
            snprintf(t[i].key, sizeof t[i].key, "%s", key);
        if (!strcmp(t[i].key, key)) {
            t[i].values += n;
            return;
        }
    }
}

static void print_tally(const char *what, const tally *t)
{
    for (int i = 0; i < MAX_TALLY && t[i].key[0]; i++)
        printf("parquet oracle summary: %s %-40s %llu values equal\n", what, t[i].key, t[i].values);
}

/* The encodings a column's chunks list (levels' RLE left out unless the
 * values are booleans, whose RLE is a value encoding). */
static void encodings_of(const char *path, uint32_t leaf, int is_bool, char *out, size_t cap)
{
    size_t n;
    out[0] = '\0';
    char *b = bl_test_slurp(path, &n);
    if (!b || n < 12) {
        free(b);
        return;
    }
    const uint8_t *u = (const uint8_t *)b;
    uint32_t mlen = (uint32_t)u[n - 8] | (uint32_t)u[n - 7] << 8 | (uint32_t)u[n - 6] << 16 | (uint32_t)u[n - 5] << 24;
    bl_pq_file_meta m;
    bl_pq_why why;
    uint32_t mask = 0;
    if (mlen <= n - 12 && bl_pq_parse_file_meta(u + n - 8 - mlen, mlen, &m, &why) == 0) {
        for (uint32_t g = 0; g < m.n_row_groups; g++)
            if (leaf < m.row_groups[g].n_columns)
                mask |= m.row_groups[g].columns[leaf].encodings;
        bl_pq_file_meta_free(&m);
    }
    free(b);
    if (!is_bool && (mask & ~(1u << PQ_RLE)))
        mask &= ~(1u << PQ_RLE);
    /* A dictionary page is PLAIN (v2) or PLAIN_DICTIONARY (v1): PLAIN next to
     * a dictionary encoding names the dictionary page, unless pages fell back. */
    for (int e = 0; e < 32; e++)
        if (mask & (1u << e)) {
            size_t l = strlen(out);
            snprintf(out + l, cap - l, "%s%s", l ? "+" : "", bl_pq_encoding_name(e));
        }
    if (!out[0])
        snprintf(out, cap, "none");
}

static int compare_value(const bl_column *c, uint64_t r, const cJSON *v, const char *kind, char *why, size_t cap)
{
    int is_null = cJSON_IsNull(v);
    int valid = !c->valid || c->valid[r];
    if (is_null != !valid) {
        snprintf(why, cap, "null expected %d, got %d", is_null, !valid);
        return -1;
    }
    if (is_null)
        return 0;
    if (!strcmp(kind, "int")) {
        long long want = strtoll(v->valuestring, NULL, 10);
        if (c->type != BL_COL_INT64 || c->i64[r] != want) {
            snprintf(why, cap, "expected %lld, got %lld", want, c->type == BL_COL_INT64 ? (long long)c->i64[r] : 0);
            return -1;
        }
    } else if (!strcmp(kind, "bool")) {
        if (c->type != BL_COL_BOOL || c->i64[r] != cJSON_IsTrue(v)) {
            snprintf(why, cap, "expected %d, got %lld", cJSON_IsTrue(v), (long long)c->i64[r]);
            return -1;
        }
    } else if (!strcmp(kind, "double")) {
        double want = cJSON_IsString(v) ? strtod(v->valuestring, NULL) : v->valuedouble;
        double got = c->type == BL_COL_DOUBLE ? c->f64[r] : 0;
        if (c->type != BL_COL_DOUBLE || !(got == want || (isnan(got) && isnan(want)))) {
            snprintf(why, cap, "expected %.17g, got %.17g", want, got);
            return -1;
        }
    } else {
        size_t len = strlen(v->valuestring);
        if (c->type != BL_COL_STRING || (uint64_t)(c->offsets[r + 1] - c->offsets[r]) != len ||
            memcmp(c->data + c->offsets[r], v->valuestring, len) != 0) {
            snprintf(why, cap, "expected \"%.40s\" (%zu bytes)", v->valuestring, len);
            return -1;
        }
    }
    return 0;
}

static int read_fixture(const char *dir, const cJSON *fx, const cJSON *tables)
{
    const char *file = cJSON_GetObjectItem(fx, "file")->valuestring;
    const char *codec = cJSON_GetObjectItem(fx, "codec")->valuestring;
    const char *version = cJSON_GetObjectItem(fx, "version")->valuestring;
    const char *setup = cJSON_GetObjectItem(fx, "encoding")->valuestring;
    const cJSON *table = cJSON_GetObjectItem(tables, cJSON_GetObjectItem(fx, "table")->valuestring);
    const cJSON *cols = cJSON_GetObjectItem(table, "columns");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);

    void *state;
    bl_table_schema schema = {0};
    bl_error err;
    if (bl_table_parquet.open(path, &state, &schema, &err)) {
        printf("parquet oracle: %s: FAILED: %s\n", file, err.message);
        return 1;
    }
    size_t n = (size_t)cJSON_GetArraySize(cols);
    size_t *idx = calloc(n, sizeof *idx);
    bl_column *out = calloc(n, sizeof *out);
    const cJSON **exp = calloc(n, sizeof *exp);
    unsigned long long *equal = calloc(n, sizeof *equal);
    int failed = 0;
    size_t k = 0;
    for (const cJSON *c = cols->child; c; c = c->next, k++) {
        exp[k] = c;
        size_t j = 0;
        while (j < schema.n_columns && strcmp(schema.names[j], c->string))
            j++;
        if (j == schema.n_columns) {
            printf("parquet oracle: %s: FAILED: column %s missing\n", file, c->string);
            failed = 1;
        }
        idx[k] = j;
    }
    uint64_t row0 = 0, rows;
    while (!failed) {
        if (bl_table_parquet.next(state, idx, n, out, &rows, &err)) {
            printf("parquet oracle: %s: FAILED: %s\n", file, err.message);
            failed = 1;
            break;
        }
        if (rows == 0)
            break;
        for (size_t i = 0; i < n && !failed; i++) {
            const char *kind = cJSON_GetObjectItem(exp[i], "kind")->valuestring;
            const cJSON *vals = cJSON_GetObjectItem(exp[i], "values");
            const cJSON *v = cJSON_GetArrayItem(vals, (int)row0);
            for (uint64_t r = 0; r < rows; r++, v = v ? v->next : NULL) {
                char why[160];
                if (!v) {
                    printf("parquet oracle: %s: FAILED: column %s has more rows than expected\n", file,
                           exp[i]->string);
                    failed = 1;
                    break;
                }
                if (compare_value(&out[i], r, v, kind, why, sizeof why)) {
                    printf("parquet oracle: %s: FAILED: column %s row %llu: %s\n", file, exp[i]->string,
                           (unsigned long long)(row0 + r), why);
                    failed = 1;
                    break;
                }
                equal[i]++;
            }
            bl_column_clear(&out[i]);
        }
        for (size_t i = 0; i < n; i++)
            bl_column_clear(&out[i]);
        row0 += rows;
    }
    int64_t want_rows = (int64_t)cJSON_GetObjectItem(table, "rows")->valuedouble;
    if (!failed && row0 != (uint64_t)want_rows) {
        printf("parquet oracle: %s: FAILED: %llu rows read, %lld expected\n", file, (unsigned long long)row0,
               (long long)want_rows);
        failed = 1;
    }
    if (!failed) {
        unsigned long long total = 0;
        for (size_t i = 0; i < n; i++) {
            /* Per type: the column name without its null pattern suffix. */
            char type[96], enc[160], key[200];
            snprintf(type, sizeof type, "%s", exp[i]->string);
            char *us = strrchr(type, '_');
            if (us)
                *us = '\0';
            encodings_of(path, (uint32_t)idx[i], !strcmp(type, "bool"), enc, sizeof enc);
            snprintf(key, sizeof key, "%s %s", version, enc);
            count(by_encoding, key, equal[i]);
            count(by_type, type, equal[i]);
            total += equal[i];
        }
        count(by_codec, codec, total);
        printf("parquet oracle: %s/%s-%s/%zu columns of every type and null pattern: %llu values equal (%s)\n",
               codec, version, setup, n, total, file);
    }
    bl_table_parquet.close(state);
    for (size_t i = 0; i < schema.n_columns; i++)
        free(schema.names[i]);
    free(schema.names);
    free(schema.types);
    free(idx);
    free(out);
    free(exp);
    free(equal);
    return failed;
}

static int cmd_read(const char *dir)
{
    char path[4096];
    size_t n;
    snprintf(path, sizeof path, "%s/expected.json", dir);
    char *text = bl_test_slurp(path, &n);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!root) {
        fprintf(stderr, "parquet_oracle: cannot read %s\n", path);
        return 1;
    }
    const cJSON *tables = cJSON_GetObjectItem(root, "tables");
    int failures = 0, fixtures = 0;
    for (const cJSON *fx = cJSON_GetObjectItem(root, "fixtures")->child; fx; fx = fx->next, fixtures++)
        failures += read_fixture(dir, fx, tables);
    cJSON_Delete(root);
    print_tally("codec", by_codec);
    print_tally("encoding", by_encoding);
    print_tally("type", by_type);
    printf("parquet oracle: %d fixtures, %d failed\n", fixtures, failures);
    return failures ? 1 : 0;
}

/* ---- our writer's fixtures ---- */

static uint32_t rng = 12345;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

static const char *words[] = {"", "ACH", "GABA", "glutamate", "ünïcødé", "神经元", "a longer string of words"};

static int cmd_write(const char *dir)
{
    const char *codecs[] = {"zstd", "snappy", "none"};
    bl_parquet_column_spec spec[] = {
        {"id", BL_COL_INT64, 0},       {"weight", BL_COL_DOUBLE, 0},   {"nt", BL_COL_STRING, 0},
        {"flag", BL_COL_BOOL, 0},      {"maybe_id", BL_COL_INT64, 1},  {"maybe_w", BL_COL_DOUBLE, 1},
        {"maybe_nt", BL_COL_STRING, 1}, {"maybe_flag", BL_COL_BOOL, 1}, {"all_null", BL_COL_INT64, 1},
    };
    enum { NC = sizeof spec / sizeof spec[0] };
    cJSON *root = cJSON_CreateObject();
    cJSON *files = cJSON_AddArrayToObject(root, "files");
    bl_error err;
    for (size_t ci = 0; ci < 3; ci++) {
        for (int empty = 0; empty < 2; empty++) {
            char name[64], path[4096];
            snprintf(name, sizeof name, "ours_%s%s.parquet", codecs[ci], empty ? "_empty" : "");
            snprintf(path, sizeof path, "%s/%s", dir, name);
            bl_parquet_writer *w;
            if (bl_parquet_writer_create(path, spec, NC, codecs[ci], &w, &err)) {
                fprintf(stderr, "parquet_oracle: %s\n", err.message);
                return 1;
            }
            cJSON *fx = cJSON_CreateObject();
            cJSON_AddStringToObject(fx, "file", name);
            /* Footer key-value metadata (what carries pandas' schema), read
             * back by parquet-wasm as the Arrow schema's metadata. */
            static const char *const kv[][2] = {{"pandas", "{\"index_columns\": [], \"columns\": []}"},
                                                {"bl.note", "ünïcødé, 神经元"}};
            cJSON *meta = cJSON_AddObjectToObject(fx, "metadata");
            for (size_t k = 0; k < (ci == 2 ? 1u : 2u); k++) {
                if (bl_parquet_writer_set_metadata(w, kv[k][0], kv[k][1], &err)) {
                    fprintf(stderr, "parquet_oracle: %s\n", err.message);
                    return 1;
                }
                cJSON_AddStringToObject(meta, kv[k][0], kv[k][1]);
            }
            if (!bl_parquet_writer_set_metadata(w, "pandas", "again", &err)) {
                fprintf(stderr, "parquet_oracle: a repeated metadata key was accepted\n");
                return 1;
            }
            cJSON *cols = cJSON_AddObjectToObject(fx, "columns");
            cJSON *vals[NC];
            for (size_t i = 0; i < NC; i++) {
                cJSON *c = cJSON_AddObjectToObject(cols, spec[i].name);
                const char *kind = spec[i].type == BL_COL_INT64    ? "int"
                                   : spec[i].type == BL_COL_DOUBLE ? "double"
                                   : spec[i].type == BL_COL_BOOL   ? "bool"
                                                                   : "string";
                cJSON_AddStringToObject(c, "kind", kind);
                cJSON_AddBoolToObject(c, "nullable", spec[i].nullable);
                vals[i] = cJSON_AddArrayToObject(c, "values");
            }
            /* Row groups of different sizes, one crossing the writer's page size. */
            uint64_t sizes[] = {1, 700, 70000, 3};
            for (size_t g = 0; g < (empty ? 0u : 4u); g++) {
                uint64_t n = sizes[g];
                bl_column col[NC];
                memset(col, 0, sizeof col);
                for (size_t i = 0; i < NC; i++) {
                    col[i].type = spec[i].type;
                    col[i].n = n;
                    if (spec[i].type == BL_COL_DOUBLE)
                        col[i].f64 = calloc(n, 8);
                    else if (spec[i].type == BL_COL_STRING)
                        col[i].offsets = calloc(n + 1, 8), col[i].data = malloc(n * 32 + 1);
                    else
                        col[i].i64 = calloc(n, 8);
                    if (spec[i].nullable)
                        col[i].valid = calloc(n, 1);
                }
                for (uint64_t r = 0; r < n; r++) {
                    for (size_t i = 0; i < NC; i++) {
                        bl_column *c = &col[i];
                        int present = !c->valid || (strcmp(spec[i].name, "all_null") && next_rand() % 4);
                        if (c->valid)
                            c->valid[r] = (uint8_t)present;
                        cJSON *v = NULL;
                        char num[32];
                        if (c->type == BL_COL_STRING) {
                            const char *s = r % 5 == 4 ? NULL : words[next_rand() % 7];
                            char uniq[32];
                            if (!s) {
                                snprintf(uniq, sizeof uniq, "u%u", next_rand());
                                s = uniq;
                            }
                            if (!present)
                                s = "";
                            size_t len = strlen(s);
                            memcpy(c->data + c->offsets[r], s, len);
                            c->offsets[r + 1] = c->offsets[r] + (int64_t)len;
                            v = cJSON_CreateString(s);
                        } else if (c->type == BL_COL_DOUBLE) {
                            double d = present ? ((double)next_rand() - 2e9) / 7.0 : 0;
                            c->f64[r] = d;
                            /* as text: cJSON prints numbers with 15 digits */
                            snprintf(num, sizeof num, "%.17g", d);
                            v = cJSON_CreateString(num);
                        } else if (c->type == BL_COL_BOOL) {
                            c->i64[r] = present ? next_rand() & 1 : 0;
                            v = cJSON_CreateBool((int)c->i64[r]);
                        } else {
                            int64_t x = present ? (int64_t)((uint64_t)next_rand() << 32 | next_rand()) : 0;
                            if (r % 7 == 0 && present)
                                x = r % 2 ? INT64_MIN : INT64_MAX;
                            c->i64[r] = x;
                            snprintf(num, sizeof num, "%lld", (long long)x);
                            v = cJSON_CreateString(num);
                        }
                        cJSON_AddItemToArray(vals[i], present ? v : (cJSON_Delete(v), cJSON_CreateNull()));
                    }
                }
                bl_status st = bl_parquet_writer_write(w, col, &err);
                for (size_t i = 0; i < NC; i++)
                    bl_column_clear(&col[i]);
                if (st) {
                    fprintf(stderr, "parquet_oracle: %s\n", err.message);
                    bl_parquet_writer_abort(w);
                    return 1;
                }
            }
            if (bl_parquet_writer_finish(w, &err)) {
                fprintf(stderr, "parquet_oracle: %s\n", err.message);
                return 1;
            }
            cJSON_AddItemToArray(files, fx);
        }
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/ours.json", dir);
    char *text = cJSON_PrintUnformatted(root);
    FILE *f = fopen(path, "wb");
    int bad = !f || !text || fputs(text, f) < 0;
    if (f && fclose(f) != 0)
        bad = 1;
    free(text);
    cJSON_Delete(root);
    if (bad) {
        fprintf(stderr, "parquet_oracle: cannot write %s\n", path);
        return 1;
    }
    printf("parquet oracle: wrote 6 files with bl_parquet_writer into %s\n", dir);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "read"))
        return cmd_read(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "write"))
        return cmd_write(argv[2]);
    fprintf(stderr, "usage: parquet_oracle read|write DIR\n");
    return 2;
}
