/* Lexer and parser of the model language: Brian2's equation syntax and
 * Python's expression grammar (and its precedence: -x**2 is -(x**2)), plus
 * one convenience for parameter texts: a number followed by a unit ("-52 mV")
 * is their product. Recursive descent, bounded in depth (BL_EQ_MAX_DEPTH),
 * identifier length and node count, so no input can exhaust the stack or
 * memory. Names are resolved later (eq_check.c). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/lang/eq_impl.h"

int32_t eq_node_new(bl_eq_model *m, eq_kind kind, int32_t a, int32_t b, bl_error *err)
{
    if (m->n_nodes >= BL_EQ_MAX_NODES) {
        bl_fail(err, BL_ERR_INVALID, "model: more than %u expression nodes", BL_EQ_MAX_NODES);
        return -1;
    }
    if (m->n_nodes == m->cap_nodes) {
        uint32_t cap = m->cap_nodes ? 2 * m->cap_nodes : 256;
        eq_node *n = realloc(m->nodes, cap * sizeof *n);
        if (!n) {
            bl_fail(err, BL_ERR_NOMEM, "model: out of memory for expression nodes");
            return -1;
        }
        m->nodes = n;
        m->cap_nodes = cap;
    }
    unsigned h = 0;
    if (a >= 0)
        h = m->nodes[a].height;
    if (b >= 0 && m->nodes[b].height > h)
        h = m->nodes[b].height;
    if (h + 1 > EQ_MAX_HEIGHT) {
        bl_fail(err, BL_ERR_INVALID, "model: an expression nested deeper than %u levels", EQ_MAX_HEIGHT);
        return -1;
    }
    eq_node *n = &m->nodes[m->n_nodes];
    memset(n, 0, sizeof *n);
    n->height = (uint16_t)(h + 1);
    n->kind = (uint8_t)kind;
    n->a = a;
    n->b = b;
    n->c = -1;
    n->sym = -1;
    n->block = B_GENERATED;
    if (a >= 0) {
        n->block = m->nodes[a].block;
        n->lo = m->nodes[a].lo;
        n->hi = m->nodes[a].hi;
    }
    if (b >= 0 && a >= 0 && m->nodes[b].block == n->block && m->nodes[b].hi > n->hi)
        n->hi = m->nodes[b].hi;
    return (int32_t)m->n_nodes++;
}

int32_t eq_node_set_c(bl_eq_model *m, int32_t n, int32_t c, bl_error *err)
{
    if (n < 0)
        return -1;
    m->nodes[n].c = c;
    if (c >= 0 && m->nodes[c].height >= m->nodes[n].height) {
        if (m->nodes[c].height + 1u > EQ_MAX_HEIGHT) {
            bl_fail(err, BL_ERR_INVALID, "model: an expression nested deeper than %u levels", EQ_MAX_HEIGHT);
            return -1;
        }
        m->nodes[n].height = (uint16_t)(m->nodes[c].height + 1);
    }
    return n;
}

int32_t eq_sym_find(const bl_eq_model *m, const char *name)
{
    for (uint32_t i = 0; i < m->n_syms; i++)
        if (!strcmp(m->syms[i].name, name))
            return (int32_t)i;
    return -1;
}

int32_t eq_sym_add(bl_eq_model *m, const char *name, eq_symkind kind, bl_error *err)
{
    if (m->n_syms >= BL_EQ_MAX_PARAMS + 4 * BL_EQ_MAX_VARS + 64 + 4096) {
        bl_fail(err, BL_ERR_INVALID, "model: too many names");
        return -1;
    }
    if (strlen(name) > BL_EQ_MAX_IDENT) {
        bl_fail(err, BL_ERR_INVALID, "model: name longer than %u characters", BL_EQ_MAX_IDENT);
        return -1;
    }
    if (m->n_syms == m->cap_syms) {
        uint32_t cap = m->cap_syms ? 2 * m->cap_syms : 64;
        eq_sym *s = realloc(m->syms, cap * sizeof *s);
        if (!s) {
            bl_fail(err, BL_ERR_NOMEM, "model: out of memory for names");
            return -1;
        }
        m->syms = s;
        m->cap_syms = cap;
    }
    eq_sym *s = &m->syms[m->n_syms];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->kind = (uint8_t)kind;
    s->expr = -1;
    s->slot = -1;
    s->expanded = -1;
    return (int32_t)m->n_syms++;
}

/* "<block> line L: 'the line': <what> '<term>'" (term only when the span is
 * narrower than the line). Quoted texts are cut at 80 characters. */
