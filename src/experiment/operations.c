/* The operations table: one row per operation a plan may name, and the one
 * entry point that runs any plan (bl_run_plan). Everything that depends on
 * which operation a plan is lives in these rows; nothing outside them names
 * an operation (docs/architecture.md, "Adding an operation").
 *
 * A row (src/plan/plan_op.h) names how its section is loaded and validated,
 * rendered as canonical JSON (the plan hash), estimated, run, what its run
 * result prints, and which artifacts its record always holds. Its plan-layer
 * slots are plan/ functions; its run slots are this layer's runners. The
 * table lives here, above both, so that data flows plan -> experiment and no
 * room imports one above it: plan/ is handed the rows (bl_pk_load) and never
 * names one.
 *
 * Rows beyond the table come with one load (bl_plan_load_options), never
 * through process-wide state: the plan keeps its row, and bl_run_plan runs
 * whatever row loaded the plan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/engine.h"
#include "brainlesslab/experiment.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/task.h"
#include "experiment/solvers_run.h"
#include "experiment/xp_impl.h"
#include "mpi/mpi_job.h"
#include "plan/plan_op.h"
#include "plan/plan_flyvis.h"
#include "plan/plan_reservoir.h"
#include "plan/plan_solvers.h"

/* ---- run slots: the runners of experiment.h and task.h, one shape ---- */

static bl_status run_connectome(bl_plan *plan, const bl_experiment_options *opt, void **out, bl_error *err)
{
    return bl_experiment_run(plan, opt, (bl_experiment **)out, err);
}
static const char *dir_connectome(const void *r) { return bl_experiment_record_dir(r); }
static void print_connectome(const void *r, FILE *f) { bl_experiment_print(r, f); }
static void destroy_connectome(void *r) { bl_experiment_destroy(r); }

static bl_status run_audit(bl_plan *plan, const bl_experiment_options *opt, void **out, bl_error *err)
{
    return bl_audit_run(plan, opt, (bl_audit **)out, err);
}
static const char *dir_audit(const void *r) { return bl_audit_record_dir(r); }
static void print_audit(const void *r, FILE *f) { bl_audit_print(r, f); }
static void destroy_audit(void *r) { bl_audit_destroy(r); }

static bl_status run_screen(bl_plan *plan, const bl_experiment_options *opt, void **out, bl_error *err)
{
    return bl_screen_run(plan, opt, (bl_screen **)out, err);
}
static const char *dir_screen(const void *r) { return bl_screen_record_dir(r); }
static void print_screen(const void *r, FILE *f) { bl_screen_print(r, f); }
static void destroy_screen(void *r) { bl_screen_destroy(r); }

/* Reservoir operations: blocks, trials and rng shorten or reseed the plan
 * before the run; the resolved plan (and its hash) then say so. */
static bl_status run_reservoir(bl_plan *plan, const bl_experiment_options *opt, void **out, bl_error *err)
{
    bl_res_plan *rp = bl_plan_reservoir_mut(plan);
    bl_status st = BL_OK;
    if (opt->blocks || opt->trials || opt->rng)
        st = bl_res_plan_override(rp, opt->blocks, opt->trials, opt->rng, err);
    return st ? st : bl_res_run_plan(rp, opt, (bl_res_run **)out, err);
}
static const char *dir_reservoir(const void *r) { return bl_res_run_record_dir(r); }
static void print_reservoir(const void *r, FILE *f) { bl_res_run_print(r, f); }
static void destroy_reservoir(void *r) { bl_res_run_destroy(r); }

/* ---- the table ---- */

static const char *const connectome_artifacts[] = {"plan.toml", "summary.json", NULL};
static const char *const audit_artifacts[] = {"plan.toml", "audit.json", NULL};
static const char *const screen_artifacts[] = {"plan.toml", "conditions.csv", "conditions.json", "summary.json", NULL};
static const char *const reservoir_artifacts[] = {"trials.csv", "outcomes.npy", "summary.json", NULL};
static const char *const ode_artifacts[] = {"t.npy", "y.npy", "summary.json", NULL};
static const char *const ssa_artifacts[] = {"t.npy", "counts.npy", "events.npy", "summary.json", NULL};
static const char *const flyvis_artifacts[] = {"t.npy", "responses.npy", "summary.json", NULL};
static const char *const calibrate_artifacts[] = {"trials.csv", "outcomes.npy", "summary.json", "calibration.json",
                                                  NULL};

