/* Propagation statistics (the seed runtime's propagation_stats) and rates. */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/analysis.h"

void bl_rates(const int32_t *counts, uint32_t trials, uint64_t n, double duration_s, double *mean,
              double *sd)
{
    for (uint64_t i = 0; i < n; i++) {
        double sum = 0;
        for (uint32_t t = 0; t < trials; t++)
            sum += counts[(uint64_t)t * n + i] / duration_s;
        double m = sum / trials, ss = 0;
        for (uint32_t t = 0; t < trials; t++) {
            double d = counts[(uint64_t)t * n + i] / duration_s - m;
            ss += d * d;
        }
        mean[i] = m;
        sd[i] = trials > 1 ? sqrt(ss / (trials - 1)) : 0.0;
    }
}

static int contains_ci(const char *hay, const char *needle)
{
    size_t ln = strlen(needle);
    for (; *hay; hay++) {
        size_t k = 0;
        while (k < ln && hay[k] && tolower((unsigned char)hay[k]) == needle[k])
            k++;
        if (k == ln)
            return 1;
    }
    return 0;
}

static const char *const class_columns[] = {"cell_type", "super_class", "cell_class"};

static int class_matches(const bl_connectome *c, uint64_t neuron, int descending)
{
    for (size_t j = 0; j < sizeof class_columns / sizeof class_columns[0]; j++) {
        int col = bl_connectome_column(c, class_columns[j]);
        if (col < 0)
            continue;
        const char *v = bl_connectome_value(c, (size_t)col, neuron);
        if (descending ? ((tolower((unsigned char)v[0]) == 'd' && tolower((unsigned char)v[1]) == 'n') ||
                          contains_ci(v, "descending"))
                       : contains_ci(v, "motor"))
            return 1;
    }
    return 0;
}

int bl_neuron_is_descending(const bl_connectome *c, uint64_t neuron) { return class_matches(c, neuron, 1); }
int bl_neuron_is_motor(const bl_connectome *c, uint64_t neuron) { return class_matches(c, neuron, 0); }

bl_propagation bl_propagation_stats(const bl_connectome *c, const int32_t *counts,
                                    const uint8_t *stimulated, const int32_t *depth)
{
    bl_propagation p = {0};
    uint64_t n = bl_connectome_n_neurons(c);
    for (uint64_t i = 0; i < n; i++) {
        p.spikes += (uint64_t)counts[i];
        if (counts[i] <= 0)
            continue;
        p.active_neurons++;
        p.downstream_active_neurons += !stimulated[i];
        if (depth[i] > p.propagation_depth)
            p.propagation_depth = depth[i];
        p.descending_active_neurons += bl_neuron_is_descending(c, i);
        p.motor_active_neurons += bl_neuron_is_motor(c, i);
    }
    return p;
}
