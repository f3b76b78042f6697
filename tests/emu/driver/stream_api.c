/* Stream entry points. */
#include "emu_stream.h"

#define GT_PRIORITY_LEAST 0
#define GT_PRIORITY_GREATEST (-5)

static CUresult stream_create(CUstream *phStream, unsigned flags, int priority)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!phStream || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
    /* Priorities outside the range are clamped, as documented. */
    if (priority > GT_PRIORITY_LEAST) priority = GT_PRIORITY_LEAST;
    if (priority < GT_PRIORITY_GREATEST) priority = GT_PRIORITY_GREATEST;
    enum gt_stream_type type =
        (flags & CU_STREAM_NON_BLOCKING) ? GT_STREAM_NONBLOCKING : GT_STREAM_BLOCKING;
    struct gt_stream *s;
    r = gt_stream_create(ctx, type, flags, priority, &s);
    if (r == CUDA_SUCCESS) *phStream = (CUstream)s;
    return r;
}

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    return stream_create(phStream, Flags, 0);
}

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    return stream_create(phStream, flags, priority);
}

static CUresult stream_destroy(CUstream hStream)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(hStream, GT_KIND_STREAM)) return CUDA_ERROR_INVALID_HANDLE;
    struct gt_stream *s = (struct gt_stream *)hStream;
    if (s->type == GT_STREAM_LEGACY || s->type == GT_STREAM_PER_THREAD)
        return CUDA_ERROR_INVALID_HANDLE;
    struct gt_capture *cap = gt_stream_capture(s);
    if (cap) gt_capture_invalidate(cap);
    gt_stream_retire(s);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy(CUstream hStream)
{
    return stream_destroy(hStream);
}

CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream)
{
    return stream_destroy(hStream);
}

static CUresult resolve_out(CUstream h, bool per_thread, const void *out, struct gt_stream **s)
{
    CUresult r = gt_stream_resolve(h, per_thread, s);
    if (r != CUDA_SUCCESS) return r;
    return out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
    struct gt_stream *s;
    CUresult r = resolve_out(hStream, false, flags, &s);
    if (r == CUDA_SUCCESS) *flags = s->flags;
    return r;
}

CUresult CUDAAPI cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags)
{
    struct gt_stream *s;
    CUresult r = resolve_out(hStream, true, flags, &s);
    if (r == CUDA_SUCCESS) *flags = s->flags;
    return r;
}

CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int *priority)
{
    struct gt_stream *s;
    CUresult r = resolve_out(hStream, false, priority, &s);
    if (r == CUDA_SUCCESS) *priority = s->priority;
    return r;
}

CUresult CUDAAPI cuStreamGetPriority_ptsz(CUstream hStream, int *priority)
{
    struct gt_stream *s;
    CUresult r = resolve_out(hStream, true, priority, &s);
    if (r == CUDA_SUCCESS) *priority = s->priority;
    return r;
}

CUresult CUDAAPI cuStreamGetId(CUstream hStream, unsigned long long *streamId)
{
    struct gt_stream *s;
    CUresult r = resolve_out(hStream, false, streamId, &s);
    if (r == CUDA_SUCCESS) *streamId = atomic_load_explicit(&s->id, memory_order_relaxed);
    return r;
}

CUresult CUDAAPI cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId)
{
    struct gt_stream *s;
    CUresult r = resolve_out(hStream, true, streamId, &s);
    if (r == CUDA_SUCCESS) *streamId = atomic_load_explicit(&s->id, memory_order_relaxed);
    return r;
}

CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
    struct gt_stream *s;
    CUresult r = resolve_out(hStream, false, pctx, &s);
    if (r == CUDA_SUCCESS) *pctx = (CUcontext)s->ctx;
    return r;
}

CUresult CUDAAPI cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx)
{
    struct gt_stream *s;
    CUresult r = resolve_out(hStream, true, pctx, &s);
    if (r == CUDA_SUCCESS) *pctx = (CUcontext)s->ctx;
    return r;
}

CUresult CUDAAPI cuStreamGetDevice(CUstream hStream, CUdevice *device)
{
    struct gt_stream *s;
    CUresult r = resolve_out(hStream, false, device, &s);
    if (r == CUDA_SUCCESS) *device = s->ctx->dev->ordinal;
    return r;
}

CUresult CUDAAPI cuStreamGetDevice_ptsz(CUstream hStream, CUdevice *device)
{
    struct gt_stream *s;
    CUresult r = resolve_out(hStream, true, device, &s);
    if (r == CUDA_SUCCESS) *device = s->ctx->dev->ordinal;
    return r;
}

static CUresult stream_get_ctx_v2(CUstream hStream, bool per_thread, CUcontext *pCtx,
                                  CUgreenCtx *pGreenCtx)
{
    struct gt_stream *s;
    CUresult r = resolve_out(hStream, per_thread, pCtx, &s);
    if (r != CUDA_SUCCESS) return r;
    *pCtx = (CUcontext)s->ctx;
    if (pGreenCtx) *pGreenCtx = NULL; /* no green contexts */
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetCtx_v2(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx)
{
    return stream_get_ctx_v2(hStream, false, pCtx, pGreenCtx);
}

CUresult CUDAAPI cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx)
{
    return stream_get_ctx_v2(hStream, true, pCtx, pGreenCtx);
}

