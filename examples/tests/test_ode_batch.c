/* Batch generation, status counting and the CPU check of device results. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ode_batch.h"
#include "ode_models.h"

#define N 500
#define STEPS 200
#define DT 0.01

static double initial[ODE_DIM * N], params[ODE_NPARAM * N], final[ODE_DIM * N];

static void test_generated_values_lie_in_the_model_ranges(void **state)
{
    (void)state;
    for (int m = 0; m < ode_model_count; m++) {
        const struct ode_model *model = &ode_models[m];
        ode_batch_generate(model, 7, N, initial, params);
        for (int i = 0; i < N; i++) {
            for (int k = 0; k < ODE_DIM; k++) {
                assert_true(initial[ODE_DIM * i + k] >= model->initial[k].lo);
                assert_true(initial[ODE_DIM * i + k] <= model->initial[k].hi);
            }
            for (int k = 0; k < ODE_NPARAM; k++) {
                assert_true(params[ODE_NPARAM * i + k] >= model->param[k].lo);
                assert_true(params[ODE_NPARAM * i + k] <= model->param[k].hi);
            }
        }
    }
}

static void test_the_seed_decides_the_batch(void **state)
{
    (void)state;
    static double again[ODE_DIM * N], again_params[ODE_NPARAM * N];
    ode_batch_generate(&ode_models[0], 42, N, initial, params);
    ode_batch_generate(&ode_models[0], 42, N, again, again_params);
    assert_memory_equal(initial, again, sizeof initial);
    assert_memory_equal(params, again_params, sizeof params);
    ode_batch_generate(&ode_models[0], 43, N, again, again_params);
    assert_memory_not_equal(initial, again, sizeof initial);
    /* Values spread over the range rather than clustering. */
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < N; i++) {
        lo = fmin(lo, initial[ODE_DIM * i]);
        hi = fmax(hi, initial[ODE_DIM * i]);
    }
    assert_true(lo < -0.9 && hi > 0.9);
}

/* Final states computed exactly as the device would, for the check to see. */
static void solve_on_host(const struct ode_model *model)
{
    ode_batch_generate(model, 1, N, initial, params);
    memcpy(final, initial, sizeof final);
    for (int i = 0; i < N; i++)
        ode_rk4_integrate(model->host_rhs, 0.0, DT, STEPS, &final[ODE_DIM * i],
                          &params[ODE_NPARAM * i]);
}

static void test_check_accepts_identical_results(void **state)
{
    (void)state;
    struct ode_check check;
    solve_on_host(&ode_models[1]);
    ode_batch_check(ode_models[1].host_rhs, N, 64, DT, STEPS, initial, params, final, &check);
    assert_int_equal(check.checked, 64);
    assert_int_equal(check.mismatched, 0);
    assert_true(check.max_rel_diff == 0.0);
}

static void test_check_finds_a_wrong_system(void **state)
{
    (void)state;
    struct ode_check check;
    solve_on_host(&ode_models[0]);
    /* Samples are spread evenly: with 50 of 500, system 130 is the 13th. */
    final[ODE_DIM * 130 + 1] += 1e-6;
    ode_batch_check(ode_models[0].host_rhs, N, 50, DT, STEPS, initial, params, final, &check);
    assert_int_equal(check.mismatched, 1);
    assert_int_equal(check.worst, 130);
    assert_true(check.max_rel_diff > ODE_CHECK_TOLERANCE);
    assert_true(check.tolerance == ODE_CHECK_TOLERANCE);
}

/* Rounding differences grow with the number of steps; so does the tolerance. */
static void test_tolerance_grows_with_long_integrations(void **state)
{
    (void)state;
    struct ode_check check;
    ode_batch_check(ode_models[0].host_rhs, 1, 0, DT, 4 * ODE_CHECK_TOLERANCE_STEPS, initial,
                    params, final, &check);
    assert_true(check.tolerance == 4 * ODE_CHECK_TOLERANCE);
}

static void test_check_counts_nan_as_a_mismatch(void **state)
{
    (void)state;
    struct ode_check check;
    solve_on_host(&ode_models[2]);
    final[0] = NAN;
    ode_batch_check(ode_models[2].host_rhs, N, 10, DT, STEPS, initial, params, final, &check);
    assert_int_equal(check.mismatched, 1);
    assert_int_equal(check.worst, 0);
    assert_true(isinf(check.max_rel_diff));
}

static void test_status_codes_are_counted_by_kind(void **state)
{
    (void)state;
    const int status[] = {
        ODE_STATUS_OK,        ODE_STATUS_OK,        ODE_STATUS_NONFINITE, ODE_STATUS_DIVERGED,
        ODE_STATUS_UNWRITTEN, ODE_STATUS_UNWRITTEN, ODE_STATUS_UNWRITTEN, 17};
    struct ode_status_counts counts;
    ode_batch_count_status(status, 8, &counts);
    assert_int_equal(counts.ok, 2);
    assert_int_equal(counts.nonfinite, 1);
    assert_int_equal(counts.diverged, 1);
    assert_int_equal(counts.unwritten, 3);
    assert_int_equal(counts.other, 1);
}

/* The device fills status arrays with 0xff bytes before any kernel runs. */
static void test_memset_pattern_reads_as_unwritten(void **state)
{
    (void)state;
    int status[4];
    struct ode_status_counts counts;
    memset(status, 0xff, sizeof status);
    ode_batch_count_status(status, 4, &counts);
    assert_int_equal(counts.unwritten, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated_values_lie_in_the_model_ranges),
        cmocka_unit_test(test_the_seed_decides_the_batch),
        cmocka_unit_test(test_check_accepts_identical_results),
        cmocka_unit_test(test_check_finds_a_wrong_system),
        cmocka_unit_test(test_check_counts_nan_as_a_mismatch),
        cmocka_unit_test(test_tolerance_grows_with_long_integrations),
        cmocka_unit_test(test_status_codes_are_counted_by_kind),
        cmocka_unit_test(test_memset_pattern_reads_as_unwritten),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
