/* brainlesslab simulate: the low-level run of one network, arrays in, arrays
 * out. Plans and sealed records are `brainlesslab run`; this command exists so
 * that oracles and scripts can drive the engine directly. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/engine.h"
#include "brainlesslab/eqmodel.h"
#include "brainlesslab/mpi.h"
#include "brainlesslab/npy.h"
#include "brainlesslab/plan.h"
#include "cli.h"

static const char usage_text[] =
    "usage: brainlesslab simulate --connectome DIR --preset shiu2024|phase4c --duration-ms D --out OUTDIR\n"
    "       brainlesslab simulate --plan PLAN.toml --out OUTDIR [--duration-ms D]\n"
    "         [--trials T] [--seed S] [--backend NAME]\n"
    "         [--poisson RATE_HZ:INDICES.npy[:START_MS:STOP_MS]]...   Philox Poisson population\n"
    "         [--schedule EVENTS.npy]        int32 [K,2] (step, neuron), applied in every trial\n"
    "         [--poisson-targets INDICES.npy] neurons with the stimulated refractory rule (shiu2024)\n"
    "         [--silence INDICES.npy]        outgoing weights of these neurons become 0\n"
    "         [--set NAME=VALUE]...          model parameter override (e.g. v_th_mv=-45)\n"
    "         [--timing FILE.json]           phase wall times (load, prepare, each trial), peak RSS\n"
    "         [--bank]                       with --timing: trial 0 alone, then trials 1.. in one engine\n"
    "                                        call (threads run whole trials in parallel); bank_s in FILE\n"
    "         [--threads N]                  threads for backends that use them (0 = all cores)\n"
    "         [--replicas K]                 mpi under mpirun: K rank groups share out the trials\n"
    "         [--out-every-rank]             mpi backend under mpirun: every rank writes OUTDIR.rankR\n"
    "Writes OUTDIR (must not exist): spikes_trial.npy, spikes_step.npy, spikes_neuron.npy (int32,\n"
    "ordered by trial, step, neuron), counts.npy int32 [T,N], v.npy and g.npy [T,N] final state\n"
    "(float64 volts for shiu2024, float32 mV for phase4c).\n"
    "--plan takes the connectome, the model (a preset, a model file or equations), the stimuli\n"
    "and the silenced neurons from a connectome plan (no --connectome, --preset, --set,\n"
    "--silence); its [run] duration, trials, seed, backend and threads apply unless given here,\n"
    "and --poisson/--schedule/--poisson-targets add to its stimuli. A model from equations is\n"
    "compiled (or loaded from the code cache) after the prepare phase: --timing reports it\n"
    "apart as compile_s, with model_codegen (cache hit or miss, compile_ms).\n"
"Under mpirun with --backend mpi every rank holds the whole result; rank 0 alone writes OUTDIR\n"
"and the --timing file (--out-every-rank: each rank writes its own OUTDIR.rankR, for tests).\n";

typedef struct sim_args {
    const char *connectome, *preset, *out, *backend, *schedule, *targets, *silence, *timing, *plan;
    int threads, replicas, out_every_rank, bank;
    int threads_given, trials_given, seed_given; /* --plan: the plan's [run] value otherwise */
    double duration_ms;
    unsigned long trials;
    unsigned long long seed;
    const char *poisson[64];
    int n_poisson;
    const char *sets[64];
    int n_sets;
} sim_args;

static int parse_double(const char *text, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(text, &end);
    return errno == 0 && end != text && *end == '\0';
}

