/* The snapshot blob shared by the backends that checkpoint within a trial
 * (snapshot.h): its layout, its checks, writing and restoring it. A backend
 * keeps its trial's last merged window, its unflushed pairs and its
 * partitions; this file knows nothing else of it. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "engine/partition.h"
#include "engine/snapshot.h"

static const char SNAP_MAGIC[8] = "BLSNAP1";

size_t bl_snap_len(const bl_network *net, uint64_t n_prev, uint64_t n_out)
{
    return sizeof(bl_snap_head) + ((size_t)net->delay_steps + 1) * sizeof(uint64_t) + n_prev * sizeof(int32_t) +
           (size_t)net->n_neurons * bl_partition_record_bytes(net) + 2 * n_out * sizeof(int32_t);
}

size_t bl_snap_records_offset(const bl_network *net, uint64_t n_prev)
{
    return sizeof(bl_snap_head) + ((size_t)net->delay_steps + 1) * sizeof(uint64_t) + n_prev * sizeof(int32_t);
}

void bl_snap_write(unsigned char *buf, const bl_network *net, uint32_t trial, uint64_t step, const uint64_t *start,
                   const i32_list *prev, const i32_list *out, const partition *parts, int n_parts)
{
    const size_t delay = (size_t)net->delay_steps;
    bl_snap_head h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, SNAP_MAGIC, sizeof h.magic);
    h.n_neurons = net->n_neurons;
    h.record_bytes = bl_partition_record_bytes(net);
    h.delay = delay;
    h.step = step;
    h.n_prev = prev->n;
    h.n_out = out->n / 2;
    h.trial = trial;
    unsigned char *o = buf;
    memcpy(o, &h, sizeof h);
    o += sizeof h;
    memcpy(o, start, (delay + 1) * sizeof *start);
    o += (delay + 1) * sizeof *start;
    if (prev->n)
        memcpy(o, prev->v, prev->n * sizeof *prev->v);
    o += prev->n * sizeof *prev->v;
    /* Every neuron's entries: zero, then each partition its own (an MPI
     * rank's blob thus holds its neurons only, and the ranks' blobs OR
     * together into the whole). */
    memset(o, 0, (size_t)net->n_neurons * h.record_bytes);
    for (int q = 0; q < n_parts; q++)
        bl_partition_save(&parts[q], o);
    o += (size_t)net->n_neurons * h.record_bytes;
    if (out->n)
        memcpy(o, out->v, out->n * sizeof *out->v);
}

bl_status bl_snap_check(const bl_network *net, uint32_t trial, const void *blob, size_t len, bl_error *err)
{
    bl_snap_head h;
    if (len < sizeof h)
        return bl_fail(err, BL_ERR_INVALID, "checkpoint of trial %" PRIu32 ": %zu bytes, shorter than its head",
                       trial, len);
    memcpy(&h, blob, sizeof h);
    if (memcmp(h.magic, SNAP_MAGIC, sizeof h.magic) || h.trial != trial || h.n_neurons != net->n_neurons ||
        h.delay != (uint64_t)net->delay_steps || h.record_bytes != bl_partition_record_bytes(net) ||
        h.step == 0 || h.step % h.delay || h.step > INT32_MAX)
        return bl_fail(err, BL_ERR_INVALID, "checkpoint of trial %" PRIu32 " is not one of this network's (%" PRIu64
                       " neurons, delay %" PRId64 ", model '%s')", trial, net->n_neurons, net->delay_steps,
                       net->model->name);
    if (h.n_prev > len / sizeof(int32_t) || h.n_out > len / (2 * sizeof(int32_t)) ||
        len != bl_snap_len(net, h.n_prev, h.n_out))
        return bl_fail(err, BL_ERR_INVALID, "checkpoint of trial %" PRIu32 ": %zu bytes, not what its head says", trial,
                       len);
    /* What the engine will index with: the window's offsets, its spikers
     * (sources: rows of the graph) and the pairs (neurons: counts rows). A
     * blob that breaks one is refused, never stepped. */
    const unsigned char *o = (const unsigned char *)blob + sizeof h;
    uint64_t prev_start = 0;
    for (uint64_t j = 0; j <= h.delay; j++) {
        uint64_t x;
        memcpy(&x, o + j * sizeof x, sizeof x);
        if ((j == 0 && x != 0) || x < prev_start || x > h.n_prev || (j == h.delay && x != h.n_prev))
            return bl_fail(err, BL_ERR_INVALID, "checkpoint of trial %" PRIu32 ": window offset %" PRIu64
                           " is out of order", trial, j);
        prev_start = x;
    }
    o += (h.delay + 1) * sizeof(uint64_t);
    for (uint64_t k = 0; k < h.n_prev; k++) {
        int32_t i;
        memcpy(&i, o + k * sizeof i, sizeof i);
        if (i < 0 || (uint64_t)i >= net->n_neurons)
            return bl_fail(err, BL_ERR_INVALID, "checkpoint of trial %" PRIu32 ": spiker %" PRIu64 " (neuron %d) is "
                           "not in the network", trial, k, i);
    }
    o += h.n_prev * sizeof(int32_t) + (size_t)net->n_neurons * h.record_bytes;
    for (uint64_t k = 0; k < h.n_out; k++) {
        int32_t pair[2];
        memcpy(pair, o + 2 * k * sizeof(int32_t), sizeof pair);
        if (pair[0] < 0 || (uint64_t)pair[0] >= h.step || pair[1] < 0 || (uint64_t)pair[1] >= net->n_neurons)
            return bl_fail(err, BL_ERR_INVALID, "checkpoint of trial %" PRIu32 ": spike %" PRIu64 " (step %d, "
                           "neuron %d) is not of this trial so far", trial, k, pair[0], pair[1]);
    }
    return BL_OK;
}

