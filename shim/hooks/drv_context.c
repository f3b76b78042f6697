/* Driver initialisation and the end of contexts. Before a context is
 * destroyed or reset its pending GPU times are read and its events freed
 * (gt_gpu_retire_context), whatever the categories: the pairs already
 * taken belong to it. */
#include "hook.h"

static gt_real_cache primary_state, primary_retain, primary_release;

static void retire(CUcontext ctx)
{
    if (gt_tls.guard) return; /* the shim's own call */
    GT_SHIM_WORK(gt_gpu_retire_context(ctx));
}

/* The primary context of `dev`, when active. It has no handle of its own
 * without a reference, so one is taken and given back around the retire. */
static void retire_primary(CUdevice dev)
{
    typedef CUresult (*state_fn)(CUdevice, unsigned *, int *);
    typedef CUresult (*retain_fn)(CUcontext *, CUdevice);
    typedef CUresult (*release_fn)(CUdevice);
    state_fn state = (state_fn)gt_cuda_real_once(&primary_state, "cuDevicePrimaryCtxGetState");
    retain_fn retain = (retain_fn)gt_cuda_real_once(&primary_retain, "cuDevicePrimaryCtxRetain");
    release_fn release =
        (release_fn)gt_cuda_real_once(&primary_release, "cuDevicePrimaryCtxRelease_v2");
    if (gt_tls.guard || !state || !retain || !release) return;
    GT_SHIM_WORK({
        unsigned flags = 0;
        int active = 0;
        CUcontext ctx = NULL;
        if (state(dev, &flags, &active) == CUDA_SUCCESS && active &&
            retain(&ctx, dev) == CUDA_SUCCESS) {
            gt_gpu_retire_context(ctx);
            release(dev);
        }
    });
}

/* Retires first, then behaves like any api-only wrapper. */
#define CONTEXT_END(sym, base, param_t, retire_fn)                                                 \
    GT_DRIVER_HOOK(sym, base, GT_CAT_API)                                                          \
    GT_EXPORT CUresult CUDAAPI sym(param_t arg)                                                    \
    {                                                                                              \
        GT_ENTER_ANY(sym, CUDA_ERROR_NOT_FOUND, (arg));                                            \
        int saved = errno;                                                                         \
        retire_fn(arg);                                                                            \
        errno = saved;                                                                             \
        if (!gt_hook_mode(&GT_HOOK(sym)) || gt_tls.guard) return real_(arg);                       \
        gt_call c;                                                                                 \
        gt_call_init(&c, &GT_HOOK(sym), GT_EV_API);                                                \
        GT_DRIVER_CALL(&c, (arg));                                                                 \
    }

CONTEXT_END(cuCtxDestroy, cuCtxDestroy, CUcontext, retire)
CONTEXT_END(cuCtxDestroy_v2, cuCtxDestroy, CUcontext, retire)
CONTEXT_END(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease, CUdevice, retire_primary)
CONTEXT_END(cuDevicePrimaryCtxRelease_v2, cuDevicePrimaryCtxRelease, CUdevice, retire_primary)
CONTEXT_END(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset, CUdevice, retire_primary)
CONTEXT_END(cuDevicePrimaryCtxReset_v2, cuDevicePrimaryCtxReset, CUdevice, retire_primary)

GT_DRIVER_WRAPPER(cuInit, cuInit, GT_CAT_API, GT_EV_API, (unsigned flags), (flags), (void)c)
