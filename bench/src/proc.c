/* Benchmark workers: every measurement is a fresh process, started here with
 * fork/exec in its own process group, bounded by a timeout that kills the whole
 * group (SIGTERM, then SIGKILL after a 10 s grace), and reaped with wait4 so
 * that its peak RSS (ru_maxrss, which covers the worker and the children it
 * reaped, e.g. Brian2's compiled binary or mpirun's ranks) is known. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_impl.h"

extern char **environ;

static double tv_s(struct timeval tv) { return (double)tv.tv_sec + 1e-6 * (double)tv.tv_usec; }

/* The inherited environment plus extras (an extra replaces a same-named entry). */
static char **build_env(const char *const *extra)
{
    size_t n_env = 0, n_extra = 0;
    while (environ && environ[n_env])
        n_env++;
    while (extra && extra[n_extra])
        n_extra++;
    char **env = calloc(n_env + n_extra + 1, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n_env; i++) {
        int replaced = 0;
        for (size_t j = 0; j < n_extra; j++) {
            const char *eq = strchr(extra[j], '=');
            size_t len = eq ? (size_t)(eq - extra[j]) + 1 : strlen(extra[j]);
            if (!strncmp(environ[i], extra[j], len))
                replaced = 1;
        }
        if (!replaced)
            env[k++] = environ[i];
    }
    for (size_t j = 0; j < n_extra; j++)
        env[k++] = (char *)extra[j];
    env[k] = NULL;
    return env;
}

bl_status bl_bench_spawn(char *const *argv, const char *const *env_extra, const char *log_path,
                         double timeout_s, bl_bench_proc *out, bl_error *err)
{
    memset(out, 0, sizeof *out);
    char **env = build_env(env_extra);
    if (!env)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate the environment of %s", argv[0]);
    int log_fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) {
        free(env);
        return bl_fail(err, BL_ERR_IO, "%s: cannot create worker log: %s", log_path, strerror(errno));
    }
    fflush(NULL);
    double t0 = bl_bench_now();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(log_fd);
        free(env);
        return bl_fail(err, BL_ERR_IO, "cannot fork a worker for %s: %s", argv[0], strerror(e));
    }
    if (pid == 0) {
        /* Child: only async-signal-safe calls until exec. */
        setpgid(0, 0);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) {
            dup2(nul, 0);
            close(nul);
        }
        dup2(log_fd, 1);
        dup2(log_fd, 2);
        execve(argv[0], argv, env);
        static const char msg[] = "bench worker: exec failed\n";
        ssize_t unused = write(2, msg, sizeof msg - 1);
        (void)unused;
        _exit(127);
    }
    setpgid(pid, pid); /* also from the parent, so the group exists before any kill */
    close(log_fd);
    free(env);

    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    double deadline = t0 + timeout_s;
    for (;;) {
        pid_t r = wait4(pid, &status, WNOHANG, &ru);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR) {
            int e = errno;
            kill(-pid, SIGKILL);
            return bl_fail(err, BL_ERR_INTERNAL, "wait4 on worker %s: %s", argv[0], strerror(e));
        }
        if (bl_bench_now() >= deadline) {
            /* SIGTERM first: mpirun puts its ranks in process groups of
             * their own and only kills them itself; SIGKILL after a grace. */
            kill(-pid, SIGTERM);
            double grace = bl_bench_now() + 10.0;
            while ((r = wait4(pid, &status, WNOHANG, &ru)) == 0 && bl_bench_now() < grace) {
                struct timespec nap = {0, 10000000}; /* 10 ms */
                nanosleep(&nap, NULL);
            }
            if (r != pid) {
                kill(-pid, SIGKILL);
                while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
                    ;
            }
            out->timed_out = 1;
            break;
        }
        struct timespec nap = {0, 1000000}; /* 1 ms */
        nanosleep(&nap, NULL);
    }
    out->wall_s = bl_bench_now() - t0;
    /* Anything the worker left behind in its group goes too. */
    kill(-pid, SIGKILL);
    if (WIFEXITED(status)) {
        out->exited = !out->timed_out;
        out->exit_status = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        out->term_signal = WTERMSIG(status);
    }
    out->user_s = tv_s(ru.ru_utime);
    out->sys_s = tv_s(ru.ru_stime);
    out->peak_rss_bytes = (long long)ru.ru_maxrss * 1024;
    return BL_OK;
}

void bl_bench_proc_describe(const bl_bench_proc *p, double timeout_s, char *buf, size_t size)
{
    if (p->timed_out)
        snprintf(buf, size, "killed at the %g s bound", timeout_s);
    else if (p->term_signal)
        snprintf(buf, size, "killed by signal %d", p->term_signal);
    else
        snprintf(buf, size, "exit status %d", p->exit_status);
}

void bl_bench_log_tail(const char *path, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
            line[--n] = '\0';
        if (n)
            snprintf(buf, size, "%s", line);
    }
    fclose(f);
}

void bl_bench_worker_failure(const bl_bench_proc *p, double timeout_s, const char *log, char *buf, size_t size)
{
    char how[128], tail[700];
    bl_bench_proc_describe(p, timeout_s, how, sizeof how);
    bl_bench_log_tail(log, tail, sizeof tail);
    snprintf(buf, size, "%s%s%s", how, tail[0] && !p->timed_out ? ": " : "", p->timed_out ? "" : tail);
}

/* ---- background load -------------------------------------------------------- */

/* The spinner: a multiply-add chain on one volatile word, forever. It never
 * returns; SIGKILL from bl_bench_load_stop (or the bench's death) ends it. */
static _Noreturn void spin_forever(void)
{
    volatile uint64_t x = 1;
    for (;;)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
}

bl_status bl_bench_load_start(bl_bench_load *l, int k, bl_error *err)
{
    memset(l, 0, sizeof *l);
    if (k < 0 || k > BL_BENCH_MAX_LOAD)
        return bl_fail(err, BL_ERR_INVALID, "--background-load %d: not in 0..%d", k, BL_BENCH_MAX_LOAD);
    l->t0 = bl_bench_now();
    pid_t parent = getpid();
    fflush(NULL);
    for (int i = 0; i < k; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            int e = errno;
            cJSON_Delete(bl_bench_load_stop(l));
            return bl_fail(err, BL_ERR_IO, "--background-load: cannot fork spinner %d of %d: %s", i + 1, k,
                           strerror(e));
        }
        if (pid == 0) {
            /* Die with the bench; if it is already gone, do not outlive it. */
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent)
                _exit(0);
            spin_forever();
        }
        l->pid[l->n++] = pid;
    }
    return BL_OK;
}

cJSON *bl_bench_load_stop(bl_bench_load *l)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "processes", l->n);
    cJSON *cpu = cJSON_AddArrayToObject(j, "cpu_s");
    for (int i = 0; i < l->n; i++) {
        kill(l->pid[i], SIGKILL);
        int status;
        struct rusage ru;
        memset(&ru, 0, sizeof ru);
        while (wait4(l->pid[i], &status, 0, &ru) < 0 && errno == EINTR)
            ;
        cJSON_AddItemToArray(cpu, cJSON_CreateNumber(tv_s(ru.ru_utime) + tv_s(ru.ru_stime)));
    }
    cJSON_AddNumberToObject(j, "wall_s", l->n ? bl_bench_now() - l->t0 : 0);
    l->n = 0;
    return j;
}
