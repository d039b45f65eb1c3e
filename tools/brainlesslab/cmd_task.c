/* brainlesslab reservoir task: one trial of a task without a node, traced
 * (the world, what the controller saw, its effectors, the physics, the
 * decisions and the outcome) for the NumPy oracle and for looking at a task.
 *
 *   brainlesslab reservoir task --task NAME [--option NAME=VALUE]...
 *       (--world-seed S | --world-digest HEX) [--control-seed S] [--controller C]
 *       [--horizon H] [--warmup W] [--effectors E.npy] --out DIR
 *
 * --world-digest: a philox-host-v1 world seed, the 32-byte digest in hex (the
 * Python project's world for it); --world-seed: a bl-philox-v1 seed.
 *
 * VALUE: a number, true/false, a word, or [a, b, ...] / [[a, b], ...]. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "brainlesslab/npy.h"
#include "brainlesslab/task.h"
#include "cli_reservoir.h"

static unsigned tie_count(const bl_task_trace *t)
{
    unsigned n = 0;
    for (uint32_t k = 0; k < t->n_rounds; k++)
        n += t->ties[k] != 0;
    return n;
}

static int fail(const char *what, const char *arg)
{
    fprintf(stderr, "brainlesslab reservoir task: ");
    fprintf(stderr, what, arg);
    fprintf(stderr, "\n");
    return 2;
}

/* NAME=VALUE into a task value; list numbers go to buf. */
static int parse_value(char *text, double *buf, size_t cap, bl_task_value *v)
{
    memset(v, 0, sizeof *v);
    if (!strcmp(text, "true") || !strcmp(text, "false")) {
        v->type = BL_TV_BOOL;
        v->boolean = text[0] == 't';
        return 0;
    }
    if (text[0] == '[') {
        v->type = BL_TV_LIST;
        v->width = strstr(text + 1, "[") ? 2 : 1;
        size_t n = 0;
        for (char *p = text; *p;) {
            if (strchr("[], ", *p)) {
                p++;
                continue;
            }
            char *end;
            errno = 0;
            double x = strtod(p, &end);
            if (end == p || errno || n >= cap)
                return -1;
            buf[n++] = x;
            p = end;
        }
        v->list = buf;
        v->n = n;
        return 0;
    }
    char *end;
    errno = 0;
    double x = strtod(text, &end);
    if (end != text && !*end && !errno) {
        v->type = BL_TV_NUMBER;
        v->number = x;
        v->integer = !strpbrk(text, ".eE") && x == floor(x);
        return 0;
    }
    v->type = BL_TV_STRING;
    v->string = text;
    return 0;
}

static int write_npy(const char *dir, const char *name, bl_dtype dt, int ndim, uint64_t a, uint64_t b,
                     const void *data)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    const uint64_t shape[2] = {a, b};
    bl_error err = {0};
    if (bl_npy_write(path, dt, ndim, shape, data, &err)) {
        fprintf(stderr, "brainlesslab reservoir task: %s\n", err.message);
        return 1;
    }
    return 0;
}