static int parse_args(int argc, char **argv, sim_args *a)
{
    memset(a, 0, sizeof *a);
    a->replicas = 1;
    a->trials = 1;
    a->duration_ms = -1;
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        if (!strcmp(opt, "--out-every-rank")) {
            a->out_every_rank = 1;
            continue;
        }
        if (!strcmp(opt, "--bank")) {
            a->bank = 1;
            continue;
        }
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!val) {
            fprintf(stderr, "brainlesslab simulate: option %s needs a value\n", opt);
            return 0;
        }
        i++;
        char *end;
        if (!strcmp(opt, "--connectome")) a->connectome = val;
        else if (!strcmp(opt, "--preset")) a->preset = val;
        else if (!strcmp(opt, "--out")) a->out = val;
        else if (!strcmp(opt, "--backend")) a->backend = val;
        else if (!strcmp(opt, "--schedule")) a->schedule = val;
        else if (!strcmp(opt, "--poisson-targets")) a->targets = val;
        else if (!strcmp(opt, "--silence")) a->silence = val;
        else if (!strcmp(opt, "--timing")) a->timing = val;
        else if (!strcmp(opt, "--plan")) a->plan = val;
        else if (!strcmp(opt, "--threads")) {
            long t = strtol(val, &end, 10);
            if (*end || t < 0 || t > 4096) {
                fprintf(stderr, "brainlesslab simulate: --threads '%s' is not in 0..4096\n", val);
                return 0;
            }
            a->threads = (int)t;
            a->threads_given = 1;
        }
        else if (!strcmp(opt, "--replicas")) {
            long k = strtol(val, &end, 10);
            if (*end || k < 1 || k > 1 << 20) {
                fprintf(stderr, "brainlesslab simulate: --replicas '%s' is not a positive count\n", val);
                return 0;
            }
            a->replicas = (int)k;
        }
        else if (!strcmp(opt, "--duration-ms")) {
            if (!parse_double(val, &a->duration_ms)) {
                fprintf(stderr, "brainlesslab simulate: --duration-ms '%s' is not a number\n", val);
                return 0;
            }
        } else if (!strcmp(opt, "--trials")) {
            errno = 0;
            a->trials = strtoul(val, &end, 10);
            if (errno || *end || a->trials < 1 || a->trials > 1000000 || val[0] == '-') {
                fprintf(stderr, "brainlesslab simulate: --trials '%s' is not in 1..1000000\n", val);
                return 0;
            }
            a->trials_given = 1;
        } else if (!strcmp(opt, "--seed")) {
            errno = 0;
            a->seed = strtoull(val, &end, 10);
            if (errno || *end || val[0] == '-' || !val[0]) {
                fprintf(stderr, "brainlesslab simulate: --seed '%s' is not an unsigned 64-bit integer\n", val);
                return 0;
            }
            a->seed_given = 1;
        } else if (!strcmp(opt, "--poisson") && a->n_poisson < 64) a->poisson[a->n_poisson++] = val;
        else if (!strcmp(opt, "--set") && a->n_sets < 64) a->sets[a->n_sets++] = val;
        else {
            bl_cli_unknown_option("simulate", opt, usage_text);
            return 0;
        }
    }
    if (a->plan) {
        /* The plan names the network and the model: a second source of
         * either would leave one of them silently unused. */
        if (a->connectome || a->preset || a->n_sets || a->silence) {
            fprintf(stderr, "brainlesslab simulate: --plan names the connectome, the model and the silenced neurons: "
                            "--connectome, --preset, --set and --silence cannot be given with it\n");
            return 0;
        }
        if (!a->out) {
            fprintf(stderr, "brainlesslab simulate: --out is required\n");
            return 0;
        }
        return 1;
    }
    if (!a->connectome || !a->preset || !a->out || a->duration_ms < 0) {
        fprintf(stderr, "brainlesslab simulate: --connectome, --preset, --duration-ms and --out are required\n");
        return 0;
    }
    /* Without --timing every trial already goes in one engine call; a bank
     * needs a cold trial before it and at least one trial in it. */
    if (a->bank && (!a->timing || a->trials < 2)) {
        fprintf(stderr, "brainlesslab simulate: --bank needs --timing and --trials 2 or more\n");
        return 0;
    }
    return 1;
}

/* A 1-d int32 file of neuron indices, each checked against the connectome so
 * that the message names the file and the index. */
