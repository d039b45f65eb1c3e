/* The fetch table (include/brainlesslab/fetch.h): the public data sets the
 * importers read, each file with its published URL, size and checksum, and a
 * JSON form of the same table for mirrors and tests.
 *
 * Where the numbers come from (docs/data.md has the same table for people):
 * - flywire: Shiu et al. (2024) publish Completeness_783.csv and
 *   Connectivity_783.parquet in github.com/philshiu/Drosophila_brain_model;
 *   the URLs pin commit 91bdd1e7 (2024-09-14), whose tree gives each file's
 *   Git blob id. Completeness_783.csv's size and SHA-256 are those of that
 *   blob's bytes; for Connectivity_783.parquet the blob id is the published
 *   checksum and GitHub's 100 MiB limit on a plain blob bounds the size.
 *   The annotations (cell_type, side, hemilineage: what plans select by)
 *   are Schlegel et al.'s Supplemental_file1_neuron_annotations.tsv in
 *   github.com/flyconnectome/flywire_annotations, pinned at commit 27e06899
 *   (2024-10-03); its Git blob id is the checksum, 100 MiB the bound.
 * - malecns: the male CNS v1.0 flat connectome's Feather files on Google
 *   Cloud Storage (male-cns.janelia.org/download). No checksum is published:
 *   the sizes are the ones measured by independent downloads, and the files
 *   are fetched only with --allow-unverified, their SHA-256 printed.
 * - flywire-codex and neuprint: Codex needs a FlyWire login and the hemibrain
 *   export is a tar archive of CSVs; their rows say what to do by hand. */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/fetch.h"
#include "core/file.h"
#include "core/json_check.h"

#define SHIU_BASE "https://raw.githubusercontent.com/philshiu/Drosophila_brain_model/91bdd1e7dcf193f3e7ca5a8933497fcef63b7960"
#define ANNOT_BASE "https://raw.githubusercontent.com/flyconnectome/flywire_annotations/27e0689933b2325b7227b913ac233af1873a1b44/supplemental_files"
#define MALECNS_BASE "https://storage.googleapis.com/flyem-male-cns/v1.0/connectome-data/flat-connectome"

static const bl_fetch_file flywire_files[] = {
    {"Completeness_783.csv", SHIU_BASE, 3327347, 0, BL_FETCH_SHA256,
     "bbb847a4cc2caaa7a16349722d220c087317b946d148d4d592d94d250617a311",
     "bytes of Git blob b5a26b82b69a3c2e7fd99cd6810c36fc8f0e492b at philshiu/Drosophila_brain_model@91bdd1e7"},
    {"Connectivity_783.parquet", SHIU_BASE, 0, 100u << 20, BL_FETCH_GIT_BLOB_SHA1,
     "d386555d1a5f40ebfa1380bcb05b1fab044855fd",
     "Git blob id at philshiu/Drosophila_brain_model@91bdd1e7; size bounded by GitHub's 100 MiB blob limit"},
    {"Supplemental_file1_neuron_annotations.tsv", ANNOT_BASE, 0, 100u << 20, BL_FETCH_GIT_BLOB_SHA1,
     "1a3168731618ee62a47392252d3af7664e739e9e",
     "Git blob id at flyconnectome/flywire_annotations@27e06899 (v2.1.0 annotations, 783); size bounded by GitHub's "
     "100 MiB blob limit"},
};
static const bl_fetch_import_arg flywire_import[] = {
    {"--neurons", "Completeness_783.csv", NULL},
    {"--connectivity", "Connectivity_783.parquet", NULL},
    {"--annotations", "Supplemental_file1_neuron_annotations.tsv", NULL},
};

static const bl_fetch_file malecns_files[] = {
    {"body-annotations-male-cns-v1.0-minconf-0.5.feather", MALECNS_BASE, 14483314, 0, BL_FETCH_UNPUBLISHED, NULL,
     "size measured by independent downloads; no checksum published"},
    {"body-neurotransmitters-male-cns-v1.0.feather", MALECNS_BASE, 43282834, 0, BL_FETCH_UNPUBLISHED, NULL,
     "size measured by independent downloads; no checksum published"},
    {"connectome-weights-male-cns-v1.0-minconf-0.5.feather", MALECNS_BASE, 1051241946, 0, BL_FETCH_UNPUBLISHED, NULL,
     "size measured by independent downloads; no checksum published"},
};
static const bl_fetch_import_arg malecns_import[] = {
    {"--annotations", "body-annotations-male-cns-v1.0-minconf-0.5.feather", NULL},
    {"--transmitters", "body-neurotransmitters-male-cns-v1.0.feather", NULL},
    {"--weights", "connectome-weights-male-cns-v1.0-minconf-0.5.feather", NULL},
};

