/* What each reservoir operation adds to a plan's targets:
 *
 *   profile    the targets as written
 *   sweep      the targets as written, or one base target times [axes]
 *              (name = [values], node parameters): one target per
 *              combination, id = the first 16 hex digits of SHA-256 of the
 *              node parameters as sorted compact JSON, label = the
 *              combination as Python writes a dict (the Python project's
 *              naming, so its expanded sweep plans keep their ids)
 *   ablate     at least one target without interventions (the baseline);
 *              every target a reservoir
 *   benchmark  the four-task battery: tracking, pong, cartpole_plank_easy and
 *              delayed_cue, each once
 *   calibrate  reference_null targets on the "calibration" seed bank
 *
 * and, unless the plan is diagnostic, the continuing tasks' minimum scored
 * ticks (horizon - warmup). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/hash.h"
#include "plan/plan_reservoir.h"

static bl_status nomem(const bl_pk_ctx *ctx)
{
    return bl_fail(ctx->err, BL_ERR_NOMEM, "%s: out of memory while expanding the plan", ctx->file);
}

/* Python's repr of a float: the shortest round-trip digits, fixed notation
 * for exponents -4..15 (with ".0" when integral), else d.ddde-XX. */
static void py_float(char *dst, size_t cap, double x)
{
    char buf[64];
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    char *e = strchr(buf, 'e');
    int exp10 = atoi(e + 1);
    if (exp10 < -4 || exp10 >= 16) {
        char mant[40];
        snprintf(mant, sizeof mant, "%.*s", (int)(e - buf), buf);
        /* strip trailing zeros of the mantissa ("1.0e" -> "1e") */
        size_t n = strlen(mant);
        if (strchr(mant, '.')) {
            while (n && mant[n - 1] == '0')
                mant[--n] = 0;
            if (n && mant[n - 1] == '.')
                mant[--n] = 0;
        }
        snprintf(dst, cap, "%se%c%02d", mant, exp10 < 0 ? '-' : '+', abs(exp10));
        return;
    }
    int decimals = prec - 1 - exp10;
    snprintf(dst, cap, "%.*f", decimals > 0 ? decimals : 0, x);
    if (!strchr(dst, '.'))
        strncat(dst, ".0", cap - strlen(dst) - 1);
}

/* One TOML scalar as Python would write it: json (true, "s") or repr (True, 's'). */
static int py_value(const bl_toml_node *v, int json, char *dst, size_t cap)
{
    int b;
    int64_t i;
    double x;
    const char *s;
    if (bl_toml_get_bool(v, &b))
        snprintf(dst, cap, "%s", json ? (b ? "true" : "false") : (b ? "True" : "False"));
    else if (bl_toml_type_of(v) == BL_TOML_INTEGER && bl_toml_get_int(v, &i))
        snprintf(dst, cap, "%" PRId64, i);
    else if (bl_toml_type_of(v) == BL_TOML_FLOAT && bl_toml_get_double(v, &x))
        py_float(dst, cap, x);
    else if (bl_toml_get_string(v, &s, NULL)) {
        if (strpbrk(s, "\"'\\") || strlen(s) + 3 > cap)
            return -1; /* keep the naming simple: plain strings only */
        snprintf(dst, cap, json ? "\"%s\"" : "'%s'", s);
    } else
        return -1;
    return 0;
}

static char *dup(const char *s) { return bl_pk_strdup(s ? s : ""); }

/* ---- Python's canonical JSON of written values (philox-host-v1 digests) ---- */

typedef struct pj {
    char *p;
    size_t n, cap;
    int bad;
} pj;

