/* Statistics of a row (SPEC §5) against values computed here another way:
 * sorting for the median, two passes for the standard deviation. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "histogram.h"
#include "stats.h"

static gt_stats_summary summarize(const uint64_t *v, size_t n)
{
    gt_stats s = {0};
    for (size_t i = 0; i < n; i++)
        gt_stats_add(&s, v[i]);
    gt_stats_summary out;
    gt_stats_summarize(&s, &out);
    gt_stats_free(&s);
    return out;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The reference: sort, then the middle (mean of the two middles, half up). */
static double reference_median(const uint64_t *v, size_t n)
{
    uint64_t *c = malloc(n * sizeof(*c));
    assert_non_null(c);
    for (size_t i = 0; i < n; i++)
        c[i] = v[i];
    qsort(c, n, sizeof(*c), cmp_u64);
    double m = n % 2 ? (double)c[n / 2] : ((double)c[n / 2 - 1] + (double)c[n / 2]) / 2.0;
    free(c);
    return m;
}

/* Two-pass sample standard deviation in long double. */
static double reference_stddev(const uint64_t *v, size_t n)
{
    long double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    long double mean = sum / n;
    for (size_t i = 0; i < n; i++)
        sq += (v[i] - mean) * (v[i] - mean);
    return (double)sqrtl(sq / (n - 1));
}

static uint64_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 33;
}

static void test_empty_row_is_all_zero(void **unused)
{
    (void)unused;
    gt_stats s = {0};
    gt_stats_summary out;
    gt_stats_summarize(&s, &out);
    assert_int_equal(out.count, 0);
    assert_int_equal(out.total, 0);
    assert_int_equal(out.med, 0);
    assert_int_equal(out.stddev, 0);
    assert_int_equal(out.rest_avg, 0);
}

static void test_one_sample(void **unused)
{
    (void)unused;
    uint64_t v[] = {1234};
    gt_stats_summary s = summarize(v, 1);
    assert_int_equal(s.count, 1);
    assert_int_equal(s.total, 1234);
    assert_int_equal(s.avg, 1234);
    assert_int_equal(s.med, 1234);
    assert_int_equal(s.min, 1234);
    assert_int_equal(s.max, 1234);
    assert_int_equal(s.first, 1234);
    assert_int_equal(s.stddev, 0);   /* no spread with one sample */
    assert_int_equal(s.rest_avg, 0); /* nothing after the first */
}

static void test_odd_count(void **unused)
{
    (void)unused;
    uint64_t v[] = {50, 10, 90, 30, 70};
    gt_stats_summary s = summarize(v, 5);
    assert_int_equal(s.med, 50);
    assert_int_equal(s.avg, 50);
    assert_int_equal(s.min, 10);
    assert_int_equal(s.max, 90);
    assert_int_equal(s.first, 50);
    assert_int_equal(s.rest_avg, 50); /* (10 + 90 + 30 + 70) / 4 */
    /* sample variance: (0 + 1600 + 1600 + 400 + 400) / 4 = 1000 */
    assert_int_equal(s.stddev, (uint64_t)llround(sqrt(1000.0)));
}

static void test_even_count(void **unused)
{
    (void)unused;
    uint64_t v[] = {40, 10, 30, 20};
    gt_stats_summary s = summarize(v, 4);
    assert_int_equal(s.med, 25);
    uint64_t w[] = {2, 1};
    s = summarize(w, 2);
    assert_int_equal(s.med, 2); /* 1.5 rounds half up */
    assert_int_equal(s.avg, 2);
    assert_int_equal(s.stddev, 1); /* sqrt(0.5) = 0.707 */
}

static void test_first_versus_rest(void **unused)
{
    (void)unused;
    /* A slow first call (JIT, warm-up) then fast ones. */
    uint64_t v[] = {100000, 10, 12, 14};
    gt_stats_summary s = summarize(v, 4);
    assert_int_equal(s.first, 100000);
    assert_int_equal(s.rest_avg, 12);
    assert_int_equal(s.avg, (100000 + 10 + 12 + 14 + 2) / 4);
}

