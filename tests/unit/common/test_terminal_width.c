/* The width of a terminal: COLUMNS first, then the terminal's window, 0
 * when neither says. A pseudo-terminal stands for the user's. */
#include <fcntl.h>
#include <pty.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cmocka.h>

#include "terminal_width.h"

static void test_columns_first(void **unused)
{
    (void)unused;
    assert_int_equal(gt_terminal_width("100", -1), 100);
    assert_int_equal(gt_terminal_width("10000", -1), 10000);
    /* not a width: the terminal says, or nothing */
    assert_int_equal(gt_terminal_width("", -1), 0);
    assert_int_equal(gt_terminal_width("0", -1), 0);
    assert_int_equal(gt_terminal_width("80x", -1), 0);
    assert_int_equal(gt_terminal_width("-5", -1), 0);
    assert_int_equal(gt_terminal_width("10001", -1), 0);
    assert_int_equal(gt_terminal_width(NULL, -1), 0);
}

static void test_terminal_window(void **unused)
{
    (void)unused;
    int leader, follower;
    struct winsize ws = {.ws_row = 30, .ws_col = 97};
    if (openpty(&leader, &follower, NULL, NULL, &ws) != 0) skip();
    assert_int_equal(gt_terminal_width(NULL, follower), 97);
    assert_int_equal(gt_terminal_width("132", follower), 132);
    assert_int_equal(gt_terminal_width("bad", follower), 97);
    close(follower);
    close(leader);
    /* a pipe is no terminal */
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(gt_terminal_width(NULL, fds[1]), 0);
    close(fds[0]);
    close(fds[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns_first),
        cmocka_unit_test(test_terminal_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
