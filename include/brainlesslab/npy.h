/* NumPy .npy files (format versions 1.0, 2.0 and 3.0), little-endian, C order.
 * No packaged C library reads .npy, so this is ours; it validates everything it
 * reads (magic, version, header dict, dtype, byte order, fortran_order, shape,
 * truncation) and never reads past the end of the file. */
#ifndef BRAINLESSLAB_NPY_H
#define BRAINLESSLAB_NPY_H

#include "brainlesslab/export.h"
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bl_dtype {
    BL_DTYPE_BOOL,    /* '|b1' */
    BL_DTYPE_INT8,    /* '|i1' */
    BL_DTYPE_UINT8,   /* '|u1' */
    BL_DTYPE_INT32,   /* '<i4' */
    BL_DTYPE_UINT32,  /* '<u4' */
    BL_DTYPE_INT64,   /* '<i8' */
    BL_DTYPE_UINT64,  /* '<u8' */
    BL_DTYPE_FLOAT32, /* '<f4' */
    BL_DTYPE_FLOAT64  /* '<f8' */
} bl_dtype;

#define BL_NPY_MAX_DIMS 8

typedef struct bl_npy_array {
    bl_dtype dtype;
    int ndim;
    uint64_t shape[BL_NPY_MAX_DIMS];
    uint64_t count; /* product of shape (1 for a 0-d array) */
    void *data;     /* count elements, malloc'd; owned by the array */
} bl_npy_array;

BL_API size_t bl_dtype_size(bl_dtype dtype);
BL_API const char *bl_dtype_descr(bl_dtype dtype); /* e.g. "<i4" */

/* Read a whole file. On failure *out is zeroed and the message names the path
 * and what is wrong (for example "x.npy: header: shape (3,) but file holds 2 elements"). */
/* bl_npy_read, also giving the SHA-256 (hex) and size of the bytes parsed:
 * the file is read once, so the digest names exactly the array returned. */
BL_API bl_status bl_npy_read_hashed(const char *path, bl_npy_array *out, char sha256[65], uint64_t *bytes,
                                    bl_error *err);
BL_API bl_status bl_npy_read(const char *path, bl_npy_array *out, bl_error *err);

/* Read and require a dtype and a number of dimensions (ndim < 0: any). */
BL_API bl_status bl_npy_read_expect(const char *path, bl_dtype dtype, int ndim, bl_npy_array *out,
                                    bl_error *err);

BL_API void bl_npy_free(bl_npy_array *array);

/* The preamble and header of a .npy file held in memory: PREFIX is the first
 * LEN bytes of a file of FILE_SIZE bytes, with LEN at least
 * min(FILE_SIZE, BL_NPY_PREFIX_BYTES). Checked exactly as bl_npy_read checks
 * a file (including that FILE_SIZE holds exactly the data the shape needs);
 * the data begin at byte data_offset. For readers that read (and hash) the
 * bytes themselves, so that what is parsed is what was hashed. */
#define BL_NPY_PREFIX_BYTES ((size_t)12 + 65536)
typedef struct bl_npy_header {
    bl_dtype dtype;
    int ndim;
    uint64_t shape[BL_NPY_MAX_DIMS];
    uint64_t count;       /* elements */
    uint64_t data_offset; /* first data byte */
    uint64_t data_bytes;  /* count * itemsize */
} bl_npy_header;
BL_API bl_status bl_npy_parse_header(const char *path, const void *prefix, size_t len, uint64_t file_size,
                              bl_npy_header *out, bl_error *err);

/* Streaming reader for arrays too large to hold whole (a rank keeping only
 * part of a graph): the header is validated as bl_npy_read does and must have
 * the given dtype and number of dimensions (ndim < 0: any); elements are then
 * read in order, in chunks of any size. */
typedef struct bl_npy_reader bl_npy_reader;
BL_API bl_status bl_npy_reader_open(const char *path, bl_dtype dtype, int ndim, bl_npy_reader **out,
                                    bl_error *err);
BL_API uint64_t bl_npy_reader_count(const bl_npy_reader *r);         /* elements in the file */
BL_API const uint64_t *bl_npy_reader_shape(const bl_npy_reader *r);  /* [ndim] */
/* The next n elements into buf; asking past the end is an error. */
BL_API bl_status bl_npy_reader_read(bl_npy_reader *r, void *buf, uint64_t n, bl_error *err);
BL_API void bl_npy_reader_close(bl_npy_reader *r);
/* Write a whole array (version 1.0 header, 64-byte aligned). */
BL_API bl_status bl_npy_write(const char *path, bl_dtype dtype, int ndim, const uint64_t *shape,
                              const void *data, bl_error *err);

/* Streaming writer for arrays too large to build twice in memory: the shape is
 * declared up front, elements are appended in order, close checks the count. */
typedef struct bl_npy_writer bl_npy_writer;
BL_API bl_status bl_npy_writer_open(const char *path, bl_dtype dtype, int ndim, const uint64_t *shape,
                                    bl_npy_writer **out, bl_error *err);
BL_API bl_status bl_npy_writer_append(bl_npy_writer *w, const void *data, uint64_t n_elements,
                                      bl_error *err);
/* Returns an error if fewer or more elements than declared were appended; the
 * writer is freed either way. */
BL_API bl_status bl_npy_writer_close(bl_npy_writer *w, bl_error *err);

#ifdef __cplusplus
}
#endif
#endif
