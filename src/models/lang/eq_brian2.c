/* The explicit methods (euler, rk2, rk4) in the order Brian2 2.5.1's numpy
 * code generation produces, so that the update rounds as Brian2's does.
 * Brian2 builds each statement of the method as a SymPy expression, prints
 * it (StrPrinter), parses the text back as Python and rewrites that tree in
 * its code generator (brian2/codegen/optimisation.py: `collect` puts numbers
 * first, then scalars, then per-neuron terms, and loop invariants are
 * hoisted); with (unless refractory) the result is rewritten once more with
 * not_refractory = True. This file follows the same four steps, written in
 * our own words for the subset neuron models use:
 *   1. a small canonical form with SymPy's automatic rules: sums and products
 *      flattened, numbers combined, like terms and like powers combined,
 *      a number times a sum distributed; SymPy's sort keys order arguments;
 *   2. the printer's layout (terms in as_ordered_terms order, products as
 *      numerator/denominator, floats rounded to 15 significant digits) as the
 *      tree Python would parse from that text;
 *   3. Brian2's collect and arithmetic simplifications;
 *   4. the not_refractory = True pass, loop invariants kept opaque.
 * Anything outside the subset (clip, comparisons, symbolic exponents of
 * products, numbers too large for exact rationals) returns
 * BL_ERR_UNSUPPORTED and the method's text order is used instead. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/lang/eq_impl.h"

/* ---- 1. canonical form ------------------------------------------------ */

typedef enum { YI, YR, YF, YS, YA, YM, YP, YFN } ykind;

typedef struct yfn_info {
    const char *name;
    int order; /* SymPy's Function.class_key middle element */
    eq_fn fn;
} yfn_info;

static const yfn_info yfns[] = {{"exp", 10, F_EXP}, {"log", 11, F_LOG},  {"sin", 20, F_SIN}, {"cos", 21, F_COS},
                                {"tanh", 32, F_TANH}, {"sqrt", 0, F_SQRT}, {"int_", 0, F_INT}};
enum { NYFN = sizeof yfns / sizeof yfns[0] };

typedef struct ynd {
    uint8_t k, fn;
    int32_t sym;
    int64_t p, q;
    double f;
    uint32_t a, n; /* arguments: pool[a .. a+n) */
} ynd;

typedef struct yc {
    bl_eq_model *m;
    ynd *v;
    uint32_t nv, cv;
    int32_t *pool;
    uint32_t np, cp;
    int bad;
    uint32_t work;
} yc;

#define YARG(c, x, i) ((c)->pool[(c)->v[x].a + (i)])

static int32_t ynode(yc *c, int k, const int32_t *args, uint32_t n)
{
    if (c->bad || c->work == 0) {
        c->bad = 1;
        return -1;
    }
    c->work--;
    if (c->nv == c->cv) {
        uint32_t cap = c->cv ? 2 * c->cv : 256;
        ynd *v = realloc(c->v, cap * sizeof *v);
        if (!v || cap > (1u << 22)) {
            free(v == c->v ? NULL : v);
            c->bad = 1;
            return -1;
        }
        c->v = v;
        c->cv = cap;
    }
    if (c->np + n > c->cp) {
        uint32_t cap = c->cp ? 2 * c->cp : 1024;
        while (cap < c->np + n)
            cap *= 2;
        int32_t *p = realloc(c->pool, cap * sizeof *p);
        if (!p || cap > (1u << 24)) {
            c->bad = 1;
            return -1;
        }
        c->pool = p;
        c->cp = cap;
    }
    ynd *y = &c->v[c->nv];
    memset(y, 0, sizeof *y);
    y->k = (uint8_t)k;
    y->a = c->np;
    y->n = n;
    if (n)
        memcpy(c->pool + c->np, args, n * sizeof *args);
    c->np += n;
    return (int32_t)c->nv++;
}

static int isnum(const yc *c, int32_t x) { return c->v[x].k <= YF; }