static const bl_fetch_set builtin[] = {
    {"flywire", "flywire",
     "FlyWire v783 as Shiu et al. (2024) use it (Completeness_783.csv, Connectivity_783.parquet), with Schlegel et "
     "al.'s annotations (cell_type, side, hemilineage, ...)",
     "the FlyWire data are CC BY-NC 4.0 (non-commercial use only; data/README.md); Drosophila_brain_model's code "
     "is MIT (Shiu & Spiller), flywire_annotations has no licence file. Cite Dorkenwald et al. (2024) and Schlegel "
     "et al. (2024), Nature, and Shiu et al. (2024), Nature, for the model's files",
     NULL, 3, flywire_files, 3, flywire_import},
    {"malecns", "malecns",
     "male CNS v1.0 flat connectome: body annotations, transmitters, weights (Feather; ~1.1 GB in all)",
     "CC BY 4.0 (Janelia FlyEM male CNS v1.0): cite the male CNS connectome paper (male-cns.janelia.org)",
     NULL, 3, malecns_files, 3, malecns_import},
    {"flywire-codex", "flywire-codex", "FlyWire Codex v783 CSV exports (neurons, classification, connections)",
     "CC BY-NC 4.0, FlyWire's terms (codex.flywire.ai): cite Dorkenwald et al. (2024) and Schlegel et al. (2024)",
     "Codex downloads need a FlyWire login, so they cannot be fetched here. Sign in at "
     "https://codex.flywire.ai/api/download, download neurons.csv.gz, classification.csv.gz and "
     "connections.csv.gz (release 783) into one folder, then run: brainlesslab import flywire-codex "
     "--neurons neurons.csv.gz --classification classification.csv.gz --connections connections.csv.gz --out DIR",
     0, NULL, 0, NULL},
    {"neuprint", "neuprint", "neuPrint CSV exports (hemibrain v1.2 traced adjacencies: 45,872,577 bytes, tar.gz)",
     "CC BY 4.0 (Janelia FlyEM hemibrain v1.2): cite Scheffer et al. (2020), eLife",
     "The hemibrain export is a tar archive of CSV files, which BrainlessLab does not unpack. Download "
     "https://storage.googleapis.com/hemibrain/v1.2/exported-traced-adjacencies-v1.2.tar.gz (45,872,577 bytes), "
     "unpack it (tar xzf), then run: brainlesslab import neuprint --neurons traced-neurons.csv "
     "--connections traced-total-connections.csv --out DIR",
     0, NULL, 0, NULL},
};

size_t bl_fetch_set_count(void) { return sizeof builtin / sizeof builtin[0]; }

const bl_fetch_set *bl_fetch_set_at(size_t i) { return i < bl_fetch_set_count() ? &builtin[i] : NULL; }

const bl_fetch_set *bl_fetch_set_find(const char *name)
{
    for (size_t i = 0; name && i < bl_fetch_set_count(); i++)
        if (!strcmp(builtin[i].name, name))
            return &builtin[i];
    return NULL;
}

/* ---- the JSON table ---- */

struct bl_fetch_table {
    size_t n;
    bl_fetch_set *sets;
    cJSON *doc; /* the strings point into it */
};

void bl_fetch_table_destroy(bl_fetch_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        free((void *)t->sets[i].files);
        free((void *)t->sets[i].import);
    }
    free(t->sets);
    cJSON_Delete(t->doc);
    free(t);
}

size_t bl_fetch_table_count(const bl_fetch_table *t) { return t ? t->n : 0; }

const bl_fetch_set *bl_fetch_table_at(const bl_fetch_table *t, size_t i)
{
    return t && i < t->n ? &t->sets[i] : NULL;
}

