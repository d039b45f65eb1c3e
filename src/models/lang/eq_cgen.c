/* Generated C: each block's instruction list written out as one C function,
 * compiled at run time by the system C compiler into a shared object, cached
 * by the SHA-256 of its source and the compiler's identity and flags, and
 * loaded with dlopen.
 *
 * Exactness. The interpreter (eq_vm.c) does one IEEE double operation or one
 * libm call per instruction, in list order, and stores every result as a
 * double. The generated function does the same: one C statement per
 * instruction, `const double xK = <one operation>;`, reading the same
 * registers, calling the same libm functions (the object links the same
 * libm), with the operation spelled as eq_apply spells it (x**2 as x*x,
 * comparisons as 0/1, clip as fmin(fmax())). Constants are written as
 * hexadecimal floating literals ("%a"), so the compiler reads the exact
 * double. The flags forbid what could change a bit: -ffp-contract=off (no
 * fused multiply-add), -fno-fast-math (no reassociation, no reciprocal, no
 * libmvec: glibc declares its vector exp only under __FAST_MATH__); C's own rules (FLT_EVAL_METHOD 0 on x86-64 and arm64) round every
 * statement to double. Every instruction has at least one operand that is not
 * a constant (lowering folds the others), so the compiler has no libm call to
 * fold with its own rounding.
 *
 * Registers: temporaries are written once each (lowering's SSA), so they
 * become locals; the state registers, t, i, not_refractory and the
 * externals are read from and written to r, the register file the caller
 * filled, as the interpreter does. The result register (threshold, weight)
 * is written back to r.
 *
 * The cache: DIR/eq-<key>.so with DIR/eq-<key>.so.sha256 (the SHA-256 of the
 * object's bytes) beside it, and DIR/eq-<key>.c (the source, for people).
 * An object is loaded only when its bytes hash to the recorded digest (a
 * truncated or damaged file is compiled again, never loaded); each is
 * written under a temporary name and renamed, so concurrent runs each see a
 * whole file, and the compiling process loads its own file before renaming. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "brainlesslab/hash.h"
#include "models/lang/eq_impl.h"
#include "core/json_check.h"

extern char **environ;

/* The flags: nothing that allows a result to change. -O3 and
 * -fno-trapping-math are the hand-written kernels' (CMakeLists.txt): they let
 * GCC vectorise the update's range loop, selects included (both sides are
 * computed anyway, as the interpreter computes both registers); we never read
 * floating-point exception flags. -fno-trapping-math comes after
 * -fno-fast-math, which would turn trapping math back on. */
static const char *const cgen_flags[] = {"-O3", "-fPIC", "-shared", "-ffp-contract=off", "-fno-fast-math",
                                         "-fno-trapping-math"};
#define N_FLAGS (sizeof cgen_flags / sizeof cgen_flags[0])
#define CGEN_VERSION "bl-eq-cgen 1"

struct eq_jit {
    void *handle;
    char *source;
    char note[512];
    char compiler[256];      /* first line of `cc --version` */
    char compiler_path[1024];
    char cache_dir[1024];
    char sha[BL_SHA256_HEX_LEN + 1]; /* the cache key */
    int compiled;            /* the blocks run generated code */
    int tried;               /* a compile or load was attempted */
    int hit;
    double compile_ms;       /* compile (miss) or hash check and load (hit), wall */
    double compile_cpu_ms;   /* the compiler's CPU time (user + system; 0 on a hit) */
};

/* ---- the source */

typedef struct sbuf {
    char *s;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap <= b->len + (size_t)n)
            cap *= 2;
        char *s2 = realloc(b->s, cap);
        if (!s2) {
            b->oom = 1;
            return;
        }
        b->s = s2;
        b->cap = cap;
    }
}

/* The definition of eq_vm_ctx (eq_impl.h), as the generated code sees it. */
#define EQ_CGEN_CTX_DECL                                                                                             \
    "typedef double (*bl_eq_normal_fn)(void *user, uint32_t neuron, uint64_t step, uint32_t k);\n"                   \
    "typedef struct eq_vm_ctx {\n    bl_eq_normal_fn normal;\n    void *user;\n    uint32_t neuron;\n"                \
    "    uint64_t step;\n} eq_vm_ctx;\n"

static int is_temp(uint32_t r) { return r >= EQ_TBASE; }

/* An operand: a constant as its exact literal, a temporary as its local, any
 * other register as r[k]. */
typedef struct temps {
    const uint8_t *written; /* per temporary: already assigned in this block */
    uint32_t n;
    int soa; /* the update over a range of neurons: state k is v<k>[i], t, i and not_refractory are arguments */
    int direct; /* an ODE direct function: state k is y[k], parameter k is p[k], t an argument */
} temps;

static void operand(const bl_eq_model *m, const temps *T, uint32_t r, char *buf, size_t size)
{
    if (r >= EQ_CBASE && r < EQ_CBASE + m->n_consts) {
        double v = m->consts[r - EQ_CBASE];
        if (isfinite(v)) {
            snprintf(buf, size, "(%a)", v);
        } else { /* infinities and NaNs by their bits (a NaN's sign and payload too) */
            uint64_t u;
            memcpy(&u, &v, sizeof u);
            snprintf(buf, size, "bl_bits(0x%016" PRIx64 "u)", u);
        }
    } else if (is_temp(r) && r - EQ_TBASE < T->n && T->written[r - EQ_TBASE]) {
        snprintf(buf, size, "x%" PRIu32, r - EQ_TBASE);
    } else if (T->direct && r >= EQ_VBASE && r < EQ_VBASE + m->n_vars) {
        snprintf(buf, size, "y[%" PRIu32 "]", r - EQ_VBASE);
    } else if (T->direct && is_temp(r) && r - EQ_TBASE < m->n_oparams) {
        snprintf(buf, size, "p[%" PRIu32 "]", r - EQ_TBASE);
    } else if (T->direct && r == R_T) {
        snprintf(buf, size, "t");
    } else if (T->soa && r >= EQ_VBASE && r < EQ_VBASE + m->n_vars) {
        snprintf(buf, size, "v%" PRIu32 "[i]", r - EQ_VBASE);
    } else if (T->soa && r == R_T) {
        snprintf(buf, size, "t");
    } else if (T->soa && r == R_I) {
        snprintf(buf, size, "(double)i");
    } else if (T->soa && r == R_NR) {
        snprintf(buf, size, "(double)nr[i]");
    } else {
        snprintf(buf, size, "r[%" PRIu32 "]", r);
    }
}

