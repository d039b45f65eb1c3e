/* CSV reader (libcsv over zlib) and field writer.
 *
 * libcsv is a push parser that reports neither line numbers nor positions, so
 * we feed it one line piece at a time: every piece ends at a CR or LF (or at
 * the end of a read chunk). A row can only end on a line terminator, so each
 * piece completes at most one row, which gives the pull model for free (stop
 * feeding as soon as a row is complete) and tells us the line of everything
 * libcsv reports.
 *
 * Field text: libcsv (strict mode) trims spaces and tabs around unquoted
 * fields, so " I2L   " reads as "I2L" and " 10" as "10"; quoted fields keep
 * their spaces. Fields are NUL-terminated copies, valid until the next
 * bl_csv_next. A NUL byte inside a field is an error (it would silently cut
 * the text short for every C consumer).
 *
 * gzip: only a file whose name ends in ".gz" is decompressed, and its
 * inflation is bounded (CSV_MAX_INFLATION times its size, plus 1 MiB), so a
 * few megabytes of compressed blank lines cannot stand for gigabytes of
 * table. A file not named .gz is read byte for byte, whatever it begins with
 * (zlib's transparent mode once let a gzip stream pass for a plain table).
 * Every file is read through bl_input (core/file.h): FIFOs and devices are
 * refused, and the bytes parsed are the bytes hashed; gzip members are
 * inflated here (zlib's inflate) from those bytes, one after another. */
#include "brainlesslab/csv.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <unistd.h>

#include "core/file.h"

/* Pathological-input guards: real tables are far below all three. The fuzz
 * build (tests/fuzz/run_fuzz.sh) shrinks them, and the read chunk, so that
 * small inputs reach the limits and straddle chunk boundaries. */
#ifndef CSV_MAX_FIELD_BYTES
#define CSV_MAX_FIELD_BYTES ((size_t)1 << 20)
#endif
#ifndef CSV_MAX_FIELDS
#define CSV_MAX_FIELDS ((size_t)100000)
#endif
#ifndef CSV_MAX_ROW_BYTES
#define CSV_MAX_ROW_BYTES ((size_t)64 << 20)
#endif
#ifndef CSV_CHUNK
#define CSV_CHUNK ((size_t)64 << 10)
#endif
#ifndef CSV_GZ_BUFFER
#define CSV_GZ_BUFFER (128u << 10)
#endif
#ifndef CSV_MAX_INFLATION
#define CSV_MAX_INFLATION 200u
#endif
#ifndef CSV_BLOCK
#define CSV_BLOCK ((size_t)64 << 10)
#endif
static const size_t max_field_bytes = CSV_MAX_FIELD_BYTES;
static const size_t max_fields = CSV_MAX_FIELDS;
static const size_t max_row_bytes = CSV_MAX_ROW_BYTES;
static const size_t chunk_size = CSV_CHUNK;

struct bl_csv {
    char *path;
    bl_input in;                /* the file, read once and hashed as read (core/file.h) */
    bool opened;                /* in is open */
    bool is_gz;                 /* inflate in's bytes (zs) */
    z_stream zs;
    bool z_live, z_mid, raw_eof; /* inflateInit done; inside a gzip member; in at its end */
    unsigned char *raw;         /* compressed bytes read, consumed by zs */
    const unsigned char *mem;   /* bl_csv_open_memory: not owned */
    size_t mem_len, mem_pos;
    uint64_t inflated, max_inflated; /* bytes produced by gzread, and its bound */
    struct csv_parser parser;
    bool parser_live; /* csv_init succeeded: csv_free is due */

    unsigned char *chunk; /* raw bytes read, consumed from chunk_pos */
    size_t chunk_len, chunk_pos;
    bool eof;      /* gzread reported end of input */
    bool finished; /* csv_fini done: no more rows */

