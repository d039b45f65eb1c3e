/* Selectors in plans: a TOML selector table translated to the library's
 * bl_selector (include/brainlesslab/select.h) and resolved there. Which
 * neurons a selector means, its canonical JSON (the plan hash) and its
 * messages are the library's; this file checks TOML types (with the TOML
 * value in the message, "got float 1.5") and turns the library's fault into
 * FILE:LINE:COL: KEY: message by finding the TOML node at fault.
 *
 *     [[stimulus]] / [[silence]]: exactly one of
 *         neurons = [3, 17]            ids = ["720575940", 720575941]
 *         select = { cell_type = "ORN", side = ["left", "right"] }
 *         population = "NAME"          a [[population]] table
 *     [[population]]: any of neurons, ids, select, from (+ depth), union,
 *         intersect, exclude, sample (plan_population.c)
 * Integer ids are read as their decimal text (FlyWire root ids and CATMAID
 * skeleton ids are numbers); a TOML integer keeps all 64 bits, which is why
 * the plan builds the struct instead of handing the library JSON. */
#include "plan/plan_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/select.h"

/* The selector and everything it points into. */
typedef struct tsel {
    bl_selector sel;
    const bl_plan *plan; /* names: the first `visible` [[population]] tables */
    size_t visible;
    void **owned;
    size_t n_owned, cap;
} tsel;

static void *own(tsel *t, void *p)
{
    if (!p)
        return NULL;
    if (t->n_owned == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        void **q = realloc(t->owned, cap * sizeof *q);
        if (!q) {
            free(p);
            return NULL;
        }
        t->owned = q;
        t->cap = cap;
    }
    return t->owned[t->n_owned++] = p;
}

static void tsel_free(tsel *t)
{
    for (size_t i = 0; i < t->n_owned; i++)
        free(t->owned[i]);
    free(t->owned);
}

static bl_status nomem(const bl_pk_ctx *ctx)
{
    return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate a selector");
}

/* ---- named populations ---- */

/* Population `name` (len bytes) among the first `visible` [[population]]
 * tables; the message (without a position) says why not. */
static bl_status named_lookup(const bl_plan *plan, const char *name, size_t len, size_t visible,
                              const bl_pk_population **out, bl_error *err)
{
    for (size_t i = 0; i < plan->n_named; i++)
        if (strlen(plan->named[i].name) == len && !memcmp(plan->named[i].name, name, len)) {
            if (i >= visible)
                return bl_fail(err, BL_ERR_INVALID,
                               "population \"%s\" is defined below this one (a population may only "
                               "refer to populations above it)", plan->named[i].name);
            *out = &plan->named[i];
            return BL_OK;
        }
    char shown[160], list[512] = "";
    size_t o = 0;
    for (size_t i = 0; i < plan->n_named && o < sizeof list; i++)
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", plan->named[i].name);
    bl_pk_printable(shown, sizeof shown, name, len);
    return bl_fail(err, BL_ERR_INVALID, "no [[population]] is named \"%s\" (%s%s)", shown,
                   plan->n_named ? "defined: " : "the plan defines none", list);
}

bl_status bl_pk_find_named(const bl_pk_ctx *ctx, const bl_plan *plan, const bl_toml_node *v,
                           const char *path, size_t visible, const bl_pk_population **out)
{
    const char *name;
    size_t len;
    if (!bl_toml_get_string(v, &name, &len)) {
        char got[160];
        bl_pk_describe(v, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "expected a population name (string), got %s", got);
    }
    bl_error why = {0};
    bl_status st = named_lookup(plan, name, len, visible, out, &why);
    return st ? bl_pk_fail(ctx, st, v, path, "%s", why.message) : BL_OK;
}

/* ---- TOML types ---- */

