/* brainlesslab check: resolve and validate a plan without running it, print
 * the resolved plan and its content hash. Two plans with the same hash
 * describe the same run, so the hash is what a reviewer compares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/plan.h"
#include "cli.h"
#include "cli_plan.h"

static const char usage_text[] =
    "usage: brainlesslab check [--full] [--by COLUMN] [--force] PLAN\n"
    "Resolve and validate a plan (TOML) without running it: load its connectome, resolve\n"
    "every population to neuron indices, fill in defaults, then print the resolved plan\n"
    "as JSON and \"plan hash: <sha256>\", the SHA-256 of its canonical form.\n"
    "Then each population ([[population]], [[stimulus]], [[silence]]): its size and its\n"
    "breakdown by one metadata column (values by count, largest first).\n"
    "It also prints an estimate of the memory, disk and time the run will take; whatever\n"
    "`run` would refuse, check refuses.\n"
    "  --full         list every neuron of every population (default: count and first few)\n"
    "  --by COLUMN    the breakdown column (default: cell_type when the connectome has it)\n"
    "  --force        accept a plan whose estimate exceeds this machine's memory (run needs --force too)\n"
    "Exit status: 0 valid, 1 invalid (one line on stderr naming file, key and value), 2 usage.\n";

typedef struct tally {
    const char *value;
    size_t n;
} tally;

static int cmp_tally(const void *a, const void *b)
{
    const tally *x = a, *y = b;
    if (x->n != y->n)
        return x->n < y->n ? 1 : -1;
    return strcmp(x->value, y->value);
}

static int cmp_value(const void *a, const void *b)
{
    return strcmp(((const tally *)a)->value, ((const tally *)b)->value);
}

/* "  KIND NAME: N neurons; COLUMN: v1 12, v2 3, ..." (at most 12 values shown). */
static void print_breakdown(const bl_connectome *c, int col, const char *kind, const bl_plan_population *p)
{
    char shown[1024];
    printf("  %-10s %-24s %8zu neurons", kind, bl_cli_shown(p->name, 0, shown, sizeof shown), p->n_neurons);
    if (col < 0) {
        putchar('\n');
        return;
    }
    tally *t = malloc(p->n_neurons * sizeof *t);
    if (!t) {
        putchar('\n');
        return;
    }
    for (size_t i = 0; i < p->n_neurons; i++)
        t[i] = (tally){bl_connectome_value(c, (size_t)col, (uint64_t)p->neurons[i]), 1};
    qsort(t, p->n_neurons, sizeof *t, cmp_value);
    size_t u = 0;
    for (size_t i = 0; i < p->n_neurons; i++)
        if (u && !strcmp(t[u - 1].value, t[i].value))
            t[u - 1].n++;
        else
            t[u++] = t[i];
    qsort(t, u, sizeof *t, cmp_tally);
    /* Metadata values come from imported files: escaped (issue 26). */
    printf("; %s:", bl_cli_shown(bl_connectome_column_name(c, (size_t)col), 0, shown, sizeof shown));
    for (size_t i = 0; i < u && i < 12; i++)
        printf("%s %s %zu", i ? "," : "", t[i].value[0] ? bl_cli_shown(t[i].value, 0, shown, sizeof shown) : "(empty)",
               t[i].n);
    if (u > 12)
        printf(", ... (%zu values)", u);
    putchar('\n');
    free(t);
}

int bl_cmd_check(int argc, char **argv)
{
    if (bl_cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return 0;
    }
    const char *path = NULL, *by = NULL;
    int full = 0, force = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--full")) {
            full = 1;
        } else if (!strcmp(argv[i], "--force")) {
            force = 1;
        } else if (!strcmp(argv[i], "--by")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "brainlesslab check: --by needs a column name\n%s", usage_text);
                return 2;
            }
            by = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return bl_cli_unknown_option("check", argv[i], usage_text);
        } else if (path) {
            fprintf(stderr, "brainlesslab check: one plan at a time ('%s' and '%s' given)\n%s", path,
                    argv[i], usage_text);
            return 2;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        fprintf(stderr, "brainlesslab check: a plan file is required\n%s", usage_text);
        return 2;
    }
    bl_error err = {0};
    bl_plan *plan = NULL;
    if (bl_plan_load(path, &plan, &err))
        return bl_cli_report("check", &err);
    char *text = bl_plan_render(plan, full);
    if (!text) {
        bl_plan_destroy(plan);
        fprintf(stderr, "brainlesslab check: out of memory rendering the plan\n");
        return 1;
    }
    printf("%s\nplan hash: %s\n", text, bl_plan_hash(plan));
    bl_plan_estimate_t e;
    if (bl_plan_estimate(plan, &e)) { /* the operation's own estimate, when it gives one */
        char line[256];
        bl_plan_estimate_text(&e, line, sizeof line);
        printf("estimate: %s\n", line);
        if (!force && bl_plan_fits_machine(plan, NULL, &err)) {
            free(text);
            bl_plan_destroy(plan);
            fflush(stdout);
            return bl_cli_report("check", &err);
        }
    }
    free(text);
    const bl_connectome *c = bl_plan_connectome(plan);
    if (c) {
        int col = bl_connectome_column(c, by ? by : "cell_type");
        if (by && col < 0) {
            fprintf(stderr, "brainlesslab check: --by %s: the connectome has no such metadata column\n", by);
            bl_plan_destroy(plan);
            return 1;
        }
        size_t nn = bl_plan_n_named_populations(plan), ns = bl_plan_n_populations(plan),
               nz = bl_plan_n_silences(plan);
        if (nn + ns + nz)
            printf("populations:\n");
        for (size_t i = 0; i < nn; i++)
            print_breakdown(c, col, "population", bl_plan_named_population_at(plan, i));
        for (size_t i = 0; i < ns; i++)
            print_breakdown(c, col, "stimulus", bl_plan_population_at(plan, i));
        for (size_t i = 0; i < nz; i++)
            print_breakdown(c, col, "silence", bl_plan_silence_at(plan, i));
    }
    bl_plan_destroy(plan);
    return fflush(stdout) == 0 ? 0 : 1;
}