const bl_fetch_set *bl_fetch_table_find(const bl_fetch_table *t, const char *name)
{
    for (size_t i = 0; t && name && i < t->n; i++)
        if (!strcmp(t->sets[i].name, name))
            return &t->sets[i];
    return NULL;
}

static const char *str(const cJSON *o, const char *key, int required, const char *path, const char *where,
                       bl_status *st, bl_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsString(v) && v->valuestring[0])
        return v->valuestring;
    if (*st == BL_OK && (required || v))
        *st = bl_fail(err, BL_ERR_FORMAT, "%s: %s.%s must be a non-empty string", path, where, key);
    return NULL;
}

static uint64_t u64(const cJSON *o, const char *key, const char *path, const char *where, bl_status *st, bl_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return 0;
    /* 2^53: a double holds every integer below it exactly. */
    if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 9007199254740992.0 ||
        v->valuedouble != (double)(uint64_t)v->valuedouble) {
        if (*st == BL_OK)
            *st = bl_fail(err, BL_ERR_FORMAT, "%s: %s.%s must be a whole number of bytes >= 1", path, where, key);
        return 0;
    }
    return (uint64_t)v->valuedouble;
}

static int is_hex(const char *s, size_t len)
{
    if (strlen(s) != len)
        return 0;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return 0;
    return 1;
}

static bl_status read_file_row(const cJSON *jf, const char *path, const char *where, bl_fetch_file *f, bl_error *err)
{
    bl_status st = BL_OK;
    if (!cJSON_IsObject(jf))
        return bl_fail(err, BL_ERR_FORMAT, "%s: %s must be an object", path, where);
    f->name = str(jf, "name", 1, path, where, &st, err);
    f->base_url = str(jf, "url", 1, path, where, &st, err);
    f->size = u64(jf, "size", path, where, &st, err);
    f->max_size = u64(jf, "max_size", path, where, &st, err);
    f->source = str(jf, "source", 0, path, where, &st, err);
    if (st != BL_OK)
        return st;
    if (strchr(f->name, '/') || !strcmp(f->name, ".") || !strcmp(f->name, ".."))
        return bl_fail(err, BL_ERR_FORMAT, "%s: %s.name '%s' must be a plain file name", path, where, f->name);
    if (!f->size == !f->max_size)
        return bl_fail(err, BL_ERR_FORMAT, "%s: %s needs exactly one of size and max_size", path, where);
    static const struct { const char *key; bl_fetch_digest d; size_t len; } kinds[] = {
        {"sha256", BL_FETCH_SHA256, 64}, {"md5", BL_FETCH_MD5, 32}, {"git_blob_sha1", BL_FETCH_GIT_BLOB_SHA1, 40}};
    int found = 0;
    f->digest = BL_FETCH_UNPUBLISHED;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        const char *h = str(jf, kinds[k].key, 0, path, where, &st, err);
        if (st != BL_OK)
            return st;
        if (!h)
            continue;
        if (found++)
            return bl_fail(err, BL_ERR_FORMAT, "%s: %s gives more than one checksum", path, where);
        if (!is_hex(h, kinds[k].len))
            return bl_fail(err, BL_ERR_FORMAT, "%s: %s.%s must be %zu lower-case hex digits", path, where, kinds[k].key,
                           kinds[k].len);
        f->digest = kinds[k].d;
        f->hex = h;
    }
    return BL_OK;
}

