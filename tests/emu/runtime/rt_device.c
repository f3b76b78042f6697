/* Device management: selection, queries, synchronisation and reset. */
#include <stdint.h>
#include <string.h>

#include "rt_internal.h"

RT_API cudaError_t cudaDriverGetVersion(int *driverVersion)
{
    if (driverVersion == NULL) return gt_rt_result(cudaErrorInvalidValue);
    /* Answers 0 without a driver instead of failing, as documented. */
    if (gt_rt_init() == cudaErrorInsufficientDriver) {
        *driverVersion = 0;
        return cudaSuccess;
    }
    return gt_rt_result(RT_CALL(gt_rt_drv.driverGetVersion, driverVersion));
}

RT_API cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    if (runtimeVersion == NULL) return gt_rt_result(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}

RT_API cudaError_t cudaGetDeviceCount(int *count)
{
    if (count == NULL) return gt_rt_result(cudaErrorInvalidValue);
    cudaError_t err = gt_rt_init();
    *count = err == cudaSuccess ? gt_rt_device_count() : 0;
    return gt_rt_result(err);
}

RT_API cudaError_t cudaSetDevice(int device)
{
    return gt_rt_result(gt_rt_set_device(device));
}

RT_API cudaError_t cudaGetDevice(int *device)
{
    if (device == NULL) return gt_rt_result(cudaErrorInvalidValue);
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess) *device = gt_rt_current_device();
    return gt_rt_result(err);
}

static cudaError_t checked_device(int device, CUdevice *dev)
{
    cudaError_t err = gt_rt_init();
    if (err != cudaSuccess) return err;
    if (device < 0 || device >= gt_rt_device_count()) return cudaErrorInvalidDevice;
    return RT_CALL(gt_rt_drv.deviceGet, dev, device);
}

RT_API cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (value == NULL) return gt_rt_result(cudaErrorInvalidValue);
    CUdevice dev;
    cudaError_t err = checked_device(device, &dev);
    /* cudaDeviceAttr values are the CUdevice_attribute values. */
    if (err == cudaSuccess)
        err = RT_CALL(gt_rt_drv.deviceGetAttribute, value, (CUdevice_attribute)attr, dev);
    return gt_rt_result(err);
}

RT_API cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
    CUdevice dev, peer;
    cudaError_t err = checked_device(device, &dev);
    if (err == cudaSuccess) err = checked_device(peerDevice, &peer);
    if (err == cudaSuccess) err = RT_CALL(gt_rt_drv.deviceCanAccessPeer, canAccessPeer, dev, peer);
    return gt_rt_result(err);
}

#define FIELD(field, attribute)                                                                    \
    {                                                                                              \
        offsetof(struct cudaDeviceProp, field), attribute                                          \
    }