int64_t bl_snap_restore(const bl_network *net, const unsigned char *blob, uint64_t *start, i32_list *prev,
                        i32_list *out, const unsigned char **records)
{
    const size_t delay = (size_t)net->delay_steps;
    bl_snap_head h;
    memcpy(&h, blob, sizeof h);
    const unsigned char *o = blob + sizeof h;
    memcpy(start, o, (delay + 1) * sizeof *start);
    o += (delay + 1) * sizeof *start;
    prev->n = 0;
    if (!bl_list_reserve(prev, h.n_prev ? h.n_prev : 1))
        return -1;
    memcpy(prev->v, o, h.n_prev * sizeof *prev->v);
    prev->n = h.n_prev;
    o += h.n_prev * sizeof(int32_t);
    *records = o;
    o += (size_t)h.n_neurons * h.record_bytes;
    out->n = 0;
    if (!bl_list_reserve(out, h.n_out ? 2 * h.n_out : 1))
        return -1;
    memcpy(out->v, o, 2 * h.n_out * sizeof(int32_t));
    out->n = 2 * h.n_out;
    return (int64_t)(h.step / delay);
}

uint64_t bl_snap_step(const void *blob)
{
    bl_snap_head h;
    memcpy(&h, blob, sizeof h);
    return h.step;
}

bl_status bl_snap_list_add(bl_snap_list *l, const bl_network *net, uint32_t trial, const void *blob, size_t len,
                           bl_error *err)
{
    bl_status st = bl_snap_check(net, trial, blob, len, err);
    if (st)
        return st;
    if (bl_snap_list_find(l, trial))
        return bl_fail(err, BL_ERR_INVALID, "trial %" PRIu32 " is already to continue from a checkpoint", trial);
    bl_snap_item *v = realloc(l->v, (l->n + 1) * sizeof *v);
    unsigned char *copy = malloc(len);
    if (v)
        l->v = v;
    if (!v || !copy) {
        free(copy);
        return bl_fail(err, BL_ERR_NOMEM, "cannot keep the %zu-byte checkpoint of trial %" PRIu32, len, trial);
    }
    memcpy(copy, blob, len);
    l->v[l->n++] = (bl_snap_item){trial, copy, len};
    return BL_OK;
}

const unsigned char *bl_snap_list_find(const bl_snap_list *l, uint32_t trial)
{
    for (size_t k = 0; k < l->n; k++)
        if (l->v[k].trial == trial)
            return l->v[k].blob;
    return NULL;
}

void bl_snap_list_drop(bl_snap_list *l, uint32_t first, uint32_t n)
{
    for (size_t k = 0; k < l->n;) {
        if (l->v[k].trial >= first && l->v[k].trial - first < n) {
            free(l->v[k].blob);
            l->v[k] = l->v[--l->n];
        } else {
            k++;
        }
    }
}

void bl_snap_list_free(bl_snap_list *l)
{
    for (size_t k = 0; k < l->n; k++)
        free(l->v[k].blob);
    free(l->v);
    memset(l, 0, sizeof *l);
}
