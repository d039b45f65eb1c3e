/* Stochastic simulation banks: Gillespie's direct method (exact in law) and
 * tau-leaping (approximate: Poisson firing counts over leaps, a leap that
 * would make a count negative is halved and redrawn). Each replicate's draws
 * come from its own Philox stream (docs/streams.md, "SSA replicates"):
 *   direct:   seed = the bank seed, counter (event lo, replicate, 0x55A1, event hi),
 *             u1 from words 0,1, u2 from words 2,3 (53 bits each);
 *   tau-leap: counter (draw n, replicate, 0x55A20000 | reaction, leap attempt),
 * so a replicate is the same whatever the bank size, its place in the bank,
 * the thread count or the schedule; replicates run in parallel (OpenMP) and
 * write disjoint slices. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/solvers.h"
#include "core/stream.h"
#include "core/threads.h"

#define SSA_DOMAIN_DIRECT UINT32_C(0x55A1)
#define SSA_DOMAIN_TAU UINT32_C(0x55A20000)
#define SSA_MAX_REACTIONS 65536u
#define SSA_MAX_SPECIES 65536u

struct bl_ssa_model {
    size_t ns, nr;
    int64_t *change, *order;
    double *rate;
    bl_ssa_propensity_fn propensity;
    void *user;
};

void bl_ssa_options_default(bl_ssa_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->method = "direct";
    opt->tau = 0.01;
    opt->max_events = 100000000;
}

bl_status bl_ssa_model_create(const bl_ssa_system *sys, bl_ssa_model **out, bl_error *err)
{
    if (!out || !sys)
        return bl_fail(err, BL_ERR_INVALID, "bl_ssa_model_create: system or out is NULL");
    *out = NULL;
    const size_t ns = sys->n_species, nr = sys->n_reactions;
    if (ns == 0 || ns > SSA_MAX_SPECIES || nr == 0 || nr > SSA_MAX_REACTIONS)
        return bl_fail(err, BL_ERR_INVALID, "ssa system: %zu species and %zu reactions (each must be 1..65536)", ns, nr);
    if (!sys->change)
        return bl_fail(err, BL_ERR_INVALID, "ssa system: change (the stoichiometry) is NULL");
    if (!sys->propensity) {
        if (!sys->order || !sys->rate)
            return bl_fail(err, BL_ERR_INVALID, "ssa system: mass action needs order and rate (or give a propensity)");
        for (size_t j = 0; j < nr; j++) {
            if (!(sys->rate[j] >= 0) || !isfinite(sys->rate[j]))
                return bl_fail(err, BL_ERR_INVALID, "ssa system: reaction %zu: rate constant %g is negative or not "
                               "finite", j, sys->rate[j]);
            for (size_t s = 0; s < ns; s++)
                if (sys->order[j * ns + s] < 0 || sys->order[j * ns + s] > 3)
                    return bl_fail(err, BL_ERR_INVALID, "ssa system: reaction %zu: order %lld of species %zu is not "
                                   "in 0..3", j, (long long)sys->order[j * ns + s], s);
        }
    }
    bl_ssa_model *m = calloc(1, sizeof *m);
    if (!m)
        return bl_fail(err, BL_ERR_NOMEM, "ssa: out of memory");
    m->ns = ns, m->nr = nr, m->propensity = sys->propensity, m->user = sys->user;
    m->change = malloc(nr * ns * sizeof *m->change);
    if (!sys->propensity) {
        m->order = malloc(nr * ns * sizeof *m->order);
        m->rate = malloc(nr * sizeof *m->rate);
    }
    if (!m->change || (!sys->propensity && (!m->order || !m->rate))) {
        bl_ssa_model_destroy(m);
        return bl_fail(err, BL_ERR_NOMEM, "ssa: out of memory");
    }
    memcpy(m->change, sys->change, nr * ns * sizeof *m->change);
    if (!sys->propensity) {
        memcpy(m->order, sys->order, nr * ns * sizeof *m->order);
        memcpy(m->rate, sys->rate, nr * sizeof *m->rate);
    }
    *out = m;
    return BL_OK;
}

void bl_ssa_model_destroy(bl_ssa_model *m)
{
    if (!m)
        return;
    free(m->change);
    free(m->order);
    free(m->rate);
    free(m);
}

static double u53(uint32_t hi, uint32_t lo)
{
    return (double)((((uint64_t)hi << 32) | lo) >> 11) * 0x1p-53;
}

/* Propensities; a message on a negative or non-finite one. */
static int propensities(const bl_ssa_model *m, double t, const int64_t *x, double *a, double *a0, char *msg,
                        size_t msz)
{
    if (m->propensity) {
        int rc = m->propensity(m->user, t, x, a);
        if (rc) {
            snprintf(msg, msz, "the propensity function failed (%d) at t = %.17g", rc, t);
            return -1;
        }
    } else {
        for (size_t j = 0; j < m->nr; j++) {
            double v = m->rate[j];
            for (size_t s = 0; s < m->ns; s++) {
                const int64_t o = m->order[j * m->ns + s], xs = x[s];
                if (o >= 1)
                    v *= (double)xs;
                if (o >= 2)
                    v *= (double)(xs - 1) / 2.0;
                if (o >= 3)
                    v *= (double)(xs - 2) / 3.0;
                if (o >= 1 && xs < o)
                    v = 0.0;
            }
            a[j] = v;
        }
    }
    double sum = 0.0;
    for (size_t j = 0; j < m->nr; j++) {
        if (!(a[j] >= 0) || !isfinite(a[j])) {
            snprintf(msg, msz, "reaction %zu has propensity %g (negative or not finite) at t = %.17g", j, a[j], t);
            return -1;
        }
        sum += a[j];
    }
    *a0 = sum;
    return 0;
}

