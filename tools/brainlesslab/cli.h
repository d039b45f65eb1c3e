/* The brainlesslab command line: main.c dispatches to one function per
 * subcommand, each in its own file. Commands parse arguments, call the library
 * and print; they hold no model logic. */
#ifndef BRAINLESSLAB_CLI_H
#define BRAINLESSLAB_CLI_H

#include <stddef.h>

#include "brainlesslab/error.h"

typedef int (*bl_cli_command_fn)(int argc, char **argv);

/* Each returns a process exit status: 0 success, 1 failure (message printed),
 * 2 usage error. argv[0] is the subcommand name. */
int bl_cmd_import(int argc, char **argv);
int bl_cmd_fetch(int argc, char **argv);
int bl_cmd_synth(int argc, char **argv);
int bl_cmd_simulate(int argc, char **argv);
int bl_cmd_inspect(int argc, char **argv);
int bl_cmd_run(int argc, char **argv);
int bl_cmd_model(int argc, char **argv);
/* brainlesslab flyvis bench-case: the flyvis benchmark worker (cmd_flyvis.c). */
int bl_cmd_flyvis(int argc, char **argv);
int bl_cmd_ode(int argc, char **argv);

/* Print "brainlesslab <command>: <message>" on stderr, one line; returns 1. */
int bl_cli_report(const char *command, const bl_error *err);
/* Text from files (imported names, metadata values, reports) as printed:
 * control bytes (ESC above all) become \xNN, so that no data can drive the
 * terminal; newlines are kept when keep_newlines. Returns buf (cap >= 8). */
const char *bl_cli_shown(const char *s, int keep_newlines, char *buf, size_t cap);
/* True when argv[i] is -h or --help. */
int bl_cli_wants_help(int argc, char **argv);
/* The CLI runs in the library's default context: its log lines go to stderr
 * as "brainlesslab <command>: <line>"; with progress, finished waves of
 * trials update one line on stderr. */
void bl_cli_context_setup(const char *command, int progress);
/* The model time of one trial, so that progress lines show a percentage and
 * an ETA within long trials (0: unknown). */
void bl_cli_progress_trial_seconds(double seconds);
/* An error this rank alone has, in an MPI job of several ranks: end the job
 * (does not return there); in one process just report it. Returns 1. */
int bl_cli_abort_job(const char *command, const bl_error *err);

/* GNU conventions (cli_args.c). bl_cli_normalize rewrites argv once, in
 * main(): --opt=value becomes --opt value, and after "--" an operand that
 * starts with '-' is passed as "./-name". Returns one malloc'd block (the
 * caller frees it once) or NULL when out of memory. */
char **bl_cli_normalize(int argc, char **argv, int *out_argc);
/* The option of `usage` (a command's help text) nearest to the mistyped
 * `arg`, within two edits; 1 when one was found (copied into out). */
int bl_cli_suggest_option(const char *arg, const char *usage, char *out, size_t size);
/* The nearest of names[0..n) to arg, within two edits. */
int bl_cli_suggest_name(const char *arg, const char *const *names, size_t n, const char **out);
/* "brainlesslab CMD: unknown option 'ARG' (did you mean --X?)" on stderr;
 * returns 2, the usage-error exit status. */
int bl_cli_unknown_option(const char *command, const char *arg, const char *usage);

#endif
