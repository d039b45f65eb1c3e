/* Benchmark workloads (docs/benchmark.md, "Workloads"): their fixed
 * definitions, and their inputs: the connectome (generated or imported once and
 * cached under WORK/inputs), the stimulated neurons, and the explicit event
 * schedule that every case of the workload replays.
 *
 * The schedule is the Poisson input of trial 0 exactly as `simulate --poisson
 * RATE:STIM.npy --seed SEED` draws it (Philox stream of population 0, trial 0:
 * neuron i fires at step s iff bl_stream_word(seed, 0, 0, i, s) <
 * bl_bernoulli_threshold(rate, dt)). Peers cannot share our random stream, so
 * every case, ours included, is fed these (step, neuron) rows instead; the
 * same schedule is applied in every trial (`simulate --schedule`). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_impl.h"
#include "brainlesslab/connectome.h"
#include "brainlesslab/hash.h"
#include "brainlesslab/model.h"
#include "brainlesslab/npy.h"
#include "brainlesslab/stimulus.h"

/* Calibrated once on the synth-default graph (seed 1) with the reference
 * backend and fixed here; see docs/benchmark.md for the numbers. */
static const bl_bench_workload_def full_defs[] = {
    {"w1", "FlyWire-scale synthetic graph, sugar-like sensory activation (shiu2024 and phase4c)",
     "brainlesslab synth defaults (138,639 neurons, ~15.1M edges, seed 1); stimulus: the 20 neurons "
     "with cell_type 'sensory' of largest signed out-strength (sum of signed synapse counts; ties to "
     "the lower index) at 150 Hz, like the sugar-GRN activation of Shiu et al. 2024 (about 15k "
     "spikes per simulated second from ~600 active neurons with the published parameters); 1000 ms; "
     "2 trials per worker (trial 0 cold, trial 1 warm)",
     BL_BENCH_GRAPH_SYNTH, 0, 0, 1, BL_BENCH_STIM_TOP_SENSORY, 20, 150.0, 1000.0, 2, 1, 0},
    {"w2", "FlyWire-scale synthetic graph driven into runaway activity",
     "brainlesslab synth defaults (as w1); stimulus: every neuron with cell_type 'sensory' "
     "(2,794, 2%) at 150 Hz with the published parameters: about 570k spikes per simulated "
     "second (410k of them stimulated, the rest recurrent, ~11k active neurons), the "
     "'pathological input' regime of the spec; 1000 ms; 2 trials per worker (cold, warm)",
     BL_BENCH_GRAPH_SYNTH, 0, 0, 1, BL_BENCH_STIM_ALL_SENSORY, 0, 150.0, 1000.0, 2, 1, 0},
    {"w3", "Drosophila larva connectome (Winding et al. 2023), olfactory receptor neurons at 150 Hz",
     "data/connectomes/larva-winding2023 (2,952 neurons, 110,677 edges; imported with `brainlesslab "
     "import larva` when the committed copy is absent); stimulus: the 42 neurons with cell_type "
     "'sensory' and modality 'olfactory' (ORNs) at 150 Hz; 30 trials x 1000 ms per worker (trial 0 "
     "cold, trials 1..29 warm)",
     BL_BENCH_GRAPH_LARVA, 0, 0, 0, BL_BENCH_STIM_OLFACTORY, 0, 150.0, 1000.0, 30, 1, 0},
    /* Scale workloads (issue 15): not in the default list, run on request
     * (`--workloads w4,w5`); the stimulus is w1's, so the activity is
     * comparable and what grows is the graph. */
    {"w4", "MaleCNS-scale synthetic graph, w1's stimulus",
     "brainlesslab synth --neurons 166700 --mean-degree 146.97 --seed 1 (166,700 neurons, ~24.5M edges: "
     "the male CNS connectome's size); stimulus: the 20 'sensory' neurons of largest signed out-strength "
     "at 150 Hz (as w1); 1000 ms; 2 trials per worker (cold, warm)",
     BL_BENCH_GRAPH_SYNTH, 166700, 146.97, 1, BL_BENCH_STIM_TOP_SENSORY, 20, 150.0, 1000.0, 2, 1, 0},
    {"w5", "Ten times FlyWire: 1.39M neurons, ~151M edges, w1's stimulus",
     "brainlesslab synth --neurons 1386390 --mean-degree 108.858 --seed 1 (ten times the FlyWire "
     "neuron count at its mean out-degree: ~151M edges); stimulus: the 20 'sensory' neurons of largest "
     "signed out-strength at 150 Hz (as w1); 1000 ms; 2 trials per worker (cold, warm)",
     BL_BENCH_GRAPH_SYNTH, 1386390, 108.858, 1, BL_BENCH_STIM_TOP_SENSORY, 20, 150.0, 1000.0, 2, 1, 0},
    /* The trial bank (issue 28): w1's task 30 times in one worker, the last
     * 29 in one engine call, so that threads run whole trials side by side;
     * bl-cpu at every count of --threads LIST in the same run. */
    {"w1-bank", "w1's task as a bank of 30 trials: trial 0 alone, trials 1..29 in one engine call",
     "w1 (brainlesslab synth defaults, seed 1; the 20 'sensory' neurons of largest signed out-strength at "
     "150 Hz; 1000 ms), 30 trials per worker: trial 0 alone (cold), then trials 1..29 in one engine call "
     "(`simulate --timing --bank`: the cpu backend runs whole trials in parallel, one per thread); bl-cpu "
     "at every thread count of --threads, qualified bit for bit against the reference backend running "
     "the 30 trials one engine call each",
     BL_BENCH_GRAPH_SYNTH, 0, 0, 1, BL_BENCH_STIM_TOP_SENSORY, 20, 150.0, 1000.0, 30, 1, 1},
};

