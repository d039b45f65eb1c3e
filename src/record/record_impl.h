/* Internals shared by the record sources: record.c (reserve, seal, fail),
 * verify.c, tree.c (walking and opening inside a record without following
 * symlinks) and identity.c (software and host). */
#ifndef BL_RECORD_IMPL_H
#define BL_RECORD_IMPL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "brainlesslab/error.h"
#include "brainlesslab/hash.h"
#include "brainlesslab/record.h"

/* Control files: at the top of a record, never artifacts. */
#define BL_RECORD_MANIFEST "manifest.json"
#define BL_RECORD_CHECKSUMS "checksums.sha256"
#define BL_RECORD_DONE "DONE"
#define BL_RECORD_FAILED "FAILED"
#define BL_RECORD_RESERVED ".RESERVED"
#define BL_RECORD_SIGNATURE "SIGNATURE"
/* Disk space held from reservation to sealing (BL_RECORD_BALLAST_BYTES):
 * released first thing when the record is sealed or failed, so that a run
 * that filled the disk can still write its FAILED manifest and marker
 * instead of leaving .RESERVED behind (issue 26). */
#define BL_RECORD_BALLAST ".BALLAST"
#define BL_RECORD_BALLAST_BYTES ((off_t)2 << 20)

/* The largest manifest.json that seal writes and verify reads. */
#define BL_RECORD_MANIFEST_MAX ((size_t)64 << 20)

bool bl_record_is_control_name(const char *name);

/* NULL when PATH is a clean relative path inside a record; otherwise why not
 * ("is absolute", "contains '..'", ...). Backslashes and line breaks are
 * refused because `sha256sum` would escape them in checksums.sha256. */
const char *bl_record_bad_relpath(const char *path);

typedef enum bl_entry_kind {
    BL_ENTRY_FILE,
    BL_ENTRY_DIR,
    BL_ENTRY_SYMLINK,
    BL_ENTRY_OTHER /* device, fifo, socket */
} bl_entry_kind;

typedef struct bl_record_entry {
    char *path; /* relative to the record, '/'-separated */
    bl_entry_kind kind;
} bl_record_entry;

/* Everything below ROOTFD, symlinks not followed (a symlinked directory is one
 * BL_ENTRY_SYMLINK entry), top-level control files left out, sorted by path
 * (strcmp). FSYNC_DIRS flushes every directory visited. DIR names the record
 * in messages. */
bl_status bl_record_walk(int rootfd, const char *dir, bool fsync_dirs, bl_record_entry **out,
                         size_t *count, bl_error *err);
void bl_record_free_entries(bl_record_entry *entries, size_t count);

/* Names in a directory (no "." or ".."), unsorted. */
bl_status bl_record_list_dir(const char *path, char ***names, size_t *count, bl_error *err);
void bl_record_free_names(char **names, size_t count);

typedef enum bl_open_result {
    BL_OPEN_OK,
    BL_OPEN_MISSING,
    BL_OPEN_SYMLINK,  /* the file or a directory above it is a symlink */
    BL_OPEN_NOT_FILE, /* exists but is not a regular file */
    BL_OPEN_IO
} bl_open_result;

/* Open RELPATH below ROOTFD for reading, one component at a time with
 * O_NOFOLLOW, so nothing outside the record is ever read. */
bl_open_result bl_record_open_inside(int rootfd, const char *relpath, int *fd);
const char *bl_record_open_result_text(bl_open_result result);

/* Hash an open file to its end. 0 on success, -1 on a read error. */
int bl_record_hash_fd(int fd, char hex[BL_SHA256_HEX_LEN + 1], uint64_t *bytes);

/* Serialises sealing and failing with the signal guard (guard.c). */
void bl_record_lock(void);
void bl_record_unlock(void);
/* guard.c: forget R if it is the guarded record (destroy calls it). */
void bl_record_guard_forget(const bl_record *r);

/* Ed25519 (sign.c). A loaded private key, opaque. */
typedef struct bl_sign_key bl_sign_key;
/* Key files are small: a larger one (a sparse 4 GiB file, say) is refused
 * by its size, unread. */
#define BL_KEY_MAX_BYTES 65536
/* Load a private key: a missing file, a directory or FIFO, a public key, a
 * truncated PEM each get their own message. */
bl_status bl_sign_key_load(const char *path, bl_sign_key **out, bl_error *err);
/* The text of a trusted public key file (verify --key; malloc'd), read once
 * before any record is looked at: a missing file says so. */
bl_status bl_sign_read_trusted(const char *path, char **pem, bl_error *err);
void bl_sign_key_free(bl_sign_key *k);
/* Public key as 64 hex digits. */
void bl_sign_key_public_hex(const bl_sign_key *k, char hex[65]);
/* The SIGNATURE file's text for MESSAGE (malloc'd), or NULL. */
char *bl_sign_text(const bl_sign_key *k, const void *message, size_t len, const char *message_name);
/* Check a SIGNATURE file's TEXT over MESSAGE. EXPECT_PUB_HEX (may be NULL) is
 * the public key it must be made with; TRUSTED_PEM (may be NULL) the text of
 * a public key file (bl_sign_read_trusted) it must match. NULL when valid, else why not; *pub_hex gets the key. */
const char *bl_sign_check(const char *text, size_t text_len, const void *message, size_t len,
                          const char *expect_pub_hex, const char *trusted_pem, char pub_hex[65]);

/* Copy S into OUT (size > 0) with bytes outside printable ASCII as \xNN. */
void bl_escape_text(char *out, size_t size, const char *s);

/* Software and host identity as cJSON objects (NULL when out of memory);
 * the caller owns them. */
cJSON *bl_identity_software(void);
cJSON *bl_identity_host(void);

/* "YYYY-MM-DDTHH:MM:SSZ" for T (UTC). */
void bl_format_utc(time_t t, char buf[32]);

#endif
