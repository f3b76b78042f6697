/* Many threads at once: 8 threads x 50,000 zero-duration launches on their
 * own streams all complete and are counted, while other threads record
 * and query events and use the legacy stream. (Speed is measured by the
 * benchmark, not here.) GPUTRACE_EMU_KERNEL_NS=*=0. */
#include "emu_test.h"

#include <pthread.h>
#include <stdatomic.h>

#define THREADS 8
#define LAUNCHES 50000

static CUcontext ctx;
static CUfunction kernel;
static atomic_int failures;

static void *launcher(void *arg)
{
    (void)arg;
    CUstream s;
    if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS || cuStreamCreate(&s, 0) != CUDA_SUCCESS) {
        atomic_fetch_add(&failures, 1);
        return NULL;
    }
    for (int i = 0; i < LAUNCHES; i++)
        if (cuLaunchKernel(kernel, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL) != CUDA_SUCCESS)
            atomic_fetch_add(&failures, 1);
    if (cuStreamSynchronize(s) != CUDA_SUCCESS || cuStreamDestroy(s) != CUDA_SUCCESS)
        atomic_fetch_add(&failures, 1);
    return NULL;
}

/* Events recorded on a stream and on the legacy stream, read back at once. */
static void *recorder(void *arg)
{
    (void)arg;
    CUstream s;
    CUevent a, b;
    if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS || cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) ||
        cuEventCreate(&a, 0) || cuEventCreate(&b, 0)) {
        atomic_fetch_add(&failures, 1);
        return NULL;
    }
    for (int i = 0; i < 2000; i++) {
        CUstream on = i % 2 ? s : NULL;
        float ms = -1;
        if (cuEventRecord(a, on) || cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, on, NULL, NULL) ||
            cuEventRecord(b, on) || cuEventSynchronize(b) || cuEventElapsedTime(&ms, a, b))
            atomic_fetch_add(&failures, 1);
        /* Exactly the kernel's 0 ns on the non-blocking stream; the legacy
         * stream's stop also waits for the other threads' work. */
        if (on ? ms != 0.0f : ms < 0.0f) atomic_fetch_add(&failures, 1);
        cuEventQuery(a);
    }
    cuEventDestroy(a);
    cuEventDestroy(b);
    cuStreamDestroy(s);
    return NULL;
}

static void test_many_threads(void **state)
{
    ctx = *state;
    kernel = load_test_function("quick");
    gtemu_reset();
    pthread_t launchers[THREADS], recorders[2];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&launchers[i], NULL, launcher, NULL), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&recorders[i], NULL, recorder, NULL), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(launchers[i], NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(recorders[i], NULL);
    ok_cu(cuCtxSynchronize());
    assert_int_equal(atomic_load(&failures), 0);
    assert_int_equal(gtemu_launches(), (uint64_t)THREADS * LAUNCHES + 2 * 2000);
    assert_int_equal(gtemu_event_records(), 2 * 2 * 2000);
    assert_int_equal(gtemu_capture_event_records(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_many_threads)};
    return cmocka_run_group_tests(tests, setup_primary, teardown_primary);
}
