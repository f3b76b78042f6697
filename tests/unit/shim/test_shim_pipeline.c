/* The event pipeline (DESIGN §6): every record arrives exactly once and in
 * its thread's order, chunks recycle, the cap drops exactly what does not
 * fit, exiting threads lose nothing, the end collects live threads'
 * committed records, and the drain thread starts only on first use. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "buffer.h"
#include "event.h"
#include "pipeline.h"
#include "record.h"
#include "pipeline_check.h"

#define SMALL_CHUNK 4096u /* 31 records: chunks recycle every 31 records */

static gt_pipeline_params params_with(int drain_thread, uint32_t cap_chunks)
{
    gt_pipeline_params p = {
        .chunk_bytes = SMALL_CHUNK,
        .cap_bytes = (size_t)cap_chunks * SMALL_CHUNK,
        .drain_thread = drain_thread,
        .idle_sleep_ms = 2,
        .consume = check_consume_run,
        .finished = check_finished,
    };
    return p;
}

static void start(int drain_thread, uint32_t cap_chunks)
{
    check_reset();
    gt_pipeline_params p = params_with(drain_thread, cap_chunks);
    assert_int_equal(gt_pipeline_start(&p), 0);
}

static void finish(void)
{
    assert_int_equal(gt_pipeline_finish(10000), 0);
    assert_int_equal(check_finished_calls(), 1);
}

/* ------------------------------------------------------------------ */

typedef struct producer {
    pthread_t thread;
    uint64_t records;
    uint64_t stored;
    int throttle; /* wait while many chunks are pending (keeps the test free of drops) */
} producer;

static void *produce(void *arg)
{
    producer *p = arg;
    p->stored = check_record_n(p->records, p->throttle);
    return NULL;
}

static void run_producers(producer *p, int n)
{
    for (int i = 0; i < n; i++)
        assert_int_equal(pthread_create(&p[i].thread, NULL, produce, &p[i]), 0);
    for (int i = 0; i < n; i++)
        pthread_join(p[i].thread, NULL);
}

/* 4 threads x 1,000,000 records through 31-record chunks: ~130,000 chunk
 * hand-overs, under a 256-chunk cap. */
static void test_four_threads_million_each(void **state)
{
    (void)state;
    start(1, 256);
    producer p[4];
    for (int i = 0; i < 4; i++)
        p[i] = (producer){.records = 1000000, .throttle = 1};
    run_producers(p, 4);
    finish();
    const gt_pipeline_totals *t = check_totals();
    assert_int_equal(t->dropped, 0);
    assert_int_equal(t->records, 4000000);
    assert_int_equal(check_threads_seen(), 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(p[i].stored, 1000000);
        check_assert_thread(i, 1000000);
    }
    gt_pool_stats s;
    gt_pool_stats_get(&s);
    assert_true(s.mapped_chunks <= 256);
    assert_true(s.mapped_chunks < 4000000 / s.chunk_capacity / 10); /* recycled, not remapped */
    /* Runs carry several records each (their shape is checked per thread). */
    assert_true(check_runs() > 0 && check_runs() < 4000000 / 2);
}

/* Snapshots every millisecond while 4 threads record: each counts what
 * had been consumed when it was made, and the end still gets every record
 * once, in order (a snapshot steals live chunks, which their threads go
 * on filling). */
static void test_snapshots_lose_nothing(void **state)
{
    (void)state;
    check_reset();
    gt_pipeline_params params = params_with(1, 256);
    params.snapshot_ns = 1000000;
    assert_int_equal(gt_pipeline_start(&params), 0);
    producer p[4];
    for (int i = 0; i < 4; i++)
        p[i] = (producer){.records = 300000, .throttle = 1};
    run_producers(p, 4);
    struct timespec pause = {0, 20000000};
    nanosleep(&pause, NULL); /* idle threads too: their partial chunks */
    finish();
    assert_true(check_snapshots() >= 2);
    assert_int_equal(check_snapshots_wrong(), 0);
    const gt_pipeline_totals *t = check_totals();
    assert_int_equal(t->dropped, 0);
    assert_int_equal(t->records, 1200000);
    for (int i = 0; i < 4; i++)
        check_assert_thread(i, 300000);
}

/* No drain: the cap fills and every record past it is dropped, counted
 * exactly. */
static void test_cap_drops_exactly(void **state)
{
    (void)state;
    start(0, 8);
    producer p = {.records = 1000};
    run_producers(&p, 1);
    uint64_t fit = 8ull * gt_pool_capacity();
    assert_int_equal(p.stored, fit);
    finish();
    const gt_pipeline_totals *t = check_totals();
    assert_int_equal(t->records, fit);
    assert_int_equal(t->dropped, 1000 - fit);
    check_assert_thread(0, fit);
}

