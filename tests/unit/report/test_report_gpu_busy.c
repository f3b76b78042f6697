/* GPU busy time (the union of GPU intervals) and idle gaps, against a
 * brute-force union computed here over a bitmap of time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "gpu_busy.h"

static uint64_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 33;
}

static void test_overlaps_merge(void **unused)
{
    (void)unused;
    gt_gpu_busy b = {0};
    gt_gpu_busy_add(&b, 100, 200);
    gt_gpu_busy_add(&b, 150, 300); /* overlaps */
    gt_gpu_busy_add(&b, 300, 400); /* touches */
    gt_gpu_busy_add(&b, 500, 600);
    gt_gpu_busy_add(&b, 50, 120); /* earlier, overlapping the first */
    gt_gpu_busy_add(&b, 0, 10);   /* earlier, alone */
    gt_gpu_busy_add(&b, 20, 20);  /* empty */
    gt_gpu_busy_add(&b, 90, 550); /* swallows a gap */
    assert_int_equal(gt_gpu_busy_ns(&b), 10 + (600 - 50));
    gt_gpu_busy_free(&b);
}

/* Random intervals, shuffled locally (less than the window out of order):
 * the union must be exact. */
static void test_random_against_bitmap(void **unused)
{
    (void)unused;
    enum { SPAN = 200000, N = 5000, SHUFFLE = 64 };
    static unsigned char busy[SPAN];
    static uint64_t starts[N], ends[N];
    uint64_t state = 3;
    for (int i = 0; i < N; i++) {
        starts[i] = (uint64_t)i * (SPAN - 200) / N + next_random(&state) % 40;
        ends[i] = starts[i] + 1 + next_random(&state) % 120;
    }
    for (int i = 0; i + 1 < N; i++) {
        int j = i + (int)(next_random(&state) % SHUFFLE);
        if (j >= N) j = N - 1;
        uint64_t s = starts[i], e = ends[i];
        starts[i] = starts[j];
        ends[i] = ends[j];
        starts[j] = s;
        ends[j] = e;
    }
    gt_gpu_busy b = {0};
    for (int i = 0; i < N; i++) {
        gt_gpu_busy_add(&b, starts[i], ends[i]);
        for (uint64_t t = starts[i]; t < ends[i]; t++)
            busy[t] = 1;
    }
    uint64_t expected = 0;
    for (int t = 0; t < SPAN; t++)
        expected += busy[t];
    assert_int_equal(gt_gpu_busy_ns(&b), expected);
    assert_int_equal(b.clipped_ns, 0);
    gt_gpu_busy_free(&b);
}

/* Far more intervals than the window holds: memory stays bounded, the
 * total stays exact when they arrive in order. */
static void test_long_run_in_order(void **unused)
{
    (void)unused;
    gt_gpu_busy b = {0};
    uint64_t n = GT_GPU_BUSY_WINDOW * 50;
    for (uint64_t i = 0; i < n; i++)
        gt_gpu_busy_add(&b, i * 1000, i * 1000 + 600);
    assert_true(b.n <= GT_GPU_BUSY_WINDOW);
    assert_int_equal(gt_gpu_busy_ns(&b), n * 600);
    gt_gpu_busy_free(&b);
}

/* An interval arriving after the window moved past it is clipped to the
 * retired horizon: never counted twice, and the loss is reported. */
static void test_late_interval_is_clipped(void **unused)
{
    (void)unused;
    gt_gpu_busy b = {0};
    for (uint64_t i = 0; i < GT_GPU_BUSY_WINDOW + 10; i++)
        gt_gpu_busy_add(&b, i * 100, i * 100 + 50);
    uint64_t before = gt_gpu_busy_ns(&b);
    assert_true(b.retired_any);
    gt_gpu_busy_add(&b, 0, 50); /* already counted */
    assert_int_equal(gt_gpu_busy_ns(&b), before);
    gt_gpu_busy_add(&b, 60, 90); /* in a retired gap: lost, and said so */
    assert_int_equal(gt_gpu_busy_ns(&b), before);
    assert_int_equal(b.clipped_ns, 50 + 30);
    gt_gpu_busy_free(&b);
}