bl_status eq_fail_at(const bl_eq_model *m, int block, uint32_t lo, uint32_t hi, bl_error *err, bl_status st,
                     const char *what)
{
    const eq_text *t = &m->texts[block < B_NBLOCKS ? block : B_GENERATED];
    if (!t->text || lo > t->len || block == B_GENERATED)
        return bl_fail(err, st, "%s: %s", t->name ? t->name : "model", what);
    if (hi > t->len || hi < lo)
        hi = lo;
    uint32_t ls = lo, le = lo, line = 1;
    while (ls > 0 && t->text[ls - 1] != '\n')
        ls--;
    while (le < t->len && t->text[le] != '\n')
        le++;
    for (uint32_t k = 0; k < lo; k++)
        line += t->text[k] == '\n';
    while (ls < le && isspace((unsigned char)t->text[ls]))
        ls++;
    while (le > ls && isspace((unsigned char)t->text[le - 1]))
        le--;
    int ll = (int)(le - ls > 80 ? 80 : le - ls), tl = (int)(hi - lo > 80 ? 80 : hi - lo);
    if (hi > lo && (lo > ls || hi < le))
        return bl_fail(err, st, "%s line %u: '%.*s': %s '%.*s'", t->name, line, ll, t->text + ls, what, tl,
                       t->text + lo);
    return bl_fail(err, st, "%s line %u: '%.*s': %s", t->name, line, ll, t->text + ls, what);
}

/* ---- lexer */

static bl_status lex_fail(eq_parser *p, const char *what)
{
    return eq_fail_at(p->m, p->block, (uint32_t)p->tok_lo, (uint32_t)p->tok_hi, p->err, BL_ERR_FORMAT, what);
}

