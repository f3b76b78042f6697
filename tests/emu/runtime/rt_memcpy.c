/* Copies and memsets. Each cudaMemcpyKind goes to the driver call of that direction
 * (cudaMemcpyDefault and host-to-host to the unified cuMemcpy), so that the driver
 * level sees the same copies; _ptds/_ptsz entry points use the driver's per-thread
 * default stream variants. */
#include "rt_trace.h"

static cudaError_t copy_sync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                             enum rt_stream_mode mode)
{
    switch (kind) {
    case cudaMemcpyHostToDevice:
        return RT_CALL(gt_rt_drv.memcpyHtoD[mode], RT_DPTR(dst), src, count);
    case cudaMemcpyDeviceToHost:
        return RT_CALL(gt_rt_drv.memcpyDtoH[mode], dst, RT_DPTR(src), count);
    case cudaMemcpyDeviceToDevice:
        return RT_CALL(gt_rt_drv.memcpyDtoD[mode], RT_DPTR(dst), RT_DPTR(src), count);
    case cudaMemcpyHostToHost:
    case cudaMemcpyDefault:
        return RT_CALL(gt_rt_drv.memcpy[mode], RT_DPTR(dst), RT_DPTR(src), count);
    default:
        return cudaErrorInvalidMemcpyDirection;
    }
}

static cudaError_t copy_async(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                              cudaStream_t stream, enum rt_stream_mode mode)
{
    switch (kind) {
    case cudaMemcpyHostToDevice:
        return RT_CALL(gt_rt_drv.memcpyHtoDAsync[mode], RT_DPTR(dst), src, count, stream);
    case cudaMemcpyDeviceToHost:
        return RT_CALL(gt_rt_drv.memcpyDtoHAsync[mode], dst, RT_DPTR(src), count, stream);
    case cudaMemcpyDeviceToDevice:
        return RT_CALL(gt_rt_drv.memcpyDtoDAsync[mode], RT_DPTR(dst), RT_DPTR(src), count, stream);
    case cudaMemcpyHostToHost:
    case cudaMemcpyDefault:
        return RT_CALL(gt_rt_drv.memcpyAsync[mode], RT_DPTR(dst), RT_DPTR(src), count, stream);
    default:
        return cudaErrorInvalidMemcpyDirection;
    }
}

static cudaError_t memcpy_1d(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                             const cudaStream_t *stream, enum rt_stream_mode mode)
{
    cudaError_t err = gt_rt_context();
    if (err != cudaSuccess) return err;
    return stream == NULL ? copy_sync(dst, src, count, kind, mode)
                          : copy_async(dst, src, count, kind, *stream, mode);
}

RT_API cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    RT_API_ENTER(cudaMemcpy, 3020, dst, src, count, kind);
    return RT_API_EXIT(gt_rt_result(memcpy_1d(dst, src, count, kind, NULL, RT_LEGACY)));
}

RT_API cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
                                   enum cudaMemcpyKind kind)
{
    RT_API_ENTER(cudaMemcpy_ptds, 7000, dst, src, count, kind);
    return RT_API_EXIT(gt_rt_result(memcpy_1d(dst, src, count, kind, NULL, RT_PER_THREAD)));
}

RT_API cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                   enum cudaMemcpyKind kind, cudaStream_t stream)
{
    RT_API_ENTER(cudaMemcpyAsync, 3020, dst, src, count, kind, stream);
    return RT_API_EXIT(gt_rt_result(memcpy_1d(dst, src, count, kind, &stream, RT_LEGACY)));
}

RT_API cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                        enum cudaMemcpyKind kind, cudaStream_t stream)
{
    RT_API_ENTER(cudaMemcpyAsync_ptsz, 7000, dst, src, count, kind, stream);
    return RT_API_EXIT(gt_rt_result(memcpy_1d(dst, src, count, kind, &stream, RT_PER_THREAD)));
}

static cudaError_t memcpy_peer(void *dst, int dst_device, const void *src, int src_device,
                               size_t count, const cudaStream_t *stream, enum rt_stream_mode mode)
{
    CUcontext dst_ctx = NULL, src_ctx = NULL;
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess) err = gt_rt_primary_context(dst_device, &dst_ctx);
    if (err == cudaSuccess) err = gt_rt_primary_context(src_device, &src_ctx);
    if (err != cudaSuccess) return err;
    if (stream == NULL)
        return RT_CALL(gt_rt_drv.memcpyPeer[mode], RT_DPTR(dst), dst_ctx, RT_DPTR(src), src_ctx,
                       count);
    return RT_CALL(gt_rt_drv.memcpyPeerAsync[mode], RT_DPTR(dst), dst_ctx, RT_DPTR(src), src_ctx,
                   count, *stream);
}

