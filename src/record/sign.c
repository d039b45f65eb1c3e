/* Ed25519 signatures over a record's checksums.sha256 (libcrypto's EVP API).
 *
 * checksums.sha256 lists every artifact's SHA-256 and the manifest's, and the
 * manifest names the record, its plan hash, its inputs and the signing key,
 * so one signature over that file vouches for the whole record. SIGNATURE is
 * a small text file:
 *     brainlesslab-signature 1
 *     algorithm ed25519
 *     public_key <64 hex digits: the raw 32-byte key>
 *     message checksums.sha256
 *     signature <128 hex digits>
 */
#include "record/record_impl.h"

#include "core/file.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct bl_sign_key {
    EVP_PKEY *pkey;
    char pub_hex[65];
};

static void to_hex(const unsigned char *b, size_t n, char *out)
{
    static const char d[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = d[b[i] >> 4];
        out[2 * i + 1] = d[b[i] & 15];
    }
    out[2 * n] = '\0';
}

static int from_hex(const char *s, size_t n, unsigned char *out)
{
    for (size_t i = 0; i < n; i++) {
        int v = 0;
        for (int k = 0; k < 2; k++) {
            char c = s[2 * i + (size_t)k];
            int x = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (x < 0)
                return -1;
            v = v * 16 + x;
        }
        out[i] = (unsigned char)v;
    }
    return 0;
}

static int public_hex(EVP_PKEY *pkey, char hex[65])
{
    unsigned char raw[32];
    size_t len = sizeof raw;
    if (EVP_PKEY_get_raw_public_key(pkey, raw, &len) != 1 || len != 32)
        return -1;
    to_hex(raw, 32, hex);
    return 0;
}

/* A key file's text (core/file.h: a FIFO, a device or a directory is refused
 * at once, never blocked on; a sparse 4 GiB file is refused by its size
 * before a byte is read). `what` names the key in messages. */
static bl_status read_key_text(const char *path, const char *what, char **text, size_t *len, bl_error *err)
{
    bl_status st = bl_read_small(path, BL_KEY_MAX_BYTES, text, len, err);
    if (st) {
        char why[sizeof err->message];
        snprintf(why, sizeof why, "%s", err->message);
        return bl_fail(err, st, "%s (%s)", why, what);
    }
    return BL_OK;
}

bl_status bl_sign_key_load(const char *path, bl_sign_key **out, bl_error *err)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    bl_status st = read_key_text(path, "the signing key, --sign-key", &text, &len, err);
    if (st)
        return st;
    BIO *bio = BIO_new_mem_buf(text, (int)len);
    EVP_PKEY *pkey = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    int is_public = strstr(text, "-----BEGIN PUBLIC KEY-----") != NULL;
    int is_pem = strstr(text, "-----BEGIN ") != NULL;
    OPENSSL_cleanse(text, len);
    free(text);
    if (!pkey || EVP_PKEY_id(pkey) != EVP_PKEY_ED25519) {
        EVP_PKEY_free(pkey);
        if (is_public)
            return bl_fail(err, BL_ERR_FORMAT, "%s: is a public key; --sign-key takes the private key (the file "
                           "`brainlesslab keygen` wrote without .pub)", path);
        return bl_fail(err, BL_ERR_FORMAT,
                       "%s: not an Ed25519 private key in PEM%s (make one with `brainlesslab keygen`)", path,
                       is_pem ? " (truncated or damaged?)" : "");
    }
    bl_sign_key *k = calloc(1, sizeof *k);
    if (!k || public_hex(pkey, k->pub_hex) != 0) {
        free(k);
        EVP_PKEY_free(pkey);
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot use the key", path);
    }
    k->pkey = pkey;
    *out = k;
    return BL_OK;
}

bl_status bl_record_check_sign_key(const char *path, char *warning, size_t cap, bl_error *err)
{
    if (warning && cap)
        warning[0] = '\0';
    if (!path)
        return bl_fail(err, BL_ERR_INVALID, "no signing key given");
    bl_sign_key *k = NULL;
    bl_status st = bl_sign_key_load(path, &k, err);
    bl_sign_key_free(k);
    struct stat sb;
    /* Advice, not a refusal: the key still signs, but anyone who can read it
     * can sign records as its owner. */
    if (!st && warning && cap && stat(path, &sb) == 0 && (sb.st_mode & 077))
        snprintf(warning, cap, "%s: the private signing key is readable by %s (mode %04o): anyone who can read it "
                 "can sign records as you; chmod 600 it", path, (sb.st_mode & 007) ? "everyone" : "its group",
                 (unsigned)(sb.st_mode & 07777));
    return st;
}

void bl_sign_key_free(bl_sign_key *k)
{
    if (!k)
        return;
    EVP_PKEY_free(k->pkey);
    free(k);
}

void bl_sign_key_public_hex(const bl_sign_key *k, char hex[65])
{
    memcpy(hex, k->pub_hex, 65);
}

char *bl_sign_text(const bl_sign_key *k, const void *message, size_t len, const char *message_name)
{
    unsigned char sig[64];
    size_t sig_len = sizeof sig;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, k->pkey) == 1 &&
             EVP_DigestSign(ctx, sig, &sig_len, message, len) == 1 && sig_len == 64;
    EVP_MD_CTX_free(ctx);
    if (!ok)
        return NULL;
    char sig_hex[129];
    to_hex(sig, 64, sig_hex);
    size_t cap = 512 + strlen(message_name);
    char *text = malloc(cap);
    if (text)
        snprintf(text, cap,
                 "brainlesslab-signature 1\nalgorithm ed25519\npublic_key %s\nmessage %s\nsignature %s\n",
                 k->pub_hex, message_name, sig_hex);
    return text;
}

