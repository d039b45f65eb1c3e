/* "0 threads = all cores", resolved once (threads.h). */
#include "core/threads.h"

#include <omp.h>

int bl_threads_resolve(int requested)
{
    if (requested > 0)
        return requested;
    int procs = omp_get_num_procs();
    return procs > 0 ? procs : 1;
}
