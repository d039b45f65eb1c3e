/* libFuzzer harness for the flatbuffer layer and the Arrow metadata parsers
 * (src/io/arrow_fb.c, arrow_meta.c): the input is taken as a Message, as a
 * Schema, as a RecordBatch and as a DictionaryBatch. Beyond "never crash":
 * every parse either fails with a reason or yields positions inside the
 * buffer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "io/arrow_ipc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_batch(const fb_buf *b, const ar_batch *rb)
{
    if (rb->n_nodes && (rb->nodes_pos > b->len || rb->n_nodes > (b->len - rb->nodes_pos) / 16))
        abort();
    if (rb->n_bufs && (rb->bufs_pos > b->len || rb->n_bufs > (b->len - rb->bufs_pos) / 16))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fb_buf b = {data, size};
    char why[256];
    ar_message m;
    if (ar_parse_message(&b, &m, why, sizeof why) < 0) {
        if (!why[0])
            abort();
    }
    fb_table root;
    if (fb_root(&b, &root) != 1)
        return 0;
    ar_schema s;
    if (ar_parse_schema(&root, &s, why, sizeof why) == 0) {
        for (size_t i = 0; i < s.n; i++)
            if (!s.f[i].name || s.f[i].node0 > s.n_nodes || s.f[i].buf0 > s.n_buffers)
                abort();
        ar_schema_free(&s);
    }
    ar_batch rb;
    if (ar_parse_batch(&root, &rb, why, sizeof why) == 0)
        check_batch(&b, &rb);
    int64_t id;
    int delta;
    if (ar_parse_dictionary(&root, &id, &delta, &rb, why, sizeof why) == 0)
        check_batch(&b, &rb);
    return 0;
}
