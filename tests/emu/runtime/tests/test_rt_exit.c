/* The runtime registers its exit handler when it initialises: a handler registered
 * before that runs after the runtime's teardown, one registered after it runs before
 * the teardown and can still use CUDA. Prints one line per handler. */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

static void *allocation;

static void registered_before_init(void)
{
    printf("before-init handler: cudaFree -> %s\n", cudaGetErrorName(cudaFree(allocation)));
}

static void registered_after_init(void)
{
    printf("after-init handler: cudaDeviceSynchronize -> %s\n",
           cudaGetErrorName(cudaDeviceSynchronize()));
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    atexit(registered_before_init);
    if (cudaMalloc(&allocation, 64) != cudaSuccess) return 2;
    atexit(registered_after_init);
    printf("main: returning\n");
    return 0;
}
