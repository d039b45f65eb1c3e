/* brainlesslab reservoir: the explicit-state interface of the reservoir nodes.
 *
 *   construct   a seeded node into a bundle directory
 *   replay      a bundle driven by explicit input (and noise) tapes; every
 *               frame's spikes, margins, thresholds/targets, acts, errors and
 *               effectors out as .npy, plus the final state as a bundle
 *   bench-case  one timed benchmark case, JSON on stdout (for `brainlesslab bench`)
 *   noise       the first frames of a drive seed's Oosawa noise tape as .npy
 *
 * Plans with operation "profile" run through `brainlesslab check` and
 * `brainlesslab run` like every plan. */
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "brainlesslab/hash.h"
#include "brainlesslab/npy.h"
#include "brainlesslab/reservoir.h"
#include "bench.h" /* bl_res_bench_case: the benchmark's reservoir worker */
#include "cli.h"
#include "cli_reservoir.h"

static const char usage_text[] =
    "usage: brainlesslab reservoir construct --node KIND --units N --inputs R --effectors E\n"
    "                                        (--seed S | --host-seed HEX) [--preset NAME]\n"
    "                                        [--param NAME=VALUE]... [--dtype D] --out DIR\n"
    "       brainlesslab reservoir noise (--seed S | --host-seed HEX) --units N --frames T --out Z.npy\n"
    "       brainlesslab reservoir replay BUNDLE --inputs X.npy [--noise Z.npy] --out DIR [--frames T]\n"
    "                                     [--node KIND] [--preset NAME] [--param NAME=VALUE]...\n"
    "                                     [--freeze-weights-at K] [--freeze-plasticity-at K] [--dtype D]\n"
    "       brainlesslab reservoir bench-case --node KIND --units N --batch B --frames T\n"
    "                                         [--threads N] [--seed S] [--repeat K] [--export DIR]\n"
    "                                         [--task tracking|pong]\n"
    "\n"
    "       brainlesslab reservoir task --task NAME [--option NAME=VALUE]... (--world-seed S | --world-digest HEX)\n"
    "                                   [--control-seed S] [--controller C] [--horizon H] [--warmup W]\n"
    "                                   [--effectors E.npy] --out DIR\n"
    "  --world-digest: a philox-host-v1 world seed (its 32-byte SHA-256 digest, 64 hex digits): the\n"
    "  Python BrainlessLab's world for that seed; --world-seed is this build's (bl-philox-v1).\n"
    "\n"
    "Nodes (KIND): falandays, sorn (equations and defaults: docs/reservoir.md).\n"
    "A bundle is a directory of .npy files plus node.json (kind, parameters); matrices are\n"
    "[destination, source]. Falandays: w, mask, signs, w_in [N,R], w_out [E,N], acts, targets,\n"
    "spikes. SORN: w_ee, mask_ee, c_e, w_ei, w_ie, w_eu [NE,R], w_out [E,NE], t_e, t_i, x, y.\n"
    "(.npz is not read: unpack it into a directory first.)\n"
    "\n"
    "replay: X.npy is [T,R] (any numeric dtype), Z.npy [T,N] (the Oosawa drive's xi; default 0).\n"
    "  --node/--preset/--param replace node.json's parameters (start from the kind's defaults).\n"
    "  --freeze-weights-at K / --freeze-plasticity-at K: applied before frame K (1-based).\n"
    "  DIR (created, must not exist) gets spikes.npy (uint8 [T,N]), margins.npy, effectors.npy,\n"
    "  finite.npy, Falandays acts/targets/errors.npy, SORN thresholds.npy, final/ (the end\n"
    "  state as a bundle) and replay.json.\n"
    "--host-seed HEX: a philox-host-v1 seed, the Python project's seed_for integer as 64 hex digits\n"
    "  (as its trials record them): construct draws its wiring, noise its NoiseTape.\n"
    "noise: float64 [T,N], the drive seed's xi (bl-philox-v1 with --seed).\n"
    "--param input_link_p=P0,P1,...: one input link probability per receptor (Falandays).\n"
    "--dtype float64 (the contract; default, or node.json's \"dtype\") | float32 (every value and\n"
    "  operation in float, inputs and noise rounded on entry; its own oracle and tolerance contract,\n"
    "  docs/reservoir.md). Arrays out are float64 either way (float32 values widen exactly).\n"
    "bench-case: default parameters, 3 inputs, 2 effectors, B slots from one seeded node, a\n"
    "  Philox 0/1 input tape; prints {wall times (cold, then K warm runs from a reset batch),\n"
    "  counts, trajectory sha256}. --export DIR\n"
    "  writes the bundle and tape for the NumPy peer (tests/oracles/reservoir_numpy.py bench).\n"
    "  --task: the closed loop instead: the task's receptors and effectors, each slot one trial of T\n"
    "  ticks in its own world (docs/benchmark.md, r2); --export writes bundle/ and task.json.\n"
    "task: one trial of a task driven by a control (or the effector tape E [rows, 2], one row per\n"
    "  node frame) into DIR: obs.npy, effectors.npy, physical.npy, stimuli.npy, starts/ends/labels/\n"
    "  decisions/ties.npy, result.json (for tests/oracles/tasks_numpy.py).\n"
    "Exit status: 0 success, 1 failure (one line on stderr), 2 usage.\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "brainlesslab reservoir: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage_text);
    return 2;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    if (!s || !*s || *s == '-')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Options shared by the subcommands; unknown ones are usage errors. */
