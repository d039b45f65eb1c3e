/* Plan subcommands of the brainlesslab command line (see cli.h for the
 * conventions: argv[0] is the subcommand, the result is the exit status). */
#ifndef BRAINLESSLAB_CLI_PLAN_H
#define BRAINLESSLAB_CLI_PLAN_H

/* brainlesslab check [--full] PLAN: resolve and validate a plan without
 * running it; print the resolved plan and its content hash. */
int bl_cmd_check(int argc, char **argv);

#endif
