/* Plan internals (private to src/plan): the plan object, and the helpers that
 * read typed values out of the TOML view with one-line messages of the form
 *     FILE:LINE:COL: KEY: what is wrong (the value)
 * Helpers are prefixed bl_pk_ ("plan key"). */
#ifndef BL_PLAN_IMPL_H
#define BL_PLAN_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/plan.h"
#include "plan/toml_bridge.h"

/* Dotted key paths are cut to this length in messages (a hostile key cannot
 * fill the message). */
#define BL_PK_PATH_MAX 256

/* A resolved population and the storage behind its public view. */
typedef struct bl_pk_population {
    bl_plan_population view;
    char *name;
    char *selector;
    int32_t *neurons;
    int64_t expect_count; /* [[population]] only: -1 when not given */
    double *segments;     /* [[stimulus]] rate table (3 per segment) */
    int32_t *schedule;    /* [[stimulus]] schedule pairs */
    char schedule_sha256[65];
    bl_current current;      /* [[stimulus]] current = ... (plan_current.c); view.current points here */
    char *current_variable;
    double *current_values;
    int64_t *current_steps;
    char current_sha256[65]; /* values = "file.npy" ("" otherwise) */
} bl_pk_population;

/* A resolved plan: the header (identity and its row of the operations
 * table), the inputs, the canonical JSON and its hash, and the operation's
 * section. A row keeps its section in `spec` (the reservoir family's
 * bl_res_plan, a new operation's own struct); the connectome family
 * (connectome, audit, screen) shares the network fields below, which the
 * population and selector code reads. */
struct bl_plan {
    /* identity */
    char *path;      /* absolute */
    char *text;      /* the plan file's bytes as read and parsed (plan.toml of the record) */
    size_t text_len;
    char *id;
    char *operation;
    char *description;
    const struct bl_operation *op; /* the row that loaded it (plan_op.h) */
    void *spec;                    /* the row's section (op->free_spec frees it) */
    /* network */
    bl_connectome *connectome;
    int part, parts;       /* the share of the connectome loaded (bl_plan_load_part); 0, 1 = whole */
    char *connectome_path; /* absolute */
    char manifest_sha256[65];
    bl_lif_params params;
    char *preset;
    struct bl_eq_model *eq; /* [model] equations: the compiled model (params.equations), else NULL */
    char *eq_json;          /* and its table as the resolved plan records it */
    /* populations: named [[population]] tables, then stimuli and silences */
    bl_pk_population *named;
    size_t n_named;
    bl_pk_population *stimuli;
    size_t n_stimuli;
    bl_pk_population *silences;
    size_t n_silences;
    int32_t *silenced;
    size_t n_silenced;
    /* run */
    uint32_t trials;
    double duration_ms;
    uint64_t steps;
    uint64_t seed;
    int has_seed; /* the plan gives [run] seed (an audit plan need not) */
    char *backend;
    int threads;
    /* outputs */
    int out_spikes, out_counts, out_state, out_propagation;
    const bl_plan_population *spikes_subset; /* outputs.spikes = "NAME"; NULL: all */
    const bl_plan_population **psth_pops;     /* outputs.psth */
    size_t n_psth_pops;
    double psth_bin_ms;
    uint64_t psth_bin_steps;
    const bl_plan_population *probe_pop; /* outputs.probes */
    uint64_t probe_every_steps;
    double probe_every_ms;
    int top_responders;
    /* inputs and identity of the resolved form */
    bl_plan_input *inputs;
    char **input_strings; /* storage for the input paths and hashes */
    size_t n_inputs;
    char *json;
    char hash[65];
};

/* Operation "audit": its section (plan->spec; plan_audit.c). */
typedef struct bl_pk_audit {
    bl_plan_audit view;
    const bl_plan_population **pops; /* storage behind view.populations */
    char **columns;                  /* storage behind view.columns */
} bl_pk_audit;

/* Operation "screen": its section (plan->spec; plan_screen.c). */
typedef struct bl_pk_screen {
    bl_plan_axis *axes;
    size_t n_axes;
} bl_pk_screen;

/* What every helper needs to name the place of a fault. */
typedef struct bl_pk_ctx {
    const char *file; /* the plan path as the user gave it */
    bl_error *err;
} bl_pk_ctx;

/* Fail with "FILE:LINE:COL: KEY: message" (the position is the node's, left
 * out when node is NULL or has none; KEY is left out when NULL). */
