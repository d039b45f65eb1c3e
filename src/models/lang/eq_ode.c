/* ODE systems in the model language (include/brainlesslab/odelang.h): the
 * equations are parsed and checked by the model compiler in its ODE mode
 * (dimensionless time, only t built in, parameters as run-time registers),
 * then the right-hand side, the Jacobian, the parameter Jacobian and the
 * second derivatives are differentiated symbolically (eq_diff.c) and each
 * family lowered into one instruction list that shares every common node.
 * The interpreter (eq_vm.c) runs them behind the solvers' bl_ode_system
 * callbacks. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/odelang.h"
#include "models/lang/eq_impl.h"

/* One second derivative: d (J or P)[row][col] / d var, var < n a state,
 * else parameter var - n. */
typedef struct h_entry {
    uint32_t row, col, var, reg;
    uint8_t of_p; /* an entry of P (d f / d p) rather than J */
} h_entry;

struct bl_ode_lang {
    bl_ode_system sys;
    bl_eq_model *m;
    size_t n, np, nobs;
    int32_t *param_sym;
    char (*obs_name)[BL_EQ_MAX_IDENT + 1];
    double *p0, *y0;
    int32_t *f_node, *obs_node;
    eq_prog pf, pj, pp, pobs, ph;
    uint32_t *f_reg, *obs_reg;
    size_t nj, npj, nh;
    uint32_t *j_row, *j_col, *j_reg, *p_row, *p_col, *p_reg;
    int32_t *j_node, *p_node;
    h_entry *h;
    uint32_t *jo_row, *jo_col, *jo_reg, *po_row, *po_col, *po_reg; /* the J and P entries in row order (vjp_cb) */
    uint32_t *h_reg; /* h[k].reg, as the generated second-derivative function's outputs */
    eq_extra_prog extra[5]; /* the lists above as generated C (bl_ode_lang_codegen) */
    eq_ode_direct direct;   /* the RHS and the products as direct generated functions, when made */
    double *regs;
};

