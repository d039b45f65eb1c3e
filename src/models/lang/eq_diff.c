/* Symbolic differentiation of the expression graph: d e / d v as a new tree
 * in the same arena, which the lowering turns into instructions like any
 * other (so a Jacobian entry is computed by the interpreter, operation by
 * operation, and an independent evaluation of the same formula in the same
 * order gives the same bits).
 *
 * The rules, with D(a) the derivative of a:
 *   D(a + b) = D(a) + D(b)          D(a - b) = D(a) - D(b)       D(-a) = -D(a)
 *   D(a * b) = D(a) * b + a * D(b)
 *   D(a / b) = (D(a) - (a / b) * D(b)) / b             (the node a/b itself is reused)
 *   D(a ** c) = (c * a ** (c - 1)) * D(a)               c not reading v; c - 1 folded
 *   D(a ** b) = a ** b * (D(b) * log(a) + b * (D(a) / a))   otherwise
 *   D(exp a) = exp(a) * D(a)   D(log a) = D(a) / a   D(sqrt a) = D(a) / (2 * sqrt(a))
 *   D(sin a) = cos(a) * D(a)   D(cos a) = (-sin(a)) * D(a)
 *   D(tanh a) = (1 - tanh(a) * tanh(a)) * D(a)
 *   D(abs a) = ((a > 0) - (a < 0)) * D(a)               (the sign; 0 at 0)
 *   D(clip(a, lo, hi)) = D(lo) if a < lo, else D(hi) if a > hi, else D(a)
 *   D(c ? a : b) = c ? D(a) : D(b)
 *   comparisons, and/or/not, int, floor, ceil: 0 (piecewise constant)
 *
 * Simplification, exact only. A tree that does not read v has the
 * structural zero EQ_DZERO as its derivative, and a term with a structural
 * zero factor is left out (D(k * x) / dk = x, not 1 * x + k * 0): this is the
 * derivative of the function, where evaluating "k * 0" would give NaN for an
 * infinite k. No numeric zero is ever dropped: x * 0 is not 0 for x = inf or
 * nan, and x + 0 is not x for x = -0, so neither rewrite is made. The only
 * other rewrites are multiplications by the literal 1 and a ** 1 -> a and
 * a ** 0 -> 1, which IEEE arithmetic makes exact for every value
 * (pow(x, 1) = x and pow(x, 0) = 1 even for NaN). */
#include <math.h>
#include <string.h>

#include "models/lang/eq_impl.h"

typedef struct diff {
    bl_eq_model *m;
    int32_t var;
    int32_t *memo;
    uint32_t n_memo;
    bl_error *err;
    int failed;
} diff;

static int is_one(const bl_eq_model *m, int32_t n)
{
    return n >= 0 && m->nodes[n].kind == N_NUM && m->nodes[n].num == 1.0;
}

static int32_t chk(diff *d, int32_t n)
{
    if (n == -1)
        d->failed = 1;
    return n;
}

static int32_t num(diff *d, double v) { return chk(d, eq_num(d->m, v, d->err)); }

static int32_t node2(diff *d, eq_kind k, int32_t a, int32_t b)
{
    if (d->failed || a < 0 || (b < 0 && k != N_NEG && k != N_CALL && k != N_NOT))
        return d->failed = 1, -1;
    return chk(d, eq_node_new(d->m, k, a, b, d->err));
}

static int32_t add(diff *d, int32_t a, int32_t b)
{
    if (a == EQ_DZERO)
        return b;
    if (b == EQ_DZERO)
        return a;
    return node2(d, N_ADD, a, b);
}

static int32_t neg(diff *d, int32_t a)
{
    return a == EQ_DZERO ? EQ_DZERO : node2(d, N_NEG, a, -1);
}

static int32_t sub(diff *d, int32_t a, int32_t b)
{
    if (b == EQ_DZERO)
        return a;
    if (a == EQ_DZERO)
        return neg(d, b);
    return node2(d, N_SUB, a, b);
}

static int32_t mul(diff *d, int32_t a, int32_t b)
{
    if (a == EQ_DZERO || b == EQ_DZERO)
        return EQ_DZERO;
    if (is_one(d->m, a))
        return b;
    if (is_one(d->m, b))
        return a;
    return node2(d, N_MUL, a, b);
}

static int32_t dvd(diff *d, int32_t a, int32_t b)
{
    if (a == EQ_DZERO)
        return EQ_DZERO;
    return node2(d, N_DIV, a, b);
}

static int32_t call(diff *d, eq_fn fn, int32_t a)
{
    int32_t n = node2(d, N_CALL, a, -1);
    if (n >= 0)
        d->m->nodes[n].fn = (uint8_t)fn;
    return n;
}

static int32_t sel(diff *d, int32_t c, int32_t a, int32_t b)
{
    if (a == EQ_DZERO && b == EQ_DZERO)
        return EQ_DZERO;
    if (a == EQ_DZERO)
        a = num(d, 0.0);
    if (b == EQ_DZERO)
        b = num(d, 0.0);
    int32_t n = node2(d, N_SEL, c, a);
    if (n < 0 || b < 0)
        return d->failed = 1, -1;
    return chk(d, eq_node_set_c(d->m, n, b, d->err));
}

