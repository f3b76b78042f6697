/* Runtime memsets (shared libcudart): recorded from the driver memset under
 * each, under the runtime's name and status (call.c). */
#include "hook.h"
#include "rt_decls.h"

#define SET(sym, base, params, args, ...)                                                          \
    GT_RUNTIME_WRAPPER(sym, base, GT_CAT_MEMSET, GT_EV_MEMSET, params, args, __VA_ARGS__)

#define MEMSET(sym)                                                                                \
    SET(sym, cudaMemset, (void *p, int v, size_t n), (p, v, n), gt_call_sync(&c), c.bytes = n)
#define MEMSET_ASYNC(sym)                                                                          \
    SET(sym, cudaMemsetAsync, (void *p, int v, size_t n, cudaStream_t s), (p, v, n, s),            \
        gt_call_async(&c, s), c.bytes = n)
#define MEMSET_2D(sym)                                                                             \
    SET(sym, cudaMemset2D, (void *p, size_t pitch, int v, size_t w, size_t h),                     \
        (p, pitch, v, w, h), gt_call_sync(&c), c.bytes = (uint64_t)w * h)
#define MEMSET_2D_ASYNC(sym)                                                                       \
    SET(sym, cudaMemset2DAsync,                                                                    \
        (void *p, size_t pitch, int v, size_t w, size_t h, cudaStream_t s),                        \
        (p, pitch, v, w, h, s), gt_call_async(&c, s), c.bytes = (uint64_t)w * h)
#define EXTENT_BYTES(e) ((uint64_t)(e).width * (e).height * (e).depth)
#define MEMSET_3D(sym)                                                                             \
    SET(sym, cudaMemset3D, (struct cudaPitchedPtr p, int v, struct cudaExtent e), (p, v, e),       \
        gt_call_sync(&c), c.bytes = EXTENT_BYTES(e))
#define MEMSET_3D_ASYNC(sym)                                                                       \
    SET(sym, cudaMemset3DAsync,                                                                    \
        (struct cudaPitchedPtr p, int v, struct cudaExtent e, cudaStream_t s), (p, v, e, s),       \
        gt_call_async(&c, s), c.bytes = EXTENT_BYTES(e))

MEMSET(cudaMemset)
MEMSET(cudaMemset_ptds)
MEMSET_ASYNC(cudaMemsetAsync)
MEMSET_ASYNC(cudaMemsetAsync_ptsz)
MEMSET_2D(cudaMemset2D)
MEMSET_2D(cudaMemset2D_ptds)
MEMSET_2D_ASYNC(cudaMemset2DAsync)
MEMSET_2D_ASYNC(cudaMemset2DAsync_ptsz)
MEMSET_3D(cudaMemset3D)
MEMSET_3D(cudaMemset3D_ptds)
MEMSET_3D_ASYNC(cudaMemset3DAsync)
MEMSET_3D_ASYNC(cudaMemset3DAsync_ptsz)
