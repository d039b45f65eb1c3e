/* The Parquet reader's layers on hand-built bytes (each documented where it is
 * written), the writer read back by the reader, and malformed files: every
 * one fails with one line naming the file, the column where there is one,
 * and the place, without a large allocation (the address space is limited
 * to 1 GiB in the plain build; under ASan, allocations over 256 MiB return
 * NULL, which the reader would report as out of memory, and the tests
 * reject that status). The values against an independent writer are
 * tests/cli/test_parquet_oracle.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "brainlesslab/table.h"
#include "io/parquet.h"
#include "io/table_impl.h"
#include "pq_build.h"
#include "test_support.h"

BL_TEST_TMPDIR_GROUP("parquet")

const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1:max_allocation_size_mb=256"; }

static void col_free(bl_column *c)
{
    free(c->i64);
    free(c->f64);
    free(c->offsets);
    free(c->data);
    free(c->valid);
    memset(c, 0, sizeof *c);
}

static void schema_free(bl_table_schema *s)
{
    for (size_t i = 0; i < s->n_columns; i++)
        free(s->names[i]);
    free(s->names);
    free(s->types);
    memset(s, 0, sizeof *s);
}

/* Open path and read its first batch of every column into out (n columns). */
static bl_status read_first(const char *path, bl_column *out, size_t *n, uint64_t *rows, bl_error *err)
{
    void *st;
    bl_table_schema sc = {0};
    bl_status s = bl_table_parquet.open(path, &st, &sc, err);
    if (s)
        return s;
    size_t cols[8];
    *n = sc.n_columns < 8 ? sc.n_columns : 8;
    for (size_t i = 0; i < *n; i++)
        cols[i] = i;
    memset(out, 0, 8 * sizeof *out);
    s = bl_table_parquet.next(st, cols, *n, out, rows, err);
    bl_table_parquet.close(st);
    schema_free(&sc);
    return s;
}

/* ---- the layers ---- */

