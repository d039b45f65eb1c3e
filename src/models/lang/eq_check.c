/* Names and dimensions: every name of the text resolves to the model's own
 * variables, the parameter table, t/dt/xi/i/not_refractory, the synaptic
 * externals (w in on_pre, count and sign in weight) or a unit, in that
 * order; every operation is checked for dimensions (SI base exponents) and
 * every division by a constant divisor for a zero divisor. */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "models/lang/eq_impl.h"

static bl_status fail_node(const bl_eq_model *m, int32_t n, bl_error *err, bl_status st, const char *what)
{
    const eq_node *x = &m->nodes[n];
    return eq_fail_at(m, x->block, x->lo, x->hi, err, st, what);
}

static bl_status mismatch(const bl_eq_model *m, int32_t n, const char *verb, eq_dim a, eq_dim b, bl_error *err)
{
    char da[64], db[64], msg[200];
    eq_dim_name(a, da, sizeof da);
    eq_dim_name(b, db, sizeof db);
    snprintf(msg, sizeof msg, "dimension mismatch: cannot %s %s and %s in", verb, da, db);
    return fail_node(m, n, err, BL_ERR_INVALID, msg);
}

int eq_is_const(const bl_eq_model *m, int32_t n)
{
    if (n < 0)
        return 1;
    const eq_node *x = &m->nodes[n];
    if (x->kind == N_NUM)
        return 1;
    if (x->kind == N_SYM) {
        int k = m->syms[x->sym].kind;
        return k == S_CONST || k == S_UNIT || k == S_DT;
    }
    return eq_is_const(m, x->a) && eq_is_const(m, x->b) && eq_is_const(m, x->c);
}

static eq_op node_op(const eq_node *x);

bl_status eq_const_eval(const bl_eq_model *m, int32_t n, double *out, bl_error *err)
{
    const eq_node *x = &m->nodes[n];
    double a = 0, b = 0, c = 0;
    bl_status st;
    if (x->kind == N_NUM) {
        *out = x->num;
        return BL_OK;
    }
    if (x->kind == N_SYM) {
        const eq_sym *s = &m->syms[x->sym];
        if (s->kind == S_DT)
            *out = m->dt;
        else if (s->kind == S_CONST || s->kind == S_UNIT)
            *out = s->value;
        else
            return fail_node(m, n, err, BL_ERR_INTERNAL, "not a constant:");
        return BL_OK;
    }
    if ((x->a >= 0 && (st = eq_const_eval(m, x->a, &a, err))) || (x->b >= 0 && (st = eq_const_eval(m, x->b, &b, err))) ||
        (x->c >= 0 && (st = eq_const_eval(m, x->c, &c, err))))
        return st;
    *out = eq_apply(node_op(x), a, b, c);
    return BL_OK;
}

static eq_op node_op(const eq_node *x)
{
    static const eq_op fn_ops[F_NFN] = {O_EXP, O_LOG, O_SQRT, O_ABS, O_CLIP, O_SIN, O_COS, O_TANH, O_INT, O_FLOOR, O_CEIL};
    switch (x->kind) {
    case N_NEG: return O_NEG;
    case N_ADD: return O_ADD;
    case N_SUB: return O_SUB;
    case N_MUL: return O_MUL;
    case N_DIV: return O_DIV;
    case N_POW: return O_POW;
    case N_CALL: return fn_ops[x->fn];
    case N_LT: return O_LT;
    case N_GT: return O_GT;
    case N_LE: return O_LE;
    case N_GE: return O_GE;
    case N_EQ: return O_EQ;
    case N_NE: return O_NE;
    case N_AND: return O_AND;
    case N_OR: return O_OR;
    case N_NOT: return O_NOT;
    default: return O_SEL;
    }
}

eq_op eq_node_op(const eq_node *x) { return node_op(x); }

static void set_bit(uint64_t *r, int32_t slot) { r[slot / 64] |= (uint64_t)1 << (slot % 64); }

/* Kinds and state variables a tree reads, subexpressions included (their
 * sets are cached once checked, so shared subexpressions cost nothing). */
