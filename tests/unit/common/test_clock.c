/* Host clock: ticks converted on the draining thread land on
 * CLOCK_MONOTONIC within a stated tolerance, for ticks between calibration
 * samples and past the latest one, and conversion never goes backwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "clock.h"

/* 50 us: well above the calibration's sampling error (tens of ns) and the
 * bracket below (5 us), so that only a wrong conversion fails. */
#define TOLERANCE_NS 50000u

typedef struct bracket {
    uint64_t before, ticks, after; /* ns, raw ticks, ns */
} bracket;

/* A tick reading with the CLOCK_MONOTONIC times around it, retried until
 * the two are close (a preempted reading is useless). */
static bracket take(void)
{
    bracket b = {0, 0, 0};
    for (int i = 0; i < 1000; i++) {
        b.before = gt_clock_mono_ns();
        b.ticks = gt_clock_ticks();
        b.after = gt_clock_mono_ns();
        if (b.after - b.before < 5000) break;
    }
    return b;
}

static void assert_converts(const bracket *b)
{
    uint64_t ns = gt_clock_to_ns(b->ticks);
    assert_in_range(ns, b->before - TOLERANCE_NS, b->after + TOLERANCE_NS);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_clock_gettime_source_is_identity(void **state)
{
    (void)state;
    gt_clock_init(0);
    assert_int_equal(gt_clock_tsc, 0);
    bracket b = take();
    assert_in_range(b.ticks, b.before, b.after);
    assert_int_equal(gt_clock_to_ns(b.ticks), b.ticks);
}

static void test_tsc_conversion_tracks_monotonic(void **state)
{
    (void)state;
    gt_clock_init(1);
    if (!gt_clock_tsc) skip(); /* no invariant TSC here: the identity test covers it */
    enum { N = 30 };
    bracket b[N];
    /* 30 readings over ~300 ms, the drain's refinement every 10 ms between. */
    for (int i = 0; i < N; i++) {
        b[i] = take();
        sleep_ms(10);
        if (i % 3 == 0) gt_clock_refine();
    }
    gt_clock_refine();
    for (int i = 0; i < N; i++)
        assert_converts(&b[i]);
    /* Past the latest sample: extrapolated at the measured rate. */
    sleep_ms(30);
    bracket late = take();
    assert_converts(&late);
    /* Monotonic over a dense run of readings. */
    uint64_t prev = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t ns = gt_clock_to_ns(gt_clock_ticks());
        assert_true(ns >= prev);
        prev = ns;
    }
}

/* Without any refinement the first conversion takes its own second
 * sample: a tick read right after load still converts correctly. */
static void test_first_conversion_calibrates_itself(void **state)
{
    (void)state;
    gt_clock_init(1);
    if (!gt_clock_tsc) skip();
    bracket b = take();
    sleep_ms(20);
    assert_converts(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_gettime_source_is_identity),
        cmocka_unit_test(test_tsc_conversion_tracks_monotonic),
        cmocka_unit_test(test_first_conversion_calibrates_itself),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