static const bl_bench_workload_def quick_defs[] = {
    {"w1", "quick: small synthetic graph, strongest sensory neurons",
     "--quick stand-in for w1: brainlesslab synth --neurons 2000 --mean-degree 25 --seed 1; the 20 "
     "'sensory' neurons of largest signed out-strength at 150 Hz; 100 ms; 2 trials",
     BL_BENCH_GRAPH_SYNTH, 2000, 25.0, 1, BL_BENCH_STIM_TOP_SENSORY, 20, 150.0, 100.0, 2, 1, 0},
    {"w2", "quick: small synthetic graph, every sensory neuron",
     "--quick stand-in for w2: the w1 quick graph; every 'sensory' neuron at 150 Hz; 100 ms; 2 trials",
     BL_BENCH_GRAPH_SYNTH, 2000, 25.0, 1, BL_BENCH_STIM_ALL_SENSORY, 0, 150.0, 100.0, 2, 1, 0},
    {"w3", "quick: larva connectome, ORNs at 150 Hz",
     "--quick stand-in for w3: the larva connectome; its 42 olfactory sensory neurons at 150 Hz; "
     "3 trials x 100 ms",
     BL_BENCH_GRAPH_LARVA, 0, 0, 0, BL_BENCH_STIM_OLFACTORY, 0, 150.0, 100.0, 3, 1, 0},
    {"w4", "quick: a denser small synthetic graph, strongest sensory neurons",
     "--quick stand-in for w4: brainlesslab synth --neurons 2400 --mean-degree 35 --seed 1; the 20 "
     "'sensory' neurons of largest signed out-strength at 150 Hz; 100 ms; 2 trials",
     BL_BENCH_GRAPH_SYNTH, 2400, 35.0, 1, BL_BENCH_STIM_TOP_SENSORY, 20, 150.0, 100.0, 2, 1, 0},
    {"w5", "quick: a larger small synthetic graph, strongest sensory neurons",
     "--quick stand-in for w5: brainlesslab synth --neurons 20000 --mean-degree 25 --seed 1; the 20 "
     "'sensory' neurons of largest signed out-strength at 150 Hz; 100 ms; 2 trials",
     BL_BENCH_GRAPH_SYNTH, 20000, 25.0, 1, BL_BENCH_STIM_TOP_SENSORY, 20, 150.0, 100.0, 2, 1, 0},
    {"w1-bank", "quick: the w1 quick task as a bank of 6 trials",
     "--quick stand-in for w1-bank: the w1 quick graph and stimulus (synth --neurons 2000 --mean-degree 25 "
     "--seed 1; 20 strongest 'sensory' neurons at 150 Hz), 100 ms; 6 trials: trial 0 alone, 1..5 in one "
     "engine call",
     BL_BENCH_GRAPH_SYNTH, 2000, 25.0, 1, BL_BENCH_STIM_TOP_SENSORY, 20, 150.0, 100.0, 6, 1, 1},
};

