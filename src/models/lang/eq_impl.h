/* Insides of the model language (src/models/lang/): the syntax tree, the
 * dimensions, the symbol table and the flat instruction list. Private. */
#ifndef BL_MODELS_LANG_EQ_IMPL_H
#define BL_MODELS_LANG_EQ_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/eqmodel.h"

/* ---- dimensions: exponents of m, kg, s, A, K, mol, cd, in halves (xi is s^-1/2) */
#define EQ_NDIM 7
typedef struct eq_dim {
    int8_t e[EQ_NDIM];
} eq_dim;

int eq_dim_eq(eq_dim a, eq_dim b);
int eq_dim_is_one(eq_dim a);
/* a*b, a/b, a^(num/2 halves): 0 on overflow of the small exponents. */
int eq_dim_mul(eq_dim a, eq_dim b, int sign, eq_dim *out);
int eq_dim_scale(eq_dim a, int num, int den, eq_dim *out);
/* "volt", "amp", ..., or "m^2 kg s^-3 A^-1"; "1" for dimensionless. */
void eq_dim_name(eq_dim a, char *buf, size_t size);
/* A unit name (mV, nS, volt, Hz, ...): 1 with its scale and dimension. */
int eq_unit_lookup(const char *name, double *scale, eq_dim *dim);

/* ---- tokens */
typedef enum eq_tok {
    T_END, T_NL, T_NUM, T_ID, T_PLUS, T_MINUS, T_STAR, T_SLASH, T_POW, T_LP, T_RP, T_COMMA,
    T_COLON, T_SEMI, T_ASSIGN, T_PLUSEQ, T_MINUSEQ, T_STAREQ, T_SLASHEQ, T_LT, T_GT, T_LE, T_GE,
    T_EQ, T_NE
} eq_tok;

/* ---- syntax tree: nodes live in one arena per model, children by index */
typedef enum eq_kind {
    N_NUM, N_SYM, N_NEG, N_ADD, N_SUB, N_MUL, N_DIV, N_POW, N_CALL,
    N_LT, N_GT, N_LE, N_GE, N_EQ, N_NE, N_AND, N_OR, N_NOT,
    N_SEL /* a ? b : c, made by the methods (unless refractory) */
} eq_kind;

typedef enum eq_fn {
    F_EXP, F_LOG, F_SQRT, F_ABS, F_CLIP, F_SIN, F_COS, F_TANH, F_INT, F_FLOOR, F_CEIL, F_NFN
} eq_fn;

/* Symbol kinds, in the order names resolve (Brian2's: the model's own
 * names first, then the parameter table, then t/dt/xi, then units). */
typedef enum eq_symkind {
    S_STATE,   /* dx/dt = ... */
    S_PARAM_N, /* x : unit, one value per neuron */
    S_SUBEXPR, /* x = expr : unit, inlined where used */
    S_CONST,   /* parameter table entry */
    S_T, S_DT, S_XI, S_I, S_NR, /* t, dt, xi, i, not_refractory */
    S_EXTERN,  /* w, count, sign in on_pre / weight */
    S_UNIT,
    S_TEMP,    /* a temporary a method introduces (_k1_v, _BA_v) */
    S_OPARAM   /* an ODE system's parameter (eq_ode.c): a run-time value in register EQ_TBASE + slot */
} eq_symkind;

/* Height of any tree, parsed or made by a method (and so the depth of every
 * recursion over one): a sum of 2000 terms is refused rather than risk the stack. */
#define EQ_MAX_HEIGHT 1024u

typedef struct eq_node {
    uint8_t kind, fn, block;
    uint16_t height;
    int32_t a, b, c;
    int32_t sym;
    double num;
    uint32_t lo, hi; /* source span in the block's text */
} eq_node;

/* on_pre blocks chosen by a neurons.csv column of the source (on_pre_by):
 * at most this many values, each its own block. */
#define EQ_MAX_BY 16