static int64_t gcd64(int64_t a, int64_t b)
{
    if (a < 0)
        a = -a;
    if (b < 0)
        b = -b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int32_t yint(yc *c, int64_t p)
{
    int32_t x = ynode(c, YI, NULL, 0);
    if (x >= 0) {
        c->v[x].p = p;
        c->v[x].q = 1;
    }
    return x;
}

static int32_t yrat(yc *c, __int128 p, __int128 q)
{
    if (q == 0) {
        c->bad = 1;
        return -1;
    }
    if (q < 0)
        p = -p, q = -q;
    if (p > INT64_MAX || p < -INT64_MAX || q > INT64_MAX) {
        c->bad = 1;
        return -1;
    }
    int64_t g = gcd64((int64_t)p, (int64_t)q);
    if (g > 1)
        p /= g, q /= g;
    if (q == 1)
        return yint(c, (int64_t)p);
    int32_t x = ynode(c, YR, NULL, 0);
    if (x >= 0) {
        c->v[x].p = (int64_t)p;
        c->v[x].q = (int64_t)q;
    }
    return x;
}

static int32_t yflt(yc *c, double f)
{
    int32_t x = ynode(c, YF, NULL, 0);
    if (x >= 0)
        c->v[x].f = f;
    return x;
}

/* A Rational's value as a double: p/q correctly rounded (both exact in a double). */
static double numval(const yc *c, int32_t x)
{
    const ynd *y = &c->v[x];
    if (y->k == YF)
        return y->f;
    return (double)y->p / (double)y->q;
}

static int exact_ok(const yc *c, int32_t x) { return c->v[x].p > -(1LL << 53) && c->v[x].p < (1LL << 53) && c->v[x].q < (1LL << 53); }

static int32_t numadd(yc *c, int32_t a, int32_t b)
{
    if (a < 0 || b < 0)
        return -1;
    if (c->v[a].k == YF || c->v[b].k == YF) {
        if ((c->v[a].k != YF && !exact_ok(c, a)) || (c->v[b].k != YF && !exact_ok(c, b)))
            c->bad = 1;
        return yflt(c, numval(c, a) + numval(c, b));
    }
    return yrat(c, (__int128)c->v[a].p * c->v[b].q + (__int128)c->v[b].p * c->v[a].q,
                (__int128)c->v[a].q * c->v[b].q);
}

static int32_t nummul(yc *c, int32_t a, int32_t b)
{
    if (a < 0 || b < 0)
        return -1;
    if (c->v[a].k == YF || c->v[b].k == YF) {
        if ((c->v[a].k != YF && !exact_ok(c, a)) || (c->v[b].k != YF && !exact_ok(c, b)))
            c->bad = 1;
        return yflt(c, numval(c, a) * numval(c, b));
    }
    return yrat(c, (__int128)c->v[a].p * c->v[b].p, (__int128)c->v[a].q * c->v[b].q);
}

static int numcmp(const yc *c, int32_t a, int32_t b)
{
    if (c->v[a].k != YF && c->v[b].k != YF) {
        __int128 l = (__int128)c->v[a].p * c->v[b].q, r = (__int128)c->v[b].p * c->v[a].q;
        return (l > r) - (l < r);
    }
    double x = numval(c, a), y = numval(c, b);
    return (x > y) - (x < y);
}

static int is_int(const yc *c, int32_t x, int64_t v) { return c->v[x].k == YI && c->v[x].p == v; }
static int is_zero(const yc *c, int32_t x) { return isnum(c, x) && numval(c, x) == 0.0; }

static int yeq(const yc *c, int32_t a, int32_t b)
{
    if (a == b)
        return 1;
    const ynd *x = &c->v[a], *y = &c->v[b];
    if (x->k != y->k || x->n != y->n)
        return 0;
    switch (x->k) {
    case YI:
    case YR: return x->p == y->p && x->q == y->q;
    case YF: return !memcmp(&x->f, &y->f, sizeof x->f);
    case YS: return x->sym == y->sym;
    case YFN:
        if (x->fn != y->fn)
            return 0;
        /* fall through */
    default:
        for (uint32_t i = 0; i < x->n; i++)
            if (!yeq(c, c->pool[x->a + i], c->pool[y->a + i]))
                return 0;
        return 1;
    }
}

/* SymPy's sort_key: (class_key, args, exponent, coefficient), compared as
 * Python compares tuples. Numbers: class (1, 0, Number), then the value. */
static int key_cmp(yc *c, int32_t a, int32_t b);

typedef struct kparts {
    int32_t coeff; /* -1: one */
    int32_t core;  /* node, or a Mul viewed without its coefficient (skip = 1) */
    int skip;
    int32_t exp;   /* -1: one */
} kparts;

static void parts(const yc *c, int32_t x, kparts *k)
{
    k->coeff = -1;
    k->core = x;
    k->skip = 0;
    k->exp = -1;
    const ynd *y = &c->v[x];
    if (y->k == YM && isnum(c, c->pool[y->a])) {
        k->coeff = c->pool[y->a];
        if (y->n == 2)
            k->core = c->pool[y->a + 1];
        else
            k->skip = 1;
    }
    if (!k->skip && c->v[k->core].k == YP) {
        k->exp = YARG(c, k->core, 1);
        k->core = YARG(c, k->core, 0);
    }
}

static void class_key(const yc *c, const kparts *k, int *c1, int *c2, const char **name)
{
    if (k->skip) {
        *c1 = 3, *c2 = 0, *name = "Mul";
        return;
    }
    const ynd *y = &c->v[k->core];
    switch (y->k) {
    case YI: case YR: case YF: *c1 = 1, *c2 = 0, *name = "Number"; return;
    case YS: *c1 = 2, *c2 = 0, *name = "Symbol"; return;
    case YA: *c1 = 3, *c2 = 1, *name = "Add"; return;
    case YM: *c1 = 3, *c2 = 0, *name = "Mul"; return;
    case YP: *c1 = 3, *c2 = 2, *name = "Pow"; return;
    default: *c1 = 4, *c2 = yfns[y->fn].order, *name = yfns[y->fn].name; return;
    }
}

static int cmp_one_or(yc *c, int32_t a, int32_t b)
{
    /* -1 stands for the number one */
    if (a < 0 && b < 0)
        return 0;
    int32_t one = -1;
    if (a < 0 || b < 0)
        one = yint(c, 1);
    if (one < 0 && (a < 0 || b < 0))
        return 0;
    return key_cmp(c, a < 0 ? one : a, b < 0 ? one : b);
}

static int key_cmp(yc *c, int32_t a, int32_t b)
{
    if (c->bad)
        return 0;
    int na = isnum(c, a), nb = isnum(c, b);
    if (na && nb)
        return numcmp(c, a, b);
    if (na != nb)
        return na ? -1 : 1;
    kparts A, B;
    parts(c, a, &A);
    parts(c, b, &B);
    int a1, a2, b1, b2;
    const char *an, *bn;
    class_key(c, &A, &a1, &a2, &an);
    class_key(c, &B, &b1, &b2, &bn);
    if (a1 != b1)
        return a1 < b1 ? -1 : 1;
    if (a2 != b2)
        return a2 < b2 ? -1 : 1;
    int s = strcmp(an, bn);
    if (s)
        return s < 0 ? -1 : 1;
    /* args */
    const ynd *x = &c->v[A.core], *y = &c->v[B.core];
    if (!A.skip && x->k == YS) {
        s = strcmp(c->m->syms[x->sym].name, c->m->syms[y->sym].name);
        if (s)
            return s < 0 ? -1 : 1;
    } else if (!A.skip && isnum(c, A.core)) {
        s = numcmp(c, A.core, B.core);
        if (s)
            return s;
    } else {
        uint32_t xo = A.skip, yo = B.skip, xn = x->n - xo, yn_ = y->n - yo;
        if (xn != yn_)
            return xn < yn_ ? -1 : 1;
        for (uint32_t i = 0; i < xn; i++) {
            s = key_cmp(c, c->pool[x->a + xo + i], c->pool[y->a + yo + i]);
            if (s)
                return s;
        }
    }
    if ((s = cmp_one_or(c, A.exp, B.exp)))
        return s;
    return cmp_one_or(c, A.coeff, B.coeff);
}

static void sort_keys(yc *c, int32_t *v, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = i; j > 0 && key_cmp(c, v[j - 1], v[j]) > 0; j--) {
            int32_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

/* Add.as_ordered_terms: each term's monomial over the generators (bases of
 * its factors, sorted by sort key), terms by descending lexicographic
 * monomial, then ascending coefficient. */
#define YMAXT 64
static void order_terms(yc *c, int32_t *t, uint32_t n)
{
    if (n > YMAXT) {
        c->bad = 1;
        return;
    }
    int32_t gens[YMAXT * 8], coef[YMAXT];
    uint32_t ng = 0;
    int32_t base[YMAXT][8];
    int64_t ex[YMAXT][8];
    uint32_t nf[YMAXT];
    for (uint32_t i = 0; i < n; i++) {
        kparts k;
        nf[i] = 0;
        coef[i] = -1;
        const ynd *y = &c->v[t[i]];
        uint32_t from = 0, cnt = 1;
        int32_t single = t[i];
        if (isnum(c, t[i])) {
            coef[i] = t[i];
            cnt = 0;
        } else if (y->k == YM) {
            parts(c, t[i], &k);
            coef[i] = k.coeff;
            from = k.coeff >= 0 ? 1 : 0;
            cnt = y->n - from;
            single = -1;
        }
        if (cnt > 8) {
            c->bad = 1;
            return;
        }
        for (uint32_t j = 0; j < cnt; j++) {
            int32_t f = single >= 0 ? single : c->pool[c->v[t[i]].a + from + j];
            int32_t b = f;
            int64_t e = 1;
            if (c->v[f].k == YP && isnum(c, YARG(c, f, 1)) && c->v[YARG(c, f, 1)].k != YF) {
                int32_t ev = YARG(c, f, 1);
                b = YARG(c, f, 0);
                e = c->v[ev].p;
                if (c->v[ev].q != 1) {
                    int32_t args[2] = {b, yrat(c, 1, c->v[ev].q)};
                    b = ynode(c, YP, args, 2);
                    if (b < 0)
                        return;
                }
            }
            base[i][nf[i]] = b;
            ex[i][nf[i]++] = e;
            uint32_t g = 0;
            while (g < ng && !yeq(c, gens[g], b))
                g++;
            if (g == ng)
                gens[ng++] = b;
        }
    }
    sort_keys(c, gens, ng);
    int64_t (*mono)[YMAXT * 8] = malloc(sizeof(int64_t[YMAXT][YMAXT * 8]));
    if (!mono) {
        c->bad = 1;
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t g = 0; g < ng; g++)
            mono[i][g] = 0;
        for (uint32_t j = 0; j < nf[i]; j++)
            for (uint32_t g = 0; g < ng; g++)
                if (yeq(c, gens[g], base[i][j]))
                    mono[i][g] = ex[i][j];
    }
    /* stable insertion sort on (-monomial, coefficient) */
    uint32_t idx[YMAXT];
    for (uint32_t i = 0; i < n; i++)
        idx[i] = i;
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = i; j > 0; j--) {
            uint32_t p = idx[j - 1], q = idx[j];
            int s = 0;
            for (uint32_t g = 0; g < ng && !s; g++)
                if (mono[p][g] != mono[q][g])
                    s = mono[p][g] > mono[q][g] ? -1 : 1;
            if (!s) {
                double x = coef[p] >= 0 ? numval(c, coef[p]) : 1.0, y = coef[q] >= 0 ? numval(c, coef[q]) : 1.0;
                s = (x > y) - (x < y);
            }
            if (s <= 0)
                break;
            idx[j - 1] = q;
            idx[j] = p;
        }
    free(mono);
    int32_t out[YMAXT];
    for (uint32_t i = 0; i < n; i++)
        out[i] = t[idx[i]];
    memcpy(t, out, n * sizeof *t);
}

static int32_t ymul(yc *c, int32_t a, int32_t b);
static int32_t ymul_n(yc *c, const int32_t *ops, uint32_t nops);
static int32_t ypow(yc *c, int32_t b, int32_t e);

/* coefficient * core, the core not a number: Mul(c, core) without distributing. */
static int32_t keep_coeff(yc *c, int32_t k, int32_t core)
{
    if (is_int(c, k, 1))
        return core;
    int32_t args[YMAXT + 1];
    uint32_t n = 0;
    args[n++] = k;
    if (c->v[core].k == YM) {
        if (c->v[core].n > YMAXT) {
            c->bad = 1;
            return -1;
        }
        for (uint32_t i = 0; i < c->v[core].n; i++)
            args[n++] = YARG(c, core, i);
    } else {
        args[n++] = core;
    }
    return ynode(c, YM, args, n);
}

static int32_t yadd(yc *c, int32_t a, int32_t b)
{
    if (a < 0 || b < 0 || c->bad)
        return -1;
    int32_t in[2 * YMAXT], core[2 * YMAXT], coef[2 * YMAXT];
    uint32_t n = 0, ng = 0;
    int32_t ops[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        int32_t x = ops[k];
        if (c->v[x].k == YA) {
            if (n + c->v[x].n > 2 * YMAXT) {
                c->bad = 1;
                return -1;
            }
            for (uint32_t i = 0; i < c->v[x].n; i++)
                in[n++] = YARG(c, x, i);
        } else {
            in[n++] = x;
        }
    }
    int32_t num = yint(c, 0);
    for (uint32_t i = 0; i < n; i++) {
        int32_t t = in[i], k = -1, cr = t;
        if (isnum(c, t)) {
            num = numadd(c, num, t);
            continue;
        }
        if (c->v[t].k == YM && isnum(c, YARG(c, t, 0))) {
            k = YARG(c, t, 0);
            if (c->v[t].n == 2) {
                cr = YARG(c, t, 1);
            } else { /* copied first: a new node may move the pool */
                int32_t rest[2 * YMAXT];
                uint32_t nr = c->v[t].n - 1;
                if (nr > 2 * YMAXT) {
                    c->bad = 1;
                    return -1;
                }
                memcpy(rest, c->pool + c->v[t].a + 1, nr * sizeof *rest);
                cr = ynode(c, YM, rest, nr);
            }
        }
        if (k < 0)
            k = yint(c, 1);
        if (cr < 0 || k < 0)
            return -1;
        uint32_t g = 0;
        while (g < ng && !yeq(c, core[g], cr))
            g++;
        if (g == ng) {
            core[ng] = cr;
            coef[ng++] = k;
        } else {
            coef[g] = numadd(c, coef[g], k);
        }
    }
    if (c->bad || num < 0)
        return -1;
    int32_t out[2 * YMAXT];
    uint32_t no = 0;
    for (uint32_t g = 0; g < ng; g++) {
        if (is_zero(c, coef[g]))
            continue;
        int32_t t = keep_coeff(c, coef[g], core[g]);
        if (t < 0)
            return -1;
        out[no++] = t;
    }
    if (!is_int(c, num, 0))
        out[no++] = num;
    if (no == 0)
        return yint(c, 0);
    if (no == 1)
        return out[0];
    order_terms(c, out, no);
    return ynode(c, YA, out, no);
}