static int valid_name(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (!n || n > BL_EQ_MAX_IDENT || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (size_t k = 1; k < n; k++)
        if (!(isalnum((unsigned char)s[k]) || s[k] == '_'))
            return 0;
    return 1;
}

static bl_status set_text(bl_eq_model *m, int block, const char *text, const char *name, bl_error *err)
{
    free(m->owned[block]);
    m->owned[block] = NULL;
    m->texts[block].name = name;
    size_t len = strnlen(text, (size_t)BL_EQ_MAX_TEXT + 1);
    if (len > BL_EQ_MAX_TEXT)
        return bl_fail(err, BL_ERR_INVALID, "%s: longer than %u bytes", name, BL_EQ_MAX_TEXT);
    if (!(m->owned[block] = malloc(len + 1)))
        return bl_fail(err, BL_ERR_NOMEM, "ode system: out of memory");
    memcpy(m->owned[block], text, len);
    m->owned[block][len] = '\0';
    m->texts[block].text = m->owned[block];
    m->texts[block].len = len;
    return BL_OK;
}

static void load(bl_ode_lang *o, double t, const double *y, const double *p)
{
    double *r = o->regs;
    r[R_T] = t;
    memcpy(r + EQ_VBASE, y, o->n * sizeof *y);
    if (o->np)
        memcpy(r + EQ_TBASE, p, o->np * sizeof *p);
}

static int rhs_cb(void *u, double t, const double *y, const double *p, double *f)
{
    bl_ode_lang *o = u;
    if (o->direct.rhs_fn) { /* the same statements, reading y and p in place */
        o->direct.rhs_fn(y, p, t, f);
        return 0;
    }
    load(o, t, y, p);
    eq_exec(&o->pf, o->regs, &(eq_vm_ctx){0});
    for (size_t i = 0; i < o->n; i++)
        f[i] = o->regs[o->f_reg[i]];
    return 0;
}

static int jac_cb(void *u, double t, const double *y, const double *p, double *J)
{
    bl_ode_lang *o = u;
    load(o, t, y, p);
    eq_exec(&o->pj, o->regs, &(eq_vm_ctx){0});
    memset(J, 0, o->n * o->n * sizeof *J);
    for (size_t k = 0; k < o->nj; k++)
        J[(size_t)o->j_row[k] * o->n + o->j_col[k]] = o->regs[o->j_reg[k]];
    return 0;
}

static int pjac_cb(void *u, double t, const double *y, const double *p, double *P)
{
    bl_ode_lang *o = u;
    load(o, t, y, p);
    eq_exec(&o->pp, o->regs, &(eq_vm_ctx){0});
    memset(P, 0, o->n * o->np * sizeof *P);
    for (size_t k = 0; k < o->npj; k++)
        P[(size_t)o->p_row[k] * o->np + o->p_col[k]] = o->regs[o->p_reg[k]];
    return 0;
}

/* out_y = w^T J, out_p += w^T P over the structural nonzeros, row by row
 * in increasing row with w_i = 0 skipped, each term J_ij * w_i: the dense
 * adjoint's operations in its order (solvers.h, bl_ode_vjp_fn). */
static int vjp_cb(void *u, double t, const double *y, const double *p, const double *w, double *out_y, double *out_p)
{
    bl_ode_lang *o = u;
    if (o->direct.vjp_fn) { /* the same statements and products, unrolled */
        o->direct.vjp_fn(y, p, t, w, out_y, out_p);
        return 0;
    }
    load(o, t, y, p);
    eq_exec(&o->pj, o->regs, &(eq_vm_ctx){0});
    memset(out_y, 0, o->n * sizeof *out_y);
    for (size_t k = 0; k < o->nj; k++) {
        const double wr = w[o->jo_row[k]];
        if (wr != 0.0)
            out_y[o->jo_col[k]] += o->regs[o->jo_reg[k]] * wr;
    }
    if (o->np) {
        eq_exec(&o->pp, o->regs, &(eq_vm_ctx){0});
        for (size_t k = 0; k < o->npj; k++) {
            const double wr = w[o->po_row[k]];
            if (wr != 0.0)
                out_p[o->po_col[k]] += o->regs[o->po_reg[k]] * wr;
        }
    }
    return 0;
}

/* The entries (row, col, reg) sorted by row, stably (counting sort), into
 * new arrays: 0 when out of memory. */
static int row_order(const uint32_t *row, const uint32_t *col, const uint32_t *reg, size_t cnt, size_t n,
                     uint32_t **o_row, uint32_t **o_col, uint32_t **o_reg)
{
    *o_row = malloc((cnt + 1) * sizeof **o_row);
    *o_col = malloc((cnt + 1) * sizeof **o_col);
    *o_reg = malloc((cnt + 1) * sizeof **o_reg);
    size_t *start = calloc(n + 1, sizeof *start);
    if (!*o_row || !*o_col || !*o_reg || !start) {
        free(start);
        return 0;
    }
    for (size_t k = 0; k < cnt; k++)
        start[row[k] + 1]++;
    for (size_t i = 0; i < n; i++)
        start[i + 1] += start[i];
    for (size_t k = 0; k < cnt; k++) {
        const size_t at = start[row[k]]++;
        (*o_row)[at] = row[k], (*o_col)[at] = col[k], (*o_reg)[at] = reg[k];
    }
    free(start);
    return 1;
}

/* out_y[j] = sum_i w_i D J_ij[dy, dp], out_p[k] = sum_i w_i D P_ik[dy, dp]. */
static int vjp_dir_cb(void *u, double t, const double *y, const double *p, const double *w, const double *dy,
                      const double *dp, double *out_y, double *out_p)
{
    bl_ode_lang *o = u;
    load(o, t, y, p);
    eq_exec(&o->ph, o->regs, &(eq_vm_ctx){0});
    memset(out_y, 0, o->n * sizeof *out_y);
    if (o->np)
        memset(out_p, 0, o->np * sizeof *out_p);
    for (size_t k = 0; k < o->nh; k++) {
        const h_entry *e = &o->h[k];
        const double dv = e->var < o->n ? dy[e->var] : dp[e->var - o->n];
        const double v = w[e->row] * (o->regs[e->reg] * dv);
        if (e->of_p)
            out_p[e->col] += v;
        else
            out_y[e->col] += v;
    }
    return 0;
}

static int32_t var_sym(const bl_ode_lang *o, size_t v)
{
    return v < o->n ? o->m->var_sym[v] : o->param_sym[v - o->n];
}

/* First derivatives of every RHS tree with respect to every state and
 * parameter; the structural nonzeros are kept. */
static bl_status first_order(bl_ode_lang *o, bl_error *err)
{
    bl_eq_model *m = o->m;
    const size_t nv = o->n + o->np;
    size_t cap = 64;
    uint32_t *row = malloc(cap * sizeof *row), *col = malloc(cap * sizeof *col);
    int32_t *node = malloc(cap * sizeof *node);
    uint8_t *isp = malloc(cap);
    const uint32_t n_memo = m->n_nodes;
    int32_t *memo = malloc((size_t)n_memo * sizeof *memo);
    size_t cnt = 0;
    bl_status st = BL_OK;
    if (!row || !col || !node || !isp || !memo)
        st = bl_fail(err, BL_ERR_NOMEM, "ode system: out of memory");
    for (size_t v = 0; !st && v < nv; v++) {
        for (uint32_t k = 0; k < n_memo; k++)
            memo[k] = EQ_DMEMO_UNSET;
        for (size_t i = 0; !st && i < o->n; i++) {
            int32_t d = eq_diff(m, o->f_node[i], var_sym(o, v), memo, n_memo, err);
            if (d == -1) {
                char msg[BL_ERROR_MESSAGE_MAX];
                snprintf(msg, sizeof msg, "%s", err->message);
                st = bl_fail(err, err->status ? err->status : BL_ERR_INTERNAL, "ode system: differentiating d%s/dt by %s: %s",
                             m->syms[m->var_sym[i]].name, m->syms[var_sym(o, v)].name, msg);
                break;
            }
            if (d == EQ_DZERO)
                continue;
            if (cnt == cap) {
                cap *= 2;
                uint32_t *r2 = realloc(row, cap * sizeof *row), *c2 = r2 ? realloc(col, cap * sizeof *col) : NULL;
                row = r2 ? r2 : row;
                col = c2 ? c2 : col;
                int32_t *n2 = c2 ? realloc(node, cap * sizeof *node) : NULL;
                node = n2 ? n2 : node;
                uint8_t *p2 = n2 ? realloc(isp, cap) : NULL;
                isp = p2 ? p2 : isp;
                if (!p2) {
                    st = bl_fail(err, BL_ERR_NOMEM, "ode system: out of memory");
                    break;
                }
            }
            row[cnt] = (uint32_t)i;
            col[cnt] = (uint32_t)(v < o->n ? v : v - o->n);
            node[cnt] = d;
            isp[cnt] = v >= o->n;
            cnt++;
        }
    }
    free(memo);
    for (size_t k = 0; !st && k < cnt; k++)
        *(isp[k] ? &o->npj : &o->nj) += 1;
    if (!st) {
        o->j_row = malloc((o->nj + 1) * sizeof *o->j_row);
        o->j_col = malloc((o->nj + 1) * sizeof *o->j_col);
        o->j_reg = malloc((o->nj + 1) * sizeof *o->j_reg);
        o->j_node = malloc((o->nj + 1) * sizeof *o->j_node);
        o->p_row = malloc((o->npj + 1) * sizeof *o->p_row);
        o->p_col = malloc((o->npj + 1) * sizeof *o->p_col);
        o->p_reg = malloc((o->npj + 1) * sizeof *o->p_reg);
        o->p_node = malloc((o->npj + 1) * sizeof *o->p_node);
        if (!o->j_row || !o->j_col || !o->j_reg || !o->j_node || !o->p_row || !o->p_col || !o->p_reg || !o->p_node)
            st = bl_fail(err, BL_ERR_NOMEM, "ode system: out of memory");
    }
    size_t a = 0, b = 0;
    for (size_t k = 0; !st && k < cnt; k++) {
        if (isp[k]) {
            o->p_row[b] = row[k], o->p_col[b] = col[k], o->p_node[b++] = node[k];
        } else {
            o->j_row[a] = row[k], o->j_col[a] = col[k], o->j_node[a++] = node[k];
        }
    }
    free(row);
    free(col);
    free(node);
    free(isp);
    return st;
}

/* Second derivatives of every J and P entry (for vjp_dir, the Hessian). */
static bl_status second_order(bl_ode_lang *o, bl_error *err)
{
    bl_eq_model *m = o->m;
    const size_t nv = o->n + o->np, ne = o->nj + o->npj;
    size_t cap = 64, cnt = 0;
    h_entry *h = malloc(cap * sizeof *h);
    int32_t *node = malloc(cap * sizeof *node);
    const uint32_t n_memo = m->n_nodes;
    int32_t *memo = malloc((size_t)n_memo * sizeof *memo);
    bl_status st = BL_OK;
    if (!h || !node || !memo)
        st = bl_fail(err, BL_ERR_NOMEM, "ode system: out of memory");
    for (size_t v = 0; !st && v < nv; v++) {
        for (uint32_t k = 0; k < n_memo; k++)
            memo[k] = EQ_DMEMO_UNSET;
        for (size_t e = 0; !st && e < ne; e++) {
            const int of_p = e >= o->nj;
            const int32_t src = of_p ? o->p_node[e - o->nj] : o->j_node[e];
            int32_t d = eq_diff(m, src, var_sym(o, v), memo, n_memo, err);
            if (d == -1) {
                st = err->status ? err->status : BL_ERR_INTERNAL;
                break;
            }
            if (d == EQ_DZERO)
                continue;
            if (cnt == cap) {
                cap *= 2;
                h_entry *h2 = realloc(h, cap * sizeof *h);
                h = h2 ? h2 : h;
                int32_t *n2 = h2 ? realloc(node, cap * sizeof *node) : NULL;
                node = n2 ? n2 : node;
                if (!n2) {
                    st = bl_fail(err, BL_ERR_NOMEM, "ode system: out of memory");
                    break;
                }
            }
            h[cnt] = (h_entry){of_p ? o->p_row[e - o->nj] : o->j_row[e], of_p ? o->p_col[e - o->nj] : o->j_col[e],
                               (uint32_t)v, 0, (uint8_t)of_p};
            node[cnt++] = d;
        }
    }
    free(memo);
    if (!st) {
        uint32_t *reg = malloc((cnt + 1) * sizeof *reg);
        if (!reg)
            st = bl_fail(err, BL_ERR_NOMEM, "ode system: out of memory");
        else if (!(st = eq_lower_many(m, &o->ph, node, (uint32_t)cnt, reg, err)))
            for (size_t k = 0; k < cnt; k++)
                h[k].reg = reg[k];
        free(reg);
    }
    free(node);
    if (st) {
        free(h);
        return st;
    }
    o->h = h;
    o->nh = cnt;
    return BL_OK;
}

static bl_status build(bl_ode_lang *o, const bl_ode_lang_source *src, bl_error *err)
{
    bl_eq_model *m = o->m;
    bl_status st;
    static const char *const names[B_NBLOCKS] = {"equations", "observe", "reset", "refractory", "on_pre",
                                                 "on_post", "on_input", "weight", "parameter", "init", "ode system"};
    for (int b = 0; b < B_NBLOCKS; b++)
        m->texts[b].name = names[b];
    if (!src->equations)
        return bl_fail(err, BL_ERR_INVALID, "ode system: no equations");
    if (src->n_params > BL_EQ_MAX_PARAMS)
        return bl_fail(err, BL_ERR_INVALID, "ode system: %zu parameters, at most %u", src->n_params, BL_EQ_MAX_PARAMS);
    o->np = src->n_params;
    o->param_sym = malloc((o->np + 1) * sizeof *o->param_sym);
    o->p0 = calloc(o->np + 1, sizeof *o->p0);
    if (!o->param_sym || !o->p0)
        return bl_fail(err, BL_ERR_NOMEM, "ode system: out of memory");
    /* Parameters first: the equations then find them by name. */
    for (size_t k = 0; k < o->np; k++) {
        const char *name = src->param_names[k];
        if (!valid_name(name) || !strcmp(name, "t"))
            return bl_fail(err, BL_ERR_INVALID, "parameters: '%.80s' is not a name (letters, digits, _; not t)",
                           name ? name : "");
        if (eq_sym_find(m, name) >= 0)
            return bl_fail(err, BL_ERR_INVALID, "parameters: '%s' is given twice", name);
        if (!isfinite(src->param_values[k]))
            return bl_fail(err, BL_ERR_INVALID, "parameters: %s = %g is not finite", name, src->param_values[k]);
        int32_t s = eq_sym_add(m, name, S_OPARAM, err);
        if (s < 0)
            return err->status;
        m->syms[s].slot = (int32_t)k;
        o->param_sym[k] = s;
        o->p0[k] = src->param_values[k];
    }
    m->n_oparams = (uint32_t)o->np;
    if ((st = set_text(m, B_EQUATIONS, src->equations, "equations", err)) || (st = eq_parse_equations(m, err)) ||
        (st = eq_resolve_equations(m, err)))
        return st;
    for (uint32_t i = 0; i < m->n_syms; i++) {
        const eq_sym *s = &m->syms[i];
        if (s->kind == S_PARAM_N)
            return eq_fail_at(m, B_EQUATIONS, s->lo, s->hi, err, BL_ERR_INVALID,
                              "a name declared without an equation; an ODE system's parameters are given with their "
                              "values ([ode.parameters]), in");
        if ((s->kind == S_STATE || s->kind == S_SUBEXPR) && !strcmp(s->name, "t"))
            return eq_fail_at(m, B_EQUATIONS, s->lo, s->hi, err, BL_ERR_INVALID, "t is the time, not a variable:");
    }
    o->n = m->n_vars;
    if (!o->n)
        return bl_fail(err, BL_ERR_INVALID, "equations: no differential equation (dx/dt = ... : 1)");
    o->y0 = calloc(o->n, sizeof *o->y0);
    o->f_node = malloc(o->n * sizeof *o->f_node);
    o->f_reg = malloc(o->n * sizeof *o->f_reg);
    if (!o->y0 || !o->f_node || !o->f_reg)
        return bl_fail(err, BL_ERR_NOMEM, "ode system: out of memory");
    for (size_t k = 0; k < src->n_init; k++) {
        const char *name = src->init_names[k];
        int32_t s = name ? eq_sym_find(m, name) : -1;
        if (s < 0 || m->syms[s].kind != S_STATE)
            return bl_fail(err, BL_ERR_INVALID, "init: '%.80s' is not a state of the equations (dx/dt = ...)",
                           name ? name : "");
        if (!isfinite(src->init_values[k]))
            return bl_fail(err, BL_ERR_INVALID, "init: %s = %g is not finite", name, src->init_values[k]);
        o->y0[m->syms[s].slot] = src->init_values[k];
    }
    /* Observations: expressions of t, the states, the parameters and the
     * subexpressions, each checked in its own text. */
    o->nobs = src->n_observe;
    o->obs_name = calloc(o->nobs + 1, sizeof *o->obs_name);
    o->obs_node = malloc((o->nobs + 1) * sizeof *o->obs_node);
    o->obs_reg = malloc((o->nobs + 1) * sizeof *o->obs_reg);
    if (!o->obs_name || !o->obs_node || !o->obs_reg)
        return bl_fail(err, BL_ERR_NOMEM, "ode system: out of memory");
    char oname[BL_EQ_MAX_IDENT + 16];
    for (size_t k = 0; k < o->nobs; k++) {
        const char *name = src->observe_names[k];
        if (!valid_name(name))
            return bl_fail(err, BL_ERR_INVALID, "observe: '%.80s' is not a name (letters, digits, _)", name ? name : "");
        for (size_t j = 0; j < k; j++)
            if (!strcmp(o->obs_name[j], name))
                return bl_fail(err, BL_ERR_INVALID, "observe: '%s' is given twice", name);
        snprintf(o->obs_name[k], sizeof o->obs_name[k], "%s", name);
        snprintf(oname, sizeof oname, "observe %s", name);
        if (!src->observe_exprs[k])
            return bl_fail(err, BL_ERR_INVALID, "%s: no expression", oname);
        int32_t node;
        eq_type ty;
        if ((st = set_text(m, B_THRESHOLD, src->observe_exprs[k], oname, err)) ||
            (st = eq_parse_expr_block(m, B_THRESHOLD, &node, err)))
            return st;
        for (uint32_t i = 0; i < m->n_syms; i++)
            if (m->syms[i].kind == EQ_SYM_UNKNOWN && !strcmp(m->syms[i].name, "t"))
                m->syms[i].kind = S_T;
        if ((st = eq_check(m, node, &ty, err)))
            return st;
        if (ty.boolean)
            return eq_fail_at(m, B_THRESHOLD, 0, 0, err, BL_ERR_INVALID, "a condition, not a value (write int(...))");
        if ((o->obs_node[k] = eq_expand(m, node, err)) < 0)
            return err->status;
    }
    m->texts[B_THRESHOLD].name = "observe";
    for (size_t i = 0; i < o->n; i++)
        if ((o->f_node[i] = eq_expand(m, m->syms[m->var_sym[i]].expr, err)) < 0)
            return err->status;
    if ((st = first_order(o, err)) || (st = eq_lower_many(m, &o->pf, o->f_node, (uint32_t)o->n, o->f_reg, err)) ||
        (st = eq_lower_many(m, &o->pj, o->j_node, (uint32_t)o->nj, o->j_reg, err)) ||
        (st = eq_lower_many(m, &o->pp, o->p_node, (uint32_t)o->npj, o->p_reg, err)) ||
        (st = eq_lower_many(m, &o->pobs, o->obs_node, (uint32_t)o->nobs, o->obs_reg, err)))
        return st;
    /* The second derivatives can outgrow the node budget of a model (a large
     * system): then the system has no Hessian, and says so when asked. */
    o->sys.vjp_dir = vjp_dir_cb;
    bl_error e2 = {0};
    if (second_order(o, &e2)) {
        o->sys.vjp_dir = NULL;
        eq_prog_free(&o->ph);
        if (e2.status == BL_ERR_NOMEM)
            return bl_fail(err, BL_ERR_NOMEM, "%s", e2.message);
    }
    if (!(o->regs = calloc(m->n_regs, sizeof *o->regs)))
        return bl_fail(err, BL_ERR_NOMEM, "ode system: out of memory for %u registers", m->n_regs);
    memcpy(o->regs + EQ_CBASE, m->consts, m->n_consts * sizeof *m->consts);
    o->sys.n_states = o->n;
    o->sys.n_params = o->np;
    o->sys.rhs = rhs_cb;
    o->sys.jac = jac_cb;
    o->sys.pjac = pjac_cb;
    o->sys.user = o;
    if (!row_order(o->j_row, o->j_col, o->j_reg, o->nj, o->n, &o->jo_row, &o->jo_col, &o->jo_reg) ||
        !row_order(o->p_row, o->p_col, o->p_reg, o->npj, o->n, &o->po_row, &o->po_col, &o->po_reg))
        return bl_fail(err, BL_ERR_NOMEM, "ode system: out of memory");
    o->sys.vjp = vjp_cb;
    return BL_OK;
}

bl_status bl_ode_lang_compile(const bl_ode_lang_source *src, bl_ode_lang **out, bl_error *err)
{
    if (!out || !src)
        return bl_fail(err, BL_ERR_INVALID, "bl_ode_lang_compile: src or out is NULL");
    *out = NULL;
    if ((src->n_params && (!src->param_names || !src->param_values)) ||
        (src->n_init && (!src->init_names || !src->init_values)) ||
        (src->n_observe && (!src->observe_names || !src->observe_exprs)))
        return bl_fail(err, BL_ERR_INVALID, "bl_ode_lang_compile: a list with a count but no values");
    bl_ode_lang *o = calloc(1, sizeof *o);
    bl_eq_model *m = o ? calloc(1, sizeof *m) : NULL;
    if (!m) {
        free(o);
        return bl_fail(err, BL_ERR_NOMEM, "ode system: out of memory");
    }
    o->m = m;
    m->ode = 1;
    m->dt = 1.0;
    m->n_regs = EQ_TBASE;
    snprintf(m->method, sizeof m->method, "ode");
    bl_status st = build(o, src, err);
    if (st) {
        bl_ode_lang_destroy(o);
        return st;
    }
    *out = o;
    return BL_OK;
}

void bl_ode_lang_destroy(bl_ode_lang *o)
{
    if (!o)
        return;
    eq_prog *ps[] = {&o->pf, &o->pj, &o->pp, &o->pobs, &o->ph};
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++)
        eq_prog_free(ps[k]);
    bl_eq_model_destroy(o->m);
    free(o->param_sym);
    free(o->obs_name);
    free(o->p0);
    free(o->y0);
    free(o->f_node);
    free(o->obs_node);
    free(o->f_reg);
    free(o->obs_reg);
    free(o->j_row);
    free(o->j_col);
    free(o->j_reg);
    free(o->j_node);
    free(o->p_row);
    free(o->p_col);
    free(o->p_reg);
    free(o->p_node);
    free(o->h);
    free(o->h_reg);
    free(o->jo_row), free(o->jo_col), free(o->jo_reg);
    free(o->po_row), free(o->po_col), free(o->po_reg);
    free(o->regs);
    free(o);
}

