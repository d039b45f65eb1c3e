/* Reservoir internals (private to src/reservoir and src/tasks): the state of
 * one node and the Philox helpers. The equations themselves are in
 * falandays_eq.h and sorn_eq.h, written once and used by the single-state step
 * and the batched, multithreaded step alike. */
#ifndef BL_RESERVOIR_RES_IMPL_H
#define BL_RESERVOIR_RES_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/reservoir.h"

/* The parameters the equations read, as float32 sees them (each rounded to
 * float once, when a state is cast; the flags as they are). Field names are
 * bl_res_params' so that the equations are written once for both. */
typedef struct bl_res_params32 {
    bl_res_kind kind;
    float leak, lrate_wmat, lrate_targ, threshold_mult, targ_min, membrane_noise, noise_gain;
    float eta_stdp, eta_ip, H_ip;
    int rectify, dale, oosawa, fast_inhibition, pruning;
} bl_res_params32;

/* One node. Every array lives in one arena so that a copy is one memcpy plus
 * a re-layout (res_state.c); arrays a kind does not use are NULL.
 *
 * Recurrent links are kept as rows (one per destination: Falandays N, SORN
 * N_E) of (source, weight) pairs in ascending source order: a row is exactly
 * the set of links j -> i, so a destination's sum over its row in storage
 * order IS the spec's ascending-source sum (entries without a link would only
 * add +0.0, which never changes a sum that starts at +0.0). SORN pruning
 * removes entries from a row, keeping the order. */
struct bl_res_state {
    bl_res_params p;
    uint32_t n, r, e;  /* units, inputs, effectors */
    uint32_t ne, ni;   /* SORN excitatory/inhibitory; Falandays ne = n, ni = 0 */
    uint32_t rows;     /* recurrent rows: Falandays n, SORN ne */
    uint64_t cap;      /* recurrent entries the rows were built with */
    uint64_t frames;   /* frames advanced */
    uint64_t events;   /* recurrent terms summed, all frames (bench workload count) */
    int finite;        /* 0 once a frame produced a non-finite value */
    int learn_weights; /* Falandays weight learning / SORN STDP + normalisation */
    int learn;         /* Falandays all learning (targets too) / SORN intrinsic plasticity */

    void *arena;
    size_t arena_bytes;

    uint64_t *row_start; /* [rows + 1] capacity offsets into col/w */
    uint32_t *row_len;   /* [rows] live entries */
    uint32_t *col;       /* [cap] source index */
    double *w;           /* [cap] plastic weight */
    double *w_in;        /* [rows][r]  Falandays W_in, SORN W_EU */
    double *w_out;       /* [e][rows]  Falandays output weights, SORN 0/1 pools */
    double *out_den;     /* [e] Falandays sum_i out[e,i] (ascending), SORN pool size */
    double *sign;        /* [n] Falandays +-1 */
    double *w_ei;        /* [ne][ni] SORN */
    double *w_ie;        /* [ni][ne] SORN */
    double *c_e;         /* [ne] SORN normalisation targets */
    double *spikes;      /* [n] current: Falandays spikes, SORN x then y */
    double *prev;        /* [n] previous frame's spikes */
    double *margins;     /* [n] */
    double *thr;         /* [n] Falandays targets, SORN T_E then T_I */
    double *acts;        /* [n] Falandays */
    double *errors;      /* [n] Falandays */
    uint32_t *kcount;    /* [n] recurrent terms summed this frame (Falandays: the k of learning) */
    uint8_t *ok;         /* [n] this frame's values of the unit were finite */
    double *effectors;   /* [e] */
    uint32_t *list;      /* scratch: active sources (Falandays [n]; SORN [n + ne]: x, y, new x) */
    uint32_t n_list_x, n_list_y, n_list_new;
    /* Falandays source index, blocked by destination: for block b (units
     * b*BL_RES_BLOCK ...), the links j -> i of its units grouped by source j,
     * entries cptr[b*(n+1) + j] .. cptr[b*(n+1) + j + 1] of cdst (i) and cpos
     * (the link's slot in col/w). The integrate step walks only the sources
     * that spiked, in ascending order, so every destination still receives
     * its terms in ascending source order. */
    uint32_t *cptr;
    uint32_t *cdst;
    uint32_t *cpos;
    /* float32 numerics (bl_res_state_cast): the equations run on the *32
     * arrays and p32; w, w_in, w_out, out_den, sign, w_ei, w_ie, c_e and prev
     * are then NULL, while spikes, margins, thr, acts, errors and effectors
     * hold the float values widened (exactly) after every frame, so that views
     * and readers of a state never depend on its dtype. */
    bl_res_dtype dtype;
    bl_res_params32 p32;
    float *w32, *w_in32, *w_out32, *out_den32, *sign32, *w_ei32, *w_ie32, *c_e32;
    float *spikes32, *prev32, *margins32, *thr32, *acts32, *errors32, *effectors32;
};

/* What the float32 instance of the equations reads: the state's scalars and
 * its float arrays under the float64 names (res_state.c fills one per phase
 * call; the equations write only through its pointers). */