/* Mul(*ops): SymPy's Mul.flatten over all the arguments at once (a
 * substitution rebuilds a product this way, so -g/tau with g -> k/2 + g
 * stays -(k/2 + g)/tau: the number-times-a-sum rule looks only at the
 * finished product). */
static int32_t ymul_n(yc *c, const int32_t *ops, uint32_t nops)
{
    if (c->bad)
        return -1;
    int32_t in[2 * YMAXT], base[2 * YMAXT], ex[2 * YMAXT];
    uint32_t n = 0, nb = 0;
    for (uint32_t k = 0; k < nops; k++) {
        int32_t x = ops[k];
        if (x < 0)
            return -1;
        if (c->v[x].k == YM) {
            if (n + c->v[x].n > 2 * YMAXT) {
                c->bad = 1;
                return -1;
            }
            for (uint32_t i = 0; i < c->v[x].n; i++)
                in[n++] = YARG(c, x, i);
        } else {
            if (n == 2 * YMAXT) {
                c->bad = 1;
                return -1;
            }
            in[n++] = x;
        }
    }
    int32_t coeff = yint(c, 1);
    for (uint32_t i = 0; i < n; i++) {
        int32_t f = in[i], bs = f, e = -1;
        if (isnum(c, f)) {
            coeff = nummul(c, coeff, f);
            continue;
        }
        if (c->v[f].k == YP) {
            bs = YARG(c, f, 0);
            e = YARG(c, f, 1);
        } else {
            e = yint(c, 1);
        }
        uint32_t g = 0;
        while (g < nb && !yeq(c, base[g], bs))
            g++;
        if (g == nb) {
            base[nb] = bs;
            ex[nb++] = e;
        } else {
            if (!isnum(c, ex[g]) || !isnum(c, e)) {
                c->bad = 1;
                return -1;
            }
            ex[g] = numadd(c, ex[g], e);
        }
    }
    if (c->bad || coeff < 0)
        return -1;
    if (is_zero(c, coeff))
        return yint(c, 0);
    int32_t out[2 * YMAXT];
    uint32_t no = 0;
    for (uint32_t g = 0; g < nb; g++) {
        if (is_int(c, ex[g], 0))
            continue;
        int32_t f = is_int(c, ex[g], 1) ? base[g] : ypow(c, base[g], ex[g]);
        if (f < 0)
            return -1;
        if (isnum(c, f))
            coeff = nummul(c, coeff, f);
        else if (c->v[f].k == YM) { /* a power of a product: its factors join */
            for (uint32_t i = 0; i < c->v[f].n; i++) {
                int32_t q = YARG(c, f, i);
                if (isnum(c, q))
                    coeff = nummul(c, coeff, q);
                else
                    out[no++] = q;
            }
        } else
            out[no++] = f;
    }
    if (coeff < 0)
        return -1;
    sort_keys(c, out, no);
    /* SymPy: a number times exactly one sum is distributed (2*(x + y) -> 2*x + 2*y). */
    if (no == 1 && c->v[out[0]].k == YA && !is_int(c, coeff, 1)) {
        int32_t s = out[0], acc = yint(c, 0);
        for (uint32_t i = 0; i < c->v[s].n && acc >= 0; i++)
            acc = yadd(c, acc, ymul(c, coeff, YARG(c, s, i)));
        return acc;
    }
    if (no == 0)
        return coeff;
    if (no == 1 && is_int(c, coeff, 1))
        return out[0];
    int32_t args[2 * YMAXT + 1];
    uint32_t na = 0;
    if (!is_int(c, coeff, 1))
        args[na++] = coeff;
    memcpy(args + na, out, no * sizeof *out);
    return ynode(c, YM, args, na + no);
}

static int32_t ymul(yc *c, int32_t a, int32_t b)
{
    int32_t ops[2] = {a, b};
    return ymul_n(c, ops, 2);
}

static int32_t ypow(yc *c, int32_t b, int32_t e)
{
    if (b < 0 || e < 0 || c->bad)
        return -1;
    if (is_int(c, e, 0))
        return yint(c, 1);
    if (is_int(c, e, 1))
        return b;
    if (isnum(c, b) && isnum(c, e)) {
        if (c->v[e].k != YI || c->v[e].p < -2 || c->v[e].p > 8) {
            c->bad = 1;
            return -1;
        }
        int64_t k = c->v[e].p;
        if (c->v[b].k == YF) { /* one correctly rounded operation, as mpmath does */
            double f = c->v[b].f;
            if (k == 2)
                return yflt(c, f * f);
            if (k == -1)
                return yflt(c, 1.0 / f);
            c->bad = 1;
            return -1;
        }
        int32_t r = yint(c, 1);
        for (int64_t i = 0; i < (k < 0 ? -k : k); i++)
            r = nummul(c, r, b);
        if (k < 0 && r >= 0)
            r = yrat(c, c->v[r].q, c->v[r].p);
        return r;
    }
    if (c->v[b].k == YP && c->v[e].k == YI) {
        int32_t inner = YARG(c, b, 1);
        if (!isnum(c, inner)) {
            c->bad = 1;
            return -1;
        }
        return ypow(c, YARG(c, b, 0), nummul(c, inner, e));
    }
    if (c->v[b].k == YM && c->v[e].k == YI) {
        int32_t acc = yint(c, 1);
        for (uint32_t i = 0; i < c->v[b].n && acc >= 0; i++)
            acc = ymul(c, acc, ypow(c, YARG(c, b, i), e));
        return acc;
    }
    int32_t args[2] = {b, e};
    return ynode(c, YP, args, 2);
}

static int32_t yfun(yc *c, int fn, int32_t x)
{
    if (x < 0)
        return -1;
    if (isnum(c, x)) {
        if (yfns[fn].fn == F_EXP && is_int(c, x, 0))
            return yint(c, 1);
        c->bad = 1; /* SymPy would evaluate or keep it symbolic: not followed here */
        return -1;
    }
    int32_t n = ynode(c, YFN, &x, 1);
    if (n >= 0)
        c->v[n].fn = (uint8_t)fn;
    return n;
}

static int32_t ysym(yc *c, int32_t sym)
{
    int32_t n = ynode(c, YS, NULL, 0);
    if (n >= 0)
        c->v[n].sym = sym;
    return n;
}

static int sym_in(const yc *c, int32_t x, int32_t sym)
{
    if (x < 0)
        return 0;
    const ynd *y = &c->v[x];
    if (y->k == YS)
        return y->sym == sym;
    for (uint32_t i = 0; i < y->n; i++)
        if (sym_in(c, c->pool[y->a + i], sym))
            return 1;
    return 0;
}

/* expr.subs(...): every sum and product rebuilt from all its (substituted) arguments. */
static int32_t ysubst(yc *c, int32_t x, const int32_t *map, uint32_t cap, unsigned depth)
{
    if (x < 0 || c->bad || depth > EQ_MAX_HEIGHT) {
        c->bad = 1;
        return -1;
    }
    const ynd y = c->v[x];
    switch (y.k) {
    case YS: return (uint32_t)y.sym < cap && map[y.sym] >= 0 ? map[y.sym] : x;
    case YA: {
        int32_t acc = yint(c, 0);
        for (uint32_t i = 0; i < y.n && acc >= 0; i++)
            acc = yadd(c, acc, ysubst(c, c->pool[y.a + i], map, cap, depth + 1));
        return acc;
    }
    case YM: {
        int32_t args[2 * YMAXT];
        if (y.n > 2 * YMAXT) {
            c->bad = 1;
            return -1;
        }
        for (uint32_t i = 0; i < y.n; i++)
            args[i] = ysubst(c, c->pool[y.a + i], map, cap, depth + 1);
        return ymul_n(c, args, y.n);
    }
    case YP: return ypow(c, ysubst(c, c->pool[y.a], map, cap, depth + 1), ysubst(c, c->pool[y.a + 1], map, cap, depth + 1));
    case YFN: return yfun(c, y.fn, ysubst(c, c->pool[y.a], map, cap, depth + 1));
    default: return x;
    }
}

/* Our tree (subexpressions inlined) as SymPy builds it from the same text,
 * with symbols replaced through map (sym -> y node, -1 keeps). */
static int32_t from_tree(yc *c, int32_t n, const int32_t *map)
{
    if (n < 0 || c->bad)
        return -1;
    const eq_node x = c->m->nodes[n];
    int32_t a, b;
    switch (x.kind) {
    case N_NUM:
        if ((x.fn & 1) && fabs(x.num) < 9e15)
            return yint(c, (int64_t)x.num);
        return yflt(c, x.num);
    case N_SYM: {
        const eq_sym *s = &c->m->syms[x.sym];
        if (map && map[x.sym] >= 0)
            return map[x.sym];
        if (s->kind == S_EXTERN) {
            c->bad = 1;
            return -1;
        }
        return ysym(c, x.sym); /* a subexpression stays a symbol until substituted */
    }
    case N_NEG: return ymul(c, yint(c, -1), from_tree(c, x.a, map));
    case N_ADD: a = from_tree(c, x.a, map); b = from_tree(c, x.b, map); return yadd(c, a, b);
    case N_SUB:
        a = from_tree(c, x.a, map);
        b = from_tree(c, x.b, map);
        return yadd(c, a, ymul(c, yint(c, -1), b));
    case N_MUL: a = from_tree(c, x.a, map); b = from_tree(c, x.b, map); return ymul(c, a, b);
    case N_DIV:
        a = from_tree(c, x.a, map);
        b = from_tree(c, x.b, map);
        return ymul(c, a, ypow(c, b, yint(c, -1)));
    case N_POW: a = from_tree(c, x.a, map); b = from_tree(c, x.b, map); return ypow(c, a, b);
    case N_CALL:
        for (int k = 0; k < NYFN; k++)
            if (yfns[k].fn == x.fn && x.b < 0)
                return yfun(c, k, from_tree(c, x.a, map));
        c->bad = 1;
        return -1;
    default: c->bad = 1; return -1;
    }
}

