/* Models from equations: Brian2-style model text compiled into one flat
 * instruction list per block (state update, threshold, reset, on_pre,
 * on_post, on_input), and an interpreter that runs a population of N
 * neurons on it. The interpreter is the reference execution of a model:
 * the generated-C backend (bl_eq_model_codegen) reproduces its bits.
 *
 *   equations  "dv/dt = (v_0 - v + g) / t_mbr : volt (unless refractory)"
 *              "I_syn = g_s * (E - v) : amp"       (subexpression)
 *              "I : amp"                           (per-neuron parameter)
 *   threshold  "v > v_th"          reset, on_*  "v = v_rst; g += w"
 *   parameters "-52 mV", "5 nS", 250 (numbers and SI-prefixed units; the
 *              value is computed as Brian2 computes it: -52 * 0.001)
 *   methods    linear, euler, heun, rk2, rk4, exponential_euler
 *
 * Every failure names the block, its line, the equation and the term at
 * fault (unknown variable, dimension mismatch, division by a parameter that
 * is zero, a threshold on a variable that does not exist). Inputs are
 * bounded (BL_EQ_MAX_*): a hostile text is refused, never followed. */
#ifndef BRAINLESSLAB_EQMODEL_H
#define BRAINLESSLAB_EQMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/error.h"
#include "brainlesslab/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BL_EQ_MAX_TEXT 65536u   /* bytes in one block of model text */
#define BL_EQ_MAX_DEPTH 64u     /* nesting of parentheses and operators */
#define BL_EQ_MAX_IDENT 64u     /* characters in one identifier */
#define BL_EQ_MAX_NODES 65536u  /* expression nodes in one model */
#define BL_EQ_MAX_VARS 256u     /* equations (state, subexpressions, per-neuron parameters) */
#define BL_EQ_MAX_PARAMS 1024u  /* entries of the parameter table */
#define BL_EQ_MAX_INSNS 65536u  /* instructions in one compiled block */

/* The model as text. Any string may be NULL (absent). Parameter values are
 * quantity texts ("-52 mV", "0.275*mV", "250"); init gives per-neuron state
 * variables a common starting value (default 0). */
typedef struct bl_eq_source {
    const char *equations;
    const char *method;     /* default "euler" */
    const char *threshold;  /* a condition */
    const char *reset;      /* statements */
    const char *refractory; /* a time: "2 ms", "t_rfc" */
    const char *on_pre;     /* statements; `w` is the edge's weight */
    const char *on_post;
    const char *on_input;   /* statements run when a stimulus event arrives */
    const char *weight;     /* expression of `count`, `sign` and parameters */
    size_t n_params;
    const char *const *param_names;
    const char *const *param_values;
    size_t n_init;
    const char *const *init_names;
    const char *const *init_values;
    /* Synapses (docs/models.md "Synapses"): per-edge variables ("w : 1",
     * "dapre/dt = -apre/taupre : 1 (event-driven)"), and on_pre statements
     * chosen by the edge's sign (in place of on_pre). */
    const char *synapses;
    const char *on_pre_exc;
    const char *on_pre_inh;
    /* on_pre chosen by a neurons.csv column of the edge's source (in place of
     * on_pre, on_pre_exc and on_pre_inh): on_pre_by names the column, and
     * entry k runs on_pre_by_texts[k] for the edges of sources whose field
     * is on_pre_by_values[k] (at most 16 entries); other sources' edges do
     * nothing. The values per neuron are read when a connectome plan loads
     * its connectome. */
    const char *on_pre_by;
    size_t n_on_pre_by;
    const char *const *on_pre_by_values;
    const char *const *on_pre_by_texts;
} bl_eq_source;

typedef struct bl_eq_model bl_eq_model;

/* Parse, check dimensions and compile for a time step of dt_s seconds
 * (constants that depend only on parameters and dt are computed here, with
 * the same operations in the same order as the update would). */
BL_API bl_status bl_eq_model_compile(const bl_eq_source *src, double dt_s, bl_eq_model **out, bl_error *err);

/* The same from a TOML file with a [model] table (method, equations,
 * threshold, reset, refractory, on_pre, on_post, on_input, weight,
 * [model.parameters], [model.init]). set_names/set_values override or add
 * parameters (a command line's --set). Messages start with the path. */
BL_API bl_status bl_eq_model_load(const char *path, double dt_s, size_t n_set, const char *const *set_names,
                                  const char *const *set_values, bl_eq_model **out, bl_error *err);
BL_API void bl_eq_model_destroy(bl_eq_model *m);

/* The model files this build ships (the .toml files of models/ in the source, installed
 * to share/brainlesslab/models; their text is compiled into the library):
 * count, the i-th name, and a name's TOML text (NULL when not shipped). */
BL_API size_t bl_eq_shipped_count(void);
BL_API const char *bl_eq_shipped_name(size_t i);
BL_API const char *bl_eq_shipped_text(const char *name, size_t *len);
/* 1 when the shipped model `name` is also a preset (`[model] preset =
 * "name"`), run by that preset's hand-written kernel (docs/models.md). */
BL_API int bl_eq_shipped_is_preset(const char *name);
/* bl_eq_model_load for a shipped model, by name. */
BL_API bl_status bl_eq_model_load_shipped(const char *name, double dt_s, size_t n_set, const char *const *set_names,
                                          const char *const *set_values, bl_eq_model **out, bl_error *err);

/* State arrays of a population, in the order the equations declare them:
 * differential variables and per-neuron parameters. */
