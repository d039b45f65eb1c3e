/* libFuzzer harness for the Thrift compact protocol layer and the Parquet
 * metadata built on it (src/io/parquet_thrift.c, parquet_meta.c): the input
 * is parsed as a FileMetaData, as a PageHeader, and skipped as a struct.
 * Each must succeed or fail with a reason, never read outside the input,
 * never nest without bound, and never allocate beyond what the input's
 * length allows (lists are bounded by the bytes left). A parsed footer must
 * be self-consistent: counts match the arrays allocated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/parquet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bl_pq_why why;
    bl_pq_file_meta m;
    if (bl_pq_parse_file_meta(data, size, &m, &why) == 0) {
        if (m.n_schema == 0 || !m.schema || m.num_rows < 0)
            abort();
        for (uint32_t i = 0; i < m.n_schema; i++)
            if (!m.schema[i].name || m.schema[i].num_children < 0)
                abort();
        for (uint32_t g = 0; g < m.n_row_groups; g++) {
            if (m.row_groups[g].num_rows < 0 || (m.row_groups[g].n_columns && !m.row_groups[g].columns))
                abort();
            for (uint32_t c = 0; c < m.row_groups[g].n_columns; c++) {
                const bl_pq_chunk_meta *k = &m.row_groups[g].columns[c];
                if (k->has_meta && (k->num_values < 0 || k->total_compressed < 0 || k->data_page_offset < 0))
                    abort();
            }
        }
    } else if (!why.text[0] || strchr(why.text, '\n')) {
        abort();
    }
    bl_pq_file_meta_free(&m);

    bl_pq_page_header h;
    size_t used;
    why.text[0] = '\0';
    if (bl_pq_parse_page_header(data, size, &h, &used, &why) == 0) {
        if (used > size || h.compressed < 0 || h.uncompressed < 0 || h.num_values < 0)
            abort();
    } else if (!why.text[0]) {
        abort();
    }

    bl_pq_thrift t;
    bl_pq_t_init(&t, data, size, &why);
    if (bl_pq_t_skip(&t, PQ_T_STRUCT) == 0 && (t.p > t.end || t.depth != 0))
        abort();
    return 0;
}
