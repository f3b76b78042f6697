/* Driver copies: every exported variant of the 1D, array, 2D, 3D, peer,
 * unified and batch copies. The direction comes from the API (or, for the
 * unified cuMemcpy and CU_MEMORYTYPE_UNIFIED, from the pointers); the host
 * side's memory kind is asked when the copy is recorded. */
#include "hook.h"

#define COPY(sym, base, params, args, ...)                                                         \
    GT_DRIVER_WRAPPER(sym, base, GT_CAT_MEMCPY, GT_EV_MEMCPY, params, args, __VA_ARGS__)

#define DEV GT_SIDE_DEVICE
#define HOST GT_SIDE_HOST
#define UNIFIED GT_SIDE_UNIFIED

/* ------------------------------------------------------------- 1D copies */

#define HTOD(sym, dptr_t, count_t)                                                                 \
    COPY(sym, cuMemcpyHtoD, (dptr_t dst, const void *src, count_t n), (dst, src, n),               \
         gt_call_sync(&c), gt_call_copy(&c, GT_DPTR(dst), DEV, src, HOST, n, 1))
#define HTOD_ASYNC(sym, dptr_t, count_t)                                                           \
    COPY(sym, cuMemcpyHtoDAsync, (dptr_t dst, const void *src, count_t n, CUstream s),             \
         (dst, src, n, s), gt_call_async(&c, s),                                                   \
         gt_call_copy(&c, GT_DPTR(dst), DEV, src, HOST, n, 1))
#define DTOH(sym, dptr_t, count_t)                                                                 \
    COPY(sym, cuMemcpyDtoH, (void *dst, dptr_t src, count_t n), (dst, src, n), gt_call_sync(&c),   \
         gt_call_copy(&c, dst, HOST, GT_DPTR(src), DEV, n, 1))
#define DTOH_ASYNC(sym, dptr_t, count_t)                                                           \
    COPY(sym, cuMemcpyDtoHAsync, (void *dst, dptr_t src, count_t n, CUstream s), (dst, src, n, s), \
         gt_call_async(&c, s), gt_call_copy(&c, dst, HOST, GT_DPTR(src), DEV, n, 1))
#define DTOD(sym, dptr_t, count_t)                                                                 \
    COPY(sym, cuMemcpyDtoD, (dptr_t dst, dptr_t src, count_t n), (dst, src, n), gt_call_sync(&c),  \
         gt_call_copy(&c, GT_DPTR(dst), DEV, GT_DPTR(src), DEV, n, 1))
#define DTOD_ASYNC(sym, dptr_t, count_t)                                                           \
    COPY(sym, cuMemcpyDtoDAsync, (dptr_t dst, dptr_t src, count_t n, CUstream s),                  \
         (dst, src, n, s), gt_call_async(&c, s),                                                   \
         gt_call_copy(&c, GT_DPTR(dst), DEV, GT_DPTR(src), DEV, n, 1))

HTOD(cuMemcpyHtoD, CUdeviceptr_v1, unsigned int)
HTOD(cuMemcpyHtoD_v2, CUdeviceptr, size_t)
HTOD(cuMemcpyHtoD_v2_ptds, CUdeviceptr, size_t)
HTOD_ASYNC(cuMemcpyHtoDAsync, CUdeviceptr_v1, unsigned int)
HTOD_ASYNC(cuMemcpyHtoDAsync_v2, CUdeviceptr, size_t)
HTOD_ASYNC(cuMemcpyHtoDAsync_v2_ptsz, CUdeviceptr, size_t)
DTOH(cuMemcpyDtoH, CUdeviceptr_v1, unsigned int)
DTOH(cuMemcpyDtoH_v2, CUdeviceptr, size_t)
DTOH(cuMemcpyDtoH_v2_ptds, CUdeviceptr, size_t)
DTOH_ASYNC(cuMemcpyDtoHAsync, CUdeviceptr_v1, unsigned int)
DTOH_ASYNC(cuMemcpyDtoHAsync_v2, CUdeviceptr, size_t)
DTOH_ASYNC(cuMemcpyDtoHAsync_v2_ptsz, CUdeviceptr, size_t)
DTOD(cuMemcpyDtoD, CUdeviceptr_v1, unsigned int)
DTOD(cuMemcpyDtoD_v2, CUdeviceptr, size_t)
DTOD(cuMemcpyDtoD_v2_ptds, CUdeviceptr, size_t)
DTOD_ASYNC(cuMemcpyDtoDAsync, CUdeviceptr_v1, unsigned int)
DTOD_ASYNC(cuMemcpyDtoDAsync_v2, CUdeviceptr, size_t)
DTOD_ASYNC(cuMemcpyDtoDAsync_v2_ptsz, CUdeviceptr, size_t)

