/* brainlesslab compare A B --root DIR: the exact verdict, then per-neuron rate
 * differences, as a small sealed record of its own. */
#include <stdio.h>
#include <string.h>

#include "brainlesslab/experiment.h"
#include "cli.h"
#include "cli_record.h"

static const char usage_text[] =
    "usage: brainlesslab compare A B --root DIR [--quiet]\n"
    "A and B are records of connectome runs, or conditions of screen records written DIR@K.\n"
    "Both are verified first. Then: are the spikes identical, event for event (a SHA-256 over\n"
    "trial, step, neuron), and the counts and final state, byte for byte? Then for every\n"
    "neuron the per-trial rates of A and B: means, difference, Cohen's d, Welch's t test and\n"
    "Benjamini-Hochberg q. Written as a new sealed record under DIR: compare.json,\n"
    "rate_differences.csv. Exit status: 0 identical, 3 different, 1 error, 2 usage.\n";

int bl_cmd_compare(int argc, char **argv)
{
    if (bl_cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return 0;
    }
    const char *a = NULL, *b = NULL, *root = NULL;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quiet")) {
            quiet = 1;
        } else if (!strcmp(argv[i], "--root")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "brainlesslab compare: --root needs a directory\n%s", usage_text);
                return 2;
            }
            root = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            return bl_cli_unknown_option("compare", argv[i], usage_text);
        } else if (argv[i][0] == '-' || (a && b)) {
            fprintf(stderr, "brainlesslab compare: unexpected argument '%s'\n%s", argv[i], usage_text);
            return 2;
        } else if (!a) {
            a = argv[i];
        } else {
            b = argv[i];
        }
    }
    if (!a || !b || !root) {
        fprintf(stderr, "brainlesslab compare: A, B and --root are required\n%s", usage_text);
        return 2;
    }
    bl_error err = {0};
    bl_compare *x = NULL;
    if (bl_compare_records(a, b, root, &x, &err))
        return bl_cli_report("compare", &err);
    if (quiet)
        printf("%s\n", bl_compare_record_dir(x));
    else
        bl_compare_print(x, stdout);
    int same = bl_compare_identical(x);
    bl_compare_destroy(x);
    return same ? 0 : 3;
}
