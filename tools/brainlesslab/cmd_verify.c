/* brainlesslab verify: re-hash a sealed record and report every difference
 * from its manifest and checksums (changed, removed or added files, an edited
 * manifest, symlinks, paths escaping the record, unsealed or FAILED records),
 * and with --key check its Ed25519 signature. brainlesslab keygen makes the
 * key pair. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/record.h"
#include "cli.h"
#include "cli_record.h"

static const char verify_usage[] =
    "usage: brainlesslab verify [--key PUBLIC.pem] RECORD_DIR\n"
    "Re-hashes every artifact of a sealed record against manifest.json and\n"
    "checksums.sha256; prints one line per problem (changed, removed or added\n"
    "files, edited manifest, symlinks, hard links, empty directories, unsafe paths,\n"
    "a record renamed or missing an artifact its plan promised, unsealed or FAILED).\n"
    "  --key PUB  require a SIGNATURE made by this Ed25519 public key (brainlesslab keygen);\n"
    "             without it an unsigned record detects accidents and careless edits,\n"
    "             not a forger who rewrites artifacts, manifest and checksums together.\n"
    "Exit status: 0 verified, 1 problems found, 2 usage error.\n";

/* The directory as printed: control bytes and non-ASCII escaped. */
static void shown_path(char *out, size_t size, const char *s)
{
    size_t o = 0;
    for (; *s && o + 5 < size; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c < 0x7f)
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
    }
    out[o] = '\0';
}

int bl_cmd_verify(int argc, char **argv)
{
    int help = bl_cli_wants_help(argc, argv);
    const char *dir = NULL, *key = NULL;
    int bad = help;
    for (int i = 1; i < argc && !bad; i++) {
        if (!strcmp(argv[i], "--key") && i + 1 < argc)
            key = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1] == '-' && strcmp(argv[i], "--key"))
            return bl_cli_unknown_option("verify", argv[i], verify_usage);
        else if (argv[i][0] == '-' || dir)
            bad = 1;
        else
            dir = argv[i];
    }
    if (bad || !dir) {
        fputs(verify_usage, help ? stdout : stderr);
        return help ? 0 : 2;
    }
    bl_error err = {0};
    size_t n = 0;
    bl_verify_options opt = {.public_key = key};
    if (bl_record_verify_with(dir, &opt, stdout, &n, &err))
        return bl_cli_report("verify", &err);
    char shown[4096 * 4 + 1];
    shown_path(shown, sizeof shown, dir);
    printf("OK %s: %zu artifact%s verified%s\n", shown, n, n == 1 ? "" : "s",
           key ? ", signature valid for the given key" : "");
    return 0;
}

int bl_cmd_keygen(int argc, char **argv)
{
    int help = bl_cli_wants_help(argc, argv);
    if (help || argc != 3 || strcmp(argv[1], "--out")) {
        fputs("usage: brainlesslab keygen --out PREFIX\n"
              "Writes a new Ed25519 key pair: PREFIX.key (private, PEM, mode 0600) for\n"
              "`run --sign-key PREFIX.key`, and PREFIX.pub (public, PEM) for `verify --key`.\n"
              "Existing files are never overwritten.\n",
              help ? stdout : stderr);
        return help ? 0 : 2;
    }
    size_t len = strlen(argv[2]) + 5;
    char *priv = malloc(len), *pub = malloc(len);
    if (!priv || !pub) {
        free(priv);
        free(pub);
        fprintf(stderr, "brainlesslab keygen: out of memory\n");
        return 1;
    }
    snprintf(priv, len, "%s.key", argv[2]);
    snprintf(pub, len, "%s.pub", argv[2]);
    bl_error err = {0};
    int rc = 0;
    if (bl_record_keygen(priv, pub, &err))
        rc = bl_cli_report("keygen", &err);
    else
        printf("private key: %s\npublic key:  %s\n", priv, pub);
    free(priv);
    free(pub);
    return rc;
}