/* Unified addressing: the pointers say which side is which. */
#define UNIFIED_COPY(sym)                                                                          \
    COPY(sym, cuMemcpy, (CUdeviceptr dst, CUdeviceptr src, size_t n), (dst, src, n),               \
         gt_call_sync(&c), gt_call_copy(&c, GT_DPTR(dst), UNIFIED, GT_DPTR(src), UNIFIED, n, 1))
#define UNIFIED_COPY_ASYNC(sym)                                                                    \
    COPY(sym, cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s),             \
         (dst, src, n, s), gt_call_async(&c, s),                                                   \
         gt_call_copy(&c, GT_DPTR(dst), UNIFIED, GT_DPTR(src), UNIFIED, n, 1))

UNIFIED_COPY(cuMemcpy)
UNIFIED_COPY(cuMemcpy_ptds)
UNIFIED_COPY_ASYNC(cuMemcpyAsync)
UNIFIED_COPY_ASYNC(cuMemcpyAsync_ptsz)

/* Between the memory of two contexts. */
static void peer_copy(gt_call *c, CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
                      CUcontext src_ctx, size_t n)
{
    gt_call_copy(c, GT_DPTR(dst), DEV, GT_DPTR(src), DEV, n, 1);
    c->copy.peer = dst_ctx != src_ctx;
}

#define PEER(sym)                                                                                  \
    COPY(sym, cuMemcpyPeer,                                                                        \
         (CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n),             \
         (dst, dctx, src, sctx, n), gt_call_sync(&c), peer_copy(&c, dst, dctx, src, sctx, n))
#define PEER_ASYNC(sym)                                                                            \
    COPY(sym, cuMemcpyPeerAsync,                                                                   \
         (CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream s), \
         (dst, dctx, src, sctx, n, s), gt_call_async(&c, s),                                       \
         peer_copy(&c, dst, dctx, src, sctx, n))

PEER(cuMemcpyPeer)
PEER(cuMemcpyPeer_ptds)
PEER_ASYNC(cuMemcpyPeerAsync)
PEER_ASYNC(cuMemcpyPeerAsync_ptsz)

/* ---------------------------------------------------------------- arrays */

#define HTOA(sym, off_t_)                                                                          \
    COPY(sym, cuMemcpyHtoA, (CUarray dst, off_t_ off, const void *src, off_t_ n),                  \
         (dst, off, src, n), gt_call_sync(&c), gt_call_copy(&c, dst, DEV, src, HOST, n, 1))
#define HTOA_ASYNC(sym, off_t_)                                                                    \
    COPY(sym, cuMemcpyHtoAAsync, (CUarray dst, off_t_ off, const void *src, off_t_ n, CUstream s), \
         (dst, off, src, n, s), gt_call_async(&c, s), gt_call_copy(&c, dst, DEV, src, HOST, n, 1))
#define ATOH(sym, off_t_)                                                                          \
    COPY(sym, cuMemcpyAtoH, (void *dst, CUarray src, off_t_ off, off_t_ n), (dst, src, off, n),    \
         gt_call_sync(&c), gt_call_copy(&c, dst, HOST, src, DEV, n, 1))
#define ATOH_ASYNC(sym, off_t_)                                                                    \
    COPY(sym, cuMemcpyAtoHAsync, (void *dst, CUarray src, off_t_ off, off_t_ n, CUstream s),       \
         (dst, src, off, n, s), gt_call_async(&c, s), gt_call_copy(&c, dst, HOST, src, DEV, n, 1))
#define DTOA(sym, dptr_t, off_t_)                                                                  \
    COPY(sym, cuMemcpyDtoA, (CUarray dst, off_t_ off, dptr_t src, off_t_ n), (dst, off, src, n),   \
         gt_call_sync(&c), gt_call_copy(&c, dst, DEV, GT_DPTR(src), DEV, n, 1))
#define ATOD(sym, dptr_t, off_t_)                                                                  \
    COPY(sym, cuMemcpyAtoD, (dptr_t dst, CUarray src, off_t_ off, off_t_ n), (dst, src, off, n),   \
         gt_call_sync(&c), gt_call_copy(&c, GT_DPTR(dst), DEV, src, DEV, n, 1))
