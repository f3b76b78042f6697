/* 3D copies between linear memory (CUDA arrays are not emulated): one
 * copy of depth x height rows, timed like any copy by the bytes moved. */
#include "emu_copy.h"
#include "emu_trace.h"

/* Both CUDA_MEMCPY3D layouts (and the peer one) name their fields alike. */
#define SIDES(p, src, dst)                                                                         \
    struct gt_copy_side src = {.type = (p)->srcMemoryType,                                         \
                               .host = (p)->srcHost,                                               \
                               .device = (p)->srcDevice,                                           \
                               .x = (p)->srcXInBytes,                                              \
                               .y = (p)->srcY,                                                     \
                               .z = (p)->srcZ,                                                     \
                               .pitch = (p)->srcPitch,                                             \
                               .height = (p)->srcHeight};                                          \
    struct gt_copy_side dst = {.type = (p)->dstMemoryType,                                         \
                               .host = (p)->dstHost,                                               \
                               .device = (p)->dstDevice,                                           \
                               .x = (p)->dstXInBytes,                                              \
                               .y = (p)->dstY,                                                     \
                               .z = (p)->dstZ,                                                     \
                               .pitch = (p)->dstPitch,                                             \
                               .height = (p)->dstHeight}

/* Not initialised first, then a missing argument. */
static CUresult check_arg(const void *p)
{
    CUresult r = gt_ready();
    return r != CUDA_SUCCESS ? r : p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult copy_3d_v2(const CUDA_MEMCPY3D *p, CUstream stream, bool per_thread, bool async)
{
    CUresult r = check_arg(p);
    if (r != CUDA_SUCCESS) return r;
    if (p->srcLOD || p->dstLOD || p->reserved0 || p->reserved1) return CUDA_ERROR_INVALID_VALUE;
    SIDES(p, src, dst);
    return gt_copy_sides(&dst, &src, p->WidthInBytes, p->Height, p->Depth, stream, per_thread,
                         async);
}

static CUresult copy_3d_v1(const CUDA_MEMCPY3D_v1 *p, CUstream stream, bool async)
{
    CUresult r = check_arg(p);
    if (r != CUDA_SUCCESS) return r;
    if (p->srcLOD || p->dstLOD || p->reserved0 || p->reserved1) return CUDA_ERROR_INVALID_VALUE;
    SIDES(p, src, dst);
    return gt_copy_sides(&dst, &src, p->WidthInBytes, p->Height, p->Depth, stream, false, async);
}

static CUresult copy_3d_peer(const CUDA_MEMCPY3D_PEER *p, CUstream stream, bool per_thread,
                             bool async)
{
    CUresult r = check_arg(p);
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(p->srcContext, GT_KIND_CONTEXT) ||
        !gt_object_is(p->dstContext, GT_KIND_CONTEXT))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (p->srcLOD || p->dstLOD) return CUDA_ERROR_INVALID_VALUE;
    SIDES(p, src, dst);
    return gt_copy_sides(&dst, &src, p->WidthInBytes, p->Height, p->Depth, stream, per_thread,
                         async);
}

CUresult CUDAAPI cuMemcpy3D(const CUDA_MEMCPY3D_v1 *pCopy)
{
    GT_API_ENTER(cuMemcpy3D, pCopy);
    return GT_API_EXIT(copy_3d_v1(pCopy, NULL, false));
}

CUresult CUDAAPI cuMemcpy3DAsync(const CUDA_MEMCPY3D_v1 *pCopy, CUstream hStream)
{
    GT_API_ENTER(cuMemcpy3DAsync, pCopy, hStream);
    return GT_API_EXIT(copy_3d_v1(pCopy, hStream, true));
}

CUresult CUDAAPI cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy)
{
    GT_API_ENTER(cuMemcpy3D_v2, pCopy);
    return GT_API_EXIT(copy_3d_v2(pCopy, NULL, false, false));
}

CUresult CUDAAPI cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *pCopy)
{
    GT_API_ENTER(cuMemcpy3D_v2_ptds, pCopy);
    return GT_API_EXIT(copy_3d_v2(pCopy, NULL, true, false));
}

CUresult CUDAAPI cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{
    GT_API_ENTER(cuMemcpy3DAsync_v2, pCopy, hStream);
    return GT_API_EXIT(copy_3d_v2(pCopy, hStream, false, true));
}

CUresult CUDAAPI cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{
    GT_API_ENTER(cuMemcpy3DAsync_v2_ptsz, pCopy, hStream);
    return GT_API_EXIT(copy_3d_v2(pCopy, hStream, true, true));
}

CUresult CUDAAPI cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *pCopy)
{
    GT_API_ENTER(cuMemcpy3DPeer, pCopy);
    return GT_API_EXIT(copy_3d_peer(pCopy, NULL, false, false));
}

CUresult CUDAAPI cuMemcpy3DPeer_ptds(const CUDA_MEMCPY3D_PEER *pCopy)
{
    GT_API_ENTER(cuMemcpy3DPeer_ptds, pCopy);
    return GT_API_EXIT(copy_3d_peer(pCopy, NULL, true, false));
}

CUresult CUDAAPI cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream)
{
    GT_API_ENTER(cuMemcpy3DPeerAsync, pCopy, hStream);
    return GT_API_EXIT(copy_3d_peer(pCopy, hStream, false, true));
}

CUresult CUDAAPI cuMemcpy3DPeerAsync_ptsz(const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream)
{
    GT_API_ENTER(cuMemcpy3DPeerAsync_ptsz, pCopy, hStream);
    return GT_API_EXIT(copy_3d_peer(pCopy, hStream, true, true));
}
