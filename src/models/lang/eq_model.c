/* bl_eq_model_compile: the text of a model, in order: parameters (quantity
 * texts), equations, names and dimensions, starting values, the method's
 * update, threshold, reset, on_pre/on_post/on_input, refractory. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/eq_row.h"
#include "models/lang/eq_impl.h"

#define EQ_MAX_STMTS 256u

static bl_status set_text(bl_eq_model *m, int block, const char *text, const char *name, bl_error *err)
{
    free(m->owned[block]);
    m->owned[block] = NULL;
    m->texts[block].text = NULL;
    m->texts[block].len = 0;
    m->texts[block].name = name;
    if (!text)
        return BL_OK;
    size_t len = strnlen(text, (size_t)BL_EQ_MAX_TEXT + 1);
    if (len > BL_EQ_MAX_TEXT)
        return bl_fail(err, BL_ERR_INVALID, "%s: longer than %u bytes", name, BL_EQ_MAX_TEXT);
    m->owned[block] = malloc(len + 1);
    if (!m->owned[block])
        return bl_fail(err, BL_ERR_NOMEM, "model: out of memory");
    memcpy(m->owned[block], text, len);
    m->owned[block][len] = '\0';
    m->texts[block].text = m->owned[block];
    m->texts[block].len = len;
    return BL_OK;
}

static int valid_name(const char *s)
{
    size_t n = strlen(s);
    if (!n || n > BL_EQ_MAX_IDENT || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (size_t k = 1; k < n; k++)
        if (!(isalnum((unsigned char)s[k]) || s[k] == '_'))
            return 0;
    return 1;
}

/* Units (and parameters defined before) in a quantity text; nothing else. */
static bl_status resolve_quantity(bl_eq_model *m, int32_t n, bl_error *err)
{
    if (n < 0)
        return BL_OK;
    eq_node *x = &m->nodes[n];
    if (x->kind == N_SYM) {
        eq_sym *s = &m->syms[x->sym];
        double scale;
        eq_dim d;
        if (s->kind == S_CONST || s->kind == S_UNIT)
            return BL_OK;
        if (s->kind == EQ_SYM_UNKNOWN && eq_unit_lookup(s->name, &scale, &d)) {
            s->kind = S_UNIT;
            s->value = scale;
            s->dim = d;
            return BL_OK;
        }
        char msg[160];
        snprintf(msg, sizeof msg, "'%s' is neither a unit nor a parameter defined above, in", s->name);
        return eq_fail_at(m, x->block, x->lo, x->hi, err, BL_ERR_INVALID, msg);
    }
    bl_status st;
    int32_t a = x->a, b = x->b, c = x->c;
    if ((st = resolve_quantity(m, a, err)) || (st = resolve_quantity(m, b, err)) || (st = resolve_quantity(m, c, err)))
        return st;
    return BL_OK;
}

static bl_status quantity(bl_eq_model *m, int block, const char *text, double *value, eq_dim *dim, bl_error *err)
{
    int32_t n;
    eq_type t;
    bl_status st;
    if ((st = set_text(m, block, text, m->texts[block].name, err)) || (st = eq_parse_expr_block(m, block, &n, err)) ||
        (st = resolve_quantity(m, n, err)) || (st = eq_check(m, n, &t, err)))
        return st;
    if (t.boolean || !eq_is_const(m, n))
        return eq_fail_at(m, block, 0, 0, err, BL_ERR_INVALID, "not a quantity (a number with units)");
    *dim = t.dim;
    return eq_const_eval(m, n, value, err);
}

