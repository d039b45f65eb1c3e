/* brainlesslab: entry point and subcommand table. */
#include <stdio.h>
#include <string.h>

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
    {"bench", bl_cmd_bench, "measure backends and peers by the measurement contract; JSON receipt"},
    {"import", bl_cmd_import, "build a connectome directory from a shipped real data set"},
    {"synth", bl_cmd_synth, "generate a seeded synthetic connectome (FlyWire scale by default)"},
    {"inspect", bl_cmd_inspect, "load and validate a connectome directory, print its summary"},
    {"reservoir", bl_cmd_reservoir, "reservoir nodes: construct, replay a bundle with explicit tapes, bench cases"},
    {"simulate", bl_cmd_simulate, "run a connectome LIF model (low-level; arrays out)"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: brainlesslab <command> [options]   (brainlesslab <command> --help)\n\n"
                 "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
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

int bl_cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return 1;
    return 0;
}

int main(int argc, char **argv)
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
    fprintf(stderr, "brainlesslab: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
