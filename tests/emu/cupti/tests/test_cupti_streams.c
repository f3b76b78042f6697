/* Stream ids: each thread's per-thread default stream has its own, distinct
 * from the legacy default stream's, and records carry the id
 * cuptiGetStreamIdEx gives for the stream the work ran on. */
#include "cupti_test.h"

TEST_CLIENT_DEFINE;

#define THREADS 3

static CUfunction quick;
static CUcontext ctx;

struct thread_result {
    uint32_t stream_id;
};

static void *per_thread_launch(void *arg)
{
    struct thread_result *r = arg;
    if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS) return NULL;
    if (cuLaunchKernel(quick, 1, 1, 1, 32, 1, 1, 0, CU_STREAM_PER_THREAD, NULL, NULL) !=
        CUDA_SUCCESS)
        return NULL;
    cuStreamSynchronize(CU_STREAM_PER_THREAD);
    if (cuptiGetStreamIdEx(ctx, NULL, 1, &r->stream_id) != CUPTI_SUCCESS) r->stream_id = 0;
    return NULL;
}

static int setup(void **state)
{
    if (setup_primary(state) != 0) return -1;
    ctx = *state;
    quick = load_test_function("quick");
    return 0;
}

static void test_per_thread_default_streams_are_distinct(void **state)
{
    (void)state;
    test_client_start(1 << 20);
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    pthread_t threads[THREADS];
    struct thread_result results[THREADS] = {{0}};
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, per_thread_launch, &results[i]), 0);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    launch1(quick, NULL);
    ok_cu(cuCtxSynchronize());
    test_flush();
    ok_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));

    uint32_t legacy, legacy_again;
    ok_cupti(cuptiGetStreamIdEx(ctx, NULL, 0, &legacy));
    ok_cupti(cuptiGetStreamIdEx(NULL, CU_STREAM_LEGACY, 0, &legacy_again));
    assert_int_equal(legacy, legacy_again);
    struct test_record k[THREADS + 2];
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k, THREADS + 2),
                     THREADS + 1);
    for (int i = 0; i < THREADS; i++) {
        assert_true(results[i].stream_id != 0 && results[i].stream_id != legacy);
        for (int j = 0; j < i; j++)
            assert_true(results[i].stream_id != results[j].stream_id);
        int found = 0;
        for (int r = 0; r < THREADS + 1; r++)
            found += k[r].r.kernel.streamId == results[i].stream_id;
        assert_int_equal(found, 1);
    }
    int on_legacy = 0;
    for (int r = 0; r < THREADS + 1; r++)
        on_legacy += k[r].r.kernel.streamId == legacy;
    assert_int_equal(on_legacy, 1);
}

static void test_stream_ids_are_checked(void **state)
{
    (void)state;
    CUstream s;
    uint32_t id, id_ex;
    ok_cu(cuStreamCreate(&s, 0));
    ok_cupti(cuptiGetStreamId(NULL, s, &id));
    ok_cupti(cuptiGetStreamIdEx(ctx, s, 0, &id_ex));
    assert_int_equal(id, id_ex);
    expect_cupti(CUPTI_ERROR_INVALID_PARAMETER, cuptiGetStreamIdEx(ctx, s, 0, NULL));
    /* A stream of another context is not this context's. */
    CUcontext other;
    CUdevice dev1;
    ok_cu(cuDeviceGet(&dev1, 1));
    ok_cu(cuDevicePrimaryCtxRetain(&other, dev1));
    expect_cupti(CUPTI_ERROR_INVALID_STREAM, cuptiGetStreamIdEx(other, s, 0, &id));
    ok_cu(cuStreamDestroy(s));
    expect_cupti(CUPTI_ERROR_INVALID_STREAM, cuptiGetStreamIdEx(NULL, s, 0, &id));
    uint32_t dev_id;
    ok_cupti(cuptiGetDeviceId(other, &dev_id));
    assert_int_equal(dev_id, 1);
    ok_cupti(cuptiGetDeviceId(NULL, &dev_id)); /* the current context's */
    assert_int_equal(dev_id, 0);
    expect_cupti(CUPTI_ERROR_INVALID_CONTEXT, cuptiGetContextId(NULL, &id));
    ok_cu(cuDevicePrimaryCtxRelease(dev1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_per_thread_default_streams_are_distinct),
        cmocka_unit_test(test_stream_ids_are_checked),
    };
    return cmocka_run_group_tests(tests, setup, teardown_primary);
}
