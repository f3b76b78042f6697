/* Streams, events and launches as documented: handles and their errors,
 * a destroyed stream's handle kept from new streams while its work runs,
 * host functions and callbacks in stream order, launch configuration
 * limits, and the launch queue that blocks the host when full. Durations:
 * busy = 2 ms, quick = 0, ns::tagged = 3 us, others 1000 ns
 * (GPUTRACE_EMU_KERNEL_NS). */
#include "emu_test.h"

#include <cudaProfiler.h>
#include <dlfcn.h>

#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define BUSY_NS 2000000ULL

static CUfunction busy, quick, other;

static int setup(void **state)
{
    if (setup_primary(state) != 0) return -1;
    busy = load_test_function("_Z4busyPfi");
    quick = load_test_function("quick");
    other = load_test_function("_Z4slowv"); /* not configured here: 1000 ns */
    return 0;
}

static void test_stream_handles(void **state)
{
    CUcontext ctx = *state;
    CUstream s, hi;
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuStreamCreate(&s, 2));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuStreamCreate(NULL, 0));
    ok_cu(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    ok_cu(cuStreamCreateWithPriority(&hi, 0, -100)); /* clamped */
    unsigned flags = 0;
    int prio = 0;
    ok_cu(cuStreamGetFlags(s, &flags));
    assert_int_equal(flags, CU_STREAM_NON_BLOCKING);
    ok_cu(cuStreamGetPriority(hi, &prio));
    int least, greatest;
    ok_cu(cuCtxGetStreamPriorityRange(&least, &greatest));
    assert_int_equal(prio, greatest);
    CUcontext c;
    ok_cu(cuStreamGetCtx(s, &c));
    assert_ptr_equal(c, ctx);
    CUgreenCtx green = (CUgreenCtx)1;
    ok_cu(cuStreamGetCtx_v2(s, &c, &green));
    assert_ptr_equal(c, ctx);
    assert_null(green);
    CUdevice dev = -1;
    ok_cu(cuStreamGetDevice(NULL, &dev));
    assert_int_equal(dev, 0);
    unsigned long long id1, id2;
    ok_cu(cuStreamGetId(s, &id1));
    ok_cu(cuStreamGetId(hi, &id2));
    assert_true(id1 != id2);
    ok_cu(cuStreamQuery(s));
    ok_cu(cuStreamDestroy(s));
    expect_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamDestroy(s));
    expect_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamQuery(s));
    expect_cu(CUDA_ERROR_INVALID_HANDLE, cuStreamDestroy(NULL));
    expect_cu(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernel(quick, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
    ok_cu(cuStreamDestroy(hi));
}

struct host_step {
    uint64_t submitted, ran;
    unsigned *pinned;
    unsigned value;
    CUstream callback_stream;
    CUresult callback_status;
    atomic_int calls;
};

static void host_fn(void *arg)
{
    struct host_step *h = arg;
    h->ran = test_now_ns();
    *h->pinned = h->value;
    atomic_fetch_add(&h->calls, 1);
}

static void CUDA_CB callback(CUstream stream, CUresult status, void *arg)
{
    struct host_step *h = arg;
    h->callback_stream = stream;
    h->callback_status = status;
    atomic_fetch_add(&h->calls, 1);
}

/* Host functions run in stream order, after the simulated end of the work
 * before them, and before the work after them. */
static void test_host_functions(void **state)
{
    (void)state;
    CUstream s;
    ok_cu(cuStreamCreate(&s, 0));
    struct host_step h = {.value = 1234};
    ok_cu(cuMemAllocHost((void **)&h.pinned, 64));
    *h.pinned = 0;
    CUdeviceptr d;
    ok_cu(cuMemAlloc(&d, 64));
    unsigned back = 0;
    h.submitted = test_now_ns();
    launch1(busy, s);
    ok_cu(cuLaunchHostFunc(s, host_fn, &h));
    ok_cu(cuMemcpyHtoDAsync(d, h.pinned, sizeof(unsigned), s));
    ok_cu(cuStreamAddCallback(s, callback, &h, 0));
    ok_cu(cuMemcpyDtoHAsync(&back, d, sizeof back, s));
    ok_cu(cuStreamSynchronize(s));
    assert_int_equal(back, 1234);
    assert_int_equal(atomic_load(&h.calls), 2);
    assert_true(h.ran >= h.submitted + BUSY_NS - 100000);
    assert_ptr_equal(h.callback_stream, s);
    assert_int_equal(h.callback_status, CUDA_SUCCESS);
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuLaunchHostFunc(s, NULL, NULL));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuStreamAddCallback(s, callback, &h, 1));

    /* A destroyed stream still carries out its queued work. */
    launch1(busy, s);
    ok_cu(cuLaunchHostFunc(s, host_fn, &h));
    ok_cu(cuStreamDestroy(s));
    ok_cu(cuCtxSynchronize());
    assert_int_equal(atomic_load(&h.calls), 3);
    ok_cu(cuMemFree(d));
    ok_cu(cuMemFreeHost(h.pinned));
}