/* One instruction's right-hand side, as eq_apply computes it. 0: an op the
 * generator does not know (never made by lowering). */
static int expr(const bl_eq_model *m, const temps *T, const eq_insn *c, char *out, size_t size)
{
    char A[64], B[64], C[64];
    operand(m, T, c->a, A, sizeof A);
    operand(m, T, c->b, B, sizeof B);
    operand(m, T, c->c, C, sizeof C);
    switch ((eq_op)c->op) {
    case O_ADD: snprintf(out, size, "%s + %s", A, B); return 1;
    case O_SUB: snprintf(out, size, "%s - %s", A, B); return 1;
    case O_MUL: snprintf(out, size, "%s * %s", A, B); return 1;
    case O_DIV: snprintf(out, size, "%s / %s", A, B); return 1;
    case O_NEG: snprintf(out, size, "-%s", A); return 1;
    case O_POW:
        if (c->b >= EQ_CBASE && c->b < EQ_CBASE + m->n_consts) /* the exponent is known: the branch eq_apply takes */
            snprintf(out, size, m->consts[c->b - EQ_CBASE] == 2.0 ? "%s * %s" : "pow(%s, %s)", A,
                     m->consts[c->b - EQ_CBASE] == 2.0 ? A : B);
        else
            snprintf(out, size, "%s == 2.0 ? %s * %s : pow(%s, %s)", B, A, A, A, B);
        return 1;
    case O_EXP: snprintf(out, size, "exp(%s)", A); return 1;
    case O_LOG: snprintf(out, size, "log(%s)", A); return 1;
    case O_SQRT: snprintf(out, size, "sqrt(%s)", A); return 1;
    case O_ABS: snprintf(out, size, "fabs(%s)", A); return 1;
    case O_SIN: snprintf(out, size, "sin(%s)", A); return 1;
    case O_COS: snprintf(out, size, "cos(%s)", A); return 1;
    case O_TANH: snprintf(out, size, "tanh(%s)", A); return 1;
    case O_INT: snprintf(out, size, "trunc(%s)", A); return 1;
    case O_FLOOR: snprintf(out, size, "floor(%s)", A); return 1;
    case O_CEIL: snprintf(out, size, "ceil(%s)", A); return 1;
    case O_CLIP: snprintf(out, size, "fmin(fmax(%s, %s), %s)", A, B, C); return 1;
    case O_LT: snprintf(out, size, "(double)(%s < %s)", A, B); return 1;
    case O_GT: snprintf(out, size, "(double)(%s > %s)", A, B); return 1;
    case O_LE: snprintf(out, size, "(double)(%s <= %s)", A, B); return 1;
    case O_GE: snprintf(out, size, "(double)(%s >= %s)", A, B); return 1;
    case O_EQ: snprintf(out, size, "(double)(%s == %s)", A, B); return 1;
    case O_NE: snprintf(out, size, "(double)(%s != %s)", A, B); return 1;
    case O_AND: snprintf(out, size, "(double)((%s != 0) && (%s != 0))", A, B); return 1;
    case O_OR: snprintf(out, size, "(double)((%s != 0) || (%s != 0))", A, B); return 1;
    case O_NOT: snprintf(out, size, "(double)(%s == 0)", A); return 1;
    case O_SEL: snprintf(out, size, "%s != 0 ? %s : %s", A, B, C); return 1;
    case O_MOV: snprintf(out, size, "%s", A); return 1;
    case O_XI:
        snprintf(out, size, "ctx->normal ? ctx->normal(ctx->user, %s, ctx->step, %" PRIu32 "u) : 0.0",
                 T->soa ? "(uint32_t)i" : "ctx->neuron", c->a);
        return 1;
    default: return 0;
    }
}

/* One block as `void bl_eq_<name>(double *restrict r, const eq_vm_ctx *ctx)`.
 * A temporary read before it is written (lowering never makes one) would be
 * the caller's register: it is read from r, as the interpreter would. */
static void emit_block(const bl_eq_model *m, sbuf *b, const char *name, const eq_prog *p, const uint32_t *out,
                       size_t n_out)
{
    uint32_t n_temp = 0;
    for (uint32_t k = 0; k < p->n_code; k++)
        if (is_temp(p->code[k].dst) && p->code[k].dst - EQ_TBASE + 1 > n_temp)
            n_temp = p->code[k].dst - EQ_TBASE + 1;
    uint8_t *written = calloc(n_temp ? n_temp : 1, 1);
    if (!written) {
        b->oom = 1;
        return;
    }
    sb_printf(b, "\nvoid bl_eq_%s(double *restrict r, const eq_vm_ctx *ctx)\n{\n    (void)ctx;\n", name);
    char rhs[512];
    const temps T = {written, n_temp, 0, 0};
    for (uint32_t k = 0; k < p->n_code; k++) {
        const eq_insn *c = &p->code[k];
        if (!expr(m, &T, c, rhs, sizeof rhs)) {
            sb_printf(b, "#error unknown operation %d\n", c->op);
            continue;
        }
        if (is_temp(c->dst)) {
            uint32_t t = c->dst - EQ_TBASE;
            if (written[t]) /* written twice (lowering never does): a fresh name would hide it */
                sb_printf(b, "    x%" PRIu32 " = %s;\n", t, rhs);
            else
                sb_printf(b, "    double x%" PRIu32 " = %s;\n", t, rhs);
            written[t] = 1;
        } else {
            sb_printf(b, "    r[%" PRIu32 "] = %s;\n", c->dst, rhs);
        }
    }
    if (is_temp(p->result) && p->result - EQ_TBASE < n_temp && written[p->result - EQ_TBASE])
        sb_printf(b, "    r[%" PRIu32 "] = x%" PRIu32 ";\n", p->result, p->result - EQ_TBASE);
    /* a list of many results (eq_lower_many): each result the caller reads */
    for (size_t k = 0; k < n_out; k++)
        if (is_temp(out[k]) && out[k] - EQ_TBASE < n_temp && written[out[k] - EQ_TBASE])
            sb_printf(b, "    r[%" PRIu32 "] = x%" PRIu32 ";\n", out[k], out[k] - EQ_TBASE);
    sb_printf(b, "}\n");
    free(written);
}

