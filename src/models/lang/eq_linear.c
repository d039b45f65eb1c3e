/* Method 'linear' (Brian2's exact integration of a linear system): the
 * propagator written as the closed form Brian2 2.5.1's SymPy pipeline
 * prints, so that the constants come out with the same bits. Solved so far
 * (every variable's equation is (c0 - x + c1*y1 + c2*y2 + ...)/tau with c0,
 * the c's and tau free of the state, c0 and the inputs optional):
 *   x decays alone      x' = E*x                 or (c0 - c0*E) + E*x,  E = exp((-dt)/tau)
 *   v driven by y_j     y_j' = E_j*y_j, each y_j a pure decay (-y_j/tau_j):
 *                       v' = [(c0 - c0*E_v) +] (((L_1*y_1) + (L_2*y_2) ...) + (E_v*v))
 * with each L as Brian2 prints it, which depends on the (unless refractory)
 * flags (SymPy simplifies the two cases differently) and on SymPy's order
 * of the two time constants a, b (by name: a sorts first):
 *   flagged     ((( cT / (a - b)) * ((-exp(dt/a)) + exp(dt/b))) * E_a) * E_b
 *   not flagged (((( cT * ((-exp(dt/a)) + exp(dt/b))) * E_a) * E_b) / (a - b)
 * where cT is tau_j, or c_j*tau_j when y_j enters as c_j*y_j; the inputs'
 * terms sorted by their time constants' names (all from Brian2's generated
 * code: the shiu2024 form, and the CUBA form under several namings). With
 * one input whose time constants are not both named parameters, a is v's
 * (the shiu2024 form). Other linear systems are
 * refused with a message that names the equation (use exponential_euler). */
#include <stdio.h>
#include <string.h>

#include "models/lang/eq_impl.h"


#define MAX_INPUTS 8
typedef struct decay {
    int32_t tau, c0;
    int pn_tau;                            /* tau reads a per-neuron parameter */
    int pynn_curr;                         /* v of PyNN's IF_curr_exp (match_pynn_curr) */
    int ny;                                /* decaying inputs */
    int32_t y[MAX_INPUTS], c[MAX_INPUTS]; /* their state symbols; coefficients, -1 for 1 */
} decay;

static const unsigned varying = (1u << S_STATE) | (1u << S_PARAM_N) | (1u << S_T) | (1u << S_XI) | (1u << S_NR) |
                                (1u << S_I) | (1u << S_TEMP);

/* Signed terms of a sum. */
static int terms(const bl_eq_model *m, int32_t n, int sign, int32_t *node, int *sg, int *k, int cap)
{
    const eq_node *x = &m->nodes[n];
    if (x->kind == N_ADD || x->kind == N_SUB)
        return terms(m, x->a, sign, node, sg, k, cap) &&
               terms(m, x->b, x->kind == N_ADD ? sign : -sign, node, sg, k, cap);
    if (x->kind == N_NEG)
        return terms(m, x->a, -sign, node, sg, k, cap);
    if (*k == cap)
        return 0;
    node[*k] = n;
    sg[(*k)++] = sign;
    return 1;
}

static int is_state(const bl_eq_model *m, int32_t n)
{
    return m->nodes[n].kind == N_SYM && m->syms[m->nodes[n].sym].kind == S_STATE;
}