typedef struct opts {
    const char *positional, *node, *preset, *out, *inputs, *noise, *export_dir, *dtype, *host_seed, *task;
    const char *params[64];
    int n_params;
    uint64_t units, n_inputs, effectors, seed, batch, frames, threads, fw_at, fp_at, repeat;
    int have_units, have_inputs, have_effectors, have_seed, have_batch, have_frames;
} opts;

static int parse_opts(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-') {
            if (o->positional)
                return usage_error("unexpected argument '%s'", a);
            o->positional = a;
            continue;
        }
        if (i + 1 >= argc)
            return usage_error("%s needs a value", a);
        const char *v = argv[++i];
        uint64_t *num = NULL, max = UINT64_MAX;
        int *flag = NULL;
        if (!strcmp(a, "--node"))
            o->node = v;
        else if (!strcmp(a, "--preset"))
            o->preset = v;
        else if (!strcmp(a, "--out"))
            o->out = v;
        else if (!strcmp(a, "--noise"))
            o->noise = v;
        else if (!strcmp(a, "--export"))
            o->export_dir = v;
        else if (!strcmp(a, "--host-seed"))
            o->host_seed = v;
        else if (!strcmp(a, "--dtype"))
            o->dtype = v;
        else if (!strcmp(a, "--task") && !strcmp(argv[1], "bench-case"))
            o->task = v;
        else if (!strcmp(a, "--param")) {
            if (o->n_params >= 64)
                return usage_error("too many --param options (%s)", v);
            o->params[o->n_params++] = v;
        } else if (!strcmp(a, "--inputs")) {
            /* A file for replay, a count for construct. */
            if (!strcmp(argv[1], "replay"))
                o->inputs = v;
            else {
                num = &o->n_inputs;
                flag = &o->have_inputs;
                max = BL_RES_MAX_PORTS;
            }
        } else if (!strcmp(a, "--units")) {
            num = &o->units;
            flag = &o->have_units;
            max = BL_RES_MAX_UNITS;
        } else if (!strcmp(a, "--effectors")) {
            num = &o->effectors;
            flag = &o->have_effectors;
            max = BL_RES_MAX_PORTS;
        } else if (!strcmp(a, "--seed")) {
            num = &o->seed;
            flag = &o->have_seed;
        } else if (!strcmp(a, "--batch")) {
            num = &o->batch;
            flag = &o->have_batch;
            max = 65536;
        } else if (!strcmp(a, "--frames")) {
            num = &o->frames;
            flag = &o->have_frames;
            max = UINT32_MAX;
        } else if (!strcmp(a, "--repeat")) {
            num = &o->repeat;
            max = BL_RES_BENCH_MAX_WARM;
        } else if (!strcmp(a, "--threads")) {
            num = &o->threads;
            max = 4096;
        } else if (!strcmp(a, "--freeze-weights-at")) {
            num = &o->fw_at;
            max = UINT32_MAX;
        } else if (!strcmp(a, "--freeze-plasticity-at")) {
            num = &o->fp_at;
            max = UINT32_MAX;
        } else
            return usage_error("unknown option '%s'", a);
        if (num) {
            if (parse_u64(v, max, num)) {
                fprintf(stderr, "brainlesslab reservoir: %s '%s' is not a whole number in 0..%" PRIu64 "\n", a, v, max);
                return 2;
            }
            if (flag)
                *flag = 1;
        }
    }
    return 0;
}

