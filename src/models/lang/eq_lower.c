/* Lowering: a syntax tree (a DAG once the methods have shared subtrees)
 * becomes a flat list of instructions over double registers, children
 * before parents, left before right: one fixed evaluation order. A subtree
 * of numbers, parameters, units and dt is evaluated once here, with the
 * same operations (eq_apply) in the same order the instructions would use,
 * so a constant has the bits the update would have computed; Brian2 hoists
 * such loop invariants too. Within one block of the state update (and
 * within one statement elsewhere) a node shared by several expressions is
 * computed once: the same operation on the same inputs, so the same bits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/lang/eq_impl.h"

void eq_render(const bl_eq_model *m, int32_t n, char *buf, size_t size);

typedef struct lower {
    bl_eq_model *m;
    eq_prog *p;
    uint32_t *memo_gen, gen;
    uint32_t *memo_reg;
    uint32_t n_memo;
    uint32_t *sym_reg; /* S_TEMP: its register, 0 until computed */
    uint32_t next_temp;
    unsigned depth;
    bl_error *err;
    /* Value numbering (eq_lower_many only): an instruction with the same
     * operation on the same registers as an earlier one reuses its result.
     * Registers of these programs are written once, so this is exact: the
     * same IEEE operation on the same values gives the same bits. */
    uint32_t *vn; /* open addressing: index into the program + 1, 0 empty */
    uint32_t vn_cap, vn_used;
} lower;

static uint32_t vn_hash(uint8_t op, uint32_t a, uint32_t b, uint32_t c)
{
    uint64_t h = (uint64_t)op * 0x9E3779B97F4A7C15u;
    h = (h ^ a) * 0xBF58476D1CE4E5B9u;
    h = (h ^ b) * 0x94D049BB133111EBu;
    h = (h ^ c) * 0x9E3779B97F4A7C15u;
    return (uint32_t)(h >> 32);
}

/* The slot of (op, a, b, c): its match, or the empty slot to fill. */
static uint32_t *vn_slot(lower *L, uint8_t op, uint32_t a, uint32_t b, uint32_t c)
{
    const eq_insn *code = L->p->code;
    for (uint32_t i = vn_hash(op, a, b, c) & (L->vn_cap - 1);; i = (i + 1) & (L->vn_cap - 1)) {
        uint32_t k = L->vn[i];
        if (!k)
            return &L->vn[i];
        const eq_insn *x = &code[k - 1];
        if (x->op == op && x->a == a && x->b == b && x->c == c)
            return &L->vn[i];
    }
}

static bl_status vn_grow(lower *L)
{
    uint32_t cap = L->vn_cap ? 2 * L->vn_cap : 1024, *old = L->vn, old_cap = L->vn_cap;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t)
        return bl_fail(L->err, BL_ERR_NOMEM, "model: out of memory");
    L->vn = t;
    L->vn_cap = cap;
    for (uint32_t i = 0; i < old_cap; i++)
        if (old[i]) {
            const eq_insn *x = &L->p->code[old[i] - 1];
            *vn_slot(L, x->op, x->a, x->b, x->c) = old[i];
        }
    free(old);
    return BL_OK;
}

static bl_status emit(lower *L, uint8_t op, uint32_t dst, uint32_t a, uint32_t b, uint32_t c)
{
    eq_prog *p = L->p;
    if (p->n_code >= BL_EQ_MAX_INSNS)
        return bl_fail(L->err, BL_ERR_INVALID, "model: a compiled block is longer than %u instructions", BL_EQ_MAX_INSNS);
    if (p->n_code == p->cap_code) {
        uint32_t cap = p->cap_code ? 2 * p->cap_code : 64;
        eq_insn *c2 = realloc(p->code, cap * sizeof *c2);
        if (!c2)
            return bl_fail(L->err, BL_ERR_NOMEM, "model: out of memory for instructions");
        p->code = c2;
        p->cap_code = cap;
    }
    eq_insn *i = &p->code[p->n_code++];
    i->op = op;
    i->dst = dst;
    i->a = a;
    i->b = b;
    i->c = c;
    return BL_OK;
}