static bl_status read_indices(const char *path, uint64_t n_neurons, bl_npy_array *arr, bl_error *err)
{
    bl_status st = bl_npy_read_expect(path, BL_DTYPE_INT32, 1, arr, err);
    const int32_t *v = arr->data;
    for (uint64_t i = 0; !st && i < arr->count; i++)
        if (v[i] < 0 || (uint64_t)v[i] >= n_neurons)
            st = bl_fail(err, BL_ERR_INVALID, "%s: index %llu: neuron %d outside 0..%llu", path,
                         (unsigned long long)i, v[i], (unsigned long long)(n_neurons - 1));
    if (st)
        bl_npy_free(arr);
    return st;
}

/* RATE:FILE[:START:STOP] */
static bl_status add_poisson(bl_stimulus *stim, const char *spec, uint64_t n_neurons, bl_error *err)
{
    char buf[4096];
    if (strlen(spec) >= sizeof buf)
        return bl_fail(err, BL_ERR_INVALID, "--poisson '%.40s...': too long", spec);
    strcpy(buf, spec);
    char *parts[4] = {0};
    int np = 0;
    for (char *p = buf, *tok; np < 4 && (tok = strsep(&p, ":")); )
        parts[np++] = tok;
    double rate, start = 0, stop = -1;
    if ((np != 2 && np != 4) || !parse_double(parts[0], &rate) ||
        (np == 4 && (!parse_double(parts[2], &start) || !parse_double(parts[3], &stop))))
        return bl_fail(err, BL_ERR_INVALID, "--poisson '%s': expected RATE_HZ:INDICES.npy[:START_MS:STOP_MS]", spec);
    bl_npy_array idx;
    bl_status st = read_indices(parts[1], n_neurons, &idx, err);
    if (st)
        return st;
    st = bl_stimulus_add_poisson(stim, idx.data, idx.count, rate, start, stop, err);
    bl_npy_free(&idx);
    return st;
}

static bl_status write_outputs(const char *dir, const bl_result *r, bl_error *err)
{
    if (mkdir(dir, 0777) != 0)
        return bl_fail(err, errno == EEXIST ? BL_ERR_EXISTS : BL_ERR_IO, "%s: cannot create output "
                       "directory: %s", dir, strerror(errno));
    char path[4096];
    uint64_t ne = bl_result_n_events(r);
    uint64_t shape2[2] = {bl_result_n_trials(r), bl_result_n_neurons(r)};
    struct { const char *name; bl_dtype dt; int nd; const uint64_t *shape; const void *data; } files[] = {
        {"spikes_trial.npy", BL_DTYPE_INT32, 1, &ne, bl_result_event_trials(r)},
        {"spikes_step.npy", BL_DTYPE_INT32, 1, &ne, bl_result_event_steps(r)},
        {"spikes_neuron.npy", BL_DTYPE_INT32, 1, &ne, bl_result_event_neurons(r)},
        {"counts.npy", BL_DTYPE_INT32, 2, shape2, bl_result_counts(r)},
        {"v.npy", bl_result_state_dtype(r), 2, shape2, bl_result_final_v(r)},
        {"g.npy", bl_result_state_dtype(r), 2, shape2, bl_result_final_g(r)},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        static const int32_t none = 0;
        bl_status st = bl_npy_write(path, files[i].dt, files[i].nd, files[i].shape,
                                    files[i].data ? files[i].data : &none, err);
        if (st)
            return st;
    }
    return BL_OK;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CPU seconds of the whole process: on a busy machine wall time lies, this does not. */
static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Phase times for the benchmark's fresh worker processes: load (connectome;
 * with --plan the whole plan, whose model is parsed and checked there),
 * prepare (network and engine), compile (a model from equations: generated C
 * compiled or loaded from the cache; compile_s < 0: none), then each trial
 * separately, so that the first (cold) execution is never mixed with the
 * warm ones. codegen: the model's provenance JSON (may be NULL). With --bank,
 * trial_s holds trial 0 alone and the bank (trials 1.., one engine call) has
 * its own wall and CPU seconds: its trials ran side by side, so they have no
 * times of their own. */
