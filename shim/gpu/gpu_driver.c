/* The driver entry points GPU timing uses, and the calling conditions it
 * needs for them (a current context, a relaxed capture mode). */
#include "gpu_internal.h"
#include "gpu_time.h"
#include "log.h"
#include "record.h"
#include "resolve.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
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

/* Why GPU timing cannot work, once known (written before the state is
 * published with release, read after an acquire load of it). */
static char off_reason[160];

/* Older or plainer entry points that mean the same as one GPU timing
 * wants: the capture state from the capture info (its other outputs are
 * optional), an event record with no flags. Set once by load_once. */
static CUresult (*capture_info_v3)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
                                   const CUgraphNode **, const CUgraphEdgeData **, size_t *);
static CUresult (*capture_info_v2)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
                                   const CUgraphNode **, size_t *);
static CUresult (*record_with_flags)(CUevent, CUstream, unsigned);

static CUresult capturing_from_info_v3(CUstream stream, CUstreamCaptureStatus *status)
{
    return capture_info_v3(stream, status, NULL, NULL, NULL, NULL, NULL);
}

static CUresult capturing_from_info_v2(CUstream stream, CUstreamCaptureStatus *status)
{
    return capture_info_v2(stream, status, NULL, NULL, NULL, NULL);
}

static CUresult record_without_flags(CUevent ev, CUstream stream)
{
    return record_with_flags(ev, stream, 0);
}

/* A function GPU timing needs: the names that provide it, the newest
 * first; an alternative with another signature goes through an adapter
 * that calls it, kept in `target`. */
struct alternative {
    const char *name;
    void **target; /* NULL: the export itself goes into the slot */
    void *adapter;
};

struct entry {
    void **slot;
    int optional;
    struct alternative alt[3];
};

#define SLOT(f) ((void **)&gt_gpu_drv.f)
#define SAME(name)                                                                                 \
    {                                                                                              \
        name, NULL, NULL                                                                           \
    }
#define VIA(name, target, adapter)                                                                 \
    {                                                                                              \
        name, (void **)&target, (void *)adapter                                                    \
    }

static void *find(const struct entry *e)
{
    for (size_t i = 0; i < sizeof e->alt / sizeof e->alt[0] && e->alt[i].name; i++) {
        void *fn = gt_cuda_real(e->alt[i].name);
        if (!fn) continue;
        if (!e->alt[i].target) return fn;
        *e->alt[i].target = fn;
        return e->alt[i].adapter;
    }
    return NULL;
}

/* "the driver has no cuX", or "... no cuX, cuY or cuZ" for the names
 * that could stand in for each other. */
static void describe_missing(const struct entry *e)
{
    size_t n = 0, len = (size_t)snprintf(off_reason, sizeof off_reason, "the driver has no");
    while (n < sizeof e->alt / sizeof e->alt[0] && e->alt[n].name)
        n++;
    for (size_t i = 0; i < n && len < sizeof off_reason; i++)
        len += (size_t)snprintf(off_reason + len, sizeof off_reason - len, "%s%s",
                                i == 0      ? " "
                                : i + 1 < n ? ", "
                                            : " or ",
                                e->alt[i].name);
}

