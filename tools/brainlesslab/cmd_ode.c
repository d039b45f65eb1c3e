/* brainlesslab ode bench-case: one fresh worker of the execution-baselines
 * workload families of `brainlesslab bench` (docs/benchmark.md, "ODE and SSA
 * families"; bench/src/ode_case.c):
 *
 *   ode-rhs       the structured right-hand side of a hierarchical fixture
 *                 (case g4-s2-independent, g4-s2-coupled, g16-s8-...), one
 *                 warm call = one evaluation of f(t, y0, p0) through the
 *                 system's callback (generated C)
 *   ode-rk4-grad  RK4, 64 steps of the exponential system dy_i/dt = -k_i y_i
 *                 with 256 states (case n256; n16 in the quick run), the
 *                 sum of the final states and its gradient with respect to
 *                 every rate k_i by the discrete adjoint
 *   ssa-bank      Gillespie's direct method, birth-death (0 -> X at 10,
 *                 X -> 0 at 0.1 X) from 0 to t = 20, a bank of 16 or 64
 *                 replicates (case bank16, bank64) on one thread
 *
 * The system is compiled (and its C generated or loaded from the cache)
 * before the clock starts; that time is reported apart (compile_s). Then
 * one cold call and R warm ones; a call too short for the clock is timed as
 * a batch (batch calls per sample, the sample divided by it). DIR gets
 * timing.json (compile_s, first_s, warm_s, warm_cpu_s per call, batch,
 * codegen: the provenance) and result.json (the values the peer is
 * qualified against, every double printed exactly). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "brainlesslab/odelang.h"
#include "brainlesslab/solvers.h"
#include "cli.h"

static const char usage_text[] =
    "usage: brainlesslab ode bench-case --family F --case C --repeat R --out DIR\n"
    "One benchmark worker of the ODE/SSA families (docs/benchmark.md): F is ode-rhs (C: g4-s2-independent,\n"
    "g4-s2-coupled, g16-s8-independent, g16-s8-coupled), ode-rk4-grad (C: n256, n16) or ssa-bank (C: bank16,\n"
    "bank64). Compiles the system (timed apart), then one cold call and R warm ones on one thread; DIR gets\n"
    "timing.json (compile_s, first_s, warm_s, warm_cpu_s, batch, codegen) and result.json (the values).\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "brainlesslab ode: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage_text);
    return 2;
}

static double clock_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }
static double cpu(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

/* One family's prepared state and its call. */
typedef struct job {
    bl_ode_lang *lang;
    bl_ode_solver *solver;
    bl_ssa_model *ssa;
    size_t n, np, reps;
    double *y0, *p, *out, *grad, t[2];
    int64_t *counts;
    uint64_t *events;
    double value;
    int family; /* 0 rhs, 1 rk4-grad, 2 ssa */
} job;

static int sum_final(void *user, size_t k, double t, const double *y, double *value, double *dy)
{
    const size_t *nk = user; /* {n, last output point} */
    (void)t;
    *value = 0.0;
    for (size_t i = 0; i < nk[0]; i++) {
        *value += k == nk[1] ? y[i] : 0.0;
        dy[i] = k == nk[1] ? 1.0 : 0.0;
    }
    return 0;
}

static bl_status call(job *j, bl_error *err)
{
    if (j->family == 0) {
        const bl_ode_system *s = bl_ode_lang_system(j->lang);
        s->rhs(s->user, 0.0, j->y0, j->p, j->out);
        return BL_OK;
    }
    if (j->family == 1) {
        size_t nk[2] = {j->n, 1};
        return bl_ode_gradient(j->solver, j->t, 2, j->y0, j->p, sum_final, nk, &j->value, j->grad, NULL, err);
    }
    bl_ssa_options o;
    bl_ssa_options_default(&o);
    o.seed = 20261202;
    o.threads = 1;
    const int64_t x0[1] = {0};
    const double tt[2] = {0.0, 20.0};
    return bl_ssa_run(j->ssa, &o, x0, tt, 2, 0, j->reps, j->counts, j->events, err);
}

