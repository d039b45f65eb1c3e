/* Invariants that speak. A checker
 *
 *     int x_sane(const X *x, ..., bl_error *why)
 *
 * returns 1 when every invariant of x holds; otherwise 0, and when why is not
 * NULL it names the invariant that broke and where (the index, the values),
 * with status BL_ERR_INTERNAL: a broken invariant is a bug in BrainlessLab.
 * Checkers return through BL_BROKEN so that the message and the 0 go together.
 *
 * As SQLite does, the hot structures (CSR, active sets, delay rings, spike
 * windows, event streams) are asserted where they change, with BL_ASSERT_SANE:
 * in Debug builds (the sanitizer build) a broken invariant aborts with its
 * message; wherever NDEBUG is defined (CMake's Release and RelWithDebInfo) the
 * check, its arguments and its cost are compiled out entirely. */
#ifndef BL_CORE_INVARIANT_H
#define BL_CORE_INVARIANT_H

#include "brainlesslab/error.h"

/* Name the broken invariant (printf-style) and evaluate to 0. */
#define BL_BROKEN(why, ...) (bl_fail((why), BL_ERR_INTERNAL, __VA_ARGS__), 0)

#ifdef NDEBUG
#define BL_ASSERT_SANE(check, ...) ((void)0)
#else
#include <stdio.h>
#include <stdlib.h>

/* Print "FILE:LINE: invariant CHECK broken: MESSAGE" to stderr and abort, as
 * assert() would, only saying why: the library never prints, except here,
 * in a Debug build, about a bug. Inline, so that a file compiled alone (the
 * fuzz harnesses build some readers from their sources) needs nothing more. */
static inline void bl_invariant_abort(const char *check, const char *message, const char *file, int line)
{
    fprintf(stderr, "%s:%d: invariant %s broken: %s\n", file, line, check, message);
    fflush(stderr);
    abort();
}

#define BL_ASSERT_SANE(check, ...)                                                                              \
    do {                                                                                                        \
        bl_error bl_why_ = {BL_OK, ""};                                                                         \
        if (!check(__VA_ARGS__, &bl_why_))                                                                      \
            bl_invariant_abort(#check, bl_why_.message, __FILE__, __LINE__);                                    \
    } while (0)
#endif

#endif