typedef struct tau_stream {
    uint64_t seed;
    uint32_t n, rep, dom, leap;
    uint32_t w[4];
    int have;
} tau_stream;

static double tau_uniform(tau_stream *s)
{
    if (!s->have) {
        bl_stream_block(s->seed, s->n++, s->rep, s->dom, s->leap, s->w);
        s->have = 2;
    }
    return s->have-- == 2 ? u53(s->w[0], s->w[1]) : u53(s->w[2], s->w[3]);
}

/* Poisson(lam): inversion below 10, else Hoermann's PTRS (as NumPy's
 * random_poisson_ptrs). */
static int64_t poisson(tau_stream *s, double lam)
{
    if (lam <= 0)
        return 0;
    if (lam < 10) {
        const double u = tau_uniform(s);
        double p = exp(-lam), F = p;
        int64_t k = 0;
        while (u > F && k < 1000) {
            k++;
            p *= lam / (double)k;
            F += p;
        }
        return k;
    }
    const double slam = sqrt(lam), loglam = log(lam);
    const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    const double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
        const double U = tau_uniform(s) - 0.5, V = tau_uniform(s);
        const double us = 0.5 - fabs(U);
        const double kf = floor((2 * a / us + b) * U + lam + 0.43);
        if (us >= 0.07 && V <= vr)
            return (int64_t)kf;
        if (kf < 0 || (us < 0.013 && V > us))
            continue;
        if (log(V) + log(invalpha) - log(a / (us * us) + b) <= -lam + kf * loglam - lgamma(kf + 1))
            return (int64_t)kf;
    }
}

