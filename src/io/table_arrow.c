/* Placeholder until the Arrow reader lands. */
#include <string.h>

#include "io/table_impl.h"

static int ar_sniff(const unsigned char *head, size_t len) { return len >= 6 && !memcmp(head, "ARROW1", 6); }
static bl_status ar_open(const char *path, void **state, bl_table_schema *schema, bl_error *err)
{
    (void)state, (void)schema;
    return bl_fail(err, BL_ERR_UNSUPPORTED, "%s: Arrow is not readable in this build yet", path);
}
static bl_status ar_next(void *state, const size_t *cols, size_t n, bl_column *out, uint64_t *rows, bl_error *err)
{
    (void)state, (void)cols, (void)n, (void)out, (void)rows;
    return bl_fail(err, BL_ERR_INTERNAL, "Arrow reader missing");
}
static void ar_close(void *state) { (void)state; }
const bl_table_backend bl_table_arrow = {"arrow", BL_TABLE_ARROW, ar_sniff, ar_open, ar_next, ar_close};
