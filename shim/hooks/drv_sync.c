/* Driver synchronization: the host time blocked in context, stream and
 * event synchronize calls (`sync`). */
#include "hook.h"

#define SYNC(sym, base, params, args, ...)                                                         \
    GT_DRIVER_WRAPPER(sym, base, GT_CAT_SYNC, GT_EV_SYNC, params, args, __VA_ARGS__)

SYNC(cuCtxSynchronize, cuCtxSynchronize, (void), (), (void)c)
SYNC(cuCtxSynchronize_v2, cuCtxSynchronize, (CUcontext ctx), (ctx), (void)c)
SYNC(cuStreamSynchronize, cuStreamSynchronize, (CUstream s), (s), c.stream = s)
SYNC(cuStreamSynchronize_ptsz, cuStreamSynchronize, (CUstream s), (s), c.stream = s)
SYNC(cuEventSynchronize, cuEventSynchronize, (CUevent e), (e), (void)c)
