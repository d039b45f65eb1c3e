/* The C side of tests/oracles/test_flyvis_torch.py (and the timing script
 * bench/peers/flyvis_torch.py): builds the flyvis connectome and runs the
 * rate model and its adjoint on raw little-endian files in DIR.
 *   flyvis_tool net JSON EXTENT FILL DIR
 *       -> cells.i32 (n x 3: type, u, v), edges.i64 (m x 3: src, tar, type),
 *          nsyn.f64 (m), etypes.i64 (E x 3: src type, tar type, sign),
 *          tau0.f64, bias0.f64, strength0.f64 (flyvis's initial values);
 *          on stdout: cells, edges, types, edge types
 *   flyvis_tool run JSON EXTENT FILL DT STEPS SPEED START ON OFF OBJTYPE GRAD REPS DIR
 *       tau.f64, bias.f64, strength.f64 -> V.f64 ((K+1) x n), J.f64,
 *          gtau.f64, gbias.f64, gstrength.f64 (GRAD = 1); REPS > 1 repeats the
 *          run and prints the best wall time of one run (seconds) on stdout
 * Errors go to stderr, exit 1; usage errors exit 2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "brainlesslab/flyvis.h"

static const char *dir;

static void spill(const char *name, const void *data, size_t bytes)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || (bytes && fwrite(data, 1, bytes, f) != bytes) || fclose(f)) {
        fprintf(stderr, "flyvis_tool: cannot write %s\n", path);
        exit(1);
    }
}

static void slurp(const char *name, double *out, size_t count)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f || fread(out, sizeof *out, count, f) != count) {
        fprintf(stderr, "flyvis_tool: cannot read %zu values from %s\n", count, path);
        exit(1);
    }
    fclose(f);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 2 || ((strcmp(argv[1], "net") || argc != 6) && (strcmp(argv[1], "run") || argc != 15))) {
        fprintf(stderr, "usage: flyvis_tool net JSON EXTENT FILL DIR | run JSON EXTENT FILL DT STEPS SPEED START ON "
                        "OFF OBJTYPE GRAD REPS DIR\n");
        return 2;
    }
    dir = argv[argc - 1];
    bl_error e = {0};
    bl_flyvis *f = NULL;
    if (bl_flyvis_create(argv[2], atoi(argv[3]), atof(argv[4]), &f, &e)) {
        fprintf(stderr, "flyvis_tool: %s\n", e.message);
        return 1;
    }
    const size_t n = bl_flyvis_n_cells(f), m = bl_flyvis_n_edges(f), nt = bl_flyvis_n_types(f),
                 ne = bl_flyvis_n_edge_types(f);
    if (!strcmp(argv[1], "net")) {
        int32_t *ty = malloc(n * sizeof *ty), *u = malloc(n * sizeof *u), *v = malloc(n * sizeof *v),
                *cells = malloc(3 * n * sizeof *cells), *et = malloc((m + 1) * sizeof *et);
        int64_t *src = malloc((m + 1) * sizeof *src), *tar = malloc((m + 1) * sizeof *tar),
                *edges = malloc((3 * m + 1) * sizeof *edges), *ets = malloc(3 * ne * sizeof *ets);
        double *ns = malloc((m + 1) * sizeof *ns), *tau = malloc(nt * sizeof *tau), *b = malloc(nt * sizeof *b),
               *s = malloc(ne * sizeof *s);
        if (!ty || !u || !v || !cells || !et || !src || !tar || !edges || !ets || !ns || !tau || !b || !s)
            return 1;
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
        spill("cells.i32", cells, 3 * n * sizeof *cells);
        spill("edges.i64", edges, 3 * m * sizeof *edges);
        spill("nsyn.f64", ns, m * sizeof *ns);
        spill("etypes.i64", ets, 3 * ne * sizeof *ets);
        spill("tau0.f64", tau, nt * sizeof *tau);
        spill("bias0.f64", b, nt * sizeof *b);
        spill("strength0.f64", s, ne * sizeof *s);
        printf("%zu %zu %zu %zu\n", n, m, nt, ne);
        free(ty), free(u), free(v), free(cells), free(et), free(src), free(tar), free(edges), free(ets);
        free(ns), free(tau), free(b), free(s);
        bl_flyvis_destroy(f);
        return 0;
    }
    bl_flyvis_options o;
    bl_flyvis_options_default(f, &o);
    o.dt = atof(argv[5]);
    o.steps = (size_t)atol(argv[6]);
    o.edge_speed = atof(argv[7]);
    o.edge_start = atof(argv[8]);
    o.edge_on = atof(argv[9]);
    o.edge_off = atof(argv[10]);
    o.objective_type = atoi(argv[11]);
    const int grad = atoi(argv[12]), reps = atoi(argv[13]) > 0 ? atoi(argv[13]) : 1;
    double *tau = malloc(nt * sizeof *tau), *b = malloc(nt * sizeof *b), *s = malloc(ne * sizeof *s),
           *V = malloc((o.steps + 1) * n * sizeof *V), *gt = malloc(nt * sizeof *gt), *gb = malloc(nt * sizeof *gb),
           *gs = malloc(ne * sizeof *gs), J = 0;
    if (!tau || !b || !s || !V || !gt || !gb || !gs)
        return 1;
    slurp("tau.f64", tau, nt);
    slurp("bias.f64", b, nt);
    slurp("strength.f64", s, ne);
    double best = 1e300;
    for (int r = 0; r < reps; r++) {
        const double t0 = now();
        if (bl_flyvis_run(f, &o, tau, b, s, V, 0, NULL, NULL, &J, grad ? gt : NULL, grad ? gb : NULL,
                          grad ? gs : NULL, &e)) {
            fprintf(stderr, "flyvis_tool: %s\n", e.message);
            return 1;
        }
        const double t1 = now() - t0;
        best = t1 < best ? t1 : best;
    }
    spill("V.f64", V, (o.steps + 1) * n * sizeof *V);
    spill("J.f64", &J, sizeof J);
    if (grad) {
        spill("gtau.f64", gt, nt * sizeof *gt);
        spill("gbias.f64", gb, nt * sizeof *gb);
        spill("gstrength.f64", gs, ne * sizeof *gs);
    }
    if (reps > 1)
        printf("%.9f\n", best);
    free(tau), free(b), free(s), free(V), free(gt), free(gb), free(gs);
    bl_flyvis_destroy(f);
    return 0;
}