typedef enum eq_block {
    B_EQUATIONS, B_THRESHOLD, B_RESET, B_REFRACTORY, B_ON_PRE, B_ON_POST, B_ON_INPUT, B_WEIGHT,
    B_PARAM, B_INIT, B_GENERATED, B_ON_PRE_EXC, B_ON_PRE_INH, B_ON_PRE_BY0,
    B_NBLOCKS = B_ON_PRE_BY0 + EQ_MAX_BY
} eq_block;

typedef struct eq_sym {
    char name[BL_EQ_MAX_IDENT + 1];
    uint8_t kind;
    uint8_t unless_refractory;
    eq_dim dim;
    int32_t expr;   /* S_STATE: its derivative; S_SUBEXPR: its value */
    double value;   /* S_CONST, S_UNIT: the value */
    int32_t slot;   /* S_STATE, S_PARAM_N: index of its array */
    int32_t line;   /* 1-based line of the equation that declares it */
    uint32_t lo, hi;/* the declaring line's span in the equations text */
    uint8_t checking; /* cycle guard for subexpressions: 1 visiting, 2 done */
    uint8_t xi_index; /* S_XI: which draw */
    unsigned kinds;   /* S_SUBEXPR: the symbol kinds its value reads, inlined (1u << kind) */
    uint64_t reads[BL_EQ_MAX_VARS / 64]; /* S_SUBEXPR: the state variables (by slot) it reads */
    uint8_t has_value; /* S_PARAM_N given a value in the parameter table */
    eq_dim value_dim;
    int32_t expanded; /* S_SUBEXPR: its value with subexpressions inlined, -1 until made */
} eq_sym;

/* A statement: target op= expr, in a block's text. */
typedef struct eq_stmt {
    int32_t sym;
    uint8_t op; /* T_ASSIGN, T_PLUSEQ, ... */
    int32_t expr;
    uint32_t lo, hi;
} eq_stmt;

/* ---- instructions over double registers */
typedef enum eq_op {
    O_ADD, O_SUB, O_MUL, O_DIV, O_NEG, O_POW, O_EXP, O_LOG, O_SQRT, O_ABS, O_SIN, O_COS, O_TANH,
    O_INT, O_FLOOR, O_CEIL, O_CLIP, O_LT, O_GT, O_LE, O_GE, O_EQ, O_NE, O_AND, O_OR, O_NOT, O_SEL,
    O_MOV, O_XI, O_NOPS
} eq_op;

typedef struct eq_insn {
    uint8_t op;
    uint32_t dst, a, b, c;
} eq_insn;

/* Register file: [0, n_vars) the state arrays of one neuron, then t, i,
 * not_refractory, the externals (w, count, sign), the constants, then
 * temporaries. A program reads registers and writes temporaries; the
 * state registers change only at its commits (MOV), in statement order. */
enum { R_T = 0, R_I, R_NR, R_W, R_COUNT, R_SIGN, R_EWEIGHT /* the connectome's float `weight` */, R_NFIXED };
#define EQ_VBASE ((uint32_t)R_NFIXED)
#define EQ_CBASE (EQ_VBASE + BL_EQ_MAX_VARS)
#define EQ_TBASE (EQ_CBASE + EQ_MAX_CONSTS)

struct eq_vm_ctx;
/* A block compiled to C (eq_cgen.c): the same computation as eq_vm_run on the
 * same register file, bit for bit. It writes back to r only what callers
 * read: the state registers its commits (MOV) set, in order, and the result
 * register; temporaries live in locals. */
typedef void (*eq_block_fn)(double *r, const struct eq_vm_ctx *ctx);

typedef struct eq_prog {
    eq_insn *code;
    uint32_t n_code, cap_code;
    uint32_t result; /* threshold, weight: the register holding the value */
    uint32_t n_xi;   /* xi draws per neuron per step */
    eq_block_fn fn;  /* generated code for this block, NULL: interpret */
} eq_prog;

/* An instruction list compiled beside the model's blocks (bl_eq_model.extra):
 * its function is named bl_eq_<name> and writes back to r the registers in
 * out (the many results of an eq_lower_many list: a system's f, J entries). */
