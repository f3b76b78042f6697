/* Call sites of a CUDA C++ program built by nvcc at -O2 without frame
 * pointers, with the static runtime (nvcc's default) or the shared one:
 * one kernel launched with <<<...>>> from two functions, memory allocated
 * in a third. Lines that make a call follow a line that says "SITE name:
 * the call on the next line", which check_callsites.py finds.
 *
 * callsite_cu [launches] */
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define N 4096
#define BLOCK 256

__global__ void scale(float *x, float f, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= f;
}

static void check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return;
    fprintf(stderr, "callsite_cu: %s: %s\n", what, cudaGetErrorName(e));
    exit(1);
}

__attribute__((noinline)) static float *cu_alloc()
{
    void *p = nullptr;
    /* SITE cu_alloc: the call on the next line */
    check(cudaMalloc(&p, N * sizeof(float)), "cudaMalloc");
    return static_cast<float *>(p);
}

__attribute__((noinline)) static void cu_first(float *x, int launches)
{
    for (int i = 0; i < launches; i++) {
        /* SITE cu_first: the call on the next line */
        scale<<<N / BLOCK, BLOCK>>>(x, 2.0f, N);
    }
    check(cudaGetLastError(), "launch");
}

__attribute__((noinline)) static void cu_second(float *x, int launches)
{
    for (int i = 0; i < 2 * launches; i++) {
        /* SITE cu_second: the call on the next line */
        scale<<<N / BLOCK, BLOCK>>>(x, 0.5f, N);
    }
    check(cudaGetLastError(), "launch");
}

int main(int argc, char **argv)
{
    int launches = argc > 1 ? atoi(argv[1]) : 10;
    float *x = cu_alloc();
    cu_first(x, launches);
    cu_second(x, launches);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    check(cudaFree(x), "cudaFree");
    return 0;
}