#define NETWORK_ROW(NAME, LOAD, FLAGS, TAKES, RUN, ART, FREE)                                                    \
    {                                                                                                          \
        .name = NAME, .flags = BL_OP_SPEC_NETWORK | (FLAGS), .takes = (TAKES), .load = LOAD, .free_spec = FREE, \
        .render = bl_pk_op_render_network, .estimate = bl_pk_op_estimate_network, .run = run_##RUN,            \
        .record_dir = dir_##RUN, .print = print_##RUN, .destroy = destroy_##RUN, .artifacts = ART              \
    }
#define RESERVOIR_ROW(NAME, VARIANT, ART)                                                                      \
    {                                                                                                          \
        .name = NAME, .variant = VARIANT, .flags = BL_OP_SPEC_RESERVOIR | BL_OP_FIT_BEFORE_RUN,               \
        .takes = BL_OP_TAKES_RESERVOIR | BL_OP_TAKES_MPI | BL_OP_TAKES_RESUME, .load = bl_pk_op_load_reservoir, \
        .free_spec = bl_pk_op_free_reservoir, .render = bl_pk_op_render_reservoir,                             \
        .estimate = bl_pk_op_estimate_reservoir, .run = run_reservoir, .record_dir = dir_reservoir,           \
        .print = print_reservoir, .destroy = destroy_reservoir, .artifacts = ART                               \
    }

/* The order is the one "unknown operation" lists. */
static const bl_operation rows[] = {
    /* A connectome LIF experiment; only it checks its estimate before a run
     * (an audit simulates nothing, a screen's runs are estimated one by one). */
    NETWORK_ROW("connectome", bl_pk_op_load_connectome, BL_OP_FIT_BEFORE_RUN | BL_OP_RECORD_SPIKES,
                BL_OP_TAKES_BACKEND | BL_OP_TAKES_MPI | BL_OP_TAKES_RESUME | BL_OP_TAKES_WITHIN, connectome,
                connectome_artifacts, NULL),
    NETWORK_ROW("audit", bl_pk_op_load_audit, BL_OP_SPEC_AUDIT, BL_OP_TAKES_BACKEND | BL_OP_TAKES_MPI, audit,
                audit_artifacts, bl_pk_op_free_audit),
    /* Conditions run side by side in one process. */
    NETWORK_ROW("screen", bl_pk_op_load_screen, BL_OP_SPEC_SCREEN | BL_OP_RECORD_CONDITIONS, BL_OP_TAKES_BACKEND,
                screen, screen_artifacts, bl_pk_op_free_screen),
    RESERVOIR_ROW("profile", BL_OP_PROFILE, reservoir_artifacts),
    RESERVOIR_ROW("sweep", BL_OP_SWEEP, reservoir_artifacts),
    RESERVOIR_ROW("ablate", BL_OP_ABLATE, reservoir_artifacts),
    RESERVOIR_ROW("benchmark", BL_OP_BENCHMARK, reservoir_artifacts),
    RESERVOIR_ROW("calibrate", BL_OP_CALIBRATE, calibrate_artifacts),
    /* The solver operations (docs/solvers.md): plan_ode.c / plan_ssa.c, ode_run.c / ssa_run.c. */
    {.name = "ode", .load = bl_pk_op_load_ode, .free_spec = bl_pk_op_free_ode, .render = bl_pk_op_render_ode,
     .estimate = bl_pk_op_estimate_ode, .run = bl_xp_ode_run, .record_dir = bl_xp_solver_record_dir,
     .print = bl_xp_solver_print, .destroy = bl_xp_solver_destroy, .artifacts = ode_artifacts},
    /* An ssa bank splits its replicates over MPI ranks (ssa_run.c). */
    {.name = "ssa", .takes = BL_OP_TAKES_MPI, .load = bl_pk_op_load_ssa, .free_spec = bl_pk_op_free_ssa, .render = bl_pk_op_render_ssa,
     .estimate = bl_pk_op_estimate_ssa, .run = bl_xp_ssa_run, .record_dir = bl_xp_solver_record_dir,
     .print = bl_xp_solver_print, .destroy = bl_xp_solver_destroy, .artifacts = ssa_artifacts},
    /* The flyvis connectome application (docs/solvers.md): plan_flyvis.c, flyvis_run.c. */
    {.name = "flyvis", .flags = BL_OP_FIT_BEFORE_RUN, .load = bl_pk_op_load_flyvis, .free_spec = bl_pk_op_free_flyvis,
     .render = bl_pk_op_render_flyvis, .estimate = bl_pk_op_estimate_flyvis, .run = bl_xp_flyvis_run,
     .record_dir = bl_xp_solver_record_dir, .print = bl_xp_solver_print, .destroy = bl_xp_solver_destroy,
     .artifacts = flyvis_artifacts},
};
#define N_ROWS (sizeof rows / sizeof *rows)

