/* Records of driver API work: correlation ids shared by callbacks, API
 * records and the records of the work; kernels, copies (peer copies as
 * MEMCPY2) and memsets with exactly the configured simulated durations; the
 * CUPTI clock. Configuration (CMakeLists.txt): GPUTRACE_EMU_DEVICES=2,
 * GPUTRACE_EMU_KERNEL_NS=busy=2000000,*=1000,
 * GPUTRACE_EMU_GBPS=pageable=5,pinned=20,dtod=500,memset=1000,peer=50. */
#include "cupti_test.h"

#include <time.h>

TEST_CLIENT_DEFINE;

#define BUSY_NS 2000000ULL
#define BYTES 1000000
#define PINNED_NS 50000ULL /* 10^6 bytes at 20 GB/s */
#define PAGEABLE_NS 200000ULL
#define DTOD_NS 2000ULL
#define MEMSET_NS 1000ULL
#define PEER_NS 20000ULL

/* The callbacks seen: (cbid, site, correlation id). */
static struct seen_call {
    CUpti_CallbackId cbid;
    CUpti_ApiCallbackSite site;
    uint32_t correlation;
    char symbol[64];
} calls[256];
static size_t n_calls;
static CUpti_SubscriberHandle subscriber;

static void CUPTIAPI on_call(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                             const void *data)
{
    (void)userdata;
    const CUpti_CallbackData *cb = data;
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API || n_calls == 256) return;
    struct seen_call *c = &calls[n_calls++];
    c->cbid = cbid;
    c->site = cb->callbackSite;
    c->correlation = cb->correlationId;
    snprintf(c->symbol, sizeof c->symbol, "%s", cb->symbolName ? cb->symbolName : "");
    /* correlationData carries a value from enter to exit. */
    if (cb->callbackSite == CUPTI_API_ENTER) *cb->correlationData = cb->correlationId + 1000;
    if (cb->callbackSite == CUPTI_API_EXIT)
        assert_int_equal(*cb->correlationData, cb->correlationId + 1000);
}

static CUfunction busy;

static int setup(void **state)
{
    if (setup_primary(state) != 0) return -1;
    busy = load_test_function("_Z4busyPfi");
    return 0;
}

/* Enables the kinds the tests read and the driver callbacks, fresh. */
static void start_tracing(void)
{
    n_calls = 0;
    test_client_start(1 << 20);
    ok_cupti(cuptiSubscribe(&subscriber, on_call, NULL));
    ok_cupti(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API));
    CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                  CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
                                  CUPTI_ACTIVITY_KIND_DRIVER};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        ok_cupti(cuptiActivityEnable(kinds[i]));
}

static void stop_tracing(void)
{
    ok_cu(cuCtxSynchronize());
    test_flush();
    CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                  CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
                                  CUPTI_ACTIVITY_KIND_DRIVER};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        ok_cupti(cuptiActivityDisable(kinds[i]));
    ok_cupti(cuptiUnsubscribe(subscriber));
}

/* The correlation id of the n-th call of cbid seen at `site`. */
static uint32_t call_id(CUpti_CallbackId cbid, CUpti_ApiCallbackSite site, int nth)
{
    for (size_t i = 0; i < n_calls; i++)
        if (calls[i].cbid == cbid && calls[i].site == site && nth-- == 0)
            return calls[i].correlation;
    fail_msg("no call %u", cbid);
    return 0;
}

static void test_correlation_ids_match(void **state)
{
    (void)state;
    start_tracing();
    CUdeviceptr d;
    ok_cu(cuMemAlloc(&d, BYTES));
    launch1(busy, NULL);
    ok_cu(cuMemsetD8Async(d, 7, BYTES, NULL));
    launch1(busy, NULL);
    ok_cu(cuMemFree(d));
    stop_tracing();

    uint32_t launch0 = call_id(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER, 0);
    uint32_t memset_id = call_id(CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, CUPTI_API_ENTER, 0);
    uint32_t launch1_id = call_id(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER, 1);
    assert_int_equal(launch0, call_id(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_EXIT, 0));
    /* Unique and increasing per call. */
    assert_true(launch0 > 0 && launch0 < memset_id && memset_id < launch1_id);
    assert_string_equal(calls[0].symbol, "_Z4busyPfi");

    struct test_record k[4], m[2], api[8];
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k, 4), 2);
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_MEMSET, m, 2), 1);
    assert_int_equal(k[0].r.kernel.correlationId, launch0);
    assert_int_equal(k[1].r.kernel.correlationId, launch1_id);
    assert_int_equal(m[0].r.memset.correlationId, memset_id);
    size_t n_api = test_records(CUPTI_ACTIVITY_KIND_DRIVER, api, 8);
    assert_int_equal(n_api, 3);
    assert_int_equal(api[0].r.api.cbid, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
    assert_int_equal(api[0].r.api.correlationId, launch0);
    assert_int_equal(api[1].r.api.correlationId, memset_id);
    assert_int_equal(api[0].r.api.returnValue, CUDA_SUCCESS);
    assert_true(api[0].r.api.start <= api[0].r.api.end);
}