static bl_status next(eq_parser *p)
{
    const char *s = p->s;
    for (;;) {
        while (p->pos < p->len && (s[p->pos] == ' ' || s[p->pos] == '\t' || s[p->pos] == '\r'))
            p->pos++;
        if (p->pos < p->len && s[p->pos] == '#') {
            while (p->pos < p->len && s[p->pos] != '\n')
                p->pos++;
            continue;
        }
        /* Inside parentheses a line break continues the expression. */
        if (p->pos < p->len && s[p->pos] == '\n' && p->depth > 0) {
            p->pos++;
            continue;
        }
        if (p->pos + 1 < p->len && s[p->pos] == '\\' && s[p->pos + 1] == '\n') {
            p->pos += 2;
            continue;
        }
        break;
    }
    p->tok_lo = p->pos;
    if (p->pos >= p->len) {
        p->tok = T_END;
        p->tok_hi = p->pos;
        return BL_OK;
    }
    unsigned char c = (unsigned char)s[p->pos];
    if (isalpha(c) || c == '_') {
        size_t b = p->pos;
        while (p->pos < p->len && (isalnum((unsigned char)s[p->pos]) || s[p->pos] == '_'))
            p->pos++;
        p->tok_hi = p->pos;
        if (p->pos - b > BL_EQ_MAX_IDENT)
            return lex_fail(p, "identifier longer than 64 characters:");
        memcpy(p->tok_id, s + b, p->pos - b);
        p->tok_id[p->pos - b] = '\0';
        p->tok = T_ID;
        return BL_OK;
    }
    if (isdigit(c) || (c == '.' && p->pos + 1 < p->len && isdigit((unsigned char)s[p->pos + 1]))) {
        size_t b = p->pos;
        while (p->pos < p->len && isdigit((unsigned char)s[p->pos]))
            p->pos++;
        if (p->pos < p->len && s[p->pos] == '.') {
            p->pos++;
            while (p->pos < p->len && isdigit((unsigned char)s[p->pos]))
                p->pos++;
        }
        if (p->pos < p->len && (s[p->pos] == 'e' || s[p->pos] == 'E')) {
            size_t q = p->pos + 1;
            if (q < p->len && (s[q] == '+' || s[q] == '-'))
                q++;
            if (q < p->len && isdigit((unsigned char)s[q])) {
                while (q < p->len && isdigit((unsigned char)s[q]))
                    q++;
                p->pos = q;
            }
        }
        p->tok_hi = p->pos;
        char buf[128];
        if (p->pos - b >= sizeof buf)
            return lex_fail(p, "number longer than 127 characters:");
        memcpy(buf, s + b, p->pos - b);
        buf[p->pos - b] = '\0';
        /* strtod rounds correctly, as Python's float() does. */
        p->tok_num = strtod(buf, NULL);
        /* Python's int or float: Brian2 (SymPy's Integer or Float) tells them apart. */
        p->tok_int = !strpbrk(buf, ".eE");
        p->tok = T_NUM;
        return BL_OK;
    }
    static const struct {
        const char *t;
        eq_tok k;
    } ops[] = {{"**", T_POW}, {"+=", T_PLUSEQ}, {"-=", T_MINUSEQ}, {"*=", T_STAREQ}, {"/=", T_SLASHEQ},
               {"<=", T_LE},  {">=", T_GE},     {"==", T_EQ},      {"!=", T_NE},      {"+", T_PLUS},
               {"-", T_MINUS}, {"*", T_STAR},   {"/", T_SLASH},    {"(", T_LP},       {")", T_RP},
               {",", T_COMMA}, {":", T_COLON},  {";", T_SEMI},     {"=", T_ASSIGN},   {"<", T_LT},
               {">", T_GT},   {"\n", T_NL}};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        size_t l = strlen(ops[k].t);
        if (p->pos + l <= p->len && !memcmp(s + p->pos, ops[k].t, l)) {
            p->pos += l;
            p->tok_hi = p->pos;
            p->tok = ops[k].k;
            return BL_OK;
        }
    }
    p->tok_hi = p->pos + 1;
    return lex_fail(p, "unexpected character");
}

/* ---- expressions */

static bl_status expr(eq_parser *p, int32_t *out);

static bl_status expect(eq_parser *p, eq_tok t, const char *what)
{
    if (p->tok != t)
        return lex_fail(p, what);
    return next(p);
}

static int32_t node_at(eq_parser *p, eq_kind k, int32_t a, int32_t b, size_t lo, size_t hi)
{
    int32_t n = eq_node_new(p->m, k, a, b, p->err);
    if (n >= 0) {
        p->m->nodes[n].block = (uint8_t)p->block;
        p->m->nodes[n].lo = (uint32_t)lo;
        p->m->nodes[n].hi = (uint32_t)hi;
    }
    return n;
}

static bl_status deeper(eq_parser *p)
{
    if (++p->depth > BL_EQ_MAX_DEPTH)
        return lex_fail(p, "nested deeper than 64 levels at");
    return BL_OK;
}

static int is_keyword(const char *id) { return !strcmp(id, "and") || !strcmp(id, "or") || !strcmp(id, "not"); }

static bl_status sym_node(eq_parser *p, int32_t *out)
{
    int32_t s = eq_sym_find(p->m, p->tok_id);
    if (s < 0 && (s = eq_sym_add(p->m, p->tok_id, (eq_symkind)EQ_SYM_UNKNOWN, p->err)) < 0)
        return p->err->status;
    int32_t n = node_at(p, N_SYM, -1, -1, p->tok_lo, p->tok_hi);
    if (n < 0)
        return p->err->status;
    p->m->nodes[n].sym = s;
    *out = n;
    return next(p);
}

