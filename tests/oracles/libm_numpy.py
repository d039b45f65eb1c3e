"""NumPy's exp and log are not glibc's (docs/models.md, "NumPy's exp is not
glibc's"): where the processor has AVX-512F, NumPy 1.24 computes them with its
own vector code, which rounds differently, so Brian2's numpy target then
differs from its own C++ targets and from us. An oracle that compares bits
calls reexec_with_libm() before importing NumPy: the first time, on such a
machine, the process runs itself again with those CPU features disabled, and
NumPy calls libm as on any machine without AVX-512F.
BL_EQ_NUMPY_SIMD=1 keeps NumPy's own (to measure the difference)."""
import os
import sys

AVX512 = "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL"


def reexec_with_libm():
    if os.environ.get("BL_EQ_NUMPY_SIMD") == "1" or "NPY_DISABLE_CPU_FEATURES" in os.environ:
        return
    try:
        with open("/proc/cpuinfo") as f:
            has = "avx512f" in f.read()
    except OSError:
        has = False
    if has:
        os.environ["NPY_DISABLE_CPU_FEATURES"] = AVX512
        os.execv(sys.executable, [sys.executable] + sys.argv)
