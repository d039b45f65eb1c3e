/* Every equation of src/models compiled outside the C library build: as C++
 * (g++ -x c++) and as CUDA device code (nvcc --fmad=false -x cu), so that a
 * GPU backend can include the same headers. Each function is called from a
 * kernel (CUDA) or a plain function (C, C++) so that it is instantiated. */
#include "models/lif_phase4c.h"
#include "models/lif_shiu2024.h"

#if defined(__CUDACC__)
#define PROBE __global__ void
#else
#define PROBE void
#endif

PROBE probe_shiu2024(const bl_shiu_consts *k, double *v, double *g, int *out)
{
    bl_shiu_integrate(k, v, g);
    out[0] = bl_shiu_crosses(k, *v);
    g[1] = bl_shiu_edge_weight(k, out[1]);
    bl_shiu_reset(k, v, g);
}

PROBE probe_phase4c(const bl_p4c_consts *k, float *v, float *g, int32_t *ref, int *out)
{
    g[0] = bl_p4c_synapse(k, g[0], g[1]);
    int avail = bl_p4c_available(ref);
    v[0] = bl_p4c_membrane(k, v[0], g[0], avail);
    out[0] = bl_p4c_crosses(k, v[0]);
    g[1] = bl_p4c_edge_weight(k, out[1]);
    bl_p4c_reset(k, v, ref);
}

/* The constants are made on the host. */
void probe_consts(const bl_lif_params *p, bl_shiu_consts *s, bl_p4c_consts *q)
{
    *s = bl_shiu_consts_make(p);
    *q = bl_p4c_consts_make(p);
}
