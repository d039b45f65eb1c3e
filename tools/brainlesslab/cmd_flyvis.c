/* brainlesslab flyvis bench-case: one fresh worker of the flyvis-gradient
 * benchmark workload (docs/benchmark.md, "flyvis"; bench/src/flyvis_case.c).
 * Builds the tiled connectome (timed apart), then runs the Euler trajectory
 * and its discrete-adjoint gradient once cold and R times warm, and writes
 * what the peer (bench/peers/flyvis_torch.py) is qualified against: the
 * network it must use, the trajectory's SHA-256 and the gradients. Plans are
 * the user's way to this model (operation = "flyvis"); this is the timing
 * harness. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "brainlesslab/flyvis.h"
#include "brainlesslab/hash.h"
#include "brainlesslab/npy.h"
#include "cli.h"

static const char usage_text[] =
    "usage: brainlesslab flyvis bench-case --connectome JSON --extent E --steps K --repeat R --out DIR\n"
    "                                      [--objective TYPE]\n"
    "One benchmark worker: builds the flyvis connectome at extent E from JSON, runs K Euler steps\n"
    "(dt 0.005 s, the moving edge of docs/solvers.md) and the adjoint gradient of the objective\n"
    "type's mean-square response (default T4a) once cold and R times warm, on one thread. DIR gets\n"
    "the network as .npy (cells, edges, nsyn, etypes, tau, bias, strength: what a peer must run),\n"
    "the gradients (grad_tau.npy, grad_bias.npy, grad_strength.npy) and timing.json (load_s,\n"
    "first_s, warm_s; first_cpu_s, warm_cpu_s: process CPU time; J; V_sha256: SHA-256 of the\n"
    "float64 trajectory, (K+1) x cells, C order).\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "brainlesslab flyvis: ");
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
/* CPU time of the process: what a loaded machine's time-sharing does not inflate. */
static double cpu(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

static bl_status put(const char *dir, const char *name, bl_dtype dt, int nd, const uint64_t *shape, const void *data,
                     bl_error *err)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return bl_npy_write(path, dt, nd, shape, data, err);
}

