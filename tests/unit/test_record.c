/* Unit tests for src/record: reserve / seal / verify round trips, write-once
 * refusal, unsafe artifact names, and tampering, each of which verify must
 * catch with a message naming the file: changed bytes, removed files, added
 * files, an edited manifest, symlinks, crafted manifests with '..' or absolute
 * paths, crashed (never sealed) and FAILED records. The checksums file must
 * satisfy `sha256sum -c`. */
/* nftw (teardown) is an X/Open function. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unistd.h>

#include "brainlesslab/hash.h"
#include "brainlesslab/record.h"

#include "test_support.h"

BL_TEST_TMPDIR_GROUP("record")

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int exists(const char *dir, const char *name)
{
    char path[512];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return lstat(path, &sb) == 0;
}

/* A sealed record ROOT/NAME with a.txt, sub/b.bin, one input and a plan. */
static void make_sealed(const char *name, char *dir, size_t size)
{
    bl_error err = {0};
    bl_record *r = NULL;
    assert_int_equal(bl_record_reserve(tmpdir, name, &r, &err), BL_OK);
    assert_true(exists(bl_record_dir(r), ".RESERVED"));
    char path[512];
    assert_int_equal(bl_record_path(r, "a.txt", path, sizeof path, &err), BL_OK);
    write_file(path, "hello\n");
    assert_int_equal(bl_record_path(r, "sub/b.bin", path, sizeof path, &err), BL_OK);
    write_file(path, "spikes would go here\n");
    char input[512];
    snprintf(input, sizeof input, "%s/input-%s.txt", tmpdir, name);
    write_file(input, "an input file\n");
    assert_int_equal(bl_record_add_input(r, "connectome", input, &err), BL_OK);
    assert_int_equal(bl_record_set_json(r, "plan", "{\"id\": \"test\", \"trials\": 2}", &err),
                     BL_OK);
    assert_int_equal(bl_record_set_json(r, "seeds", "[1, 2, 3]", &err), BL_OK);
    assert_int_equal(bl_record_seal(r, &err), BL_OK);
    snprintf(dir, size, "%s", bl_record_dir(r));
    bl_record_destroy(r);
}

/* Verify must fail and its summary must contain every NEEDLE (NULL-ended). */
static void expect_problems(const char *dir, ...)
{
    bl_error err = {0};
    char *report = NULL;
    size_t report_len = 0;
    FILE *mem = open_memstream(&report, &report_len);
    assert_non_null(mem);
    size_t n = 99;
    bl_status st = bl_record_verify(dir, mem, &n, &err);
    fclose(mem);
    if (st != BL_ERR_INVALID)
        fail_msg("verify of %s returned %d (%s), expected problems", dir, st, err.message);
    assert_int_equal(n, 0);
    assert_non_null(strstr(err.message, dir));
    va_list ap;
    va_start(ap, dir);
    const char *needle;
    while ((needle = va_arg(ap, const char *)) != NULL) {
        if (!strstr(err.message, needle) || !strstr(report, needle))
            fail_msg("'%s' not named.\nsummary: %s\nreport:\n%s", needle, err.message, report);
    }
    va_end(ap);
    free(report);
}

static int sha256sum_ok(const char *dir)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && sha256sum --quiet --strict -c checksums.sha256 >/dev/null 2>&1",
             dir);
    return system(cmd) == 0;
}

