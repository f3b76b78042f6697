/* Memsets: the runtime sets bytes, so every form goes to the driver's 8-bit memsets. */
#include "rt_trace.h"

static cudaError_t memset_1d(void *devPtr, int value, size_t count, const cudaStream_t *stream,
                             enum rt_stream_mode mode)
{
    cudaError_t err = gt_rt_context();
    if (err != cudaSuccess) return err;
    unsigned char byte = (unsigned char)value;
    if (stream == NULL) return RT_CALL(gt_rt_drv.memsetD8[mode], RT_DPTR(devPtr), byte, count);
    return RT_CALL(gt_rt_drv.memsetD8Async[mode], RT_DPTR(devPtr), byte, count, *stream);
}

RT_API cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    RT_API_ENTER(cudaMemset, 3020, devPtr, value, count);
    return RT_API_EXIT(gt_rt_result(memset_1d(devPtr, value, count, NULL, RT_LEGACY)));
}

RT_API cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
    RT_API_ENTER(cudaMemset_ptds, 7000, devPtr, value, count);
    return RT_API_EXIT(gt_rt_result(memset_1d(devPtr, value, count, NULL, RT_PER_THREAD)));
}

RT_API cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    RT_API_ENTER(cudaMemsetAsync, 3020, devPtr, value, count, stream);
    return RT_API_EXIT(gt_rt_result(memset_1d(devPtr, value, count, &stream, RT_LEGACY)));
}

RT_API cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    RT_API_ENTER(cudaMemsetAsync_ptsz, 7000, devPtr, value, count, stream);
    return RT_API_EXIT(gt_rt_result(memset_1d(devPtr, value, count, &stream, RT_PER_THREAD)));
}

static cudaError_t memset_2d(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                             const cudaStream_t *stream, enum rt_stream_mode mode)
{
    if (height > 1 && width > pitch) return cudaErrorInvalidPitchValue;
    cudaError_t err = gt_rt_context();
    if (err != cudaSuccess) return err;
    unsigned char byte = (unsigned char)value;
    if (stream == NULL)
        return RT_CALL(gt_rt_drv.memsetD2D8[mode], RT_DPTR(devPtr), pitch, byte, width, height);
    return RT_CALL(gt_rt_drv.memsetD2D8Async[mode], RT_DPTR(devPtr), pitch, byte, width, height,
                   *stream);
}

RT_API cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
    RT_API_ENTER(cudaMemset2D, 3020, devPtr, pitch, value, width, height);
    return RT_API_EXIT(
        gt_rt_result(memset_2d(devPtr, pitch, value, width, height, NULL, RT_LEGACY)));
}

RT_API cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width,
                                     size_t height)
{
    RT_API_ENTER(cudaMemset2D_ptds, 7000, devPtr, pitch, value, width, height);
    return RT_API_EXIT(
        gt_rt_result(memset_2d(devPtr, pitch, value, width, height, NULL, RT_PER_THREAD)));
}

RT_API cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width,
                                     size_t height, cudaStream_t stream)
{
    RT_API_ENTER(cudaMemset2DAsync, 3020, devPtr, pitch, value, width, height, stream);
    return RT_API_EXIT(
        gt_rt_result(memset_2d(devPtr, pitch, value, width, height, &stream, RT_LEGACY)));
}

RT_API cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value, size_t width,
                                          size_t height, cudaStream_t stream)
{
    RT_API_ENTER(cudaMemset2DAsync_ptsz, 7000, devPtr, pitch, value, width, height, stream);
    return RT_API_EXIT(
        gt_rt_result(memset_2d(devPtr, pitch, value, width, height, &stream, RT_PER_THREAD)));
}
