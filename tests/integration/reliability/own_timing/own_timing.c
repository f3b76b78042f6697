/* A program that times its own work with CUDA events, as a user's
 * benchmark does: a pinned copy, a memset and a kernel, each between its
 * own event pair on an otherwise idle stream, with host work between the
 * iterations. It prints each elapsed time; a tool must not change them.
 *
 * own_timing [iterations=6] [bytes=4194304]
 * Exit codes: 0, 2 a CUDA call failed (app_util.h), 64 bad arguments. */
#include <cuda.h>
#include <stdio.h>
#include <unistd.h>

#include "app_util.h"
#include "test_support.h"

/* Names only: the emulator runs no kernel code; on a GPU it returns. */
static const char tick_ptx[] = ".version 8.0\n"
                               ".target sm_90\n"
                               ".address_size 64\n"
                               ".visible .entry tick()\n"
                               "{\n"
                               "\tret;\n"
                               "}\n";

/* Records start, runs `work`, records stop, waits for it; prints the
 * elapsed time as the program sees it. */
#define TIMED(label, iteration, work)                                                              \
    do {                                                                                           \
        check_cu(cuEventRecord(start, s), "cuEventRecord");                                        \
        work;                                                                                      \
        check_cu(cuEventRecord(stop, s), "cuEventRecord");                                         \
        check_cu(cuEventSynchronize(stop), "cuEventSynchronize");                                  \
        float ms;                                                                                  \
        check_cu(cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");                      \
        printf("%d %s %.4f ms\n", (iteration), (label), ms);                                       \
        /* Host work before the next start event (see tests/emu/README.md). */                     \
        usleep(5000);                                                                              \
    } while (0)

int main(int argc, char **argv)
{
    app_program = "own_timing";
    long iterations = app_arg(argc, argv, 1, "iterations", 6, 1);
    long bytes = app_arg(argc, argv, 2, "bytes", 4194304, 4);
    CUcontext ctx = context_on_device0();
    CUmodule mod;
    CUfunction tick;
    CUstream s;
    CUevent start, stop;
    CUdeviceptr d;
    void *pinned;
    check_cu(cuModuleLoadData(&mod, tick_ptx), "cuModuleLoadData");
    check_cu(cuModuleGetFunction(&tick, mod, "tick"), "cuModuleGetFunction");
    check_cu(cuStreamCreate(&s, CU_STREAM_DEFAULT), "cuStreamCreate");
    check_cu(cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
    check_cu(cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
    check_cu(cuMemAlloc(&d, (size_t)bytes), "cuMemAlloc");
    check_cu(cuMemAllocHost(&pinned, (size_t)bytes), "cuMemAllocHost");
    for (int i = 0; i < (int)iterations; i++) {
        TIMED("copy", i,
              check_cu(cuMemcpyHtoDAsync(d, pinned, (size_t)bytes, s), "cuMemcpyHtoDAsync"));
        TIMED("memset", i,
              check_cu(cuMemsetD32Async(d, 0, (size_t)bytes / 4, s), "cuMemsetD32Async"));
        TIMED(
            "kernel", i,
            check_cu(cuLaunchKernel(tick, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL), "cuLaunchKernel"));
    }
    check_cu(cuMemFreeHost(pinned), "cuMemFreeHost");
    check_cu(cuMemFree(d), "cuMemFree");
    check_cu(cuEventDestroy(start), "cuEventDestroy");
    check_cu(cuEventDestroy(stop), "cuEventDestroy");
    check_cu(cuStreamDestroy(s), "cuStreamDestroy");
    check_cu(cuModuleUnload(mod), "cuModuleUnload");
    check_cu(cuCtxDestroy(ctx), "cuCtxDestroy");
    return 0;
}