/* Integer properties and the attribute each comes from. */
static const struct {
    size_t offset;
    CUdevice_attribute attribute;
} int_properties[] = {
    FIELD(regsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK),
    FIELD(warpSize, CU_DEVICE_ATTRIBUTE_WARP_SIZE),
    FIELD(maxThreadsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
    FIELD(maxThreadsDim[0], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
    FIELD(maxThreadsDim[1], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
    FIELD(maxThreadsDim[2], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z),
    FIELD(maxGridSize[0], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X),
    FIELD(maxGridSize[1], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
    FIELD(maxGridSize[2], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z),
    FIELD(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
    FIELD(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
    FIELD(multiProcessorCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
    FIELD(integrated, CU_DEVICE_ATTRIBUTE_INTEGRATED),
    FIELD(canMapHostMemory, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY),
    FIELD(maxTexture1D, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH),
    FIELD(maxTexture1DMipmap, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH),
    FIELD(maxTexture2D[0], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH),
    FIELD(maxTexture2D[1], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT),
    FIELD(maxTexture2DMipmap[0], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH),
    FIELD(maxTexture2DMipmap[1], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT),
    FIELD(maxTexture2DLinear[0], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH),
    FIELD(maxTexture2DLinear[1], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT),
    FIELD(maxTexture2DLinear[2], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH),
    FIELD(maxTexture2DGather[0], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH),
    FIELD(maxTexture2DGather[1], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT),
    FIELD(maxTexture3D[0], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH),
    FIELD(maxTexture3D[1], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT),
    FIELD(maxTexture3D[2], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH),
    FIELD(maxTexture3DAlt[0], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE),
    FIELD(maxTexture3DAlt[1], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE),
    FIELD(maxTexture3DAlt[2], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE),
    FIELD(maxTextureCubemap, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH),
    FIELD(maxTexture1DLayered[0], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH),
    FIELD(maxTexture1DLayered[1], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS),
    FIELD(maxTexture2DLayered[0], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH),
    FIELD(maxTexture2DLayered[1], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT),
    FIELD(maxTexture2DLayered[2], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS),
    FIELD(maxTextureCubemapLayered[0], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH),
    FIELD(maxTextureCubemapLayered[1], CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS),
    FIELD(maxSurface1D, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH),
    FIELD(maxSurface2D[0], CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH),
    FIELD(maxSurface2D[1], CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT),
    FIELD(maxSurface3D[0], CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH),
    FIELD(maxSurface3D[1], CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT),
    FIELD(maxSurface3D[2], CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH),
    FIELD(maxSurface1DLayered[0], CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH),
    FIELD(maxSurface1DLayered[1], CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS),
    FIELD(maxSurface2DLayered[0], CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH),
    FIELD(maxSurface2DLayered[1], CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT),
    FIELD(maxSurface2DLayered[2], CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS),
    FIELD(maxSurfaceCubemap, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH),
    FIELD(maxSurfaceCubemapLayered[0], CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH),
    FIELD(maxSurfaceCubemapLayered[1], CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS),
    FIELD(concurrentKernels, CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS),
    FIELD(ECCEnabled, CU_DEVICE_ATTRIBUTE_ECC_ENABLED),
    FIELD(pciBusID, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
    FIELD(pciDeviceID, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID),
    FIELD(pciDomainID, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
    FIELD(tccDriver, CU_DEVICE_ATTRIBUTE_TCC_DRIVER),
    FIELD(asyncEngineCount, CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT),
    FIELD(unifiedAddressing, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING),
    FIELD(memoryBusWidth, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
    FIELD(l2CacheSize, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE),
    FIELD(persistingL2CacheMaxSize, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE),
    FIELD(maxThreadsPerMultiProcessor, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR),
    FIELD(streamPrioritiesSupported, CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED),
    FIELD(globalL1CacheSupported, CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED),
    FIELD(localL1CacheSupported, CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED),
    FIELD(regsPerMultiprocessor, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR),
    FIELD(managedMemory, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY),
    FIELD(isMultiGpuBoard, CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD),
    FIELD(multiGpuBoardGroupID, CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID),
    FIELD(hostNativeAtomicSupported, CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED),
    FIELD(pageableMemoryAccess, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS),
    FIELD(concurrentManagedAccess, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS),
    FIELD(computePreemptionSupported, CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED),
    FIELD(canUseHostPointerForRegisteredMem,
          CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM),
    FIELD(cooperativeLaunch, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH),
    FIELD(pageableMemoryAccessUsesHostPageTables,
          CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES),
    FIELD(directManagedMemAccessFromHost, CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST),
    FIELD(maxBlocksPerMultiProcessor, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR),
    FIELD(accessPolicyMaxWindowSize, CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE),
    FIELD(hostRegisterSupported, CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED),
    FIELD(sparseCudaArraySupported, CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED),
    FIELD(hostRegisterReadOnlySupported, CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED),
    FIELD(timelineSemaphoreInteropSupported,
          CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED),
    FIELD(memoryPoolsSupported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED),
    FIELD(gpuDirectRDMASupported, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED),
    FIELD(gpuDirectRDMAFlushWritesOptions,
          CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS),
    FIELD(gpuDirectRDMAWritesOrdering, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING),
    FIELD(memoryPoolSupportedHandleTypes, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES),
    FIELD(deferredMappingCudaArraySupported,
          CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED),
    FIELD(ipcEventSupported, CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED),
    FIELD(clusterLaunch, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH),
    FIELD(unifiedFunctionPointers, CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS),
    FIELD(deviceNumaConfig, CU_DEVICE_ATTRIBUTE_NUMA_CONFIG),
    FIELD(deviceNumaId, CU_DEVICE_ATTRIBUTE_NUMA_ID),
    FIELD(mpsEnabled, CU_DEVICE_ATTRIBUTE_MPS_ENABLED),
    FIELD(hostNumaId, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID),
    FIELD(gpuPciDeviceID, CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID),
    FIELD(gpuPciSubsystemID, CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID),
    FIELD(hostNumaMultinodeIpcSupported, CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED),
};

/* Byte-count properties, reported by the driver as int attributes. */
static const struct {
    size_t offset;
    CUdevice_attribute attribute;
} size_properties[] = {
    FIELD(sharedMemPerBlock, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
    FIELD(memPitch, CU_DEVICE_ATTRIBUTE_MAX_PITCH),
    FIELD(totalConstMem, CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY),
    FIELD(textureAlignment, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT),
    FIELD(texturePitchAlignment, CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT),
    FIELD(surfaceAlignment, CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT),
    FIELD(sharedMemPerMultiprocessor, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
    FIELD(sharedMemPerBlockOptin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
    FIELD(reservedSharedMemPerBlock, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK),
};

static cudaError_t fill_properties(struct cudaDeviceProp *prop, CUdevice dev)
{
    char *base = (char *)prop;
    cudaError_t err = RT_CALL(gt_rt_drv.deviceGetName, prop->name, sizeof(prop->name), dev);
    if (err == cudaSuccess) err = RT_CALL(gt_rt_drv.deviceTotalMem, &prop->totalGlobalMem, dev);
    if (err == cudaSuccess) err = RT_CALL(gt_rt_drv.deviceGetUuid, (CUuuid *)&prop->uuid, dev);
    for (size_t i = 0; err == cudaSuccess && i < sizeof(int_properties) / sizeof(int_properties[0]);
         i++)
        err = RT_CALL(gt_rt_drv.deviceGetAttribute, (int *)(base + int_properties[i].offset),
                      int_properties[i].attribute, dev);
    for (size_t i = 0;
         err == cudaSuccess && i < sizeof(size_properties) / sizeof(size_properties[0]); i++) {
        int value = 0;
        err = RT_CALL(gt_rt_drv.deviceGetAttribute, &value, size_properties[i].attribute, dev);
        *(size_t *)(base + size_properties[i].offset) = (size_t)(unsigned)value;
    }
    return err;
}

RT_API cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (prop == NULL) return gt_rt_result(cudaErrorInvalidValue);
    CUdevice dev;
    cudaError_t err = checked_device(device, &dev);
    if (err == cudaSuccess) {
        memset(prop, 0, sizeof(*prop));
        err = fill_properties(prop, dev);
    }
    return gt_rt_result(err);
}

RT_API cudaError_t cudaDeviceSynchronize(void)
{
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess) err = RT_CALL(gt_rt_drv.ctxSynchronize);
    return gt_rt_result(err);
}

RT_API cudaError_t cudaDeviceReset(void)
{
    cudaError_t err = gt_rt_init();
    if (err == cudaSuccess) err = gt_rt_reset_device(gt_rt_current_device());
    return gt_rt_result(err);
}

RT_API cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess) err = RT_CALL(gt_rt_drv.memGetInfo, free, total);
    return gt_rt_result(err);
}

RT_API cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess)
        err = RT_CALL(gt_rt_drv.ctxGetStreamPriorityRange, leastPriority, greatestPriority);
    return gt_rt_result(err);
}

/* cuda_profiler_api.h: the driver's profiler control, in the current
 * device's primary context (made on first use, as by any runtime call). */
RT_API cudaError_t cudaProfilerStart(void)
{
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess) err = RT_CALL(gt_rt_drv.profilerStart);
    return gt_rt_result(err);
}

RT_API cudaError_t cudaProfilerStop(void)
{
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess) err = RT_CALL(gt_rt_drv.profilerStop);
    return gt_rt_result(err);
}