/* ---- 2. the printed text, as Python parses it back ---------------------- */

typedef struct bc {
    yc *y;
    bl_eq_model *m;
    bl_error *err;
    int32_t nr_sym, dt_sym;
    /* per eq_node metadata for step 3, grown with the arena */
    uint8_t *meta; /* bit0 collected, bit1 loop invariant (opaque) */
    uint32_t n_meta;
} bc;

static int32_t mk(bc *b, eq_kind k, int32_t l, int32_t r)
{
    if (l < 0 || (r < 0 && k != N_NEG && k != N_CALL))
        return -1;
    int32_t n = eq_node_new(b->m, k, l, r, b->err);
    if (n < 0)
        b->y->bad = 1;
    return n;
}

static int32_t mknum(bc *b, double v, int integer)
{
    int32_t n = eq_node_new(b->m, N_NUM, -1, -1, b->err);
    if (n < 0) {
        b->y->bad = 1;
        return -1;
    }
    b->m->nodes[n].num = v;
    b->m->nodes[n].fn = (uint8_t)(integer ? 1 : 0);
    return n;
}

static int32_t mksym(bc *b, int32_t sym)
{
    int32_t n = eq_node_new(b->m, N_SYM, -1, -1, b->err);
    if (n < 0) {
        b->y->bad = 1;
        return -1;
    }
    b->m->nodes[n].sym = sym;
    return n;
}

static int32_t mkcall(bc *b, eq_fn fn, int32_t a)
{
    int32_t n = mk(b, N_CALL, a, -1);
    if (n >= 0)
        b->m->nodes[n].fn = (uint8_t)fn;
    return n;
}

/* SymPy prints a Float with 15 significant digits; Python reads that text. */
static double float_text(double v)
{
    char buf[40];
    snprintf(buf, sizeof buf, "%.14e", v);
    return strtod(buf, NULL);
}

static int negative(const yc *c, int32_t x)
{
    if (isnum(c, x))
        return numval(c, x) < 0;
    return c->v[x].k == YM && isnum(c, YARG(c, x, 0)) && numval(c, YARG(c, x, 0)) < 0;
}

static int32_t pr(bc *b, int32_t x);

/* A positive number as printed. */
static int32_t pr_posnum(bc *b, int32_t x)
{
    const ynd *y = &b->y->v[x];
    if (y->k == YF)
        return mknum(b, float_text(fabs(y->f)), 0);
    int64_t p = y->p < 0 ? -y->p : y->p;
    if (y->k == YI)
        return mknum(b, (double)p, 1);
    return mk(b, N_DIV, mknum(b, (double)p, 1), mknum(b, (double)y->q, 1));
}

/* A product (or number) printed; with a leading minus, Python applies it to the first factor. */
static int32_t pr_mul(bc *b, int32_t x)
{
    yc *c = b->y;
    int32_t fac[2 * YMAXT + 2], den[2 * YMAXT + 2];
    uint32_t nf = 0, nd = 0;
    int neg = negative(c, x);
    uint32_t n = c->v[x].k == YM ? c->v[x].n : 1;
    for (uint32_t i = 0; i < n; i++) {
        int32_t it = c->v[x].k == YM ? YARG(c, x, i) : x;
        if (isnum(c, it)) {
            double v = numval(c, it);
            int32_t pos = it;
            if (v < 0) { /* the sign went to the front */
                pos = nummul(c, it, yint(c, -1));
                if (pos < 0)
                    return -1;
            }
            if (c->v[pos].k == YF) {
                fac[nf++] = pr_posnum(b, pos);
            } else {
                if (c->v[pos].p != 1)
                    fac[nf++] = mknum(b, (double)c->v[pos].p, 1);
                if (c->v[pos].q != 1)
                    den[nd++] = mknum(b, (double)c->v[pos].q, 1);
            }
        } else if (c->v[it].k == YP && isnum(c, YARG(c, it, 1)) && numval(c, YARG(c, it, 1)) < 0) {
            int32_t e = YARG(c, it, 1);
            if (is_int(c, e, -1))
                den[nd++] = pr(b, YARG(c, it, 0));
            else {
                int32_t args[2] = {YARG(c, it, 0), nummul(c, e, yint(c, -1))};
                den[nd++] = pr(b, ynode(c, YP, args, 2));
            }
        } else {
            fac[nf++] = pr(b, it);
        }
        if (c->bad)
            return -1;
    }
    if (nf == 0)
        fac[nf++] = mknum(b, 1.0, 1);
    if (neg)
        fac[0] = mk(b, N_NEG, fac[0], -1);
    int32_t acc = fac[0];
    for (uint32_t i = 1; i < nf; i++)
        acc = mk(b, N_MUL, acc, fac[i]);
    if (nd) {
        int32_t d = den[0];
        for (uint32_t i = 1; i < nd; i++)
            d = mk(b, N_MUL, d, den[i]);
        acc = mk(b, N_DIV, acc, d);
    }
    return acc;
}

static int32_t pr(bc *b, int32_t x)
{
    yc *c = b->y;
    if (x < 0 || c->bad)
        return -1;
    const ynd y = c->v[x];
    switch (y.k) {
    case YI: case YR: case YF:
        return negative(c, x) ? pr_mul(b, x) : pr_posnum(b, x);
    case YS: return mksym(b, y.sym);
    case YFN: return mkcall(b, yfns[y.fn].fn, pr(b, c->pool[y.a]));
    case YM: return pr_mul(b, x);
    case YP: {
        int32_t bs = c->pool[y.a], e = c->pool[y.a + 1];
        if (isnum(c, e) && c->v[e].k == YR && c->v[e].p == 1 && c->v[e].q == 2)
            return mkcall(b, F_SQRT, pr(b, bs));
        if (isnum(c, e) && c->v[e].k == YR && c->v[e].p == -1 && c->v[e].q == 2)
            return mk(b, N_DIV, mknum(b, 1.0, 1), mkcall(b, F_SQRT, pr(b, bs)));
        if (is_int(c, e, -1))
            return mk(b, N_DIV, mknum(b, 1.0, 1), pr(b, bs));
        if (isnum(c, e) && numval(c, e) < 0 && c->v[e].k != YF)
            return pr_mul(b, x);
        return mk(b, N_POW, pr(b, bs), pr(b, e));
    }
    case YA: {
        int32_t acc = pr(b, c->pool[y.a]);
        for (uint32_t i = 1; i < y.n; i++) {
            int32_t t = c->pool[y.a + i];
            if (negative(c, t)) {
                int32_t pos = ymul(c, yint(c, -1), t);
                acc = mk(b, N_SUB, acc, pr(b, pos));
            } else {
                acc = mk(b, N_ADD, acc, pr(b, t));
            }
        }
        return acc;
    }
    default: c->bad = 1; return -1;
    }
}

/* ---- 3. Brian2's collect and arithmetic simplification ----------------- */

enum { D_INT = 0, D_FLOAT = 1, D_BOOL = 2 };

static uint8_t *meta(bc *b, int32_t n)
{
    if ((uint32_t)n >= b->n_meta) {
        uint32_t cap = b->m->cap_nodes > (uint32_t)n ? b->m->cap_nodes : (uint32_t)n + 1;
        uint8_t *p = realloc(b->meta, cap);
        if (!p) {
            b->y->bad = 1;
            static uint8_t dummy;
            return &dummy;
        }
        memset(p + b->n_meta, 0, cap - b->n_meta);
        b->meta = p;
        b->n_meta = cap;
    }
    return &b->meta[n];
}

static int is_lio(bc *b, int32_t n) { return (*meta(b, n) & 2) != 0; }

static int dtype(bc *b, int32_t n)
{
    const eq_node *x = &b->m->nodes[n];
    if (is_lio(b, n) && x->kind != N_SYM && x->kind != N_NUM)
        return D_FLOAT;
    switch (x->kind) {
    case N_NUM: return (x->fn & 1) ? D_INT : D_FLOAT;
    case N_SYM: return b->m->syms[x->sym].kind == S_NR ? D_BOOL : D_FLOAT;
    case N_CALL: return x->fn == F_INT ? D_INT : D_FLOAT;
    case N_NEG: return dtype(b, x->a);
    case N_DIV: return D_FLOAT;
    default: {
        int l = dtype(b, x->a), r = dtype(b, x->b);
        return l > r ? l : r;
    }
    }
}

