/* Driver synchronization: the host time blocked in context, stream and
 * event synchronize calls (`sync`). */
#include "hook.h"

#define SYNC(sym, base, params, args, ...)                                                         \
    GT_DRIVER_WRAPPER(sym, base, GT_CAT_SYNC, GT_EV_SYNC, params, args, __VA_ARGS__)

SYNC(cuCtxSynchronize, cuCtxSynchronize, (void), (), gt_call_sync_target(&c, GT_SYNC_CONTEXT, 0))
SYNC(cuCtxSynchronize_v2, cuCtxSynchronize, (CUcontext ctx), (ctx),
     gt_call_sync_target(&c, GT_SYNC_CONTEXT, (uint64_t)(uintptr_t)ctx))
SYNC(cuStreamSynchronize, cuStreamSynchronize, (CUstream s), (s), c.stream = s,
     gt_call_sync_target(&c, GT_SYNC_STREAM, 0))
SYNC(cuStreamSynchronize_ptsz, cuStreamSynchronize, (CUstream s), (s), c.stream = s,
     gt_call_sync_target(&c, GT_SYNC_STREAM, 0))
SYNC(cuEventSynchronize, cuEventSynchronize, (CUevent e), (e),
     gt_call_sync_target(&c, GT_SYNC_EVENT, (uint64_t)(uintptr_t)e))