static int match(const bl_eq_model *m, int32_t f, int32_t self, decay *d)
{
    const eq_node *x = &m->nodes[f];
    d->tau = d->c0 = -1;
    d->ny = 0;
    d->pn_tau = 0;
    if (x->kind != N_DIV || eq_reads(m, x->b, varying & ~(1u << S_PARAM_N), -1))
        return 0;
    d->tau = x->b;
    /* a per-neuron time constant: only a pure decay x*exp((-dt)/tau), which
     * Brian2 prints the same way (checked after the terms) */
    d->pn_tau = eq_reads(m, x->b, 1u << S_PARAM_N, -1);
    int32_t node[16];
    int sg[16], k = 0, seen_self = 0;
    if (!terms(m, x->a, 1, node, sg, &k, 16))
        return 0;
    for (int j = 0; j < k; j++) {
        const eq_node *t = &m->nodes[node[j]];
        if (t->kind == N_SYM && t->sym == self) {
            if (sg[j] != -1 || seen_self++)
                return 0;
        } else if (is_state(m, node[j]) && sg[j] == 1 && d->ny < MAX_INPUTS) {
            d->c[d->ny] = -1;
            d->y[d->ny++] = t->sym;
        } else if (t->kind == N_MUL && sg[j] == 1 && d->ny < MAX_INPUTS &&
                   ((is_state(m, t->b) && !eq_reads(m, t->a, varying, -1)) ||
                    (is_state(m, t->a) && !eq_reads(m, t->b, varying, -1)))) {
            int yb = is_state(m, t->b);
            d->y[d->ny] = m->nodes[yb ? t->b : t->a].sym;
            d->c[d->ny++] = yb ? t->a : t->b;
        } else if (sg[j] == 1 && d->c0 < 0 && !eq_reads(m, node[j], varying, -1)) {
            d->c0 = node[j];
        } else {
            return 0;
        }
    }
    for (int j = 0; j < d->ny; j++)
        for (int l = 0; l < j; l++)
            if (d->y[j] == self || d->y[l] == d->y[j])
                return 0;
    if (d->pn_tau && (d->ny || d->c0 >= 0))
        return 0;
    return seen_self == 1 && !(d->ny == 1 && d->y[0] == self);
}

/* PyNN's IF_curr_exp as pyNN.brian2 and our PyNN backend write it, every
 * parameter per neuron (src/python pynn/standardmodels.py):
 *   dv/dt = (v_rest-v)/tau_m + (i_syn + i_offset + i_inj)/c_m  (unless refractory)
 *   die/dt = -ie/tau_syn_e; dii/dt = -ii/tau_syn_i; i_syn = ie + ii
 * Brian2 2.5.1 prints its propagator unhoisted, in an order that SymPy's
 * sort gives for these names (read from its generated code; not derived
 * for other names, so only these are recognised):
 *   K   = ((-c_m)*v_rest) - ((i_inj*tau_m) + (i_offset*tau_m))
 *   T_y = (((((y*tau_m)*tau_y)*((-exp(dt/tau_y)) + exp(dt/tau_m)))*E_y)*E_m)
 *         / (c_m*((-tau_m) + tau_y))            for (y, tau_y) = (ie, tau_syn_e), (ii, tau_syn_i)
 *   v'  = ((((v*E_m) + T_ie) + T_ii) + ((K*E_m)/c_m)) - (K/c_m)
 * with E_x = exp((-dt)/tau_x). */
static int is_named(const bl_eq_model *m, int32_t n, const char *name, int kind)
{
    const eq_node *x = &m->nodes[n];
    return x->kind == N_SYM && m->syms[x->sym].kind == kind && !strcmp(m->syms[x->sym].name, name);
}

static int match_pynn_curr(const bl_eq_model *m, int32_t f, int32_t self)
{
    const eq_node *x = &m->nodes[f];
    if (strcmp(m->syms[self].name, "v") || x->kind != N_ADD)
        return 0;
    const eq_node *a = &m->nodes[x->a], *b = &m->nodes[x->b];
    if (a->kind != N_DIV || b->kind != N_DIV || !is_named(m, a->b, "tau_m", S_PARAM_N) ||
        !is_named(m, b->b, "c_m", S_PARAM_N))
        return 0;
    const eq_node *num = &m->nodes[a->a];
    if (num->kind != N_SUB || !is_named(m, num->a, "v_rest", S_PARAM_N) || !is_named(m, num->b, "v", S_STATE))
        return 0;
    int32_t node[8];
    int sg[8], k = 0;
    if (!terms(m, b->a, 1, node, sg, &k, 8) || k != 4)
        return 0;
    static const char *const want[4] = {"ie", "ii", "i_offset", "i_inj"};
    static const int kinds[4] = {S_STATE, S_STATE, S_PARAM_N, S_PARAM_N};
    for (int j = 0; j < 4; j++)
        if (sg[j] != 1 || !is_named(m, node[j], want[j], kinds[j]))
            return 0;
    return 1;
}

