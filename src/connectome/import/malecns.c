/* `import malecns`: the male CNS flat connectome (three Feather files: body
 * annotations, body neurotransmitters, connectome weights).
 *
 * Selection (declared, overridable with --select): by default the bodies
 * whose annotation has a superclass, i.e. the ones the annotators placed as
 * neurons (fragments and glia have none), in ascending body id; --select all
 * takes every annotated body. Edges between selected bodies are kept;
 * weights rows that name another body are dropped and counted in the report.
 * Signs: each body's transmitter through the fly transmitter policy
 * (acetylcholine +1, GABA -1, glutamate -1; histamine -1; dopamine,
 * serotonin, octopamine, tyramine +1; no prediction +1; docs/sign-policy.md),
 * overridable with --sign-policy. The files' column names are found among
 * the names the releases use and can be named explicitly; the report says
 * which were used. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectome/import/common_run.h"

static const bl_import_option options[] = {
    {"--annotations", "FILE", 1, "body annotations (.feather; bodyId, superclass, class, type, ...)"},
    {"--transmitters", "FILE", 1, "body neurotransmitters (.feather; bodyId, a transmitter column)"},
    {"--weights", "FILE", 1, "connectome weights (.feather; body_pre, body_post, weight)"},
    {"--select", "superclass|all", 0, "which bodies are neurons (default superclass: those with a superclass)"},
    {"--sign-policy", "FILE", 0, "key,sign CSV over the fly transmitter policy (docs/sign-policy.md)"},
    {"--id", "COL", 0, "body id column of the annotations and transmitters (default: bodyId, body or body_id)"},
    {"--superclass", "COL", 0, "superclass column (default: superclass or super_class)"},
    {"--nt", "COL", 0, "transmitter column (default: consensus_nt, predicted_nt, celltype_predicted_nt, nt or neurotransmitter)"},
    {"--pre", "COL", 0, "presynaptic body column of the weights (default: body_pre, bodyId_pre or pre)"},
    {"--post", "COL", 0, "postsynaptic body column of the weights (default: body_post, bodyId_post or post)"},
    {"--weight", "COL", 0, "synapse count column of the weights (default: weight, syn_count or count)"},
    {NULL, NULL, 0, NULL},
};

/* The column: given, or the first candidate the file has; an error naming the file otherwise. */
static bl_status column(const char *path, const char *given, const char *const *cand, size_t n, const char *what,
                        const char **out, bl_error *err)
{
    if (given) {
        *out = given;
        return BL_OK;
    }
    *out = bl_import_pick_column(path, cand, n);
    if (*out)
        return BL_OK;
    /* A file that cannot be opened (missing, a FIFO, not a table) says so,
     * not "no such column". */
    bl_table *t = NULL;
    bl_status st = bl_table_open(path, BL_TABLE_AUTO, &t, err);
    bl_table_close(t);
    if (st)
        return st;
    char list[256] = "";
    for (size_t i = 0; i < n; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, cand[i], sizeof list - strlen(list) - 1);
    }
    return bl_fail(err, BL_ERR_FORMAT, "%s: no %s column (looked for %s; name it with the option)", path, what, list);
}

static const bl_column *sort_col;
static int by_id(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    if (sort_col->type == BL_COL_INT64)
        return sort_col->i64[x] < sort_col->i64[y] ? -1 : sort_col->i64[x] > sort_col->i64[y];
    int64_t lx = sort_col->offsets[x + 1] - sort_col->offsets[x], ly = sort_col->offsets[y + 1] - sort_col->offsets[y];
    int c = memcmp(sort_col->data + sort_col->offsets[x], sort_col->data + sort_col->offsets[y],
                   (size_t)(lx < ly ? lx : ly));
    return c ? c : (lx < ly ? -1 : lx > ly);
}

/* The selected annotation rows, in ascending id, as the neurons; every
 * readable annotation column but the id becomes metadata. */
