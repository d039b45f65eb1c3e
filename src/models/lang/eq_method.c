/* State updaters: each method turns the derivatives into statements over new
 * syntax-tree nodes, following Brian2 2.5.1's descriptions (explicit.py,
 * exponential_euler.py) in their order of statements:
 *   euler              x_new = x + dt*f(x,t) + g(x,t)*dW,   dW = sqrt(dt)*xi
 *   rk2                k = dt*f(x,t); x_new = x + dt*f(x + k/2, t + dt/2)
 *   rk4                k_1..k_4 at (x, t), (x + k_1/2, t + dt/2), (x + k_2/2, t + dt/2),
 *                      (x + k_3, t + dt); x_new = x + (k_1 + 2*k_2 + 2*k_3 + k_4)/6
 *   exponential_euler  f = A*x + B; _BA_x = B/A; x_new = (x + _BA_x)*exp(A*dt) - _BA_x
 * Every stage reads the old state of all variables; the new values are
 * committed together at the end. A variable flagged (unless refractory) has
 * derivative 0 while refractory and keeps its value (Brian2's
 * where(not_refractory, new, old)). euler, rk2, rk4 and exponential_euler
 * first try Brian2's generated order (eq_brian2.c); the trees built here, the
 * descriptions as written, are the fallback for models outside what that
 * emulation covers (docs/models.md says what the difference costs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/lang/eq_impl.h"

/* Replace symbols by nodes (map[sym] >= 0) throughout a tree; unchanged
 * subtrees are shared, and memo keeps shared subtrees shared. */
static int32_t subst_rec(bl_eq_model *m, int32_t n, const int32_t *map, int32_t *memo, uint32_t n_memo, bl_error *err)
{
    if (n < 0)
        return n;
    if ((uint32_t)n < n_memo && memo[n] != -2)
        return memo[n];
    eq_node x = m->nodes[n];
    int32_t r;
    if (x.kind == N_SYM) {
        r = map[x.sym] >= 0 ? map[x.sym] : n;
    } else if (x.kind == N_NUM) {
        r = n;
    } else {
        int32_t a = subst_rec(m, x.a, map, memo, n_memo, err);
        int32_t b = subst_rec(m, x.b, map, memo, n_memo, err);
        int32_t c = subst_rec(m, x.c, map, memo, n_memo, err);
        if ((x.a >= 0 && a < 0) || (x.b >= 0 && b < 0) || (x.c >= 0 && c < 0))
            return -1;
        if (a == x.a && b == x.b && c == x.c) {
            r = n;
        } else {
            r = eq_node_new(m, (eq_kind)x.kind, a, b, err);
            if (r < 0 || eq_node_set_c(m, r, c, err) < 0)
                return -1;
            m->nodes[r].fn = x.fn;
            m->nodes[r].num = x.num;
            m->nodes[r].block = x.block;
            m->nodes[r].lo = x.lo;
            m->nodes[r].hi = x.hi;
        }
    }
    if ((uint32_t)n < n_memo)
        memo[n] = r;
    return r;
}

int32_t eq_subst(bl_eq_model *m, int32_t n, const int32_t *map, bl_error *err)
{
    uint32_t n_memo = m->n_nodes;
    int32_t *memo = malloc((size_t)n_memo * sizeof *memo);
    if (!memo) {
        bl_fail(err, BL_ERR_NOMEM, "model: out of memory");
        return -1;
    }
    for (uint32_t k = 0; k < n_memo; k++)
        memo[k] = -2;
    int32_t r = subst_rec(m, n, map, memo, n_memo, err);
    free(memo);
    return r;
}

static void direct_subs(const bl_eq_model *m, int32_t n, int32_t *list, uint32_t *k, uint32_t cap)
{
    if (n < 0)
        return;
    const eq_node *x = &m->nodes[n];
    if (x->kind == N_SYM) {
        if (m->syms[x->sym].kind == S_SUBEXPR && *k < cap)
            list[(*k)++] = x->sym;
        return;
    }
    direct_subs(m, x->a, list, k, cap);
    direct_subs(m, x->b, list, k, cap);
    direct_subs(m, x->c, list, k, cap);
}

