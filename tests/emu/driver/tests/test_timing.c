/* Simulated GPU time: event elapsed times equal the configured durations
 * (within 1 us) for kernels and for copies of every kind, host
 * synchronisation takes as long as the simulated work, and streams order
 * work as CUDA specifies (legacy default stream, per-thread default stream,
 * stream waits). Configuration (see CMakeLists.txt):
 *   GPUTRACE_EMU_KERNEL_NS=busy=2000000,slow=100000000,quick=0,*=1000
 *   GPUTRACE_EMU_GBPS=pageable=5,pinned=20,dtod=500,memset=1000,peer=50 */
#include "emu_test.h"

#include <cudaTypedefs.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUSY_NS 2000000.0
#define SLOW_NS 100000000.0
/* Transfers of 1,000,000 bytes: 10^6 / GB/s ns. */
#define BYTES 1000000
#define PAGEABLE_NS 200000.0
#define PINNED_NS 50000.0
#define DTOD_NS 2000.0
#define MEMSET_NS 1000.0
#define PEER_NS 20000.0

static CUfunction busy, slow, quick;
static CUevent start, stop;

/* The per-thread default stream entry points, as a program built with
 * --default-stream per-thread gets them. */
static PFN_cuLaunchKernel_v7000_ptsz launch_ptsz;
static PFN_cuEventRecord_v7000_ptsz record_ptsz;
static PFN_cuStreamGetId_v12000_ptsz stream_id_ptsz;

static void *per_thread_entry(const char *name, int version)
{
    void *pfn = NULL;
    CUdriverProcAddressQueryResult status;
    if (cuGetProcAddress(name, &pfn, version, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                         &status) != CUDA_SUCCESS)
        return NULL;
    return pfn;
}

static int setup(void **state)
{
    if (setup_primary(state) != 0) return -1;
    busy = load_test_function("_Z4busyPfi");
    slow = load_test_function("_Z4slowv");
    quick = load_test_function("quick");
    launch_ptsz = (PFN_cuLaunchKernel_v7000_ptsz)per_thread_entry("cuLaunchKernel", 7000);
    record_ptsz = (PFN_cuEventRecord_v7000_ptsz)per_thread_entry("cuEventRecord", 7000);
    stream_id_ptsz = (PFN_cuStreamGetId_v12000_ptsz)per_thread_entry("cuStreamGetId", 12000);
    if (!launch_ptsz || !record_ptsz || !stream_id_ptsz) return -1;
    return cuEventCreate(&start, 0) == CUDA_SUCCESS && cuEventCreate(&stop, 0) == CUDA_SUCCESS ? 0
                                                                                               : -1;
}

static void test_kernel_elapsed(void **state)
{
    (void)state;
    CUstream s;
    ok_cu(cuStreamCreate(&s, 0));
    CUstream streams[] = {s, NULL, CU_STREAM_PER_THREAD};
    for (size_t i = 0; i < 3; i++) {
        ok_cu(cuEventRecord(start, streams[i]));
        launch1(busy, streams[i]);
        ok_cu(cuEventRecord(stop, streams[i]));
        ok_cu(cuEventSynchronize(stop));
        assert_elapsed(start, stop, BUSY_NS);
    }
    /* Back to back, and with the default duration (1000 ns). */
    ok_cu(cuEventRecord(start, s));
    launch1(busy, s);
    launch1(busy, s);
    launch1(quick, s);
    ok_cu(cuEventRecord(stop, s));
    ok_cu(cuStreamSynchronize(s));
    assert_elapsed(start, stop, 2 * BUSY_NS);
    ok_cu(cuStreamDestroy(s));
}

/* The host taking its time between calls changes nothing: the start event
 * opens the kernel, the stop event closes it. */
