/* Driver initialisation and the end of contexts. Before a context is
 * destroyed or reset its pending GPU times are read and its events freed
 * (gt_gpu_retire_context), whatever the categories: the pairs already
 * taken belong to it. A context that really ends (cuCtxDestroy, a primary
 * context reset, or released for the last time) is recorded as
 * GT_EV_CTX_END: the memory still allocated in it goes with it, and the
 * report says so rather than calling it leaked. Like allocations, these
 * calls are recorded outside capture windows too (capture.h). */
#include "hook.h"

static gt_real_cache primary_state, primary_retain, primary_release;

typedef CUresult (*state_fn)(CUdevice, unsigned *, int *);

static void retire(CUcontext ctx)
{
    if (gt_tls.guard) return; /* the shim's own call */
    GT_SHIM_WORK(gt_gpu_retire_context(ctx));
}

static int primary_active(CUdevice dev)
{
    state_fn state = (state_fn)gt_cuda_real_once(&primary_state, "cuDevicePrimaryCtxGetState");
    unsigned flags = 0;
    int active = 0;
    return state && state(dev, &flags, &active) == CUDA_SUCCESS && active;
}

/* The primary context of `dev` when active, else NULL. It has no handle of
 * its own without a reference, so one is taken and given back. */
static CUcontext active_primary(CUdevice dev)
{
    typedef CUresult (*retain_fn)(CUcontext *, CUdevice);
    typedef CUresult (*release_fn)(CUdevice);
    retain_fn retain = (retain_fn)gt_cuda_real_once(&primary_retain, "cuDevicePrimaryCtxRetain");
    release_fn release =
        (release_fn)gt_cuda_real_once(&primary_release, "cuDevicePrimaryCtxRelease_v2");
    CUcontext ctx = NULL;
    if (gt_tls.guard || !retain || !release) return NULL;
    GT_SHIM_WORK({
        if (!primary_active(dev) || retain(&ctx, dev) != CUDA_SUCCESS)
            ctx = NULL;
        else
            release(dev);
    });
    return ctx;
}

/* The call's record: the context it ends, when it ends one (known once
 * the call returned: `ended`), else a plain api record. Whatever the
 * categories, what the shim remembers by context handle is forgotten
 * around it (gt_context_ending). */
#define CONTEXT_END(sym, base, param_t, find_ctx, ended)                                           \
    GT_DRIVER_HOOK(sym, base, GT_CAT_MEMORY)                                                       \
    GT_EXPORT CUresult CUDAAPI sym(param_t arg)                                                    \
    {                                                                                              \
        GT_ENTER_ANY(sym, CUDA_ERROR_NOT_FOUND, (arg));                                            \
        int saved = errno;                                                                         \
        CUcontext ctx = find_ctx(arg);                                                             \
        if (ctx) retire(ctx);                                                                      \
        gt_context_ending();                                                                       \
        errno = saved;                                                                             \
        if (!gt_hook_mode(&GT_HOOK(sym)) || gt_tls.guard) {                                        \
            CUresult r = real_(arg);                                                               \
            gt_context_ended(r == CUDA_SUCCESS && ctx && (ended));                                 \
            return r;                                                                              \
        }                                                                                          \
        gt_call c;                                                                                 \
        gt_call_init(&c, &GT_HOOK(sym), ctx ? GT_EV_CTX_END : GT_EV_API);                          \
        c.u.mem.ctx = (uint64_t)(uintptr_t)ctx;                                                    \
        GT_DRIVER_CALL_THEN(&c, (arg), {                                                           \
            int ended_ = r_ == CUDA_SUCCESS && ctx && (ended);                                     \
            gt_context_ended(ended_);                                                              \
            if (!ended_) c.kind = GT_EV_API;                                                       \
        });                                                                                        \
    }

static CUcontext given(CUcontext ctx)
{
    return ctx;
}

CONTEXT_END(cuCtxDestroy, cuCtxDestroy, CUcontext, given, 1)
CONTEXT_END(cuCtxDestroy_v2, cuCtxDestroy, CUcontext, given, 1)
/* A release ends the context only when it drops the last reference. */
CONTEXT_END(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease, CUdevice, active_primary,
            !primary_active(arg))
CONTEXT_END(cuDevicePrimaryCtxRelease_v2, cuDevicePrimaryCtxRelease, CUdevice, active_primary,
            !primary_active(arg))
CONTEXT_END(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset, CUdevice, active_primary, 1)
CONTEXT_END(cuDevicePrimaryCtxReset_v2, cuDevicePrimaryCtxReset, CUdevice, active_primary, 1)

GT_DRIVER_WRAPPER(cuInit, cuInit, GT_CAT_API, GT_EV_API, (unsigned flags), (flags), (void)c)
