/* brainlesslab model: models written as equations (include/brainlesslab/eqmodel.h).
 *   model check FILE.toml   parse, check dimensions, print the compiled blocks
 *   model run FILE.toml     N independent neurons (generated C or the interpreter); spikes and
 *                           final state as .npy
 *   model list              the shipped models (models/NAME.toml) and their aliases
 *   model show NAME         a shipped model's text
 * FILE may also name a shipped model (`model check shiu2024`). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "brainlesslab/eqmodel.h"
#include "brainlesslab/npy.h"
#include "cli.h"

#define MAX_SET 256

static const char usage_text[] =
    "usage: brainlesslab model list\n"
    "       brainlesslab model show NAME\n"
    "       brainlesslab model check FILE.toml [--dt MS] [--set NAME=QUANTITY]...\n"
    "       brainlesslab model run FILE.toml --duration MS --out DIR [--dt MS] [--n N]\n"
    "                  [--set NAME=QUANTITY]... [--init NAME=FILE.npy]... [--input-every STEPS]\n"
    "                  [--noise FILE.npy] [--exec auto|interp|jit]\n"
    "FILE.toml holds a [model] table: method (linear, euler, heun, rk2, rk4, exponential_euler),\n"
    "equations (Brian2 syntax: dv/dt = ... : volt (unless refractory), x = ... : unit, p : unit),\n"
    "threshold, reset, refractory, on_pre (or on_pre_by with a table [model.on_pre]), on_pre_exc,\n"
    "on_pre_inh, on_post, synapses, on_input,\n"
    "weight, [model.parameters]\n"
    "(\"-52 mV\", 250) and [model.init] (starting values). --dt is in ms (default 0.1).\n"
    "check prints the state variables, every constant (value and bits) and the instructions.\n"
    "run simulates N independent neurons (default 1) for --duration ms (see --exec) and\n"
    "writes DIR/spikes_i.npy (int32 neuron), DIR/spikes_t.npy (float64 s, the step's t) and\n"
    "DIR/<variable>.npy (float64 final state). --set overrides a parameter (DC input: a\n"
    "per-neuron parameter I : amp set to \"1 nA\"); --init NAME=FILE.npy gives one starting\n"
    "value per neuron (float64, N values); --input-every K runs on_input on every neuron at\n"
    "every K-th step, before the update. --noise gives the standard normal draws of xi\n"
    "(float64, shape (steps, N), or (steps, N, K) for xi_1..xi_K): one per neuron per step,\n"
    "as a schedule both this run and another simulator can read.\n"
    "--exec chooses how the blocks run: jit (C generated from the compiled blocks, built\n"
    "by the system C compiler -- BL_CC, else cc -- and cached in $BL_CACHE_DIR, else\n"
    "$XDG_CACHE_HOME/brainlesslab, else ~/.cache/brainlesslab; fails without a compiler),\n"
    "interp (the interpreter), auto (default: jit when a compiler works and BL_EQ_JIT is\n"
    "not 0, else the interpreter). Both compute the same bits. run prints which ran;\n"
    "check prints whether code generation is available.\n"
    "list prints the models this build ships (share/brainlesslab/models/NAME.toml) and which are\n"
    "preset aliases (`[model] preset = \"NAME\"` runs that preset's hand-written kernel, proven\n"
    "byte-identical to the file); show prints one's text. Where FILE is a shipped model's name\n"
    "and no such file exists, check and run read the shipped text.\n";

typedef struct opts {
    const char *file, *out, *noise;
    bl_eq_exec exec;
    double dt_ms, duration_ms;
    unsigned long n, input_every;
    size_t n_set, n_init;
    const char *set_names[MAX_SET], *set_values[MAX_SET];
    const char *init_names[MAX_SET], *init_files[MAX_SET];
    char *owned[2 * MAX_SET];
    size_t n_owned;
} opts;

static int number(const char *s, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return !errno && end != s && !*end;
}

static int split(opts *o, const char *arg, const char **name, const char **value)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return 0;
    char *n = strndup(arg, (size_t)(eq - arg));
    if (!n)
        return 0;
    o->owned[o->n_owned++] = n;
    *name = n;
    *value = eq + 1;
    return 1;
}

/* Returns NULL, or what is wrong with the command line (one line). */
static const char *parse(int argc, char **argv, int run, opts *o, char *why, size_t size)
{
    memset(o, 0, sizeof *o);
    o->dt_ms = 0.1;
    o->n = 1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        double v;
        if (a[0] != '-') {
            if (o->file) {
                snprintf(why, size, "one model file only ('%.200s' and '%.200s')", o->file, a);
                return why;
            }
            o->file = a;
            continue;
        }
        int known = !strcmp(a, "--dt") || !strcmp(a, "--set") ||
                    (run && (!strcmp(a, "--duration") || !strcmp(a, "--out") || !strcmp(a, "--n") ||
                             !strcmp(a, "--input-every") || !strcmp(a, "--init") || !strcmp(a, "--noise") ||
                             !strcmp(a, "--exec")));
        if (!known) {
            snprintf(why, size, "unknown option %.200s", a);
            return why;
        }
        if (!has) {
            snprintf(why, size, "option needs a value: %s", a);
            return why;
        }
        const char *val = argv[++i];
        int ok = 1;
        if (!strcmp(a, "--dt"))
            ok = number(val, &o->dt_ms) && o->dt_ms > 0;
        else if (!strcmp(a, "--duration"))
            ok = number(val, &o->duration_ms) && o->duration_ms >= 0;
        else if (!strcmp(a, "--out"))
            o->out = val;
        else if (!strcmp(a, "--noise"))
            o->noise = val;
        else if (!strcmp(a, "--exec")) {
            ok = !strcmp(val, "auto") || !strcmp(val, "interp") || !strcmp(val, "jit");
            o->exec = !strcmp(val, "interp") ? BL_EQ_EXEC_INTERP : !strcmp(val, "jit") ? BL_EQ_EXEC_JIT : BL_EQ_EXEC_AUTO;
        }
        else if (!strcmp(a, "--n")) {
            ok = number(val, &v) && v >= 1 && v <= (1 << 24) && v == (unsigned long)v;
            o->n = ok ? (unsigned long)v : 1;
        } else if (!strcmp(a, "--input-every")) {
            ok = number(val, &v) && v >= 1 && v <= 1e12 && v == (unsigned long)v;
            o->input_every = ok ? (unsigned long)v : 0;
        } else if (!strcmp(a, "--set")) {
            ok = o->n_set < MAX_SET && split(o, val, &o->set_names[o->n_set], &o->set_values[o->n_set]);
            o->n_set += ok;
        } else {
            ok = o->n_init < MAX_SET && split(o, val, &o->init_names[o->n_init], &o->init_files[o->n_init]);
            o->n_init += ok;
        }
        if (!ok) {
            snprintf(why, size, "bad value for %s: '%.200s'", a, val);
            return why;
        }
    }
    if (!o->file) {
        snprintf(why, size, "no model file given");
        return why;
    }
    if (run && !o->out) {
        snprintf(why, size, "model run needs --out DIR");
        return why;
    }
    return NULL;
}