static bl_status const_reg(lower *L, double v, int32_t node, uint32_t *out)
{
    bl_eq_model *m = L->m;
    for (uint32_t k = 0; k < m->n_consts; k++)
        if (!memcmp(&m->consts[k], &v, sizeof v)) {
            *out = EQ_CBASE + k;
            return BL_OK;
        }
    if (m->n_consts >= EQ_MAX_CONSTS)
        return bl_fail(L->err, BL_ERR_INVALID, "model: more than %u constants", EQ_MAX_CONSTS);
    char text[256];
    text[0] = '\0';
    if (node >= 0)
        eq_render(m, node, text, sizeof text);
    m->const_text[m->n_consts] = strdup(text);
    if (!m->const_text[m->n_consts])
        return bl_fail(L->err, BL_ERR_NOMEM, "model: out of memory");
    m->consts[m->n_consts] = v;
    *out = EQ_CBASE + m->n_consts++;
    return BL_OK;
}

static int is_const_reg(uint32_t r) { return r >= EQ_CBASE && r < EQ_TBASE; }

static bl_status temp_reg(lower *L, uint32_t *out)
{
    if (L->next_temp - EQ_TBASE >= BL_EQ_MAX_INSNS + BL_EQ_MAX_VARS)
        return bl_fail(L->err, BL_ERR_INVALID, "model: too many temporaries");
    *out = L->next_temp++;
    return BL_OK;
}

static bl_status node_reg(lower *L, int32_t n, uint32_t *out);

static bl_status sym_reg(lower *L, int32_t n, uint32_t *out)
{
    bl_eq_model *m = L->m;
    const eq_sym *s = &m->syms[m->nodes[n].sym];
    switch (s->kind) {
    case S_STATE:
    case S_PARAM_N: *out = EQ_VBASE + (uint32_t)s->slot; return BL_OK;
    case S_CONST:
    case S_UNIT: return const_reg(L, s->value, n, out);
    case S_DT: return const_reg(L, m->dt, n, out);
    case S_T: *out = R_T; return BL_OK;
    case S_I: *out = R_I; return BL_OK;
    case S_NR: *out = R_NR; return BL_OK;
    case S_EXTERN:
        *out = !strcmp(s->name, "w") ? R_W : !strcmp(s->name, "count") ? R_COUNT : !strcmp(s->name, "weight") ? R_EWEIGHT : R_SIGN;
        return BL_OK;
    case S_XI: {
        bl_status st = temp_reg(L, out);
        if (!st)
            st = emit(L, O_XI, *out, s->xi_index, 0, 0);
        if (!st)
            L->p->n_xi = L->p->n_xi > (uint32_t)s->xi_index + 1 ? L->p->n_xi : (uint32_t)s->xi_index + 1;
        m->uses_noise = 1;
        return st;
    }
    case S_SUBEXPR: {
        if (++L->depth > BL_EQ_MAX_VARS + BL_EQ_MAX_DEPTH)
            return bl_fail(L->err, BL_ERR_INVALID, "model: subexpressions nested too deep");
        bl_status st = node_reg(L, s->expr, out);
        L->depth--;
        return st;
    }
    case S_OPARAM: *out = EQ_TBASE + (uint32_t)s->slot; return BL_OK;
    case S_TEMP:
        if (!L->sym_reg[m->nodes[n].sym])
            return bl_fail(L->err, BL_ERR_INTERNAL, "model: temporary %s read before it is computed", s->name);
        *out = L->sym_reg[m->nodes[n].sym];
        return BL_OK;
    default: return bl_fail(L->err, BL_ERR_INTERNAL, "model: '%s' cannot be read here", s->name);
    }
}

