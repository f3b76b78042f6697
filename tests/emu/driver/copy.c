/* Copies: validation, simulated duration and host synchronisation.
 *
 * Rate (GPUTRACE_EMU_GBPS): device<->device uses dtod (peer across
 * devices); host<->device uses pinned when the host side is page-locked
 * (cuMemAllocHost/HostAlloc/HostRegister) and pageable otherwise; managed
 * memory counts as device memory. Host<->host uses pinned only when both
 * sides are page-locked.
 *
 * Synchronisation follows the driver's documented behaviour: synchronous
 * copies return when the copy is complete, except device to device;
 * asynchronous copies return at once, except to pageable host memory
 * (returns when complete), from pageable host memory (waits for the
 * stream, then takes the data before returning) and host to host. */
#include "emu_copy.h"

#define GT_INLINE_ASYNC_BYTES (64u << 10)

enum mem_class { CLASS_PAGEABLE, CLASS_PINNED, CLASS_DEVICE };

struct endpoint {
    enum mem_class cls;
    struct gt_device *dev;
};

static CUresult classify(const void *p, size_t extent, enum gt_side want, struct endpoint *ep)
{
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    struct gt_alloc a;
    if (gt_mem_find((uintptr_t)p, extent, &a)) {
        ep->dev = a.dev;
        switch (a.kind) {
        case GT_MEM_HOST:
        case GT_MEM_REGISTERED:
            ep->cls = CLASS_PINNED;
            break;
        case GT_MEM_MANAGED:
            ep->cls = CLASS_DEVICE;
            return CUDA_SUCCESS; /* host-accessible too */
        default:
            ep->cls = CLASS_DEVICE;
            if (a.kind == GT_MEM_VMM && !a.accessible)
                return CUDA_ERROR_INVALID_VALUE; /* no cuMemSetAccess yet */
            return want == GT_SIDE_HOST ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
        }
        return CUDA_SUCCESS;
    }
    /* Starts inside a known allocation but runs past its end. */
    if (gt_mem_find((uintptr_t)p, 0, NULL)) return CUDA_ERROR_INVALID_VALUE;
    if (want == GT_SIDE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
    ep->cls = CLASS_PAGEABLE;
    ep->dev = NULL;
    return CUDA_SUCCESS;
}

static double copy_rate(const struct endpoint *d, const struct endpoint *s)
{
    const struct gt_config *c = gt_config_get();
    bool d_dev = d->cls == CLASS_DEVICE, s_dev = s->cls == CLASS_DEVICE;
    if (d_dev && s_dev) return d->dev != s->dev ? c->gbps_peer : c->gbps_dtod;
    if (d_dev || s_dev) {
        const struct endpoint *host = d_dev ? s : d;
        return host->cls == CLASS_PINNED ? c->gbps_pinned : c->gbps_pageable;
    }
    return d->cls == CLASS_PINNED && s->cls == CLASS_PINNED ? c->gbps_pinned : c->gbps_pageable;
}

static size_t extent_of(size_t width, size_t height, size_t pitch)
{
    return height <= 1 ? width : (height - 1) * pitch + width;
}

/* The stream a copy runs on: the given one, or for synchronous calls the
 * NULL stream of the current context (per-thread for _ptds). */
static CUresult copy_stream(const struct gt_copy_request *req, struct gt_stream **out)
{
    CUresult r = gt_stream_resolve(req->async ? req->stream : NULL, req->per_thread, out);
    if (r != CUDA_SUCCESS) return r;
    r = gt_capture_check_legacy(*out);
    if (r == CUDA_SUCCESS && !req->async) r = gt_capture_check_sync(*out);
    return r;
}

CUresult gt_copy(struct gt_copy_request *req)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!req->async && !gt_ctx_current()) return CUDA_ERROR_INVALID_CONTEXT;
    struct gt_copy *c = &req->copy;
    struct endpoint dst, src;
    r = classify(c->dst, extent_of(c->width, c->height, c->dpitch), req->dst_side, &dst);
    if (r == CUDA_SUCCESS)
        r = classify(c->src, extent_of(c->width, c->height, c->spitch), req->src_side, &src);
    if (r != CUDA_SUCCESS) return r;
    struct gt_stream *s;
    r = copy_stream(req, &s);
    if (r != CUDA_SUCCESS || c->width == 0 || c->height == 0) return r;

    size_t bytes = c->width * (c->height ? c->height : 1);
    uint64_t ns = gt_bytes_duration(bytes, copy_rate(&dst, &src));
    if (gt_stream_capture(s)) {
        struct gt_node_params p = {.kind = GT_NODE_MEMCPY, .ns = ns};
        p.u.copy = *c;
        return gt_capture_add(s, &p);
    }

    bool d_dev = dst.cls == CLASS_DEVICE, s_dev = src.cls == CLASS_DEVICE;
    bool from_pageable = !s_dev && src.cls == CLASS_PAGEABLE && d_dev;
    bool wait_after, sync_before = false;
    if (!req->async) {
        wait_after = !(d_dev && s_dev);
    } else {
        wait_after = (!d_dev && !s_dev) || (!d_dev && dst.cls == CLASS_PAGEABLE);
        sync_before = from_pageable;
    }
    if (sync_before) gt_stream_sync(s);
    struct gt_op op = {.kind = GT_OP_COPY};
    op.u.copy = *c;
    bool may_inline = !req->async || sync_before || bytes <= GT_INLINE_ASYNC_BYTES;
    unsigned long long id = atomic_load_explicit(&s->id, memory_order_relaxed);
    struct gt_done done;
    gt_stream_submit(s, ns, &op, may_inline, &done);
    if (wait_after) gt_wait_complete(s, id, done.seq, done.end);
    return CUDA_SUCCESS;
}

