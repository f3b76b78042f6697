/* C code a Python program calls through ctypes (callsites_numba.py), with
 * the GIL released: device allocations on the calling thread, and on a
 * native thread of its own that never runs Python. The memory is kept to
 * the end (a leak whose site the report names). */
#include <pthread.h>
#include <stddef.h>

#include <cuda.h>

static int alloc_on_this_thread(size_t bytes)
{
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr p;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        return -1;
    return cuMemAlloc(&p, bytes) == CUDA_SUCCESS ? 0 : -1; /* SITE alloc_on_this_thread */
}

int gt_cs_alloc_here(size_t bytes)
{
    return alloc_on_this_thread(bytes);
}

static void *thread_main(void *arg)
{
    return (void *)(ptrdiff_t)alloc_on_this_thread((size_t)arg);
}

int gt_cs_alloc_in_thread(size_t bytes)
{
    pthread_t t;
    void *rc;
    if (pthread_create(&t, NULL, thread_main, (void *)bytes) != 0) return -1;
    pthread_join(t, &rc);
    return rc == NULL ? 0 : -1;
}