static void test_round_trip(void **state)
{
    (void)state;
    char dir[512];
    make_sealed("round", dir, sizeof dir);
    assert_true(exists(dir, "DONE"));
    assert_false(exists(dir, ".RESERVED"));
    assert_false(exists(dir, "FAILED"));

    bl_error err = {0};
    size_t n = 0;
    assert_int_equal(bl_record_verify(dir, NULL, &n, &err), BL_OK);
    assert_int_equal(n, 2);
    assert_true(sha256sum_ok(dir));

    char path[600];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    char *text = read_file(path);
    cJSON *m = cJSON_Parse(text);
    free(text);
    assert_non_null(m);
    assert_string_equal(cJSON_GetObjectItem(m, "format")->valuestring, "brainlesslab-record");
    assert_int_equal(cJSON_GetObjectItem(m, "format_version")->valueint, BL_RECORD_FORMAT_VERSION);
    assert_string_equal(cJSON_GetObjectItem(m, "status")->valuestring, "DONE");
    assert_non_null(cJSON_GetObjectItem(m, "created_utc"));
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(m, "plan"), "id")->valuestring, "test");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(m, "seeds")), 3);
    const cJSON *arts = cJSON_GetObjectItem(m, "artifacts");
    assert_int_equal(cJSON_GetArraySize(arts), 2);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(arts, 0), "path")->valuestring,
                        "a.txt");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(arts, 1), "path")->valuestring,
                        "sub/b.bin");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(arts, 0), "bytes")->valueint, 6);
    char hex[BL_SHA256_HEX_LEN + 1];
    bl_sha256_buffer("hello\n", 6, hex);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(arts, 0), "sha256")->valuestring,
                        hex);
    const cJSON *in = cJSON_GetArrayItem(cJSON_GetObjectItem(m, "inputs"), 0);
    assert_non_null(in);
    assert_string_equal(cJSON_GetObjectItem(in, "role")->valuestring, "connectome");
    bl_sha256_buffer("an input file\n", 14, hex);
    assert_string_equal(cJSON_GetObjectItem(in, "sha256")->valuestring, hex);
    assert_int_equal(cJSON_GetObjectItem(in, "absolute_path")->valuestring[0], '/');
    const cJSON *sw = cJSON_GetObjectItem(m, "software");
    assert_string_equal(cJSON_GetObjectItem(sw, "name")->valuestring, "brainlesslab");
    assert_non_null(cJSON_GetObjectItem(sw, "source_revision"));
    assert_non_null(cJSON_GetObjectItem(sw, "build_flags"));
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(sw, "libraries"), "hdf5"));
    const cJSON *host = cJSON_GetObjectItem(m, "host");
    assert_true(cJSON_GetObjectItem(host, "logical_cores")->valuedouble >= 1);
    assert_non_null(cJSON_GetObjectItem(host, "cpu_model"));
    cJSON_Delete(m);

    /* The checksums file lists both artifacts and the manifest. */
    snprintf(path, sizeof path, "%s/checksums.sha256", dir);
    text = read_file(path);
    assert_non_null(strstr(text, "  a.txt\n"));
    assert_non_null(strstr(text, "  sub/b.bin\n"));
    assert_non_null(strstr(text, "  manifest.json\n"));
    free(text);
}

static void test_write_once(void **state)
{
    (void)state;
    char dir[512];
    make_sealed("once", dir, sizeof dir);
    bl_error err = {0};
    bl_record *r = NULL;
    assert_int_equal(bl_record_reserve(tmpdir, "once", &r, &err), BL_ERR_EXISTS);
    assert_null(r);
    assert_non_null(strstr(err.message, dir));
    /* A reserved (unsealed) one is not reused either. */
    assert_int_equal(bl_record_reserve(tmpdir, "twice", &r, &err), BL_OK);
    bl_record *r2 = NULL;
    assert_int_equal(bl_record_reserve(tmpdir, "twice", &r2, &err), BL_ERR_EXISTS);
    bl_record_destroy(r);
    /* The root is created on demand, parents included. */
    char deep[512];
    snprintf(deep, sizeof deep, "%s/new/deeper", tmpdir);
    assert_int_equal(bl_record_reserve(deep, "x", &r, &err), BL_OK);
    bl_record_destroy(r);
    /* Bad record names. */
    const char *bad[] = {"", "..", ".", "a/b", "../escape"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(bl_record_reserve(tmpdir, bad[i], &r, &err), BL_ERR_INVALID);
        assert_null(r);
    }
}

