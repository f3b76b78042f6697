/* Waiting, bounded, for the GPU work a program left queued (gpu_idle.h).
 * The driver is the one the program loaded; the synchronisation runs on a
 * thread of its own, so that the caller can stop waiting. */
#define _GNU_SOURCE
#include "gpu_idle.h"

#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>

struct driver {
    CUresult (*ctx_get_current)(CUcontext *);
    CUresult (*ctx_set_current)(CUcontext);
    CUresult (*ctx_synchronize)(void);
    CUresult (*device_get_count)(int *);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*primary_state)(CUdevice, unsigned int *, int *);
    CUresult (*primary_retain)(CUcontext *, CUdevice);
    CUresult (*primary_release)(CUdevice);
};

/* One wait per process (at its exit); a synchronising thread that outlives
 * the wait keeps using these. */
static struct driver drv;
static CUcontext caller_context;
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static int done;

static int find_driver(void)
{
    void *libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!libcuda) return -1;
#define FIND(field, name) *(void **)&drv.field = dlsym(libcuda, name)
    FIND(ctx_get_current, "cuCtxGetCurrent");
    FIND(ctx_set_current, "cuCtxSetCurrent");
    FIND(ctx_synchronize, "cuCtxSynchronize");
    FIND(device_get_count, "cuDeviceGetCount");
    FIND(device_get, "cuDeviceGet");
    FIND(primary_state, "cuDevicePrimaryCtxGetState");
    FIND(primary_retain, "cuDevicePrimaryCtxRetain");
    FIND(primary_release, "cuDevicePrimaryCtxRelease_v2");
#undef FIND
    return drv.ctx_get_current && drv.ctx_set_current && drv.ctx_synchronize &&
                   drv.device_get_count && drv.device_get && drv.primary_state &&
                   drv.primary_retain && drv.primary_release
               ? 0
               : -1;
}

/* Each active primary context, retained so that it stays while it is
 * synchronised. */
static void synchronize_primaries(void)
{
    int count = 0;
    if (drv.device_get_count(&count) != CUDA_SUCCESS) return;
    for (int i = 0; i < count; i++) {
        CUdevice dev;
        unsigned flags;
        int active = 0;
        CUcontext ctx;
        if (drv.device_get(&dev, i) != CUDA_SUCCESS ||
            drv.primary_state(dev, &flags, &active) != CUDA_SUCCESS || !active ||
            drv.primary_retain(&ctx, dev) != CUDA_SUCCESS)
            continue;
        if (drv.ctx_set_current(ctx) == CUDA_SUCCESS) drv.ctx_synchronize();
        drv.primary_release(dev);
    }
}

static void *synchronize_all(void *unused)
{
    (void)unused;
    if (caller_context && drv.ctx_set_current(caller_context) == CUDA_SUCCESS)
        drv.ctx_synchronize();
    synchronize_primaries();
    drv.ctx_set_current(NULL);
    pthread_mutex_lock(&done_lock);
    done = 1;
    pthread_cond_signal(&done_cond);
    pthread_mutex_unlock(&done_lock);
    return NULL;
}

int ref_wait_gpu_idle(unsigned seconds)
{
    if (find_driver() != 0 || drv.ctx_get_current(&caller_context) != CUDA_SUCCESS) return -1;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t syncer;
    int started = pthread_create(&syncer, &attr, synchronize_all, NULL) == 0;
    pthread_attr_destroy(&attr);
    if (!started) return -1;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += seconds;
    pthread_mutex_lock(&done_lock);
    int rc = 0;
    while (!done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&done_cond, &done_lock, &until);
    int finished = done;
    pthread_mutex_unlock(&done_lock);
    return finished ? 0 : -1;
}