/* The five instruction lists as one generated C object through the neuron
 * models' machinery (eq_cgen.c: one statement per instruction in list order,
 * the flags that forbid contraction and reassociation, the SHA-256 keyed
 * cache): every callback then runs the generated function through eq_exec,
 * with the interpreter's bits. */
bl_status bl_ode_lang_codegen(bl_ode_lang *o, bl_eq_exec how, bl_error *err)
{
    bl_eq_model *m = o->m;
    if (!o->h_reg && !(o->h_reg = malloc((o->nh + 1) * sizeof *o->h_reg)))
        return bl_fail(err, BL_ERR_NOMEM, "ode system: out of memory");
    for (size_t k = 0; k < o->nh; k++)
        o->h_reg[k] = o->h[k].reg;
    size_t n = 0;
    o->extra[n++] = (eq_extra_prog){"ode_rhs", &o->pf, o->f_reg, o->n};
    o->extra[n++] = (eq_extra_prog){"ode_jac", &o->pj, o->j_reg, o->nj};
    o->extra[n++] = (eq_extra_prog){"ode_pjac", &o->pp, o->p_reg, o->npj};
    o->extra[n++] = (eq_extra_prog){"ode_observe", &o->pobs, o->obs_reg, o->nobs};
    if (o->sys.vjp_dir)
        o->extra[n++] = (eq_extra_prog){"ode_second", &o->ph, o->h_reg, o->nh};
    m->extra = o->extra;
    m->n_extra = n;
    o->direct = (eq_ode_direct){&o->pf, &o->pj, &o->pp, o->f_reg, o->n, o->jo_row, o->jo_col, o->jo_reg,
                                o->po_row, o->po_col, o->po_reg, o->nj, o->npj, NULL, NULL};
    m->ode_direct = &o->direct;
    return bl_eq_model_codegen(m, how, err);
}

