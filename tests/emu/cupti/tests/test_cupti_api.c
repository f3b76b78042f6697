/* The rules of the API itself: version and result names, one subscriber
 * per process, callback switches, correlation ids only with API tracing on,
 * API records per function, thread ids, cuptiFinalize, and a client's
 * timestamp callback (last: it cannot be taken back). */
#include "cupti_test.h"

#include <unistd.h>

TEST_CLIENT_DEFINE;

static CUfunction quick;

static int setup(void **state)
{
    if (setup_primary(state) != 0) return -1;
    quick = load_test_function("quick");
    return 0;
}

static void CUPTIAPI ignore_call(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)userdata, (void)domain, (void)cbid, (void)data;
}

static void test_version_and_result_names(void **state)
{
    (void)state;
    uint32_t version = 0;
    ok_cupti(cuptiGetVersion(&version));
    assert_int_equal(version, CUPTI_API_VERSION);
    const char *name = NULL;
    ok_cupti(cuptiGetResultString(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, &name));
    assert_string_equal(name, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
    ok_cupti(cuptiGetResultString(CUPTI_SUCCESS, &name));
    assert_string_equal(name, "CUPTI_SUCCESS");
    expect_cupti(CUPTI_ERROR_INVALID_PARAMETER, cuptiGetResultString((CUptiResult)12345, &name));
    expect_cupti(CUPTI_ERROR_INVALID_PARAMETER, cuptiGetVersion(NULL));
}

static void test_one_subscriber_per_process(void **state)
{
    (void)state;
    CUpti_SubscriberHandle first, second;
    CUpti_SubscriberParams named = {.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
                                    .subscriberName = "first"};
    ok_cupti(cuptiSubscribe_v2(&first, ignore_call, NULL, &named));
    expect_cupti(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
                 cuptiSubscribe(&second, ignore_call, NULL));
    char old[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = "";
    CUpti_SubscriberParams asking = {.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
                                     .oldSubscriberName = old,
                                     .oldSubscriberSize = sizeof old};
    expect_cupti(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
                 cuptiSubscribe_v2(&second, ignore_call, NULL, &asking));
    assert_string_equal(old, "CUPTI for first");
    ok_cupti(cuptiUnsubscribe(first));
    expect_cupti(CUPTI_ERROR_INVALID_PARAMETER, cuptiUnsubscribe(first));
    ok_cupti(cuptiSubscribe(&second, ignore_call, NULL));
    ok_cupti(cuptiUnsubscribe(second));
    CUpti_SubscriberParams unsized = {0};
    expect_cupti(CUPTI_ERROR_INVALID_PARAMETER,
                 cuptiSubscribe_v2(&second, ignore_call, NULL, &unsized));
}

static void test_callback_switches(void **state)
{
    (void)state;
    CUpti_SubscriberHandle sub;
    uint32_t on = 7;
    ok_cupti(cuptiSubscribe(&sub, ignore_call, NULL));
    ok_cupti(cuptiGetCallbackState(&on, sub, CUPTI_CB_DOMAIN_DRIVER_API,
                                   CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
    assert_int_equal(on, 0);
    ok_cupti(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
                                 CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
    ok_cupti(cuptiGetCallbackState(&on, sub, CUPTI_CB_DOMAIN_DRIVER_API,
                                   CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
    assert_int_equal(on, 1);
    ok_cupti(cuptiEnableAllDomains(1, sub));
    ok_cupti(cuptiGetCallbackState(&on, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
                                   CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020));
    assert_int_equal(on, 1);
    ok_cupti(cuptiEnableDomain(0, sub, CUPTI_CB_DOMAIN_RUNTIME_API));
    ok_cupti(cuptiGetCallbackState(&on, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
                                   CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020));
    assert_int_equal(on, 0);
    expect_cupti(
        CUPTI_ERROR_INVALID_PARAMETER,
        cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE));
    expect_cupti(CUPTI_ERROR_INVALID_PARAMETER,
                 cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_INVALID, 1));
    expect_cupti(CUPTI_ERROR_INVALID_PARAMETER,
                 cuptiGetCallbackState(NULL, sub, CUPTI_CB_DOMAIN_DRIVER_API, 1));
    ok_cupti(cuptiUnsubscribe(sub));
    expect_cupti(CUPTI_ERROR_INVALID_PARAMETER,
                 cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, 1));
}

/* Without API records or callbacks, calls get no correlation id; API
 * records per function come only for the functions switched on. */
static void test_correlation_ids_need_api_tracing(void **state)
{
    (void)state;
    CUdeviceptr d;
    ok_cu(cuMemAlloc(&d, 64));
    test_client_start(1 << 20);
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    launch1(quick, NULL);
    ok_cupti(cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 1));
    launch1(quick, NULL);
    ok_cu(cuMemsetD8(d, 0, 64));
    ok_cu(cuCtxSynchronize());
    test_flush();
    ok_cupti(cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 0));
    ok_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    struct test_record k[2], api[2];
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k, 2), 2);
    assert_int_equal(k[0].r.kernel.correlationId, 0);
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_DRIVER, api, 2), 1);
    assert_int_equal(api[0].r.api.cbid, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
    assert_true(k[1].r.kernel.correlationId != 0);
    assert_int_equal(k[1].r.kernel.correlationId, api[0].r.api.correlationId);
    expect_cupti(CUPTI_ERROR_INVALID_PARAMETER,
                 cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_SIZE, 1));
    expect_cupti(CUPTI_ERROR_INVALID_KIND, cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2));
    ok_cu(cuMemFree(d));
}

