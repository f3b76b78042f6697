/* Kept descriptors in a program that closes and reuses descriptor numbers:
 * the streamed file is kept high and unnamed, and once its number holds
 * another file nothing is written, linked, closed or renamed through it. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fd_guard.h"
#include "outbuf.h"
#include "read_file.h"
#include "stream_file.h"

static char dir[] = "/tmp/gt-fd-guard-XXXXXX";
static char path[128], other[128];

static int make_dir(void **state)
{
    (void)state;
    strcpy(dir + strlen(dir) - 6, "XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(path, sizeof path, "%s/r.trace.json", dir);
    snprintf(other, sizeof other, "%s/program.data", dir);
    return 0;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int entries(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "exit $(ls -A '%s' | wc -l)", dir);
    return WEXITSTATUS(system(cmd));
}

/* The program's own file, put on descriptor number fd. */
static void program_takes(int fd)
{
    int own = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(own >= 0);
    assert_int_equal(dup2(own, fd), fd);
    close(own);
    assert_int_equal(write(fd, "mine\n", 5), 5);
}

static void test_identity(void **unused)
{
    (void)unused;
    int a = open("/dev/null", O_WRONLY | O_CLOEXEC);
    gt_fd_identity id = gt_fd_identity_of(a);
    assert_true(id.known);
    assert_true(gt_fd_is(a, &id));
    close(a);
    errno = 33;
    assert_false(gt_fd_is(a, &id));
    assert_int_equal(errno, 33);
    assert_false(gt_fd_identity_of(a).known);
    gt_fd_identity unknown = {0, 0, false};
    assert_false(gt_fd_is(STDIN_FILENO, &unknown));
}

/* Near the top of the descriptors below min(limit, 1024); the old number free. */
static void test_move_high(void **unused)
{
    (void)unused;
    struct rlimit lim;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &lim), 0);
    if (lim.rlim_cur < 512) skip();
    int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    int high = gt_fd_move_high(fd);
    assert_true(high >= 1024 - 128 && high < 1024 - 64);
    assert_int_equal(fcntl(fd, F_GETFD), -1); /* the low number is given back */
    assert_true(fcntl(high, F_GETFD) & FD_CLOEXEC);
    close(high);
}

static bool tmpfile_supported(void)
{
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    close(fd);
    return true;
}

/* Unnamed while written (a killed process leaves nothing); named on commit. */
static void test_unnamed_until_commit(void **unused)
{
    (void)unused;
    if (!tmpfile_supported()) skip();
    gt_stream_file f;
    char err[512];
    assert_int_equal(gt_stream_file_open(&f, path, err, sizeof err), 0);
    assert_true(f.anonymous);
    assert_int_equal(entries(), 0);
    assert_int_equal(write(f.fd, "trace", 5), 5);
    assert_int_equal(gt_stream_file_commit(&f, path, err, sizeof err), 0);
    char text[16];
    read_file(path, text, sizeof text);
    assert_string_equal(text, "trace");
    assert_int_equal(entries(), 1);
}

/* The program closed the writer's descriptor and put its own file on the
 * number: the buffer stops with EBADF and the program's file keeps only
 * its own bytes. */
static void test_outbuf_stops(void **unused)
{
    (void)unused;
    gt_stream_file f;
    char err[512], text[64];
    assert_int_equal(gt_stream_file_open(&f, path, err, sizeof err), 0);
    gt_outbuf b;
    assert_int_equal(gt_outbuf_init(&b, f.fd, 4096), 0);
    gt_outbuf_write(&b, "before,", 7);
    assert_int_equal(gt_outbuf_flush(&b), 0);
    program_takes(f.fd);
    gt_outbuf_write(&b, "after", 5);
    assert_int_equal(gt_outbuf_flush(&b), -1);
    assert_int_equal(b.error, EBADF);
    gt_outbuf_free(&b);
    read_file(other, text, sizeof text);
    assert_string_equal(text, "mine\n");

    /* Nothing is named or renamed, and the program's descriptor stays open. */
    int number = f.fd;
    assert_int_equal(gt_stream_file_commit(&f, path, err, sizeof err), -1);
    assert_non_null(strstr(err, GT_STREAM_FILE_TAKEN));
    assert_int_equal(f.fd, -1);
    assert_int_equal(entries(), 1); /* program.data only */
    assert_int_equal(write(number, "still\n", 6), 6);
    close(number);
    read_file(other, text, sizeof text);
    assert_string_equal(text, "mine\nstill\n");
}

/* Discarding, or forgetting it in a forked child, never closes the
 * program's descriptor. */
static void test_discard_and_forget_leave_it(void **unused)
{
    (void)unused;
    void (*const ends[])(gt_stream_file *) = {gt_stream_file_discard, gt_stream_file_forget};
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        gt_stream_file f;
        char err[512];
        assert_int_equal(gt_stream_file_open(&f, path, err, sizeof err), 0);
        int number = f.fd;
        program_takes(number);
        ends[i](&f);
        assert_int_equal(f.fd, -1);
        assert_int_equal(write(number, "still\n", 6), 6);
        close(number);
    }
    char text[64];
    read_file(other, text, sizeof text);
    assert_string_equal(text, "mine\nstill\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identity),
        cmocka_unit_test(test_move_high),
        cmocka_unit_test_setup_teardown(test_unnamed_until_commit, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_outbuf_stops, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_discard_and_forget_leave_it, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
