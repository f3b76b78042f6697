/* Stream capture and graphs: captured work runs when the graph is
 * launched (data copied by a graph arrives), in its simulated time;
 * events recorded on capturing streams are counted; operations that are
 * illegal during capture fail with the documented errors and invalidate
 * the capture. Durations: busy = 2 ms (GPUTRACE_EMU_KERNEL_NS). */
#include "emu_test.h"

#include <string.h>

#define BUSY_NS 2000000.0

static CUfunction busy;

static int setup(void **state)
{
    if (setup_primary(state) != 0) return -1;
    busy = load_test_function("_Z4busyPfi");
    return 0;
}

static size_t node_count(CUgraph g)
{
    size_t n = 0;
    ok_cu(cuGraphGetNodes(g, NULL, &n));
    return n;
}

static void test_captured_work_runs_at_launch(void **state)
{
    (void)state;
    CUstream s;
    ok_cu(cuStreamCreate(&s, 0));
    enum { N = 4096 };
    unsigned char *in, *out;
    ok_cu(cuMemAllocHost((void **)&in, N));
    ok_cu(cuMemAllocHost((void **)&out, N));
    CUdeviceptr dev;
    ok_cu(cuMemAlloc(&dev, N));
    memset(in, 1, N);
    memset(out, 0, N);
    CUevent marker;
    ok_cu(cuEventCreate(&marker, 0));
    gtemu_reset();

    ok_cu(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUstreamCaptureStatus status;
    ok_cu(cuStreamIsCapturing(s, &status));
    assert_int_equal(status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    ok_cu(cuMemcpyHtoDAsync(dev, in, N, s));
    launch1(busy, s);
    ok_cu(cuEventRecord(marker, s)); /* a capture event: no node */
    ok_cu(cuMemcpyDtoHAsync(out, dev, N, s));
    cuuint64_t id = 0;
    CUgraph capturing = NULL;
    const CUgraphNode *deps = NULL;
    size_t n_deps = 0;
    ok_cu(cuStreamGetCaptureInfo(s, &status, &id, &capturing, &deps, NULL, &n_deps));
    assert_true(id != 0);
    assert_non_null(capturing);
    assert_int_equal(n_deps, 1);
    CUgraphNodeType type;
    ok_cu(cuGraphNodeGetType(deps[0], &type));
    assert_int_equal(type, CU_GRAPH_NODE_TYPE_MEMCPY);
    expect_cu(CUDA_ERROR_CAPTURED_EVENT, cuEventQuery(marker));
    CUgraph g;
    ok_cu(cuStreamEndCapture(s, &g));
    assert_ptr_equal(g, capturing);
    ok_cu(cuStreamIsCapturing(s, &status));
    assert_int_equal(status, CU_STREAM_CAPTURE_STATUS_NONE);

    assert_int_equal(gtemu_capture_event_records(), 1);
    assert_int_equal(gtemu_event_records(), 0);
    assert_int_equal(gtemu_launches(), 0);
    assert_int_equal(node_count(g), 3);
    ok_cu(cuStreamSynchronize(s));
    assert_int_equal(out[0], 0); /* nothing ran during capture */

    CUgraphExec exec;
    ok_cu(cuGraphInstantiate(&exec, g, 0));
    ok_cu(cuGraphLaunch(exec, s));
    ok_cu(cuStreamSynchronize(s));
    assert_int_equal(out[N - 1], 1);
    memset(in, 2, N); /* a second launch reads the host buffer again */
    ok_cu(cuGraphLaunch(exec, s));
    ok_cu(cuStreamSynchronize(s));
    assert_int_equal(out[N - 1], 2);
    assert_int_equal(gtemu_graph_launches(), 2);
    assert_int_equal(gtemu_launches(), 0);

    ok_cu(cuGraphExecDestroy(exec));
    ok_cu(cuGraphDestroy(g));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuGraphDestroy(g));
    ok_cu(cuEventDestroy(marker));
    ok_cu(cuMemFree(dev));
    ok_cu(cuMemFreeHost(in));
    ok_cu(cuMemFreeHost(out));
    ok_cu(cuStreamDestroy(s));
}

/* A fork captured on two streams and joined back: the branches overlap
 * when the graph runs. */
static void test_fork_join_timing(void **state)
{
    (void)state;
    CUstream main_s, side;
    ok_cu(cuStreamCreate(&main_s, CU_STREAM_NON_BLOCKING));
    ok_cu(cuStreamCreate(&side, CU_STREAM_NON_BLOCKING));
    CUevent fork, join, start, stop;
    ok_cu(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
    ok_cu(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
    ok_cu(cuEventCreate(&start, 0));
    ok_cu(cuEventCreate(&stop, 0));

    ok_cu(cuStreamBeginCapture(main_s, CU_STREAM_CAPTURE_MODE_RELAXED));
    ok_cu(cuEventRecord(fork, main_s));
    ok_cu(cuStreamWaitEvent(side, fork, 0)); /* side joins the capture */
    CUstreamCaptureStatus status;
    ok_cu(cuStreamIsCapturing(side, &status));
    assert_int_equal(status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    launch1(busy, main_s);
    launch1(busy, side);
    launch1(busy, side);
    ok_cu(cuEventRecord(join, side));
    ok_cu(cuStreamWaitEvent(main_s, join, 0));
    CUgraph g;
    ok_cu(cuStreamEndCapture(main_s, &g));
    ok_cu(cuStreamIsCapturing(side, &status));
    assert_int_equal(status, CU_STREAM_CAPTURE_STATUS_NONE);
    assert_int_equal(node_count(g), 3);

    CUgraphExec exec;
    ok_cu(cuGraphInstantiateWithFlags(&exec, g, 0));
    ok_cu(cuEventRecord(start, main_s));
    ok_cu(cuGraphLaunch(exec, main_s));
    ok_cu(cuEventRecord(stop, main_s));
    ok_cu(cuEventSynchronize(stop));
    assert_elapsed(start, stop, 2 * BUSY_NS); /* the longer branch */

    /* The same fork without the join cannot end. */
    ok_cu(cuStreamBeginCapture(main_s, CU_STREAM_CAPTURE_MODE_RELAXED));
    ok_cu(cuEventRecord(fork, main_s));
    ok_cu(cuStreamWaitEvent(side, fork, 0));
    launch1(busy, side);
    CUgraph unjoined = (CUgraph)1;
    expect_cu(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, cuStreamEndCapture(main_s, &unjoined));
    assert_null(unjoined);
    ok_cu(cuStreamIsCapturing(side, &status));
    assert_int_equal(status, CU_STREAM_CAPTURE_STATUS_NONE);

    ok_cu(cuGraphExecDestroy(exec));
    ok_cu(cuGraphDestroy(g));
    CUevent all[] = {fork, join, start, stop};
    for (int i = 0; i < 4; i++)
        ok_cu(cuEventDestroy(all[i]));
    ok_cu(cuStreamDestroy(main_s));
    ok_cu(cuStreamDestroy(side));
}

static void end_invalidated(CUstream s)
{
    CUstreamCaptureStatus status;
    ok_cu(cuStreamIsCapturing(s, &status));
    assert_int_equal(status, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    CUgraph g = (CUgraph)1;
    expect_cu(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, cuStreamEndCapture(s, &g));
    assert_null(g);
}

static void test_illegal_during_capture(void **state)
{
    (void)state;
    CUstream s, nb;
    ok_cu(cuStreamCreate(&s, 0));
    ok_cu(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));
    CUgraph g;

    /* Synchronising the capturing stream. */
    ok_cu(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    launch1(busy, s);
    expect_cu(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, cuStreamSynchronize(s));
    expect_cu(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
              cuLaunchKernel(busy, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
    end_invalidated(s);

    /* The legacy stream while a blocking stream captures. */
    ok_cu(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUstreamCaptureStatus status;
    expect_cu(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, cuStreamIsCapturing(NULL, &status));
    expect_cu(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
              cuLaunchKernel(busy, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    end_invalidated(s);

    /* A non-blocking stream's capture leaves the legacy stream usable. */
    ok_cu(cuStreamBeginCapture(nb, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    launch1(busy, NULL);
    ok_cu(cuStreamIsCapturing(nb, &status));
    assert_int_equal(status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    ok_cu(cuStreamEndCapture(nb, &g));
    ok_cu(cuGraphDestroy(g));

    /* Potentially unsafe calls: refused in global mode, allowed relaxed. */
    CUdeviceptr p;
    ok_cu(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    expect_cu(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, cuMemAlloc(&p, 64));
    end_invalidated(s);
    ok_cu(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    ok_cu(cuThreadExchangeStreamCaptureMode(&mode));
    assert_int_equal(mode, CU_STREAM_CAPTURE_MODE_GLOBAL);
    ok_cu(cuMemAlloc(&p, 64));
    ok_cu(cuThreadExchangeStreamCaptureMode(&mode));
    ok_cu(cuStreamEndCapture(s, &g));
    ok_cu(cuGraphDestroy(g));
    ok_cu(cuMemFree(p));

    /* Capture cannot start on the legacy stream, nor twice, nor end elsewhere. */
    expect_cu(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
              cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL));
    ok_cu(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    expect_cu(CUDA_ERROR_ILLEGAL_STATE, cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    expect_cu(CUDA_ERROR_ILLEGAL_STATE, cuStreamEndCapture(nb, &g));
    ok_cu(cuStreamEndCapture(s, &g));
    assert_int_equal(node_count(g), 0);
    ok_cu(cuGraphDestroy(g));
    ok_cu(cuStreamDestroy(s));
    ok_cu(cuStreamDestroy(nb));
}

/* CU_EVENT_RECORD_EXTERNAL makes the record a node that runs with the graph. */
static void test_external_event_node(void **state)
{
    (void)state;
    CUstream s;
    ok_cu(cuStreamCreate(&s, 0));
    CUevent a, b;
    ok_cu(cuEventCreate(&a, 0));
    ok_cu(cuEventCreate(&b, 0));
    expect_cu(CUDA_ERROR_INVALID_VALUE, cuEventRecordWithFlags(a, s, CU_EVENT_RECORD_EXTERNAL));
    ok_cu(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    ok_cu(cuEventRecordWithFlags(a, s, CU_EVENT_RECORD_EXTERNAL));
    launch1(busy, s);
    ok_cu(cuEventRecordWithFlags(b, s, CU_EVENT_RECORD_EXTERNAL));
    CUgraph g;
    ok_cu(cuStreamEndCapture(s, &g));
    assert_int_equal(node_count(g), 3);
    CUgraphExec exec;
    ok_cu(cuGraphInstantiate(&exec, g, 0));
    ok_cu(cuGraphUpload(exec, s));
    ok_cu(cuGraphLaunch(exec, s));
    ok_cu(cuStreamSynchronize(s));
    ok_cu(cuEventQuery(b));
    assert_elapsed(a, b, BUSY_NS);
    ok_cu(cuGraphExecDestroy(exec));
    ok_cu(cuGraphDestroy(g));
    ok_cu(cuEventDestroy(a));
    ok_cu(cuEventDestroy(b));
    ok_cu(cuStreamDestroy(s));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_captured_work_runs_at_launch),
        cmocka_unit_test(test_fork_join_timing),
        cmocka_unit_test(test_illegal_during_capture),
        cmocka_unit_test(test_external_event_node),
    };
    return cmocka_run_group_tests(tests, setup, teardown_primary);
}