    uint64_t line;     /* line of the next byte to feed (1-based) */
    uint64_t column;   /* 0-based byte column of the next byte to feed */
    bool prev_cr;      /* last byte fed was CR: a following LF ends the same line */
    bool in_row;       /* libcsv has begun a row (mirrors its ROW_NOT_BEGUN state) */
    uint64_t row_line; /* line on which the row being built began */
    uint64_t quote_line; /* line on which the open quoted field began */
    uint64_t fields_at_quote;
    uint64_t fields_total;

    /* The row being built, then the current row: texts back to back, NUL-terminated. */
    char *text;
    size_t text_len, text_cap;
    size_t *offs;
    size_t nfields, offs_cap;
    bool row_done;
    uint64_t cur_line; /* line of the current (returned) row */

    bool tsv;           /* tab-separated (is_tsv): a tab is the delimiter, not a blank */
    bool failed;        /* sticky: every later bl_csv_next fails with the same message */
    bl_status cb_status; /* an error raised inside a libcsv callback */
    bl_error cb_err;
    bl_error saved;
};

static bool is_blank(unsigned char c)
{
    return c == ' ' || c == '\t';
}

static void on_field(void *data, size_t len, void *ctx)
{
    bl_csv *c = ctx;
    c->fields_total++;
    if (c->cb_status)
        return;
    if (c->nfields >= max_fields) {
        c->cb_status = bl_fail(&c->cb_err, BL_ERR_FORMAT,
                               "%s:%llu: row has more than %zu fields", c->path,
                               (unsigned long long)c->row_line, max_fields);
        return;
    }
    /* feed_piece stops a field growing past the cap; this catches one that
     * crossed it within the piece that also ended it. */
    if (len > max_field_bytes) {
        c->cb_status = bl_fail(&c->cb_err, BL_ERR_FORMAT,
                               "%s:%llu: column %zu: field longer than %zu bytes", c->path,
                               (unsigned long long)c->row_line, c->nfields + 1,
                               max_field_bytes);
        return;
    }
    if (data && memchr(data, '\0', len)) {
        c->cb_status = bl_fail(&c->cb_err, BL_ERR_FORMAT,
                               "%s:%llu: column %zu: field contains a NUL byte", c->path,
                               (unsigned long long)c->row_line, c->nfields + 1);
        return;
    }
    if (c->text_len + len + 1 > max_row_bytes) {
        c->cb_status = bl_fail(&c->cb_err, BL_ERR_FORMAT, "%s:%llu: row is longer than %zu bytes",
                               c->path, (unsigned long long)c->row_line, max_row_bytes);
        return;
    }
    if (c->nfields == c->offs_cap) {
        size_t cap = c->offs_cap ? 2 * c->offs_cap : 16;
        size_t *o = realloc(c->offs, cap * sizeof *o);
        if (!o) {
            c->cb_status = bl_fail(&c->cb_err, BL_ERR_NOMEM, "%s:%llu: out of memory", c->path,
                                   (unsigned long long)c->row_line);
            return;
        }
        c->offs = o;
        c->offs_cap = cap;
    }
    if (c->text_len + len + 1 > c->text_cap) {
        size_t cap = c->text_cap ? c->text_cap : 256;
        while (cap < c->text_len + len + 1)
            cap *= 2;
        char *t = realloc(c->text, cap);
        if (!t) {
            c->cb_status = bl_fail(&c->cb_err, BL_ERR_NOMEM, "%s:%llu: out of memory", c->path,
                                   (unsigned long long)c->row_line);
            return;
        }
        c->text = t;
        c->text_cap = cap;
    }
    c->offs[c->nfields++] = c->text_len;
    if (len)
        memcpy(c->text + c->text_len, data, len);
    c->text_len += len;
    c->text[c->text_len++] = '\0';
}

static void on_row(int term, void *ctx)
{
    bl_csv *c = ctx;
    (void)term;
    c->in_row = false;
    c->row_done = true;
    c->cur_line = c->row_line;
}

static bl_status fail_sticky(bl_csv *c, bl_error *err, bl_status st, const bl_error *src)
{
    c->failed = true;
    c->saved = *src;
    c->saved.status = st;
    if (err)
        *err = c->saved;
    return st;
}

