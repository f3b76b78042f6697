/* cuPointerGetAttribute(s): what the address table knows of a pointer. */
#include "emu_stream.h"

#include <string.h>

/* Writes one attribute of the allocation `a` (NULL: not a CUDA pointer,
 * which gets the NULL values cuPointerGetAttributes documents). */
static CUresult write_attribute(void *data, CUpointer_attribute attr, uintptr_t ptr,
                                const struct gt_alloc *a)
{
    bool host = a && (a->kind == GT_MEM_HOST || a->kind == GT_MEM_REGISTERED);
    bool managed = a && a->kind == GT_MEM_MANAGED;
    switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = a ? (CUcontext)a->ctx : NULL;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned int *)data = !a ? 0 : host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *(CUdeviceptr *)data = a ? (CUdeviceptr)ptr : 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (a && !host && !managed)
            return CUDA_ERROR_INVALID_VALUE; /* device memory has no host address */
        *(void **)data = a ? (void *)ptr : NULL;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
        *(int *)data = 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        *(unsigned long long *)data = a ? a->id : 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *(int *)data = managed;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = a ? a->dev->ordinal : -2;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(void **)data = !a ? NULL : (void *)(a->kind == GT_MEM_VMM ? a->range_base : a->base);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = !a ? 0 : a->kind == GT_MEM_VMM ? a->range_size : a->size;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPED:
        *(int *)data = a != NULL;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
        *(unsigned long long *)data =
            a && a->kind == GT_MEM_VMM ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
        *(unsigned int *)data = !a ? CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE
                                : a->kind == GT_MEM_VMM && !a->accessible
                                    ? CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE
                                    : CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        *(CUmemoryPool *)data = a ? (CUmemoryPool)a->pool : NULL;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
        *(size_t *)data = a ? a->size : 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
        *(void **)data = a ? (void *)a->base : NULL;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
        *(unsigned long long *)data = a ? a->id : 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
        return CUDA_ERROR_NOT_SUPPORTED;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!data) return CUDA_ERROR_INVALID_VALUE;
    struct gt_alloc a;
    if (!gt_mem_find((uintptr_t)ptr, 0, &a))
        return CUDA_ERROR_INVALID_VALUE; /* not allocated, mapped or registered by CUDA */
    return write_attribute(data, attribute, (uintptr_t)ptr, &a);
}

CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes,
                                        void **data, CUdeviceptr ptr)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (numAttributes && (!attributes || !data)) return CUDA_ERROR_INVALID_VALUE;
    struct gt_alloc a;
    bool known = gt_mem_find((uintptr_t)ptr, 0, &a);
    for (unsigned i = 0; i < numAttributes; i++) {
        if (!data[i]) return CUDA_ERROR_INVALID_VALUE;
        r = write_attribute(data[i], attributes[i], (uintptr_t)ptr, known ? &a : NULL);
        if (r == CUDA_ERROR_INVALID_VALUE && known &&
            attributes[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER) {
            *(void **)data[i] = NULL; /* device memory: no host address */
            r = CUDA_SUCCESS;
        }
        if (r != CUDA_SUCCESS) return r;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuPointerSetAttribute(const void *value, CUpointer_attribute attribute,
                                       CUdeviceptr ptr)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!value || attribute != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS ||
        !gt_mem_find((uintptr_t)ptr, 0, NULL))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS; /* accepted; it changes nothing in the emulator */
}
