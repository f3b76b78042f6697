/* Stream order on the host clock (shim/gpu_order.c): a pair placed to
 * start inside the previous pair of its stream, by no more than the two
 * placements' slack, starts where that one ended and keeps its duration;
 * a larger overlap, another stream, another thread's per-thread default
 * stream or another pool generation is left as placed; a pair that came
 * late from another thread leaves the later one to compare with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "shim/gpu_internal.h"

/* Stands in for a pool: only its address is used. */
static struct gt_gpu_pool *const POOL = (struct gt_gpu_pool *)(uintptr_t)0x1000;

static gt_gpu_span place(const gt_gpu_track *t, uint64_t start, uint64_t duration, uint64_t slack)
{
    gt_gpu_span s = {start, start + duration, slack};
    gt_gpu_order(t, &s);
    assert_int_equal(s.end - s.start, duration);
    return s;
}

static int setup(void **state)
{
    (void)state;
    gt_gpu_order_reset();
    return 0;
}

static void test_rounding_overlap_starts_at_the_previous_end(void **state)
{
    (void)state;
    gt_gpu_track t = {POOL, 1, 0, 0x7000};
    place(&t, 1000, 2000, 5);
    assert_int_equal(place(&t, 2996, 2000, 5).start, 3000); /* 4 ns inside: rounding */
    assert_int_equal(place(&t, 4990, 2000, 5).start, 5000); /* 10 ns: the two slacks */
    assert_int_equal(place(&t, 7100, 2000, 5).start, 7100); /* a gap stays */
    assert_int_equal(place(&t, 9089, 2000, 5).start, 9089); /* 11 ns: no rounding */
}

static void test_other_streams_are_not_compared(void **state)
{
    (void)state;
    gt_gpu_track a = {POOL, 1, 0, 0x7000}, b = {POOL, 1, 0, 0x8000};
    gt_gpu_track old_gen = {POOL, 2, 0, 0x7000};
    place(&a, 1000, 2000, 5);
    assert_int_equal(place(&b, 2998, 2000, 5).start, 2998);
    assert_int_equal(place(&old_gen, 2998, 2000, 5).start, 2998);
    /* The per-thread default stream: one stream per thread, one id. */
    uint64_t per_thread = (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD;
    gt_gpu_track t1 = {POOL, 1, 11, per_thread}, t2 = {POOL, 1, 12, per_thread};
    place(&t1, 1000, 2000, 5);
    assert_int_equal(place(&t2, 2998, 2000, 5).start, 2998);
    assert_int_equal(place(&t1, 2998, 2000, 5).start, 3000);
}

static void test_a_late_earlier_pair_keeps_the_later_one(void **state)
{
    (void)state;
    gt_gpu_track t = {POOL, 1, 0, 0x9000};
    place(&t, 10000, 2000, 5);
    /* Another thread's pair, earlier on the GPU, reaches the consumer now. */
    assert_int_equal(place(&t, 5000, 2000, 5).start, 5000);
    assert_int_equal(place(&t, 11998, 2000, 5).start, 12000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_rounding_overlap_starts_at_the_previous_end, setup),
        cmocka_unit_test_setup(test_other_streams_are_not_compared, setup),
        cmocka_unit_test_setup(test_a_late_earlier_pair_keeps_the_later_one, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
