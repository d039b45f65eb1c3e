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

int bl_cmd_plot(int argc, char **argv)
{
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