/* Parameters: the bundle's node.json, or the kind's preset, then --param. */
static int build_params(const opts *o, bl_res_params *p, int *given, bl_error *err)
{
    *given = o->node || o->preset || o->n_params;
    if (!*given)
        return 0;
    bl_res_kind kind = BL_RES_FALANDAYS;
    if (o->node && bl_res_kind_parse(o->node, &kind)) {
        bl_fail(err, BL_ERR_INVALID, "--node '%s' is not falandays or sorn", o->node);
        return 1;
    }
    if (!o->node && o->positional) {
        int found = 0;
        bl_res_params from;
        if (bl_res_bundle_params(o->positional, &from, &found, err))
            return 1;
        if (found)
            kind = from.kind;
    }
    if (bl_res_params_preset(kind, o->preset ? o->preset : "default", p, err))
        return 1;
    for (int k = 0; k < o->n_params; k++) {
        char name[128];
        const char *eq = strchr(o->params[k], '=');
        size_t len = eq ? (size_t)(eq - o->params[k]) : 0;
        if (!eq || len == 0 || len >= sizeof name) {
            bl_fail(err, BL_ERR_INVALID, "--param '%s' is not NAME=VALUE", o->params[k]);
            return 1;
        }
        memcpy(name, o->params[k], len);
        name[len] = '\0';
        const char *v = eq + 1;
        char *end;
        double x = strtod(v, &end);
        bl_status st;
        if (!strcmp(name, "input_link_p")) {
            /* A list: one probability per receptor, comma-separated. */
            double values[BL_RES_MAX_PORTS];
            size_t n = 0;
            const char *at = v;
            for (;;) {
                if (n == BL_RES_MAX_PORTS)
                    break;
                values[n++] = strtod(at, &end);
                if (end == at || (*end && *end != ',')) {
                    bl_fail(err, BL_ERR_INVALID, "--param %s: not a comma-separated list of numbers", o->params[k]);
                    return 1;
                }
                if (!*end)
                    break;
                at = end + 1;
            }
            st = bl_res_params_set_input_link_p(p, values, n, err);
        } else if (!strcmp(v, "true") || !strcmp(v, "false"))
            st = bl_res_params_set(p, name, !strcmp(v, "true"), err);
        else if (*v && !*end)
            st = bl_res_params_set(p, name, x, err);
        else
            st = bl_res_params_set_string(p, name, v, err);
        if (st) {
            bl_fail_context(err, "--param %s", o->params[k]);
            return 1;
        }
    }
    return bl_res_params_validate(p, err) != BL_OK;
}

/* The seed of --seed (bl-philox-v1) or --host-seed (philox-host-v1: 64 hex
 * digits of the integer, most significant first; the digest is its
 * little-endian bytes). */
static int seed_opt(const opts *o, bl_rng_seed *seed)
{
    memset(seed, 0, sizeof *seed);
    if (!o->host_seed) {
        seed->u64 = o->seed;
        return o->have_seed ? 0 : usage_error("%s", "--seed or --host-seed is required");
    }
    if (o->have_seed)
        return usage_error("%s", "--seed and --host-seed exclude each other");
    if (strlen(o->host_seed) != 64)
        return usage_error("--host-seed '%s' is not 64 hex digits", o->host_seed);
    seed->scheme = BL_RNG_PHILOX_HOST_V1;
    for (int k = 0; k < 64; k++) {
        const char c = o->host_seed[k];
        const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                                    : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (v < 0)
            return usage_error("--host-seed '%s' is not 64 hex digits", o->host_seed);
        seed->digest[31 - k / 2] |= (uint8_t)(k % 2 ? v : v << 4);
    }
    return 0;
}

