/* Stream order on the host clock (shim/gpu/gpu_order.c): a pair placed to
 * start inside the latest pair of its stream, by no more than the two
 * placements' slack, starts where that one ended and keeps its duration;
 * a larger overlap, another stream, another thread's per-thread default
 * stream or another pool generation is left as placed. The latest pair
 * is kept per thread, so a thread's pairs reaching the consumer after a
 * later thread's on the same stream are still kept in order, and pairs
 * of two threads that follow each other on one stream are too. Streams
 * that share a window of slots all keep their order. A pair placed
 * before its launching call began, within its slack, starts at the call. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gpu_internal.h"

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
    gt_gpu_track t = {POOL, 1, 0, 0x7000, 11};
    place(&t, 1000, 2000, 5);
    assert_int_equal(place(&t, 2996, 2000, 5).start, 3000); /* 4 ns inside: rounding */
    assert_int_equal(place(&t, 4990, 2000, 5).start, 5000); /* 10 ns: the two slacks */
    assert_int_equal(place(&t, 7100, 2000, 5).start, 7100); /* a gap stays */
    assert_int_equal(place(&t, 9089, 2000, 5).start, 9089); /* 11 ns: no rounding */
}

/* A pair placed late from a wide epoch (slack 150 us): the precise pairs
 * after it on the stream each move behind the one before, not only the
 * first; a gap wider than that slack ends it. */
static void test_behind_a_wide_pair(void **state)
{
    (void)state;
    gt_gpu_track t = {POOL, 1, 0, 0x7000, 11};
    place(&t, 120000, 2000, 150000);                              /* truly at 0 */
    assert_int_equal(place(&t, 10000, 2000, 5).start, 122000);   /* behind it */
    assert_int_equal(place(&t, 20000, 2000, 5).start, 124000);   /* behind that one */
    assert_int_equal(place(&t, 400000, 2000, 5).start, 400000);  /* a gap: as placed */
    assert_int_equal(place(&t, 401000, 2000, 5).start, 401000);  /* 1000 ns inside: too far */
}

static void test_never_before_the_call(void **state)
{
    (void)state;
    gt_gpu_span s = {9000, 12000, 1500};
    gt_gpu_after_call(&s, 10000); /* 1000 ns early, slack 1500: moved */
    assert_int_equal(s.start, 10000);
    assert_int_equal(s.end, 13000);
    s = (gt_gpu_span){7000, 10000, 1500};
    gt_gpu_after_call(&s, 10000); /* 3000 ns early, more than the slack: moved too */
    assert_int_equal(s.start, 10000);
    assert_int_equal(s.end, 13000);
    s = (gt_gpu_span){10500, 11000, 1500};
    gt_gpu_after_call(&s, 10000); /* after the call: kept */
    assert_int_equal(s.start, 10500);
    assert_int_equal(s.end, 11000);
}

static void test_other_streams_are_not_compared(void **state)
{
    (void)state;
    gt_gpu_track a = {POOL, 1, 0, 0x7000, 11}, b = {POOL, 1, 0, 0x8000, 11};
    gt_gpu_track old_gen = {POOL, 2, 0, 0x7000, 11};
    place(&a, 1000, 2000, 5);
    assert_int_equal(place(&b, 2998, 2000, 5).start, 2998);
    assert_int_equal(place(&old_gen, 2998, 2000, 5).start, 2998);
    /* The per-thread default stream: one stream per thread, one id. */
    uint64_t per_thread = (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD;
    gt_gpu_track t1 = {POOL, 1, 11, per_thread, 11}, t2 = {POOL, 1, 12, per_thread, 12};
    place(&t1, 1000, 2000, 5);
    assert_int_equal(place(&t2, 2998, 2000, 5).start, 2998);
    assert_int_equal(place(&t1, 2998, 2000, 5).start, 3000);
}

static void test_threads_on_one_stream(void **state)
{
    (void)state;
    gt_gpu_track a = {POOL, 1, 0, 0x9000, 11}, b = {POOL, 1, 0, 0x9000, 12};
    /* b's pairs reach the consumer first, though a's ran before them
     * (b reused the handle a's destroyed stream had). */
    place(&b, 100000, 2000, 5);
    place(&b, 102000, 2000, 5);
    assert_int_equal(place(&a, 1000, 2000, 5).start, 1000);
    assert_int_equal(place(&a, 2997, 2000, 5).start, 3000);
    assert_int_equal(place(&a, 4998, 2000, 5).start, 5000);
    /* A pair of b right after a's latest on the stream they share. */
    assert_int_equal(place(&b, 104000, 2000, 5).start, 104000);
    assert_int_equal(place(&a, 105999, 2000, 5).start, 106000);
    assert_int_equal(place(&b, 107998, 2000, 5).start, 108000);
}

static void test_streams_sharing_slots(void **state)
{
    (void)state;
    /* More streams than a window holds: whichever windows they hash to,
     * a stream whose entry was made room for is left as placed, the others
     * keep their order. */
    enum { STREAMS = 600 };
    uint64_t kept = 0;
    for (uint64_t s = 0; s < STREAMS; s++) {
        gt_gpu_track t = {POOL, 1, 0, 0x10000 + s * 0x100, 11};
        place(&t, 1000 + s * 10000, 2000, 5);
    }
    for (uint64_t s = 0; s < STREAMS; s++) {
        gt_gpu_track t = {POOL, 1, 0, 0x10000 + s * 0x100, 11};
        uint64_t at = place(&t, 2999 + s * 10000, 2000, 5).start;
        assert_true(at == 2999 + s * 10000 || at == 3000 + s * 10000);
        kept += at == 3000 + s * 10000;
    }
    assert_true(kept > 0 && kept < STREAMS); /* 256 slots */
    gt_gpu_order_reset();
    for (uint64_t s = 0; s < 8; s++) {
        gt_gpu_track t = {POOL, 1, 0, 0x10000 + s * 0x100, 11};
        place(&t, 1000 + s * 10000, 2000, 5);
    }
    for (uint64_t s = 0; s < 8; s++) {
        gt_gpu_track t = {POOL, 1, 0, 0x10000 + s * 0x100, 11};
        assert_int_equal(place(&t, 2999 + s * 10000, 2000, 5).start, 3000 + s * 10000);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_rounding_overlap_starts_at_the_previous_end, setup),
        cmocka_unit_test_setup(test_behind_a_wide_pair, setup),
        cmocka_unit_test_setup(test_never_before_the_call, setup),
        cmocka_unit_test_setup(test_other_streams_are_not_compared, setup),
        cmocka_unit_test_setup(test_threads_on_one_stream, setup),
        cmocka_unit_test_setup(test_streams_sharing_slots, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
