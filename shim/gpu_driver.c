/* The driver entry points GPU timing uses, and the calling conditions it
 * needs for them (a current context, a relaxed capture mode). */
#include "gpu_internal.h"
#include "resolve.h"

#include <errno.h>
#include <time.h>

enum { DRV_UNKNOWN, DRV_READY, DRV_MISSING };

gt_gpu_driver gt_gpu_drv;
_Atomic int gt_gpu_drv_state;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

/* The drain thread is the shim's own: its capture mode stays relaxed once
 * set, and the context it made current stays so (only the shim's code
 * runs there), checked again after any retirement, which may free a
 * handle for reuse. */
static __thread int drain_relaxed __attribute__((tls_model("initial-exec")));
static __thread CUcontext drain_ctx __attribute__((tls_model("initial-exec")));
static __thread uint64_t drain_ctx_retired __attribute__((tls_model("initial-exec")));

struct entry {
    const char *names[2]; /* the newest export first */
    void **slot;
    int optional;
};

#define SLOT(f) ((void **)&gt_gpu_drv.f)

static void load_once(void)
{
    const struct entry table[] = {
        {{"cuCtxGetCurrent"}, SLOT(ctx_get_current), 0},
        {{"cuCtxSetCurrent"}, SLOT(ctx_set_current), 0},
        {{"cuCtxPushCurrent_v2"}, SLOT(ctx_push), 0},
        {{"cuCtxPopCurrent_v2"}, SLOT(ctx_pop), 0},
        {{"cuCtxGetId"}, SLOT(ctx_get_id), 1},
        {{"cuCtxGetDevice"}, SLOT(ctx_get_device), 0},
        {{"cuStreamGetCtx"}, SLOT(stream_get_ctx), 0},
        {{"cuStreamIsCapturing"}, SLOT(stream_is_capturing), 0},
        {{"cuStreamIsCapturing_ptsz"}, SLOT(stream_is_capturing_ptsz), 0},
        {{"cuStreamCreate"}, SLOT(stream_create), 0},
        {{"cuStreamDestroy_v2"}, SLOT(stream_destroy), 0},
        {{"cuEventCreate"}, SLOT(event_create), 0},
        {{"cuEventDestroy_v2"}, SLOT(event_destroy), 0},
        {{"cuEventRecord"}, SLOT(event_record), 0},
        {{"cuEventRecord_ptsz"}, SLOT(event_record_ptsz), 0},
        {{"cuEventQuery"}, SLOT(event_query), 0},
        {{"cuEventSynchronize"}, SLOT(event_synchronize), 0},
        /* CUDA 12.8 renamed the export; the ABI is the same. */
        {{"cuEventElapsedTime_v2", "cuEventElapsedTime"}, SLOT(event_elapsed), 0},
        {{"cuThreadExchangeStreamCaptureMode"}, SLOT(exchange_capture_mode), 1},
    };
    const char *missing = NULL;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const struct entry *e = &table[i];
        void *fn = gt_cuda_real(e->names[0]);
        if (!fn && e->names[1]) fn = gt_cuda_real(e->names[1]);
        *e->slot = fn;
        if (!fn && !e->optional && !missing) missing = e->names[0];
    }
    if (missing) gt_debug("GPU timing off: the driver has no %s", missing);
    atomic_store_explicit(&gt_gpu_drv_state, missing ? DRV_MISSING : DRV_READY,
                          memory_order_release);
}

int gt_gpu_driver_load(void)
{
    int saved = errno;
    pthread_once(&drv_once, load_once);
    errno = saved;
    return atomic_load_explicit(&gt_gpu_drv_state, memory_order_acquire) == DRV_READY;
}

static int on_drain_thread(void)
{
    return gt_tls.state == GT_TLS_NEVER;
}

int gt_gpu_scope_enter(gt_gpu_scope *s, CUcontext ctx)
{
    const gt_gpu_driver *d = &gt_gpu_drv;
    s->pushed = 0;
    s->relaxed = 0;
    uint64_t retired = atomic_load_explicit(&gt_gpu_count.retired, memory_order_relaxed);
    if (on_drain_thread() && drain_relaxed && drain_ctx == ctx && drain_ctx_retired == retired)
        return 1;
    CUcontext cur = NULL;
    if (d->ctx_get_current(&cur) != CUDA_SUCCESS) return 0;
    if (cur != ctx) {
        if (on_drain_thread()) {
            if (d->ctx_set_current(ctx) != CUDA_SUCCESS) return 0;
        } else {
            if (d->ctx_push(ctx) != CUDA_SUCCESS) return 0;
            s->pushed = 1;
        }
    }
    if (on_drain_thread()) {
        drain_ctx = ctx;
        drain_ctx_retired = retired;
        if (!drain_relaxed) {
            CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
            drain_relaxed =
                !d->exchange_capture_mode || d->exchange_capture_mode(&mode) == CUDA_SUCCESS;
        }
    } else if (d->exchange_capture_mode) {
        s->mode = CU_STREAM_CAPTURE_MODE_RELAXED;
        s->relaxed = d->exchange_capture_mode(&s->mode) == CUDA_SUCCESS;
    }
    return 1;
}

void gt_gpu_scope_leave(gt_gpu_scope *s)
{
    const gt_gpu_driver *d = &gt_gpu_drv;
    if (s->relaxed) d->exchange_capture_mode(&s->mode);
    if (s->pushed) {
        CUcontext popped;
        d->ctx_pop(&popped);
    }
}

uint64_t gt_gpu_coarse_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void gt_gpu_count_max(_Atomic uint64_t *c, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(c, memory_order_relaxed);
    while (cur < v && !atomic_compare_exchange_weak_explicit(c, &cur, v, memory_order_relaxed,
                                                             memory_order_relaxed))
        ;
}
