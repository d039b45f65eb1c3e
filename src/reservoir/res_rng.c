/* Philox4x32-10 streams for reservoirs: uniforms, normals, the Oosawa noise
 * tape. A draw is named by its counter, never by how many draws came before,
 * so it is the same in a batch, in any thread and in any order of work.
 *
 * Normals use Marsaglia's polar method: attempt c of draw (a, b, domain) reads
 * counter (a, b, domain, c); words 0-1 and 2-3 give v1, v2 uniform in [-1, 1);
 * the first attempt with 0 < s = v1^2 + v2^2 < 1 returns v1 sqrt(-2 ln(s) / s).
 * ln is bl_res_det_log: only + - * / and exact power-of-two scalings, so the
 * value does not depend on the C library (sqrt is correctly rounded by IEEE). */
#include <math.h>

#include "core/np_random.h"
#include "core/stream.h"
#include "reservoir/res_impl.h"

void bl_res_philox(uint64_t seed, uint32_t a, uint32_t b, uint32_t domain, uint32_t c,
                   uint32_t out[4])
{
    bl_stream_block(seed, a, b, domain, c, out);
}

double bl_res_uniform(uint64_t seed, uint32_t a, uint32_t b, uint32_t domain, uint32_t c)
{
    uint32_t w[4];
    bl_res_philox(seed, a, b, domain, c, w);
    return bl_res_u53(w[0], w[1]);
}

double bl_res_det_log(double x)
{
    /* ln2 split so that e * LN2_HI is exact for |e| < 2^20 (fdlibm's constants). */
    static const double LN2_HI = 6.93147180369123816490e-01;
    static const double LN2_LO = 1.90821492927058770002e-10;
    int e;
    double m = frexp(x, &e); /* exact: x = m 2^e, m in [0.5, 1) */
    if (m < 0.70710678118654752440) {
        m = m * 2.0; /* exact */
        e -= 1;
    }
    /* ln m = 2 atanh(f), f = (m - 1) / (m + 1), |f| <= 0.1716: the series
     * 2 (f + f^3/3 + ... + f^25/25) leaves an error below 1e-20. */
    double f = (m - 1.0) / (m + 1.0);
    double f2 = f * f;
    double sum = 0.0;
    for (int k = 12; k >= 1; k--)
        sum = (sum + 1.0 / (double)(2 * k + 1)) * f2;
    double lm = 2.0 * (f + f * sum);
    return (double)e * LN2_HI + ((double)e * LN2_LO + lm);
}

double bl_res_normal(uint64_t seed, uint32_t a, uint32_t b, uint32_t domain)
{
    for (uint32_t c = 0; c < 64; c++) {
        uint32_t w[4];
        bl_res_philox(seed, a, b, domain, c, w);
        double v1 = 2.0 * bl_res_u53(w[0], w[1]) - 1.0;
        double v2 = 2.0 * bl_res_u53(w[2], w[3]) - 1.0;
        double s = v1 * v1 + v2 * v2;
        if (s > 0.0 && s < 1.0)
            return v1 * sqrt(-2.0 * bl_res_det_log(s) / s);
    }
    return 0.0; /* 64 rejections in a row: probability below 1e-42 */
}

double bl_res_noise(uint64_t drive_seed, uint64_t frame, uint32_t unit)
{
    /* Frames past 2^32 wrap into the same counter: plans cap horizons far below. */
    return bl_res_normal(drive_seed, (uint32_t)frame, unit, BL_RD_NOISE);
}

void bl_res_noise_tape(const bl_rng_seed *drive, uint32_t units, uint64_t frames, double *out)
{
    if (drive->scheme == BL_RNG_PHILOX_HOST_V1) {
        bl_np_rng g;
        bl_np_rng_seed_digest(&g, drive->digest);
        for (uint64_t k = 0; k < frames * units; k++)
            out[k] = bl_np_standard_normal(&g);
        return;
    }
    for (uint64_t f = 0; f < frames; f++)
        for (uint32_t i = 0; i < units; i++)
            out[f * units + i] = bl_res_noise(drive->u64, f, i);
}