static void test_against_reference_random(void **unused)
{
    (void)unused;
    uint64_t state = 42;
    for (size_t n = 2; n <= 2001; n += 333) {
        uint64_t *v = malloc(n * sizeof(*v));
        assert_non_null(v);
        for (size_t i = 0; i < n; i++)
            v[i] = 1000 + next_random(&state) % 100000;
        gt_stats_summary s = summarize(v, n);
        assert_true(fabs((double)s.med - reference_median(v, n)) <= 0.5);
        assert_true(fabs((double)s.stddev - reference_stddev(v, n)) <= 0.5);
        free(v);
    }
}

/* Large values with a small spread: a one-pass sum of squares in double
 * loses every digit here; the shifted integer sums must not. */
static void test_stddev_is_numerically_stable(void **unused)
{
    (void)unused;
    enum { N = 1000 };
    uint64_t v[N];
    for (size_t i = 0; i < N; i++)
        v[i] = 1000000000000ull + (i % 7) * 3;
    gt_stats_summary s = summarize(v, N);
    double ref = reference_stddev(v, N);
    assert_true(ref > 5.0);
    assert_true(fabs((double)s.stddev - ref) <= 0.5);
}

static void test_histogram_small_values_are_exact(void **unused)
{
    (void)unused;
    gt_histogram h = {0};
    for (uint64_t v = 0; v < 64; v++)
        assert_int_equal(gt_histogram_add(&h, v), 0);
    for (uint64_t rank = 0; rank < 64; rank++)
        assert_int_equal(gt_histogram_value_at(&h, rank), rank);
    gt_histogram_free(&h);
}

/* Every value comes back as its bucket's midpoint, within 1/128 of it. */
static void test_histogram_error_bound(void **unused)
{
    (void)unused;
    uint64_t state = 7;
    for (int i = 0; i < 2000; i++) {
        uint64_t v = (next_random(&state) << 31) ^ next_random(&state);
        v >>= next_random(&state) % 60;
        gt_histogram h = {0};
        assert_int_equal(gt_histogram_add(&h, v), 0);
        double err = fabs((double)gt_histogram_value_at(&h, 0) - (double)v);
        assert_true(err <= (double)v / 128.0);
        gt_histogram_free(&h);
    }
}

/* Past the exact cap: count, total, min, max and first stay exact, the
 * median is within the stated 1/128 of the true one. */
static void test_histogram_regime(void **unused)
{
    (void)unused;
    size_t n = GT_STATS_EXACT_CAP * 10 + 1;
    uint64_t *v = malloc(n * sizeof(*v));
    assert_non_null(v);
    uint64_t state = 99, total = 0, lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        v[i] = 100 + next_random(&state) % 10000000; /* 100 ns to 10 ms */
        total += v[i];
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    gt_stats s = {0};
    for (size_t i = 0; i < n; i++)
        gt_stats_add(&s, v[i]);
    assert_non_null(s.hist);
    assert_null(s.samples);
    gt_stats_summary out;
    gt_stats_summarize(&s, &out);
    assert_int_equal(out.count, n);
    assert_int_equal(out.total, total);
    assert_int_equal(out.min, lo);
    assert_int_equal(out.max, hi);
    assert_int_equal(out.first, v[0]);
    double ref = reference_median(v, n);
    assert_true(fabs((double)out.med - ref) <= ref / 128.0 + 1.0);
    assert_true(fabs((double)out.stddev - reference_stddev(v, n)) <= 1.0);
    gt_stats_free(&s);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_row_is_all_zero),
        cmocka_unit_test(test_one_sample),
        cmocka_unit_test(test_odd_count),
        cmocka_unit_test(test_even_count),
        cmocka_unit_test(test_first_versus_rest),
        cmocka_unit_test(test_against_reference_random),
        cmocka_unit_test(test_stddev_is_numerically_stable),
        cmocka_unit_test(test_histogram_small_values_are_exact),
        cmocka_unit_test(test_histogram_error_bound),
        cmocka_unit_test(test_histogram_regime),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
