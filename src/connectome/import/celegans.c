/* Importer for the C. elegans hermaphrodite chemical network (Varshney et al.
 * 2011), signed by the transmitters of OpenWorm's CElegansNeuronTables.xls.
 *
 * Inputs (data/celegans-varshney2011/, see PROVENANCE.md there):
 *   varshney_chemical_edges.csv          pre,post,synapses_S_plus_Sp
 *   openworm_connectome_transmitters.csv origin,target,type,synapses,neurotransmitter
 *
 * Neurons are the names in the chemical edge list, sorted bytewise (279 in
 * the shipped data; VC6 has only a neuromuscular junction and is not in the
 * chemical network). Gap junctions are not imported: the LIF contract has
 * chemical synapses only. Cells of the OpenWorm table outside the network
 * (the pharyngeal neurons) are ignored. */
#include "brainlesslab/import.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/csv.h"
#include "connectome/import/import_common.h"
#include "core/file.h"

#define EDGES_FILE "varshney_chemical_edges.csv"
#define NT_FILE "openworm_connectome_transmitters.csv"

bl_status bl_sign_policy_default_celegans(bl_sign_policy **out, bl_error *err)
{
    /* docs/sign-policy.md gives the reasons. Every transmitter named in the
     * OpenWorm table is listed, and no default is declared, so a new or
     * misspelt transmitter is an error rather than a silent guess. The
     * monoamines and FMRFamide are modulatory (no fast sign): they get the
     * same +1 as neurons without a transmitter. "Octapamine" is the table's
     * spelling; the correct one is listed too. */
    static const bl_import_sign_rule rules[] = {
        {"acetylcholine", +1}, {"gaba", -1},       {"glutamate", +1},
        {"dopamine", +1},      {"serotonin", +1},  {"octopamine", +1},
        {"octapamine", +1},    {"tyramine", +1},   {"fmrfamide", +1},
    };
    return bl_import_policy_rules(0, rules, sizeof rules / sizeof rules[0], out, err);
}

static int ascii_casecmp_n(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (x >= 'A' && x <= 'Z')
            x = (unsigned char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = (unsigned char)(y - 'A' + 'a');
        if (x != y || !x)
            return x < y ? -1 : x > y;
    }
    return 0;
}

static int ascii_casecmp(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la != lb)
        return la < lb ? -1 : 1;
    return ascii_casecmp_n(a, b, la);
}

/* The key a transmitter name is signed by. A compound such as
 * "Serotonin_Acetylcholine" names a fast classical transmitter plus a
 * modulator; the fast one sets the sign of a point-neuron synapse, so when
 * exactly one '_'-separated part is acetylcholine, GABA or glutamate, that
 * part is the key (written into buf). Otherwise the whole name is. */
static const char *sign_key(const char *name, char *buf, size_t size)
{
    static const char *const fast[] = {"acetylcholine", "gaba", "glutamate"};
    if (!strchr(name, '_'))
        return name;
    const char *found = NULL;
    size_t found_len = 0;
    int hits = 0;
    const char *p = name;
    for (;;) {
        const char *end = strchr(p, '_');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        for (size_t k = 0; k < 3; k++) {
            if (len == strlen(fast[k]) && !ascii_casecmp_n(p, fast[k], len)) {
                found = p;
                found_len = len;
                hits++;
            }
        }
        if (!end)
            break;
        p = end + 1;
    }
    if (hits != 1 || found_len >= size)
        return name;
    memcpy(buf, found, found_len);
    buf[found_len] = '\0';
    return buf;
}

typedef struct raw_edge {
    char *pre, *post;
    int32_t count;
    uint64_t line;
} raw_edge;

typedef struct worm {
    const char *edges_path, *nt_path;
    raw_edge *raw;
    size_t n_raw;
    char **names; /* neurons, sorted; pointers into raw (not owned) */
    size_t n;
    char **transmitter; /* per neuron: owned copy, or NULL when no Send row */
    uint64_t *nt_line;
} worm;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int64_t neuron_of(const worm *W, const char *name)
{
    char *const *hit = bsearch(&name, W->names, W->n, sizeof *W->names, cmp_str);
    return hit ? hit - W->names : -1;
}

