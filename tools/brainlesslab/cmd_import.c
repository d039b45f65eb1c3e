/* brainlesslab import: build a connectome directory from a shipped real data
 * set (data/<set>/) with the set's built-in sign policy, optionally overridden
 * from a `key,sign` CSV file. Prints one summary line on success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/import.h"
#include "brainlesslab/sign_policy.h"
#include "cli.h"

static const char usage_text[] =
    "usage: brainlesslab import larva|celegans --out OUTDIR [--data DIR] [--sign-policy FILE.csv]\n"
    "\n"
    "  larva     Drosophila L1 larva, Winding et al. 2023 (default --data data/" BL_IMPORT_LARVA_NAME ")\n"
    "  celegans  C. elegans chemical network, Varshney et al. 2011 (default --data data/"
    BL_IMPORT_CELEGANS_NAME ")\n"
    "  --out DIR           connectome directory to write (must not exist, or be empty)\n"
    "  --data DIR          folder holding the set's CSV files (default: $BL_DATA_DIR/<set>, else the\n"
    "                      data/ shipped beside this executable: ../data or ../share/brainlesslab/data\n"
    "                      from its folder, else data/ in the current directory)\n"
    "  --sign-policy FILE  CSV with header key,sign applied over the built-in policy\n"
    "                      (keys: cell types for larva, transmitters for celegans;\n"
    "                      the keys 'default' and 'unknown' set those signs; see docs/sign-policy.md)\n";

/* Usage errors: one line, exit status 2. */
static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "brainlesslab import: %s%s%s (see brainlesslab import --help)\n", what,
            arg ? " " : "", arg ? arg : "");
    return 2;
}

/* The shipped data/<set> folder, found without depending on the current
 * directory: $BL_DATA_DIR, then beside the executable (a build folder one
 * level below the repository, or an install's share/brainlesslab), then
 * data/ under the current directory as a last resort. BUF holds the result. */
static const char *default_data(const char *set_dir, char *buf, size_t size)
{
    struct stat sb;
    const char *env = getenv("BL_DATA_DIR");
    if (env && *env) {
        snprintf(buf, size, "%s/%s", env, set_dir);
        return buf;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            const char *const rel[] = {"../data", "../share/brainlesslab/data", "data", "../../data"};
            for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
                snprintf(buf, size, "%s/%s/%s", exe, rel[i], set_dir);
                if (stat(buf, &sb) == 0 && S_ISDIR(sb.st_mode))
                    return buf;
            }
        }
    }
    snprintf(buf, size, "data/%s", set_dir);
    return buf;
}

int bl_cmd_import(int argc, char **argv)
{
    if (bl_cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return 0;
    }
    const char *set = NULL, *data = NULL, *out = NULL, *policy_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char **slot = NULL;
        if (!strcmp(argv[i], "--data"))
            slot = &data;
        else if (!strcmp(argv[i], "--out"))
            slot = &out;
        else if (!strcmp(argv[i], "--sign-policy"))
            slot = &policy_path;
        if (slot) {
            if (*slot)
                return usage_error("option given twice:", argv[i]);
            if (i + 1 >= argc)
                return usage_error("option needs a value:", argv[i]);
            *slot = argv[++i];
        } else if (argv[i][0] == '-' || set) {
            return usage_error("unexpected argument", argv[i]);
        } else {
            set = argv[i];
        }
    }
    int larva = set && !strcmp(set, "larva");
    int celegans = set && !strcmp(set, "celegans");
    if (!larva && !celegans)
        return usage_error(set ? "the data set must be larva or celegans, not" : "no data set given",
                           set);
    if (!out)
        return usage_error("--out is required", NULL);
    char found[8192];
    if (!data)
        data = default_data(larva ? BL_IMPORT_LARVA_NAME : BL_IMPORT_CELEGANS_NAME, found, sizeof found);

    bl_error err = {0};
    bl_sign_policy *policy = NULL;
    bl_connectome *c = NULL;
    bl_status st = larva ? bl_sign_policy_default_larva(&policy, &err)
                         : bl_sign_policy_default_celegans(&policy, &err);
    if (st == BL_OK && policy_path)
        st = bl_sign_policy_load_overrides(policy, policy_path, &err);
    if (st == BL_OK)
        st = larva ? bl_import_larva(data, policy, &c, &err)
                   : bl_import_celegans(data, policy, &c, &err);
    if (st == BL_OK)
        st = bl_connectome_save(c, out, &err);
    if (st != BL_OK) {
        bl_connectome_destroy(c);
        bl_sign_policy_destroy(policy);
        return bl_cli_report("import", &err);
    }

    /* Sign counts by neuron (from the sign column) and by edge. */
    uint64_t n = bl_connectome_n_neurons(c), e = bl_connectome_n_edges(c);
    uint64_t neg_neurons = 0, neg_edges = 0;
    int col = bl_connectome_column(c, "sign");
    for (uint64_t i = 0; col >= 0 && i < n; i++)
        neg_neurons += !strcmp(bl_connectome_value(c, (size_t)col, i), "-1");
    const int32_t *counts = bl_connectome_counts(c);
    for (uint64_t k = 0; k < e; k++)
        neg_edges += counts[k] < 0;
    printf("imported %s: %llu neurons, %llu edges, %llu synapses; neurons +1 %llu, -1 %llu; "
           "edges +1 %llu, -1 %llu -> %s\n",
           bl_connectome_info(c, "name"), (unsigned long long)n, (unsigned long long)e,
           (unsigned long long)bl_connectome_n_synapses(c), (unsigned long long)(n - neg_neurons),
           (unsigned long long)neg_neurons, (unsigned long long)(e - neg_edges),
           (unsigned long long)neg_edges, out);
    bl_connectome_destroy(c);
    bl_sign_policy_destroy(policy);
    return 0;
}
