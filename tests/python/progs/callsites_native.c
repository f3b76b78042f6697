/* C code Python programs call through ctypes (callsites_numba.py,
 * callsites_gil.py): device allocations on the calling thread, with the
 * GIL released or held as the program's ctypes call decides; on a native
 * thread of its own that never runs Python; with the GIL released where
 * gputrace cannot see it; and around a call back into Python. The memory
 * is kept to the end (a leak whose site the report names). */
#include <dlfcn.h>
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

/* Releases the GIL the way no routed call does: the interpreter's own
 * PyEval_SaveThread, reached through a pointer looked up at run time. The
 * caller holds the GIL (ctypes.PyDLL). */
int gt_cs_alloc_unseen_release(size_t bytes)
{
    void *(*save)(void) = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyEval_SaveThread");
    void (*restore)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "PyEval_RestoreThread");
    if (!save || !restore) return -1;
    void *state = save();
    int rc = alloc_on_this_thread(bytes);
    restore(state);
    return rc;
}

/* Called with the GIL released (ctypes.CDLL): calls back into Python
 * (which takes the GIL and releases it again), then allocates. */
int gt_cs_alloc_after_callback(int (*callback)(void), size_t bytes)
{
    int rc = callback();
    return rc ? rc : alloc_on_this_thread(bytes);
}