static int cmd_noise(int argc, char **argv)
{
    opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc;
    if (!o.have_units || !o.have_frames || !o.out)
        return usage_error("%s needs --units, --frames and --out", "noise");
    if (o.positional)
        return usage_error("unexpected argument '%s'", o.positional);
    bl_rng_seed seed;
    if ((rc = seed_opt(&o, &seed)))
        return rc;
    bl_error err = {0};
    if (o.frames * o.units > (UINT64_C(1) << 28)) {
        bl_fail(&err, BL_ERR_INVALID, "--frames %" PRIu64 " x --units %" PRIu64 ": more than 2^28 values",
                o.frames, o.units);
        return bl_cli_report("reservoir noise", &err);
    }
    const uint64_t cells = o.frames * o.units;
    double *z = malloc((size_t)(cells ? cells : 1) * sizeof *z);
    if (!z) {
        bl_fail(&err, BL_ERR_NOMEM, "cannot allocate the tape");
        return bl_cli_report("reservoir noise", &err);
    }
    bl_res_noise_tape(&seed, (uint32_t)o.units, o.frames, z);
    const uint64_t shape[2] = {o.frames, o.units};
    bl_status st = bl_npy_write(o.out, BL_DTYPE_FLOAT64, 2, shape, z, &err);
    free(z);
    return st ? bl_cli_report("reservoir noise", &err) : 0;
}

/* --dtype: *s replaced by its cast (NULL on failure). */
static int in_dtype(const opts *o, bl_res_state **s, bl_error *err)
{
    if (!o->dtype)
        return 0;
    bl_res_dtype dt;
    bl_res_state *c = NULL;
    if (bl_res_dtype_parse(o->dtype, &dt))
        bl_fail(err, BL_ERR_INVALID, "--dtype '%s' is not float64 or float32", o->dtype);
    else if (!bl_res_state_cast(*s, dt, &c, err)) {
        bl_res_state_destroy(*s);
        *s = c;
        return 0;
    }
    bl_res_state_destroy(*s);
    *s = NULL;
    return 1;
}

static int cmd_construct(int argc, char **argv)
{
    opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc;
    if (!o.node || !o.have_units || !o.have_inputs || !o.have_effectors || !o.out)
        return usage_error("%s needs --node, --units, --inputs, --effectors, --seed (or --host-seed) and --out",
                           "construct");
    bl_rng_seed seed;
    if ((rc = seed_opt(&o, &seed)))
        return rc;
    if (o.positional)
        return usage_error("unexpected argument '%s'", o.positional);
    bl_error err = {0};
    bl_res_params p;
    int given;
    if (build_params(&o, &p, &given, &err))
        return bl_cli_report("reservoir construct", &err);
    bl_res_state *s;
    if (bl_res_state_construct_rng(&p, (uint32_t)o.units, (uint32_t)o.n_inputs, (uint32_t)o.effectors, &seed, &s,
                                   &err) ||
        in_dtype(&o, &s, &err))
        return bl_cli_report("reservoir construct", &err);
    bl_status st = bl_res_state_save(s, o.out, &err);
    char shown[96];
    if (o.host_seed)
        snprintf(shown, sizeof shown, "philox-host-v1 %s", o.host_seed);
    else
        snprintf(shown, sizeof shown, "%" PRIu64, o.seed);
    if (!st)
        printf("%s: %s, %u units (%u excitatory), %u inputs, %u effectors, %" PRIu64 " links, seed %s\n", o.out,
               bl_res_kind_name(p.kind), bl_res_state_units(s), bl_res_state_excitatory(s), bl_res_state_inputs(s),
               bl_res_state_effectors(s), bl_res_state_links(s), shown);
    bl_res_state_destroy(s);
    return st ? bl_cli_report("reservoir construct", &err) : 0;
}

