/* The operations table's seam: a toy operation defined here, in one row
 * (load + validate its [toy] section, render its canonical JSON, estimate,
 * run into a sealed record), is handed to one load through
 * bl_plan_load_options and goes through check (load, render, hash,
 * estimate), run (bl_run_plan) and verify (the sealed record verifies), with
 * no change to the library. Also: the row is seen only by the load it was
 * given to (nothing is registered process-wide), its name is listed when an
 * operation is unknown, the options it does not take are refused, and the
 * built-in rows are found first. And the one options struct of every run:
 * a reservoir plan's progress and cancellation go through the context. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/context.h"
#include "brainlesslab/experiment.h"
#include "brainlesslab/hash.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/record.h"
#include "experiment/xp_impl.h"
#include "plan/plan_cjson.h"
#include "plan/plan_op.h"
#include "test_support.h"

BL_TEST_TMPDIR_GROUP("oprow")

/* ---- the toy operation: `[toy] count = N, label = "..."`; its run writes
 * toy.json with the first N squares ---- */

typedef struct toy_spec {
    int64_t count;
    char label[64];
} toy_spec;

static bl_status toy_load(const bl_operation *op, const bl_pk_ctx *ctx, const bl_toml_node *root,
                          const char *plan_dir, bl_plan *plan)
{
    (void)op;
    (void)plan_dir;
    static const char *const top[] = {"format", "format_version", "id", "operation", "description", "toy", NULL};
    static const char *const keys[] = {"count", "label", NULL};
    const bl_toml_node *toy = NULL;
    const char *label = "toy";
    toy_spec *spec = calloc(1, sizeof *spec);
    if (!spec)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "toy spec");
    plan->spec = spec; /* owned by the plan from here: free_spec frees it */
    bl_status st;
    if ((st = bl_pk_check_keys(ctx, root, "", top)) || (st = bl_pk_table(ctx, root, "", "toy", 1, &toy)) ||
        (st = bl_pk_check_keys(ctx, toy, "toy", keys)) ||
        (st = bl_pk_int(ctx, toy, "toy", "count", 1, 1, 1000, &spec->count, NULL)) ||
        (st = bl_pk_string(ctx, toy, "toy", "label", 0, &label, NULL)))
        return st;
    snprintf(spec->label, sizeof spec->label, "%s", label);
    return BL_OK;
}

static void toy_free(bl_plan *plan) { free(bl_pk_spec(plan)); }

static char *toy_render(const bl_plan *plan, int pretty, int full)
{
    (void)full;
    const toy_spec *spec = bl_pk_spec(plan);
    bl_cj b = {1};
    cJSON *root = bl_cj_check(&b, cJSON_CreateObject());
    bl_cj_str(&b, root, "format", BL_PLAN_FORMAT);
    bl_cj_int(&b, root, "format_version", BL_PLAN_FORMAT_VERSION);
    bl_cj_str(&b, root, "id", bl_plan_id(plan));
    bl_cj_str(&b, root, "operation", bl_plan_operation(plan));
    cJSON *toy = bl_cj_obj(&b, root, "toy");
    bl_cj_int(&b, toy, "count", spec->count);
    bl_cj_str(&b, toy, "label", spec->label);
    return bl_cj_finish(&b, root, pretty);
}

static void toy_estimate(const bl_plan *plan, bl_plan_estimate_t *e)
{
    const toy_spec *spec = bl_pk_spec(plan);
    e->memory_bytes = 8.0 * (double)spec->count;
    e->disk_bytes = 4096.0 + 24.0 * (double)spec->count;
    e->seconds_one_core = 1e-9 * (double)spec->count;
}

typedef struct toy_result {
    char dir[4096];
    int64_t count;
} toy_result;

static const char *const toy_artifacts[] = {"toy.json", NULL};