#define ATOA(sym, off_t_)                                                                          \
    COPY(sym, cuMemcpyAtoA, (CUarray dst, off_t_ doff, CUarray src, off_t_ soff, off_t_ n),        \
         (dst, doff, src, soff, n), gt_call_sync(&c), gt_call_copy(&c, dst, DEV, src, DEV, n, 1))

HTOA(cuMemcpyHtoA, unsigned int)
HTOA(cuMemcpyHtoA_v2, size_t)
HTOA(cuMemcpyHtoA_v2_ptds, size_t)
HTOA_ASYNC(cuMemcpyHtoAAsync, unsigned int)
HTOA_ASYNC(cuMemcpyHtoAAsync_v2, size_t)
HTOA_ASYNC(cuMemcpyHtoAAsync_v2_ptsz, size_t)
ATOH(cuMemcpyAtoH, unsigned int)
ATOH(cuMemcpyAtoH_v2, size_t)
ATOH(cuMemcpyAtoH_v2_ptds, size_t)
ATOH_ASYNC(cuMemcpyAtoHAsync, unsigned int)
ATOH_ASYNC(cuMemcpyAtoHAsync_v2, size_t)
ATOH_ASYNC(cuMemcpyAtoHAsync_v2_ptsz, size_t)
DTOA(cuMemcpyDtoA, CUdeviceptr_v1, unsigned int)
DTOA(cuMemcpyDtoA_v2, CUdeviceptr, size_t)
DTOA(cuMemcpyDtoA_v2_ptds, CUdeviceptr, size_t)
ATOD(cuMemcpyAtoD, CUdeviceptr_v1, unsigned int)
ATOD(cuMemcpyAtoD_v2, CUdeviceptr, size_t)
ATOD(cuMemcpyAtoD_v2_ptds, CUdeviceptr, size_t)
ATOA(cuMemcpyAtoA, unsigned int)
ATOA(cuMemcpyAtoA_v2, size_t)
ATOA(cuMemcpyAtoA_v2_ptds, size_t)

/* ------------------------------------------------------------- 2D and 3D */

static enum gt_side side_of(CUmemorytype type)
{
    return type == CU_MEMORYTYPE_HOST ? HOST : type == CU_MEMORYTYPE_UNIFIED ? UNIFIED : DEV;
}

/* A side of a 2D/3D copy: host memory is named by the host pointer, the
 * rest by the device address. */
static const void *side_ptr(CUmemorytype type, const void *host, uint64_t device)
{
    return type == CU_MEMORYTYPE_HOST ? host : GT_DPTR(device);
}

/* The same fields, whatever the struct's version (their widths differ);
 * an expression, for the wrapper macros. */
#define DESCRIBE_COPY(c, p, bytes, dims)                                                           \
    ((p) ? gt_call_copy((c), side_ptr((p)->dstMemoryType, (p)->dstHost, (p)->dstDevice),           \
                        side_of((p)->dstMemoryType),                                               \
                        side_ptr((p)->srcMemoryType, (p)->srcHost, (p)->srcDevice),                \
                        side_of((p)->srcMemoryType), (bytes), (dims))                              \
         : (void)0)

#define BYTES_2D(p) ((uint64_t)(p)->WidthInBytes * (p)->Height)
#define BYTES_3D(p) ((uint64_t)(p)->WidthInBytes * (p)->Height * (p)->Depth)

#define COPY_2D(sym, base, type)                                                                   \
    COPY(sym, base, (const type *p), (p), gt_call_sync(&c), DESCRIBE_COPY(&c, p, BYTES_2D(p), 2))
#define COPY_2D_ASYNC(sym, type)                                                                   \
    COPY(sym, cuMemcpy2DAsync, (const type *p, CUstream s), (p, s), gt_call_async(&c, s),          \
         DESCRIBE_COPY(&c, p, BYTES_2D(p), 2))
#define COPY_3D(sym, type)                                                                         \
    COPY(sym, cuMemcpy3D, (const type *p), (p), gt_call_sync(&c),                                  \
         DESCRIBE_COPY(&c, p, BYTES_3D(p), 3))
#define COPY_3D_ASYNC(sym, type)                                                                   \
    COPY(sym, cuMemcpy3DAsync, (const type *p, CUstream s), (p, s), gt_call_async(&c, s),          \
         DESCRIBE_COPY(&c, p, BYTES_3D(p), 3))

