/* Runtime tests: streams, events, launches and graphs. Kernel durations are the
 * emulator's configured ones (rt_test.h), so elapsed times are exact within 1 us. */
#include <stdlib.h>
#include <string.h>

#include "rt_test.h"

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                  size_t sharedMem, cudaStream_t stream);

static struct rt_test_library lib;

static int load(void **state)
{
    (void)state;
    rt_test_load(&lib);
    return 0;
}

static int unload(void **state)
{
    (void)state;
    rt_test_unload(&lib);
    return 0;
}

static void test_stream_creation(void **state)
{
    (void)state;
    cudaStream_t a, b, c;
    unsigned flags = 99;
    int least, greatest, priority = 99;
    assert_cuda(cudaStreamCreate(&a));
    assert_cuda(cudaStreamGetFlags(a, &flags));
    assert_int_equal(flags, cudaStreamDefault);
    assert_cuda(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    assert_cuda(cudaStreamGetFlags(b, &flags));
    assert_int_equal(flags, cudaStreamNonBlocking);
    assert_cuda(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    assert_true(greatest <= least);
    assert_cuda(cudaStreamCreateWithPriority(&c, cudaStreamDefault, greatest));
    assert_cuda(cudaStreamGetPriority(c, &priority));
    assert_int_equal(priority, greatest);
    assert_cuda(cudaStreamQuery(a));
    assert_cuda(cudaStreamSynchronize(b));
    assert_int_equal(cudaStreamCreateWithFlags(&a, 0x80), cudaErrorInvalidValue);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
    assert_cuda(cudaStreamDestroy(a));
    assert_cuda(cudaStreamDestroy(b));
    assert_cuda(cudaStreamDestroy(c));
}

static void test_event_times_equal_kernel_durations(void **state)
{
    (void)state;
    cudaStream_t s;
    cudaEvent_t e0, e1, e2;
    assert_cuda(cudaStreamCreate(&s));
    assert_cuda(cudaEventCreate(&e0));
    assert_cuda(cudaEventCreateWithFlags(&e1, cudaEventBlockingSync));
    assert_cuda(cudaEventCreate(&e2));
    assert_cuda(cudaEventRecord(e0, s));
    assert_cuda(rt_test_launch(lib.short_kernel, s));
    assert_cuda(cudaEventRecord(e1, s));
    assert_cuda(rt_test_launch(lib.long_kernel, s));
    assert_cuda(cudaEventRecordWithFlags(e2, s, cudaEventRecordDefault));
    rt_test_assert_duration(rt_test_elapsed_ms(e0, e1), RT_SHORT_NS);
    rt_test_assert_duration(rt_test_elapsed_ms(e1, e2), RT_LONG_NS);
    rt_test_assert_duration(rt_test_elapsed_ms(e0, e2), RT_SHORT_NS + RT_LONG_NS);
    assert_cuda(cudaEventQuery(e2));
    assert_cuda(cudaEventDestroy(e0));
    assert_cuda(cudaEventDestroy(e1));
    assert_cuda(cudaEventDestroy(e2));
    assert_cuda(cudaStreamDestroy(s));
}

static void test_event_errors(void **state)
{
    (void)state;
    cudaEvent_t a, b, untimed;
    float ms;
    assert_cuda(cudaEventCreate(&a));
    assert_cuda(cudaEventCreate(&b));
    assert_cuda(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
    assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle);
    assert_cuda(cudaEventRecord(a, 0));
    assert_cuda(cudaEventRecord(untimed, 0));
    assert_cuda(cudaEventSynchronize(untimed));
    assert_int_equal(cudaEventElapsedTime(&ms, a, untimed), cudaErrorInvalidResourceHandle);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidResourceHandle);
    assert_cuda(cudaEventDestroy(a));
    assert_cuda(cudaEventDestroy(b));
    assert_cuda(cudaEventDestroy(untimed));
}

static void test_stream_waits_for_event(void **state)
{
    (void)state;
    cudaStream_t first, second;
    cudaEvent_t start, done, end;
    assert_cuda(cudaStreamCreateWithFlags(&first, cudaStreamNonBlocking));
    assert_cuda(cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking));
    assert_cuda(cudaEventCreate(&start));
    assert_cuda(cudaEventCreate(&done));
    assert_cuda(cudaEventCreate(&end));
    assert_cuda(cudaEventRecord(start, first));
    assert_cuda(rt_test_launch(lib.long_kernel, first));
    assert_cuda(cudaEventRecord(done, first));
    assert_cuda(cudaStreamWaitEvent(second, done, 0));
    assert_cuda(rt_test_launch(lib.short_kernel, second));
    assert_cuda(cudaEventRecord(end, second));
    rt_test_assert_duration(rt_test_elapsed_ms(start, end), RT_LONG_NS + RT_SHORT_NS);
    cudaEvent_t events[] = {start, done, end};
    for (int i = 0; i < 3; i++)
        assert_cuda(cudaEventDestroy(events[i]));
    assert_cuda(cudaStreamDestroy(first));
    assert_cuda(cudaStreamDestroy(second));
}

