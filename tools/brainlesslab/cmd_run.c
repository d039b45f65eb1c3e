/* brainlesslab run PLAN --root DIR: resolve the plan, run it into a new
 * sealed record by its operation's row (bl_run_plan), print its summary.
 * Nothing here depends on which operation the plan is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "brainlesslab/engine.h"
#include "brainlesslab/experiment.h"
#include "brainlesslab/mpi.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/record.h"
#include "cli.h"

static const char usage_text[] =
    "usage: brainlesslab run PLAN.toml --root DIR [--backend NAME] [--threads N] [--replicas K] [--quiet]\n"
    "                        [--sign-key KEY.pem] [--force] [--resume RECORD] [--checkpoint-every DUR]\n"
    "                        [--blocks N] [--trials N] [--rng SCHEME] [--calibration RECORD]\n"
    "Resolves PLAN, runs it and writes a new sealed record under DIR (never reusing one):\n"
    "manifest.json, checksums.sha256 (sha256sum -c), DONE or FAILED, plan.toml, run.log, and\n"
    "for a connectome run: spikes/trial-NNNN.h5 (SONATA, one file per trial, streamed as the\n"
    "run goes), counts.npy, rates.csv, rates_{mean,sd}_hz.npy, final_v/g.npy,\n"
    "depth_from_stimulus.npy, propagation.json, summary.json (and psth.npy, probes_v/g.npy when\n"
    "asked for); a screen: conditions.csv/json, counts.npy, rates_mean_hz.npy, final_v/g.npy;\n"
    "an audit: audit.json, layers.csv, layer_edges.npy (docs/experiments.md).\n"
    "Progress goes to stderr when it is a terminal. Check a record with `brainlesslab verify`.\n"
    "Under mpirun the ranks split the neurons, each holding only its part of the connectome;\n"
    "--replicas K splits them into K groups that share out the trials (K divides the ranks).\n"
    "--sign-key KEY signs the record with an Ed25519 key (brainlesslab keygen); check it with\n"
    "`brainlesslab verify --key KEY.pub`. A plan whose estimate (see `check`) exceeds this\n"
    "machine's memory or the root's free disk is refused unless --force is given.\n"
    "SIGINT, SIGTERM and SIGHUP mark the record FAILED, naming the signal.\n"
    "--resume RECORD finishes a connectome or reservoir run that was killed (RECORD still\n"
    ".RESERVED) or sealed FAILED, in the same record: PLAN must be the one it ran (plan hash,\n"
    "plan file bytes); a connectome run resumes with the same backend, threads and ranks. The\n"
    "trials (reservoir: batches) its checkpoint holds are checked against their SHA-256 and\n"
    "kept, the others run; the sealed record is byte for byte an uninterrupted run's but for\n"
    "timings, run.log and the manifest's \"resumed\" section (docs/reliability.md, Durable\n"
    "runs). --root defaults to RECORD's directory.\n"
    "--checkpoint-every DUR (connectome runs; cpu, or mpi one trial at a time): a checkpoint\n"
    "within each trial every DUR of simulated time (e.g. 500ms, 2s; rounded up to whole delay\n"
    "windows; default 1s, at most one per 10 s of wall time; 'off': after each trial only), so\n"
    "that a resume continues a long trial where it was.\n"
    "Reservoir plans (profile, sweep, ablate, benchmark, calibrate; docs/reservoir.md):\n"
    "  --blocks N / --trials N  run fewer (or more) blocks / trials per block than written (recorded)\n"
    "  --rng SCHEME             run on another seed scheme than written (recorded): bl-philox-v1\n"
    "                           (this build's Philox counter streams) or philox-host-v1 (the Python\n"
    "                           project's NumPy generators; plans naming it run as written)\n"
    "  --calibration RECORD     normalise continuing-task scores by a calibrate record's null mean\n"
    "  records hold trials.csv, outcomes.npy, summary.json (calibrate: calibration.json).\n";

int bl_cmd_run(int argc, char **argv)
{
    if (bl_cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return 0;
    }
    const char *resume = NULL;
    const char *plan_path = NULL, *root = NULL, *backend = NULL, *sign_key = NULL, *rng = NULL, *calibration = NULL;
    int threads = -1, quiet = 0, replicas = 1, force = 0;
    double checkpoint_ms = 0.0;
    long blocks = 0, trials = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quiet")) {
            quiet = 1;
        } else if (!strcmp(argv[i], "--force")) {
            force = 1;
        } else if (!strcmp(argv[i], "--sign-key")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "brainlesslab run: --sign-key needs a value\n%s", usage_text);
                return 2;
            }
            sign_key = argv[++i];
        } else if (!strcmp(argv[i], "--checkpoint-every")) {
            /* DUR: a number of ms or s of simulated time, or "off". */
            const char *v = i + 1 < argc ? argv[++i] : NULL;
            char *end = NULL;
            double x = v ? strtod(v, &end) : 0.0;
            if (v && !strcmp(v, "off")) {
                checkpoint_ms = -1.0;
            } else if (v && end != v && x > 0 && x <= 1e12 && (!strcmp(end, "ms") || !strcmp(end, "s"))) {
                checkpoint_ms = !strcmp(end, "s") ? x * 1000.0 : x;
            } else {
                fprintf(stderr, "brainlesslab run: --checkpoint-every '%s' is not a duration such as 500ms or 2s (or "
                        "off)\n", v ? v : "");
                return 2;
            }
        } else if (!strcmp(argv[i], "--root") || !strcmp(argv[i], "--backend") || !strcmp(argv[i], "--threads") ||
                   !strcmp(argv[i], "--replicas") || !strcmp(argv[i], "--blocks") || !strcmp(argv[i], "--trials") ||
                   !strcmp(argv[i], "--rng") || !strcmp(argv[i], "--calibration") || !strcmp(argv[i], "--resume")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "brainlesslab run: %s needs a value\n%s", argv[i], usage_text);
                return 2;
            }
            const char *v = argv[++i];
            if (!strcmp(argv[i - 1], "--root"))
                root = v;
            else if (!strcmp(argv[i - 1], "--resume"))
                resume = v;
            else if (!strcmp(argv[i - 1], "--rng"))
                rng = v;
            else if (!strcmp(argv[i - 1], "--calibration"))
                calibration = v;
            else if (!strcmp(argv[i - 1], "--blocks") || !strcmp(argv[i - 1], "--trials")) {
                char *end;
                long k = strtol(v, &end, 10);
                if (*end || k < 1 || k > 100000) {
                    fprintf(stderr, "brainlesslab run: %s '%s' is not in 1..100000\n", argv[i - 1], v);
                    return 2;
                }
                *(!strcmp(argv[i - 1], "--blocks") ? &blocks : &trials) = k;
            }
            else if (!strcmp(argv[i - 1], "--backend"))
                backend = v;
            else if (!strcmp(argv[i - 1], "--replicas")) {
                char *end;
                long k = strtol(v, &end, 10);
                if (*end || k < 1 || k > 1 << 20) {
                    fprintf(stderr, "brainlesslab run: --replicas '%s' is not a positive count\n", v);
                    return 2;
                }
                replicas = (int)k;
            } else {
                char *end;
                long t = strtol(v, &end, 10);
                if (*end || t < 0 || t > 4096) {
                    fprintf(stderr, "brainlesslab run: --threads '%s' is not in 0..4096\n", v);
                    return 2;
                }
                threads = (int)t;
            }
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            return bl_cli_unknown_option("run", argv[i], usage_text);
        } else if (argv[i][0] == '-' || plan_path) {
            fprintf(stderr, "brainlesslab run: unexpected argument '%s'\n%s", argv[i], usage_text);
            return 2;
        } else {
            plan_path = argv[i];
        }
    }
    /* A resumed run's record lies under its root already. */
    static char resume_root[4096];
    if (resume && !root) {
        snprintf(resume_root, sizeof resume_root, "%s", resume);
        size_t len = strlen(resume_root);
        while (len > 1 && resume_root[len - 1] == '/')
            resume_root[--len] = '\0';
        char *slash = strrchr(resume_root, '/');
        if (slash == resume_root)
            slash[1] = '\0';
        else if (slash)
            *slash = '\0';
        else
            snprintf(resume_root, sizeof resume_root, ".");
        root = resume_root;
    }
    if (!plan_path || !root) {
        fprintf(stderr, "brainlesslab run: PLAN and --root are required\n%s", usage_text);
        return 2;
    }
    char known[256];
    if (backend && !bl_backend_known(backend, known, sizeof known)) { /* a usage error: nothing is reserved */
        fprintf(stderr, "brainlesslab run: --backend '%s' is not a backend of this build (known: %s)\n", backend,
                known);
        return 2;
    }
    bl_error err = {0};
    bl_plan *plan = NULL;
    /* Under mpirun each rank loads only its part of the connectome (the
     * synapses into its own neurons). A rank that cannot load ends the job:
     * the others would wait for it forever. */
    int rank = 0, ranks = 1, part = 0, parts = 1;
    bl_cli_context_setup("run", !quiet && isatty(STDERR_FILENO));
    if (bl_mpi_job(NULL, &rank, &ranks, &err) || bl_mpi_job_replicas(NULL, replicas, &part, &parts, &err))
        return bl_cli_report("run", &err);
    /* The signing key before the plan and any record: a missing file, a
     * directory, a .pub or a truncated key ends here (issue 26). */
    if (sign_key && rank == 0) {
        char warning[512];
        if (bl_record_check_sign_key(sign_key, warning, sizeof warning, &err))
            return ranks > 1 ? bl_cli_abort_job("run", &err) : bl_cli_report("run", &err);
        if (warning[0])
            fprintf(stderr, "brainlesslab run: warning: %s\n", warning);
    }
    if (bl_plan_load_part(plan_path, part, parts, &plan, &err))
        return ranks > 1 ? bl_cli_abort_job("run", &err) : bl_cli_report("run", &err);
    /* Every operation takes the same options; the plan's row says which of
     * them it does not take (usage errors, exit status 2). */
    bl_experiment_options opt = {.root = root, .backend = backend, .threads = threads, .context = NULL,
                                 .guard_signals = 1, .sign_key = sign_key, .force = force,
                                 .blocks = (uint32_t)blocks, .trials = (uint32_t)trials, .rng = rng,
                                 .calibration = calibration, .resume = resume, .checkpoint_every_ms = checkpoint_ms};
    unsigned refused = bl_run_refused(plan, &opt);
    if (refused) {
        if (refused & BL_RUN_REFUSED_RESERVOIR)
            fprintf(stderr, "brainlesslab run: --blocks, --trials, --rng and --calibration apply to reservoir plans only\n");
        else if (refused & BL_RUN_REFUSED_RESUME)
            fprintf(stderr, "brainlesslab run: --resume applies to connectome and reservoir plans only\n");
        else if (refused & BL_RUN_REFUSED_WITHIN)
            fprintf(stderr, "brainlesslab run: --checkpoint-every applies to connectome plans only\n");
        else if (refused & BL_RUN_REFUSED_BACKEND)
            fprintf(stderr, "brainlesslab run: --backend applies to connectome plans only\n");
        else
            fprintf(stderr, "brainlesslab run: a %s runs in one process, not under mpirun\n", bl_plan_operation(plan));
        bl_plan_destroy(plan);
        return 2;
    }
    bl_cli_progress_trial_seconds(bl_plan_duration_ms(plan) / 1000.0);
    /* Refused unless --force when the plan's operation checks its estimate. */
    if (bl_run_plan_fits(plan, &opt, &err)) {
        bl_plan_destroy(plan);
        return ranks > 1 ? bl_cli_abort_job("run", &err) : bl_cli_report("run", &err);
    }
    bl_run *run = NULL;
    bl_status st = bl_run_plan(plan, &opt, &run, &err);
    if (!st && !quiet)
        bl_run_print(run, stdout);
    else if (!st && rank == 0) /* an MPI job: rank 0 speaks for it */
        printf("%s\n", bl_run_record_dir(run));
    bl_run_destroy(run);
    bl_plan_destroy(plan);
    return st ? bl_cli_report("run", &err) : 0;
}
