/* Reservoir subcommands of the brainlesslab command line (cli.h conventions:
 * argv[0] is the subcommand, the result is the exit status). */
#ifndef BRAINLESSLAB_CLI_RESERVOIR_H
#define BRAINLESSLAB_CLI_RESERVOIR_H

/* brainlesslab reservoir construct|replay|bench-case ...: build a seeded node
 * into a bundle, replay a bundle with explicit tapes (per-frame arrays out),
 * time one benchmark case (JSON out). */
int bl_cmd_reservoir(int argc, char **argv);
/* brainlesslab reservoir task ...: one traced trial of a task (cmd_task.c). */
int bl_cmd_reservoir_task(int argc, char **argv);

#endif