static void test_legacy_stream_orders_blocking_streams(void **state)
{
    (void)state;
    cudaStream_t blocking;
    cudaEvent_t start, end;
    assert_cuda(cudaStreamCreate(&blocking));
    assert_cuda(cudaEventCreate(&start));
    assert_cuda(cudaEventCreate(&end));
    assert_cuda(cudaEventRecord(start, blocking));
    assert_cuda(rt_test_launch(lib.long_kernel, blocking));
    assert_cuda(rt_test_launch(lib.short_kernel, 0));
    assert_cuda(cudaEventRecord(end, 0));
    rt_test_assert_duration(rt_test_elapsed_ms(start, end), RT_LONG_NS + RT_SHORT_NS);
    assert_cuda(cudaEventDestroy(start));
    assert_cuda(cudaEventDestroy(end));
    assert_cuda(cudaStreamDestroy(blocking));
}

static void test_launch_configuration_checks(void **state)
{
    (void)state;
    int *none = NULL;
    void *args[] = {&none};
    const dim3 one = {1, 1, 1};
    const struct {
        dim3 grid, block;
    } bad[] = {
        {{1, 1, 1}, {2048, 1, 1}},  {{1, 1, 1}, {32, 32, 2}}, {{1, 1, 1}, {1, 1, 65}},
        {{0, 1, 1}, {32, 1, 1}},    {{1, 0, 1}, {32, 1, 1}},  {{1, 1, 1}, {0, 1, 1}},
        {{1, 65536, 1}, {1, 1, 1}},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(
            cudaLaunchKernel((const void *)lib.short_kernel, bad[i].grid, bad[i].block, args, 0, 0),
            cudaErrorInvalidConfiguration);
        assert_int_equal(cudaGetLastError(), cudaErrorInvalidConfiguration);
    }
    assert_int_equal(cudaLaunchKernel(NULL, one, one, args, 0, 0), cudaErrorInvalidDeviceFunction);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidDeviceFunction);
    dim3 big_grid = {1u << 20, 1, 1}, full_block = {1024, 1, 1};
    assert_cuda(cudaLaunchKernel((const void *)lib.short_kernel, big_grid, full_block, args, 0, 0));
    assert_cuda(cudaDeviceSynchronize());
}

static void test_extensible_and_per_thread_launches(void **state)
{
    (void)state;
    int *none = NULL;
    void *args[] = {&none};
    cudaStream_t s;
    cudaEvent_t start, end;
    assert_cuda(cudaStreamCreate(&s));
    assert_cuda(cudaEventCreate(&start));
    assert_cuda(cudaEventCreate(&end));
    cudaLaunchConfig_t config = {.gridDim = {2, 1, 1}, .blockDim = {64, 1, 1}, .stream = s};
    assert_cuda(cudaEventRecord(start, s));
    assert_cuda(cudaLaunchKernelExC(&config, (const void *)lib.long_kernel, args));
    assert_cuda(cudaEventRecord(end, s));
    rt_test_assert_duration(rt_test_elapsed_ms(start, end), RT_LONG_NS);
    config.blockDim.x = 4096;
    assert_int_equal(cudaLaunchKernelExC(&config, (const void *)lib.long_kernel, args),
                     cudaErrorInvalidConfiguration);
    assert_int_equal(cudaLaunchKernelExC(NULL, (const void *)lib.long_kernel, args),
                     cudaErrorInvalidValue);
    cudaGetLastError();

    const dim3 one = {1, 1, 1};
    assert_cuda(cudaEventRecord(start, cudaStreamPerThread));
    assert_cuda(cudaLaunchKernel_ptsz((const void *)lib.short_kernel, one, one, args, 0, 0));
    assert_cuda(cudaEventRecord(end, cudaStreamPerThread));
    rt_test_assert_duration(rt_test_elapsed_ms(start, end), RT_SHORT_NS);
    assert_cuda(cudaEventDestroy(start));
    assert_cuda(cudaEventDestroy(end));
    assert_cuda(cudaStreamDestroy(s));
}

