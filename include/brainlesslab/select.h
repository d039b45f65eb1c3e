/* Neuron selection: which neurons of a loaded connectome a population means.
 *
 * The selector language (the one plans' [[population]], [[stimulus]] and
 * [[silence]] tables and Python's Connectome.select speak), as JSON:
 *
 *     { "neurons": [3, 17] }                      indices 0..N-1
 *     { "ids": ["720575940", "17068730"] }        external ids (JSON integers
 *                                                 below 2^53 are read as their
 *                                                 decimal text)
 *     { "select": { "cell_type": "T4*",           metadata query: AND over columns;
 *                   "side": ["left", "right"],    a value, a list (OR), exact or
 *                   "class": { "not": "PN" },     glob (fnmatch * ? [..]), a
 *                   "depth_um": { "min": 1, "max": 3 } } }   negation, or a numeric
 *                                                 range (both ends inclusive)
 *     { "population": "ORN" }                     a named population, whole
 *     { "from": "ORN", "depth": 2 }               shortest directed path from a
 *     { "from": "ORN", "depth": { "min": 1, "max": 3 } }  named population
 *     { "union": ["A", "B"], "intersect": [..], "exclude": [..] }  set algebra
 *     { ..., "sample": 500 }                      a seeded subsample
 *     { ..., "expect_count": 42 }                 fail unless this many neurons
 *
 * Every criterion given is ANDed; `exclude` is subtracted, then `sample`
 * draws, then `expect_count` is checked. Names (population, from, union,
 * intersect, exclude) are resolved through the caller's lookup: a plan's
 * [[population]] tables above this one, Python's earlier populations.
 *
 * The same selector as a C struct is bl_selector (a plan builds it from TOML
 * without a JSON detour, so that 64-bit integer ids and TOML types keep their
 * meaning). The result carries the sorted, unique neurons and the canonical
 * form of the selector as compact JSON (values, ids, names sorted; the
 * metadata columns in name order): two selectors that select the same way
 * render the same way, and the plan hash is built from this text.
 *
 * Sample stream: the draw for neuron i is word 0 of Philox4x32-10 with the
 * seed as key and counter (0, i, stream, 0xFFFFFFFF); the `sample` neurons
 * with the smallest words (ties by index) are kept, so the subset does not
 * depend on the order in which candidates were found. A plan's stream is the
 * population's ordinal among its [[population]] tables, and trials never
 * reach 0xFFFFFFFF, so a sample never coincides with a stimulus draw.
 *
 * Errors name the key path at fault inside the selector ("select.side[1]",
 * "union[0]", "sample"); bl_select_fault tells the same place as parts, so
 * that a caller with its own source (a plan's TOML) can point at line and
 * column. */
#ifndef BRAINLESSLAB_SELECT_H
#define BRAINLESSLAB_SELECT_H

#include "brainlesslab/export.h"
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bl_select_match {
    BL_SELECT_ANY = 0,  /* the value is one of values (exact or glob) */
    BL_SELECT_NOT = 1,  /* the value is none of values */
    BL_SELECT_RANGE = 2 /* the value is a number within [min, max] (each optional);
                           the column must be numeric, empty values never match */
} bl_select_match;

/* One column of a metadata query. */
typedef struct bl_select_column {
    const char *column;
    bl_select_match match;
    const char *const *values; /* ANY, NOT: at least one, no repeats */
    size_t n_values;
    int has_min, has_max; /* RANGE: at least one */
    double min, max;
} bl_select_column;

/* A list of population names; given when names is not NULL. */
typedef struct bl_select_names {
    const char *const *names;
    size_t n;
} bl_select_names;

/* A selector. A list is given when its pointer is not NULL (an empty list
 * given is refused as an empty selection); a string when not NULL. */
typedef struct bl_selector {
    const int64_t *neurons; /* neurons = [...] */
    size_t n_neurons;
    const char *const *ids; /* ids = [...] */
    size_t n_ids;
    const bl_select_column *columns; /* select = {...} */
    size_t n_columns;
    const char *population; /* population = "NAME" */
    const char *from;       /* from = "NAME" */
    int has_depth;          /* depth (needs from); when not given: 0..unbounded */
    int64_t depth_min;
    int64_t depth_max; /* negative: no upper bound */
    bl_select_names union_of, intersect_of, exclude;
    int has_sample;
    int64_t sample;       /* 1..INT32_MAX */
    int64_t expect_count; /* negative: not given */
} bl_selector;

/* A named population, as the lookup hands it over: neurons sorted and unique;
 * the pointers stay valid until bl_select returns. */
typedef struct bl_select_named {
    const char *name;
    const int32_t *neurons;
    size_t n_neurons;
} bl_select_named;

/* Find population `name`; on failure fill err with a message that does not
 * repeat the key path (bl_select adds it) and return its status. */
typedef bl_status (*bl_select_lookup_fn)(void *user, const char *name, bl_select_named *out, bl_error *err);

typedef struct bl_select_options {
    const char *name;           /* the population's name in messages; NULL: "selection" */
    bl_select_lookup_fn lookup; /* NULL: naming a population is refused */
    void *lookup_user;
    int has_seed; /* a sample needs a seed */
    uint64_t seed;
    uint32_t stream;
    const char *no_seed; /* the message when a sample has no seed; NULL: the library's */
} bl_select_options;

/* Where a selector failed. key: the selector key at fault ("neurons", "ids",
 * "select", "population", "from", "depth", "union", "intersect", "exclude",
 * "sample", "expect_count"), NULL for the selector as a whole; column: with
 * key "select", the index in columns of the column at fault (-1: the query
 * as a whole); sub: "not" when the fault is in a column's negated values;
 * index: the list element at fault, -1 for the list as a whole. path: the
 * same place written as a key path ("select.side.not", "ids[2]"; "" for the
 * whole). message: what is wrong, without the path. */
typedef struct bl_select_fault {
    const char *key;
    long column;
    const char *sub;
    long index;
    char path[256];
    char message[BL_ERROR_MESSAGE_MAX];
} bl_select_fault;

typedef struct bl_selection bl_selection;

/* Resolve sel against c. On success *out holds the neurons (sorted, unique,
 * never empty). On failure err's message is "PATH: message" (or the message
 * alone for the selector as a whole) and fault, when not NULL, says where.
 * A depth criterion needs the whole graph (bl_connectome_parts(c) == 1). */
BL_API bl_status bl_select(const bl_connectome *c, const bl_selector *sel, const bl_select_options *opt,
                           bl_selection **out, bl_select_fault *fault, bl_error *err);

/* The same from the JSON form above (one object). Type errors name the key
 * path as bl_select's errors do; fault->key etc. refer to the JSON keys. */
BL_API bl_status bl_select_json(const bl_connectome *c, const char *json, const bl_select_options *opt,
                                bl_selection **out, bl_select_fault *fault, bl_error *err);

BL_API size_t bl_selection_size(const bl_selection *s);
BL_API const int32_t *bl_selection_neurons(const bl_selection *s);
/* The canonical selector, compact JSON. */
BL_API const char *bl_selection_json(const bl_selection *s);
BL_API void bl_selection_destroy(bl_selection *s);

#ifdef __cplusplus
}
#endif

#endif