static bl_status check_stmts(bl_eq_model *m, int block, eq_stmt *s, uint32_t n, bl_error *err)
{
    bl_status st;
    for (uint32_t k = 0; k < n; k++) {
        eq_sym *y = &m->syms[s[k].sym];
        if (y->kind == EQ_SYM_UNKNOWN || (y->kind != S_STATE && y->kind != S_PARAM_N)) {
            char msg[200];
            snprintf(msg, sizeof msg,
                     y->kind == EQ_SYM_UNKNOWN ? "unknown variable '%s' (not in the equations) assigned in"
                                               : "'%s' is not a state variable or per-neuron parameter, cannot be assigned, in",
                     y->name);
            return eq_fail_at(m, block, s[k].lo, s[k].hi, err, BL_ERR_INVALID, msg);
        }
        eq_type t;
        if ((st = eq_check(m, s[k].expr, &t, err)))
            return st;
        y = &m->syms[s[k].sym];
        eq_dim want = y->dim;
        if (s[k].op == T_STAREQ || s[k].op == T_SLASHEQ)
            memset(&want, 0, sizeof want);
        if (t.boolean || !eq_dim_eq(t.dim, want)) {
            char da[64], db[64], msg[200];
            eq_dim_name(t.dim, da, sizeof da);
            eq_dim_name(want, db, sizeof db);
            snprintf(msg, sizeof msg, "dimension mismatch: the value is %s but must be %s in",
                     t.boolean ? "a condition" : da, db);
            return eq_fail_at(m, block, s[k].lo, s[k].hi, err, BL_ERR_INVALID, msg);
        }
    }
    return BL_OK;
}

static bl_status statements(bl_eq_model *m, int block, eq_prog *p, int *has, bl_error *err)
{
    if (!m->texts[block].text)
        return BL_OK;
    eq_stmt s[EQ_MAX_STMTS];
    uint32_t n;
    bl_status st;
    if ((st = eq_parse_stmts(m, block, s, EQ_MAX_STMTS, &n, err)) || (st = check_stmts(m, block, s, n, err)) ||
        (st = eq_lower_stmts(m, p, s, n, err)))
        return st;
    *has = 1;
    return BL_OK;
}

/* on_pre_by (docs/models.md "Synapses"): the column and one block per value,
 * each named "on_pre.VALUE" in messages. Exclusive of on_pre and of the
 * choice by sign: an edge runs one pathway. */
static bl_status on_pre_by(bl_eq_model *m, const bl_eq_source *src, bl_error *err)
{
    if (!src->on_pre_by) {
        if (src->n_on_pre_by)
            return bl_fail(err, BL_ERR_INVALID, "on_pre: a table of statements per value needs on_pre_by (the "
                           "neurons.csv column of the source whose value chooses them)");
        return BL_OK;
    }
    const char *col = src->on_pre_by;
    size_t cl = strnlen(col, sizeof m->by_column);
    if (!cl || cl >= sizeof m->by_column)
        return bl_fail(err, BL_ERR_INVALID, "on_pre_by: expected the name of a neurons.csv column (1 to %zu bytes)",
                       sizeof m->by_column - 1);
    if (src->on_pre || src->on_pre_exc || src->on_pre_inh)
        return bl_fail(err, BL_ERR_INVALID, "on_pre_by: give either on_pre_by with a table on_pre.VALUE = "
                       "\"statements\" or %s, not both", src->on_pre ? "on_pre as one block" : "on_pre_exc / on_pre_inh");
    if (!src->n_on_pre_by || !src->on_pre_by_values || !src->on_pre_by_texts)
        return bl_fail(err, BL_ERR_INVALID, "on_pre_by: '%.64s' chooses among no blocks: give on_pre.VALUE = "
                       "\"statements\" for the values of that column (a table [model.on_pre])", col);
    if (src->n_on_pre_by > EQ_MAX_BY)
        return bl_fail(err, BL_ERR_INVALID, "on_pre: %zu values; on_pre_by chooses among at most %d", src->n_on_pre_by,
                       EQ_MAX_BY);
    memcpy(m->by_column, col, cl + 1);
    for (size_t k = 0; k < src->n_on_pre_by; k++) {
        const char *v = src->on_pre_by_values[k];
        size_t vl = v ? strnlen(v, BL_EQ_MAX_IDENT + 1) : 0;
        int printable = vl > 0;
        for (size_t j = 0; j < vl && printable; j++)
            printable = isprint((unsigned char)v[j]);
        if (!printable || vl > BL_EQ_MAX_IDENT)
            return bl_fail(err, BL_ERR_INVALID, "on_pre: entry %zu: a value of column '%.64s' is 1 to %u printable "
                           "bytes", k, col, BL_EQ_MAX_IDENT);
        for (size_t j = 0; j < k; j++)
            if (!strcmp(m->by_value[j], v))
                return bl_fail(err, BL_ERR_INVALID, "on_pre.%s: given twice", v);
        memcpy(m->by_value[k], v, vl + 1);
        snprintf(m->by_name[k], sizeof m->by_name[k], "on_pre.%s", v);
        if (!src->on_pre_by_texts[k])
            return bl_fail(err, BL_ERR_INVALID, "on_pre.%s: no statements", v);
        bl_status st = set_text(m, B_ON_PRE_BY0 + (int)k, src->on_pre_by_texts[k], m->by_name[k], err);
        if (st)
            return st;
        m->n_by = (uint32_t)k + 1;
    }
    return BL_OK;
}