/* A string element, or an integer read as its decimal text (owned by t). */
static bl_status text_element(const bl_pk_ctx *ctx, tsel *t, const bl_toml_node *v, const char *path,
                              const char **out)
{
    int64_t x;
    size_t len;
    if (bl_toml_get_int(v, &x)) {
        char num[24];
        snprintf(num, sizeof num, "%" PRId64, x);
        char *copy = own(t, bl_pk_strdup(num));
        *out = copy;
        return copy ? BL_OK : nomem(ctx);
    }
    if (!bl_toml_get_string(v, out, &len)) {
        char got[160];
        bl_pk_describe(v, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "expected a string (or an integer id), got %s", got);
    }
    if (strlen(*out) != len)
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "string holds a NUL character");
    return BL_OK;
}

static bl_status non_empty_array(const bl_pk_ctx *ctx, const bl_toml_node *v, const char *path, const char *what)
{
    if (bl_toml_type_of(v) != BL_TOML_ARRAY) {
        char got[160];
        bl_pk_describe(v, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "expected an array of %s, got %s", what, got);
    }
    if (bl_toml_array_size(v) == 0)
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "empty selection (an empty array of %s)", what);
    return BL_OK;
}

static bl_status read_neurons(const bl_pk_ctx *ctx, tsel *t, const bl_toml_node *v, const char *path)
{
    bl_status st = non_empty_array(ctx, v, path, "neuron indices");
    if (st)
        return st;
    size_t n = bl_toml_array_size(v);
    int64_t *neurons = own(t, malloc(n * sizeof *neurons));
    if (!neurons)
        return bl_pk_fail(ctx, BL_ERR_NOMEM, v, path, "cannot allocate %zu neuron indices", n);
    for (size_t i = 0; i < n; i++) {
        const bl_toml_node *e = bl_toml_array_at(v, i);
        if (!bl_toml_get_int(e, &neurons[i])) {
            char epath[BL_PK_PATH_MAX], got[160];
            bl_pk_index(epath, sizeof epath, path, i);
            bl_pk_describe(e, got, sizeof got);
            return bl_pk_fail(ctx, BL_ERR_INVALID, e, epath, "expected a neuron index (integer), got %s", got);
        }
    }
    t->sel.neurons = neurons;
    t->sel.n_neurons = n;
    return BL_OK;
}

/* Values of one column (one, or a list), or the external ids. */
static bl_status read_texts(const bl_pk_ctx *ctx, tsel *t, const bl_toml_node *v, const char *path,
                            const char *const **out, size_t *count)
{
    int is_list = bl_toml_type_of(v) == BL_TOML_ARRAY;
    size_t n = is_list ? bl_toml_array_size(v) : 1;
    const char **texts = own(t, malloc((n ? n : 1) * sizeof *texts));
    if (!texts)
        return bl_pk_fail(ctx, BL_ERR_NOMEM, v, path, "cannot allocate %zu values", n);
    for (size_t j = 0; j < n; j++) {
        char epath[BL_PK_PATH_MAX];
        if (is_list)
            bl_pk_index(epath, sizeof epath, path, j);
        else
            snprintf(epath, sizeof epath, "%s", path);
        bl_status st = text_element(ctx, t, is_list ? bl_toml_array_at(v, j) : v, epath, &texts[j]);
        if (st)
            return st;
    }
    *out = texts;
    *count = n;
    return BL_OK;
}