static int scalar(bc *b, int32_t n)
{
    const eq_node *x = &b->m->nodes[n];
    if (is_lio(b, n))
        return 1;
    switch (x->kind) {
    case N_NUM: return 1;
    case N_SYM: {
        int k = b->m->syms[x->sym].kind;
        return k == S_CONST || k == S_UNIT || k == S_DT || k == S_T;
    }
    default:
        return (x->a < 0 || scalar(b, x->a)) && (x->b < 0 || scalar(b, x->b)) && (x->c < 0 || scalar(b, x->c));
    }
}

static int complexity_pos(bc *b, int32_t n)
{
    const eq_node *x = &b->m->nodes[n];
    return !is_lio(b, n) && x->kind != N_NUM && x->kind != N_SYM;
}

static int tree_eq(bc *b, int32_t p, int32_t q)
{
    if (p == q)
        return 1;
    if (p < 0 || q < 0)
        return 0;
    const eq_node *x = &b->m->nodes[p], *y = &b->m->nodes[q];
    if (x->kind != y->kind || x->fn != y->fn || x->sym != y->sym)
        return 0;
    if (x->kind == N_NUM && x->num != y->num)
        return 0;
    return tree_eq(b, x->a, y->a) && tree_eq(b, x->b, y->b) && tree_eq(b, x->c, y->c);
}

static int is_binop(const eq_node *x)
{
    return x->kind == N_ADD || x->kind == N_SUB || x->kind == N_MUL || x->kind == N_DIV;
}

#define BMAXT 256
typedef struct terms {
    int32_t t[BMAXT];
    uint32_t n;
} terms;

static void push(bc *b, terms *t, int32_t n)
{
    if (t->n == BMAXT) {
        b->y->bad = 1;
        return;
    }
    t->t[t->n++] = n;
}

static void collect_comm(bc *b, int32_t n, eq_kind prim, eq_kind inv, terms *tp, terms *ti, int to_inv)
{
    const eq_node x = b->m->nodes[n];
    int op_prim = x.kind == prim;
    const eq_node *L = &b->m->nodes[x.a], *R = &b->m->nodes[x.b];
    int left_exact = dtype(b, x.a) == D_FLOAT || L->kind == N_ADD || L->kind == N_SUB;
    if (!is_lio(b, x.a) && (L->kind == prim || L->kind == inv) && left_exact)
        collect_comm(b, x.a, prim, inv, tp, ti, to_inv);
    else
        push(b, to_inv ? ti : tp, x.a);
    int right_exact = dtype(b, x.b) == D_FLOAT || R->kind == N_ADD || R->kind == N_SUB;
    if (!is_lio(b, x.b) && (R->kind == prim || R->kind == inv) && right_exact)
        collect_comm(b, x.b, prim, inv, tp, ti, op_prim ? to_inv : !to_inv);
    else
        push(b, ((!to_inv && op_prim) || (to_inv && !op_prim)) ? tp : ti, x.b);
}

static int32_t reduce(bc *b, const int32_t *t, uint32_t n, eq_kind op)
{
    if (!n)
        return -1;
    int32_t acc = t[0];
    for (uint32_t i = 1; i < n; i++)
        acc = mk(b, op, acc, t[i]);
    return acc;
}

static int32_t collect(bc *b, int32_t n)
{
    const eq_node x = b->m->nodes[n];
    int mult = x.kind == N_MUL || x.kind == N_DIV;
    eq_kind prim = mult ? N_MUL : N_ADD, inv = mult ? N_DIV : N_SUB;
    double null = mult ? 1.0 : 0.0, acc = null;
    int orig = dtype(b, n);
    terms tp = {{0}, 0}, ti = {{0}, 0}, rp = {{0}, 0}, ri = {{0}, 0};
    collect_comm(b, n, prim, inv, &tp, &ti, 0);
    for (uint32_t i = 0; i < tp.n; i++) {
        const eq_node *t = &b->m->nodes[tp.t[i]];
        if (t->kind == N_NUM && !is_lio(b, tp.t[i]))
            acc = mult ? acc * t->num : acc + t->num;
        else
            push(b, &rp, tp.t[i]);
    }
    for (uint32_t i = 0; i < ti.n; i++) {
        const eq_node *t = &b->m->nodes[ti.t[i]];
        if (t->kind == N_NUM && !is_lio(b, ti.t[i]))
            acc = mult ? acc / t->num : acc - t->num;
        else
            push(b, &ri, ti.t[i]);
    }
    int32_t node = acc != null ? mknum(b, acc, 0) : -1;
    for (int sc = 1; sc >= 0; sc--) {
        int32_t p[BMAXT], q[BMAXT];
        uint32_t np = 0, nq = 0;
        for (uint32_t i = 0; i < ri.n; i++)
            if (scalar(b, ri.t[i]) == sc)
                q[nq++] = ri.t[i];
        /* Brian2 cancels a term that appears on both sides (x*y/x -> y). */
        for (uint32_t i = 0; i < rp.n; i++) {
            if (scalar(b, rp.t[i]) != sc)
                continue;
            uint32_t j = 0;
            while (j < nq && !tree_eq(b, q[j], rp.t[i]))
                j++;
            if (j < nq) {
                memmove(q + j, q + j + 1, (nq - j - 1) * sizeof *q);
                nq--;
            } else {
                p[np++] = rp.t[i];
            }
        }
        int32_t pp = reduce(b, p, np, prim), pq = reduce(b, q, nq, prim);
        if (pp >= 0)
            node = node >= 0 ? mk(b, prim, node, pp) : pp;
        if (pq >= 0) {
            if (node < 0)
                node = mknum(b, null, orig == D_INT);
            node = mk(b, inv, node, pq);
        }
    }
    if (node < 0)
        node = mknum(b, null, orig == D_INT);
    if (node >= 0 && dtype(b, node) < orig && (b->m->nodes[node].kind == N_SYM || b->m->nodes[node].kind == N_CALL ||
                                                 b->m->nodes[node].kind == N_NUM))
        node = mk(b, prim, mknum(b, null, 0), node);
    if (node >= 0)
        *meta(b, node) |= 1;
    return node;
}

static int all_numbers(bc *b, int32_t n)
{
    if (n < 0)
        return 1;
    const eq_node *x = &b->m->nodes[n];
    if (x->kind == N_SYM)
        return 0;
    return all_numbers(b, x->a) && all_numbers(b, x->b) && all_numbers(b, x->c);
}

static int32_t rebuild(bc *b, int32_t n, int32_t a, int32_t c2)
{
    const eq_node x = b->m->nodes[n];
    if (a == x.a && c2 == x.b)
        return n;
    int32_t r = mk(b, (eq_kind)x.kind, a, c2);
    if (r >= 0) {
        b->m->nodes[r].fn = x.fn;
        b->m->nodes[r].sym = x.sym;
        b->m->nodes[r].num = x.num;
        uint8_t was = *meta(b, n) & 1; /* before meta() may move the array */
        *meta(b, r) |= was;
    }
    return r;
}

/* ArithmeticSimplifier.render_node: collect, render the children, then the
 * identities (x*1, x*0, x/1, 0/x, x+0, x-0) and the evaluation of scalar
 * subtrees of numbers alone (Python's eval: the same double operations). */
static int32_t render(bc *b, int32_t n, unsigned depth)
{
    if (n < 0 || b->y->bad)
        return -1;
    if (depth > EQ_MAX_HEIGHT) {
        b->y->bad = 1;
        return -1;
    }
    if (is_lio(b, n))
        return n;
    eq_node x = b->m->nodes[n];
    if (is_binop(&x) && dtype(b, n) == D_FLOAT && !(*meta(b, n) & 1)) {
        n = collect(b, n);
        if (n < 0)
            return -1;
        x = b->m->nodes[n];
    }
    if (x.kind == N_NUM || x.kind == N_SYM)
        return n;
    int32_t l = render(b, x.a, depth + 1), r = x.b >= 0 ? render(b, x.b, depth + 1) : -1;
    if (l < 0 || (x.b >= 0 && r < 0))
        return -1;
    n = rebuild(b, n, l, r);
    if (n < 0)
        return -1;
    x = b->m->nodes[n];
    const eq_node *L = &b->m->nodes[l], *R = r >= 0 ? &b->m->nodes[r] : NULL;
    if (x.kind == N_MUL) {
        for (int k = 0; k < 2; k++) {
            int32_t op = k ? r : l, other = k ? l : r;
            const eq_node *o = &b->m->nodes[op];
            if (o->kind == N_NUM && o->num == 0.0)
                return mknum(b, 0.0, dtype(b, n) == D_INT);
            if (o->kind == N_NUM && o->num == 1.0 && dtype(b, op) <= dtype(b, other))
                return other;
        }
    } else if (x.kind == N_DIV) {
        if (L->kind == N_NUM && L->num == 0.0)
            return mknum(b, 0.0, 0);
        if (R->kind == N_NUM && R->num == 1.0 && dtype(b, r) <= dtype(b, l))
            return l;
    } else if (x.kind == N_ADD) {
        if (L->kind == N_NUM && L->num == 0.0 && dtype(b, l) <= dtype(b, r))
            return r;
        if (R->kind == N_NUM && R->num == 0.0 && dtype(b, r) <= dtype(b, l))
            return l;
    } else if (x.kind == N_SUB) {
        if (R->kind == N_NUM && R->num == 0.0 && dtype(b, r) <= dtype(b, l))
            return l;
    }
    if (scalar(b, n) && all_numbers(b, n)) {
        int dt_ = dtype(b, n);
        double v;
        bl_error e2;
        if (eq_const_eval(b->m, n, &v, &e2))
            return n;
        return mknum(b, dt_ == D_INT ? trunc(v) : v, dt_ == D_INT);
    }
    return n;
}

