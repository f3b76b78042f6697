/* GPU time from event pairs on the emulated driver: durations equal to
 * the configured ones, absolute times on the host clock, a stream's work
 * in its order however far from the epoch, the right stream
 * for per-thread and legacy default streams, nothing recorded on a
 * capturing stream, no event created in steady state, timing off, the cap
 * on live pairs. The drain runs on the test thread (no drain thread), so
 * every step is deterministic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "clock.h"
#include "config.h"
#include "event.h"
#include "gpu_test.h"
#include "gpu_source.h"
#include "gpu_time.h"
#include "record.h"
#include "settings.h"
#include "tests/emu/gtemu.h"

/* The emulator counts work less than this far in the future as complete
 * (GT_SLACK_NS), so a pair may resolve that much before its end. */
#define EMU_SLACK_NS 50000u

static CUcontext ctx;

static int setup(void **state)
{
    (void)state;
    gpu_test_init();
    ctx = gpu_test_context();
    gpu_test_pipeline(0);
    return 0;
}

static CUstream new_stream(unsigned flags)
{
    CUstream s;
    assert_int_equal(cuStreamCreate(&s, flags), CUDA_SUCCESS);
    return s;
}

static void assert_on_host_timeline(const gt_event *ev, uint64_t resolved_by)
{
    uint64_t tol = gpu_test_host_tolerance();
    if (ev->gpu_start + tol < ev->host_start)
        fail_msg("GPU start %llu ns before the call began",
                 (unsigned long long)(ev->host_start - ev->gpu_start));
    if (ev->gpu_end > resolved_by + EMU_SLACK_NS + tol)
        fail_msg("GPU end %llu ns after it was seen complete",
                 (unsigned long long)(ev->gpu_end - resolved_by));
}

static void test_kernels_take_their_configured_time(void **state)
{
    (void)state;
    CUstream s = new_stream(CU_STREAM_NON_BLOCKING);
    gpu_test_keep(100);
    static const enum gpu_test_kernel kinds[] = {K_SHORT, K_ZERO, K_TINY};
    static const uint64_t ns[] = {K_SHORT_NS, 0, K_TINY_NS};
    for (uint64_t i = 0; i < 30; i++)
        assert_true(gpu_test_timed_kernel(kinds[i % 3], s, 0, i + 1));
    gpu_test_drain_until(30);
    uint64_t resolved_by = gt_clock_mono_ns();
    const gpu_test_records *r = gpu_test_kept();
    assert_int_equal(r->timed, 30);
    for (uint64_t i = 0; i < 30; i++) {
        const gt_event *ev = gpu_test_find(i + 1);
        gpu_test_assert_duration(ev, ns[i % 3]);
        assert_on_host_timeline(ev, resolved_by);
        assert_false(ev->flags & GT_EVF_GPU_PENDING);
    }
    assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
}

struct copy_args {
    CUdeviceptr dev;
    void *host;
    size_t bytes;
};

static CUresult copy_work(CUstream s, int per_thread, void *arg)
{
    (void)per_thread;
    struct copy_args *a = arg;
    return cuMemcpyHtoDAsync(a->dev, a->host, a->bytes, s);
}

static CUresult memset_work(CUstream s, int per_thread, void *arg)
{
    (void)per_thread;
    struct copy_args *a = arg;
    return cuMemsetD8Async(a->dev, 0x5a, a->bytes, s);
}

static void test_copies_and_memsets_take_their_configured_time(void **state)
{
    (void)state;
    CUstream s = new_stream(CU_STREAM_NON_BLOCKING);
    struct copy_args a = {.bytes = 3u << 20};
    assert_int_equal(cuMemAlloc(&a.dev, a.bytes), CUDA_SUCCESS);
    assert_int_equal(cuMemAllocHost(&a.host, a.bytes), CUDA_SUCCESS);
    gpu_test_keep(10);
    assert_true(gpu_test_timed(s, 0, 1, copy_work, &a));
    assert_true(gpu_test_timed(s, 0, 2, memset_work, &a));
    gpu_test_drain_until(2);
    uint64_t copy_ns = gtemu_transfer_ns(a.bytes, "pinned");
    assert_int_equal(copy_ns, (uint64_t)((double)a.bytes / COPY_GBPS_PINNED + 0.5));
    gpu_test_assert_duration(gpu_test_find(1), copy_ns);
    gpu_test_assert_duration(gpu_test_find(2), gtemu_transfer_ns(a.bytes, "memset"));
    assert_int_equal(cuMemFreeHost(a.host), CUDA_SUCCESS);
    assert_int_equal(cuMemFree(a.dev), CUDA_SUCCESS);
    assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
}