static void reads_of(const bl_eq_model *m, int32_t n, unsigned *kinds, uint64_t *vars)
{
    if (n < 0)
        return;
    const eq_node *x = &m->nodes[n];
    if (x->kind == N_SYM) {
        const eq_sym *s = &m->syms[x->sym];
        if (s->kind < 32)
            *kinds |= 1u << s->kind;
        if (s->kind == S_STATE || s->kind == S_PARAM_N)
            set_bit(vars, s->slot);
        if (s->kind == S_SUBEXPR) {
            *kinds |= s->kinds;
            for (unsigned k = 0; k < BL_EQ_MAX_VARS / 64; k++)
                vars[k] |= s->reads[k];
        }
        return;
    }
    reads_of(m, x->a, kinds, vars);
    reads_of(m, x->b, kinds, vars);
    reads_of(m, x->c, kinds, vars);
}

/* Does the tree read a symbol of a kind in mask, or the symbol sym (state
 * variables also through subexpressions)? Memoised per node, so trees that
 * share subtrees (the methods make such) cost their size, not their paths. */
static int reads_rec(const bl_eq_model *m, int32_t n, unsigned mask, int32_t sym, uint8_t *memo)
{
    if (n < 0)
        return 0;
    if (memo[n])
        return memo[n] - 1;
    const eq_node *x = &m->nodes[n];
    int r = 0;
    if (x->kind == N_SYM) {
        const eq_sym *s = &m->syms[x->sym];
        r = x->sym == sym || (s->kind < 32 && (mask >> s->kind) & 1);
        if (!r && s->kind == S_SUBEXPR) {
            r = (s->kinds & mask) != 0;
            if (!r && sym >= 0 && m->syms[sym].slot >= 0 &&
                (m->syms[sym].kind == S_STATE || m->syms[sym].kind == S_PARAM_N)) {
                int32_t slot = m->syms[sym].slot;
                r = (int)((s->reads[slot / 64] >> (slot % 64)) & 1);
            }
        }
    } else {
        r = reads_rec(m, x->a, mask, sym, memo) || reads_rec(m, x->b, mask, sym, memo) ||
            reads_rec(m, x->c, mask, sym, memo);
    }
    memo[n] = (uint8_t)(r + 1);
    return r;
}

int eq_reads(const bl_eq_model *m, int32_t n, unsigned mask, int32_t sym)
{
    if (n < 0)
        return 0;
    uint8_t *memo = calloc((size_t)n + 1, 1);
    if (!memo)
        return 1; /* the cautious answer */
    int r = reads_rec(m, n, mask, sym, memo);
    free(memo);
    return r;
}

static bl_status check_sub(bl_eq_model *m, int32_t s, bl_error *err);

static int allowed_extern(const char *name, int block)
{
    if (!strcmp(name, "w"))
        return block == B_ON_PRE || block == B_ON_PRE_EXC || block == B_ON_PRE_INH || block >= B_ON_PRE_BY0;
    return block == B_WEIGHT; /* count, sign, weight */
}

