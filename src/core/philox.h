/* Philox4x32-10 (Random123), the block function. The counter names the draw,
 * so a draw is the same whichever thread, rank or batch computes it. Streams
 * key it with a seed through bl_stream_block (core/stream.h), never by hand. */
#ifndef BL_CORE_PHILOX_H
#define BL_CORE_PHILOX_H

#include <stdint.h>

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wshadow"
#endif
#include <Random123/philox.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

static inline void bl_philox4x32(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4])
{
    philox4x32_ctr_t c = {{counter[0], counter[1], counter[2], counter[3]}};
    philox4x32_key_t k = {{key[0], key[1]}};
    philox4x32_ctr_t r = philox4x32_R(10, c, k);
    out[0] = r.v[0];
    out[1] = r.v[1];
    out[2] = r.v[2];
    out[3] = r.v[3];
}

#endif