static bl_status toy_run(bl_plan *plan, const bl_experiment_options *opt, void **out, bl_error *err)
{
    const toy_spec *spec = bl_pk_spec(plan);
    toy_result *r = calloc(1, sizeof *r);
    if (!r)
        return bl_fail(err, BL_ERR_NOMEM, "toy result");
    bl_record *rec = NULL;
    bl_status st = bl_xp_reserve(plan, opt->root, &rec, err);
    if (st) {
        free(r);
        return st;
    }
    snprintf(r->dir, sizeof r->dir, "%s", bl_record_dir(rec));
    r->count = spec->count;
    st = bl_xp_protect(rec, opt, 0, err);
    for (size_t i = 0; !st && i < bl_plan_n_inputs(plan); i++) {
        const bl_plan_input *in = bl_plan_input_at(plan, i);
        st = bl_record_add_input_digest(rec, in->role, in->path, in->sha256, in->bytes, err);
    }
    /* The row's artifacts are promised: a DONE record without one is refused. */
    if (!st)
        st = bl_record_bind(rec, bl_plan_hash(plan), toy_artifacts, 1, err);
    if (!st)
        st = bl_record_set_json(rec, "plan", bl_plan_resolved_json(plan), err);
    if (!st) {
        cJSON *o = cJSON_CreateObject();
        cJSON *sq = cJSON_AddArrayToObject(o, "squares");
        for (int64_t k = 0; k < spec->count; k++)
            cJSON_AddItemToArray(sq, cJSON_CreateNumber((double)(k * k)));
        cJSON_AddStringToObject(o, "label", spec->label);
        st = bl_xp_write_json(rec, "toy.json", o, err);
    }
    st = bl_xp_end(rec, NULL, st, err);
    bl_record_destroy(rec);
    if (st) {
        free(r);
        return st;
    }
    *out = r;
    return BL_OK;
}

static const char *toy_dir(const void *r) { return ((const toy_result *)r)->dir; }
static void toy_print(const void *r, FILE *f)
{
    fprintf(f, "toy: %" PRId64 " squares; record: %s\n", ((const toy_result *)r)->count, toy_dir(r));
}
static void toy_destroy(void *r) { free(r); }

/* The one row. */
static const bl_operation toy_row = {
    .name = "toy", .load = toy_load, .free_spec = toy_free, .render = toy_render, .estimate = toy_estimate,
    .run = toy_run, .record_dir = toy_dir, .print = toy_print, .destroy = toy_destroy, .artifacts = toy_artifacts,
};
static const bl_operation *const extra[] = {&toy_row};
static const bl_plan_load_options with_toy = {.operations = extra, .n_operations = 1};

