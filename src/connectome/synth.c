/* Synthetic connectome generator. Out-degrees are lognormal; targets are drawn
 * (Walker alias table) in proportion to a lognormal attractiveness, so the
 * in-degree is heavy-tailed too; synapse counts follow a discrete power law.
 * Memory: one copy of the graph plus O(N) tables. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/synth.h"
#include "core/stream.h"

enum { PURPOSE_DEGREE = 1, PURPOSE_ATTRACT = 2, PURPOSE_TARGET = 3, PURPOSE_COUNT = 4,
       PURPOSE_SIGN = 5, PURPOSE_SENSORY = 6 };

void bl_synth_defaults(bl_synth_params *p)
{
    p->n_neurons = 138639;
    p->mean_out_degree = 15091983.0 / 138639.0;
    p->out_degree_sigma = 1.0;
    p->in_weight_sigma = 1.0;
    p->count_alpha = 1.3;
    p->max_count = 2405;
    p->excitatory_fraction = 0.7;
    p->sensory_fraction = 0.02;
    p->seed = 1;
}

/* A small buffered stream of uniform words for one (neuron, purpose):
 * counter (k, neuron, purpose, 0x5e1f), k = 0, 1, ... (docs/streams.md). */
typedef struct stream {
    uint64_t seed;
    uint32_t counter[4];
    uint32_t words[4];
    int left;
} stream;

static void stream_init(stream *s, uint64_t seed, uint32_t neuron, uint32_t purpose)
{
    s->seed = seed;
    s->counter[0] = 0;
    s->counter[1] = neuron;
    s->counter[2] = purpose;
    s->counter[3] = 0x5e1f;
    s->left = 0;
}

static uint32_t stream_word(stream *s)
{
    if (s->left == 0) {
        bl_stream_block(s->seed, s->counter[0], s->counter[1], s->counter[2], s->counter[3], s->words);
        s->counter[0]++;
        s->left = 4;
    }
    return s->words[--s->left];
}

/* Uniform in (0, 1]: never 0, so logs and powers are finite. */
static double stream_unit(stream *s) { return ((double)stream_word(s) + 1.0) / 4294967296.0; }

