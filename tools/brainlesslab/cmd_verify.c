/* brainlesslab verify: re-hash a sealed record and report every difference
 * from its manifest and checksums (changed, removed or added files, an edited
 * manifest, symlinks, paths escaping the record, unsealed or FAILED records). */
#include <stdio.h>
#include <string.h>

#include "brainlesslab/record.h"
#include "cli.h"
#include "cli_record.h"

int bl_cmd_verify(int argc, char **argv)
{
    int help = bl_cli_wants_help(argc, argv);
    if (help || argc != 2 || argv[1][0] == '-') {
        fputs("usage: brainlesslab verify RECORD_DIR\n"
              "Re-hashes every artifact of a sealed record against manifest.json and\n"
              "checksums.sha256; prints one line per problem (changed, removed or added\n"
              "files, edited manifest, symlinks, unsafe paths, unsealed or FAILED record).\n"
              "Exit status: 0 verified, 1 problems found, 2 usage error.\n",
              help ? stdout : stderr);
        return help ? 0 : 2;
    }
    bl_error err = {0};
    size_t n = 0;
    if (bl_record_verify(argv[1], stdout, &n, &err))
        return bl_cli_report("verify", &err);
    printf("OK %s: %zu artifact%s verified\n", argv[1], n, n == 1 ? "" : "s");
    return 0;
}