static const char *write_plan(const char *name, const char *text)
{
    const char *path = tmp_path(name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static const char toy_plan[] = "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"toy-1\"\n"
                               "operation = \"toy\"\n[toy]\ncount = 5\nlabel = \"five\"\n";

/* check: load, render, hash, estimate. */
static void toy_checks(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_plan *plan = NULL;
    assert_int_equal(bl_plan_load_with(write_plan("toy.toml", toy_plan), &with_toy, &plan, &err), BL_OK);
    assert_string_equal(bl_plan_operation(plan), "toy");
    const char *json = bl_plan_resolved_json(plan);
    assert_string_equal(json, "{\"format\":\"brainlesslab-plan\",\"format_version\":4,\"id\":\"toy-1\","
                              "\"operation\":\"toy\",\"toy\":{\"count\":5,\"label\":\"five\"}}");
    char hex[65];
    bl_sha256_buffer(json, strlen(json), hex);
    assert_string_equal(bl_plan_hash(plan), hex);
    char *pretty = bl_plan_render(plan, 0);
    assert_non_null(pretty);
    assert_non_null(strstr(pretty, "\"label\":\t\"five\""));
    free(pretty);
    bl_plan_estimate_t e;
    assert_int_equal(bl_plan_estimate(plan, &e), 1);
    assert_true(e.memory_bytes == 40.0);
    assert_int_equal(bl_plan_fits_machine(plan, NULL, &err), BL_OK);
    /* The typed accessors of other operations say "not mine". */
    assert_null(bl_plan_reservoir(plan));
    assert_null(bl_plan_audit_spec(plan));
    assert_null(bl_plan_connectome(plan));
    bl_plan_destroy(plan);

    /* The row's own validation, with the file, key and value named. */
    const char *bad = write_plan("toy-bad.toml", "format = \"brainlesslab-plan\"\nformat_version = 4\n"
                                                 "id = \"toy-2\"\noperation = \"toy\"\n[toy]\ncount = 0\n");
    assert_int_not_equal(bl_plan_load_with(bad, &with_toy, &plan, &err), BL_OK);
    assert_null(plan);
    assert_non_null(strstr(err.message, "toy-bad.toml"));
    assert_non_null(strstr(err.message, "toy.count"));
}

/* run and verify. */
static void toy_runs_and_verifies(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_plan *plan = NULL;
    assert_int_equal(bl_plan_load_with(write_plan("toy-run.toml", toy_plan), &with_toy, &plan, &err), BL_OK);
    bl_experiment_options opt = {.root = tmp_path("records"), .threads = -1};
    assert_int_equal(mkdir(opt.root, 0755), 0);
    bl_run *run = NULL;
    assert_int_equal(bl_run_plan(plan, &opt, &run, &err), BL_OK);
    assert_string_equal(bl_run_operation(run), "toy");
    const char *dir = bl_run_record_dir(run);
    assert_non_null(strstr(dir, "toy-1-"));
    char path[4200];
    snprintf(path, sizeof path, "%s/toy.json", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    fclose(f);
    snprintf(path, sizeof path, "%s/DONE", dir);
    f = fopen(path, "r");
    assert_non_null(f);
    fclose(f);
    size_t artifacts = 0;
    assert_int_equal(bl_record_verify(dir, NULL, &artifacts, &err), BL_OK);
    assert_int_equal(artifacts, 1);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    bl_run_print(run, mem);
    fclose(mem);
    assert_non_null(strstr(text, "toy: 5 squares"));
    free(text);
    bl_run_destroy(run);

    /* Options the row does not take are refused, naming them. */
    bl_experiment_options res = {.root = opt.root, .threads = -1, .blocks = 2};
    assert_int_equal(bl_run_refused(plan, &res), BL_RUN_REFUSED_RESERVOIR);
    assert_int_equal(bl_run_plan(plan, &res, &run, &err), BL_ERR_INVALID);
    assert_null(run);
    assert_non_null(strstr(err.message, "reservoir plans only"));
    bl_experiment_options be = {.root = opt.root, .threads = -1, .backend = "cpu"};
    assert_int_equal(bl_run_refused(plan, &be), BL_RUN_REFUSED_BACKEND);
    bl_plan_destroy(plan);
}

/* Without the row, "toy" is unknown: the row was lent to one load only. And
 * an unknown operation lists the extra rows after the table's. */
static void toy_is_not_global(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_plan *plan = NULL;
    const char *path = write_plan("toy-alone.toml", toy_plan);
    assert_int_equal(bl_plan_load(path, &plan, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "unknown operation \"toy\" (supported: connectome, audit, screen, profile, "
                                        "sweep, ablate, benchmark, calibrate, ode, ssa, flyvis)"));
    const char *other = write_plan("other.toml", "format = \"brainlesslab-plan\"\nformat_version = 4\n"
                                                 "id = \"o\"\noperation = \"other\"\n");
    assert_int_equal(bl_plan_load_with(other, &with_toy, &plan, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "flyvis, toy)"));
    /* A row without the slots a run needs is refused at load. */
    static const bl_operation broken = {.name = "broken", .load = toy_load};
    static const bl_operation *const bad[] = {&broken};
    bl_plan_load_options o = {.operations = bad, .n_operations = 1};
    assert_int_equal(bl_plan_load_with(path, &o, &plan, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "broken"));
}

/* The table's rows come first: an extra row cannot take a built-in name. */
static void builtin_rows_win(void **state)
{
    (void)state;
    static const bl_operation impostor = {.name = "profile", .load = toy_load, .free_spec = toy_free,
                                          .render = toy_render, .run = toy_run, .record_dir = toy_dir,
                                          .destroy = toy_destroy};
    static const bl_operation *const rows[] = {&impostor};
    bl_plan_load_options o = {.operations = rows, .n_operations = 1};
    bl_error err = {0};
    bl_plan *plan = NULL;
    const char *path = write_plan("profile.toml", "format = \"brainlesslab-plan\"\nformat_version = 4\n"
                                                  "id = \"p\"\noperation = \"profile\"\n[toy]\ncount = 1\n");
    /* Loaded by the reservoir row, which refuses [toy]: not the impostor's. */
    assert_int_not_equal(bl_plan_load_with(path, &o, &plan, &err), BL_OK);
    assert_null(strstr(err.message, "toy.count"));
}

/* One options struct for every operation: a reservoir plan runs through
 * bl_run_plan, reports progress through the context (not a FILE *), and the
 * context's cancel stops it between batches, leaving a FAILED record. */
typedef struct watch {
    uint32_t calls, last_done, last_total;
    int cancel_after;
    int asked;
} watch;

static void on_progress(void *user, uint32_t done, uint32_t total, double simulated_s, double wall_s)
{
    (void)wall_s;
    watch *w = user;
    w->calls++;
    w->last_done = done;
    w->last_total = total;
    assert_true(simulated_s == 0.0);
}

static int on_cancel(void *user)
{
    watch *w = user;
    return ++w->asked >= w->cancel_after && w->cancel_after > 0;
}

static const char reservoir_plan[] =
    "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"res-1\"\noperation = \"profile\"\n"
    "[evaluation]\nblocks = 4\ntrials_per_block = 4\nroot_seed = 5\n[execution]\nthreads = 1\nbatch_size = 4\n"
    "[[targets]]\nid = \"fal\"\n[targets.composition]\ncount = 16\n[targets.composition.node]\n"
    "kind = \"falandays\"\n[targets.composition.task]\nkind = \"delayed_cue\"\n"
    "[targets.composition.task.options]\ndelays = [2, 5]\n";

static void reservoir_progress_and_cancel(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_context *ctx = NULL;
    assert_int_equal(bl_context_create(&ctx, &err), BL_OK);
    watch w = {0};
    bl_context_set_progress(ctx, on_progress, &w);
    bl_context_set_cancel(ctx, on_cancel, &w);
    bl_plan *plan = NULL;
    assert_int_equal(bl_plan_load(write_plan("res.toml", reservoir_plan), &plan, &err), BL_OK);
    const char *root = tmp_path("res-records");
    assert_int_equal(mkdir(root, 0755), 0);
    bl_experiment_options opt = {.root = root, .threads = -1, .context = ctx, .batch = 4};
    bl_run *run = NULL;
    assert_int_equal(bl_run_plan(plan, &opt, &run, &err), BL_OK);
    assert_int_equal(w.calls, 4); /* 16 trials in batches of 4 */
    assert_int_equal(w.last_done, 16);
    assert_int_equal(w.last_total, 16);
    assert_int_equal(w.asked, 3); /* never after the last batch */
    assert_int_equal(bl_record_verify(bl_run_record_dir(run), NULL, NULL, &err), BL_OK);
    bl_run_destroy(run);

    /* Cancelled at the second question: a FAILED record that says so. */
    w = (watch){.cancel_after = 2};
    assert_int_equal(bl_run_plan(plan, &opt, &run, &err), BL_ERR_CANCELLED);
    assert_null(run);
    assert_non_null(strstr(err.message, "cancelled after 8 of 16 trials"));
    assert_non_null(strstr(err.message, "FAILED"));
    assert_string_equal(bl_status_name(BL_ERR_CANCELLED), "cancelled");
    bl_plan_destroy(plan);
    bl_context_destroy(ctx);
}

/* Every built-in row keeps its promise: a run of each operation holds the
 * artifacts its row lists (small plans over the shipped larva connectome,
 * and the shipped pong calibration shortened to 2 blocks). */
static void run_and_check_artifacts(const char *plan_path, const bl_experiment_options *opt, const char *operation)
{
    bl_error err = {0};
    bl_plan *plan = NULL;
    if (bl_plan_load(plan_path, &plan, &err))
        fail_msg("%s: %s", plan_path, err.message);
    assert_string_equal(bl_plan_operation(plan), operation);
    const char *const *promised = bl_pk_row(plan)->artifacts;
    assert_non_null(promised);
    bl_run *run = NULL;
    if (bl_run_plan(plan, opt, &run, &err))
        fail_msg("%s: %s", plan_path, err.message);
    for (const char *const *a = promised; *a; a++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", bl_run_record_dir(run), *a);
        FILE *f = fopen(path, "r");
        if (!f)
            fail_msg("%s: the %s record lacks %s, which its row promises", plan_path, operation, *a);
        fclose(f);
    }
    assert_int_equal(bl_record_verify(bl_run_record_dir(run), NULL, NULL, &err), BL_OK);
    bl_run_destroy(run);
    bl_plan_destroy(plan);
}

static void builtin_rows_keep_their_promises(void **state)
{
    (void)state;
    const char *src = getenv("BL_SOURCE_DIR");
    if (!src) {
        skip();
        return;
    }
    char conn[1024], text[4096], path[1100];
    snprintf(conn, sizeof conn, "[connectome]\npath = \"%s/data/connectomes/larva-winding2023\"\n", src);
    static const char head[] = "format = \"brainlesslab-plan\"\nformat_version = 4\n";
    static const char net[] = "[[population]]\nname = \"ORN\"\nselect = { cell_type = \"sensory\", modality = "
                              "\"olfactory\" }\n[[population]]\nname = \"PN\"\nselect = { cell_type = \"PN\" }\n";
    static const char run[] = "[[stimulus]]\nname = \"ORN\"\npopulation = \"ORN\"\nrate_hz = 150.0\n"
                              "[run]\ntrials = 2\nduration_ms = 20.0\nseed = 3\nthreads = 1\n";
    const char *root = tmp_path("promises");
    assert_int_equal(mkdir(root, 0755), 0);
    bl_experiment_options opt = {.root = root, .threads = -1};

    snprintf(text, sizeof text, "%sid = \"c\"\noperation = \"connectome\"\n%s%s%s", head, conn, net, run);
    run_and_check_artifacts(write_plan("promise-connectome.toml", text), &opt, "connectome");
    snprintf(text, sizeof text, "%sid = \"a\"\noperation = \"audit\"\n%s%s[audit]\nsource = \"ORN\"\n", head, conn,
             net);
    run_and_check_artifacts(write_plan("promise-audit.toml", text), &opt, "audit");
    snprintf(text, sizeof text, "%sid = \"s\"\noperation = \"screen\"\n%s%s%s[[screen.axis]]\nsilence = [\"PN\"]\n"
                                "include_none = true\n", head, conn, net, run);
    run_and_check_artifacts(write_plan("promise-screen.toml", text), &opt, "screen");
    run_and_check_artifacts(write_plan("promise-profile.toml", reservoir_plan), &opt, "profile");
    bl_experiment_options shorter = {.root = root, .threads = -1, .blocks = 2};
    snprintf(path, sizeof path, "%s/plans/reservoir/calibration-pong.toml", src);
    run_and_check_artifacts(path, &shorter, "calibrate");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(toy_checks),
        cmocka_unit_test(toy_runs_and_verifies),
        cmocka_unit_test(toy_is_not_global),
        cmocka_unit_test(builtin_rows_win),
        cmocka_unit_test(reservoir_progress_and_cancel),
        cmocka_unit_test(builtin_rows_keep_their_promises),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
