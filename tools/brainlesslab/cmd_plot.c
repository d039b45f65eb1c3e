/* brainlesslab plot RECORD [--root DIR] [--figure NAME]...: figures of a
 * record, drawn by the Python package (matplotlib) into a new sealed derived
 * record. This command only finds the package and execs
 *     /usr/bin/python3 -m brainlesslab.plot ARGS...
 * with PYTHONPATH naming it: <dir of this binary>/python in a build tree, or
 * <dir of this binary>/../BL_PYTHON_RELDIR once installed (any prefix, so an
 * unpacked .deb works where it lies). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#ifndef BL_PYTHON_RELDIR
#define BL_PYTHON_RELDIR "lib/python3/dist-packages"
#endif
#define BL_PYTHON "/usr/bin/python3"

static int is_package(const char *dir)
{
    char init[PATH_MAX + 64];
    snprintf(init, sizeof init, "%s/brainlesslab/__init__.py", dir);
    return access(init, R_OK) == 0;
}

/* The package directory beside this executable, or "" when none is found. */
static void find_package(char *out, size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    out[0] = '\0';
    if (n <= 0)
        return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return;
    *slash = '\0';
    char cand[PATH_MAX + 64];
    snprintf(cand, sizeof cand, "%s/python", exe);
    if (is_package(cand)) {
        snprintf(out, size, "%s", cand);
        return;
    }
    snprintf(cand, sizeof cand, "%s/../%s", exe, BL_PYTHON_RELDIR);
    if (is_package(cand))
        snprintf(out, size, "%s", cand);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: brainlesslab plot RECORD [--root DIR] [--figure NAME]... [--trials LIST]\n\n"
            "Draw a record's figures into a new sealed derived record (the source is never\n"
            "modified; the new manifest names it by the SHA-256 of its manifest.json).\n"
            "Each figure is saved as NAME.png, NAME.svg and NAME.data.npz (the plotted data).\n\n"
            "  RECORD          a sealed (DONE) record directory\n"
            "  --root DIR      where the derived record is created (default: beside RECORD)\n"
            "  --figure NAME   only this figure (repeatable): raster, rates_by_depth, psth,\n"
            "                  hierarchy (audit records), reservoir and probe (reservoir records),\n"
            "                  screen (screen records), compare (compare records); default: every\n"
            "                  figure the record has the inputs for; one it has none for is refused\n"
            "  --trials LIST   raster: the trials to draw, e.g. 0,5,9 (default: the first 3)\n\n"
            "Runs %s -m brainlesslab.plot (python3-matplotlib, python3-h5py); the same\n"
            "functions are in Python: brainlesslab.plot.plot_record(RECORD, root=DIR).\n",
            BL_PYTHON);
}

int bl_cmd_plot(int argc, char **argv)
{
    /* Help is answered here, so it works without Python (the man page is built from it). */
    if (bl_cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    char pkg[PATH_MAX + 64];
    find_package(pkg, sizeof pkg);
    if (pkg[0]) {
        const char *old = getenv("PYTHONPATH");
        size_t len = strlen(pkg) + (old ? strlen(old) + 1 : 0) + 1;
        char *path = malloc(len);
        if (!path) {
            fprintf(stderr, "brainlesslab plot: out of memory\n");
            return 1;
        }
        snprintf(path, len, "%s%s%s", pkg, old && *old ? ":" : "", old && *old ? old : "");
        setenv("PYTHONPATH", path, 1);
        free(path);
    }
    /* argv[0] is "plot"; the module parses the rest (and --help). */
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!args) {
        fprintf(stderr, "brainlesslab plot: out of memory\n");
        return 1;
    }
    args[0] = BL_PYTHON;
    args[1] = "-m";
    args[2] = "brainlesslab.plot";
    for (int i = 1; i < argc; i++)
        args[i + 2] = argv[i];
    fflush(NULL);
    execv(BL_PYTHON, args);
    fprintf(stderr, "brainlesslab plot: cannot run %s: %s\n", BL_PYTHON, strerror(errno));
    free(args);
    return 1;
}