static bl_status select_bodies(const char *path, const char *id, const char *super, int all, bl_ids *ids, bl_meta *meta,
                               bl_report *report, bl_error *err)
{
    bl_table *t = NULL;
    bl_status st = bl_table_open(path, BL_TABLE_AUTO, &t, err);
    if (st != BL_OK)
        return st;
    size_t nc = bl_table_n_columns(t), m = 0, idc = 0, sc = 0;
    const char **names = calloc(nc + 1, sizeof *names);
    bl_column *c = calloc(nc + 1, sizeof *c);
    uint64_t *rows = NULL;
    if (!names || !c)
        st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
    for (size_t i = 0; st == BL_OK && i < nc; i++) {
        const char *nm = bl_table_column_name(t, i);
        if (!strcmp(nm, id))
            idc = m;
        if (!strcmp(nm, super))
            sc = m;
        if (!strcmp(nm, id) || bl_table_column_type(t, i))
            names[m++] = nm;
    }
    if (st == BL_OK)
        st = bl_table_read_all(t, names, NULL, m, c, err);
    uint64_t n = st == BL_OK ? c[idc].n : 0, kept = 0;
    if (st == BL_OK && c[idc].type != BL_COL_INT64 && c[idc].type != BL_COL_STRING)
        st = bl_fail(err, BL_ERR_FORMAT, "%s: id column %s holds neither integers nor text", path, id);
    rows = calloc((size_t)(n ? n : 1), sizeof *rows);
    if (st == BL_OK && !rows)
        st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
    for (uint64_t r = 0; st == BL_OK && r < n; r++) {
        int has = 0;
        if (!(c[sc].valid && !c[sc].valid[r])) {
            if (c[sc].type == BL_COL_STRING)
                has = c[sc].offsets[r + 1] > c[sc].offsets[r];
            else
                has = 1;
        }
        if (all || has)
            rows[kept++] = r;
    }
    if (st == BL_OK) {
        sort_col = &c[idc];
        qsort(rows, (size_t)kept, sizeof *rows, by_id);
        bl_report_add(report, "%s: %llu bodies, %llu selected (%s), in ascending %s", bl_import_base_name(path), (unsigned long long)n,
                      (unsigned long long)kept, all ? "--select all" : "those with a superclass", id);
    }
    for (uint64_t k = 0; st == BL_OK && k < kept; k++) {
        char *txt = bl_import_cell(&c[idc], rows[k]);
        int32_t j;
        int added = 0;
        if (!txt || !txt[0])
            st = txt ? bl_fail(err, BL_ERR_FORMAT, "%s: column %s, row %llu: empty id", path, id,
                               (unsigned long long)rows[k] + 1)
                     : bl_fail(err, BL_ERR_NOMEM, "out of memory");
        else if ((st = bl_ids_add(ids, txt, strlen(txt), &j, &added, err)) == BL_OK && !added)
            st = bl_fail(err, BL_ERR_INVALID, "%s: column %s, row %llu: body %s given twice", path, id,
                         (unsigned long long)rows[k] + 1, txt);
        free(txt);
    }
    if (st == BL_OK)
        st = bl_meta_init(meta, kept, err);
    for (size_t q = 0; st == BL_OK && q < m; q++) {
        if (q == idc)
            continue;
        char name[128], base[100];
        bl_import_column_name(names[q], base, sizeof base);
        snprintf(name, sizeof name, "%s%s",
                 (!strcmp(base, "index") || !strcmp(base, "external_id") || !strcmp(base, "sign") ||
                  !strcmp(base, "transmitter")) ? "source_" : "",
                 base);
        char **v = calloc((size_t)(kept ? kept : 1), sizeof *v);
        for (uint64_t k = 0; v && k < kept; k++) {
            v[k] = bl_import_cell(&c[q], rows[k]);
            for (char *p = v[k]; p && *p; p++)
                if (*p == '\n' || *p == '\r')
                    *p = ' ';
        }
        st = v ? bl_meta_add(meta, name, v, err) : bl_fail(err, BL_ERR_NOMEM, "out of memory");
    }
    free(rows);
    for (size_t q = 0; c && q < m; q++)
        bl_column_clear(&c[q]);
    free(c);
    free(names);
    bl_table_close(t);
    return st;
}