/* bl_csv_next's form of fail_sticky. */
static int fail_next(bl_csv *c, bl_error *err, const bl_error *e)
{
    fail_sticky(c, err, e->status, e);
    return -1;
}

static bool ends_with_gz(const char *path)
{
    size_t n = strlen(path);
    return n >= 3 && !strcmp(path + n - 3, ".gz");
}

/* A tab-separated file (.tsv, .tsv.gz: FlyWire's annotation tables) is read
 * with the same parser and limits, tab as the delimiter. */
static bool is_tsv(const char *path)
{
    size_t n = strlen(path);
    return (n >= 4 && !strcmp(path + n - 4, ".tsv")) || (n >= 7 && !strcmp(path + n - 7, ".tsv.gz"));
}

/* libcsv skips blanks (space and tab) around unquoted fields; in a TSV a tab
 * is the delimiter, never a blank, or empty fields would merge. */
static int tsv_space(unsigned char c) { return c == ' '; }

/* Allocate and initialise everything but the byte source. */
static bl_status csv_new(const char *path, bl_csv **out, bl_error *err)
{
    bl_csv *c = calloc(1, sizeof *c);
    if (!c)
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
    c->in.fd = -1;
    c->path = strdup(path);
    c->chunk = malloc(chunk_size);
    if (!c->path || !c->chunk) {
        bl_csv_close(c);
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
    }
    /* CSV_STRICT: a stray quote is an error, not data. CSV_STRICT_FINI: an
     * unterminated quoted field at end of file is an error. CSV_APPEND_NULL is
     * not needed: we copy each field with its length. */
    if (csv_init(&c->parser, CSV_STRICT | CSV_STRICT_FINI) != 0) {
        bl_csv_close(c);
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot initialise the CSV parser", path);
    }
    c->parser_live = true;
    /* libcsv grows its field buffer linearly by this block (default 128
     * bytes), which is quadratic for long fields; the field cap bounds it. */
    csv_set_blk_size(&c->parser, CSV_BLOCK);
    if (is_tsv(path)) {
        csv_set_delim(&c->parser, '\t');
        csv_set_space_func(&c->parser, tsv_space);
        c->tsv = true;
    }
    c->line = 1;
    *out = c;
    return BL_OK;
}

bl_status bl_csv_open(const char *path, bl_csv **out, bl_error *err)
{
    if (!out)
        return bl_fail(err, BL_ERR_INTERNAL, "bl_csv_open: out is NULL");
    *out = NULL;
    if (!path)
        return bl_fail(err, BL_ERR_INTERNAL, "bl_csv_open: path is NULL");
    bl_csv *c = NULL;
    bl_status st = csv_new(path, &c, err);
    if (st)
        return st;
    /* bl_input: never a FIFO or a device, and the bytes parsed are the bytes
     * hashed (the importers name their inputs by the digest it keeps). gzip
     * is inflated here from those same bytes, not by gzread from the file. */
    if ((st = bl_input_open(&c->in, path, err))) {
        bl_csv_close(c);
        return st;
    }
    c->opened = true;
    if (ends_with_gz(path)) {
        c->is_gz = true;
        /* 16 + MAX_WBITS: gzip only (a raw zlib or plain stream is an error). */
        if (!(c->raw = malloc(CSV_GZ_BUFFER)) || inflateInit2(&c->zs, 16 + MAX_WBITS) != Z_OK) {
            bl_csv_close(c);
            return bl_fail(err, BL_ERR_NOMEM, "%s: cannot open: out of memory", path);
        }
        c->z_live = true;
        c->max_inflated = c->in.size * CSV_MAX_INFLATION + ((uint64_t)1 << 20);
    }
    *out = c;
    return BL_OK;
}

bl_status bl_csv_open_memory(const char *name, const void *data, size_t len, bl_csv **out,
                             bl_error *err)
{
    if (!out)
        return bl_fail(err, BL_ERR_INTERNAL, "bl_csv_open_memory: out is NULL");
    *out = NULL;
    if (!name || (!data && len))
        return bl_fail(err, BL_ERR_INTERNAL, "bl_csv_open_memory: name or data is NULL");
    bl_status st = csv_new(name, out, err);
    if (st)
        return st;
    (*out)->mem = data;
    (*out)->mem_len = len;
    return BL_OK;
}

