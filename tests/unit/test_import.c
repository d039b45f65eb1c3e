/* Unit tests for the importers (src/connectome/import_*.c) on small
 * hand-made data directories: the CSR graph (rows sorted by target, signed
 * counts, self-loops kept), neuron order, metadata columns, info keys, sign
 * policies (built-in, strict, overridden), and malformed inputs failing with
 * one-line messages that name file:line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/import.h"
#include "brainlesslab/sign_policy.h"

#include "test_support.h"

static char tmpdir[256];
static int dir_counter;


static int group_setup(void **state)
{
    (void)state;
    return bl_test_make_tmpdir(tmpdir, sizeof tmpdir, "import");
}

static int group_teardown(void **state)
{
    (void)state;
    bl_test_remove_tmpdir(tmpdir);
    return 0;
}

/* A fresh data directory for one case. */
static const char *new_dir(void)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/d%03d", tmpdir, dir_counter++);
    assert_int_equal(mkdir(path, 0755), 0);
    return path;
}

static void put(const char *dir, const char *name, const char *text)
{
    char path[768];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The real larva edge list is gzipped; write it that way too. */
static void put_gz(const char *dir, const char *name, const char *text)
{
    char path[768];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    gzFile g = gzopen(path, "wb");
    assert_non_null(g);
    assert_int_equal(gzputs(g, text), (int)strlen(text));
    assert_int_equal(gzclose(g), Z_OK);
}

static void assert_column(const bl_connectome *c, const char *name, const char *const *want)
{
    int col = bl_connectome_column(c, name);
    if (col < 0)
        fail_msg("no column %s", name);
    for (uint64_t i = 0; i < bl_connectome_n_neurons(c); i++)
        if (strcmp(bl_connectome_value(c, (size_t)col, i), want[i]))
            fail_msg("column %s, neuron %llu: '%s', expected '%s'", name, (unsigned long long)i,
                     bl_connectome_value(c, (size_t)col, i), want[i]);
}

static void assert_graph(const bl_connectome *c, uint64_t n, uint64_t e, const int64_t *off,
                         const int32_t *tgt, const int32_t *cnt)
{
    assert_int_equal(bl_connectome_n_neurons(c), n);
    assert_int_equal(bl_connectome_n_edges(c), e);
    assert_memory_equal(bl_connectome_offsets(c), off, (n + 1) * sizeof *off);
    assert_memory_equal(bl_connectome_targets(c), tgt, e * sizeof *tgt);
    assert_memory_equal(bl_connectome_counts(c), cnt, e * sizeof *cnt);
}

/* Run an importer expecting failure; the message must hold every needle and
 * be one line. */
typedef bl_status (*importer)(const char *, const bl_sign_policy *, bl_connectome **,
                              bl_error *);

static void expect_failure(importer fn, const char *dir, const bl_sign_policy *policy,
                           bl_status status, const char *needle1, const char *needle2)
{
    bl_error err = {0};
    bl_connectome *c = (bl_connectome *)&err; /* must be reset to NULL */
    bl_status st = fn(dir, policy, &c, &err);
    if (st != status)
        fail_msg("status %d (%s), expected %d", (int)st, err.message, (int)status);
    assert_null(c);
    if (!strstr(err.message, needle1) || (needle2 && !strstr(err.message, needle2)))
        fail_msg("message '%s' lacks '%s' / '%s'", err.message, needle1, needle2 ? needle2 : "");
    assert_null(strchr(err.message, '\n'));
}

/* ---------- larva ---------- */

static const char larva_edges[] = "pre_skid,post_skid,all,aa,ad,da,dd\n"
                                  "30,10,3,1,2,0,0\n"
                                  "10,20,2,0,2,0,0\n"
                                  "10,10,1,0,0,0,1\n"
                                  "20,30,5,5,0,0,0\n"
                                  "10,30,4,1,1,1,1\n"
                                  "40,10,1,0,1,0,0\n";

static const char larva_annotations[] =
    "left_id,right_id,celltype,additional_annotations,level_7_cluster\n"
    "10,no pair,sensory,olfactory,3\n"
    "no pair,20,LN,\"Broad; LN\",no cluster\n"
    "30,99,KC,KC,7\n";

static const char *larva_dir(const char *edges, const char *annotations)
{
    const char *dir = new_dir();
    put_gz(dir, "edges_all_compartments.csv.gz", edges);
    put(dir, "annotations.csv", annotations);
    return dir;
}

static void test_larva_good(void **state)
{
    (void)state;
    const char *dir = larva_dir(larva_edges, larva_annotations);
    bl_error err = {0};
    bl_connectome *c = NULL;
    assert_int_equal(bl_import_larva(dir, NULL, &c, &err), BL_OK);
    /* Neurons 10, 20, 30, 40 (ascending skid; 99 is annotated but has no edge).
     * Signs: sensory +1, LN -1, KC +1, unannotated +1. */
    const int64_t off[] = {0, 3, 4, 5, 6};
    const int32_t tgt[] = {0, 1, 2, 2, 0, 0};
    const int32_t cnt[] = {1, 2, 4, -5, 3, 1};
    assert_graph(c, 4, 6, off, tgt, cnt);
    assert_int_equal(bl_connectome_n_synapses(c), 16);
    const char *ids[] = {"10", "20", "30", "40"};
    for (int i = 0; i < 4; i++)
        assert_string_equal(bl_connectome_external_id(c, (uint64_t)i), ids[i]);
    const char *cell_type[] = {"sensory", "LN", "KC", ""};
    const char *annotation[] = {"olfactory", "Broad; LN", "KC", ""};
    const char *side[] = {"left", "right", "left", ""};
    const char *cluster[] = {"3", "", "7", ""};
    const char *modality[] = {"olfactory", "", "", ""};
    const char *transmitter[] = {"", "", "", ""};
    const char *sign[] = {"+1", "-1", "+1", "+1"};
    assert_column(c, "cell_type", cell_type);
    assert_column(c, "annotation", annotation);
    assert_column(c, "side", side);
    assert_column(c, "cluster", cluster);
    assert_column(c, "modality", modality);
    assert_column(c, "transmitter", transmitter);
    assert_column(c, "sign", sign);
    assert_string_equal(bl_connectome_info(c, "name"), "drosophila-larva-winding2023");
    assert_string_equal(bl_connectome_info(c, "sign_policy"),
                        "celltype: kc=+1;ln=-1;pn=+1;sensory=+1;unknown=+1;default=+1");
    assert_string_equal(bl_connectome_info(c, "generator"), "brainlesslab import larva");
    assert_non_null(strstr(bl_connectome_info(c, "source"), "annotations.csv sha256="));
    assert_non_null(bl_connectome_info(c, "citation"));
    assert_non_null(bl_connectome_info(c, "licence"));
    bl_connectome_destroy(c);
}

static void test_larva_policy(void **state)
{
    (void)state;
    const char *dir = larva_dir(larva_edges, larva_annotations);
    bl_error err = {0};
    bl_sign_policy *p = NULL;
    assert_int_equal(bl_sign_policy_create(0, &p, &err), BL_OK);
    assert_int_equal(bl_sign_policy_set(p, "sensory", -1, &err), BL_OK);
    assert_int_equal(bl_sign_policy_set(p, "ln", +1, &err), BL_OK);
    assert_int_equal(bl_sign_policy_set(p, "kc", +1, &err), BL_OK);
    /* No unknown or default sign: the unannotated skid 40 is an error. */
    expect_failure(bl_import_larva, dir, p, BL_ERR_INVALID, "skid 40", "annotations.csv");
    assert_int_equal(bl_sign_policy_set_unknown(p, -1, &err), BL_OK);
    bl_connectome *c = NULL;
    assert_int_equal(bl_import_larva(dir, p, &c, &err), BL_OK);
    const char *sign[] = {"-1", "+1", "+1", "-1"};
    assert_column(c, "sign", sign);
    const int32_t *cnt = bl_connectome_counts(c);
    assert_int_equal(cnt[0], -1);
    assert_int_equal(cnt[3], 5);
    assert_int_equal(cnt[5], -1);
    bl_connectome_destroy(c);
    /* A cell type the strict policy does not map is an error naming its line. */
    assert_int_equal(bl_sign_policy_set(p, "sensory", 1, &err), BL_OK);
    dir = larva_dir(larva_edges, "left_id,right_id,celltype,additional_annotations,level_7_cluster\n"
                                 "10,no pair,sensory,olfactory,3\n"
                                 "no pair,20,MBON,MBON-a1,1\n");
    expect_failure(bl_import_larva, dir, p, BL_ERR_INVALID, "annotations.csv:3, column celltype",
                   "'MBON'");
    bl_sign_policy_destroy(p);
}

static void test_larva_malformed(void **state)
{
    (void)state;
    const char *hdr = "pre_skid,post_skid,all,aa,ad,da,dd\n";
    char buf[512];
#define EDGES(rows) (snprintf(buf, sizeof buf, "%s%s", hdr, rows), buf)
    expect_failure(bl_import_larva, larva_dir(EDGES("10,20,2,0,2,0,0\n10,30,x,0,0,0,0\n"), larva_annotations),
                   NULL, BL_ERR_FORMAT, "edges_all_compartments.csv.gz:3: column 3", "'x'");
    expect_failure(bl_import_larva, larva_dir(EDGES("10,20,0,0,0,0,0\n"), larva_annotations), NULL,
                   BL_ERR_FORMAT, "edges_all_compartments.csv.gz:2: column 3", "'0'");
    expect_failure(bl_import_larva, larva_dir(EDGES("10,20,-2,0,0,0,0\n"), larva_annotations), NULL,
                   BL_ERR_FORMAT, "edges_all_compartments.csv.gz:2", "'-2'");
    expect_failure(bl_import_larva, larva_dir(EDGES("10,abc,2,0,2,0,0\n"), larva_annotations), NULL,
                   BL_ERR_FORMAT, "edges_all_compartments.csv.gz:2: column 2", "'abc'");
    expect_failure(bl_import_larva, larva_dir(EDGES("10,20,2,0,1,0,0\n"), larva_annotations), NULL,
                   BL_ERR_INVALID, "edges_all_compartments.csv.gz:2", "aa+ad+da+dd = 1");
    expect_failure(bl_import_larva,
                   larva_dir(EDGES("10,20,2,0,2,0,0\n30,10,1,1,0,0,0\n10,20,2,0,2,0,0\n"),
                             larva_annotations),
                   NULL, BL_ERR_INVALID, "edges_all_compartments.csv.gz:4: duplicate edge 10 -> 20",
                   "line 2");
    expect_failure(bl_import_larva, larva_dir(EDGES("10,20,2,0,2,0\n"), larva_annotations), NULL,
                   BL_ERR_FORMAT, "edges_all_compartments.csv.gz:2", "expected 7 fields");
    expect_failure(bl_import_larva, larva_dir("pre_skid,post_skid,synapses\n10,20,2\n", larva_annotations),
                   NULL, BL_ERR_FORMAT, "edges_all_compartments.csv.gz:1", "missing column 'all'");
    expect_failure(bl_import_larva, larva_dir("", larva_annotations), NULL, BL_ERR_FORMAT,
                   "edges_all_compartments.csv.gz", "empty file");
#undef EDGES
    /* Annotations. */
    const char *ah = "left_id,right_id,celltype,additional_annotations,level_7_cluster\n";
#define ANNOT(rows) (snprintf(buf, sizeof buf, "%s%s", ah, rows), buf)
    expect_failure(bl_import_larva, larva_dir(larva_edges, ANNOT("10,no pair,KC,KC,1\n20,10,LN,x,2\n")),
                   NULL, BL_ERR_INVALID, "annotations.csv:3: skid 10 is already annotated at line 2",
                   NULL);
    expect_failure(bl_import_larva, larva_dir(larva_edges, ANNOT("no pair,no pair,KC,KC,1\n")), NULL,
                   BL_ERR_INVALID, "annotations.csv:2", "both left_id and right_id");
    expect_failure(bl_import_larva, larva_dir(larva_edges, ANNOT("ten,no pair,KC,KC,1\n")), NULL,
                   BL_ERR_FORMAT, "annotations.csv:2: column 1", "'ten'");
    expect_failure(bl_import_larva, larva_dir(larva_edges, ANNOT("10,no pair,KC,KC,seven\n")), NULL,
                   BL_ERR_FORMAT, "annotations.csv:2: column 5", "'seven'");
    expect_failure(bl_import_larva, larva_dir(larva_edges, ANNOT("10,no pair,\"K\nC\",KC,1\n")), NULL,
                   BL_ERR_FORMAT, "annotations.csv:2, column celltype", "control character");
    expect_failure(bl_import_larva,
                   larva_dir(larva_edges, "left_id,right_id,celltype,level_7_cluster\n10,no pair,KC,1\n"),
                   NULL, BL_ERR_FORMAT, "annotations.csv:1", "missing column 'additional_annotations'");
#undef ANNOT
    /* Missing files. */
    const char *dir = new_dir();
    expect_failure(bl_import_larva, dir, NULL, BL_ERR_IO, "edges_all_compartments.csv.gz", NULL);
    put_gz(dir, "edges_all_compartments.csv.gz", larva_edges);
    expect_failure(bl_import_larva, dir, NULL, BL_ERR_IO, "annotations.csv", NULL);
}

/* ---------- C. elegans ---------- */

static const char worm_edges[] = "pre,post,synapses_S_plus_Sp\n"
                                 "AVAL,AVBL,3\n"
                                 "AVBL,AVAL,2\n"
                                 "DD1,AVAL,4\n"
                                 "AVAL,AVAL,1\n"
                                 "HSNL,AVBL,2\n"
                                 "VD1,DD1,1\n"
                                 "NSML,AVAL,6\n";

static const char worm_nt[] = "origin,target,type,synapses,neurotransmitter\n"
                              "AVAL,AVBL,Send,3,Acetylcholine\n"
                              "AVAL,AVBL,GapJunction,1,Generic_GJ\n"
                              "AVBL,AVAL,Send,2,Glutamate\n"
                              "DD1,AVAL,Send,4,GABA\n"
                              "DD1,VD2,Send,1,gaba\n"
                              "HSNL,AVBL,Send,2,Serotonin_Acetylcholine\n"
                              "NSML,AVAL,Send,6,Serotonin_Glutamate\n"
                              "I1L,I2L,Send,1,Acetylcholine\n";

static const char *worm_dir(const char *edges, const char *nt)
{
    const char *dir = new_dir();
    put(dir, "varshney_chemical_edges.csv", edges);
    put(dir, "openworm_connectome_transmitters.csv", nt);
    return dir;
}

static void test_celegans_good(void **state)
{
    (void)state;
    const char *dir = worm_dir(worm_edges, worm_nt);
    bl_error err = {0};
    bl_connectome *c = NULL;
    assert_int_equal(bl_import_celegans(dir, NULL, &c, &err), BL_OK);
    /* AVAL AVBL DD1 HSNL NSML VD1; DD1 is GABA (-1); VD1 has no Send row (+1). */
    const int64_t off[] = {0, 2, 3, 4, 5, 6, 7};
    const int32_t tgt[] = {0, 1, 0, 0, 1, 0, 2};
    const int32_t cnt[] = {1, 3, 2, -4, 2, 6, 1};
    assert_graph(c, 6, 7, off, tgt, cnt);
    const char *ids[] = {"AVAL", "AVBL", "DD1", "HSNL", "NSML", "VD1"};
    for (int i = 0; i < 6; i++)
        assert_string_equal(bl_connectome_external_id(c, (uint64_t)i), ids[i]);
    const char *nt[] = {"Acetylcholine",           "Glutamate",           "GABA",
                        "Serotonin_Acetylcholine", "Serotonin_Glutamate", ""};
    const char *sign[] = {"+1", "+1", "-1", "+1", "+1", "+1"};
    assert_column(c, "transmitter", nt);
    assert_column(c, "sign", sign);
    assert_string_equal(bl_connectome_info(c, "name"), "celegans-varshney2011");
    assert_non_null(strstr(bl_connectome_info(c, "sign_policy"), "transmitter: acetylcholine=+1;"));
    assert_non_null(strstr(bl_connectome_info(c, "sign_policy"), "default=error"));
    bl_connectome_destroy(c);

    /* Glutamate overridden to inhibitory: the compound follows its fast part. */
    bl_sign_policy *p = NULL;
    assert_int_equal(bl_sign_policy_default_celegans(&p, &err), BL_OK);
    put(tmpdir, "glu.csv", "key,sign\nglutamate,-1\n");
    char path[600];
    snprintf(path, sizeof path, "%s/glu.csv", tmpdir);
    assert_int_equal(bl_sign_policy_load_overrides(p, path, &err), BL_OK);
    assert_int_equal(bl_import_celegans(dir, p, &c, &err), BL_OK);
    const char *sign2[] = {"+1", "-1", "-1", "+1", "-1", "+1"};
    assert_column(c, "sign", sign2);
    assert_int_equal(bl_connectome_counts(c)[2], -2);
    assert_int_equal(bl_connectome_counts(c)[5], -6);
    bl_connectome_destroy(c);
    bl_sign_policy_destroy(p);
}

static void test_celegans_malformed(void **state)
{
    (void)state;
    const char *eh = "pre,post,synapses_S_plus_Sp\n";
    const char *nh = "origin,target,type,synapses,neurotransmitter\n";
    char buf[512];
#define ROWS(h, rows) (snprintf(buf, sizeof buf, "%s%s", h, rows), buf)
    expect_failure(bl_import_celegans, worm_dir(ROWS(eh, "AVAL,AVBL,2\nAVBL,AVAL,two\n"), worm_nt),
                   NULL, BL_ERR_FORMAT, "varshney_chemical_edges.csv:3: column 3", "'two'");
    expect_failure(bl_import_celegans, worm_dir(ROWS(eh, "AVAL,AVBL,0\n"), worm_nt), NULL,
                   BL_ERR_FORMAT, "varshney_chemical_edges.csv:2: column 3", "'0'");
    expect_failure(bl_import_celegans, worm_dir(ROWS(eh, "AVAL,AVBL,1.5\n"), worm_nt), NULL,
                   BL_ERR_FORMAT, "varshney_chemical_edges.csv:2", "'1.5'");
    expect_failure(bl_import_celegans, worm_dir(ROWS(eh, "AVAL,\"AVBL \",1\n"), worm_nt), NULL,
                   BL_ERR_FORMAT, "varshney_chemical_edges.csv:2, column post", "blanks");
    expect_failure(bl_import_celegans, worm_dir(ROWS(eh, "AVAL,,1\n"), worm_nt), NULL,
                   BL_ERR_FORMAT, "varshney_chemical_edges.csv:2, column post", "empty name");
    expect_failure(bl_import_celegans, worm_dir(ROWS(eh, "AVAL,AVBL,1\nDD1,AVAL,1\nAVAL,AVBL,3\n"), worm_nt),
                   NULL, BL_ERR_INVALID, "varshney_chemical_edges.csv:4: duplicate edge AVAL -> AVBL",
                   "line 2");
    expect_failure(bl_import_celegans, worm_dir("pre,post\nAVAL,AVBL\n", worm_nt), NULL,
                   BL_ERR_FORMAT, "varshney_chemical_edges.csv:1", "synapses_S_plus_Sp");
    /* The transmitter table. */
    expect_failure(bl_import_celegans,
                   worm_dir(worm_edges, ROWS(nh, "AVAL,AVBL,Send,3,Acetylcholine\nAVAL,DD1,Send,1,GABA\n")),
                   NULL, BL_ERR_INVALID, "openworm_connectome_transmitters.csv:3, column neurotransmitter",
                   "neuron AVAL has 'GABA' here but 'Acetylcholine' at line 2");
    expect_failure(bl_import_celegans, worm_dir(worm_edges, ROWS(nh, "AVAL,AVBL,Send,3,Histamine\n")),
                   NULL, BL_ERR_INVALID, "openworm_connectome_transmitters.csv:2, column neurotransmitter",
                   "'Histamine' is not mapped");
    expect_failure(bl_import_celegans, worm_dir(worm_edges, ROWS(nh, "AVAL,AVBL,Chemical,3,GABA\n")),
                   NULL, BL_ERR_FORMAT, "openworm_connectome_transmitters.csv:2, column type",
                   "'Chemical'");
    expect_failure(bl_import_celegans, worm_dir(worm_edges, ROWS(nh, "AVAL,AVBL,Send,3.0,GABA\n")),
                   NULL, BL_ERR_FORMAT, "openworm_connectome_transmitters.csv:2: column 4", "'3.0'");
    expect_failure(bl_import_celegans,
                   worm_dir(worm_edges, "origin,target,type,synapses\nAVAL,AVBL,Send,3\n"), NULL,
                   BL_ERR_FORMAT, "openworm_connectome_transmitters.csv:1",
                   "missing column 'neurotransmitter'");
#undef ROWS
    const char *dir = new_dir();
    put(dir, "varshney_chemical_edges.csv", worm_edges);
    expect_failure(bl_import_celegans, dir, NULL, BL_ERR_IO, "openworm_connectome_transmitters.csv",
                   NULL);
}

/* An empty edge list is a valid (empty) connectome, not a crash. */
static void test_empty_tables(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_connectome *c = NULL;
    const char *dir = worm_dir("pre,post,synapses_S_plus_Sp\n",
                               "origin,target,type,synapses,neurotransmitter\n");
    assert_int_equal(bl_import_celegans(dir, NULL, &c, &err), BL_OK);
    assert_int_equal(bl_connectome_n_neurons(c), 0);
    assert_int_equal(bl_connectome_n_edges(c), 0);
    bl_connectome_destroy(c);
    dir = larva_dir("pre_skid,post_skid,all\n",
                    "left_id,right_id,celltype,additional_annotations,level_7_cluster\n");
    assert_int_equal(bl_import_larva(dir, NULL, &c, &err), BL_OK);
    assert_int_equal(bl_connectome_n_neurons(c), 0);
    bl_connectome_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_larva_good),        cmocka_unit_test(test_larva_policy),
        cmocka_unit_test(test_larva_malformed),   cmocka_unit_test(test_celegans_good),
        cmocka_unit_test(test_celegans_malformed), cmocka_unit_test(test_empty_tables),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
