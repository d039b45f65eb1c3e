/* The watchdog (mpi_job.h): the signal handler only writes the signal number
 * to a pipe (async-signal-safe); a thread reads it and does the real work,
 * then lets the signal's default action end the process. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mpi/mpi_job.h"

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static int watch_pipe[2] = {-1, -1};
static void (*watch_fn)(void *, int);
static void *watch_arg;

static void watch_handler(int sig)
{
    unsigned char b = (unsigned char)sig;
    ssize_t k = write(watch_pipe[1], &b, 1);
    (void)k;
}

static void *watch_thread(void *unused)
{
    (void)unused;
    unsigned char b = 0;
    ssize_t k;
    do
        k = read(watch_pipe[0], &b, 1);
    while (k < 0 && errno == EINTR);
    if (k != 1)
        return NULL;
    pthread_mutex_lock(&watch_lock);
    if (watch_fn)
        watch_fn(watch_arg, (int)b);
    fflush(NULL);
    /* The process was asked to stop: do what the signal would have done. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction((int)b, &sa, NULL);
    kill(getpid(), (int)b);
    pthread_mutex_unlock(&watch_lock);
    return NULL;
}

bl_status bl_mpi_watchdog_start(void (*on_signal)(void *, int), void *arg, bl_error *err)
{
    pthread_mutex_lock(&watch_lock);
    watch_fn = on_signal;
    watch_arg = arg;
    int started = watch_pipe[0] >= 0;
    pthread_mutex_unlock(&watch_lock);
    if (started)
        return BL_OK;
    if (pipe(watch_pipe) != 0)
        return bl_fail(err, BL_ERR_IO, "mpi watchdog: pipe: %s", strerror(errno));
    pthread_t t;
    if (pthread_create(&t, NULL, watch_thread, NULL) != 0)
        return bl_fail(err, BL_ERR_IO, "mpi watchdog: cannot start its thread");
    pthread_detach(t);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = watch_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++)
        if (sigaction(sigs[k], &sa, NULL) != 0)
            return bl_fail(err, BL_ERR_IO, "mpi watchdog: sigaction(%d): %s", sigs[k], strerror(errno));
    return BL_OK;
}

void bl_mpi_watchdog_lock(void) { pthread_mutex_lock(&watch_lock); }
void bl_mpi_watchdog_unlock(void) { pthread_mutex_unlock(&watch_lock); }

void bl_mpi_watchdog_stop(void)
{
    pthread_mutex_lock(&watch_lock);
    watch_fn = NULL;
    watch_arg = NULL;
    pthread_mutex_unlock(&watch_lock);
}