static void pj_put(pj *b, const char *s, size_t len)
{
    if (b->bad || b->n + len + 1 > b->cap) {
        b->bad = 1;
        return;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = 0;
}

static void pj_str(pj *b, const char *s, size_t len)
{
    pj_put(b, "\"", 1);
    for (size_t i = 0; i < len && !b->bad;) {
        const unsigned char c = (unsigned char)s[i];
        char e[16];
        if (c == '"' || c == '\\') {
            e[0] = '\\', e[1] = (char)c;
            pj_put(b, e, 2);
            i++;
            continue;
        }
        if (c >= 0x20 && c < 0x7f) {
            pj_put(b, (const char *)&s[i], 1);
            i++;
            continue;
        }
        /* ensure_ascii: control characters and every non-ASCII code point as \uXXXX
         * (above U+FFFF a surrogate pair); the short escapes Python uses first. */
        const char *shortcut = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : c == '\b' ? "\\b"
                               : c == '\f' ? "\\f" : NULL;
        if (shortcut) {
            pj_put(b, shortcut, 2);
            i++;
            continue;
        }
        uint32_t cp = c;
        size_t more = c < 0x80 ? 0 : c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
        if (c >= 0x80) {
            cp = c & (0x3f >> more);
            if (!more) { /* a continuation byte cannot lead */
                b->bad = 1;
                return;
            }
            for (size_t k = 1; k <= more; k++) {
                if (i + k >= len || (((unsigned char)s[i + k]) & 0xc0) != 0x80) {
                    b->bad = 1;
                    return;
                }
                cp = (cp << 6) | (((unsigned char)s[i + k]) & 0x3f);
            }
        }
        if (cp > 0xffff) {
            cp -= 0x10000;
            snprintf(e, sizeof e, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
        } else {
            snprintf(e, sizeof e, "\\u%04x", cp);
        }
        pj_put(b, e, strlen(e));
        i += 1 + more;
    }
    pj_put(b, "\"", 1);
}

typedef struct pj_entry {
    const char *name;
    size_t len;
    const bl_toml_node *value;
} pj_entry;

static int pj_by_name(const void *a, const void *b)
{
    const pj_entry *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->name, y->name, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static void pj_value(pj *b, const bl_toml_node *v, int depth)
{
    if (b->bad)
        return;
    if (depth > 32) {
        b->bad = 1;
        return;
    }
    char text[64];
    const char *s;
    size_t len;
    switch (bl_toml_type_of(v)) {
    case BL_TOML_TABLE: {
        const size_t n = bl_toml_table_size(v);
        pj_entry *e = calloc(n ? n : 1, sizeof *e);
        if (!e) {
            b->bad = 1;
            return;
        }
        for (size_t k = 0; k < n; k++) {
            e[k].name = bl_toml_table_key(v, k, &e[k].len);
            e[k].value = bl_toml_table_value(v, k);
        }
        qsort(e, n, sizeof *e, pj_by_name); /* sort_keys: UTF-8 byte order is code point order */
        pj_put(b, "{", 1);
        for (size_t k = 0; k < n; k++) {
            if (k)
                pj_put(b, ",", 1);
            pj_str(b, e[k].name, e[k].len);
            pj_put(b, ":", 1);
            pj_value(b, e[k].value, depth + 1);
        }
        pj_put(b, "}", 1);
        free(e);
        return;
    }
    case BL_TOML_ARRAY:
        pj_put(b, "[", 1);
        for (size_t k = 0; k < bl_toml_array_size(v); k++) {
            if (k)
                pj_put(b, ",", 1);
            pj_value(b, bl_toml_array_at(v, k), depth + 1);
        }
        pj_put(b, "]", 1);
        return;
    case BL_TOML_STRING:
        bl_toml_get_string(v, &s, &len);
        pj_str(b, s, len);
        return;
    case BL_TOML_INTEGER:
    case BL_TOML_FLOAT:
    case BL_TOML_BOOLEAN:
        if (py_value(v, 1, text, sizeof text)) {
            b->bad = 1;
            return;
        }
        pj_put(b, text, strlen(text));
        return;
    default: b->bad = 1; return; /* dates have no JSON form */
    }
}

char *bl_rp_py_json(const bl_toml_node *v, const char *absent)
{
    pj b = {malloc(65536), 0, 65536, 0};
    if (!b.p)
        return NULL;
    b.p[0] = 0;
    if (v)
        pj_value(&b, v, 0);
    else
        pj_put(&b, absent, strlen(absent));
    if (b.bad) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

char *bl_rp_py_string(const char *s)
{
    pj b = {malloc(4 * strlen(s) * 3 + 8), 0, 4 * strlen(s) * 3 + 8, 0};
    if (!b.p)
        return NULL;
    b.p[0] = 0;
    pj_str(&b, s, strlen(s));
    if (b.bad) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

static bl_status copy_target(const bl_pk_ctx *ctx, const bl_rp_target *src, bl_rp_target *dst)
{
    *dst = *src;
    dst->id = dup(src->id);
    dst->label = dup(src->label);
    dst->preset = dup(src->preset);
    dst->pairing_key = dup(src->pairing_key);
    dst->construction_key = dup(src->construction_key);
    dst->mechanism_key = dup(src->mechanism_key);
    dst->py_head = src->py_head ? dup(src->py_head) : NULL;
    dst->py_params = src->py_params ? dup(src->py_params) : NULL;
    dst->py_tail = src->py_tail ? dup(src->py_tail) : NULL;
    if (!dst->id || !dst->label || !dst->preset || !dst->pairing_key || !dst->construction_key || !dst->mechanism_key ||
        (src->py_head && !dst->py_head) || (src->py_params && !dst->py_params) || (src->py_tail && !dst->py_tail))
        return nomem(ctx);
    return BL_OK;
}

typedef struct entry {
    const char *name;
    const bl_toml_node *value;
} entry;

static int by_name(const void *a, const void *b) { return strcmp(((const entry *)a)->name, ((const entry *)b)->name); }

static bl_status expand_axes(const bl_pk_ctx *ctx, const bl_toml_node *root, const bl_toml_node *axes,
                             bl_res_plan *rp)
{
    if (rp->n_targets != 1)
        return bl_pk_fail(ctx, BL_ERR_INVALID, axes, "axes", "a sweep with [axes] needs exactly one base [[targets]] "
                          "(got %zu)", rp->n_targets);
    const size_t na = bl_toml_table_size(axes);
    if (na < 1 || na > 16)
        return bl_pk_fail(ctx, BL_ERR_INVALID, axes, "axes", "needs 1..16 parameter axes");
    size_t total = 1, sizes[16];
    const char *names[16];
    for (size_t a = 0; a < na; a++) {
        size_t len;
        names[a] = bl_toml_table_key(axes, a, &len);
        const bl_toml_node *v = bl_toml_table_value(axes, a);
        char key[BL_PK_PATH_MAX];
        bl_pk_join(key, sizeof key, "axes", names[a], len);
        sizes[a] = bl_toml_array_size(v);
        if (bl_toml_type_of(v) != BL_TOML_ARRAY || sizes[a] < 1)
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, key, "expected a non-empty array of values");
        total *= sizes[a];
        if (total * rp->blocks * rp->trials_per_block > BL_RP_MAX_TRIALS || total > BL_RP_MAX_TARGETS)
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, "axes", "more than %d targets or %d trials", BL_RP_MAX_TARGETS,
                              BL_RP_MAX_TRIALS);
    }
    /* The base's written parameters (they join every combination's id). */
    const bl_toml_node *tt = bl_toml_array_at(bl_toml_table_get(root, "targets"), 0);
    const bl_toml_node *comp = bl_toml_table_get(tt, "composition");
    const bl_toml_node *node = comp ? bl_toml_table_get(comp, "node") : NULL;
    const bl_toml_node *params = node ? bl_toml_table_get(node, "parameters") : NULL;
    const size_t nb = bl_toml_table_size(params);
    bl_rp_target *out = calloc(total, sizeof *out);
    entry *written = calloc(nb + na, sizeof *written);
    if (!out || !written) {
        free(out);
        free(written);
        return nomem(ctx);
    }
    bl_status st = BL_OK;
    size_t made = 0;
    for (size_t c = 0; !st && c < total; c++) {
        bl_rp_target *t = &out[c];
        if ((st = copy_target(ctx, &rp->targets[0], t)))
            break;
        made = c + 1;
        size_t nw = 0, rest = c, pick[16];
        for (size_t a = na; a-- > 0;) {
            pick[a] = rest % sizes[a];
            rest /= sizes[a];
        }
        for (size_t k = 0; k < nb; k++) {
            size_t len;
            written[nw].name = bl_toml_table_key(params, k, &len);
            written[nw++].value = bl_toml_table_value(params, k);
        }
        char label[1024] = "{";
        for (size_t a = 0; a < na; a++) {
            const bl_toml_node *v = bl_toml_array_at(bl_toml_table_value(axes, a), pick[a]);
            char text[128], key[BL_PK_PATH_MAX];
            bl_pk_join(key, sizeof key, "axes", names[a], strlen(names[a]));
            bl_error perr = {0};
            double x;
            int b;
            const char *s;
            bl_status pst = py_value(v, 0, text, sizeof text) ? BL_ERR_INVALID : BL_OK;
            if (!pst) {
                if (bl_toml_get_bool(v, &b))
                    pst = bl_res_params_set(&t->node, names[a], b, &perr);
                else if (bl_toml_get_string(v, &s, NULL))
                    pst = bl_res_params_set_string(&t->node, names[a], s, &perr);
                else if (bl_toml_get_double(v, &x))
                    pst = bl_res_params_set(&t->node, names[a], x, &perr);
            }
            if (!pst)
                pst = bl_res_params_validate(&t->node, &perr);
            if (pst) {
                st = bl_pk_fail(ctx, BL_ERR_INVALID, v, key, "%s", perr.message[0] ? perr.message : "a plain value");
                break;
            }
            size_t used = strlen(label);
            snprintf(label + used, sizeof label - used, "%s'%s': %s", a ? ", " : "", names[a], text);
            size_t m = 0; /* an axis replaces a written parameter of the same name */
            while (m < nw && strcmp(written[m].name, names[a]))
                m++;
            written[m].name = names[a];
            written[m].value = v;
            if (m == nw)
                nw++;
        }
        if (st)
            break;
        strncat(label, "}", sizeof label - strlen(label) - 1);
        qsort(written, nw, sizeof *written, by_name);
        char json[4096] = "{";
        for (size_t k = 0; k < nw; k++) {
            char text[128];
            if (py_value(written[k].value, 1, text, sizeof text)) {
                st = bl_pk_fail(ctx, BL_ERR_INVALID, written[k].value, "axes", "parameter %s: not a plain value",
                                written[k].name);
                break;
            }
            size_t used = strlen(json);
            snprintf(json + used, sizeof json - used, "%s\"%s\":%s", k ? "," : "", written[k].name, text);
        }
        strncat(json, "}", sizeof json - strlen(json) - 1);
        /* The combination's parameters are its composition's (the Python sweep's). */
        free(t->py_params);
        t->py_params = t->py_head ? bl_pk_strdup(json) : NULL;
        char hex[BL_SHA256_HEX_LEN + 1];
        bl_sha256_buffer(json, strlen(json), hex);
        free(t->id);
        free(t->label);
        hex[16] = '\0';
        t->id = bl_pk_strdup(hex);
        t->label = bl_pk_strdup(label);
        if (!t->id || !t->label) {
            st = nomem(ctx);
            break;
        }
        for (size_t m = 0; m < c; m++)
            if (!strcmp(out[m].id, t->id))
                st = bl_pk_fail(ctx, BL_ERR_INVALID, axes, "axes", "two combinations give the same target (%s)",
                                t->id);
    }
    free(written);
    if (st) {
        for (size_t k = 0; k < made; k++) {
            bl_rp_target *t = &out[k];
            free(t->id), free(t->label), free(t->preset), free(t->pairing_key), free(t->construction_key),
                free(t->mechanism_key), free(t->py_head), free(t->py_params), free(t->py_tail);
        }
        free(out);
        return st;
    }
    bl_rp_target *base = rp->targets;
    free(base->id), free(base->label), free(base->preset), free(base->pairing_key), free(base->construction_key),
        free(base->mechanism_key), free(base->py_head), free(base->py_params), free(base->py_tail);
    free(base);
    rp->targets = out;
    rp->n_targets = total;
    return BL_OK;
}

bl_status bl_rp_apply_operation(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_res_plan *rp)
{
    const bl_toml_node *axes = bl_toml_table_get(root, "axes");
    bl_status st;
    if (axes) {
        if (rp->operation != BL_OP_SWEEP)
            return bl_pk_fail(ctx, BL_ERR_INVALID, axes, "axes", "only a sweep has [axes]");
        if (bl_toml_type_of(axes) != BL_TOML_TABLE)
            return bl_pk_fail(ctx, BL_ERR_INVALID, axes, "axes", "expected a table of parameter = [values]");
        if ((st = expand_axes(ctx, root, axes, rp)))
            return st;
    }
    const bl_toml_node *list = bl_toml_table_get(root, "targets");
    int baseline = 0, seen[BL_TASK_COUNT] = {0};
    for (size_t i = 0; i < rp->n_targets; i++) {
        const bl_rp_target *t = &rp->targets[i];
        char where[BL_PK_PATH_MAX];
        bl_pk_index(where, sizeof where, "targets", i);
        if (!rp->diagnostic && t->horizon - t->warmup < t->def.minimum_scored)
            return bl_pk_fail(ctx, BL_ERR_INVALID, NULL, "evaluation.horizon", "%s requires %u scored ticks "
                              "(horizon - warmup = %u); a shorter run must be diagnostic = true",
                              bl_task_name(t->task.kind), t->def.minimum_scored, t->horizon - t->warmup);
        if (rp->probe) {
            const uint32_t want = rp->probe_fit + rp->probe_validation + rp->probe_evaluation;
            if (!t->def.probe || t->task.kind == BL_TASK_REVERSAL_ADAPTATION || t->controller != BL_CTRL_RESERVOIR)
                return bl_pk_fail(ctx, BL_ERR_INVALID, list, where, "the probe decodes a reservoir's activity on "
                                  "delayed_cue, recall_interference, delayed_xor, evidence_accumulation, "
                                  "context_integration or temporal_order");
            if (rp->trials_per_block != want || rp->scope != BL_SCOPE_BLOCK)
                return bl_pk_fail(ctx, BL_ERR_INVALID, NULL, "probe", "needs construction_scope = \"block\" and "
                                  "trials_per_block = fit + validation + evaluation trials (%u; the plan has %u)",
                                  want, rp->trials_per_block);
        }
        switch (rp->operation) {
        case BL_OP_ABLATE:
            if (t->controller != BL_CTRL_RESERVOIR)
                return bl_pk_fail(ctx, BL_ERR_INVALID, list, where, "an ablation's targets are reservoirs");
            baseline |= t->n_interventions == 0;
            break;
        case BL_OP_BENCHMARK:
            if (t->task.kind > BL_TASK_DELAYED_CUE || seen[t->task.kind]++)
                return bl_pk_fail(ctx, BL_ERR_INVALID, list, where, "a benchmark runs tracking, pong, "
                                  "cartpole_plank_easy and delayed_cue, each once (got %s%s)",
                                  bl_task_name(t->task.kind), seen[t->task.kind] > 1 ? " twice" : "");
            break;
        case BL_OP_CALIBRATE:
            if (t->controller != BL_CTRL_REFERENCE_NULL || strcmp(rp->partition, "calibration"))
                return bl_pk_fail(ctx, BL_ERR_INVALID, list, where, "calibration requires the reference_null "
                                  "controller and seed_partition = \"calibration\"");
            break;
        default: break;
        }
    }
    if (rp->operation == BL_OP_ABLATE && !baseline)
        return bl_pk_fail(ctx, BL_ERR_INVALID, list, "targets", "an ablation needs a baseline target without "
                          "interventions");
    if (rp->operation == BL_OP_BENCHMARK)
        for (int k = 0; k <= BL_TASK_DELAYED_CUE; k++)
            if (!seen[k])
                return bl_pk_fail(ctx, BL_ERR_INVALID, list, "targets", "a benchmark needs a %s target",
                                  bl_task_name((bl_task_kind)k));
    return BL_OK;
}