typedef struct bank_time {
    unsigned long trials; /* 0: no bank */
    double wall_s, cpu_s;
} bank_time;

static void write_timing(const char *path, double load, double prepare, double compile, const char *codegen,
                         const double *trials, const double *trials_cpu, unsigned long n_trials,
                         const bank_time *bank, const bl_result *r, const char *backend, int threads)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fprintf(f, "{\"load_s\": %.9f, \"prepare_s\": %.9f, ", load, prepare);
    if (compile >= 0)
        fprintf(f, "\"compile_s\": %.9f, \"model_codegen\": %s, ", compile, codegen ? codegen : "null");
    fprintf(f, "\"trial_s\": [");
    for (unsigned long i = 0; i < n_trials; i++)
        fprintf(f, "%s%.9f", i ? ", " : "", trials[i]);
    fprintf(f, "], \"trial_cpu_s\": [");
    for (unsigned long i = 0; i < n_trials; i++)
        fprintf(f, "%s%.9f", i ? ", " : "", trials_cpu[i]);
    fprintf(f, "]");
    if (bank->trials)
        fprintf(f, ", \"bank_trials\": %lu, \"bank_first_trial\": %lu, \"bank_s\": %.9f, \"bank_cpu_s\": %.9f, "
                   "\"bank_s_per_trial\": %.9f",
                bank->trials, n_trials, bank->wall_s, bank->cpu_s, bank->wall_s / (double)bank->trials);
    fprintf(f, ", \"spikes\": %llu, \"steps\": %llu, \"backend\": \"%s\", \"threads\": %d, "
               "\"peak_rss_bytes\": %lld}\n",
            (unsigned long long)bl_result_n_events(r), (unsigned long long)bl_result_n_steps(r), backend,
            threads, (long long)ru.ru_maxrss * 1024);
    fclose(f);
}

