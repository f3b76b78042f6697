/* Driver allocations and frees (the `memory` category): device, pitched,
 * managed, stream-ordered and page-locked host memory, every exported
 * variant. An allocation's record has its address, kind and size; a free's
 * its address and kind (the report finds the size by address, and counts
 * a free of an address it never saw allocated as unknown). VMM is in
 * drv_vmm.c.
 *
 * A stream-ordered free is recorded, and its bytes counted as freed, when
 * it is called: the report's `current` is what the program holds, not what
 * the pool has yet to reclaim in stream order.
 *
 * Page-locked and managed memory also feed the host-memory registry that
 * classifies copies (intercept.h, gt_host_mem_note): whenever copies are
 * classified, whether or not allocations are recorded. */
#include "alloc_hook.h"

/* The registry is kept after every successful call while copies are
 * classified; errno stays the call's. */
#define TRACK(r, stmt)                                                                             \
    do {                                                                                           \
        if ((r) == CUDA_SUCCESS && gt_host_mem_tracking()) {                                       \
            int e_ = errno;                                                                        \
            stmt;                                                                                  \
            errno = e_;                                                                            \
        }                                                                                          \
    } while (0)

/* A wrapper whose call changes host memory: like
 * GT_DRIVER_KEEP_WRAPPER_THEN (`then` runs after a successful call), plus
 * `track`, run even when nothing is recorded. */
#define TRACKED(sym, base, kind, params, args, track, then, ...)                                   \
    GT_DRIVER_HOOK(sym, base, GT_CAT_MEMORY)                                                       \
    GT_EXPORT CUresult CUDAAPI sym params                                                          \
    {                                                                                              \
        GT_ENTER_ANY(sym, CUDA_ERROR_NOT_FOUND, args);                                             \
        if (!gt_hook_mode(&GT_HOOK(sym)) || gt_tls.guard) {                                        \
            CUresult r_ = real_ args;                                                              \
            TRACK(r_, track);                                                                      \
            return r_;                                                                             \
        }                                                                                          \
        gt_call c;                                                                                 \
        gt_call_init(&c, &GT_HOOK(sym), kind);                                                     \
        __VA_ARGS__;                                                                               \
        GT_DRIVER_CALL_THEN(                                                                       \
            &c, args, if (r_ == CUDA_SUCCESS) {                                                    \
                then;                                                                              \
                TRACK(r_, track);                                                                  \
            });                                                                                    \
    }

/* Memory in use is followed outside capture windows too (capture.h). */
#define ALLOC(sym, base, params, args, then, ...)                                                  \
    GT_DRIVER_KEEP_WRAPPER_THEN(sym, base, GT_CAT_MEMORY, GT_EV_ALLOC, params, args,               \
                                if (r_ == CUDA_SUCCESS) then, __VA_ARGS__)
#define FREE(sym, base, params, args, ...)                                                         \
    GT_DRIVER_KEEP_WRAPPER_THEN(sym, base, GT_CAT_MEMORY, GT_EV_FREE, params, args, (void)0,       \
                                __VA_ARGS__)

/* ------------------------------------------------------------ device memory */

#define MEM_ALLOC(sym, dptr_t, size_type)                                                          \
    ALLOC(sym, cuMemAlloc, (dptr_t * dptr, size_type n), (dptr, n),                                \
          gt_call_allocated(&c, *dptr, n), gt_call_mem(&c, GT_MEM_DEVICE, 0))
#define MEM_ALLOC_PITCH(sym, dptr_t, size_type)                                                    \
    ALLOC(                                                                                         \
        sym, cuMemAllocPitch,                                                                      \
        (dptr_t * dptr, size_type * pitch, size_type width, size_type height, unsigned int elem),  \
        (dptr, pitch, width, height, elem),                                                        \
        gt_call_allocated(&c, *dptr, gt_pitched_bytes(*pitch, height)),                            \
        gt_call_mem(&c, GT_MEM_DEVICE, 0))
/* A managed range is also host memory, for copies. */
#define MEM_FREE(sym, dptr_t)                                                                      \
    TRACKED(sym, cuMemFree, GT_EV_FREE, (dptr_t dptr), (dptr), gt_host_mem_forget(GT_DPTR(dptr)),  \
            (void)0, gt_call_mem(&c, GT_MEM_DEVICE, dptr))

