/* A model's row: everything BrainlessLab knows about one connectome LIF
 * model, in one constant, defined at the end of the model's own file
 * (src/models/lif_<name>.c) and listed in src/models/model_table.c.
 *
 *   - its name, the dtype of its state (v, g) and its default parameters;
 *   - its parameter table (names, units, valid ranges), from which
 *     bl_lif_params_validate checks every parameter set, whoever made it (a
 *     plan, `simulate`, Python, a library caller): one rule, and messages that
 *     name the parameter;
 *   - its own checks beyond the table (validate), e.g. shiu2024's exact
 *     solution divides by tau_m - tau_syn;
 *   - its constants (computed once from the parameters, opaque to the engine);
 *   - the exact-rest predicate: is the rest state a fixed point of one step,
 *     bit for bit, that never fires? (if so, the cpu and mpi backends skip
 *     resting neurons; otherwise they step every neuron);
 *   - its kernels (src/engine/kernel_ops.h): the reference trial and the
 *     partition step. The engine calls them through the row, chosen once
 *     when the network is created (bl_network.model), and never names a model.
 *
 * Adding a model: its equations in src/models/lif_<name>.h (BL_HD functions),
 * its kernels and its row in src/models/lif_<name>.c, one line in
 * model_table.c, and an independent oracle under tests/oracles. docs/models.md
 * walks through it. No public enum changes: the model's id (bl_preset) is its
 * position in the table and callers find it by name. */
#ifndef BL_MODELS_MODEL_ROW_H
#define BL_MODELS_MODEL_ROW_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/engine.h"
#include "brainlesslab/model.h"

typedef struct bl_ref_kernel bl_ref_kernel;
typedef struct bl_part_kernel bl_part_kernel;

/* How a parameter is checked, beyond being finite and within [min, max]. */
enum {
    BL_PARAM_MIN_OPEN = 1, /* > min rather than >= min */
    BL_PARAM_STEPS = 2,    /* a whole number of dt_ms steps, within [min_steps, max_steps] */
    BL_PARAM_TAU = 4,      /* a time constant: at least one step (>= dt_ms) */
    BL_PARAM_SWITCH = 8,   /* an int field that is 0 or 1 (min, max unused) */
};

/* One settable parameter: a field of bl_lif_params. */
typedef struct bl_model_param {
    const char *name; /* the field, as plans, the CLI and Python spell it */
    const char *unit; /* "ms", "mV", "" */
    size_t offset;    /* offsetof(bl_lif_params, field) */
    unsigned flags;
    double min, max;
    int64_t min_steps, max_steps; /* BL_PARAM_STEPS only */
} bl_model_param;

typedef struct bl_model {
    const char *name;
    bl_dtype state_dtype;   /* of v and g, in results */
    bl_lif_params defaults; /* the preset's parameters (its preset field is set by the table) */
    /* The parameter table, NULL-name terminated (NULL: the LIF table that
     * both built-in models share, bl_lif_param_table). */
    const bl_model_param *params;
    size_t consts_size;
    /* Constants from validated parameters into consts_size bytes. */
    void (*make_consts)(const bl_lif_params *p, void *consts);
    /* Model-specific checks beyond the parameter table's (NULL: none). */
    bl_status (*validate)(const bl_lif_params *p, bl_error *err);
    /* The exact-rest predicate (see above). */
    int (*rest_is_fixed_point)(const bl_network *net);
    const bl_ref_kernel *ref;
    const bl_part_kernel *part;
    /* Optional: can `part` run this network's model? (NULL: always.) A row
     * whose models vary (the "equations" row) says no for what its partition
     * kernel lacks; the engine then runs the model on the reference backend
     * (auto, cpu) or refuses (mpi), naming *why. */
    int (*part_supports)(const bl_network *net, const char **why);
    /* (A partition kernel keeps every bit of a neuron's state in its
     * declared fields, a model's state arrays included (BL_PART_ARRAYS,
     * kernel_ops.h), so that a snapshot within a trial holds all of it.) */
} bl_model;

/* The parameters of the connectome LIF models (models/params.c). */
extern const bl_model_param bl_lif_param_table[];

/* Byte size of the state dtype. */
static inline size_t bl_model_state_size(const bl_model *m) { return bl_dtype_size(m->state_dtype); }

#endif