static bl_status node_reg(lower *L, int32_t n, uint32_t *out)
{
    bl_eq_model *m = L->m;
    if ((uint32_t)n < L->n_memo && L->memo_gen[n] == L->gen) {
        *out = L->memo_reg[n];
        return BL_OK;
    }
    const eq_node x = m->nodes[n];
    bl_status st;
    if (x.kind == N_NUM) {
        st = const_reg(L, x.num, n, out);
    } else if (x.kind == N_SYM) {
        st = sym_reg(L, n, out);
    } else {
        uint32_t ra = 0, rb = 0, rc = 0;
        if ((x.a >= 0 && (st = node_reg(L, x.a, &ra))) || (x.b >= 0 && (st = node_reg(L, x.b, &rb))) ||
            (x.c >= 0 && (st = node_reg(L, x.c, &rc))))
            return st;
        uint8_t op = (uint8_t)eq_node_op(&x);
        if ((x.a < 0 || is_const_reg(ra)) && (x.b < 0 || is_const_reg(rb)) && (x.c < 0 || is_const_reg(rc))) {
            const double *k = m->consts;
            double v = eq_apply(op, x.a >= 0 ? k[ra - EQ_CBASE] : 0, x.b >= 0 ? k[rb - EQ_CBASE] : 0,
                                x.c >= 0 ? k[rc - EQ_CBASE] : 0);
            st = const_reg(L, v, n, out);
        } else if (L->vn) {
            /* Unused operands are 0 in every instruction, so they compare equal. */
            const uint32_t a = x.a >= 0 ? ra : 0, b = x.b >= 0 ? rb : 0, c = x.c >= 0 ? rc : 0;
            st = BL_OK;
            if (2 * (L->vn_used + 1) > L->vn_cap)
                st = vn_grow(L);
            uint32_t *slot = st ? NULL : vn_slot(L, op, a, b, c);
            if (slot && *slot) {
                *out = L->p->code[*slot - 1].dst;
            } else if (slot && !(st = temp_reg(L, out)) && !(st = emit(L, op, *out, a, b, c))) {
                *slot = L->p->n_code;
                L->vn_used++;
            }
        } else if (!(st = temp_reg(L, out))) {
            st = emit(L, op, *out, ra, rb, rc);
        }
    }
    if (!st && (uint32_t)n < L->n_memo) {
        L->memo_gen[n] = L->gen;
        L->memo_reg[n] = *out;
    }
    return st;
}

static bl_status lower_open(lower *L, bl_eq_model *m, eq_prog *p, bl_error *err)
{
    memset(L, 0, sizeof *L);
    L->m = m;
    L->p = p;
    L->err = err;
    L->gen = 1;
    L->next_temp = EQ_TBASE + m->n_oparams; /* an ODE system's parameters sit first */
    L->n_memo = m->n_nodes;
    L->memo_gen = calloc((size_t)m->n_nodes + 1, sizeof *L->memo_gen);
    L->memo_reg = calloc((size_t)m->n_nodes + 1, sizeof *L->memo_reg);
    L->sym_reg = calloc((size_t)m->n_syms + 1, sizeof *L->sym_reg);
    if (!L->memo_gen || !L->memo_reg || !L->sym_reg)
        return bl_fail(err, BL_ERR_NOMEM, "model: out of memory");
    return BL_OK;
}

static void lower_close(lower *L)
{
    if (L->next_temp > L->m->n_regs)
        L->m->n_regs = L->next_temp;
    free(L->memo_gen);
    free(L->memo_reg);
    free(L->sym_reg);
    free(L->vn);
}

bl_status eq_lower_update(bl_eq_model *m, const eq_update *u, bl_error *err)
{
    lower L;
    bl_status st = lower_open(&L, m, &m->update, err);
    uint32_t rnew[BL_EQ_MAX_VARS];
    m->update_consts_lo = m->n_consts;
    for (uint32_t k = 0; !st && k < u->n_tmp; k++) {
        uint32_t r;
        if (!(st = node_reg(&L, u->tmp_expr[k], &r)))
            L.sym_reg[u->tmp_sym[k]] = r;
    }
    for (uint32_t s = 0; !st && s < m->n_vars; s++)
        if (u->new_expr[s] >= 0)
            st = node_reg(&L, u->new_expr[s], &rnew[s]);
    for (uint32_t s = 0; !st && s < m->n_vars; s++)
        if (u->new_expr[s] >= 0 && rnew[s] != EQ_VBASE + s)
            st = emit(&L, O_MOV, EQ_VBASE + s, rnew[s], 0, 0);
    m->update_consts_hi = m->n_consts;
    lower_close(&L);
    return st;
}

bl_status eq_lower_expr(bl_eq_model *m, eq_prog *p, int32_t node, bl_error *err)
{
    lower L;
    /* Subexpressions inlined first: every tree lowered is then bounded in height. */
    if ((node = eq_expand(m, node, err)) < 0)
        return err->status;
    bl_status st = lower_open(&L, m, p, err);
    if (!st)
        st = node_reg(&L, node, &p->result);
    lower_close(&L);
    return st;
}

bl_status eq_lower_many(bl_eq_model *m, eq_prog *p, const int32_t *node, uint32_t n, uint32_t *out, bl_error *err)
{
    lower L;
    bl_status st = lower_open(&L, m, p, err);
    if (!st && p->n_code)
        st = bl_fail(err, BL_ERR_INTERNAL, "model: eq_lower_many into a program that is not empty");
    if (!st)
        st = vn_grow(&L);
    for (uint32_t k = 0; !st && k < n; k++)
        if (node[k] >= 0)
            st = node_reg(&L, node[k], &out[k]);
    lower_close(&L);
    return st;
}

