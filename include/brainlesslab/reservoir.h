/* Reservoir nodes: SORN (Lazar, Pipa & Triesch 2009) and Falandays (Falandays
 * et al. 2023), exactly as docs/reservoir.md defines them.
 *
 * Conventions (the contract, docs/reservoir.md):
 *   - float64 throughout (float32 on request: bl_res_state_cast), no FMA, no
 *     fast-math; matrices are [destination, source];
 *   - unit i sums its inputs serially over sources in ascending order, from +0.0;
 *   - thresholds fire on equality (>=); every input of a frame is the old state;
 *   - step order: save previous -> integrate -> learn/adapt -> emit -> finite check;
 *   - a non-finite value marks its slot non-finite: reported, not raised. A
 *     non-finite slot is not advanced again until it is reset (its trajectory
 *     has failed; holding it keeps every later frame defined).
 *
 * Objects:
 *   bl_res_params  a node's parameters (plain struct; defaults, presets, by name);
 *   bl_res_state   one node's complete state (wiring, plastic weights, unit state),
 *                  built by seeded construction or loaded from an explicit bundle
 *                  (a directory of .npy files), saved the same way;
 *   bl_res_batch   B independent slots stepped together, with an active mask;
 *                  a batch of B is bit-identical to B single runs, whatever the
 *                  thread count; inactive and non-finite slots never change.
 *
 * Randomness (construction, noise tapes) comes only from Philox4x32-10 counter
 * streams; the key and counter layouts are documented in docs/reservoir.md. */
#ifndef BRAINLESSLAB_RESERVOIR_H
#define BRAINLESSLAB_RESERVOIR_H

#include "brainlesslab/export.h"
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/error.h"
#include "brainlesslab/seed.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bl_res_kind {
    BL_RES_FALANDAYS = 0,
    BL_RES_SORN = 1
} bl_res_kind;

BL_API const char *bl_res_kind_name(bl_res_kind kind); /* "falandays", "sorn" */
/* 0 and *out set when name is a node kind, else -1. */
BL_API int bl_res_kind_parse(const char *name, bl_res_kind *out);

/* Limits checked at construction and when loading a bundle. */
#define BL_RES_MAX_UNITS 65536
#define BL_RES_MAX_PORTS 4096 /* inputs and effectors */
#define BL_RES_MAX_LINK_P 64  /* receptors with their own input link probability (input_link_p) */

/* Parameters. Field names are the parameter names (bl_res_param_names), as in
 * the Python BrainlessLab configs. Booleans are 0/1. */
typedef struct bl_res_params {
    bl_res_kind kind;
    int learn_on; /* both: plasticity enabled at the start */
    /* Falandays */
    double leak;                 /* 0.25 */
    double lrate_wmat;           /* 1.0   eta_w */
    double lrate_targ;           /* 0.01  eta_t */
    double threshold_mult;       /* 2.0   mu */
    double targ_min;             /* 1.0 */
    double input_weight;         /* 1.875 */
    double link_p;               /* 0.1   input, recurrent and output masks */
    double recurrent_init_scale; /* 1.0   construction: recurrent weights scaled by it */
    int rectify;                 /* 0     a = max(a, 0) before the threshold */
    int dale;                    /* 0     "axis = dale": signed units, weights clipped at 0 */
    double inhibitory_frac;      /* 0.25  construction, Dale only: P(sign = -1) */
    int oosawa;                  /* 0     "drive = oosawa": noise drive */
    double membrane_noise;       /* 0.0 */
    double noise_gain;           /* 0.0 */
    int weight_init_mode;        /* construction: 0 excitatory (input_weight + 0.1 N), 1 pong_mixed
                                    (P 0.25: -1 + 0.1 N, else 0.2 N), 2 legacy_normal (weight_init_std N);
                                    Dale overrides all three */
    double weight_init_std;      /* 1.0   legacy_normal's scale */
    int repair_masks;            /* 0     construction: a unit with no incoming link gets one input link;
                                    an empty effector pool gets one unit */
    uint32_t n_input_link_p;     /* 0: every input links with link_p; else one probability per receptor */
    double input_link_p[BL_RES_MAX_LINK_P];
    /* SORN */
    double inhibitory_fraction;  /* 0.2   the I/E ratio: N_E = round(N / (1 + r)) */
    double p_ee;                 /* 10/166 */
    double p_ei;                 /* 1.0 */
    double p_ie;                 /* 1.0 */
    double p_input;              /* 0.05  fan-out of each input channel, fraction of N_E */
    double p_output;             /* 0.05  size of each effector pool, fraction of N_E */
    double T_E_max;              /* 0.5   T_E ~ U(0, T_E_max) */
    double T_I_max;              /* 1.0   T_I ~ U(0, T_I_max) */
    double eta_stdp;             /* 0.001 */
    double eta_ip;               /* 0.001 */
    double H_ip;                 /* 0.1 */
    int fast_inhibition;         /* 0     I units read the new x */
    int pruning;                 /* 1     a link whose weight reaches <= 0 is removed for good */
    /* SORN construction: each row of a block starts as U(0,1) on its links scaled
     * by row_sum / (the row's ascending sum); 0 leaves the whole block at 0. The
     * normalisation target c_e is W_EE's initial row sums, so ee_row_sum sets it. */
    double ee_row_sum;           /* 1.0   W_EE */
    double ei_row_sum;           /* 1.0   W_EI */
    double ie_row_sum;           /* 1.0   W_IE */
    double input_row_sum;        /* 1.0   W_EU */
} bl_res_params;