const bl_bench_workload_def *bl_bench_workload_find(const char *id, int quick)
{
    const bl_bench_workload_def *defs = quick ? quick_defs : full_defs;
    size_t n = quick ? sizeof quick_defs / sizeof quick_defs[0] : sizeof full_defs / sizeof full_defs[0];
    for (size_t i = 0; i < n; i++)
        if (!strcmp(defs[i].id, id))
            return &defs[i];
    return NULL;
}

void bl_bench_inputs_free(bl_bench_inputs *in)
{
    free(in->offsets);
    free(in->stim);
    cJSON_Delete(in->graph_files);
    memset(in, 0, sizeof *in);
}

/* Spawn `self_exe args...` to build a graph into dir (untimed preparation). */
static bl_status make_graph(char **argv, const char *dir, double timeout_s, bl_error *err)
{
    char log[4200];
    snprintf(log, sizeof log, "%s.log", dir);
    bl_status st = bl_bench_rmtree(dir, err);
    bl_bench_proc p;
    if (!st)
        st = bl_bench_spawn(argv, NULL, log, timeout_s, &p, err);
    if (st)
        return st;
    if (!p.exited || p.exit_status != 0) {
        char how[128], tail[512];
        bl_bench_proc_describe(&p, timeout_s, how, sizeof how);
        bl_bench_log_tail(log, tail, sizeof tail);
        return bl_fail(err, BL_ERR_IO, "%s %s failed (%s): %s", argv[0], argv[1], how, tail);
    }
    return BL_OK;
}

static bl_status load_manifest_files(const char *dir, bl_bench_inputs *in, bl_error *err)
{
    char path[4200], *text = NULL;
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    bl_status st = bl_bench_read_text(path, &text, err);
    if (st)
        return st;
    cJSON *m = cJSON_Parse(text);
    free(text);
    if (!m)
        return bl_fail(err, BL_ERR_FORMAT, "%s: not JSON", path);
    cJSON *files = cJSON_DetachItemFromObject(m, "files");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "name");
    if (cJSON_IsString(name))
        snprintf(in->graph_name, sizeof in->graph_name, "%s", name->valuestring);
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(m, "generator");
    in->graph_files = cJSON_CreateObject();
    if (files)
        cJSON_AddItemToObject(in->graph_files, "files", files);
    if (cJSON_IsString(gen))
        cJSON_AddStringToObject(in->graph_files, "generator", gen->valuestring);
    cJSON_Delete(m);
    return BL_OK;
}

typedef struct strength_rank {
    int64_t strength;
    int32_t neuron;
} strength_rank;