/* One replicate; 0 or -1 with msg. */
static int run_direct(const bl_ssa_model *m, const bl_ssa_options *o, uint32_t rep, const int64_t *x0, const double *t,
                      size_t nt, int64_t *out, uint64_t *events, int64_t *x, double *a, char *msg, size_t msz)
{
    const size_t ns = m->ns, nr = m->nr;
    memcpy(x, x0, ns * sizeof *x);
    memcpy(out, x0, ns * sizeof *x);
    double tc = t[0];
    size_t k = 1;
    uint64_t ev = 0;
    while (k < nt) {
        double a0;
        if (propensities(m, tc, x, a, &a0, msg, msz))
            return -1;
        double tn = INFINITY, u2 = 0;
        if (a0 > 0) {
            uint32_t w[4];
            bl_stream_block(o->seed, (uint32_t)ev, rep, SSA_DOMAIN_DIRECT, (uint32_t)(ev >> 32), w);
            const double u1 = u53(w[0], w[1]);
            u2 = u53(w[2], w[3]);
            tn = tc + -log(1.0 - u1) / a0;
        }
        while (k < nt && t[k] < tn)
            memcpy(out + k++ * ns, x, ns * sizeof *x);
        if (k == nt)
            break;
        const double target = u2 * a0;
        double cum = 0.0;
        size_t j = nr, last = nr;
        for (size_t i = 0; i < nr; i++) {
            if (a[i] > 0)
                last = i;
            cum += a[i];
            if (cum > target) {
                j = i;
                break;
            }
        }
        if (j == nr)
            j = last; /* the sum rounded below target: the last reaction that can fire */
        for (size_t s = 0; s < ns; s++) {
            x[s] += m->change[j * ns + s];
            if (x[s] < 0) {
                snprintf(msg, msz, "reaction %zu made species %zu negative at t = %.17g (its propensity was %g)", j, s,
                         tn, a[j]);
                return -1;
            }
        }
        tc = tn;
        if (++ev >= o->max_events) {
            snprintf(msg, msz, "event limit %llu reached at t = %.17g", (unsigned long long)o->max_events, tc);
            return -1;
        }
    }
    *events = ev;
    return 0;
}

static int run_tau(const bl_ssa_model *m, const bl_ssa_options *o, uint32_t rep, const int64_t *x0, const double *t,
                   size_t nt, int64_t *out, uint64_t *events, int64_t *x, double *a, int64_t *xn, char *msg,
                   size_t msz)
{
    const size_t ns = m->ns, nr = m->nr;
    memcpy(x, x0, ns * sizeof *x);
    memcpy(out, x0, ns * sizeof *x);
    double tc = t[0];
    uint64_t leaps = 0;
    uint32_t attempt = 0;
    for (size_t k = 1; k < nt; k++) {
        while (tc < t[k]) {
            double a0, dt = fmin(o->tau, t[k] - tc);
            if (propensities(m, tc, x, a, &a0, msg, msz))
                return -1;
            for (;;) {
                memcpy(xn, x, ns * sizeof *x);
                for (size_t j = 0; j < nr; j++) {
                    tau_stream s = {o->seed, 0, rep, SSA_DOMAIN_TAU | (uint32_t)j, attempt, {0}, 0};
                    const int64_t fire = poisson(&s, a[j] * dt);
                    for (size_t q = 0; fire && q < ns; q++)
                        xn[q] += fire * m->change[j * ns + q];
                }
                attempt++;
                int neg = 0;
                for (size_t q = 0; q < ns; q++)
                    neg |= xn[q] < 0;
                if (!neg)
                    break;
                dt *= 0.5;
                if (attempt == UINT32_MAX || dt < 1e-300) {
                    snprintf(msg, msz, "tau-leap: no leap from t = %.17g keeps every count >= 0", tc);
                    return -1;
                }
            }
            memcpy(x, xn, ns * sizeof *x);
            tc = (dt == t[k] - tc) ? t[k] : tc + dt;
            if (++leaps >= o->max_events) {
                snprintf(msg, msz, "leap limit %llu reached at t = %.17g", (unsigned long long)o->max_events, tc);
                return -1;
            }
        }
        memcpy(out + k * ns, x, ns * sizeof *x);
    }
    *events = leaps;
    return 0;
}