static bl_status read_query(const bl_pk_ctx *ctx, tsel *t, const bl_toml_node *sel, const char *path)
{
    if (bl_toml_type_of(sel) != BL_TOML_TABLE) {
        char got[160];
        bl_pk_describe(sel, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, sel, path, "expected a table of metadata column = value(s), got %s",
                          got);
    }
    size_t nk = bl_toml_table_size(sel);
    bl_select_column *cols = own(t, calloc(nk ? nk : 1, sizeof *cols));
    if (!cols)
        return bl_pk_fail(ctx, BL_ERR_NOMEM, sel, path, "cannot allocate a query");
    for (size_t k = 0; k < nk; k++) {
        size_t klen;
        const char *key = bl_toml_table_key(sel, k, &klen);
        const bl_toml_node *v = bl_toml_table_value(sel, k);
        char kpath[BL_PK_PATH_MAX];
        bl_pk_join(kpath, sizeof kpath, path, key, klen);
        bl_select_column *c = &cols[k];
        /* A key holding a NUL names no column (the library says which exist). */
        c->column = strlen(key) == klen ? key : "";
        bl_status st = BL_OK;
        if (bl_toml_type_of(v) != BL_TOML_TABLE) {
            c->match = BL_SELECT_ANY;
            st = read_texts(ctx, t, v, kpath, &c->values, &c->n_values);
        } else if (bl_toml_table_get(v, "not")) {
            static const char *const keys[] = {"not", NULL};
            char npath[BL_PK_PATH_MAX];
            bl_pk_join(npath, sizeof npath, kpath, "not", 3);
            c->match = BL_SELECT_NOT;
            if (!(st = bl_pk_check_keys(ctx, v, kpath, keys)))
                st = read_texts(ctx, t, bl_toml_table_get(v, "not"), npath, &c->values, &c->n_values);
        } else {
            static const char *const keys[] = {"min", "max", NULL};
            c->match = BL_SELECT_RANGE;
            if (!(st = bl_pk_check_keys(ctx, v, kpath, keys)) &&
                !(st = bl_pk_double(ctx, v, kpath, "min", 0, &c->min, &c->has_min)))
                st = bl_pk_double(ctx, v, kpath, "max", 0, &c->max, &c->has_max);
        }
        if (st)
            return st;
    }
    t->sel.columns = cols;
    t->sel.n_columns = nk;
    return BL_OK;
}

/* A population name. One holding a NUL names no population: the plan's
 * lookup says so (the library would see the name cut at the NUL). */
static bl_status read_name(const bl_pk_ctx *ctx, const tsel *t, const bl_toml_node *v, const char *path,
                           const char **out)
{
    size_t len;
    if (bl_toml_get_string(v, out, &len) && strlen(*out) == len)
        return BL_OK;
    const bl_pk_population *p;
    bl_status st = bl_pk_find_named(ctx, t->plan, v, path, t->visible, &p);
    return st ? st : bl_pk_fail(ctx, BL_ERR_INTERNAL, v, path, "a name holding a NUL was found");
}

static bl_status read_names(const bl_pk_ctx *ctx, tsel *t, const bl_toml_node *v, const char *path,
                            bl_select_names *out)
{
    if (bl_toml_type_of(v) != BL_TOML_ARRAY || bl_toml_array_size(v) == 0) {
        char got[160];
        bl_pk_describe(v, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "expected a non-empty array of population names, got %s",
                          got);
    }
    size_t n = bl_toml_array_size(v);
    const char **names = own(t, malloc(n * sizeof *names));
    if (!names)
        return nomem(ctx);
    for (size_t i = 0; i < n; i++) {
        char epath[BL_PK_PATH_MAX];
        bl_pk_index(epath, sizeof epath, path, i);
        bl_status st = read_name(ctx, t, bl_toml_array_at(v, i), epath, &names[i]);
        if (st)
            return st;
    }
    out->names = names;
    out->n = n;
    return BL_OK;
}

