/* Plans that parse but make no sense, or ask for more than a machine has.
 *
 * Model parameters that would drive the state to NaN or infinity, or mean
 * nothing physically (a time constant shorter than a step, a threshold at or
 * below reset, voltages of 10^300 mV), are the model row's to refuse
 * (bl_lif_params_validate, src/models/params.c), for plans and every other
 * caller alike. bl_pk_sense_run: what the engine would refuse at run time
 * (unknown backend, more steps than a trial holds), refused when the plan is
 * checked, so that `check` accepts nothing that `run` fails.
 * bl_plan_estimate: memory, disk and time a plan will take, printed by
 * `check` and compared with the machine by `run`. */
#include "plan/plan_impl.h"
#include "plan/plan_op.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "brainlesslab/engine.h"
#include "brainlesslab/mpi.h"

bl_status bl_pk_sense_run(const bl_pk_ctx *ctx, const bl_toml_node *run, const bl_plan *plan)
{
    if (plan->steps > (uint64_t)INT32_MAX)
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(run, "duration_ms"), "run.duration_ms",
                          "%g ms is %llu steps; a trial holds at most %d steps (%g ms at dt %g ms)",
                          plan->duration_ms, (unsigned long long)plan->steps, INT32_MAX,
                          (double)INT32_MAX * plan->params.dt_ms, plan->params.dt_ms);
    const char *b = plan->backend;
    char list[256];
    if (!bl_backend_known(b, list, sizeof list)) {
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(run, "backend"), "run.backend",
                          "unknown backend \"%s\" (known: %s)", b, list);
    }
    return BL_OK;
}

/* Python's parameter overrides, held to the same rule as plans: the model
 * row's table (src/models/params.c). */
bl_status bl_plan_check_params(const bl_lif_params *p, bl_error *err) { return bl_lif_params_validate(p, err); }

/* ---- estimate ------------------------------------------------------------- */

int bl_plan_estimate(const bl_plan *plan, bl_plan_estimate_t *e)
{
    memset(e, 0, sizeof *e);
    if (!plan->op->estimate)
        return 0;
    plan->op->estimate(plan, e);
    return 1;
}

/* The connectome family's row (connectome, audit, screen). */
void bl_pk_op_estimate_network(const bl_plan *plan, bl_plan_estimate_t *e)
{
    memset(e, 0, sizeof *e);
    if (!plan->connectome)
        return;
    double n = (double)bl_connectome_n_neurons(plan->connectome);
    double edges = (double)bl_connectome_n_edges(plan->connectome);
    double trials = plan->trials, steps = (double)plan->steps, dur_s = plan->duration_ms / 1000.0;
    /* Spikes: the Poisson input's own, times a response factor of 2. The
     * shipped larva ORN plan gives 1.74 network spikes per input spike
     * (328,004 from 189,000): the estimate is 378,000, within 2x of the truth.
     * Runaway activity (FlyWire at high rates, ~40 per input spike) is
     * underestimated: spikes are streamed to disk and are not what fills
     * memory, and `run` reports the disk it actually needs as it goes. */
    double input = 0;
    for (size_t i = 0; i < plan->n_stimuli; i++) {
        const bl_plan_population *p = &plan->stimuli[i].view;
        double win = (p->stop_ms - p->start_ms) / 1000.0;
        input += (double)p->n_neurons * p->rate_hz * (win > 0 ? win : dur_s);
    }
    e->spikes = input * trials * 2.0;
    /* Memory: the graph (loaded once, then the network's copy), per-neuron
     * state per trial running at once, every trial's counts and final state
     * (the result keeps them all), the spike events (16 bytes each), and the
     * analyses. */
    double graph = 8.0 * (n + 1) + 8.0 * edges + 96.0 * n;
    double result = trials * n * (4.0 + (plan->out_state ? 16.0 : 0.0));
    /* PSTH counts [trial][population][bin] (int32) and state probes
     * [trial][sample][neuron] (v and g, 8 bytes each) are kept whole until
     * the record is written. */
    double bins = plan->psth_bin_steps ? ceil((double)plan->steps / (double)plan->psth_bin_steps) : 0;
    double psth = trials * (double)plan->n_psth_pops * bins * 4.0;
    double samples = plan->probe_pop && plan->probe_every_steps
                         ? floor((double)plan->steps / (double)plan->probe_every_steps) + 1.0 : 0;
    double probes = plan->probe_pop ? trials * samples * (double)plan->probe_pop->n_neurons * 16.0 : 0;
    e->memory_bytes = 2.0 * graph + result + 16.0 * e->spikes + 64.0 * n + (double)strlen(plan->json) * 2 + psth +
                      probes;
    /* Disk: the artifacts the outputs ask for. */
    double disk = 4096.0 + (double)strlen(plan->json) * 1.2 + 200.0 * (double)plan->n_inputs;
    if (plan->out_spikes)
        disk += 20.0 * e->spikes + 8192.0;
    if (plan->out_counts)
        disk += 4.0 * trials * n + 16.0 * n + 96.0 * n;
    if (plan->out_state)
        disk += 16.0 * trials * n;
    if (plan->out_propagation)
        disk += 4.0 * n + 200.0 * trials;
    disk += psth + probes;
    e->disk_bytes = disk;
    /* Time on one core: the exact update of every neuron every step (about
     * 2 ns with the reference backend), plus delivery of every spike to its
     * targets (about 3 ns per synaptic event). An upper-side estimate: the
     * cpu backend skips neurons at rest. */
    double fan = n > 0 ? edges / n : 0;
    e->seconds_one_core = (n * steps * trials * 2e-9) + e->spikes * fan * 3e-9;
}