bl_status bl_ssa_run(const bl_ssa_model *m, const bl_ssa_options *opt, const int64_t *x0, const double *t,
                     size_t n_times, uint64_t first_replicate, size_t n_replicates, int64_t *out, uint64_t *events,
                     bl_error *err)
{
    if (!m || !opt || !x0 || !t || !out)
        return bl_fail(err, BL_ERR_INVALID, "bl_ssa_run: model, options, x0, t or out is NULL");
    const char *meth = opt->method ? opt->method : "";
    const int tau = !strcmp(meth, "tau-leap");
    if (!tau && strcmp(meth, "direct"))
        return bl_fail(err, BL_ERR_INVALID, "ssa options: method \"%s\" is unknown (direct, tau-leap)", meth);
    if (tau && !(opt->tau > 0 && isfinite(opt->tau)))
        return bl_fail(err, BL_ERR_INVALID, "ssa options: tau-leap needs tau > 0 (got %g)", opt->tau);
    if (opt->max_events == 0)
        return bl_fail(err, BL_ERR_INVALID, "ssa options: max_events must be >= 1");
    if (n_times < 1)
        return bl_fail(err, BL_ERR_INVALID, "ssa: the output grid is empty");
    if (first_replicate > UINT32_MAX || n_replicates > (uint64_t)UINT32_MAX + 1 - first_replicate)
        return bl_fail(err, BL_ERR_INVALID, "ssa: replicates %llu..%llu exceed the stream's 2^32 replicates",
                       (unsigned long long)first_replicate, (unsigned long long)(first_replicate + n_replicates));
    if (n_replicates && n_times > ((size_t)1 << 36) / m->ns / n_replicates)
        return bl_fail(err, BL_ERR_NOMEM, "ssa: %zu replicates x %zu times x %zu species is too large", n_replicates,
                       n_times, m->ns);
    for (size_t k = 0; k < n_times; k++)
        if (!isfinite(t[k]) || (k && !(t[k] > t[k - 1])))
            return bl_fail(err, BL_ERR_INVALID, "ssa: output time %zu (%g) is not finite or not after the previous", k,
                           t[k]);
    for (size_t s = 0; s < m->ns; s++)
        if (x0[s] < 0)
            return bl_fail(err, BL_ERR_INVALID, "ssa: initial count of species %zu is negative (%lld)", s,
                           (long long)x0[s]);
    const int threads = bl_threads_resolve(opt->threads);
    const size_t ns = m->ns, nr = m->nr;
    size_t failed = SIZE_MAX;
    char failed_msg[512] = "";
    int nomem = 0;
#pragma omp parallel num_threads(threads)
    {
        int64_t *x = malloc(2 * ns * sizeof *x);
        double *a = malloc(nr * sizeof *a);
        char msg[512];
        if (!x || !a) {
#pragma omp atomic write
            nomem = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (size_t r = 0; r < n_replicates; r++) {
            if (!x || !a)
                continue;
            uint64_t ev = 0;
            const uint32_t rep = (uint32_t)(first_replicate + r);
            int64_t *o = out + r * n_times * ns;
            int rc = tau ? run_tau(m, opt, rep, x0, t, n_times, o, &ev, x, a, x + ns, msg, sizeof msg)
                         : run_direct(m, opt, rep, x0, t, n_times, o, &ev, x, a, msg, sizeof msg);
            if (events)
                events[r] = ev;
            if (rc) {
#pragma omp critical(bl_ssa_fail)
                if (r < failed) {
                    failed = r;
                    snprintf(failed_msg, sizeof failed_msg, "%s", msg);
                }
            }
        }
        free(x);
        free(a);
    }
    if (nomem)
        return bl_fail(err, BL_ERR_NOMEM, "ssa: out of memory for a replicate's state");
    if (failed != SIZE_MAX)
        return bl_fail(err, BL_ERR_INVALID, "ssa %s: replicate %llu: %s", meth,
                       (unsigned long long)(first_replicate + failed), failed_msg);
    return BL_OK;
}
