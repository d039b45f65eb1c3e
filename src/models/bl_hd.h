/* BL_HD marks the equation functions that every backend calls, so that the
 * same text compiles as C, as C++ and as CUDA device code: a GPU backend
 * includes the headers of src/models and gets the host's equations, rounding for
 * rounding (compile it with nvcc --fmad=false, as the CTest case
 * unit.model_headers does, since FMA contraction changes bits). */
#ifndef BL_MODELS_BL_HD_H
#define BL_MODELS_BL_HD_H

#if defined(__CUDACC__)
#define BL_HD __host__ __device__
#else
#define BL_HD
#endif

#endif
