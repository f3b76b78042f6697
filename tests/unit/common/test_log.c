/* GPUTRACE_LOG destinations: lines appended to a file opened per write,
 * stdout, stderr as the fallback; verbosity gating; errno kept; streams
 * the program closed or replaced left alone; no SIGPIPE; no wait for a
 * FIFO's reader. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "log.h"
#include "settings.h"
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

static void stdout_warns(void)
{
    gt_log_init(GT_LOG_STDOUT, NULL, GT_VERB_DEFAULT);
    gt_warn("to the stream");
}

static void stderr_warns(void)
{
    gt_log_init(GT_LOG_STDERR, NULL, GT_VERB_DEFAULT);
    gt_warn("to the stream");
}

static void test_stdout_destination(void **state)
{
    (void)state;
    assert_string_equal(capture_fd(STDOUT_FILENO, stdout_warns),
                        "gputrace: warning: to the stream\n");
    assert_string_equal(capture_fd(STDERR_FILENO, stderr_warns),
                        "gputrace: warning: to the stream\n");
}

static char program_file[300];

/* The program closes stderr after load and opens a file of its own, which
 * gets descriptor 2: the log leaves it alone. */
static void stderr_taken_over(void)
{
    gt_log_init(GT_LOG_STDERR, NULL, GT_VERB_DEFAULT);
    close(STDERR_FILENO);
    int fd = open(program_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_int_equal(fd, STDERR_FILENO);
    assert_int_equal(write(fd, "mine\n", 5), 5);
    gt_warn("not here");
    gt_log_write("nor this\n", 9);
}

/* Closed at load (2>&-): never written, whatever gets the number later. */
static void stderr_closed_at_load(void)
{
    close(STDERR_FILENO);
    gt_log_init(GT_LOG_STDERR, NULL, GT_VERB_DEFAULT);
    int fd = open(program_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_int_equal(fd, STDERR_FILENO);
    assert_int_equal(write(fd, "mine\n", 5), 5);
    gt_warn("not here");
}

static void test_replaced_stream_left_alone(void **state)
{
    (void)state;
    snprintf(program_file, sizeof program_file, "%s/program", dir);
    void (*const cases[])(void) = {stderr_taken_over, stderr_closed_at_load};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_string_equal(capture_fd(STDERR_FILENO, cases[i]), "");
        assert_string_equal(slurp(program_file), "mine\n");
        unlink(program_file);
    }
}

/* A write into a pipe nobody reads any more: no SIGPIPE for the program
 * (it would die of it), errno kept. */
static void test_broken_pipe_raises_nothing(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    close(p[0]);
    int saved = dup(STDERR_FILENO);
    dup2(p[1], STDERR_FILENO);
    close(p[1]);
    gt_log_init(GT_LOG_STDERR, NULL, GT_VERB_DEFAULT);
    errno = 42;
    gt_warn("into a broken pipe");
    assert_int_equal(errno, 42);
    dup2(saved, STDERR_FILENO);
    close(saved);
    sigset_t pending;
    assert_int_equal(sigpending(&pending), 0);
    assert_false(sigismember(&pending, SIGPIPE));
}

static char fifo[300];
static void warn_into_fifo(void)
{
    gt_log_init(GT_LOG_FILE, fifo, GT_VERB_DEFAULT);
    gt_warn("one");
}

/* A FIFO with no reader is not waited for: the lines go to stderr. */
static void test_fifo_without_reader(void **state)
{
    (void)state;
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    char want[600];
    snprintf(want, sizeof want,
             "gputrace: warning: cannot open GPUTRACE_LOG file '%s': a FIFO with no reader; "
             "writing to stderr\ngputrace: warning: one\n",
             fifo);
    assert_string_equal(capture_fd(STDERR_FILENO, warn_into_fifo), want);
    unlink(fifo);
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

static char planted[300], victim[300];
static void warn_into_planted_link(void)
{
    gt_log_init(GT_LOG_FILE, planted, GT_VERB_DEFAULT);
    gt_warn("summary");
}

/* A link planted at the log's path (in a shared directory, by another
 * user): the file it points to is never written, the lines go to stderr
 * after one notice that says why. */
static void test_planted_link_not_followed(void **state)
{
    (void)state;
    snprintf(planted, sizeof planted, "%s/planted", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    int fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_int_equal(write(fd, "precious\n", 9), 9);
    close(fd);
    assert_int_equal(symlink(victim, planted), 0);
    char want[600];
    snprintf(want, sizeof want,
             "gputrace: warning: cannot open GPUTRACE_LOG file '%s': a symbolic link, not "
             "followed; writing to stderr\ngputrace: warning: summary\n",
             planted);
    assert_string_equal(capture_fd(STDERR_FILENO, warn_into_planted_link), want);
    assert_string_equal(slurp(victim), "precious\n");
    unlink(planted);
    unlink(victim);
}

/* Warnings and debug lines quote what programs chose (entry point names,
 * paths): no byte a terminal acts on reaches the log, and ill-formed
 * UTF-8 is replaced as in the summary. */
static void test_lines_safe_on_a_terminal(void **state)
{
    (void)state;
    unlink(path);
    gt_log_init(GT_LOG_FILE, path, GT_VERB_DEBUG);
    gt_debug("dlsym(%s)", "k\x1b]52;c;aGk=\x07\r\x9b\xc2\x9b"
                          "2J");
    assert_string_equal(slurp(path), "gputrace: debug: dlsym(k?]52;c;aGk=??\xEF\xBF\xBD?"
                                     "2J)\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_lines_appended),
        cmocka_unit_test(test_verbosity_gates),
        cmocka_unit_test(test_long_line_is_cut_whole),
        cmocka_unit_test(test_stdout_destination),
        cmocka_unit_test(test_replaced_stream_left_alone),
        cmocka_unit_test(test_broken_pipe_raises_nothing),
        cmocka_unit_test(test_fifo_without_reader),
        cmocka_unit_test(test_unopenable_file_falls_back_to_stderr),
        cmocka_unit_test(test_planted_link_not_followed),
        cmocka_unit_test(test_lines_safe_on_a_terminal),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