RT_API cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice,
                                  size_t count)
{
    RT_API_ENTER(cudaMemcpyPeer, 4000, dst, dstDevice, src, srcDevice, count);
    return RT_API_EXIT(
        gt_rt_result(memcpy_peer(dst, dstDevice, src, srcDevice, count, NULL, RT_LEGACY)));
}

RT_API cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice,
                                       size_t count, cudaStream_t stream)
{
    RT_API_ENTER(cudaMemcpyPeerAsync, 4000, dst, dstDevice, src, srcDevice, count, stream);
    return RT_API_EXIT(
        gt_rt_result(memcpy_peer(dst, dstDevice, src, srcDevice, count, &stream, RT_LEGACY)));
}

/* Fills the source or destination half of a CUDA_MEMCPY2D from a runtime pointer. */
static void describe_side(bool host, bool unified, const void *ptr, CUmemorytype *type,
                          const void **host_ptr, CUdeviceptr *device_ptr)
{
    if (unified) {
        *type = CU_MEMORYTYPE_UNIFIED;
        *device_ptr = RT_DPTR(ptr);
    } else if (host) {
        *type = CU_MEMORYTYPE_HOST;
        *host_ptr = ptr;
    } else {
        *type = CU_MEMORYTYPE_DEVICE;
        *device_ptr = RT_DPTR(ptr);
    }
}

static cudaError_t memcpy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                             size_t height, enum cudaMemcpyKind kind, const cudaStream_t *stream,
                             enum rt_stream_mode mode)
{
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    if (height > 1 && (width > dpitch || width > spitch)) return cudaErrorInvalidPitchValue;
    cudaError_t err = gt_rt_context();
    if (err != cudaSuccess) return err;
    bool unified = kind == cudaMemcpyDefault;
    bool src_host = kind == cudaMemcpyHostToHost || kind == cudaMemcpyHostToDevice;
    bool dst_host = kind == cudaMemcpyHostToHost || kind == cudaMemcpyDeviceToHost;
    CUDA_MEMCPY2D p = {
        .srcPitch = spitch, .dstPitch = dpitch, .WidthInBytes = width, .Height = height};
    describe_side(src_host, unified, src, &p.srcMemoryType, &p.srcHost, &p.srcDevice);
    const void *dst_host_ptr = NULL;
    describe_side(dst_host, unified, dst, &p.dstMemoryType, &dst_host_ptr, &p.dstDevice);
    p.dstHost = (void *)dst_host_ptr;
    if (stream == NULL) return RT_CALL(gt_rt_drv.memcpy2DUnaligned[mode], &p);
    return RT_CALL(gt_rt_drv.memcpy2DAsync[mode], &p, *stream);
}

RT_API cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                                size_t width, size_t height, enum cudaMemcpyKind kind)
{
    RT_API_ENTER(cudaMemcpy2D, 3020, dst, dpitch, src, spitch, width, height, kind);
    return RT_API_EXIT(
        gt_rt_result(memcpy_2d(dst, dpitch, src, spitch, width, height, kind, NULL, RT_LEGACY)));
}

RT_API cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch,
                                     size_t width, size_t height, enum cudaMemcpyKind kind)
{
    RT_API_ENTER(cudaMemcpy2D_ptds, 7000, dst, dpitch, src, spitch, width, height, kind);
    return RT_API_EXIT(gt_rt_result(
        memcpy_2d(dst, dpitch, src, spitch, width, height, kind, NULL, RT_PER_THREAD)));
}

RT_API cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                                     size_t width, size_t height, enum cudaMemcpyKind kind,
                                     cudaStream_t stream)
{
    RT_API_ENTER(cudaMemcpy2DAsync, 3020, dst, dpitch, src, spitch, width, height, kind, stream);
    return RT_API_EXIT(
        gt_rt_result(memcpy_2d(dst, dpitch, src, spitch, width, height, kind, &stream, RT_LEGACY)));
}

RT_API cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch,
                                          size_t width, size_t height, enum cudaMemcpyKind kind,
                                          cudaStream_t stream)
{
    RT_API_ENTER(cudaMemcpy2DAsync_ptsz, 7000, dst, dpitch, src, spitch, width, height, kind,
                 stream);
    return RT_API_EXIT(gt_rt_result(
        memcpy_2d(dst, dpitch, src, spitch, width, height, kind, &stream, RT_PER_THREAD)));
}

/* Resolves symbol + offset + count to a device address inside the variable. */
static cudaError_t symbol_range(const void *symbol, size_t count, size_t offset,
                                CUdeviceptr *address)
{
    size_t size = 0;
    cudaError_t err = gt_rt_symbol_address(symbol, address, &size);
    if (err != cudaSuccess) return err;
    if (offset > size || count > size - offset) return cudaErrorInvalidValue;
    *address += offset;
    return cudaSuccess;
}