/* Fails unless ev starts no earlier than prev ended on their stream, and
 * not later than `tolerance` after. */
static void assert_follows(const gt_event *prev, const gt_event *ev, uint64_t tolerance)
{
    if (ev->gpu_start < prev->gpu_end)
        fail_msg("pair %llu starts %llu ns before the one before it on its stream ended",
                 (unsigned long long)ev->u.kernel.func,
                 (unsigned long long)(prev->gpu_end - ev->gpu_start));
    if (ev->gpu_start - prev->gpu_end > tolerance)
        fail_msg("pair %llu starts %llu ns after the one before it ended",
                 (unsigned long long)ev->u.kernel.func,
                 (unsigned long long)(ev->gpu_start - prev->gpu_end));
}

/* Work queued behind a long kernel runs back to back: each pair's start
 * is the previous pair's end. */
static void test_queued_work_gives_back_to_back_intervals(void **state)
{
    (void)state;
    CUstream s = new_stream(CU_STREAM_NON_BLOCKING);
    gpu_test_keep(100);
    uint64_t t0 = gt_clock_mono_ns();
    gpu_test_launch(K_LONG, s, 0);
    for (uint64_t i = 0; i < 20; i++)
        assert_true(gpu_test_timed_kernel(K_SHORT, s, 0, i + 1));
    gpu_test_drain_until(20);
    uint64_t tol = gpu_test_host_tolerance();
    const gt_event *first = gpu_test_find(1);
    gpu_test_assert_duration(first, K_SHORT_NS);
    assert_true(first->gpu_start + tol >= t0 + K_LONG_NS);
    for (uint64_t i = 2; i <= 20; i++) {
        gpu_test_assert_duration(gpu_test_find(i), K_SHORT_NS);
        assert_follows(gpu_test_find(i - 1), gpu_test_find(i), DURATION_TOLERANCE_NS);
    }
    assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
}

/* Far from its epoch a pair's start is rounded by tens of ns (the float
 * milliseconds from the epoch: 30 ns at 400 ms), its duration is not. Yet
 * work queued back to back on a stream never starts before the work
 * before it ended, and keeps its exact duration: each start is where the
 * previous end is. */