static void load_once(void)
{
    const struct entry table[] = {
        {SLOT(ctx_get_current), 0, {SAME("cuCtxGetCurrent")}},
        {SLOT(ctx_set_current), 0, {SAME("cuCtxSetCurrent")}},
        {SLOT(ctx_push), 0, {SAME("cuCtxPushCurrent_v2")}},
        {SLOT(ctx_pop), 0, {SAME("cuCtxPopCurrent_v2")}},
        {SLOT(ctx_get_id), 1, {SAME("cuCtxGetId")}},
        {SLOT(ctx_get_device), 1, {SAME("cuCtxGetDevice")}},
        {SLOT(stream_get_ctx), 1, {SAME("cuStreamGetCtx")}},
        {SLOT(stream_is_capturing),
         0,
         {SAME("cuStreamIsCapturing"),
          VIA("cuStreamGetCaptureInfo_v3", capture_info_v3, capturing_from_info_v3),
          VIA("cuStreamGetCaptureInfo_v2", capture_info_v2, capturing_from_info_v2)}},
        {SLOT(stream_is_capturing_ptsz), 1, {SAME("cuStreamIsCapturing_ptsz")}},
        {SLOT(stream_create), 0, {SAME("cuStreamCreate")}},
        {SLOT(stream_destroy), 0, {SAME("cuStreamDestroy_v2")}},
        {SLOT(event_create), 0, {SAME("cuEventCreate")}},
        {SLOT(event_destroy), 0, {SAME("cuEventDestroy_v2")}},
        {SLOT(event_record),
         0,
         {SAME("cuEventRecord"),
          VIA("cuEventRecordWithFlags", record_with_flags, record_without_flags)}},
        {SLOT(event_record_ptsz), 1, {SAME("cuEventRecord_ptsz")}},
        {SLOT(event_query), 0, {SAME("cuEventQuery")}},
        {SLOT(event_synchronize), 0, {SAME("cuEventSynchronize")}},
        /* CUDA 12.8 renamed the export; the ABI is the same. */
        {SLOT(event_elapsed), 0, {SAME("cuEventElapsedTime_v2"), SAME("cuEventElapsedTime")}},
        {SLOT(exchange_capture_mode), 1, {SAME("cuThreadExchangeStreamCaptureMode")}},
    };
    const struct entry *missing = NULL;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const struct entry *e = &table[i];
        *e->slot = find(e);
        if (!*e->slot && !e->optional && !missing) missing = e;
    }
    /* The per-thread variants only serve the per-thread default stream,
     * which CU_STREAM_PER_THREAD names to the plain ones just as well
     * (gpu_time.c): used when the driver has both. */
    if (!gt_gpu_drv.stream_is_capturing_ptsz || !gt_gpu_drv.event_record_ptsz) {
        gt_gpu_drv.stream_is_capturing_ptsz = NULL;
        gt_gpu_drv.event_record_ptsz = NULL;
    }
    if (missing) {
        describe_missing(missing);
        gt_warn("GPU timing off: %s; kernels, copies and memsets are counted without GPU time",
                off_reason);
    }
    atomic_store_explicit(&gt_gpu_drv_state, missing ? DRV_MISSING : DRV_READY,
                          memory_order_release);
}

const char *gt_gpu_driver_off_reason(void)
{
    return atomic_load_explicit(&gt_gpu_drv_state, memory_order_acquire) == DRV_MISSING ? off_reason
                                                                                        : NULL;
}

int gt_gpu_driver_load(void)
{
    /* Once loaded, one load: this runs on every untimed launch's capture query. */
    int state = atomic_load_explicit(&gt_gpu_drv_state, memory_order_acquire);
    if (GT_LIKELY(state != DRV_UNKNOWN)) return state == DRV_READY;
    int saved = errno;
    pthread_once(&drv_once, load_once);
    errno = saved;
    return atomic_load_explicit(&gt_gpu_drv_state, memory_order_acquire) == DRV_READY;
}

GT_NO_STACK_PROTECTOR int gt_gpu_stream_capturing(CUstream stream, int per_thread)
{
    gt_gpu_driver_load(); /* the query is looked up even when timing cannot work */
    if (!gt_gpu_drv.stream_is_capturing) return 0;
    int saved = errno;
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    CUstream s = !stream && per_thread ? CU_STREAM_PER_THREAD : stream;
    int capturing = gt_gpu_drv.stream_is_capturing(s, &status) == CUDA_SUCCESS &&
                    status != CU_STREAM_CAPTURE_STATUS_NONE;
    errno = saved;
    return capturing;
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