/* The next raw bytes into c->chunk: > 0 bytes, 0 at the end, -1 on error (E filled). */
static int read_source(bl_csv *c, bl_error *e)
{
    if (c->mem) {
        size_t n = c->mem_len - c->mem_pos;
        if (n > chunk_size)
            n = chunk_size;
        memcpy(c->chunk, c->mem + c->mem_pos, n);
        c->mem_pos += n;
        return (int)n;
    }
    if (!c->opened)
        return 0;
    if (!c->is_gz) {
        return (int)bl_input_read(&c->in, c->chunk, chunk_size, e);
    }
    /* gzip members one after another (as gzip -c a b > ab writes them), each
     * inflated from the raw bytes bl_input hashed. */
    c->zs.next_out = c->chunk;
    c->zs.avail_out = (uInt)chunk_size;
    while (c->zs.avail_out == chunk_size) {
        if (c->zs.avail_in == 0 && !c->raw_eof) {
            long long n = bl_input_read(&c->in, c->raw, CSV_GZ_BUFFER, e);
            if (n < 0)
                return -1;
            c->raw_eof = n == 0;
            c->zs.next_in = c->raw;
            c->zs.avail_in = (uInt)n;
        }
        if (c->zs.avail_in == 0 && c->raw_eof) {
            if (c->z_mid) {
                bl_fail(e, BL_ERR_FORMAT, "%s:%llu: cannot read: unexpected end of file (truncated gzip stream)",
                        c->path, (unsigned long long)c->line);
                return -1;
            }
            break;
        }
        int r = inflate(&c->zs, Z_NO_FLUSH);
        if (r == Z_STREAM_END) {
            c->z_mid = false;
            inflateReset(&c->zs);
        } else if (r == Z_OK || r == Z_BUF_ERROR) {
            c->z_mid = true;
        } else {
            bl_fail(e, r == Z_MEM_ERROR ? BL_ERR_NOMEM : BL_ERR_FORMAT, "%s:%llu: cannot read: %s", c->path,
                    (unsigned long long)c->line, c->zs.msg ? c->zs.msg : "corrupt gzip stream");
            return -1;
        }
    }
    int got = (int)(chunk_size - c->zs.avail_out);
    if (got > 0) {
        c->inflated += (uint64_t)got;
        if (c->inflated > c->max_inflated) {
            bl_fail(e, BL_ERR_FORMAT,
                    "%s:%llu: decompresses to more than %llu bytes (over %ux its compressed size); "
                    "refused as a decompression bomb",
                    c->path, (unsigned long long)c->line, (unsigned long long)c->max_inflated,
                    CSV_MAX_INFLATION);
            return -1;
        }
        return got;
    }
    return 0;
}

void bl_csv_close(bl_csv *c)
{
    if (!c)
        return;
    if (c->z_live)
        inflateEnd(&c->zs);
    free(c->raw);
    bl_input_close(&c->in);
    if (c->parser_live)
        csv_free(&c->parser);
    free(c->path);
    free(c->chunk);
    free(c->text);
    free(c->offs);
    free(c);
}