static CUresult stream_wait_event(CUstream hStream, CUevent hEvent, unsigned flags, bool per_thread)
{
    struct gt_stream *s;
    CUresult r = gt_stream_resolve(hStream, per_thread, &s);
    struct gt_event *ev;
    if (r == CUDA_SUCCESS) r = gt_event_check(hEvent, &ev);
    if (r != CUDA_SUCCESS) return r;
    if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL) return CUDA_ERROR_INVALID_VALUE;
    r = gt_capture_check_legacy(s);
    if (r != CUDA_SUCCESS) return r;
    pthread_mutex_lock(&ev->lock);
    bool captured = ev->capture != NULL;
    pthread_mutex_unlock(&ev->lock);
    if (captured || gt_stream_capture(s))
        return gt_capture_wait_event(s, ev, flags & CU_EVENT_WAIT_EXTERNAL);

    struct gt_event_view v;
    gt_event_observe(ev, &v);
    if (!v.recorded) return CUDA_SUCCESS; /* waiting on a never-recorded event is a no-op */
    uint64_t ready = gt_stream_begin(s, 0);
    gt_stream_push_wait(s, &v.at);
    gt_stream_advance_step(s, ready, gt_max_u64(ready, v.ts));
    gt_stream_end(s);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    return stream_wait_event(hStream, hEvent, Flags, false);
}

CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    return stream_wait_event(hStream, hEvent, Flags, true);
}

static CUresult stream_query(CUstream hStream, bool per_thread)
{
    struct gt_stream *s;
    CUresult r = gt_stream_resolve(hStream, per_thread, &s);
    if (r == CUDA_SUCCESS) r = gt_capture_check_sync(s);
    if (r != CUDA_SUCCESS) return r;
    return gt_stream_query(s) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult CUDAAPI cuStreamQuery(CUstream hStream)
{
    return stream_query(hStream, false);
}

CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream)
{
    return stream_query(hStream, true);
}

static CUresult stream_synchronize(CUstream hStream, bool per_thread)
{
    struct gt_stream *s;
    CUresult r = gt_stream_resolve(hStream, per_thread, &s);
    if (r == CUDA_SUCCESS) r = gt_capture_check_sync(s);
    if (r != CUDA_SUCCESS) return r;
    gt_stream_sync(s);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
    return stream_synchronize(hStream, false);
}

CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream)
{
    return stream_synchronize(hStream, true);
}

static CUresult launch_host_func(CUstream hStream, CUhostFn fn, void *userData, bool per_thread)
{
    struct gt_stream *s;
    CUresult r = gt_stream_resolve(hStream, per_thread, &s);
    if (r != CUDA_SUCCESS) return r;
    if (!fn) return CUDA_ERROR_INVALID_VALUE;
    r = gt_capture_check_legacy(s);
    if (r != CUDA_SUCCESS) return r;
    if (gt_stream_capture(s)) {
        struct gt_node_params p = {.kind = GT_NODE_HOST};
        p.u.host.fn = fn;
        p.u.host.arg = userData;
        return gt_capture_add(s, &p);
    }
    struct gt_op op = {.kind = GT_OP_HOST_FN};
    op.u.host.fn = fn;
    op.u.host.arg = userData;
    gt_stream_submit_step(s, &op, false);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    return launch_host_func(hStream, fn, userData, false);
}

CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    return launch_host_func(hStream, fn, userData, true);
}

static CUresult add_callback(CUstream hStream, CUstreamCallback callback, void *userData,
                             unsigned flags, bool per_thread)
{
    struct gt_stream *s;
    CUresult r = gt_stream_resolve(hStream, per_thread, &s);
    if (r != CUDA_SUCCESS) return r;
    if (!callback || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    r = gt_capture_check_legacy(s);
    if (r == CUDA_SUCCESS && gt_stream_capture(s))
        r = gt_capture_check_sync(s); /* callbacks cannot be captured */
    if (r != CUDA_SUCCESS) return r;
    struct gt_op op = {.kind = GT_OP_STREAM_CALLBACK};
    op.u.callback.cb = callback;
    op.u.callback.handle = hStream;
    op.u.callback.arg = userData;
    gt_stream_submit_step(s, &op, false);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
                                     unsigned int flags)
{
    return add_callback(hStream, callback, userData, flags, false);
}

CUresult CUDAAPI cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback,
                                          void *userData, unsigned int flags)
{
    return add_callback(hStream, callback, userData, flags, true);
}

static CUresult attach_mem(CUstream hStream, CUdeviceptr dptr, size_t length, unsigned flags,
                           bool per_thread)
{
    struct gt_stream *s;
    CUresult r = gt_stream_resolve(hStream, per_thread, &s);
    if (r != CUDA_SUCCESS) return r;
    struct gt_alloc a;
    if (flags & ~(unsigned)(CU_MEM_ATTACH_GLOBAL | CU_MEM_ATTACH_HOST | CU_MEM_ATTACH_SINGLE) ||
        !gt_mem_find((uintptr_t)dptr, length, &a) || a.kind != GT_MEM_MANAGED)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS; /* managed memory is always accessible here */
}

CUresult CUDAAPI cuStreamAttachMemAsync(CUstream hStream, CUdeviceptr dptr, size_t length,
                                        unsigned int flags)
{
    return attach_mem(hStream, dptr, length, flags, false);
}

CUresult CUDAAPI cuStreamAttachMemAsync_ptsz(CUstream hStream, CUdeviceptr dptr, size_t length,
                                             unsigned int flags)
{
    return attach_mem(hStream, dptr, length, flags, true);
}
