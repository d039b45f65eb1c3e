/* Plans: the whole, reviewable description of one piece of work, in TOML
 * (docs/plans-and-records.md). A connectome plan:
 *     format = "brainlesslab-plan"   format_version = 4
 *     id = "name"  operation = "connectome"  description = "..." (optional)
 *     [connectome] path = "dir"                (relative to the plan file)
 *     [model] preset = "shiu2024"|"phase4c"    [model.parameters] name = number
 *     [[population]] name, criteria (ANDed): neurons | ids | select, from + depth,
 *                    union, intersect; then exclude, sample, expect_count
 *     [[stimulus]] name, one selector, rate_hz, start_ms = 0, stop_ms = end
 *     [[silence]] name, one selector
 *         selector: neurons = [indices] | ids = ["external id", ...]
 *                   | select = { column = "value" or ["v1", "v2"], ... }
 *                   | population = "NAME"
 *         select values: exact or glob ("T4*"), { not = ... }, { min, max }
 *     [run] duration_ms, seed, trials = 1, backend = "auto", threads = 0
 *     [outputs] spikes, counts, state, propagation = true, top_responders = 20
 * Names (id, populations) are 1..128 characters of [A-Za-z0-9._-].
 *
 * bl_plan_load parses, validates and RESOLVES a plan: defaults are filled in,
 * the connectome is loaded (path made absolute, manifest hashed), every
 * population is resolved to sorted neuron indices, and the result is
 * rendered as canonical JSON whose SHA-256 is the plan's content hash. Two
 * plans with the same hash describe the same run. Every failure is one line
 * naming the plan file, line:column where known, the dotted key at fault
 * (e.g. `stimulus[1].rate_hz`) and the offending value.
 *
 * Operations: each is one row of the operations table (src/experiment/
 * operations.c; docs/architecture.md): connectome, audit, screen, and the
 * reservoir operations profile, sweep, ablate, benchmark, calibrate. The row
 * loads and validates its section, renders the canonical JSON, estimates the
 * cost and runs the plan (bl_run_plan, experiment.h). */
#ifndef BRAINLESSLAB_PLAN_H
#define BRAINLESSLAB_PLAN_H

#include "brainlesslab/export.h"
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/error.h"
#include "brainlesslab/model.h"
#include "brainlesslab/stimulus.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BL_PLAN_FORMAT "brainlesslab-plan"
#define BL_PLAN_FORMAT_VERSION 4

/* Limits a plan is checked against. */
#define BL_PLAN_MAX_TRIALS 100000
#define BL_PLAN_MAX_TOP_RESPONDERS 10000
#define BL_PLAN_MAX_THREADS 65536
#define BL_PLAN_MAX_POPULATIONS 10000 /* per kind: stimulus, silence */
#define BL_PLAN_MAX_SELECTED 2000000  /* neurons over all populations: the resolved plan stays listable */
#define BL_PLAN_MAX_NAME 128          /* id and population names */

typedef struct bl_plan bl_plan;
/* A row of the operations table (src/plan/plan_op.h): library-internal; a
 * program passes rows of its own only through bl_plan_load_options. */
typedef struct bl_operation bl_operation;
/* The resolved reservoir plan of operation "profile" (task.h runs it). */
typedef struct bl_res_plan bl_res_plan;

/* A resolved population ([[stimulus]] or [[silence]]), owned by the plan. */
typedef struct bl_plan_population {
    const char *name;
    /* The selector as written, as compact JSON, e.g. {"neurons":[1,2]},
     * {"ids":["720575940"]} or {"select":{"cell_type":["ORN"]}}. */
    const char *selector;
    const int32_t *neurons; /* sorted ascending, unique */
    size_t n_neurons;       /* >= 1 */
    double rate_hz;         /* stimulus only (0 for silence) */
    double start_ms;        /* stimulus only: window [start_ms, stop_ms) */
    double stop_ms;         /* resolved: the trial's end when the plan gives none */
    /* Stimulus protocols (docs/stimulus-protocols.md): */
    int force;              /* mode = "force": forced spikes, not input */
    size_t n_segments;      /* a rate table: segments[3k..3k+2] = start_ms, stop_ms, rate_hz, */
    const double *segments; /* one Poisson population (stream index) each; 0: rate_hz over the window */
    size_t n_schedule;      /* schedule = "file.npy": explicit (step, neuron) pairs, */
    const int32_t *schedule; /* no Poisson draw (0: none) */
    const bl_current *current; /* current = "dc" | ...: current injection, no Poisson draw (NULL: none) */
} bl_plan_population;

/* Operation "audit": what to break down and where the hierarchy starts. */
typedef struct bl_plan_audit {
    const bl_plan_population *const *populations; /* broken down by every column */
    size_t n_populations;
    const bl_plan_population *source; /* hierarchy source (depth 0); NULL: no hierarchy */
    const bl_plan_population *split;  /* depth >= 3 in it: "higher", outside: "central"; NULL: all "higher" */
    const char *const *columns;       /* breakdown columns: every metadata column by default */
    size_t n_columns;
    const char *type_column;          /* per-layer sizes by this column ("" when absent) */
} bl_plan_audit;