static void test_event_errors(void **state)
{
    (void)state;
    CUevent a, b, other_ctx_event;
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuEventCreate(&a, 0x40));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuEventCreate(&a, CU_EVENT_INTERPROCESS));
    ok_cu(cuEventCreate(&a, CU_EVENT_BLOCKING_SYNC));
    ok_cu(cuEventCreate(&b, 0));
    ok_cu(cuEventQuery(a)); /* never recorded: complete */
    ok_cu(cuEventSynchronize(a));
    float ms;
    expect_cu(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, a, b));
    ok_cu(cuEventRecord(a, NULL));
    launch1(busy, NULL);
    ok_cu(cuEventRecord(b, NULL));
    expect_cu(CUDA_ERROR_NOT_READY, cuEventElapsedTime(&ms, a, b));
    expect_cu(CUDA_ERROR_NOT_READY, cuEventQuery(b));
    ok_cu(cuEventSynchronize(b));
    ok_cu(cuEventElapsedTime(&ms, a, b));
    assert_true(ms > 1.99f && ms < 2.01f);
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuEventElapsedTime(NULL, a, b));

    CUcontext second;
    ok_cu(cuCtxCreate(&second, NULL, 0, 0));
    ok_cu(cuEventCreate(&other_ctx_event, 0));
    ok_cu(cuCtxPopCurrent(NULL));
    expect_cu(CUDA_ERROR_INVALID_HANDLE, cuEventRecord(other_ctx_event, NULL));
    ok_cu(cuEventDestroy(other_ctx_event));
    ok_cu(cuCtxDestroy(second));

    ok_cu(cuEventDestroy(a));
    expect_cu(CUDA_ERROR_INVALID_HANDLE, cuEventDestroy(a));
    expect_cu(CUDA_ERROR_INVALID_HANDLE, cuEventRecord(a, NULL));
    ok_cu(cuEventDestroy(b));
}

static CUresult launch_dims(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                            unsigned bz, unsigned smem)
{
    return cuLaunchKernel(quick, gx, gy, gz, bx, by, bz, smem, NULL, NULL, NULL);
}

static void test_launch_limits(void **state)
{
    (void)state;
    ok_cu(launch_dims(2147483647u, 65535, 65535, 1024, 1, 1, 0));
    ok_cu(launch_dims(1, 1, 1, 16, 16, 4, 48 * 1024));
    expect_cu(CUDA_ERROR_INVALID_VALUE, launch_dims(0, 1, 1, 1, 1, 1, 0));
    expect_cu(CUDA_ERROR_INVALID_VALUE, launch_dims(1, 1, 1, 1025, 1, 1, 0));
    expect_cu(CUDA_ERROR_INVALID_VALUE, launch_dims(1, 1, 1, 32, 32, 2, 0));
    expect_cu(CUDA_ERROR_INVALID_VALUE, launch_dims(1, 1, 1, 1, 1, 65, 0));
    expect_cu(CUDA_ERROR_INVALID_VALUE, launch_dims(1, 65536, 1, 1, 1, 1, 0));
    expect_cu(CUDA_ERROR_INVALID_VALUE, launch_dims(1, 1, 1, 1, 1, 1, 48 * 1024 + 1));
    ok_cu(cuFuncSetAttribute(quick, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100 * 1024));
    ok_cu(launch_dims(1, 1, 1, 1, 1, 1, 100 * 1024));
    int v = 0;
    ok_cu(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, quick));
    assert_int_equal(v, 100 * 1024);
    expect_cu(CUDA_ERROR_INVALID_VALUE,
              cuFuncSetAttribute(quick, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1 << 20));

    void *params[] = {NULL};
    void *extra[] = {CU_LAUNCH_PARAM_END};
    expect_cu(CUDA_ERROR_INVALID_VALUE,
              cuLaunchKernel(quick, 1, 1, 1, 1, 1, 1, 0, NULL, params, extra));
    expect_cu(CUDA_ERROR_INVALID_HANDLE,
              cuLaunchKernel((CUfunction)&v, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    expect_cu(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
              cuLaunchCooperativeKernel(quick, 100000, 1, 1, 1024, 1, 1, 0, NULL, NULL));
    ok_cu(cuLaunchCooperativeKernel(quick, 132, 1, 1, 1024, 1, 1, 0, NULL, NULL));

    CUlaunchAttribute coop = {.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE, .value.cooperative = 1};
    CUlaunchConfig cfg = {.gridDimX = 100000,
                          .gridDimY = 1,
                          .gridDimZ = 1,
                          .blockDimX = 1024,
                          .blockDimY = 1,
                          .blockDimZ = 1,
                          .attrs = &coop,
                          .numAttrs = 1};
    expect_cu(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, cuLaunchKernelEx(&cfg, quick, NULL, NULL));
    cfg.gridDimX = 4;
    ok_cu(cuLaunchKernelEx(&cfg, quick, NULL, NULL));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuLaunchKernelEx(NULL, quick, NULL, NULL));
    ok_cu(cuCtxSynchronize());
}

