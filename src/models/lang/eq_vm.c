/* The interpreter: one pass over a flat instruction list per neuron, every
 * operation a single IEEE double operation (or one libm call), in list
 * order. The file is built with -ffp-contract=off like every kernel, so no
 * multiply-add is fused and the order written is the order rounded. */
#include <math.h>

#include "models/lang/eq_impl.h"

/* The one definition; inlined into the interpreter's loop (a call per
 * instruction cost more than most operations), called by eq_apply. */
static inline double apply(int op, double a, double b, double c)
{
    switch ((eq_op)op) {
    case O_ADD: return a + b;
    case O_SUB: return a - b;
    case O_MUL: return a * b;
    case O_DIV: return a / b;
    case O_NEG: return -a;
    /* x**2 is x*x: NumPy computes a square for the exponent 2, and pow()
     * need not round it the same way. */
    case O_POW: return b == 2.0 ? a * a : pow(a, b);
    case O_EXP: return exp(a);
    case O_LOG: return log(a);
    case O_SQRT: return sqrt(a);
    case O_ABS: return fabs(a);
    case O_SIN: return sin(a);
    case O_COS: return cos(a);
    case O_TANH: return tanh(a);
    case O_INT: return trunc(a);
    case O_FLOOR: return floor(a);
    case O_CEIL: return ceil(a);
    /* NumPy's clip: min(max(a, lo), hi). */
    case O_CLIP: return fmin(fmax(a, b), c);
    case O_LT: return a < b;
    case O_GT: return a > b;
    case O_LE: return a <= b;
    case O_GE: return a >= b;
    case O_EQ: return a == b;
    case O_NE: return a != b;
    case O_AND: return (a != 0) && (b != 0);
    case O_OR: return (a != 0) || (b != 0);
    case O_NOT: return a == 0;
    case O_SEL: return a != 0 ? b : c;
    case O_MOV: return a;
    default: return NAN;
    }
}

double eq_apply(int op, double a, double b, double c)
{
    return apply(op, a, b, c);
}

const char *eq_op_name(int op)
{
    static const char *const names[O_NOPS] = {
        "add", "sub", "mul", "div", "neg", "pow", "exp", "log", "sqrt", "abs", "sin", "cos", "tanh", "int",
        "floor", "ceil", "clip", "lt", "gt", "le", "ge", "eq", "ne", "and", "or", "not", "sel", "mov", "xi"};
    return op >= 0 && op < O_NOPS ? names[op] : "?";
}

void eq_vm_run(const eq_prog *p, double *r, const eq_vm_ctx *ctx)
{
    const eq_insn *c = p->code;
    for (uint32_t k = 0; k < p->n_code; k++, c++) {
        if (c->op == O_XI)
            r[c->dst] = ctx->normal ? ctx->normal(ctx->user, ctx->neuron, ctx->step, c->a) : 0.0;
        else
            r[c->dst] = apply(c->op, r[c->a], r[c->b], r[c->c]);
    }
}
