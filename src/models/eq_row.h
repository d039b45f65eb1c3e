/* The "equations" row of the model table (src/models/eq_row.c). */
#ifndef BL_MODELS_EQ_ROW_H
#define BL_MODELS_EQ_ROW_H

#include "brainlesslab/eqmodel.h"
#include "models/model_row.h"

extern const bl_model bl_model_equations;

/* Can the connectome engine run this compiled model? (a variable v, a
 * threshold; on_post only with per-edge variables) */
bl_status bl_eq_row_check(const bl_eq_model *m, bl_error *err);
/* Does the model use what only the reference kernel implements (docs/models.md
 * "Synapses": per-edge variables, on_post, per-edge delays)? A
 * partition kernel for equation models must leave these to the reference
 * backend. *why (when not NULL) names the first such feature. */
int bl_eq_row_reference_only(const bl_eq_model *m, const char **why);
/* The [model] delay value that takes each edge's delay from the connectome's
 * delays.npy column: a data source, not the operation of the same name (the
 * operations table alone knows operation names). */
#define BL_EQ_DELAY_PER_EDGE "connectome"
/* delay = "connectome": each edge's delay from the connectome's delays.npy
 * (docs/models.md "Synapses"). */
void bl_eq_row_set_edge_delays(bl_eq_model *m, int on);
/* The refractory period in steps (Brian2's timestep()), -1 when none. */
int64_t bl_eq_row_refractory_steps(const bl_eq_model *m);

/* [model.per_neuron] (src/models/lang/eq_per_neuron.c): each entry's value
 * for every neuron of connectome c, from its neurons.csv column or drawn with
 * the plan seed (counter (0, neuron, 0xD0000000 | k, 0xFFFFFFFF), k the
 * entry's index: the same in every trial). Refused naming the key, and the
 * neuron: a missing column, a value that is not a finite number. */
struct bl_connectome;
bl_status bl_eq_row_per_neuron(bl_eq_model *m, const struct bl_connectome *c, uint64_t seed, bl_error *err);
/* 1 when [model.per_neuron] sets the variable `var`. */
int bl_eq_row_per_neuron_sets(const bl_eq_model *m, const char *var);
/* Entry k's drawn value for a neuron (normal or uniform), as above. */
double bl_eq_row_per_neuron_draw(const bl_eq_model *m, uint32_t k, uint64_t seed, uint32_t neuron);

/* on_pre_by (src/models/lang/eq_per_neuron.c): each neuron of connectome c
 * as a source, the entry of [model.on_pre] its field of the on_pre_by column
 * names (surrounding spaces ignored; a value without an entry: none).
 * Refused naming model.on_pre_by and the columns there are when neurons.csv
 * lacks the column. */
bl_status bl_eq_row_on_pre_by(bl_eq_model *m, const struct bl_connectome *c, bl_error *err);

/* A [model] table of TOML (a model file's, or a plan's) compiled for a step
 * of dt_s seconds; set_* add or override parameters. rest_init: a state
 * variable X that [model.init] does not set starts at parameter X_0 when
 * there is one (the connectome engine's convention). *delay (when not NULL)
 * receives the table's delay text or NULL. Messages start with `path`. */
struct bl_toml_node;
bl_status bl_eq_model_from_toml(const struct bl_toml_node *model, const char *path, double dt_s, size_t n_set,
                                const char *const *set_names, const char *const *set_values, int rest_init,
                                bl_eq_model **out, const char **delay, bl_error *err);

/* A time quantity text ("1.8 ms", "t_d") evaluated with the model's units
 * and parameters, in seconds; `what` names it in messages. */
bl_status bl_eq_model_time(bl_eq_model *m, const char *what, const char *text, double *seconds, bl_error *err);

/* A quantity text ("0.5 nA") for the per-neuron parameter `var` of the
 * model, in SI: refused unless var is one and the dimensions agree. */
bl_status bl_eq_model_var_quantity(bl_eq_model *m, const char *var, const char *what, const char *text, double *value,
                                   bl_error *err);

#endif