BL_API size_t bl_eq_model_n_vars(const bl_eq_model *m);
BL_API const char *bl_eq_model_var_name(const bl_eq_model *m, size_t i);
/* The variable's dimension in SI base units ("volt", "amp", "m^2 kg s^-3 A^-1", "1"). */
BL_API const char *bl_eq_model_var_unit(const bl_eq_model *m, size_t i);
BL_API double bl_eq_model_dt(const bl_eq_model *m);
/* Does the update read xi (noise drawn from the caller)? */
BL_API int bl_eq_model_uses_noise(const bl_eq_model *m);
/* Warnings about the model that do not stop it (an explicit method unstable
 * at this dt for a linear decay: docs/models.md "Methods"), one per line;
 * NULL when none. `model check` prints them, a connectome run logs them. */
BL_API const char *bl_eq_model_warnings(const bl_eq_model *m);
/* The compiled blocks as text (instructions and constants, with the bits of
 * each constant in hex): what `brainlesslab model check` prints. Caller frees. */
BL_API char *bl_eq_model_describe(const bl_eq_model *m);
/* Value of a named constant of the compiled model (a parameter, or a
 * constant the update computes once, such as "exp(-dt/tau)"): 1 when found. */
BL_API int bl_eq_model_param(const bl_eq_model *m, const char *name, double *value);
/* The n-th constant the state update computes once (n from 0), its text and
 * value: 1 when it exists. For comparing against hand-written constants. */
BL_API int bl_eq_model_update_const(const bl_eq_model *m, size_t n, const char **text, double *value);

/* Generated C. Every block can run as C generated from its instruction list
 * (one statement per instruction, the same IEEE operations in the same
 * order, the same libm calls), compiled at run time by the system C compiler
 * (BL_CC, else cc or gcc on PATH) with -O3 -ffp-contract=off -fno-fast-math
 * -fno-trapping-math
 * into a shared object cached under $BL_CACHE_DIR (else
 * $XDG_CACHE_HOME/brainlesslab, else ~/.cache/brainlesslab) by the SHA-256 of
 * its source, the compiler's identity and the flags. It computes the
 * interpreter's bits; tests compare both byte for byte. */
typedef enum bl_eq_exec {
    BL_EQ_EXEC_AUTO = 0, /* generated C when a compiler works and BL_EQ_JIT is not 0; else the interpreter, with a note */
    BL_EQ_EXEC_INTERP,   /* the interpreter */
    BL_EQ_EXEC_JIT       /* generated C, or fail (no compiler, a compile error) */
} bl_eq_exec;

/* Choose how m runs from now on (call before running it, not while another
 * thread runs it). AUTO never fails for want of a compiler: the note says
 * why the interpreter runs. */
BL_API bl_status bl_eq_model_codegen(bl_eq_model *m, bl_eq_exec how, bl_error *err);
/* 1 when the blocks run as generated C. */
BL_API int bl_eq_model_compiled(const bl_eq_model *m);
/* One line: how the model runs and why ("generated C (gcc ..., cache hit)",
 * "interpreter (no C compiler: ...)"). */
BL_API const char *bl_eq_model_exec_note(const bl_eq_model *m);
/* The generated source that runs, or NULL (interpreted). */
BL_API const char *bl_eq_model_generated_source(const bl_eq_model *m);
/* Provenance as JSON {exec, note, compiler, compiler_path, flags,
 * source_sha256, cache_key, cache, cache_dir, compile_ms, compiler_cpu_ms}. Caller frees;
 * NULL: out of memory. */
BL_API char *bl_eq_model_codegen_json(const bl_eq_model *m);
/* Is code generation available here? 1 with the compiler's identity in
 * what, else 0 with the reason. */
BL_API int bl_eq_codegen_available(char *what, size_t size);

/* A population of n independent neurons. */
typedef struct bl_eq_pop bl_eq_pop;

/* A standard normal draw for xi number `k` of `neuron` at `step`; the caller
 * owns the stream (counter-based streams make it reproducible). */
typedef double (*bl_eq_normal_fn)(void *user, uint32_t neuron, uint64_t step, uint32_t k);

BL_API bl_status bl_eq_pop_create(const bl_eq_model *m, uint32_t n, bl_eq_pop **out, bl_error *err);
BL_API void bl_eq_pop_destroy(bl_eq_pop *p);
BL_API uint32_t bl_eq_pop_size(const bl_eq_pop *p);
/* The n values of state variable `name` (read and write), or NULL. */
BL_API double *bl_eq_pop_var(bl_eq_pop *p, const char *name);
BL_API void bl_eq_pop_set_noise(bl_eq_pop *p, bl_eq_normal_fn fn, void *user);
/* One time step, in Brian2's schedule: state update (t = step * dt), then the
 * threshold, then the reset of the neurons that spiked. The indices of the
 * neurons that spiked, ascending, go to spiked (room for n); their count to
 * *n_spiked. Fails only when the model uses xi and no noise is set. */
BL_API bl_status bl_eq_pop_step(bl_eq_pop *p, uint32_t *spiked, uint32_t *n_spiked, bl_error *err);
BL_API uint64_t bl_eq_pop_steps(const bl_eq_pop *p);
/* Run the on_input statements for one neuron (a stimulus event). */
BL_API bl_status bl_eq_pop_input(bl_eq_pop *p, uint32_t neuron, bl_error *err);
/* Run the on_pre statements for one neuron with edge weight w. */
BL_API bl_status bl_eq_pop_on_pre(bl_eq_pop *p, uint32_t neuron, double w, bl_error *err);

#ifdef __cplusplus
}
#endif
#endif