/* Feed one piece of the chunk (up to and including the next CR or LF). */
static bl_status feed_piece(bl_csv *c, bl_error *err)
{
    const unsigned char *s = c->chunk + c->chunk_pos;
    size_t avail = c->chunk_len - c->chunk_pos;
    size_t n = 0;
    while (n < avail && s[n] != '\n' && s[n] != '\r')
        n++;
    bool ends_line = n < avail;
    if (ends_line)
        n++;
    uint64_t line = c->line;
    uint64_t column = c->column;
    /* A lone LF right after CR belongs to the line the CR ended. */
    if (c->prev_cr && s[0] == '\n')
        line--;

    /* Mirror libcsv's ROW_NOT_BEGUN: blanks and line terminators are skipped,
     * any other byte (including ',' and '"') starts a row. */
    if (!c->in_row) {
        for (size_t i = 0; i < n; i++)
            if (!(is_blank(s[i]) && !(c->tsv && s[i] == '\t')) && s[i] != '\n' && s[i] != '\r') {
                c->in_row = true;
                c->row_line = line;
                break;
            }
    }

    size_t done = csv_parse(&c->parser, s, n, on_field, on_row, c);
    if (c->cb_status)
        return fail_sticky(c, err, c->cb_status, &c->cb_err);
    if (done != n) {
        bl_error e;
        int code = csv_error(&c->parser);
        if (code == CSV_EPARSE)
            bl_fail(&e, BL_ERR_FORMAT,
                    "%s:%llu:%llu: malformed quoting (a quote inside an unquoted field, or "
                    "text after a closing quote)",
                    c->path, (unsigned long long)line, (unsigned long long)(column + done + 1));
        else
            bl_fail(&e, code == CSV_ENOMEM ? BL_ERR_NOMEM : BL_ERR_FORMAT, "%s:%llu: %s",
                    c->path, (unsigned long long)line, csv_strerror(code));
        return fail_sticky(c, err, e.status, &e);
    }
    /* Remember where a still-open quoted field began, for the EOF message. */
    if (c->parser.quoted && c->fields_at_quote != c->fields_total + 1) {
        c->quote_line = line;
        c->fields_at_quote = c->fields_total + 1;
    }
    /* entry_pos is the length of the field libcsv is still accumulating. In
     * its "field might have ended" state (pstate 3) the last byte held is a
     * quote that the next byte decides about: a doubled quote keeps one, a
     * delimiter drops it. Counting it refused a field of exactly the limit
     * that ends in an escaped quote (found by the fuzzer's write-back check). */
    size_t pending_quote = c->parser.pstate == 3 && c->parser.entry_pos > 0;
    if (c->parser.entry_pos - pending_quote > max_field_bytes) {
        bl_error e;
        bl_fail(&e, BL_ERR_FORMAT, "%s:%llu: field longer than %zu bytes%s", c->path,
                (unsigned long long)(c->parser.quoted ? c->quote_line : line),
                max_field_bytes, c->parser.quoted ? " (unterminated quote?)" : "");
        return fail_sticky(c, err, BL_ERR_FORMAT, &e);
    }

    c->chunk_pos += n;
    if (!ends_line) {
        c->prev_cr = false;
        c->column += n;
    } else {
        /* The LF of a CRLF ends no new line: the CR already counted it. */
        if (!(s[0] == '\n' && c->prev_cr))
            c->line++;
        c->prev_cr = s[n - 1] == '\r';
        c->column = 0;
    }
    return BL_OK;
}

/* A whole plain line at chunk_pos, split without libcsv: no quote, no blank
 * (space, or tab when tab is not the delimiter), no CR, ended by an LF inside
 * the chunk, with libcsv between rows. libcsv (strict) reads such a line as
 * exactly its delimiter-separated pieces, so they go to the same callbacks
 * (limits, NUL bytes and messages are theirs); everything else is left to
 * libcsv. Most lines of a neuron table are plain, and libcsv's byte-at-a-time
 * machine was most of a FlyWire-scale neurons.csv's parse. Returns 0 when the
 * line is not plain (nothing consumed), 1 when a row was made, -1 on error. */
static int plain_line(bl_csv *c, bl_error *err)
{
    if (c->in_row || c->parser.pstate != 0 || c->parser.entry_pos != 0 || c->parser.quoted)
        return 0;
    const unsigned char *s = c->chunk + c->chunk_pos;
    size_t avail = c->chunk_len - c->chunk_pos, n = 0;
    const unsigned char delim = c->tsv ? '\t' : ',';
    if (avail == 0 || s[0] == '\n')
        return 0;
    for (; n < avail; n++) {
        unsigned char ch = s[n];
        if (ch == '\n')
            break;
        if (ch == '"' || ch == '\r' || ch == ' ' || (ch == '\t' && !c->tsv))
            return 0;
    }
    if (n == avail)
        return 0; /* the line goes on in the next chunk */
    c->in_row = true;
    c->row_line = c->line;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++)
        if (i == n || s[i] == delim) {
            on_field((void *)(s + start), i - start, c);
            start = i + 1;
        }
    on_row('\n', c);
    if (c->cb_status) {
        fail_sticky(c, err, c->cb_status, &c->cb_err);
        return -1;
    }
    c->chunk_pos += n + 1;
    c->line++;
    c->column = 0;
    c->prev_cr = false;
    return 1;
}