static int32_t pynn_curr_update(bl_eq_model *m, int32_t dt, const decay *d, bl_error *err)
{
    int32_t v = eq_sym_find(m, "v"), v_rest = eq_sym_find(m, "v_rest"), tau_m = eq_sym_find(m, "tau_m"),
            c_m = eq_sym_find(m, "c_m"), i_inj = eq_sym_find(m, "i_inj"), i_offset = eq_sym_find(m, "i_offset");
#define R(s) eq_symref(m, (s), err)
#define B(k, a, b) eq_bin(m, (k), (a), (b), err)
#define EXPM(tau) eq_call(m, F_EXP, B(N_DIV, B(N_NEG, dt, -1), (tau)), err)
    int32_t K = B(N_SUB, B(N_MUL, B(N_NEG, R(c_m), -1), R(v_rest)),
                  B(N_ADD, B(N_MUL, R(i_inj), R(tau_m)), B(N_MUL, R(i_offset), R(tau_m))));
    int32_t e = B(N_MUL, R(v), EXPM(R(tau_m)));
    static const char *const in[2] = {"ie", "ii"};
    for (int j = 0; j < 2; j++) {
        int32_t y = eq_sym_find(m, in[j]);
        int32_t ty = d[m->syms[y].slot].tau;
        int32_t diff = B(N_ADD, B(N_NEG, eq_call(m, F_EXP, B(N_DIV, dt, ty), err), -1),
                         eq_call(m, F_EXP, B(N_DIV, dt, R(tau_m)), err));
        int32_t p = B(N_MUL, B(N_MUL, R(y), R(tau_m)), ty);
        p = B(N_MUL, B(N_MUL, B(N_MUL, p, diff), EXPM(ty)), EXPM(R(tau_m)));
        int32_t T = B(N_DIV, p, B(N_MUL, R(c_m), B(N_ADD, B(N_NEG, R(tau_m), -1), ty)));
        e = B(N_ADD, e, T);
    }
    e = B(N_ADD, e, B(N_DIV, B(N_MUL, K, EXPM(R(tau_m))), R(c_m)));
    e = B(N_SUB, e, B(N_DIV, K, R(c_m)));
#undef R
#undef B
#undef EXPM
    return e;
}

/* The name of a time constant that is a scalar parameter, else NULL. */
static const char *tau_name(const bl_eq_model *m, int32_t tau)
{
    const eq_node *x = &m->nodes[tau];
    return x->kind == N_SYM && m->syms[x->sym].kind == S_CONST ? m->syms[x->sym].name : NULL;
}

static bl_status refuse(bl_eq_model *m, int32_t sym, const char *why, bl_error *err)
{
    eq_sym *y = &m->syms[sym];
    char msg[320];
    snprintf(msg, sizeof msg,
             "method linear: %s (solved: decays (c0 - x)/tau and a variable driven by decaying ones, "
             "(c0 - v + c*y + ...)/t with dy/dt = -y/tau; use exponential_euler for others):",
             why);
    return eq_fail_at(m, B_EQUATIONS, y->lo, y->hi, err, BL_ERR_UNSUPPORTED, msg);
}

