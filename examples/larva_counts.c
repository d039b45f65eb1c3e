/* Load the larva connectome, drive its olfactory receptor neurons with 150 Hz
 * Poisson input for 100 ms (shiu2024 model) and print how many neurons fired.
 *   cc larva_counts.c $(pkg-config --cflags --libs brainlesslab)
 *   ./a.out path/to/data/connectomes/larva-winding2023 */
#include <stdio.h>
#include <string.h>
#include <brainlesslab.h>

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "data/connectomes/larva-winding2023";
    bl_error err = {0};
    bl_connectome *c = NULL;
    bl_stimulus *stim = NULL;
    bl_network *net = NULL;
    bl_engine *eng = NULL;
    bl_result *res = NULL;
    bl_lif_params params;
    int32_t orn[64];
    size_t n_orn = 0;
    uint64_t steps = 0;
    bl_status st = bl_connectome_load(dir, &c, &err);
    int col = st ? -1 : bl_connectome_column(c, "modality");
    for (uint64_t i = 0; col >= 0 && i < bl_connectome_n_neurons(c) && n_orn < 64; i++)
        if (!strcmp(bl_connectome_value(c, (size_t)col, i) ? bl_connectome_value(c, (size_t)col, i) : "", "olfactory"))
            orn[n_orn++] = (int32_t)i;
    if (!st) st = bl_lif_params_preset("shiu2024", &params, &err);
    if (!st) st = bl_lif_steps(&params, 100.0, &steps, &err);
    if (!st) st = bl_stimulus_create(&stim, &err);
    if (!st) st = bl_stimulus_add_poisson(stim, orn, n_orn, 150.0, 0.0, -1.0, &err);
    if (!st) st = bl_network_create(c, &params, stim, NULL, 0, 20241002, &net, &err);
    if (!st) st = bl_engine_create(NULL, net, "cpu", &eng, &err);
    if (!st) st = bl_result_create(net, 0, 1, &res, &err);
    if (!st) st = bl_engine_run(eng, 0, 1, steps, res, &err);
    if (st) {
        fprintf(stderr, "larva_counts: %s\n", err.message);
        return 1;
    }
    uint64_t active = 0;
    for (uint64_t i = 0; i < bl_result_n_neurons(res); i++)
        active += bl_result_counts(res)[i] > 0;
    printf("%zu ORNs stimulated; %llu spikes in 100 ms; %llu neurons fired\n", n_orn,
           (unsigned long long)bl_result_n_events(res), (unsigned long long)active);
    bl_result_destroy(res);
    bl_engine_destroy(eng);
    bl_network_destroy(net);
    bl_stimulus_destroy(stim);
    bl_connectome_destroy(c);
    return 0;
}
