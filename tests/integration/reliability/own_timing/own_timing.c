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
        app_check(cuEventRecord(start, s), "cuEventRecord");                                        \
        work;                                                                                      \
        app_check(cuEventRecord(stop, s), "cuEventRecord");                                         \
        app_check(cuEventSynchronize(stop), "cuEventSynchronize");                                  \
        float ms;                                                                                  \
        app_check(cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");                      \
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
    app_check(cuModuleLoadData(&mod, tick_ptx), "cuModuleLoadData");
    app_check(cuModuleGetFunction(&tick, mod, "tick"), "cuModuleGetFunction");
    app_check(cuStreamCreate(&s, CU_STREAM_DEFAULT), "cuStreamCreate");
    app_check(cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
    app_check(cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
    app_check(cuMemAlloc(&d, (size_t)bytes), "cuMemAlloc");
    app_check(cuMemAllocHost(&pinned, (size_t)bytes), "cuMemAllocHost");
    for (int i = 0; i < (int)iterations; i++) {
        TIMED("copy", i,
              app_check(cuMemcpyHtoDAsync(d, pinned, (size_t)bytes, s), "cuMemcpyHtoDAsync"));
        TIMED("memset", i,
              app_check(cuMemsetD32Async(d, 0, (size_t)bytes / 4, s), "cuMemsetD32Async"));
        TIMED(
            "kernel", i,
            app_check(cuLaunchKernel(tick, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL), "cuLaunchKernel"));
    }
    app_check(cuMemFreeHost(pinned), "cuMemFreeHost");
    app_check(cuMemFree(d), "cuMemFree");
    app_check(cuEventDestroy(start), "cuEventDestroy");
    app_check(cuEventDestroy(stop), "cuEventDestroy");
    app_check(cuStreamDestroy(s), "cuStreamDestroy");
    app_check(cuModuleUnload(mod), "cuModuleUnload");
    app_check(cuCtxDestroy(ctx), "cuCtxDestroy");
    return 0;
}