/* The value of "KEY <value>\n" at the start of *P, advancing *P. */
static const char *field(const char **p, const char *end, const char *key, size_t want_len,
                         char *out, size_t out_size)
{
    size_t klen = strlen(key);
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    if (!nl || (size_t)(nl - *p) < klen + 1 || memcmp(*p, key, klen) || (*p)[klen] != ' ')
        return "is not a brainlesslab signature file";
    size_t vlen = (size_t)(nl - *p) - klen - 1;
    if ((want_len && vlen != want_len) || vlen >= out_size)
        return "is not a brainlesslab signature file";
    memcpy(out, *p + klen + 1, vlen);
    out[vlen] = '\0';
    *p = nl + 1;
    return NULL;
}

const char *bl_sign_check(const char *text, size_t text_len, const void *message, size_t len,
                          const char *expect_pub_hex, const char *trusted_pem, char pub_hex[65])
{
    pub_hex[0] = '\0';
    const char *p = text, *end = text + text_len;
    char head[64], alg[32], pub[65], msg[64], sig_hex[129];
    const char *why = NULL;
    if ((why = field(&p, end, "brainlesslab-signature", 0, head, sizeof head)) ||
        (why = field(&p, end, "algorithm", 0, alg, sizeof alg)) ||
        (why = field(&p, end, "public_key", 64, pub, sizeof pub)) ||
        (why = field(&p, end, "message", 0, msg, sizeof msg)) ||
        (why = field(&p, end, "signature", 128, sig_hex, sizeof sig_hex)))
        return why;
    if (p != end || strcmp(head, "1") || strcmp(alg, "ed25519") || strcmp(msg, BL_RECORD_CHECKSUMS))
        return "is not a version-1 ed25519 signature of checksums.sha256";
    unsigned char raw_pub[32], sig[64];
    if (from_hex(pub, 32, raw_pub) || from_hex(sig_hex, 64, sig))
        return "holds a key or signature that is not lowercase hex";
    memcpy(pub_hex, pub, 65);
    if (expect_pub_hex && strcmp(expect_pub_hex, pub))
        return "was made with a different key than the manifest names";
    if (trusted_pem) {
        /* The --key file was read (and its absence or kind reported) by
         * bl_sign_read_trusted before any record was looked at. */
        BIO *bio = BIO_new_mem_buf(trusted_pem, -1);
        EVP_PKEY *trusted = bio ? PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL) : NULL;
        BIO_free(bio);
        char trusted_hex[65];
        int usable = trusted && EVP_PKEY_id(trusted) == EVP_PKEY_ED25519 && public_hex(trusted, trusted_hex) == 0;
        EVP_PKEY_free(trusted);
        if (!usable)
            return "cannot be checked: the --key file is not an Ed25519 public key in PEM";
        if (strcmp(trusted_hex, pub))
            return "was made with another key than the trusted one (--key)";
    }
    EVP_PKEY *pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw_pub, 32);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = pkey && ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pkey) == 1 &&
             EVP_DigestVerify(ctx, sig, 64, message, len) == 1;
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(pkey);
    return ok ? NULL : "does not match checksums.sha256 (the record or its signature was changed)";
}

bl_status bl_sign_read_trusted(const char *path, char **pem, bl_error *err)
{
    size_t len = 0;
    return read_key_text(path, "the trusted public key, --key", pem, &len, err);
}

static bl_status write_pem(const char *path, EVP_PKEY *pkey, int private_key, bl_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, private_key ? 0600 : 0644);
    if (fd < 0)
        return bl_fail(err, errno == EEXIST ? BL_ERR_EXISTS : BL_ERR_IO, "%s: cannot create: %s", path,
                       strerror(errno));
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        unlink(path);
        return bl_fail(err, BL_ERR_IO, "%s: cannot open for writing", path);
    }
    int ok = private_key ? PEM_write_PrivateKey(f, pkey, NULL, NULL, 0, NULL, NULL)
                         : PEM_write_PUBKEY(f, pkey);
    if (fclose(f) != 0)
        ok = 0;
    if (ok != 1) {
        unlink(path);
        return bl_fail(err, BL_ERR_IO, "%s: cannot write the key", path);
    }
    return BL_OK;
}

bl_status bl_record_keygen(const char *private_path, const char *public_path, bl_error *err)
{
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
    int ok = ctx && EVP_PKEY_keygen_init(ctx) == 1 && EVP_PKEY_keygen(ctx, &pkey) == 1;
    EVP_PKEY_CTX_free(ctx);
    if (!ok) {
        EVP_PKEY_free(pkey);
        return bl_fail(err, BL_ERR_INTERNAL, "cannot generate an Ed25519 key (libcrypto)");
    }
    bl_status st = write_pem(private_path, pkey, 1, err);
    if (!st && (st = write_pem(public_path, pkey, 0, err)))
        unlink(private_path);
    EVP_PKEY_free(pkey);
    return st;
}

void bl_escape_text(char *out, size_t size, const char *s)
{
    size_t o = 0;
    for (; *s && o + 5 < size; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out[o++] = (char)c;
        } else {
            static const char d[] = "0123456789abcdef";
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = d[c >> 4];
            out[o++] = d[c & 15];
        }
    }
    out[o] = '\0';
}
