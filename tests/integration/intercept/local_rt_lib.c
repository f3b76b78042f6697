/* A library linked against the CUDA runtime, opened by local_rt_prog with
 * RTLD_LOCAL as Python opens extension modules: the runtime is then in no
 * global scope, only in this library's. Its runtime calls still reach the
 * shim's wrappers (preloaded, global), which must call this runtime. */
#include <stdlib.h>

#include <cuda_runtime_api.h>

/* A memset, a synchronous DtoH copy from pageable memory checked, a device
 * synchronize. 0 on success, else the number of the step that failed. */
int local_rt_work(size_t bytes)
{
    void *device = NULL;
    unsigned char *host = malloc(bytes);
    if (!host || cudaMalloc(&device, bytes) != cudaSuccess) return 1;
    if (cudaMemset(device, 7, bytes) != cudaSuccess) return 2;
    if (cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) return 3;
    for (size_t i = 0; i < bytes; i++)
        if (host[i] != 7) return 4;
    if (cudaDeviceSynchronize() != cudaSuccess) return 5;
    free(host);
    return cudaFree(device) == cudaSuccess ? 0 : 6;
}