int bl_cmd_simulate(int argc, char **argv)
{
    if (bl_cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return 0;
    }
    sim_args a;
    if (!parse_args(argc, argv, &a)) {
        fputs(usage_text, stderr);
        return 2;
    }
    bl_error err = {0};
    bl_connectome *c_own = NULL; /* loaded here (--connectome); with --plan the plan owns it */
    const bl_connectome *c = NULL;
    bl_plan *plan = NULL;
    bl_stimulus *stim = NULL;
    bl_network *net = NULL;
    bl_engine *eng = NULL;
    bl_result *res = NULL;
    bl_npy_array sil = {0}, tg = {0}, sched = {0};
    bl_lif_params params;
    memset(&params, 0, sizeof params);
    uint64_t steps = 0;
    double t0 = now(), t_load = 0, t_prep = 0, t_compile = -1;
    char *codegen = NULL;
    const char *backend = a.backend;
    /* The mpi backend under mpirun: each rank loads only its part of the
     * graph (the synapses into its own neurons). A rank that cannot load
     * ends the job, since the others would wait for it forever. */
    int rank = 0, ranks = 1, part = 0, parts = 1;
    bl_cli_context_setup("simulate", 0);
    bl_status st = BL_OK;
    if (a.plan) {
        /* The plan's backend decides whether this is an MPI job, so
         * without --backend the plan is read first (and, for an mpi plan,
         * read again below as this rank's part). */
        if (!backend) {
            st = bl_plan_load(a.plan, &plan, &err);
            if (!st)
                backend = bl_plan_backend(plan);
        }
        if (!st && backend && !strcmp(backend, "mpi")) {
            bl_plan_destroy(plan);
            plan = NULL;
            if (!(st = bl_mpi_job(NULL, &rank, &ranks, &err)))
                st = bl_mpi_job_replicas(NULL, a.replicas, &part, &parts, &err);
        } else if (!st && a.replicas != 1) {
            st = bl_fail(&err, BL_ERR_INVALID, "--replicas needs --backend mpi");
        }
        if (!st && !plan && (st = bl_plan_load_part(a.plan, part, parts, &plan, &err)) && ranks > 1)
            bl_cli_abort_job("simulate", &err); /* ends the job */
        if (!st) {
            if (!a.backend) /* the plan's, from the plan kept (an earlier one is gone) */
                backend = bl_plan_backend(plan);
            params = *bl_plan_lif_params(plan);
            c = bl_plan_connectome(plan);
            if (a.duration_ms < 0)
                a.duration_ms = bl_plan_duration_ms(plan);
            if (!a.trials_given)
                a.trials = bl_plan_trials(plan);
            if (!a.seed_given)
                a.seed = bl_plan_seed(plan);
            if (!a.threads_given)
                a.threads = bl_plan_threads(plan);
        }
    } else {
        st = bl_lif_params_preset(a.preset, &params, &err);
        for (int i = 0; !st && i < a.n_sets; i++) {
            const char *eq = strchr(a.sets[i], '=');
            double value;
            char key[128];
            if (!eq || (size_t)(eq - a.sets[i]) >= sizeof key || !parse_double(eq + 1, &value)) {
                st = bl_fail(&err, BL_ERR_INVALID, "--set '%s': expected NAME=NUMBER", a.sets[i]);
                break;
            }
            memcpy(key, a.sets[i], (size_t)(eq - a.sets[i]));
            key[eq - a.sets[i]] = '\0';
            st = bl_lif_params_set(&params, key, value, &err);
        }
        if (!st)
            st = bl_lif_params_validate(&params, &err);
        if (!st && backend && !strcmp(backend, "mpi") && !(st = bl_mpi_job(NULL, &rank, &ranks, &err)))
            st = bl_mpi_job_replicas(NULL, a.replicas, &part, &parts, &err);
        else if (!st && a.replicas != 1)
            st = bl_fail(&err, BL_ERR_INVALID, "--replicas needs --backend mpi");
        if (!st && (st = bl_connectome_load_part(a.connectome, part, parts, &c_own, &err)) && ranks > 1)
            bl_cli_abort_job("simulate", &err); /* ends the job */
        c = c_own;
    }
    double *trial_s = calloc(a.trials, sizeof *trial_s);
    double *trial_cpu = calloc(a.trials, sizeof *trial_cpu);
    if (!st && (!trial_s || !trial_cpu))
        st = bl_fail(&err, BL_ERR_NOMEM, "cannot allocate timings");
    if (!st)
        st = bl_lif_steps(&params, a.duration_ms, &steps, &err);
    t_load = now() - t0;
    if (!st)
        st = plan ? bl_plan_build_stimulus(plan, &stim, &err) : bl_stimulus_create(&stim, &err);
    for (int i = 0; !st && i < a.n_poisson; i++)
        st = add_poisson(stim, a.poisson[i], bl_connectome_n_neurons(c), &err);
    if (!st && a.schedule) {
        st = bl_npy_read_expect(a.schedule, BL_DTYPE_INT32, 2, &sched, &err);
        if (!st && sched.shape[1] != 2)
            st = bl_fail(&err, BL_ERR_INVALID, "%s: shape (%llu, %llu), expected (K, 2) rows of (step, neuron)",
                         a.schedule, (unsigned long long)sched.shape[0], (unsigned long long)sched.shape[1]);
        if (!st)
            st = bl_stimulus_add_events(stim, sched.data, sched.shape[0], &err);
        if (st && err.message[0] && !strstr(err.message, a.schedule))
            bl_fail_context(&err, "%s", a.schedule);
    }
    if (!st && a.targets && !(st = read_indices(a.targets, bl_connectome_n_neurons(c), &tg, &err)))
        st = bl_stimulus_set_targets(stim, tg.data, tg.count, &err);
    if (!st && a.silence)
        st = read_indices(a.silence, bl_connectome_n_neurons(c), &sil, &err);
    size_t n_sil = sil.count;
    const int32_t *silenced = sil.data;
    if (!st && plan)
        silenced = bl_plan_silenced(plan, &n_sil);
    if (!st)
        st = bl_network_create(c, &params, stim, silenced, n_sil, a.seed, &net, &err);
    if (!st)
        st = bl_engine_create(NULL, net, backend, &eng, &err);
    if (!st)
        st = bl_engine_set_threads(eng, a.threads, &err);
    if (!st)
        st = bl_result_create(net, 0, (uint32_t)a.trials, &res, &err);
    t_prep = now() - t0 - t_load;
    /* A model from equations: generated C, compiled or taken from the code
     * cache, after the prepare phase as `run` does, so that its cost (which
     * depends on the cache, not on the network) is reported apart. The plan
     * owns the model; choosing how it executes changes no result. */
    if (!st && params.equations) {
        bl_eq_model *m = (bl_eq_model *)(uintptr_t)params.equations;
        double tc = now();
        st = bl_eq_model_codegen(m, BL_EQ_EXEC_AUTO, &err);
        t_compile = now() - tc;
        if (!st && !(codegen = bl_eq_model_codegen_json(m)))
            st = bl_fail(&err, BL_ERR_NOMEM, "cannot describe the generated code");
    }
    /* With --timing each trial is its own engine call, so per-trial times are
     * real; otherwise all trials go in one call so backends may batch them.
     * --bank: trial 0 alone (the cold one), then the rest in one call, timed
     * as a whole (the benchmark's trial-parallel measurement). */
    bank_time bank = {0, 0, 0};
    unsigned long timed_trials = a.bank ? 1 : a.trials;
    if (!st && a.timing) {
        for (unsigned long t = 0; !st && t < timed_trials; t++) {
            double ts = now(), tc = cpu_now();
            st = bl_engine_run(eng, (uint32_t)t, 1, steps, res, &err);
            trial_s[t] = now() - ts;
            trial_cpu[t] = cpu_now() - tc;
        }
        if (!st && a.bank) {
            double ts = now(), tc = cpu_now();
            st = bl_engine_run(eng, 1, (uint32_t)(a.trials - 1), steps, res, &err);
            bank.wall_s = now() - ts;
            bank.cpu_s = cpu_now() - tc;
            bank.trials = a.trials - 1;
        }
    } else if (!st) {
        st = bl_engine_run(eng, 0, (uint32_t)a.trials, steps, res, &err);
    }
    /* The mpi backend: every rank holds the same whole result; one writer
     * (rank 0, from bl_mpi_job above), unless each rank is to write its own copy. */
    char out_rank[4200];
    snprintf(out_rank, sizeof out_rank, "%s.rank%d", a.out, rank);
    if (!st && a.timing && rank == 0)
        write_timing(a.timing, t_load, t_prep, t_compile, codegen, trial_s, trial_cpu, timed_trials, &bank, res,
                     bl_engine_backend(eng), bl_engine_threads(eng));
    if (!st && (rank == 0 || a.out_every_rank))
        st = write_outputs(a.out_every_rank && !strcmp(bl_engine_backend(eng), "mpi") ? out_rank : a.out, res,
                           &err);
    if (!st && rank == 0)
        printf("simulate: %s, %s backend, %lu trial(s) x %llu steps, %llu spikes\n",
               plan ? bl_plan_id(plan) : a.preset, bl_engine_backend(eng), a.trials, (unsigned long long)steps,
               (unsigned long long)bl_result_n_events(res));
    bl_result_destroy(res);
    bl_engine_destroy(eng);
    bl_network_destroy(net);
    bl_stimulus_destroy(stim);
    bl_connectome_destroy(c_own);
    bl_plan_destroy(plan);
    bl_npy_free(&sil);
    bl_npy_free(&tg);
    bl_npy_free(&sched);
    free(codegen);
    free(trial_s);
    free(trial_cpu);
    return st ? bl_cli_report("simulate", &err) : 0;
}
