/* The directory loader's piece checks (connectome_impl.h). This file is
 * compiled at -O3 (CMakeLists.txt) so that GCC vectorises the loops: they
 * are integer comparisons and sums, whose verdicts no optimisation changes.
 * At -O2 they were a tenth of a FlyWire-scale load's CPU time. */
#include "connectome/connectome_impl.h"

void bl_check_targets_piece(bl_target_check *tc, const int32_t *t, uint64_t first, uint64_t count)
{
    const int64_t *off = tc->off;
    uint64_t k = first, end = first + count, i = tc->row;
    const uint32_t n = (uint32_t)tc->n; /* n <= BL_MAX_NEURONS < 2^31 */
    unsigned bad = 0;
    while (k < end) {
        while ((uint64_t)off[i + 1] <= k) /* empty rows; valid offsets end at e > k */
            i++;
        uint64_t stop = (uint64_t)off[i + 1] < end ? (uint64_t)off[i + 1] : end;
        /* The row's part in this piece: in range, and above the previous
         * target except at the row's first edge (which may be in the
         * previous piece: t is the whole array). */
        bad |= (uint32_t)t[k] >= n;
        if (k > (uint64_t)off[i])
            bad |= t[k] <= t[k - 1];
        for (uint64_t j = k + 1; j < stop; j++)
            bad |= ((uint32_t)t[j] >= n) | (t[j] <= t[j - 1]);
        k = stop;
    }
    tc->row = i;
    tc->bad |= bad != 0;
}

void bl_check_counts_piece(bl_count_check *cc, const int32_t *c, uint64_t count)
{
    uint64_t sum = 0;
    unsigned bad = 0;
    for (uint64_t k = 0; k < count; k++) {
        uint32_t v = (uint32_t)c[k];
        uint32_t mag = c[k] < 0 ? 0u - v : v; /* INT32_MIN gives 2^31 */
        sum += mag;
        bad |= mag - 1u >= 0x7fffffffu; /* mag 0 or 2^31: count 0 or INT32_MIN */
    }
    cc->synapses += sum;
    cc->bad |= bad != 0;
}