static const char *const fn_names[F_NFN] = {"exp", "log", "sqrt", "abs", "clip", "sin",
                                            "cos", "tanh", "int", "floor", "ceil"};
static const int fn_arity[F_NFN] = {1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1};

static bl_status power(eq_parser *p, int32_t *out);
static bl_status factor(eq_parser *p, int32_t *out);

static bl_status atom(eq_parser *p, int32_t *out)
{
    bl_status st;
    size_t lo = p->tok_lo;
    if (p->tok == T_NUM) {
        int32_t n = node_at(p, N_NUM, -1, -1, p->tok_lo, p->tok_hi);
        if (n < 0)
            return p->err->status;
        p->m->nodes[n].num = p->tok_num;
        p->m->nodes[n].fn = (uint8_t)p->tok_int; /* N_NUM: 1 for an integer literal */
        if ((st = next(p)))
            return st;
        if (p->tok == T_ID && !is_keyword(p->tok_id)) { /* "52 mV" */
            int32_t u;
            if ((st = deeper(p)) || (st = power(p, &u)))
                return st;
            p->depth--;
            n = node_at(p, N_MUL, n, u, lo, p->m->nodes[u].hi);
            if (n < 0)
                return p->err->status;
        }
        *out = n;
        return BL_OK;
    }
    if (p->tok == T_ID && !is_keyword(p->tok_id)) {
        int f = -1;
        for (int k = 0; k < F_NFN; k++)
            if (!strcmp(p->tok_id, fn_names[k]))
                f = k;
        if (f >= 0 && p->pos < p->len) {
            /* A function only when '(' follows; otherwise a name like any other. */
            size_t q = p->pos;
            while (q < p->len && (p->s[q] == ' ' || p->s[q] == '\t'))
                q++;
            if (q < p->len && p->s[q] == '(') {
                if ((st = next(p)) || (st = next(p)) || (st = deeper(p)))
                    return st;
                int32_t args[3] = {-1, -1, -1};
                int na = 0;
                for (;;) {
                    if (na == 3)
                        return lex_fail(p, "too many arguments at");
                    if ((st = expr(p, &args[na])))
                        return st;
                    na++;
                    if (p->tok != T_COMMA)
                        break;
                    if ((st = next(p)))
                        return st;
                }
                if (p->tok != T_RP)
                    return lex_fail(p, "expected ')' at");
                size_t hi = p->tok_hi;
                p->depth--;
                if ((st = next(p)))
                    return st;
                if (na != fn_arity[f]) {
                    char msg[96];
                    snprintf(msg, sizeof msg, "%s takes %d argument%s, not %d:", fn_names[f], fn_arity[f],
                             fn_arity[f] == 1 ? "" : "s", na);
                    return eq_fail_at(p->m, p->block, (uint32_t)lo, (uint32_t)hi, p->err, BL_ERR_FORMAT, msg);
                }
                int32_t n = node_at(p, N_CALL, args[0], args[1], lo, hi);
                if (n < 0)
                    return p->err->status;
                if (eq_node_set_c(p->m, n, args[2], p->err) < 0)
                    return p->err->status;
                p->m->nodes[n].fn = (uint8_t)f;
                *out = n;
                return BL_OK;
            }
        }
        return sym_node(p, out);
    }
    if (p->tok == T_LP) {
        if ((st = deeper(p)) || (st = next(p)) || (st = expr(p, out)))
            return st;
        if (p->tok != T_RP)
            return lex_fail(p, "expected ')' at");
        p->depth--;
        return next(p);
    }
    if (p->tok == T_END || p->tok == T_NL)
        return lex_fail(p, "expression ends too early");
    return lex_fail(p, "expected a number, a name or '(' at");
}

