// Runtime tests of the nvcc glue, built with nvcc -cudart shared: <<<>>> launches
// through __cudaGetKernel/__cudaLaunchKernel, registered kernels and variables,
// symbols, and event times around <<<>>> launches against GPUTRACE_EMU_KERNEL_NS
// (glue_short=250000, ns::tk<int>=700000, ns::tk<float>=1100000).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmath>
#include <cstring>

// cmocka.h declares C functions without C++ linkage guards.
extern "C" {
#include <cmocka.h>
}

#define assert_cuda(call) assert_int_equal((call), cudaSuccess)

static const unsigned long long short_ns = 250000, tk_int_ns = 700000, tk_float_ns = 1100000;

__global__ void glue_short(int *p)
{
    if (p != nullptr) *p = 1;
}

namespace ns
{
template <typename T> __global__ void tk(T *p, T v)
{
    if (p != nullptr) *p = v;
}
} // namespace ns

__constant__ int table[16];
__device__ float values[8];
static int not_registered;

static void assert_duration(cudaEvent_t start, cudaEvent_t stop, unsigned long long ns)
{
    float ms = -1.0f;
    assert_cuda(cudaEventSynchronize(stop));
    assert_cuda(cudaEventElapsedTime(&ms, start, stop));
    double measured = (double)ms * 1e6;
    if (std::fabs(measured - (double)ns) > 1000.0)
        fail_msg("elapsed %.0f ns, expected %llu ns within 1 us", measured, ns);
}

struct timer {
    cudaStream_t s;
    cudaEvent_t start, stop;
    timer()
    {
        assert_cuda(cudaStreamCreate(&s));
        assert_cuda(cudaEventCreate(&start));
        assert_cuda(cudaEventCreate(&stop));
    }
    ~timer()
    {
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        cudaStreamDestroy(s);
    }
};

static void test_chevron_launch_times(void **)
{
    timer t;
    assert_cuda(cudaEventRecord(t.start, t.s));
    glue_short<<<4, 128, 0, t.s>>>(nullptr);
    assert_cuda(cudaEventRecord(t.stop, t.s));
    assert_duration(t.start, t.stop, short_ns);

    assert_cuda(cudaEventRecord(t.start, t.s));
    ns::tk<int><<<1, 32, 0, t.s>>>(nullptr, 3);
    assert_cuda(cudaEventRecord(t.stop, t.s));
    assert_duration(t.start, t.stop, tk_int_ns);

    assert_cuda(cudaEventRecord(t.start, t.s));
    ns::tk<float><<<1, 32, 0, t.s>>>(nullptr, 1.5f);
    ns::tk<int><<<1, 32, 0, t.s>>>(nullptr, 4);
    glue_short<<<1, 1, 0, t.s>>>(nullptr);
    assert_cuda(cudaEventRecord(t.stop, t.s));
    assert_duration(t.start, t.stop, tk_float_ns + tk_int_ns + short_ns);
    assert_cuda(cudaGetLastError());
}

static void test_kernel_handles_and_launch_paths(void **)
{
    cudaKernel_t k = nullptr;
    assert_cuda(cudaGetKernel(&k, (const void *)glue_short));
    assert_non_null(k);
    cudaKernel_t none_such = nullptr;
    assert_int_equal(cudaGetKernel(&none_such, (const void *)&not_registered),
                     cudaErrorInvalidDeviceFunction);
    cudaGetLastError();

    timer t;
    int *none = nullptr;
    void *args[] = {&none};
    // A registered host stub and the kernel handle launch the same kernel.
    assert_cuda(cudaEventRecord(t.start, t.s));
    assert_cuda(cudaLaunchKernel((const void *)glue_short, dim3(1), dim3(32), args, 0, t.s));
    assert_cuda(cudaLaunchKernel((const void *)k, dim3(1), dim3(32), args, 0, t.s));
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(2);
    config.blockDim = dim3(64);
    config.stream = t.s;
    assert_cuda(cudaLaunchKernelExC(&config, (const void *)glue_short, args));
    assert_cuda(cudaEventRecord(t.stop, t.s));
    assert_duration(t.start, t.stop, 3 * short_ns);
}

