/* Shared by the C runtime tests: cmocka, the test fat binary and its kernels. */
#ifndef RT_TEST_H
#define RT_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cuda_runtime_api.h>

/* Simulated durations set for the tests in GPUTRACE_EMU_KERNEL_NS. */
#define RT_SHORT_NS 200000ull
#define RT_LONG_NS 3000000ull

#define assert_cuda(call) assert_int_equal((call), cudaSuccess)

/* The test fat binary (rt_test_kernels.cu) with its kernels rt_short, rt_long and
 * rt_busy. */
struct rt_test_library {
    cudaLibrary_t library;
    cudaKernel_t short_kernel, long_kernel, busy_kernel;
};

/* The fat binary's bytes, for tests that load it from a file. */
struct rt_test_bytes {
    const void *data;
    size_t size;
};
extern const struct rt_test_bytes rt_test_image;

void rt_test_load(struct rt_test_library *lib);
void rt_test_unload(struct rt_test_library *lib);
/* Launches `kernel` (1 block of 1 thread, a NULL argument) on `stream`. */
cudaError_t rt_test_launch(cudaKernel_t kernel, cudaStream_t stream);
/* Milliseconds between two recorded, completed events. */
float rt_test_elapsed_ms(cudaEvent_t start, cudaEvent_t stop);
/* Asserts that `ms` is `ns` nanoseconds within 1 us. */
void rt_test_assert_duration(float ms, unsigned long long ns);

#endif