static bl_status power(eq_parser *p, int32_t *out)
{
    bl_status st;
    size_t lo = p->tok_lo;
    if ((st = atom(p, out)))
        return st;
    if (p->tok == T_POW) {
        int32_t e;
        if ((st = next(p)) || (st = deeper(p)) || (st = factor(p, &e)))
            return st;
        p->depth--;
        int32_t n = node_at(p, N_POW, *out, e, lo, p->m->nodes[e].hi);
        if (n < 0)
            return p->err->status;
        *out = n;
    }
    return BL_OK;
}

static bl_status factor(eq_parser *p, int32_t *out)
{
    bl_status st;
    if (p->tok == T_MINUS || p->tok == T_PLUS) {
        int neg = p->tok == T_MINUS;
        size_t lo = p->tok_lo;
        int32_t a;
        if ((st = next(p)) || (st = deeper(p)) || (st = factor(p, &a)))
            return st;
        p->depth--;
        if (!neg) {
            *out = a;
            return BL_OK;
        }
        int32_t n = node_at(p, N_NEG, a, -1, lo, p->m->nodes[a].hi);
        if (n < 0)
            return p->err->status;
        *out = n;
        return BL_OK;
    }
    return power(p, out);
}

static bl_status binary_chain(eq_parser *p, int32_t *out, bl_status (*sub)(eq_parser *, int32_t *), eq_tok t1,
                              eq_kind k1, eq_tok t2, eq_kind k2)
{
    bl_status st;
    size_t lo = p->tok_lo;
    if ((st = sub(p, out)))
        return st;
    while (p->tok == t1 || p->tok == t2) {
        eq_kind k = p->tok == t1 ? k1 : k2;
        int32_t b;
        if ((st = next(p)) || (st = sub(p, &b)))
            return st;
        int32_t n = node_at(p, k, *out, b, lo, p->m->nodes[b].hi);
        if (n < 0)
            return p->err->status;
        *out = n;
    }
    return BL_OK;
}

static bl_status term(eq_parser *p, int32_t *out) { return binary_chain(p, out, factor, T_STAR, N_MUL, T_SLASH, N_DIV); }
static bl_status arith(eq_parser *p, int32_t *out) { return binary_chain(p, out, term, T_PLUS, N_ADD, T_MINUS, N_SUB); }

static bl_status comparison(eq_parser *p, int32_t *out)
{
    bl_status st;
    size_t lo = p->tok_lo;
    if ((st = arith(p, out)))
        return st;
    eq_kind k;
    switch (p->tok) {
    case T_LT: k = N_LT; break;
    case T_GT: k = N_GT; break;
    case T_LE: k = N_LE; break;
    case T_GE: k = N_GE; break;
    case T_EQ: k = N_EQ; break;
    case T_NE: k = N_NE; break;
    default: return BL_OK;
    }
    int32_t b;
    if ((st = next(p)) || (st = arith(p, &b)))
        return st;
    int32_t n = node_at(p, k, *out, b, lo, p->m->nodes[b].hi);
    if (n < 0)
        return p->err->status;
    *out = n;
    return BL_OK;
}

static bl_status not_expr(eq_parser *p, int32_t *out)
{
    bl_status st;
    if (p->tok == T_ID && !strcmp(p->tok_id, "not")) {
        size_t lo = p->tok_lo;
        int32_t a;
        if ((st = next(p)) || (st = deeper(p)) || (st = not_expr(p, &a)))
            return st;
        p->depth--;
        int32_t n = node_at(p, N_NOT, a, -1, lo, p->m->nodes[a].hi);
        if (n < 0)
            return p->err->status;
        *out = n;
        return BL_OK;
    }
    return comparison(p, out);
}

static bl_status bool_chain(eq_parser *p, int32_t *out, bl_status (*sub)(eq_parser *, int32_t *), const char *kw,
                            eq_kind k)
{
    bl_status st;
    size_t lo = p->tok_lo;
    if ((st = sub(p, out)))
        return st;
    while (p->tok == T_ID && !strcmp(p->tok_id, kw)) {
        int32_t b;
        if ((st = next(p)) || (st = sub(p, &b)))
            return st;
        int32_t n = node_at(p, k, *out, b, lo, p->m->nodes[b].hi);
        if (n < 0)
            return p->err->status;
        *out = n;
    }
    return BL_OK;
}

