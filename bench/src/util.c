/* Small file and time helpers of the benchmark. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_impl.h"

double bl_bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void bl_bench_utc(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int bl_bench_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

bl_status bl_bench_mkdirs(const char *path, bl_error *err)
{
    char buf[PATH_MAX];
    if (strlen(path) >= sizeof buf)
        return bl_fail(err, BL_ERR_INVALID, "%.64s...: path too long", path);
    strcpy(buf, path);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return bl_fail(err, BL_ERR_IO, "%s: cannot create directory: %s", buf, strerror(errno));
            *p = c;
            if (c == '\0')
                break;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return bl_fail(err, BL_ERR_IO, "%s: not a directory", path);
    return BL_OK;
}

bl_status bl_bench_rmtree(const char *path, bl_error *err)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? BL_OK : bl_fail(err, BL_ERR_IO, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (!d)
            return bl_fail(err, BL_ERR_IO, "%s: cannot open directory: %s", path, strerror(errno));
        struct dirent *e;
        bl_status rc = BL_OK;
        while (!rc && (e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char child[PATH_MAX];
            if ((size_t)snprintf(child, sizeof child, "%s/%s", path, e->d_name) >= sizeof child)
                rc = bl_fail(err, BL_ERR_INVALID, "%s/%s: path too long", path, e->d_name);
            else
                rc = bl_bench_rmtree(child, err);
        }
        closedir(d);
        if (rc)
            return rc;
        if (rmdir(path) != 0)
            return bl_fail(err, BL_ERR_IO, "%s: cannot remove directory: %s", path, strerror(errno));
        return BL_OK;
    }
    if (unlink(path) != 0)
        return bl_fail(err, BL_ERR_IO, "%s: cannot remove: %s", path, strerror(errno));
    return BL_OK;
}

bl_status bl_bench_read_text(const char *path, char **out, bl_error *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return bl_fail(err, BL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n + 1 < cap)
            break;
        if (cap > ((size_t)1 << 30)) {
            free(buf);
            fclose(f);
            return bl_fail(err, BL_ERR_INVALID, "%s: larger than 1 GiB", path);
        }
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf)
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate", path);
    if (bad) {
        free(buf);
        return bl_fail(err, BL_ERR_IO, "%s: read error", path);
    }
    buf[n] = '\0';
    *out = buf;
    return BL_OK;
}

/* ---- statistics ---------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bl_bench_median(const double *x, size_t n)
{
    if (n == 0)
        return NAN;
    double *s = malloc(n * sizeof *s);
    if (!s)
        return NAN;
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    double m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

cJSON *bl_bench_stat_json(const double *x, size_t n)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(o, "samples");
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(x[i]));
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    cJSON_AddNumberToObject(o, "n", (double)n);
    if (n) {
        cJSON_AddNumberToObject(o, "median", bl_bench_median(x, n));
        cJSON_AddNumberToObject(o, "min", lo);
        cJSON_AddNumberToObject(o, "max", hi);
    } else {
        cJSON_AddNullToObject(o, "median");
        cJSON_AddNullToObject(o, "min");
        cJSON_AddNullToObject(o, "max");
    }
    return o;
}

/* Is id one of the comma-separated list (NULL or empty: everything)? */
int bl_bench_listed(const char *list, const char *id)
{
    if (!list || !list[0])
        return 1;
    size_t n = strlen(id);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, id, n))
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}