bl_status bl_pk_fail(const bl_pk_ctx *ctx, bl_status status, const bl_toml_node *node,
                     const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Copy text (len bytes) for a one-line message: control characters are
 * escaped and long text is cut with "...". */
void bl_pk_printable(char *dst, size_t size, const char *text, size_t len);
/* A value as messages show it: string "abc", integer 5, float 1.5, boolean
 * true, table, array of 3 elements, date 1979-05-27. */
void bl_pk_describe(const bl_toml_node *node, char *dst, size_t size);
/* parent + "." + key (or key alone when parent is empty), printable. */
void bl_pk_join(char *dst, size_t size, const char *parent, const char *key, size_t key_len);
/* parent + "[i]". */
void bl_pk_index(char *dst, size_t size, const char *parent, size_t i);

/* Refuse the first key of table `node` (at path `where`, "" for the root) not
 * in the NULL-terminated `allowed`, listing the allowed keys. */
bl_status bl_pk_check_keys(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where,
                           const char *const *allowed);

/* Typed lookups of key in table `node` (at path `where`). `found` (may be
 * NULL) tells whether the key is present; when absent and required the call
 * fails, otherwise the output keeps its default. Type mismatches fail naming
 * the key, the expected type and the value given. */
bl_status bl_pk_table(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where,
                      const char *key, int required, const bl_toml_node **out);
bl_status bl_pk_string(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where,
                       const char *key, int required, const char **out, int *found);
bl_status bl_pk_int(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where,
                    const char *key, int required, int64_t min, int64_t max, int64_t *out,
                    int *found);
/* Finite numbers (integers accepted). */
bl_status bl_pk_double(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where,
                       const char *key, int required, double *out, int *found);
bl_status bl_pk_bool(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where,
                     const char *key, int required, int *out, int *found);

/* A name for an id or a population: [A-Za-z0-9._-], 1..BL_PLAN_MAX_NAME. */
int bl_pk_valid_name(const char *s, size_t len);

char *bl_pk_strdup(const char *s);

/* Shortest "%.*g" text (15 to 17 digits) that reads back as the same double,
 * so that canonical JSON and messages show 0.1 as 0.1. */
void bl_pk_number(char *dst, size_t size, double x);

/* Resolve the selector of a [[stimulus]] or [[silence]] table `node` (at path
 * `where`) against the plan's connectome: exactly one of neurons = [...],
 * ids = [...], select = {column = value(s)} or population = "NAME" (a
 * [[population]] table). Fills pop->neurons (sorted, unique, non-empty) and
 * pop->selector (compact JSON of the selector as written). */
bl_status bl_pk_resolve_selector(const bl_pk_ctx *ctx, const bl_plan *plan,
                                 const bl_toml_node *node, const char *where,
                                 bl_pk_population *pop);
/* Translate the selector keys of table `node` (at `where`) and resolve them
 * with the library (plan_select.c): the neurons and canonical JSON into pop.
 * self: a [[population]]'s ordinal (the tables above it are visible; its
 * sample's stream), or plan->n_named for a stimulus or silence. */
bl_status bl_pk_select(const bl_pk_ctx *ctx, const bl_plan *plan, const bl_toml_node *node, const char *where,
                       size_t self, int64_t expect_count, bl_pk_population *pop);

/* [[population]] tables (plan_population.c). Read names and keys before the
 * connectome is loaded (so typos fail fast), then resolve them in order after:
 * a population may refer only to populations defined above it. */
bl_status bl_pk_read_named(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_plan *plan);
bl_status bl_pk_resolve_named(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_plan *plan);
/* The named population whose name is the string node `v` (at `path`), among
 * the first `visible` of the plan's [[population]] tables. */
bl_status bl_pk_find_named(const bl_pk_ctx *ctx, const bl_plan *plan, const bl_toml_node *v,
                           const char *path, size_t visible, const bl_pk_population **out);

/* Append an input file (strings are copied). */
/* current = "dc" | "step" | "ramp" | "table" | "noise" in a [[stimulus]]
 * table (plan_current.c): current injection into a model from equations. */
bl_status bl_pk_read_current(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where, bl_plan *plan,
                             bl_pk_population *pop);
bl_status bl_pk_add_input(bl_plan *plan, const char *role, const char *path, const char *sha256,
                          uint64_t bytes, bl_error *err);

/* [connectome] path: resolve (relative to plan_dir), load, fingerprint, and
 * list the manifest and data files as inputs. */
bl_status bl_pk_load_connectome_dir(const bl_pk_ctx *ctx, const bl_toml_node *root, const char *plan_dir,
                                    bl_plan *plan);
/* The audit operation (plan_audit.c). */
bl_status bl_pk_load_audit_plan(const bl_pk_ctx *ctx, const bl_toml_node *root, const char *plan_dir,
                                bl_plan *plan);

/* The protocol keys of a [[stimulus]] table beyond name and selector
 * (plan_stimulus.c): rate_hz + start_ms/stop_ms, or rates = [[start, stop,
 * rate], ...], or baseline_hz + modulation = {start_ms, stop_ms, rate_hz},
 * or schedule = "file.npy"; and mode = "input" | "force". */
bl_status bl_pk_read_protocol(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where, bl_plan *plan,
                              bl_pk_population *pop);
/* After selection: a schedule's neurons must belong to the population. */
bl_status bl_pk_check_schedule(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where,
                               const bl_pk_population *pop);

/* The [screen] table of operation "screen" (plan_screen.c), read after the
 * rest of the connectome plan is resolved, into plan->spec (a bl_pk_screen). */
bl_status bl_pk_read_screen(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_plan *plan);

/* The connectome operation (and, with screen set, the screen): everything
 * after the header keys. */
bl_status bl_pk_load_connectome_plan(const bl_pk_ctx *ctx, const bl_toml_node *root,
                                     const char *plan_dir, bl_plan *plan, int screen);

/* plan_sense.c: what run would refuse (model parameters: the model row's
 * table, bl_lif_params_validate). */
bl_status bl_pk_sense_run(const bl_pk_ctx *ctx, const bl_toml_node *run, const bl_plan *plan);

#endif