static void test_bad_relnames(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_record *r = NULL;
    assert_int_equal(bl_record_reserve(tmpdir, "relnames", &r, &err), BL_OK);
    char path[512];
    const char *bad[] = {"../x",       "a/../b",     "/abs",          "a//b", "./a", "",
                         "a/.",        "a\\b",       "manifest.json", "DONE", "FAILED/x",
                         ".RESERVED",  "checksums.sha256"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (bl_record_path(r, bad[i], path, sizeof path, &err) != BL_ERR_INVALID)
            fail_msg("'%s' was accepted", bad[i]);
        assert_non_null(strstr(err.message, "relnames"));
    }
    assert_int_equal(bl_record_path(r, "deep/er/c.txt", path, sizeof path, &err), BL_OK);
    write_file(path, "c\n");
    char small[8];
    assert_int_equal(bl_record_path(r, "a.txt", small, sizeof small, &err), BL_ERR_INVALID);

    /* Section rules. */
    assert_int_equal(bl_record_set_json(r, "plan", "{\"broken\": ", &err), BL_ERR_FORMAT);
    assert_non_null(strstr(err.message, "plan"));
    assert_int_equal(bl_record_set_json(r, "artifacts", "[]", &err), BL_ERR_INVALID);
    assert_int_equal(bl_record_set_json(r, "bad key", "1", &err), BL_ERR_INVALID);
    assert_int_equal(bl_record_set_json(r, "run", "{\"threads\": 2}", &err), BL_OK);
    assert_int_equal(bl_record_set_json(r, "run", "{\"threads\": 3}", &err), BL_ERR_EXISTS);

    assert_int_equal(bl_record_seal(r, &err), BL_OK);
    /* Sealed means frozen. */
    assert_int_equal(bl_record_path(r, "late.txt", path, sizeof path, &err), BL_ERR_INVALID);
    assert_int_equal(bl_record_set_json(r, "late", "1", &err), BL_ERR_INVALID);
    assert_int_equal(bl_record_seal(r, &err), BL_ERR_INVALID);
    assert_int_equal(bl_record_fail(r, "late", &err), BL_ERR_INVALID);
    size_t n = 0;
    assert_int_equal(bl_record_verify(bl_record_dir(r), NULL, &n, &err), BL_OK);
    assert_int_equal(n, 1);
    bl_record_destroy(r);
}

