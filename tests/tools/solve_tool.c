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
 * SYSTEM: a built-in name (N its state count for "exponential"), or a system
 * in the model language: "lang:FILE" (lines "param NAME VALUE", "init NAME
 * VALUE", "observe NAME EXPR", then a line "---" and the equations), or
 * "lang-hier-gG-sS" / "lang-hier-gG-sS-coupled" (the compiled fixture).
 *   solve_tool obs   SYSTEM N DIR                 t.f64, y.f64, p.f64 -> obs.f64 (observations at each t, y)
 *   solve_tool hess  (as solve)                   w.f64: L as grad -> grad.f64, hess.f64 (n_params^2)
 *   solve_tool describe SYSTEM N                  the compiled RHS and derivatives as text
 * MODEL: birth-death (0 -> X at p0, X -> 0 at p1 X), abc (A + B -> C at p0, C -> A + B at p1).
 * Errors go to stderr, exit 1; usage errors exit 2. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/odelang.h"
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

/* "lang:FILE": declarations, "---", equations. */
static bl_status lang_file(const char *path, bl_ode_lang **out, bl_error *e)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return bl_fail(e, BL_ERR_IO, "cannot open %s", path);
    static char text[1 << 17];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    char *eqs = !strncmp(text, "---\n", 4) ? text : strstr(text, "\n---\n");
    if (!eqs)
        return bl_fail(e, BL_ERR_INVALID, "%s: no --- line", path);
    eqs += eqs == text ? 4 : 5;
    eqs[-4] = '\0';
    enum { MAXD = 512 };
    static char *pn[MAXD], *in[MAXD], *on[MAXD], *oe[MAXD];
    static double pv[MAXD], iv[MAXD];
    size_t np = 0, ni = 0, no = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char kind[16], name[80];
        int used = 0;
        if (sscanf(line, "%15s %79s %n", kind, name, &used) < 2)
            continue;
        if (!strcmp(kind, "param") && np < MAXD)
            pn[np] = strdup(name), pv[np++] = strtod(line + used, NULL);
        else if (!strcmp(kind, "init") && ni < MAXD)
            in[ni] = strdup(name), iv[ni++] = strtod(line + used, NULL);
        else if (!strcmp(kind, "observe") && no < MAXD)
            on[no] = strdup(name), oe[no++] = strdup(line + used);
    }
    bl_ode_lang_source src = {eqs, np, (const char *const *)pn, pv, ni, (const char *const *)in, iv,
                              no, (const char *const *)on, (const char *const *)oe};
    bl_status st = bl_ode_lang_compile(&src, out, e);
    for (size_t k = 0; k < np; k++)
        free(pn[k]);
    for (size_t k = 0; k < ni; k++)
        free(in[k]);
    for (size_t k = 0; k < no; k++)
        free(on[k]), free(oe[k]);
    return st;
}

typedef struct any_system {
    bl_ode_builtin *b;
    bl_ode_lang *l;
    const bl_ode_system *sys;
} any_system;

static bl_status any_create(const char *name, size_t n_hint, any_system *a, bl_error *e)
{
    memset(a, 0, sizeof *a);
    unsigned G, S;
    char tail[16] = "";
    bl_status st;
    if (!strncmp(name, "lang:", 5)) {
        st = lang_file(name + 5, &a->l, e);
    } else if (sscanf(name, "lang-hier-g%u-s%u%15s", &G, &S, tail) >= 2) {
        bl_ode_lang_source src;
        if ((st = bl_ode_lang_hierarchical(G, S, !strcmp(tail, "-coupled"), &src, e)))
            return st;
        st = bl_ode_lang_compile(&src, &a->l, e);
        bl_ode_lang_fixture_free(&src);
    } else {
        if ((st = bl_ode_builtin_create(name, n_hint, &a->b, e)))
            return st;
        a->sys = bl_ode_builtin_system(a->b);
        return BL_OK;
    }
    if (!st)
        a->sys = bl_ode_lang_system(a->l);
    return st;
}

static void any_destroy(any_system *a)
{
    bl_ode_builtin_destroy(a->b);
    bl_ode_lang_destroy(a->l);
}

static int ode_main(int argc, char **argv)
{
    const char *mode = argv[1];
    bl_error e = {0};
    any_system any;
    if (any_create(argv[2], strtoull(argv[3], NULL, 10), &any, &e))
        return die(&e);
    const bl_ode_system *sys = any.sys;
    if (!strcmp(mode, "describe")) {
        char *d = any.l ? bl_ode_lang_describe(any.l) : NULL;
        printf("%s", d ? d : "(a built-in system)\n");
        free(d);
        any_destroy(&any);
        return 0;
    }
    if (!strcmp(mode, "obs")) {
        if (!any.l)
            return fprintf(stderr, "solve_tool: obs needs a language system\n"), 2;
        snprintf(dir, sizeof dir, "%s", argv[4]);
        size_t nt, m, pc;
        double *t = slurp("t.f64", 8, &nt), *y = slurp("y.f64", 8, &m), *p = slurp("p.f64", 8, &pc);
        const size_t no = bl_ode_lang_n_observe(any.l);
        double *ob = calloc(nt * no + 1, 8);
        for (size_t k = 0; k < nt; k++)
            bl_ode_lang_observe(any.l, t[k], y + k * sys->n_states, p, ob + k * no);
        spill("obs.f64", ob, nt * no * 8);
        free(t), free(y), free(p), free(ob);
        any_destroy(&any);
        return 0;
    }
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
        any_destroy(&any);
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
    } else if (!strcmp(mode, "hess")) {
        wobj w = {slurp("w.f64", 8, &cnt), n, nt - 1};
        double v, *gp = calloc(np, 8), *H = calloc(np * np + 1, 8);
        st = bl_ode_hessian(s, t, nt, y0, p, final_weighted, NULL, &w, &v, gp, H, &e);
        if (!st) {
            spill("grad.f64", gp, np * 8);
            spill("hess.f64", H, np * np * 8);
        }
        free((void *)w.w), free(gp), free(H);
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
        bl_ode_lang_explain(any.l, &e);
    else
        spill("y.f64", y, nt * n * 8);
    free(t), free(y0), free(p), free(y);
    bl_ode_solver_destroy(s);
    any_destroy(&any);
    return st ? die(&e) : 0; /* freed either way: the sanitizer build checks leaks on failures too */
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
    if ((argc >= 5 && (!strcmp(argv[1], "rhs") || !strcmp(argv[1], "solve") || !strcmp(argv[1], "sens") ||
                       !strcmp(argv[1], "grad") || !strcmp(argv[1], "hess") || !strcmp(argv[1], "obs"))) ||
        (argc >= 4 && !strcmp(argv[1], "describe")))
        return ode_main(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "ssa"))
        return ssa_main(argc, argv);
    fprintf(stderr, "usage: solve_tool rhs|solve|sens|grad|ssa ... (see the source's header)\n");
    return 2;
}
