/* Runtime synchronization (`sync`) and device reset. */
#include "hook.h"
#include "rt_decls.h"

#define SYNC(sym, base, params, args, ...)                                                         \
    GT_RUNTIME_WRAPPER(sym, base, GT_CAT_SYNC, GT_EV_SYNC, params, args, __VA_ARGS__)

SYNC(cudaDeviceSynchronize, cudaDeviceSynchronize, (void), (),
     gt_call_sync_target(&c, GT_SYNC_CONTEXT, 0))
SYNC(cudaStreamSynchronize, cudaStreamSynchronize, (cudaStream_t s), (s), c.stream = s,
     gt_call_sync_target(&c, GT_SYNC_STREAM, 0))
SYNC(cudaStreamSynchronize_ptsz, cudaStreamSynchronize, (cudaStream_t s), (s), c.stream = s,
     gt_call_sync_target(&c, GT_SYNC_STREAM, 0))
SYNC(cudaEventSynchronize, cudaEventSynchronize, (cudaEvent_t e), (e),
     gt_call_sync_target(&c, GT_SYNC_EVENT, (uint64_t)(uintptr_t)e))

/* The current device's primary context is reset: its pending GPU times are
 * read first (the driver reset under it does the same when it is seen),
 * and the memory in it goes with it. The record names the context the
 * driver reset under it names; without one, the context current before. */
static gt_real_cache ctx_get_current;

GT_RUNTIME_HOOK(cudaDeviceReset, cudaDeviceReset, GT_CAT_MEMORY)
GT_EXPORT cudaError_t CUDARTAPI cudaDeviceReset(void)
{
    GT_ENTER_ANY(cudaDeviceReset, cudaErrorSymbolNotFound, ());
    if (!gt_tls.guard) {
        int saved = errno;
        GT_SHIM_WORK(gt_gpu_retire_context(NULL));
        errno = saved;
    }
    if (!gt_hook_mode(&GT_HOOK(cudaDeviceReset)) || gt_tls.guard || gt_rt_current) return real_();
    gt_call c;
    gt_call_init(&c, &GT_HOOK(cudaDeviceReset), GT_EV_CTX_END);
    typedef CUresult (*get_current_fn)(CUcontext *);
    get_current_fn get_current =
        (get_current_fn)gt_cuda_real_once(&ctx_get_current, "cuCtxGetCurrent");
    CUcontext ctx = NULL;
    int saved = errno;
    if (get_current && get_current(&ctx) != CUDA_SUCCESS) ctx = NULL;
    errno = saved;
    c.u.mem.ctx = (uint64_t)(uintptr_t)ctx;
    GT_RUNTIME_CALL(&c, ());
}