static bl_status prepare(job *j, const char *family, const char *cas, bl_error *err)
{
    if (!strcmp(family, "ode-rhs")) {
        unsigned G, S;
        char kind[32];
        if (sscanf(cas, "g%u-s%u-%31s", &G, &S, kind) != 3 || (strcmp(kind, "coupled") && strcmp(kind, "independent")))
            return bl_fail(err, BL_ERR_INVALID, "--case %s: expected gG-sS-independent or gG-sS-coupled", cas);
        bl_ode_lang_source src;
        bl_status st = bl_ode_lang_hierarchical(G, S, !strcmp(kind, "coupled"), &src, err);
        if (!st)
            st = bl_ode_lang_compile(&src, &j->lang, err);
        bl_ode_lang_fixture_free(&src);
        if (st || (st = bl_ode_lang_codegen(j->lang, BL_EQ_EXEC_AUTO, err)))
            return st;
        j->n = bl_ode_lang_n_states(j->lang);
        j->np = bl_ode_lang_n_params(j->lang);
        j->y0 = malloc(j->n * sizeof *j->y0);
        j->p = malloc(j->np * sizeof *j->p);
        j->out = calloc(j->n, sizeof *j->out);
        if (!j->y0 || !j->p || !j->out)
            return bl_fail(err, BL_ERR_NOMEM, "out of memory");
        memcpy(j->y0, bl_ode_lang_y0(j->lang), j->n * sizeof *j->y0);
        memcpy(j->p, bl_ode_lang_params(j->lang), j->np * sizeof *j->p);
        j->family = 0;
        return BL_OK;
    }
    if (!strcmp(family, "ode-rk4-grad")) {
        unsigned n;
        if (sscanf(cas, "n%u", &n) != 1 || n < 1 || n > BL_EQ_MAX_VARS)
            return bl_fail(err, BL_ERR_INVALID, "--case %s: expected nN (N states, 1..%u: the model language's limit)", cas,
                           BL_EQ_MAX_VARS);
        /* dy_i/dt = -k_i y_i, k_i = 0.5 + i/n, y_i(0) = 1 + i/n: the protocol's exponential system */
        size_t cap = (size_t)n * 40 + 16;
        char *eqs = malloc(cap), **pn = calloc(n, sizeof *pn), **in = calloc(n, sizeof *in);
        double *pv = calloc(n, sizeof *pv), *iv = calloc(n, sizeof *iv);
        bl_status st = BL_OK;
        size_t len = 0;
        for (unsigned i = 0; eqs && pn && in && pv && iv && i < n; i++) {
            len += (size_t)snprintf(eqs + len, cap - len, "dy%u/dt = -k%u * y%u : 1\n", i, i, i);
            char nm[32];
            snprintf(nm, sizeof nm, "k%u", i);
            pn[i] = strdup(nm);
            snprintf(nm, sizeof nm, "y%u", i);
            in[i] = strdup(nm);
            pv[i] = 0.5 + (double)i / n;
            iv[i] = 1.0 + (double)i / n;
            if (!pn[i] || !in[i])
                break;
        }
        if (!eqs || !pn || !in || !pv || !iv || !pn[n - 1] || !in[n - 1])
            st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
        if (!st) {
            bl_ode_lang_source src = {eqs, n, (const char *const *)pn, pv, n, (const char *const *)in, iv, 0, NULL, NULL};
            st = bl_ode_lang_compile(&src, &j->lang, err);
        }
        for (unsigned i = 0; pn && in && i < n; i++)
            free(pn[i]), free(in[i]);
        free(eqs), free(pn), free(in), free(pv), free(iv);
        if (st || (st = bl_ode_lang_codegen(j->lang, BL_EQ_EXEC_AUTO, err)))
            return st;
        bl_ode_options o;
        bl_ode_options_default(&o);
        o.method = "rk4";
        o.substeps = 64; /* one output interval [0, 1] of 64 steps: the objective reads the final state only */
        if ((st = bl_ode_solver_create(bl_ode_lang_system(j->lang), &o, &j->solver, err)))
            return st;
        j->n = j->np = n;
        j->y0 = malloc(n * sizeof *j->y0);
        j->p = malloc(n * sizeof *j->p);
        j->grad = calloc(n, sizeof *j->grad);
        if (!j->y0 || !j->p || !j->grad)
            return bl_fail(err, BL_ERR_NOMEM, "out of memory");
        memcpy(j->y0, bl_ode_lang_y0(j->lang), n * sizeof *j->y0);
        memcpy(j->p, bl_ode_lang_params(j->lang), n * sizeof *j->p);
        j->t[0] = 0.0, j->t[1] = 1.0;
        j->family = 1;
        return BL_OK;
    }
    if (!strcmp(family, "ssa-bank")) {
        unsigned r;
        if (sscanf(cas, "bank%u", &r) != 1 || r < 1 || r > 100000)
            return bl_fail(err, BL_ERR_INVALID, "--case %s: expected bankR (R replicates)", cas);
        static const int64_t change[2] = {1, -1}, order[2] = {0, 1};
        static const double rate[2] = {10.0, 0.1};
        const bl_ssa_system sys = {1, 2, change, order, rate, NULL, NULL};
        bl_status st = bl_ssa_model_create(&sys, &j->ssa, err);
        if (st)
            return st;
        j->reps = r;
        j->counts = calloc(2 * (size_t)r, sizeof *j->counts);
        j->events = calloc(r, sizeof *j->events);
        if (!j->counts || !j->events)
            return bl_fail(err, BL_ERR_NOMEM, "out of memory");
        j->family = 2;
        return BL_OK;
    }
    return bl_fail(err, BL_ERR_INVALID, "--family %s: expected ode-rhs, ode-rk4-grad or ssa-bank", family);
}