static void test_cap_drops_exactly_many_threads(void **state)
{
    (void)state;
    start(0, 8);
    producer p[4];
    for (int i = 0; i < 4; i++)
        p[i] = (producer){.records = 500};
    run_producers(p, 4);
    uint64_t fit = 8ull * gt_pool_capacity(), stored = 0;
    for (int i = 0; i < 4; i++)
        stored += p[i].stored;
    assert_int_equal(stored, fit);
    finish();
    const gt_pipeline_totals *t = check_totals();
    assert_int_equal(t->records, fit);
    assert_int_equal(t->dropped, 2000 - fit);
    gt_pool_stats s;
    gt_pool_stats_get(&s);
    assert_int_equal(s.mapped_chunks, 8); /* never above the cap */
    for (int i = 0; i < check_threads_seen(); i++)
        check_assert_thread_in_order(i);
}

/* Many threads that each record a little and then hold their chunk (a
 * thread pool between tasks): past half as many threads as full chunks fit
 * in the cap, new threads start with small chunks, so that 40 threads fit
 * in the memory of 16 full chunks; a thread that then records much grows
 * its chunks back to the full size. */
#define POOL_THREADS 40
static pthread_barrier_t pool_all_recorded, pool_checked;
static uint64_t pool_stored[POOL_THREADS];

static void *pool_member(void *arg)
{
    uint64_t *stored = arg;
    *stored = check_record_n(1, 0);
    pthread_barrier_wait(&pool_all_recorded);
    pthread_barrier_wait(&pool_checked);
    *stored += check_record_n(2000, 1);
    return NULL;
}

static void test_thread_pool_fits(void **state)
{
    (void)state;
    check_reset();
    gt_pipeline_params p = params_with(1, 16);
    p.chunk_bytes = 65536;
    p.cap_bytes = 16 * 65536;
    assert_int_equal(gt_pipeline_start(&p), 0);
    pthread_t t[POOL_THREADS];
    pthread_barrier_init(&pool_all_recorded, NULL, POOL_THREADS + 1);
    pthread_barrier_init(&pool_checked, NULL, POOL_THREADS + 1);
    for (int i = 0; i < POOL_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, pool_member, &pool_stored[i]), 0);
    pthread_barrier_wait(&pool_all_recorded); /* every thread holds a chunk now */
    gt_pool_stats s;
    gt_pool_stats_get(&s);
    assert_true(s.mapped_bytes <= 16 * 65536);
    pthread_barrier_wait(&pool_checked);
    for (int i = 0; i < POOL_THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&pool_all_recorded);
    pthread_barrier_destroy(&pool_checked);
    finish();
    const gt_pipeline_totals *tot = check_totals();
    assert_int_equal(tot->dropped, 0);
    assert_int_equal(tot->records, POOL_THREADS * 2001);
    for (int i = 0; i < POOL_THREADS; i++)
        assert_int_equal(pool_stored[i], 2001);
}

/* Threads that exit before the end: their partial chunks are published by
 * the TLS destructor. */
static void threads_exit_early(int drain_thread)
{
    start(drain_thread, 1024);
    producer p[8];
    for (int i = 0; i < 8; i++)
        p[i] = (producer){.records = 100 + (uint64_t)i};
    run_producers(p, 8);
    finish();
    const gt_pipeline_totals *t = check_totals();
    assert_int_equal(t->dropped, 0);
    assert_int_equal(t->records, 8 * 100 + 28);
    assert_int_equal(check_threads_seen(), 8);
    for (int i = 0; i < 8; i++)
        check_assert_thread_count_in(i, 100, 107);
}

static void test_exited_threads_lose_nothing(void **state)
{
    (void)state;
    threads_exit_early(1);
}

static void test_exited_threads_lose_nothing_without_drain(void **state)
{
    (void)state;
    threads_exit_early(0);
}

/* Another library's TLS destructor, run after the shim's, still records:
 * nothing of it is lost or counted as dropped. */
static pthread_key_t late_key;

static void late_destructor(void *value)
{
    (void)value;
    check_record_n(5, 0);
}

static void *record_then_exit_with_late_destructor(void *arg)
{
    (void)arg;
    pthread_setspecific(late_key, &late_key);
    check_record_n(10, 0);
    return NULL;
}

static void test_records_after_tls_destructor_kept(void **state)
{
    (void)state;
    start(0, 64); /* creates the shim's key first: its destructor runs first */
    assert_int_equal(pthread_key_create(&late_key, late_destructor), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, record_then_exit_with_late_destructor, NULL), 0);
    pthread_join(t, NULL);
    finish();
    pthread_key_delete(late_key);
    assert_int_equal(check_totals()->records, 15);
    assert_int_equal(check_totals()->dropped, 0);
    /* Registered twice, still one thread: seq 0..14 in order. */
    assert_int_equal(check_threads_seen(), 1);
    check_assert_thread(0, 15);
}

/* Threads still running at the end: what they committed is collected, the
 * slot they have open is not, and what they record afterwards is not. */
typedef struct live_thread {
    pthread_t thread;
    uint64_t committed;
    _Atomic int *ready;
    _Atomic int *go;
} live_thread;

static void *live_body(void *arg)
{
    live_thread *l = arg;
    check_record_n(l->committed, 0);
    gt_event *open_slot = gt_ev_begin();
    assert_non_null(open_slot);
    atomic_fetch_add(l->ready, 1);
    while (!atomic_load(l->go))
        sched_yield();
    gt_ev_commit(open_slot); /* after the end: not in the report */
    check_record_n(200, 0);
    return NULL;
}