static void test_elapsed_ignores_host_delays(void **state)
{
    (void)state;
    CUdeviceptr d;
    ok_cu(cuMemAlloc(&d, 64));
    for (int i = 0; i < 3; i++) {
        ok_cu(cuMemsetD8(d, 0, 64)); /* work before the start event */
        usleep(20000);
        ok_cu(cuEventRecord(start, NULL)); /* nearer the kernel: its start */
        usleep(1000);
        launch1(busy, NULL);
        usleep(5000); /* the kernel is over before the stop is recorded */
        ok_cu(cuEventRecord(stop, NULL));
        ok_cu(cuEventSynchronize(stop));
        assert_elapsed(start, stop, BUSY_NS);
    }
    /* Pairs around consecutive kernels, as a profiler records them: each
     * pair measures its kernel; the gap between them stays visible. */
    CUevent start2, stop2;
    ok_cu(cuEventCreate(&start2, 0));
    ok_cu(cuEventCreate(&stop2, 0));
    ok_cu(cuEventRecord(start, NULL));
    launch1(busy, NULL);
    usleep(3000);
    ok_cu(cuEventRecord(stop, NULL));
    usleep(3000);
    ok_cu(cuEventRecord(start2, NULL));
    usleep(1000);
    launch1(busy, NULL);
    ok_cu(cuEventRecord(stop2, NULL));
    ok_cu(cuEventSynchronize(stop2));
    assert_elapsed(start, stop, BUSY_NS);
    assert_elapsed(start2, stop2, BUSY_NS);
    assert_true(elapsed_ns(stop, start2) >= 4000000.0); /* the host's 7 ms minus the kernel */
    ok_cu(cuEventDestroy(start2));
    ok_cu(cuEventDestroy(stop2));
    ok_cu(cuMemFree(d));
}

/* A profiler's stop event, recorded right after the work it times, keeps
 * that work's end when untimed work follows later (a stream-ordered free,
 * a launch the profiler did not time): the host's pause before that work
 * is not part of the measured one. */
static void test_stop_kept_when_work_follows(void **state)
{
    (void)state;
    CUdeviceptr d;
    ok_cu(cuMemAlloc(&d, BYTES));
    for (int i = 0; i < 3; i++) {
        ok_cu(cuEventRecord(start, NULL));
        ok_cu(cuMemsetD8Async(d, 1, BYTES, NULL));
        ok_cu(cuEventRecord(stop, NULL));
        usleep(20000);
        ok_cu(cuMemsetD8Async(d, 2, BYTES, NULL));
        launch1(quick, NULL);
        ok_cu(cuStreamSynchronize(NULL));
        assert_elapsed(start, stop, MEMSET_NS);
        usleep(20000); /* the next start is nearer its memset than this kernel */
    }
    ok_cu(cuMemFree(d));
}

/* A tool's event pair inside the program's own, as a preloaded profiler
 * records one around each operation: both pairs measure the copy, as the
 * program's pair does without the tool, however long the host takes
 * between the records. */
struct nested {
    CUstream s;
    CUevent tool_start, tool_stop;
    CUdeviceptr dev;
    void *pinned;
};

static void nested_setup(struct nested *n)
{
    ok_cu(cuStreamCreate(&n->s, 0));
    ok_cu(cuEventCreate(&n->tool_start, 0));
    ok_cu(cuEventCreate(&n->tool_stop, 0));
    ok_cu(cuMemAlloc(&n->dev, BYTES));
    ok_cu(cuMemAllocHost(&n->pinned, BYTES));
}

/* The tool's start, the copy, the tool's stop. */
static void nested_copy(struct nested *n)
{
    ok_cu(cuEventRecord(n->tool_start, n->s));
    ok_cu(cuMemcpyHtoDAsync(n->dev, n->pinned, BYTES, n->s));
    ok_cu(cuEventRecord(n->tool_stop, n->s));
}

static void nested_teardown(struct nested *n)
{
    ok_cu(cuMemFreeHost(n->pinned));
    ok_cu(cuMemFree(n->dev));
    ok_cu(cuEventDestroy(n->tool_start));
    ok_cu(cuEventDestroy(n->tool_stop));
    ok_cu(cuStreamDestroy(n->s));
}

