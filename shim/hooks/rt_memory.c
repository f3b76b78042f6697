/* Runtime allocations and frees (shared libcudart), recorded once with the
 * driver call under each (call.c); what is described here stands in only
 * when no driver call was seen. The host-memory registry is fed at the
 * driver level, where every runtime allocation lands. */
#include "alloc_hook.h"
#include "rt_decls.h"

/* Memory in use is followed outside capture windows too (capture.h). */
#define ALLOC(sym, base, params, args, then, ...)                                                  \
    GT_RUNTIME_KEEP_WRAPPER_THEN(sym, base, GT_CAT_MEMORY, GT_EV_ALLOC, params, args,              \
                                 if (r_ == cudaSuccess) then, __VA_ARGS__)
#define FREE(sym, base, params, args, ...)                                                         \
    GT_RUNTIME_KEEP_WRAPPER_THEN(sym, base, GT_CAT_MEMORY, GT_EV_FREE, params, args, (void)0,      \
                                 __VA_ARGS__)

ALLOC(cudaMalloc, cudaMalloc, (void **p, size_t n), (p, n), gt_call_allocated(&c, GT_PTR_ID(*p), n),
      gt_call_mem(&c, GT_MEM_DEVICE, 0))
ALLOC(cudaMallocPitch, cudaMallocPitch, (void **p, size_t *pitch, size_t width, size_t height),
      (p, pitch, width, height),
      gt_call_allocated(&c, GT_PTR_ID(*p), gt_pitched_bytes(*pitch, height)),
      gt_call_mem(&c, GT_MEM_DEVICE, 0))
ALLOC(cudaMallocManaged, cudaMallocManaged, (void **p, size_t n, unsigned int flags), (p, n, flags),
      gt_call_allocated(&c, GT_PTR_ID(*p), n), gt_call_mem(&c, GT_MEM_MANAGED, 0))
FREE(cudaFree, cudaFree, (void *p), (p), gt_call_mem(&c, GT_MEM_DEVICE, GT_PTR_ID(p)))

#define MALLOC_ASYNC(sym)                                                                          \
    ALLOC(sym, cudaMallocAsync, (void **p, size_t n, cudaStream_t s), (p, n, s),                   \
          gt_call_allocated(&c, GT_PTR_ID(*p), n), gt_call_async(&c, s),                           \
          gt_call_mem(&c, GT_MEM_ASYNC, 0))
#define MALLOC_FROM_POOL(sym)                                                                      \
    ALLOC(sym, cudaMallocFromPoolAsync, (void **p, size_t n, cudaMemPool_t pool, cudaStream_t s),  \
          (p, n, pool, s), gt_call_allocated(&c, GT_PTR_ID(*p), n), gt_call_async(&c, s),          \
          gt_call_mem(&c, GT_MEM_ASYNC, 0))
#define FREE_ASYNC(sym)                                                                            \
    FREE(sym, cudaFreeAsync, (void *p, cudaStream_t s), (p, s), gt_call_async(&c, s),              \
         gt_call_mem(&c, GT_MEM_ASYNC, GT_PTR_ID(p)))

MALLOC_ASYNC(cudaMallocAsync)
MALLOC_ASYNC(cudaMallocAsync_ptsz)
MALLOC_FROM_POOL(cudaMallocFromPoolAsync)
MALLOC_FROM_POOL(cudaMallocFromPoolAsync_ptsz)
FREE_ASYNC(cudaFreeAsync)
FREE_ASYNC(cudaFreeAsync_ptsz)

ALLOC(cudaMallocHost, cudaMallocHost, (void **p, size_t n), (p, n),
      gt_call_allocated(&c, GT_PTR_ID(*p), n), gt_call_mem(&c, GT_MEM_PINNED, 0))
ALLOC(cudaHostAlloc, cudaHostAlloc, (void **p, size_t n, unsigned int flags), (p, n, flags),
      gt_call_allocated(&c, GT_PTR_ID(*p), n), gt_call_mem(&c, GT_MEM_PINNED, 0))
ALLOC(cudaHostRegister, cudaHostRegister, (void *p, size_t n, unsigned int flags), (p, n, flags),
      gt_call_allocated(&c, GT_PTR_ID(p), n), gt_call_mem(&c, GT_MEM_PINNED, 0))
FREE(cudaHostUnregister, cudaHostUnregister, (void *p), (p),
     gt_call_mem(&c, GT_MEM_PINNED, GT_PTR_ID(p)))
FREE(cudaFreeHost, cudaFreeHost, (void *p), (p), gt_call_mem(&c, GT_MEM_PINNED, GT_PTR_ID(p)))
