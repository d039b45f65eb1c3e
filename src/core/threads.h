/* Thread counts: "0 threads = all cores" is resolved here and nowhere else
 * (engines, reservoir batches and evaluations all ask this function). */
#ifndef BL_CORE_THREADS_H
#define BL_CORE_THREADS_H

/* requested > 0: requested; 0 (or less): every core this process may use
 * (omp_get_num_procs), at least 1. */
int bl_threads_resolve(int requested);

#endif
