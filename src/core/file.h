/* Opening input files safely. Every reader goes through bl_open_regular, so
 * that a FIFO, a device (/dev/zero, /dev/urandom) or a directory given where
 * a data file is expected is refused at once instead of blocking forever or
 * being read without end. */
#ifndef BL_CORE_FILE_H
#define BL_CORE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Open PATH read-only. O_NONBLOCK during open keeps a FIFO with no writer
 * from blocking; the file must then be a regular file (after symlinks), and
 * the descriptor is returned in blocking mode with its size in *size (may be
 * NULL). The message names the path and what it is instead. */
bl_status bl_open_regular(const char *path, int *fd, uint64_t *size, bl_error *err);

/* Read exactly LEN bytes from FD (retrying short reads and EINTR). Returns 0,
 * or -1 with errno set; a premature end of file is -1 with errno = 0. */
int bl_read_full(int fd, void *buf, size_t len);

/* Read a whole regular file of at most MAX bytes into a NUL-terminated
 * buffer (malloc'd). The bytes returned are the bytes read once, so a caller
 * that hashes and parses them describes exactly what it used. */
bl_status bl_read_small(const char *path, size_t max, char **text, size_t *len, bl_error *err);

/* ---- Inputs read once, hashed as read ----
 * A record names its inputs by SHA-256. Hashing a file a second time, after
 * parsing it, names whatever the file holds by then (issue 26: imports named
 * bytes they did not import while the file was being rewritten), so every
 * reader of an input goes through these: the digest is of the very bytes the
 * parser was given. */
struct bl_sha256;
typedef struct bl_input {
    int fd;
    uint64_t size; /* at open (fstat) */
    uint64_t done; /* bytes read so far */
    struct bl_sha256 *sha;
    char *path;
    int ended;
    char hex[65]; /* once ended: the SHA-256 of every byte read */
} bl_input;

/* Open PATH (bl_open_regular: never a FIFO or device) for reading once. */
bl_status bl_input_open(bl_input *in, const char *path, bl_error *err);
/* Up to cap bytes (> 0), 0 at the end of the file, -1 on a read error (err
 * filled). At the end, the digest of every byte returned goes to the input
 * ledger (below). */
long long bl_input_read(bl_input *in, void *buf, size_t cap, bl_error *err);
void bl_input_close(bl_input *in); /* safe on a zeroed or closed input */

/* A whole regular file of at most MAX bytes into memory (malloc'd, plus a
 * NUL), read once and hashed as read (hex may be NULL), noted in the ledger:
 * for readers that need random access (Parquet, Arrow) and still must parse
 * exactly what they hash. */
bl_status bl_read_input(const char *path, uint64_t max, uint8_t **data, size_t *len, char hex[65], bl_error *err);

/* The input ledger (one per thread): between begin and end, every input read
 * to its end through bl_input_read / bl_read_input / bl_read_small is noted
 * with its digest. An importer asks it for the digests it writes into the
 * connectome's manifest; a file read twice with different bytes is reported,
 * not silently named by one of them. Nested begin/end pairs share the outer
 * ledger. */
void bl_inputs_begin(void);
void bl_inputs_end(void);
/* 1: read in full (hex, bytes); 0: not read in full since begin (or no
 * ledger); -1: read more than once, with different bytes. */
int bl_inputs_find(const char *path, char hex[65], uint64_t *bytes);

/* Memory for a large array about to be filled from a file (a connectome's
 * targets and counts: 60 MB each at FlyWire scale). At 2 MiB and above it is
 * 2 MiB-aligned and offered to the kernel for transparent huge pages, where
 * the system allows them only on request (the Debian default, "madvise"):
 * filling 126 MB in 4 KiB pages cost ~0.4 s of page faults, half of a FlyWire
 * process, and the hot delivery loop then walks fewer TLB entries. Contents
 * and results are unchanged; release with free(). NULL when out of memory. */
void *bl_alloc_bulk(size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
