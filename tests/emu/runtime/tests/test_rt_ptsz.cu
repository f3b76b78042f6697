// Built with nvcc --default-stream per-thread -cudart shared, so every call on stream
// 0 uses the runtime's _ptsz/_ptds entry points: each thread's default stream is its
// own, and does not wait for the others (GPUTRACE_EMU_KERNEL_NS: busy=300000000).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

// cmocka.h declares C functions without C++ linkage guards.
extern "C" {
#include <cmocka.h>
}

#define assert_cuda(call) assert_int_equal((call), cudaSuccess)

__global__ void busy(int *p)
{
    if (p != nullptr) *p = 1;
}

static void *query_own_default_stream(void *arg)
{
    *(cudaError_t *)arg = cudaStreamQuery(0);
    return nullptr;
}

static void test_default_stream_is_per_thread(void **)
{
    busy<<<1, 1>>>(nullptr);
    assert_int_equal(cudaStreamQuery(0), cudaErrorNotReady);
    cudaError_t other = cudaErrorUnknown;
    pthread_t t;
    assert_int_equal(pthread_create(&t, nullptr, query_own_default_stream, &other), 0);
    pthread_join(t, nullptr);
    assert_int_equal(other, cudaSuccess);
    assert_int_equal(cudaStreamQuery(0), cudaErrorNotReady);
    assert_cuda(cudaStreamSynchronize(0));
    assert_cuda(cudaStreamQuery(0));
}

static void test_copies_and_memsets_on_the_per_thread_stream(void **)
{
    unsigned char host[256], back[256];
    for (int i = 0; i < 256; i++)
        host[i] = (unsigned char)i;
    void *d;
    assert_cuda(cudaMalloc(&d, sizeof(host)));
    assert_cuda(cudaMemcpy(d, host, sizeof(host), cudaMemcpyHostToDevice));
    assert_cuda(cudaMemcpyAsync(back, d, sizeof(back), cudaMemcpyDeviceToHost, 0));
    assert_cuda(cudaStreamSynchronize(0));
    assert_memory_equal(host, back, sizeof(host));
    assert_cuda(cudaMemsetAsync(d, 9, sizeof(host), 0));
    assert_cuda(cudaMemcpy(back, d, sizeof(back), cudaMemcpyDeviceToHost));
    for (int i = 0; i < 256; i++)
        assert_int_equal(back[i], 9);
    assert_cuda(cudaFree(d));
}

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_stream_is_per_thread),
        cmocka_unit_test(test_copies_and_memsets_on_the_per_thread_stream),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