static int32_t rec(diff *d, int32_t n)
{
    if (d->failed)
        return -1;
    if ((uint32_t)n < d->n_memo && d->memo[n] != EQ_DMEMO_UNSET)
        return d->memo[n];
    const eq_node x = d->m->nodes[n];
    int32_t r = EQ_DZERO;
    switch (x.kind) {
    case N_NUM: break;
    case N_SYM:
        if (x.sym == d->var)
            r = num(d, 1.0);
        else if (d->m->syms[x.sym].kind == S_SUBEXPR) {
            bl_fail(d->err, BL_ERR_INTERNAL, "model: differentiation reached the subexpression %s uninlined",
                    d->m->syms[x.sym].name);
            d->failed = 1;
            r = -1;
        }
        break;
    case N_NEG: r = neg(d, rec(d, x.a)); break;
    case N_ADD: {
        int32_t da = rec(d, x.a), db = rec(d, x.b);
        r = add(d, da, db);
        break;
    }
    case N_SUB: {
        int32_t da = rec(d, x.a), db = rec(d, x.b);
        r = sub(d, da, db);
        break;
    }
    case N_MUL: {
        int32_t da = rec(d, x.a), db = rec(d, x.b);
        r = add(d, mul(d, da, x.b), mul(d, x.a, db));
        break;
    }
    case N_DIV: {
        int32_t da = rec(d, x.a), db = rec(d, x.b);
        r = db == EQ_DZERO ? dvd(d, da, x.b) : dvd(d, sub(d, da, mul(d, n, db)), x.b);
        break;
    }
    case N_POW: {
        int32_t da = rec(d, x.a), db = rec(d, x.b);
        if (db == EQ_DZERO) {
            if (da == EQ_DZERO)
                break;
            int32_t p; /* a ** (c - 1) */
            if (d->m->nodes[x.b].kind == N_NUM) {
                const double e1 = d->m->nodes[x.b].num - 1.0;
                p = e1 == 1.0 ? x.a : e1 == 0.0 ? num(d, 1.0) : node2(d, N_POW, x.a, num(d, e1));
            } else {
                p = node2(d, N_POW, x.a, node2(d, N_SUB, x.b, num(d, 1.0)));
            }
            r = mul(d, mul(d, x.b, p), da);
        } else {
            r = mul(d, n, add(d, mul(d, db, call(d, F_LOG, x.a)), mul(d, x.b, dvd(d, da, x.a))));
        }
        break;
    }
    case N_CALL: {
        int32_t da = rec(d, x.a);
        switch ((eq_fn)x.fn) {
        case F_EXP: r = mul(d, n, da); break;
        case F_LOG: r = dvd(d, da, x.a); break;
        case F_SQRT: r = da == EQ_DZERO ? EQ_DZERO : dvd(d, da, node2(d, N_MUL, num(d, 2.0), n)); break;
        case F_SIN: r = da == EQ_DZERO ? EQ_DZERO : mul(d, call(d, F_COS, x.a), da); break;
        case F_COS: r = da == EQ_DZERO ? EQ_DZERO : mul(d, neg(d, call(d, F_SIN, x.a)), da); break;
        case F_TANH: r = da == EQ_DZERO ? EQ_DZERO : mul(d, node2(d, N_SUB, num(d, 1.0), node2(d, N_MUL, n, n)), da); break;
        case F_ABS:
            if (da != EQ_DZERO) {
                int32_t z = num(d, 0.0);
                r = mul(d, node2(d, N_SUB, node2(d, N_GT, x.a, z), node2(d, N_LT, x.a, z)), da);
            }
            break;
        case F_CLIP: {
            int32_t dlo = rec(d, x.b), dhi = rec(d, x.c);
            if (da == EQ_DZERO && dlo == EQ_DZERO && dhi == EQ_DZERO)
                break;
            r = sel(d, node2(d, N_LT, x.a, x.b), dlo, sel(d, node2(d, N_GT, x.a, x.c), dhi, da));
            break;
        }
        default: break; /* int, floor, ceil: piecewise constant */
        }
        break;
    }
    case N_SEL: {
        int32_t db = rec(d, x.b), dc = rec(d, x.c);
        r = sel(d, x.a, db, dc);
        break;
    }
    default: break; /* comparisons, and, or, not */
    }
    if (d->failed)
        return -1;
    if ((uint32_t)n < d->n_memo)
        d->memo[n] = r;
    return r;
}

int32_t eq_diff(bl_eq_model *m, int32_t node, int32_t var_sym, int32_t *memo, uint32_t n_memo, bl_error *err)
{
    diff d = {m, var_sym, memo, n_memo, err, 0};
    int32_t r = rec(&d, node);
    if (d.failed && err && err->status == BL_OK)
        bl_fail(err, BL_ERR_INTERNAL, "model: differentiation failed");
    return d.failed ? -1 : r;
}