/* Simplifier: the largest scalar subtrees that compute something become
 * loop invariants, opaque to the second pass. */
static void mark_lio(bc *b, int32_t n)
{
    if (n < 0)
        return;
    if (scalar(b, n) && complexity_pos(b, n)) {
        *meta(b, n) |= 2;
        return;
    }
    const eq_node *x = &b->m->nodes[n];
    int32_t a = x->a, c2 = x->b, c3 = x->c;
    mark_lio(b, a);
    mark_lio(b, c2);
    mark_lio(b, c3);
}

/* not_refractory = True: int(not_refractory) becomes int(True), a scalar call
 * that evaluates to 1 once rendered. */
static int32_t nr_true(bc *b, int32_t n)
{
    if (n < 0 || is_lio(b, n))
        return n;
    const eq_node x = b->m->nodes[n];
    if (x.kind == N_CALL && x.fn == F_INT && b->m->nodes[x.a].kind == N_SYM && b->m->nodes[x.a].sym == b->nr_sym)
        return mkcall(b, F_INT, mknum(b, 1.0, 1));
    if (x.kind == N_NUM || x.kind == N_SYM)
        return n;
    int32_t a = nr_true(b, x.a), c2 = x.b >= 0 ? nr_true(b, x.b) : -1;
    if (a < 0 || (x.b >= 0 && c2 < 0))
        return -1;
    int32_t r = rebuild(b, n, a, c2);
    if (r >= 0 && r != n)
        *meta(b, r) &= (uint8_t)~1u; /* a fresh parse: collected again */
    return r;
}

/* Fresh nodes everywhere (Brian2 parses the rendered text anew). */
static int32_t fresh(bc *b, int32_t n)
{
    if (n < 0 || is_lio(b, n))
        return n;
    const eq_node x = b->m->nodes[n];
    if (x.kind == N_NUM || x.kind == N_SYM)
        return n;
    int32_t a = fresh(b, x.a), c2 = x.b >= 0 ? fresh(b, x.b) : -1;
    int32_t r = mk(b, (eq_kind)x.kind, a, c2);
    if (r >= 0) {
        b->m->nodes[r].fn = x.fn;
        *meta(b, r) = 0;
    }
    return r;
}

/* NumPy's power on arrays: exponent 2 squares, 0.5 is sqrt, -1 a reciprocal
 * (its fast paths); scalars (loop invariants) go through pow(). */
static int32_t numpy_pow(bc *b, int32_t n)
{
    if (n < 0)
        return n;
    const eq_node x = b->m->nodes[n];
    if (x.kind == N_NUM || x.kind == N_SYM)
        return n;
    if (is_lio(b, n))
        return n;
    int32_t a = numpy_pow(b, x.a), c2 = x.b >= 0 ? numpy_pow(b, x.b) : -1;
    if (x.kind == N_POW && !scalar(b, a) && b->m->nodes[c2].kind == N_NUM) {
        double e = b->m->nodes[c2].num;
        if (e == 0.5)
            return mkcall(b, F_SQRT, a);
        if (e == -1.0)
            return mk(b, N_DIV, mknum(b, 1.0, 0), a);
    }
    return rebuild(b, n, a, c2);
}

/* The statement's right side, from its canonical form to the tree NumPy evaluates. */
static int32_t codegen(bc *b, int32_t y, int flagged)
{
    int32_t t = pr(b, y);
    t = render(b, t, 0);
    if (t < 0)
        return -1;
    mark_lio(b, t);
    if (flagged) {
        t = nr_true(b, fresh(b, t));
        t = render(b, t, 0);
        if (t < 0)
            return -1;
        mark_lio(b, t);
    }
    return numpy_pow(b, t);
}

/* ---- exponential_euler: SymPy's expand() and collect() ------------------ */

static int32_t mul_distribute(yc *c, int32_t a, int32_t b)
{
    if (a < 0 || b < 0)
        return -1;
    uint32_t na = c->v[a].k == YA ? c->v[a].n : 1, nb = c->v[b].k == YA ? c->v[b].n : 1;
    if ((uint64_t)na * nb > 4096) {
        c->bad = 1;
        return -1;
    }
    int32_t acc = yint(c, 0);
    for (uint32_t i = 0; i < na && acc >= 0; i++)
        for (uint32_t j = 0; j < nb && acc >= 0; j++) {
            int32_t ta = c->v[a].k == YA ? YARG(c, a, i) : a, tb = c->v[b].k == YA ? YARG(c, b, j) : b;
            acc = yadd(c, acc, ymul(c, ta, tb));
        }
    return acc;
}

/* expr.expand() for what neuron models hold: products over sums, positive
 * integer powers of sums, deep inside denominators and function arguments.
 * exp of a sum (SymPy splits it into a product of exps) is not followed. */
static int32_t yexpand(yc *c, int32_t x, unsigned depth)
{
    if (x < 0 || c->bad || depth > EQ_MAX_HEIGHT) {
        c->bad = 1;
        return -1;
    }
    const ynd y = c->v[x];
    switch (y.k) {
    case YA: {
        int32_t acc = yint(c, 0);
        for (uint32_t i = 0; i < y.n && acc >= 0; i++)
            acc = yadd(c, acc, yexpand(c, c->pool[y.a + i], depth + 1));
        return acc;
    }
    case YM: {
        int32_t acc = yint(c, 1);
        for (uint32_t i = 0; i < y.n && acc >= 0; i++)
            acc = mul_distribute(c, acc, yexpand(c, c->pool[y.a + i], depth + 1));
        return acc;
    }
    case YP: {
        int32_t bs = yexpand(c, c->pool[y.a], depth + 1), e = yexpand(c, c->pool[y.a + 1], depth + 1);
        if (bs < 0 || e < 0)
            return -1;
        if (c->v[e].k == YA) {
            c->bad = 1;
            return -1;
        }
        if (c->v[bs].k == YA && c->v[e].k == YI && c->v[e].p > 0 && c->v[e].p <= 8) {
            int32_t acc = yint(c, 1);
            for (int64_t k = 0; k < c->v[e].p && acc >= 0; k++)
                acc = mul_distribute(c, acc, bs);
            return acc;
        }
        return ypow(c, bs, e);
    }
    case YFN: {
        int32_t a = yexpand(c, c->pool[y.a], depth + 1);
        if (a >= 0 && c->v[a].k == YA && yfns[y.fn].fn == F_EXP) {
            c->bad = 1;
            return -1;
        }
        return yfun(c, y.fn, a);
    }
    default: return x;
    }
}

/* collect(expr, x, evaluate=False): f = A*x + B, x only to the first power
 * and outside functions; 0 when not so. */
static int ycollect(yc *c, int32_t f, int32_t sym, int32_t *A, int32_t *B)
{
    *A = yint(c, 0);
    *B = yint(c, 0);
    uint32_t n = c->v[f].k == YA ? c->v[f].n : 1;
    for (uint32_t i = 0; i < n && !c->bad; i++) {
        int32_t t = c->v[f].k == YA ? YARG(c, f, i) : f;
        if (!sym_in(c, t, sym)) {
            *B = yadd(c, *B, t);
            continue;
        }
        int32_t rest[2 * YMAXT];
        uint32_t nr = 0, seen = 0, nf = c->v[t].k == YM ? c->v[t].n : 1;
        for (uint32_t j = 0; j < nf; j++) {
            int32_t q = c->v[t].k == YM ? YARG(c, t, j) : t;
            if (c->v[q].k == YS && c->v[q].sym == sym)
                seen++;
            else if (sym_in(c, q, sym))
                return 0;
            else if (nr < 2 * YMAXT)
                rest[nr++] = q;
        }
        if (seen != 1)
            return 0;
        *A = yadd(c, *A, nr ? ymul_n(c, rest, nr) : yint(c, 1));
    }
    return !c->bad;
}

/* ---- 4. the methods ---------------------------------------------------- */

/* Brian2 prints an equation after substituting its subexpressions and parses
 * that text again (Equations.get_substituted_expressions): the same here. */
static int32_t roundtrip(bc *b, int32_t y) { return from_tree(b->y, pr(b, y), NULL); }

/* Every subexpression's canonical form, in dependency order (each printed and
 * parsed again, with those it reads substituted: xreplace). */
static void subexpressions(bc *b, int32_t *ysub, uint32_t cap)
{
    yc *c = b->y;
    bl_eq_model *m = b->m;
    for (uint32_t q = 0; q < cap; q++)
        ysub[q] = -1;
    for (int progress = 1; progress && !c->bad;) {
        progress = 0;
        for (uint32_t q = 0; q < m->n_syms && q < cap && !c->bad; q++) {
            if (m->syms[q].kind != S_SUBEXPR || ysub[q] >= 0)
                continue;
            int32_t y0 = from_tree(c, m->syms[q].expr, NULL);
            int ready = 1;
            for (uint32_t r = 0; r < m->n_syms && r < cap; r++)
                if (m->syms[r].kind == S_SUBEXPR && ysub[r] < 0 &&
                    sym_in(c, y0, (int32_t)r))
                    ready = 0;
            if (!ready)
                continue;
            ysub[q] = roundtrip(b, ysubst(c, y0, ysub, cap, 0));
            progress = 1;
        }
    }
    for (uint32_t q = 0; q < m->n_syms && q < cap; q++)
        if (m->syms[q].kind == S_SUBEXPR && ysub[q] < 0)
            c->bad = 1;
}