/* Operation "screen": one axis of conditions. The conditions are the
 * cartesian product of the axes, the first axis varying slowest. Each
 * condition is the base plan (its stimuli, silences, model) changed by one
 * level of every axis:
 *   silence    level k silences populations[k] too (NULL: nothing more)
 *   stimulate  level k adds a stimulus of populations[k] at rate_hz over
 *              [start_ms, stop_ms), after the plan's own stimuli (NULL: none)
 *   rate       level k sets the rate of [[stimulus]] number `stimulus` to values[k]
 *   parameter  level k sets model parameter `parameter` to values[k] */
typedef enum bl_axis_kind { BL_AXIS_SILENCE, BL_AXIS_STIMULATE, BL_AXIS_RATE, BL_AXIS_PARAMETER } bl_axis_kind;

typedef struct bl_plan_axis {
    bl_axis_kind kind;
    const char *name; /* "silence", "stimulate", "rate:<stimulus>", "<parameter>" */
    size_t n_levels;
    const bl_plan_population **populations; /* silence, stimulate */
    double rate_hz, start_ms, stop_ms;      /* stimulate */
    size_t stimulus;                        /* rate */
    const char *parameter;                  /* parameter */
    double *values;                         /* rate, parameter */
} bl_plan_axis;

/* One input file of the plan, for the record: the plan file itself, then the
 * connectome's manifest.json and the data files it lists. SHA-256 of the
 * plan and manifest are computed at load; those of the data files are the
 * manifest's, which bl_connectome_load verified against the bytes. */
typedef struct bl_plan_input {
    const char *role;   /* "plan", "connectome manifest", "connectome data" */
    const char *path;   /* absolute */
    const char *sha256; /* 64 lowercase hex digits */
    uint64_t bytes;
} bl_plan_input;

BL_API bl_status bl_plan_load(const char *path, bl_plan **out, bl_error *err);

/* Loading with options. The table's rows are looked up first; `operations`
 * adds rows for this load only (an operation defined outside the library, a
 * test's toy operation): nothing is registered process-wide, so two callers
 * in one process never see each other's rows. The plan keeps its row, and
 * bl_run_plan runs it. parts = 0 means 1 (the whole connectome). */
typedef struct bl_plan_load_options {
    int part, parts;                          /* bl_plan_load_part */
    const bl_operation *const *operations;    /* extra rows (may be NULL) */
    size_t n_operations;
} bl_plan_load_options;
BL_API bl_status bl_plan_load_with(const char *path, const bl_plan_load_options *options, bl_plan **out,
                                   bl_error *err);

/* What a plan will take, by its operation's row (the connectome family's is
 * plan_sense.c): peak memory, disk for the record, and time on one core, from
 * the graph's size, trials, steps and the stimulus's own spikes (times a
 * response factor). An estimate, not a bound. Returns 0 (and zeros) when the
 * operation gives no estimate, 1 otherwise. */
typedef struct bl_plan_estimate_t {
    double memory_bytes, disk_bytes, seconds_one_core, spikes;
} bl_plan_estimate_t;
BL_API int bl_plan_estimate(const bl_plan *plan, bl_plan_estimate_t *out);
/* "memory ~1.2 GiB, disk ~300.0 MiB, time ~4 s on one core (~1e+06 spikes)" */
BL_API void bl_plan_estimate_text(const bl_plan_estimate_t *e, char *buf, size_t size);
/* BL_ERR_INVALID (with the estimate) when the plan needs more memory than
 * the machine has, or, with ROOT given, more disk than ROOT's file system has
 * free. `check` and `run` both call it; `--force` skips it. */
BL_API bl_status bl_plan_fits_machine(const bl_plan *plan, const char *root, bl_error *err);
/* bl_plan_load for rank `part` of an MPI job of `parts` ranks: the connectome
 * is loaded as that part (bl_connectome_load_part: only the synapses into the
 * rank's neurons), so the graph's memory is divided by the ranks. The resolved
 * plan, its hash and inputs are exactly bl_plan_load's. parts == 1: bl_plan_load. */
BL_API bl_status bl_plan_load_part(const char *path, int part, int parts, bl_plan **out, bl_error *err);
BL_API void bl_plan_destroy(bl_plan *plan);

/* Identity. */
BL_API const char *bl_plan_id(const bl_plan *plan);
BL_API const char *bl_plan_operation(const bl_plan *plan);
BL_API const char *bl_plan_description(const bl_plan *plan); /* "" when none */
BL_API const char *bl_plan_path(const bl_plan *plan);        /* absolute path of the plan file */
/* The plan file's bytes exactly as read and parsed (*len of them; NULL when
 * the plan was not loaded from a file): what a record copies as plan.toml. */
BL_API const char *bl_plan_text(const bl_plan *plan, size_t *len);
/* Canonical JSON of the resolved plan (compact, keys in a fixed order). */
BL_API const char *bl_plan_resolved_json(const bl_plan *plan);
/* SHA-256 of bl_plan_resolved_json, 64 lowercase hex digits. */
BL_API const char *bl_plan_hash(const bl_plan *plan);
/* Operation "profile": the reservoir plan (run it with bl_res_run_plan, task.h);
 * NULL for every other operation. */
