/* Page-locked host memory: allocated (cuMemAllocHost, cuMemHostAlloc) or
 * registered (cuMemHostRegister). With unified addressing the device
 * pointer of such memory is the host pointer itself. */
#include "emu_stream.h"

#include <sys/mman.h>

static CUresult host_alloc(void **pp, size_t size, unsigned flags)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    unsigned valid =
        CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
    if (!pp || size == 0 || (flags & ~valid)) return CUDA_ERROR_INVALID_VALUE;
    r = gt_capture_check_unsafe();
    if (r != CUDA_SUCCESS) return r;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    r = gt_mem_record(p, size, GT_MEM_HOST, ctx->dev, ctx, flags);
    if (r != CUDA_SUCCESS) {
        munmap(p, size);
        return r;
    }
    *pp = p;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    return host_alloc(pp, bytesize, 0);
}

CUresult CUDAAPI cuMemAllocHost(void **pp, unsigned int bytesize)
{
    return host_alloc(pp, bytesize, 0);
}

CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    return host_alloc(pp, bytesize, Flags);
}

CUresult CUDAAPI cuMemFreeHost(void *p)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    r = gt_capture_check_unsafe();
    if (r != CUDA_SUCCESS) return r;
    struct gt_alloc a;
    if (!gt_mem_find((uintptr_t)p, 0, &a) || a.base != (uintptr_t)p || a.kind != GT_MEM_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    gt_ctx_synchronize_work(a.ctx);
    if (!gt_mem_remove((uintptr_t)p, GT_MEM_MASK(GT_MEM_HOST), &a)) return CUDA_ERROR_INVALID_VALUE;
    gt_mem_release_backing(&a);
    return CUDA_SUCCESS;
}

static CUresult host_get_device_pointer(CUdeviceptr *pdptr, void *p, unsigned flags)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!pdptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    struct gt_alloc a;
    if (!gt_mem_find((uintptr_t)p, 0, &a) || (a.kind != GT_MEM_HOST && a.kind != GT_MEM_REGISTERED))
        return CUDA_ERROR_INVALID_VALUE;
    *pdptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    return host_get_device_pointer(pdptr, p, Flags);
}

CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr_v1 *pdptr, void *p, unsigned int Flags)
{
    CUdeviceptr d;
    CUresult r = host_get_device_pointer(pdptr ? &d : NULL, p, Flags);
    if (r == CUDA_SUCCESS && d > 0xffffffffu)
        return CUDA_ERROR_NOT_SUPPORTED; /* no 32-bit address for it */
    if (r == CUDA_SUCCESS) *pdptr = (CUdeviceptr_v1)d;
    return r;
}

CUresult CUDAAPI cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!pFlags) return CUDA_ERROR_INVALID_VALUE;
    struct gt_alloc a;
    if (!gt_mem_find((uintptr_t)p, 0, &a) || a.kind != GT_MEM_HOST) return CUDA_ERROR_INVALID_VALUE;
    *pFlags = a.flags;
    return CUDA_SUCCESS;
}

static CUresult host_register(void *p, size_t size, unsigned flags)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    unsigned valid = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                     CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
    if (!p || size == 0 || (flags & ~valid)) return CUDA_ERROR_INVALID_VALUE;
    r = gt_capture_check_unsafe();
    if (r != CUDA_SUCCESS) return r;
    if (gt_mem_overlaps((uintptr_t)p, size)) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    return gt_mem_record(p, size, GT_MEM_REGISTERED, ctx->dev, ctx, flags);
}

CUresult CUDAAPI cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    return host_register(p, bytesize, Flags);
}

CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
    return host_register(p, bytesize, Flags);
}

CUresult CUDAAPI cuMemHostUnregister(void *p)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    struct gt_alloc a;
    if (!gt_mem_find((uintptr_t)p, 0, &a) || a.base != (uintptr_t)p || a.kind != GT_MEM_REGISTERED)
        return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    gt_ctx_synchronize_work(a.ctx);
    gt_mem_remove((uintptr_t)p, GT_MEM_MASK(GT_MEM_REGISTERED), NULL);
    return CUDA_SUCCESS;
}