typedef struct eq_extra_prog {
    const char *name;
    eq_prog *prog;
    const uint32_t *out;
    size_t n_out;
} eq_extra_prog;

/* An ODE system's RHS and vector-Jacobian products as direct functions
 * (eq_cgen.c): the same statements as the lists' generated functions, with
 * the state read from y, the parameters from p and t as an argument (no
 * register file to fill and read back), the RHS written to f, and the
 * products scattered row by row as the interpreter's callback does (eq_ode.c,
 * vjp_cb). Generated only when the lists read nothing else; bound after
 * codegen, NULL otherwise. */
typedef struct eq_ode_direct {
    const eq_prog *rhs, *jac, *pjac;
    const uint32_t *f_reg;
    size_t n;
    const uint32_t *jrow, *jcol, *jreg, *prow, *pcol, *preg; /* row-sorted entries */
    size_t nj, npj;
    void (*rhs_fn)(const double *y, const double *p, double t, double *f);
    void (*vjp_fn)(const double *y, const double *p, double t, const double *w, double *out_y, double *out_p);
} eq_ode_direct;

#define EQ_MAX_CONSTS 4096u
#define EQ_SYM_UNKNOWN 255

typedef struct eq_text {
    const char *text;
    size_t len;
    const char *name; /* "equations", "threshold", "parameter v_0", ... */
} eq_text;

/* Per-edge (synaptic) variables, from the `synapses` text (eq_syn.c): each
 * is declared as a per-neuron parameter appended to the equations (so that
 * on_pre / on_post check, lower and address it like any variable), at the
 * end of the var slots; the connectome row keeps one value per edge for it.
 * Event-driven ones (dx/dt = -x/tau) are advanced at each event by their
 * exact solution over the time since the edge's last update, as Brian2. */
#define EQ_SYN_TEXT_MAX 8192u
typedef struct eq_syn {
    uint32_t n;               /* per-edge variables: var slots [first, first + n) */
    uint32_t first;
    int32_t w_slot;           /* w's slot when w is per-edge, else -1 */
    uint32_t n_ed;            /* event-driven ones, in name order (Brian2's) */
    int32_t ed_slot[BL_EQ_MAX_VARS];
    double ed_lio[BL_EQ_MAX_VARS];  /* 1.0 / tau, as Brian2's loop invariant _lio */
    char ed_var[BL_EQ_MAX_VARS][BL_EQ_MAX_IDENT + 1];
    char ed_tau[BL_EQ_MAX_VARS][BL_EQ_MAX_IDENT + 1];
} eq_syn;

/* Turn a `synapses` text into declarations appended to the equations (decl,
 * NUL-terminated, room for cap bytes), remembering the event-driven ones
 * in syn (slots resolved later by eq_syn_finish). Messages name the line. */
bl_status eq_syn_parse(const char *text, eq_syn *syn, char *decl, size_t cap, bl_error *err);
/* After compiling: slots, tau values, and the rule that only on_pre* and
 * on_post touch per-edge variables. */
bl_status eq_syn_finish(bl_eq_model *m, bl_error *err);

/* A per-neuron parameter set neuron by neuron ([model.per_neuron],
 * eq_per_neuron.c): from a neurons.csv column times a unit (a = the unit's
 * value), or drawn: normal (a mean, b sd) or uniform (a lo, b hi). */
enum { EQ_PN_COLUMN = 1, EQ_PN_NORMAL, EQ_PN_UNIFORM };
typedef struct eq_pn {
    int32_t slot;
    uint8_t kind;
    char name[BL_EQ_MAX_IDENT + 1];
    char column[128];
    double a, b;
} eq_pn;

struct bl_toml_node;
/* [model.per_neuron] of a model's TOML table: names, keys, units and
 * dimensions checked; values are made later (bl_eq_row_per_neuron). */
bl_status eq_per_neuron_read(bl_eq_model *m, const struct bl_toml_node *t, const char *path, bl_error *err);

