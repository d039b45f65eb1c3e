/* brainlesslab: entry point and subcommand table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/context.h"
#include "brainlesslab/mpi.h"

#include "cli.h"
#include "cli_bench.h"
#include "cli_plan.h"
#include "cli_record.h"
#include "cli_reservoir.h"

typedef struct command {
    const char *name;
    bl_cli_command_fn fn;
    const char *summary;
} command;

static const command commands[] = {
    {"check", bl_cmd_check, "resolve and validate a plan without running it; print its hash"},
    {"run", bl_cmd_run, "run a plan into a new sealed record"},
    {"verify", bl_cmd_verify, "re-hash a record and report tampering (--key PUB: check its signature)"},
    {"keygen", bl_cmd_keygen, "make an Ed25519 key pair for signing records (run --sign-key, verify --key)"},
    {"compare", bl_cmd_compare, "two records: exact verdict on spikes, then per-neuron rate differences"},
    {"plot", bl_cmd_plot, "draw a record's figures (PNG, SVG, plotted data) into a new derived record"},
    {"bench", bl_cmd_bench, "measure backends and peers by the measurement contract; JSON receipt"},
    {"fetch", bl_cmd_fetch, "download, verify and import a public data set (fetch --list names them)"},
    {"import", bl_cmd_import, "build a connectome directory from a data set (import --list names the importers)"},
    {"synth", bl_cmd_synth, "generate a seeded synthetic connectome (FlyWire scale by default)"},
    {"inspect", bl_cmd_inspect, "load and validate a connectome directory, print its summary"},
    {"reservoir", bl_cmd_reservoir, "reservoir nodes: construct, replay a bundle with explicit tapes, bench cases"},
    {"simulate", bl_cmd_simulate, "run a connectome LIF model (low-level; arrays out)"},
    {"model", bl_cmd_model, "models written as equations: list and show the shipped ones, check (compile, print), run (N neurons, generated C or the interpreter)"},
    {"ode", bl_cmd_ode, "ODE systems and SSA banks: bench-case (one timed worker of the bench's ODE/SSA families)"},
    {"flyvis", bl_cmd_flyvis, "the flyvis connectome application: bench-case (one timed benchmark worker)"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: brainlesslab <command> [options]   (brainlesslab <command> --help)\n\n"
                 "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

const char *bl_cli_shown(const char *s, int keep_newlines, char *buf, size_t cap)
{
    size_t o = 0;
    for (const char *p = s ? s : ""; *p && o + 5 < cap; p++) {
        unsigned char c = (unsigned char)*p;
        if ((c < 0x20 && !(keep_newlines && c == '\n')) || c == 0x7f)
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
        else
            buf[o++] = (char)c;
    }
    buf[o] = '\0';
    return buf;
}

int bl_cli_report(const char *cmd, const bl_error *err)
{
    /* Messages quote file contents and names: control bytes are escaped so
     * that none can break the line or drive the terminal. */
    char shown[sizeof err->message * 4];
    size_t o = 0;
    for (const char *p = err->message; *p && o + 5 < sizeof shown; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7f)
            o += (size_t)snprintf(shown + o, sizeof shown - o, "\\x%02x", c);
        else
            shown[o++] = (char)c;
    }
    shown[o] = '\0';
    fprintf(stderr, "brainlesslab %s: %s\n", cmd, o ? shown : "failed");
    return 1;
}

static void log_line(void *user, const char *line)
{
    fprintf(stderr, "brainlesslab %s: %s\n", (const char *)user, line);
    fflush(stderr);
}

/* Seconds of model time one trial simulates (bl_cli_progress_trial_seconds):
 * with it the line shows a percentage and an ETA within long trials. */
static double trial_seconds;

void bl_cli_progress_trial_seconds(double s) { trial_seconds = s; }

static void progress_line(void *user, uint32_t done, uint32_t total, double simulated_s, double wall_s)
{
    (void)user;
    double all = trial_seconds * total, speed = wall_s > 0 ? simulated_s / wall_s : 0.0;
    if (all > 0 && simulated_s > 0) {
        double frac = simulated_s / all, eta = speed > 0 ? (all - simulated_s) / speed : 0.0;
        fprintf(stderr, "\r  %5.1f%%  trials %u/%u, simulated %.1f of %.1f s, %.1fx real time, ETA %.0f s   %s",
                100.0 * (frac < 1 ? frac : 1), done, total, simulated_s, all, speed, eta > 0 ? eta : 0.0,
                done >= total ? "\n" : "");
    } else if (simulated_s > 0) {
        fprintf(stderr, "\r  trials %u/%u, simulated %.1f s, %.1fx real time   %s", done, total, simulated_s,
                speed, done >= total ? "\n" : "");
    } else { /* trials without model time (reservoir runs) */
        fprintf(stderr, "\r  trials %u/%u, %.1f s   %s", done, total, wall_s, done >= total ? "\n" : "");
    }
    fflush(stderr);
}

void bl_cli_context_setup(const char *cmd, int progress)
{
    bl_context_set_log(NULL, log_line, (void *)cmd);
    bl_context_set_progress(NULL, progress ? progress_line : NULL, NULL);
}

int bl_cli_abort_job(const char *cmd, const bl_error *err)
{
    char msg[sizeof err->message + 64];
    snprintf(msg, sizeof msg, "%s: %s", cmd, err->message);
    bl_error e = {0};
    bl_mpi_job_abort(NULL, msg, &e); /* returns only in a job of one process */
    return bl_cli_report(cmd, err);
}

int bl_cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return 1;
    return 0;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("brainlesslab %s\n", "0.1.0");
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    const char *names[sizeof commands / sizeof commands[0]], *near = NULL;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        names[i] = commands[i].name;
    if (bl_cli_suggest_name(argv[1], names, sizeof commands / sizeof commands[0], &near)) {
        fprintf(stderr, "brainlesslab: unknown command '%s' (did you mean '%s'?)\n", argv[1], near);
        return 2;
    }
    fprintf(stderr, "brainlesslab: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}

int main(int argc_in, char **argv_in)
{
    int argc = 0;
    char **argv = bl_cli_normalize(argc_in, argv_in, &argc);
    if (!argv) {
        fputs("brainlesslab: out of memory\n", stderr);
        return 1;
    }
    int rc = dispatch(argc, argv);
    free(argv);
    return rc;
}