static void test_occupancy_and_profiler(void **state)
{
    (void)state;
    int blocks = 0, min_grid = 0, block = 0;
    ok_cu(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, quick, 256, 0));
    assert_int_equal(blocks, 8); /* 2048 threads per SM */
    ok_cu(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, quick, 32, 0));
    assert_int_equal(blocks, 32); /* 32 blocks per SM */
    ok_cu(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, quick, 64, 40 * 1024));
    assert_int_equal(blocks, 5); /* 228 KiB of shared memory */
    expect_cu(CUDA_ERROR_INVALID_VALUE,
              cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, quick, 2048, 0));
    ok_cu(cuOccupancyMaxPotentialBlockSize(&min_grid, &block, quick, NULL, 0, 0));
    assert_int_equal(block, 1024);
    assert_int_equal(min_grid, 2 * 132);
    size_t smem = 0;
    ok_cu(cuOccupancyAvailableDynamicSMemPerBlock(&smem, quick, 4, 128));
    assert_true(smem > 0 && smem <= 100 * 1024);
    ok_cu(cuProfilerStart());
    ok_cu(cuProfilerStop());
}

/* CUDA releases a destroyed stream once the device completed its work:
 * until then its handle names no new stream (a tool keying its timeline
 * by handle would see two streams' work at once), afterwards it may. */
static void test_destroyed_stream_handle_waits_for_its_work(void **state)
{
    (void)state;
    CUstream s, t, u;
    ok_cu(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    launch1(busy, s);
    uint64_t end = test_now_ns() + BUSY_NS;
    ok_cu(cuStreamDestroy(s));
    ok_cu(cuStreamCreate(&t, CU_STREAM_NON_BLOCKING));
    assert_true(t != s || test_now_ns() >= end);
    while (test_now_ns() < end)
        usleep(1000);
    ok_cu(cuStreamCreate(&u, CU_STREAM_NON_BLOCKING));
    assert_ptr_equal(u, s);
    ok_cu(cuStreamDestroy(t));
    ok_cu(cuStreamDestroy(u));
}

/* The launch queue holds 2048 incomplete operations: launching 20,000
 * kernels of 1000 ns must make the host wait for most of their time. */
/* Without __cxa_demangle in the process (a C program, or Python), names
 * are parsed directly: ABI tags are no part of the name matched (Numba
 * tags every kernel with one). */
static void test_names_without_demangler(void **state)
{
    (void)state;
    assert_null(dlsym(RTLD_DEFAULT, "__cxa_demangle"));
    assert_int_equal(gtemu_kernel_ns("_Z4busyPfi"), 2000000);
    assert_int_equal(gtemu_kernel_ns("_Z4busyB2v1B5cw51xPfi"), 2000000);
    assert_int_equal(gtemu_kernel_ns("_Z5quickB2v1B3abcv"), 0);
    assert_int_equal(gtemu_kernel_ns("_ZN2ns6taggedB2v1B3abcE5ArrayIfLi1E1C7mutable7alignedEd"),
                     3000);
}

static void test_launch_queue_blocks_host(void **state)
{
    (void)state;
    CUstream s;
    ok_cu(cuStreamCreate(&s, 0));
    uint64_t before = gtemu_launches();
    uint64_t t0 = test_now_ns();
    for (int i = 0; i < 20000; i++)
        ok_cu(cuLaunchKernel(other, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
    uint64_t host_ns = test_now_ns() - t0;
    assert_true(host_ns >= (20000 - 2048) * 1000ULL - 1000000);
    ok_cu(cuStreamSynchronize(s));
    assert_int_equal(gtemu_launches() - before, 20000);
    ok_cu(cuStreamDestroy(s));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_handles),
        cmocka_unit_test(test_destroyed_stream_handle_waits_for_its_work),
        cmocka_unit_test(test_host_functions),
        cmocka_unit_test(test_event_errors),
        cmocka_unit_test(test_launch_limits),
        cmocka_unit_test(test_occupancy_and_profiler),
        cmocka_unit_test(test_names_without_demangler),
        cmocka_unit_test(test_launch_queue_blocks_host),
    };
    return cmocka_run_group_tests(tests, setup, teardown_primary);
}
