/* The C side of tests/oracles/test_solvers_scipy.py: runs the solvers of
 * include/brainlesslab/solvers.h on raw float64/int64 files the oracle writes,
 * and writes raw results back (little-endian, C order).
 *   solve_tool rhs   SYSTEM N DIR                 y.f64 (m x n), p.f64 -> f.f64, jac.f64, pjac.f64
 *   solve_tool solve SYSTEM N METHOD SUBSTEPS RTOL ATOL MAX_STEPS DIR
 *                                                 t.f64, y0.f64, p.f64 -> y.f64; stats JSON on stdout
 *   solve_tool sens  (as solve)                   -> y.f64, sens.f64 (times x n x n_params)
 *   solve_tool grad  (as solve)                   w.f64 (n): L = sum_i w_i y_i(t_end) -> grad.f64, grady0.f64
 *   solve_tool ssa   MODEL METHOD SEED FIRST N_REP THREADS TAU DIR
 *                                                 t.f64, x0.i64, p.f64 -> out.i64, events.u64
 * MODEL: birth-death (0 -> X at p0, X -> 0 at p1 X), abc (A + B -> C at p0, C -> A + B at p1).
 * Errors go to stderr, exit 1; usage errors exit 2. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/solvers.h"

static char dir[4096];

static void *slurp(const char *name, size_t elem, size_t *count)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "solve_tool: cannot open %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc(sz > 0 ? (size_t)sz : 1);
    if (!buf || fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
        fprintf(stderr, "solve_tool: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    *count = (size_t)sz / elem;
    return buf;
}

static void spill(const char *name, const void *data, size_t bytes)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, bytes, f) != bytes || fclose(f)) {
        fprintf(stderr, "solve_tool: cannot write %s\n", path);
        exit(1);
    }
}

static int die(const bl_error *e)
{
    fprintf(stderr, "solve_tool: %s\n", e->message);
    return 1;
}

typedef struct wobj {
    const double *w;
    size_t n, last;
} wobj;

static int final_weighted(void *u, size_t k, double t, const double *y, double *v, double *dv)
{
    const wobj *o = u;
    double acc = 0.0;
    for (size_t i = 0; i < o->n; i++) {
        dv[i] = k == o->last ? o->w[i] : 0.0;
        acc += dv[i] * y[i];
    }
    *v = acc;
    return 0;
}

static int ode_main(int argc, char **argv)
{
    const char *mode = argv[1];
    bl_error e = {0};
    bl_ode_builtin *b;
    if (bl_ode_builtin_create(argv[2], strtoull(argv[3], NULL, 10), &b, &e))
        return die(&e);
    const bl_ode_system *sys = bl_ode_builtin_system(b);
    const size_t n = sys->n_states, np = sys->n_params;
    size_t cnt;
    if (!strcmp(mode, "rhs")) {
        snprintf(dir, sizeof dir, "%s", argv[4]);
        size_t m, pc;
        double *y = slurp("y.f64", 8, &m), *p = slurp("p.f64", 8, &pc);
        m /= n;
        double *f = malloc(m * n * 8), *J = malloc(m * n * n * 8), *P = malloc(m * n * (np ? np : 1) * 8);
        for (size_t r = 0; r < m; r++)
            if (sys->rhs(sys->user, 0.0, y + r * n, p, f + r * n) || sys->jac(sys->user, 0.0, y + r * n, p, J + r * n * n) ||
                sys->pjac(sys->user, 0.0, y + r * n, p, P + r * n * np))
                return fprintf(stderr, "solve_tool: rhs failed\n"), 1;
        spill("f.f64", f, m * n * 8);
        spill("jac.f64", J, m * n * n * 8);
        spill("pjac.f64", P, m * n * np * 8);
        free(y), free(p), free(f), free(J), free(P);
        bl_ode_builtin_destroy(b);
        return 0;
    }
    if (argc != 10)
        return fprintf(stderr, "usage: solve_tool %s SYSTEM N METHOD SUBSTEPS RTOL ATOL MAX_STEPS DIR\n", mode), 2;
    snprintf(dir, sizeof dir, "%s", argv[9]);
    bl_ode_options o;
    bl_ode_options_default(&o);
    o.method = argv[4];
    o.substeps = (unsigned)strtoul(argv[5], NULL, 10);
    o.rtol = strtod(argv[6], NULL);
    o.atol = strtod(argv[7], NULL);
    o.max_steps = strtoull(argv[8], NULL, 10);
    size_t nt;
    double *t = slurp("t.f64", 8, &nt), *y0 = slurp("y0.f64", 8, &cnt), *p = slurp("p.f64", 8, &cnt);
    bl_ode_solver *s;
    if (bl_ode_solver_create(sys, &o, &s, &e))
        return die(&e);
    double *y = calloc(nt * n, 8);
    bl_status st;
    if (!strcmp(mode, "solve")) {
        st = bl_ode_solve(s, t, nt, y0, p, y, &e);
    } else if (!strcmp(mode, "sens")) {
        double *S = calloc(nt * n * np, 8);
        st = bl_ode_solve_sens(s, t, nt, y0, p, y, S, &e);
        if (!st)
            spill("sens.f64", S, nt * n * np * 8);
        free(S);
    } else if (!strcmp(mode, "grad")) {
        wobj w = {slurp("w.f64", 8, &cnt), n, nt - 1};
        double v, *gp = calloc(np, 8), *gy = calloc(n, 8);
        st = bl_ode_gradient(s, t, nt, y0, p, final_weighted, &w, &v, gp, gy, &e);
        if (!st) {
            spill("grad.f64", gp, np * 8);
            spill("grady0.f64", gy, n * 8);
            spill("value.f64", &v, 8);
        }
        free((void *)w.w), free(gp), free(gy);
    } else {
        return fprintf(stderr, "solve_tool: unknown mode %s\n", mode), 2;
    }
    bl_ode_stats so;
    bl_ode_solver_stats(s, &so);
    printf("{\"method\": \"%s\", \"accepted\": %" PRIu64 ", \"rejected\": %" PRIu64 ", \"rhs_evals\": %" PRIu64
           ", \"jac_evals\": %" PRIu64 ", \"stiffness_flags\": %" PRIu64 ", \"ok\": %s}\n",
           so.method, so.steps_accepted, so.steps_rejected, so.rhs_evals, so.jac_evals, so.stiffness_flags,
           st ? "false" : "true");
    if (st)
        return die(&e);
    spill("y.f64", y, nt * n * 8);
    free(t), free(y0), free(p), free(y);
    bl_ode_solver_destroy(s);
    bl_ode_builtin_destroy(b);
    return 0;
}

static int ssa_main(int argc, char **argv)
{
    if (argc != 10)
        return fprintf(stderr, "usage: solve_tool ssa MODEL METHOD SEED FIRST N_REP THREADS TAU DIR\n"), 2;
    snprintf(dir, sizeof dir, "%s", argv[9]);
    size_t nt, nx, npc;
    double *t = slurp("t.f64", 8, &nt), *p = slurp("p.f64", 8, &npc);
    int64_t *x0 = slurp("x0.i64", 8, &nx);
    static const int64_t bd_change[] = {1, -1}, bd_order[] = {0, 1};
    static const int64_t abc_change[] = {-1, -1, 1, 1, 1, -1}, abc_order[] = {1, 1, 0, 0, 0, 1};
    bl_ssa_system sys = {0};
    if (!strcmp(argv[2], "birth-death"))
        sys = (bl_ssa_system){1, 2, bd_change, bd_order, p, NULL, NULL};
    else if (!strcmp(argv[2], "abc"))
        sys = (bl_ssa_system){3, 2, abc_change, abc_order, p, NULL, NULL};
    else
        return fprintf(stderr, "solve_tool: unknown ssa model %s\n", argv[2]), 2;
    if (nx != sys.n_species || npc != sys.n_reactions)
        return fprintf(stderr, "solve_tool: x0 or p has the wrong length\n"), 2;
    bl_error e = {0};
    bl_ssa_model *m;
    if (bl_ssa_model_create(&sys, &m, &e))
        return die(&e);
    bl_ssa_options o;
    bl_ssa_options_default(&o);
    o.method = argv[3];
    o.seed = strtoull(argv[4], NULL, 10);
    const uint64_t first = strtoull(argv[5], NULL, 10);
    const size_t nrep = strtoull(argv[6], NULL, 10);
    o.threads = atoi(argv[7]);
    o.tau = strtod(argv[8], NULL);
    int64_t *out = calloc(nrep * nt * sys.n_species, 8);
    uint64_t *ev = calloc(nrep ? nrep : 1, 8);
    if (bl_ssa_run(m, &o, x0, t, nt, first, nrep, out, ev, &e))
        return die(&e);
    spill("out.i64", out, nrep * nt * sys.n_species * 8);
    spill("events.u64", ev, nrep * 8);
    bl_ssa_model_destroy(m);
    free(t), free(p), free(x0), free(out), free(ev);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && (!strcmp(argv[1], "rhs") || !strcmp(argv[1], "solve") || !strcmp(argv[1], "sens") ||
                      !strcmp(argv[1], "grad")))
        return ode_main(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "ssa"))
        return ssa_main(argc, argv);
    fprintf(stderr, "usage: solve_tool rhs|solve|sens|grad|ssa ... (see the source's header)\n");
    return 2;
}
