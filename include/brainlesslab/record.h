/* Records: write-once, sealed directories that prove what was run and what
 * came out.
 *
 * Life of a record:
 *   bl_record_reserve   creates ROOT/NAME exclusively (never reuses one) and
 *                       leaves a .RESERVED marker (pid, host, time);
 *   bl_record_path      hands out paths for artifacts inside it;
 *   bl_record_add_input / bl_record_set_json
 *                       collect the inputs (hashed) and manifest sections;
 *   bl_record_seal      inventories every file, writes manifest.json and
 *                       checksums.sha256 (`sha256sum -c` format), fsyncs, then
 *                       writes DONE and removes .RESERVED;
 *   bl_record_fail      the same inventory with status FAILED and a FAILED marker;
 *   bl_record_destroy   frees the handle; an unsealed record stays as it is
 *                       (reserved, never DONE), which is what a crash leaves.
 *
 * Control files (manifest.json, checksums.sha256, DONE, FAILED, .RESERVED)
 * live at the top of the record and are not artifacts. Every other regular
 * file is an artifact; symlinks and special files are refused.
 *
 * bl_record_verify re-reads a record and reports tampering. It does not make
 * a record unforgeable (there is no signature): it detects accidents and
 * careless edits, and it refuses paths that escape the record. */
#ifndef BRAINLESSLAB_RECORD_H
#define BRAINLESSLAB_RECORD_H

#include "brainlesslab/export.h"
#include <stddef.h>
#include <stdio.h>

#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BL_RECORD_FORMAT "brainlesslab-record"
#define BL_RECORD_FORMAT_VERSION 1

typedef struct bl_record bl_record;

/* Create ROOT (and its parents) if missing, then ROOT/NAME exclusively.
 * NAME is one path component (no '/', not "." or ".."). An existing ROOT/NAME
 * is BL_ERR_EXISTS, whatever it holds. */
BL_API bl_status bl_record_reserve(const char *root, const char *name, bl_record **out, bl_error *err);

/* ROOT/NAME as built by reserve. */
BL_API const char *bl_record_dir(const bl_record *r);

/* Path of an artifact inside the record, creating its parent directories.
 * RELNAME is relative, has no empty, "." or ".." component, no backslash or
 * line break, and is not a control file. Fails once the record is sealed or failed. */
BL_API bl_status bl_record_path(bl_record *r, const char *relname, char *buf, size_t size,
                                bl_error *err);

/* Hash an input (path as given, absolute path, bytes, sha256) for the manifest's
 * "inputs" list under ROLE. A directory adds every regular file below it, in
 * path order, each as its own entry (symlinks to files are followed, symlinks
 * to directories are refused so that a cycle cannot loop). */
BL_API bl_status bl_record_add_input(bl_record *r, const char *role, const char *path, bl_error *err);

/* A top-level manifest section, e.g. "plan", "seeds", "run". KEY is
 * [A-Za-z0-9_-]+, set at most once, and not one of the record's own keys
 * (format, format_version, status, message, created_utc, finished_utc,
 * inputs, artifacts, software, host). JSON_TEXT must parse as JSON. */
BL_API bl_status bl_record_set_json(bl_record *r, const char *key, const char *json_text,
                                    bl_error *err);

/* Seal with status DONE. Everything is inventoried and hashed before anything
 * is written; if writing fails, what seal wrote is removed again, so the
 * record is left reserved and bl_record_fail can still be called. */
BL_API bl_status bl_record_seal(bl_record *r, bl_error *err);

/* Seal with status FAILED and MESSAGE. Files that cannot be inventoried
 * (symlinks, special files) are listed under "inventory_problems" instead of
 * stopping the failure report. */
BL_API bl_status bl_record_fail(bl_record *r, const char *message, bl_error *err);

BL_API void bl_record_destroy(bl_record *r);

/* Verify a sealed record. Prints one line per problem to REPORT (may be NULL)
 * and returns BL_ERR_INVALID with a one-line summary naming the files; a
 * FAILED or never-sealed record is never verified. On success *artifacts
 * (may be NULL) is the number of artifacts re-hashed. */
BL_API bl_status bl_record_verify(const char *dir, FILE *report, size_t *artifacts, bl_error *err);

/* Software and host identity as compact JSON objects, malloc'd (free()).
 * NULL only when out of memory.
 *   software: name, version, source_revision, source_dirty_sha256 ("" when the
 *             tree was clean), build_flags, compiler, libraries {...}
 *   host:     hostname, cpu_model, logical_cores, memory_bytes, os {...} */
BL_API char *bl_software_identity_json(void);
BL_API char *bl_host_identity_json(void);

#ifdef __cplusplus
}
#endif
#endif