static bl_status read_edges(worm *W, bl_error *err)
{
    static const char *const cols[] = {"pre", "post", "synapses_S_plus_Sp"};
    size_t idx[3], nfields = 0, cap = 0;
    bl_csv *csv = NULL;
    bl_status st = bl_import_open_table(W->edges_path, cols, 3, idx, &nfields, &csv, err);
    if (st != BL_OK)
        return st;
    int r;
    while ((r = bl_csv_next(csv, err)) == 1) {
        int64_t v = 0;
        if ((st = bl_csv_expect_fields(csv, nfields, err)) != BL_OK ||
            (st = bl_import_field_name(csv, idx[0], "pre", err)) != BL_OK ||
            (st = bl_import_field_name(csv, idx[1], "post", err)) != BL_OK ||
            (st = bl_csv_field_i64(csv, idx[2], 1, INT32_MAX, &v, err)) != BL_OK)
            goto done;
        if (W->n_raw == cap) {
            size_t c = cap ? cap * 2 : 1024;
            raw_edge *g = c <= SIZE_MAX / sizeof *g ? realloc(W->raw, c * sizeof *g) : NULL;
            if (!g) {
                st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", W->edges_path);
                goto done;
            }
            W->raw = g;
            cap = c;
        }
        raw_edge *e = &W->raw[W->n_raw++];
        e->pre = bl_import_strdup(bl_csv_field(csv, idx[0]));
        e->post = bl_import_strdup(bl_csv_field(csv, idx[1]));
        e->count = (int32_t)v;
        e->line = bl_csv_line(csv);
        if (!e->pre || !e->post) {
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", W->edges_path);
            goto done;
        }
    }
    if (r < 0)
        st = err ? err->status : BL_ERR_FORMAT;
done:
    bl_csv_close(csv);
    return st;
}

static bl_status collect_neurons(worm *W, bl_error *err)
{
    if (W->n_raw > SIZE_MAX / 2 / sizeof(char *))
        return bl_fail(err, BL_ERR_NOMEM, "%s: too many edges", W->edges_path);
    size_t m = W->n_raw * 2;
    W->names = malloc((m ? m : 1) * sizeof *W->names);
    if (!W->names)
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", W->edges_path);
    for (size_t e = 0; e < W->n_raw; e++) {
        W->names[2 * e] = W->raw[e].pre;
        W->names[2 * e + 1] = W->raw[e].post;
    }
    qsort(W->names, m, sizeof *W->names, cmp_str);
    size_t n = 0;
    for (size_t i = 0; i < m; i++)
        if (n == 0 || strcmp(W->names[n - 1], W->names[i]))
            W->names[n++] = W->names[i];
    if (n > BL_MAX_NEURONS)
        return bl_fail(err, BL_ERR_INVALID, "%s: too many neurons", W->edges_path);
    W->n = n;
    W->transmitter = calloc(n ? n : 1, sizeof *W->transmitter);
    W->nt_line = calloc(n ? n : 1, sizeof *W->nt_line);
    if (!W->transmitter || !W->nt_line)
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", W->edges_path);
    return BL_OK;
}

