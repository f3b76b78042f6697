/* The CUDA runtime's caller in a library that is another's dependency, as
 * a Python extension's helper library is (dep_prog.c). The runtime is in
 * no global scope: the shim's wrappers find it from this library. */
#include <stddef.h>

#include <cuda_runtime_api.h>

/* Two cudaMalloc of `bytes` (the second left allocated), one pinned
 * allocation freed. 0 on success, else the failing step's number. */
int dep_inner_work(size_t bytes)
{
    void *a = NULL, *b = NULL, *h = NULL;
    if (cudaMalloc(&a, bytes) != cudaSuccess) return 1;
    if (cudaMalloc(&b, bytes) != cudaSuccess) return 2;
    if (cudaFree(a) != cudaSuccess) return 3;
    if (cudaMallocHost(&h, bytes) != cudaSuccess) return 4;
    return cudaFreeHost(h) == cudaSuccess ? 0 : 5;
}