BL_API const bl_res_plan *bl_plan_reservoir(const bl_plan *plan);
/* The same, to shorten it before a run (bl_res_plan_override). */
BL_API bl_res_plan *bl_plan_reservoir_mut(bl_plan *plan);

/* Human-readable rendering of the resolved plan: indented JSON; unless full,
 * each population shows its count and only its first few neuron indices.
 * Returns a malloc'd string (caller frees) or NULL when out of memory. */
BL_API char *bl_plan_render(const bl_plan *plan, int full);

/* Operation "audit": its specification; NULL for every other operation. */
BL_API const bl_plan_audit *bl_plan_audit_spec(const bl_plan *plan);

/* Operation "screen": its axes (0 for every other operation). */
BL_API size_t bl_plan_n_axes(const bl_plan *plan);
BL_API const bl_plan_axis *bl_plan_axis_at(const bl_plan *plan, size_t i);

/* Network. The connectome belongs to the plan. */
BL_API const bl_connectome *bl_plan_connectome(const bl_plan *plan);
BL_API const char *bl_plan_connectome_path(const bl_plan *plan);   /* absolute */
BL_API const char *bl_plan_connectome_sha256(const bl_plan *plan); /* of manifest.json */
BL_API const bl_lif_params *bl_plan_lif_params(const bl_plan *plan);
/* The bounds a plan's [model] parameters are held to (plan_sense.c), for
 * callers that set parameters without a plan (Python's simulate): the same
 * refusal, so no caller gets a non-finite state a plan would have refused. */
BL_API bl_status bl_plan_check_params(const bl_lif_params *p, bl_error *err);

/* Stimulus populations, in plan order (population p of the stimulus). */
BL_API size_t bl_plan_n_populations(const bl_plan *plan);
BL_API const bl_plan_population *bl_plan_population_at(const bl_plan *plan, size_t i);
/* Named populations ([[population]] tables), in plan order; by name (NULL
 * when the plan has no population of that name). */
BL_API size_t bl_plan_n_named_populations(const bl_plan *plan);
BL_API const bl_plan_population *bl_plan_named_population_at(const bl_plan *plan, size_t i);
BL_API const bl_plan_population *bl_plan_find_population(const bl_plan *plan, const char *name);
/* Silence groups, in plan order, and their union (sorted, unique). */
BL_API size_t bl_plan_n_silences(const bl_plan *plan);
BL_API const bl_plan_population *bl_plan_silence_at(const bl_plan *plan, size_t i);
BL_API const int32_t *bl_plan_silenced(const bl_plan *plan, size_t *n);

/* Run. */
BL_API uint32_t bl_plan_trials(const bl_plan *plan);
BL_API double bl_plan_duration_ms(const bl_plan *plan);
BL_API uint64_t bl_plan_steps(const bl_plan *plan); /* duration / dt, a whole number */
BL_API uint64_t bl_plan_seed(const bl_plan *plan);
BL_API const char *bl_plan_backend(const bl_plan *plan); /* "auto" unless the plan names one */
BL_API int bl_plan_threads(const bl_plan *plan);         /* 0 = all cores */

/* Outputs. */
BL_API int bl_plan_output_spikes(const bl_plan *plan);
BL_API int bl_plan_output_counts(const bl_plan *plan);
BL_API int bl_plan_output_state(const bl_plan *plan);
BL_API int bl_plan_output_propagation(const bl_plan *plan);
BL_API int bl_plan_top_responders(const bl_plan *plan);
/* outputs.spikes = "NAME": only that named population's spikes are written
 * (NULL: every neuron's, when bl_plan_output_spikes). */
BL_API const bl_plan_population *bl_plan_spikes_subset(const bl_plan *plan);
/* outputs.probes: the probed population and the sampling period in steps
 * (NULL: no probes). */
BL_API const bl_plan_population *bl_plan_probes(const bl_plan *plan, uint64_t *every_steps);
/* outputs.psth: the populations binned and the bin in steps; returns how many (0: none). */
BL_API size_t bl_plan_psth(const bl_plan *plan, const bl_plan_population *const **pops, uint64_t *bin_steps);

/* Inputs, for the record. */
BL_API size_t bl_plan_n_inputs(const bl_plan *plan);
BL_API const bl_plan_input *bl_plan_input_at(const bl_plan *plan, size_t i);

/* Add one [[stimulus]]'s protocol to s: its Poisson population (or one per
 * segment of its rate table, in order), or its schedule (input events, or
 * forced spikes), forced when its mode is "force". rate_hz (not NaN)
 * replaces every rate (screens). Population (stream) indices continue s's. */
BL_API bl_status bl_plan_add_stimulus(const bl_plan *plan, const bl_plan_population *p, double rate_hz,
                                      bl_stimulus *s, bl_error *err);
/* A stimulus with every [[stimulus]], in plan order (bl_plan_add_stimulus). */
BL_API bl_status bl_plan_build_stimulus(const bl_plan *plan, bl_stimulus **out, bl_error *err);

#ifdef __cplusplus
}
#endif
#endif