/* Can the update run as a loop over a range of neurons? It must read only
 * constants, temporaries, state, t, i and not_refractory, and write only
 * temporaries and state (always so for an update that lowering made; the
 * externals w, count, sign belong to on_pre and weight). */
static int soa_ok(const bl_eq_model *m, const eq_prog *p)
{
    for (uint32_t k = 0; k < p->n_code; k++) {
        const eq_insn *c = &p->code[k];
        uint32_t rs[3] = {c->a, c->b, c->c};
        int n_read = c->op == O_XI ? 0 : 3;
        for (int j = 0; j < n_read; j++) {
            uint32_t r = rs[j];
            if (!(r == R_T || r == R_I || r == R_NR || (r >= EQ_VBASE && r < EQ_VBASE + m->n_vars) ||
                  (r >= EQ_CBASE && r < EQ_CBASE + m->n_consts) || is_temp(r)))
                return 0;
        }
        if (!(is_temp(c->dst) || (c->dst >= EQ_VBASE && c->dst < EQ_VBASE + m->n_vars)))
            return 0;
    }
    return 1;
}

/* The update over neurons [lo, hi) of state arrays vars[k] (eq_update_range
 * in eq_impl.h): the same statements as bl_eq_update with state k at
 * v<k>[i], per neuron, in the same order; neurons are independent, so the
 * loop may be vectorised without changing a bit (no operation crosses
 * neurons, and the flags forbid contraction and reassociation). The state
 * arrays are distinct (restrict). The threshold likewise
 * (bl_eq_threshold_soa, eq_threshold_range): fire[i] = its value != 0, for
 * every neuron of the range, refractory or not (the caller decides); not
 * made when the threshold draws noise, whose draws would then change. */
static void emit_soa(const bl_eq_model *m, sbuf *b, const eq_prog *p, int threshold)
{
    if (!soa_ok(m, p))
        return;
    uint32_t n_temp = 0;
    for (uint32_t k = 0; k < p->n_code; k++) {
        if (threshold && (p->code[k].op == O_XI || !is_temp(p->code[k].dst)))
            return;
        if (is_temp(p->code[k].dst) && p->code[k].dst - EQ_TBASE + 1 > n_temp)
            n_temp = p->code[k].dst - EQ_TBASE + 1;
    }
    if (threshold && is_temp(p->result) && p->result - EQ_TBASE >= n_temp)
        return;
    uint8_t *written = calloc(n_temp ? n_temp : 1, 1);
    if (!written) {
        b->oom = 1;
        return;
    }
    if (threshold)
        sb_printf(b, "\nvoid bl_eq_threshold_soa(uint64_t lo, uint64_t hi, double *const *vars, const uint8_t *restrict nr,\n"
                     "                         double t, uint8_t *restrict fire)\n{\n    (void)t, (void)nr;\n");
    else
        sb_printf(b, "\nvoid bl_eq_update_soa(uint64_t lo, uint64_t hi, double *const *vars, const uint8_t *restrict nr,\n"
                     "                      double t, const eq_vm_ctx *ctx)\n{\n    (void)ctx, (void)t, (void)nr;\n");
    for (uint32_t v = 0; v < m->n_vars; v++)
        sb_printf(b, "    double *restrict v%" PRIu32 " = vars[%" PRIu32 "];\n", v, v);
    sb_printf(b, "    for (uint64_t i = lo; i < hi; i++) {\n");
    char rhs[512];
    const temps T = {written, n_temp, 1, 0};
    for (uint32_t k = 0; k < p->n_code; k++) {
        const eq_insn *c = &p->code[k];
        if (!expr(m, &T, c, rhs, sizeof rhs)) {
            sb_printf(b, "#error unknown operation %d\n", c->op);
            continue;
        }
        if (is_temp(c->dst)) {
            uint32_t t = c->dst - EQ_TBASE;
            sb_printf(b, written[t] ? "        x%" PRIu32 " = %s;\n" : "        double x%" PRIu32 " = %s;\n", t, rhs);
            written[t] = 1;
        } else {
            sb_printf(b, "        v%" PRIu32 "[i] = %s;\n", c->dst - EQ_VBASE, rhs);
        }
    }
    if (threshold) { /* the caller's test: r[result] != 0 */
        char res[64];
        operand(m, &T, p->result, res, sizeof res);
        sb_printf(b, "        fire[i] = %s != 0;\n", res);
    }
    sb_printf(b, "    }\n}\n");
    free(written);
}

/* Can a list run as a direct function? It must read only constants,
 * temporaries it wrote, the state, the parameters and t, and write only
 * temporaries (each once). Results likewise. */