static void test_chevron_launch_errors(void **)
{
    assert_cuda(cudaGetLastError());
    glue_short<<<1, 2048>>>(nullptr);
    assert_int_equal(cudaPeekAtLastError(), cudaErrorInvalidConfiguration);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidConfiguration);
    ns::tk<int><<<dim3(0), 1>>>(nullptr, 0);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidConfiguration);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
}

static void test_symbols(void **)
{
    int in[16], out[16];
    for (int i = 0; i < 16; i++)
        in[i] = i * i;
    assert_cuda(cudaMemcpyToSymbol(table, in, sizeof(in)));
    assert_cuda(cudaMemcpyFromSymbol(out, table, sizeof(out)));
    assert_memory_equal(in, out, sizeof(in));
    int patch[2] = {-1, -2};
    assert_cuda(cudaMemcpyToSymbol(table, patch, sizeof(patch), 4 * sizeof(int)));
    assert_cuda(cudaMemcpyFromSymbol(out, table, sizeof(out)));
    assert_int_equal(out[4], -1);
    assert_int_equal(out[5], -2);
    assert_int_equal(out[6], 36);

    size_t size = 0;
    void *address = nullptr;
    assert_cuda(cudaGetSymbolSize(&size, values));
    assert_int_equal(size, sizeof(float) * 8);
    assert_cuda(cudaGetSymbolAddress(&address, values));
    float f[8] = {1, 2, 3, 4, 5, 6, 7, 8}, g[8] = {};
    cudaStream_t s;
    assert_cuda(cudaStreamCreate(&s));
    assert_cuda(cudaMemcpyToSymbolAsync(values, f, sizeof(f), 0, cudaMemcpyHostToDevice, s));
    assert_cuda(cudaStreamSynchronize(s));
    assert_cuda(cudaMemcpy(g, address, sizeof(g), cudaMemcpyDeviceToHost));
    assert_memory_equal(f, g, sizeof(f));
    memset(g, 0, sizeof(g));
    assert_cuda(cudaMemcpyFromSymbolAsync(g, values, sizeof(g), 0, cudaMemcpyDeviceToHost, s));
    assert_cuda(cudaStreamSynchronize(s));
    assert_memory_equal(f, g, sizeof(f));
    assert_cuda(cudaStreamDestroy(s));

    assert_int_equal(cudaMemcpyToSymbol(table, in, sizeof(in), sizeof(int)), cudaErrorInvalidValue);
    assert_int_equal(cudaMemcpyToSymbol(not_registered, in, sizeof(int)), cudaErrorInvalidSymbol);
    assert_int_equal(cudaMemcpyToSymbol(table, in, sizeof(int), 0, cudaMemcpyDeviceToHost),
                     cudaErrorInvalidMemcpyDirection);
    assert_int_equal(cudaMemcpyFromSymbol(out, table, sizeof(int), 0, cudaMemcpyHostToDevice),
                     cudaErrorInvalidMemcpyDirection);
    assert_int_equal(cudaGetSymbolAddress(&address, not_registered), cudaErrorInvalidSymbol);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidSymbol);
}

static void test_registered_kernels_survive_device_reset(void **)
{
    assert_cuda(cudaDeviceReset());
    timer t;
    assert_cuda(cudaEventRecord(t.start, t.s));
    ns::tk<int><<<1, 1, 0, t.s>>>(nullptr, 1);
    assert_cuda(cudaEventRecord(t.stop, t.s));
    assert_duration(t.start, t.stop, tk_int_ns);
    int in[16] = {7};
    assert_cuda(cudaMemcpyToSymbol(table, in, sizeof(in)));
}

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chevron_launch_times),
        cmocka_unit_test(test_kernel_handles_and_launch_paths),
        cmocka_unit_test(test_chevron_launch_errors),
        cmocka_unit_test(test_symbols),
        cmocka_unit_test(test_registered_kernels_survive_device_reset),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
