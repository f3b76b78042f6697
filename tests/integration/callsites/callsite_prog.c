/* Call sites of a C program built at -O2 without frame pointers: kernels
 * launched from two functions through the shared runtime and from one
 * through the driver API, allocations from two functions, and each copy
 * from a function of its own. Lines that make a call the report must name
 * end in a comment "SITE name", or follow a line that says "SITE name: the
 * call on the next line", which check_callsites.py finds.
 *
 * callsite_prog MODE [launches]
 *   plain    the work above, on the main thread
 *   threads  the same work on two threads at once
 *   fork     the process forks, then parent and child each do the work
 *   moved    as plain, with launch_second's launches made by launch_first */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pthread.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "app_driver.h"
#include "app_kernels_fatbin.h"
#include "app_util.h"

#define N 4096
#define BLOCK 256

static int launches = 10;
static int moved; /* mode "moved": launch_second's launches made by launch_first */
static cudaKernel_t vec_add;
static CUfunction drv_scale;

static void check(cudaError_t err, const char *what)
{
    if (err != cudaSuccess) app_fail(what, cudaGetErrorName(err), (int)err);
}

static __attribute__((noinline)) float *alloc_small(void)
{
    void *p = NULL;
    check(cudaMalloc(&p, N * sizeof(float)), "cudaMalloc"); /* SITE alloc_small */
    return p;
}

static __attribute__((noinline)) float *alloc_large(void)
{
    void *p = NULL;
    check(cudaMalloc(&p, 4 * N * sizeof(float)), "cudaMalloc"); /* SITE alloc_large */
    return p;
}

static __attribute__((noinline)) void launch_first(float *a, float *b, float *c)
{
    int n = N;
    void *args[] = {&a, &b, &c, &n};
    dim3 grid = {N / BLOCK, 1, 1}, block = {BLOCK, 1, 1};
    for (int i = 0; i < launches; i++) {
        /* SITE launch_first: the call on the next line */
        cudaError_t e = cudaLaunchKernel((const void *)vec_add, grid, block, args, 0, 0);
        check(e, "cudaLaunchKernel");
    }
}

static __attribute__((noinline)) void launch_second(float *a, float *b, float *c)
{
    int n = N;
    void *args[] = {&a, &b, &c, &n};
    dim3 grid = {N / BLOCK, 1, 1}, block = {BLOCK, 1, 1};
    for (int i = 0; i < 2 * launches; i++) {
        /* SITE launch_second: the call on the next line */
        cudaError_t e = cudaLaunchKernel((const void *)vec_add, grid, block, args, 0, 0);
        check(e, "cudaLaunchKernel");
    }
}

static __attribute__((noinline)) void launch_driver(float *a)
{
    float factor = 2.0f;
    int n = N;
    CUdeviceptr p = (CUdeviceptr)a;
    void *args[] = {&p, &factor, &n};
    for (int i = 0; i < launches; i++) {
        /* SITE launch_driver: the call on the next line */
        CUresult r = cuLaunchKernel(drv_scale, N / BLOCK, 1, 1, BLOCK, 1, 1, 0, NULL, args, NULL);
        app_check(r, "cuLaunchKernel");
    }
}

static __attribute__((noinline)) void copy_in(float *dev, const float *host)
{
    cudaError_t e =
        cudaMemcpy(dev, host, N * sizeof(float), cudaMemcpyHostToDevice); /* SITE copy_in */
    check(e, "cudaMemcpy");
}

/* One run of the work: 2 allocations of each size, launches x 1, x 2 and
 * x 1 (driver), one copy; the small allocations freed, the large ones
 * held at exit. */
static void *work(void *unused)
{
    (void)unused;
    float *host = calloc(N, sizeof(float));
    if (!host) app_wrong("out of host memory");
    float *a = alloc_small(), *b = alloc_small(), *c = alloc_large();
    float *held = alloc_large();
    (void)held;
    copy_in(a, host);
    copy_in(b, host);
    launch_first(a, b, c);
    if (moved) {
        launch_first(a, b, c);
        launch_first(a, b, c);
    } else {
        launch_second(a, b, c);
    }
    launch_driver(c);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    check(cudaFree(a), "cudaFree");
    check(cudaFree(b), "cudaFree");
    free(host);
    return NULL;
}

static void setup(void)
{
    cudaLibrary_t library;
    check(cudaLibraryLoadData(&library, app_kernels_fatbin, NULL, NULL, 0, NULL, NULL, 0),
          "cudaLibraryLoadData");
    check(cudaLibraryGetKernel(&vec_add, library, "vec_add"), "cudaLibraryGetKernel");
    CUmodule module;
    CUfunction unused;
    app_primary_context();
    app_vector_kernels(app_kernels_fatbin, &module, &unused, &drv_scale);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: callsite_prog plain|threads|fork|moved [launches]\n");
        return 2;
    }
    if (argc > 2) launches = atoi(argv[2]);
    moved = !strcmp(argv[1], "moved");
    pid_t child = -1;
    /* CUDA cannot be used in a child forked after it was initialised: the
     * child forks first, and both do the work. */
    if (!strcmp(argv[1], "fork") && (child = fork()) < 0) app_wrong("fork");
    setup();
    if (!strcmp(argv[1], "threads")) {
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
            if (pthread_create(&t[i], NULL, work, NULL) != 0) app_wrong("pthread_create");
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        return 0;
    }
    work(NULL);
    if (child > 0) {
        int status = 0;
        if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            app_wrong("the child failed");
    }
    return 0;
}
