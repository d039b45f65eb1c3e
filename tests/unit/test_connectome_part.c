/* Connectome parts (bl_connectome_load_part): what one MPI rank holds.
 * The parts of a graph must together be the graph, split exactly where the
 * engine splits it; a part must reject what a whole load rejects, naming the
 * file and index; counts are int16 only when every kept count fits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "brainlesslab/analysis.h"
#include "brainlesslab/connectome.h"
#include "brainlesslab/npy.h"
#include "brainlesslab/synth.h"
#include "test_support.h"

BL_TEST_TMPDIR_GROUP("part")

/* A seeded synthetic graph saved under tmpdir/name. */
static void save_synth(const char *name, uint64_t n, double degree, char *dir, size_t size)
{
    bl_synth_params p;
    bl_synth_defaults(&p);
    p.n_neurons = n;
    p.mean_out_degree = degree;
    p.seed = 5;
    bl_connectome *c = NULL;
    bl_error err = {0};
    assert_int_equal(bl_synth_generate(&p, &c, &err), BL_OK);
    snprintf(dir, size, "%s/%s", tmpdir, name);
    assert_int_equal(bl_connectome_save(c, dir, &err), BL_OK);
    bl_connectome_destroy(c);
}

static int32_t count_at(const bl_connectome *c, uint64_t k)
{
    const int16_t *c16 = bl_connectome_counts16(c);
    return c16 ? c16[k] : bl_connectome_counts(c)[k];
}

/* Every edge of the whole graph is in exactly the part owning its target, in
 * row order, with its count; the bounds are the engine's split. */
static void parts_are_the_graph(void **unused)
{
    (void)unused;
    char dir[600];
    save_synth("g", 3000, 25, dir, sizeof dir);
    bl_error err = {0};
    bl_connectome *whole = NULL;
    assert_int_equal(bl_connectome_load(dir, &whole, &err), BL_OK);
    assert_int_equal(bl_connectome_parts(whole), 1);
    assert_null(bl_connectome_part_bounds(whole));
    assert_null(bl_connectome_counts16(whole));
    uint64_t n = bl_connectome_n_neurons(whole), e = bl_connectome_n_edges(whole);
    assert_int_equal(bl_connectome_n_stored_edges(whole), e);
    const int64_t *off = bl_connectome_offsets(whole);
    const int32_t *tgt = bl_connectome_targets(whole), *cnt = bl_connectome_counts(whole);
    int32_t *indeg = calloc(n, sizeof *indeg);
    for (uint64_t k = 0; k < e; k++)
        indeg[tgt[k]]++;

    for (int parts = 1; parts <= 5; parts++) {
        int32_t bounds[6];
        bl_split_by_work(indeg, 0, (int32_t)n, parts, bounds);
        uint64_t stored = 0;
        for (int part = 0; part < parts; part++) {
            bl_connectome *c = NULL;
            assert_int_equal(bl_connectome_load_part(dir, part, parts, &c, &err), BL_OK);
            assert_int_equal(bl_connectome_parts(c), parts);
            assert_int_equal(bl_connectome_part(c), part);
            assert_int_equal(bl_connectome_n_neurons(c), n);
            assert_int_equal(bl_connectome_n_edges(c), e); /* the whole graph's */
            assert_int_equal(bl_connectome_n_synapses(c), bl_connectome_n_synapses(whole));
            assert_string_equal(bl_connectome_external_id(c, n - 1), bl_connectome_external_id(whole, n - 1));
            if (parts > 1) {
                assert_memory_equal(bl_connectome_part_bounds(c), bounds, (size_t)(parts + 1) * sizeof *bounds);
                assert_memory_equal(bl_connectome_in_degree(c), indeg, n * sizeof *indeg);
                assert_non_null(bl_connectome_counts16(c)); /* synth counts fit in int16 */
                assert_null(bl_connectome_counts(c));
            }
            const int64_t *po = bl_connectome_offsets(c);
            const int32_t *pt = bl_connectome_targets(c);
            int32_t lo = bounds[part], hi = bounds[part + 1];
            for (uint64_t i = 0; i < n; i++) {
                int64_t q = po[i];
                for (int64_t k = off[i]; k < off[i + 1]; k++) {
                    if (tgt[k] < lo || tgt[k] >= hi)
                        continue;
                    assert_true(q < po[i + 1]);
                    assert_int_equal(pt[q], tgt[k]);
                    assert_int_equal(count_at(c, (uint64_t)q), cnt[k]);
                    q++;
                }
                assert_int_equal(q, po[i + 1]);
            }
            stored += bl_connectome_n_stored_edges(c);
            bl_connectome_destroy(c);
        }
        assert_int_equal(stored, e);
    }
    free(indeg);
    bl_connectome_destroy(whole);
}