/* The program waits for its stop each time, which it records long after
 * the copy ended; then it takes its time before the next start. */
static void test_nested_pairs(void **state)
{
    (void)state;
    struct nested n;
    nested_setup(&n);
    for (int i = 0; i < 3; i++) {
        ok_cu(cuEventRecord(start, n.s));
        usleep(1000);
        nested_copy(&n);
        usleep(5000);
        ok_cu(cuEventRecord(stop, n.s));
        ok_cu(cuEventSynchronize(stop));
        assert_elapsed(n.tool_start, n.tool_stop, PINNED_NS);
        assert_elapsed(start, stop, PINNED_NS);
        usleep(3000);
    }
    nested_teardown(&n);
}

/* The program records pairs without waiting and reads them at the end;
 * the tool reads its pair once the copy is over (its stop, the program's
 * stop, the program's next start and the tool's next start come between
 * two copies: each goes with the copy it was recorded nearer to). */
static void test_nested_pairs_unsynchronised(void **state)
{
    (void)state;
    struct nested n;
    nested_setup(&n);
    CUevent starts[3], stops[3];
    for (int i = 0; i < 3; i++) {
        ok_cu(cuEventCreate(&starts[i], 0));
        ok_cu(cuEventCreate(&stops[i], 0));
    }
    /* Nearness decides here: the host's pauses are 40 times apart, so that
     * a loaded machine's stall of a few ms does not turn them around. */
    for (int i = 0; i < 3; i++) {
        ok_cu(cuEventRecord(starts[i], n.s));
        usleep(1000);
        nested_copy(&n);
        usleep(1000);
        ok_cu(cuEventRecord(stops[i], n.s));
        usleep(40000);
        assert_elapsed(n.tool_start, n.tool_stop, PINNED_NS);
    }
    ok_cu(cuStreamSynchronize(n.s));
    for (int i = 0; i < 3; i++) {
        assert_elapsed(starts[i], stops[i], PINNED_NS);
        ok_cu(cuEventDestroy(starts[i]));
        ok_cu(cuEventDestroy(stops[i]));
    }
    nested_teardown(&n);
}

/* The program waits for the stream, then records its stop: without the
 * tool that stop closes the copy, and so it does after the tool's. */
static void test_nested_stop_after_stream_sync(void **state)
{
    (void)state;
    struct nested n;
    nested_setup(&n);
    for (int i = 0; i < 2; i++) {
        ok_cu(cuEventRecord(start, n.s));
        nested_copy(&n);
        ok_cu(cuStreamSynchronize(n.s));
        usleep(2000);
        ok_cu(cuEventRecord(stop, n.s));
        ok_cu(cuEventSynchronize(stop));
        assert_elapsed(start, stop, PINNED_NS);
        assert_elapsed(n.tool_start, n.tool_stop, PINNED_NS);
    }
    nested_teardown(&n);
}

static void time_copy(CUstream s, double expected_ns, CUresult (*copy)(void *, CUstream), void *arg)
{
    ok_cu(cuEventRecord(start, s));
    ok_cu(copy(arg, s));
    ok_cu(cuEventRecord(stop, s));
    ok_cu(cuEventSynchronize(stop));
    assert_elapsed(start, stop, expected_ns);
}

struct buffers {
    CUdeviceptr dev, dev2, managed, on_other_device;
    CUcontext ctx, other_ctx;
    void *pinned;
    unsigned char *pageable;
};

static CUresult htod_pageable(void *a, CUstream s)
{
    struct buffers *b = a;
    return cuMemcpyHtoDAsync(b->dev, b->pageable, BYTES, s);
}

static CUresult dtoh_pageable(void *a, CUstream s)
{
    struct buffers *b = a;
    return cuMemcpyDtoHAsync(b->pageable, b->dev, BYTES, s);
}

