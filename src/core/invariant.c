/* The assert of an invariant checker (core/invariant.h). The library never
 * prints, except here: a broken invariant in a Debug build is a bug, and the
 * process is about to abort, as assert() would, only saying why. */
#include "core/invariant.h"

#include <stdio.h>
#include <stdlib.h>

void bl_invariant_abort(const char *check, const char *message, const char *file, int line)
{
    fprintf(stderr, "%s:%d: invariant %s broken: %s\n", file, line, check, message);
    fflush(stderr);
    abort();
}
