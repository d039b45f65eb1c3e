/* Importers: build a connectome from a shipped real data set (data/<set>/).
 * docs/sign-policy.md explains the built-in sign policies; data/README.md and
 * each set's PROVENANCE.md say where the files come from.
 *
 * Both importers read CSV through bl_csv and validate as they go: required
 * header columns, whole synapse counts >= 1, names without stray blanks,
 * known neuron ids, no duplicate (pre, post) pair (an error naming both
 * lines, since a duplicate means the file is not the edge list we think it
 * is). Self-loops are kept, as in the source. Every message names file:line
 * and the column or id at fault. Edges of each neuron are sorted by target;
 * each count carries the sign of its presynaptic neuron. */
#ifndef BRAINLESSLAB_IMPORT_H
#define BRAINLESSLAB_IMPORT_H

#include "brainlesslab/export.h"
#include "brainlesslab/connectome.h"
#include "brainlesslab/error.h"
#include "brainlesslab/sign_policy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Data set names (info "name", and the folder under data/). */
#define BL_IMPORT_LARVA_NAME "drosophila-larva-winding2023"
#define BL_IMPORT_CELEGANS_NAME "celegans-varshney2011"

/* Drosophila L1 larva, Winding et al. 2023. data_dir holds
 * edges_all_compartments.csv.gz (pre_skid, post_skid, all[, aa, ad, da, dd])
 * and annotations.csv (left_id, right_id, celltype, additional_annotations,
 * level_7_cluster). Neurons: every skid that appears in an edge, in ascending
 * numeric order; external id = skid in decimal. Annotated skids with no edge
 * are not neurons of the matrix and are ignored. Policy keys are cell types
 * (the celltype column; "" for unannotated neurons). Columns: cell_type,
 * annotation, side, cluster, modality (the sensory modality of celltype
 * "sensory" neurons, e.g. "olfactory"; "" otherwise), transmitter (""), sign. */
BL_API bl_status bl_import_larva(const char *data_dir, const bl_sign_policy *policy,
                                 bl_connectome **out, bl_error *err);

/* C. elegans hermaphrodite, Varshney et al. 2011 chemical network (S + Sp).
 * data_dir holds varshney_chemical_edges.csv (pre, post, synapses_S_plus_Sp)
 * and openworm_connectome_transmitters.csv (origin, target, type, synapses,
 * neurotransmitter). Neurons: every name in a chemical edge, sorted bytewise;
 * external id = the name. A neuron's transmitter is the one on its outgoing
 * Send rows of the OpenWorm table (rows that disagree are an error); a
 * compound name ("Serotonin_Acetylcholine") is signed by its one fast
 * classical component (acetylcholine, GABA or glutamate) when it has exactly
 * one. Policy keys are transmitter names. Columns: transmitter, sign. */
BL_API bl_status bl_import_celegans(const char *data_dir, const bl_sign_policy *policy,
                                    bl_connectome **out, bl_error *err);

/* The built-in policies used when policy is NULL (see docs/sign-policy.md). */
BL_API bl_status bl_sign_policy_default_larva(bl_sign_policy **out, bl_error *err);
BL_API bl_status bl_sign_policy_default_celegans(bl_sign_policy **out, bl_error *err);

/* ---- the importer table (`brainlesslab import KIND ... --out DIR`) ----
 *
 * Every importer is one row: its name, a one-line summary, the options it
 * takes and a run function. The CLI checks the options against the row
 * (unknown, repeated, missing required) before running, so an importer only
 * reads the values. Every importer validates ids (unknown, duplicate), drops
 * nothing silently (what it dropped, and why, is in its report and in the
 * manifest's description), hashes its inputs and records its sign policy in
 * the manifest, keeps the external ids, and is deterministic. */
typedef struct bl_import_option {
    const char *name;  /* "--neurons" */
    const char *value; /* what the value is ("FILE", "N"); NULL for a flag without value */
    int required;
    const char *help;
} bl_import_option;

typedef struct bl_import_args {
    size_t n;
    const char *const *names;  /* option names as given ("--neurons") */
    const char *const *values; /* their values ("" for a flag) */
} bl_import_args;

/* The value of option name, or NULL when it was not given. */
BL_API const char *bl_import_arg(const bl_import_args *args, const char *name);

typedef struct bl_importer {
    const char *name;
    const char *summary;
    const bl_import_option *options; /* ends with a row whose name is NULL */
    /* Build the connectome; *report (malloc'd, may stay NULL) says, one line
     * each, what was dropped or merged and why. */
    bl_status (*run)(const bl_import_args *args, bl_connectome **out, char **report, bl_error *err);
} bl_importer;

BL_API size_t bl_importer_count(void);
BL_API const bl_importer *bl_importer_at(size_t i);
BL_API const bl_importer *bl_importer_find(const char *name); /* NULL when absent */

#ifdef __cplusplus
}
#endif
#endif