static int direct_ok(const bl_eq_model *m, const eq_prog *p, const uint32_t *out, size_t n_out, uint8_t *written,
                     uint32_t n_temp)
{
    memset(written, 0, n_temp ? n_temp : 1);
    const uint32_t np = m->n_oparams;
#define READ_OK(r)                                                                                                    \
    ((r) == R_T || ((r) >= EQ_VBASE && (r) < EQ_VBASE + m->n_vars) ||                                                \
     ((r) >= EQ_CBASE && (r) < EQ_CBASE + m->n_consts) ||                                                            \
     (is_temp(r) && ((r) - EQ_TBASE < np || ((r) - EQ_TBASE < n_temp && written[(r) - EQ_TBASE]))))
    for (uint32_t k = 0; k < p->n_code; k++) {
        const eq_insn *c = &p->code[k];
        if (c->op == O_XI)
            return 0;
        const uint32_t rs[3] = {c->a, c->b, c->c};
        for (int j = 0; j < 3; j++)
            if (!READ_OK(rs[j]))
                return 0;
        if (!is_temp(c->dst) || c->dst - EQ_TBASE < np || c->dst - EQ_TBASE >= n_temp || written[c->dst - EQ_TBASE])
            return 0;
        written[c->dst - EQ_TBASE] = 1;
    }
    for (size_t k = 0; k < n_out; k++)
        if (!READ_OK(out[k]))
            return 0;
#undef READ_OK
    return 1;
}

/* One list's statements in a direct function (its own scope: the lists
 * number their temporaries independently). */
static void emit_direct_body(const bl_eq_model *m, sbuf *b, const eq_prog *p, uint8_t *written, uint32_t n_temp)
{
    memset(written, 0, n_temp ? n_temp : 1);
    const temps T = {written, n_temp, 0, 1};
    char rhs[512];
    for (uint32_t k = 0; k < p->n_code; k++) {
        const eq_insn *c = &p->code[k];
        if (!expr(m, &T, c, rhs, sizeof rhs)) {
            sb_printf(b, "#error unknown operation %d\n", c->op);
            continue;
        }
        sb_printf(b, "        const double x%" PRIu32 " = %s;\n", c->dst - EQ_TBASE, rhs);
        written[c->dst - EQ_TBASE] = 1;
    }
}

static uint32_t temps_of(const eq_prog *p)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < p->n_code; k++)
        if (is_temp(p->code[k].dst) && p->code[k].dst - EQ_TBASE + 1 > n)
            n = p->code[k].dst - EQ_TBASE + 1;
    return n;
}

/* bl_eq_ode_rhs_direct and bl_eq_ode_vjp_direct (eq_ode_direct), when the
 * lists allow them. The products: out_y zeroed, then per row-sorted entry
 * `if (w[row] != 0) out_y[col] += J * w[row]`, as vjp_cb computes them. */
static void emit_ode_direct(const bl_eq_model *m, sbuf *b, const eq_ode_direct *d)
{
    uint32_t n_temp = temps_of(d->rhs);
    const uint32_t nj = temps_of(d->jac), npj = temps_of(d->pjac);
    n_temp = n_temp > nj ? n_temp : nj;
    n_temp = n_temp > npj ? n_temp : npj;
    n_temp = n_temp > m->n_oparams ? n_temp : m->n_oparams;
    uint8_t *written = calloc(n_temp ? n_temp : 1, 1);
    if (!written) {
        b->oom = 1;
        return;
    }
    char o[64];
    if (direct_ok(m, d->rhs, d->f_reg, d->n, written, n_temp)) {
        sb_printf(b, "\nvoid bl_eq_ode_rhs_direct(const double *restrict y, const double *restrict p, double t,\n"
                     "                          double *restrict f)\n{\n    (void)y, (void)p, (void)t;\n    {\n");
        emit_direct_body(m, b, d->rhs, written, n_temp);
        const temps T = {written, n_temp, 0, 1};
        for (size_t k = 0; k < d->n; k++) {
            operand(m, &T, d->f_reg[k], o, sizeof o);
            sb_printf(b, "        f[%zu] = %s;\n", k, o);
        }
        sb_printf(b, "    }\n}\n");
    }
    if (direct_ok(m, d->jac, d->jreg, d->nj, written, n_temp) &&
        direct_ok(m, d->pjac, d->preg, d->npj, written, n_temp)) {
        sb_printf(b, "\nvoid bl_eq_ode_vjp_direct(const double *restrict y, const double *restrict p, double t,\n"
                     "                          const double *restrict w, double *restrict out_y, double *restrict out_p)\n"
                     "{\n    (void)y, (void)p, (void)t, (void)out_p;\n    {\n");
        emit_direct_body(m, b, d->jac, written, n_temp);
        const temps T = {written, n_temp, 0, 1};
        sb_printf(b, "        for (int k = 0; k < %zu; k++)\n            out_y[k] = 0.0;\n", d->n);
        for (size_t k = 0; k < d->nj; k++) {
            operand(m, &T, d->jreg[k], o, sizeof o);
            sb_printf(b, "        if (w[%" PRIu32 "] != 0.0)\n            out_y[%" PRIu32 "] += %s * w[%" PRIu32 "];\n",
                      d->jrow[k], d->jcol[k], o, d->jrow[k]);
        }
        sb_printf(b, "    }\n    {\n");
        emit_direct_body(m, b, d->pjac, written, n_temp);
        for (size_t k = 0; k < d->npj; k++) {
            operand(m, &T, d->preg[k], o, sizeof o);
            sb_printf(b, "        if (w[%" PRIu32 "] != 0.0)\n            out_p[%" PRIu32 "] += %s * w[%" PRIu32 "];\n",
                      d->prow[k], d->pcol[k], o, d->prow[k]);
        }
        sb_printf(b, "    }\n}\n");
    }
    free(written);
}