static bl_status compile(bl_eq_model *m, const bl_eq_source *src, bl_error *err)
{
    bl_status st;
    static const char *const names[B_NBLOCKS] = {"equations", "threshold", "reset", "refractory", "on_pre",
                                                 "on_post", "on_input", "weight", "parameter", "init", "model",
                                                 "on_pre_exc", "on_pre_inh"};
    for (int b = 0; b < B_NBLOCKS; b++)
        m->texts[b].name = b < B_ON_PRE_BY0 ? names[b] : "on_pre"; /* on_pre_by's: "on_pre.VALUE", set below */
    if (src->n_params > BL_EQ_MAX_PARAMS || src->n_init > BL_EQ_MAX_VARS)
        return bl_fail(err, BL_ERR_INVALID, "model: more than %u parameters", BL_EQ_MAX_PARAMS);
    /* Parameters first: the equations then find them as constants. */
    char pname[BL_EQ_MAX_IDENT + 32];
    for (size_t k = 0; k < src->n_params; k++) {
        const char *name = src->param_names[k], *val = src->param_values[k];
        if (!name || !val || !valid_name(name))
            return bl_fail(err, BL_ERR_INVALID, "parameters: '%.80s' is not a name (letters, digits, _)", name ? name : "");
        snprintf(pname, sizeof pname, "parameter %s", name);
        m->texts[B_PARAM].name = pname;
        double v;
        eq_dim d;
        if ((st = quantity(m, B_PARAM, val, &v, &d, err)))
            return st;
        int32_t s = eq_sym_find(m, name);
        if (s >= 0 && m->syms[s].kind != S_CONST && m->syms[s].kind != EQ_SYM_UNKNOWN && m->syms[s].kind != S_UNIT)
            return bl_fail(err, BL_ERR_INVALID, "parameters: '%s' is a built-in name", name);
        if (s < 0 && (s = eq_sym_add(m, name, S_CONST, err)) < 0)
            return err->status;
        m->syms[s].kind = S_CONST;
        m->syms[s].value = v;
        m->syms[s].dim = d;
    }
    m->texts[B_PARAM].name = "parameter";
    /* Units used by the parameter texts are names like any other in the equations. */
    for (uint32_t k = 0; k < m->n_syms; k++)
        if (m->syms[k].kind == S_UNIT)
            m->syms[k].kind = EQ_SYM_UNKNOWN;
    if (!src->equations)
        return bl_fail(err, BL_ERR_INVALID, "model: no equations");
    /* Per-edge variables (eq_syn.c) are declared after the neuron's own
     * equations, so they take the last var slots. */
    char *eqs = NULL;
    if (src->synapses) {
        size_t len = strnlen(src->equations, (size_t)BL_EQ_MAX_TEXT + 1), cap = EQ_SYN_TEXT_MAX;
        char *decl = malloc(cap);
        eqs = decl && len <= BL_EQ_MAX_TEXT ? malloc(len + cap + 2) : NULL;
        st = !eqs ? bl_fail(err, decl && len > BL_EQ_MAX_TEXT ? BL_ERR_INVALID : BL_ERR_NOMEM,
                            "model: equations too long or out of memory")
                  : eq_syn_parse(src->synapses, &m->syn, decl, cap, err);
        if (!st) {
            memcpy(eqs, src->equations, len);
            eqs[len] = '\n';
            memcpy(eqs + len + 1, decl, strlen(decl) + 1);
            m->has_syn = 1;
        }
        free(decl);
        if (st) {
            free(eqs);
            return st;
        }
    }
    st = set_text(m, B_EQUATIONS, eqs ? eqs : src->equations, "equations", err);
    free(eqs);
    if (st || (st = eq_parse_equations(m, err)))
        return st;
    if (src->on_pre && (src->on_pre_exc || src->on_pre_inh))
        return bl_fail(err, BL_ERR_INVALID, "on_pre: give either on_pre (every edge) or on_pre_exc / on_pre_inh "
                       "(chosen by the edge's sign), not both");
    if ((st = on_pre_by(m, src, err)))
        return st;
    static const struct {
        int block;
        size_t off;
    } blocks[] = {{B_THRESHOLD, offsetof(bl_eq_source, threshold)}, {B_RESET, offsetof(bl_eq_source, reset)},
                  {B_REFRACTORY, offsetof(bl_eq_source, refractory)}, {B_ON_PRE, offsetof(bl_eq_source, on_pre)},
                  {B_ON_POST, offsetof(bl_eq_source, on_post)}, {B_ON_INPUT, offsetof(bl_eq_source, on_input)},
                  {B_WEIGHT, offsetof(bl_eq_source, weight)}, {B_ON_PRE_EXC, offsetof(bl_eq_source, on_pre_exc)},
                  {B_ON_PRE_INH, offsetof(bl_eq_source, on_pre_inh)}};
    for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; k++) {
        const char *t = *(const char *const *)((const char *)src + blocks[k].off);
        if ((st = set_text(m, blocks[k].block, t, names[blocks[k].block], err)))
            return st;
    }
    /* Parse every block before resolving, so names they introduce (w, xi) resolve once. */
    int32_t thr = -1, refr = -1, wexpr = -1;
    if (m->texts[B_THRESHOLD].text && (st = eq_parse_expr_block(m, B_THRESHOLD, &thr, err)))
        return st;
    if (m->texts[B_REFRACTORY].text && (st = eq_parse_expr_block(m, B_REFRACTORY, &refr, err)))
        return st;
    if (m->texts[B_WEIGHT].text && (st = eq_parse_expr_block(m, B_WEIGHT, &wexpr, err)))
        return st;
    eq_stmt tmp[EQ_MAX_STMTS];
    uint32_t ntmp;
    for (int b = B_RESET; b < B_NBLOCKS; b++)
        if (b != B_REFRACTORY && b != B_WEIGHT && b != B_PARAM && b != B_INIT && b != B_GENERATED && m->texts[b].text &&
            (st = eq_parse_stmts(m, b, tmp, EQ_MAX_STMTS, &ntmp, err)))
            return st;
    if ((st = eq_resolve_equations(m, err)))
        return st;
    /* Per-neuron parameters given in the parameter table start there. */
    for (uint32_t s = 0; s < m->n_vars; s++) {
        eq_sym *y = &m->syms[m->var_sym[s]];
        m->var_init[s] = 0.0;
        if (y->has_value) {
            if (!eq_dim_eq(y->dim, y->value_dim)) {
                char da[64], db[64];
                eq_dim_name(y->value_dim, da, sizeof da);
                eq_dim_name(y->dim, db, sizeof db);
                return bl_fail(err, BL_ERR_INVALID, "parameters: dimension mismatch: %s is given in %s but declared %s",
                               y->name, da, db);
            }
            m->var_init[s] = y->value;
        }
    }
    for (size_t k = 0; k < src->n_init; k++) {
        const char *name = src->init_names[k];
        int32_t s = name ? eq_sym_find(m, name) : -1;
        if (s < 0 || (m->syms[s].kind != S_STATE && m->syms[s].kind != S_PARAM_N))
            return bl_fail(err, BL_ERR_INVALID, "init: '%.80s' is not a variable of the equations", name ? name : "");
        snprintf(pname, sizeof pname, "init %s", name);
        m->texts[B_INIT].name = pname;
        double v;
        eq_dim d;
        if ((st = quantity(m, B_INIT, src->init_values[k], &v, &d, err)))
            return st;
        if (!eq_dim_eq(d, m->syms[s].dim)) {
            char da[64], db[64];
            eq_dim_name(d, da, sizeof da);
            eq_dim_name(m->syms[s].dim, db, sizeof db);
            return bl_fail(err, BL_ERR_INVALID, "init: dimension mismatch: %s is given in %s but declared %s", name, da, db);
        }
        m->var_init[m->syms[s].slot] = v;
    }
    m->texts[B_INIT].name = "init";
    /* The update. */
    eq_update *u = calloc(1, sizeof *u);
    if (!u)
        return bl_fail(err, BL_ERR_NOMEM, "model: out of memory");
    st = eq_method_apply(m, u, err);
    if (!st)
        st = eq_lower_update(m, u, err);
    free(u);
    if (st)
        return st;
    /* Weight before on_pre: w takes its dimension. */
    if (wexpr >= 0) {
        eq_type t;
        if ((st = eq_check(m, wexpr, &t, err)))
            return st;
        if (t.boolean)
            return eq_fail_at(m, B_WEIGHT, 0, 0, err, BL_ERR_INVALID, "a condition, not a weight");
        int32_t w = eq_sym_find(m, "w");
        if (w >= 0 && m->syms[w].kind == S_EXTERN)
            m->syms[w].dim = t.dim;
        /* A per-edge w (synapses) starts at the weight: the same dimension. */
        if (w >= 0 && m->syms[w].kind == S_PARAM_N && !eq_dim_eq(m->syms[w].dim, t.dim)) {
            char da[64], db[64], msg[200];
            eq_dim_name(t.dim, da, sizeof da);
            eq_dim_name(m->syms[w].dim, db, sizeof db);
            snprintf(msg, sizeof msg, "dimension mismatch: the weight is %s but the per-edge w is declared %s in", da, db);
            return eq_fail_at(m, B_WEIGHT, 0, 0, err, BL_ERR_INVALID, msg);
        }
        if ((st = eq_lower_expr(m, &m->weight, wexpr, err)))
            return st;
        m->has_weight = 1;
    } else if (m->texts[B_ON_PRE].text || m->texts[B_ON_PRE_EXC].text || m->texts[B_ON_PRE_INH].text || m->n_by) {
        int32_t w = eq_sym_find(m, "w");
        if (w >= 0 && m->syms[w].kind == S_EXTERN)
            return bl_fail(err, BL_ERR_INVALID, "on_pre: reads w but the model gives no weight expression");
    }
    if (thr >= 0) {
        eq_type t;
        if ((st = eq_check(m, thr, &t, err)))
            return st;
        if (!t.boolean)
            return eq_fail_at(m, B_THRESHOLD, 0, 0, err, BL_ERR_INVALID, "the threshold is not a condition (v > v_th)");
        if ((st = eq_lower_expr(m, &m->threshold, thr, err)))
            return st;
        m->has_threshold = 1;
    }
    if ((st = statements(m, B_RESET, &m->reset, &m->has_reset, err)) ||
        (st = statements(m, B_ON_PRE, &m->on_pre, &m->has_on_pre, err)) ||
        (st = statements(m, B_ON_POST, &m->on_post, &m->has_on_post, err)) ||
        (st = statements(m, B_ON_INPUT, &m->on_input, &m->has_on_input, err)) ||
        (st = statements(m, B_ON_PRE_EXC, &m->on_pre_exc, &m->has_on_pre_exc, err)) ||
        (st = statements(m, B_ON_PRE_INH, &m->on_pre_inh, &m->has_on_pre_inh, err)))
        return st;
    for (uint32_t k = 0; k < m->n_by; k++) {
        int has = 0;
        if ((st = statements(m, B_ON_PRE_BY0 + (int)k, &m->by_prog[k], &has, err)))
            return st;
    }
    if (m->has_syn && (st = eq_syn_finish(m, err)))
        return st;
    m->ref_steps = -1;
    if (refr >= 0) {
        eq_type t;
        double r;
        if ((st = eq_check(m, refr, &t, err)))
            return st;
        if (t.boolean || !eq_is_const(m, refr) || t.dim.e[2] != 2 || t.dim.e[0] || t.dim.e[1] || t.dim.e[3])
            return eq_fail_at(m, B_REFRACTORY, 0, 0, err, BL_ERR_INVALID, "the refractory period must be a time (2 ms, t_rfc)");
        if ((st = eq_const_eval(m, refr, &r, err)))
            return st;
        /* Brian2's timestep(): (t + 1e-3*dt)/dt truncated to an integer. */
        double steps = (r + 1e-3 * m->dt) / m->dt;
        if (!(steps >= 0 && steps < 9e15))
            return eq_fail_at(m, B_REFRACTORY, 0, 0, err, BL_ERR_INVALID, "the refractory period is negative or too long");
        m->ref_steps = (int64_t)steps;
    }
    return BL_OK;
}

