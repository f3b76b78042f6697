/* Device and managed memory. */
#include "emu_stream.h"

#include <sys/mman.h>

CUresult gt_mem_record(void *base, size_t size, enum gt_mem_kind kind, struct gt_device *dev,
                       struct gt_context *ctx, unsigned flags)
{
    static _Atomic unsigned long long next_buffer_id = 1;
    struct gt_alloc a = {.base = (uintptr_t)base,
                         .size = size,
                         .kind = kind,
                         .dev = dev,
                         .ctx = ctx,
                         .flags = flags,
                         /* Relaxed: ids only need to be unique. */
                         .id = atomic_fetch_add_explicit(&next_buffer_id, 1, memory_order_relaxed)};
    return gt_mem_insert(&a);
}

CUresult gt_device_alloc_on(struct gt_device *dev, struct gt_context *ctx, size_t size,
                            enum gt_mem_kind kind, unsigned flags, CUdeviceptr *out)
{
    void *p = gt_arena_alloc(dev, size);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = gt_mem_record(p, size, kind, dev, ctx, flags);
    if (r != CUDA_SUCCESS) {
        gt_arena_free(dev, p, size);
        return r;
    }
    *out = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult gt_device_alloc(struct gt_context *ctx, size_t size, enum gt_mem_kind kind, unsigned flags,
                         CUdeviceptr *out)
{
    return gt_device_alloc_on(ctx->dev, ctx, size, kind, flags, out);
}

void gt_mem_release_backing(const struct gt_alloc *a)
{
    switch (a->kind) {
    case GT_MEM_DEVICE:
    case GT_MEM_MANAGED:
        gt_arena_free(a->dev, (void *)a->base, a->size);
        break;
    case GT_MEM_HOST:
        munmap((void *)a->base, a->size);
        break;
    default:
        break;
    }
}

CUresult gt_device_free(CUdeviceptr ptr)
{
    struct gt_alloc a;
    if (!gt_mem_remove((uintptr_t)ptr, GT_MEM_MASK(GT_MEM_DEVICE) | GT_MEM_MASK(GT_MEM_MANAGED),
                       &a))
        return CUDA_ERROR_INVALID_VALUE;
    if (a.pool) gt_mempool_release(a.pool, a.size);
    gt_mem_release_backing(&a);
    return CUDA_SUCCESS;
}

/* Checks shared by the allocation entry points. */
static CUresult alloc_prologue(const void *out, size_t size, struct gt_context **ctx)
{
    CUresult r = gt_ctx_require(ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!out || size == 0) return CUDA_ERROR_INVALID_VALUE;
    return gt_capture_check_unsafe();
}

static CUresult mem_alloc(CUdeviceptr *dptr, size_t bytesize)
{
    struct gt_context *ctx;
    CUresult r = alloc_prologue(dptr, bytesize, &ctx);
    if (r != CUDA_SUCCESS) return r;
    return gt_device_alloc(ctx, bytesize, GT_MEM_DEVICE, 0, dptr);
}

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    return mem_alloc(dptr, bytesize);
}

/* The 32-bit pointer ABI: device addresses here are 64-bit. */
CUresult CUDAAPI cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
    struct gt_context *ctx;
    CUresult r = alloc_prologue(dptr, bytesize, &ctx);
    return r != CUDA_SUCCESS ? r : CUDA_ERROR_NOT_SUPPORTED;
}

static CUresult mem_alloc_pitch(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
                                unsigned element)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!dptr || !pitch || width == 0 || height == 0 ||
        (element != 4 && element != 8 && element != 16))
        return CUDA_ERROR_INVALID_VALUE;
    size_t p = (width + 511) & ~(size_t)511;
    if (p < width || height > SIZE_MAX / p) return CUDA_ERROR_INVALID_VALUE;
    r = mem_alloc(dptr, p * height);
    if (r == CUDA_SUCCESS) *pitch = p;
    return r;
}

CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                                    size_t Height, unsigned int ElementSizeBytes)
{
    return mem_alloc_pitch(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
}

CUresult CUDAAPI cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pPitch,
                                 unsigned int WidthInBytes, unsigned int Height,
                                 unsigned int ElementSizeBytes)
{
    struct gt_context *ctx;
    CUresult r = alloc_prologue(dptr, (size_t)WidthInBytes * Height, &ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!pPitch || (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* cuMemFree waits until queued work that may still use the memory has been
 * carried out (memory is safe to reuse), like the real implicit sync. */
static CUresult mem_free(CUdeviceptr dptr)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    r = gt_capture_check_unsafe();
    if (r != CUDA_SUCCESS) return r;
    struct gt_alloc a;
    unsigned mask = GT_MEM_MASK(GT_MEM_DEVICE) | GT_MEM_MASK(GT_MEM_MANAGED);
    if (!gt_mem_find((uintptr_t)dptr, 0, &a) || a.base != (uintptr_t)dptr ||
        !(GT_MEM_MASK(a.kind) & mask) || a.freeing)
        return CUDA_ERROR_INVALID_VALUE;
    gt_ctx_synchronize_work(a.ctx);
    return gt_device_free(dptr);
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
    return mem_free(dptr);
}

CUresult CUDAAPI cuMemFree(CUdeviceptr_v1 dptr)
{
    return mem_free((CUdeviceptr)dptr);
}

static CUresult mem_get_info(size_t *free_bytes, size_t *total)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!free_bytes || !total) return CUDA_ERROR_INVALID_VALUE;
    size_t used = gt_arena_used(ctx->dev);
    *total = ctx->dev->total_bytes;
    *free_bytes = used < *total ? *total - used : 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetInfo_v2(size_t *free, size_t *total)
{
    return mem_get_info(free, total);
}

CUresult CUDAAPI cuMemGetInfo(unsigned int *free, unsigned int *total)
{
    size_t f, t;
    CUresult r = mem_get_info(free && total ? &f : NULL, &t);
    if (r == CUDA_SUCCESS) {
        *free = f > 0xffffffffu ? 0xffffffffu : (unsigned int)f;
        *total = t > 0xffffffffu ? 0xffffffffu : (unsigned int)t;
    }
    return r;
}

static CUresult address_range(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    struct gt_alloc a;
    if (!gt_mem_find((uintptr_t)dptr, 0, &a) || a.kind == GT_MEM_HOST ||
        a.kind == GT_MEM_REGISTERED)
        return CUDA_ERROR_NOT_FOUND;
    if (pbase) *pbase = (CUdeviceptr)a.base;
    if (psize) *psize = a.size;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    return address_range(pbase, psize, dptr);
}

CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr_v1 *pbase, unsigned int *psize,
                                      CUdeviceptr_v1 dptr)
{
    CUdeviceptr base;
    size_t size;
    CUresult r = address_range(&base, &size, dptr);
    if (r != CUDA_SUCCESS) return r;
    if (pbase) *pbase = (CUdeviceptr_v1)base;
    if (psize) *psize = (unsigned int)size;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    struct gt_context *ctx;
    CUresult r = alloc_prologue(dptr, bytesize, &ctx);
    if (r != CUDA_SUCCESS) return r;
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    return gt_device_alloc(ctx, bytesize, GT_MEM_MANAGED, flags, dptr);
}