/* A copy to (to_symbol) or from a registered variable; `other` is the other side. */
static cudaError_t symbol_copy(bool to_symbol, void *other, const void *symbol, size_t count,
                               size_t offset, enum cudaMemcpyKind kind, const cudaStream_t *stream,
                               enum rt_stream_mode mode)
{
    enum cudaMemcpyKind host_side = to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    if (kind != host_side && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    CUdeviceptr address = 0;
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess) err = symbol_range(symbol, count, offset, &address);
    if (err != cudaSuccess) return err;
    void *variable = (void *)(uintptr_t)address;
    void *dst = to_symbol ? variable : other;
    const void *src = to_symbol ? other : variable;
    return stream == NULL ? copy_sync(dst, src, count, kind, mode)
                          : copy_async(dst, src, count, kind, *stream, mode);
}

RT_API cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count,
                                      size_t offset, enum cudaMemcpyKind kind)
{
    RT_API_ENTER(cudaMemcpyToSymbol, 3020, symbol, src, count, offset, kind);
    return RT_API_EXIT(
        gt_rt_result(symbol_copy(true, (void *)src, symbol, count, offset, kind, NULL, RT_LEGACY)));
}

RT_API cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count,
                                           size_t offset, enum cudaMemcpyKind kind)
{
    RT_API_ENTER(cudaMemcpyToSymbol_ptds, 7000, symbol, src, count, offset, kind);
    return RT_API_EXIT(gt_rt_result(
        symbol_copy(true, (void *)src, symbol, count, offset, kind, NULL, RT_PER_THREAD)));
}

RT_API cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count,
                                           size_t offset, enum cudaMemcpyKind kind,
                                           cudaStream_t stream)
{
    RT_API_ENTER(cudaMemcpyToSymbolAsync, 3020, symbol, src, count, offset, kind, stream);
    return RT_API_EXIT(gt_rt_result(
        symbol_copy(true, (void *)src, symbol, count, offset, kind, &stream, RT_LEGACY)));
}

RT_API cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count,
                                                size_t offset, enum cudaMemcpyKind kind,
                                                cudaStream_t stream)
{
    RT_API_ENTER(cudaMemcpyToSymbolAsync_ptsz, 7000, symbol, src, count, offset, kind, stream);
    return RT_API_EXIT(gt_rt_result(
        symbol_copy(true, (void *)src, symbol, count, offset, kind, &stream, RT_PER_THREAD)));
}

RT_API cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                        enum cudaMemcpyKind kind)
{
    RT_API_ENTER(cudaMemcpyFromSymbol, 3020, dst, symbol, count, offset, kind);
    return RT_API_EXIT(
        gt_rt_result(symbol_copy(false, dst, symbol, count, offset, kind, NULL, RT_LEGACY)));
}

RT_API cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count,
                                             size_t offset, enum cudaMemcpyKind kind)
{
    RT_API_ENTER(cudaMemcpyFromSymbol_ptds, 7000, dst, symbol, count, offset, kind);
    return RT_API_EXIT(
        gt_rt_result(symbol_copy(false, dst, symbol, count, offset, kind, NULL, RT_PER_THREAD)));
}

RT_API cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count,
                                             size_t offset, enum cudaMemcpyKind kind,
                                             cudaStream_t stream)
{
    RT_API_ENTER(cudaMemcpyFromSymbolAsync, 3020, dst, symbol, count, offset, kind, stream);
    return RT_API_EXIT(
        gt_rt_result(symbol_copy(false, dst, symbol, count, offset, kind, &stream, RT_LEGACY)));
}

RT_API cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count,
                                                  size_t offset, enum cudaMemcpyKind kind,
                                                  cudaStream_t stream)
{
    RT_API_ENTER(cudaMemcpyFromSymbolAsync_ptsz, 7000, dst, symbol, count, offset, kind, stream);
    return RT_API_EXIT(
        gt_rt_result(symbol_copy(false, dst, symbol, count, offset, kind, &stream, RT_PER_THREAD)));
}

RT_API cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
    if (devPtr == NULL) return gt_rt_result(cudaErrorInvalidValue);
    CUdeviceptr address = 0;
    size_t size = 0;
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess) err = gt_rt_symbol_address(symbol, &address, &size);
    *devPtr = (void *)(uintptr_t)address;
    return gt_rt_result(err);
}

RT_API cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
    if (size == NULL) return gt_rt_result(cudaErrorInvalidValue);
    CUdeviceptr address = 0;
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess) err = gt_rt_symbol_address(symbol, &address, size);
    return gt_rt_result(err);
}
