/* Capture windows (shim/process/capture_window.c): when the gate opens and closes for
 * each mode, time edges at their own moments, windows and captured time
 * counted, the openings handed to the report. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "capture_window.h"
#include "clock.h"
#include "config.h"
#include "report.h"
#include "settings.h"

#define S 1000000000ull

static gt_config cfg; /* large: not on the stack */

static void start(enum gt_capture_mode mode, uint64_t delay_ns, uint64_t duration_ns,
                  uint64_t start_ns)
{
    memset(&cfg, 0, sizeof cfg);
    cfg.capture = mode;
    strcpy(cfg.capture_name, "phase");
    cfg.delay_ns = delay_ns;
    cfg.duration_ns = duration_ns;
    gt_capture_start(&cfg, start_ns);
}

static gt_capture_info got(uint64_t end_ns)
{
    gt_capture_info c;
    gt_capture_get(&c, end_ns);
    return c;
}

static void test_all(void **unused)
{
    (void)unused;
    uint64_t t0 = gt_clock_mono_ns();
    start(GT_CAPTURE_ALL, 0, 0, t0);
    assert_true(gt_capture_open());
    assert_int_equal(gt_capture_mask(), 0xff);
    assert_int_equal(gt_capture_poll(t0 + S), UINT64_MAX);
    gt_capture_profiler(0); /* not this mode's business */
    gt_capture_nvtx(-1);
    assert_true(gt_capture_open());
    gt_capture_info c = got(t0 + 5 * S);
    assert_int_equal(c.kind, GT_CAPTURE_ALL);
    assert_string_equal(c.mode, "all");
    assert_int_equal(c.windows, 1);
    assert_int_equal(c.captured_ns, 5 * S);
    assert_false(gt_capture_limited(&c));
}

static void test_profiler(void **unused)
{
    (void)unused;
    start(GT_CAPTURE_PROFILER, 0, 0, gt_clock_mono_ns());
    assert_false(gt_capture_open());
    assert_int_equal(gt_capture_mask(), 0);
    for (int i = 0; i < 3; i++) {
        gt_capture_profiler(1);
        assert_true(gt_capture_open());
        gt_capture_profiler(1); /* starts do not nest */
        gt_capture_profiler(0);
        assert_false(gt_capture_open());
        gt_capture_profiler(0);
    }
    gt_capture_info c = got(gt_clock_mono_ns());
    assert_string_equal(c.mode, "profiler-api");
    assert_int_equal(c.windows, 3);
    assert_int_equal(c.mode_opens, 3);
    assert_true(gt_capture_limited(&c));
}

static void test_nvtx_counts_open_ranges(void **unused)
{
    (void)unused;
    start(GT_CAPTURE_NVTX, 0, 0, gt_clock_mono_ns());
    strcpy(cfg.capture_domain, "lib");
    gt_capture_start(&cfg, gt_clock_mono_ns());
    assert_false(gt_capture_open());
    gt_capture_nvtx(1);
    gt_capture_nvtx(1);
    gt_capture_nvtx(-1);
    assert_true(gt_capture_open());
    gt_capture_nvtx(-1);
    assert_false(gt_capture_open());
    gt_capture_nvtx(-1); /* never below none open */
    gt_capture_nvtx(1);
    assert_true(gt_capture_open());
    gt_capture_info c = got(gt_clock_mono_ns());
    assert_string_equal(c.mode, "nvtx:phase@lib");
    assert_int_equal(c.windows, 2);
    assert_int_equal(c.mode_opens, 2);
}

