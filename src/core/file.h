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
