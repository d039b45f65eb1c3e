/* brainlesslab synth: write a seeded synthetic connectome directory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "brainlesslab/synth.h"
#include "cli.h"

static const char usage_text[] =
    "usage: brainlesslab synth --out DIR [--neurons N] [--mean-degree D] [--seed S]\n"
    "         [--count-alpha A] [--max-count C] [--excitatory-fraction F] [--sensory-fraction F]\n"
    "         [--degree-sigma S] [--in-sigma S]\n"
    "Defaults give FlyWire scale: 138,639 neurons, ~15.1M edges, counts 1..2,405 (mean ~3.6).\n";

static int num(const char *opt, const char *val, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(val, &end);
    if (errno || end == val || *end) {
        fprintf(stderr, "brainlesslab synth: %s '%s' is not a number\n", opt, val);
        return 0;
    }
    return 1;
}

int bl_cmd_synth(int argc, char **argv)
{
    if (bl_cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return 0;
    }
    bl_synth_params p;
    bl_synth_defaults(&p);
    const char *out = NULL;
    for (int i = 1; i < argc; i += 2) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        double x;
        if (!val) {
            fprintf(stderr, "brainlesslab synth: option %s needs a value\n%s", opt, usage_text);
            return 2;
        }
        if (!strcmp(opt, "--out")) { out = val; continue; }
        if (!num(opt, val, &x))
            return 2;
        if (!strcmp(opt, "--neurons")) p.n_neurons = x >= 0 && x < 1e12 ? (uint64_t)x : 0;
        else if (!strcmp(opt, "--mean-degree")) p.mean_out_degree = x;
        else if (!strcmp(opt, "--seed")) p.seed = x >= 0 ? (uint64_t)x : 0;
        else if (!strcmp(opt, "--count-alpha")) p.count_alpha = x;
        else if (!strcmp(opt, "--max-count")) p.max_count = x >= 1 && x < 1e9 ? (int32_t)x : 0;
        else if (!strcmp(opt, "--excitatory-fraction")) p.excitatory_fraction = x;
        else if (!strcmp(opt, "--sensory-fraction")) p.sensory_fraction = x;
        else if (!strcmp(opt, "--degree-sigma")) p.out_degree_sigma = x;
        else if (!strcmp(opt, "--in-sigma")) p.in_weight_sigma = x;
        else {
            return bl_cli_unknown_option("synth", opt, usage_text);
        }
    }
    if (!out) {
        fprintf(stderr, "brainlesslab synth: --out is required\n%s", usage_text);
        return 2;
    }
    bl_error err = {0};
    bl_connectome *c = NULL;
    struct timespec t0, t1, t2;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    bl_status st = bl_synth_generate(&p, &c, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!st)
        st = bl_connectome_save(c, out, &err);
    clock_gettime(CLOCK_MONOTONIC, &t2);
    if (!st)
        printf("synth: %llu neurons, %llu edges, %llu synapses (mean count %.3f); generated in %.2f s, "
               "written in %.2f s to %s\n",
               (unsigned long long)bl_connectome_n_neurons(c), (unsigned long long)bl_connectome_n_edges(c),
               (unsigned long long)bl_connectome_n_synapses(c),
               (double)bl_connectome_n_synapses(c) / (double)(bl_connectome_n_edges(c) ? bl_connectome_n_edges(c) : 1),
               (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec),
               (double)(t2.tv_sec - t1.tv_sec) + 1e-9 * (double)(t2.tv_nsec - t1.tv_nsec), out);
    bl_connectome_destroy(c);
    return st ? bl_cli_report("synth", &err) : 0;
}
