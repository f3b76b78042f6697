/* Unified memory hints. Managed memory is ordinary host memory here,
 * always accessible from host and "device": prefetches and advice are
 * checked and accepted, and change nothing. */
#include "emu_stream.h"

static CUresult managed_range(CUdeviceptr ptr, size_t count)
{
    struct gt_alloc a;
    if (count == 0 || !gt_mem_find((uintptr_t)ptr, count, &a) || a.kind != GT_MEM_MANAGED)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

static CUresult location_valid(CUmemLocation location)
{
    struct gt_device *d;
    switch (location.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
        return gt_device_get(location.id, &d);
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

static CUmemLocation device_location(CUdevice dev)
{
    CUmemLocation loc = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev};
    if (dev == CU_DEVICE_CPU) loc.type = CU_MEM_LOCATION_TYPE_HOST;
    return loc;
}

static CUresult prefetch(CUdeviceptr ptr, size_t count, CUmemLocation location, unsigned flags,
                         CUstream hStream, bool per_thread)
{
    struct gt_stream *s;
    CUresult r = gt_stream_resolve(hStream, per_thread, &s);
    if (r == CUDA_SUCCESS) r = flags ? CUDA_ERROR_INVALID_VALUE : managed_range(ptr, count);
    if (r == CUDA_SUCCESS) r = location_valid(location);
    if (r == CUDA_SUCCESS) r = gt_capture_check_legacy(s);
    if (r != CUDA_SUCCESS || gt_stream_capture(s)) return r;
    gt_stream_submit_step(s, NULL, false); /* ordered with the stream's work */
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                                    CUstream hStream)
{
    return prefetch(devPtr, count, device_location(dstDevice), 0, hStream, false);
}

CUresult CUDAAPI cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                                         CUstream hStream)
{
    return prefetch(devPtr, count, device_location(dstDevice), 0, hStream, true);
}

CUresult CUDAAPI cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                       unsigned int flags, CUstream hStream)
{
    return prefetch(devPtr, count, location, flags, hStream, false);
}

CUresult CUDAAPI cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count,
                                            CUmemLocation location, unsigned int flags,
                                            CUstream hStream)
{
    return prefetch(devPtr, count, location, flags, hStream, true);
}

static CUresult advise(CUdeviceptr ptr, size_t count, CUmem_advise advice, CUmemLocation location)
{
    CUresult r = gt_ready();
    if (r == CUDA_SUCCESS) r = managed_range(ptr, count);
    if (r == CUDA_SUCCESS && ((unsigned)advice < CU_MEM_ADVISE_SET_READ_MOSTLY ||
                              (unsigned)advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && advice != CU_MEM_ADVISE_SET_READ_MOSTLY &&
        advice != CU_MEM_ADVISE_UNSET_READ_MOSTLY)
        r = location_valid(location);
    return r;
}

CUresult CUDAAPI cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device)
{
    return advise(devPtr, count, advice, device_location(device));
}

CUresult CUDAAPI cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                                CUmemLocation location)
{
    return advise(devPtr, count, advice, location);
}