static int write_replay_json(const char *dir, const char *bundle, const char *inputs, const char *noise,
                             const bl_res_state *s, const bl_res_trajectory *t, const opts *o, bl_error *err)
{
    char path[4096], in_sha[65] = "", noise_sha[65] = "";
    uint64_t bytes;
    if (bl_sha256_file(inputs, in_sha, &bytes, err) || (noise && bl_sha256_file(noise, noise_sha, &bytes, err)))
        return 1;
    uint64_t finite = 0, first_bad = 0;
    for (uint64_t k = 0; k < t->frames; k++) {
        finite += t->finite[k];
        if (!t->finite[k] && !first_bad)
            first_bad = k + 1;
    }
    snprintf(path, sizeof path, "%s/replay.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        bl_fail(err, BL_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
        return 1;
    }
    fprintf(f,
            "{\n  \"kind\": \"%s\",\n  \"frames\": %" PRIu64 ",\n  \"units\": %u,\n  \"excitatory\": %u,\n"
            "  \"inputs\": %u,\n  \"effectors\": %u,\n  \"finite_frames\": %" PRIu64 ",\n"
            "  \"first_nonfinite_frame\": %" PRIu64 ",\n  \"freeze_weights_at\": %" PRIu64 ",\n"
            "  \"freeze_plasticity_at\": %" PRIu64 ",\n  \"links_final\": %" PRIu64 ",\n"
            "  \"inputs_sha256\": \"%s\",\n  \"noise_sha256\": \"%s\",\n  \"dtype\": \"%s\"\n}\n",
            bl_res_kind_name(bl_res_state_params(s)->kind), t->frames, bl_res_state_units(s),
            bl_res_state_excitatory(s), bl_res_state_inputs(s), bl_res_state_effectors(s), finite, first_bad, o->fw_at,
            o->fp_at, bl_res_state_links(s), in_sha, noise_sha, bl_res_dtype_name(bl_res_state_dtype(s)));
    (void)bundle;
    if (fclose(f)) {
        bl_fail(err, BL_ERR_IO, "%s: write error", path);
        return 1;
    }
    return 0;
}

static int cmd_replay(int argc, char **argv)
{
    opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc;
    if (!o.positional || !o.inputs || !o.out)
        return usage_error("%s needs BUNDLE, --inputs and --out", "replay");
    bl_error err = {0};
    bl_res_params p;
    int given;
    if (build_params(&o, &p, &given, &err))
        return bl_cli_report("reservoir replay", &err);
    bl_res_state *s = NULL;
    if (bl_res_state_load(o.positional, given ? &p : NULL, &s, &err) || in_dtype(&o, &s, &err))
        return bl_cli_report("reservoir replay", &err);
    const uint32_t n = bl_res_state_units(s), r = bl_res_state_inputs(s);
    double *in = NULL, *noise = NULL;
    uint64_t ishape[2] = {0, 0}, nshape[2] = {0, 0};
    bl_res_trajectory t = {0};
    bl_status st = bl_res_read_npy_f64(o.inputs, 2, 1, &in, ishape, &err);
    if (!st && ishape[1] != r)
        st = bl_fail(&err, BL_ERR_FORMAT, "%s: shape (%" PRIu64 ", %" PRIu64 "), expected (T, %u): one column per "
                     "input of the bundle", o.inputs, ishape[0], ishape[1], r);
    uint64_t frames = o.have_frames ? o.frames : ishape[0];
    if (!st && (frames < 1 || frames > ishape[0]))
        st = bl_fail(&err, BL_ERR_INVALID, "%s: %" PRIu64 " frames of inputs, %" PRIu64 " requested (1..%" PRIu64 ")",
                     o.inputs, ishape[0], frames, ishape[0]);
    if (!st && o.noise) {
        st = bl_res_read_npy_f64(o.noise, 2, 1, &noise, nshape, &err);
        if (!st && (nshape[1] != n || nshape[0] < frames))
            st = bl_fail(&err, BL_ERR_FORMAT, "%s: shape (%" PRIu64 ", %" PRIu64 "), expected (T >= %" PRIu64 ", %u): "
                         "one column per unit", o.noise, nshape[0], nshape[1], frames, n);
    }
    if (!st && mkdir(o.out, 0777) != 0)
        st = bl_fail(&err, errno == EEXIST ? BL_ERR_EXISTS : BL_ERR_IO, "%s: cannot create the output directory: %s",
                     o.out, strerror(errno));
    if (!st)
        st = bl_res_replay(s, frames, in, noise, o.fw_at, o.fp_at, &t, &err);
    if (!st)
        st = bl_res_trajectory_write(&t, bl_res_state_params(s)->kind, o.out, &err);
    if (!st) {
        char final[4096];
        snprintf(final, sizeof final, "%s/final", o.out);
        st = bl_res_state_save(s, final, &err);
    }
    if (!st && write_replay_json(o.out, o.positional, o.inputs, o.noise, s, &t, &o, &err))
        st = BL_ERR_IO;
    if (!st) {
        uint64_t spikes = 0, finite = 0;
        for (uint64_t k = 0; k < t.frames * t.n; k++)
            spikes += t.spikes[k];
        for (uint64_t k = 0; k < t.frames; k++)
            finite += t.finite[k];
        printf("%s: %s, %u units, %" PRIu64 " frames, %" PRIu64 " spikes, %" PRIu64 " finite frames\n", o.out,
               bl_res_kind_name(bl_res_state_params(s)->kind), n, t.frames, spikes, finite);
    }
    bl_res_trajectory_free(&t);
    free(in);
    free(noise);
    bl_res_state_destroy(s);
    return st ? bl_cli_report("reservoir replay", &err) : 0;
}