bl_status bl_eq_model_time(bl_eq_model *m, const char *what, const char *text, double *seconds, bl_error *err)
{
    double v = 0;
    eq_dim d = {{0}};
    const char *old = m->texts[B_PARAM].name;
    m->texts[B_PARAM].name = what;
    bl_status st = quantity(m, B_PARAM, text, &v, &d, err);
    if (!st && (d.e[2] != 2 || d.e[0] || d.e[1] || d.e[3] || d.e[4] || d.e[5] || d.e[6]))
        st = eq_fail_at(m, B_PARAM, 0, 0, err, BL_ERR_INVALID, "must be a time (1.8 ms, t_d)");
    m->texts[B_PARAM].name = old;
    if (!st)
        *seconds = v;
    return st;
}

bl_status bl_eq_model_var_quantity(bl_eq_model *m, const char *var, const char *what, const char *text, double *value,
                                   bl_error *err)
{
    int32_t y = eq_sym_find(m, var);
    if (y < 0 || m->syms[y].kind != S_PARAM_N)
        return bl_fail(err, BL_ERR_INVALID, "%s: the model declares no per-neuron parameter '%.64s' (a line "
                       "'%.64s : amp' in its equations)", what, var, var);
    eq_dim want = m->syms[y].dim, d = {{0}};
    double v = 0;
    const char *old = m->texts[B_PARAM].name;
    m->texts[B_PARAM].name = what;
    bl_status st = quantity(m, B_PARAM, text, &v, &d, err);
    if (!st && !eq_dim_eq(d, want)) {
        char got[64], need[64], msg[200];
        eq_dim_name(d, got, sizeof got);
        eq_dim_name(want, need, sizeof need);
        snprintf(msg, sizeof msg, "dimension mismatch: a value of %s for '%.64s', which is in %s", got, var, need);
        st = eq_fail_at(m, B_PARAM, 0, 0, err, BL_ERR_INVALID, msg);
    }
    m->texts[B_PARAM].name = old;
    if (!st)
        *value = v;
    return st;
}