struct bl_eq_model {
    eq_node *nodes;
    uint32_t n_nodes, cap_nodes;
    eq_sym *syms;
    uint32_t n_syms, cap_syms;
    eq_text texts[B_NBLOCKS];
    char *owned[B_NBLOCKS]; /* copies of the texts */
    char method[32];
    double dt;
    uint32_t n_vars;  /* state arrays */
    int32_t var_sym[BL_EQ_MAX_VARS];
    char var_unit[BL_EQ_MAX_VARS][48];
    double var_init[BL_EQ_MAX_VARS];
    uint32_t n_regs;  /* registers a program needs */
    uint32_t n_consts;
    double consts[EQ_MAX_CONSTS];
    char *const_text[EQ_MAX_CONSTS]; /* how each constant was computed */
    uint32_t update_consts_lo, update_consts_hi; /* constants of the state update */
    eq_prog update, threshold, reset, on_pre, on_post, on_input, weight;
    int has_threshold, has_reset, has_on_pre, has_on_post, has_on_input, has_weight;
    /* Synapses (docs/models.md "Synapses"): on_pre chosen by the edge's sign,
     * per-edge variables, and whether on_pre reaches refractory targets. */
    eq_prog on_pre_exc, on_pre_inh;
    int has_on_pre_exc, has_on_pre_inh;
    /* on_pre chosen by the source's field of neurons.csv column by_column
     * (on_pre_by): entry k (block B_ON_PRE_BY0 + k, named "on_pre.VALUE")
     * for the value by_value[k]; by_class[src] is 1 + the entry of a source
     * neuron, 0 for a value without one, made for by_n neurons when a
     * connectome plan loads its connectome (bl_eq_row_on_pre_by). */
    uint32_t n_by;
    char by_column[128];
    char by_value[EQ_MAX_BY][BL_EQ_MAX_IDENT + 1];
    char by_name[EQ_MAX_BY][BL_EQ_MAX_IDENT + 16];
    eq_prog by_prog[EQ_MAX_BY];
    uint8_t *by_class;
    uint64_t by_n;
    int has_syn;
    int delay_per_edge;     /* delay = "connectome" (eq_row.c) */
    int deliver_refractory; /* refractory_input = "deliver": on_pre reaches refractory targets (Brian2) */
    eq_syn syn;
    int64_t ref_steps; /* refractory period in steps (Brian2's timestep()), -1: none */
    int uses_noise;
    uint32_t first_temp;
    int order_brian2; /* the explicit method's update follows Brian2's code generation (eq_brian2.c) */
    uint32_t work; /* budget of the linear splitting, against inputs made to explode it */
    struct eq_jit *jit; /* generated code (eq_cgen.c): the loaded object and its provenance, NULL: none */
    void (*update_soa)(uint64_t lo, uint64_t hi, double *const *vars, const uint8_t *nr, double t,
                       const struct eq_vm_ctx *ctx); /* eq_update_range's fast path, NULL: none */
    void (*threshold_soa)(uint64_t lo, uint64_t hi, double *const *vars, const uint8_t *nr, double t,
                          uint8_t *fire); /* eq_threshold_range's fast path, NULL: none */
    /* [model.per_neuron] (eq_per_neuron.c): n_pn entries; pn_of[slot] is
     * 1 + the entry of a var slot (0: none); pn_val [n_pn][pn_n] the values
     * once a connectome plan made them (pn_n = 0 before). */
    eq_pn *pn;
    uint32_t n_pn;
    int16_t pn_of[BL_EQ_MAX_VARS];
    double *pn_val;
    uint64_t pn_n;
    /* Warnings of eq_stiffness (eq_stiff.c), lines joined by '\n'; "" none. */
    char warnings[1024];
    /* More instruction lists compiled with the blocks (an ODE system's RHS,
     * Jacobians and observations, eq_ode.c), owned by their caller: each
     * becomes bl_eq_<name>, run through eq_exec like a block. */
    const struct eq_extra_prog *extra;
    size_t n_extra;
    struct eq_ode_direct *ode_direct; /* an ODE system's direct functions (eq_ode.c), NULL: none */
    /* An ODE system (eq_ode.c) rather than a neuron model: time is
     * dimensionless (dx/dt has x's dimension), only t is built in (no units,
     * dt, xi, i), and the parameters are n_oparams run-time registers after
     * the constants, so the temporaries start after them. 0 for neuron models. */
    int ode;
    uint32_t n_oparams;
};