typedef struct bl_res_k32 {
    bl_res_params32 p;
    uint32_t n, r, e, ne, ni, rows;
    int learn_weights, learn;
    uint64_t *row_start;
    uint32_t *row_len, *col;
    float *w, *w_in, *w_out, *out_den, *sign, *w_ei, *w_ie, *c_e;
    float *spikes, *prev, *margins, *thr, *acts, *errors, *effectors;
    uint32_t *kcount;
    uint8_t *ok;
    uint32_t *list;
    uint32_t n_list_x, n_list_y, n_list_new;
    uint32_t *cptr, *cdst, *cpos;
} bl_res_k32;

/* Units per block of the source index and per work item of a batch frame. */
#define BL_RES_BLOCK 64

/* Allocate a state with every array zeroed and the rows laid out with the
 * given lengths (row_len[i] entries each; cap = their sum). */
bl_status bl_res_state_alloc(const bl_res_params *p, uint32_t n, uint32_t r, uint32_t e,
                             uint32_t ne, const uint32_t *row_len, bl_res_state **out,
                             bl_error *err);
/* Derived values after the arrays are filled: out_den, effectors of the
 * initial spikes, finite = 1, learning flags from learn_on. */
void bl_res_state_finish(bl_res_state *s);
/* Copy src into dst of the same dimensions and capacity (a reset; no allocation). */
void bl_res_state_assign(bl_res_state *dst, const bl_res_state *src);

/* Float64 values of a float32 state's view arrays (spikes, margins, thr,
 * acts, errors, effectors) from its float arrays. */
void bl_res_state_widen_views(bl_res_state *s);

/* Steps, split in phases so that the batch can put a barrier between them.
 * Phase A: per state (save previous, list active sources). Phase B: per unit
 * range [lo, hi) of the integrate step (Falandays: all units; SORN: E units
 * and, without fast inhibition, I units; unit indices run over 0..n).
 * Phase B2 (SORN fast inhibition only): per state, list the new active x,
 * then per I-unit range. Phase C: per recurrent row range, learning. Phase D:
 * per state, readout and the finite check. */
void bl_res_phase_a(bl_res_state *s);
void bl_res_phase_b(bl_res_state *s, uint32_t lo, uint32_t hi, const double *u, const double *xi);
void bl_res_phase_b2_list(bl_res_state *s);
void bl_res_phase_b2(bl_res_state *s, uint32_t lo, uint32_t hi);
void bl_res_phase_c(bl_res_state *s, uint32_t lo, uint32_t hi);
void bl_res_phase_d(bl_res_state *s);
/* 1 when phase B2 is needed. */
int bl_res_needs_b2(const bl_res_state *s);

/* Tests: the work per thread below which a batch frame uses fewer threads
 * (default 32768 unit and link visits); 1 forces every requested thread. */
void bl_res_batch_set_grain(bl_res_batch *b, uint64_t work);

/* philox-host-v1 construction (res_construct_host.c); p validated, dimensions checked. */
bl_status bl_res_construct_host(const bl_res_params *p, uint32_t n, uint32_t r, uint32_t e,
                                const uint8_t digest[32], bl_res_state **out, bl_error *err);

/* NumPy's pairwise summation of n contiguous float64 values (what np.sum and
 * np.mean do along the last axis, before adding to their initial 0). */
double bl_np_pairwise_sum(const double *a, size_t n);

/* Philox: key (seed lo, seed hi), counter (a, b, domain, c). */
void bl_res_philox(uint64_t seed, uint32_t a, uint32_t b, uint32_t domain, uint32_t c,
                   uint32_t out[4]);
/* A 53-bit uniform in [0, 1) from two words. */
static inline double bl_res_u53(uint32_t hi, uint32_t lo)
{
    uint64_t x = (((uint64_t)hi << 32) | lo) >> 11;
    return (double)x * 0x1p-53;
}
/* The logarithm of x in (0, 1] from + - * / and exact scalings only. */
double bl_res_det_log(double x);

/* Counter domains (word 2) of the construction streams; see docs/reservoir.md. */
enum {
    BL_RD_FAL_SIGN = 1,
    BL_RD_FAL_REC_MASK = 2,
    BL_RD_FAL_IN_MASK = 3,
    BL_RD_FAL_OUT_MASK = 4,
    BL_RD_FAL_REC_W = 5,
    BL_RD_FAL_REC_INH = 6,    /* pong_mixed: inhibitory link (u < 0.25) */
    BL_RD_FAL_REC_W2 = 7,     /* pong_mixed: the neutral links' normal */
    BL_RD_FAL_REPAIR_IN = 8,  /* repair_masks: (unit, 0) picks the input */
    BL_RD_FAL_REPAIR_OUT = 9, /* repair_masks: (effector, 0) picks the unit */
    BL_RD_SORN_EE_MASK = 11,
    BL_RD_SORN_EE_REPAIR = 12,
    BL_RD_SORN_EI_MASK = 13,
    BL_RD_SORN_EI_REPAIR = 14,
    BL_RD_SORN_IE_MASK = 15,
    BL_RD_SORN_IE_REPAIR = 16,
    BL_RD_SORN_IN_PICK = 17,
    BL_RD_SORN_OUT_PICK = 18,
    BL_RD_SORN_EE_W = 19,
    BL_RD_SORN_EI_W = 20,
    BL_RD_SORN_IE_W = 21,
    BL_RD_SORN_EU_W = 22,
    BL_RD_SORN_TE = 23,
    BL_RD_SORN_TI = 24,
    BL_RD_NOISE = 100,   /* drive stream: xi for (frame, unit) */
    BL_RD_BENCH_IN = 200 /* bench input tape */
};

#endif
