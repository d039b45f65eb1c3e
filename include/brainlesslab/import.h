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

#ifdef __cplusplus
}
#endif
#endif
