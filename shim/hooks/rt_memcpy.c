/* Runtime copies (shared libcudart). The driver copy under each is what
 * gets recorded, under the runtime's name and status (call.c); what is
 * described here stands in only when no driver copy was seen. The
 * deprecated 1D array copies (cudaMemcpyToArray...) are left to the driver
 * level. */
#include "hook.h"
#include "rt_decls.h"

#define DEV GT_SIDE_DEVICE
#define HOST GT_SIDE_HOST
#define UNIFIED GT_SIDE_UNIFIED

/* The sides a cudaMemcpyKind names: [kind][0] source, [kind][1] destination;
 * cudaMemcpyDefault (and anything else) leaves it to the pointers. */
static const uint8_t kind_sides[][2] = {
    [cudaMemcpyHostToHost] = {HOST, HOST},
    [cudaMemcpyHostToDevice] = {HOST, DEV},
    [cudaMemcpyDeviceToHost] = {DEV, HOST},
    [cudaMemcpyDeviceToDevice] = {DEV, DEV},
};

static enum gt_side side(enum cudaMemcpyKind kind, int dst)
{
    if ((unsigned)kind >= sizeof kind_sides / sizeof kind_sides[0]) return UNIFIED;
    return (enum gt_side)kind_sides[kind][dst];
}

static void copy_kind(gt_call *c, const void *dst, const void *src, uint64_t bytes,
                      enum cudaMemcpyKind kind, unsigned dims)
{
    gt_call_copy(c, dst, side(kind, 1), src, side(kind, 0), bytes, dims);
}

#define COPY(sym, base, params, args, ...)                                                         \
    GT_RUNTIME_WRAPPER(sym, base, GT_CAT_MEMCPY, GT_EV_MEMCPY, params, args, __VA_ARGS__)

/* ------------------------------------------------------------------- 1D */

#define MEMCPY(sym)                                                                                \
    COPY(sym, cudaMemcpy, (void *dst, const void *src, size_t n, enum cudaMemcpyKind kind),        \
         (dst, src, n, kind), gt_call_sync(&c), copy_kind(&c, dst, src, n, kind, 1))
#define MEMCPY_ASYNC(sym)                                                                          \
    COPY(sym, cudaMemcpyAsync,                                                                     \
         (void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s),         \
         (dst, src, n, kind, s), gt_call_async(&c, s), copy_kind(&c, dst, src, n, kind, 1))

MEMCPY(cudaMemcpy)
MEMCPY(cudaMemcpy_ptds)
MEMCPY_ASYNC(cudaMemcpyAsync)
MEMCPY_ASYNC(cudaMemcpyAsync_ptsz)

static void peer(gt_call *c, void *dst, int dst_dev, const void *src, int src_dev, size_t n)
{
    gt_call_copy(c, dst, DEV, src, DEV, n, 1);
    c->copy.peer = dst_dev != src_dev;
}

COPY(cudaMemcpyPeer, cudaMemcpyPeer, (void *dst, int ddev, const void *src, int sdev, size_t n),
     (dst, ddev, src, sdev, n), gt_call_sync(&c), peer(&c, dst, ddev, src, sdev, n))
COPY(cudaMemcpyPeerAsync, cudaMemcpyPeerAsync,
     (void *dst, int ddev, const void *src, int sdev, size_t n, cudaStream_t s),
     (dst, ddev, src, sdev, n, s), gt_call_async(&c, s), peer(&c, dst, ddev, src, sdev, n))

/* A variable's side is device memory, whatever the kind says of it. */
static void symbol_copy(gt_call *c, const void *dst, const void *src, size_t n,
                        enum cudaMemcpyKind kind, int to_symbol)
{
    copy_kind(c, dst, src, n, kind, 1);
    if (to_symbol)
        c->copy.dst_side = DEV;
    else
        c->copy.src_side = DEV;
}

#define TO_SYMBOL(sym)                                                                             \
    COPY(sym, cudaMemcpyToSymbol,                                                                  \
         (const void *symbol, const void *src, size_t n, size_t off, enum cudaMemcpyKind kind),    \
         (symbol, src, n, off, kind), gt_call_sync(&c), symbol_copy(&c, symbol, src, n, kind, 1))
#define FROM_SYMBOL(sym)                                                                           \
    COPY(sym, cudaMemcpyFromSymbol,                                                                \
         (void *dst, const void *symbol, size_t n, size_t off, enum cudaMemcpyKind kind),          \
         (dst, symbol, n, off, kind), gt_call_sync(&c), symbol_copy(&c, dst, symbol, n, kind, 0))
#define TO_SYMBOL_ASYNC(sym)                                                                       \
    COPY(sym, cudaMemcpyToSymbolAsync,                                                             \
         (const void *symbol, const void *src, size_t n, size_t off, enum cudaMemcpyKind kind,     \
          cudaStream_t s),                                                                         \
         (symbol, src, n, off, kind, s), gt_call_async(&c, s),                                     \
         symbol_copy(&c, symbol, src, n, kind, 1))