static const struct {
    const char *name;
    size_t off;
} blocks[] = {
    {"update", offsetof(bl_eq_model, update)},     {"threshold", offsetof(bl_eq_model, threshold)},
    {"reset", offsetof(bl_eq_model, reset)},       {"on_pre", offsetof(bl_eq_model, on_pre)},
    {"on_post", offsetof(bl_eq_model, on_post)},   {"on_input", offsetof(bl_eq_model, on_input)},
    {"weight", offsetof(bl_eq_model, weight)},
    /* on_pre chosen by the edge's sign: one call per delivered edge, so
     * interpreting them would cost a COBA network most of its delivery */
    {"on_pre_exc", offsetof(bl_eq_model, on_pre_exc)}, {"on_pre_inh", offsetof(bl_eq_model, on_pre_inh)},
};
#define N_BLOCKS (sizeof blocks / sizeof blocks[0])

static const eq_prog *block_of(const bl_eq_model *m, size_t k) { return (const eq_prog *)((const char *)m + blocks[k].off); }

char *eq_cgen_source(const bl_eq_model *m)
{
    sbuf b = {0};
    sb_printf(&b, "/* Generated by BrainlessLab (%s) from a model's instruction lists: one statement per\n"
                  " * instruction, in the interpreter's order. Compile with -ffp-contract=off -fno-fast-math. */\n"
                  "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n\n" EQ_CGEN_CTX_DECL
                  "\nstatic inline double bl_bits(uint64_t u)\n{\n    double d;\n    memcpy(&d, &u, sizeof d);\n"
                  "    return d;\n}\n",
              CGEN_VERSION);
    for (size_t k = 0; k < N_BLOCKS; k++)
        emit_block(m, &b, blocks[k].name, block_of(m, k), NULL, 0);
    /* on_pre_by's blocks only when the model has them, so that other models'
     * sources (and cache keys) stay what they were */
    for (uint32_t k = 0; k < m->n_by; k++) {
        char name[32];
        snprintf(name, sizeof name, "on_pre_by_%u", k);
        emit_block(m, &b, name, &m->by_prog[k], NULL, 0);
    }
    for (size_t k = 0; k < m->n_extra; k++)
        emit_block(m, &b, m->extra[k].name, m->extra[k].prog, m->extra[k].out, m->extra[k].n_out);
    if (m->ode_direct)
        emit_ode_direct(m, &b, m->ode_direct);
    emit_soa(m, &b, &m->update, 0);
    if (m->has_threshold)
        emit_soa(m, &b, &m->threshold, 1);
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* ---- the compiler */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* BL_CC (a path, or a name looked up on PATH), else cc, else gcc. */
static int find_compiler(char *path, size_t size, char *why, size_t wsize)
{
    const char *want = getenv("BL_CC");
    const char *names[2] = {"cc", "gcc"};
    size_t n_names = 2;
    if (want && *want) {
        names[0] = want;
        n_names = 1;
        if (strchr(want, '/')) {
            if (access(want, X_OK) == 0 && strlen(want) < size) {
                snprintf(path, size, "%s", want);
                return 1;
            }
            snprintf(why, wsize, "no C compiler: BL_CC=%.300s is not an executable file", want);
            return 0;
        }
    }
    const char *env = getenv("PATH");
    for (size_t k = 0; k < n_names; k++) {
        const char *p = env ? env : "/usr/bin:/bin";
        while (*p) {
            const char *e = strchr(p, ':');
            size_t l = e ? (size_t)(e - p) : strlen(p);
            if (l && l + strlen(names[k]) + 2 < size) {
                snprintf(path, size, "%.*s/%s", (int)l, p, names[k]);
                if (access(path, X_OK) == 0)
                    return 1;
            }
            p += l + (e != NULL);
        }
    }
    if (n_names == 1)
        snprintf(why, wsize, "no C compiler: BL_CC=%.300s not found on PATH", want);
    else
        snprintf(why, wsize, "no C compiler: neither cc nor gcc on PATH (set BL_CC)");
    return 0;
}

/* Seconds a compiler may run (BL_CC_TIMEOUT, default 120): a model of many
 * thousand instructions is one long function, and a compiler that hangs
 * must not hang the run; past it the compiler is killed and the
 * interpreter runs. */
static double cc_timeout_s(void)
{
    const char *e = getenv("BL_CC_TIMEOUT");
    char *end;
    double v = e && *e ? strtod(e, &end) : 120.0;
    return e && *e && (*end || !(v > 0) || v > 86400) ? 120.0 : v;
}

/* Run argv with stdout and stderr to file out_path; the exit status, -1 when
 * it could not start, -2 when it ran past the timeout (killed). */
static int run_to_file(char *const argv[], const char *out_path, double *cpu_ms)
{
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa))
        return -1;
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc)
        return -1;
    int status;
    struct rusage ru;
    double limit = now_ms() + 1e3 * cc_timeout_s();
    for (;;) {
        pid_t w = wait4(pid, &status, WNOHANG, &ru);
        if (w == pid) {
            if (cpu_ms) /* the compiler's own CPU time: what a loaded machine does not inflate */
                *cpu_ms = 1e3 * ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) +
                          1e-3 * ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec);
            break;
        }
        if (w < 0 && errno != EINTR)
            return -1;
        if (now_ms() > limit) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            return -2;
        }
        struct timespec ts = {0, 2000000}; /* 2 ms */
        nanosleep(&ts, NULL);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A temporary file name under $TMPDIR (else /tmp). */
static void tmp_name(char *buf, size_t size, const char *stem)
{
    const char *d = getenv("TMPDIR");
    snprintf(buf, size, "%s/%s.XXXXXX", d && *d && strlen(d) < size - 64 ? d : "/tmp", stem);
}