/* Overwrite element k of an int32 .npy file and fix the manifest's hash and
 * synapse total, so the structural check (not the hash check) must catch it. */
static void poke_and_rehash(const char *dir, const char *file, uint64_t k, int32_t value)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    bl_npy_array a = {0};
    bl_error err = {0};
    assert_int_equal(bl_npy_read_expect(path, BL_DTYPE_INT32, 1, &a, &err), BL_OK);
    ((int32_t *)a.data)[k] = value;
    assert_int_equal(unlink(path), 0);
    assert_int_equal(bl_npy_write(path, BL_DTYPE_INT32, 1, a.shape, a.data, &err), BL_OK);
    bl_npy_free(&a);
    /* A re-save would validate, so the manifest is patched directly. */
    char cmd[2400];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import json,hashlib,sys; d=sys.argv[1]; f=sys.argv[2]; "
             "m=json.load(open(d+'/manifest.json')); b=open(d+'/'+f,'rb').read(); "
             "m['files'][f]['sha256']=hashlib.sha256(b).hexdigest(); m['files'][f]['bytes']=len(b); "
             "import numpy as np; c=np.load(d+'/counts.npy').astype(np.int64); "
             "m['n_synapses']=int(np.abs(c).sum()); "
             "json.dump(m, open(d+'/manifest.json','w'), indent=2)\" '%s' '%s'",
             dir, file);
    assert_int_equal(system(cmd), 0);
}

static void copy_dir(const char *from, const char *to)
{
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", from, to);
    assert_int_equal(system(cmd), 0);
}

/* Every part rejects a malformed graph with the whole loader's message. */
static void parts_validate_like_whole(void **unused)
{
    (void)unused;
    char dir[600], bad[700];
    save_synth("v", 400, 10, dir, sizeof dir);
    bl_error err = {0}, werr = {0};
    bl_connectome *c = NULL;

    struct {
        const char *file;
        uint64_t k;
        int32_t value;
        const char *expect;
    } cases[] = {
        {"targets.npy", 3, 400, "outside 0..399"},
        {"targets.npy", 3, -1, "outside 0..399"},
        {"counts.npy", 5, 0, "synapse count is 0"},
        {"counts.npy", 5, INT32_MIN, "out of range"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(bad, sizeof bad, "%s/bad%zu", tmpdir, i);
        copy_dir(dir, bad);
        poke_and_rehash(bad, cases[i].file, cases[i].k, cases[i].value);
        assert_int_equal(bl_connectome_load(bad, &c, &werr), BL_ERR_INVALID);
        for (int part = 0; part < 3; part++) {
            assert_int_equal(bl_connectome_load_part(bad, part, 3, &c, &err), BL_ERR_INVALID);
            assert_null(c);
            assert_non_null(strstr(err.message, cases[i].file));
            assert_non_null(strstr(err.message, cases[i].expect));
            assert_string_equal(err.message, werr.message);
        }
    }
    /* A row out of order (swap two targets of the first row with >= 2). */
    bl_connectome *whole = NULL;
    assert_int_equal(bl_connectome_load(dir, &whole, &err), BL_OK);
    const int64_t *off = bl_connectome_offsets(whole);
    const int32_t *tgt = bl_connectome_targets(whole);
    uint64_t row = 0;
    while (off[row + 1] - off[row] < 2)
        row++;
    int64_t k = off[row] + 1;
    int32_t before = tgt[k - 1];
    bl_connectome_destroy(whole);
    snprintf(bad, sizeof bad, "%s/badorder", tmpdir);
    copy_dir(dir, bad);
    poke_and_rehash(bad, "targets.npy", (uint64_t)k, before);
    assert_int_equal(bl_connectome_load(bad, &c, &werr), BL_ERR_INVALID);
    assert_int_equal(bl_connectome_load_part(bad, 1, 2, &c, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "repeats the previous target"));
    assert_string_equal(err.message, werr.message);

    /* Parts that do not exist. */
    assert_int_equal(bl_connectome_load_part(dir, 2, 2, &c, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "part 2 of 2"));
    assert_int_equal(bl_connectome_load_part(dir, 0, 0, &c, &err), BL_ERR_INVALID);
    assert_int_equal(bl_connectome_load_part(dir, -1, 2, &c, &err), BL_ERR_INVALID);
    /* A part is not a connectome to save or to search whole. */
    assert_int_equal(bl_connectome_load_part(dir, 0, 2, &c, &err), BL_OK);
    char again[800];
    snprintf(again, sizeof again, "%s/saved_part", tmpdir);
    assert_int_equal(bl_connectome_save(c, again, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "part"));
    int32_t src = 0, depth[400];
    assert_int_equal(bl_shortest_depths(c, &src, 1, depth, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "bl_shortest_depths_merged"));
    bl_connectome_destroy(c);
    /* A tampered file is still caught by its hash. */
    snprintf(bad, sizeof bad, "%s/badhash", tmpdir);
    copy_dir(dir, bad);
    char path[800];
    snprintf(path, sizeof path, "%s/targets.npy", bad);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, -1, SEEK_END);
    fputc(1, f);
    fclose(f);
    assert_int_equal(bl_connectome_load_part(bad, 0, 2, &c, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "SHA-256"));
}

