/* Prototypes of runtime exports that the C headers do not declare: the
 * per-thread-default-stream variants (declared only in that compilation
 * mode, under the plain names) and the nvcc launch and registration glue
 * (declared for C++ only). Each is its plain variant's prototype, as
 * libcudart.so.13 exports it. */
#ifndef GT_SHIM_RT_DECLS_H
#define GT_SHIM_RT_DECLS_H

#include <cuda_runtime_api.h>
#include <stddef.h>

/* crt/device_functions.h, crt/host_runtime.h */
cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                         void **args, size_t sharedMem, cudaStream_t stream);
cudaError_t CUDARTAPI __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                              void **args, size_t sharedMem, cudaStream_t stream);
void CUDARTAPI __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                                      const char *deviceName, int thread_limit, uint3 *tid,
                                      uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);

cudaError_t CUDARTAPI cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
                                            void **args, size_t sharedMem, cudaStream_t stream);
cudaError_t CUDARTAPI cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
                                               void **args);
cudaError_t CUDARTAPI cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim,
                                                       dim3 blockDim, void **args, size_t sharedMem,
                                                       cudaStream_t stream);
cudaError_t CUDARTAPI cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream);

cudaError_t CUDARTAPI cudaMemcpy_ptds(void *dst, const void *src, size_t count,
                                      enum cudaMemcpyKind kind);
cudaError_t CUDARTAPI cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                           enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch,
                                        size_t width, size_t height, enum cudaMemcpyKind kind);
cudaError_t CUDARTAPI cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src,
                                             size_t spitch, size_t width, size_t height,
                                             enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemcpy2DToArray_ptds(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                               const void *src, size_t spitch, size_t width,
                                               size_t height, enum cudaMemcpyKind kind);
cudaError_t CUDARTAPI cudaMemcpy2DToArrayAsync_ptsz(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                                    const void *src, size_t spitch, size_t width,
                                                    size_t height, enum cudaMemcpyKind kind,
                                                    cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemcpy2DFromArray_ptds(void *dst, size_t dpitch, cudaArray_const_t src,
                                                 size_t wOffset, size_t hOffset, size_t width,
                                                 size_t height, enum cudaMemcpyKind kind);
cudaError_t CUDARTAPI cudaMemcpy2DFromArrayAsync_ptsz(void *dst, size_t dpitch,
                                                      cudaArray_const_t src, size_t wOffset,
                                                      size_t hOffset, size_t width, size_t height,
                                                      enum cudaMemcpyKind kind,
                                                      cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemcpy2DArrayToArray_ptds(cudaArray_t dst, size_t wOffsetDst,
                                                    size_t hOffsetDst, cudaArray_const_t src,
                                                    size_t wOffsetSrc, size_t hOffsetSrc,
                                                    size_t width, size_t height,
                                                    enum cudaMemcpyKind kind);
cudaError_t CUDARTAPI cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p);
cudaError_t CUDARTAPI cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p,
                                             cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemcpy3DPeer_ptds(const struct cudaMemcpy3DPeerParms *p);
cudaError_t CUDARTAPI cudaMemcpy3DPeerAsync_ptsz(const struct cudaMemcpy3DPeerParms *p,
                                                 cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count,
                                              size_t offset, enum cudaMemcpyKind kind);
cudaError_t CUDARTAPI cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count,
                                                size_t offset, enum cudaMemcpyKind kind);
cudaError_t CUDARTAPI cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src,
                                                   size_t count, size_t offset,
                                                   enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count,
                                                     size_t offset, enum cudaMemcpyKind kind,
                                                     cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemcpyBatchAsync_ptsz(void *const *dsts, const void *const *srcs,
                                                const size_t *sizes, size_t count,
                                                struct cudaMemcpyAttributes *attrs,
                                                size_t *attrsIdxs, size_t numAttrs,
                                                cudaStream_t stream);

cudaError_t CUDARTAPI cudaMemset_ptds(void *devPtr, int value, size_t count);
cudaError_t CUDARTAPI cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
                                           cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width,
                                        size_t height);
cudaError_t CUDARTAPI cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value, size_t width,
                                             size_t height, cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemset3D_ptds(struct cudaPitchedPtr pitchedDevPtr, int value,
                                        struct cudaExtent extent);
cudaError_t CUDARTAPI cudaMemset3DAsync_ptsz(struct cudaPitchedPtr pitchedDevPtr, int value,
                                             struct cudaExtent extent, cudaStream_t stream);

cudaError_t CUDARTAPI cudaStreamSynchronize_ptsz(cudaStream_t stream);

cudaError_t CUDARTAPI cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream);
cudaError_t CUDARTAPI cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool,
                                                   cudaStream_t stream);
cudaError_t CUDARTAPI cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream);

#endif
