/* CUPTI's clock on the shim's (shim/gpu/cupti_clock.c), against a CUPTI
 * timestamp that is CLOCK_MONOTONIC plus a constant and a step the test
 * sets. Each fake reading spins so that a sample's window is about
 * SPIN_NS wide, which makes the bounds below independent of how fast the
 * machine reads its clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "clock.h"
#include "cupti_internal.h"

gt_cupti_api gt_cupti;

enum { SPIN_NS = 20000 };
static const uint64_t REALTIME_BASE = 1800000000000000000ull; /* ns: a wall clock's size */
static int64_t step_ns;

static void spin_until(uint64_t t)
{
    while (gt_clock_mono_ns() < t)
        ;
}

static CUptiResult fake_timestamp(uint64_t *timestamp)
{
    uint64_t t0 = gt_clock_mono_ns();
    spin_until(t0 + SPIN_NS / 2);
    *timestamp = gt_clock_mono_ns() + REALTIME_BASE + (uint64_t)step_ns;
    spin_until(t0 + SPIN_NS);
    return CUPTI_SUCCESS;
}

static int64_t error_at(uint64_t mono)
{
    return (int64_t)(gt_cupti_clock_to_mono(mono + REALTIME_BASE + (uint64_t)step_ns) - mono);
}

static void test_first_sample_maps_within_its_window(void **state)
{
    (void)state;
    gt_cupti_clock_sample(1);
    uint64_t window = gt_cupti_clock_window();
    assert_true(window >= SPIN_NS);
    int64_t err = error_at(gt_clock_mono_ns());
    assert_true(err >= -(int64_t)window / 2 && err <= (int64_t)window / 2);
    assert_int_equal(gt_cupti_clock_to_mono(0), 0);
}

/* Records are mapped in the order threads drain them: an offset that moved
 * by a sample's noise would make back-to-back work on a stream overlap. */
static void test_a_sample_within_the_window_keeps_the_offset(void **state)
{
    (void)state;
    const uint64_t cupti = REALTIME_BASE + 123456789;
    uint64_t before = gt_cupti_clock_to_mono(cupti);
    step_ns = SPIN_NS / 8;
    gt_cupti_clock_sample(1);
    assert_int_equal(gt_cupti_clock_to_mono(cupti), before);
    step_ns = -SPIN_NS / 8;
    gt_cupti_clock_sample(1);
    assert_int_equal(gt_cupti_clock_to_mono(cupti), before);
}

/* A step of CUPTI's clock (CLOCK_REALTIME based) is followed. */
static void test_a_step_moves_the_offset(void **state)
{
    (void)state;
    const uint64_t cupti = REALTIME_BASE + 123456789;
    uint64_t before = gt_cupti_clock_to_mono(cupti);
    step_ns = 5000000;
    gt_cupti_clock_sample(1);
    int64_t moved = (int64_t)(before - gt_cupti_clock_to_mono(cupti));
    int64_t window = (int64_t)gt_cupti_clock_window();
    assert_true(moved > 5000000 - SPIN_NS / 8 - window && moved < 5000000 + SPIN_NS / 8 + window);
    int64_t err = error_at(gt_clock_mono_ns());
    assert_true(err >= -window / 2 && err <= window / 2);
}

int main(void)
{
    gt_clock_init(0);
    gt_cupti.get_timestamp = fake_timestamp;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_sample_maps_within_its_window),
        cmocka_unit_test(test_a_sample_within_the_window_keeps_the_offset),
        cmocka_unit_test(test_a_step_moves_the_offset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