#define FROM_SYMBOL_ASYNC(sym)                                                                     \
    COPY(sym, cudaMemcpyFromSymbolAsync,                                                           \
         (void *dst, const void *symbol, size_t n, size_t off, enum cudaMemcpyKind kind,           \
          cudaStream_t s),                                                                         \
         (dst, symbol, n, off, kind, s), gt_call_async(&c, s),                                     \
         symbol_copy(&c, dst, symbol, n, kind, 0))

TO_SYMBOL(cudaMemcpyToSymbol)
TO_SYMBOL(cudaMemcpyToSymbol_ptds)
FROM_SYMBOL(cudaMemcpyFromSymbol)
FROM_SYMBOL(cudaMemcpyFromSymbol_ptds)
TO_SYMBOL_ASYNC(cudaMemcpyToSymbolAsync)
TO_SYMBOL_ASYNC(cudaMemcpyToSymbolAsync_ptsz)
FROM_SYMBOL_ASYNC(cudaMemcpyFromSymbolAsync)
FROM_SYMBOL_ASYNC(cudaMemcpyFromSymbolAsync_ptsz)

/* One record per batch: its total bytes, the direction of its first copy. */
static void batch(gt_call *c, void *const *dsts, const void *const *srcs, const size_t *sizes,
                  size_t count, cudaStream_t s)
{
    gt_call_async(c, s);
    uint64_t bytes = 0;
    for (size_t i = 0; sizes && i < count; i++)
        bytes += sizes[i];
    if (dsts && srcs && count) gt_call_copy(c, dsts[0], UNIFIED, srcs[0], UNIFIED, bytes, 1);
    c->copy.batch = 1;
}

#define BATCH(sym)                                                                                 \
    COPY(sym, cudaMemcpyBatchAsync,                                                                \
         (void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,           \
          struct cudaMemcpyAttributes *attrs, size_t *idxs, size_t nattrs, cudaStream_t s),        \
         (dsts, srcs, sizes, count, attrs, idxs, nattrs, s),                                       \
         batch(&c, dsts, srcs, sizes, count, s))

BATCH(cudaMemcpyBatchAsync)
BATCH(cudaMemcpyBatchAsync_ptsz)

/* ------------------------------------------------------------- 2D, 3D */

#define MEMCPY_2D(sym)                                                                             \
    COPY(sym, cudaMemcpy2D,                                                                        \
         (void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h,                    \
          enum cudaMemcpyKind kind),                                                               \
         (dst, dp, src, sp, w, h, kind), gt_call_sync(&c),                                         \
         copy_kind(&c, dst, src, (uint64_t)w *h, kind, 2))
#define MEMCPY_2D_ASYNC(sym)                                                                       \
    COPY(sym, cudaMemcpy2DAsync,                                                                   \
         (void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h,                    \
          enum cudaMemcpyKind kind, cudaStream_t s),                                               \
         (dst, dp, src, sp, w, h, kind, s), gt_call_async(&c, s),                                  \
         copy_kind(&c, dst, src, (uint64_t)w *h, kind, 2))
#define TO_ARRAY_2D(sym)                                                                           \
    COPY(sym, cudaMemcpy2DToArray,                                                                 \
         (cudaArray_t dst, size_t x, size_t y, const void *src, size_t sp, size_t w, size_t h,     \
          enum cudaMemcpyKind kind),                                                               \
         (dst, x, y, src, sp, w, h, kind), gt_call_sync(&c),                                       \
         gt_call_copy(&c, dst, DEV, src, side(kind, 0), (uint64_t)w *h, 2))
#define TO_ARRAY_2D_ASYNC(sym)                                                                     \
    COPY(sym, cudaMemcpy2DToArrayAsync,                                                            \
         (cudaArray_t dst, size_t x, size_t y, const void *src, size_t sp, size_t w, size_t h,     \
          enum cudaMemcpyKind kind, cudaStream_t s),                                               \
         (dst, x, y, src, sp, w, h, kind, s), gt_call_async(&c, s),                                \
         gt_call_copy(&c, dst, DEV, src, side(kind, 0), (uint64_t)w *h, 2))
#define FROM_ARRAY_2D(sym)                                                                         \
    COPY(sym, cudaMemcpy2DFromArray,                                                               \
         (void *dst, size_t dp, cudaArray_const_t src, size_t x, size_t y, size_t w, size_t h,     \
          enum cudaMemcpyKind kind),                                                               \
         (dst, dp, src, x, y, w, h, kind), gt_call_sync(&c),                                       \
         gt_call_copy(&c, dst, side(kind, 1), src, DEV, (uint64_t)w *h, 2))
#define FROM_ARRAY_2D_ASYNC(sym)                                                                   \
    COPY(sym, cudaMemcpy2DFromArrayAsync,                                                          \
         (void *dst, size_t dp, cudaArray_const_t src, size_t x, size_t y, size_t w, size_t h,     \
          enum cudaMemcpyKind kind, cudaStream_t s),                                               \
         (dst, dp, src, x, y, w, h, kind, s), gt_call_async(&c, s),                                \
         gt_call_copy(&c, dst, side(kind, 1), src, DEV, (uint64_t)w *h, 2))
