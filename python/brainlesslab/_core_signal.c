/* Signals while the library runs with the GIL released (issue 26).
 *
 * Python's own handlers only set a flag that the interpreter looks at when
 * it runs bytecode, which it does not while the library runs; and SIGTERM
 * and SIGHUP have no Python handler at all by default, so they ended the
 * process at once, leaving a reserved record behind (.RESERVED forever).
 *
 * While a run is in flight we install, for the signals asked for, a C
 * handler that only notes the signal in an atomic flag and then calls the
 * handler that was there before (Python's, which trips its own flag; a
 * plain C handler likewise). The run's context asks bl_py_signal_cancel
 * (a load of the flag, from any thread, without the GIL) once per delay
 * window and between waves, so the run stops within about a window: the
 * library fails the record ("cancelled ...") the ordinary way. When the run
 * is over the previous handlers are put back and the noted signal is
 * answered as the session would have answered it (bl_py_signal_end):
 * a Python handler (KeyboardInterrupt for SIGINT) runs at the next
 * PyErr_CheckSignals; a default action (SIGTERM, SIGHUP) is taken by
 * re-raising the signal, so the process still ends by it, now with a FAILED
 * record. An ignored signal is left ignored (no handler is installed).
 *
 * Begin and end are called with the GIL held, which serialises them; runs
 * in several Python threads share one installation (a count per signal), and
 * a signal stops all of them. */
#include "_core.h"

#include <signal.h>
#include <string.h>

enum { N_WATCHED = 3 };
static const int watched[N_WATCHED] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction saved[N_WATCHED];
static int depth[N_WATCHED];
static int active; /* runs in flight */
static volatile sig_atomic_t pending; /* the first signal noted, 0: none */

static int index_of(int sig)
{
    for (int k = 0; k < N_WATCHED; k++)
        if (watched[k] == sig)
            return k;
    return -1;
}

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
    if (!pending)
        pending = sig;
    int k = index_of(sig);
    if (k < 0)
        return;
    /* Chain to the handler we displaced (async-signal-safe: Python's only
     * sets its flag and writes to its wakeup fd). */
    const struct sigaction *old = &saved[k];
    if (old->sa_flags & SA_SIGINFO) {
        if (old->sa_sigaction)
            old->sa_sigaction(sig, info, uctx);
    } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
    }
}

int bl_py_signal_cancel(void *unused)
{
    (void)unused;
    return pending != 0;
}

void bl_py_signal_begin(int mask)
{
    for (int k = 0; k < N_WATCHED; k++) {
        if (!(mask & (1 << k)))
            continue;
        if (depth[k]++ > 0)
            continue;
        struct sigaction now;
        if (sigaction(watched[k], NULL, &now) != 0 || (!(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_IGN)) {
            /* Ignored (nohup, a daemon): stays ignored; nothing to restore. */
            memset(&saved[k], 0, sizeof saved[k]);
            saved[k].sa_handler = SIG_IGN;
            continue;
        }
        saved[k] = now;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigaction(watched[k], &sa, NULL);
    }
    active++;
}

int bl_py_signal_end(int mask)
{
    int sig = pending;
    /* Answered below: the next run (or a check outside begin/end, such as the
     * auto backend's trial runs) starts with nothing noted. */
    if (--active == 0)
        pending = 0;
    for (int k = 0; k < N_WATCHED; k++) {
        if (!(mask & (1 << k)) || --depth[k] > 0)
            continue;
        int ignored = !(saved[k].sa_flags & SA_SIGINFO) && saved[k].sa_handler == SIG_IGN;
        if (!ignored)
            sigaction(watched[k], &saved[k], NULL);
    }
    if (!sig)
        return 0;
    /* The handler now in place answers it: a default action ends the process
     * here (the record is already FAILED); Python's handler tripped its flag
     * when the signal came, and runs at the caller's PyErr_CheckSignals. */
    int k = index_of(sig);
    if (k >= 0 && depth[k] == 0) {
        struct sigaction now;
        if (sigaction(sig, NULL, &now) == 0 && !(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_DFL)
            raise(sig);
    }
    return sig;
}

const char *bl_py_signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}
