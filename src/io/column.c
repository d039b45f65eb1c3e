/* bl_column's one function, on its own so that a backend can be built (for
 * its fuzz harness) without the dispatch and the other backends. */
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/table.h"

void bl_column_clear(bl_column *c)
{
    if (!c)
        return;
    free(c->i64);
    free(c->f64);
    free(c->offsets);
    free(c->data);
    free(c->valid);
    memset(c, 0, sizeof *c);
}