static int cmd_bench_case(int argc, char **argv)
{
    opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc;
    if (!o.node || !o.have_units || !o.have_batch || !o.have_frames)
        return usage_error("%s needs --node, --units, --batch and --frames", "bench-case");
    if (o.positional)
        return usage_error("unexpected argument '%s'", o.positional);
    bl_res_kind kind;
    if (bl_res_kind_parse(o.node, &kind))
        return usage_error("--node '%s' is not falandays or sorn", o.node);
    bl_error err = {0};
    bl_res_bench_result r;
    const uint64_t seed = o.have_seed ? o.seed : 20240611;
    if (o.task ? bl_res_bench_task_case(kind, (uint32_t)o.units, (uint32_t)o.batch, o.task, (uint32_t)o.frames,
                                        (int)o.threads, seed, (uint32_t)o.repeat, o.export_dir, &r, &err)
               : bl_res_bench_case(kind, (uint32_t)o.units, (uint32_t)o.batch, (uint32_t)o.frames, (int)o.threads, seed,
                                   (uint32_t)o.repeat, o.export_dir, &r, &err))
        return bl_cli_report("reservoir bench-case", &err);
    if (o.task && isfinite(r.outcome_mean))
        printf("{\"task\": \"%s\", \"outcome_mean\": %.17g, \"trials_failed\": %u, ", o.task, r.outcome_mean,
               r.trials_failed);
    else if (o.task) /* a failed trial's outcome may be NaN: JSON has no NaN */
        printf("{\"task\": \"%s\", \"outcome_mean\": null, \"trials_failed\": %u, ", o.task, r.trials_failed);
    else
        printf("{");
    printf("\"node\": \"%s\", \"units\": %" PRIu64 ", \"batch\": %" PRIu64 ", \"frames\": %" PRIu64
           ", \"threads\": %d, \"seed\": %" PRIu64 ", \"wall_construct_s\": %.9f, \"wall_tapes_s\": %.9f, "
           "\"wall_run_s\": %.9f, \"wall_warm_s\": [",
           bl_res_kind_name(kind), r.units, r.batch, r.frames, r.threads, seed, r.wall_construct_s, r.wall_tapes_s,
           r.wall_run_s);
    for (uint32_t k = 0; k < r.warm; k++)
        printf("%s%.9f", k ? ", " : "", r.wall_warm_s[k]);
    printf("], \"unit_updates\": %" PRIu64 ", \"synaptic_events\": %" PRIu64 ", \"spikes\": %" PRIu64
           ", \"unit_updates_per_s\": %.6g, \"trajectory_sha256\": \"%s\"}\n",
           r.unit_updates, r.synaptic_events, r.spikes, r.wall_run_s > 0 ? (double)r.unit_updates / r.wall_run_s : 0.0,
           r.hash);
    return 0;
}

int bl_cmd_reservoir(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(usage_text, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (bl_cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (!strcmp(argv[1], "construct"))
        return cmd_construct(argc, argv);
    if (!strcmp(argv[1], "replay"))
        return cmd_replay(argc, argv);
    if (!strcmp(argv[1], "bench-case"))
        return cmd_bench_case(argc, argv);
    if (!strcmp(argv[1], "noise"))
        return cmd_noise(argc, argv);
    if (!strcmp(argv[1], "task"))
        return bl_cmd_reservoir_task(argc, argv);
    return usage_error("unknown subcommand '%s' (construct, replay, bench-case, noise, task)", argv[1]);
}