/* A count beyond int16 in the part widens its counts to int32; one in another
 * part does not. */
static void wide_counts_widen(void **unused)
{
    (void)unused;
    char dir[600], wide[700];
    save_synth("w", 300, 8, dir, sizeof dir);
    snprintf(wide, sizeof wide, "%s/wide", tmpdir);
    copy_dir(dir, wide);
    bl_error err = {0};
    bl_connectome *whole = NULL;
    assert_int_equal(bl_connectome_load(dir, &whole, &err), BL_OK);
    /* The last edge's target is in the last part; make its count 40000. */
    uint64_t e = bl_connectome_n_edges(whole);
    int32_t t_last = bl_connectome_targets(whole)[e - 1];
    int32_t sign = bl_connectome_counts(whole)[e - 1] < 0 ? -1 : 1;
    bl_connectome_destroy(whole);
    poke_and_rehash(wide, "counts.npy", e - 1, sign * 40000);
    bl_connectome *a = NULL, *b = NULL;
    assert_int_equal(bl_connectome_load_part(wide, 0, 2, &a, &err), BL_OK);
    assert_int_equal(bl_connectome_load_part(wide, 1, 2, &b, &err), BL_OK);
    const int32_t *bounds = bl_connectome_part_bounds(a);
    const bl_connectome *owner = t_last >= bounds[1] ? b : a, *other = owner == a ? b : a;
    assert_null(bl_connectome_counts16(owner));
    assert_non_null(bl_connectome_counts(owner));
    assert_non_null(bl_connectome_counts16(other));
    /* The widened count is the last edge kept by its owner (rows ascend). */
    uint64_t m = bl_connectome_n_stored_edges(owner);
    assert_int_equal(bl_connectome_counts(owner)[m - 1], sign * 40000);
    bl_connectome_destroy(a);
    bl_connectome_destroy(b);
}

/* Rewrite an edge column file with a NumPy statement on its array `a` and
 * fix its manifest entry, so the value and shape checks (not the hash) must
 * catch what the edit broke. */
static void rewrite_column(const char *dir, const char *file, const char *edit)
{
    char cmd[2400];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import json,hashlib,sys; import numpy as np; d=sys.argv[1]; f=sys.argv[2]; "
             "p=d+'/'+f; a=np.load(p); %s; np.save(p, a); m=json.load(open(d+'/manifest.json')); "
             "b=open(p,'rb').read(); m['files'][f]={'bytes': len(b), 'sha256': hashlib.sha256(b).hexdigest()}; "
             "json.dump(m, open(d+'/manifest.json','w'), indent=2)\" '%s' '%s'",
             edit, dir, file);
    assert_int_equal(system(cmd), 0);
}

