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
#include "emu_trace.h"

#define GT_INLINE_ASYNC_BYTES (64u << 10)

enum mem_class { CLASS_PAGEABLE, CLASS_PINNED, CLASS_DEVICE };

struct endpoint {
    enum mem_class cls;
    struct gt_device *dev;
    bool managed;           /* device class: managed memory */
    struct gt_context *ctx; /* the owning context, if any */
};

static CUresult classify(const void *p, size_t extent, enum gt_side want, struct endpoint *ep)
{
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    struct gt_alloc a;
    if (gt_mem_find((uintptr_t)p, extent, &a)) {
        ep->dev = a.dev;
        ep->managed = a.kind == GT_MEM_MANAGED;
        ep->ctx = a.ctx;
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
    ep->managed = false;
    ep->ctx = NULL;
    return CUDA_SUCCESS;
}

/* A side of the copy as a tracing tool is told of it. */
static struct gtemu_work_side traced_side(const struct endpoint *ep)
{
    struct gtemu_work_side side = {.memory = GTEMU_MEMORY_PAGEABLE, .device = -1};
    if (ep->cls == CLASS_PINNED) side.memory = GTEMU_MEMORY_PINNED;
    if (ep->cls == CLASS_DEVICE) {
        side.memory = ep->managed ? GTEMU_MEMORY_MANAGED : GTEMU_MEMORY_DEVICE;
        side.device = ep->dev ? ep->dev->ordinal : -1;
    }
    if (ep->ctx) side.context_id = (uint32_t)gt_ctx_id(ep->ctx);
    return side;
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

static size_t extent_of(const struct gt_copy *c, size_t pitch, size_t slice)
{
    size_t rows = c->height ? c->height : 1, slices = c->depth ? c->depth : 1;
    return (slices - 1) * slice + (rows - 1) * pitch + c->width;
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
    r = classify(c->dst, extent_of(c, c->dpitch, c->dslice), req->dst_side, &dst);
    if (r == CUDA_SUCCESS)
        r = classify(c->src, extent_of(c, c->spitch, c->sslice), req->src_side, &src);
    if (r != CUDA_SUCCESS) return r;
    struct gt_stream *s;
    r = copy_stream(req, &s);
    if (r != CUDA_SUCCESS || c->width == 0 || c->height == 0 || c->depth == 0) return r;

    size_t bytes = c->width * c->height * c->depth;
    uint64_t ns = gt_bytes_duration(bytes, copy_rate(&dst, &src));
    struct gtemu_work traced = {.kind = GTEMU_WORK_MEMCPY,
                                .bytes = bytes,
                                .async = req->async,
                                .src = traced_side(&src),
                                .dst = traced_side(&dst)};
    if (gt_stream_capture(s)) {
        struct gt_node_params p = {.kind = GT_NODE_MEMCPY, .ns = ns, .work = traced};
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
    if (gt_trace_attached()) {
        gt_trace_work_at(&traced, s, done.start, done.end);
        gt_trace_work(&traced);
    }
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

CUresult gt_copy_sides(const struct gt_copy_side *dst, const struct gt_copy_side *src, size_t width,
                       size_t height, size_t depth, CUstream stream, bool per_thread, bool async)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    struct gt_copy_request req = {.stream = stream, .per_thread = per_thread, .async = async};
    const void *s, *d;
    r = side_of(src->type, src->host, src->device, &req.src_side, &s);
    if (r == CUDA_SUCCESS) r = side_of(dst->type, dst->host, dst->device, &req.dst_side, &d);
    if (r != CUDA_SUCCESS) return r;
    size_t spitch = src->pitch ? src->pitch : width;
    size_t dpitch = dst->pitch ? dst->pitch : width;
    size_t sheight = src->height ? src->height : height;
    size_t dheight = dst->height ? dst->height : height;
    if ((height > 1 || depth > 1) && (spitch < width || dpitch < width))
        return CUDA_ERROR_INVALID_VALUE;
    if (depth > 1 && (sheight < height || dheight < height)) return CUDA_ERROR_INVALID_VALUE;
    if (s) s = (const char *)s + (src->z * sheight + src->y) * spitch + src->x;
    if (d) d = (const char *)d + (dst->z * dheight + dst->y) * dpitch + dst->x;
    req.copy = (struct gt_copy){.dst = (void *)(uintptr_t)d,
                                .src = s,
                                .width = width,
                                .height = height,
                                .depth = depth,
                                .dpitch = dpitch,
                                .spitch = spitch,
                                .dslice = dpitch * dheight,
                                .sslice = spitch * sheight};
    return gt_copy(&req);
}

CUresult gt_copy_2d(const CUDA_MEMCPY2D *p, CUstream stream, bool per_thread, bool async)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    struct gt_copy_side src = {.type = p->srcMemoryType,
                               .host = p->srcHost,
                               .device = p->srcDevice,
                               .x = p->srcXInBytes,
                               .y = p->srcY,
                               .pitch = p->srcPitch};
    struct gt_copy_side dst = {.type = p->dstMemoryType,
                               .host = p->dstHost,
                               .device = p->dstDevice,
                               .x = p->dstXInBytes,
                               .y = p->dstY,
                               .pitch = p->dstPitch};
    return gt_copy_sides(&dst, &src, p->WidthInBytes, p->Height, 1, stream, per_thread, async);
}
