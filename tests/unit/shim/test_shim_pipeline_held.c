/* Records waiting for their GPU time: held with every later record of
 * their thread, released in order once resolved, and reported without GPU
 * time after the bounded wait at the end. The drain runs on the test
 * thread (no drain thread), so every step is deterministic. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "event.h"
#include "pipeline.h"
#include "record.h"
#include "pipeline_check.h"

/* Records are handed over in runs, as the shim's consumer takes them, each
 * record of a run passed on to the test's consumer. */
static void (*run_member)(gt_event *ev, void *ctx);

static void consume_run(gt_event *ev, uint32_t n, void *ctx)
{
    check_run_shape(ev, n);
    for (uint32_t i = 0; i < n; i++)
        run_member(&ev[i], ctx);
}

static void start_with(unsigned final_wait_ms, const gt_gpu_resolver *r,
                       void (*consume)(gt_event *, void *))
{
    check_reset();
    check_gpu_reset();
    gt_set_gpu_resolver(r);
    run_member = consume;
    gt_pipeline_params p = {
        .chunk_bytes = 4096,
        .cap_bytes = 1024 * 4096,
        .final_wait_ms = final_wait_ms,
        .consume = consume_run,
        .finished = check_finished,
    };
    assert_int_equal(gt_pipeline_start(&p), 0);
}

static void start(unsigned final_wait_ms, const gt_gpu_resolver *r)
{
    start_with(final_wait_ms, r, check_consume);
}

static void *record_and_exit(void *arg)
{
    check_record_n((uint64_t)(uintptr_t)arg, 0);
    return NULL;
}

static void other_thread_records(uint64_t n)
{
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, record_and_exit, (void *)(uintptr_t)n), 0);
    pthread_join(t, NULL);
}

static void test_held_until_resolved_in_thread_order(void **state)
{
    (void)state;
    start(0, &check_gpu_resolver);
    /* This thread: seq 0 plain, seq 1 pending, then 38 plain (two chunks). */
    assert_int_equal(check_record_n(1, 0), 1);
    check_record_pending(1);
    assert_int_equal(check_record_n(38, 0), 38);
    gt_ev_flush();
    other_thread_records(10); /* another thread is never held up */

    gt_pipeline_drain_now();
    assert_int_equal(check_consumed(), 1 + 10);
    int me = 0, other = 1;
    if (check_thread_count(0) == 10) me = 1, other = 0;
    check_assert_thread(me, 1);
    check_assert_thread(other, 10);

    gt_pipeline_drain_now(); /* still pending: nothing moves */
    assert_int_equal(check_consumed(), 11);

    atomic_store(&check_gpu_completed, 1);
    gt_pipeline_drain_now();
    check_assert_thread(me, 40);
    assert_int_equal(check_consumed(), 50);

    /* A record that never completes: reported without GPU time at the end,
     * after the bounded wait, and the record after it still arrives. From
     * the cut on no pair is used again: the resolver is told so, and gives
     * nothing back. */
    check_record_pending(2);
    assert_int_equal(check_record_n(1, 0), 1);
    assert_int_equal(gt_pipeline_finish(10000), 0);
    assert_int_equal(check_gpu_give_ups, 0);
    assert_int_equal(check_gpu_cut_asks, 1);
    assert_int_equal(check_totals()->gpu_given_up, 1);
    check_assert_thread(me, 42);
    assert_false(check_thread_last(me)->flags & (GT_EVF_GPU_PENDING | GT_EVF_GPU_TIMED));
    assert_int_equal(check_totals()->records, 52);
}

/* The resolved record carries the resolver's GPU times. */
static int timed_seen;
static void consume_and_note(gt_event *ev, void *ctx)
{
    timed_seen += (ev->flags & GT_EVF_GPU_TIMED) && ev->gpu_start == 3000 && ev->gpu_end == 3500;
    check_consume(ev, ctx);
}

static void test_resolved_times_reach_consumer(void **state)
{
    (void)state;
    start_with(0, &check_gpu_resolver, consume_and_note);
    timed_seen = 0;
    check_record_pending(3);
    gt_ev_flush();
    atomic_store(&check_gpu_completed, 3);
    gt_pipeline_drain_now();
    assert_int_equal(timed_seen, 1);
    assert_int_equal(gt_pipeline_finish(10000), 0);
    check_assert_thread(0, 1);
}

/* The final wait gives the GPU time to finish: work completing during it
 * is reported with its time, not given up. */
static void *complete_later(void *arg)
{
    (void)arg;
    struct timespec ms = {0, 20 * 1000000L};
    nanosleep(&ms, NULL);
    atomic_store(&check_gpu_completed, 5);
    return NULL;
}

static void test_final_wait_lets_late_work_resolve(void **state)
{
    (void)state;
    start(5000, &check_gpu_resolver);
    check_record_pending(5);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, complete_later, NULL), 0);
    assert_int_equal(gt_pipeline_finish(10000), 0);
    pthread_join(t, NULL);
    assert_int_equal(check_gpu_give_ups, 0);
    assert_int_equal(check_totals()->records, 1);
    assert_true(check_thread_last(0)->flags & GT_EVF_GPU_TIMED);
}

/* With no resolver registered a flagged record is not held. */
static void test_no_resolver_holds_nothing(void **state)
{
    (void)state;
    start(0, NULL);
    check_record_pending(7);
    assert_int_equal(check_record_n(2, 0), 2);
    gt_ev_flush();
    gt_pipeline_drain_now();
    check_assert_thread(0, 3);
    assert_false(check_thread_last(0)->flags & (GT_EVF_GPU_PENDING | GT_EVF_GPU_TIMED));
    assert_int_equal(gt_pipeline_finish(10000), 0);
}

/* More threads held at once than tracked one by one: everything waits,
 * and every thread's order survives. */
static void *pending_then_plain(void *arg)
{
    (void)arg;
    check_record_pending(9);
    check_record_n(40, 0);
    return NULL;
}

static void test_many_held_threads_keep_order(void **state)
{
    (void)state;
    start(0, &check_gpu_resolver);
    enum { N = 80 };
    pthread_t t[N];
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_create(&t[i], NULL, pending_then_plain, NULL), 0);
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    gt_pipeline_drain_now();
    assert_int_equal(check_consumed(), 0);
    atomic_store(&check_gpu_completed, 9);
    gt_pipeline_drain_now();
    assert_int_equal(check_consumed(), N * 41);
    assert_int_equal(check_threads_seen(), N);
    for (int i = 0; i < N; i++)
        check_assert_thread(i, 41);
    assert_int_equal(gt_pipeline_finish(10000), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_held_until_resolved_in_thread_order),
        cmocka_unit_test(test_resolved_times_reach_consumer),
        cmocka_unit_test(test_final_wait_lets_late_work_resolve),
        cmocka_unit_test(test_no_resolver_holds_nothing),
        cmocka_unit_test(test_many_held_threads_keep_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