static void test_kernel_record(void **state)
{
    (void)state;
    start_tracing();
    CUstream s;
    ok_cu(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    ok_cu(cuLaunchKernel(busy, 4, 2, 1, 128, 2, 1, 256, s, NULL, NULL));
    ok_cu(cuStreamSynchronize(s));
    stop_tracing();
    struct test_record k;
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, &k, 1), 1);
    const CUpti_ActivityKernel10 *r = &k.r.kernel;
    assert_string_equal(r->name, "_Z4busyPfi");
    assert_int_equal(r->end - r->start, BUSY_NS); /* exactly */
    assert_true(r->gridX == 4 && r->gridY == 2 && r->gridZ == 1);
    assert_true(r->blockX == 128 && r->blockY == 2 && r->blockZ == 1);
    assert_int_equal(r->dynamicSharedMemory, 256);
    uint32_t stream_id, ctx_id, dev_id;
    CUcontext ctx;
    ok_cu(cuCtxGetCurrent(&ctx));
    ok_cupti(cuptiGetStreamIdEx(ctx, s, 0, &stream_id));
    ok_cupti(cuptiGetContextId(ctx, &ctx_id));
    ok_cupti(cuptiGetDeviceId(ctx, &dev_id));
    assert_int_equal(r->streamId, stream_id);
    assert_int_equal(r->contextId, ctx_id);
    assert_int_equal(r->deviceId, 0);
    assert_int_equal(r->graphId, 0);
    ok_cu(cuStreamDestroy(s));
}

struct copy_case {
    CUpti_ActivityMemcpyKind kind;
    CUpti_ActivityMemoryKind src, dst;
    uint64_t ns;
    bool async;
};