/* A seeded synthetic graph with both edge columns, every edge's values
 * distinct, saved under tmpdir/name. */
static void save_synth_columns(const char *name, uint64_t n, double degree, char *dir, size_t size)
{
    bl_synth_params p;
    bl_synth_defaults(&p);
    p.n_neurons = n;
    p.mean_out_degree = degree;
    p.seed = 9;
    bl_connectome *c = NULL;
    bl_error err = {0};
    assert_int_equal(bl_synth_generate(&p, &c, &err), BL_OK);
    uint64_t e = bl_connectome_n_edges(c);
    double *w = malloc(e * sizeof *w), *d = malloc(e * sizeof *d);
    assert_non_null(w);
    assert_non_null(d);
    for (uint64_t k = 0; k < e; k++) {
        w[k] = (double)k * 0.5 - 3.0;
        d[k] = 0.1 + (double)(k % 1000) * 0.01;
    }
    assert_int_equal(bl_connectome_set_edge_column(c, "weights", w, &err), BL_OK);
    assert_int_equal(bl_connectome_set_edge_column(c, "delays", d, &err), BL_OK);
    free(w);
    free(d);
    snprintf(dir, size, "%s/%s", tmpdir, name);
    assert_int_equal(bl_connectome_save(c, dir, &err), BL_OK);
    bl_connectome_destroy(c);
}

/* The edge columns (weights.npy, delays.npy) in parts: each part holds the
 * values of its own edges, in its edge order, across more than one streamed
 * chunk; a part without columns has none; every fault a whole load refuses
 * (a value out of bounds, a wrong shape or dtype, a changed byte) every part
 * refuses with the same message, naming the file and the whole graph's edge
 * index. */
static void parts_keep_edge_columns(void **unused)
{
    (void)unused;
    char dir[600], bad[700];
    save_synth_columns("cols", 12000, 100, dir, sizeof dir); /* > 2^20 edges: two chunks */
    bl_error err = {0}, werr = {0};
    bl_connectome *whole = NULL;
    assert_int_equal(bl_connectome_load(dir, &whole, &err), BL_OK);
    const uint64_t n = bl_connectome_n_neurons(whole), e = bl_connectome_n_edges(whole);
    assert_true(e > ((uint64_t)1 << 20));
    const int64_t *off = bl_connectome_offsets(whole);
    const int32_t *tgt = bl_connectome_targets(whole);
    const double *w = bl_connectome_edge_weights(whole), *d = bl_connectome_edge_delays_ms(whole);
    assert_non_null(w);
    assert_non_null(d);
    for (int parts = 2; parts <= 3; parts++) {
        uint64_t seen = 0;
        for (int part = 0; part < parts; part++) {
            bl_connectome *c = NULL;
            assert_int_equal(bl_connectome_load_part(dir, part, parts, &c, &err), BL_OK);
            const int32_t *bounds = bl_connectome_part_bounds(c);
            const int64_t *po = bl_connectome_offsets(c);
            const double *pw = bl_connectome_edge_weights(c), *pd = bl_connectome_edge_delays_ms(c);
            assert_non_null(pw);
            assert_non_null(pd);
            for (uint64_t i = 0; i < n; i++) {
                int64_t q = po[i];
                for (int64_t k = off[i]; k < off[i + 1]; k++) {
                    if (tgt[k] < bounds[part] || tgt[k] >= bounds[part + 1])
                        continue;
                    assert_true(pw[q] == w[k] && pd[q] == d[k]); /* exact: copied, never computed */
                    q++;
                }
                assert_int_equal(q, po[i + 1]);
            }
            seen += bl_connectome_n_stored_edges(c);
            bl_connectome_destroy(c);
        }
        assert_int_equal(seen, e);
    }
    bl_connectome_destroy(whole);
    /* Without the columns a part has none. */
    char plain[600];
    save_synth("nocols", 300, 6, plain, sizeof plain);
    bl_connectome *c = NULL;
    assert_int_equal(bl_connectome_load_part(plain, 1, 2, &c, &err), BL_OK);
    assert_null(bl_connectome_edge_weights(c));
    assert_null(bl_connectome_edge_delays_ms(c));
    bl_connectome_destroy(c);

    save_synth_columns("cols_small", 400, 10, dir, sizeof dir);
    struct {
        const char *file, *edit, *expect;
    } cases[] = {
        {"weights.npy", "a[7]=np.nan", "edge 7: weight nan is not finite"},
        {"weights.npy", "a[300]=2e12", "edge 300: weight 2e+12"},
        {"delays.npy", "a[9]=0.0", "edge 9: delay 0 ms is not in (0, 1e6] ms"},
        {"delays.npy", "a[301]=-1.0", "edge 301: delay -1 ms"},
        {"weights.npy", "a=np.append(a, 1.0)", "manifest n_edges is"},
        {"delays.npy", "a=a.astype(np.float32)", "expected 1-d '<f8'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(bad, sizeof bad, "%s/badcol%zu", tmpdir, i);
        copy_dir(dir, bad);
        rewrite_column(bad, cases[i].file, cases[i].edit);
        bl_connectome *b = NULL;
        assert_int_not_equal(bl_connectome_load(bad, &b, &werr), BL_OK);
        assert_null(b);
        for (int part = 0; part < 3; part++) {
            assert_int_not_equal(bl_connectome_load_part(bad, part, 3, &c, &err), BL_OK);
            assert_null(c);
            assert_non_null(strstr(err.message, cases[i].file));
            assert_non_null(strstr(err.message, cases[i].expect));
            assert_string_equal(err.message, werr.message);
        }
    }
    /* A changed byte: the hash, as read, whatever part. */
    snprintf(bad, sizeof bad, "%s/badcolhash", tmpdir);
    copy_dir(dir, bad);
    char path[800];
    snprintf(path, sizeof path, "%s/delays.npy", bad);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, -3, SEEK_END);
    fputc(0x41, f);
    fclose(f);
    for (int part = 0; part < 2; part++) {
        assert_int_equal(bl_connectome_load_part(bad, part, 2, &c, &err), BL_ERR_INVALID);
        assert_non_null(strstr(err.message, "delays.npy"));
        assert_non_null(strstr(err.message, "SHA-256"));
    }
}

