/* The real driver's entry points GPU timing uses (gpu_driver.c), looked up
 * once through gt_cuda_real (so none of the shim's wrappers run and
 * nothing here is recorded), and the calling conditions it needs for them
 * (a current context, a relaxed capture mode). */
#ifndef GT_GPU_DRIVER_H
#define GT_GPU_DRIVER_H

#include <cuda.h>
#include <stdint.h>

typedef struct gt_gpu_driver {
    CUresult (*ctx_get_current)(CUcontext *ctx);
    CUresult (*ctx_set_current)(CUcontext ctx);
    CUresult (*ctx_push)(CUcontext ctx);
    CUresult (*ctx_pop)(CUcontext *ctx);
    CUresult (*ctx_get_id)(CUcontext ctx, unsigned long long *id); /* NULL before CUDA 12.0 */
    CUresult (*ctx_get_device)(CUdevice *dev);                     /* may be NULL */
    CUresult (*stream_get_ctx)(CUstream stream, CUcontext *ctx);   /* may be NULL */
    CUresult (*stream_is_capturing)(CUstream stream, CUstreamCaptureStatus *status);
    /* The per-thread variants: both, or both NULL (see gt_gpu_begin). */
    CUresult (*stream_is_capturing_ptsz)(CUstream stream, CUstreamCaptureStatus *status);
    CUresult (*stream_create)(CUstream *stream, unsigned flags);
    CUresult (*stream_destroy)(CUstream stream);
    CUresult (*event_create)(CUevent *ev, unsigned flags);
    CUresult (*event_destroy)(CUevent ev);
    CUresult (*event_record)(CUevent ev, CUstream stream);
    CUresult (*event_record_ptsz)(CUevent ev, CUstream stream);
    CUresult (*event_query)(CUevent ev);
    CUresult (*event_synchronize)(CUevent ev);
    CUresult (*event_elapsed)(float *ms, CUevent start, CUevent end);
    CUresult (*exchange_capture_mode)(CUstreamCaptureMode *mode); /* may be NULL */
} gt_gpu_driver;

extern gt_gpu_driver gt_gpu_drv;

/* 1 once every required entry point is known; looks them up on the first
 * call (never at load: a program that does not use CUDA must not get the
 * driver loaded). One acquire load afterwards. Where the driver lacks an
 * entry point, one that means the same stands in for it (an older
 * capture query, a record with flags); when nothing can, GPU timing is
 * off, with one warning, and gt_gpu_driver_off_reason says why. */
extern _Atomic int gt_gpu_drv_state; /* enum in gpu_driver.c; acquire */
int gt_gpu_driver_load(void);
const char *gt_gpu_driver_off_reason(void); /* NULL unless the driver lacks one */
static inline int gt_gpu_driver_ready(void)
{
    if (GT_LIKELY(atomic_load_explicit(&gt_gpu_drv_state, memory_order_acquire) == 1)) return 1;
    return gt_gpu_driver_load();
}

/* A stretch of shim work on one context: the context made current, and
 * the calling thread allowed the calls a global-mode stream capture on
 * another thread forbids (cuEventSynchronize, cuStreamCreate), which would
 * otherwise fail or invalidate the program's capture. The drain thread is
 * the shim's own: it keeps both; a program thread gets its context stack
 * and capture mode back from leave. */
typedef struct gt_gpu_scope {
    int pushed;
    int relaxed;
    CUstreamCaptureMode mode;
} gt_gpu_scope;

/* 0 when ctx cannot be made current (then leave must not be called). */
int gt_gpu_scope_enter(gt_gpu_scope *s, CUcontext ctx);
void gt_gpu_scope_leave(gt_gpu_scope *s);

/* CLOCK_MONOTONIC_COARSE in ns: a few ns from the vDSO, ticks of 1-4 ms;
 * enough to notice that a second has passed. */
uint64_t gt_gpu_coarse_ns(void);

#endif