/* The first line of a file (at most size - 1 bytes, printable). */
static void first_line(const char *path, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (!fgets(buf, (int)size, f))
        buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\r\n")] = '\0';
    for (char *s = buf; *s; s++)
        if ((unsigned char)*s < 32 || *s == 127)
            *s = '?';
}

/* The compiler's first line that says "error" (GCC's first line is often
 * "In function ..."), else its first line. */
static void error_line(const char *path, char *buf, size_t size)
{
    first_line(path, buf, size);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[1024];
    for (int n = 0; n < 200 && fgets(line, sizeof line, f); n++)
        if (strstr(line, "error")) {
            line[strcspn(line, "\r\n")] = '\0';
            for (char *s = line; *s; s++)
                if ((unsigned char)*s < 32 || *s == 127)
                    *s = '?';
            snprintf(buf, size, "%s", line);
            break;
        }
    fclose(f);
}

static int cache_dir(char *dir, size_t size, char *why, size_t wsize)
{
    const char *d = getenv("BL_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    int n;
    if (d && *d)
        n = snprintf(dir, size, "%s", d);
    else if (x && *x)
        n = snprintf(dir, size, "%s/brainlesslab", x);
    else if (h && *h)
        n = snprintf(dir, size, "%s/.cache/brainlesslab", h);
    else {
        snprintf(why, wsize, "no cache directory: set BL_CACHE_DIR (HOME is not set)");
        return 0;
    }
    if (n < 0 || (size_t)n >= size - 128) {
        snprintf(why, wsize, "cache directory path too long");
        return 0;
    }
    /* mkdir -p, each new level 0700 */
    for (char *s = dir + 1;; s++) {
        if (*s == '/' || !*s) {
            char c = *s;
            *s = '\0';
            if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
                snprintf(why, wsize, "cache directory %.600s: cannot create: %s", dir, strerror(errno));
                *s = c;
                return 0;
            }
            *s = c;
            if (!c)
                break;
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, wsize, "cache directory %.600s: not a directory", dir);
        return 0;
    }
    /* Whoever can write there can put code in this process: the directory
     * must be this user's and writable by no one else. */
    if (st.st_uid != geteuid() || (st.st_mode & 022)) {
        snprintf(why, wsize, "cache directory %.600s: not this user's, or writable by others (chmod 700 it)", dir);
        return 0;
    }
    return 1;
}

int bl_eq_codegen_available(char *what, size_t size)
{
    char cc[1024], why[512], tmp[1100];
    tmp_name(tmp, sizeof tmp, "bl_eq_ccver");
    if (!find_compiler(cc, sizeof cc, why, sizeof why)) {
        snprintf(what, size, "%s", why);
        return 0;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(what, size, "cannot run %s: no temporary file", cc);
        return 0;
    }
    close(fd);
    char *argv[] = {cc, "--version", NULL};
    int rc = run_to_file(argv, tmp, NULL);
    char line[256];
    first_line(tmp, line, sizeof line);
    unlink(tmp);
    if (rc != 0 || !line[0]) {
        snprintf(what, size, "%s --version failed (exit %d)", cc, rc);
        return 0;
    }
    snprintf(what, size, "%s (%s)", line, cc);
    return 1;
}

static int file_sha(const char *path, char hex[BL_SHA256_HEX_LEN + 1])
{
    bl_error e = {0};
    uint64_t bytes;
    return bl_sha256_file(path, hex, &bytes, &e) == BL_OK;
}

static int write_file(const char *path, const char *text, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return 0;
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(fd);
            return 0;
        }
        off += (size_t)w;
    }
    return close(fd) == 0;
}

/* Set every block's function from a loaded object: 0 when one is missing. */
static int bind(bl_eq_model *m, void *h)
{
    eq_block_fn fns[N_BLOCKS];
    for (size_t k = 0; k < N_BLOCKS; k++) {
        char name[64];
        snprintf(name, sizeof name, "bl_eq_%s", blocks[k].name);
        void *f = dlsym(h, name);
        if (!f)
            return 0;
        memcpy(&fns[k], &f, sizeof f); /* an object pointer to a function pointer, as POSIX allows */
    }
    for (size_t k = 0; k < m->n_extra; k++) {
        char name[96];
        snprintf(name, sizeof name, "bl_eq_%s", m->extra[k].name);
        if (!dlsym(h, name))
            return 0;
    }
    eq_block_fn by[EQ_MAX_BY];
    for (uint32_t k = 0; k < m->n_by; k++) {
        char name[32];
        snprintf(name, sizeof name, "bl_eq_on_pre_by_%u", k);
        void *f = dlsym(h, name);
        if (!f)
            return 0;
        memcpy(&by[k], &f, sizeof f);
    }
    for (uint32_t k = 0; k < m->n_by; k++)
        m->by_prog[k].fn = by[k];
    for (size_t k = 0; k < N_BLOCKS; k++)
        ((eq_prog *)((char *)m + blocks[k].off))->fn = fns[k];
    for (size_t k = 0; k < m->n_extra; k++) {
        char name[96];
        snprintf(name, sizeof name, "bl_eq_%s", m->extra[k].name);
        void *f = dlsym(h, name);
        memcpy(&m->extra[k].prog->fn, &f, sizeof f);
    }
    if (m->ode_direct) { /* absent when the lists read what a direct function has not */
        void *f = dlsym(h, "bl_eq_ode_rhs_direct");
        memcpy(&m->ode_direct->rhs_fn, &f, sizeof f);
        f = dlsym(h, "bl_eq_ode_vjp_direct");
        memcpy(&m->ode_direct->vjp_fn, &f, sizeof f);
    }
    /* the range loops: absent when the block reads what a range loop has not */
    void *f = dlsym(h, "bl_eq_update_soa");
    m->update_soa = NULL;
    if (f)
        memcpy(&m->update_soa, &f, sizeof f);
    f = dlsym(h, "bl_eq_threshold_soa");
    m->threshold_soa = NULL;
    if (f)
        memcpy(&m->threshold_soa, &f, sizeof f);
    return 1;
}