static bl_status run(const bl_import_args *a, bl_connectome **out, char **report_out, bl_error *err)
{
    const char *ann = bl_import_arg(a, "--annotations"), *ntf = bl_import_arg(a, "--transmitters");
    const char *wts = bl_import_arg(a, "--weights"), *sel = bl_import_arg(a, "--select");
    if (sel && strcmp(sel, "superclass") && strcmp(sel, "all"))
        return bl_fail(err, BL_ERR_INVALID, "import malecns: --select must be superclass or all, not '%.60s'", sel);
    static const char *const ids_c[] = {"bodyId", "body", "body_id"};
    static const char *const sup_c[] = {"superclass", "super_class"};
    static const char *const nt_c[] = {"consensus_nt", "predicted_nt", "celltype_predicted_nt", "nt", "neurotransmitter"};
    static const char *const pre_c[] = {"body_pre", "bodyId_pre", "pre"};
    static const char *const post_c[] = {"body_post", "bodyId_post", "post"};
    static const char *const w_c[] = {"weight", "syn_count", "count"};
    const char *id_a, *id_t, *sup, *nt_col, *pre, *post, *w;
    bl_status st = column(ann, bl_import_arg(a, "--id"), ids_c, 3, "body id", &id_a, err);
    if (st == BL_OK)
        st = column(ntf, bl_import_arg(a, "--id"), ids_c, 3, "body id", &id_t, err);
    if (st == BL_OK)
        st = column(ann, bl_import_arg(a, "--superclass"), sup_c, 2, "superclass", &sup, err);
    if (st == BL_OK)
        st = column(ntf, bl_import_arg(a, "--nt"), nt_c, 5, "transmitter", &nt_col, err);
    if (st == BL_OK)
        st = column(wts, bl_import_arg(a, "--pre"), pre_c, 3, "presynaptic body", &pre, err);
    if (st == BL_OK)
        st = column(wts, bl_import_arg(a, "--post"), post_c, 3, "postsynaptic body", &post, err);
    if (st == BL_OK)
        st = column(wts, bl_import_arg(a, "--weight"), w_c, 3, "weight", &w, err);
    if (st != BL_OK)
        return st;

    bl_ids ids;
    bl_meta meta = {0};
    bl_report report = {0};
    bl_sign_policy *policy = NULL;
    char **nt = NULL;
    st = bl_ids_init(&ids, 1 << 18, err);
    if (st == BL_OK)
        st = bl_import_policy_arg(bl_import_arg(a, "--sign-policy"), bl_sign_policy_default_fly, &policy, err);
    if (st == BL_OK)
        bl_report_add(&report, "columns used: %s %s, %s; %s %s, %s; %s %s, %s, %s", bl_import_base_name(ann), id_a, sup,
                      bl_import_base_name(ntf), id_t, nt_col, bl_import_base_name(wts), pre, post, w);
    if (st == BL_OK)
        st = select_bodies(ann, id_a, sup, sel && !strcmp(sel, "all"), &ids, &meta, &report, err);
    /* The transmitter joins as a column of its own; its text is the sign key. */
    size_t before = meta.n_columns;
    const char *want[1] = {nt_col};
    if (st == BL_OK)
        st = bl_neuron_join(ntf, id_t, want, 1, &ids, &meta, &report, err);
    if (st == BL_OK && meta.n_columns != before + 1)
        st = bl_fail(err, BL_ERR_FORMAT, "%s: column %s cannot be read as text", ntf, nt_col);
    if (st == BL_OK)
        nt = meta.values[before];
    if (st == BL_OK) {
        const char *paths[3] = {ann, ntf, wts};
        const char *labels[3] = {bl_import_base_name(ann), bl_import_base_name(ntf), bl_import_base_name(wts)};
        const char *edge_paths[1] = {wts};
        char key[160];
        snprintf(key, sizeof key, "%s (%s)", nt_col, bl_import_base_name(ntf));
        bl_neuron_import p = {
            .neurons_path = ann, .id_col = id_a, .nt_col = nt_col,
            .edge_paths = edge_paths, .n_edge_paths = 1,
            .pre = pre, .post = post, .weight = w,
            .drop_unknown = 1, .min_synapses = 1, .policy = policy,
            .info = {
                .name = "malecns",
                .description = sel && !strcmp(sel, "all")
                                   ? "Drosophila melanogaster male central nervous system (flat connectome): every "
                                     "annotated body, ascending body id; edges between them; signs from the "
                                     "transmitters through the sign policy"
                                   : "Drosophila melanogaster male central nervous system (flat connectome): bodies with "
                                     "a superclass, ascending body id; edges between them; signs from the transmitters "
                                     "through the sign policy",
                .source = "male CNS flat connectome (Janelia FlyEM) Feather files",
                .citation = "the FlyEM male CNS connectome release (Janelia) and the paper its release page names",
                .licence = "that of the male CNS release (FlyEM); the files are not redistributed by BrainlessLab",
                .generator = "brainlesslab import malecns",
                .sign_key = key,
                .paths = paths, .labels = labels, .n_files = 3,
            },
        };
        st = bl_neuron_import_run(&p, &ids, &meta, nt, out, report_out, &report, err);
    }
    bl_neuron_import_release(NULL, &ids, &meta, &report, policy); /* nt is one of meta's columns */
    return st;
}

BL_IMPORTER_RUN(run)

const bl_importer bl_importer_malecns = {
    "malecns", "male CNS flat connectome (annotations, neurotransmitters, weights Feather files)", options, run_ledgered};
