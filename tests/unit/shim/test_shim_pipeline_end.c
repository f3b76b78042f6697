/* The pipeline's end steps (drain.c): the cut, records made after it
 * (late), reports made before an exec, the final report. Every record is
 * reported, dropped or late, exactly once, and each thread's records
 * still reach the consumer in order (late ones included), also from a
 * thread whose live chunk the cut stole while it kept recording. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "buffer.h"
#include "clock.h"
#include "pipeline.h"
#include "pipeline_check.h"

#define SMALL_CHUNK 4096u /* 31 records */

static int cuts;
static uint64_t consumed_at_cut;

static void on_cut(void *ctx)
{
    (void)ctx;
    cuts++;
    consumed_at_cut = check_consumed();
}

/* Every report made, not only the last (check_finished keeps the last). */
static gt_pipeline_totals reports[4];
static int n_reports;

static void on_report(const gt_pipeline_totals *t, void *ctx)
{
    if (n_reports < 4) reports[n_reports++] = *t;
    check_finished(t, ctx);
}

static void start(int drain_thread, uint32_t cap_chunks)
{
    check_reset();
    cuts = 0;
    consumed_at_cut = 0;
    n_reports = 0;
    check_gpu_reset();
    gt_set_gpu_resolver(&check_gpu_resolver);
    gt_pipeline_params p = {
        .chunk_bytes = SMALL_CHUNK,
        .cap_bytes = (size_t)cap_chunks * SMALL_CHUNK,
        .drain_thread = drain_thread,
        .final_wait_ms = 20,
        .idle_sleep_ms = 2,
        .consume = check_consume_run,
        .cut = on_cut,
        .finished = on_report,
    };
    assert_int_equal(gt_pipeline_start(&p), 0);
}

/* A thread that records `before`, waits for the cut, records `after`. */
typedef struct straddler {
    pthread_t thread;
    uint64_t before, after;
    _Atomic int *ready, *go;
} straddler;

static void *straddle(void *arg)
{
    straddler *s = arg;
    check_record_n(s->before, 0);
    atomic_fetch_add(s->ready, 1);
    while (!atomic_load(s->go))
        sched_yield();
    check_record_n(s->after, 0);
    return NULL;
}

/* Records before the cut are reported, records after it late: threads
 * whose chunks the cut stole write on, past the chunk's end into new
 * chunks, and nothing is lost, counted twice or out of order. */
static void late_after_cut(int drain_thread)
{
    start(drain_thread, 256);
    _Atomic int ready = 0, go = 0;
    straddler s[4];
    for (int i = 0; i < 4; i++) {
        s[i] =
            (straddler){.before = 40 + 7 * (uint64_t)i, .after = 1000, .ready = &ready, .go = &go};
        assert_int_equal(pthread_create(&s[i].thread, NULL, straddle, &s[i]), 0);
    }
    while (atomic_load(&ready) < 4)
        sched_yield();
    assert_int_equal(gt_pipeline_cut(10000), 0);
    assert_int_equal(cuts, 1);
    assert_int_equal(consumed_at_cut, 40 + 47 + 54 + 61);
    assert_true(gt_pipeline_cutting());
    assert_int_equal(gt_pipeline_cut(10000), 0); /* once */
    assert_int_equal(cuts, 1);
    atomic_store(&go, 1);
    for (int i = 0; i < 4; i++)
        pthread_join(s[i].thread, NULL);
    assert_int_equal(check_record_n(5, 0), 5); /* this thread, after the cut too */
    assert_int_equal(gt_pipeline_finish(10000), 0);
    assert_int_equal(check_finished_calls(), 1);
    const gt_pipeline_totals *t = check_totals();
    assert_true(t->final);
    assert_int_equal(t->records, 40 + 47 + 54 + 61);
    assert_int_equal(t->dropped, 0);
    assert_int_equal(t->late, 4 * 1000 + 5);
    assert_int_equal(check_threads_seen(), 5);
    for (int i = 0; i < 5; i++)
        check_assert_thread_in_order(i);
    assert_int_equal(check_consumed(), t->records + t->late);
}

static void test_late_after_cut(void **state)
{
    (void)state;
    late_after_cut(1);
}

static void test_late_after_cut_without_drain(void **state)
{
    (void)state;
    late_after_cut(0);
}

/* Records that find no room after the cut are late too, not dropped:
 * reported + dropped + late is everything the threads recorded. */
