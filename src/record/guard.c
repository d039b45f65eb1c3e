/* Signals end a run as a FAILED record naming the signal, not as a record
 * left reserved forever.
 *
 * A signal handler may do almost nothing (async-signal-safe calls only), so
 * it writes the signal number to a pipe; a thread waiting on the pipe takes
 * the record lock, marks the record FAILED (a full, ordinary bl_record_fail)
 * and ends the process by the same signal with its default action, so the
 * exit status still says what happened. bl_record_seal and bl_record_fail
 * take the same lock, so the thread never fails a record that is being
 * sealed: it waits, then finds the record no longer open. */
#include "brainlesslab/record.h"

#include "record/record_impl.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t record_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t guard_mutex = PTHREAD_MUTEX_INITIALIZER; /* guarded */
static bl_record *guarded;
static int guard_pipe[2] = {-1, -1};
static const int guard_signals[] = {SIGINT, SIGTERM, SIGHUP};

void bl_record_lock(void) { pthread_mutex_lock(&record_mutex); }
void bl_record_unlock(void) { pthread_mutex_unlock(&record_mutex); }

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    ssize_t k = write(guard_pipe[1], &b, 1);
    (void)k;
    errno = saved;
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
    }
}

static void *guard_thread(void *unused)
{
    (void)unused;
    for (;;) {
        unsigned char b = 0;
        ssize_t k = read(guard_pipe[0], &b, 1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k != 1)
            return NULL;
        int sig = b;
        pthread_mutex_lock(&guard_mutex);
        bl_record *r = guarded;
        guarded = NULL;
        if (r) {
            char msg[160];
            snprintf(msg, sizeof msg, "stopped by signal %s (%d) before the record was sealed",
                     signal_name(sig), sig);
            bl_error e;
            bl_error_clear(&e);
            bl_record_fail(r, msg, &e); /* a record already sealed stays as it is */
        }
        /* End the process as the signal would have: default action, re-raised. */
        signal(sig, SIG_DFL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        kill(getpid(), sig);
        pause();
    }
}

bl_status bl_record_guard_signals(bl_record *r, bl_error *err)
{
    pthread_mutex_lock(&guard_mutex);
    if (guard_pipe[0] < 0) {
        if (pipe(guard_pipe) != 0) {
            pthread_mutex_unlock(&guard_mutex);
            return bl_fail(err, BL_ERR_IO, "signal guard: pipe: %s", strerror(errno));
        }
        pthread_t t;
        if (pthread_create(&t, NULL, guard_thread, NULL) != 0) {
            close(guard_pipe[0]);
            close(guard_pipe[1]);
            guard_pipe[0] = guard_pipe[1] = -1;
            pthread_mutex_unlock(&guard_mutex);
            return bl_fail(err, BL_ERR_IO, "signal guard: cannot start its thread");
        }
        pthread_detach(t);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        for (size_t k = 0; k < sizeof guard_signals / sizeof *guard_signals; k++)
            if (sigaction(guard_signals[k], &sa, NULL) != 0) {
                pthread_mutex_unlock(&guard_mutex);
                return bl_fail(err, BL_ERR_IO, "signal guard: sigaction(%d): %s", guard_signals[k],
                               strerror(errno));
            }
    }
    guarded = r;
    pthread_mutex_unlock(&guard_mutex);
    return BL_OK;
}

void bl_record_guard_forget(const bl_record *r)
{
    pthread_mutex_lock(&guard_mutex);
    if (guarded == r)
        guarded = NULL;
    pthread_mutex_unlock(&guard_mutex);
}