bl_status eq_linear_apply(bl_eq_model *m, eq_update *u, bl_error *err)
{
    uint32_t nv = m->n_vars;
    decay d[BL_EQ_MAX_VARS];
    int32_t dt_sym = eq_sym_find(m, "dt");
    if (dt_sym < 0 && (dt_sym = eq_sym_add(m, "dt", S_DT, err)) < 0)
        return err->status;
    m->syms[dt_sym].dim.e[2] = 2;
    if (m->syms[dt_sym].kind != S_DT)
        return bl_fail(err, BL_ERR_INVALID, "equations: dt is redefined");
    for (uint32_t s = 0; s < nv; s++) {
        u->new_expr[s] = -1;
        int32_t sym = m->var_sym[s];
        if (m->syms[sym].kind != S_STATE)
            continue;
        int32_t f = eq_expand(m, m->syms[sym].expr, err);
        if (f < 0)
            return err->status;
        if (eq_reads(m, f, (1u << S_T) | (1u << S_XI), -1))
            return refuse(m, sym, "the equation depends on t or xi", err);
        d[s].pynn_curr = 0;
        if (!match(m, f, sym, &d[s])) {
            if (!match_pynn_curr(m, f, sym))
                return refuse(m, sym, "not of a solved form", err);
            d[s].pynn_curr = 1;
            d[s].ny = 0;
            d[s].c0 = -1;
        }
    }
    int32_t dt = eq_symref(m, dt_sym, err);
    for (uint32_t s = 0; s < nv; s++) {
        int32_t sym = m->var_sym[s];
        if (m->syms[sym].kind != S_STATE)
            continue;
        decay *v = &d[s];
        int32_t x = eq_symref(m, sym, err);
        /* E = exp((-dt)/tau) */
        int32_t E = eq_call(m, F_EXP, eq_bin(m, N_DIV, eq_bin(m, N_NEG, dt, -1, err), v->tau, err), err);
        int32_t e = eq_bin(m, N_MUL, E, x, err);
        if (v->pynn_curr) {
            /* its inputs must be the pure decays PyNN writes (-y/tau_syn_*) */
            static const char *const in[2] = {"ie", "ii"}, *const taus[2] = {"tau_syn_e", "tau_syn_i"};
            for (int j = 0; j < 2; j++) {
                const decay *w = &d[m->syms[eq_sym_find(m, in[j])].slot];
                if (w->ny || w->c0 >= 0 || m->syms[eq_sym_find(m, in[j])].unless_refractory ||
                    !is_named(m, w->tau, taus[j], S_PARAM_N))
                    return refuse(m, sym, "not of a solved form", err);
            }
            if ((e = pynn_curr_update(m, dt, d, err)) < 0)
                return err->status ? err->status : BL_ERR_INVALID;
            u->new_expr[s] = e;
            continue;
        }
        /* The inputs' terms, in the order SymPy prints their sum (read from
         * Brian2 2.5.1's generated code for the CUBA form under several
         * namings): by the name of the input's time constant; v's own term
         * E_v*v last. With one input whose time constants are not both
         * named parameters, the shiu2024 form (v's tau first). */
        int order[MAX_INPUTS];
        for (int j = 0; j < v->ny; j++)
            order[j] = j;
        if (v->ny > 1) {
            for (int j = 0; j < v->ny; j++) {
                const char *nj = tau_name(m, d[m->syms[v->y[j]].slot].tau);
                if (!nj || !tau_name(m, v->tau))
                    return refuse(m, sym, "with several inputs, every time constant must be a parameter", err);
                if (!strcmp(nj, tau_name(m, v->tau)))
                    return refuse(m, sym, "an input has the variable's own time constant", err);
                for (int l = 0; l < j; l++)
                    if (!strcmp(nj, tau_name(m, d[m->syms[v->y[l]].slot].tau)))
                        return refuse(m, sym, "two inputs share a time constant (SymPy would sum them first)",
                                      err);
            }
            for (int j = 1; j < v->ny; j++)
                for (int l = j; l > 0 && strcmp(tau_name(m, d[m->syms[v->y[order[l]]].slot].tau),
                                                 tau_name(m, d[m->syms[v->y[order[l - 1]]].slot].tau)) < 0;
                     l--) {
                    int tmp = order[l];
                    order[l] = order[l - 1];
                    order[l - 1] = tmp;
                }
        }
        int32_t sum = -1;
        for (int q = 0; q < v->ny; q++) {
            int j = order[q];
            int32_t ys = m->syms[v->y[j]].slot;
            decay *w = &d[ys];
            if (w->ny > 0 || w->c0 >= 0)
                return refuse(m, sym, "the variable it is driven by is not a pure decay -y/tau", err);
            if (w->pn_tau)
                return refuse(m, sym, "an input's time constant is per neuron (Brian2 prints that propagator "
                              "otherwise)", err);
            if (m->syms[v->y[j]].unless_refractory != m->syms[sym].unless_refractory)
                return refuse(m, sym, "the two variables differ in (unless refractory)", err);
            /* a and b: the two time constants in SymPy's order (by name when
             * both are named parameters; else v's first, the shiu2024 form) */
            const char *name_v = tau_name(m, v->tau), *name_y = tau_name(m, w->tau);
            int y_first = name_v && name_y && strcmp(name_y, name_v) < 0;
            int32_t ta = y_first ? w->tau : v->tau, tb = y_first ? v->tau : w->tau;
            /* a - b must not vanish: the closed form divides by it. */
            int32_t gap = eq_bin(m, N_SUB, ta, tb, err);
            if (gap < 0)
                return err->status;
            if (eq_is_const(m, gap)) {
                double g;
                bl_status st = eq_const_eval(m, gap, &g, err);
                if (st)
                    return st;
                if (g == 0.0)
                    return eq_fail_at(m, B_EQUATIONS, m->syms[sym].lo, m->syms[sym].hi, err, BL_ERR_INVALID,
                                      "method linear: division by zero: the two time constants are equal, "
                                      "(t_v - tau) is 0 in the propagator of");
            }
            int32_t Ey = eq_call(m, F_EXP, eq_bin(m, N_DIV, eq_bin(m, N_NEG, dt, -1, err), w->tau, err), err);
            int32_t Ea = y_first ? Ey : E, Eb = y_first ? E : Ey;
            int32_t cT = v->c[j] >= 0 ? eq_bin(m, N_MUL, v->c[j], w->tau, err) : w->tau;
            int32_t diff = eq_bin(m, N_ADD, eq_bin(m, N_NEG, eq_call(m, F_EXP, eq_bin(m, N_DIV, dt, ta, err), err), -1, err),
                                  eq_call(m, F_EXP, eq_bin(m, N_DIV, dt, tb, err), err), err);
            int32_t L;
            if (m->syms[sym].unless_refractory)
                L = eq_bin(m, N_MUL, eq_bin(m, N_MUL, eq_bin(m, N_MUL, eq_bin(m, N_DIV, cT, gap, err), diff, err), Ea, err), Eb, err);
            else
                L = eq_bin(m, N_DIV, eq_bin(m, N_MUL, eq_bin(m, N_MUL, eq_bin(m, N_MUL, cT, diff, err), Ea, err), Eb, err), gap, err);
            int32_t term = eq_bin(m, N_MUL, L, eq_symref(m, v->y[j], err), err);
            sum = sum < 0 ? term : eq_bin(m, N_ADD, sum, term, err);
        }
        if (sum >= 0)
            e = eq_bin(m, N_ADD, sum, e, err);
        if (v->c0 >= 0)
            e = eq_bin(m, N_ADD, eq_bin(m, N_SUB, v->c0, eq_bin(m, N_MUL, v->c0, E, err), err), e, err);
        if (e < 0)
            return err->status ? err->status : BL_ERR_INVALID;
        u->new_expr[s] = e;
    }
    /* Flagged variables keep their value while refractory. */
    int32_t nr = eq_sym_find(m, "not_refractory");
    if (nr < 0 && (nr = eq_sym_add(m, "not_refractory", S_NR, err)) < 0)
        return err->status;
    for (uint32_t s = 0; s < nv; s++) {
        if (u->new_expr[s] < 0 || !m->syms[m->var_sym[s]].unless_refractory)
            continue;
        int32_t n = eq_bin(m, N_SEL, eq_symref(m, nr, err), u->new_expr[s], err);
        if (n < 0)
            return err->status;
        if (eq_node_set_c(m, n, eq_symref(m, m->var_sym[s], err), err) < 0)
            return err->status;
        u->new_expr[s] = n;
    }
    return BL_OK;
}
