/* brainlesslab inspect: load (and so fully validate) a connectome directory
 * and print what it holds. Exit 1 with one line naming the fault otherwise. */
#include <stdio.h>
#include <stdlib.h>

#include "brainlesslab/connectome.h"
#include "cli.h"

int bl_cmd_inspect(int argc, char **argv)
{
    if (bl_cli_wants_help(argc, argv) || argc != 2) {
        fputs("usage: brainlesslab inspect CONNECTOME_DIR\n"
              "Validates every file (hashes, .npy headers, CSR graph, neuron table) and prints a summary.\n",
              argc == 2 ? stdout : stderr);
        return argc == 2 ? 0 : 2;
    }
    bl_error err = {0};
    bl_connectome *c;
    if (bl_connectome_load(argv[1], &c, &err))
        return bl_cli_report("inspect", &err);
    uint64_t n = bl_connectome_n_neurons(c), e = bl_connectome_n_edges(c);
    const int32_t *counts = bl_connectome_counts(c);
    uint64_t neg = 0;
    for (uint64_t k = 0; k < e; k++)
        neg += counts[k] < 0;
    const char *name = bl_connectome_info(c, "name");
    printf("connectome %s%s\n", name ? name : "(unnamed)", bl_connectome_synthetic(c) ? " [SYNTHETIC]" : "");
    printf("  neurons   %llu\n  edges     %llu (%llu inhibitory)\n  synapses  %llu\n",
           (unsigned long long)n, (unsigned long long)e, (unsigned long long)neg,
           (unsigned long long)bl_connectome_n_synapses(c));
    printf("  columns   index, external_id");
    for (size_t j = 0; j < bl_connectome_n_columns(c); j++)
        printf(", %s", bl_connectome_column_name(c, j));
    printf("\n");
    const char *keys[] = {"source", "citation", "licence", "sign_policy", "generator"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        const char *v = bl_connectome_info(c, keys[k]);
        if (v)
            printf("  %-11s %s\n", keys[k], v);
    }
    bl_connectome_destroy(c);
    return 0;
}