static void count_call(void *arg)
{
    ++*(int *)arg;
}

static void record_status(cudaStream_t stream, cudaError_t status, void *arg)
{
    (void)stream;
    *(cudaError_t *)arg = status;
}

static void test_host_function_runs_in_order(void **state)
{
    (void)state;
    cudaStream_t s;
    int calls = 0;
    cudaError_t status = cudaErrorUnknown;
    assert_cuda(cudaStreamCreate(&s));
    assert_cuda(rt_test_launch(lib.long_kernel, s));
    assert_cuda(cudaLaunchHostFunc(s, count_call, &calls));
    assert_cuda(cudaStreamAddCallback(s, record_status, &status, 0));
    assert_cuda(cudaStreamSynchronize(s));
    assert_int_equal(calls, 1);
    assert_int_equal(status, cudaSuccess);
    assert_cuda(cudaStreamDestroy(s));
}

static void test_captured_graph_runs_its_work_at_each_launch(void **state)
{
    (void)state;
    enum { BYTES = 8192 };
    unsigned char *a, *b, *host = malloc(BYTES);
    cudaStream_t s;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    enum cudaStreamCaptureStatus status;
    unsigned long long id = 0;
    assert_cuda(cudaMalloc((void **)&a, BYTES));
    assert_cuda(cudaMalloc((void **)&b, BYTES));
    assert_cuda(cudaMemset(b, 0, BYTES));
    assert_cuda(cudaStreamCreate(&s));

    assert_cuda(cudaStreamIsCapturing(s, &status));
    assert_int_equal(status, cudaStreamCaptureStatusNone);
    assert_cuda(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    assert_cuda(cudaStreamIsCapturing(s, &status));
    assert_int_equal(status, cudaStreamCaptureStatusActive);
    assert_cuda(cudaStreamGetCaptureInfo(s, &status, &id, NULL, NULL, NULL, NULL));
    assert_int_equal(status, cudaStreamCaptureStatusActive);
    assert_true(id != 0);
    assert_cuda(rt_test_launch(lib.short_kernel, s));
    assert_cuda(cudaMemsetAsync(a, 0x7e, BYTES, s));
    assert_cuda(cudaMemcpyAsync(b, a, BYTES, cudaMemcpyDeviceToDevice, s));
    assert_cuda(cudaStreamEndCapture(s, &graph));
    assert_cuda(cudaStreamIsCapturing(s, &status));
    assert_int_equal(status, cudaStreamCaptureStatusNone);

    /* Nothing ran during the capture. */
    assert_cuda(cudaMemcpy(host, b, BYTES, cudaMemcpyDeviceToHost));
    assert_int_equal(host[0], 0);
    assert_cuda(cudaGraphInstantiate(&exec, graph, 0));
    for (int i = 0; i < 3; i++)
        assert_cuda(cudaGraphLaunch(exec, s));
    assert_cuda(cudaStreamSynchronize(s));
    assert_cuda(cudaMemcpy(host, b, BYTES, cudaMemcpyDeviceToHost));
    for (int i = 0; i < BYTES; i++)
        assert_int_equal(host[i], 0x7e);

    assert_cuda(cudaGraphExecDestroy(exec));
    assert_cuda(cudaGraphDestroy(graph));
    assert_cuda(cudaGraphCreate(&graph, 0));
    assert_cuda(cudaGraphInstantiateWithFlags(&exec, graph, 0));
    assert_cuda(cudaGraphLaunch(exec, s));
    assert_cuda(cudaStreamSynchronize(s));
    assert_cuda(cudaGraphExecDestroy(exec));
    assert_cuda(cudaGraphDestroy(graph));
    assert_cuda(cudaStreamDestroy(s));
    assert_cuda(cudaFree(a));
    assert_cuda(cudaFree(b));
    free(host);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_creation),
        cmocka_unit_test(test_event_times_equal_kernel_durations),
        cmocka_unit_test(test_event_errors),
        cmocka_unit_test(test_stream_waits_for_event),
        cmocka_unit_test(test_legacy_stream_orders_blocking_streams),
        cmocka_unit_test(test_launch_configuration_checks),
        cmocka_unit_test(test_extensible_and_per_thread_launches),
        cmocka_unit_test(test_host_function_runs_in_order),
        cmocka_unit_test(test_captured_graph_runs_its_work_at_each_launch),
    };
    return cmocka_run_group_tests(tests, load, unload);
}