/* The on_pre_by block of an edge from source src (eq_row.c, eq_part.c);
 * NULL: the edge delivers nothing (a source whose value has no entry, or
 * a silenced source, count 0, as with on_pre_exc / on_pre_inh). */
static inline const eq_prog *eq_by_block(const struct bl_eq_model *m, int32_t src, int32_t count)
{
    unsigned k = count && src >= 0 && (uint64_t)src < m->by_n ? m->by_class[src] : 0u;
    return k ? &m->by_prog[k - 1] : NULL;
}

/* ---- parser (eq_parse.c) */
typedef struct eq_parser {
    bl_eq_model *m;
    int block;
    const char *s;
    size_t len, pos;
    eq_tok tok;
    size_t tok_lo, tok_hi;
    double tok_num;
    int tok_int;
    char tok_id[BL_EQ_MAX_IDENT + 1];
    unsigned depth;
    bl_error *err;
} eq_parser;

int32_t eq_node_new(bl_eq_model *m, eq_kind kind, int32_t a, int32_t b, bl_error *err);
/* Set the third child (clip, select), keeping the height right; -1 if too high. */
int32_t eq_node_set_c(bl_eq_model *m, int32_t n, int32_t c, bl_error *err);
int32_t eq_sym_find(const bl_eq_model *m, const char *name);
int32_t eq_sym_add(bl_eq_model *m, const char *name, eq_symkind kind, bl_error *err);
/* Report an error at a span of a block: "<block> line L: '<line>': <what> '<term>'". */
bl_status eq_fail_at(const bl_eq_model *m, int block, uint32_t lo, uint32_t hi, bl_error *err, bl_status st,
                     const char *what);

bl_status eq_parse_equations(bl_eq_model *m, bl_error *err);
/* A single expression filling the whole block. */
bl_status eq_parse_expr_block(bl_eq_model *m, int block, int32_t *out, bl_error *err);
/* Statements separated by ';' or newlines. */
bl_status eq_parse_stmts(bl_eq_model *m, int block, eq_stmt *out, uint32_t cap, uint32_t *n, bl_error *err);

/* ---- checking (eq_check.c): resolves names, computes dimensions */
typedef struct eq_type {
    eq_dim dim;
    int boolean;
} eq_type;
bl_status eq_check(bl_eq_model *m, int32_t node, eq_type *out, bl_error *err);
bl_status eq_resolve_equations(bl_eq_model *m, bl_error *err);
/* Value of a tree of numbers, units and constants (parameters): 1 if it is one. */
int eq_is_const(const bl_eq_model *m, int32_t node);
bl_status eq_const_eval(const bl_eq_model *m, int32_t node, double *out, bl_error *err);
/* Does the tree read symbol kinds in mask (1u << S_...), or symbol sym (sym >= 0)? */
int eq_reads(const bl_eq_model *m, int32_t node, unsigned mask, int32_t sym);

/* ---- methods (eq_method.c): the state update as statements over new nodes */
typedef struct eq_update {
    int32_t tmp_sym[4 * BL_EQ_MAX_VARS]; /* temporaries, computed in order */
    int32_t tmp_expr[4 * BL_EQ_MAX_VARS];
    uint32_t n_tmp;
    int32_t new_expr[BL_EQ_MAX_VARS];    /* per state variable (by slot): its new value, -1: unchanged */
} eq_update;
bl_status eq_method_apply(bl_eq_model *m, eq_update *u, bl_error *err);
bl_status eq_linear_apply(bl_eq_model *m, eq_update *u, bl_error *err);
/* euler, rk2, rk4 in the order Brian2 2.5.1 generates: BL_ERR_UNSUPPORTED (u untouched)
 * when the model uses what that emulation does not cover. */