static bl_status and_expr(eq_parser *p, int32_t *out) { return bool_chain(p, out, not_expr, "and", N_AND); }
static bl_status expr(eq_parser *p, int32_t *out) { return bool_chain(p, out, and_expr, "or", N_OR); }

/* ---- blocks */

static bl_status start(eq_parser *p, bl_eq_model *m, int block, bl_error *err)
{
    memset(p, 0, sizeof *p);
    p->m = m;
    p->block = block;
    p->s = m->texts[block].text;
    p->len = m->texts[block].len;
    p->err = err;
    if (p->len > BL_EQ_MAX_TEXT)
        return bl_fail(err, BL_ERR_INVALID, "%s: longer than %u bytes", m->texts[block].name, BL_EQ_MAX_TEXT);
    if (memchr(p->s, '\0', p->len))
        return bl_fail(err, BL_ERR_FORMAT, "%s: holds a NUL byte", m->texts[block].name);
    return next(p);
}

static bl_status skip_newlines(eq_parser *p)
{
    bl_status st;
    while (p->tok == T_NL || p->tok == T_SEMI)
        if ((st = next(p)))
            return st;
    return BL_OK;
}

bl_status eq_parse_expr_block(bl_eq_model *m, int block, int32_t *out, bl_error *err)
{
    eq_parser p;
    bl_status st;
    if ((st = start(&p, m, block, err)) || (st = skip_newlines(&p)) || (st = expr(&p, out)) ||
        (st = skip_newlines(&p)))
        return st;
    if (p.tok != T_END)
        return lex_fail(&p, "unexpected text after the expression:");
    return BL_OK;
}

bl_status eq_parse_stmts(bl_eq_model *m, int block, eq_stmt *out, uint32_t cap, uint32_t *n, bl_error *err)
{
    eq_parser p;
    bl_status st;
    *n = 0;
    if ((st = start(&p, m, block, err)) || (st = skip_newlines(&p)))
        return st;
    while (p.tok != T_END) {
        if (p.tok != T_ID || is_keyword(p.tok_id))
            return lex_fail(&p, "expected a variable to assign at");
        if (*n == cap)
            return lex_fail(&p, "too many statements at");
        eq_stmt *s = &out[*n];
        s->lo = (uint32_t)p.tok_lo;
        int32_t target;
        if ((st = sym_node(&p, &target)))
            return st;
        s->sym = m->nodes[target].sym;
        if (p.tok != T_ASSIGN && p.tok != T_PLUSEQ && p.tok != T_MINUSEQ && p.tok != T_STAREQ &&
            p.tok != T_SLASHEQ)
            return lex_fail(&p, "expected =, +=, -=, *= or /= at");
        s->op = (uint8_t)p.tok;
        if ((st = next(&p)) || (st = expr(&p, &s->expr)))
            return st;
        s->hi = m->nodes[s->expr].hi;
        (*n)++;
        if (p.tok != T_END && p.tok != T_NL && p.tok != T_SEMI)
            return lex_fail(&p, "expected ';' or a new line at");
        if ((st = skip_newlines(&p)))
            return st;
    }
    return BL_OK;
}