int bl_ode_lang_compiled(const bl_ode_lang *o) { return bl_eq_model_compiled(o->m); }
const char *bl_ode_lang_exec_note(const bl_ode_lang *o) { return bl_eq_model_exec_note(o->m); }
char *bl_ode_lang_codegen_json(const bl_ode_lang *o) { return bl_eq_model_codegen_json(o->m); }
const char *bl_ode_lang_generated_source(const bl_ode_lang *o) { return bl_eq_model_generated_source(o->m); }

const bl_ode_system *bl_ode_lang_system(const bl_ode_lang *o) { return &o->sys; }
size_t bl_ode_lang_n_states(const bl_ode_lang *o) { return o->n; }
size_t bl_ode_lang_n_params(const bl_ode_lang *o) { return o->np; }
size_t bl_ode_lang_n_observe(const bl_ode_lang *o) { return o->nobs; }
const char *bl_ode_lang_state_name(const bl_ode_lang *o, size_t i)
{
    return i < o->n ? o->m->syms[o->m->var_sym[i]].name : NULL;
}
const char *bl_ode_lang_param_name(const bl_ode_lang *o, size_t i)
{
    return i < o->np ? o->m->syms[o->param_sym[i]].name : NULL;
}
const char *bl_ode_lang_observe_name(const bl_ode_lang *o, size_t i) { return i < o->nobs ? o->obs_name[i] : NULL; }
const double *bl_ode_lang_params(const bl_ode_lang *o) { return o->p0; }
const double *bl_ode_lang_y0(const bl_ode_lang *o) { return o->y0; }
size_t bl_ode_lang_jac_nnz(const bl_ode_lang *o) { return o->nj; }
size_t bl_ode_lang_pjac_nnz(const bl_ode_lang *o) { return o->npj; }

