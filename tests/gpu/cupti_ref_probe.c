/* A driver-API program for the reference recorder's tests on the emulator
 * (test_cupti_ref.py): what the test programs of tests/apps do not do.
 *
 * Usage: cupti_ref_probe peer BYTES      a synchronous and an asynchronous peer copy of
 *                                        BYTES from device 0 to device 1, then a sync
 *        cupti_ref_probe pending LAUNCHES  LAUNCHES launches of vec_add, then a return
 *                                        from main with the work still queued */
#include <stdlib.h>
#include <string.h>

#include "app_driver.h"
#include "app_kernels_ptx.h"
#include "app_util.h"

static int peer(size_t bytes)
{
    CUcontext ctx0 = app_primary_context(), ctx1;
    CUdevice dev1;
    CUdeviceptr src, dst;
    app_check(cuDeviceGet(&dev1, 1), "cuDeviceGet");
    app_check(cuDevicePrimaryCtxRetain(&ctx1, dev1), "cuDevicePrimaryCtxRetain");
    app_check(cuMemAlloc(&src, bytes), "cuMemAlloc");
    app_check(cuCtxSetCurrent(ctx1), "cuCtxSetCurrent");
    app_check(cuMemAlloc(&dst, bytes), "cuMemAlloc");
    app_check(cuCtxSetCurrent(ctx0), "cuCtxSetCurrent");
    app_check(cuMemcpyPeer(dst, ctx1, src, ctx0, bytes), "cuMemcpyPeer");
    app_check(cuMemcpyPeerAsync(dst, ctx1, src, ctx0, bytes, NULL), "cuMemcpyPeerAsync");
    app_check(cuCtxSynchronize(), "cuCtxSynchronize");
    return 0;
}

static int pending(int launches)
{
    app_primary_context();
    CUmodule module;
    CUfunction vec_add, scale;
    app_vector_kernels(app_kernels_ptx, &module, &vec_add, &scale);
    CUdeviceptr x;
    int n = 256;
    app_check(cuMemAlloc(&x, n * sizeof(float)), "cuMemAlloc");
    void *args[] = {&x, &x, &x, &n};
    for (int i = 0; i < launches; i++)
        app_check(cuLaunchKernel(vec_add, 1, 1, 1, 256, 1, 1, 0, NULL, args, NULL),
                  "cuLaunchKernel");
    return 0;
}

int main(int argc, char **argv)
{
    app_program = "cupti_ref_probe";
    if (argc == 3 && !strcmp(argv[1], "peer")) return peer((size_t)atol(argv[2]));
    if (argc == 3 && !strcmp(argv[1], "pending")) return pending(atoi(argv[2]));
    return APP_EXIT_USAGE;
}