static bl_status read_transmitters(worm *W, bl_error *err)
{
    static const char *const cols[] = {"origin", "target", "type", "synapses",
                                       "neurotransmitter"};
    size_t idx[5], nfields = 0;
    bl_csv *csv = NULL;
    bl_status st = bl_import_open_table(W->nt_path, cols, 5, idx, &nfields, &csv, err);
    if (st != BL_OK)
        return st;
    int r;
    while ((r = bl_csv_next(csv, err)) == 1) {
        int64_t v = 0;
        if ((st = bl_csv_expect_fields(csv, nfields, err)) != BL_OK ||
            (st = bl_import_field_name(csv, idx[0], "origin", err)) != BL_OK ||
            (st = bl_import_field_name(csv, idx[1], "target", err)) != BL_OK ||
            (st = bl_csv_field_i64(csv, idx[3], 1, INT32_MAX, &v, err)) != BL_OK ||
            (st = bl_import_field_text(csv, idx[4], "neurotransmitter", err)) != BL_OK)
            goto done;
        const char *type = bl_csv_field(csv, idx[2]);
        uint64_t line = bl_csv_line(csv);
        if (strcmp(type, "Send") && strcmp(type, "GapJunction")) {
            char shown[64];
            bl_import_printable(shown, sizeof shown, type);
            st = bl_fail(err, BL_ERR_FORMAT,
                         "%s:%llu, column type: '%s' is not Send or GapJunction", W->nt_path,
                         (unsigned long long)line, shown);
            goto done;
        }
        if (strcmp(type, "Send"))
            continue; /* gap junctions carry no transmitter ("Generic_GJ") */
        int64_t k = neuron_of(W, bl_csv_field(csv, idx[0]));
        if (k < 0)
            continue; /* a cell outside the chemical network (pharynx) */
        const char *nt = bl_csv_field(csv, idx[4]);
        if (W->transmitter[k]) {
            /* One transmitter per neuron: Dale's principle is what makes the
             * sign a property of the neuron. Disagreeing rows mean the table
             * is not what we think it is, so stop instead of choosing. */
            if (ascii_casecmp(W->transmitter[k], nt)) {
                char a[96], b[96];
                bl_import_printable(a, sizeof a, nt);
                bl_import_printable(b, sizeof b, W->transmitter[k]);
                st = bl_fail(err, BL_ERR_INVALID,
                             "%s:%llu, column neurotransmitter: neuron %s has '%s' here but "
                             "'%s' at line %llu",
                             W->nt_path, (unsigned long long)line, W->names[k], a, b,
                             (unsigned long long)W->nt_line[k]);
                goto done;
            }
            continue;
        }
        if (!(W->transmitter[k] = bl_import_strdup(nt))) {
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", W->nt_path);
            goto done;
        }
        W->nt_line[k] = line;
    }
    if (r < 0)
        st = err ? err->status : BL_ERR_FORMAT;
done:
    bl_csv_close(csv);
    return st;
}

static void free_worm(worm *W)
{
    for (size_t e = 0; e < W->n_raw; e++) {
        free(W->raw[e].pre);
        free(W->raw[e].post);
    }
    free(W->raw);
    free(W->names);
    if (W->transmitter)
        for (size_t i = 0; i < W->n; i++)
            free(W->transmitter[i]);
    free(W->transmitter);
    free(W->nt_line);
}

/* What the manifest says about this data set; paths: the two raw files. */
static bl_import_info describe(const char *const *paths)
{
    static const char *const labels[2] = {EDGES_FILE, NT_FILE};
    bl_import_info info = {
        .name = BL_IMPORT_CELEGANS_NAME,
        .description =
            "Caenorhabditis elegans hermaphrodite somatic chemical synapse network (Varshney "
            "et al. 2011; S and Sp rows summed per ordered pair; gap junctions not included), "
            "neurons sorted by name, signed by each presynaptic neuron's transmitter in "
            "OpenWorm's CElegansNeuronTables.xls",
        .source =
            "WormAtlas NeuronConnect (Varshney et al. 2011) as NeuronConnectFormatted.xlsx and "
            "CElegansNeuronTables.xls sheet Connectome, both from github.com/openworm/c302 at "
            "9cccbab97fbaa5e682e128b0e819a5fb6c129618; CSVs derived as data/" BL_IMPORT_CELEGANS_NAME
            "/PROVENANCE.md describes",
        .citation =
            "Varshney LR, Chen BL, Paniagua E, Hall DH, Chklovskii DB. Structural properties of "
            "the Caenorhabditis elegans neuronal network. PLoS Comput Biol 7(2):e1001066 (2011). "
            "doi:10.1371/journal.pcbi.1001066; White JG et al. Phil Trans R Soc Lond B "
            "314:1-340 (1986); transmitters: OpenWorm c302, Gleeson P et al. Phil Trans R Soc B "
            "373:20170379 (2018)",
        .licence =
            "CC BY (Varshney et al. 2011, PLoS Comput Biol) with attribution; transmitter table "
            "from OpenWorm c302 (MIT); see data/" BL_IMPORT_CELEGANS_NAME "/PROVENANCE.md",
        .generator = "brainlesslab import celegans",
        .sign_key = "transmitter",
        .paths = paths,
        .labels = labels,
        .n_files = 2,
    };
    return info;
}