MEM_ALLOC(cuMemAlloc, CUdeviceptr_v1, unsigned int)
MEM_ALLOC(cuMemAlloc_v2, CUdeviceptr, size_t)
MEM_ALLOC_PITCH(cuMemAllocPitch, CUdeviceptr_v1, unsigned int)
MEM_ALLOC_PITCH(cuMemAllocPitch_v2, CUdeviceptr, size_t)
MEM_FREE(cuMemFree, CUdeviceptr_v1)
MEM_FREE(cuMemFree_v2, CUdeviceptr)

TRACKED(cuMemAllocManaged, cuMemAllocManaged, GT_EV_ALLOC,
        (CUdeviceptr * dptr, size_t n, unsigned int flags), (dptr, n, flags),
        gt_host_mem_note(GT_DPTR(*dptr), n, GT_HOST_MANAGED), gt_call_allocated(&c, *dptr, n),
        gt_call_mem(&c, GT_MEM_MANAGED, 0))

/* ------------------------------------------------------ stream-ordered memory */

#define ALLOC_ASYNC(sym)                                                                           \
    ALLOC(sym, cuMemAllocAsync, (CUdeviceptr * dptr, size_t n, CUstream s), (dptr, n, s),          \
          gt_call_allocated(&c, *dptr, n), gt_call_async(&c, s), gt_call_mem(&c, GT_MEM_ASYNC, 0))
#define ALLOC_FROM_POOL(sym)                                                                       \
    ALLOC(sym, cuMemAllocFromPoolAsync,                                                            \
          (CUdeviceptr * dptr, size_t n, CUmemoryPool pool, CUstream s), (dptr, n, pool, s),       \
          gt_call_allocated(&c, *dptr, n), gt_call_async(&c, s), gt_call_mem(&c, GT_MEM_ASYNC, 0))
#define FREE_ASYNC(sym)                                                                            \
    FREE(sym, cuMemFreeAsync, (CUdeviceptr dptr, CUstream s), (dptr, s), gt_call_async(&c, s),     \
         gt_call_mem(&c, GT_MEM_ASYNC, dptr))

ALLOC_ASYNC(cuMemAllocAsync)
ALLOC_ASYNC(cuMemAllocAsync_ptsz)
ALLOC_FROM_POOL(cuMemAllocFromPoolAsync)
ALLOC_FROM_POOL(cuMemAllocFromPoolAsync_ptsz)
FREE_ASYNC(cuMemFreeAsync)
FREE_ASYNC(cuMemFreeAsync_ptsz)

/* --------------------------------------------------------- page-locked host */

#define ALLOC_HOST(sym, size_type)                                                                 \
    TRACKED(sym, cuMemAllocHost, GT_EV_ALLOC, (void **pp, size_type n), (pp, n),                   \
            gt_host_mem_note(*pp, n, GT_HOST_PINNED), gt_call_allocated(&c, GT_PTR_ID(*pp), n),    \
            gt_call_mem(&c, GT_MEM_PINNED, 0))
#define HOST_REGISTER(sym)                                                                         \
    TRACKED(sym, cuMemHostRegister, GT_EV_ALLOC, (void *p, size_t n, unsigned int flags),          \
            (p, n, flags), gt_host_mem_note(p, n, GT_HOST_PINNED),                                 \
            gt_call_allocated(&c, GT_PTR_ID(p), n), gt_call_mem(&c, GT_MEM_PINNED, 0))

ALLOC_HOST(cuMemAllocHost, unsigned int)
ALLOC_HOST(cuMemAllocHost_v2, size_t)
HOST_REGISTER(cuMemHostRegister)
HOST_REGISTER(cuMemHostRegister_v2)

TRACKED(cuMemHostAlloc, cuMemHostAlloc, GT_EV_ALLOC, (void **pp, size_t n, unsigned int flags),
        (pp, n, flags), gt_host_mem_note(*pp, n, GT_HOST_PINNED),
        gt_call_allocated(&c, GT_PTR_ID(*pp), n), gt_call_mem(&c, GT_MEM_PINNED, 0))
TRACKED(cuMemHostUnregister, cuMemHostUnregister, GT_EV_FREE, (void *p), (p), gt_host_mem_forget(p),
        (void)0, gt_call_mem(&c, GT_MEM_PINNED, GT_PTR_ID(p)))
TRACKED(cuMemFreeHost, cuMemFreeHost, GT_EV_FREE, (void *p), (p), gt_host_mem_forget(p), (void)0,
        gt_call_mem(&c, GT_MEM_PINNED, GT_PTR_ID(p)))
