/* Copy entry points: every ABI variant of cuda.h 13 (legacy 32-bit, _v2,
 * _ptds/_ptsz) as a thin wrapper over gt_copy. */
#include "emu_copy.h"
#include "emu_trace.h"

static CUresult copy_1d(void *dst, enum gt_side dst_side, const void *src, enum gt_side src_side,
                        size_t bytes, CUstream stream, bool per_thread, bool async)
{
    struct gt_copy_request req = {.stream = stream,
                                  .per_thread = per_thread,
                                  .async = async,
                                  .dst_side = dst_side,
                                  .src_side = src_side};
    req.copy.dst = dst;
    req.copy.src = src;
    req.copy.width = bytes;
    req.copy.height = 1;
    req.copy.depth = 1;
    req.copy.dpitch = bytes;
    req.copy.spitch = bytes;
    return gt_copy(&req);
}

#define DPTR(p) ((void *)(uintptr_t)(p))

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount)
{
    GT_API_ENTER(cuMemcpyHtoD, dstDevice, srcHost, ByteCount);
    return GT_API_EXIT(copy_1d(DPTR(dstDevice), GT_SIDE_DEVICE, srcHost, GT_SIDE_HOST, ByteCount,
                               NULL, false, false));
}

CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    GT_API_ENTER(cuMemcpyHtoD_v2, dstDevice, srcHost, ByteCount);
    return GT_API_EXIT(copy_1d(DPTR(dstDevice), GT_SIDE_DEVICE, srcHost, GT_SIDE_HOST, ByteCount,
                               NULL, false, false));
}

CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    GT_API_ENTER(cuMemcpyHtoD_v2_ptds, dstDevice, srcHost, ByteCount);
    return GT_API_EXIT(copy_1d(DPTR(dstDevice), GT_SIDE_DEVICE, srcHost, GT_SIDE_HOST, ByteCount,
                               NULL, true, false));
}

CUresult CUDAAPI cuMemcpyDtoH(void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount)
{
    GT_API_ENTER(cuMemcpyDtoH, dstHost, srcDevice, ByteCount);
    return GT_API_EXIT(copy_1d(dstHost, GT_SIDE_HOST, DPTR(srcDevice), GT_SIDE_DEVICE, ByteCount,
                               NULL, false, false));
}

CUresult CUDAAPI cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    GT_API_ENTER(cuMemcpyDtoH_v2, dstHost, srcDevice, ByteCount);
    return GT_API_EXIT(copy_1d(dstHost, GT_SIDE_HOST, DPTR(srcDevice), GT_SIDE_DEVICE, ByteCount,
                               NULL, false, false));
}

CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    GT_API_ENTER(cuMemcpyDtoH_v2_ptds, dstHost, srcDevice, ByteCount);
    return GT_API_EXIT(copy_1d(dstHost, GT_SIDE_HOST, DPTR(srcDevice), GT_SIDE_DEVICE, ByteCount,
                               NULL, true, false));
}

CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice,
                              unsigned int ByteCount)
{
    GT_API_ENTER(cuMemcpyDtoD, dstDevice, srcDevice, ByteCount);
    return GT_API_EXIT(copy_1d(DPTR(dstDevice), GT_SIDE_DEVICE, DPTR(srcDevice), GT_SIDE_DEVICE,
                               ByteCount, NULL, false, false));
}

CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
    GT_API_ENTER(cuMemcpyDtoD_v2, dstDevice, srcDevice, ByteCount);
    return GT_API_EXIT(copy_1d(DPTR(dstDevice), GT_SIDE_DEVICE, DPTR(srcDevice), GT_SIDE_DEVICE,
                               ByteCount, NULL, false, false));
}

CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                      size_t ByteCount)
{
    GT_API_ENTER(cuMemcpyDtoD_v2_ptds, dstDevice, srcDevice, ByteCount);
    return GT_API_EXIT(copy_1d(DPTR(dstDevice), GT_SIDE_DEVICE, DPTR(srcDevice), GT_SIDE_DEVICE,
                               ByteCount, NULL, true, false));
}

CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
    GT_API_ENTER(cuMemcpy, dst, src, ByteCount);
    return GT_API_EXIT(
        copy_1d(DPTR(dst), GT_SIDE_ANY, DPTR(src), GT_SIDE_ANY, ByteCount, NULL, false, false));
}

CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
    GT_API_ENTER(cuMemcpy_ptds, dst, src, ByteCount);
    return GT_API_EXIT(
        copy_1d(DPTR(dst), GT_SIDE_ANY, DPTR(src), GT_SIDE_ANY, ByteCount, NULL, true, false));
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr_v1 dstDevice, const void *srcHost,
                                   unsigned int ByteCount, CUstream hStream)
{
    GT_API_ENTER(cuMemcpyHtoDAsync, dstDevice, srcHost, ByteCount, hStream);
    return GT_API_EXIT(copy_1d(DPTR(dstDevice), GT_SIDE_DEVICE, srcHost, GT_SIDE_HOST, ByteCount,
                               hStream, false, true));
}

CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                      CUstream hStream)
{
    GT_API_ENTER(cuMemcpyHtoDAsync_v2, dstDevice, srcHost, ByteCount, hStream);
    return GT_API_EXIT(copy_1d(DPTR(dstDevice), GT_SIDE_DEVICE, srcHost, GT_SIDE_HOST, ByteCount,
                               hStream, false, true));
}

CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost,
                                           size_t ByteCount, CUstream hStream)
{
    GT_API_ENTER(cuMemcpyHtoDAsync_v2_ptsz, dstDevice, srcHost, ByteCount, hStream);
    return GT_API_EXIT(copy_1d(DPTR(dstDevice), GT_SIDE_DEVICE, srcHost, GT_SIDE_HOST, ByteCount,
                               hStream, true, true));
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount,
                                   CUstream hStream)
{
    GT_API_ENTER(cuMemcpyDtoHAsync, dstHost, srcDevice, ByteCount, hStream);
    return GT_API_EXIT(copy_1d(dstHost, GT_SIDE_HOST, DPTR(srcDevice), GT_SIDE_DEVICE, ByteCount,
                               hStream, false, true));
}

CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                      CUstream hStream)
{
    GT_API_ENTER(cuMemcpyDtoHAsync_v2, dstHost, srcDevice, ByteCount, hStream);
    return GT_API_EXIT(copy_1d(dstHost, GT_SIDE_HOST, DPTR(srcDevice), GT_SIDE_DEVICE, ByteCount,
                               hStream, false, true));
}

CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                           CUstream hStream)
{
    GT_API_ENTER(cuMemcpyDtoHAsync_v2_ptsz, dstHost, srcDevice, ByteCount, hStream);
    return GT_API_EXIT(copy_1d(dstHost, GT_SIDE_HOST, DPTR(srcDevice), GT_SIDE_DEVICE, ByteCount,
                               hStream, true, true));
}

CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice,
                                   unsigned int ByteCount, CUstream hStream)
{
    GT_API_ENTER(cuMemcpyDtoDAsync, dstDevice, srcDevice, ByteCount, hStream);
    return GT_API_EXIT(copy_1d(DPTR(dstDevice), GT_SIDE_DEVICE, DPTR(srcDevice), GT_SIDE_DEVICE,
                               ByteCount, hStream, false, true));
}

CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                      size_t ByteCount, CUstream hStream)
{
    GT_API_ENTER(cuMemcpyDtoDAsync_v2, dstDevice, srcDevice, ByteCount, hStream);
    return GT_API_EXIT(copy_1d(DPTR(dstDevice), GT_SIDE_DEVICE, DPTR(srcDevice), GT_SIDE_DEVICE,
                               ByteCount, hStream, false, true));
}

CUresult CUDAAPI cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                           size_t ByteCount, CUstream hStream)
{
    GT_API_ENTER(cuMemcpyDtoDAsync_v2_ptsz, dstDevice, srcDevice, ByteCount, hStream);
    return GT_API_EXIT(copy_1d(DPTR(dstDevice), GT_SIDE_DEVICE, DPTR(srcDevice), GT_SIDE_DEVICE,
                               ByteCount, hStream, true, true));
}

CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
    GT_API_ENTER(cuMemcpyAsync, dst, src, ByteCount, hStream);
    return GT_API_EXIT(
        copy_1d(DPTR(dst), GT_SIDE_ANY, DPTR(src), GT_SIDE_ANY, ByteCount, hStream, false, true));
}

CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
                                    CUstream hStream)
{
    GT_API_ENTER(cuMemcpyAsync_ptsz, dst, src, ByteCount, hStream);
    return GT_API_EXIT(
        copy_1d(DPTR(dst), GT_SIDE_ANY, DPTR(src), GT_SIDE_ANY, ByteCount, hStream, true, true));
}

static CUresult peer_copy(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                          size_t bytes, CUstream stream, bool per_thread, bool async)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(dst_ctx, GT_KIND_CONTEXT) || !gt_object_is(src_ctx, GT_KIND_CONTEXT))
        return CUDA_ERROR_INVALID_CONTEXT;
    return copy_1d(DPTR(dst), GT_SIDE_DEVICE, DPTR(src), GT_SIDE_DEVICE, bytes, stream, per_thread,
                   async);
}

CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                              CUcontext srcContext, size_t ByteCount)
{
    GT_API_ENTER(cuMemcpyPeer, dstDevice, dstContext, srcDevice, srcContext, ByteCount);
    return GT_API_EXIT(
        peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, NULL, false, false));
}

CUresult CUDAAPI cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext,
                                   CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount)
{
    GT_API_ENTER(cuMemcpyPeer_ptds, dstDevice, dstContext, srcDevice, srcContext, ByteCount);
    return GT_API_EXIT(
        peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, NULL, true, false));
}

CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext,
                                   CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount,
                                   CUstream hStream)
{
    GT_API_ENTER(cuMemcpyPeerAsync, dstDevice, dstContext, srcDevice, srcContext, ByteCount,
                 hStream);
    return GT_API_EXIT(
        peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, false, true));
}

CUresult CUDAAPI cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext,
                                        CUdeviceptr srcDevice, CUcontext srcContext,
                                        size_t ByteCount, CUstream hStream)
{
    GT_API_ENTER(cuMemcpyPeerAsync_ptsz, dstDevice, dstContext, srcDevice, srcContext, ByteCount,
                 hStream);
    return GT_API_EXIT(
        peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, true, true));
}

/* The 32-bit CUDA_MEMCPY2D layout, widened. */
static CUresult copy_2d_v1(const CUDA_MEMCPY2D_v1 *p, CUstream stream, bool async)
{
    if (!p) return gt_copy_2d(NULL, stream, false, async);
    CUDA_MEMCPY2D wide = {.srcXInBytes = p->srcXInBytes,
                          .srcY = p->srcY,
                          .srcMemoryType = p->srcMemoryType,
                          .srcHost = p->srcHost,
                          .srcDevice = p->srcDevice,
                          .srcArray = p->srcArray,
                          .srcPitch = p->srcPitch,
                          .dstXInBytes = p->dstXInBytes,
                          .dstY = p->dstY,
                          .dstMemoryType = p->dstMemoryType,
                          .dstHost = p->dstHost,
                          .dstDevice = p->dstDevice,
                          .dstArray = p->dstArray,
                          .dstPitch = p->dstPitch,
                          .WidthInBytes = p->WidthInBytes,
                          .Height = p->Height};
    return gt_copy_2d(&wide, stream, false, async);
}

CUresult CUDAAPI cuMemcpy2D(const CUDA_MEMCPY2D_v1 *pCopy)
{
    GT_API_ENTER(cuMemcpy2D, pCopy);
    return GT_API_EXIT(copy_2d_v1(pCopy, NULL, false));
}

CUresult CUDAAPI cuMemcpy2DUnaligned(const CUDA_MEMCPY2D_v1 *pCopy)
{
    GT_API_ENTER(cuMemcpy2DUnaligned, pCopy);
    return GT_API_EXIT(copy_2d_v1(pCopy, NULL, false));
}

CUresult CUDAAPI cuMemcpy2DAsync(const CUDA_MEMCPY2D_v1 *pCopy, CUstream hStream)
{
    GT_API_ENTER(cuMemcpy2DAsync, pCopy, hStream);
    return GT_API_EXIT(copy_2d_v1(pCopy, hStream, true));
}

CUresult CUDAAPI cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy)
{
    GT_API_ENTER(cuMemcpy2D_v2, pCopy);
    return GT_API_EXIT(gt_copy_2d(pCopy, NULL, false, false));
}

CUresult CUDAAPI cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *pCopy)
{
    GT_API_ENTER(cuMemcpy2D_v2_ptds, pCopy);
    return GT_API_EXIT(gt_copy_2d(pCopy, NULL, true, false));
}

CUresult CUDAAPI cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy)
{
    GT_API_ENTER(cuMemcpy2DUnaligned_v2, pCopy);
    return GT_API_EXIT(gt_copy_2d(pCopy, NULL, false, false));
}

CUresult CUDAAPI cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *pCopy)
{
    GT_API_ENTER(cuMemcpy2DUnaligned_v2_ptds, pCopy);
    return GT_API_EXIT(gt_copy_2d(pCopy, NULL, true, false));
}

CUresult CUDAAPI cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
    GT_API_ENTER(cuMemcpy2DAsync_v2, pCopy, hStream);
    return GT_API_EXIT(gt_copy_2d(pCopy, hStream, false, true));
}

CUresult CUDAAPI cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
    GT_API_ENTER(cuMemcpy2DAsync_v2_ptsz, pCopy, hStream);
    return GT_API_EXIT(gt_copy_2d(pCopy, hStream, true, true));
}