/* Time edges count at their own moment however late they are seen. */
static void test_delay_and_duration(void **unused)
{
    (void)unused;
    uint64_t t0 = 1000 * S;
    start(GT_CAPTURE_ALL, 2 * S, 3 * S, t0);
    assert_false(gt_capture_open());
    assert_int_equal(gt_capture_poll(t0 + S), S);
    assert_false(gt_capture_open());
    assert_int_equal(gt_capture_poll(t0 + 2 * S + 100), 3 * S - 100);
    assert_true(gt_capture_open());
    assert_int_equal(gt_capture_poll(t0 + 4 * S), S);
    assert_int_equal(gt_capture_poll(t0 + 5 * S + 7), UINT64_MAX);
    assert_false(gt_capture_open());
    gt_capture_info c = got(t0 + 9 * S);
    assert_int_equal(c.windows, 1);
    assert_int_equal(c.captured_ns, 3 * S);
    assert_int_equal(c.delay_ns, 2 * S);
    assert_int_equal(c.duration_ns, 3 * S);
    uint64_t seen = 0, at[4];
    assert_int_equal(gt_capture_opens_since(&seen, at, 4), 1);
    assert_int_equal(at[0], t0 + 2 * S);
    assert_int_equal(gt_capture_opens_since(&seen, at, 4), 0);

    /* A window still open at the end counts up to it; with no duration the
     * delay's edge is the last. */
    start(GT_CAPTURE_ALL, 2 * S, 0, t0);
    assert_int_equal(gt_capture_poll(t0 + 3 * S), UINT64_MAX);
    c = got(t0 + 10 * S);
    assert_int_equal(c.windows, 1);
    assert_int_equal(c.captured_ns, 8 * S);
}

/* A profiler window and the time limits: the intersection. */
static void test_profiler_within_time(void **unused)
{
    (void)unused;
    uint64_t t0 = gt_clock_mono_ns();
    start(GT_CAPTURE_PROFILER, 100 * S, 0, t0);
    gt_capture_profiler(1); /* before the delay: nothing */
    assert_false(gt_capture_open());
    gt_capture_profiler(0);
    gt_capture_profiler(1);
    gt_capture_poll(t0 + 100 * S); /* the delay ends with the profiler on */
    assert_true(gt_capture_open());
    gt_capture_info c = got(t0 + 101 * S);
    assert_int_equal(c.windows, 1);
    assert_int_equal(c.mode_opens, 2);
    assert_int_equal(c.captured_ns, S);

    /* Before the delay ends, a program that started and stopped. */
    start(GT_CAPTURE_PROFILER, 100 * S, 0, t0);
    gt_capture_profiler(1);
    gt_capture_profiler(0);
    c = got(t0 + 50 * S);
    assert_int_equal(c.windows, 0);
    assert_int_equal(c.mode_opens, 1);
}

/* The openings kept for the report: the latest, however many there were. */
static void test_openings_ring(void **unused)
{
    (void)unused;
    start(GT_CAPTURE_PROFILER, 0, 0, gt_clock_mono_ns());
    uint64_t seen = 0, at[128];
    for (int i = 0; i < 100; i++) {
        gt_capture_profiler(1);
        gt_capture_profiler(0);
    }
    assert_int_equal(gt_capture_open_count(), 100);
    uint32_t n = gt_capture_opens_since(&seen, at, 128);
    assert_int_equal(n, 64);
    assert_int_equal(seen, 100);
    for (uint32_t i = 1; i < n; i++)
        assert_true(at[i] >= at[i - 1]);
    gt_capture_profiler(1);
    assert_int_equal(gt_capture_opens_since(&seen, at, 128), 1);
    /* A count from before a restart (a forked child) starts over. */
    start(GT_CAPTURE_PROFILER, 0, 0, gt_clock_mono_ns());
    gt_capture_profiler(1);
    assert_int_equal(gt_capture_opens_since(&seen, at, 128), 1);
    assert_int_equal(seen, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all),
        cmocka_unit_test(test_profiler),
        cmocka_unit_test(test_nvtx_counts_open_ranges),
        cmocka_unit_test(test_delay_and_duration),
        cmocka_unit_test(test_profiler_within_time),
        cmocka_unit_test(test_openings_ring),
    };
    gt_clock_init(-1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