bl_status eq_check(bl_eq_model *m, int32_t n, eq_type *out, bl_error *err)
{
    eq_node *x = &m->nodes[n];
    eq_type a = {{{0}}, 0}, b = {{{0}}, 0}, c = {{{0}}, 0};
    bl_status st;
    memset(out, 0, sizeof *out);
    switch (x->kind) {
    case N_NUM: return BL_OK;
    case N_SYM: {
        eq_sym *s = &m->syms[x->sym];
        switch (s->kind) {
        case EQ_SYM_UNKNOWN: {
            char msg[160];
            snprintf(msg, sizeof msg, "unknown variable '%s' (not in the equations, the parameters or the units) in",
                     s->name);
            return fail_node(m, n, err, BL_ERR_INVALID, msg);
        }
        case S_SUBEXPR:
            if ((st = check_sub(m, x->sym, err)))
                return st;
            out->dim = s->dim;
            return BL_OK;
        case S_NR: out->boolean = 1; return BL_OK;
        case S_EXTERN:
            if (!allowed_extern(s->name, x->block)) {
                char msg[160];
                snprintf(msg, sizeof msg, "'%s' is known only in %s:", s->name,
                         strcmp(s->name, "w") ? "weight" : "on_pre");
                return fail_node(m, n, err, BL_ERR_INVALID, msg);
            }
            out->dim = s->dim;
            return BL_OK;
        default: out->dim = s->dim; return BL_OK;
        }
    }
    default: break;
    }
    if ((x->a >= 0 && (st = eq_check(m, x->a, &a, err))) || (x->b >= 0 && (st = eq_check(m, x->b, &b, err))) ||
        (x->c >= 0 && (st = eq_check(m, x->c, &c, err))))
        return st;
    int want_bool = x->kind == N_AND || x->kind == N_OR || x->kind == N_NOT || x->kind == N_SEL;
    int int_of_bool = x->kind == N_CALL && x->fn == F_INT;
    if (!want_bool && !int_of_bool && (a.boolean || b.boolean || c.boolean))
        return fail_node(m, n, err, BL_ERR_INVALID, "a condition used as a number (write int(...)) in");
    switch (x->kind) {
    case N_NEG: out->dim = a.dim; return BL_OK;
    case N_ADD:
    case N_SUB:
        if (!eq_dim_eq(a.dim, b.dim))
            return mismatch(m, n, x->kind == N_ADD ? "add" : "subtract", a.dim, b.dim, err);
        out->dim = a.dim;
        return BL_OK;
    case N_MUL:
    case N_DIV:
        if (!eq_dim_mul(a.dim, b.dim, x->kind == N_MUL ? 1 : -1, &out->dim))
            return fail_node(m, n, err, BL_ERR_INVALID, "dimension exponents out of range in");
        if (x->kind == N_DIV && eq_is_const(m, x->b)) {
            double d;
            if ((st = eq_const_eval(m, x->b, &d, err)))
                return st;
            if (d == 0.0)
                return fail_node(m, n, err, BL_ERR_INVALID, "division by zero (the divisor's parameters make it 0) in");
        }
        return BL_OK;
    case N_POW:
        if (!eq_dim_is_one(b.dim))
            return mismatch(m, n, "raise to a power with", a.dim, b.dim, err);
        if (eq_dim_is_one(a.dim))
            return BL_OK;
        {
            double e;
            if (!eq_is_const(m, x->b))
                return fail_node(m, n, err, BL_ERR_INVALID, "a quantity with units raised to a variable power in");
            if ((st = eq_const_eval(m, x->b, &e, err)))
                return st;
            if (!(fabs(e) <= 50) || floor(e * 2) != e * 2 || !eq_dim_scale(a.dim, (int)(e * 2), 2, &out->dim))
                return fail_node(m, n, err, BL_ERR_INVALID, "a quantity with units raised to a power that is not a multiple of 1/2 in");
        }
        return BL_OK;
    case N_CALL:
        switch (x->fn) {
        case F_EXP: case F_LOG: case F_SIN: case F_COS: case F_TANH:
            if (!eq_dim_is_one(a.dim)) {
                char da[64], msg[160];
                eq_dim_name(a.dim, da, sizeof da);
                snprintf(msg, sizeof msg, "dimension mismatch: the argument has units %s, must be dimensionless, in", da);
                return fail_node(m, n, err, BL_ERR_INVALID, msg);
            }
            return BL_OK;
        case F_SQRT:
            if (!eq_dim_scale(a.dim, 1, 2, &out->dim))
                return fail_node(m, n, err, BL_ERR_INVALID, "square root of a quantity whose units have no square root in");
            return BL_OK;
        case F_CLIP:
            if (!eq_dim_eq(a.dim, b.dim) || !eq_dim_eq(a.dim, c.dim))
                return mismatch(m, n, "clip", a.dim, eq_dim_eq(a.dim, b.dim) ? c.dim : b.dim, err);
            out->dim = a.dim;
            return BL_OK;
        default: out->dim = a.dim; return BL_OK;
        }
    case N_LT: case N_GT: case N_LE: case N_GE: case N_EQ: case N_NE:
        if (!eq_dim_eq(a.dim, b.dim))
            return mismatch(m, n, "compare", a.dim, b.dim, err);
        out->boolean = 1;
        return BL_OK;
    case N_AND: case N_OR: case N_NOT:
        if (!a.boolean || (x->kind != N_NOT && !b.boolean))
            return fail_node(m, n, err, BL_ERR_INVALID, "'and', 'or' and 'not' need conditions in");
        out->boolean = 1;
        return BL_OK;
    case N_SEL:
        out->dim = b.dim;
        out->boolean = b.boolean;
        return BL_OK;
    default: return fail_node(m, n, err, BL_ERR_INTERNAL, "unknown node in");
    }
}

/* A subexpression: its value's dimension must be its declared unit; cycles
 * (a = b, b = a) are refused here, before anything inlines them. */