int bl_csv_next(bl_csv *c, bl_error *err)
{
    if (!c) {
        bl_fail(err, BL_ERR_INTERNAL, "bl_csv_next: csv is NULL");
        return -1;
    }
    if (c->failed) {
        if (err)
            *err = c->saved;
        return -1;
    }
    c->nfields = 0;
    c->text_len = 0;
    c->row_done = false;
    for (;;) {
        if (c->chunk_pos < c->chunk_len) {
            int plain = plain_line(c, err);
            if (plain)
                return plain;
            if (feed_piece(c, err))
                return -1;
            if (c->row_done)
                return 1;
            continue;
        }
        if (c->finished)
            return 0;
        if (!c->eof) {
            bl_error e;
            int got = read_source(c, &e);
            if (got < 0)
                return fail_next(c, err, &e);
            if (got > 0) {
                c->chunk_len = (size_t)got;
                c->chunk_pos = 0;
                continue;
            }
            c->eof = true;
        }
        /* End of input: let libcsv flush a last row without a final newline. */
        c->finished = true;
        if (csv_fini(&c->parser, on_field, on_row, c) != 0) {
            bl_error e;
            bl_fail(&e, BL_ERR_FORMAT,
                    "%s:%llu: unterminated quoted field (the quote opened on this line is "
                    "never closed)",
                    c->path, (unsigned long long)c->quote_line);
            return fail_next(c, err, &e);
        }
        if (c->cb_status)
            return fail_next(c, err, &c->cb_err);
        return c->row_done ? 1 : 0;
    }
}

size_t bl_csv_nfields(const bl_csv *c)
{
    return c && c->row_done ? c->nfields : 0;
}

const char *bl_csv_field(const bl_csv *c, size_t i)
{
    if (!c || !c->row_done || i >= c->nfields)
        return "";
    return c->text + c->offs[i];
}

uint64_t bl_csv_line(const bl_csv *c)
{
    return c ? c->cur_line : 0;
}

const char *bl_csv_path(const bl_csv *c)
{
    return c ? c->path : "";
}

bl_status bl_csv_column(const bl_csv *c, const char *name, size_t *index, bl_error *err)
{
    size_t n = bl_csv_nfields(c);
    size_t found = n;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(bl_csv_field(c, i), name) != 0)
            continue;
        if (found != n)
            return bl_fail(err, BL_ERR_FORMAT, "%s:%llu: column '%s' appears twice (columns %zu "
                           "and %zu)", c->path, (unsigned long long)c->cur_line, name,
                           found + 1, i + 1);
        found = i;
    }
    if (found == n)
        return bl_fail(err, BL_ERR_FORMAT, "%s:%llu: missing column '%s' in the header",
                       bl_csv_path(c), (unsigned long long)bl_csv_line(c), name);
    *index = found;
    return BL_OK;
}

bl_status bl_csv_expect_fields(const bl_csv *c, size_t n, bl_error *err)
{
    if (bl_csv_nfields(c) != n)
        return bl_fail(err, BL_ERR_FORMAT, "%s:%llu: expected %zu fields, found %zu",
                       bl_csv_path(c), (unsigned long long)bl_csv_line(c), n, bl_csv_nfields(c));
    return BL_OK;
}

static bl_status missing_field(const bl_csv *c, size_t i, bl_error *err)
{
    return bl_fail(err, BL_ERR_FORMAT, "%s:%llu: column %zu is missing (the row has %zu fields)",
                   bl_csv_path(c), (unsigned long long)bl_csv_line(c), i + 1, bl_csv_nfields(c));
}