static CUresult htod_pinned(void *a, CUstream s)
{
    struct buffers *b = a;
    return cuMemcpyHtoDAsync(b->dev, b->pinned, BYTES, s);
}

static CUresult dtoh_pinned(void *a, CUstream s)
{
    struct buffers *b = a;
    return cuMemcpyDtoHAsync(b->pinned, b->dev, BYTES, s);
}

static CUresult dtod(void *a, CUstream s)
{
    struct buffers *b = a;
    return cuMemcpyDtoDAsync(b->dev2, b->dev, BYTES, s);
}

static CUresult managed_to_device(void *a, CUstream s)
{
    struct buffers *b = a;
    return cuMemcpyAsync(b->dev, b->managed, BYTES, s);
}

static CUresult unified_htoh(void *a, CUstream s)
{
    struct buffers *b = a;
    return cuMemcpyAsync((CUdeviceptr)(uintptr_t)b->pinned, (CUdeviceptr)(uintptr_t)b->pageable,
                         BYTES, s);
}

static CUresult memset_d8(void *a, CUstream s)
{
    struct buffers *b = a;
    return cuMemsetD8Async(b->dev, 1, BYTES, s);
}

static CUresult memset_d32(void *a, CUstream s)
{
    struct buffers *b = a;
    return cuMemsetD32Async(b->dev, 1, BYTES / 4, s);
}

/* 100 slices of 10 rows of 1000 bytes: 10^6 bytes in all. */
static CUresult copy_3d_pinned(void *a, CUstream s)
{
    struct buffers *b = a;
    CUDA_MEMCPY3D c = {.srcMemoryType = CU_MEMORYTYPE_HOST,
                       .srcHost = b->pinned,
                       .srcPitch = 1000,
                       .srcHeight = 10,
                       .dstMemoryType = CU_MEMORYTYPE_DEVICE,
                       .dstDevice = b->dev,
                       .dstPitch = 1000,
                       .dstHeight = 10,
                       .WidthInBytes = 1000,
                       .Height = 10,
                       .Depth = 100};
    return cuMemcpy3DAsync(&c, s);
}

static CUresult peer(void *a, CUstream s)
{
    struct buffers *b = a;
    return cuMemcpyPeerAsync(b->on_other_device, b->other_ctx, b->dev, b->ctx, BYTES, s);
}

static void test_copy_elapsed(void **state)
{
    struct buffers b = {.ctx = *state, .pageable = malloc(BYTES)};
    ok_cu(cuMemAlloc(&b.dev, BYTES));
    ok_cu(cuMemAlloc(&b.dev2, BYTES));
    ok_cu(cuMemAllocManaged(&b.managed, BYTES, CU_MEM_ATTACH_GLOBAL));
    ok_cu(cuMemAllocHost(&b.pinned, BYTES));
    ok_cu(cuCtxCreate(&b.other_ctx, NULL, 0, 1));
    ok_cu(cuMemAlloc(&b.on_other_device, BYTES));
    ok_cu(cuCtxPopCurrent(NULL));
    CUstream s;
    ok_cu(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int round = 0; round < 2; round++) {
        CUstream on = round ? s : NULL;
        time_copy(on, PAGEABLE_NS, htod_pageable, &b);
        time_copy(on, PAGEABLE_NS, dtoh_pageable, &b);
        time_copy(on, PINNED_NS, htod_pinned, &b);
        time_copy(on, PINNED_NS, dtoh_pinned, &b);
        time_copy(on, DTOD_NS, dtod, &b);
        time_copy(on, DTOD_NS, managed_to_device, &b);
        time_copy(on, PAGEABLE_NS, unified_htoh, &b);
        time_copy(on, MEMSET_NS, memset_d8, &b);
        time_copy(on, MEMSET_NS, memset_d32, &b);
        time_copy(on, PEER_NS, peer, &b);
        time_copy(on, PINNED_NS, copy_3d_pinned, &b);
    }
    /* Synchronous copies on the NULL stream are timed the same way. */
    ok_cu(cuEventRecord(start, NULL));
    ok_cu(cuMemcpyHtoD(b.dev, b.pinned, BYTES));
    ok_cu(cuEventRecord(stop, NULL));
    ok_cu(cuEventSynchronize(stop));
    assert_elapsed(start, stop, PINNED_NS);
    assert_int_equal(gtemu_transfer_ns(BYTES, "pinned"), (uint64_t)PINNED_NS);
    ok_cu(cuStreamDestroy(s));
    ok_cu(cuCtxDestroy(b.other_ctx));
    ok_cu(cuMemFree(b.dev));
    ok_cu(cuMemFree(b.dev2));
    ok_cu(cuMemFree(b.managed));
    ok_cu(cuMemFreeHost(b.pinned));
    free(b.pageable);
}