COPY_2D(cuMemcpy2D, cuMemcpy2D, CUDA_MEMCPY2D_v1)
COPY_2D(cuMemcpy2D_v2, cuMemcpy2D, CUDA_MEMCPY2D)
COPY_2D(cuMemcpy2D_v2_ptds, cuMemcpy2D, CUDA_MEMCPY2D)
COPY_2D(cuMemcpy2DUnaligned, cuMemcpy2DUnaligned, CUDA_MEMCPY2D_v1)
COPY_2D(cuMemcpy2DUnaligned_v2, cuMemcpy2DUnaligned, CUDA_MEMCPY2D)
COPY_2D(cuMemcpy2DUnaligned_v2_ptds, cuMemcpy2DUnaligned, CUDA_MEMCPY2D)
COPY_2D_ASYNC(cuMemcpy2DAsync, CUDA_MEMCPY2D_v1)
COPY_2D_ASYNC(cuMemcpy2DAsync_v2, CUDA_MEMCPY2D)
COPY_2D_ASYNC(cuMemcpy2DAsync_v2_ptsz, CUDA_MEMCPY2D)
COPY_3D(cuMemcpy3D, CUDA_MEMCPY3D_v1)
COPY_3D(cuMemcpy3D_v2, CUDA_MEMCPY3D)
COPY_3D(cuMemcpy3D_v2_ptds, CUDA_MEMCPY3D)
COPY_3D_ASYNC(cuMemcpy3DAsync, CUDA_MEMCPY3D_v1)
COPY_3D_ASYNC(cuMemcpy3DAsync_v2, CUDA_MEMCPY3D)
COPY_3D_ASYNC(cuMemcpy3DAsync_v2_ptsz, CUDA_MEMCPY3D)

/* A 3D copy that names two contexts: between devices when they differ. */
static void describe_peer_3d(gt_call *c, const CUDA_MEMCPY3D_PEER *p)
{
    DESCRIBE_COPY(c, p, BYTES_3D(p), 3);
    c->copy.peer = p && p->dstContext != p->srcContext && side_of(p->srcMemoryType) == DEV &&
                   side_of(p->dstMemoryType) == DEV;
}

#define COPY_3D_PEER(sym)                                                                          \
    COPY(sym, cuMemcpy3DPeer, (const CUDA_MEMCPY3D_PEER *p), (p), gt_call_sync(&c),                \
         describe_peer_3d(&c, p))
#define COPY_3D_PEER_ASYNC(sym)                                                                    \
    COPY(sym, cuMemcpy3DPeerAsync, (const CUDA_MEMCPY3D_PEER *p, CUstream s), (p, s),              \
         gt_call_async(&c, s), describe_peer_3d(&c, p))

COPY_3D_PEER(cuMemcpy3DPeer)
COPY_3D_PEER(cuMemcpy3DPeer_ptds)
COPY_3D_PEER_ASYNC(cuMemcpy3DPeerAsync)
COPY_3D_PEER_ASYNC(cuMemcpy3DPeerAsync_ptsz)

/* --------------------------------------------------------------- batches
 * One record per batch: its total bytes, the direction of its first copy. */

static void describe_batch(gt_call *c, CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                           size_t count, CUstream s)
{
    gt_call_async(c, s);
    uint64_t bytes = 0;
    for (size_t i = 0; sizes && i < count; i++)
        bytes += sizes[i];
    if (dsts && srcs && count)
        gt_call_copy(c, GT_DPTR(dsts[0]), UNIFIED, GT_DPTR(srcs[0]), UNIFIED, bytes, 1);
    c->copy.batch = 1;
}

#define BATCH_V1(sym)                                                                              \
    COPY(sym, cuMemcpyBatchAsync,                                                                  \
         (CUdeviceptr * dsts, CUdeviceptr * srcs, size_t * sizes, size_t count,                    \
          CUmemcpyAttributes * attrs, size_t * idxs, size_t nattrs, size_t * fail, CUstream s),    \
         (dsts, srcs, sizes, count, attrs, idxs, nattrs, fail, s),                                 \
         describe_batch(&c, dsts, srcs, sizes, count, s))
#define BATCH_V2(sym)                                                                              \
    COPY(sym, cuMemcpyBatchAsync,                                                                  \
         (CUdeviceptr * dsts, CUdeviceptr * srcs, size_t * sizes, size_t count,                    \
          CUmemcpyAttributes * attrs, size_t * idxs, size_t nattrs, CUstream s),                   \
         (dsts, srcs, sizes, count, attrs, idxs, nattrs, s),                                       \
         describe_batch(&c, dsts, srcs, sizes, count, s))

BATCH_V1(cuMemcpyBatchAsync)
BATCH_V1(cuMemcpyBatchAsync_ptsz)
BATCH_V2(cuMemcpyBatchAsync_v2)
BATCH_V2(cuMemcpyBatchAsync_v2_ptsz)