static double stream_normal(stream *s)
{
    double u1 = stream_unit(s), u2 = stream_unit(s);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static bl_status check_params(const bl_synth_params *p, bl_error *err)
{
    if (p->n_neurons < 2 || p->n_neurons > 50000000)
        return bl_fail(err, BL_ERR_INVALID, "synth: neurons %" PRIu64 " outside 2..50000000", p->n_neurons);
    if (!(p->mean_out_degree > 0) || p->mean_out_degree > (double)(p->n_neurons - 1) ||
        p->mean_out_degree * (double)p->n_neurons > 2e9)
        return bl_fail(err, BL_ERR_INVALID, "synth: mean out-degree %g outside (0, min(N-1, 2e9/N)]",
                       p->mean_out_degree);
    if (!(p->out_degree_sigma >= 0 && p->out_degree_sigma <= 4) ||
        !(p->in_weight_sigma >= 0 && p->in_weight_sigma <= 4))
        return bl_fail(err, BL_ERR_INVALID, "synth: degree sigmas must be in [0, 4]");
    if (!(p->count_alpha > 0.5 && p->count_alpha <= 10) || p->max_count < 1)
        return bl_fail(err, BL_ERR_INVALID, "synth: count_alpha must be in (0.5, 10] and max_count >= 1");
    if (!(p->excitatory_fraction >= 0 && p->excitatory_fraction <= 1) ||
        !(p->sensory_fraction >= 0 && p->sensory_fraction <= 1))
        return bl_fail(err, BL_ERR_INVALID, "synth: fractions must be in [0, 1]");
    return BL_OK;
}

/* Walker's alias table over weights w (destroyed). */
static void build_alias(double *w, uint64_t n, double *prob, int32_t *alias, int32_t *work)
{
    double total = 0;
    for (uint64_t i = 0; i < n; i++)
        total += w[i];
    int32_t *small = work, *large = work + n;
    uint64_t ns = 0, nl = 0;
    for (uint64_t i = 0; i < n; i++) {
        w[i] = w[i] * (double)n / total;
        if (w[i] < 1.0)
            small[ns++] = (int32_t)i;
        else
            large[nl++] = (int32_t)i;
    }
    while (ns && nl) {
        int32_t s = small[--ns], l = large[--nl];
        prob[s] = w[s];
        alias[s] = l;
        w[l] = (w[l] + w[s]) - 1.0;
        if (w[l] < 1.0)
            small[ns++] = l;
        else
            large[nl++] = l;
    }
    while (nl) {
        int32_t l = large[--nl];
        prob[l] = 1.0;
        alias[l] = l;
    }
    while (ns) { /* rounding leftovers */
        int32_t s = small[--ns];
        prob[s] = 1.0;
        alias[s] = s;
    }
}

bl_status bl_synth_generate(const bl_synth_params *p, bl_connectome **out, bl_error *err)
{
    *out = NULL;
    bl_status st = check_params(p, err);
    if (st)
        return st;
    const uint64_t n = p->n_neurons;
    int64_t *offsets = malloc((n + 1) * sizeof *offsets);
    double *weight = malloc(n * sizeof *weight);
    double *prob = malloc(n * sizeof *prob);
    int32_t *alias = malloc(n * sizeof *alias);
    int32_t *work = malloc(2 * n * sizeof *work);
    int32_t *targets = NULL, *counts = NULL;
    if (!offsets || !weight || !prob || !alias || !work) {
        st = bl_fail(err, BL_ERR_NOMEM, "synth: cannot allocate tables for %" PRIu64 " neurons", n);
        goto done;
    }
    /* Pass 1: out-degrees (lognormal with the requested mean) and attractiveness. */
    double mu = log(p->mean_out_degree) - 0.5 * p->out_degree_sigma * p->out_degree_sigma;
    offsets[0] = 0;
    for (uint64_t i = 0; i < n; i++) {
        stream s;
        stream_init(&s, p->seed, (uint32_t)i, PURPOSE_DEGREE);
        double d = floor(exp(mu + p->out_degree_sigma * stream_normal(&s)) + stream_unit(&s));
        if (d > (double)(n - 1))
            d = (double)(n - 1);
        offsets[i + 1] = offsets[i] + (int64_t)d;
        stream_init(&s, p->seed, (uint32_t)i, PURPOSE_ATTRACT);
        weight[i] = exp(p->in_weight_sigma * stream_normal(&s));
    }
    build_alias(weight, n, prob, alias, work);
    uint64_t cap = (uint64_t)offsets[n];
    targets = malloc((cap ? cap : 1) * sizeof *targets);
    counts = malloc((cap ? cap : 1) * sizeof *counts);
    if (!targets || !counts) {
        st = bl_fail(err, BL_ERR_NOMEM, "synth: cannot allocate %" PRIu64 " edges", cap);
        goto done;
    }
    /* Pass 2: rows in place (sorted, duplicates and self-loops dropped), compacted. */
    uint64_t e = 0;
    int64_t row_start = 0;
    for (uint64_t i = 0; i < n; i++) {
        int64_t d = offsets[i + 1] - row_start;
        row_start = offsets[i + 1];
        stream s;
        stream_init(&s, p->seed, (uint32_t)i, PURPOSE_TARGET);
        int32_t *row = targets + e;
        int64_t m = 0;
        for (int64_t k = 0; k < d; k++) {
            uint64_t slot = ((uint64_t)stream_word(&s) * n) >> 32;
            int32_t t = stream_unit(&s) <= prob[slot] ? (int32_t)slot : alias[slot];
            if ((uint64_t)t != i)
                row[m++] = t;
        }
        qsort(row, (size_t)m, sizeof *row, cmp_i32);
        int64_t u = 0;
        for (int64_t k = 0; k < m; k++)
            if (u == 0 || row[k] != row[u - 1])
                row[u++] = row[k];
        stream_init(&s, p->seed, (uint32_t)i, PURPOSE_SIGN);
        int sign = stream_unit(&s) <= p->excitatory_fraction ? 1 : -1;
        stream_init(&s, p->seed, (uint32_t)i, PURPOSE_COUNT);
        for (int64_t k = 0; k < u; k++) {
            double c = floor(pow(stream_unit(&s), -1.0 / p->count_alpha));
            counts[e + (uint64_t)k] = sign * (int32_t)(c > p->max_count ? p->max_count : c);
        }
        e += (uint64_t)u;
        offsets[i + 1] = (int64_t)e;
    }
    int32_t *t2 = realloc(targets, (e ? e : 1) * sizeof *targets);
    if (t2)
        targets = t2;
    int32_t *c2 = realloc(counts, (e ? e : 1) * sizeof *counts);
    if (c2)
        counts = c2;

    bl_connectome *c;
    st = bl_connectome_adopt(n, e, offsets, targets, counts, &c, err);
    offsets = NULL;
    targets = counts = NULL;
    if (st)
        goto done;
    /* Metadata: sign, transmitter and a "sensory" label for stimulus selection. */
    const char **sign_col = malloc(n * sizeof *sign_col);
    const char **nt_col = malloc(n * sizeof *nt_col);
    const char **type_col = malloc(n * sizeof *type_col);
    if (!sign_col || !nt_col || !type_col) {
        st = bl_fail(err, BL_ERR_NOMEM, "synth: cannot allocate metadata");
    } else {
        for (uint64_t i = 0; i < n; i++) {
            stream s;
            stream_init(&s, p->seed, (uint32_t)i, PURPOSE_SIGN);
            int exc = stream_unit(&s) <= p->excitatory_fraction;
            sign_col[i] = exc ? "+1" : "-1";
            nt_col[i] = exc ? "acetylcholine" : (stream_unit(&s) < 0.5 ? "gaba" : "glutamate");
            stream_init(&s, p->seed, (uint32_t)i, PURPOSE_SENSORY);
            type_col[i] = stream_unit(&s) <= p->sensory_fraction ? "sensory" : "interneuron";
        }
        st = bl_connectome_add_column(c, "cell_type", type_col, err);
        if (!st)
            st = bl_connectome_add_column(c, "transmitter", nt_col, err);
        if (!st)
            st = bl_connectome_add_column(c, "sign", sign_col, err);
    }
    free(sign_col);
    free(nt_col);
    free(type_col);
    if (!st) {
        char gen[512];
        snprintf(gen, sizeof gen,
                 "brainlesslab synth: neurons=%" PRIu64 " mean_out_degree=%.17g out_degree_sigma=%.17g "
                 "in_weight_sigma=%.17g count_alpha=%.17g max_count=%" PRId32
                 " excitatory_fraction=%.17g sensory_fraction=%.17g seed=%" PRIu64,
                 p->n_neurons, p->mean_out_degree, p->out_degree_sigma, p->in_weight_sigma,
                 p->count_alpha, p->max_count, p->excitatory_fraction, p->sensory_fraction, p->seed);
        bl_connectome_set_synthetic(c, 1);
        st = bl_connectome_set_info(c, "name", "synthetic", err);
        if (!st)
            st = bl_connectome_set_info(c, "description", "SYNTHETIC connectome with FlyWire-like degree and "
                                        "synapse-count statistics; not a real animal", err);
        if (!st)
            st = bl_connectome_set_info(c, "generator", gen, err);
        if (!st)
            st = bl_connectome_set_info(c, "licence", "MIT (generated by BrainlessLab)", err);
        if (!st)
            st = bl_connectome_set_info(c, "sign_policy", "per-neuron random sign: excitatory with "
                                        "probability excitatory_fraction", err);
    }
    if (st)
        bl_connectome_destroy(c);
    else
        *out = c;
done:
    free(offsets);
    free(targets);
    free(counts);
    free(weight);
    free(prob);
    free(alias);
    free(work);
    return st;
}
