/* Call sites of a CUDA C++ program built by nvcc without frame pointers,
 * at -O2 and -O0, with the static runtime (nvcc's default) or the shared
 * one: one kernel launched with <<<...>>> from two functions and from a
 * helper inlined into one of them, memory allocated in two more (the
 * second through cuda_runtime.h's typed cudaMalloc, itself inlined). At
 * -O2 nvcc's launch code is inlined into the functions that launch, and
 * carries the kernel's declaration line. Lines that make a call follow a
 * line that says "SITE name: the call on the next line", which
 * check_callsites.py finds.
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

__attribute__((noinline)) static float *cu_alloc_typed()
{
    float *p = nullptr;
    /* SITE cu_alloc_typed: the call on the next line */
    check(cudaMalloc(&p, N * sizeof(float)), "cudaMalloc");
    return p;
}

static inline __attribute__((always_inline)) void cu_helper(float *x)
{
    /* SITE cu_helper: the call on the next line */
    scale<<<N / BLOCK, BLOCK>>>(x, 1.0f, N);
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
    for (int i = 0; i < launches; i++)
        cu_helper(x);
    check(cudaGetLastError(), "launch");
}

__attribute__((noinline)) static void cu_tail(float *x)
{
    /* SITE cu_tail: the call on the next line */
    scale<<<N / BLOCK, BLOCK>>>(x, 3.0f, N);
}

int main(int argc, char **argv)
{
    int launches = argc > 1 ? atoi(argv[1]) : 10;
    float *x = cu_alloc(), *y = cu_alloc_typed();
    cu_first(x, launches);
    cu_second(x, launches);
    for (int i = 0; i < launches; i++)
        cu_tail(x);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    check(cudaFree(x), "cudaFree");
    check(cudaFree(y), "cudaFree");
    return 0;
}