static void test_rle_hybrid(void **state)
{
    (void)state;
    /* bw 3: a bit-packed run of one group (header 1<<1|1 = 0x03) holding
     * 0..7 LSB-first (0x88 0xc6 0xfa, parquet-format's example), then an RLE
     * run of five 4s (header 5<<1 = 0x0a, value byte 0x04). */
    const uint8_t b[] = {0x03, 0x88, 0xc6, 0xfa, 0x0a, 0x04};
    uint32_t v[13];
    bl_pq_why why;
    assert_int_equal(bl_pq_rle_decode(b, sizeof b, 3, v, 13, &why), 0);
    for (uint32_t i = 0; i < 8; i++)
        assert_int_equal(v[i], i);
    for (int i = 8; i < 13; i++)
        assert_int_equal(v[i], 4);
    assert_int_equal(bl_pq_rle_decode(b, sizeof b, 3, v, 14, &why), -1);
    assert_non_null(strstr(why.text, "ends after 13 of 14"));
    assert_int_equal(bl_pq_rle_decode(b, sizeof b, 33, v, 1, &why), -1);
    assert_non_null(strstr(why.text, "above 32"));
    /* A bit-packed run claiming 2^41 groups. */
    const uint8_t huge[] = {0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    assert_int_equal(bl_pq_rle_decode(huge, sizeof huge, 1, v, 4, &why), -1);
}

static void test_delta_binary_packed(void **state)
{
    (void)state;
    bl_pq_why why;
    int64_t v[8];
    size_t used;
    /* 1..5: block 128 (0x80 0x01), 4 miniblocks, 5 values, first 1 (zigzag
     * 2); one block: min delta 1 (zigzag 2), widths 0 0 0 0, no bits. */
    const uint8_t a[] = {0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0, 0, 0, 0};
    assert_int_equal(bl_pq_delta_decode(a, sizeof a, v, 5, &used, &why), 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(v[i], i + 1);
    assert_int_equal(used, sizeof a);
    /* 7 5 3 1 2 3 4 5: first 7 (zigzag 14), min delta -2 (zigzag 3), widths
     * 2 0 0 0; relative deltas 0 0 0 3 3 3 3 in 2 bits: 0xc0 0x3f, padded to
     * 32 values (8 bytes). */
    const uint8_t b[] = {0x80, 0x01, 0x04, 0x08, 0x0e, 0x03, 2, 0, 0, 0, 0xc0, 0x3f, 0, 0, 0, 0, 0, 0};
    const int64_t want[] = {7, 5, 3, 1, 2, 3, 4, 5};
    assert_int_equal(bl_pq_delta_decode(b, sizeof b, v, 8, &used, &why), 0);
    for (int i = 0; i < 8; i++)
        assert_int_equal(v[i], want[i]);
    assert_int_equal(used, sizeof b);
    /* The header must declare the count asked for; block sizes are checked. */
    assert_int_equal(bl_pq_delta_decode(b, sizeof b, v, 7, &used, &why), -1);
    const uint8_t bad_block[] = {0x40, 0x04, 0x05, 0x02};
    assert_int_equal(bl_pq_delta_decode(bad_block, sizeof bad_block, v, 5, &used, &why), -1);
    assert_non_null(strstr(why.text, "multiple of 128"));
    const uint8_t cut[] = {0x80, 0x01, 0x04, 0x08, 0x0e, 0x03, 2, 0, 0, 0, 0xc0};
    assert_int_equal(bl_pq_delta_decode(cut, sizeof cut, v, 8, &used, &why), -1);
    const uint8_t wide[] = {0x80, 0x01, 0x04, 0x08, 0x0e, 0x03, 65, 0, 0, 0};
    assert_int_equal(bl_pq_delta_decode(wide, sizeof wide, v, 8, &used, &why), -1);
    assert_non_null(strstr(why.text, "above 64"));
}

/* DELTA_LENGTH_BYTE_ARRAY "Hello" "World" "Foobar" "ABCDEF": lengths 5 5 6 6
 * as DELTA_BINARY_PACKED (first 5 = zigzag 10, min delta 0, widths 1 0 0 0,
 * relative 0 1 0 = 0x02 in a 4-byte miniblock), then the bytes. */
static const uint8_t dlba[] = {0x80, 0x01, 0x04, 0x04, 0x0a, 0x00, 1, 0, 0, 0, 0x02, 0, 0, 0,
                               'H', 'e', 'l', 'l', 'o', 'W', 'o', 'r', 'l', 'd', 'F', 'o', 'o', 'b', 'a', 'r',
                               'A', 'B', 'C', 'D', 'E', 'F'};
/* DELTA_BYTE_ARRAY "axis" "axle" "babble" "babyhood": prefix lengths 0 2 0 3
 * (first 0, min delta -2 = zigzag 3, width 3, relative 4 0 5 = 0x44 0x01 in a
 * 12-byte miniblock), suffix lengths 4 2 6 5 (first 4 = zigzag 8, min delta
 * -2, width 3, relative 0 6 1 = 0x70 0x00), then "axis" "le" "babble" "yhood". */
static const uint8_t dba[] = {0x80, 0x01, 0x04, 0x04, 0x00, 0x03, 3, 0, 0, 0, 0x44, 0x01, 0, 0, 0, 0, 0, 0, 0, 0,
                              0, 0, 0x80, 0x01, 0x04, 0x04, 0x08, 0x03, 3, 0, 0, 0, 0x70, 0x00, 0, 0, 0, 0, 0, 0,
                              0, 0, 0, 0, 'a', 'x', 'i', 's', 'l', 'e', 'b', 'a', 'b', 'b', 'l', 'e', 'y', 'h',
                              'o', 'o', 'd'};

static void test_delta_strings(void **state)
{
    (void)state;
    bl_pq_why why;
    bl_pq_str s[4];
    assert_int_equal(bl_pq_delta_length_strings(dlba, sizeof dlba, s, 4, &why), 0);
    const char *w1[] = {"Hello", "World", "Foobar", "ABCDEF"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(s[i].n, strlen(w1[i]));
        assert_memory_equal(s[i].p, w1[i], s[i].n);
    }
    assert_int_equal(bl_pq_delta_length_strings(dlba, sizeof dlba - 1, s, 4, &why), -1);
    uint8_t *scratch;
    assert_int_equal(bl_pq_delta_strings(dba, sizeof dba, s, 4, 1000, &scratch, &why), 0);
    const char *w2[] = {"axis", "axle", "babble", "babyhood"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(s[i].n, strlen(w2[i]));
        assert_memory_equal(s[i].p, w2[i], s[i].n);
    }
    free(scratch);
    /* The bytes are bounded by the caller before they are allocated. */
    assert_int_equal(bl_pq_delta_strings(dba, sizeof dba, s, 4, 10, &scratch, &why), -1);
    free(scratch);
    assert_non_null(strstr(why.text, "more than the file justifies"));
    /* A prefix longer than the previous value. */
    uint8_t bad[sizeof dba];
    memcpy(bad, dba, sizeof dba);
    bad[4] = 0x04; /* first prefix 2, with no previous value */
    assert_int_equal(bl_pq_delta_strings(bad, sizeof bad, s, 4, 1000, &scratch, &why), -1);
    free(scratch);
}

static void test_plain_and_split(void **state)
{
    (void)state;
    bl_pq_why why;
    int64_t i64[4];
    double f64[4];
    /* BYTE_STREAM_SPLIT floats 1.0f (0x3f800000) and -2.0f (0xc0000000):
     * byte 0 of each, byte 1 of each, ... */
    const uint8_t split[] = {0, 0, 0, 0, 0x80, 0, 0x3f, 0xc0};
    assert_int_equal(bl_pq_byte_stream_split(PQ_FLOAT, split, sizeof split, NULL, f64, 2, &why), 0);
    assert_true(f64[0] == 1.0 && f64[1] == -2.0);
    assert_int_equal(bl_pq_byte_stream_split(PQ_FLOAT, split, 7, NULL, f64, 2, &why), -1);
    /* PLAIN booleans 1 0 1 1 LSB-first (0x0d); INT32 -1 sign-extends. */
    const uint8_t bools[] = {0x0d};
    assert_int_equal(bl_pq_plain_fixed(PQ_BOOLEAN, bools, 1, i64, NULL, 4, &why), 0);
    assert_true(i64[0] == 1 && i64[1] == 0 && i64[2] == 1 && i64[3] == 1);
    const uint8_t ints[] = {0xff, 0xff, 0xff, 0xff, 7, 0, 0, 0};
    assert_int_equal(bl_pq_plain_fixed(PQ_INT32, ints, 8, i64, NULL, 2, &why), 0);
    assert_true(i64[0] == -1 && i64[1] == 7);
    assert_int_equal(bl_pq_plain_fixed(PQ_INT32, ints, 8, i64, NULL, 3, &why), -1);
    bl_pq_str s[2];
    const uint8_t strs[] = {2, 0, 0, 0, 'h', 'i', 0, 0, 0, 0};
    assert_int_equal(bl_pq_plain_strings(strs, sizeof strs, s, 2, &why), 0);
    assert_true(s[0].n == 2 && s[1].n == 0);
    const uint8_t long_str[] = {0xff, 0xff, 0xff, 0x7f, 'h'};
    assert_int_equal(bl_pq_plain_strings(long_str, sizeof long_str, s, 1, &why), -1);
}

static void test_thrift(void **state)
{
    (void)state;
    bl_pq_why why;
    bl_pq_thrift t;
    int16_t last = 0, id;
    int type;
    int32_t v;
    /* {1: i32 -3 (0x15, zigzag 5), 4: binary "ab" (0x38, len 2), stop} */
    const uint8_t s[] = {0x15, 0x05, 0x38, 0x02, 'a', 'b', 0x00};
    bl_pq_t_init(&t, s, sizeof s, &why);
    assert_int_equal(bl_pq_t_field(&t, &last, &id, &type), 0);
    assert_true(id == 1 && type == PQ_T_I32);
    assert_int_equal(bl_pq_t_i32(&t, type, &v), 0);
    assert_int_equal(v, -3);
    assert_int_equal(bl_pq_t_field(&t, &last, &id, &type), 0);
    assert_true(id == 4 && type == PQ_T_BINARY);
    /* Reading a binary as an i32 is a type mismatch, not a guess. */
    assert_int_equal(bl_pq_t_i32(&t, type, &v), -1);
    assert_non_null(strstr(why.text, "i32 expected, found binary"));
    /* A list claiming more elements than bytes left. */
    const uint8_t l[] = {0xf5, 0xff, 0xff, 0xff, 0x0f, 0x02};
    int elem;
    uint32_t n;
    bl_pq_t_init(&t, l, sizeof l, &why);
    assert_int_equal(bl_pq_t_list(&t, PQ_T_LIST, &elem, &n), -1);
    /* A varint of eleven bytes. */
    const uint8_t vi[] = {0x15, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    bl_pq_t_init(&t, vi, sizeof vi, &why);
    last = 0;
    assert_int_equal(bl_pq_t_field(&t, &last, &id, &type), 0);
    assert_int_equal(bl_pq_t_i32(&t, type, &v), -1);
    /* Skipping structs nested past the bound. */
    uint8_t deep[80];
    for (int i = 0; i < 40; i++)
        deep[i] = 0x1c;
    memset(deep + 40, 0, 40);
    bl_pq_t_init(&t, deep, sizeof deep, &why);
    assert_int_equal(bl_pq_t_skip(&t, PQ_T_STRUCT), -1);
    assert_non_null(strstr(why.text, "nested deeper"));
    /* The writer's bytes read back. */
    bl_pq_tw w = {0};
    bl_pq_tw_i32(&w, 1, 123456);
    bl_pq_tw_i64(&w, 30, -5); /* long form: delta above 15 */
    bl_pq_tw_struct_end(&w);
    bl_pq_t_init(&t, w.buf, w.len, &why);
    last = 0;
    int64_t v64;
    assert_int_equal(bl_pq_t_field(&t, &last, &id, &type), 0);
    assert_int_equal(bl_pq_t_i32(&t, type, &v), 0);
    assert_int_equal(v, 123456);
    assert_int_equal(bl_pq_t_field(&t, &last, &id, &type), 0);
    assert_int_equal(id, 30);
    assert_int_equal(bl_pq_t_i64(&t, type, &v64), 0);
    assert_int_equal(v64, -5);
    assert_int_equal(bl_pq_t_field(&t, &last, &id, &type), 0);
    assert_int_equal(type, PQ_T_STOP);
    bl_pq_tw_free(&w);
}

/* ---- whole files, hand-built ---- */

static const uint8_t i64_body[] = {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0};

static pqb_file three_ints(void)
{
    pqb_file f = pqb_default();
    f.n_pages = 1;
    f.pages[0] = (pqb_page){PQ_DATA_PAGE, 3, PQ_PLAIN, PQ_RLE, 0, 0, PQB_AUTO, PQB_AUTO, i64_body, sizeof i64_body};
    return f;
}

static void test_hand_built_files(void **state)
{
    (void)state;
    bl_error err;
    bl_column out[8];
    size_t n;
    uint64_t rows;
    const char *p = tmp_path("hand.parquet");

    pqb_file f = three_ints();
    assert_int_equal(pqb_write(p, &f), 0);
    assert_int_equal(read_first(p, out, &n, &rows, &err), BL_OK);
    assert_true(n == 1 && rows == 3 && out[0].type == BL_COL_INT64 && !out[0].valid);
    assert_true(out[0].i64[0] == 1 && out[0].i64[2] == 3);
    col_free(&out[0]);

    /* DELTA_BYTE_ARRAY strings in a v1 page. */
    f = pqb_default();
    f.phys = PQ_BYTE_ARRAY;
    f.n_pages = 1;
    f.pages[0] = (pqb_page){PQ_DATA_PAGE, 4, PQ_DELTA_BYTE_ARRAY, PQ_RLE, 0, 0, PQB_AUTO, PQB_AUTO, dba, sizeof dba};
    assert_int_equal(pqb_write(p, &f), 0);
    assert_int_equal(read_first(p, out, &n, &rows, &err), BL_OK);
    assert_true(rows == 4 && out[0].type == BL_COL_STRING);
    assert_int_equal(out[0].offsets[4], 4 + 4 + 6 + 8);
    assert_memory_equal(out[0].data, "axisaxlebabblebabyhood", 22);
    col_free(&out[0]);

    /* A v2 page with nulls: levels 1 0 1 (bit-packed run 0x03 0x05), two
     * PLAIN values after them. */
    static const uint8_t v2[] = {0x03, 0x05, 9, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0};
    f = pqb_default();
    f.repetition = PQ_OPTIONAL;
    f.n_pages = 1;
    f.pages[0] = (pqb_page){PQ_DATA_PAGE_V2, 3, PQ_PLAIN, 0, 1, 2, PQB_AUTO, PQB_AUTO, v2, sizeof v2};
    assert_int_equal(pqb_write(p, &f), 0);
    assert_int_equal(read_first(p, out, &n, &rows, &err), BL_OK);
    assert_non_null(out[0].valid);
    assert_true(out[0].valid[0] && !out[0].valid[1] && out[0].valid[2]);
    assert_true(out[0].i64[0] == 9 && out[0].i64[1] == 0 && out[0].i64[2] == 8);
    col_free(&out[0]);

    /* PLAIN_DICTIONARY (v1's name) strings: dictionary "no" "yes", indices
     * 1 0 1 at width 1 (bit width byte 1, bit-packed run 0x03 0x05). */
    static const uint8_t dict[] = {2, 0, 0, 0, 'n', 'o', 3, 0, 0, 0, 'y', 'e', 's'};
    static const uint8_t idx[] = {1, 0x03, 0x05};
    f = pqb_default();
    f.phys = PQ_BYTE_ARRAY;
    f.converted = PQ_CT_UTF8;
    f.n_pages = 2;
    f.pages[0] = (pqb_page){PQ_DICTIONARY_PAGE, 2, PQ_PLAIN_DICTIONARY, 0, 0, 0, PQB_AUTO, PQB_AUTO, dict, sizeof dict};
    f.pages[1] = (pqb_page){PQ_DATA_PAGE, 3, PQ_PLAIN_DICTIONARY, PQ_RLE, 0, 0, PQB_AUTO, PQB_AUTO, idx, sizeof idx};
    assert_int_equal(pqb_write(p, &f), 0);
    assert_int_equal(read_first(p, out, &n, &rows, &err), BL_OK);
    assert_int_equal(out[0].offsets[3], 8);
    assert_memory_equal(out[0].data, "yesnoyes", 8);
    col_free(&out[0]);

    /* Unsigned: UINT_32 stored as INT32 -1 reads 4294967295. */
    static const uint8_t u32[] = {0xff, 0xff, 0xff, 0xff};
    f = pqb_default();
    f.phys = PQ_INT32;
    f.converted = PQ_CT_UINT_32;
    f.n_pages = 1;
    f.pages[0] = (pqb_page){PQ_DATA_PAGE, 1, PQ_PLAIN, PQ_RLE, 0, 0, PQB_AUTO, PQB_AUTO, u32, sizeof u32};
    assert_int_equal(pqb_write(p, &f), 0);
    assert_int_equal(read_first(p, out, &n, &rows, &err), BL_OK);
    assert_int_equal(out[0].i64[0], 4294967295LL);
    col_free(&out[0]);
}

/* ---- malformed files ---- */

typedef struct bad_case {
    const char *name;
    const char *place; /* a word the message must hold */
    const char *column; /* the column the message must name, or NULL */
} bad_case;

static void expect_failure(const char *path, const bad_case *k)
{
    bl_error err;
    bl_column out[8];
    size_t n = 0;
    uint64_t rows;
    memset(&err, 0, sizeof err);
    bl_status st = read_first(path, out, &n, &rows, &err);
    if (st == BL_OK)
        for (size_t i = 0; i < n; i++)
            col_free(&out[i]);
    if (st == BL_OK || st == BL_ERR_NOMEM || !strstr(err.message, path) || strchr(err.message, '\n') ||
        !strstr(err.message, k->place) || (k->column && !strstr(err.message, k->column))) {
        print_error("case %s: status %d, message: %s\n", k->name, (int)st, err.message);
        fail();
    }
    print_message("bad parquet %-26s -> %s\n", k->name, err.message + strlen(path));
}

static void test_malformed(void **state)
{
    (void)state;
    const char *p = tmp_path("bad.parquet");
    pqb_file f;
    static uint8_t big[4096];
    static const uint8_t dict2[] = {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0};

#define CASE(label, where, col, setup)                                                             \
    do {                                                                                           \
        f = three_ints();                                                                          \
        setup;                                                                                     \
        assert_int_equal(pqb_write(p, &f), 0);                                                     \
        bad_case k = {label, where, col ? (col == 2 ? "column 'd'" : "column 'c'") : NULL};       \
        expect_failure(p, &k);                                                                     \
    } while (0)

    CASE("bad head magic", "header", 0, f.head_magic = "PAR0");
    CASE("bad tail magic", "footer", 0, f.tail_magic = "RAP1");
    CASE("encrypted footer", "footer", 0, f.tail_magic = "PARE");
    CASE("truncated file", "footer", 0, f.truncate = 3);
    CASE("too short", "header", 0, f.truncate = 100000);
    CASE("footer length past file", "footer", 0, f.footer_len_shift = 1 << 20);
    CASE("footer length too short", "footer", 0, f.footer_len_shift = -7);
    CASE("thrift type mismatch", "footer", 0, f.name_as_i32 = 1);
    CASE("thrift nesting too deep", "footer", 0, f.deep_nesting = 1);
    CASE("schema list too long", "footer", 0, f.schema_list_size = 1 << 24);
    CASE("negative row count", "footer", 0, f.file_rows = -1);
    CASE("rows do not add up", "footer", 0, f.file_rows = 4);
    CASE("huge row count", "footer", 0, (f.rows = (int64_t)1 << 40, f.file_rows = (int64_t)1 << 40));
    CASE("nested column", "row group 0", 1, f.num_children = 1);
    CASE("repeated column", "row group 0", 1, f.repetition = PQ_REPEATED);
    CASE("INT96 column", "row group 0", 1, f.phys = PQ_INT96);
    CASE("decimal column", "row group 0", 1, (f.phys = PQ_INT32, f.converted = PQ_CT_DECIMAL));
    CASE("chunk type differs", "column chunk", 1, f.chunk_type = PQ_DOUBLE);
    CASE("columns of different lengths", "row group 0", 2, (f.second_column = 1, f.d_values = 2));
    CASE("chunk value count", "column chunk", 1, f.chunk_values = 2);
    CASE("chunk outside the file", "column chunk", 1, f.data_offset_shift = (int64_t)1 << 40);
    CASE("chunk size negative", "footer", 0, f.total_compressed = -1);
    CASE("chunk size past the file", "column chunk", 1, f.total_compressed = 1 << 30);
    CASE("page size negative", "page at byte", 1, f.pages[0].compressed = -5);
    CASE("page size past the chunk", "page at byte", 1, f.pages[0].compressed = 1 << 30);
    CASE("page values past the rows", "page at byte", 1, (f.rows = 3, f.pages[0].num_values = 300));
    CASE("plain values cut short", "page at byte", 1, (f.pages[0].len = 20, f.total_compressed = PQB_AUTO));
    CASE("unsupported codec (lzo)", "page at byte", 1, f.codec = PQ_LZO);
    CASE("unknown codec", "page at byte", 1, f.codec = 99);
    CASE("unsupported encoding", "page at byte", 1, f.pages[0].encoding = PQ_BIT_PACKED);
    CASE("unknown page type", "page at byte", 1, f.pages[0].type = 9);
    /* A zstd page claiming 2 GiB from 24 bytes. */
    CASE("inflation bomb", "page at byte", 1, (f.codec = PQ_ZSTD, f.pages[0].uncompressed = INT32_MAX));
    CASE("corrupt snappy", "page at byte", 1, (f.codec = PQ_SNAPPY, f.pages[0].uncompressed = 24));
    /* Dictionary of 2 INT64 values, index 5 (width 3: bit width byte 3, an
     * RLE run of 3 (0x06) of value 5). */
    static const uint8_t idx5[] = {3, 0x06, 0x05};
    CASE("dictionary index out of range", "page at byte", 1,
         (f.n_pages = 2,
          f.pages[0] = (pqb_page){PQ_DICTIONARY_PAGE, 2, PQ_PLAIN, 0, 0, 0, PQB_AUTO, PQB_AUTO, dict2, sizeof dict2},
          f.pages[1] = (pqb_page){PQ_DATA_PAGE, 3, PQ_RLE_DICTIONARY, PQ_RLE, 0, 0, PQB_AUTO, PQB_AUTO, idx5, 3}));
    static const uint8_t bw40[] = {40, 0x06, 0x05};
    CASE("bit width above 32", "page at byte", 1,
         (f.n_pages = 2,
          f.pages[0] = (pqb_page){PQ_DICTIONARY_PAGE, 2, PQ_PLAIN, 0, 0, 0, PQB_AUTO, PQB_AUTO, dict2, sizeof dict2},
          f.pages[1] = (pqb_page){PQ_DATA_PAGE, 3, PQ_RLE_DICTIONARY, PQ_RLE, 0, 0, PQB_AUTO, PQB_AUTO, bw40, 3}));
    CASE("dictionary claims 2^30 values", "page at byte", 1,
         (f.n_pages = 2,
          f.pages[0] = (pqb_page){PQ_DICTIONARY_PAGE, 1 << 30, PQ_PLAIN, 0, 0, 0, PQB_AUTO, PQB_AUTO, dict2, 16},
          f.pages[1] = (pqb_page){PQ_DATA_PAGE, 3, PQ_RLE_DICTIONARY, PQ_RLE, 0, 0, PQB_AUTO, PQB_AUTO, idx5, 3}));
    CASE("dictionary page missing", "page at byte", 1,
         (f.pages[0] = (pqb_page){PQ_DATA_PAGE, 3, PQ_RLE_DICTIONARY, PQ_RLE, 0, 0, PQB_AUTO, PQB_AUTO, idx5, 3}));
    /* Definition levels: an RLE run of 3 (0x06) of value 2, above the maximum 1. */
    static const uint8_t lvl2[] = {2, 0, 0, 0, 0x06, 0x02};
    CASE("definition level above 1", "page at byte", 1,
         (f.repetition = PQ_OPTIONAL,
          f.pages[0] = (pqb_page){PQ_DATA_PAGE, 3, PQ_PLAIN, PQ_RLE, 0, 0, PQB_AUTO, PQB_AUTO, lvl2, 6}));
    static const uint8_t lvl_long[] = {0xff, 0, 0, 0, 0x06, 0x01};
    CASE("levels length past page", "page at byte", 1,
         (f.repetition = PQ_OPTIONAL,
          f.pages[0] = (pqb_page){PQ_DATA_PAGE, 3, PQ_PLAIN, PQ_RLE, 0, 0, PQB_AUTO, PQB_AUTO, lvl_long, 6}));
    CASE("delta header bad block", "page at byte", 1,
         (f.pages[0] = (pqb_page){PQ_DATA_PAGE, 3, PQ_DELTA_BINARY_PACKED, PQ_RLE, 0, 0, PQB_AUTO, PQB_AUTO,
                                  dba + 1, 9}));
    static const uint8_t str_long[] = {0xff, 0xff, 0xff, 0x7f, 'x'};
    CASE("string length past page", "page at byte", 1,
         (f.phys = PQ_BYTE_ARRAY,
          f.pages[0] = (pqb_page){PQ_DATA_PAGE, 1, PQ_PLAIN, PQ_RLE, 0, 0, PQB_AUTO, PQB_AUTO, str_long, 5}));
    static const uint8_t minus1[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    CASE("uint64 above INT64_MAX", "row 0", 1,
         (f.logical = PQ_LT_INTEGER, f.int_bits = 64, f.int_signed = 0,
          f.pages[0] = (pqb_page){PQ_DATA_PAGE, 1, PQ_PLAIN, PQ_RLE, 0, 0, PQB_AUTO, PQB_AUTO, minus1, 8}));
    CASE("v2 levels past page", "page at byte", 1,
         (f.pages[0].type = PQ_DATA_PAGE_V2, f.pages[0].def_len = 1000));
    (void)big;
#undef CASE
}

/* Row amplification (issue 26, finding 1): a dictionary of one value and one
 * RLE run repeating it. The unbounded reader accepted 65,536 rows per file
 * byte, so these ~150-byte files decoded to 32 MB (and a 33 KB one to 2^31
 * rows); now the table budget (BL_TABLE_EXPANSION decoded bytes per byte,
 * the same bound the fuzz harness runs with) refuses them: the first at open
 * (more rows than decoded bytes allowed), the second before its values are
 * allocated. A legitimate run of the same shape still reads, and the
 * caller's ceiling lowers the bound further. */
static pqb_file one_run(int32_t rows, const uint8_t *body, size_t len)
{
    static const uint8_t dict1[] = {7, 0, 0, 0, 0, 0, 0, 0};
    pqb_file f = pqb_default();
    f.rows = rows;
    f.n_pages = 2;
    f.pages[0] = (pqb_page){PQ_DICTIONARY_PAGE, 1, PQ_PLAIN, 0, 0, 0, PQB_AUTO, PQB_AUTO, dict1, sizeof dict1};
    f.pages[1] = (pqb_page){PQ_DATA_PAGE, rows, PQ_RLE_DICTIONARY, PQ_RLE, 0, 0, PQB_AUTO, PQB_AUTO, body, len};
    return f;
}

static void test_row_amplification(void **state)
{
    (void)state;
    const char *p = tmp_path("amplified.parquet");
    /* bit width 1, run header varint(rows << 1), value 0 */
    static const uint8_t run4m[] = {1, 0x80, 0x80, 0x80, 0x04, 0x00};    /* 2^22 rows */
    static const uint8_t run100k[] = {1, 0xc0, 0x9a, 0x0c, 0x00};         /* 100,000 rows */
    static const uint8_t run1k[] = {1, 0xd0, 0x0f, 0x00};                 /* 1,000 rows */
    pqb_file f = one_run(1 << 22, run4m, sizeof run4m);
    assert_int_equal(pqb_write(p, &f), 0);
    bad_case open_k = {"2^22 rows in one RLE run", "footer", NULL};
    expect_failure(p, &open_k);
    bl_error err;
    bl_column out[8];
    size_t n;
    uint64_t rows;
    f = one_run(100000, run100k, sizeof run100k);
    assert_int_equal(pqb_write(p, &f), 0);
    bad_case chunk_k = {"100,000 rows in one RLE run", "column chunk", "column 'c'"};
    expect_failure(p, &chunk_k);
    assert_int_equal(read_first(p, out, &n, &rows, &err), BL_ERR_FORMAT);
    assert_non_null(strstr(err.message, "expansion bomb"));

    f = one_run(1000, run1k, sizeof run1k);
    assert_int_equal(pqb_write(p, &f), 0);
    assert_int_equal(read_first(p, out, &n, &rows, &err), BL_OK);
    assert_int_equal(rows, 1000);
    assert_int_equal(out[0].i64[999], 7);
    for (size_t i = 0; i < n; i++)
        col_free(&out[i]);
    /* The caller's ceiling: 1,000 rows need 8,000 bytes. */
    bl_table *t;
    assert_int_equal(bl_table_open(p, BL_TABLE_AUTO, &t, &err), BL_OK);
    bl_table_set_max_decoded(t, 4000);
    const char *names[] = {"c"};
    bl_column c = {0};
    assert_int_equal(bl_table_read_all(t, names, NULL, 1, &c, &err), BL_ERR_FORMAT);
    assert_non_null(strstr(err.message, "ceiling 4000 bytes"));
    bl_table_close(t);
}

/* A NUL inside a string value (issue 26, finding 8): "n7\0-left" imported as
 * "n7" before; now the table layer refuses it, naming file, column and row. */
static void test_nul_in_string(void **state)
{
    (void)state;
    const char *p = tmp_path("nul.parquet");
    bl_parquet_column_spec spec[] = {{"id", BL_COL_STRING, 0}};
    bl_parquet_writer *w;
    bl_error err;
    assert_int_equal(bl_parquet_writer_create(p, spec, 1, "none", &w, &err), BL_OK);
    static char data[] = "n6n7\0-left";
    int64_t offs[] = {0, 2, 10};
    bl_column c = {.type = BL_COL_STRING, .n = 2, .offsets = offs, .data = data};
    assert_int_equal(bl_parquet_writer_write(w, &c, &err), BL_OK);
    assert_int_equal(bl_parquet_writer_finish(w, &err), BL_OK);
    bl_table *t;
    assert_int_equal(bl_table_open(p, BL_TABLE_AUTO, &t, &err), BL_OK);
    const char *names[] = {"id"};
    bl_column out = {0};
    assert_int_equal(bl_table_read_all(t, names, NULL, 1, &out, &err), BL_ERR_FORMAT);
    assert_non_null(strstr(err.message, "column id, row 1: the string contains a NUL byte"));
    bl_table_close(t);
}

/* ---- the writer, read back ---- */

static void make_column(bl_column *c, bl_col_type t, uint64_t n, int nullable, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->type = t;
    c->n = n;
    if (t == BL_COL_DOUBLE)
        c->f64 = calloc(n + 1, 8);
    else if (t == BL_COL_STRING)
        c->offsets = calloc(n + 1, 8), c->data = malloc(16 * n + 1);
    else
        c->i64 = calloc(n + 1, 8);
    if (nullable)
        c->valid = calloc(n + 1, 1);
    for (uint64_t r = 0; r < n; r++) {
        uint64_t x = (r + seed) * 0x9e3779b97f4a7c15ull;
        int present = !nullable || (x >> 60) % 3 != 0;
        if (nullable)
            c->valid[r] = (uint8_t)present;
        if (t == BL_COL_STRING) {
            int len = present ? snprintf(c->data + c->offsets[r], 16, "s%u", (unsigned)((x >> 40) % 997)) : 0;
            c->offsets[r + 1] = c->offsets[r] + len;
        } else if (t == BL_COL_DOUBLE) {
            c->f64[r] = present ? (double)(int64_t)x / 3.0 : 0;
        } else if (t == BL_COL_BOOL) {
            c->i64[r] = present ? (int64_t)(x >> 63) : 0;
        } else {
            c->i64[r] = present ? (int64_t)x : 0;
        }
    }
}

static void assert_columns_equal(const bl_column *a, const bl_column *b)
{
    assert_int_equal(a->type, b->type);
    assert_int_equal(a->n, b->n);
    for (uint64_t r = 0; r < a->n; r++) {
        int va = !a->valid || a->valid[r], vb = !b->valid || b->valid[r];
        assert_int_equal(va, vb);
        if (a->type == BL_COL_STRING) {
            int64_t la = a->offsets[r + 1] - a->offsets[r], lb = b->offsets[r + 1] - b->offsets[r];
            assert_int_equal(la, lb);
            assert_memory_equal(a->data + a->offsets[r], b->data + b->offsets[r], (size_t)la);
        } else if (a->type == BL_COL_DOUBLE) {
            assert_memory_equal(&a->f64[r], &b->f64[r], 8);
        } else {
            assert_int_equal(a->i64[r], b->i64[r]);
        }
    }
}

static void test_writer_round_trip(void **state)
{
    (void)state;
    const char *codecs[] = {"zstd", "snappy", "none"};
    bl_parquet_column_spec spec[] = {{"i", BL_COL_INT64, 0}, {"d", BL_COL_DOUBLE, 1}, {"s", BL_COL_STRING, 1},
                                     {"b", BL_COL_BOOL, 0},  {"s2", BL_COL_STRING, 0}};
    const uint64_t sizes[] = {70001, 5, 1};
    bl_error err;
    for (int ci = 0; ci < 3; ci++) {
        const char *p = tmp_path("w.parquet");
        bl_parquet_writer *w;
        assert_int_equal(bl_parquet_writer_create(p, spec, 5, codecs[ci], &w, &err), BL_OK);
        bl_column in[3][5];
        for (int g = 0; g < 3; g++) {
            for (int i = 0; i < 5; i++)
                make_column(&in[g][i], spec[i].type, sizes[g], spec[i].nullable, (uint64_t)(g * 10 + i));
            assert_int_equal(bl_parquet_writer_write(w, in[g], &err), BL_OK);
        }
        bl_column none[5];
        for (int i = 0; i < 5; i++)
            make_column(&none[i], spec[i].type, 0, 0, 0);
        assert_int_equal(bl_parquet_writer_write(w, none, &err), BL_OK); /* no row group */
        for (int i = 0; i < 5; i++)
            col_free(&none[i]);
        assert_int_equal(bl_parquet_writer_finish(w, &err), BL_OK);

        void *st;
        bl_table_schema sc = {0};
        assert_int_equal(bl_table_parquet.open(p, &st, &sc, &err), BL_OK);
        assert_int_equal(sc.n_columns, 5);
        assert_int_equal(sc.n_rows, 70007);
        assert_string_equal(sc.names[2], "s");
        assert_int_equal(sc.types[3], BL_COL_BOOL);
        size_t cols[] = {0, 1, 2, 3, 4};
        for (int g = 0; g < 3; g++) {
            bl_column out[5];
            uint64_t rows;
            memset(out, 0, sizeof out);
            assert_int_equal(bl_table_parquet.next(st, cols, 5, out, &rows, &err), BL_OK);
            assert_int_equal(rows, sizes[g]);
            for (int i = 0; i < 5; i++) {
                assert_columns_equal(&in[g][i], &out[i]);
                col_free(&out[i]);
                col_free(&in[g][i]);
            }
        }
        bl_column out[5];
        uint64_t rows;
        /* Only the columns asked for, in the order asked. */
        assert_int_equal(bl_table_parquet.next(st, cols, 1, out, &rows, &err), BL_OK);
        assert_int_equal(rows, 0);
        bl_table_parquet.close(st);
        schema_free(&sc);
    }
}

static void test_writer_errors(void **state)
{
    (void)state;
    bl_error err;
    bl_parquet_writer *w;
    bl_parquet_column_spec spec[] = {{"i", BL_COL_INT64, 0}, {"j", BL_COL_INT64, 0}};
    const char *p = tmp_path("werr.parquet");
    assert_int_equal(bl_parquet_writer_create(p, spec, 2, "lzo", &w, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "lzo"));
    assert_int_equal(bl_parquet_writer_create(p, spec, 2, "zstd", &w, &err), BL_OK);
    bl_column c[2];
    make_column(&c[0], BL_COL_INT64, 3, 0, 1);
    make_column(&c[1], BL_COL_INT64, 4, 0, 2);
    assert_int_equal(bl_parquet_writer_write(w, c, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "column 'j'"));
    col_free(&c[1]);
    make_column(&c[1], BL_COL_INT64, 3, 1, 2);
    c[1].valid[0] = 0;
    assert_int_equal(bl_parquet_writer_write(w, c, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "not nullable"));
    col_free(&c[0]);
    col_free(&c[1]);
    bl_parquet_writer_abort(w);
    assert_int_equal(access(p, F_OK), -1);
}

int main(void)
{
    /* Outside ASan (which reserves terabytes of address space), a reader
     * that allocated on a malformed file's word would fail here. */
    if (!getenv("BL_SANITIZED")) {
        struct rlimit rl = {(rlim_t)1 << 30, (rlim_t)1 << 30};
        setrlimit(RLIMIT_AS, &rl);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rle_hybrid),
        cmocka_unit_test(test_delta_binary_packed),
        cmocka_unit_test(test_delta_strings),
        cmocka_unit_test(test_plain_and_split),
        cmocka_unit_test(test_thrift),
        cmocka_unit_test(test_hand_built_files),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_row_amplification),
        cmocka_unit_test(test_nul_in_string),
        cmocka_unit_test(test_writer_round_trip),
        cmocka_unit_test(test_writer_errors),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