static void test_tamper_changed_byte(void **state)
{
    (void)state;
    char dir[512], path[600];
    make_sealed("changed", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/sub/b.bin", dir);
    write_file(path, "spikes would go herE\n"); /* same size, one byte differs */
    expect_problems(dir, "sub/b.bin: changed", NULL);
    assert_false(sha256sum_ok(dir));
}

static void test_tamper_removed(void **state)
{
    (void)state;
    char dir[512], path[600];
    make_sealed("removed", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/a.txt", dir);
    assert_int_equal(unlink(path), 0);
    expect_problems(dir, "a.txt: removed", NULL);
}

static void test_tamper_added(void **state)
{
    (void)state;
    char dir[512], path[600];
    make_sealed("added", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/extra.txt", dir);
    write_file(path, "not sealed\n");
    snprintf(path, sizeof path, "%s/sub/also.txt", dir);
    write_file(path, "not sealed either\n");
    expect_problems(dir, "extra.txt: not in manifest.json", "sub/also.txt: not in manifest.json",
                    NULL);
}

static void replace_text(const char *path, const char *from, const char *to)
{
    char *text = read_file(path);
    char *at = strstr(text, from);
    assert_non_null(at);
    assert_int_equal(strlen(from), strlen(to));
    memcpy(at, to, strlen(to));
    write_file(path, text);
    free(text);
}

static void test_tamper_manifest(void **state)
{
    (void)state;
    char dir[512], path[600];
    make_sealed("manifest", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    replace_text(path, "\"test\"", "\"TEST\"");
    expect_problems(dir, "manifest.json: edited", NULL);

    /* A more careful edit: change an artifact, its hash in the manifest and
     * the manifest's own line in checksums.sha256, but not the artifact's. */
    make_sealed("manifest2", dir, sizeof dir);
    char old_hex[BL_SHA256_HEX_LEN + 1], new_hex[BL_SHA256_HEX_LEN + 1];
    bl_sha256_buffer("hello\n", 6, old_hex);
    bl_sha256_buffer("HELLO\n", 6, new_hex);
    snprintf(path, sizeof path, "%s/a.txt", dir);
    write_file(path, "HELLO\n");
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    replace_text(path, old_hex, new_hex);
    char *manifest = read_file(path);
    char mhex[BL_SHA256_HEX_LEN + 1];
    bl_sha256_buffer(manifest, strlen(manifest), mhex);
    free(manifest);
    snprintf(path, sizeof path, "%s/checksums.sha256", dir);
    char *sums = read_file(path);
    char *line = strstr(sums, "  manifest.json\n");
    assert_non_null(line);
    memcpy(line - BL_SHA256_HEX_LEN, mhex, BL_SHA256_HEX_LEN);
    write_file(path, sums);
    free(sums);
    expect_problems(dir, "a.txt: manifest.json and checksums.sha256 disagree", NULL);
}

static void test_tamper_symlinks(void **state)
{
    (void)state;
    char dir[512], path[600], target[600];
    /* A symlink added after sealing. */
    make_sealed("symlink", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/link.txt", dir);
    assert_int_equal(symlink("a.txt", path), 0);
    expect_problems(dir, "link.txt: symlink not in manifest.json", NULL);

    /* An artifact replaced by a symlink to an identical copy outside. */
    make_sealed("symlink2", dir, sizeof dir);
    snprintf(target, sizeof target, "%s/outside-copy.txt", tmpdir);
    write_file(target, "hello\n");
    snprintf(path, sizeof path, "%s/a.txt", dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink(target, path), 0);
    expect_problems(dir, "a.txt: is a symlink", NULL);

    /* A directory replaced by a symlink to an identical copy. */
    make_sealed("symlink3", dir, sizeof dir);
    snprintf(target, sizeof target, "%s/outside-sub", tmpdir);
    assert_int_equal(mkdir(target, 0777), 0);
    snprintf(path, sizeof path, "%s/outside-sub/b.bin", tmpdir);
    write_file(path, "spikes would go here\n");
    snprintf(path, sizeof path, "%s/sub/b.bin", dir);
    assert_int_equal(unlink(path), 0);
    snprintf(path, sizeof path, "%s/sub", dir);
    assert_int_equal(rmdir(path), 0);
    assert_int_equal(symlink(target, path), 0);
    expect_problems(dir, "sub/b.bin: is a symlink", NULL);

    /* Seal refuses a symlink; the record can still be failed, and the
     * failure keeps the inventory and names the symlink. */
    bl_error err = {0};
    bl_record *r = NULL;
    assert_int_equal(bl_record_reserve(tmpdir, "seal-symlink", &r, &err), BL_OK);
    assert_int_equal(bl_record_path(r, "a.txt", path, sizeof path, &err), BL_OK);
    write_file(path, "a\n");
    snprintf(path, sizeof path, "%s/evil", bl_record_dir(r));
    assert_int_equal(symlink("/etc/passwd", path), 0);
    assert_int_equal(bl_record_seal(r, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "evil"));
    assert_false(exists(bl_record_dir(r), "manifest.json"));
    assert_false(exists(bl_record_dir(r), "DONE"));
    assert_int_equal(bl_record_fail(r, "seal refused a symlink", &err), BL_OK);
    assert_true(exists(bl_record_dir(r), "FAILED"));
    assert_false(exists(bl_record_dir(r), ".RESERVED"));
    assert_true(sha256sum_ok(bl_record_dir(r)));
    snprintf(path, sizeof path, "%s/manifest.json", bl_record_dir(r));
    char *text = read_file(path);
    assert_non_null(strstr(text, "\"FAILED\""));
    assert_non_null(strstr(text, "seal refused a symlink"));
    assert_non_null(strstr(text, "evil: is a symlink"));
    free(text);
    expect_problems(bl_record_dir(r), "FAILED", NULL);
    bl_record_destroy(r);
}

/* A record built by hand whose manifest and checksums are self-consistent
 * but name PATH, which lies outside the record. */
static void craft_record(const char *name, const char *bad_path, char *dir, size_t size)
{
    snprintf(dir, size, "%s/%s", tmpdir, name);
    assert_int_equal(mkdir(dir, 0777), 0);
    char path[700];
    char hex[BL_SHA256_HEX_LEN + 1];
    bl_sha256_buffer("secret\n", 7, hex);
    char manifest[1024];
    snprintf(manifest, sizeof manifest,
             "{\"format\": \"brainlesslab-record\", \"format_version\": 1, \"status\": \"DONE\",\n"
             " \"artifacts\": [{\"path\": \"%s\", \"bytes\": 7, \"sha256\": \"%s\"}]}\n",
             bad_path, hex);
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    write_file(path, manifest);
    char mhex[BL_SHA256_HEX_LEN + 1];
    bl_sha256_buffer(manifest, strlen(manifest), mhex);
    char sums[1024];
    snprintf(sums, sizeof sums, "%s  %s\n%s  manifest.json\n", hex, bad_path, mhex);
    snprintf(path, sizeof path, "%s/checksums.sha256", dir);
    write_file(path, sums);
    snprintf(path, sizeof path, "%s/DONE", dir);
    write_file(path, "");
}

static void test_crafted_paths(void **state)
{
    (void)state;
    char dir[512], path[600];
    snprintf(path, sizeof path, "%s/secret.txt", tmpdir);
    write_file(path, "secret\n");
    craft_record("crafted-dotdot", "../secret.txt", dir, sizeof dir);
    expect_problems(dir, "../secret.txt' contains '..'", NULL);
    char abs[600];
    snprintf(abs, sizeof abs, "%s/secret.txt", tmpdir);
    craft_record("crafted-abs", abs, dir, sizeof dir);
    expect_problems(dir, "is absolute", NULL);
    craft_record("crafted-control", "DONE", dir, sizeof dir);
    expect_problems(dir, "is a control file", NULL);
}

static void test_crash_never_sealed(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_record *r = NULL;
    assert_int_equal(bl_record_reserve(tmpdir, "crashed", &r, &err), BL_OK);
    char path[512], dir[512];
    assert_int_equal(bl_record_path(r, "spikes.h5", path, sizeof path, &err), BL_OK);
    write_file(path, "half a file");
    snprintf(dir, sizeof dir, "%s", bl_record_dir(r));
    bl_record_destroy(r); /* the process "dies" here */
    assert_true(exists(dir, ".RESERVED"));
    assert_false(exists(dir, "DONE"));
    assert_false(exists(dir, "manifest.json"));
    expect_problems(dir, "never sealed", "manifest.json: is missing", NULL);
    /* ... and the name stays taken. */
    assert_int_equal(bl_record_reserve(tmpdir, "crashed", &r, &err), BL_ERR_EXISTS);
}

static void test_input_directory(void **state)
{
    (void)state;
    char in[512], path[600];
    snprintf(in, sizeof in, "%s/input-dir", tmpdir);
    assert_int_equal(mkdir(in, 0777), 0);
    snprintf(path, sizeof path, "%s/z.txt", in);
    write_file(path, "z\n");
    snprintf(path, sizeof path, "%s/a", in);
    assert_int_equal(mkdir(path, 0777), 0);
    snprintf(path, sizeof path, "%s/a/b.txt", in);
    write_file(path, "b\n");
    bl_error err = {0};
    bl_record *r = NULL;
    assert_int_equal(bl_record_reserve(tmpdir, "inputs", &r, &err), BL_OK);
    assert_int_equal(bl_record_add_input(r, "connectome", in, &err), BL_OK);
    snprintf(path, sizeof path, "%s/missing", tmpdir);
    assert_int_equal(bl_record_add_input(r, "plan", path, &err), BL_ERR_IO);
    assert_non_null(strstr(err.message, "missing"));
    assert_int_equal(bl_record_seal(r, &err), BL_OK);
    snprintf(path, sizeof path, "%s/manifest.json", bl_record_dir(r));
    char *text = read_file(path);
    cJSON *m = cJSON_Parse(text);
    free(text);
    const cJSON *inputs = cJSON_GetObjectItem(m, "inputs");
    assert_int_equal(cJSON_GetArraySize(inputs), 2);
    assert_non_null(strstr(cJSON_GetObjectItem(cJSON_GetArrayItem(inputs, 0), "path")->valuestring,
                           "input-dir/a/b.txt"));
    assert_non_null(strstr(cJSON_GetObjectItem(cJSON_GetArrayItem(inputs, 1), "path")->valuestring,
                           "input-dir/z.txt"));
    cJSON_Delete(m);
    size_t n = 99;
    assert_int_equal(bl_record_verify(bl_record_dir(r), NULL, &n, &err), BL_OK);
    assert_int_equal(n, 0);
    assert_true(sha256sum_ok(bl_record_dir(r)));
    bl_record_destroy(r);
}

static void test_identity(void **state)
{
    (void)state;
    char *sw = bl_software_identity_json();
    char *host = bl_host_identity_json();
    assert_non_null(sw);
    assert_non_null(host);
    cJSON *s = cJSON_Parse(sw), *h = cJSON_Parse(host);
    assert_non_null(s);
    assert_non_null(h);
    assert_string_equal(cJSON_GetObjectItem(s, "version")->valuestring, "0.1.0");
    const cJSON *libs = cJSON_GetObjectItem(s, "libraries");
    assert_non_null(cJSON_GetObjectItem(libs, "openssl"));
    assert_non_null(cJSON_GetObjectItem(libs, "zlib"));
    assert_non_null(cJSON_GetObjectItem(libs, "cjson"));
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(h, "os"), "sysname"));
    assert_true(cJSON_GetObjectItem(h, "memory_bytes")->valuedouble > 0);
    cJSON_Delete(s);
    cJSON_Delete(h);
    free(sw);
    free(host);
}

static void test_verify_not_a_record(void **state)
{
    (void)state;
    bl_error err = {0};
    char path[512];
    snprintf(path, sizeof path, "%s/no-such-record", tmpdir);
    assert_int_equal(bl_record_verify(path, NULL, NULL, &err), BL_ERR_IO);
    assert_non_null(strstr(err.message, "no-such-record"));
}

/* bl_record_sane follows the record through its states; binding, promised
 * artifacts, digests given by the caller, and Ed25519 signing (issue 16). */
static void test_sane_bind_sign(void **state)
{
    (void)state;
    bl_error err = {0};
    char priv[512], pub[512], other_pub[512], other_priv[512];
    snprintf(priv, sizeof priv, "%s/k.key", tmpdir);
    snprintf(pub, sizeof pub, "%s/k.pub", tmpdir);
    snprintf(other_priv, sizeof other_priv, "%s/o.key", tmpdir);
    snprintf(other_pub, sizeof other_pub, "%s/o.pub", tmpdir);
    assert_int_equal(bl_record_keygen(priv, pub, &err), BL_OK);
    assert_int_equal(bl_record_keygen(other_priv, other_pub, &err), BL_OK);
    assert_int_equal(bl_record_keygen(priv, pub, &err), BL_ERR_EXISTS); /* never overwritten */

    const char *hash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    bl_record *r = NULL;
    assert_int_equal(bl_record_reserve(tmpdir, "signed-01234567", &r, &err), BL_OK);
    assert_true(bl_record_sane(r, NULL));
    const char *required[] = {"a.txt", "b.txt"};
    assert_int_equal(bl_record_bind(r, hash, required, 2, &err), BL_OK);
    assert_int_equal(bl_record_add_input_digest(r, "plan", "/nonexistent/plan.toml", hash, 12, &err), BL_OK);
    assert_int_equal(bl_record_add_input_digest(r, "plan", "/x", "not-a-hash", 1, &err), BL_ERR_INVALID);
    assert_int_equal(bl_record_sign_with(r, priv, &err), BL_OK);
    char path[512];
    assert_int_equal(bl_record_path(r, "a.txt", path, sizeof path, &err), BL_OK);
    write_file(path, "a\n");
    /* b.txt was promised and never written: sealing DONE is refused. */
    assert_int_equal(bl_record_seal(r, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "b.txt"));
    assert_true(bl_record_sane(r, NULL)); /* still open, still reserved */
    assert_int_equal(bl_record_path(r, "b.txt", path, sizeof path, &err), BL_OK);
    write_file(path, "b\n");
    assert_int_equal(bl_record_seal(r, &err), BL_OK);
    assert_true(bl_record_sane(r, NULL));
    char dir[512];
    snprintf(dir, sizeof dir, "%s", bl_record_dir(r));
    bl_record_destroy(r);
    assert_true(exists(dir, "SIGNATURE"));
    size_t n = 0;
    bl_verify_options with_key = {.public_key = pub}, wrong_key = {.public_key = other_pub};
    assert_int_equal(bl_record_verify(dir, NULL, &n, &err), BL_OK);
    assert_int_equal(bl_record_verify_with(dir, &with_key, NULL, &n, &err), BL_OK);
    assert_int_equal(n, 2);
    assert_int_equal(bl_record_verify_with(dir, &wrong_key, NULL, &n, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "another key"));
    /* A name that does not carry the plan hash cannot be bound. */
    assert_int_equal(bl_record_reserve(tmpdir, "unbound", &r, &err), BL_OK);
    assert_int_equal(bl_record_bind(r, hash, NULL, 0, &err), BL_ERR_INVALID);
    assert_int_equal(bl_record_fail(r, "test", &err), BL_OK);
    assert_true(bl_record_sane(r, NULL));
    bl_record_destroy(r);
    /* A broken invariant says which marker is wrong, and where. */
    assert_int_equal(bl_record_reserve(tmpdir, "unmarked", &r, &err), BL_OK);
    char marker[1024];
    snprintf(marker, sizeof marker, "%s/.RESERVED", bl_record_dir(r));
    assert_int_equal(unlink(marker), 0);
    bl_error why = {0};
    assert_false(bl_record_sane(r, &why));
    assert_int_equal(why.status, BL_ERR_INTERNAL);
    assert_non_null(strstr(why.message, "the reservation is missing"));
    assert_non_null(strstr(why.message, bl_record_dir(r)));
    write_file(marker, ""); /* mended, so that the record can be closed */
    assert_true(bl_record_sane(r, NULL));
    assert_int_equal(bl_record_fail(r, "test", &err), BL_OK);
    bl_record_destroy(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),          cmocka_unit_test(test_write_once),
        cmocka_unit_test(test_bad_relnames),        cmocka_unit_test(test_tamper_changed_byte),
        cmocka_unit_test(test_tamper_removed),      cmocka_unit_test(test_tamper_added),
        cmocka_unit_test(test_tamper_manifest),     cmocka_unit_test(test_tamper_symlinks),
        cmocka_unit_test(test_crafted_paths),       cmocka_unit_test(test_crash_never_sealed),
        cmocka_unit_test(test_input_directory),     cmocka_unit_test(test_identity),
        cmocka_unit_test(test_verify_not_a_record), cmocka_unit_test(test_sane_bind_sign),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