/* "excitatory", "pong_mixed", "legacy_normal" (bl_res_params.weight_init_mode). */
BL_API const char *bl_res_weight_init_mode_name(int mode);
/* Falandays input_link_p: one link probability per receptor (each in [0, 1]). */
BL_API bl_status bl_res_params_set_input_link_p(bl_res_params *p, const double *values, size_t n, bl_error *err);
/* Defaults of a kind (the spec's). */
BL_API void bl_res_params_default(bl_res_kind kind, bl_res_params *out);
/* Named parameter sets: "default" (both kinds); SORN also "lazar2009"
 * (T_E_max 1.0, T_I_max 0.5) and "zheng2013" (eta_stdp 0.004). */
BL_API bl_status bl_res_params_preset(bl_res_kind kind, const char *preset, bl_res_params *out,
                                      bl_error *err);
/* Settable names of a kind, NULL-terminated (booleans included). */
BL_API const char *const *bl_res_param_names(bl_res_kind kind);
/* 1 when name is a boolean parameter of the kind. */
BL_API int bl_res_param_is_bool(bl_res_kind kind, const char *name);
/* Set a number or boolean by name. The Python spellings axis = "unsigned" | "dale"
 * and drive = "none" | "oosawa" go through bl_res_params_set_string. */
BL_API bl_status bl_res_params_set(bl_res_params *p, const char *name, double value, bl_error *err);
BL_API bl_status bl_res_params_set_string(bl_res_params *p, const char *name, const char *value,
                                          bl_error *err);
/* NaN when name is not a parameter of the kind. */
BL_API double bl_res_params_get(const bl_res_params *p, const char *name);
/* Ranges: probabilities in [0, 1], rates and noise >= 0, mu and targ_min > 0, ... */
BL_API bl_status bl_res_params_validate(const bl_res_params *p, bl_error *err);

/* ---- states ------------------------------------------------------------ */

typedef struct bl_res_state bl_res_state;

/* Numerics of a state. float64 is the contract above. float32 computes the
 * same equations in the same operation order with every value, parameter and
 * intermediate rounded to float (inputs and noise are rounded on entry); it
 * is qualified by its own oracle (bit for bit against a NumPy float32
 * implementation) and only a stated divergence from float64
 * (docs/reservoir.md, "Numerics"): its results never stand for float64's. */
typedef enum bl_res_dtype {
    BL_RES_FLOAT64 = 0,
    BL_RES_FLOAT32 = 1
} bl_res_dtype;
BL_API const char *bl_res_dtype_name(bl_res_dtype dtype); /* "float64", "float32" */
/* 0 and *out set when name is a dtype, else -1. */
BL_API int bl_res_dtype_parse(const char *name, bl_res_dtype *out);
/* The parameters the equations read survive the cast to dtype (float32: each
 * finite as a float, threshold_mult and targ_min still > 0); the error names
 * the parameter. Plans check it, so `check` refuses what `run` could not cast. */
BL_API bl_status bl_res_params_check_dtype(const bl_res_params *p, bl_res_dtype dtype, bl_error *err);

/* Seeded construction (spec defaults; Philox stream keyed by seed). */
BL_API bl_status bl_res_state_construct(const bl_res_params *p, uint32_t n_units, uint32_t n_inputs,
                                        uint32_t n_effectors, uint64_t seed, bl_res_state **out,
                                        bl_error *err);
/* Seeded construction under either scheme: bl-philox-v1 is the call above
 * with seed->u64; philox-host-v1 draws the Python project's wiring from NumPy's
 * Generator(Philox) of seed->digest, in its order (docs/reservoir.md, "Seeds"). */
BL_API bl_status bl_res_state_construct_rng(const bl_res_params *p, uint32_t n_units, uint32_t n_inputs,
                                            uint32_t n_effectors, const bl_rng_seed *seed, bl_res_state **out,
                                            bl_error *err);