static bl_status merge_nothing(int32_t *depth, uint64_t n, void *user, bl_error *err)
{
    (void)depth;
    (void)n;
    (void)err;
    (*(int *)user)++;
    return BL_OK;
}

/* The level-synchronous search gives the queue search's depths (one part:
 * nothing to merge); the multi-part case is checked against the single
 * process in tests/cli/test_mpi_record.sh (depth_from_stimulus.npy). */
static void merged_depths_equal_queue_depths(void **unused)
{
    (void)unused;
    char dir[600];
    save_synth("d", 2000, 6, dir, sizeof dir);
    bl_error err = {0};
    bl_connectome *c = NULL;
    assert_int_equal(bl_connectome_load(dir, &c, &err), BL_OK);
    int32_t sources[] = {5, 77, 1999, 5};
    int32_t a[2000], b[2000];
    assert_int_equal(bl_shortest_depths(c, sources, 4, a, &err), BL_OK);
    int levels = 0;
    assert_int_equal(bl_shortest_depths_merged(c, sources, 4, b, merge_nothing, &levels, &err), BL_OK);
    assert_memory_equal(a, b, sizeof a);
    int32_t deepest = 0;
    for (int i = 0; i < 2000; i++)
        deepest = a[i] > deepest ? a[i] : deepest;
    assert_true(deepest >= 2);
    assert_int_equal(levels, deepest + 1); /* one merge per level, the last finds nothing */
    int32_t bad = 2000;
    assert_int_equal(bl_shortest_depths_merged(c, &bad, 1, b, merge_nothing, &levels, &err), BL_ERR_INVALID);
    bl_connectome_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parts_are_the_graph),
        cmocka_unit_test(parts_validate_like_whole),
        cmocka_unit_test(wide_counts_widen),
        cmocka_unit_test(parts_keep_edge_columns),
        cmocka_unit_test(merged_depths_equal_queue_depths),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