static bl_status expand_sym(bl_eq_model *m, int32_t s, unsigned depth, bl_error *err)
{
    if (m->syms[s].expanded >= 0)
        return BL_OK;
    if (depth > BL_EQ_MAX_VARS)
        return bl_fail(err, BL_ERR_INVALID, "equations: subexpressions nested deeper than %u", BL_EQ_MAX_VARS);
    int32_t subs[BL_EQ_MAX_VARS];
    uint32_t k = 0;
    direct_subs(m, m->syms[s].expr, subs, &k, BL_EQ_MAX_VARS);
    bl_status st;
    for (uint32_t j = 0; j < k; j++)
        if ((st = expand_sym(m, subs[j], depth + 1, err)))
            return st;
    int32_t *map = malloc(m->n_syms * sizeof *map);
    if (!map)
        return bl_fail(err, BL_ERR_NOMEM, "model: out of memory");
    for (uint32_t j = 0; j < m->n_syms; j++)
        map[j] = m->syms[j].kind == S_SUBEXPR ? m->syms[j].expanded : -1;
    int32_t e = eq_subst(m, m->syms[s].expr, map, err);
    free(map);
    if (e < 0)
        return err->status;
    m->syms[s].expanded = e;
    return BL_OK;
}

/* The tree with every subexpression inlined (Brian2 substitutes them before
 * integrating, so f(x + k/2) sees them at the shifted state too). */
int32_t eq_expand(bl_eq_model *m, int32_t n, bl_error *err)
{
    int32_t subs[BL_EQ_MAX_VARS];
    uint32_t k = 0;
    direct_subs(m, n, subs, &k, BL_EQ_MAX_VARS);
    for (uint32_t j = 0; j < k; j++)
        if (expand_sym(m, subs[j], 0, err))
            return -1;
    if (!k)
        return n;
    int32_t *map = malloc(m->n_syms * sizeof *map);
    if (!map) {
        bl_fail(err, BL_ERR_NOMEM, "model: out of memory");
        return -1;
    }
    for (uint32_t j = 0; j < m->n_syms; j++)
        map[j] = m->syms[j].kind == S_SUBEXPR ? m->syms[j].expanded : -1;
    int32_t e = eq_subst(m, n, map, err);
    free(map);
    return e;
}

int32_t eq_num(bl_eq_model *m, double v, bl_error *err)
{
    int32_t n = eq_node_new(m, N_NUM, -1, -1, err);
    if (n >= 0)
        m->nodes[n].num = v;
    return n;
}

int32_t eq_symref(bl_eq_model *m, int32_t sym, bl_error *err)
{
    int32_t n = eq_node_new(m, N_SYM, -1, -1, err);
    if (n >= 0)
        m->nodes[n].sym = sym;
    return n;
}

int32_t eq_bin(bl_eq_model *m, eq_kind k, int32_t a, int32_t b, bl_error *err)
{
    if (a < 0 || (b < 0 && k != N_NEG && k != N_NOT && k != N_CALL))
        return -1;
    return eq_node_new(m, k, a, b, err);
}

int32_t eq_call(bl_eq_model *m, eq_fn fn, int32_t a, bl_error *err)
{
    int32_t n = eq_bin(m, N_CALL, a, -1, err);
    if (n >= 0)
        m->nodes[n].fn = (uint8_t)fn;
    return n;
}

static int32_t sel(bl_eq_model *m, int32_t cond, int32_t a, int32_t b, bl_error *err)
{
    int32_t n = eq_bin(m, N_SEL, cond, a, err);
    if (b < 0)
        return -1;
    return eq_node_set_c(m, n, b, err);
}