static bl_status read_set(const cJSON *js, const char *path, size_t i, bl_fetch_set *s, bl_error *err)
{
    char where[64];
    snprintf(where, sizeof where, "sets[%zu]", i);
    if (!cJSON_IsObject(js))
        return bl_fail(err, BL_ERR_FORMAT, "%s: %s must be an object", path, where);
    bl_status st = BL_OK;
    s->name = str(js, "name", 1, path, where, &st, err);
    s->importer = str(js, "importer", 1, path, where, &st, err);
    s->summary = str(js, "summary", 0, path, where, &st, err);
    s->licence = str(js, "licence", 1, path, where, &st, err);
    s->manual = str(js, "manual", 0, path, where, &st, err);
    if (st != BL_OK)
        return st;
    if (!s->summary)
        s->summary = "";
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(js, "files");
    const cJSON *imp = cJSON_GetObjectItemCaseSensitive(js, "import");
    if (!s->manual && (!cJSON_IsArray(files) || !cJSON_GetArraySize(files)))
        return bl_fail(err, BL_ERR_FORMAT, "%s: %s.files must be a non-empty array", path, where);
    if (imp && !cJSON_IsArray(imp))
        return bl_fail(err, BL_ERR_FORMAT, "%s: %s.import must be an array of [option, file] pairs", path, where);
    size_t nf = files ? (size_t)cJSON_GetArraySize(files) : 0, ni = imp ? (size_t)cJSON_GetArraySize(imp) : 0;
    bl_fetch_file *fs = calloc(nf ? nf : 1, sizeof *fs);
    bl_fetch_import_arg *ia = calloc(ni ? ni : 1, sizeof *ia);
    s->files = fs;
    s->import = ia;
    if (!fs || !ia)
        return bl_fail(err, BL_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < nf && st == BL_OK; k++) {
        char w[96];
        snprintf(w, sizeof w, "%s.files[%zu]", where, k);
        st = read_file_row(cJSON_GetArrayItem(files, (int)k), path, w, &fs[k], err);
        for (size_t j = 0; st == BL_OK && j < k; j++)
            if (!strcmp(fs[j].name, fs[k].name))
                st = bl_fail(err, BL_ERR_FORMAT, "%s: %s names '%s' twice", path, where, fs[k].name);
    }
    s->n_files = nf;
    for (size_t k = 0; k < ni && st == BL_OK; k++) {
        const cJSON *pair = cJSON_GetArrayItem(imp, (int)k);
        const cJSON *o = cJSON_GetArrayItem(pair, 0), *v = cJSON_GetArrayItem(pair, 1);
        if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2 || !cJSON_IsString(o) || !cJSON_IsString(v) ||
            strncmp(o->valuestring, "--", 2) != 0)
            return bl_fail(err, BL_ERR_FORMAT, "%s: %s.import[%zu] must be [\"--option\", \"file name\"]", path, where, k);
        ia[k].option = o->valuestring;
        int named = 0;
        for (size_t j = 0; j < nf; j++)
            named |= !strcmp(fs[j].name, v->valuestring);
        if (named)
            ia[k].file = v->valuestring;
        else
            ia[k].value = v->valuestring; /* a plain value ("all"), not one of the files */
    }
    s->n_import = ni;
    return st;
}

bl_status bl_fetch_table_load(const char *path, bl_fetch_table **out, bl_error *err)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    bl_status st = bl_read_small(path, 1u << 20, &text, &len, err);
    if (st != BL_OK)
        return st;
    bl_fetch_table *t = calloc(1, sizeof *t);
    if (!t) {
        free(text);
        return bl_fail(err, BL_ERR_NOMEM, "out of memory");
    }
    t->doc = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *sets = cJSON_GetObjectItemCaseSensitive(t->doc, "sets");
    const char *dup = t->doc ? bl_json_duplicate_key(t->doc) : NULL;
    if (!t->doc)
        st = bl_fail(err, BL_ERR_FORMAT, "%s: not JSON", path);
    else if (dup)
        st = bl_fail(err, BL_ERR_FORMAT, "%s: key '%s' appears twice in one object", path, dup);
    else if (!cJSON_IsArray(sets) || !cJSON_GetArraySize(sets))
        st = bl_fail(err, BL_ERR_FORMAT, "%s: \"sets\" must be a non-empty array", path);
    size_t n = st == BL_OK ? (size_t)cJSON_GetArraySize(sets) : 0;
    if (st == BL_OK && !(t->sets = calloc(n, sizeof *t->sets)))
        st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
    for (size_t i = 0; st == BL_OK && i < n; i++) {
        t->n = i + 1;
        st = read_set(cJSON_GetArrayItem(sets, (int)i), path, i, &t->sets[i], err);
        for (size_t j = 0; st == BL_OK && j < i; j++)
            if (!strcmp(t->sets[j].name, t->sets[i].name))
                st = bl_fail(err, BL_ERR_FORMAT, "%s: set '%s' appears twice", path, t->sets[i].name);
    }
    if (st != BL_OK) {
        bl_fetch_table_destroy(t);
        return st;
    }
    *out = t;
    return BL_OK;
}
