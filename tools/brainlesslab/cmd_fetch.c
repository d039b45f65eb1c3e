/* brainlesslab fetch: download a public data set the importers read (the
 * fetch table, include/brainlesslab/fetch.h), verify it, print its licence,
 * and import it. Files go to --out DIR, else $XDG_CACHE_HOME/brainlesslab/NAME
 * (~/.cache/brainlesslab/NAME); the connectome to DIR/connectome.
 * --mirror URL or BL_FETCH_MIRROR replaces the published base URLs (the
 * files keep their names); BL_FETCH_MANIFEST names a JSON table that
 * replaces the built-in one (a private mirror's own files, or a test's). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "brainlesslab/fetch.h"
#include "cli.h"

static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "brainlesslab fetch: %s%s%s (see brainlesslab fetch --help)\n", what, arg ? " " : "",
            arg ? arg : "");
    return 2;
}

static void print_usage(void)
{
    fputs("usage: brainlesslab fetch NAME [options]   download, verify and import a public data set\n"
          "       brainlesslab fetch --list             the data sets, their files and sizes\n"
          "\n"
          "  --out DIR             where the files go (default $XDG_CACHE_HOME/brainlesslab/NAME,\n"
          "                        else ~/.cache/brainlesslab/NAME); the connectome goes to DIR/connectome\n"
          "  --mirror URL          fetch every file from URL/NAME instead of its published URL\n"
          "                        (also BL_FETCH_MIRROR); the checksums still apply\n"
          "  --no-import           download and verify only\n"
          "  --allow-unverified    fetch files whose publisher gives no checksum (their SHA-256 is printed)\n"
          "  --stall-timeout S     give up on a transfer slower than 1 byte/s for S seconds (default 60)\n"
          "  --max-redirects N     follow at most N redirects (default 5)\n"
          "\n"
          "A broken or stalled transfer keeps NAME.part and the next run continues it (HTTP Range);\n"
          "a file whose checksum does not match is removed. BL_FETCH_MANIFEST=FILE replaces the\n"
          "built-in table with a JSON one (docs/data.md).\n",
          stdout);
}

static const bl_fetch_set *set_at(const bl_fetch_table *t, size_t i)
{
    return t ? bl_fetch_table_at(t, i) : bl_fetch_set_at(i);
}

static size_t set_count(const bl_fetch_table *t) { return t ? bl_fetch_table_count(t) : bl_fetch_set_count(); }

static void human(uint64_t b, char *buf, size_t size)
{
    if (b >= 1000000000u)
        snprintf(buf, size, "%.2f GB", b / 1e9);
    else if (b >= 1000000u)
        snprintf(buf, size, "%.1f MB", b / 1e6);
    else if (b >= 1000u)
        snprintf(buf, size, "%.1f kB", b / 1e3);
    else
        snprintf(buf, size, "%" PRIu64 " B", b);
}

static void print_list(const bl_fetch_table *t)
{
    for (size_t i = 0; i < set_count(t); i++) {
        const bl_fetch_set *s = set_at(t, i);
        printf("  %-14s %s%s\n", s->name, s->summary, s->manual ? " (by hand: needs a login or unpacking)" : "");
        for (size_t k = 0; k < s->n_files; k++) {
            const bl_fetch_file *f = &s->files[k];
            char sz[32];
            human(f->size ? f->size : f->max_size, sz, sizeof sz);
            printf("      %-52s %s%s, %s\n", f->name, f->size ? "" : "at most ", sz, bl_fetch_digest_name(f->digest));
        }
    }
}

/* The progress bar: on a terminal only, at most ten updates a second. */
typedef struct bar {
    int tty;
    struct timespec last, start;
} bar;