static bl_status check_sub(bl_eq_model *m, int32_t s, bl_error *err)
{
    eq_sym *y = &m->syms[s];
    if (y->checking == 2)
        return BL_OK;
    if (y->checking == 1)
        return eq_fail_at(m, B_EQUATIONS, y->lo, y->hi, err, BL_ERR_INVALID, "subexpressions that depend on themselves:");
    y->checking = 1;
    eq_type t;
    bl_status st = eq_check(m, y->expr, &t, err);
    y = &m->syms[s];
    if (st)
        return st;
    if (t.boolean || !eq_dim_eq(t.dim, y->dim)) {
        char da[64], db[64], msg[200];
        eq_dim_name(t.dim, da, sizeof da);
        eq_dim_name(y->dim, db, sizeof db);
        snprintf(msg, sizeof msg, "dimension mismatch: the right side is %s but %s is %s:", t.boolean ? "a condition" : da,
                 y->name, db);
        return eq_fail_at(m, B_EQUATIONS, y->lo, y->hi, err, BL_ERR_INVALID, msg);
    }
    unsigned kinds = 0;
    uint64_t vars[BL_EQ_MAX_VARS / 64] = {0};
    reads_of(m, y->expr, &kinds, vars);
    y->kinds = kinds;
    memcpy(y->reads, vars, sizeof vars);
    y->checking = 2;
    return BL_OK;
}

/* A unit specification after ':' ("volt", "1", "amp/metre**2"): its dimension. */
static bl_status unit_dim(bl_eq_model *m, int32_t n, eq_dim *out, bl_error *err)
{
    const eq_node *x = &m->nodes[n];
    memset(out, 0, sizeof *out);
    if (x->kind == N_NUM && x->num == 1.0)
        return BL_OK;
    if (x->kind == N_SYM) {
        double scale;
        if (eq_unit_lookup(m->syms[x->sym].name, &scale, out))
            return BL_OK;
        return fail_node(m, n, err, BL_ERR_INVALID, "unknown unit");
    }
    eq_dim a, b;
    bl_status st;
    if ((x->kind == N_MUL || x->kind == N_DIV) && !(st = unit_dim(m, x->a, &a, err)) && !(st = unit_dim(m, x->b, &b, err)) &&
        eq_dim_mul(a, b, x->kind == N_MUL ? 1 : -1, out))
        return BL_OK;
    if (x->kind == N_POW && !unit_dim(m, x->a, &a, err) && m->nodes[x->b].kind == N_NUM) {
        double e = m->nodes[x->b].num;
        if (fabs(e) <= 50 && floor(e * 2) == e * 2 && eq_dim_scale(a, (int)(e * 2), 2, out))
            return BL_OK;
    }
    if (x->kind == N_POW && m->nodes[x->b].kind == N_NEG && m->nodes[m->nodes[x->b].a].kind == N_NUM &&
        !unit_dim(m, x->a, &a, err)) {
        double e = -m->nodes[m->nodes[x->b].a].num;
        if (fabs(e) <= 50 && floor(e * 2) == e * 2 && eq_dim_scale(a, (int)(e * 2), 2, out))
            return BL_OK;
    }
    return fail_node(m, n, err, BL_ERR_INVALID, "not a unit:");
}

/* Are all subexpressions a tree reads already checked? */
static int subs_done(const bl_eq_model *m, int32_t n)
{
    if (n < 0)
        return 1;
    const eq_node *x = &m->nodes[n];
    if (x->kind == N_SYM)
        return m->syms[x->sym].kind != S_SUBEXPR || m->syms[x->sym].checking == 2;
    return subs_done(m, x->a) && subs_done(m, x->b) && subs_done(m, x->c);
}

/* Give every name still unknown after parsing its meaning; declare the
 * state arrays in equation order; check every equation. */
