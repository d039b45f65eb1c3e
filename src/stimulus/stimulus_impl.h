/* Private layout of bl_stimulus, read by the network and the backends. */
#ifndef BL_STIMULUS_IMPL_H
#define BL_STIMULUS_IMPL_H

#include "brainlesslab/stimulus.h"

typedef struct bl_population {
    int32_t *neurons; /* sorted, unique */
    size_t n;
    double rate_hz;
    double start_ms, stop_ms; /* stop_ms < 0: to the end */
    int force;                /* its events are forced spikes, not input (bl_stimulus_set_force) */
} bl_population;

/* A current (bl_stimulus_add_current) with its own copies. */
typedef struct bl_current_in {
    bl_current c; /* variable, values and steps point at the copies below */
    int32_t *neurons; /* sorted, unique */
    size_t n;
    char *variable;
    double *values;
    int64_t *steps;
} bl_current_in;

struct bl_stimulus {
    bl_current_in *currents;
    size_t n_currents;
    bl_population *populations;
    size_t n_populations;
    int32_t *events; /* pairs (step, neuron), sorted by step then neuron */
    size_t n_events;
    int32_t *forced; /* forced spikes: pairs (step, neuron), sorted */
    size_t n_forced;
    int32_t *targets; /* explicit refractory-rule targets, or NULL */
    size_t n_targets;
    int has_targets;
};

#endif