int bl_cmd_reservoir_task(int argc, char **argv)
{
    const char *task = NULL, *out = NULL, *tape_path = NULL, *controller = "oracle";
    char *options[64];
    int n_options = 0;
    uint64_t world_seed = 0, control_seed = 0, horizon = 0, warmup = 0;
    int have_world = 0;
    bl_rng_seed ws = {BL_RNG_BL_PHILOX_V1, 0, {0}};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc)
            return fail("%s needs a value", a);
        char *v = argv[++i];
        uint64_t *num = NULL;
        if (!strcmp(a, "--task"))
            task = v;
        else if (!strcmp(a, "--out"))
            out = v;
        else if (!strcmp(a, "--effectors"))
            tape_path = v;
        else if (!strcmp(a, "--controller"))
            controller = v;
        else if (!strcmp(a, "--option")) {
            if (n_options >= 64)
                return fail("too many --option (%s)", v);
            options[n_options++] = v;
        } else if (!strcmp(a, "--world-seed")) {
            num = &world_seed;
            have_world |= 1;
        } else if (!strcmp(a, "--world-digest")) {
            if (strlen(v) != 64)
                return fail("--world-digest '%s' is not 64 hex digits", v);
            for (int k = 0; k < 32; k++) {
                unsigned byte;
                char pair[3] = {v[2 * k], v[2 * k + 1], 0};
                char *end;
                byte = (unsigned)strtoul(pair, &end, 16);
                if (*end || !isxdigit((unsigned char)pair[0]))
                    return fail("--world-digest '%s' is not 64 hex digits", v);
                ws.digest[k] = (uint8_t)byte;
            }
            ws.scheme = BL_RNG_PHILOX_HOST_V1;
            have_world |= 2;
        } else if (!strcmp(a, "--control-seed"))
            num = &control_seed;
        else if (!strcmp(a, "--horizon"))
            num = &horizon;
        else if (!strcmp(a, "--warmup"))
            num = &warmup;
        else
            return fail("unknown option '%s'", a);
        if (num) {
            char *end;
            errno = 0;
            *num = strtoull(v, &end, 0);
            if (!*v || *v == '-' || *end || errno)
                return fail("'%s' is not a whole number", v);
        }
    }
    if (!task || !out || !have_world)
        return fail("%s", "--task, --world-seed (or --world-digest) and --out are required");
    if (have_world == 3)
        return fail("%s", "--world-seed and --world-digest exclude each other");
    if (have_world == 1)
        ws.u64 = world_seed;
    if (horizon > BL_DC_MAX_TICKS || warmup > BL_DC_MAX_TICKS)
        return fail("%s", "--horizon and --warmup are at most 1000000");
    bl_task_kind kind;
    if (bl_task_parse(task, &kind))
        return fail("unknown task '%s'", task);
    bl_controller ctrl;
    if (bl_controller_parse(controller, &ctrl))
        return fail("unknown controller '%s'", controller);
    bl_task_options o;
    bl_task_defaults(kind, &o);
    bl_error err = {0};
    for (int k = 0; k < n_options; k++) {
        char *eq = strchr(options[k], '=');
        if (!eq)
            return fail("--option '%s' is not NAME=VALUE", options[k]);
        *eq = 0;
        double buf[128];
        bl_task_value tv;
        if (parse_value(eq + 1, buf, 128, &tv))
            return fail("--option %s: cannot read the value", options[k]);
        if (bl_task_set_option(&o, options[k], &tv, &err)) {
            fprintf(stderr, "brainlesslab reservoir task: --option %s: %s\n", options[k], err.message);
            return 1;
        }
    }
    bl_npy_array tape = {0};
    if (tape_path) {
        if (bl_npy_read_expect(tape_path, BL_DTYPE_FLOAT64, 2, &tape, &err)) {
            fprintf(stderr, "brainlesslab reservoir task: %s\n", err.message);
            return 1;
        }
        if (tape.shape[1] != 2) {
            bl_npy_free(&tape);
            return fail("%s: the effector tape must be [rows, 2]", tape_path);
        }
    }
    bl_task_trace *t = NULL;
    bl_status st = bl_task_trace_run_rng(&o, ctrl, &ws, control_seed, (uint32_t)horizon, (uint32_t)warmup,
                                         tape_path ? tape.data : NULL, tape_path ? tape.shape[0] : 0, &t, &err);
    if (tape_path)
        bl_npy_free(&tape);
    if (st) {
        fprintf(stderr, "brainlesslab reservoir task: %s\n", err.message);
        return 1;
    }
    int bad = mkdir(out, 0777) != 0;
    if (bad)
        fprintf(stderr, "brainlesslab reservoir task: %s: cannot create: %s\n", out, strerror(errno));
    const uint64_t rows = (uint64_t)t->ticks * t->frames;
    bad = bad || write_npy(out, "obs.npy", BL_DTYPE_FLOAT64, 2, rows, t->width, t->obs) ||
          write_npy(out, "effectors.npy", BL_DTYPE_FLOAT64, 2, rows, 2, t->eff) ||
          write_npy(out, "physical.npy", BL_DTYPE_FLOAT64, 2, t->ticks, 8, t->physical) ||
          write_npy(out, "stimuli.npy", BL_DTYPE_FLOAT64, 2, t->length, t->width, t->stimuli) ||
          write_npy(out, "starts.npy", BL_DTYPE_UINT32, 1, t->n_rounds, 0, t->starts) ||
          write_npy(out, "ends.npy", BL_DTYPE_UINT32, 1, t->n_rounds, 0, t->ends) ||
          write_npy(out, "labels.npy", BL_DTYPE_UINT32, 1, t->n_rounds, 0, t->labels) ||
          write_npy(out, "decisions.npy", BL_DTYPE_UINT8, 1, t->n_rounds, 0, t->decisions) ||
          write_npy(out, "ties.npy", BL_DTYPE_UINT8, 1, t->n_rounds, 0, t->ties) ||
          write_npy(out, "draws.npy", BL_DTYPE_FLOAT64, 2, t->n_draws, 2, t->draws) ||
          write_npy(out, "start.npy", BL_DTYPE_FLOAT64, 1, 8, 0, t->start);
    if (!bad) {
        char path[4096];
        snprintf(path, sizeof path, "%s/result.json", out);
        FILE *f = fopen(path, "w");
        bad = !f;
        if (f) {
            fprintf(f, "{\"task\": \"%s\", \"controller\": \"%s\", \"ticks\": %u, \"frames\": %u, \"outcome\": %.17g, "
                       "\"done\": %d, \"finite\": %d, \"scored\": %u, \"hits\": %u, \"misses\": %u, "
                       "\"longest_rally\": %u, \"reversal\": %u, \"meta\": [%d, %d, %d, %d]}\n",
                    task, bl_controller_name(ctrl), t->ticks, t->frames, isfinite(t->outcome) ? t->outcome : -1.0,
                    t->done, t->finite, t->scored, t->hits, t->misses, t->longest_rally, t->reversal, t->meta[0],
                    t->meta[1], t->meta[2], t->meta[3]);
            bad = fclose(f) != 0;
        }
    }
    if (!bad) { /* the score, as a run's table names it, and where the trace went */
        bl_task_definition def;
        bl_task_definition_of(&o, &def);
        char score[64] = "n/a";
        if (isfinite(t->outcome))
            snprintf(score, sizeof score, "%.6g", t->outcome);
        printf("%s: %s under %s, %u ticks: %s %s", out, task, bl_controller_name(ctrl), t->ticks, def.outcome_key,
               score);
        if (def.episode)
            printf(" (%u rounds, %u ties)", t->n_rounds, tie_count(t));
        printf("\n");
    }
    bl_task_trace_destroy(t);
    return bad ? 1 : 0;
}
