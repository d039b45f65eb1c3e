/* libFuzzer harness for the .npy reader. Beyond "never crash": a failure must
 * come with a proper message, and whatever is accepted must survive a write
 * and re-read unchanged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/npy.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path(0, ".npy");
    fuzz_write(path, data, size);
    bl_npy_array a;
    bl_error err;
    bl_error_clear(&err);
    /* The streaming reader must agree with the whole reader on what opens. */
    bl_npy_reader *r = NULL;
    bl_status rst = bl_npy_reader_open(path, BL_DTYPE_INT32, -1, &r, &err);
    if (rst)
        fuzz_check_error(&err, rst, path);
    uint64_t r_count = r ? bl_npy_reader_count(r) : 0;
    bl_status st = bl_npy_read(path, &a, &err);
    if (r) {
        /* opened as int32: the whole read must succeed with the same size, and
         * streaming the elements in odd chunks must give the same bytes */
        if (st || a.dtype != BL_DTYPE_INT32 || a.count != r_count)
            abort();
        int32_t buf[7];
        for (uint64_t at = 0; at < r_count; at += 7) {
            uint64_t k = r_count - at < 7 ? r_count - at : 7;
            if (bl_npy_reader_read(r, buf, k, &err) != BL_OK ||
                memcmp(buf, (const int32_t *)a.data + at, (size_t)k * sizeof *buf) != 0)
                abort();
        }
        bl_npy_reader_close(r);
    }
    if (st) {
        fuzz_check_error(&err, st, path);
        if (a.data || a.count || a.ndim)
            abort();
        return 0;
    }
    uint64_t count = 1;
    for (int i = 0; i < a.ndim; i++)
        count *= a.shape[i];
    if (!a.data || a.ndim < 0 || a.ndim > BL_NPY_MAX_DIMS || (a.ndim ? count : 1) != a.count)
        abort();
    size_t bytes = (size_t)a.count * bl_dtype_size(a.dtype);
    if (bytes > size)
        abort(); /* the data came from the file, so cannot exceed it */

    /* The other dtypes must be refused by read_expect with a proper message. */
    bl_npy_array b;
    bl_dtype other = a.dtype == BL_DTYPE_INT32 ? BL_DTYPE_FLOAT64 : BL_DTYPE_INT32;
    st = bl_npy_read_expect(path, other, -1, &b, &err);
    fuzz_check_error(&err, st, path);
    st = bl_npy_read_expect(path, a.dtype, a.ndim + 1, &b, &err);
    fuzz_check_error(&err, st, path);

    const char *copy = fuzz_path(1, ".npy");
    if (bl_npy_write(copy, a.dtype, a.ndim, a.shape, a.data, &err) != BL_OK)
        abort();
    if (bl_npy_read_expect(copy, a.dtype, a.ndim, &b, &err) != BL_OK || b.count != a.count ||
        memcmp(a.shape, b.shape, sizeof a.shape) != 0 || memcmp(a.data, b.data, bytes) != 0)
        abort();
    bl_npy_free(&b);
    bl_npy_free(&a);
    return 0;
}