static CUresult side_of(CUmemorytype type, const void *host, CUdeviceptr device, enum gt_side *side,
                        const void **ptr)
{
    switch (type) {
    case CU_MEMORYTYPE_HOST:
        *side = GT_SIDE_HOST;
        *ptr = host;
        return CUDA_SUCCESS;
    case CU_MEMORYTYPE_DEVICE:
        *side = GT_SIDE_DEVICE;
        *ptr = (const void *)(uintptr_t)device;
        return CUDA_SUCCESS;
    case CU_MEMORYTYPE_UNIFIED:
        *side = GT_SIDE_ANY;
        *ptr = (const void *)(uintptr_t)device;
        return CUDA_SUCCESS;
    case CU_MEMORYTYPE_ARRAY:
        return CUDA_ERROR_NOT_SUPPORTED; /* no CUDA arrays in the emulator */
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult gt_copy_2d(const CUDA_MEMCPY2D *p, CUstream stream, bool per_thread, bool async,
                    bool unaligned)
{
    (void)unaligned;
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    struct gt_copy_request req = {.stream = stream, .per_thread = per_thread, .async = async};
    const void *src, *dst;
    r = side_of(p->srcMemoryType, p->srcHost, p->srcDevice, &req.src_side, &src);
    if (r == CUDA_SUCCESS)
        r = side_of(p->dstMemoryType, p->dstHost, p->dstDevice, &req.dst_side, &dst);
    if (r != CUDA_SUCCESS) return r;
    size_t spitch = p->srcPitch ? p->srcPitch : p->WidthInBytes;
    size_t dpitch = p->dstPitch ? p->dstPitch : p->WidthInBytes;
    if (p->Height > 1 && (spitch < p->WidthInBytes || dpitch < p->WidthInBytes))
        return CUDA_ERROR_INVALID_VALUE;
    if (src) src = (const char *)src + p->srcY * spitch + p->srcXInBytes;
    if (dst) dst = (const char *)dst + p->dstY * dpitch + p->dstXInBytes;
    req.copy.dst = (void *)(uintptr_t)dst;
    req.copy.src = src;
    req.copy.width = p->WidthInBytes;
    req.copy.height = p->Height;
    req.copy.dpitch = dpitch;
    req.copy.spitch = spitch;
    return gt_copy(&req);
}