static void live_threads_at_end(int drain_thread)
{
    start(drain_thread, 1024);
    _Atomic int ready = 0, go = 0;
    live_thread l[4];
    for (int i = 0; i < 4; i++) {
        l[i] = (live_thread){.committed = 40 + 30 * (uint64_t)i, .ready = &ready, .go = &go};
        assert_int_equal(pthread_create(&l[i].thread, NULL, live_body, &l[i]), 0);
    }
    while (atomic_load(&ready) < 4)
        sched_yield();
    finish();
    atomic_store(&go, 1);
    for (int i = 0; i < 4; i++)
        pthread_join(l[i].thread, NULL);
    const gt_pipeline_totals *t = check_totals();
    assert_int_equal(t->records, 40 + 70 + 100 + 130);
    assert_int_equal(check_threads_seen(), 4);
    uint64_t counts[4];
    for (int i = 0; i < 4; i++)
        counts[i] = check_thread_count(i);
    for (int want = 0; want < 4; want++) { /* each thread's exact prefix, in order */
        int found = 0;
        for (int i = 0; i < 4; i++)
            if (counts[i] == 40 + 30 * (uint64_t)want) {
                check_assert_thread(i, counts[i]);
                found = 1;
            }
        assert_true(found);
    }
}

static void test_end_collects_live_threads(void **state)
{
    (void)state;
    live_threads_at_end(1);
}

static void test_end_collects_live_threads_without_drain(void **state)
{
    (void)state;
    live_threads_at_end(0);
}

static int count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

/* The drain thread comes with the first record, not with the start, and
 * goes at the end. */
static void test_drain_thread_starts_on_first_use(void **state)
{
    (void)state;
    int before = count_threads();
    start(1, 64);
    assert_int_equal(count_threads(), before);
    assert_int_equal(check_record_n(1, 0), 1);
    assert_int_equal(count_threads(), before + 1);
    finish();
    for (int i = 0; i < 2000 && count_threads() != before; i++)
        usleep(1000);
    assert_int_equal(count_threads(), before);
    assert_int_equal(check_totals()->records, 1);
}

/* Nested begin (a hook inside a hook's window) and shim work under the
 * guard record nothing and are not drops; cancel reuses the seq. */
static void test_reentrancy_and_cancel(void **state)
{
    (void)state;
    start(0, 64);
    gt_event *outer = gt_ev_begin();
    assert_non_null(outer);
    assert_null(gt_ev_begin());
    assert_int_equal(gt_guard_enter(), 0);
    check_fill(outer);
    gt_ev_commit(outer);
    assert_int_equal(gt_guard_enter(), 1);
    assert_null(gt_ev_begin());
    gt_guard_leave();
    gt_event *cancelled = gt_ev_begin();
    assert_non_null(cancelled);
    assert_int_equal(cancelled->seq, 1);
    check_ev_cancel();
    assert_int_equal(check_record_n(40, 0), 40);
    finish();
    assert_int_equal(check_totals()->records, 41);
    assert_int_equal(check_totals()->dropped, 0);
    check_assert_thread(0, 41);
}

/* Nothing is recorded before the start or after the end; errno is kept by
 * the slow path (which maps chunks). */
static void test_closed_and_errno(void **state)
{
    (void)state;
    start(0, 64);
    errno = 4242;
    gt_event *ev = gt_ev_begin();
    assert_int_equal(errno, 4242);
    assert_non_null(ev);
    check_fill(ev);
    gt_ev_commit(ev);
    finish();
    producer late = {.records = 100};
    run_producers(&late, 1);
    assert_int_equal(late.stored, 0);
    assert_int_equal(check_totals()->records, 1);
}

/* gt_ev_flush hands a partial chunk over at once. */
static void test_flush_publishes_partial_chunk(void **state)
{
    (void)state;
    start(0, 64);
    assert_int_equal(check_record_n(5, 0), 5);
    gt_pipeline_drain_now();
    assert_int_equal(check_consumed(), 0);
    gt_ev_flush();
    gt_pipeline_drain_now();
    assert_int_equal(check_consumed(), 5);
    assert_int_equal(check_record_n(3, 0), 3);
    finish();
    check_assert_thread(0, 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_four_threads_million_each),
        cmocka_unit_test(test_snapshots_lose_nothing),
        cmocka_unit_test(test_cap_drops_exactly),
        cmocka_unit_test(test_cap_drops_exactly_many_threads),
        cmocka_unit_test(test_thread_pool_fits),
        cmocka_unit_test(test_exited_threads_lose_nothing),
        cmocka_unit_test(test_exited_threads_lose_nothing_without_drain),
        cmocka_unit_test(test_records_after_tls_destructor_kept),
        cmocka_unit_test(test_end_collects_live_threads),
        cmocka_unit_test(test_end_collects_live_threads_without_drain),
        cmocka_unit_test(test_drain_thread_starts_on_first_use),
        cmocka_unit_test(test_reentrancy_and_cancel),
        cmocka_unit_test(test_closed_and_errno),
        cmocka_unit_test(test_flush_publishes_partial_chunk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