static int32_t temp_sym(bl_eq_model *m, const char *name, int32_t slot, bl_error *err)
{
    int32_t s = eq_sym_find(m, name);
    if (s >= 0)
        return m->syms[s].kind == S_TEMP ? s : -1;
    s = eq_sym_add(m, name, S_TEMP, err);
    if (s >= 0)
        m->syms[s].dim = m->syms[m->var_sym[slot]].dim;
    return s;
}

static bl_status run(bl_eq_model *m, bc *b, eq_update *u, bl_error *err)
{
    yc *c = b->y;
    /* heun without noise is euler's statement (eq_method.c) */
    int euler = !strcmp(m->method, "euler") || !strcmp(m->method, "heun"), rk2 = !strcmp(m->method, "rk2"),
        expo = !strcmp(m->method, "exponential_euler");
    uint32_t nv = m->n_vars;
    int32_t t_sym = eq_sym_find(m, "t"), dt_sym = eq_sym_find(m, "dt"), nr_sym = eq_sym_find(m, "not_refractory");
    if (t_sym < 0 || dt_sym < 0 || nr_sym < 0)
        return BL_ERR_UNSUPPORTED;
    b->nr_sym = nr_sym;
    b->dt_sym = dt_sym;
    /* room for the temporaries the stages add (4 per variable) */
    uint32_t map_cap = m->n_syms + 4 * BL_EQ_MAX_VARS + 8;
    int32_t *map = malloc(map_cap * sizeof *map);
    int32_t f[BL_EQ_MAX_VARS], g[BL_EQ_MAX_VARS], gA[BL_EQ_MAX_VARS], xi_sym = -1;
    const int heun = !strcmp(m->method, "heun");
    if (!map)
        return bl_fail(err, BL_ERR_NOMEM, "model: out of memory");
    for (uint32_t s = 0; s < m->n_syms; s++)
        map[s] = -1;
    int32_t *ysub = malloc(map_cap * sizeof *ysub);
    if (!ysub) {
        free(map);
        return bl_fail(err, BL_ERR_NOMEM, "model: out of memory");
    }
    subexpressions(b, ysub, map_cap);
    /* f per state variable: "int(not_refractory)*(f)" when flagged, subexpressions
     * substituted, printed and parsed again; euler's noise terms apart. */
    for (uint32_t s = 0; s < nv; s++) {
        f[s] = g[s] = gA[s] = -1;
        u->new_expr[s] = -1;
        eq_sym *y = &m->syms[m->var_sym[s]];
        if (y->kind != S_STATE)
            continue;
        int32_t fy = from_tree(c, y->expr, NULL);
        if (m->syms[m->var_sym[s]].unless_refractory)
            fy = ymul(c, yfun(c, 6 /* int_ */, ysym(c, nr_sym)), fy);
        fy = roundtrip(b, ysubst(c, fy, ysub, map_cap, 0));
        if (fy < 0)
            break;
        if (expo)
            fy = yexpand(c, fy, 0);
        if (eq_reads(m, y->expr, 1u << S_XI, -1)) {
            /* Expression.split_stochastic: expand, collect by xi; f and the
             * coefficient g each printed and parsed again; the term g*xi. */
            if (!euler) {
                c->bad = 1;
                break;
            }
            for (uint32_t q = 0; q < m->n_syms; q++)
                if (m->syms[q].kind == S_XI && sym_in(c, fy, (int32_t)q)) {
                    if (xi_sym >= 0 && xi_sym != (int32_t)q)
                        c->bad = 1; /* one noise source: Brian2 draws one xi array */
                    xi_sym = (int32_t)q;
                }
            int32_t A, B;
            fy = yexpand(c, fy, 0);
            if (xi_sym < 0 || fy < 0 || !ycollect(c, fy, xi_sym, &A, &B)) {
                c->bad = 1;
                break;
            }
            fy = roundtrip(b, B);
            gA[s] = roundtrip(b, A);
            g[s] = ymul(c, gA[s], ysym(c, xi_sym));
        }
        f[s] = fy;
    }
    free(ysub);
    if (c->bad) {
        free(map);
        return BL_ERR_UNSUPPORTED;
    }
    int32_t dt = ysym(c, dt_sym);
    int32_t tmp_sym[4][BL_EQ_MAX_VARS];
    int stages = euler || expo ? 0 : rk2 ? 1 : 4;
    /* rk stages: k_j = dt*f(x + c_j*k_{j-1}, t + h_j*dt) */
    for (int j = 0; j < stages && !c->bad; j++) {
        for (uint32_t q = 0; q < m->n_syms && q < map_cap; q++)
            map[q] = -1;
        if (j > 0) {
            int32_t half = yrat(c, 1, 2);
            for (uint32_t s = 0; s < nv; s++)
                if (f[s] >= 0)
                    map[m->var_sym[s]] = yadd(c, ysym(c, m->var_sym[s]),
                                               j == 3 ? ysym(c, tmp_sym[j - 1][s]) : ymul(c, half, ysym(c, tmp_sym[j - 1][s])));
            map[t_sym] = yadd(c, ysym(c, t_sym), j == 3 ? dt : ymul(c, half, dt));
        }
        for (uint32_t s = 0; s < nv && !c->bad; s++) {
            if (f[s] < 0)
                continue;
            char name[BL_EQ_MAX_IDENT + 1];
            if (rk2)
                snprintf(name, sizeof name, "__k_%.50s", m->syms[m->var_sym[s]].name);
            else
                snprintf(name, sizeof name, "__k_%d_%.50s", j + 1, m->syms[m->var_sym[s]].name);
            int32_t ts = temp_sym(m, name, (int32_t)s, err);
            if (ts < 0) {
                free(map);
                return err->status ? err->status : BL_ERR_UNSUPPORTED;
            }
            tmp_sym[j][s] = ts;
            int32_t fj = j ? ysubst(c, f[s], map, map_cap, 0) : f[s];
            int32_t k = codegen(b, ymul(c, dt, fj), m->syms[m->var_sym[s]].unless_refractory);
            if (k < 0)
                break;
            if (m->syms[m->var_sym[s]].unless_refractory) {
                int32_t z = mknum(b, 0.0, 0), sel = mk(b, N_SEL, mksym(b, nr_sym), k);
                if (sel < 0 || eq_node_set_c(m, sel, z, err) < 0) {
                    c->bad = 1;
                    break;
                }
                k = sel;
            }
            if (u->n_tmp >= sizeof u->tmp_sym / sizeof u->tmp_sym[0]) {
                c->bad = 1;
                break;
            }
            u->tmp_sym[u->n_tmp] = ts;
            u->tmp_expr[u->n_tmp++] = k;
        }
    }
    /* heun with noise (Brian2 2.5.1, stateupdaters/explicit.py):
     *   x_support = x + g(x,t)*dW; g_support = g(x_support, t+dt);
     *   x_new = x + dt*f(x,t) + .5*dW*(g(x,t) + g_support)
     * Brian2 makes one statement per variable and noise source for each
     * line: __x_support_<x>_<xi> = x + xi*g (x itself for a variable without
     * noise), __g_support_<x>_<xi> = g with every state variable y replaced
     * by the symbol __x_support_<y>_<xi> and t by t + dt (replace_func), each
     * printed and generated as a statement of its own; flagged ones are
     * where(not_refractory, ..., 0) as rk's k (x_support: x while
     * refractory, a value nothing reads then). With additive noise (g free
     * of the state and t) g_support is g and x_support is dead code, not
     * computed here. The stochastic part enters distributed, .5*xi*g +
     * .5*xi*g_support, .5 a float (Brian2's printed update:
     * `0.5*(__g_support_v_xi*xi) + dt*(...) + _lio*xi + v`). */
    int32_t gsup[BL_EQ_MAX_VARS];
    int multiplicative = 0;
    for (uint32_t s = 0; s < nv; s++) {
        gsup[s] = -1;
        if (heun && gA[s] >= 0) {
            for (uint32_t r = 0; r < nv; r++)
                if (f[r] >= 0 && sym_in(c, gA[s], m->var_sym[r]))
                    multiplicative = 1;
            if (sym_in(c, gA[s], t_sym))
                multiplicative = 1;
        }
    }
    if (multiplicative && !c->bad) {
        for (uint32_t q = 0; q < m->n_syms && q < map_cap; q++)
            map[q] = -1;
        for (uint32_t r = 0; r < nv && !c->bad; r++) {
            int needed = 0;
            for (uint32_t s = 0; s < nv; s++)
                if (gA[s] >= 0 && f[r] >= 0 && sym_in(c, gA[s], m->var_sym[r]))
                    needed = 1;
            if (!needed)
                continue;
            char name[BL_EQ_MAX_IDENT + 1];
            snprintf(name, sizeof name, "__x_support_%.40s_%.10s", m->syms[m->var_sym[r]].name, m->syms[xi_sym].name);
            int32_t ts = temp_sym(m, name, (int32_t)r, err);
            if (ts < 0) {
                free(map);
                return err->status ? err->status : BL_ERR_UNSUPPORTED;
            }
            int flagged = m->syms[m->var_sym[r]].unless_refractory && gA[r] >= 0;
            int32_t x = ysym(c, m->var_sym[r]);
            int32_t k = codegen(b, gA[r] >= 0 ? yadd(c, x, ymul(c, ysym(c, xi_sym), gA[r])) : x, flagged);
            if (k < 0)
                break;
            if (flagged) {
                int32_t sel = mk(b, N_SEL, mksym(b, nr_sym), k);
                if (sel < 0 || eq_node_set_c(m, sel, mksym(b, m->var_sym[r]), err) < 0) {
                    c->bad = 1;
                    break;
                }
                k = sel;
            }
            if (u->n_tmp >= sizeof u->tmp_sym / sizeof u->tmp_sym[0]) {
                c->bad = 1;
                break;
            }
            u->tmp_sym[u->n_tmp] = ts;
            u->tmp_expr[u->n_tmp++] = k;
            map[m->var_sym[r]] = ysym(c, ts);
        }
        map[t_sym] = yadd(c, ysym(c, t_sym), dt);
    }
    for (uint32_t s = 0; s < nv && !c->bad; s++) {
        if (!heun || gA[s] < 0)
            continue;
        char name[BL_EQ_MAX_IDENT + 1];
        snprintf(name, sizeof name, "__g_support_%.40s_%.10s", m->syms[m->var_sym[s]].name, m->syms[xi_sym].name);
        int32_t ts = temp_sym(m, name, (int32_t)s, err);
        if (ts < 0) {
            free(map);
            return err->status ? err->status : BL_ERR_UNSUPPORTED;
        }
        int32_t gs = gA[s];
        if (multiplicative)
            gs = ysubst(c, gA[s], map, map_cap, 0);
        int32_t k = codegen(b, gs, m->syms[m->var_sym[s]].unless_refractory);
        if (k < 0)
            break;
        if (m->syms[m->var_sym[s]].unless_refractory) {
            int32_t z = mknum(b, 0.0, 0), sel = mk(b, N_SEL, mksym(b, nr_sym), k);
            if (sel < 0 || eq_node_set_c(m, sel, z, err) < 0) {
                c->bad = 1;
                break;
            }
            k = sel;
        }
        if (u->n_tmp >= sizeof u->tmp_sym / sizeof u->tmp_sym[0]) {
            c->bad = 1;
            break;
        }
        u->tmp_sym[u->n_tmp] = ts;
        u->tmp_expr[u->n_tmp++] = k;
        gsup[s] = ts;
    }
    /* the new values */
    for (uint32_t s = 0; s < nv && !c->bad; s++) {
        if (f[s] < 0)
            continue;
        int32_t x = ysym(c, m->var_sym[s]), e;
        int flagged = m->syms[m->var_sym[s]].unless_refractory;
        if (euler) {
            e = yadd(c, x, ymul(c, dt, f[s]));
            if (g[s] >= 0 && heun) {
                int32_t hx = ymul(c, yflt(c, 0.5), ysym(c, xi_sym));
                e = yadd(c, e, yadd(c, ymul(c, hx, gA[s]), ymul(c, hx, ysym(c, gsup[s]))));
            } else if (g[s] >= 0) {
                e = yadd(c, e, g[s]);
            }
        } else if (expo) {
            /* _BA_x = B/A; _x = (x + _BA_x)*exp(A*dt) - _BA_x (x + dt*B without A, x*exp(A*dt) without B) */
            int32_t A, B;
            if (!ycollect(c, f[s], m->var_sym[s], &A, &B)) {
                c->bad = 1;
                break;
            }
            if (is_int(c, A, 0)) {
                e = yadd(c, x, ymul(c, dt, B));
            } else if (!is_int(c, B, 0)) {
                char name[BL_EQ_MAX_IDENT + 1];
                snprintf(name, sizeof name, "_BA_%.50s", m->syms[m->var_sym[s]].name);
                int32_t ts = temp_sym(m, name, (int32_t)s, err);
                if (ts < 0) {
                    c->bad = 1;
                    break;
                }
                int32_t ba = codegen(b, ymul(c, B, ypow(c, A, yint(c, -1))), flagged);
                if (ba < 0)
                    break;
                if (flagged) {
                    int32_t sel = mk(b, N_SEL, mksym(b, nr_sym), ba);
                    if (sel < 0 || eq_node_set_c(m, sel, mknum(b, 0.0, 0), err) < 0) {
                        c->bad = 1;
                        break;
                    }
                    ba = sel;
                }
                if (u->n_tmp >= sizeof u->tmp_sym / sizeof u->tmp_sym[0]) {
                    c->bad = 1;
                    break;
                }
                u->tmp_sym[u->n_tmp] = ts;
                u->tmp_expr[u->n_tmp++] = ba;
                int32_t bs = ysym(c, ts);
                e = yadd(c, ymul(c, yadd(c, x, bs), yfun(c, 0 /* exp */, ymul(c, A, dt))), ymul(c, yint(c, -1), bs));
            } else {
                e = ymul(c, x, yfun(c, 0 /* exp */, ymul(c, A, dt)));
            }
        } else if (rk2) {
            for (uint32_t q = 0; q < m->n_syms && q < map_cap; q++)
                map[q] = -1;
            int32_t half = yrat(c, 1, 2);
            for (uint32_t r = 0; r < nv; r++)
                if (f[r] >= 0)
                    map[m->var_sym[r]] = yadd(c, ymul(c, half, ysym(c, tmp_sym[0][r])), ysym(c, m->var_sym[r]));
            map[t_sym] = yadd(c, ysym(c, t_sym), ymul(c, half, dt));
            int32_t fs = ysubst(c, f[s], map, map_cap, 0);
            e = yadd(c, x, ymul(c, dt, fs));
        } else {
            int32_t k1 = ysym(c, tmp_sym[0][s]), k2 = ysym(c, tmp_sym[1][s]), k3 = ysym(c, tmp_sym[2][s]),
                    k4 = ysym(c, tmp_sym[3][s]);
            int32_t sum = yadd(c, yadd(c, yadd(c, k1, ymul(c, yint(c, 2), k2)), ymul(c, yint(c, 2), k3)), k4);
            e = yadd(c, x, ymul(c, sum, yrat(c, 1, 6)));
            flagged = 0; /* the k's carry the flag; the sum has no not_refractory */
        }
        int32_t tree = codegen(b, e, flagged);
        if (tree < 0)
            break;
        u->new_expr[s] = tree;
    }
    free(map);
    if (c->bad)
        return BL_ERR_UNSUPPORTED;
    /* xi: Brian2's euler draws xi = dt**0.5 * randn(). */
    if (xi_sym >= 0) {
        int32_t *xmap = malloc(m->n_syms * sizeof *xmap);
        if (!xmap)
            return bl_fail(err, BL_ERR_NOMEM, "model: out of memory");
        for (uint32_t q = 0; q < m->n_syms && q < map_cap; q++)
            xmap[q] = -1;
        xmap[xi_sym] = mk(b, N_MUL, mk(b, N_POW, mksym(b, dt_sym), mknum(b, 0.5, 0)), mksym(b, xi_sym));
        for (uint32_t s = 0; s < nv; s++)
            if (u->new_expr[s] >= 0 && (u->new_expr[s] = eq_subst(m, u->new_expr[s], xmap, err)) < 0) {
                free(xmap);
                return err->status ? err->status : BL_ERR_UNSUPPORTED;
            }
        /* heun's x_support reads xi too: the same draw, scaled the same way */
        for (uint32_t k = 0; k < u->n_tmp; k++)
            if ((u->tmp_expr[k] = eq_subst(m, u->tmp_expr[k], xmap, err)) < 0) {
                free(xmap);
                return err->status ? err->status : BL_ERR_UNSUPPORTED;
            }
        free(xmap);
    }
    /* Flagged variables keep their value while refractory. */
    for (uint32_t s = 0; s < nv; s++) {
        if (u->new_expr[s] < 0 || !m->syms[m->var_sym[s]].unless_refractory)
            continue;
        int32_t sel = mk(b, N_SEL, mksym(b, nr_sym), u->new_expr[s]);
        if (sel < 0 || eq_node_set_c(m, sel, mksym(b, m->var_sym[s]), err) < 0)
            return BL_ERR_UNSUPPORTED;
        u->new_expr[s] = sel;
    }
    return c->bad ? BL_ERR_UNSUPPORTED : BL_OK;
}