void bl_ode_lang_observe(bl_ode_lang *o, double t, const double *y, const double *p, double *obs)
{
    if (!o->nobs)
        return;
    load(o, t, y, p);
    eq_exec(&o->pobs, o->regs, &(eq_vm_ctx){0});
    for (size_t k = 0; k < o->nobs; k++)
        obs[k] = o->regs[o->obs_reg[k]];
}

bl_status bl_ode_lang_check_finite(bl_ode_lang *o, double t, const double *y, const double *p, bl_error *err)
{
    double *f = malloc(o->n * sizeof *f);
    if (!f)
        return bl_fail(err, BL_ERR_NOMEM, "ode system: out of memory");
    rhs_cb(o, t, y, p, f);
    bl_status st = BL_OK;
    for (size_t i = 0; i < o->n && !st; i++)
        if (!isfinite(f[i])) {
            const eq_sym *s = &o->m->syms[o->m->var_sym[i]];
            char what[160];
            snprintf(what, sizeof what, "the right-hand side of d%s/dt is not finite (%g) at the initial state, t = %g:",
                     s->name, f[i], t);
            st = eq_fail_at(o->m, B_EQUATIONS, s->lo, s->hi, err, BL_ERR_INVALID, what);
        }
    free(f);
    return st;
}

void bl_ode_lang_sizes(const bl_ode_lang *o, bl_ode_lang_size *out)
{
    *out = (bl_ode_lang_size){o->m->n_nodes, o->pf.n_code, o->pj.n_code, o->pp.n_code, o->ph.n_code, o->pobs.n_code};
}