#define ARRAY_TO_ARRAY_2D(sym)                                                                     \
    COPY(sym, cudaMemcpy2DArrayToArray,                                                            \
         (cudaArray_t dst, size_t dx, size_t dy, cudaArray_const_t src, size_t sx, size_t sy,      \
          size_t w, size_t h, enum cudaMemcpyKind kind),                                           \
         (dst, dx, dy, src, sx, sy, w, h, kind), gt_call_sync(&c),                                 \
         gt_call_copy(&c, dst, DEV, src, DEV, (uint64_t)w *h, 2))

MEMCPY_2D(cudaMemcpy2D)
MEMCPY_2D(cudaMemcpy2D_ptds)
MEMCPY_2D_ASYNC(cudaMemcpy2DAsync)
MEMCPY_2D_ASYNC(cudaMemcpy2DAsync_ptsz)
TO_ARRAY_2D(cudaMemcpy2DToArray)
TO_ARRAY_2D(cudaMemcpy2DToArray_ptds)
TO_ARRAY_2D_ASYNC(cudaMemcpy2DToArrayAsync)
TO_ARRAY_2D_ASYNC(cudaMemcpy2DToArrayAsync_ptsz)
FROM_ARRAY_2D(cudaMemcpy2DFromArray)
FROM_ARRAY_2D(cudaMemcpy2DFromArray_ptds)
FROM_ARRAY_2D_ASYNC(cudaMemcpy2DFromArrayAsync)
FROM_ARRAY_2D_ASYNC(cudaMemcpy2DFromArrayAsync_ptsz)
ARRAY_TO_ARRAY_2D(cudaMemcpy2DArrayToArray)
ARRAY_TO_ARRAY_2D(cudaMemcpy2DArrayToArray_ptds)

/* Arrays' extents count elements, not bytes: only a copy between pointers
 * has its size in bytes here (the driver copy under it always does). */
static void params_3d(gt_call *c, const struct cudaMemcpy3DParms *p)
{
    if (!p) return;
    uint64_t bytes = (uint64_t)p->extent.width * p->extent.height * p->extent.depth;
    const void *dst = p->dstArray ? (const void *)p->dstArray : p->dstPtr.ptr;
    const void *src = p->srcArray ? (const void *)p->srcArray : p->srcPtr.ptr;
    gt_call_copy(c, dst, p->dstArray ? DEV : side(p->kind, 1), src,
                 p->srcArray ? DEV : side(p->kind, 0), bytes, 3);
}

static void peer_params_3d(gt_call *c, const struct cudaMemcpy3DPeerParms *p)
{
    if (!p) return;
    uint64_t bytes = (uint64_t)p->extent.width * p->extent.height * p->extent.depth;
    gt_call_copy(c, p->dstArray ? (const void *)p->dstArray : p->dstPtr.ptr, DEV,
                 p->srcArray ? (const void *)p->srcArray : p->srcPtr.ptr, DEV, bytes, 3);
    c->copy.peer = p->dstDevice != p->srcDevice;
}

#define MEMCPY_3D(sym)                                                                             \
    COPY(sym, cudaMemcpy3D, (const struct cudaMemcpy3DParms *p), (p), gt_call_sync(&c),            \
         params_3d(&c, p))
#define MEMCPY_3D_ASYNC(sym)                                                                       \
    COPY(sym, cudaMemcpy3DAsync, (const struct cudaMemcpy3DParms *p, cudaStream_t s), (p, s),      \
         gt_call_async(&c, s), params_3d(&c, p))
#define MEMCPY_3D_PEER(sym)                                                                        \
    COPY(sym, cudaMemcpy3DPeer, (const struct cudaMemcpy3DPeerParms *p), (p), gt_call_sync(&c),    \
         peer_params_3d(&c, p))
#define MEMCPY_3D_PEER_ASYNC(sym)                                                                  \
    COPY(sym, cudaMemcpy3DPeerAsync, (const struct cudaMemcpy3DPeerParms *p, cudaStream_t s),      \
         (p, s), gt_call_async(&c, s), peer_params_3d(&c, p))

MEMCPY_3D(cudaMemcpy3D)
MEMCPY_3D(cudaMemcpy3D_ptds)
MEMCPY_3D_ASYNC(cudaMemcpy3DAsync)
MEMCPY_3D_ASYNC(cudaMemcpy3DAsync_ptsz)
MEMCPY_3D_PEER(cudaMemcpy3DPeer)
MEMCPY_3D_PEER(cudaMemcpy3DPeer_ptds)
MEMCPY_3D_PEER_ASYNC(cudaMemcpy3DPeerAsync)
MEMCPY_3D_PEER_ASYNC(cudaMemcpy3DPeerAsync_ptsz)