bl_status bl_eq_model_compile(const bl_eq_source *src, double dt_s, bl_eq_model **out, bl_error *err)
{
    *out = NULL;
    if (!src)
        return bl_fail(err, BL_ERR_INVALID, "model: no source");
    if (!(dt_s > 0) || !isfinite(dt_s))
        return bl_fail(err, BL_ERR_INVALID, "model: dt must be a positive time");
    bl_eq_model *m = calloc(1, sizeof *m);
    if (!m)
        return bl_fail(err, BL_ERR_NOMEM, "model: out of memory");
    m->dt = dt_s;
    m->n_regs = EQ_TBASE;
    const char *meth = src->method ? src->method : "euler";
    if (strlen(meth) >= sizeof m->method) {
        bl_eq_model_destroy(m);
        return bl_fail(err, BL_ERR_INVALID, "method: '%.40s' is not one of linear, euler, heun, rk2, rk4, exponential_euler", meth);
    }
    snprintf(m->method, sizeof m->method, "%s", meth);
    bl_status st = compile(m, src, err);
    if (st) {
        bl_eq_model_destroy(m);
        return st;
    }
    eq_stiffness(m);
    *out = m;
    return BL_OK;
}

void bl_eq_model_destroy(bl_eq_model *m)
{
    if (!m)
        return;
    free(m->nodes);
    free(m->syms);
    for (int b = 0; b < B_NBLOCKS; b++)
        free(m->owned[b]);
    for (uint32_t k = 0; k < m->n_consts; k++)
        free(m->const_text[k]);
    eq_prog *ps[] = {&m->update,  &m->threshold, &m->reset,      &m->on_pre,    &m->on_post,
                     &m->on_input, &m->weight,    &m->on_pre_exc, &m->on_pre_inh};
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++)
        eq_prog_free(ps[k]);
    for (size_t k = 0; k < EQ_MAX_BY; k++)
        eq_prog_free(&m->by_prog[k]);
    free(m->by_class);
    eq_jit_free(m->jit);
    free(m->pn);
    free(m->pn_val);
    free(m);
}