void bl_ode_lang_explain(const bl_ode_lang *o, bl_error *err)
{
    if (!o || !err || err->status == BL_OK)
        return;
    const char *at = strstr(err->message, "state ");
    unsigned long i;
    if (!at || sscanf(at + 6, "%lu", &i) != 1 || i >= o->n)
        return;
    const eq_sym *s = &o->m->syms[o->m->var_sym[i]];
    const eq_text *t = &o->m->texts[B_EQUATIONS];
    uint32_t lo = s->lo, hi = s->hi;
    while (hi > lo && hi <= t->len && (t->text[hi - 1] == '\n' || t->text[hi - 1] == ' '))
        hi--;
    size_t len = strlen(err->message);
    if (len + 32 < sizeof err->message && hi <= t->len)
        snprintf(err->message + len, sizeof err->message - len, "; state %lu is %s (equations line %d: '%.*s')", i,
                 s->name, s->line, (int)(hi - lo > 120 ? 120 : hi - lo), t->text + lo);
}

/* ---- text */

typedef struct sbuf {
    char *s;
    size_t len, cap;
    int failed;
} sbuf;

static void put(sbuf *b, const char *fmt, const char *x)
{
    char line[2048];
    int k = snprintf(line, sizeof line, fmt, x);
    if (k < 0 || b->failed)
        return;
    size_t l = strlen(line);
    if (b->len + l + 1 > b->cap) {
        size_t cap = 2 * (b->cap + l + 1);
        char *s = realloc(b->s, cap);
        if (!s) {
            b->failed = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->len, line, l + 1);
    b->len += l;
}

char *bl_ode_lang_describe(const bl_ode_lang *o)
{
    sbuf b = {0};
    char expr[1536], head[256];
    snprintf(head, sizeof head,
             "# %zu states, %zu parameters; %u nodes; instructions: rhs %u, jacobian %u (%zu nonzeros), "
             "parameter jacobian %u (%zu nonzeros), second derivatives %u (%zu), observations %u\n",
             o->n, o->np, o->m->n_nodes, o->pf.n_code, o->pj.n_code, o->nj, o->pp.n_code, o->npj, o->ph.n_code, o->nh,
             o->pobs.n_code);
    put(&b, "%s", head);
    for (size_t i = 0; i < o->n; i++) {
        eq_render(o->m, o->f_node[i], expr, sizeof expr);
        snprintf(head, sizeof head, "d%s/dt = ", bl_ode_lang_state_name(o, i));
        put(&b, "%s", head);
        put(&b, "%s\n", expr);
    }
    for (size_t k = 0; k < o->nj; k++) {
        eq_render(o->m, o->j_node[k], expr, sizeof expr);
        snprintf(head, sizeof head, "d(d%s/dt)/d%s = ", bl_ode_lang_state_name(o, o->j_row[k]),
                 bl_ode_lang_state_name(o, o->j_col[k]));
        put(&b, "%s", head);
        put(&b, "%s\n", expr);
    }
    for (size_t k = 0; k < o->npj; k++) {
        eq_render(o->m, o->p_node[k], expr, sizeof expr);
        snprintf(head, sizeof head, "d(d%s/dt)/d%s = ", bl_ode_lang_state_name(o, o->p_row[k]),
                 bl_ode_lang_param_name(o, o->p_col[k]));
        put(&b, "%s", head);
        put(&b, "%s\n", expr);
    }
    for (size_t k = 0; k < o->nobs; k++) {
        eq_render(o->m, o->obs_node[k], expr, sizeof expr);
        snprintf(head, sizeof head, "observe %s = ", o->obs_name[k]);
        put(&b, "%s", head);
        put(&b, "%s\n", expr);
    }
    if (!b.s && !b.failed)
        put(&b, "%s", "");
    if (b.failed) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* ---- the protocol's hierarchical fixture, as text */

static void number(sbuf *b, double v)
{
    char s[48];
    snprintf(s, sizeof s, v < 0 ? "(%.17g)" : "%.17g", v);
    put(b, "%s", s);
}

bl_status bl_ode_lang_hierarchical(unsigned G, unsigned S, int coupled, bl_ode_lang_source *src, bl_error *err)
{
    memset(src, 0, sizeof *src);
    if (G < 1 || G > 64 || S < 1 || S > 64 || (size_t)G * S > BL_EQ_MAX_VARS)
        return bl_fail(err, BL_ERR_INVALID, "hierarchical: groups %u x stages %u must be 1..64 each, at most %u states",
                       G, S, BL_EQ_MAX_VARS);
    const size_t n = (size_t)G * S, np = n + G;
    char **pn = calloc(np, sizeof *pn), **in = calloc(n, sizeof *in);
    double *pv = calloc(np, sizeof *pv), *iv = calloc(n, sizeof *iv);
    sbuf b = {0};
    char nm[64];
    int bad = !pn || !in || !pv || !iv;
    for (size_t g = 0; !bad && g < G; g++) {
        for (size_t s = 0; s < S; s++) {
            snprintf(nm, sizeof nm, "k_%zu_%zu", g, s);
            pn[g * S + s] = strdup(nm);
            pv[g * S + s] = 0.5 + 0.25 * (double)((g + 2 * s) % 4);
            snprintf(nm, sizeof nm, "x_%zu_%zu", g, s);
            in[g * S + s] = strdup(nm);
            iv[g * S + s] = 0.125 * (double)(s + 1);
            bad |= !pn[g * S + s] || !in[g * S + s];
        }
        snprintf(nm, sizeof nm, "u_%zu", g);
        pn[n + g] = strdup(nm);
        pv[n + g] = 1.0 + 0.5 * (double)(g % 3);
        bad |= !pn[n + g];
    }
    for (size_t g = 0; !bad && g < G; g++) {
        snprintf(nm, sizeof nm, "dx_%zu_0/dt = ", g);
        put(&b, "%s", nm);
        /* (u - k x) + c, c the sum in h order of W[g,h] sat(x[h,S-1]) over
         * the nonzero W (a zero term adds nothing to a nonzero sum). */
        snprintf(nm, sizeof nm, "(u_%zu - k_%zu_0 * x_%zu_0)", g, g, g);
        put(&b, "%s", nm);
        int first = 1;
        for (size_t h = 0; coupled && h < G; h++) {
            const double w = g == h ? 0.0 : (double)((int)((g * 7 + h * 3) % 5) - 2) * 0.25 / (double)G;
            if (w == 0.0)
                continue;
            put(&b, "%s", first ? " + (" : " + ");
            number(&b, w);
            snprintf(nm, sizeof nm, " * (x_%zu_%u / (1 + x_%zu_%u * x_%zu_%u))", h, S - 1, h, S - 1, h, S - 1);
            put(&b, "%s", nm);
            first = 0;
        }
        put(&b, "%s", first ? " : 1\n" : ") : 1\n");
        for (size_t s = 1; s < S; s++) {
            snprintf(nm, sizeof nm, "dx_%zu_%zu/dt = ", g, s);
            put(&b, "%s", nm);
            snprintf(nm, sizeof nm, "k_%zu_%zu * x_%zu_%zu", g, s - 1, g, s - 1);
            put(&b, "%s", nm);
            snprintf(nm, sizeof nm, " - k_%zu_%zu * x_%zu_%zu : 1\n", g, s, g, s);
            put(&b, "%s", nm);
        }
    }
    if (bad || b.failed || !b.s) {
        free(b.s);
        for (size_t k = 0; pn && k < np; k++)
            free(pn[k]);
        for (size_t k = 0; in && k < n; k++)
            free(in[k]);
        free(pn), free(in), free(pv), free(iv);
        return bl_fail(err, BL_ERR_NOMEM, "hierarchical: out of memory");
    }
    src->equations = b.s;
    src->n_params = np;
    src->param_names = (const char *const *)pn;
    src->param_values = pv;
    src->n_init = n;
    src->init_names = (const char *const *)in;
    src->init_values = iv;
    return BL_OK;
}

void bl_ode_lang_fixture_free(bl_ode_lang_source *src)
{
    if (!src)
        return;
    for (size_t k = 0; src->param_names && k < src->n_params; k++)
        free((char *)src->param_names[k]);
    for (size_t k = 0; src->init_names && k < src->n_init; k++)
        free((char *)src->init_names[k]);
    free((char *)src->equations);
    free((void *)src->param_names);
    free((void *)src->init_names);
    free((void *)src->param_values);
    free((void *)src->init_values);
    memset(src, 0, sizeof *src);
}
