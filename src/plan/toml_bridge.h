/* A small C view of a parsed TOML document (private to the library).
 *
 * toml++ is C++; this bridge is the only C++ in BrainlessLab. At parse time it
 * copies toml++'s tree into plain nodes that C can walk in O(1) per access,
 * then lets toml++ go: no toml++ type or exception ever crosses this header.
 * Table entries keep document order (toml++ itself sorts keys), so that the
 * first unknown key reported is the first one a reader sees in the file.
 * Nodes belong to their document and die with it. */
#ifndef BL_PLAN_TOML_BRIDGE_H
#define BL_PLAN_TOML_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bl_toml_doc bl_toml_doc;
typedef struct bl_toml_node bl_toml_node;

typedef enum bl_toml_type {
    BL_TOML_TABLE = 0,
    BL_TOML_ARRAY,
    BL_TOML_STRING,
    BL_TOML_INTEGER,
    BL_TOML_FLOAT,
    BL_TOML_BOOLEAN,
    BL_TOML_DATE,
    BL_TOML_TIME,
    BL_TOML_DATE_TIME
} bl_toml_type;

/* Larger plans than this are refused before parsing: a plan is a reviewable
 * text, and the cap keeps a hostile file from exhausting memory (toml++
 * holds about 100 bytes per byte of a dense plan: 64 MiB took 6.9 GB). 4 MiB
 * still holds every FlyWire root id listed by hand. */
#define BL_TOML_MAX_BYTES ((size_t)4 << 20)

/* Parse a file. Failures: "path: cannot open: <reason>" (BL_ERR_IO) or
 * "path:line:col: <toml++ message>" (BL_ERR_FORMAT). */
bl_status bl_toml_parse_file(const char *path, bl_toml_doc **out, bl_error *err);
/* Parse text already in memory; source_name stands for the path in messages. */
bl_status bl_toml_parse_text(const char *text, size_t len, const char *source_name,
                             bl_toml_doc **out, bl_error *err);
void bl_toml_destroy(bl_toml_doc *doc);

/* The root table. */
const bl_toml_node *bl_toml_root(const bl_toml_doc *doc);

bl_toml_type bl_toml_type_of(const bl_toml_node *n);
/* "table", "array", "string", "integer", "float", "boolean", "date", "time", "date-time". */
const char *bl_toml_type_name(bl_toml_type type);
/* 1-based source position of the node's value (0 when toml++ gives none). */
uint32_t bl_toml_line(const bl_toml_node *n);
uint32_t bl_toml_column(const bl_toml_node *n);

/* Tables: entries in document order. Sizes are 0 and lookups NULL for a node
 * of another type or an index out of range. A TOML key may hold any Unicode
 * character, U+0000 included, so the key's length comes back through len (may
 * be NULL); a C string comparison alone could mistake "a\0b" for "a". */
size_t bl_toml_table_size(const bl_toml_node *n);
const char *bl_toml_table_key(const bl_toml_node *n, size_t i, size_t *len);
const bl_toml_node *bl_toml_table_value(const bl_toml_node *n, size_t i);
/* Exact (length-aware) match of the whole key. */
const bl_toml_node *bl_toml_table_get(const bl_toml_node *n, const char *key);

size_t bl_toml_array_size(const bl_toml_node *n);
const bl_toml_node *bl_toml_array_at(const bl_toml_node *n, size_t i);

/* Typed getters: 1 and *out set when the node has that type, else 0 and *out
 * untouched. Strings are NUL-terminated, and len (may be NULL) tells whether
 * they hold an embedded NUL. get_double accepts integers (converted, exactly
 * up to 2^53) because "rate_hz = 150" means 150.0. */
int bl_toml_get_string(const bl_toml_node *n, const char **out, size_t *len);
int bl_toml_get_int(const bl_toml_node *n, int64_t *out);
int bl_toml_get_double(const bl_toml_node *n, double *out);
int bl_toml_get_bool(const bl_toml_node *n, int *out);
/* Dates and times in TOML's own notation (e.g. "1979-05-27T07:32:00Z"). */
int bl_toml_get_datetime(const bl_toml_node *n, const char **out);

#ifdef __cplusplus
}
#endif
#endif
