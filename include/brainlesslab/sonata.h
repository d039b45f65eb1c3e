/* SONATA spike files (HDF5), the layout that NEST, NEURON/BMTK and libsonata
 * read:
 *
 *   /spikes/<population>             group, attribute "sorting": HDF5 enum
 *                                    (uint8: none=0, by_id=1, by_time=2), as the
 *                                    SONATA developer guide specifies and
 *                                    libsonata reads
 *   /spikes/<population>/timestamps  float64 [N], attribute "units" = "ms"
 *   /spikes/<population>/node_ids    uint64 [N]
 *   /spikes/<population>/trial       uint32 [N], optional: a BrainlessLab
 *                                    extension naming the trial of each spike;
 *                                    SONATA readers ignore it
 *
 * Files are written once (an existing path is refused) and byte-reproducibly:
 * HDF5's object modification times are switched off, so equal spikes give
 * equal files and equal SHA-256 in a record.
 *
 * HDF5 (serial build) is not thread-safe: call these from one thread at a time. */
#ifndef BRAINLESSLAB_SONATA_H
#define BRAINLESSLAB_SONATA_H

#include "brainlesslab/export.h"
#include <stdint.h>

#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Write N spikes of one population. SORTING is "by_time", "by_id" or "none";
 * the data must actually be in that order ("by_id": node id, then time;
 * "by_time": time), otherwise BL_ERR_INVALID names the first index out of
 * order. Timestamps must be finite. TRIALS may be NULL (no trial dataset).
 * N == 0 writes valid empty datasets (the pointers may then be NULL). */
BL_API bl_status bl_sonata_write_spikes(const char *path, const char *population, uint64_t n,
                                        const double *timestamps_ms, const uint64_t *node_ids,
                                        const uint32_t *trials, const char *sorting, bl_error *err);

/* A spike file written in pieces (for spikes streamed during a run): one
 * population, sorting "by_time" (appends must not go back in time), the
 * datasets chunked and compressed (shuffle + deflate), so that memory does
 * not grow with the number of spikes. Writers may be used from several
 * threads at once (one writer per thread; HDF5 calls are serialised inside).
 * close finishes the file; abort (or a failed close) removes it. */
typedef struct bl_sonata_writer bl_sonata_writer;
BL_API bl_status bl_sonata_writer_open(const char *path, const char *population, bl_sonata_writer **out,
                                       bl_error *err);
BL_API bl_status bl_sonata_writer_append(bl_sonata_writer *w, uint64_t n, const double *timestamps_ms,
                                         const uint64_t *node_ids, bl_error *err);
BL_API uint64_t bl_sonata_writer_n(const bl_sonata_writer *w); /* spikes appended so far */
BL_API bl_status bl_sonata_writer_close(bl_sonata_writer *w, bl_error *err);
BL_API void bl_sonata_writer_abort(bl_sonata_writer *w);

typedef struct bl_sonata_spikes {
    char population[256];
    char sorting[16]; /* "none", "by_id", "by_time", or "" when the attribute is absent */
    uint64_t n;
    double *timestamps_ms; /* n values, malloc'd (NULL when n == 0) */
    uint64_t *node_ids;    /* n values, malloc'd (NULL when n == 0) */
    uint32_t *trials;      /* n values, malloc'd; NULL when n == 0 or there is no trial dataset */
    int has_trials;        /* the file has a trial dataset */
} bl_sonata_spikes;

/* Read one population. POPULATION may be NULL when /spikes holds exactly one.
 * Timestamps must be in ms (a "units" attribute other than "ms" is
 * BL_ERR_UNSUPPORTED; a missing one is taken as ms). The sorting attribute may
 * be the SONATA enum or a string (as BMTK writes it). On failure *out is zeroed. */
BL_API bl_status bl_sonata_read_spikes(const char *path, const char *population, bl_sonata_spikes *out,
                                       bl_error *err);

BL_API void bl_sonata_spikes_free(bl_sonata_spikes *spikes);

#ifdef __cplusplus
}
#endif
#endif
