/* brainlesslab import: build a connectome directory with one of the library's
 * importers (include/brainlesslab/import.h: the importer table). The options
 * are checked against the importer's row, the report (what was dropped and
 * why) goes to stderr, and one summary line to stdout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/import.h"
#include "cli.h"

/* The shipped data/<set> folder of the importers that read it (larva,
 * celegans), found without depending on the current directory: $BL_DATA_DIR,
 * then beside the executable (a build folder one level below the repository,
 * or an install's share/brainlesslab), else data/ under the current
 * directory as before. NULL for the other importers. BUF holds the result. */
static const char *default_data(const char *importer, char *buf, size_t size)
{
    const char *set_dir = !strcmp(importer, "larva")      ? BL_IMPORT_LARVA_NAME
                          : !strcmp(importer, "celegans") ? BL_IMPORT_CELEGANS_NAME
                                                          : NULL;
    if (!set_dir)
        return NULL;
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

/* Usage errors: one line, exit status 2. */
static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "brainlesslab import: %s%s%s (see brainlesslab import --help)\n", what, arg ? " " : "",
            arg ? arg : "");
    return 2;
}

static void print_options(FILE *f, const bl_importer *imp)
{
    for (const bl_import_option *o = imp->options; o && o->name; o++) {
        char head[64];
        snprintf(head, sizeof head, "%s%s%s", o->name, o->value ? " " : "", o->value ? o->value : "");
        fprintf(f, "    %-22s %s%s\n", head, o->required ? "(required) " : "", o->help);
    }
}

static void print_list(FILE *f, int verbose)
{
    for (size_t i = 0; i < bl_importer_count(); i++) {
        const bl_importer *imp = bl_importer_at(i);
        fprintf(f, "  %-14s %s\n", imp->name, imp->summary);
        if (verbose)
            print_options(f, imp);
    }
}

static void print_usage(void)
{
    fputs("usage: brainlesslab import KIND [options] --out OUTDIR\n"
          "       brainlesslab import --list          (the importers, one line each)\n"
          "       brainlesslab import KIND --help     (one importer's options)\n"
          "\n"
          "  --out DIR   connectome directory to write (must not exist, or be empty)\n"
          "\n"
          "importers:\n",
          stdout);
    print_list(stdout, 1);
}

static const bl_import_option *find_option(const bl_importer *imp, const char *name)
{
    for (const bl_import_option *o = imp->options; o && o->name; o++)
        if (!strcmp(o->name, name))
            return o;
    return NULL;
}

int bl_cmd_import(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--list")) {
        print_list(stdout, 0);
        return 0;
    }
    const bl_importer *imp = argc >= 2 && argv[1][0] != '-' ? bl_importer_find(argv[1]) : NULL;
    if (bl_cli_wants_help(argc, argv)) {
        if (imp) {
            printf("usage: brainlesslab import %s [options] --out OUTDIR\n  %s\n", imp->name, imp->summary);
            print_options(stdout, imp);
        } else {
            print_usage();
        }
        return 0;
    }
    if (argc < 2 || argv[1][0] == '-')
        return usage_error("no data set given", NULL);
    if (!imp) {
        char what[256];
        snprintf(what, sizeof what, "unknown importer '%.120s' (brainlesslab import --list names them; "
                 "e.g. larva or celegans)", argv[1]);
        return usage_error(what, NULL);
    }

    const char *out = NULL;
    int n = 0;
    const char **names = calloc((size_t)argc + 1, sizeof *names); /* + a default --data */
    const char **values = calloc((size_t)argc + 1, sizeof *values);
    if (!names || !values) {
        free(names);
        free(values);
        return usage_error("out of memory", NULL);
    }
    int rc = 0;
    for (int i = 2; i < argc && !rc; i++) {
        if (!strcmp(argv[i], "--out")) {
            if (out)
                rc = usage_error("option given twice:", argv[i]);
            else if (i + 1 >= argc)
                rc = usage_error("option needs a value:", argv[i]);
            else
                out = argv[++i];
            continue;
        }
        const bl_import_option *o = find_option(imp, argv[i]);
        if (!o) {
            rc = usage_error(argv[i][0] == '-' ? "unknown option for this importer:" : "unexpected argument",
                             argv[i]);
            break;
        }
        for (int k = 0; k < n; k++)
            if (!strcmp(names[k], o->name))
                rc = usage_error("option given twice:", argv[i]);
        if (rc)
            break;
        names[n] = o->name;
        if (o->value) {
            if (i + 1 >= argc) {
                rc = usage_error("option needs a value:", argv[i]);
                break;
            }
            values[n++] = argv[++i];
        } else {
            values[n++] = "";
        }
    }
    for (const bl_import_option *o = imp->options; !rc && o && o->name; o++) {
        int given = 0;
        for (int k = 0; k < n; k++)
            given |= !strcmp(names[k], o->name);
        if (o->required && !given) {
            char what[160];
            snprintf(what, sizeof what, "%s needs %s", imp->name, o->name);
            rc = usage_error(what, NULL);
        }
    }
    if (!rc && !out)
        rc = usage_error("--out is required", NULL);
    if (rc) {
        free(names);
        free(values);
        return rc;
    }

    /* larva and celegans read the shipped data/: resolved here, not against
     * the working directory, unless --data was given (issue 16, finding 14). */
    char found[8192];
    int has_data = 0;
    for (int k = 0; k < n; k++)
        has_data |= !strcmp(names[k], "--data");
    const char *data = has_data || !find_option(imp, "--data") ? NULL : default_data(imp->name, found, sizeof found);
    if (data) {
        names[n] = "--data";
        values[n++] = data;
    }
    bl_import_args args = {(size_t)n, names, values};
    bl_error err = {0};
    bl_connectome *c = NULL;
    char *report = NULL;
    bl_status st = imp->run(&args, &c, &report, &err);
    if (st == BL_OK)
        st = bl_connectome_save(c, out, &err);
    free(names);
    free(values);
    if (st != BL_OK) {
        free(report);
        bl_connectome_destroy(c);
        return bl_cli_report("import", &err);
    }
    if (report && *report) {
        size_t cap = 4 * strlen(report) + 8;
        char *shown = malloc(cap);
        fputs(shown ? bl_cli_shown(report, 1, shown, cap) : "(report: out of memory)\n", stderr);
        free(shown);
    }
    free(report);

    /* Sign counts by neuron (from the sign column) and by edge. */
    uint64_t nn = bl_connectome_n_neurons(c), e = bl_connectome_n_edges(c);
    uint64_t neg_neurons = 0, neg_edges = 0;
    int col = bl_connectome_column(c, "sign");
    for (uint64_t i = 0; col >= 0 && i < nn; i++)
        neg_neurons += !strcmp(bl_connectome_value(c, (size_t)col, i), "-1");
    const int32_t *counts = bl_connectome_counts(c);
    for (uint64_t k = 0; k < e; k++)
        neg_edges += counts[k] < 0;
    char name[1024];
    printf("imported %s: %llu neurons, %llu edges, %llu synapses; neurons +1 %llu, -1 %llu; "
           "edges +1 %llu, -1 %llu -> %s\n",
           bl_cli_shown(bl_connectome_info(c, "name"), 0, name, sizeof name), (unsigned long long)nn, (unsigned long long)e,
           (unsigned long long)bl_connectome_n_synapses(c), (unsigned long long)(nn - neg_neurons),
           (unsigned long long)neg_neurons, (unsigned long long)(e - neg_edges), (unsigned long long)neg_edges, out);
    bl_connectome_destroy(c);
    return 0;
}
