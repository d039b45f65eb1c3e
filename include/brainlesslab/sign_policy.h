/* Sign policies: which presynaptic neurons are excitatory (+1) and which are
 * inhibitory (-1), decided from one key per neuron (a transmitter name, a cell
 * type). docs/sign-policy.md gives the built-in policies and their reasons.
 *
 * Lookup follows the seed runtime's sign_policy (phase4c): keys are compared
 * case-insensitively after trimming blanks; an empty key is "unknown" and gets
 * the declared unknown sign; a mapped key gets its sign; any other key gets
 * the declared default, and with no default declared it is an error naming
 * the key and where it came from. So a typo in a transmitter name can be made
 * loud (no default) instead of silently excitatory.
 *
 * Reserved keys: "default" and "unknown" name those two declarations in
 * describe() and in override files, so they cannot be mapped as ordinary keys.
 * Keys may not contain ';', '=' or control characters (describe() would be
 * ambiguous). */
#ifndef BRAINLESSLAB_SIGN_POLICY_H
#define BRAINLESSLAB_SIGN_POLICY_H

#include "brainlesslab/export.h"
#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bl_sign_policy bl_sign_policy;

/* default_sign: +1 or -1 for keys that are not mapped, 0 for "unmapped keys
 * are an error". The unknown sign starts undeclared (falls back to default). */
BL_API bl_status bl_sign_policy_create(int default_sign, bl_sign_policy **out, bl_error *err);
BL_API void bl_sign_policy_destroy(bl_sign_policy *p);
/* Deep copy (so that overrides can be applied to a built-in policy). */
BL_API bl_status bl_sign_policy_clone(const bl_sign_policy *p, bl_sign_policy **out, bl_error *err);

/* Map a key (normalized: trimmed, lower-cased) to +1 or -1; replaces an
 * existing mapping. */
BL_API bl_status bl_sign_policy_set(bl_sign_policy *p, const char *key, int sign, bl_error *err);
/* Sign for an empty or missing key: +1 or -1, or 0 to fall back to the default. */
BL_API bl_status bl_sign_policy_set_unknown(bl_sign_policy *p, int sign, bl_error *err);
/* Sign for unmapped non-empty keys: +1 or -1, or 0 to make them an error. */
BL_API bl_status bl_sign_policy_set_default(bl_sign_policy *p, int sign, bl_error *err);

/* The sign of key (NULL counts as empty). `where` names the key's origin for
 * messages, e.g. "annotations.csv:17, column celltype"; NULL means no origin.
 * Fails (BL_ERR_INVALID) only when the key is unmapped and no default (or, for
 * an empty key, neither an unknown sign nor a default) is declared. */
BL_API bl_status bl_sign_policy_lookup(const bl_sign_policy *p, const char *key, const char *where,
                                       int *sign, bl_error *err);

/* Apply an override file: CSV with header `key,sign`, one mapping per row.
 * sign is "+1", "1" or "-1"; the reserved key "default" also takes "error"
 * (no default); "unknown" takes "+1"/"-1". A key listed twice in the file is an
 * error naming both lines. On failure the policy is left unchanged. */
BL_API bl_status bl_sign_policy_load_overrides(bl_sign_policy *p, const char *path, bl_error *err);

/* A canonical one-line description for manifests: the mappings sorted by key
 * (bytewise), then the effective unknown and default signs, e.g.
 *   "acetylcholine=+1;gaba=-1;glutamate=+1;unknown=+1;default=error"
 * Equal mappings and equal effective unknown/default signs give equal strings,
 * whatever order the mappings were set in. The string belongs
 * to the policy and stays valid until the policy is next changed or destroyed. */
BL_API const char *bl_sign_policy_describe(const bl_sign_policy *p);

#ifdef __cplusplus
}
#endif
#endif
