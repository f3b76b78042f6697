/* Memsets (D8/D16/D32, 1D and 2D, synchronous and asynchronous). Their
 * duration is bytes / the memset rate of GPUTRACE_EMU_GBPS. The
 * synchronous forms return without waiting when the target is device
 * memory, as the driver documents, and wait for completion for page-locked
 * host or managed memory. */
#include "emu_copy.h"
#include "emu_trace.h"

static enum gtemu_memory traced_memory(enum gt_mem_kind kind)
{
    switch (kind) {
    case GT_MEM_HOST:
    case GT_MEM_REGISTERED:
        return GTEMU_MEMORY_PINNED;
    case GT_MEM_MANAGED:
        return GTEMU_MEMORY_MANAGED;
    default:
        return GTEMU_MEMORY_DEVICE;
    }
}

CUresult gt_memset_submit(struct gt_memset_request *req)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!req->async && !gt_ctx_current()) return CUDA_ERROR_INVALID_CONTEXT;
    struct gt_memset *m = &req->set;
    size_t row = m->width * m->elem;
    size_t rows = m->height ? m->height : 1;
    if (rows > 1 && m->pitch < row) return CUDA_ERROR_INVALID_VALUE;
    size_t extent = rows > 1 ? (rows - 1) * m->pitch + row : row;
    struct gt_alloc a;
    if (!m->dst || ((uintptr_t)m->dst % m->elem) != 0 ||
        !gt_mem_find((uintptr_t)m->dst, extent, &a) || (a.kind == GT_MEM_VMM && !a.accessible))
        return CUDA_ERROR_INVALID_VALUE;
    struct gt_stream *s;
    r = gt_stream_resolve(req->async ? req->stream : NULL, req->per_thread, &s);
    if (r == CUDA_SUCCESS) r = gt_capture_check_legacy(s);
    if (r == CUDA_SUCCESS && !req->async) r = gt_capture_check_sync(s);
    if (r != CUDA_SUCCESS || row == 0) return r;
    uint64_t ns = gt_bytes_duration(row * rows, gt_config_get()->gbps_memset);
    struct gtemu_work traced = {.kind = GTEMU_WORK_MEMSET,
                                .bytes = row * rows,
                                .async = req->async,
                                .target = traced_memory(a.kind),
                                .value = m->value};
    if (gt_stream_capture(s)) {
        struct gt_node_params p = {.kind = GT_NODE_MEMSET, .ns = ns, .work = traced};
        p.u.memset = *m;
        return gt_capture_add(s, &p);
    }
    struct gt_op op = {.kind = GT_OP_MEMSET};
    op.u.memset = *m;
    bool host_visible =
        a.kind == GT_MEM_HOST || a.kind == GT_MEM_REGISTERED || a.kind == GT_MEM_MANAGED;
    unsigned long long id = atomic_load_explicit(&s->id, memory_order_relaxed);
    struct gt_done done;
    gt_stream_submit(s, ns, &op, !req->async, &done);
    if (gt_trace_attached()) {
        gt_trace_work_at(&traced, s, done.start, done.end);
        gt_trace_work(&traced);
    }
    if (!req->async && host_visible) gt_wait_complete(s, id, done.seq, done.end);
    return CUDA_SUCCESS;
}

static CUresult memset_2d(CUdeviceptr dst, size_t pitch, uint32_t value, unsigned elem,
                          size_t width, size_t height, CUstream stream, bool per_thread, bool async)
{
    struct gt_memset_request req = {.stream = stream, .per_thread = per_thread, .async = async};
    req.set.dst = (void *)(uintptr_t)dst;
    req.set.value = value;
    req.set.elem = elem;
    req.set.width = width;
    req.set.height = height;
    req.set.pitch = height > 1 ? pitch : width * elem;
    return gt_memset_submit(&req);
}

CUresult CUDAAPI cuMemsetD8(CUdeviceptr_v1 dstDevice, unsigned char uc, unsigned int N)
{
    GT_API_ENTER(cuMemsetD8, dstDevice, uc, N);
    return GT_API_EXIT(memset_2d(dstDevice, 0, uc, 1, N, 1, NULL, false, false));
}

CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    GT_API_ENTER(cuMemsetD8_v2, dstDevice, uc, N);
    return GT_API_EXIT(memset_2d(dstDevice, 0, uc, 1, N, 1, NULL, false, false));
}

CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    GT_API_ENTER(cuMemsetD8_v2_ptds, dstDevice, uc, N);
    return GT_API_EXIT(memset_2d(dstDevice, 0, uc, 1, N, 1, NULL, true, false));
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N,
                                 CUstream hStream)
{
    GT_API_ENTER(cuMemsetD8Async, dstDevice, uc, N, hStream);
    return GT_API_EXIT(memset_2d(dstDevice, 0, uc, 1, N, 1, hStream, false, true));
}

CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N,
                                      CUstream hStream)
{
    GT_API_ENTER(cuMemsetD8Async_ptsz, dstDevice, uc, N, hStream);
    return GT_API_EXIT(memset_2d(dstDevice, 0, uc, 1, N, 1, hStream, true, true));
}

CUresult CUDAAPI cuMemsetD2D8(CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned char uc,
                              unsigned int Width, unsigned int Height)
{
    GT_API_ENTER(cuMemsetD2D8, dstDevice, dstPitch, uc, Width, Height);
    return GT_API_EXIT(memset_2d(dstDevice, dstPitch, uc, 1, Width, Height, NULL, false, false));
}

CUresult CUDAAPI cuMemsetD2D8_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
                                 size_t Width, size_t Height)
{
    GT_API_ENTER(cuMemsetD2D8_v2, dstDevice, dstPitch, uc, Width, Height);
    return GT_API_EXIT(memset_2d(dstDevice, dstPitch, uc, 1, Width, Height, NULL, false, false));
}

CUresult CUDAAPI cuMemsetD2D8_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
                                      size_t Width, size_t Height)
{
    GT_API_ENTER(cuMemsetD2D8_v2_ptds, dstDevice, dstPitch, uc, Width, Height);
    return GT_API_EXIT(memset_2d(dstDevice, dstPitch, uc, 1, Width, Height, NULL, true, false));
}

CUresult CUDAAPI cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
                                   size_t Width, size_t Height, CUstream hStream)
{
    GT_API_ENTER(cuMemsetD2D8Async, dstDevice, dstPitch, uc, Width, Height, hStream);
    return GT_API_EXIT(memset_2d(dstDevice, dstPitch, uc, 1, Width, Height, hStream, false, true));
}

CUresult CUDAAPI cuMemsetD2D8Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
                                        size_t Width, size_t Height, CUstream hStream)
{
    GT_API_ENTER(cuMemsetD2D8Async_ptsz, dstDevice, dstPitch, uc, Width, Height, hStream);
    return GT_API_EXIT(memset_2d(dstDevice, dstPitch, uc, 1, Width, Height, hStream, true, true));
}

CUresult CUDAAPI cuMemsetD16(CUdeviceptr_v1 dstDevice, unsigned short us, unsigned int N)
{
    GT_API_ENTER(cuMemsetD16, dstDevice, us, N);
    return GT_API_EXIT(memset_2d(dstDevice, 0, us, 2, N, 1, NULL, false, false));
}

CUresult CUDAAPI cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N)
{
    GT_API_ENTER(cuMemsetD16_v2, dstDevice, us, N);
    return GT_API_EXIT(memset_2d(dstDevice, 0, us, 2, N, 1, NULL, false, false));
}

CUresult CUDAAPI cuMemsetD16_v2_ptds(CUdeviceptr dstDevice, unsigned short us, size_t N)
{
    GT_API_ENTER(cuMemsetD16_v2_ptds, dstDevice, us, N);
    return GT_API_EXIT(memset_2d(dstDevice, 0, us, 2, N, 1, NULL, true, false));
}

CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N,
                                  CUstream hStream)
{
    GT_API_ENTER(cuMemsetD16Async, dstDevice, us, N, hStream);
    return GT_API_EXIT(memset_2d(dstDevice, 0, us, 2, N, 1, hStream, false, true));
}

CUresult CUDAAPI cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short us, size_t N,
                                       CUstream hStream)
{
    GT_API_ENTER(cuMemsetD16Async_ptsz, dstDevice, us, N, hStream);
    return GT_API_EXIT(memset_2d(dstDevice, 0, us, 2, N, 1, hStream, true, true));
}

CUresult CUDAAPI cuMemsetD2D16(CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned short us,
                               unsigned int Width, unsigned int Height)
{
    GT_API_ENTER(cuMemsetD2D16, dstDevice, dstPitch, us, Width, Height);
    return GT_API_EXIT(memset_2d(dstDevice, dstPitch, us, 2, Width, Height, NULL, false, false));
}

CUresult CUDAAPI cuMemsetD2D16_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                                  size_t Width, size_t Height)
{
    GT_API_ENTER(cuMemsetD2D16_v2, dstDevice, dstPitch, us, Width, Height);
    return GT_API_EXIT(memset_2d(dstDevice, dstPitch, us, 2, Width, Height, NULL, false, false));
}