const bl_operation *bl_xp_operation(const char *name)
{
    for (size_t i = 0; name && i < N_ROWS; i++)
        if (!strcmp(rows[i].name, name))
            return &rows[i];
    return NULL;
}

/* ---- loading ---- */

bl_status bl_plan_load_with(const char *path, const bl_plan_load_options *options, bl_plan **out, bl_error *err)
{
    *out = NULL;
    const bl_plan_load_options none = {0};
    const bl_plan_load_options *o = options ? options : &none;
    if (o->n_operations > 1024 || (o->n_operations && !o->operations))
        return bl_fail(err, BL_ERR_INVALID, "%s: %zu extra operations without a list of them (at most 1024)", path,
                       o->n_operations);
    size_t n = N_ROWS + o->n_operations;
    const bl_operation **all = malloc(n * sizeof *all);
    if (!all)
        return bl_fail(err, BL_ERR_NOMEM, "cannot list the operations");
    for (size_t i = 0; i < N_ROWS; i++)
        all[i] = &rows[i];
    for (size_t i = 0; i < o->n_operations; i++) {
        const bl_operation *r = o->operations[i];
        if (!r || !r->name || !r->load || !r->render || !r->run || !r->record_dir || !r->destroy) {
            free(all);
            return bl_fail(err, BL_ERR_INVALID,
                           "%s: extra operation %zu (%s) lacks one of name, load, render, run, record_dir, destroy",
                           path, i, r && r->name ? r->name : "unnamed");
        }
        all[N_ROWS + i] = r;
    }
    bl_status st = bl_pk_load(path, o->parts > 1 ? o->part : 0, o->parts > 1 ? o->parts : 1, all, n, out, err);
    free(all);
    return st;
}

bl_status bl_plan_load(const char *path, bl_plan **out, bl_error *err)
{
    return bl_plan_load_with(path, NULL, out, err);
}

bl_status bl_plan_load_part(const char *path, int part, int parts, bl_plan **out, bl_error *err)
{
    *out = NULL;
    if (parts < 1 || part < 0 || part >= parts)
        return bl_fail(err, BL_ERR_INVALID, "%s: part %d of %d does not exist", path, part, parts);
    bl_plan_load_options o = {.part = part, .parts = parts};
    return bl_plan_load_with(path, &o, out, err);
}

/* A reservoir plan on its own (task.h): the same loading, then the plan's
 * reservoir section taken out of it. */
bl_status bl_res_plan_load(const char *path, bl_res_plan **out, bl_error *err)
{
    *out = NULL;
    bl_plan *plan = NULL;
    bl_status st = bl_plan_load(path, &plan, err);
    if (st)
        return st;
    *out = bl_pk_take_reservoir(plan);
    if (!*out)
        st = bl_fail(err, BL_ERR_UNSUPPORTED, "%s: operation: \"%s\" is not a reservoir operation (profile, sweep, "
                     "ablate, benchmark, calibrate)", path, bl_plan_operation(plan));
    bl_plan_destroy(plan);
    return st;
}