static void free_opts(opts *o)
{
    for (size_t k = 0; k < o->n_owned; k++)
        free(o->owned[k]);
}

static int fail(opts *o, bl_eq_model *m, bl_eq_pop *p, const bl_error *err)
{
    bl_eq_pop_destroy(p);
    bl_eq_model_destroy(m);
    free_opts(o);
    return bl_cli_report("model", err);
}

/* The draws of a --noise schedule: [step][neuron][k]. */
typedef struct noise {
    const double *x;
    uint64_t steps;
    uint32_t n, k;
} noise;

static double noise_draw(void *user, uint32_t neuron, uint64_t step, uint32_t k)
{
    const noise *z = user;
    /* bl_eq_pop_step runs only steps the schedule holds (checked before the run) */
    return z->x[(step * z->n + neuron) * z->k + (k < z->k ? k : 0)];
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int run(opts *o, bl_eq_model *m)
{
    bl_error err = {0};
    bl_eq_pop *p = NULL;
    uint32_t n = (uint32_t)o->n;
    bl_npy_array za = {0};
    noise z = {0};
    if (bl_eq_model_uses_noise(m) && !o->noise) {
        bl_fail(&err, BL_ERR_INVALID, "%s: the model draws noise (xi): give its draws with --noise FILE.npy", o->file);
        return fail(o, m, p, &err);
    }
    if (bl_eq_model_codegen(m, o->exec, &err) || bl_eq_pop_create(m, n, &p, &err))
        return fail(o, m, p, &err);
    /* a warning (an explicit method unstable at this dt) does not stop the run */
    if (bl_eq_model_warnings(m))
        fprintf(stderr, "brainlesslab model run: warning: %s\n", bl_eq_model_warnings(m));
    for (size_t k = 0; k < o->n_init; k++) {
        double *x = bl_eq_pop_var(p, o->init_names[k]);
        bl_npy_array a;
        if (!x) {
            bl_fail(&err, BL_ERR_INVALID, "--init: '%s' is not a state variable of %s", o->init_names[k], o->file);
            return fail(o, m, p, &err);
        }
        if (bl_npy_read_expect(o->init_files[k], BL_DTYPE_FLOAT64, 1, &a, &err))
            return fail(o, m, p, &err);
        if (a.count != n) {
            bl_fail(&err, BL_ERR_INVALID, "%s: %llu values for %u neurons", o->init_files[k], (unsigned long long)a.count, n);
            bl_npy_free(&a);
            return fail(o, m, p, &err);
        }
        memcpy(x, a.data, n * sizeof *x);
        bl_npy_free(&a);
    }
    /* Steps as Brian2 counts them: round(duration / dt). */
    double steps_d = o->duration_ms / o->dt_ms;
    uint64_t steps = (uint64_t)(steps_d + 0.5);
    if (steps_d > 1e12) {
        bl_fail(&err, BL_ERR_INVALID, "--duration: %g ms is more than 1e12 steps", o->duration_ms);
        return fail(o, m, p, &err);
    }
    uint32_t *spiked = malloc(n * sizeof *spiked);
    size_t cap = 1024, ns = 0;
    int32_t *si = malloc(cap * sizeof *si);
    double *st = malloc(cap * sizeof *st);
    if (!spiked || !si || !st) {
        free(spiked);
        free(si);
        free(st);
        bl_fail(&err, BL_ERR_NOMEM, "out of memory");
        return fail(o, m, p, &err);
    }
    double dt = bl_eq_model_dt(m);
    int status = 0;
    if (o->noise && bl_npy_read(o->noise, &za, &err) == BL_OK) {
        if (za.dtype != BL_DTYPE_FLOAT64 || za.ndim < 2 || za.ndim > 3 || za.shape[1] != n ||
            (za.ndim == 3 && (za.shape[2] == 0 || za.shape[2] > 64))) {
            bl_fail(&err, BL_ERR_INVALID, "%s: float64 of shape (steps, %u) or (steps, %u, K) expected", o->noise, n, n);
            status = 1;
        } else {
            z.x = za.data;
            z.steps = za.shape[0];
            z.n = n;
            z.k = za.ndim == 3 ? (uint32_t)za.shape[2] : 1;
            bl_eq_pop_set_noise(p, noise_draw, &z);
        }
    } else if (o->noise) {
        status = 1;
    }
    if (!status && o->noise && z.steps < steps) {
        bl_fail(&err, BL_ERR_INVALID, "%s: holds %llu steps of draws, the run needs %llu", o->noise,
                (unsigned long long)z.steps, (unsigned long long)steps);
        status = 1;
    }
    double w0 = wall_s(), c0 = (double)clock() / CLOCKS_PER_SEC;
    for (uint64_t s = 0; s < steps && !status; s++) {
        if (o->input_every && s % o->input_every == 0)
            for (uint32_t i = 0; i < n && !status; i++)
                status = bl_eq_pop_input(p, i, &err) != BL_OK;
        uint32_t k;
        if (status || (status = bl_eq_pop_step(p, spiked, &k, &err) != BL_OK))
            break;
        if (ns + k > cap) {
            while (ns + k > cap)
                cap *= 2;
            int32_t *si2 = realloc(si, cap * sizeof *si);
            if (si2)
                si = si2;
            double *st2 = realloc(st, cap * sizeof *st);
            if (st2)
                st = st2;
            if (!si2 || !st2) {
                bl_fail(&err, BL_ERR_NOMEM, "out of memory for %zu spikes", ns + k);
                status = 1;
                break;
            }
        }
        for (uint32_t j = 0; j < k; j++) {
            si[ns] = (int32_t)spiked[j];
            st[ns++] = (double)s * dt;
        }
    }
    double w1 = wall_s(), c1 = (double)clock() / CLOCKS_PER_SEC;
    char path[4096];
    if (!status && mkdir(o->out, 0777) != 0 && errno != EEXIST) {
        bl_fail(&err, BL_ERR_IO, "%s: cannot create: %s", o->out, strerror(errno));
        status = 1;
    }
    uint64_t shape = ns;
    if (!status) {
        snprintf(path, sizeof path, "%s/spikes_i.npy", o->out);
        status = bl_npy_write(path, BL_DTYPE_INT32, 1, &shape, si, &err) != BL_OK;
    }
    if (!status) {
        snprintf(path, sizeof path, "%s/spikes_t.npy", o->out);
        status = bl_npy_write(path, BL_DTYPE_FLOAT64, 1, &shape, st, &err) != BL_OK;
    }
    shape = n;
    for (size_t v = 0; !status && v < bl_eq_model_n_vars(m); v++) {
        const char *name = bl_eq_model_var_name(m, v);
        snprintf(path, sizeof path, "%s/%s.npy", o->out, name);
        status = bl_npy_write(path, BL_DTYPE_FLOAT64, 1, &shape, bl_eq_pop_var(p, name), &err) != BL_OK;
    }
    free(spiked);
    free(si);
    free(st);
    bl_npy_free(&za);
    if (status)
        return fail(o, m, p, &err);
    printf("%llu steps, %u neurons, %zu spikes -> %s\nexec: %s\nsteps: %.3f s wall, %.3f s cpu\n",
           (unsigned long long)steps, n, ns, o->out, bl_eq_model_exec_note(m), w1 - w0, c1 - c0);
    bl_eq_pop_destroy(p);
    bl_eq_model_destroy(m);
    free_opts(o);
    return 0;
}

/* A shipped model's name given where a file is expected, and no such file:
 * the shipped text (a file of that name, if one exists, is what was meant). */
static int shipped_name(const char *arg)
{
    struct stat sb;
    return bl_eq_shipped_text(arg, NULL) && stat(arg, &sb) != 0;
}

static int list(int argc)
{
    if (argc != 2) {
        fprintf(stderr, "brainlesslab model list: takes no arguments\n");
        return 2;
    }
    printf("%-12s %-24s %s\n", "name", "file", "preset alias");
    for (size_t i = 0; i < bl_eq_shipped_count(); i++) {
        const char *name = bl_eq_shipped_name(i);
        char file[96];
        snprintf(file, sizeof file, "models/%s.toml", name);
        printf("%-12s %-24s %s\n", name, file,
               bl_eq_shipped_is_preset(name) ? "yes: preset = \"NAME\" runs the hand-written kernel" : "no");
    }
    return 0;
}

static int show(int argc, char **argv)
{
    size_t len;
    const char *text = argc == 3 ? bl_eq_shipped_text(argv[2], &len) : NULL;
    if (argc != 3) {
        fprintf(stderr, "brainlesslab model show: expected one shipped model's name (brainlesslab model list)\n");
        return 2;
    }
    if (!text) {
        bl_error err = {0};
        bl_fail(&err, BL_ERR_INVALID, "no shipped model '%.64s' (brainlesslab model list)", argv[2]);
        return bl_cli_report("model", &err);
    }
    fwrite(text, 1, len, stdout);
    return 0;
}

int bl_cmd_model(int argc, char **argv)
{
    int is_check = argc >= 2 && !strcmp(argv[1], "check"), is_run = argc >= 2 && !strcmp(argv[1], "run");
    if (bl_cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return 0;
    }
    opts o;
    char why[512];
    if (argc >= 2 && !strcmp(argv[1], "list"))
        return list(argc);
    if (argc >= 2 && !strcmp(argv[1], "show"))
        return show(argc, argv);
    if (!is_check && !is_run) {
        fprintf(stderr, "brainlesslab model: expected 'list', 'show', 'check' or 'run' (brainlesslab model --help)\n");
        return 2;
    }
    const char *bad = parse(argc, argv, is_run, &o, why, sizeof why);
    if (bad) {
        free_opts(&o);
        fprintf(stderr, "brainlesslab model: %s (brainlesslab model --help)\n", bad);
        return 2;
    }
    bl_error err = {0};
    bl_eq_model *m = NULL;
    /* dt in seconds as Brian2 computes dt = X*ms: X * 0.001. */
    if (shipped_name(o.file) ? bl_eq_model_load_shipped(o.file, o.dt_ms * 0.001, o.n_set, o.set_names, o.set_values,
                                                        &m, &err)
                             : bl_eq_model_load(o.file, o.dt_ms * 0.001, o.n_set, o.set_names, o.set_values, &m, &err))
        return fail(&o, NULL, NULL, &err);
    if (is_run)
        return run(&o, m);
    char *text = bl_eq_model_describe(m);
    if (!text) {
        bl_fail(&err, BL_ERR_NOMEM, "out of memory");
        return fail(&o, m, NULL, &err);
    }
    fputs(text, stdout);
    free(text);
    char what[1024];
    int avail = bl_eq_codegen_available(what, sizeof what);
    printf("codegen: %s: %s\n", avail ? "available" : "unavailable, the interpreter runs", what);
    bl_eq_model_destroy(m);
    free_opts(&o);
    return 0;
}