static bl_status import_celegans(const char *data_dir, const bl_sign_policy *policy,
                                 bl_connectome **out, bl_error *err)
{
    *out = NULL;
    worm W;
    memset(&W, 0, sizeof W);
    bl_sign_policy *own_policy = NULL;
    char *edges_path = bl_import_path(data_dir, EDGES_FILE);
    char *nt_path = bl_import_path(data_dir, NT_FILE);
    bl_import_edge *edges = NULL;
    int8_t *signs = NULL;
    const char **nt_col = NULL, **sign_col = NULL;
    bl_connectome *c = NULL;
    bl_status st = BL_OK;
    size_t nn = 1;

    if (!edges_path || !nt_path) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", data_dir);
        goto done;
    }
    W.edges_path = edges_path;
    W.nt_path = nt_path;
    if (!policy) {
        if ((st = bl_sign_policy_default_celegans(&own_policy, err)) != BL_OK)
            goto done;
        policy = own_policy;
    }
    if ((st = read_edges(&W, err)) != BL_OK || (st = collect_neurons(&W, err)) != BL_OK ||
        (st = read_transmitters(&W, err)) != BL_OK)
        goto done;

    nn = W.n ? W.n : 1;
    signs = malloc(nn);
    nt_col = calloc(nn, sizeof *nt_col);
    sign_col = calloc(nn, sizeof *sign_col);
    edges = malloc((W.n_raw ? W.n_raw : 1) * sizeof *edges);
    if (!signs || !nt_col || !sign_col || !edges) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", data_dir);
        goto done;
    }
    for (size_t i = 0; i < W.n; i++) {
        const char *nt = W.transmitter[i] ? W.transmitter[i] : "";
        char where[512], buf[64];
        if (W.transmitter[i])
            snprintf(where, sizeof where, "%s:%llu, column neurotransmitter", W.nt_path,
                     (unsigned long long)W.nt_line[i]);
        else
            snprintf(where, sizeof where, "neuron %s (no Send row in %s)", W.names[i],
                     W.nt_path);
        int sign = 0;
        if ((st = bl_sign_policy_lookup(policy, sign_key(nt, buf, sizeof buf), where, &sign,
                                        err)) != BL_OK)
            goto done;
        signs[i] = (int8_t)sign;
        nt_col[i] = nt;
        sign_col[i] = sign > 0 ? "+1" : "-1";
    }
    for (size_t e = 0; e < W.n_raw; e++) {
        edges[e].pre = (int32_t)neuron_of(&W, W.raw[e].pre);
        edges[e].post = (int32_t)neuron_of(&W, W.raw[e].post);
        edges[e].count = W.raw[e].count;
        edges[e].line = W.raw[e].line;
    }
    static const char *const names[2] = {"transmitter", "sign"};
    const char **const columns[2] = {nt_col, sign_col};
    const char *const paths[2] = {W.edges_path, W.nt_path};
    bl_import_info info = describe(paths);
    st = bl_import_assemble(W.edges_path, edges, W.n_raw, W.n, signs, (const char *const *)W.names, 2, names, columns,
                            policy, &info, &c, err);

done:
    *out = st == BL_OK ? c : NULL;
    free(signs);
    free(nt_col);
    free(sign_col);
    free(edges);
    free_worm(&W);
    bl_sign_policy_destroy(own_policy);
    free(edges_path);
    free(nt_path);
    return st;
}

/* The public entry point: the input ledger is open while it reads, so the
 * manifest names the bytes parsed (import_common.h, bl_import_set_source). */
bl_status bl_import_celegans(const char *data_dir, const bl_sign_policy *policy, bl_connectome **out, bl_error *err)
{
    bl_inputs_begin();
    bl_status st = import_celegans(data_dir, policy, out, err);
    bl_inputs_end();
    return st;
}

/* ---- the importer table's row ---- */

static const bl_import_option celegans_options[] = {
    {"--data", "DIR", 0, "folder holding the set's CSV files (default data/" BL_IMPORT_CELEGANS_NAME ", relative to the current directory)"},
    {"--sign-policy", "FILE", 0, "CSV key,sign applied over the built-in policy (keys: transmitters; 'default' and 'unknown' set those signs; docs/sign-policy.md)"},
    {NULL, NULL, 0, NULL},
};

static bl_status run_celegans(const bl_import_args *args, bl_connectome **out, char **report, bl_error *err)
{
    (void)report;
    return bl_import_run_shipped(args, "data/" BL_IMPORT_CELEGANS_NAME, bl_sign_policy_default_celegans, bl_import_celegans, out, err);
}

BL_IMPORTER_RUN(run_celegans)

const bl_importer bl_importer_celegans = {"celegans", "C. elegans chemical network, Varshney et al. 2011 (shipped in data/)", celegans_options, run_celegans_ledgered};