/* Explicit bundle: a directory of .npy files (NumPy .npz is not read; unpack
 * it first, docs/reservoir.md shows how). Parameters come from `node.json` in
 * the directory when params is NULL; otherwise params (its kind included) is
 * used and node.json ignored. Every array is validated (dtype, shape, finite,
 * binary where binary, no weight off the link mask) and a failure names the
 * file and the index at fault.
 *   Falandays: w [N,N], mask [N,N] (optional, default w != 0), signs [N]
 *     (optional, +1), w_in [N,R], w_out [E,N] (>= 0), acts [N] (0),
 *     targets [N] (targ_min), spikes [N] (0, binary).
 *   SORN: w_ee [NE,NE], mask_ee (optional, w_ee != 0), c_e [NE] (optional,
 *     ascending row sums of w_ee), w_ei [NE,NI], w_ie [NI,NE], w_eu [NE,R],
 *     w_out [E,NE] (binary pools), t_e [NE], t_i [NI] (NI = its length, may be 0),
 *     x [NE] (0), y [NI] (0). */
BL_API bl_status bl_res_state_load(const char *dir, const bl_res_params *params, bl_res_state **out,
                                   bl_error *err);
/* Read a .npy (ndim dimensions, any numeric dtype) as float64 values that
 * convert exactly; non-finite values are refused unless allowed (tapes may
 * carry them on purpose). *values is malloc'd; shape gets ndim sizes. */
BL_API bl_status bl_res_read_npy_f64(const char *path, int ndim, int allow_nonfinite, double **values,
                                     uint64_t *shape, bl_error *err);
/* Read only node.json of a bundle: *found is 0 (and *out untouched) when absent. */
BL_API bl_status bl_res_bundle_params(const char *dir, bl_res_params *out, int *found, bl_error *err);
/* Write the state as a bundle into dir (created; must not exist), node.json
 * included, so that a saved state loads back bit for bit. A float32 state is
 * written as its exact float64 values with "dtype": "float32" in node.json,
 * and bl_res_state_load casts such a bundle back to float32. */
BL_API bl_status bl_res_state_save(const bl_res_state *s, const char *dir, bl_error *err);

BL_API bl_status bl_res_state_copy(const bl_res_state *s, bl_res_state **out, bl_error *err);
/* A copy of s in another dtype (the same dtype: a copy). To float32 every
 * value is rounded to the nearest float and checked as the Python project
 * checks its casts: a value that is not finite as a float (overflow) fails,
 * naming the array and the index ("w[3, 7]"), and so does a parameter the
 * equations use (threshold_mult and targ_min must stay > 0). To float64 the
 * values widen exactly. Plasticity flags, frames and the finite flag carry over. */
BL_API bl_status bl_res_state_cast(const bl_res_state *s, bl_res_dtype dtype, bl_res_state **out, bl_error *err);
BL_API bl_res_dtype bl_res_state_dtype(const bl_res_state *s);
BL_API void bl_res_state_destroy(bl_res_state *s);

BL_API const bl_res_params *bl_res_state_params(const bl_res_state *s);
BL_API uint32_t bl_res_state_units(const bl_res_state *s);     /* N (SORN: N_E + N_I) */
BL_API uint32_t bl_res_state_inputs(const bl_res_state *s);    /* R */
BL_API uint32_t bl_res_state_effectors(const bl_res_state *s); /* E */
BL_API uint32_t bl_res_state_excitatory(const bl_res_state *s); /* SORN N_E; Falandays N */
BL_API int bl_res_state_finite(const bl_res_state *s);
BL_API uint64_t bl_res_state_frames(const bl_res_state *s); /* frames advanced since construction/load */
/* 1 while the kind of plasticity is on (not frozen, learn_on). */
BL_API int bl_res_state_learning_weights(const bl_res_state *s);
BL_API int bl_res_state_learning(const bl_res_state *s);

/* Per-unit views of the latest frame, N values each (E for effectors; a
 * float32 state's values widened exactly to double):
 *   spikes     0/1 (SORN: x then y)
 *   margins    the value compared with the threshold, minus it: Falandays
 *              a - theta (before the reset), SORN the drive (fires when >= 0)
 *   thresholds Falandays targets (after adaptation), SORN T_E then T_I
 *   acts       Falandays acts (after the reset); SORN: NULL
 *   errors     Falandays e = acts - old targets; SORN: NULL
 *   effectors  E values */
typedef enum bl_res_view {
    BL_RES_SPIKES = 0,
    BL_RES_MARGINS,
    BL_RES_THRESHOLDS,
    BL_RES_ACTS,
    BL_RES_ERRORS,
    BL_RES_EFFECTORS
} bl_res_view;
BL_API const double *bl_res_state_view(const bl_res_state *s, bl_res_view which);
/* Dense recurrent weights [rows, rows] (Falandays N, SORN N_E) into out;
 * 0 where there is no link. mask (may be NULL) gets 0/1. */
