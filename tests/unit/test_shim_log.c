/* GPUTRACE_LOG destinations: lines appended to a file opened per write,
 * stdout, stderr as the fallback; verbosity gating; errno kept. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "read_file.h"

static char dir[] = "/tmp/gt-log-XXXXXX";
static char path[256];

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir)) return -1;
    snprintf(path, sizeof path, "%s/log", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    rmdir(dir);
    return 0;
}

/* The whole file; "" when absent. */
static char *slurp(const char *p)
{
    static char buf[8192];
    read_file(p, buf, sizeof buf);
    return buf;
}

/* Runs fn with descriptor fd redirected into a file; returns what was
 * written there. */
static char *capture_fd(int fd, void (*fn)(void))
{
    char cap[300];
    snprintf(cap, sizeof cap, "%s/captured", dir);
    int out = open(cap, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int saved = dup(fd);
    dup2(out, fd);
    close(out);
    fn();
    dup2(saved, fd);
    close(saved);
    char *text = slurp(cap);
    unlink(cap);
    return text;
}

static void test_file_lines_appended(void **state)
{
    (void)state;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(write(fd, "before\n", 7) == 7);
    close(fd);
    gt_log_init(GT_LOG_FILE, path, GT_VERB_DEFAULT);
    errno = 77;
    gt_warn("first %d", 1);
    assert_int_equal(errno, 77);
    gt_debug("not at default verbosity");
    gt_warn("second");
    gt_log_write("raw bytes\n", 10);
    assert_string_equal(
        slurp(path), "before\ngputrace: warning: first 1\ngputrace: warning: second\nraw bytes\n");
}

static void test_verbosity_gates(void **state)
{
    (void)state;
    unlink(path);
    gt_log_init(GT_LOG_FILE, path, GT_VERB_NONE);
    gt_warn("silent");
    gt_debug("silent");
    assert_int_equal(access(path, F_OK), -1); /* not even created */
    gt_log_init(GT_LOG_FILE, path, GT_VERB_DEBUG);
    assert_true(gt_log_debug_enabled());
    gt_debug("shown %s", "here");
    gt_warn("and this");
    assert_string_equal(slurp(path), "gputrace: debug: shown here\ngputrace: warning: and this\n");
}

static void test_long_line_is_cut_whole(void **state)
{
    (void)state;
    unlink(path);
    gt_log_init(GT_LOG_FILE, path, GT_VERB_DEFAULT);
    char big[5000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    gt_warn("%s", big);
    char *text = slurp(path);
    size_t n = strlen(text);
    assert_true(n > 1000 && n <= 2048);
    assert_int_equal(text[n - 1], '\n');
    assert_ptr_equal(strchr(text, '\n'), text + n - 1); /* one line */
}

static void warn_once(void)
{
    gt_warn("to the stream");
}

static void test_stdout_destination(void **state)
{
    (void)state;
    gt_log_init(GT_LOG_STDOUT, NULL, GT_VERB_DEFAULT);
    assert_string_equal(capture_fd(STDOUT_FILENO, warn_once), "gputrace: warning: to the stream\n");
    gt_log_init(GT_LOG_STDERR, NULL, GT_VERB_DEFAULT);
    assert_string_equal(capture_fd(STDERR_FILENO, warn_once), "gputrace: warning: to the stream\n");
}

static char unwritable[300];
static void warn_twice_unwritable(void)
{
    gt_log_init(GT_LOG_FILE, unwritable, GT_VERB_DEFAULT);
    gt_warn("one");
    gt_warn("two");
}

/* A log file that cannot be opened: one notice, then the lines on stderr. */
static void test_unopenable_file_falls_back_to_stderr(void **state)
{
    (void)state;
    snprintf(unwritable, sizeof unwritable, "%s/no/such/dir/log", dir);
    char want[600];
    snprintf(want, sizeof want,
             "gputrace: warning: cannot open GPUTRACE_LOG file '%s': No such file or directory; "
             "writing to stderr\ngputrace: warning: one\ngputrace: warning: two\n",
             unwritable);
    assert_string_equal(capture_fd(STDERR_FILENO, warn_twice_unwritable), want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_lines_appended),
        cmocka_unit_test(test_verbosity_gates),
        cmocka_unit_test(test_long_line_is_cut_whole),
        cmocka_unit_test(test_stdout_destination),
        cmocka_unit_test(test_unopenable_file_falls_back_to_stderr),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
