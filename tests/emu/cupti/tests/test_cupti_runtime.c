/* Runtime calls on the emulated runtime: the runtime call and the driver
 * call it makes each get a callback and an API record with its own
 * correlation id, and the work carries the runtime call's, as on a GPU.
 * Configuration (CMakeLists.txt): GPUTRACE_EMU_KERNEL_NS=busy=2000000,*=1000. */
#include "cupti_test.h"

#include <cuda_runtime_api.h>

TEST_CLIENT_DEFINE;

#define BYTES 4096

static struct seen_call {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
    CUpti_ApiCallbackSite site;
    uint32_t correlation;
    const char *function;
    char symbol[64];
    bool has_context;
    unsigned grid_x; /* cudaLaunchKernel's functionParams */
} calls[64];
static size_t n_calls;

static void CUPTIAPI on_call(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                             const void *data)
{
    (void)userdata;
    const CUpti_CallbackData *cb = data;
    if (n_calls == 64) return;
    struct seen_call *c = &calls[n_calls++];
    *c = (struct seen_call){.domain = domain,
                            .cbid = cbid,
                            .site = cb->callbackSite,
                            .correlation = cb->correlationId,
                            .function = cb->functionName,
                            .has_context = cb->context != NULL};
    snprintf(c->symbol, sizeof c->symbol, "%s", cb->symbolName ? cb->symbolName : "");
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
        cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
        c->grid_x = ((const cudaLaunchKernel_v7000_params *)cb->functionParams)->gridDim.x;
}

static const struct seen_call *find_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                         CUpti_ApiCallbackSite site)
{
    for (size_t i = 0; i < n_calls; i++)
        if (calls[i].domain == domain && calls[i].cbid == cbid && calls[i].site == site)
            return &calls[i];
    fail_msg("no callback %d/%u", (int)domain, cbid);
    return NULL;
}

static CUpti_SubscriberHandle subscriber;
static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                           CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_DRIVER,
                                           CUPTI_ACTIVITY_KIND_RUNTIME};

static int setup(void **state)
{
    (void)state;
    return cudaSetDevice(0) == cudaSuccess ? 0 : -1;
}

static void start_tracing(void)
{
    n_calls = 0;
    test_client_start(1 << 20);
    ok_cupti(cuptiSubscribe(&subscriber, on_call, NULL));
    ok_cupti(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API));
    ok_cupti(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API));
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        ok_cupti(cuptiActivityEnable(kinds[i]));
}

static void stop_tracing(void)
{
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    test_flush();
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        ok_cupti(cuptiActivityDisable(kinds[i]));
    ok_cupti(cuptiUnsubscribe(subscriber));
}

static void test_runtime_launch_carries_the_runtime_id(void **state)
{
    (void)state;
    cudaLibrary_t lib;
    cudaKernel_t kernel;
    assert_int_equal(cudaLibraryLoadData(&lib, gtemu_test_ptx, NULL, NULL, 0, NULL, NULL, 0),
                     cudaSuccess);
    assert_int_equal(cudaLibraryGetKernel(&kernel, lib, "_Z4busyPfi"), cudaSuccess);
    start_tracing();
    assert_int_equal(
        cudaLaunchKernel((const void *)kernel, (dim3){3, 1, 1}, (dim3){32, 1, 1}, NULL, 0, NULL),
        cudaSuccess);
    stop_tracing();

    const struct seen_call *rt =
        find_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                  CUPTI_API_ENTER);
    const struct seen_call *drv = find_call(
        CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER);
    assert_string_equal(rt->function, "cudaLaunchKernel_v7000");
    assert_string_equal(rt->symbol, "_Z4busyPfi");
    assert_int_equal(rt->grid_x, 3);
    assert_string_equal(drv->function, "cuLaunchKernel");
    assert_true(rt->correlation > 0 && drv->correlation > rt->correlation);
    /* The runtime bound the device's context before it launched. */
    assert_true(find_call(CUPTI_CB_DOMAIN_RUNTIME_API,
                          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_EXIT)
                    ->has_context);

    struct test_record k, rt_api, drv_api;
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, &k, 1), 1);
    assert_int_equal(k.r.kernel.correlationId, rt->correlation);
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_RUNTIME, &rt_api, 1), 1);
    assert_int_equal(rt_api.r.api.correlationId, rt->correlation);
    assert_int_equal(rt_api.r.api.cbid, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_DRIVER, &drv_api, 1), 1);
    assert_int_equal(drv_api.r.api.correlationId, drv->correlation);
    /* The driver call lies inside the runtime call. */
    assert_true(rt_api.r.api.start <= drv_api.r.api.start && drv_api.r.api.end <= rt_api.r.api.end);
    assert_int_equal(cudaLibraryUnload(lib), cudaSuccess);
}

static void test_runtime_copy_carries_the_runtime_id(void **state)
{
    (void)state;
    void *dev;
    char host[BYTES] = {0};
    assert_int_equal(cudaMalloc(&dev, BYTES), cudaSuccess);
    start_tracing();
    assert_int_equal(cudaMemcpy(dev, host, BYTES, cudaMemcpyHostToDevice), cudaSuccess);
    stop_tracing();
    const struct seen_call *rt = find_call(
        CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, CUPTI_API_ENTER);
    struct test_record m;
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_MEMCPY, &m, 1), 1);
    assert_int_equal(m.r.memcpy.correlationId, rt->correlation);
    assert_int_equal(m.r.memcpy.copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    assert_int_equal(m.r.memcpy.bytes, BYTES);
    assert_int_equal(cudaFree(dev), cudaSuccess);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runtime_launch_carries_the_runtime_id),
        cmocka_unit_test(test_runtime_copy_carries_the_runtime_id),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