/* Field text for a message: at most 64 bytes, control bytes escaped, so the
 * message stays one short line whatever the field holds. */
static const char *show_text(char *buf, size_t size, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0, i = 0;
    for (; s[i] && i < 64 && o + 8 < size; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch != 0x7f) {
            buf[o++] = (char)ch;
        } else {
            buf[o++] = '\\';
            buf[o++] = 'x';
            buf[o++] = hex[ch >> 4];
            buf[o++] = hex[ch & 15];
        }
    }
    if (s[i]) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

bl_status bl_csv_field_i64(const bl_csv *c, size_t i, int64_t min, int64_t max, int64_t *out,
                           bl_error *err)
{
    if (i >= bl_csv_nfields(c))
        return missing_field(c, i, err);
    const char *s = bl_csv_field(c, i);
    const char *p = s;
    bool neg = *p == '-';
    if (neg)
        p++;
    /* Accumulate the magnitude in uint64 so that INT64_MIN parses. */
    uint64_t mag = 0;
    bool ok = *p != '\0', overflow = false;
    for (; *p; p++) {
        if (*p < '0' || *p > '9') {
            ok = false;
            break;
        }
        unsigned d = (unsigned)(*p - '0');
        if (mag > (UINT64_MAX - d) / 10)
            overflow = true;
        else
            mag = mag * 10 + d;
    }
    int64_t v = 0;
    if (ok && !overflow) {
        if (neg) {
            if (mag > (uint64_t)INT64_MAX + 1)
                overflow = true;
            else
                v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
        } else if (mag > (uint64_t)INT64_MAX) {
            overflow = true;
        } else {
            v = (int64_t)mag;
        }
    }
    if (!ok || overflow || v < min || v > max) {
        char shown[300];
        return bl_fail(err, BL_ERR_FORMAT, "%s:%llu: column %zu: '%s' is not an integer in "
                       "[%lld, %lld]", bl_csv_path(c), (unsigned long long)bl_csv_line(c), i + 1,
                       show_text(shown, sizeof shown, s), (long long)min, (long long)max);
    }
    *out = v;
    return BL_OK;
}

bl_status bl_csv_field_f64(const bl_csv *c, size_t i, double *out, bl_error *err)
{
    if (i >= bl_csv_nfields(c))
        return missing_field(c, i, err);
    const char *s = bl_csv_field(c, i);
    char *end = NULL;
    double v = 0.0;
    /* strtod would skip leading whitespace; a field is trimmed already, so any
     * left (inside quotes) is a malformed number. */
    bool ok = *s != '\0' && !is_blank((unsigned char)*s) && *s != '\n' && *s != '\r' &&
              *s != '\v' && *s != '\f';
    if (ok) {
        errno = 0;
        v = strtod(s, &end);
        ok = end != s && *end == '\0' && isfinite(v);
    }
    if (!ok) {
        char shown[300];
        return bl_fail(err, BL_ERR_FORMAT, "%s:%llu: column %zu: '%s' is not a finite number",
                       bl_csv_path(c), (unsigned long long)bl_csv_line(c), i + 1,
                       show_text(shown, sizeof shown, s));
    }
    *out = v;
    return BL_OK;
}

int bl_csv_write_field(FILE *f, const char *text, int last_in_row)
{
    if (!f)
        return -1;
    if (!text)
        text = "";
    size_t n = strlen(text);
    /* Quote only when the reader would otherwise split, unquote or trim it. */
    bool quote = n > 0 && (strpbrk(text, ",\"\r\n") != NULL || is_blank((unsigned char)text[0]) ||
                           is_blank((unsigned char)text[n - 1]));
    if (quote) {
        if (csv_fwrite(f, text, n) != 0)
            return -1;
    } else if (n && fwrite(text, 1, n, f) != n) {
        return -1;
    }
    return fputc(last_in_row ? '\n' : ',', f) == EOF ? -1 : 0;
}