/* Statements run in order, each seeing the ones before: x op= e commits x
 * before the next statement is computed. */
bl_status eq_lower_stmts(bl_eq_model *m, eq_prog *p, const eq_stmt *s, uint32_t n, bl_error *err)
{
    lower L;
    int32_t *ex = malloc((n ? n : 1) * sizeof *ex);
    if (!ex)
        return bl_fail(err, BL_ERR_NOMEM, "model: out of memory");
    for (uint32_t k = 0; k < n; k++)
        if ((ex[k] = eq_expand(m, s[k].expr, err)) < 0) {
            free(ex);
            return err->status;
        }
    bl_status st = lower_open(&L, m, p, err);
    for (uint32_t k = 0; !st && k < n; k++) {
        L.gen++;
        uint32_t r, x = EQ_VBASE + (uint32_t)m->syms[s[k].sym].slot, v = 0;
        if ((st = node_reg(&L, ex[k], &r)))
            break;
        static const uint8_t ops[] = {[T_PLUSEQ] = O_ADD, [T_MINUSEQ] = O_SUB, [T_STAREQ] = O_MUL, [T_SLASHEQ] = O_DIV};
        if (s[k].op == T_ASSIGN) {
            st = emit(&L, O_MOV, x, r, 0, 0);
        } else if (!(st = temp_reg(&L, &v)) && !(st = emit(&L, ops[s[k].op], v, x, r, 0))) {
            st = emit(&L, O_MOV, x, v, 0, 0);
        }
    }
    free(ex);
    lower_close(&L);
    return st;
}

void eq_prog_free(eq_prog *p)
{
    free(p->code);
    memset(p, 0, sizeof *p);
}

/* ---- text */

typedef struct out {
    char *buf;
    size_t size, len;
} out;

static void put(out *o, const char *s)
{
    size_t l = strlen(s);
    if (o->len + 1 >= o->size)
        return;
    if (l > o->size - o->len - 1)
        l = o->size - o->len - 1;
    memcpy(o->buf + o->len, s, l);
    o->len += l;
    o->buf[o->len] = '\0';
}

static void render(const bl_eq_model *m, int32_t n, out *o, unsigned depth)
{
    static const char *const fns[F_NFN] = {"exp", "log", "sqrt", "abs", "clip", "sin", "cos", "tanh", "int", "floor", "ceil"};
    static const char *const bins[] = {[N_ADD] = " + ", [N_SUB] = " - ", [N_MUL] = " * ", [N_DIV] = " / ",
                                       [N_POW] = " ** ", [N_LT] = " < ", [N_GT] = " > ", [N_LE] = " <= ",
                                       [N_GE] = " >= ", [N_EQ] = " == ", [N_NE] = " != ", [N_AND] = " and ",
                                       [N_OR] = " or "};
    if (n < 0 || o->len + 1 >= o->size)
        return;
    if (depth > 200) {
        put(o, "...");
        return;
    }
    const eq_node *x = &m->nodes[n];
    char num[40];
    switch (x->kind) {
    case N_NUM: snprintf(num, sizeof num, "%.17g", x->num); put(o, num); return;
    case N_SYM: put(o, m->syms[x->sym].name); return;
    case N_NEG: put(o, "(-"); render(m, x->a, o, depth + 1); put(o, ")"); return;
    case N_NOT: put(o, "(not "); render(m, x->a, o, depth + 1); put(o, ")"); return;
    case N_CALL:
        put(o, fns[x->fn]);
        put(o, "(");
        render(m, x->a, o, depth + 1);
        if (x->b >= 0) {
            put(o, ", ");
            render(m, x->b, o, depth + 1);
            put(o, ", ");
            render(m, x->c, o, depth + 1);
        }
        put(o, ")");
        return;
    case N_SEL:
        put(o, "(");
        render(m, x->b, o, depth + 1);
        put(o, " if ");
        render(m, x->a, o, depth + 1);
        put(o, " else ");
        render(m, x->c, o, depth + 1);
        put(o, ")");
        return;
    default:
        put(o, "(");
        render(m, x->a, o, depth + 1);
        put(o, bins[x->kind]);
        render(m, x->b, o, depth + 1);
        put(o, ")");
        return;
    }
}

void eq_render(const bl_eq_model *m, int32_t n, char *buf, size_t size)
{
    out o = {buf, size, 0};
    if (size)
        buf[0] = '\0';
    render(m, n, &o, 0);
}