/* One equation line: "dx/dt = e : unit (flags)", "x = e : unit (flags)" or "x : unit (flags)". */
static bl_status equation(eq_parser *p)
{
    bl_eq_model *m = p->m;
    bl_status st;
    size_t lo = p->tok_lo;
    if (p->tok != T_ID || is_keyword(p->tok_id))
        return lex_fail(p, "an equation starts with dx/dt, a name = or a name :, not");
    char name[BL_EQ_MAX_IDENT + 1];
    snprintf(name, sizeof name, "%s", p->tok_id);
    eq_symkind kind;
    if ((st = next(p)))
        return st;
    int32_t rhs = -1;
    if (p->tok == T_SLASH && name[0] == 'd' && name[1]) {
        if ((st = next(p)))
            return st;
        if (p->tok != T_ID || strcmp(p->tok_id, "dt"))
            return lex_fail(p, "expected dt in dx/dt, not");
        if ((st = next(p)) || (st = expect(p, T_ASSIGN, "expected '=' after dx/dt, not")) || (st = expr(p, &rhs)))
            return st;
        memmove(name, name + 1, strlen(name));
        kind = S_STATE;
    } else if (p->tok == T_ASSIGN) {
        if ((st = next(p)) || (st = expr(p, &rhs)))
            return st;
        kind = S_SUBEXPR;
    } else if (p->tok == T_COLON) {
        kind = S_PARAM_N;
    } else {
        return lex_fail(p, "expected '=', ':' or /dt after the name, not");
    }
    if (p->tok != T_COLON)
        return lex_fail(p, "expected ': unit' at");
    if ((st = next(p)))
        return st;
    int32_t unit;
    if ((st = arith(p, &unit)))
        return st;
    int unless = 0;
    if (p->tok == T_LP) {
        if ((st = next(p)))
            return st;
        for (;;) {
            char flag[2 * BL_EQ_MAX_IDENT + 2] = "";
            while (p->tok == T_ID) {
                if (flag[0])
                    strcat(flag, " ");
                strcat(flag, p->tok_id);
                if ((st = next(p)))
                    return st;
                if (strlen(flag) > BL_EQ_MAX_IDENT)
                    break;
            }
            if (!strcmp(flag, "unless refractory"))
                unless = 1;
            else if (strcmp(flag, "constant"))
                return lex_fail(p, "known flags are (unless refractory) and (constant); at");
            if (p->tok != T_COMMA)
                break;
            if ((st = next(p)))
                return st;
        }
        if ((st = expect(p, T_RP, "expected ')' after the flags, not")))
            return st;
    }
    if (p->tok != T_NL && p->tok != T_END)
        return lex_fail(p, "unexpected text after the equation:");
    int32_t s = eq_sym_find(m, name);
    if (s >= 0 && m->syms[s].kind == S_CONST && kind == S_PARAM_N) {
        /* A per-neuron parameter whose starting value is in the parameter table. */
        m->syms[s].has_value = 1;
        m->syms[s].value_dim = m->syms[s].dim;
    } else if (s >= 0 && m->syms[s].kind != EQ_SYM_UNKNOWN)
        return eq_fail_at(m, p->block, (uint32_t)lo, (uint32_t)p->tok_lo, p->err, BL_ERR_INVALID,
                          "a second equation for a name already defined");
    if (s < 0 && (s = eq_sym_add(m, name, kind, p->err)) < 0)
        return p->err->status;
    if (m->n_vars + 1 > BL_EQ_MAX_VARS)
        return lex_fail(p, "more than 256 equations at");
    eq_sym *y = &m->syms[s];
    y->kind = (uint8_t)kind;
    y->expr = rhs;
    y->unless_refractory = (uint8_t)unless;
    y->lo = (uint32_t)lo;
    y->hi = (uint32_t)p->tok_lo;
    y->line = 1;
    for (size_t k = 0; k < lo; k++)
        y->line += p->s[k] == '\n';
    /* The unit: dims only (its scale is irrelevant to an equation), stored
     * in slot until eq_check resolves it. */
    y->slot = unit;
    return BL_OK;
}

bl_status eq_parse_equations(bl_eq_model *m, bl_error *err)
{
    eq_parser p;
    bl_status st;
    if ((st = start(&p, m, B_EQUATIONS, err)) || (st = skip_newlines(&p)))
        return st;
    while (p.tok != T_END) {
        if ((st = equation(&p)) || (st = skip_newlines(&p)))
            return st;
    }
    return BL_OK;
}
