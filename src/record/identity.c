/* Software and host identity for records and benchmark receipts: enough to
 * say which build of which sources, linked against which library versions,
 * ran on which machine. Version numbers come from the libraries at run time
 * (not from their headers) because that is what actually executed. */
#include "record/record_impl.h"

#include "brainlesslab/record.h"
#include "build_flags.h"
#include "build_info.h"
#include "core/json_check.h"

#include <csv.h>
#include <hdf5.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

void bl_format_utc(time_t t, char buf[32])
{
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, 32, "unknown");
}

static const char *compiler_text(void)
{
#if defined(__clang__)
    return "clang " __clang_version__;
#elif defined(__GNUC__)
    return "gcc " __VERSION__;
#else
    return "unknown";
#endif
}

cJSON *bl_identity_software(void)
{
    cJSON *s = cJSON_CreateObject();
    cJSON *libs = cJSON_CreateObject();
    if (!s || !libs) {
        cJSON_Delete(s);
        cJSON_Delete(libs);
        return NULL;
    }
    unsigned maj = 0, min = 0, rel = 0;
    char hdf5[48];
    if (H5get_libversion(&maj, &min, &rel) >= 0)
        snprintf(hdf5, sizeof hdf5, "%u.%u.%u", maj, min, rel);
    else
        snprintf(hdf5, sizeof hdf5, "unknown");
    char csv[32];
    /* libcsv exports no run-time version; its header is what we compiled against. */
    snprintf(csv, sizeof csv, "%d.%d.%d", CSV_MAJOR, CSV_MINOR, CSV_RELEASE);
    int ok = cJSON_AddStringToObject(libs, "openssl", OpenSSL_version(OPENSSL_VERSION)) &&
             cJSON_AddStringToObject(libs, "hdf5", hdf5) &&
             cJSON_AddStringToObject(libs, "zlib", zlibVersion()) &&
             cJSON_AddStringToObject(libs, "cjson", cJSON_Version()) &&
             cJSON_AddStringToObject(libs, "libcsv", csv);
#ifdef _OPENMP
    char omp[32];
    snprintf(omp, sizeof omp, "%d", (int)_OPENMP);
    ok = ok && cJSON_AddStringToObject(libs, "openmp", omp);
#endif
    ok = ok && cJSON_AddStringToObject(s, "name", "brainlesslab") &&
         cJSON_AddStringToObject(s, "version", BL_VERSION) &&
         cJSON_AddStringToObject(s, "source_revision", BL_SOURCE_REVISION) &&
         cJSON_AddStringToObject(s, "source_dirty_sha256", BL_SOURCE_DIRTY_SHA256) &&
         cJSON_AddStringToObject(s, "build_flags", BL_BUILD_FLAGS) &&
         cJSON_AddStringToObject(s, "compiler", compiler_text());
    if (!ok || !cJSON_AddItemToObject(s, "libraries", libs)) {
        if (!cJSON_GetObjectItemCaseSensitive(s, "libraries"))
            cJSON_Delete(libs);
        cJSON_Delete(s);
        return NULL;
    }
    return s;
}

/* The first "model name" line of /proc/cpuinfo (x86); ARM kernels name the
 * CPU under other keys, so fall back to those, then to "unknown". */
static void cpu_model(char *buf, size_t size)
{
    static const char *const keys[] = {"model name", "Hardware", "cpu model", "CPU part"};
    snprintf(buf, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    int best = (int)(sizeof keys / sizeof keys[0]);
    while (fgets(line, sizeof line, f)) {
        for (int k = 0; k < best; k++) {
            size_t kl = strlen(keys[k]);
            if (strncmp(line, keys[k], kl) != 0)
                continue;
            const char *p = line + kl;
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p != ':')
                continue;
            p++;
            while (*p == ' ' || *p == '\t')
                p++;
            size_t n = strcspn(p, "\r\n");
            if (n == 0)
                continue;
            snprintf(buf, size, "%.*s", (int)n, p);
            best = k;
            break;
        }
        if (best == 0)
            break;
    }
    fclose(f);
}

cJSON *bl_identity_host(void)
{
    cJSON *h = cJSON_CreateObject();
    cJSON *os = cJSON_CreateObject();
    if (!h || !os) {
        cJSON_Delete(h);
        cJSON_Delete(os);
        return NULL;
    }
    char host[256] = "unknown";
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGESIZE);
    double memory = pages > 0 && page_size > 0 ? (double)pages * (double)page_size : 0.0;
    struct utsname u;
    int have_uname = uname(&u) == 0;
    int ok = cJSON_AddStringToObject(os, "sysname", have_uname ? u.sysname : "unknown") &&
             cJSON_AddStringToObject(os, "release", have_uname ? u.release : "unknown") &&
             cJSON_AddStringToObject(os, "version", have_uname ? u.version : "unknown") &&
             cJSON_AddStringToObject(os, "machine", have_uname ? u.machine : "unknown");
    ok = ok && cJSON_AddStringToObject(h, "hostname", host) &&
         cJSON_AddStringToObject(h, "cpu_model", cpu) &&
         cJSON_AddNumberToObject(h, "logical_cores", cores > 0 ? (double)cores : 0.0) &&
         cJSON_AddNumberToObject(h, "memory_bytes", memory);
    if (!ok || !cJSON_AddItemToObject(h, "os", os)) {
        if (!cJSON_GetObjectItemCaseSensitive(h, "os"))
            cJSON_Delete(os);
        cJSON_Delete(h);
        return NULL;
    }
    return h;
}

static char *print_and_delete(cJSON *obj)
{
    if (!obj)
        return NULL;
    char *text = bl_json_print(obj, 0);
    cJSON_Delete(obj);
    return text;
}

char *bl_software_identity_json(void)
{
    return print_and_delete(bl_identity_software());
}

char *bl_host_identity_json(void)
{
    return print_and_delete(bl_identity_host());
}
