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

/* Names only: the emulator runs no kernel code; on a GPU it returns. */
static const char tick_ptx[] = ".version 8.0\n"
                               ".target sm_90\n"
                               ".address_size 64\n"
                               ".visible .entry tick()\n"
                               "{\n"
                               "\tret;\n"
                               "}\n";

static void ok(CUresult r, const char *what)
{
    if (r != CUDA_SUCCESS) {
        const char *name = NULL;
        cuGetErrorName(r, &name);
        app_fail(what, name ? name : "?", (int)r);
    }
}

/* Records start, runs `work`, records stop, waits for it; prints the
 * elapsed time as the program sees it. */
#define TIMED(label, iteration, work)                                                              \
    do {                                                                                           \
        ok(cuEventRecord(start, s), "cuEventRecord");                                              \
        work;                                                                                      \
        ok(cuEventRecord(stop, s), "cuEventRecord");                                               \
        ok(cuEventSynchronize(stop), "cuEventSynchronize");                                        \
        float ms;                                                                                  \
        ok(cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");                            \
        printf("%d %s %.4f ms\n", (iteration), (label), ms);                                       \
        /* Host work before the next start event (see tests/emu/README.md). */                     \
        usleep(5000);                                                                              \
    } while (0)

int main(int argc, char **argv)
{
    app_program = "own_timing";
    long iterations = app_arg(argc, argv, 1, "iterations", 6, 1);
    long bytes = app_arg(argc, argv, 2, "bytes", 4194304, 4);
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction tick;
    CUstream s;
    CUevent start, stop;
    CUdeviceptr d;
    void *pinned;
    ok(cuInit(0), "cuInit");
    ok(cuDeviceGet(&dev, 0), "cuDeviceGet");
    ok(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    ok(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    ok(cuModuleLoadData(&mod, tick_ptx), "cuModuleLoadData");
    ok(cuModuleGetFunction(&tick, mod, "tick"), "cuModuleGetFunction");
    ok(cuStreamCreate(&s, CU_STREAM_DEFAULT), "cuStreamCreate");
    ok(cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
    ok(cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
    ok(cuMemAlloc(&d, (size_t)bytes), "cuMemAlloc");
    ok(cuMemAllocHost(&pinned, (size_t)bytes), "cuMemAllocHost");
    for (int i = 0; i < (int)iterations; i++) {
        TIMED("copy", i, ok(cuMemcpyHtoDAsync(d, pinned, (size_t)bytes, s), "cuMemcpyHtoDAsync"));
        TIMED("memset", i, ok(cuMemsetD32Async(d, 0, (size_t)bytes / 4, s), "cuMemsetD32Async"));
        TIMED("kernel", i,
              ok(cuLaunchKernel(tick, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL), "cuLaunchKernel"));
    }
    ok(cuMemFreeHost(pinned), "cuMemFreeHost");
    ok(cuMemFree(d), "cuMemFree");
    ok(cuEventDestroy(start), "cuEventDestroy");
    ok(cuEventDestroy(stop), "cuEventDestroy");
    ok(cuStreamDestroy(s), "cuStreamDestroy");
    ok(cuModuleUnload(mod), "cuModuleUnload");
    ok(cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease");
    return 0;
}