size_t bl_eq_model_n_vars(const bl_eq_model *m) { return m->n_vars; }
const char *bl_eq_model_var_name(const bl_eq_model *m, size_t i) { return i < m->n_vars ? m->syms[m->var_sym[i]].name : NULL; }
const char *bl_eq_model_var_unit(const bl_eq_model *m, size_t i) { return i < m->n_vars ? m->var_unit[i] : NULL; }
double bl_eq_model_dt(const bl_eq_model *m) { return m->dt; }
int bl_eq_model_uses_noise(const bl_eq_model *m) { return m->uses_noise; }

int bl_eq_model_param(const bl_eq_model *m, const char *name, double *value)
{
    int32_t s = eq_sym_find(m, name);
    if (s >= 0 && m->syms[s].kind == S_CONST) {
        *value = m->syms[s].value;
        return 1;
    }
    for (uint32_t k = 0; k < m->n_consts; k++)
        if (m->const_text[k] && !strcmp(m->const_text[k], name)) {
            *value = m->consts[k];
            return 1;
        }
    return 0;
}

int bl_eq_model_update_const(const bl_eq_model *m, size_t n, const char **text, double *value)
{
    if (n >= (size_t)(m->update_consts_hi - m->update_consts_lo))
        return 0;
    *text = m->const_text[m->update_consts_lo + n];
    *value = m->consts[m->update_consts_lo + n];
    return 1;
}

