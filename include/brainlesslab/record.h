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
 * bl_record_verify re-reads a record and reports tampering. Unsigned, it
 * detects accidents and careless edits (and refuses paths that escape the
 * record) but not a forger who rewrites artifacts, manifest and checksums
 * together. A record sealed with an Ed25519 key (bl_record_sign_with) carries
 * SIGNATURE over checksums.sha256, which names the manifest's hash, so
 * verifying with the public key (bl_record_verify_with) detects any change.
 *
 * Format versions: 1 (the first); 2 adds record_name, plan_sha256 and
 * required_artifacts (the record's binding to its plan) and the optional
 * signature. verify reads both; the binding checks apply to version 2. */
#ifndef BRAINLESSLAB_RECORD_H
#define BRAINLESSLAB_RECORD_H

#include <stdbool.h>
#include "brainlesslab/export.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BL_RECORD_FORMAT "brainlesslab-record"
#define BL_RECORD_FORMAT_VERSION 2
#define BL_RECORD_FORMAT_VERSION_MIN 1 /* oldest that verify reads */

typedef struct bl_record bl_record;

/* Create ROOT (and its parents) if missing, then ROOT/NAME exclusively.
 * NAME is one path component (no '/', not "." or ".."). An existing ROOT/NAME
 * is BL_ERR_EXISTS, whatever it holds. */
BL_API bl_status bl_record_reserve(const char *root, const char *name, bl_record **out, bl_error *err);

/* Reopen a record that a killed run left reserved, or that was sealed FAILED,
 * to finish it (a resumed run): BL_ERR_EXISTS for a DONE record or one whose
 * reserving process still runs on this host. The old FAILED marker, manifest,
 * checksums and signature are removed; the other files stay. */
BL_API bl_status bl_record_reopen(const char *dir, bl_record **out, bl_error *err);

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

/* An input whose bytes the caller has already read and hashed in the pass
 * that used them (a connectome load, a plan parse): recorded as given, never
 * re-read, so the record names exactly the bytes used even if the file has
 * changed since. SHA256 is 64 lowercase hex digits. */
BL_API bl_status bl_record_add_input_digest(bl_record *r, const char *role, const char *path,
                                     const char *sha256, uint64_t bytes, bl_error *err);

/* Bind the record to the plan it runs: the manifest stores PLAN_SHA256 and
 * the record's own name (verify requires the name to be unchanged and to
 * carry the hash's first 8 digits), and REQUIRED lists the artifacts the
 * plan's outputs promise: sealing DONE without one of them fails, and verify
 * reports one that is missing. */
BL_API bl_status bl_record_bind(bl_record *r, const char *plan_sha256, const char *const *required,
                         size_t n_required, bl_error *err);

/* Sign the record when it is sealed (DONE or FAILED) with the Ed25519 private
 * key in KEY_PATH (PEM, as bl_record_keygen writes it). The key is loaded now,
 * so a bad key fails before any work. */
BL_API bl_status bl_record_sign_with(bl_record *r, const char *key_path, bl_error *err);

/* Write a new Ed25519 key pair: PRIVATE_PATH (PEM PKCS#8, mode 0600) and
 * PUBLIC_PATH (PEM SubjectPublicKeyInfo). Neither may exist already. */
/* Check a signing key before anything is reserved: it must load (a missing
 * file, a directory, a public key or a truncated PEM fail here, not after a
 * record exists). When the key is readable by group or others, *warning (cap
 * bytes) says so, else it is empty; the key is still usable. */
BL_API bl_status bl_record_check_sign_key(const char *path, char *warning, size_t cap, bl_error *err);
BL_API bl_status bl_record_keygen(const char *private_path, const char *public_path, bl_error *err);

/* Until the record is sealed, failed or destroyed, SIGINT, SIGTERM and SIGHUP
 * mark it FAILED ("stopped by signal SIGTERM ...") and then end the process
 * by the same signal. Sealing and failing are serialised with the handler, so
 * a signal during seal waits for it (and then finds nothing to do). One
 * record at a time per process. */
BL_API bl_status bl_record_guard_signals(bl_record *r, bl_error *err);

/* Invariant checker for asserts: the handle's state agrees with the markers
 * on disk (open: .RESERVED and neither DONE nor FAILED; sealed: DONE, no
 * FAILED; failed: FAILED, no DONE). When it does not, why (when not NULL)
 * says which marker is wrong, in which directory. */
BL_API bool bl_record_sane(const bl_record *r, bl_error *why);

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

typedef struct bl_verify_options {
    const char *public_key; /* PEM path: require a valid SIGNATURE by this key; NULL: unsigned checks */
} bl_verify_options;

/* bl_record_verify with options. Every line it prints, and the summary, has
 * non-printable bytes escaped (\xNN), so a crafted manifest cannot forge
 * output lines or terminal sequences. */
BL_API bl_status bl_record_verify_with(const char *dir, const bl_verify_options *opt, FILE *report,
                                size_t *artifacts, bl_error *err);

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