static int32_t builtin(bl_eq_model *m, const char *name, eq_symkind kind, bl_error *err)
{
    int32_t s = eq_sym_find(m, name);
    if (s >= 0 && m->syms[s].kind == kind)
        return s;
    if (s >= 0)
        return -1;
    s = eq_sym_add(m, name, kind, err);
    if (s >= 0 && (kind == S_T || kind == S_DT))
        m->syms[s].dim.e[2] = 2;
    return s;
}

int32_t eq_temp(bl_eq_model *m, eq_update *u, const char *prefix, int32_t slot, int32_t expr, bl_error *err)
{
    if (expr < 0)
        return -1;
    if (u->n_tmp >= sizeof u->tmp_sym / sizeof u->tmp_sym[0]) {
        bl_fail(err, BL_ERR_INVALID, "equations: too many temporaries");
        return -1;
    }
    char name[BL_EQ_MAX_IDENT + 1];
    snprintf(name, sizeof name, "_%s_%.40s", prefix, m->syms[m->var_sym[slot]].name);
    int32_t s = eq_sym_add(m, name, S_TEMP, err);
    if (s < 0)
        return -1;
    m->syms[s].dim = m->syms[m->var_sym[slot]].dim;
    u->tmp_sym[u->n_tmp] = s;
    u->tmp_expr[u->n_tmp++] = expr;
    return eq_symref(m, s, err);
}

/* f = A*x + B with A and B free of x: the coefficient and the rest as trees
 * (-1 stands for 0), or 0 when f is not linear in x. */
int eq_linear_in(bl_eq_model *m, int32_t n, int32_t x, int32_t *A, int32_t *B, bl_error *err)
{
    const eq_node nd = m->nodes[n];
    *A = *B = -1;
    if (m->work == 0) {
        bl_fail(err, BL_ERR_INVALID, "equations: too large to split into linear parts");
        return 0;
    }
    m->work--;
    if (!eq_reads(m, n, 0, x)) {
        *B = n;
        return 1;
    }
    if (nd.kind == N_SYM) {
        *A = eq_num(m, 1.0, err);
        return *A >= 0;
    }
    int32_t aA, aB, bA, bB;
    switch (nd.kind) {
    case N_NEG:
        if (!eq_linear_in(m, nd.a, x, &aA, &aB, err))
            return 0;
        *A = aA >= 0 ? eq_bin(m, N_NEG, aA, -1, err) : -1;
        *B = aB >= 0 ? eq_bin(m, N_NEG, aB, -1, err) : -1;
        return 1;
    case N_ADD:
    case N_SUB:
        if (!eq_linear_in(m, nd.a, x, &aA, &aB, err) || !eq_linear_in(m, nd.b, x, &bA, &bB, err))
            return 0;
        for (int k = 0; k < 2; k++) {
            int32_t p = k ? aB : aA, q = k ? bB : bA, *o = k ? B : A;
            if (p >= 0 && q >= 0)
                *o = eq_bin(m, (eq_kind)nd.kind, p, q, err);
            else if (p >= 0)
                *o = p;
            else if (q >= 0)
                *o = nd.kind == N_ADD ? q : eq_bin(m, N_NEG, q, -1, err);
        }
        return 1;
    case N_MUL:
    case N_DIV:
        if (nd.kind == N_MUL && !eq_reads(m, nd.a, 0, x)) {
            if (!eq_linear_in(m, nd.b, x, &bA, &bB, err))
                return 0;
            *A = bA >= 0 ? eq_bin(m, N_MUL, nd.a, bA, err) : -1;
            *B = bB >= 0 ? eq_bin(m, N_MUL, nd.a, bB, err) : -1;
            return 1;
        }
        if (!eq_reads(m, nd.b, 0, x)) {
            if (!eq_linear_in(m, nd.a, x, &aA, &aB, err))
                return 0;
            *A = aA >= 0 ? eq_bin(m, (eq_kind)nd.kind, aA, nd.b, err) : -1;
            *B = aB >= 0 ? eq_bin(m, (eq_kind)nd.kind, aB, nd.b, err) : -1;
            return 1;
        }
        return 0;
    default: return 0;
    }
}

static int32_t state_node(bl_eq_model *m, uint32_t slot, bl_error *err) { return eq_symref(m, m->var_sym[slot], err); }