static double machine_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (double)pages * (double)size : 0;
}

/* Free bytes where the records will go: the root, or (when it does not
 * exist yet) its nearest existing ancestor, which is the file system it will
 * be made on; -1 when unknown. 0 free is an answer, not "unknown" (issue 26:
 * the check looked at "." and skipped itself at 0 bytes free). */
static double free_disk(const char *path)
{
    struct statvfs v;
    char dir[4096];
    if (!path || snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
        return -1;
    for (;;) {
        if (statvfs(dir[0] ? dir : "/", &v) == 0)
            return (double)v.f_bavail * (double)v.f_frsize;
        char *slash = strrchr(dir, '/');
        if (!slash) /* a relative root with no existing part: the current directory */
            return statvfs(".", &v) == 0 ? (double)v.f_bavail * (double)v.f_frsize : -1;
        while (slash > dir && slash[-1] == '/')
            slash--;
        *slash = '\0';
    }
}

static void human(char *buf, size_t size, double bytes)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (bytes >= 1024 && u < 5) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
}

void bl_plan_estimate_text(const bl_plan_estimate_t *e, char *buf, size_t size)
{
    char mem[32], disk[32];
    human(mem, sizeof mem, e->memory_bytes);
    human(disk, sizeof disk, e->disk_bytes);
    snprintf(buf, size, "memory ~%s, disk ~%s, time ~%.3g s on one core (~%.3g spikes)", mem, disk,
             e->seconds_one_core, e->spikes);
}

bl_status bl_plan_fits_machine(const bl_plan *plan, const char *root, bl_error *err)
{
    bl_plan_estimate_t e;
    if (!bl_plan_estimate(plan, &e))
        return BL_OK; /* an operation without an estimate cannot exceed one */
    char text[256];
    bl_plan_estimate_text(&e, text, sizeof text);
    double mem = machine_memory();
    if (mem > 0 && e.memory_bytes > mem)
        return bl_fail(err, BL_ERR_INVALID,
                       "%s: the plan needs more memory than this machine has (estimate: %s; machine: %.1f GiB); "
                       "pass --force to run it anyway",
                       plan->path ? plan->path : "plan", text, mem / 1073741824.0);
    if (root) {
        double disk = free_disk(root);
        if (disk >= 0 && e.disk_bytes > disk)
            return bl_fail(err, BL_ERR_INVALID,
                           "%s: the record would need more disk than %s has free (estimate: %s; free: %.1f GiB); "
                           "pass --force to run it anyway",
                           plan->path ? plan->path : "plan", root, text, disk / 1073741824.0);
    }
    return BL_OK;
}