bl_status eq_brian2_apply(bl_eq_model *m, eq_update *u, bl_error *err);

/* ---- lowering and the interpreter (eq_lower.c, eq_vm.c) */
bl_status eq_lower_update(bl_eq_model *m, const eq_update *u, bl_error *err);
bl_status eq_lower_expr(bl_eq_model *m, eq_prog *p, int32_t node, bl_error *err);
bl_status eq_lower_stmts(bl_eq_model *m, eq_prog *p, const eq_stmt *s, uint32_t n, bl_error *err);
void eq_prog_free(eq_prog *p);
/* Several trees into one program sharing every common node (computed once):
 * out[k] receives the register holding node[k]'s value; a node < 0 is skipped. */
bl_status eq_lower_many(bl_eq_model *m, eq_prog *p, const int32_t *node, uint32_t n, uint32_t *out, bl_error *err);

/* ---- symbolic differentiation (eq_diff.c) */
/* A structural zero: the tree does not depend on the variable. */
#define EQ_DZERO (-2)
/* d node / d (symbol var_sym) as a new tree of the same arena, or EQ_DZERO,
 * or -1 on error (err set). memo: m->n_nodes entries (as when the call is
 * made) set to EQ_DMEMO_UNSET, kept across calls for the same variable so
 * shared subtrees are differentiated once. Subexpressions must be inlined. */
#define EQ_DMEMO_UNSET (-3)
int32_t eq_diff(bl_eq_model *m, int32_t node, int32_t var_sym, int32_t *memo, uint32_t n_memo, bl_error *err);
const char *eq_op_name(int op);
/* Run a program on one register file. eq_cgen.c writes this struct's
 * definition into every generated source (EQ_CGEN_CTX_DECL there): change
 * both together (the generated code's cache key changes with its text). */
typedef struct eq_vm_ctx {
    bl_eq_normal_fn normal;
    void *user;
    uint32_t neuron;
    uint64_t step;
} eq_vm_ctx;
void eq_vm_run(const eq_prog *p, double *r, const eq_vm_ctx *ctx);

/* The one entry point every kernel uses to run a block (eq_row.c, eq_pop.c,
 * the partition kernels): the generated function when the model was given
 * one (bl_eq_model_codegen), else the interpreter. Both compute the same
 * bits; which one ran is the model's exec note (bl_eq_model_exec_note). */
static inline void eq_exec(const eq_prog *p, double *r, const eq_vm_ctx *ctx)
{
    if (p->fn)
        p->fn(r, ctx);
    else
        eq_vm_run(p, r, ctx);
}

/* The state update of neurons [lo, hi): vars[k] is state array k (n_vars
 * arrays, indexed by neuron), nr[i] neuron i's not_refractory (0/1), t the
 * step's time. For a partition kernel (and eq_pop.c): with generated code,
 * one loop over the range in structure-of-arrays form (bl_eq_update_soa,
 * vectorisable); else per neuron through the register file r (constants
 * loaded at EQ_CBASE, as eq_pop.c and eq_row.c do) and eq_exec. Both give
 * the bits of running the update block neuron by neuron. ctx->step must be
 * the step (xi draws are keyed by neuron, step and k); ctx->neuron is
 * overwritten. The arrays must not overlap. */
static inline void eq_update_range(const bl_eq_model *m, uint64_t lo, uint64_t hi, double *const *vars,
                                   const uint8_t *nr, double t, double *r, eq_vm_ctx *ctx)
{
    if (m->update_soa) {
        m->update_soa(lo, hi, vars, nr, t, ctx);
        return;
    }
    r[R_T] = t;
    for (uint64_t i = lo; i < hi; i++) {
        for (uint32_t v = 0; v < m->n_vars; v++)
            r[EQ_VBASE + v] = vars[v][i];
        r[R_I] = (double)i;
        r[R_NR] = nr[i];
        ctx->neuron = (uint32_t)i;
        eq_exec(&m->update, r, ctx);
        for (uint32_t v = 0; v < m->n_vars; v++)
            vars[v][i] = r[EQ_VBASE + v];
    }
}