bl_status eq_method_apply(bl_eq_model *m, eq_update *u, bl_error *err)
{
    const char *meth = m->method;
    m->work = 1u << 20;
    if (!strcmp(meth, "linear") || !strcmp(meth, "exact"))
        return eq_linear_apply(m, u, err);
    /* heun: Brian2 2.5.1's stochastic Heun (stateupdaters/explicit.py):
     *   x_support = x + g(x,t)*dW; g_support = g(x_support, t+dt);
     *   x_new = x + dt*f(x,t) + .5*dW*(g(x,t) + g_support)
     * Without noise g is 0, the support statements are dead and x_new is
     * euler's x + dt*f(x,t), the same statement (Brian2 generates the same
     * update; oracle.test_eqlang_brian2 compares heun models with Brian2's
     * heun). With noise the statement differs from euler's in its operations
     * (0.5*xi*(g + g_support)): eq_brian2.c builds it, with the support
     * statements when g reads the state or t (multiplicative noise);
     * what it does not cover is refused below. */
    int heun = !strcmp(meth, "heun");
    int euler = !strcmp(meth, "euler") || heun, rk2 = !strcmp(meth, "rk2"), rk4 = !strcmp(meth, "rk4"),
        expo = !strcmp(meth, "exponential_euler");
    if (!euler && !rk2 && !rk4 && !expo)
        return bl_fail(err, BL_ERR_INVALID,
                       "method: '%s' is not one of linear, euler, heun, rk2, rk4, exponential_euler", meth);

    int32_t t_sym = builtin(m, "t", S_T, err), dt_sym = builtin(m, "dt", S_DT, err),
            nr_sym = builtin(m, "not_refractory", S_NR, err);
    if (t_sym < 0 || dt_sym < 0 || nr_sym < 0)
        return err->status ? err->status : bl_fail(err, BL_ERR_INVALID, "equations: t, dt or not_refractory is redefined");
    /* Brian2's own order where the emulation covers the model (eq_brian2.c). */
    if (euler || rk2 || rk4 || expo) {
        bl_status st = eq_brian2_apply(m, u, err);
        if (st != BL_ERR_UNSUPPORTED)
            return st;
    }
    /* heun with noise exists only in Brian2's order (eq_brian2.c: additive
     * or multiplicative noise from one source); the text-order fallback
     * below would run euler's noise statement under heun's name. */
    for (uint32_t j = 0; heun && j < m->n_syms; j++)
        if (m->syms[j].kind == S_XI)
            return bl_fail(err, BL_ERR_UNSUPPORTED,
                           "method heun: noise (%s) runs only where Brian2's generated order is followed (one "
                           "noise source, no clip or comparison in the equations); use euler", m->syms[j].name);
    /* f per state variable (slot), subexpressions inlined, 0 while refractory
     * when flagged; the noise coefficient g (euler only). */
    int32_t f[BL_EQ_MAX_VARS], g[BL_EQ_MAX_VARS], f_raw[BL_EQ_MAX_VARS];
    uint32_t nv = m->n_vars;
    for (uint32_t s = 0; s < nv; s++) {
        f[s] = g[s] = f_raw[s] = -1;
        u->new_expr[s] = -1;
        eq_sym *y = &m->syms[m->var_sym[s]];
        if (y->kind != S_STATE)
            continue;
        int32_t e = eq_expand(m, m->syms[m->var_sym[s]].expr, err);
        if (e < 0)
            return err->status;
        y = &m->syms[m->var_sym[s]];
        if (eq_reads(m, e, 1u << S_XI, -1)) {
            if (!euler)
                return eq_fail_at(m, B_EQUATIONS, y->lo, y->hi, err, BL_ERR_INVALID,
                                  "noise (xi) is integrated only by methods euler and heun:");
            int32_t xi = -1;
            for (uint32_t j = 0; j < m->n_syms && xi < 0; j++) {
                int32_t A, B;
                if (m->syms[j].kind != S_XI)
                    continue;
                if (!eq_linear_in(m, e, (int32_t)j, &A, &B, err))
                    return eq_fail_at(m, B_EQUATIONS, y->lo, y->hi, err, BL_ERR_INVALID,
                                      "noise must enter additively (f + g*xi):");
                if (A >= 0) {
                    xi = (int32_t)j;
                    if (eq_reads(m, A, 1u << S_XI, -1) || (B >= 0 && eq_reads(m, B, 1u << S_XI, -1)))
                        return eq_fail_at(m, B_EQUATIONS, y->lo, y->hi, err, BL_ERR_INVALID,
                                          "one noise term (xi) per equation:");
                    g[s] = eq_bin(m, N_MUL, A, eq_symref(m, (int32_t)j, err), err);
                    e = B >= 0 ? B : eq_num(m, 0.0, err);
                }
            }
            if (g[s] < 0 || e < 0)
                return err->status ? err->status : BL_ERR_INVALID;
        }
        y = &m->syms[m->var_sym[s]];
        f_raw[s] = e; /* exponential_euler splits this; the flag acts at the commit */
        if (y->unless_refractory && (e = sel(m, eq_symref(m, nr_sym, err), e, eq_num(m, 0.0, err), err)) < 0)
            return err->status;
        f[s] = e;
    }
    int32_t dt = eq_symref(m, dt_sym, err);
    if (dt < 0)
        return err->status;
    if (euler) {
        for (uint32_t s = 0; s < nv; s++) {
            if (f[s] < 0)
                continue;
            int32_t x = state_node(m, s, err);
            int32_t e = eq_bin(m, N_ADD, x, eq_bin(m, N_MUL, dt, f[s], err), err);
            if (g[s] >= 0) { /* + g*xi with xi = dt**0.5 * (normal draw), as Brian2 draws it */
                int32_t xi = m->nodes[m->nodes[g[s]].b].sym;
                int32_t *xmap = malloc(m->n_syms * sizeof *xmap);
                if (!xmap)
                    return bl_fail(err, BL_ERR_NOMEM, "model: out of memory");
                for (uint32_t q = 0; q < m->n_syms; q++)
                    xmap[q] = -1;
                xmap[xi] = eq_bin(m, N_MUL, eq_bin(m, N_POW, dt, eq_num(m, 0.5, err), err), eq_symref(m, xi, err), err);
                int32_t gx = xmap[xi] >= 0 ? eq_subst(m, g[s], xmap, err) : -1;
                free(xmap);
                e = eq_bin(m, N_ADD, e, gx, err);
            }
            if ((u->new_expr[s] = e) < 0)
                return err->status;
        }
    } else if (rk2 || rk4) {
        int32_t *map = malloc(m->n_syms * sizeof *map * 2);
        if (!map)
            return bl_fail(err, BL_ERR_NOMEM, "model: out of memory");
        int32_t k[4][BL_EQ_MAX_VARS];
        int stages = rk2 ? 1 : 4;
        /* Stage j evaluates f at x + c_j * k_{j-1}, t + h_j*dt. */
        for (int j = 0; j < stages; j++) {
            for (uint32_t q = 0; q < m->n_syms; q++)
                map[q] = -1;
            if (j > 0) {
                for (uint32_t s = 0; s < nv; s++)
                    if (f[s] >= 0) {
                        int32_t kp = k[j - 1][s];
                        int32_t shift = j == 3 ? kp : eq_bin(m, N_DIV, kp, eq_num(m, 2.0, err), err);
                        map[m->var_sym[s]] = eq_bin(m, N_ADD, state_node(m, s, err), shift, err);
                    }
                int32_t th = j == 3 ? dt : eq_bin(m, N_DIV, dt, eq_num(m, 2.0, err), err);
                map[t_sym] = eq_bin(m, N_ADD, eq_symref(m, t_sym, err), th, err);
            }
            for (uint32_t s = 0; s < nv; s++) {
                if (f[s] < 0)
                    continue;
                int32_t fj = j ? eq_subst(m, f[s], map, err) : f[s];
                char pre[8];
                snprintf(pre, sizeof pre, rk2 ? "k" : "k_%d", j + 1);
                if ((k[j][s] = eq_temp(m, u, pre, (int32_t)s, eq_bin(m, N_MUL, dt, fj, err), err)) < 0) {
                    free(map);
                    return err->status ? err->status : BL_ERR_INVALID;
                }
            }
        }
        for (uint32_t s = 0; s < nv; s++) {
            if (f[s] < 0)
                continue;
            int32_t x = state_node(m, s, err), e;
            if (rk2) {
                for (uint32_t q = 0; q < m->n_syms; q++)
                    map[q] = -1;
                for (uint32_t r = 0; r < nv; r++)
                    if (f[r] >= 0)
                        map[m->var_sym[r]] = eq_bin(m, N_ADD, state_node(m, r, err),
                                                    eq_bin(m, N_DIV, k[0][r], eq_num(m, 2.0, err), err), err);
                map[t_sym] = eq_bin(m, N_ADD, eq_symref(m, t_sym, err), eq_bin(m, N_DIV, dt, eq_num(m, 2.0, err), err), err);
                e = eq_bin(m, N_ADD, x, eq_bin(m, N_MUL, dt, eq_subst(m, f[s], map, err), err), err);
            } else {
                int32_t sum = eq_bin(m, N_ADD, k[0][s], eq_bin(m, N_MUL, eq_num(m, 2.0, err), k[1][s], err), err);
                sum = eq_bin(m, N_ADD, sum, eq_bin(m, N_MUL, eq_num(m, 2.0, err), k[2][s], err), err);
                sum = eq_bin(m, N_ADD, sum, k[3][s], err);
                e = eq_bin(m, N_ADD, x, eq_bin(m, N_DIV, sum, eq_num(m, 6.0, err), err), err);
            }
            if ((u->new_expr[s] = e) < 0) {
                free(map);
                return err->status ? err->status : BL_ERR_INVALID;
            }
        }
        free(map);
    } else { /* exponential_euler */
        for (uint32_t s = 0; s < nv; s++) {
            if (f[s] < 0)
                continue;
            int32_t A, B, x = state_node(m, s, err), e;
            if (!eq_linear_in(m, f_raw[s], m->var_sym[s], &A, &B, err)) {
                eq_sym *y = &m->syms[m->var_sym[s]];
                return eq_fail_at(m, B_EQUATIONS, y->lo, y->hi, err, BL_ERR_INVALID,
                                  "exponential_euler needs each equation linear in its own variable:");
            }
            if (A < 0) {
                e = eq_bin(m, N_ADD, x, eq_bin(m, N_MUL, dt, B, err), err);
            } else if (B >= 0) {
                int32_t ba = eq_temp(m, u, "BA", (int32_t)s, eq_bin(m, N_DIV, B, A, err), err);
                e = eq_bin(m, N_SUB, eq_bin(m, N_MUL, eq_bin(m, N_ADD, x, ba, err),
                                            eq_call(m, F_EXP, eq_bin(m, N_MUL, A, dt, err), err), err), ba, err);
            } else {
                e = eq_bin(m, N_MUL, x, eq_call(m, F_EXP, eq_bin(m, N_MUL, A, dt, err), err), err);
            }
            if (e < 0 || (e = eq_temp(m, u, "new", (int32_t)s, e, err)) < 0)
                return err->status ? err->status : BL_ERR_INVALID;
            u->new_expr[s] = e;
        }
    }
    /* Flagged variables keep their value while refractory. */
    for (uint32_t s = 0; s < nv; s++) {
        if (u->new_expr[s] < 0 || !m->syms[m->var_sym[s]].unless_refractory)
            continue;
        u->new_expr[s] = sel(m, eq_symref(m, nr_sym, err), u->new_expr[s], state_node(m, s, err), err);
        if (u->new_expr[s] < 0)
            return err->status;
    }
    return BL_OK;
}
