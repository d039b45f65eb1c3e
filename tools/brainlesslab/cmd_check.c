/* brainlesslab check: resolve and validate a plan without running it, print
 * the resolved plan and its content hash. Two plans with the same hash
 * describe the same run, so the hash is what a reviewer compares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/plan.h"
#include "cli.h"
#include "cli_plan.h"

static const char usage_text[] =
    "usage: brainlesslab check [--full] [--force] PLAN\n"
    "Resolve and validate a plan (TOML) without running it: load its connectome, resolve\n"
    "every population to neuron indices, fill in defaults, then print the resolved plan\n"
    "as JSON and \"plan hash: <sha256>\", the SHA-256 of its canonical form.\n"
    "  --full   list every neuron of every population (default: count and first few)\n"
    "  --force  accept a plan whose estimate exceeds this machine's memory (run needs --force too)\n"
    "It also prints an estimate of the memory, disk and time the run will take; whatever\n"
    "`run` would refuse, check refuses.\n"
    "Exit status: 0 valid, 1 invalid (one line on stderr naming file, key and value), 2 usage.\n";

int bl_cmd_check(int argc, char **argv)
{
    if (bl_cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return 0;
    }
    const char *path = NULL;
    int full = 0, force = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--full")) {
            full = 1;
        } else if (!strcmp(argv[i], "--force")) {
            force = 1;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "brainlesslab check: unknown option '%s'\n%s", argv[i], usage_text);
            return 2;
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
    if (bl_plan_connectome(plan)) {
        bl_plan_estimate_t e;
        char line[256];
        bl_plan_estimate(plan, &e);
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
    bl_plan_destroy(plan);
    return fflush(stdout) == 0 ? 0 : 1;
}