static void check_copy(const struct test_record *t, const struct copy_case *c)
{
    const CUpti_ActivityMemcpy6 *r = &t->r.memcpy;
    assert_int_equal(r->copyKind, c->kind);
    assert_int_equal(r->srcKind, c->src);
    assert_int_equal(r->dstKind, c->dst);
    assert_int_equal(r->bytes, BYTES);
    assert_int_equal(r->end - r->start, c->ns);
    assert_int_equal((r->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0, c->async);
}

static void test_copy_and_memset_records(void **state)
{
    (void)state;
    start_tracing();
    void *pinned, *pageable = malloc(BYTES);
    CUdeviceptr a, b;
    ok_cu(cuMemAllocHost(&pinned, BYTES));
    ok_cu(cuMemAlloc(&a, BYTES));
    ok_cu(cuMemAlloc(&b, BYTES));
    ok_cu(cuMemcpyHtoD(a, pinned, BYTES));
    ok_cu(cuMemcpyDtoHAsync(pinned, a, BYTES, NULL));
    ok_cu(cuMemcpyHtoD(b, pageable, BYTES));
    ok_cu(cuMemcpyDtoDAsync(b, a, BYTES, NULL));
    ok_cu(cuMemsetD32(a, 0x01020304, BYTES / 4));
    ok_cu(cuMemsetD8Async((CUdeviceptr)(uintptr_t)pinned, 9, BYTES, NULL));
    ok_cu(cuCtxSynchronize());
    stop_tracing();

    struct test_record r[8];
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_MEMCPY, r, 8), 4);
    const struct copy_case cases[] = {
        {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
         CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, PINNED_NS, false},
        {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
         CUPTI_ACTIVITY_MEMORY_KIND_PINNED, PINNED_NS, true},
        {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
         CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, PAGEABLE_NS, false},
        {CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
         CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, DTOD_NS, true},
    };
    for (int i = 0; i < 4; i++)
        check_copy(&r[i], &cases[i]);

    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_MEMSET, r, 8), 2);
    assert_int_equal(r[0].r.memset.end - r[0].r.memset.start, MEMSET_NS);
    assert_int_equal(r[0].r.memset.value, 0x01020304);
    assert_int_equal(r[0].r.memset.memoryKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    assert_int_equal(r[0].r.memset.flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC, 0);
    assert_int_equal(r[1].r.memset.memoryKind, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
    assert_int_equal(r[1].r.memset.flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC,
                     CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC);
    ok_cu(cuMemFreeHost(pinned));
    ok_cu(cuMemFree(a));
    ok_cu(cuMemFree(b));
    free(pageable);
}

/* A copy between devices is a MEMCPY2 record, and only that. */
static void test_peer_copies_are_memcpy2_records(void **state)
{
    CUcontext ctx0 = *state, ctx1;
    CUdevice dev1;
    ok_cu(cuDeviceGet(&dev1, 1));
    ok_cu(cuDevicePrimaryCtxRetain(&ctx1, dev1));
    CUdeviceptr a, b;
    ok_cu(cuMemAlloc(&a, BYTES));
    ok_cu(cuCtxSetCurrent(ctx1));
    ok_cu(cuMemAlloc(&b, BYTES));
    ok_cu(cuCtxSetCurrent(ctx0));
    start_tracing();
    ok_cu(cuMemcpyPeer(b, ctx1, a, ctx0, BYTES));
    stop_tracing();
    struct test_record r;
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_MEMCPY, &r, 1), 0);
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_MEMCPY2, &r, 1), 1);
    const CUpti_ActivityMemcpyPtoP4 *p = &r.r.peer;
    assert_int_equal(p->copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
    assert_int_equal(p->bytes, BYTES);
    assert_int_equal(p->end - p->start, PEER_NS);
    assert_int_equal(p->srcDeviceId, 0);
    assert_int_equal(p->dstDeviceId, 1);
    uint32_t id0, id1;
    ok_cupti(cuptiGetContextId(ctx0, &id0));
    ok_cupti(cuptiGetContextId(ctx1, &id1));
    assert_int_equal(p->srcContextId, id0);
    assert_int_equal(p->dstContextId, id1);
    assert_int_equal(p->correlationId,
                     call_id(CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer, CUPTI_API_ENTER, 0));
    ok_cu(cuMemFree(a));
    ok_cu(cuCtxSetCurrent(ctx1));
    ok_cu(cuMemFree(b));
    ok_cu(cuCtxSetCurrent(ctx0));
    ok_cu(cuDevicePrimaryCtxRelease(dev1));
}

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* CUPTI's clock is CLOCK_REALTIME-based, not the driver's CLOCK_MONOTONIC:
 * a client must map it. cuptiGetTimestamp reads the same clock. */
static void test_records_use_the_cupti_clock(void **state)
{
    (void)state;
    start_tracing();
    uint64_t before, after;
    ok_cupti(cuptiGetTimestamp(&before));
    launch1(busy, NULL);
    ok_cu(cuCtxSynchronize());
    ok_cupti(cuptiGetTimestamp(&after));
    stop_tracing();
    uint64_t real = realtime_ns();
    assert_true(before <= real + 1000000 && real - before < 10000000000ULL);
    assert_true(before > test_now_ns() + 1000000000ULL); /* not the monotonic clock */
    struct test_record k, api;
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, &k, 1), 1);
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_DRIVER, &api, 1), 1);
    assert_true(before <= api.r.api.start && api.r.api.end <= k.r.kernel.end);
    assert_true(k.r.kernel.start >= api.r.api.start && k.r.kernel.end <= after);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_correlation_ids_match),
        cmocka_unit_test(test_kernel_record),
        cmocka_unit_test(test_copy_and_memset_records),
        cmocka_unit_test(test_peer_copies_are_memcpy2_records),
        cmocka_unit_test(test_records_use_the_cupti_clock),
    };
    return cmocka_run_group_tests(tests, setup, teardown_primary);
}