bl_status eq_brian2_apply(bl_eq_model *m, eq_update *u_out, bl_error *err)
{
    if (strcmp(m->method, "euler") && strcmp(m->method, "heun") && strcmp(m->method, "rk2") && strcmp(m->method, "rk4") &&
        strcmp(m->method, "exponential_euler"))
        return BL_ERR_UNSUPPORTED;
    yc c;
    memset(&c, 0, sizeof c);
    c.m = m;
    c.work = 1u << 20;
    bc b;
    memset(&b, 0, sizeof b);
    b.y = &c;
    b.m = m;
    b.err = err;
    eq_update *u = calloc(1, sizeof *u);
    if (!u)
        return bl_fail(err, BL_ERR_NOMEM, "model: out of memory");
    bl_error scratch;
    memset(&scratch, 0, sizeof scratch);
    bl_status st = run(m, &b, u, &scratch);
    if (st == BL_OK) {
        memcpy(u_out, u, sizeof *u);
        m->order_brian2 = 1;
    } else if (st != BL_ERR_UNSUPPORTED && st != BL_ERR_INVALID) {
        *err = scratch;
    } else {
        st = BL_ERR_UNSUPPORTED;
    }
    free(u);
    free(c.v);
    free(c.pool);
    free(b.meta);
    return st;
}
