/* Allocation: device, pinned host, registered host, managed and stream-ordered memory.
 * The runtime's flag values are the driver's (cudaHostAlloc* = CU_MEMHOSTALLOC_*,
 * cudaHostRegister* = CU_MEMHOSTREGISTER_*, cudaMemAttach* = CU_MEM_ATTACH_*). */
#include <string.h>

#include "rt_internal.h"

RT_API cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    if (devPtr == NULL) return gt_rt_result(cudaErrorInvalidValue);
    cudaError_t err = gt_rt_context();
    if (err != cudaSuccess) return gt_rt_result(err);
    /* A zero-byte request succeeds with a NULL pointer, unlike cuMemAlloc. */
    CUdeviceptr dptr = 0;
    if (size != 0) err = RT_CALL(gt_rt_drv.memAlloc, &dptr, size);
    *devPtr = (void *)(uintptr_t)dptr;
    return gt_rt_result(err);
}

RT_API cudaError_t cudaFree(void *devPtr)
{
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess && devPtr != NULL) err = RT_CALL(gt_rt_drv.memFree, RT_DPTR(devPtr));
    return gt_rt_result(err);
}

static cudaError_t host_alloc(void **pHost, size_t size, unsigned int flags)
{
    if (pHost == NULL) return cudaErrorInvalidValue;
    cudaError_t err = gt_rt_context();
    if (err != cudaSuccess) return err;
    *pHost = NULL;
    if (size == 0) return cudaSuccess;
    return RT_CALL(gt_rt_drv.memHostAlloc, pHost, size, flags);
}

RT_API cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    return gt_rt_result(host_alloc(ptr, size, cudaHostAllocDefault));
}

RT_API cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    const unsigned int known =
        cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
    if ((flags & ~known) != 0) return gt_rt_result(cudaErrorInvalidValue);
    return gt_rt_result(host_alloc(pHost, size, flags));
}

RT_API cudaError_t cudaFreeHost(void *ptr)
{
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess && ptr != NULL) err = RT_CALL(gt_rt_drv.memFreeHost, ptr);
    return gt_rt_result(err);
}

RT_API cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess) err = RT_CALL(gt_rt_drv.memHostRegister, ptr, size, flags);
    return gt_rt_result(err);
}

RT_API cudaError_t cudaHostUnregister(void *ptr)
{
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess) err = RT_CALL(gt_rt_drv.memHostUnregister, ptr);
    return gt_rt_result(err);
}

RT_API cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
    if (pDevice == NULL) return gt_rt_result(cudaErrorInvalidValue);
    CUdeviceptr dptr = 0;
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess) err = RT_CALL(gt_rt_drv.memHostGetDevicePointer, &dptr, pHost, flags);
    *pDevice = (void *)(uintptr_t)dptr;
    return gt_rt_result(err);
}

RT_API cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    if (devPtr == NULL) return gt_rt_result(cudaErrorInvalidValue);
    CUdeviceptr dptr = 0;
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess) err = RT_CALL(gt_rt_drv.memAllocManaged, &dptr, size, flags);
    *devPtr = (void *)(uintptr_t)dptr;
    return gt_rt_result(err);
}

RT_API cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes,
                                            const void *ptr)
{
    if (attributes == NULL) return gt_rt_result(cudaErrorInvalidValue);
    cudaError_t err = gt_rt_context();
    if (err != cudaSuccess) return gt_rt_result(err);
    CUmemorytype type = 0;
    int ordinal = cudaInvalidDeviceId;
    CUdeviceptr device_pointer = 0;
    void *host_pointer = NULL;
    int managed = 0;
    CUpointer_attribute which[] = {
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
        CU_POINTER_ATTRIBUTE_DEVICE_POINTER, CU_POINTER_ATTRIBUTE_HOST_POINTER,
        CU_POINTER_ATTRIBUTE_IS_MANAGED};
    void *data[] = {&type, &ordinal, &device_pointer, &host_pointer, &managed};
    /* Unlike cuPointerGetAttribute this succeeds for unknown pointers, leaving the
     * memory type 0: since CUDA 11 the runtime then reports unregistered host memory. */
    err = RT_CALL(gt_rt_drv.pointerGetAttributes, sizeof(which) / sizeof(which[0]), which, data,
                  RT_DPTR(ptr));
    if (err != cudaSuccess) return gt_rt_result(err);
    memset(attributes, 0, sizeof(*attributes));
    switch (type) {
    case CU_MEMORYTYPE_HOST:
        attributes->type = cudaMemoryTypeHost;
        break;
    case CU_MEMORYTYPE_DEVICE:
        attributes->type = managed ? cudaMemoryTypeManaged : cudaMemoryTypeDevice;
        break;
    default:
        attributes->type = cudaMemoryTypeUnregistered;
        ordinal = cudaInvalidDeviceId;
        host_pointer = (void *)ptr;
        break;
    }
    attributes->device = ordinal;
    attributes->devicePointer = (void *)(uintptr_t)device_pointer;
    attributes->hostPointer = host_pointer;
    return cudaSuccess;
}

static cudaError_t malloc_async(void **devPtr, size_t size, cudaStream_t stream,
                                enum rt_stream_mode mode)
{
    if (devPtr == NULL) return cudaErrorInvalidValue;
    CUdeviceptr dptr = 0;
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess) err = RT_CALL(gt_rt_drv.memAllocAsync[mode], &dptr, size, stream);
    *devPtr = (void *)(uintptr_t)dptr;
    return err;
}

RT_API cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
    return gt_rt_result(malloc_async(devPtr, size, hStream, RT_LEGACY));
}

RT_API cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
    return gt_rt_result(malloc_async(devPtr, size, hStream, RT_PER_THREAD));
}

static cudaError_t free_async(void *devPtr, cudaStream_t stream, enum rt_stream_mode mode)
{
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess) err = RT_CALL(gt_rt_drv.memFreeAsync[mode], RT_DPTR(devPtr), stream);
    return err;
}

RT_API cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
    return gt_rt_result(free_async(devPtr, hStream, RT_LEGACY));
}

RT_API cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
    return gt_rt_result(free_async(devPtr, hStream, RT_PER_THREAD));
}