static int bench_case(int argc, char **argv)
{
    const char *json = NULL, *out = NULL, *objective = "T4a";
    long extent = -1, steps = -1, repeat = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!v)
            return usage_error("%s needs a value", a);
        if (!strcmp(a, "--connectome"))
            json = v;
        else if (!strcmp(a, "--out"))
            out = v;
        else if (!strcmp(a, "--objective"))
            objective = v;
        else if (!strcmp(a, "--extent") || !strcmp(a, "--steps") || !strcmp(a, "--repeat")) {
            long x = strtol(v, &end, 10);
            if (!*v || *end || x < 0 || x > 1000000)
                return usage_error("%s needs an integer in 0..1000000", a);
            *(!strcmp(a, "--extent") ? &extent : !strcmp(a, "--steps") ? &steps : &repeat) = x;
        } else
            return usage_error("unknown option '%s'", a);
        i++;
    }
    if (!json || !out || extent < 0 || steps < 1 || repeat < 0)
        return usage_error("%s needs --connectome, --extent, --steps >= 1, --repeat and --out", "bench-case");
    bl_error err = {0};
    bl_flyvis *f = NULL;
    const double t0 = now();
    if (bl_flyvis_create(json, (int)extent, 1.0, &f, &err))
        return bl_cli_report("flyvis bench-case", &err);
    const double load_s = now() - t0;
    const int ot = bl_flyvis_type_index(f, objective);
    if (ot < 0) {
        bl_flyvis_destroy(f);
        return usage_error("--objective %s is not a cell type", objective);
    }
    const size_t n = bl_flyvis_n_cells(f), m = bl_flyvis_n_edges(f), nt = bl_flyvis_n_types(f),
                 ne = bl_flyvis_n_edge_types(f), K = (size_t)steps;
    int32_t *ty = malloc(n * sizeof *ty), *u = malloc(n * sizeof *u), *v = malloc(n * sizeof *v),
            *cells = malloc(3 * n * sizeof *cells), *et = malloc(m * sizeof *et);
    int64_t *src = malloc(m * sizeof *src), *tar = malloc(m * sizeof *tar), *edges = malloc(3 * m * sizeof *edges),
            *ets = malloc(3 * ne * sizeof *ets);
    double *ns = malloc(m * sizeof *ns), *tau = malloc(nt * sizeof *tau), *b = malloc(nt * sizeof *b),
           *s = malloc(ne * sizeof *s), *V = malloc((K + 1) * n * sizeof *V), *gt = malloc(nt * sizeof *gt),
           *gb = malloc(nt * sizeof *gb), *gs = malloc(ne * sizeof *gs), *warm = calloc((size_t)repeat + 1, sizeof *warm),
           *warm_cpu = calloc((size_t)repeat + 1, sizeof *warm_cpu);
    int rc = 1;
    if (!ty || !u || !v || !cells || !et || !src || !tar || !edges || !ets || !ns || !tau || !b || !s || !V || !gt ||
        !gb || !gs || !warm || !warm_cpu) {
        bl_fail(&err, BL_ERR_NOMEM, "out of memory for %zu cells and %zu edges", n, m);
        goto out;
    }
    bl_flyvis_cells(f, ty, u, v);
    bl_flyvis_edges(f, src, tar, et, ns);
    for (size_t i = 0; i < n; i++)
        cells[3 * i] = ty[i], cells[3 * i + 1] = u[i], cells[3 * i + 2] = v[i];
    for (size_t i = 0; i < m; i++)
        edges[3 * i] = src[i], edges[3 * i + 1] = tar[i], edges[3 * i + 2] = et[i];
    for (size_t k = 0; k < ne; k++) {
        size_t a, c;
        int sg;
        bl_flyvis_edge_type(f, k, &a, &c, &sg);
        ets[3 * k] = (int64_t)a, ets[3 * k + 1] = (int64_t)c, ets[3 * k + 2] = sg;
    }
    bl_flyvis_default_params(f, tau, b, s);
    bl_flyvis_options o;
    bl_flyvis_options_default(f, &o);
    o.steps = K;
    o.objective_type = ot;
    double J = 0, first_s = 0, first_cpu = 0;
    for (long r = 0; r <= repeat; r++) {
        const double t1 = now(), c1 = cpu();
        if (bl_flyvis_run(f, &o, tau, b, s, V, 0, NULL, NULL, &J, gt, gb, gs, &err))
            goto out;
        const double dt = now() - t1, dc = cpu() - c1;
        if (r == 0)
            first_s = dt, first_cpu = dc;
        else
            warm[r - 1] = dt, warm_cpu[r - 1] = dc;
    }
    char sha[65];
    bl_sha256_buffer(V, (K + 1) * n * sizeof *V, sha);
    const uint64_t sc[2] = {n, 3}, se[2] = {m, 3}, sm[1] = {m}, sx[2] = {ne, 3}, st[1] = {nt}, sk[1] = {ne};
    if (put(out, "cells.npy", BL_DTYPE_INT32, 2, sc, cells, &err) ||
        put(out, "edges.npy", BL_DTYPE_INT64, 2, se, edges, &err) ||
        put(out, "nsyn.npy", BL_DTYPE_FLOAT64, 1, sm, ns, &err) ||
        put(out, "etypes.npy", BL_DTYPE_INT64, 2, sx, ets, &err) ||
        put(out, "tau.npy", BL_DTYPE_FLOAT64, 1, st, tau, &err) ||
        put(out, "bias.npy", BL_DTYPE_FLOAT64, 1, st, b, &err) ||
        put(out, "strength.npy", BL_DTYPE_FLOAT64, 1, sk, s, &err) ||
        put(out, "grad_tau.npy", BL_DTYPE_FLOAT64, 1, st, gt, &err) ||
        put(out, "grad_bias.npy", BL_DTYPE_FLOAT64, 1, st, gb, &err) ||
        put(out, "grad_strength.npy", BL_DTYPE_FLOAT64, 1, sk, gs, &err))
        goto out;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "implementation", "brainlesslab: C, CSR rows in flyvis's edge order, discrete adjoint");
    cJSON_AddNumberToObject(j, "threads", 1);
    cJSON_AddNumberToObject(j, "cells", (double)n);
    cJSON_AddNumberToObject(j, "edges", (double)m);
    cJSON_AddNumberToObject(j, "steps", (double)K);
    cJSON_AddNumberToObject(j, "dt", o.dt);
    cJSON_AddNumberToObject(j, "edge_speed", o.edge_speed);
    cJSON_AddNumberToObject(j, "edge_start", o.edge_start);
    cJSON_AddNumberToObject(j, "edge_on", o.edge_on);
    cJSON_AddNumberToObject(j, "edge_off", o.edge_off);
    cJSON_AddNumberToObject(j, "objective_type", ot);
    cJSON *inputs = cJSON_AddArrayToObject(j, "input_types");
    for (const char *const *p = (const char *const[]){"R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", NULL}; *p; p++)
        if (bl_flyvis_type_index(f, *p) >= 0)
            cJSON_AddItemToArray(inputs, cJSON_CreateNumber(bl_flyvis_type_index(f, *p)));
    cJSON_AddNumberToObject(j, "load_s", load_s);
    cJSON_AddNumberToObject(j, "first_s", first_s);
    cJSON_AddItemToObject(j, "warm_s", cJSON_CreateDoubleArray(warm, (int)repeat));
    cJSON_AddNumberToObject(j, "first_cpu_s", first_cpu);
    cJSON_AddItemToObject(j, "warm_cpu_s", cJSON_CreateDoubleArray(warm_cpu, (int)repeat));
    cJSON_AddNumberToObject(j, "J", J);
    cJSON_AddStringToObject(j, "V_sha256", sha);
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    char path[4300];
    snprintf(path, sizeof path, "%s/timing.json", out);
    FILE *fp = text ? fopen(path, "w") : NULL;
    if (!fp || fputs(text, fp) < 0 || fclose(fp)) {
        bl_fail(&err, BL_ERR_IO, "%s: cannot write", path);
        free(text);
        goto out;
    }
    free(text);
    printf("flyvis bench-case: %zu cells, %zu edges, %zu steps; load %.3f s, first %.4f s, J = %.17g\n", n, m, K,
           load_s, first_s, J);
    rc = 0;
out:
    if (rc)
        rc = bl_cli_report("flyvis bench-case", &err);
    free(ty), free(u), free(v), free(cells), free(et), free(src), free(tar), free(edges), free(ets);
    free(ns), free(tau), free(b), free(s), free(V), free(gt), free(gb), free(gs), free(warm), free(warm_cpu);
    bl_flyvis_destroy(f);
    return rc;
}

int bl_cmd_flyvis(int argc, char **argv)
{
    if (argc < 2 || bl_cli_wants_help(argc, argv)) {
        fputs(usage_text, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "bench-case"))
        return bench_case(argc - 1, argv + 1);
    return usage_error("unknown subcommand '%s' (bench-case)", argv[1]);
}