BL_API void bl_res_state_dense_weights(const bl_res_state *s, double *out, uint8_t *mask);
/* Number of live recurrent links (SORN pruning lowers it). */
BL_API uint64_t bl_res_state_links(const bl_res_state *s);

/* One frame of a single state (a batch of one): inputs [R], noise [N] or NULL. */
BL_API bl_status bl_res_state_step(bl_res_state *s, const double *inputs, const double *noise,
                                   bl_error *err);
BL_API void bl_res_state_freeze_weights(bl_res_state *s);
BL_API void bl_res_state_freeze_plasticity(bl_res_state *s);

/* ---- batches ----------------------------------------------------------- */

typedef struct bl_res_batch bl_res_batch;

/* B slots, slot b a private copy of initial[b] (pointers may repeat). All
 * states must have the same kind, N, N_E, R and E. */
BL_API bl_status bl_res_batch_create(size_t batch, const bl_res_state *const *initial,
                                     bl_res_batch **out, bl_error *err);
BL_API void bl_res_batch_destroy(bl_res_batch *b);

/* 0 = all cores. Results do not depend on it. */
BL_API void bl_res_batch_set_threads(bl_res_batch *b, int threads);
BL_API int bl_res_batch_threads(const bl_res_batch *b);
BL_API size_t bl_res_batch_size(const bl_res_batch *b);

/* One frame for every slot that is active (active NULL: all) and finite.
 * inputs [B][R]; noise [B][N] or NULL (zeros; only the Oosawa drive reads it). */
BL_API bl_status bl_res_batch_step(bl_res_batch *b, const double *inputs, const double *noise,
                                   const uint8_t *active, bl_error *err);
/* Interventions on the selected slots (NULL: all). */
BL_API void bl_res_batch_freeze_weights(bl_res_batch *b, const uint8_t *selected);
BL_API void bl_res_batch_freeze_plasticity(bl_res_batch *b, const uint8_t *selected);
/* Back to the slot's initial state (finite again, plasticity as it started). */
BL_API void bl_res_batch_reset(bl_res_batch *b, const uint8_t *selected);
/* The slot's live state (views, dense weights, save). */
BL_API const bl_res_state *bl_res_batch_slot(const bl_res_batch *b, size_t slot);

/* ---- explicit replay ---------------------------------------------------- */

/* Drive one state with explicit tapes and keep every frame: inputs [T][R],
 * noise [T][N] or NULL. Freeze ticks are 1-based frames before which the
 * intervention applies (0: never). Per-frame outputs are [T][N] (effectors
 * [T][E], finite [T]); arrays a kind does not have are NULL. The state is
 * advanced in place (it ends as the final state). Frames after the state
 * turned non-finite repeat its last values. */
typedef struct bl_res_trajectory {
    uint64_t frames;
    uint32_t n, e;
    uint8_t *spikes;
    double *margins, *thresholds, *acts, *errors, *effectors;
    uint8_t *finite;
} bl_res_trajectory;

BL_API bl_status bl_res_replay(bl_res_state *s, uint64_t frames, const double *inputs,
                               const double *noise, uint64_t freeze_weights_at,
                               uint64_t freeze_plasticity_at, bl_res_trajectory *out, bl_error *err);
BL_API void bl_res_trajectory_free(bl_res_trajectory *t);
/* Write into dir (must exist): spikes.npy (uint8 [T,N]), margins.npy,
 * effectors.npy [T,E], finite.npy (uint8 [T]), and per kind Falandays
 * acts.npy, targets.npy, errors.npy / SORN thresholds.npy (T_E then T_I). */
BL_API bl_status bl_res_trajectory_write(const bl_res_trajectory *t, bl_res_kind kind, const char *dir,
                                         bl_error *err);

/* ---- random streams ---------------------------------------------------- */

/* One standard normal from the Philox stream keyed by seed, named by the
 * counter words (a, b, domain): Marsaglia's polar method with a logarithm made
 * of + - * / only, so the value is the same on every IEEE-754 machine. */
BL_API double bl_res_normal(uint64_t seed, uint32_t a, uint32_t b, uint32_t domain);
/* A double in [0, 1) with 53 random bits, counter (a, b, domain, c). */
BL_API double bl_res_uniform(uint64_t seed, uint32_t a, uint32_t b, uint32_t domain, uint32_t c);
/* The Oosawa noise tape of a drive seed: xi for (frame, unit). */
BL_API double bl_res_noise(uint64_t drive_seed, uint64_t frame, uint32_t unit);
/* The first `frames` frames of a drive seed's tape into out [frames][units]:
 * bl-philox-v1 bl_res_noise's; philox-host-v1 the Python project's NoiseTape,
 * standard normals of the digest's Generator(Philox), `units` per frame, in order. */
BL_API void bl_res_noise_tape(const bl_rng_seed *drive, uint32_t units, uint64_t frames, double *out);

#ifdef __cplusplus
}
#endif
#endif