static int cmp_strength(const void *a, const void *b)
{
    const strength_rank *x = a, *y = b;
    if (x->strength != y->strength)
        return x->strength > y->strength ? -1 : 1;
    return (x->neuron > y->neuron) - (x->neuron < y->neuron);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static bl_status select_stimulus(const bl_bench_workload_def *w, const bl_connectome *c, bl_bench_inputs *in,
                                 bl_error *err)
{
    uint64_t n = bl_connectome_n_neurons(c);
    int ct = bl_connectome_column(c, "cell_type");
    if (ct < 0)
        return bl_fail(err, BL_ERR_INVALID, "%s/neurons.csv: no cell_type column (needed to choose the "
                       "stimulated sensory neurons of workload %s)", in->graph_dir, w->id);
    int mod = bl_connectome_column(c, "modality");
    if (w->stim == BL_BENCH_STIM_OLFACTORY && mod < 0)
        return bl_fail(err, BL_ERR_INVALID, "%s/neurons.csv: no modality column (workload %s stimulates "
                       "the olfactory sensory neurons)", in->graph_dir, w->id);
    strength_rank *cand = malloc((n ? n : 1) * sizeof *cand);
    if (!cand)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate the stimulus selection");
    const int64_t *off = bl_connectome_offsets(c);
    const int32_t *cnt = bl_connectome_counts(c);
    size_t k = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (strcmp(bl_connectome_value(c, (size_t)ct, i), "sensory") != 0)
            continue;
        if (w->stim == BL_BENCH_STIM_OLFACTORY && strcmp(bl_connectome_value(c, (size_t)mod, i), "olfactory") != 0)
            continue;
        int64_t s = 0;
        for (int64_t e = off[i]; e < off[i + 1]; e++)
            s += cnt[e];
        cand[k].strength = s;
        cand[k].neuron = (int32_t)i;
        k++;
    }
    if (k == 0) {
        free(cand);
        return bl_fail(err, BL_ERR_INVALID, "%s: no neuron matches the stimulus of workload %s", in->graph_dir,
                       w->id);
    }
    if (w->stim == BL_BENCH_STIM_TOP_SENSORY) {
        qsort(cand, k, sizeof *cand, cmp_strength);
        if ((size_t)w->top_k < k)
            k = (size_t)w->top_k;
    }
    in->stim = malloc(k * sizeof *in->stim);
    if (!in->stim) {
        free(cand);
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate the stimulus selection");
    }
    for (size_t i = 0; i < k; i++)
        in->stim[i] = cand[i].neuron;
    free(cand);
    qsort(in->stim, k, sizeof *in->stim, cmp_i32);
    in->n_stim = k;
    return BL_OK;
}

/* Trial 0's Poisson events of population 0, rows (step, neuron) by step then neuron. */
static bl_status write_schedule(const bl_bench_workload_def *w, bl_bench_inputs *in, double dt_ms, bl_error *err)
{
    uint64_t thr = bl_bernoulli_threshold(w->rate_hz, dt_ms);
    size_t cap = 1024, n = 0;
    int32_t *rows = malloc(cap * 2 * sizeof *rows);
    if (!rows)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate the event schedule");
    for (uint64_t s = 0; s < in->steps; s++) {
        for (size_t j = 0; j < in->n_stim; j++) {
            uint32_t word = bl_stream_word(w->seed, 0, 0, (uint32_t)in->stim[j], (uint32_t)s);
            if ((uint64_t)word >= thr)
                continue;
            if (n == cap) {
                int32_t *nr = realloc(rows, cap * 4 * sizeof *rows);
                if (!nr) {
                    free(rows);
                    return bl_fail(err, BL_ERR_NOMEM, "cannot allocate the event schedule");
                }
                rows = nr;
                cap *= 2;
            }
            rows[2 * n] = (int32_t)s;
            rows[2 * n + 1] = in->stim[j];
            n++;
        }
    }
    uint64_t shape[2] = {n, 2};
    bl_status st = bl_npy_write(in->events_path, BL_DTYPE_INT32, 2, shape, rows, err);
    free(rows);
    in->n_events = n;
    uint64_t tshape[1] = {in->n_stim};
    if (!st)
        st = bl_npy_write(in->targets_path, BL_DTYPE_INT32, 1, tshape, in->stim, err);
    uint64_t bytes;
    if (!st)
        st = bl_sha256_file(in->events_path, in->events_sha256, &bytes, err);
    if (!st)
        st = bl_sha256_file(in->targets_path, in->targets_sha256, &bytes, err);
    return st;
}

