/* The context (context.h): two engines with two contexts live in one process,
 * run at the same time on two threads, and give the same spikes and final
 * state as each other and as the reference; a context's tunables and sinks
 * are its own; the MPI job's single-process fallbacks answer without MPI. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "brainlesslab.h"

typedef struct fixture {
    bl_connectome *c;
    bl_stimulus *stim;
    bl_network *net;
} fixture;

static void fixture_make(fixture *f)
{
    bl_error err = {0};
    bl_synth_params sp;
    bl_synth_defaults(&sp);
    sp.n_neurons = 1500;
    sp.mean_out_degree = 25;
    sp.seed = 77;
    int32_t stimulated[30];
    for (int i = 0; i < 30; i++)
        stimulated[i] = i * 41;
    bl_lif_params p;
    memset(f, 0, sizeof *f);
    assert_int_equal(bl_synth_generate(&sp, &f->c, &err), BL_OK);
    assert_int_equal(bl_lif_params_preset("shiu2024", &p, &err), BL_OK);
    assert_int_equal(bl_stimulus_create(&f->stim, &err), BL_OK);
    assert_int_equal(bl_stimulus_add_poisson(f->stim, stimulated, 30, 180.0, 0.0, -1.0, &err), BL_OK);
    assert_int_equal(bl_network_create(f->c, &p, f->stim, NULL, 0, 4242, &f->net, &err), BL_OK);
}

static void fixture_free(fixture *f)
{
    bl_network_destroy(f->net);
    bl_stimulus_destroy(f->stim);
    bl_connectome_destroy(f->c);
}

typedef struct job {
    bl_context *ctx;
    const bl_network *net;
    const char *backend;
    int threads;
    bl_result *res;
    bl_status st;
    char message[BL_ERROR_MESSAGE_MAX];
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    bl_error err = {0};
    bl_engine *e = NULL;
    j->st = bl_engine_create(j->ctx, j->net, j->backend, &e, &err);
    if (!j->st)
        j->st = bl_engine_set_threads(e, j->threads, &err);
    if (!j->st)
        j->st = bl_result_create(j->net, 0, 3, &j->res, &err);
    if (!j->st)
        j->st = bl_engine_run(e, 0, 3, 1500, j->res, &err);
    bl_engine_destroy(e);
    memcpy(j->message, err.message, sizeof j->message);
    return NULL;
}

static void assert_same_result(const bl_result *a, const bl_result *b)
{
    uint64_t ne = bl_result_n_events(a), cells = bl_result_n_trials(a) * bl_result_n_neurons(a);
    assert_true(ne > 0);
    assert_int_equal(ne, bl_result_n_events(b));
    assert_memory_equal(bl_result_event_trials(a), bl_result_event_trials(b), ne * sizeof(int32_t));
    assert_memory_equal(bl_result_event_steps(a), bl_result_event_steps(b), ne * sizeof(int32_t));
    assert_memory_equal(bl_result_event_neurons(a), bl_result_event_neurons(b), ne * sizeof(int32_t));
    assert_memory_equal(bl_result_counts(a), bl_result_counts(b), cells * sizeof(int32_t));
    assert_memory_equal(bl_result_final_v(a), bl_result_final_v(b), cells * sizeof(double));
    assert_memory_equal(bl_result_final_g(a), bl_result_final_g(b), cells * sizeof(double));
}

static void two_contexts_two_engines(void **unused)
{
    (void)unused;
    fixture f;
    fixture_make(&f);
    bl_error err = {0};
    bl_context *a = NULL, *b = NULL;
    assert_int_equal(bl_context_create(&a, &err), BL_OK);
    assert_int_equal(bl_context_create(&b, &err), BL_OK);
    /* Different tunables: a splits every trial into partitions, b never does. */
    bl_context_set_cpu_partition_min_edges(a, 1);
    bl_context_set_cpu_partition_min_edges(b, UINT64_C(1) << 40);
    assert_int_equal(bl_context_cpu_partition_min_edges(a), 1);
    job ja = {.ctx = a, .net = f.net, .backend = "cpu", .threads = 4};
    job jb = {.ctx = b, .net = f.net, .backend = "cpu", .threads = 2};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, run_job, &ja), 0);
    assert_int_equal(pthread_create(&tb, NULL, run_job, &jb), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_int_equal(ja.st, BL_OK);
    assert_int_equal(jb.st, BL_OK);
    /* And the reference, in the default context (NULL). */
    job jr = {.ctx = NULL, .net = f.net, .backend = "reference", .threads = 1};
    run_job(&jr);
    assert_int_equal(jr.st, BL_OK);
    assert_same_result(ja.res, jr.res);
    assert_same_result(jb.res, jr.res);
    bl_result_destroy(ja.res);
    bl_result_destroy(jb.res);
    bl_result_destroy(jr.res);
    bl_context_destroy(a);
    bl_context_destroy(b);
    fixture_free(&f);
}

static void env_tunables(void **unused)
{
    (void)unused;
    bl_error err = {0};
    bl_context *ctx = NULL;
    setenv("BL_CPU_PARTITION_MIN_EDGES", "12", 1);
    setenv("BL_MPI_STATS", "/tmp/stats-prefix", 1);
    assert_int_equal(bl_context_create(&ctx, &err), BL_OK);
    assert_int_equal(bl_context_cpu_partition_min_edges(ctx), 12);
    assert_string_equal(bl_context_mpi_stats_prefix(ctx), "/tmp/stats-prefix");
    assert_int_equal(bl_context_set_mpi_stats_prefix(ctx, NULL, &err), BL_OK);
    assert_null(bl_context_mpi_stats_prefix(ctx));
    bl_context_destroy(ctx);
    /* A bad value is an error naming the variable. */
    setenv("BL_CPU_PARTITION_MIN_EDGES", "many", 1);
    assert_int_equal(bl_context_create(&ctx, &err), BL_ERR_INVALID);
    assert_null(ctx);
    assert_non_null(strstr(err.message, "BL_CPU_PARTITION_MIN_EDGES"));
    unsetenv("BL_CPU_PARTITION_MIN_EDGES");
    unsetenv("BL_MPI_STATS");
}

static int log_calls;
static void count_log(void *user, const char *line)
{
    (void)user;
    (void)line;
    log_calls++;
}

static void mpi_single_process(void **unused)
{
    (void)unused;
    if (bl_mpi_launched())
        skip();
    bl_error err = {0};
    bl_context *ctx = NULL;
    assert_int_equal(bl_context_create(&ctx, &err), BL_OK);
    bl_context_set_log(ctx, count_log, NULL);
    int rank = -1, ranks = -1, part = -1, parts = -1;
    assert_int_equal(bl_mpi_job(ctx, &rank, &ranks, &err), BL_OK);
    assert_int_equal(rank, 0);
    assert_int_equal(ranks, 1);
    assert_int_equal(bl_mpi_job_replicas(ctx, 1, &part, &parts, &err), BL_OK);
    assert_int_equal(part, 0);
    assert_int_equal(parts, 1);
    assert_int_equal(bl_mpi_job_replica_groups(ctx), 1);
    assert_int_not_equal(bl_mpi_job_replicas(ctx, 2, &part, &parts, &err), BL_OK);
    /* One process: abort does not end it; it hands the message back. */
    assert_int_equal(bl_mpi_job_abort(ctx, "a rank-local failure", &err), BL_ERR_INTERNAL);
    assert_string_equal(err.message, "a rank-local failure");
    assert_int_equal(log_calls, 0);
    bl_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_contexts_two_engines),
        cmocka_unit_test(env_tunables),
        cmocka_unit_test(mpi_single_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
