/* Streams made one after another, each destroyed before the next is made:
 * the driver hands later streams the handles of destroyed ones. Each
 * stream gets one asynchronous memset. Prints how many streams came at a
 * handle seen before (check_stream_reuse.py). */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>

#define STREAMS 4
#define BYTES 4096

static int ok(CUresult r, const char *what)
{
    if (r != CUDA_SUCCESS) fprintf(stderr, "%s failed: %d\n", what, (int)r);
    return r == CUDA_SUCCESS;
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr p;
    if (!ok(cuInit(0), "cuInit") || !ok(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
        !ok(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain") ||
        !ok(cuCtxSetCurrent(ctx), "cuCtxSetCurrent") || !ok(cuMemAlloc(&p, BYTES), "cuMemAlloc"))
        return 1;
    CUstream seen[STREAMS];
    int reused = 0;
    for (int i = 0; i < STREAMS; i++) {
        CUstream s;
        if (!ok(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate") ||
            !ok(cuMemsetD8Async(p, (unsigned char)i, BYTES, s), "cuMemsetD8Async") ||
            !ok(cuStreamSynchronize(s), "cuStreamSynchronize") ||
            !ok(cuStreamDestroy(s), "cuStreamDestroy"))
            return 1;
        for (int j = 0; j < i; j++)
            if (seen[j] == s) {
                reused++;
                break;
            }
        seen[i] = s;
    }
    printf("%d\n", reused);
    return ok(cuMemFree(p), "cuMemFree") ? 0 : 1;
}