static void test_drops_after_cut_are_late(void **state)
{
    (void)state;
    start(0, 8);
    uint64_t fit = 8ull * gt_pool_capacity();
    assert_int_equal(check_record_n(fit + 10, 0), fit); /* 10 dropped before the cut */
    assert_int_equal(gt_pipeline_cut(10000), 0);
    /* Room again: the cut drained every chunk (the thread's last one was
     * full, so it had published it before the drops). */
    assert_int_equal(check_record_n(3 * fit, 0), fit);
    assert_int_equal(gt_pipeline_finish(10000), 0);
    const gt_pipeline_totals *t = check_totals();
    assert_int_equal(t->records, fit);
    assert_int_equal(t->dropped, 10);
    assert_int_equal(t->late, 3 * fit);
    assert_int_equal(t->records + t->dropped + t->late, fit + 10 + 3 * fit);
}

/* GPU times pending at the cut are awaited final_wait_ms, then reported
 * without a time and counted; the pair is not even given back (nothing
 * uses one again). Work completing within the wait keeps its time. */
static void test_cut_waits_for_gpu_within_its_bound(void **state)
{
    (void)state;
    start(1, 64);
    check_record_pending(1);
    check_record_pending(2);
    assert_int_equal(check_record_n(3, 0), 3);
    atomic_store(&check_gpu_completed, 1);
    uint64_t t0 = gt_clock_mono_ns();
    assert_int_equal(gt_pipeline_finish(10000), 0);
    uint64_t took = gt_clock_mono_ns() - t0;
    assert_true(took >= 20000000u);  /* it waited for handle 2 */
    assert_true(took < 1000000000u); /* and gave up, long before the caller's bound */
    const gt_pipeline_totals *t = check_totals();
    assert_int_equal(t->records, 5);
    assert_int_equal(t->gpu_given_up, 1);
    assert_int_equal(check_gpu_give_ups, 0);
    assert_int_equal(check_gpu_cut_asks, 1);
    check_assert_thread(0, 5);
}

/* A report before an exec: everything so far, with pending GPU times
 * given up (and their pairs given back: the exec may fail and the
 * program go on); recording goes on, and the final report covers the
 * whole run, each record once. */
static void test_report_then_final(void **state)
{
    (void)state;
    start(1, 64);
    assert_int_equal(check_record_n(20, 0), 20);
    check_record_pending(9);
    assert_int_equal(gt_pipeline_report(10000), 0);
    assert_int_equal(n_reports, 1);
    assert_false(reports[0].final);
    assert_int_equal(reports[0].records, 21);
    assert_int_equal(reports[0].late, 0);
    assert_int_equal(reports[0].gpu_given_up, 1);
    assert_int_equal(check_gpu_give_ups, 1);
    assert_false(gt_pipeline_cutting());
    assert_int_equal(cuts, 0);
    /* The exec failed: the program goes on. */
    assert_int_equal(check_record_n(30, 0), 30);
    assert_int_equal(gt_pipeline_finish(10000), 0);
    assert_int_equal(n_reports, 2);
    assert_true(reports[1].final);
    assert_int_equal(reports[1].records, 51);
    assert_int_equal(reports[1].late, 0);
    check_assert_thread(0, 51);
    assert_int_equal(check_consumed(), 51);
    /* After the final report, nothing more. */
    assert_int_equal(gt_pipeline_report(10000), 0);
    assert_int_equal(n_reports, 2);
}

/* A report made after the cut (an exec from an atexit handler) counts
 * what came since as late. */
static void test_report_after_cut(void **state)
{
    (void)state;
    start(1, 64);
    assert_int_equal(check_record_n(8, 0), 8);
    assert_int_equal(gt_pipeline_cut(10000), 0);
    assert_int_equal(check_record_n(4, 0), 4);
    assert_int_equal(gt_pipeline_report(10000), 0);
    assert_int_equal(n_reports, 1);
    assert_int_equal(reports[0].records, 8);
    assert_int_equal(reports[0].late, 4);
    assert_int_equal(gt_pipeline_finish(10000), 0);
    assert_int_equal(reports[1].records, 8);
    assert_int_equal(reports[1].late, 4);
}

/* Nothing recorded, no drain started: a report is not made (nothing to
 * say), and does not keep a later start from happening. */
static void test_report_with_nothing_recorded(void **state)
{
    (void)state;
    start(1, 64);
    assert_int_equal(gt_pipeline_report(10000), 0);
    assert_int_equal(n_reports, 0);
    assert_int_equal(check_record_n(3, 0), 3);
    assert_int_equal(gt_pipeline_finish(10000), 0);
    assert_int_equal(n_reports, 1);
    assert_int_equal(check_totals()->records, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_late_after_cut),
        cmocka_unit_test(test_late_after_cut_without_drain),
        cmocka_unit_test(test_drops_after_cut_are_late),
        cmocka_unit_test(test_cut_waits_for_gpu_within_its_bound),
        cmocka_unit_test(test_report_then_final),
        cmocka_unit_test(test_report_after_cut),
        cmocka_unit_test(test_report_with_nothing_recorded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
