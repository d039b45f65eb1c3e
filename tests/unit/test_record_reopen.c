/* bl_record_reopen (run --resume): which records may be finished again, and
 * what reopening removes. A DONE record is final; a FAILED one loses its old
 * seal; a reservation held by a live process on this host is refused; one
 * left by a dead process is taken over. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "brainlesslab/record.h"

#include "test_support.h"

static char tmpdir[256];

static int exists(const char *dir, const char *name)
{
    char p[1024];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return lstat(p, &sb) == 0;
}

static void write_at(bl_record *r, const char *name, const char *text)
{
    char path[1024];
    bl_error err = {0};
    assert_int_equal(bl_record_path(r, name, path, sizeof path, &err), BL_OK);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_done_is_final(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_record *r = NULL;
    assert_int_equal(bl_record_reserve(tmpdir, "done", &r, &err), BL_OK);
    write_at(r, "a.txt", "a");
    assert_int_equal(bl_record_seal(r, &err), BL_OK);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", bl_record_dir(r));
    bl_record_destroy(r);
    r = NULL;
    assert_int_equal(bl_record_reopen(dir, &r, &err), BL_ERR_EXISTS);
    assert_null(r);
    assert_non_null(strstr(err.message, "DONE"));
    assert_true(exists(dir, "DONE"));
    assert_int_equal(bl_record_verify(dir, NULL, NULL, &err), BL_OK);
}

static void test_failed_reopens(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_record *r = NULL;
    assert_int_equal(bl_record_reserve(tmpdir, "failed", &r, &err), BL_OK);
    write_at(r, "part.txt", "half");
    assert_int_equal(bl_record_fail(r, "killed by a test", &err), BL_OK);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", bl_record_dir(r));
    bl_record_destroy(r);
    assert_true(exists(dir, "FAILED") && exists(dir, "manifest.json"));
    r = NULL;
    assert_int_equal(bl_record_reopen(dir, &r, &err), BL_OK);
    assert_false(exists(dir, "FAILED"));
    assert_false(exists(dir, "manifest.json"));
    assert_false(exists(dir, "checksums.sha256"));
    assert_true(exists(dir, ".RESERVED"));
    assert_true(exists(dir, "part.txt")); /* the caller decides what stays */
    assert_true(bl_record_sane(r, NULL));
    /* Finished: sealed DONE, and it verifies. */
    write_at(r, "part.txt", "whole");
    assert_int_equal(bl_record_seal(r, &err), BL_OK);
    bl_record_destroy(r);
    assert_int_equal(bl_record_verify(dir, NULL, NULL, &err), BL_OK);
    assert_false(exists(dir, ".RESERVED"));
}

static void test_reserved_by_live_or_dead(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_record *r = NULL;
    /* Reserved by this process: a stand-in for "another live writer" is a
     * child that reserves and waits. */
    int go[2];
    assert_int_equal(pipe(go), 0);
    pid_t child = fork();
    if (child == 0) {
        bl_record *c = NULL;
        bl_error e = {0};
        if (bl_record_reserve(tmpdir, "live", &c, &e))
            _exit(1);
        char byte = 1;
        if (write(go[1], &byte, 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    char byte;
    assert_int_equal(read(go[0], &byte, 1), 1);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/live", tmpdir);
    assert_int_equal(bl_record_reopen(dir, &r, &err), BL_ERR_EXISTS);
    assert_non_null(strstr(err.message, "still reserved"));
    /* Killed, not yet reaped: a zombie is dead. */
    kill(child, SIGKILL);
    for (int k = 0; k < 200; k++) { /* until the kernel has made it a zombie */
        char p[64], text[256] = "";
        snprintf(p, sizeof p, "/proc/%d/stat", (int)child);
        FILE *f = fopen(p, "r");
        if (f) {
            if (!fgets(text, sizeof text, f))
                text[0] = '\0';
            fclose(f);
        }
        const char *paren = strrchr(text, ')');
        if (paren && paren[1] == ' ' && paren[2] == 'Z')
            break;
        usleep(5000);
    }
    r = NULL;
    assert_int_equal(bl_record_reopen(dir, &r, &err), BL_OK);
    assert_true(exists(dir, ".RESERVED"));
    assert_int_equal(bl_record_fail(r, "finished by the test", &err), BL_OK);
    bl_record_destroy(r);
    waitpid(child, NULL, 0);
    close(go[0]);
    close(go[1]);
}

static void test_not_a_record(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_record *r = NULL;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/plain", tmpdir);
    assert_int_equal(mkdir(dir, 0777), 0);
    assert_int_not_equal(bl_record_reopen(dir, &r, &err), BL_OK);
    assert_null(r);
    snprintf(dir, sizeof dir, "%s/missing", tmpdir);
    assert_int_not_equal(bl_record_reopen(dir, &r, &err), BL_OK);
    assert_int_not_equal(bl_record_reopen(NULL, &r, &err), BL_OK);
}

static int setup(void **state)
{
    (void)state;
    return bl_test_make_tmpdir(tmpdir, sizeof tmpdir, "reopen");
}

static int teardown(void **state)
{
    (void)state;
    bl_test_remove_tmpdir(tmpdir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_done_is_final),
        cmocka_unit_test(test_failed_reopens),
        cmocka_unit_test(test_reserved_by_live_or_dead),
        cmocka_unit_test(test_not_a_record),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