/* ---- running ---- */

struct bl_run {
    const bl_operation *op;
    void *result;
};

unsigned bl_run_refused(const bl_plan *plan, const bl_experiment_options *o)
{
    const bl_operation *op = bl_pk_row(plan);
    unsigned refused = 0;
    if ((o->blocks || o->trials || o->rng || o->calibration) && !(op->takes & BL_OP_TAKES_RESERVOIR))
        refused |= BL_RUN_REFUSED_RESERVOIR;
    if (o->backend && !(op->takes & BL_OP_TAKES_BACKEND))
        refused |= BL_RUN_REFUSED_BACKEND;
    if (bl_mpi_job_ranks(o->context) > 1 && !(op->takes & BL_OP_TAKES_MPI))
        refused |= BL_RUN_REFUSED_MPI;
    if (o->resume && !(op->takes & BL_OP_TAKES_RESUME))
        refused |= BL_RUN_REFUSED_RESUME;
    if (o->checkpoint_every_ms != 0 && !(op->takes & BL_OP_TAKES_WITHIN))
        refused |= BL_RUN_REFUSED_WITHIN;
    return refused;
}

bl_status bl_run_plan_fits(const bl_plan *plan, const bl_experiment_options *o, bl_error *err)
{
    if (o->force || !(bl_pk_row(plan)->flags & BL_OP_FIT_BEFORE_RUN))
        return BL_OK;
    return bl_plan_fits_machine(plan, o->root, err);
}

bl_status bl_run_plan(bl_plan *plan, const bl_experiment_options *o, bl_run **out, bl_error *err)
{
    *out = NULL;
    if (!o || !o->root)
        return bl_fail(err, BL_ERR_INVALID, "%s: a record root is required", bl_plan_path(plan));
    const bl_operation *op = bl_pk_row(plan);
    unsigned refused = bl_run_refused(plan, o);
    if (refused & BL_RUN_REFUSED_RESERVOIR)
        return bl_fail(err, BL_ERR_INVALID, "blocks, trials, rng and calibration apply to reservoir plans only");
    if (refused & BL_RUN_REFUSED_BACKEND)
        return bl_fail(err, BL_ERR_INVALID, "backend applies to connectome plans only");
    if (refused & BL_RUN_REFUSED_MPI)
        return bl_fail(err, BL_ERR_INVALID, "a %s runs in one process, not under mpirun", op->name);
    if (refused & BL_RUN_REFUSED_RESUME)
        return bl_fail(err, BL_ERR_INVALID, "resume applies to connectome and reservoir plans only");
    if (refused & BL_RUN_REFUSED_WITHIN)
        return bl_fail(err, BL_ERR_INVALID, "checkpoints within a trial (checkpoint_every_ms) apply to connectome "
                       "plans only");
    if (o->blocks > 100000 || o->trials > 100000)
        return bl_fail(err, BL_ERR_INVALID, "blocks %u, trials %u: each must be in 1..100000 (0: as written)",
                       o->blocks, o->trials);
    char known[256];
    if (o->backend && !bl_backend_known(o->backend, known, sizeof known)) /* before a record is reserved */
        return bl_fail(err, BL_ERR_INVALID, "unknown backend \"%s\" (known: %s)", o->backend, known);
    bl_status st = bl_run_plan_fits(plan, o, err);
    if (st)
        return st;
    bl_run *run = calloc(1, sizeof *run);
    if (!run)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate a run");
    run->op = op;
    st = op->run(plan, o, &run->result, err);
    if (st) {
        free(run);
        return st;
    }
    *out = run;
    return BL_OK;
}

void bl_run_destroy(bl_run *run)
{
    if (!run)
        return;
    run->op->destroy(run->result);
    free(run);
}

const char *bl_run_record_dir(const bl_run *run) { return run->op->record_dir(run->result); }
const char *bl_run_operation(const bl_run *run) { return run->op->name; }

void bl_run_print(const bl_run *run, FILE *out)
{
    if (run->op->print)
        run->op->print(run->result, out);
    else
        fprintf(out, "%s: record %s\n", run->op->name, bl_run_record_dir(run));
}