static void test_idle_gaps(void **unused)
{
    (void)unused;
    const uint64_t ms = 1000000;
    gt_gpu_busy b = {0};
    gt_gpu_busy_add(&b, 0, 10);
    gt_gpu_busy_add(&b, 10 + ms, 20 + ms);         /* exactly 1 ms: not over it */
    gt_gpu_busy_add(&b, 20 + 3 * ms, 30 + 3 * ms); /* 2 ms gap */
    gt_gpu_busy_add(&b, 30 + 8 * ms, 40 + 8 * ms); /* 5 ms gap: the largest */
    gt_gpu_busy_add(&b, 40 + 8 * ms, 50 + 8 * ms); /* touching */
    gt_gpu_gaps gaps[GT_GAP_CAUSES], g;
    gt_gpu_busy_gaps(&b, gaps);
    g = gaps[GT_GAP_IDLE];
    assert_int_equal(g.count, 2);
    assert_int_equal(g.largest_ns, 5 * ms);
    assert_int_equal(g.largest_start, 30 + 3 * ms);
    assert_int_equal(g.total_ns, 7 * ms);

    /* the same gaps once most of them are retired from the window */
    for (uint64_t i = 0; i < GT_GPU_BUSY_WINDOW + 5; i++)
        gt_gpu_busy_add(&b, 100 * ms + i * 100, 100 * ms + i * 100 + 50);
    gt_gpu_busy_gaps(&b, gaps);
    g = gaps[GT_GAP_IDLE];
    assert_int_equal(g.count, 3); /* plus the gap before the burst */
    assert_int_equal(g.largest_ns, 100 * ms - (50 + 8 * ms));
    gt_gpu_busy_free(&b);
}

/* A gap across the opening of a capture window is not idle time seen;
 * one inside a window is. */
static void test_fences(void **unused)
{
    (void)unused;
    gt_gpu_busy b = {0};
    uint64_t ms = 1000000;
    gt_gpu_busy_add(&b, 0, 1 * ms);
    gt_gpu_busy_add(&b, 3 * ms, 4 * ms); /* a 2 ms gap in the first window */
    gt_gpu_busy_fence(&b, 10 * ms);      /* the second window */
    gt_gpu_busy_add(&b, 12 * ms, 13 * ms);
    gt_gpu_busy_add(&b, 20 * ms, 21 * ms); /* a 7 ms gap in it */
    gt_gpu_gaps gaps[GT_GAP_CAUSES], g;
    gt_gpu_busy_gaps(&b, gaps);
    g = gaps[GT_GAP_IDLE];
    assert_int_equal(g.count, 2);
    assert_int_equal(g.total_ns, 9 * ms);
    assert_int_equal(g.largest_ns, 7 * ms);
    gt_gpu_busy_free(&b);

    /* Through retirement: fences behind the horizon go, the rest hold. */
    gt_gpu_busy r = {0};
    for (uint64_t i = 0; i < 3 * GT_GPU_BUSY_WINDOW; i++) {
        if (i % 2) gt_gpu_busy_fence(&r, i * 10 * ms + 5 * ms);
        gt_gpu_busy_add(&r, i * 10 * ms, i * 10 * ms + ms);
    }
    gt_gpu_busy_gaps(&r, gaps);
    g = gaps[GT_GAP_IDLE];
    /* Gaps after even intervals have no fence: half of them (one fewer). */
    assert_int_equal(g.count, 3 * GT_GPU_BUSY_WINDOW / 2);
    assert_true(r.nfences <= GT_GPU_BUSY_WINDOW);
    gt_gpu_busy_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fences),
        cmocka_unit_test(test_overlaps_merge),
        cmocka_unit_test(test_random_against_bitmap),
        cmocka_unit_test(test_long_run_in_order),
        cmocka_unit_test(test_late_interval_is_clipped),
        cmocka_unit_test(test_idle_gaps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