static void put_doubles(FILE *f, const char *key, const double *x, size_t n, int last)
{
    fprintf(f, "  \"%s\": [", key);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%.17g", i ? ", " : "", x[i]);
    fprintf(f, "]%s\n", last ? "" : ",");
}

static int bench_case(int argc, char **argv)
{
    const char *family = NULL, *cas = NULL, *out = NULL;
    long repeat = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return usage_error("%s needs a value", a);
        if (!strcmp(a, "--family"))
            family = v;
        else if (!strcmp(a, "--case"))
            cas = v;
        else if (!strcmp(a, "--out"))
            out = v;
        else if (!strcmp(a, "--repeat")) {
            char *e;
            repeat = strtol(v, &e, 10);
            if (*e || repeat < 0 || repeat > 100000)
                return usage_error("--repeat %s: expected 0..100000", v);
        } else
            return usage_error("unknown option %s", a);
        i++;
    }
    if (!family || !cas || !out || repeat < 0)
        return usage_error("%s needs --family, --case, --repeat and --out", "bench-case");
    bl_error err = {0};
    job j;
    memset(&j, 0, sizeof j);
    double *warm = calloc((size_t)repeat + 1, sizeof *warm), *warm_cpu = calloc((size_t)repeat + 1, sizeof *warm_cpu);
    int rc = 1;
    FILE *f = NULL;
    char path[4200];
    const double t0 = now();
    if (!warm || !warm_cpu) {
        bl_fail(&err, BL_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (prepare(&j, family, cas, &err))
        goto done;
    const double compile_s = now() - t0;
    double t1 = now(), c1 = cpu();
    if (call(&j, &err))
        goto done;
    const double first_s = now() - t1, first_cpu_s = cpu() - c1;
    /* a batch long enough for the clock: about 2 ms of the first call's time */
    long batch = first_s > 0 ? (long)(2e-3 / first_s) : 1;
    batch = batch < 1 ? 1 : batch > 100000 ? 100000 : batch;
    for (long r = 0; r < repeat; r++) {
        t1 = now(), c1 = cpu();
        for (long b = 0; b < batch; b++)
            if (call(&j, &err))
                goto done;
        warm[r] = (now() - t1) / (double)batch;
        warm_cpu[r] = (cpu() - c1) / (double)batch;
    }
    snprintf(path, sizeof path, "%s/result.json", out);
    if (!(f = fopen(path, "w"))) {
        bl_fail(&err, BL_ERR_IO, "%s: cannot write", path);
        goto done;
    }
    fprintf(f, "{\n  \"family\": \"%s\", \"case\": \"%s\",\n", family, cas);
    if (j.family == 0) {
        put_doubles(f, "f", j.out, j.n, 1);
    } else if (j.family == 1) {
        fprintf(f, "  \"value\": %.17g,\n", j.value);
        put_doubles(f, "grad", j.grad, j.n, 1);
    } else {
        uint64_t ev = 0;
        fprintf(f, "  \"final\": [");
        for (size_t r = 0; r < j.reps; r++) {
            fprintf(f, "%s%" PRId64, r ? ", " : "", j.counts[2 * r + 1]);
            ev += j.events[r];
        }
        fprintf(f, "],\n  \"events\": %" PRIu64 "\n", ev);
    }
    fprintf(f, "}\n");
    if (fclose(f)) {
        f = NULL;
        bl_fail(&err, BL_ERR_IO, "%s: cannot write", path);
        goto done;
    }
    snprintf(path, sizeof path, "%s/timing.json", out);
    if (!(f = fopen(path, "w"))) {
        bl_fail(&err, BL_ERR_IO, "%s: cannot write", path);
        goto done;
    }
    char *cg = j.lang ? bl_ode_lang_codegen_json(j.lang) : NULL;
    fprintf(f, "{\n  \"implementation\": \"brainlesslab %s (C, one thread)\",\n  \"compile_s\": %.17g,\n"
               "  \"first_s\": %.17g,\n  \"first_cpu_s\": %.17g,\n  \"batch\": %ld,\n",
            j.family == 0   ? "structured RHS, the system's callback"
            : j.family == 1 ? "RK4 and its discrete adjoint"
                            : "SSA direct method",
            compile_s, first_s, first_cpu_s, batch);
    if (j.family == 2) {
        uint64_t ev = 0;
        for (size_t r = 0; r < j.reps; r++)
            ev += j.events[r];
        fprintf(f, "  \"events\": %" PRIu64 ",\n", ev);
    }
    if (j.lang) {
        bl_ode_lang_size gs;
        bl_ode_lang_sizes(j.lang, &gs);
        fprintf(f, "  \"rhs_instructions\": %zu,\n", gs.rhs);
    }
    fprintf(f, "  \"codegen\": %s,\n", cg ? cg : "null");
    free(cg);
    put_doubles(f, "warm_s", warm, (size_t)repeat, 0);
    put_doubles(f, "warm_cpu_s", warm_cpu, (size_t)repeat, 1);
    fprintf(f, "}\n");
    if (fclose(f)) {
        f = NULL;
        bl_fail(&err, BL_ERR_IO, "%s: cannot write", path);
        goto done;
    }
    f = NULL;
    printf("ode bench-case %s %s: compile %.4f s, first %.3g s, batch %ld\n", family, cas, compile_s, first_s, batch);
    rc = 0;
done:
    if (rc)
        rc = bl_cli_report("ode bench-case", &err);
    bl_ode_solver_destroy(j.solver);
    bl_ode_lang_destroy(j.lang);
    bl_ssa_model_destroy(j.ssa);
    free(j.y0), free(j.p), free(j.out), free(j.grad), free(j.counts), free(j.events), free(warm), free(warm_cpu);
    return rc;
}

int bl_cmd_ode(int argc, char **argv)
{
    if (argc < 2 || bl_cli_wants_help(argc, argv)) {
        fputs(usage_text, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "bench-case"))
        return bench_case(argc - 1, argv + 1);
    return usage_error("unknown subcommand '%s' (bench-case)", argv[1]);
}