/* depth = d or { min = a, max = b } (b optional: no upper bound). */
static bl_status read_depth(const bl_pk_ctx *ctx, const bl_toml_node *v, const char *path, bl_selector *sel)
{
    int64_t d;
    sel->has_depth = 1;
    sel->depth_min = 0;
    sel->depth_max = INT32_MAX;
    if (bl_toml_get_int(v, &d)) {
        if (d < 0 || d > INT32_MAX)
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "depth %" PRId64 " is out of range 0..%d", d, INT32_MAX);
        sel->depth_min = sel->depth_max = d;
        return BL_OK;
    }
    if (bl_toml_type_of(v) != BL_TOML_TABLE) {
        char got[160];
        bl_pk_describe(v, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "expected a depth (integer) or { min = a, max = b }, got %s",
                          got);
    }
    static const char *const keys[] = {"min", "max", NULL};
    bl_status st = bl_pk_check_keys(ctx, v, path, keys);
    if (st || (st = bl_pk_int(ctx, v, path, "min", 0, 0, INT32_MAX, &sel->depth_min, NULL)) ||
        (st = bl_pk_int(ctx, v, path, "max", 0, 0, INT32_MAX, &sel->depth_max, NULL)))
        return st;
    if (sel->depth_min > sel->depth_max)
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "min %" PRId64 " is above max %" PRId64, sel->depth_min,
                          sel->depth_max);
    return BL_OK;
}

/* Translate the selector keys of table `node` (its other keys are its reader's). */
static bl_status translate(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where, tsel *t)
{
    bl_selector *sel = &t->sel;
    char path[BL_PK_PATH_MAX];
    const bl_toml_node *v;
    bl_status st = BL_OK;
#define AT(key) (bl_pk_join(path, sizeof path, where, key, strlen(key)), bl_toml_table_get(node, key))
    if ((v = AT("neurons")) && (st = read_neurons(ctx, t, v, path)))
        return st;
    if ((v = AT("ids")) && ((st = non_empty_array(ctx, v, path, "external ids")) ||
                             (st = read_texts(ctx, t, v, path, &sel->ids, &sel->n_ids))))
        return st;
    if ((v = AT("select")) && (st = read_query(ctx, t, v, path)))
        return st;
    if ((v = AT("population")) && (st = read_name(ctx, t, v, path, &sel->population)))
        return st;
    if ((v = AT("from")) && (st = read_name(ctx, t, v, path, &sel->from)))
        return st;
    if ((v = AT("depth"))) {
        if (!sel->from)
            sel->has_depth = 1; /* the library refuses a depth without from */
        else if ((st = read_depth(ctx, v, path, sel)))
            return st;
    }
    if ((v = AT("union")) && (st = read_names(ctx, t, v, path, &sel->union_of)))
        return st;
    if ((v = AT("intersect")) && (st = read_names(ctx, t, v, path, &sel->intersect_of)))
        return st;
    if ((v = AT("exclude")) && (st = read_names(ctx, t, v, path, &sel->exclude)))
        return st;
#undef AT
    if (bl_toml_table_get(node, "sample")) {
        if ((st = bl_pk_int(ctx, node, where, "sample", 0, 1, INT32_MAX, &sel->sample, NULL)))
            return st;
        sel->has_sample = 1;
    }
    return BL_OK;
}

/* ---- the library's answer ---- */

/* The TOML node and key path of a library fault. */
static const bl_toml_node *fault_node(const bl_toml_node *node, const char *where, const bl_select_fault *f,
                                      char *path, size_t size)
{
    snprintf(path, size, "%s", where);
    if (!f->key)
        return node;
    const bl_toml_node *v = bl_toml_table_get(node, f->key);
    bl_pk_join(path, size, where, f->key, strlen(f->key));
    if (v && !strcmp(f->key, "select") && f->column >= 0 && (size_t)f->column < bl_toml_table_size(v)) {
        size_t klen;
        const char *key = bl_toml_table_key(v, (size_t)f->column, &klen);
        char parent[BL_PK_PATH_MAX];
        snprintf(parent, sizeof parent, "%s", path);
        bl_pk_join(path, size, parent, key, klen);
        v = bl_toml_table_value(v, (size_t)f->column);
        if (f->sub && bl_toml_table_get(v, f->sub)) {
            snprintf(parent, sizeof parent, "%s", path);
            bl_pk_join(path, size, parent, f->sub, strlen(f->sub));
            v = bl_toml_table_get(v, f->sub);
        }
    }
    if (v && f->index >= 0 && bl_toml_type_of(v) == BL_TOML_ARRAY && (size_t)f->index < bl_toml_array_size(v)) {
        char parent[BL_PK_PATH_MAX];
        snprintf(parent, sizeof parent, "%s", path);
        bl_pk_index(path, size, parent, (size_t)f->index);
        v = bl_toml_array_at(v, (size_t)f->index);
    }
    return v ? v : node;
}