static uint32_t api_thread_id(void)
{
    test_client_start(1 << 20);
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
    launch1(quick, NULL);
    test_flush();
    ok_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER));
    struct test_record api;
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_DRIVER, &api, 1), 1);
    assert_int_equal(api.r.api.processId, (uint32_t)getpid());
    return api.r.api.threadId;
}

static void test_thread_id_types(void **state)
{
    (void)state;
    CUpti_ActivityThreadIdType type;
    ok_cupti(cuptiGetThreadIdType(&type));
    assert_int_equal(type, CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT);
    assert_int_equal(api_thread_id(), (uint32_t)pthread_self());
    ok_cupti(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM));
    assert_int_equal(api_thread_id(), (uint32_t)gettid());
    ok_cupti(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT));
    expect_cupti(CUPTI_ERROR_INVALID_PARAMETER,
                 cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SIZE));
}

/* cuptiFinalize detaches: the subscriber, the kinds enabled and the buffer
 * callbacks are gone; the next call sets CUPTI up again. */
static void test_finalize(void **state)
{
    (void)state;
    CUpti_SubscriberHandle sub;
    test_client_start(1 << 20);
    ok_cupti(cuptiSubscribe(&sub, ignore_call, NULL));
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    ok_cupti(cuptiFinalize());
    expect_cupti(CUPTI_ERROR_INVALID_OPERATION, cuptiActivityFlushAll(0));
    test_client_start(1 << 20);
    launch1(quick, NULL);
    ok_cu(cuCtxSynchronize());
    test_flush();
    struct test_record k;
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, &k, 1), 0);
    ok_cupti(cuptiSubscribe(&sub, ignore_call, NULL));
    ok_cupti(cuptiUnsubscribe(sub));
}

static _Atomic uint64_t fake_calls;

/* A clock of the client's: a second past CLOCK_MONOTONIC. */
static uint64_t CUPTIAPI fake_clock(void)
{
    fake_calls++;
    return test_now_ns() + 1000000000ULL;
}

static void test_timestamp_callback(void **state)
{
    (void)state;
    ok_cupti(cuptiActivityRegisterTimestampCallback(fake_clock));
    expect_cupti(CUPTI_ERROR_INVALID_PARAMETER, cuptiActivityRegisterTimestampCallback(NULL));
    test_client_start(1 << 20);
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
    uint64_t before = fake_clock();
    launch1(quick, NULL);
    ok_cu(cuCtxSynchronize());
    uint64_t after = fake_clock();
    test_flush();
    ok_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    ok_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER));
    uint64_t now;
    ok_cupti(cuptiGetTimestamp(&now));
    assert_true(now >= after && now - after < 1000000000ULL);
    struct test_record k, api;
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, &k, 1), 1);
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_DRIVER, &api, 1), 1);
    assert_true(before <= api.r.api.start && api.r.api.end <= after);
    /* GPU times are mapped onto the client's clock. */
    assert_true(before <= k.r.kernel.start && k.r.kernel.end <= after + 100000);
    assert_true(fake_calls > 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_and_result_names),
        cmocka_unit_test(test_one_subscriber_per_process),
        cmocka_unit_test(test_callback_switches),
        cmocka_unit_test(test_correlation_ids_need_api_tracing),
        cmocka_unit_test(test_thread_id_types),
        cmocka_unit_test(test_finalize),
        cmocka_unit_test(test_timestamp_callback),
    };
    return cmocka_run_group_tests(tests, setup, teardown_primary);
}
