/* The brainlesslab command line: main.c dispatches to one function per
 * subcommand, each in its own file. Commands parse arguments, call the library
 * and print; they hold no model logic. */
#ifndef BRAINLESSLAB_CLI_H
#define BRAINLESSLAB_CLI_H

#include "brainlesslab/error.h"

typedef int (*bl_cli_command_fn)(int argc, char **argv);

/* Each returns a process exit status: 0 success, 1 failure (message printed),
 * 2 usage error. argv[0] is the subcommand name. */
int bl_cmd_import(int argc, char **argv);
int bl_cmd_synth(int argc, char **argv);
int bl_cmd_simulate(int argc, char **argv);
int bl_cmd_inspect(int argc, char **argv);
int bl_cmd_run(int argc, char **argv);

/* Print "brainlesslab <command>: <message>" on stderr, one line; returns 1. */
int bl_cli_report(const char *command, const bl_error *err);
/* True when argv[i] is -h or --help. */
int bl_cli_wants_help(int argc, char **argv);

#endif