static double since(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void on_progress(void *user, const char *name, uint64_t done, uint64_t total, uint64_t resumed_from)
{
    bar *b = user;
    if (!b->tty)
        return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (since(&b->last, &now) < 0.1 && (!total || done < total))
        return;
    b->last = now;
    double el = since(&b->start, &now), rate = el > 0 ? (double)(done - resumed_from) / el : 0;
    char d[32], r[32];
    human(done, d, sizeof d);
    human((uint64_t)rate, r, sizeof r);
    if (total) {
        char tt[32], fill[31];
        human(total, tt, sizeof tt);
        int w = (int)(30.0 * (double)done / (double)total);
        for (int i = 0; i < 30; i++)
            fill[i] = i < w ? '#' : ' ';
        fill[30] = '\0';
        fprintf(stderr, "\r  %-.40s [%s] %5.1f%%  %s of %s  %s/s   ", name, fill, 100.0 * (double)done / (double)total, d,
                tt, r);
    } else {
        fprintf(stderr, "\r  %-.40s %s  %s/s   ", name, d, r);
    }
    fflush(stderr);
}

static int mkdirs(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int dir_nonempty(const char *path)
{
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/manifest.json", path);
    struct stat sb;
    return stat(probe, &sb) == 0;
}

/* Run the set's importer on the fetched files, through `brainlesslab import`. */
static int run_import(const bl_fetch_set *s, const char *dir)
{
    char out[4200];
    snprintf(out, sizeof out, "%s/connectome", dir);
    if (dir_nonempty(out)) {
        printf("already imported: %s (remove it to import again)\n", out);
        return 0;
    }
    size_t n = 2 + 2 * s->n_import + 2;
    char **argv = calloc(n + 1, sizeof *argv);
    char **paths = calloc(s->n_import + 1, sizeof *paths);
    int rc = 1;
    if (!argv || !paths) {
        fprintf(stderr, "brainlesslab fetch: out of memory\n");
        goto done;
    }
    size_t a = 0;
    argv[a++] = "import";
    argv[a++] = (char *)s->importer;
    for (size_t k = 0; k < s->n_import; k++) {
        argv[a++] = (char *)s->import[k].option;
        if (s->import[k].file) {
            size_t len = strlen(dir) + strlen(s->import[k].file) + 2;
            if (!(paths[k] = malloc(len))) {
                fprintf(stderr, "brainlesslab fetch: out of memory\n");
                goto done;
            }
            snprintf(paths[k], len, "%s/%s", dir, s->import[k].file);
            argv[a++] = paths[k];
        } else {
            argv[a++] = (char *)s->import[k].value;
        }
    }
    argv[a++] = "--out";
    argv[a++] = out;
    printf("importing: brainlesslab");
    for (size_t k = 0; k < a; k++)
        printf(" %s", argv[k]);
    printf("\n");
    fflush(stdout);
    rc = bl_cmd_import((int)a, argv);
done:
    for (size_t k = 0; paths && k < s->n_import; k++)
        free(paths[k]);
    free(paths);
    free(argv);
    return rc;
}

static int parse_long(const char *opt, const char *text, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi) {
        char what[160];
        snprintf(what, sizeof what, "%s needs a whole number in %ld..%ld, not", opt, lo, hi);
        return usage_error(what, text);
    }
    *out = v;
    return 0;
}

int bl_cmd_fetch(int argc, char **argv)
{
    if (bl_cli_wants_help(argc, argv)) {
        print_usage();
        return 0;
    }
    bl_fetch_table *table = NULL;
    const char *manifest = getenv("BL_FETCH_MANIFEST");
    if (manifest && *manifest) {
        bl_error err = {0};
        if (bl_fetch_table_load(manifest, &table, &err) != BL_OK)
            return bl_cli_report("fetch", &err);
    }
    int rc = 0;
    const char *name = NULL, *out = NULL, *mirror = getenv("BL_FETCH_MIRROR");
    int list = 0, no_import = 0;
    bl_fetch_options opt = {0};
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i];
        int has_value = !strcmp(a, "--out") || !strcmp(a, "--mirror") || !strcmp(a, "--stall-timeout") ||
                        !strcmp(a, "--max-redirects");
        int seen = 0;
        for (int j = 1; j < i && has_value; j++)
            seen |= !strcmp(argv[j], a);
        if (has_value && i + 1 >= argc) {
            rc = usage_error("option needs a value:", a);
        } else if (seen) {
            rc = usage_error("option given twice:", a);
        } else if (!strcmp(a, "--list")) {
            list = 1;
        } else if (!strcmp(a, "--out")) {
            out = argv[++i];
        } else if (!strcmp(a, "--mirror")) {
            mirror = argv[++i];
        } else if (!strcmp(a, "--no-import")) {
            no_import = 1;
        } else if (!strcmp(a, "--allow-unverified")) {
            opt.allow_unverified = 1;
        } else if (!strcmp(a, "--stall-timeout")) {
            rc = parse_long(a, argv[++i], 1, 86400, &opt.stall_timeout_s);
        } else if (!strcmp(a, "--max-redirects")) {
            long v = 0;
            rc = parse_long(a, argv[++i], 0, 50, &v);
            opt.max_redirects = v ? v : -1;
        } else if (a[0] == '-') {
            rc = usage_error("unknown option:", a);
        } else if (name) {
            rc = usage_error("one data set at a time; unexpected", a);
        } else {
            name = a;
        }
    }
    if (!rc && list) {
        print_list(table);
        bl_fetch_table_destroy(table);
        return 0;
    }
    if (!rc && !name)
        rc = usage_error("no data set given (brainlesslab fetch --list names them)", NULL);
    const bl_fetch_set *s = rc ? NULL : table ? bl_fetch_table_find(table, name) : bl_fetch_set_find(name);
    if (!rc && !s) {
        char what[1024] = "";
        size_t o = (size_t)snprintf(what, sizeof what, "unknown data set '%.100s' (known:", name);
        for (size_t i = 0; i < set_count(table) && o < sizeof what; i++)
            o += (size_t)snprintf(what + o, sizeof what - o, " %s", set_at(table, i)->name);
        if (o < sizeof what)
            snprintf(what + o, sizeof what - o, ")");
        rc = usage_error(what, NULL);
    }
    if (rc) {
        bl_fetch_table_destroy(table);
        return rc;
    }
    printf("%s: %s\nlicence: %s\n", s->name, s->summary, s->licence);
    if (s->manual) {
        fprintf(stderr, "brainlesslab fetch: %s: %s\n", s->name, s->manual);
        bl_fetch_table_destroy(table);
        return 1;
    }

    char dir[4096];
    if (out) {
        snprintf(dir, sizeof dir, "%s", out);
    } else {
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        if (xdg && xdg[0] == '/') /* the XDG spec: a relative value is ignored */
            snprintf(dir, sizeof dir, "%s/brainlesslab/%s", xdg, s->name);
        else if (home && *home)
            snprintf(dir, sizeof dir, "%s/.cache/brainlesslab/%s", home, s->name);
        else {
            bl_fetch_table_destroy(table);
            return usage_error("neither XDG_CACHE_HOME nor HOME is set: give --out DIR", NULL);
        }
    }
    if (mkdirs(dir) != 0) {
        fprintf(stderr, "brainlesslab fetch: %s: cannot create: %s\n", dir, strerror(errno));
        bl_fetch_table_destroy(table);
        return 1;
    }
    bar b = {.tty = isatty(STDERR_FILENO)};
    opt.mirror = mirror && *mirror ? mirror : NULL;
    opt.progress = on_progress;
    opt.progress_user = &b;
    for (size_t k = 0; k < s->n_files && !rc; k++) {
        const bl_fetch_file *f = &s->files[k];
        char url[4096], sz[32];
        human(f->size ? f->size : f->max_size, sz, sizeof sz);
        printf("%s: %s%s from %s\n", f->name, f->size ? "" : "at most ", sz, bl_fetch_file_url(f, &opt, url, sizeof url));
        fflush(stdout);
        clock_gettime(CLOCK_MONOTONIC, &b.start);
        b.last = (struct timespec){0};
        bl_fetch_result res;
        bl_error err = {0};
        bl_status st = bl_fetch_file_get(f, dir, &opt, &res, &err);
        if (b.tty)
            fputs("\n", stderr);
        if (st != BL_OK) {
            rc = bl_cli_report("fetch", &err);
            break;
        }
        int unpub = f->digest == BL_FETCH_UNPUBLISHED;
        char how[96];
        snprintf(how, sizeof how, "%s", unpub ? "size checked, UNVERIFIED: no checksum is published, pin this SHA-256"
                                              : bl_fetch_digest_name(f->digest));
        const char *verb = unpub ? "" : "verified ";
        if (res.already_present)
            printf("  already there, %s(%s): %" PRIu64 " bytes, sha256 %s\n", verb, how, res.bytes, res.sha256);
        else if (res.resumed_from)
            printf("  resumed at byte %" PRIu64 ", %s(%s): %" PRIu64 " bytes, sha256 %s\n", res.resumed_from, verb, how,
                   res.bytes, res.sha256);
        else
            printf("  downloaded, %s(%s): %" PRIu64 " bytes, sha256 %s\n", verb, how, res.bytes, res.sha256);
        fflush(stdout);
    }
    if (!rc) {
        printf("files in %s\n", dir);
        if (!no_import)
            rc = run_import(s, dir);
    }
    bl_fetch_table_destroy(table);
    return rc;
}