bl_status eq_resolve_equations(bl_eq_model *m, bl_error *err)
{
    bl_status st;
    for (uint32_t i = 0; i < m->n_syms; i++) {
        eq_sym *s = &m->syms[i];
        if (s->kind != EQ_SYM_UNKNOWN)
            continue;
        double scale;
        eq_dim d;
        memset(&d, 0, sizeof d);
        if (m->ode) {
            /* An ODE system knows t (dimensionless) and its own names only. */
            if (strcmp(s->name, "t"))
                continue;
            s->kind = S_T;
        } else if (!strcmp(s->name, "t") || !strcmp(s->name, "dt")) {
            s->kind = (uint8_t)(s->name[1] ? S_DT : S_T);
            d.e[2] = 2;
        } else if (!strcmp(s->name, "xi") || (!strncmp(s->name, "xi_", 3) && s->name[3])) {
            s->kind = S_XI;
            d.e[2] = -1;
        } else if (!strcmp(s->name, "i")) {
            s->kind = S_I;
        } else if (!strcmp(s->name, "not_refractory")) {
            s->kind = S_NR;
        } else if (!strcmp(s->name, "w") || !strcmp(s->name, "count") || !strcmp(s->name, "sign") ||
                   !strcmp(s->name, "weight")) {
            s->kind = S_EXTERN;
        } else if (eq_unit_lookup(s->name, &scale, &d)) {
            s->kind = S_UNIT;
            s->value = scale;
        } else {
            continue;
        }
        s->dim = d;
    }
    /* Declared units, then state slots in declaration order. */
    for (uint32_t i = 0; i < m->n_syms; i++) {
        eq_sym *s = &m->syms[i];
        if (s->kind != S_STATE && s->kind != S_PARAM_N && s->kind != S_SUBEXPR)
            continue;
        int32_t unit = s->slot;
        s->slot = -1;
        if (unit >= 0 && (st = unit_dim(m, unit, &m->syms[i].dim, err)))
            return st;
    }
    /* Slots follow the order of the lines. */
    for (;;) {
        int32_t best = -1;
        for (uint32_t i = 0; i < m->n_syms; i++) {
            eq_sym *s = &m->syms[i];
            if ((s->kind == S_STATE || s->kind == S_PARAM_N) && s->slot < 0 && (best < 0 || s->lo < m->syms[best].lo))
                best = (int32_t)i;
        }
        if (best < 0)
            break;
        /* The parser's count of lines cannot bound this (it runs before any
         * slot exists): the arrays by slot hold BL_EQ_MAX_VARS. */
        if (m->n_vars >= BL_EQ_MAX_VARS)
            return eq_fail_at(m, B_EQUATIONS, m->syms[best].lo, m->syms[best].hi, err, BL_ERR_INVALID,
                              "more than 256 state variables and per-neuron parameters, at");
        m->syms[best].slot = (int32_t)m->n_vars;
        m->var_sym[m->n_vars] = best;
        eq_dim_name(m->syms[best].dim, m->var_unit[m->n_vars], sizeof m->var_unit[0]);
        m->n_vars++;
    }
    /* xi draws are numbered in name order of first appearance. */
    uint8_t nxi = 0;
    for (uint32_t i = 0; i < m->n_syms; i++)
        if (m->syms[i].kind == S_XI)
            m->syms[i].xi_index = nxi++;
    /* Subexpressions in dependency order, so that checking one never recurses
     * into another (a chain of them cannot grow the stack); what is left when
     * no more progress is made depends on itself. */
    for (int progress = 1; progress;) {
        progress = 0;
        for (uint32_t i = 0; i < m->n_syms; i++)
            if (m->syms[i].kind == S_SUBEXPR && m->syms[i].checking == 0 && subs_done(m, m->syms[i].expr)) {
                if ((st = check_sub(m, (int32_t)i, err)))
                    return st;
                progress = 1;
            }
    }
    for (uint32_t i = 0; i < m->n_syms; i++) {
        eq_sym *s = &m->syms[i];
        if (s->kind == S_SUBEXPR) {
            if (s->checking != 2)
                return eq_fail_at(m, B_EQUATIONS, s->lo, s->hi, err, BL_ERR_INVALID,
                                  "subexpressions that depend on themselves:");
        } else if (s->kind == S_STATE) {
            eq_type t;
            if ((st = eq_check(m, s->expr, &t, err)))
                return st;
            s = &m->syms[i];
            eq_dim want;
            eq_dim sec = {{0, 0, 2, 0, 0, 0, 0}};
            if (m->ode)
                want = s->dim; /* an ODE system's time has no unit */
            else
                eq_dim_mul(s->dim, sec, -1, &want);
            if (t.boolean || !eq_dim_eq(t.dim, want)) {
                char da[64], db[64], msg[200];
                eq_dim_name(t.dim, da, sizeof da);
                eq_dim_name(want, db, sizeof db);
                snprintf(msg, sizeof msg, "dimension mismatch: the right side is %s but d%s/dt must be %s:",
                         t.boolean ? "a condition" : da, s->name, db);
                return eq_fail_at(m, B_EQUATIONS, s->lo, s->hi, err, BL_ERR_INVALID, msg);
            }
        }
    }
    return BL_OK;
}