bl_status bl_bench_inputs_prepare(const bl_bench_workload_def *w, const char *self_exe, const char *source_dir,
                                  const char *work_dir, const char *run_dir, double timeout_s, bl_bench_inputs *in,
                                  bl_error *err)
{
    memset(in, 0, sizeof *in);
    char inputs[4096];
    snprintf(inputs, sizeof inputs, "%s/inputs", work_dir);
    bl_status st = bl_bench_mkdirs(inputs, err);
    if (st)
        return st;
    char manifest[4200];
    if (w->graph == BL_BENCH_GRAPH_LARVA) {
        snprintf(in->graph_dir, sizeof in->graph_dir, "%s/data/connectomes/larva-winding2023", source_dir);
        snprintf(manifest, sizeof manifest, "%s/manifest.json", in->graph_dir);
        snprintf(in->graph_origin, sizeof in->graph_origin, "data/connectomes/larva-winding2023 (committed)");
        if (!bl_bench_exists(manifest)) {
            char data[4096];
            snprintf(data, sizeof data, "%s/data/drosophila-larva-winding2023", source_dir);
            snprintf(in->graph_dir, sizeof in->graph_dir, "%s/larva-winding2023", inputs);
            snprintf(manifest, sizeof manifest, "%s/manifest.json", in->graph_dir);
            snprintf(in->graph_origin, sizeof in->graph_origin,
                     "brainlesslab import larva --data data/drosophila-larva-winding2023");
            if (!bl_bench_exists(manifest)) {
                if (!bl_bench_exists(data))
                    return bl_fail(err, BL_ERR_IO, "%s: larva data absent (neither data/connectomes/"
                                   "larva-winding2023 nor the raw set under data/)", source_dir);
                char *argv[] = {(char *)self_exe, "import", "larva", "--data", data, "--out", in->graph_dir, NULL};
                st = make_graph(argv, in->graph_dir, timeout_s, err);
                if (st)
                    return st;
            }
        }
    } else {
        char n_text[32] = "", d_text[32] = "", s_text[32] = "";
        snprintf(s_text, sizeof s_text, "%llu", (unsigned long long)w->synth_seed);
        if (w->synth_neurons) {
            snprintf(n_text, sizeof n_text, "%llu", (unsigned long long)w->synth_neurons);
            snprintf(d_text, sizeof d_text, "%g", w->synth_mean_degree);
            snprintf(in->graph_dir, sizeof in->graph_dir, "%s/synth-n%s-d%s-s%s", inputs, n_text, d_text, s_text);
            snprintf(in->graph_origin, sizeof in->graph_origin,
                     "brainlesslab synth --neurons %s --mean-degree %s --seed %s", n_text, d_text, s_text);
        } else {
            snprintf(in->graph_dir, sizeof in->graph_dir, "%s/synth-default-s%s", inputs, s_text);
            snprintf(in->graph_origin, sizeof in->graph_origin, "brainlesslab synth --seed %s (defaults)", s_text);
        }
        snprintf(manifest, sizeof manifest, "%s/manifest.json", in->graph_dir);
        if (!bl_bench_exists(manifest)) {
            char *argv_small[] = {(char *)self_exe, "synth", "--out", in->graph_dir, "--neurons", n_text,
                                  "--mean-degree", d_text, "--seed", s_text, NULL};
            char *argv_default[] = {(char *)self_exe, "synth", "--out", in->graph_dir, "--seed", s_text, NULL};
            st = make_graph(w->synth_neurons ? argv_small : argv_default, in->graph_dir, timeout_s, err);
            if (st)
                return st;
        }
    }

    bl_connectome *c = NULL;
    st = bl_connectome_load(in->graph_dir, &c, err);
    if (st)
        return bl_fail_context(err, "workload %s", w->id);
    in->n_neurons = bl_connectome_n_neurons(c);
    in->n_edges = bl_connectome_n_edges(c);
    in->n_synapses = bl_connectome_n_synapses(c);
    in->synthetic = bl_connectome_synthetic(c);
    in->offsets = malloc((in->n_neurons + 1) * sizeof *in->offsets);
    if (!in->offsets)
        st = bl_fail(err, BL_ERR_NOMEM, "cannot copy the offsets of %s", in->graph_dir);
    else
        memcpy(in->offsets, bl_connectome_offsets(c), (in->n_neurons + 1) * sizeof *in->offsets);
    if (!st)
        st = select_stimulus(w, c, in, err);
    bl_connectome_destroy(c);
    if (!st)
        st = load_manifest_files(in->graph_dir, in, err);

    bl_lif_params params;
    if (!st)
        st = bl_lif_params_preset("shiu2024", &params, err);
    if (!st)
        st = bl_lif_steps(&params, w->duration_ms, &in->steps, err);
    if (!st) {
        snprintf(in->events_path, sizeof in->events_path, "%s/events.npy", run_dir);
        snprintf(in->targets_path, sizeof in->targets_path, "%s/targets.npy", run_dir);
        st = write_schedule(w, in, params.dt_ms, err);
    }
    if (st)
        bl_bench_inputs_free(in);
    return st;
}
