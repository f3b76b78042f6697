/* Process and thread state: lazy initialisation, the device each thread works on, the
 * primary context bound to it, and the exit handler.
 *
 * As in the real runtime, nothing touches the driver before the first API call that
 * needs it; that call loads the driver, initialises it and registers the runtime's exit
 * handler (so handlers registered after the runtime's first use run before it). A
 * thread's context is bound on its first call that needs one: the context already
 * current on the thread if there is one, else its device's primary context, retained
 * once per process. cudaDeviceReset advances a generation counter so every thread
 * rebinds on its next call. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "rt_internal.h"

#define MAX_DEVICES 64

struct device_state {
    CUcontext primary; /* NULL while not retained */
    struct rt_launch_limits limits;
};

static struct {
    pthread_once_t once;
    cudaError_t init_error;
    int device_count;
    pthread_mutex_t lock; /* guards devices[] */
    struct device_state devices[MAX_DEVICES];
    atomic_uint generation; /* bumped by resets; acquire/release pairs with binding */
    atomic_bool unloading;  /* set by the exit handler (relaxed: a plain flag) */
} rt = {
    .once = PTHREAD_ONCE_INIT,
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

static __thread struct {
    bool started;        /* the thread made a call that needed a context */
    int device;          /* selected device (cudaSetDevice), 0 by default */
    CUcontext bound;     /* context this thread was bound to, NULL when unbound */
    unsigned generation; /* rt.generation when bound */
    struct rt_launch_limits limits;
} thread_state;

static void exit_handler(void)
{
    atomic_store_explicit(&rt.unloading, true, memory_order_relaxed);
    gt_rt_unload_libraries();
    pthread_mutex_lock(&rt.lock);
    for (int d = 0; d < rt.device_count; d++) {
        if (rt.devices[d].primary == NULL) continue;
        CUdevice dev;
        if (RT_CALL(gt_rt_drv.deviceGet, &dev, d) == cudaSuccess)
            (void)RT_CALL(gt_rt_drv.primaryCtxRelease, dev);
        rt.devices[d].primary = NULL;
    }
    pthread_mutex_unlock(&rt.lock);
}

static void initialise(void)
{
    cudaError_t err = gt_rt_driver_load();
    if (err == cudaSuccess) err = RT_CALL(gt_rt_drv.init, 0);
    if (err == cudaSuccess) err = RT_CALL(gt_rt_drv.deviceGetCount, &rt.device_count);
    if (err == cudaSuccess && rt.device_count == 0) err = cudaErrorNoDevice;
    if (rt.device_count > MAX_DEVICES) rt.device_count = MAX_DEVICES;
    rt.init_error = err;
    if (err == cudaSuccess) atexit(exit_handler);
}

cudaError_t gt_rt_init(void)
{
    pthread_once(&rt.once, initialise);
    if (rt.init_error != cudaSuccess) return rt.init_error;
    if (atomic_load_explicit(&rt.unloading, memory_order_relaxed)) return cudaErrorCudartUnloading;
    return cudaSuccess;
}

int gt_rt_device_count(void)
{
    return rt.device_count;
}

static cudaError_t query_limits(CUdevice dev, struct rt_launch_limits *limits)
{
    static const CUdevice_attribute block_attrs[3] = {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
                                                      CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
                                                      CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z};
    static const CUdevice_attribute grid_attrs[3] = {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
                                                     CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                                                     CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
    cudaError_t err = RT_CALL(gt_rt_drv.deviceGetAttribute, &limits->max_threads_per_block,
                              CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev);
    for (int i = 0; i < 3 && err == cudaSuccess; i++) {
        err = RT_CALL(gt_rt_drv.deviceGetAttribute, &limits->max_block[i], block_attrs[i], dev);
        if (err == cudaSuccess)
            err = RT_CALL(gt_rt_drv.deviceGetAttribute, &limits->max_grid[i], grid_attrs[i], dev);
    }
    return err;
}

/* Retains the device's primary context once per process (caller holds rt.lock). */
static cudaError_t retain_primary(int device, CUcontext *ctx)
{
    struct device_state *ds = &rt.devices[device];
    if (ds->primary != NULL) {
        *ctx = ds->primary;
        return cudaSuccess;
    }
    CUdevice dev;
    cudaError_t err = RT_CALL(gt_rt_drv.deviceGet, &dev, device);
    if (err == cudaSuccess) err = query_limits(dev, &ds->limits);
    if (err == cudaSuccess) err = RT_CALL(gt_rt_drv.primaryCtxRetain, &ds->primary, dev);
    *ctx = ds->primary;
    return err;
}

cudaError_t gt_rt_primary_context(int device, CUcontext *ctx)
{
    cudaError_t err = gt_rt_init();
    if (err != cudaSuccess) return err;
    if (device < 0 || device >= rt.device_count) return cudaErrorInvalidDevice;
    pthread_mutex_lock(&rt.lock);
    err = retain_primary(device, ctx);
    pthread_mutex_unlock(&rt.lock);
    return err;
}

static cudaError_t bind_primary(int device)
{
    CUcontext ctx = NULL;
    unsigned generation = atomic_load_explicit(&rt.generation, memory_order_acquire);
    pthread_mutex_lock(&rt.lock);
    cudaError_t err = retain_primary(device, &ctx);
    struct rt_launch_limits limits = rt.devices[device].limits;
    pthread_mutex_unlock(&rt.lock);
    if (err == cudaSuccess) err = RT_CALL(gt_rt_drv.ctxSetCurrent, ctx);
    if (err != cudaSuccess) return err;
    thread_state.device = device;
    thread_state.bound = ctx;
    thread_state.generation = generation;
    thread_state.limits = limits;
    return cudaSuccess;
}

/* A context made current through the driver API before the thread's first runtime
 * call is used as is, as the real runtime does. */
static cudaError_t adopt_current(bool *adopted)
{
    CUcontext current = NULL;
    *adopted = false;
    cudaError_t err = RT_CALL(gt_rt_drv.ctxGetCurrent, &current);
    if (err != cudaSuccess || current == NULL) return err;
    CUdevice dev;
    struct rt_launch_limits limits;
    err = RT_CALL(gt_rt_drv.ctxGetDevice, &dev);
    if (err == cudaSuccess) err = query_limits(dev, &limits);
    if (err != cudaSuccess) return err;
    thread_state.device = dev;
    thread_state.bound = current;
    thread_state.generation = atomic_load_explicit(&rt.generation, memory_order_acquire);
    thread_state.limits = limits;
    *adopted = true;
    return cudaSuccess;
}

cudaError_t gt_rt_context(void)
{
    cudaError_t err = gt_rt_init();
    if (err == cudaSuccess) err = gt_rt_sticky_error();
    if (err != cudaSuccess) return err;
    if (thread_state.bound != NULL &&
        thread_state.generation == atomic_load_explicit(&rt.generation, memory_order_acquire))
        return cudaSuccess;
    if (!thread_state.started) {
        thread_state.started = true;
        bool adopted;
        err = adopt_current(&adopted);
        if (err != cudaSuccess || adopted) return err;
    }
    return bind_primary(thread_state.device);
}

int gt_rt_current_device(void)
{
    return thread_state.device;
}

const struct rt_launch_limits *gt_rt_launch_limits(void)
{
    return &thread_state.limits;
}

cudaError_t gt_rt_set_device(int device)
{
    cudaError_t err = gt_rt_init();
    if (err != cudaSuccess) return err;
    if (device < 0 || device >= rt.device_count) return cudaErrorInvalidDevice;
    thread_state.started = true;
    /* Since CUDA 12.0 cudaSetDevice initialises the device's primary context. */
    return bind_primary(device);
}

cudaError_t gt_rt_reset_device(int device)
{
    CUdevice dev;
    cudaError_t err = RT_CALL(gt_rt_drv.deviceGet, &dev, device);
    if (err != cudaSuccess) return err;
    pthread_mutex_lock(&rt.lock);
    err = RT_CALL(gt_rt_drv.primaryCtxReset, dev);
    /* Resetting does not release: drop the runtime's reference so that the next call
     * retains a fresh primary context. */
    if (err == cudaSuccess && rt.devices[device].primary != NULL) {
        err = RT_CALL(gt_rt_drv.primaryCtxRelease, dev);
        rt.devices[device].primary = NULL;
    }
    atomic_fetch_add_explicit(&rt.generation, 1, memory_order_release);
    pthread_mutex_unlock(&rt.lock);
    thread_state.bound = NULL;
    return err;
}