/* ---- describe */

typedef struct sbuf {
    char *s;
    size_t len, cap;
    int bad;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->bad)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->bad = 1;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = 2 * b->cap + (size_t)n + 1;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->bad = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

static void reg_name(const bl_eq_model *m, uint32_t r, char *buf, size_t size)
{
    static const char *const fixed[R_NFIXED] = {"t", "i", "not_refractory", "w", "count", "sign", "weight"};
    if (r < R_NFIXED)
        snprintf(buf, size, "%s", fixed[r]);
    else if (r < EQ_CBASE)
        snprintf(buf, size, "%s", m->syms[m->var_sym[r - EQ_VBASE]].name);
    else if (r < EQ_TBASE)
        snprintf(buf, size, "c%u", r - EQ_CBASE);
    else
        snprintf(buf, size, "r%u", r - EQ_TBASE);
}

static void describe_prog(const bl_eq_model *m, sbuf *b, const char *title, const eq_prog *p, int has_result)
{
    sb_printf(b, "%s: %u instructions\n", title, p->n_code);
    char d[32], a[32], c[32], e[32];
    for (uint32_t k = 0; k < p->n_code; k++) {
        const eq_insn *i = &p->code[k];
        reg_name(m, i->dst, d, sizeof d);
        reg_name(m, i->a, a, sizeof a);
        reg_name(m, i->b, c, sizeof c);
        reg_name(m, i->c, e, sizeof e);
        if (i->op == O_XI)
            sb_printf(b, "  %-6s = xi[%u]\n", d, i->a);
        else if (i->op == O_MOV)
            sb_printf(b, "  %-6s = %s\n", d, a);
        else if (i->op == O_NEG || i->op == O_NOT || (i->op >= O_EXP && i->op <= O_CEIL))
            sb_printf(b, "  %-6s = %s %s\n", d, eq_op_name(i->op), a);
        else if (i->op == O_CLIP || i->op == O_SEL)
            sb_printf(b, "  %-6s = %s %s, %s, %s\n", d, eq_op_name(i->op), a, c, e);
        else
            sb_printf(b, "  %-6s = %s %s, %s\n", d, eq_op_name(i->op), a, c);
    }
    if (has_result) {
        reg_name(m, p->result, d, sizeof d);
        sb_printf(b, "  result %s\n", d);
    }
}

