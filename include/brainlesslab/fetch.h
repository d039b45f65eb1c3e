/* Fetching the public data sets the importers read (`brainlesslab fetch NAME`).
 *
 * A data set is a row of the fetch table: its files, each with the URL it is
 * published at, its size and a checksum the publisher (or the published
 * bytes at a pinned commit) gives, the licence, and how to import it (the
 * importer and its options, each naming one of the files). The download is
 * resumable (HTTP Range), bounded (never more bytes than the table's size, a
 * redirect limit, a stall timeout), hashed as it streams and verified before
 * the file takes its published name. Nothing here prints or reads the
 * environment: the caller passes the mirror, the table and a progress sink. */
#ifndef BRAINLESSLAB_FETCH_H
#define BRAINLESSLAB_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/export.h"
#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The checksum a file is verified with: the one its publisher gives. */
typedef enum bl_fetch_digest {
    BL_FETCH_SHA256 = 0,
    BL_FETCH_MD5 = 1,
    /* Git's object id of the file (SHA-1 over "blob SIZE\0" and the bytes):
     * what a Git host publishes for a file in a commit's tree. */
    BL_FETCH_GIT_BLOB_SHA1 = 2,
    /* No checksum is published: the file is fetched only when the caller
     * allows unverified files, and its SHA-256 is reported so it can be pinned. */
    BL_FETCH_UNPUBLISHED = 3
} bl_fetch_digest;

typedef struct bl_fetch_file {
    const char *name;     /* the published file name (kept under a mirror) */
    const char *base_url; /* URL of the folder it is published in, without the trailing / */
    uint64_t size;        /* exact size in bytes; 0 = not published (then max_size bounds it) */
    uint64_t max_size;    /* the bound when size is 0 */
    bl_fetch_digest digest;
    const char *hex;      /* the checksum, lower-case hex; NULL for BL_FETCH_UNPUBLISHED */
    const char *source;   /* where size and checksum come from (one line) */
} bl_fetch_file;

/* One importer option and the file it names ("--neurons", "Completeness_783.csv");
 * file NULL: a value given as is ("--select", "all"). */
typedef struct bl_fetch_import_arg {
    const char *option;
    const char *file;
    const char *value;
} bl_fetch_import_arg;

typedef struct bl_fetch_set {
    const char *name;     /* as the importers name it: flywire, malecns, ... */
    const char *importer; /* the importer that reads it (import --list) */
    const char *summary;
    const char *licence;  /* printed before downloading */
    /* Non-NULL when the set cannot be downloaded without an account: what to
     * do instead (the files, where, and the import command). */
    const char *manual;
    size_t n_files;
    const bl_fetch_file *files;
    size_t n_import;
    const bl_fetch_import_arg *import;
} bl_fetch_set;

/* The built-in table (src/connectome/import/fetch_sets.c). */
BL_API size_t bl_fetch_set_count(void);
BL_API const bl_fetch_set *bl_fetch_set_at(size_t i);
BL_API const bl_fetch_set *bl_fetch_set_find(const char *name); /* NULL when absent */

/* A table read from a JSON manifest (a private mirror's own files, or a
 * test's): {"sets": [{"name", "importer", "summary", "licence", "files":
 * [{"name", "url", "size" | "max_size", "sha256" | "md5" | "git_blob_sha1"}],
 * "import": [["--option", "file name"], ...]}]}. Every field is checked;
 * errors name the manifest and the key. */
typedef struct bl_fetch_table bl_fetch_table;
BL_API bl_status bl_fetch_table_load(const char *path, bl_fetch_table **out, bl_error *err);
BL_API void bl_fetch_table_destroy(bl_fetch_table *t);
BL_API size_t bl_fetch_table_count(const bl_fetch_table *t);
BL_API const bl_fetch_set *bl_fetch_table_at(const bl_fetch_table *t, size_t i);
BL_API const bl_fetch_set *bl_fetch_table_find(const bl_fetch_table *t, const char *name);

/* Progress of one file: done and total bytes (total 0 while unknown);
 * resumed_from: bytes already on disk when this transfer began. */
typedef void (*bl_fetch_progress_fn)(void *user, const char *name, uint64_t done, uint64_t total,
                                     uint64_t resumed_from);

typedef struct bl_fetch_options {
    const char *mirror;          /* replaces every file's base_url; NULL: the published URLs */
    int allow_unverified;        /* fetch BL_FETCH_UNPUBLISHED files */
    long connect_timeout_s;      /* 0: 30 s */
    long stall_timeout_s;        /* abort when under 1 byte/s for this long; 0: 60 s */
    long max_redirects;          /* 0: 5; negative: follow none */
    bl_fetch_progress_fn progress;
    void *progress_user;
} bl_fetch_options;

/* What bl_fetch_file_get did. */
typedef struct bl_fetch_result {
    uint64_t bytes;           /* the file's size */
    uint64_t downloaded;      /* bytes transferred this time */
    uint64_t resumed_from;    /* bytes a partial download already had */
    int already_present;      /* the verified file was there: nothing transferred */
    char sha256[65];          /* the file's SHA-256 (always computed) */
} bl_fetch_result;

/* Fetch one file into dir/NAME: an existing dir/NAME of the right size and
 * checksum is kept; otherwise dir/NAME.part is continued (Range) or started,
 * hashed as the bytes arrive, and renamed to dir/NAME only once verified. A
 * checksum mismatch removes the partial file (a rerun starts afresh); a
 * broken or stalled transfer keeps it (a rerun resumes). Errors name the
 * file and the URL. */
BL_API bl_status bl_fetch_file_get(const bl_fetch_file *f, const char *dir, const bl_fetch_options *opt,
                                   bl_fetch_result *res, bl_error *err);

/* The URL a file is fetched from under opt (the mirror, else its base_url), in buf. */
BL_API const char *bl_fetch_file_url(const bl_fetch_file *f, const bl_fetch_options *opt, char *buf, size_t size);

/* The name of a digest ("sha256", "md5", "git-blob-sha1", "unpublished"). */
BL_API const char *bl_fetch_digest_name(bl_fetch_digest d);

#ifdef __cplusplus
}
#endif
#endif