/* The threshold of neurons [lo, hi): fire[i] = 1 where it holds (the
 * value != 0), else 0, for every neuron of the range, refractory or not
 * (the caller applies the refractory rule), with the arguments of
 * eq_update_range. Generated code: one loop (bl_eq_threshold_soa); else per
 * neuron through r and eq_exec. The threshold only reads. */
static inline void eq_threshold_range(const bl_eq_model *m, uint64_t lo, uint64_t hi, double *const *vars,
                                      const uint8_t *nr, double t, double *r, eq_vm_ctx *ctx, uint8_t *fire)
{
    if (m->threshold_soa) {
        m->threshold_soa(lo, hi, vars, nr, t, fire);
        return;
    }
    r[R_T] = t;
    for (uint64_t i = lo; i < hi; i++) {
        for (uint32_t v = 0; v < m->n_vars; v++)
            r[EQ_VBASE + v] = vars[v][i];
        r[R_I] = (double)i;
        r[R_NR] = nr[i];
        ctx->neuron = (uint32_t)i;
        eq_exec(&m->threshold, r, ctx);
        fire[i] = r[m->threshold.result] != 0;
    }
}

/* ---- generated C (eq_cgen.c) */
/* The C source of every block of m (functions bl_eq_<block>), NULL when out
 * of memory. Caller frees. Deterministic: the same model gives the same text. */
char *eq_cgen_source(const bl_eq_model *m);
/* Release the loaded object and the provenance (bl_eq_model_destroy). */
void eq_jit_free(struct eq_jit *j);

/* Run statements `prog` of model `other` on one neuron of population p:
 * `other` was compiled from the same equations (the same state layout,
 * checked by eq_same_layout) with its own statements, such as a second
 * receptor's on_pre; regs is a register file of other->n_regs with its
 * constants loaded. The network of equation models (eq_net.c) uses it. */
int eq_same_layout(const bl_eq_model *a, const bl_eq_model *b);
void eq_pop_run_other(bl_eq_pop *p, const bl_eq_model *other, const eq_prog *prog, double *regs, uint32_t neuron,
                      double w);

eq_op eq_node_op(const eq_node *x);
/* The one definition of every operation: the interpreter and the compile-
 * time folding of constants both call it, so both round alike. */
double eq_apply(int op, double a, double b, double c);

/* Tree helpers the methods share (eq_method.c). */
int32_t eq_num(bl_eq_model *m, double v, bl_error *err);
int32_t eq_symref(bl_eq_model *m, int32_t sym, bl_error *err);
int32_t eq_bin(bl_eq_model *m, eq_kind k, int32_t a, int32_t b, bl_error *err);
int32_t eq_call(bl_eq_model *m, eq_fn fn, int32_t a, bl_error *err);
int32_t eq_expand(bl_eq_model *m, int32_t n, bl_error *err);
int32_t eq_subst(bl_eq_model *m, int32_t n, const int32_t *map, bl_error *err);
/* A tree as fully parenthesised text (cut at size). */
void eq_render(const bl_eq_model *m, int32_t n, char *buf, size_t size);

/* After compiling: warn (m->warnings) about an explicit method unstable at
 * this dt for a linear decay of the model (eq_stiff.c). */
void eq_stiffness(bl_eq_model *m);

/* The starting value of var slot k for neuron i: its [model.per_neuron]
 * value when it has one, else the common one ([model.init] or 0). */
static inline double eq_var_start(const bl_eq_model *m, uint32_t k, uint64_t i)
{
    int j = m->pn_of[k];
    return j && i < m->pn_n ? m->pn_val[(size_t)(j - 1) * m->pn_n + i] : m->var_init[k];
}

#endif
