/* Emulated devices: compute capability 9.0, properties of a large
 * Hopper-class part, memory size from GPUTRACE_EMU_MEMORY_MB. */
#include "emu.h"

#include <stdio.h>
#include <string.h>

#define GT_SM_COUNT 132
#define GT_PCI_BUS_BASE 0x10

struct gt_device gt_devices[GT_MAX_DEVICES];
int gt_device_count;

static const int attribute_values[CU_DEVICE_ATTRIBUTE_MAX] = {
    [CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK] = 1024,
    [CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X] = 1024,
    [CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y] = 1024,
    [CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z] = 64,
    [CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X] = 2147483647,
    [CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y] = 65535,
    [CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z] = 65535,
    [CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK] = 49152,
    [CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY] = 65536,
    [CU_DEVICE_ATTRIBUTE_WARP_SIZE] = 32,
    [CU_DEVICE_ATTRIBUTE_MAX_PITCH] = 2147483647,
    [CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK] = 65536,
    [CU_DEVICE_ATTRIBUTE_CLOCK_RATE] = 1755000,
    [CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT] = 512,
    [CU_DEVICE_ATTRIBUTE_GPU_OVERLAP] = 1,
    [CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT] = GT_SM_COUNT,
    [CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY] = 1,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH] = 131072,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH] = 131072,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT] = 65536,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH] = 16384,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT] = 16384,
    [CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH] = 16384,
    [CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT] = 512,
    [CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS] = 1,
    [CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE] = 2619000,
    [CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH] = 5120,
    [CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE] = 52428800,
    [CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR] = 2048,
    [CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT] = 3,
    [CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING] = 1,
    [CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT] = 32,
    [CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR] = 9,
    [CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR] = 0,
    [CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR] = 233472,
    [CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR] = 65536,
    [CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY] = 1,
    [CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO] = 2,
    [CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS] = 1,
    [CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM] = 1,
    [CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH] = 1,
    [CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN] = 232448,
    [CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR] = 32,
    [CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE] = 32505856,
    [CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE] = 134213632,
    [CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK] = 1024,
    [CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES] = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
    [CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH] = 1,
    [CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT] = 4,
    [CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED] = 1,
    [CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS] = 1,
    [CU_DEVICE_ATTRIBUTE_NUMA_ID] = -1,
    [CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID] = -1,
};

void gt_devices_init(void)
{
    const struct gt_config *cfg = gt_config_get();
    int n = 0;
    for (int i = 0; i < cfg->devices; i++) {
        struct gt_device *d = &gt_devices[i];
        d->ordinal = i;
        snprintf(d->name, sizeof d->name, "gputrace emulated GPU");
        /* Distinct, stable UUIDs: "gtemu" + ordinal. */
        memcpy(d->uuid.bytes, "gtemu-device", 12);
        d->uuid.bytes[15] = (char)i;
        d->total_bytes = cfg->memory_bytes;
        pthread_mutex_init(&d->lock, NULL);
        if (!gt_arena_init(d)) break;
        n++;
    }
    gt_device_count = n;
}

CUresult gt_device_get(CUdevice dev, struct gt_device **out)
{
    if (dev < 0 || dev >= gt_device_count) return CUDA_ERROR_INVALID_DEVICE;
    *out = &gt_devices[dev];
    return CUDA_SUCCESS;
}

static CUresult device_arg(CUdevice dev, const void *out_ptr, struct gt_device **d)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    r = gt_device_get(dev, d);
    if (r != CUDA_SUCCESS) return r;
    return out_ptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || ordinal >= gt_device_count) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    *count = gt_device_count;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
    struct gt_device *d;
    CUresult r = device_arg(dev, name, &d);
    if (r != CUDA_SUCCESS) return r;
    if (len <= 0) return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "%s", d->name);
    return CUDA_SUCCESS;
}

static CUresult device_uuid(CUuuid *uuid, CUdevice dev)
{
    struct gt_device *d;
    CUresult r = device_arg(dev, uuid, &d);
    if (r == CUDA_SUCCESS) *uuid = d->uuid;
    return r;
}

CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    return device_uuid(uuid, dev);
}

CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    return device_uuid(uuid, dev);
}

CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    struct gt_device *d;
    CUresult r = device_arg(dev, bytes, &d);
    if (r == CUDA_SUCCESS) *bytes = d->total_bytes;
    return r;
}

CUresult CUDAAPI cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
    struct gt_device *d;
    CUresult r = device_arg(dev, bytes, &d);
    if (r == CUDA_SUCCESS)
        *bytes = d->total_bytes > 0xffffffffu ? 0xffffffffu : (unsigned int)d->total_bytes;
    return r;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    struct gt_device *d;
    CUresult r = device_arg(dev, pi, &d);
    if (r != CUDA_SUCCESS) return r;
    if ((unsigned)attrib >= CU_DEVICE_ATTRIBUTE_MAX || attrib == 0) return CUDA_ERROR_INVALID_VALUE;
    int value = attribute_values[attrib];
    if (attrib == CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)
        value = GT_PCI_BUS_BASE + d->ordinal;
    else if (attrib == CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID)
        value = d->ordinal;
    *pi = value;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
    struct gt_device *d;
    CUresult r = device_arg(dev, major, &d);
    if (r != CUDA_SUCCESS) return r;
    if (!minor) return CUDA_ERROR_INVALID_VALUE;
    *major = 9;
    *minor = 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetProperties(CUdevprop *prop, CUdevice dev)
{
    struct gt_device *d;
    CUresult r = device_arg(dev, prop, &d);
    if (r != CUDA_SUCCESS) return r;
    memset(prop, 0, sizeof *prop);
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = 1024;
    prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 2147483647;
    prop->maxGridSize[1] = 65535;
    prop->maxGridSize[2] = 65535;
    prop->sharedMemPerBlock = 49152;
    prop->totalConstantMemory = 65536;
    prop->SIMDWidth = 32;
    prop->memPitch = 2147483647;
    prop->regsPerBlock = 65536;
    prop->clockRate = 1755000;
    prop->textureAlign = 512;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    struct gt_device *d;
    CUresult r = device_arg(dev, pciBusId, &d);
    if (r != CUDA_SUCCESS) return r;
    if (len <= 0) return CUDA_ERROR_INVALID_VALUE;
    snprintf(pciBusId, (size_t)len, "0000:%02x:00.0", GT_PCI_BUS_BASE + d->ordinal);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!dev || !pciBusId) return CUDA_ERROR_INVALID_VALUE;
    unsigned domain = 0, bus = 0, device = 0, function = 0;
    if (sscanf(pciBusId, "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4 &&
        sscanf(pciBusId, "%x:%x.%x", &bus, &device, &function) != 3)
        return CUDA_ERROR_INVALID_VALUE;
    int ordinal = (int)bus - GT_PCI_BUS_BASE;
    if (domain != 0 || device != 0 || ordinal < 0 || ordinal >= gt_device_count)
        return CUDA_ERROR_INVALID_DEVICE;
    *dev = ordinal;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
    struct gt_device *d, *p;
    CUresult r = device_arg(dev, canAccessPeer, &d);
    if (r == CUDA_SUCCESS) r = gt_device_get(peerDev, &p);
    if (r == CUDA_SUCCESS) *canAccessPeer = dev != peerDev;
    return r;
}

CUresult CUDAAPI cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib,
                                         CUdevice srcDevice, CUdevice dstDevice)
{
    struct gt_device *s, *d;
    CUresult r = device_arg(srcDevice, value, &s);
    if (r == CUDA_SUCCESS) r = gt_device_get(dstDevice, &d);
    if (r != CUDA_SUCCESS) return r;
    if (srcDevice == dstDevice) return CUDA_ERROR_INVALID_DEVICE;
    switch (attrib) {
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK:
        *value = 0;
        return CUDA_SUCCESS;
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
        *value = 1;
        return CUDA_SUCCESS;
    default:
        *value = 0;
        return CUDA_SUCCESS;
    }
}