CUresult CUDAAPI cuMemsetD2D16_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                                       size_t Width, size_t Height)
{
    GT_API_ENTER(cuMemsetD2D16_v2_ptds, dstDevice, dstPitch, us, Width, Height);
    return GT_API_EXIT(memset_2d(dstDevice, dstPitch, us, 2, Width, Height, NULL, true, false));
}

CUresult CUDAAPI cuMemsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                                    size_t Width, size_t Height, CUstream hStream)
{
    GT_API_ENTER(cuMemsetD2D16Async, dstDevice, dstPitch, us, Width, Height, hStream);
    return GT_API_EXIT(memset_2d(dstDevice, dstPitch, us, 2, Width, Height, hStream, false, true));
}

CUresult CUDAAPI cuMemsetD2D16Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                                         size_t Width, size_t Height, CUstream hStream)
{
    GT_API_ENTER(cuMemsetD2D16Async_ptsz, dstDevice, dstPitch, us, Width, Height, hStream);
    return GT_API_EXIT(memset_2d(dstDevice, dstPitch, us, 2, Width, Height, hStream, true, true));
}

CUresult CUDAAPI cuMemsetD32(CUdeviceptr_v1 dstDevice, unsigned int ui, unsigned int N)
{
    GT_API_ENTER(cuMemsetD32, dstDevice, ui, N);
    return GT_API_EXIT(memset_2d(dstDevice, 0, ui, 4, N, 1, NULL, false, false));
}

CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
    GT_API_ENTER(cuMemsetD32_v2, dstDevice, ui, N);
    return GT_API_EXIT(memset_2d(dstDevice, 0, ui, 4, N, 1, NULL, false, false));
}

CUresult CUDAAPI cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
    GT_API_ENTER(cuMemsetD32_v2_ptds, dstDevice, ui, N);
    return GT_API_EXIT(memset_2d(dstDevice, 0, ui, 4, N, 1, NULL, true, false));
}

CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N,
                                  CUstream hStream)
{
    GT_API_ENTER(cuMemsetD32Async, dstDevice, ui, N, hStream);
    return GT_API_EXIT(memset_2d(dstDevice, 0, ui, 4, N, 1, hStream, false, true));
}

CUresult CUDAAPI cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N,
                                       CUstream hStream)
{
    GT_API_ENTER(cuMemsetD32Async_ptsz, dstDevice, ui, N, hStream);
    return GT_API_EXIT(memset_2d(dstDevice, 0, ui, 4, N, 1, hStream, true, true));
}

CUresult CUDAAPI cuMemsetD2D32(CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned int ui,
                               unsigned int Width, unsigned int Height)
{
    GT_API_ENTER(cuMemsetD2D32, dstDevice, dstPitch, ui, Width, Height);
    return GT_API_EXIT(memset_2d(dstDevice, dstPitch, ui, 4, Width, Height, NULL, false, false));
}

CUresult CUDAAPI cuMemsetD2D32_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                                  size_t Width, size_t Height)
{
    GT_API_ENTER(cuMemsetD2D32_v2, dstDevice, dstPitch, ui, Width, Height);
    return GT_API_EXIT(memset_2d(dstDevice, dstPitch, ui, 4, Width, Height, NULL, false, false));
}

CUresult CUDAAPI cuMemsetD2D32_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                                       size_t Width, size_t Height)
{
    GT_API_ENTER(cuMemsetD2D32_v2_ptds, dstDevice, dstPitch, ui, Width, Height);
    return GT_API_EXIT(memset_2d(dstDevice, dstPitch, ui, 4, Width, Height, NULL, true, false));
}

CUresult CUDAAPI cuMemsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                                    size_t Width, size_t Height, CUstream hStream)
{
    GT_API_ENTER(cuMemsetD2D32Async, dstDevice, dstPitch, ui, Width, Height, hStream);
    return GT_API_EXIT(memset_2d(dstDevice, dstPitch, ui, 4, Width, Height, hStream, false, true));
}

CUresult CUDAAPI cuMemsetD2D32Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                                         size_t Width, size_t Height, CUstream hStream)
{
    GT_API_ENTER(cuMemsetD2D32Async_ptsz, dstDevice, dstPitch, ui, Width, Height, hStream);
    return GT_API_EXIT(memset_2d(dstDevice, dstPitch, ui, 4, Width, Height, hStream, true, true));
}