char *bl_eq_model_describe(const bl_eq_model *m)
{
    sbuf b = {malloc(1024), 0, 1024, 0};
    if (!b.s)
        return NULL;
    b.s[0] = '\0';
    sb_printf(&b, "method %s, dt %.17g s\nstate variables:", m->method, m->dt);
    for (uint32_t s = 0; s < m->n_vars; s++) {
        const eq_sym *y = &m->syms[m->var_sym[s]];
        sb_printf(&b, " %s [%s]%s%s", y->name, m->var_unit[s], y->kind == S_PARAM_N ? " (parameter)" : "",
                  y->unless_refractory ? " (unless refractory)" : "");
    }
    sb_printf(&b, "\norder: %s", m->order_brian2 ? "Brian2 2.5.1's code generation (SymPy's canonical form, then its collection)"
                                                : "the method's text");
    if (m->warnings[0])
        sb_printf(&b, "\nwarning: %s", m->warnings);
    sb_printf(&b, "\nrefractory: ");
    if (m->ref_steps >= 0)
        sb_printf(&b, "%lld steps\n", (long long)m->ref_steps);
    else
        sb_printf(&b, "none\n");
    sb_printf(&b, "constants:\n");
    for (uint32_t k = 0; k < m->n_consts; k++) {
        uint64_t bits;
        memcpy(&bits, &m->consts[k], sizeof bits);
        sb_printf(&b, "  c%-4u = %-24.17g (0x%016llx)  %s\n", k, m->consts[k], (unsigned long long)bits,
                  m->const_text[k] ? m->const_text[k] : "");
    }
    describe_prog(m, &b, "update", &m->update, 0);
    if (m->has_threshold)
        describe_prog(m, &b, "threshold", &m->threshold, 1);
    if (m->has_reset)
        describe_prog(m, &b, "reset", &m->reset, 0);
    if (m->has_on_pre)
        describe_prog(m, &b, "on_pre", &m->on_pre, 0);
    if (m->has_on_post)
        describe_prog(m, &b, "on_post", &m->on_post, 0);
    if (m->has_on_input)
        describe_prog(m, &b, "on_input", &m->on_input, 0);
    if (m->has_on_pre_exc)
        describe_prog(m, &b, "on_pre_exc", &m->on_pre_exc, 0);
    if (m->has_on_pre_inh)
        describe_prog(m, &b, "on_pre_inh", &m->on_pre_inh, 0);
    if (m->n_by)
        sb_printf(&b, "on_pre_by: neurons.csv column '%s' of the source (%u values; others deliver nothing)\n",
                  m->by_column, m->n_by);
    for (uint32_t k = 0; k < m->n_by; k++)
        describe_prog(m, &b, m->by_name[k], &m->by_prog[k], 0);
    if (m->has_syn) {
        sb_printf(&b, "per-edge variables:");
        for (uint32_t k = 0; k < m->syn.n; k++)
            sb_printf(&b, " %s", m->syms[m->var_sym[m->syn.first + k]].name);
        for (uint32_t k = 0; k < m->syn.n_ed; k++)
            sb_printf(&b, "\n  event-driven %s: x*exp(_lio*(-(t - lastupdate))), _lio = 1.0/%s = %.17g", m->syn.ed_var[k],
                      m->syn.ed_tau[k], m->syn.ed_lio[k]);
        sb_printf(&b, "\n");
    }
    if (m->has_weight)
        describe_prog(m, &b, "weight", &m->weight, 1);
    if (b.bad) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