static void test_far_from_the_epoch_a_stream_keeps_its_order(void **state)
{
    (void)state;
    CUcontext own = gpu_test_context(); /* a new pool: its first pair records the epoch */
    CUstream s = new_stream(CU_STREAM_NON_BLOCKING);
    gpu_test_keep(100);
    assert_true(gpu_test_timed_kernel(K_TINY, s, 0, 1));
    gpu_test_drain_until(1);
    struct timespec pause = {0, 300000000}; /* the pairs below lie 300-400 ms after it */
    nanosleep(&pause, NULL);
    gpu_test_launch(K_LONG, s, 0);
    for (uint64_t i = 2; i <= 41; i++)
        assert_true(gpu_test_timed_kernel(K_TINY, s, 0, i));
    gpu_test_drain_until(41);
    for (uint64_t i = 2; i <= 41; i++) {
        const gt_event *ev = gpu_test_find(i);
        assert_true(ev->flags & GT_EVF_GPU_TIMED);
        assert_int_equal(ev->gpu_end - ev->gpu_start, K_TINY_NS);
        /* A start rounded late leaves a gap: up to 2 x 30 ns below 1 s. */
        if (i > 2) assert_follows(gpu_test_find(i - 1), ev, 100);
    }
    assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
    gt_gpu_retire_context(own);
    assert_int_equal(cuCtxDestroy(own), CUDA_SUCCESS);
    assert_int_equal(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
}

/* The legacy default stream waits for every blocking stream; a
 * per-thread default stream does not. So while a blocking stream runs a
 * long kernel, work timed on the per-thread stream starts at once and
 * work timed on the legacy stream starts after it: each pair was recorded
 * on the stream its entry point names. */
static void test_per_thread_and_legacy_default_streams(void **state)
{
    (void)state;
    CUstream blocking = new_stream(CU_STREAM_DEFAULT);
    gpu_test_keep(10);
    uint64_t t0 = gt_clock_mono_ns();
    gpu_test_launch(K_LONG, blocking, 0);
    assert_true(gpu_test_timed_kernel(K_SHORT, NULL, 1, 1));
    assert_true(gpu_test_timed_kernel(K_SHORT, CU_STREAM_PER_THREAD, 0, 2));
    assert_true(gpu_test_timed_kernel(K_SHORT, NULL, 0, 3));
    gpu_test_drain_until(3);
    uint64_t long_end = t0 + K_LONG_NS, tol = gpu_test_host_tolerance();
    for (uint64_t tag = 1; tag <= 3; tag++)
        gpu_test_assert_duration(gpu_test_find(tag), K_SHORT_NS);
    assert_true(gpu_test_find(1)->gpu_start < long_end - K_LONG_NS / 2);
    assert_true(gpu_test_find(2)->gpu_start < long_end - K_LONG_NS / 2);
    assert_true(gpu_test_find(3)->gpu_start + tol >= long_end);
    assert_int_equal(cuStreamDestroy(blocking), CUDA_SUCCESS);
}

typedef CUresult (*begin_capture_fn)(CUstream, CUstreamCaptureMode);
typedef CUresult (*end_capture_fn)(CUstream, CUgraph *);

static size_t graph_nodes(CUgraph g)
{
    size_t n = 0;
    assert_int_equal(cuGraphGetNodes(g, NULL, &n), CUDA_SUCCESS);
    return n;
}

/* Nothing is recorded on a stream being captured, nor on the legacy
 * stream while a blocking stream captures (recording there would
 * invalidate the capture): the graph holds only the program's work. */
static void test_capturing_streams_get_no_event(void **state)
{
    (void)state;
    begin_capture_fn begin_ptsz = (begin_capture_fn)gpu_test_sym("cuStreamBeginCapture_v2_ptsz");
    end_capture_fn end_ptsz = (end_capture_fn)gpu_test_sym("cuStreamEndCapture_ptsz");
    assert_non_null(begin_ptsz);
    assert_non_null(end_ptsz);
    CUstream s = new_stream(CU_STREAM_NON_BLOCKING), blocking = new_stream(CU_STREAM_DEFAULT);
    gt_gpu_stats before;
    gt_gpu_stats_get(&before);
    uint64_t captured_records = gpu_test_capture_event_records();
    gpu_test_keep(10);

    assert_int_equal(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    assert_false(gpu_test_timed_kernel(K_SHORT, s, 0, 1));
    CUgraph g;
    assert_int_equal(cuStreamEndCapture(s, &g), CUDA_SUCCESS);
    assert_int_equal(graph_nodes(g), 1);
    assert_int_equal(cuGraphDestroy(g), CUDA_SUCCESS);

    assert_int_equal(cuStreamBeginCapture(blocking, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    assert_null(gt_gpu_begin(NULL, 0));
    assert_null(gt_gpu_begin(blocking, 0));
    CUstreamCaptureStatus status;
    assert_int_equal(cuStreamIsCapturing(blocking, &status), CUDA_SUCCESS);
    assert_int_equal(status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    gpu_test_launch(K_SHORT, blocking, 0);
    assert_int_equal(cuStreamEndCapture(blocking, &g), CUDA_SUCCESS);
    assert_int_equal(graph_nodes(g), 1);
    assert_int_equal(cuGraphDestroy(g), CUDA_SUCCESS);

    assert_int_equal(begin_ptsz(NULL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
    assert_false(gpu_test_timed_kernel(K_SHORT, NULL, 1, 2));
    assert_int_equal(end_ptsz(NULL, &g), CUDA_SUCCESS);
    assert_int_equal(graph_nodes(g), 1);
    assert_int_equal(cuGraphDestroy(g), CUDA_SUCCESS);

    gpu_test_drain_until(2);
    assert_int_equal(gpu_test_capture_event_records(), captured_records);
    assert_int_equal(gpu_test_kept()->untimed, 2);
    gt_gpu_stats after;
    gt_gpu_stats_get(&after);
    assert_int_equal(after.skipped_capture - before.skipped_capture, 4);
    /* After the captures, the same streams are timed again. */
    assert_true(gpu_test_timed_kernel(K_SHORT, s, 0, 3));
    assert_true(gpu_test_timed_kernel(K_SHORT, NULL, 1, 4));
    gpu_test_drain_until(4);
    gpu_test_assert_duration(gpu_test_find(3), K_SHORT_NS);
    gpu_test_assert_duration(gpu_test_find(4), K_SHORT_NS);
    assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
    assert_int_equal(cuStreamDestroy(blocking), CUDA_SUCCESS);
}

/* Pairs go back to their pool once resolved: after a warm-up no event is
 * created, and each timed operation records exactly two events (plus the
 * epochs the drain records, counted apart). */
static void test_steady_state_creates_no_events(void **state)
{
    (void)state;
    enum { WARM_UP = 2000, OPS = 100000, DRAIN_EVERY = 256 };
    CUstream s = new_stream(CU_STREAM_NON_BLOCKING);
    gpu_test_keep(0);
    for (uint64_t i = 0; i < WARM_UP; i++) {
        gpu_test_timed_kernel(K_ZERO, s, 0, i);
        if (i % DRAIN_EVERY == 0) gpu_test_drain();
    }
    gpu_test_drain_until(WARM_UP);
    gt_gpu_stats before, after;
    gt_gpu_stats_get(&before);
    uint64_t created = gpu_test_events_created(), records = gpu_test_event_records();
    for (uint64_t i = 0; i < OPS; i++) {
        assert_true(gpu_test_timed_kernel(K_ZERO, s, 0, i));
        if (i % DRAIN_EVERY == 0) gpu_test_drain();
    }
    gpu_test_drain_until(WARM_UP + OPS);
    gt_gpu_stats_get(&after);
    assert_int_equal(gpu_test_events_created() - created, 0);
    assert_int_equal(after.events_created - before.events_created, 0);
    uint64_t epochs = after.epoch_records - before.epoch_records;
    assert_int_equal(gpu_test_event_records() - records, 2 * (uint64_t)OPS + epochs);
    assert_int_equal(after.resolved_timed - before.resolved_timed, OPS);
    assert_int_equal(gpu_test_kept()->untimed, 0);
    assert_true(after.peak_live_pairs <= 2 * DRAIN_EVERY + 256);
    assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
}

/* With the drain behind (here: not run at all), a thread whose pool has
 * no free pair resolves its own completed pairs instead of creating
 * events; the drain later finds their times stored in them. The kernels
 * take no time, so every pair but the newest has completed. */
static void test_thread_resolves_its_pairs_when_the_drain_is_behind(void **state)
{
    (void)state;
    enum { OPS = 5000 };
    CUstream s = new_stream(CU_STREAM_NON_BLOCKING);
    gpu_test_keep(OPS);
    for (uint64_t i = 0; i < 64; i++) /* the pool gets an epoch */
        gpu_test_timed_kernel(K_TINY, s, 0, i);
    gpu_test_drain_until(64);
    gpu_test_keep(OPS);
    gt_gpu_stats before, after;
    gt_gpu_stats_get(&before);
    for (uint64_t i = 0; i < OPS; i++)
        assert_true(gpu_test_timed_kernel(K_ZERO, s, 0, i + 1));
    gt_gpu_stats_get(&after);
    assert_int_equal(after.events_created, before.events_created);
    assert_true(after.harvested - before.harvested >= OPS - 2 * 64);
    assert_true(after.live_pairs <= before.live_pairs + 64);
    gpu_test_drain_until(OPS);
    assert_int_equal(gpu_test_kept()->timed, OPS);
    uint64_t resolved_by = gt_clock_mono_ns();
    for (uint64_t i = 1; i <= OPS; i++) {
        const gt_event *ev = gpu_test_find(i);
        gpu_test_assert_duration(ev, 0);
        assert_on_host_timeline(ev, resolved_by);
        if (i > 1)
            assert_true(ev->gpu_start + DURATION_TOLERANCE_NS >= gpu_test_find(i - 1)->gpu_end);
    }
    assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
}

static void test_timing_off_records_nothing(void **state)
{
    (void)state;
    CUstream s = new_stream(CU_STREAM_NON_BLOCKING);
    gpu_test_keep(10);
    uint64_t records = gpu_test_event_records();
    atomic_store(&gt_gpu_src_now, GT_SRC_OFF);
    assert_false(gpu_test_timed_kernel(K_SHORT, s, 0, 1));
    assert_false(gpu_test_timed_kernel(K_SHORT, NULL, 1, 2));
    atomic_store(&gt_gpu_src_now, GT_SRC_EVENTS);
    gpu_test_drain_until(2);
    assert_int_equal(gpu_test_event_records(), records);
    assert_int_equal(gpu_test_kept()->untimed, 2);
    assert_int_equal(cuStreamSynchronize(s), CUDA_SUCCESS);
    assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
}

/* Work that failed, and records the buffer could not store, give their
 * pair back without a time. */
static void test_failed_work_and_dropped_records_give_pairs_back(void **state)
{
    (void)state;
    CUstream s = new_stream(CU_STREAM_NON_BLOCKING);
    gpu_test_keep(10);
    gt_gpu_stats before, after;
    gt_gpu_stats_get(&before);
    for (int i = 0; i < 1000; i++) {
        gt_gpu_pair *p = gt_gpu_begin(s, 0);
        assert_non_null(p);
        gt_gpu_end(p, i % 2);
        gt_gpu_attach(NULL, p);
    }
    gt_gpu_pair *p = gt_gpu_begin(s, 0);
    gt_gpu_end(p, 0);
    gt_event *ev = gt_ev_begin();
    assert_non_null(ev);
    gt_gpu_attach(ev, p);
    assert_false(ev->flags & GT_EVF_GPU_PENDING);
    gt_ev_commit(ev);
    gpu_test_drain_until(1);
    gt_gpu_stats_get(&after);
    assert_int_equal(after.events_created, before.events_created);
    assert_int_equal(gpu_test_kept()->untimed, 1);
    assert_int_equal(cuStreamSynchronize(s), CUDA_SUCCESS);
    assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
}

/* Beyond the cap on live pairs, begin gives no pair (and says why); once
 * pairs come back, it gives pairs again. */
static void test_live_pair_cap(void **state)
{
    (void)state;
    CUcontext other = gpu_test_context(); /* a fresh pool: no free pair yet */
    CUstream s = new_stream(CU_STREAM_NON_BLOCKING);
    gt_gpu_stats st;
    gt_gpu_stats_get(&st);
    gt_gpu_set_pair_cap((uint32_t)st.live_pairs + 3);
    gt_gpu_pair *held[3];
    for (int i = 0; i < 3; i++) {
        held[i] = gt_gpu_begin(s, 0);
        assert_non_null(held[i]);
    }
    assert_null(gt_gpu_begin(s, 0));
    gt_gpu_stats after;
    gt_gpu_stats_get(&after);
    assert_int_equal(after.skipped_cap - st.skipped_cap, 1);
    assert_int_equal(after.live_pairs, st.live_pairs + 3);
    for (int i = 0; i < 3; i++) {
        gt_gpu_end(held[i], 1);
        gt_gpu_attach(NULL, held[i]);
    }
    gt_gpu_pair *again = gt_gpu_begin(s, 0);
    assert_non_null(again);
    gt_gpu_end(again, 1);
    gt_gpu_attach(NULL, again);
    gt_gpu_set_pair_cap(0);
    assert_int_equal(cuStreamSynchronize(s), CUDA_SUCCESS);
    assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
    gt_gpu_retire_context(other);
    assert_int_equal(cuCtxDestroy(other), CUDA_SUCCESS);
    assert_int_equal(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
}

/* Work on a stream of another context than the current one is timed with
 * events of the stream's context. */
static void test_stream_of_another_context(void **state)
{
    (void)state;
    CUcontext other = gpu_test_context();
    CUstream s = new_stream(CU_STREAM_NON_BLOCKING);
    assert_int_equal(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
    gpu_test_keep(10);
    uint64_t t0 = gt_clock_mono_ns();
    gt_gpu_pair *p = gt_gpu_begin(s, 0);
    assert_non_null(p);
    assert_int_equal(cuCtxPushCurrent(other), CUDA_SUCCESS);
    gpu_test_launch(K_SHORT, s, 0);
    CUcontext popped;
    assert_int_equal(cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    gt_gpu_end(p, 1);
    gt_event *ev = gt_ev_begin();
    ev->u.kernel.func = 1;
    ev->host_start = t0;
    gt_gpu_attach(ev, p);
    gt_ev_commit(ev);
    gpu_test_drain_until(1);
    gpu_test_assert_duration(gpu_test_find(1), K_SHORT_NS);
    assert_on_host_timeline(gpu_test_find(1), gt_clock_mono_ns());
    gt_gpu_retire_context(other);
    assert_int_equal(cuCtxDestroy(other), CUDA_SUCCESS);
    assert_int_equal(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels_take_their_configured_time),
        cmocka_unit_test(test_copies_and_memsets_take_their_configured_time),
        cmocka_unit_test(test_queued_work_gives_back_to_back_intervals),
        cmocka_unit_test(test_far_from_the_epoch_a_stream_keeps_its_order),
        cmocka_unit_test(test_per_thread_and_legacy_default_streams),
        cmocka_unit_test(test_capturing_streams_get_no_event),
        cmocka_unit_test(test_steady_state_creates_no_events),
        cmocka_unit_test(test_thread_resolves_its_pairs_when_the_drain_is_behind),
        cmocka_unit_test(test_timing_off_records_nothing),
        cmocka_unit_test(test_failed_work_and_dropped_records_give_pairs_back),
        cmocka_unit_test(test_live_pair_cap),
        cmocka_unit_test(test_stream_of_another_context),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