static void unbind(bl_eq_model *m)
{
    for (size_t k = 0; k < N_BLOCKS; k++)
        ((eq_prog *)((char *)m + blocks[k].off))->fn = NULL;
    for (size_t k = 0; k < m->n_extra; k++)
        m->extra[k].prog->fn = NULL;
    for (uint32_t k = 0; k < m->n_by; k++)
        m->by_prog[k].fn = NULL;
    if (m->ode_direct)
        m->ode_direct->rhs_fn = NULL, m->ode_direct->vjp_fn = NULL;
    m->update_soa = NULL;
    m->threshold_soa = NULL;
}

void eq_jit_free(struct eq_jit *j)
{
    if (!j)
        return;
    if (j->handle)
        dlclose(j->handle);
    free(j->source);
    free(j);
}

/* Load DIR/eq-KEY.so when its bytes hash to the digest beside it. */
static void *load_cached(const char *so, const char *shafile)
{
    char want[128], got[BL_SHA256_HEX_LEN + 1];
    first_line(shafile, want, sizeof want);
    if (strlen(want) != BL_SHA256_HEX_LEN || !file_sha(so, got) || strcmp(want, got))
        return NULL;
    return dlopen(so, RTLD_NOW | RTLD_LOCAL);
}

/* Compile source into DIR/eq-KEY.so (temporary names, then renames). The
 * loaded handle, or NULL with why. */
static void *compile_and_load(struct eq_jit *j, const char *so, const char *shafile, char *why, size_t wsize)
{
    char src[1200], out[1200], log[1200], shatmp[1200];
    snprintf(src, sizeof src, "%s/eq-%s.c.XXXXXX", j->cache_dir, j->sha);
    snprintf(out, sizeof out, "%s/eq-%s.so.XXXXXX", j->cache_dir, j->sha);
    snprintf(log, sizeof log, "%s/eq-%s.log.XXXXXX", j->cache_dir, j->sha);
    snprintf(shatmp, sizeof shatmp, "%s/eq-%s.sha.XXXXXX", j->cache_dir, j->sha);
    int fs = mkstemp(src), fo = mkstemp(out), fl = mkstemp(log), fh = mkstemp(shatmp);
    void *h = NULL;
    int bad = fs < 0 || fo < 0 || fl < 0 || fh < 0, mk_errno = errno;
    const int fds[4] = {fs, fo, fl, fh};
    for (int k = 0; k < 4; k++)
        if (fds[k] >= 0)
            close(fds[k]);
    if (bad) {
        /* a name mkstemp did not create is still its template: unlinking it is harmless */
        snprintf(why, wsize, "cache directory %.600s: cannot create a temporary file: %s", j->cache_dir, strerror(mk_errno));
        goto done;
    }
    if (!write_file(src, j->source, strlen(j->source))) {
        snprintf(why, wsize, "%.600s: cannot write: %s", src, strerror(errno));
        goto done;
    }
    char *argv[16];
    size_t a = 0;
    argv[a++] = j->compiler_path;
    for (size_t k = 0; k < N_FLAGS; k++)
        argv[a++] = (char *)cgen_flags[k];
    argv[a++] = "-x";
    argv[a++] = "c";
    argv[a++] = src;
    argv[a++] = "-x";
    argv[a++] = "none";
    argv[a++] = "-o";
    argv[a++] = out;
    argv[a++] = "-lm";
    argv[a] = NULL;
    int rc = run_to_file(argv, log, &j->compile_cpu_ms);
    if (rc == -2) {
        snprintf(why, wsize, "compile failed: %.200s ran past %g s (BL_CC_TIMEOUT) and was stopped", j->compiler_path,
                 cc_timeout_s());
        goto done;
    }
    if (rc != 0) {
        char line[300];
        error_line(log, line, sizeof line);
        snprintf(why, wsize, "compile failed (%.200s exit %d): %s", j->compiler_path, rc, line[0] ? line : "no message");
        goto done;
    }
    char hex[BL_SHA256_HEX_LEN + 1];
    char line[BL_SHA256_HEX_LEN + 2];
    if (!file_sha(out, hex)) {
        snprintf(why, wsize, "%.600s: cannot read the compiled object", out);
        goto done;
    }
    snprintf(line, sizeof line, "%s\n", hex);
    h = dlopen(out, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, wsize, "cannot load the compiled object: %.300s", e ? e : "dlopen failed");
        goto done;
    }
    /* the digest first: a reader that sees the new digest with the old object recompiles, never loads it */
    if (!write_file(shatmp, line, strlen(line)) || rename(shatmp, shafile) != 0 || rename(out, so) != 0) {
        /* the object is loaded; the cache just stays cold */
        unlink(shatmp);
        unlink(out);
    }
    char csrc[1200];
    snprintf(csrc, sizeof csrc, "%s/eq-%s.c", j->cache_dir, j->sha);
    if (rename(src, csrc) != 0)
        unlink(src);
done:
    unlink(log);
    if (!h) {
        unlink(src);
        unlink(out);
        unlink(shatmp);
    }
    return h;
}

static struct eq_jit *jit_of(bl_eq_model *m)
{
    if (!m->jit)
        m->jit = calloc(1, sizeof *m->jit);
    return m->jit;
}