/* Launches return at once; synchronisation lasts as long as the work. */
static void test_host_waits_for_simulated_time(void **state)
{
    (void)state;
    CUstream s;
    ok_cu(cuStreamCreate(&s, 0));
    uint64_t t0 = test_now_ns();
    launch1(slow, s);
    launch1(slow, s);
    expect_cu(CUDA_ERROR_NOT_READY, cuStreamQuery(s));
    ok_cu(cuEventRecord(stop, s));
    expect_cu(CUDA_ERROR_NOT_READY, cuEventQuery(stop));
    ok_cu(cuStreamSynchronize(s));
    uint64_t waited = test_now_ns() - t0;
    assert_true(waited >= 2 * SLOW_NS - 100000);
    ok_cu(cuStreamQuery(s));
    ok_cu(cuEventQuery(stop));
    ok_cu(cuStreamDestroy(s));
}

/* Work on the legacy stream starts after all earlier work of blocking
 * streams, and blocking streams wait for earlier legacy work; streams
 * created with CU_STREAM_NON_BLOCKING take no part. */
static void test_legacy_stream_ordering(void **state)
{
    (void)state;
    CUstream blocking, nonblocking;
    ok_cu(cuStreamCreate(&blocking, 0));
    ok_cu(cuStreamCreate(&nonblocking, CU_STREAM_NON_BLOCKING));
    CUevent mid;
    ok_cu(cuEventCreate(&mid, 0));

    ok_cu(cuEventRecord(start, blocking));
    launch1(busy, blocking);
    launch1(busy, NULL);
    ok_cu(cuEventRecord(stop, NULL));
    ok_cu(cuCtxSynchronize());
    assert_elapsed(start, stop, 2 * BUSY_NS);

    ok_cu(cuEventRecord(start, NULL));
    launch1(busy, NULL);
    launch1(busy, blocking);
    ok_cu(cuEventRecord(stop, blocking));
    ok_cu(cuCtxSynchronize());
    assert_elapsed(start, stop, 2 * BUSY_NS);

    /* Non-blocking: the legacy kernel runs alongside the slow one. */
    launch1(slow, nonblocking);
    ok_cu(cuEventRecord(mid, nonblocking));
    ok_cu(cuEventRecord(start, NULL));
    launch1(busy, NULL);
    ok_cu(cuEventRecord(stop, NULL));
    ok_cu(cuCtxSynchronize());
    assert_true(elapsed_ns(stop, mid) > 0); /* the legacy kernel ended first */
    ok_cu(cuEventDestroy(mid));
    ok_cu(cuStreamDestroy(blocking));
    ok_cu(cuStreamDestroy(nonblocking));
}

struct ptds_run {
    CUevent a, b;
};

