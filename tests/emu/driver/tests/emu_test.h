/* Helpers shared by the emulated driver's tests (cmocka). */
#ifndef GTEMU_TEST_H
#define GTEMU_TEST_H

#include <cuda.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <cmocka.h>

#include "gtemu.h"

/* Fails the test with both error names unless `call` returns `expected`. */
#define expect_cu(expected, call)                                                                  \
    do {                                                                                           \
        CUresult got_ = (call);                                                                    \
        CUresult want_ = (expected);                                                               \
        if (got_ != want_) {                                                                       \
            const char *g_ = "?", *w_ = "?";                                                       \
            cuGetErrorName(got_, &g_);                                                             \
            cuGetErrorName(want_, &w_);                                                            \
            fail_msg("%s returned %s (%d), expected %s (%d)", #call, g_, (int)got_, w_,            \
                     (int)want_);                                                                  \
        }                                                                                          \
    } while (0)

#define ok_cu(call) expect_cu(CUDA_SUCCESS, call)

static inline uint64_t test_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Elapsed time between two completed events, in ns. */
static inline double elapsed_ns(CUevent a, CUevent b)
{
    float ms = -1;
    ok_cu(cuEventElapsedTime_v2(&ms, a, b));
    return (double)ms * 1e6;
}

/* The elapsed time must equal `expected_ns` within 1 us (plus the float
 * rounding of a millisecond count). */
#define assert_elapsed(a, b, expected_ns)                                                          \
    do {                                                                                           \
        double got_ = elapsed_ns((a), (b));                                                        \
        double want_ = (double)(expected_ns);                                                      \
        double tol_ = 1000.0 + want_ * 1e-6;                                                       \
        if (got_ < want_ - tol_ || got_ > want_ + tol_)                                            \
            fail_msg("elapsed %.1f ns, expected %.1f ns (+-%.1f)", got_, want_, tol_);             \
    } while (0)

/* cuInit and a current primary context on device 0. */
static inline int setup_primary(void **state)
{
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        return -1;
    *state = ctx;
    return 0;
}

static inline int teardown_primary(void **state)
{
    (void)state;
    return cuDevicePrimaryCtxRelease(0) == CUDA_SUCCESS ? 0 : -1;
}

/* A PTX module with three kernels; the tests configure their durations
 * through GPUTRACE_EMU_KERNEL_NS (`busy` by its function name). */
static const char gtemu_test_ptx[] = ".version 8.0\n"
                                     ".target sm_90\n"
                                     ".address_size 64\n"
                                     ".global .align 4 .u32 counter = 7;\n"
                                     ".visible .entry _Z4busyPfi(.param .u64 p, .param .u32 n)\n"
                                     "{\n ret;\n}\n"
                                     ".visible .entry quick()\n"
                                     "{\n ret;\n}\n"
                                     ".visible .entry _Z4slowv()\n"
                                     "{\n ret;\n}\n";

static inline CUfunction load_test_function(const char *name)
{
    CUmodule mod;
    CUfunction f = NULL;
    ok_cu(cuModuleLoadData(&mod, gtemu_test_ptx));
    ok_cu(cuModuleGetFunction(&f, mod, name));
    return f;
}

static inline void launch1(CUfunction f, CUstream s)
{
    ok_cu(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
}

#endif