bl_status bl_eq_model_codegen(bl_eq_model *m, bl_eq_exec how, bl_error *err)
{
    struct eq_jit *j = jit_of(m);
    if (!j)
        return bl_fail(err, BL_ERR_NOMEM, "model: out of memory");
    unbind(m);
    if (j->handle) {
        dlclose(j->handle);
        j->handle = NULL;
    }
    j->compiled = j->tried = j->hit = 0;
    j->compile_ms = j->compile_cpu_ms = 0;
    j->compiler[0] = j->compiler_path[0] = j->cache_dir[0] = j->sha[0] = '\0';
    if (how == BL_EQ_EXEC_INTERP) {
        snprintf(j->note, sizeof j->note, "interpreter (asked)");
        return BL_OK;
    }
    const char *env = getenv("BL_EQ_JIT");
    if (how == BL_EQ_EXEC_AUTO && env && !strcmp(env, "0")) {
        snprintf(j->note, sizeof j->note, "interpreter (BL_EQ_JIT=0)");
        return BL_OK;
    }
    char why[1024] = "";
    double t0 = now_ms();
    if (!j->source && !(j->source = eq_cgen_source(m)))
        return bl_fail(err, BL_ERR_NOMEM, "model: out of memory generating C");
    int ok = find_compiler(j->compiler_path, sizeof j->compiler_path, why, sizeof why);
    if (ok) {
        char tmp[1100];
        tmp_name(tmp, sizeof tmp, "bl_eq_ccver");
        int fd = mkstemp(tmp);
        if (fd >= 0) {
            close(fd);
            char *argv[] = {j->compiler_path, "--version", NULL};
            int rc = run_to_file(argv, tmp, NULL);
            first_line(tmp, j->compiler, sizeof j->compiler);
            unlink(tmp);
            ok = rc == 0 && j->compiler[0];
        } else {
            ok = 0;
        }
        if (!ok)
            snprintf(why, sizeof why, "no C compiler: %.600s --version failed", j->compiler_path);
    }
    if (ok)
        ok = cache_dir(j->cache_dir, sizeof j->cache_dir, why, sizeof why);
    if (ok) {
        bl_sha256 *h = bl_sha256_create();
        if (!h)
            return bl_fail(err, BL_ERR_NOMEM, "model: out of memory");
        /* the key: the source, the compiler's identity and the flags, each ended by a NUL */
        bl_sha256_update(h, j->source, strlen(j->source) + 1);
        bl_sha256_update(h, j->compiler, strlen(j->compiler) + 1);
        for (size_t k = 0; k < N_FLAGS; k++)
            bl_sha256_update(h, cgen_flags[k], strlen(cgen_flags[k]) + 1);
        bl_sha256_finish(h, j->sha);
        char so[1200], shafile[1200];
        snprintf(so, sizeof so, "%s/eq-%s.so", j->cache_dir, j->sha);
        snprintf(shafile, sizeof shafile, "%s/eq-%s.so.sha256", j->cache_dir, j->sha);
        j->tried = 1;
        void *handle = load_cached(so, shafile);
        if (handle && !bind(m, handle)) {
            dlclose(handle);
            handle = NULL;
        }
        j->hit = handle != NULL;
        if (!handle) {
            handle = compile_and_load(j, so, shafile, why, sizeof why);
            if (handle && !bind(m, handle)) {
                dlclose(handle);
                handle = NULL;
                snprintf(why, sizeof why, "the compiled object lacks a block's function");
            }
        }
        j->handle = handle;
        ok = handle != NULL;
    }
    j->compile_ms = now_ms() - t0;
    if (!ok) {
        unbind(m);
        if (how == BL_EQ_EXEC_JIT) {
            snprintf(j->note, sizeof j->note, "interpreter (%.480s)", why);
            return bl_fail(err, BL_ERR_UNSUPPORTED, "model: generated C asked for but unavailable: %s", why);
        }
        snprintf(j->note, sizeof j->note, "interpreter (%.480s)", why);
        return BL_OK;
    }
    j->compiled = 1;
    if (j->hit)
        snprintf(j->note, sizeof j->note, "generated C (%.200s, cache hit, %.1f ms)", j->compiler, j->compile_ms);
    else
        snprintf(j->note, sizeof j->note, "generated C (%.200s, cache miss, %.1f ms, compiler %.1f ms CPU)",
                 j->compiler, j->compile_ms, j->compile_cpu_ms);
    return BL_OK;
}

int bl_eq_model_compiled(const bl_eq_model *m) { return m->jit && m->jit->compiled; }

const char *bl_eq_model_exec_note(const bl_eq_model *m)
{
    return m->jit && m->jit->note[0] ? m->jit->note : "interpreter";
}

const char *bl_eq_model_generated_source(const bl_eq_model *m)
{
    return m->jit && m->jit->compiled ? m->jit->source : NULL;
}

char *bl_eq_model_codegen_json(const bl_eq_model *m)
{
    const struct eq_jit *j = m->jit;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "exec", j && j->compiled ? "generated_c" : "interpreter");
    cJSON_AddStringToObject(o, "note", bl_eq_model_exec_note(m));
    if (j && j->compiled) {
        cJSON_AddStringToObject(o, "compiler", j->compiler);
        cJSON_AddStringToObject(o, "compiler_path", j->compiler_path);
        cJSON *f = cJSON_AddArrayToObject(o, "flags");
        for (size_t k = 0; k < N_FLAGS; k++)
            cJSON_AddItemToArray(f, cJSON_CreateString(cgen_flags[k]));
        char hex[BL_SHA256_HEX_LEN + 1];
        bl_sha256_buffer(j->source, strlen(j->source), hex);
        cJSON_AddStringToObject(o, "source_sha256", hex);
        cJSON_AddStringToObject(o, "cache_key", j->sha);
        cJSON_AddStringToObject(o, "cache", j->hit ? "hit" : "miss");
        cJSON_AddStringToObject(o, "cache_dir", j->cache_dir);
        cJSON_AddNumberToObject(o, "compile_ms", j->compile_ms);
        cJSON_AddNumberToObject(o, "compiler_cpu_ms", j->compile_cpu_ms);
    }
    char *text = bl_json_print(o, 0);
    cJSON_Delete(o);
    return text;
}
