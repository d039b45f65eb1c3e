/* The node-kind table: one row (bl_res_kind_ops) per reservoir node kind, one
 * file per kind (src/reservoir/falandays.c, sorn.c) and the table in
 * src/reservoir/res_kind_table.c, as tasks have theirs (src/tasks/task_ops.h).
 *
 * A row says what differs between kinds outside the per-frame equations:
 * its name, its parameters (names, booleans, valid ranges), its presets and
 * string-valued parameters, how a node is built (from a bl-philox-v1 seed or
 * a philox-host-v1 generator), loaded from and saved to a bundle, and which
 * traces a trajectory writes. The per-frame equations (falandays_eq.h,
 * sorn_eq.h) are stepped by res_phases.h for both float widths; they are the
 * layout of bl_res_state, not rows.
 *
 * Adding a kind: its equations, a file with its row, one line in
 * res_kind_table.c, a bl_res_kind value (the public enum names the kinds a
 * caller may ask for), and the oracle tests the existing kinds have
 * (tests/oracles, docs/reservoir.md). Private to the library. */
#ifndef BL_RESERVOIR_RES_KIND_H
#define BL_RESERVOIR_RES_KIND_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/reservoir.h"
#include "core/np_random.h"

/* What a parameter's value must be, beyond finite (booleans: 0 or 1). */
typedef enum bl_res_rule {
    BL_RES_ANY = 0,      /* any finite number */
    BL_RES_UNIT = 1,     /* in [0, 1] */
    BL_RES_NONNEG = 2,   /* >= 0 */
    BL_RES_POSITIVE = 3, /* > 0 */
    BL_RES_BOOL = 4      /* an int field, 0 or 1 */
} bl_res_rule;

typedef struct bl_res_param_def {
    const char *name; /* the field, as the Python project's configs spell it */
    size_t offset;    /* offsetof(bl_res_params, field) */
    bl_res_rule rule;
} bl_res_param_def;

typedef struct bl_res_preset {
    const char *name;
    void (*apply)(bl_res_params *p); /* on top of the defaults */
} bl_res_preset;

typedef struct bl_res_kind_ops {
    const char *name;
    bl_res_kind kind;
    const bl_res_param_def *params;  /* NULL-name terminated */
    const char *const *param_names;  /* the same names, NULL-terminated (bl_res_param_names) */
    const bl_res_preset *presets;    /* beyond "default"; NULL-name terminated */
    const char *preset_names;        /* for messages: "default, ..." */
    /* String-valued parameters (NULL: none): *known = 1 and the result when
     * name is one of them, else *known = 0. */
    bl_status (*set_string)(bl_res_params *p, const char *name, const char *value, int *known, bl_error *err);
    const char *string_hint;         /* appended to the unknown-parameter message ("" when none) */
    int input_link_p;                /* takes per-receptor input link probabilities */
    /* A node from a bl-philox-v1 seed, or from a philox-host-v1 generator
     * (res_construct.c, res_construct_host.c); p validated, dimensions checked. */
    bl_status (*construct)(const bl_res_params *p, uint32_t n, uint32_t r, uint32_t e, uint64_t seed,
                           bl_res_state **out, bl_error *err);
    bl_status (*construct_host)(const bl_res_params *p, uint32_t n, uint32_t r, uint32_t e, bl_np_rng *g,
                                bl_res_state **out, bl_error *err);
    /* A bundle's arrays (res_bundle.c): read into a node, written from one
     * (dense recurrent weights and mask given, rows x rows). */
    bl_status (*load)(const char *dir, const bl_res_params *p, bl_res_state **out, bl_error *err);
    bl_status (*save)(const bl_res_state *s, const double *dense, const uint8_t *mask, const char *dir,
                      bl_error *err);
    /* The trajectory's per-frame threshold trace, and whether it also has the
     * unit traces acts.npy and errors.npy. */
    const char *threshold_trace;
    int unit_traces;
} bl_res_kind_ops;

/* The row of a kind (NULL when kind is not one). */
const bl_res_kind_ops *bl_res_kind_of(bl_res_kind kind);
/* Known kind names, comma-separated, for messages. */
const char *bl_res_kind_names(char *buf, size_t size);

/* Each kind's entry points, named by its row. */
bl_status bl_res_construct_falandays(const bl_res_params *p, uint32_t n, uint32_t r, uint32_t e, uint64_t seed,
                                     bl_res_state **out, bl_error *err);
bl_status bl_res_construct_sorn(const bl_res_params *p, uint32_t n, uint32_t r, uint32_t e, uint64_t seed,
                                bl_res_state **out, bl_error *err);
bl_status bl_res_host_falandays(const bl_res_params *p, uint32_t n, uint32_t r, uint32_t e, bl_np_rng *g,
                                bl_res_state **out, bl_error *err);
bl_status bl_res_host_sorn(const bl_res_params *p, uint32_t n, uint32_t r, uint32_t e, bl_np_rng *g,
                           bl_res_state **out, bl_error *err);
bl_status bl_res_load_falandays(const char *dir, const bl_res_params *p, bl_res_state **out, bl_error *err);
bl_status bl_res_load_sorn(const char *dir, const bl_res_params *p, bl_res_state **out, bl_error *err);
bl_status bl_res_save_falandays(const bl_res_state *s, const double *dense, const uint8_t *mask, const char *dir,
                                bl_error *err);
bl_status bl_res_save_sorn(const bl_res_state *s, const double *dense, const uint8_t *mask, const char *dir,
                           bl_error *err);

#endif