static void *ptds_thread(void *arg)
{
    struct ptds_run *r = arg;
    cuCtxSetCurrent(NULL);
    CUcontext ctx;
    cuDevicePrimaryCtxRetain(&ctx, 0);
    cuCtxSetCurrent(ctx);
    record_ptsz(r->a, NULL);
    launch_ptsz(slow, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    record_ptsz(r->b, NULL);
    cuEventSynchronize(r->b);
    cuDevicePrimaryCtxRelease(0);
    return NULL;
}

/* With the _ptsz entry points the NULL stream is the calling thread's own
 * stream: two threads' kernels overlap. It still orders with the legacy
 * stream like a blocking stream. */
static void test_per_thread_default_stream(void **state)
{
    (void)state;
    struct ptds_run runs[2];
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) {
        ok_cu(cuEventCreate(&runs[i].a, 0));
        ok_cu(cuEventCreate(&runs[i].b, 0));
        assert_int_equal(pthread_create(&threads[i], NULL, ptds_thread, &runs[i]), 0);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < 2; i++)
        assert_elapsed(runs[i].a, runs[i].b, SLOW_NS);
    /* They overlapped: each started before the other ended. */
    assert_true(elapsed_ns(runs[0].a, runs[1].b) > 0 && elapsed_ns(runs[1].a, runs[0].b) > 0);

    ok_cu(record_ptsz(start, NULL));
    ok_cu(launch_ptsz(busy, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    launch1(busy, CU_STREAM_LEGACY);
    ok_cu(cuEventRecord(stop, CU_STREAM_LEGACY));
    ok_cu(cuEventSynchronize(stop));
    assert_elapsed(start, stop, 2 * BUSY_NS);
    unsigned long long id1, id2;
    ok_cu(cuStreamGetId(CU_STREAM_PER_THREAD, &id1));
    ok_cu(stream_id_ptsz(NULL, &id2));
    assert_int_equal(id1, id2);
    ok_cu(cuStreamGetId(NULL, &id2)); /* the legacy stream */
    assert_true(id1 != id2);
    for (int i = 0; i < 2; i++) {
        ok_cu(cuEventDestroy(runs[i].a));
        ok_cu(cuEventDestroy(runs[i].b));
    }
}

/* A stream that waits on an event starts its next work after the event. */
static void test_stream_wait_event(void **state)
{
    (void)state;
    CUstream producer, consumer;
    ok_cu(cuStreamCreate(&producer, CU_STREAM_NON_BLOCKING));
    ok_cu(cuStreamCreate(&consumer, CU_STREAM_NON_BLOCKING));
    CUevent produced;
    ok_cu(cuEventCreate(&produced, CU_EVENT_DISABLE_TIMING));
    ok_cu(cuEventRecord(start, producer));
    launch1(busy, producer);
    launch1(busy, producer);
    ok_cu(cuEventRecord(produced, producer));
    ok_cu(cuStreamWaitEvent(consumer, produced, 0));
    launch1(busy, consumer);
    ok_cu(cuEventRecord(stop, consumer));
    ok_cu(cuEventSynchronize(stop));
    assert_elapsed(start, stop, 3 * BUSY_NS);
    float ms;
    expect_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, start, produced));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuStreamWaitEvent(consumer, produced, 4));
    ok_cu(cuEventDestroy(produced));
    ok_cu(cuStreamDestroy(producer));
    ok_cu(cuStreamDestroy(consumer));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_elapsed),
        cmocka_unit_test(test_elapsed_ignores_host_delays),
        cmocka_unit_test(test_stop_kept_when_work_follows),
        cmocka_unit_test(test_nested_pairs),
        cmocka_unit_test(test_nested_pairs_unsynchronised),
        cmocka_unit_test(test_nested_stop_after_stream_sync),
        cmocka_unit_test(test_copy_elapsed),
        cmocka_unit_test(test_host_waits_for_simulated_time),
        cmocka_unit_test(test_legacy_stream_ordering),
        cmocka_unit_test(test_per_thread_default_stream),
        cmocka_unit_test(test_stream_wait_event),
    };
    return cmocka_run_group_tests(tests, setup, teardown_primary);
}
