/* Helpers for the C runtime tests (see rt_test.h). */
#include "rt_test.h"

#include <math.h>

#include "rt_test_fatbin.h"

const struct rt_test_bytes rt_test_image = {rt_test_fatbin, sizeof(rt_test_fatbin)};

void rt_test_load(struct rt_test_library *lib)
{
    assert_cuda(cudaLibraryLoadData(&lib->library, rt_test_fatbin, NULL, NULL, 0, NULL, NULL, 0));
    assert_cuda(cudaLibraryGetKernel(&lib->short_kernel, lib->library, "rt_short"));
    assert_cuda(cudaLibraryGetKernel(&lib->long_kernel, lib->library, "rt_long"));
    assert_cuda(cudaLibraryGetKernel(&lib->busy_kernel, lib->library, "rt_busy"));
}

void rt_test_unload(struct rt_test_library *lib)
{
    assert_cuda(cudaLibraryUnload(lib->library));
}

cudaError_t rt_test_launch(cudaKernel_t kernel, cudaStream_t stream)
{
    int *none = NULL;
    void *args[] = {&none};
    dim3 one = {1, 1, 1};
    return cudaLaunchKernel((const void *)kernel, one, one, args, 0, stream);
}

float rt_test_elapsed_ms(cudaEvent_t start, cudaEvent_t stop)
{
    float ms = -1.0f;
    assert_cuda(cudaEventSynchronize(stop));
    assert_cuda(cudaEventElapsedTime(&ms, start, stop));
    return ms;
}

void rt_test_assert_duration(float ms, unsigned long long ns)
{
    double measured_ns = (double)ms * 1e6;
    if (fabs(measured_ns - (double)ns) > 1000.0)
        fail_msg("elapsed %.0f ns, expected %llu ns within 1 us", measured_ns, ns);
}