typedef struct lookup_ctx {
    const bl_plan *plan;
    size_t visible;
} lookup_ctx;

static bl_status lookup(void *user, const char *name, bl_select_named *out, bl_error *err)
{
    const lookup_ctx *l = user;
    const bl_pk_population *p;
    bl_status st = named_lookup(l->plan, name, strlen(name), l->visible, &p, err);
    if (st)
        return st;
    *out = (bl_select_named){p->name, p->neurons, p->view.n_neurons};
    return BL_OK;
}

bl_status bl_pk_select(const bl_pk_ctx *ctx, const bl_plan *plan, const bl_toml_node *node, const char *where,
                       size_t self, int64_t expect_count, bl_pk_population *pop)
{
    tsel t = {{0}, plan, self, NULL, 0, 0};
    t.sel.expect_count = expect_count;
    bl_status st = translate(ctx, node, where, &t);
    lookup_ctx l = {plan, self};
    /* A [[population]]'s sample draws from stream = its ordinal (select.h). */
    bl_select_options opt = {pop->name, lookup, &l, plan->has_seed, plan->seed, (uint32_t)self,
                             "a sample is drawn from the plan seed, and the plan gives none ([run] seed)"};
    bl_selection *r = NULL;
    bl_select_fault f;
    bl_error why = {0};
    if (!st && (st = bl_select(plan->connectome, &t.sel, &opt, &r, &f, &why))) {
        if (st == BL_ERR_NOMEM && !f.message[0])
            st = bl_fail(ctx->err, st, "%s", why.message);
        else {
            char path[BL_PK_PATH_MAX];
            const bl_toml_node *at = fault_node(node, where, &f, path, sizeof path);
            st = bl_pk_fail(ctx, st, at, path, "%s", f.message);
        }
    }
    tsel_free(&t);
    if (st)
        return st;
    size_t n = bl_selection_size(r);
    pop->neurons = malloc(n * sizeof *pop->neurons);
    pop->selector = bl_pk_strdup(bl_selection_json(r));
    if (pop->neurons)
        memcpy(pop->neurons, bl_selection_neurons(r), n * sizeof *pop->neurons);
    bl_selection_destroy(r);
    if (!pop->neurons || !pop->selector)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot copy a selection of %zu neurons", n);
    pop->view.n_neurons = n;
    return BL_OK;
}

bl_status bl_pk_resolve_selector(const bl_pk_ctx *ctx, const bl_plan *plan, const bl_toml_node *node,
                                 const char *where, bl_pk_population *pop)
{
    static const char *const kinds[] = {"neurons", "ids", "select", "population"};
    const bl_toml_node *given = NULL;
    int kind = -1;
    for (int k = 0; k < 4; k++) {
        const bl_toml_node *v = bl_toml_table_get(node, kinds[k]);
        if (!v)
            continue;
        if (given) {
            char path[BL_PK_PATH_MAX];
            bl_pk_join(path, sizeof path, where, kinds[k], strlen(kinds[k]));
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, path,
                              "a population takes exactly one selector, and '%s' is given too "
                              "(choose neurons, ids, select or population)", kinds[kind]);
        }
        given = v;
        kind = k;
    }
    if (!given)
        return bl_pk_fail(ctx, BL_ERR_INVALID, node, where,
                          "no selector: give exactly one of neurons = [...], ids = [...], "
                          "select = { column = value } or population = \"NAME\"");
    /* Stimuli and silences see every [[population]]; their own keys beyond
     * the selector are checked by their readers, so only it is translated. */
    return bl_pk_select(ctx, plan, node, where, plan->n_named, -1, pop);
}
