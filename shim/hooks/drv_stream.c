/* The end of streams. A stream's timeline track is named by the driver's
 * number of the stream (cuStreamGetId), which each thread caches by handle
 * (call.c); the driver gives a stream made later the handle of one
 * destroyed before. So around every cuStreamDestroy, whatever the
 * categories and capture windows, the caches are asked again (before the
 * call, for a number cached while the stream was going, and after it). The
 * call itself is recorded as an api call. */
#include "hook.h"

#define STREAM_END(sym)                                                                            \
    GT_DRIVER_HOOK(sym, cuStreamDestroy, GT_CAT_API)                                               \
    GT_EXPORT CUresult CUDAAPI sym(CUstream stream)                                                \
    {                                                                                              \
        GT_ENTER_ANY(sym, CUDA_ERROR_NOT_FOUND, (stream));                                         \
        gt_stream_ending();                                                                        \
        if (!(gt_hook_mode(&GT_HOOK(sym)) & gt_capture_mask()) || gt_tls.guard) {                  \
            CUresult r = real_(stream);                                                            \
            gt_stream_ending();                                                                    \
            return r;                                                                              \
        }                                                                                          \
        gt_call c;                                                                                 \
        gt_call_init(&c, &GT_HOOK(sym), GT_EV_API);                                                \
        GT_DRIVER_CALL_THEN(&c, (stream), gt_stream_ending());                                     \
    }

STREAM_END(cuStreamDestroy)
STREAM_END(cuStreamDestroy_v2)
