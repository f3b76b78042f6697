/* Forks after CUDA is initialised. The child cannot use the parent's CUDA state (a
 * real driver, like the emulated one, refuses every call in a child forked after
 * cuInit); it tries one allocation, does host work and exits. The parent carries on
 * with different work and checks the child's exit status. With GT_APP_MANIFEST
 * containing "%p", parent and child write separate manifests.
 *
 * Usage: fork_after_init [iterations=10] [elements=65536]
 *  parent before fork: HtoD + DtoH pageable sync copies (checked), `iterations`
 *                      launches of vec_add on its stream, cuStreamSynchronize
 *  child:              cuMemAlloc (expected to fail; recorded as an error), a host
 *                      checksum, exit 0
 *  parent after fork:  `iterations` launches of apps::scale, a D32 sync memset checked
 *                      by a DtoH pageable sync copy, cuCtxSynchronize, waits for the
 *                      child */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>

#include "app_kernels_ptx.h"
#include "app_driver.h"
#include "app_util.h"
#include "manifest.h"

#define BLOCK 256

static void launch_n(CUfunction f, const char *name, int times, void **args, unsigned grid,
                     CUstream s)
{
    for (int i = 0; i < times; i++)
        app_check(cuLaunchKernel(f, grid, 1, 1, BLOCK, 1, 1, 0, s, args, NULL), "cuLaunchKernel");
    app_manifest_kernel(name, (unsigned long long)times, false);
}

static int child(size_t bytes)
{
    app_program = "fork_after_init(child)";
    app_manifest_reset();
    CUdeviceptr p;
    CUresult res = cuMemAlloc(&p, bytes);
    const char *name = "CUDA_SUCCESS";
    cuGetErrorName(res, &name);
    printf("child: cuMemAlloc after fork -> %s\n", name);
    if (res != CUDA_SUCCESS) app_manifest_error("cuMemAlloc", name);
    unsigned char *host = malloc(bytes);
    if (host == NULL) return APP_EXIT_WRONG_RESULT;
    app_fill_pattern(host, bytes, 31);
    unsigned long long sum = 0;
    for (size_t i = 0; i < bytes; i++)
        sum += host[i];
    printf("child: host checksum %llu\n", sum);
    free(host);
    return app_manifest_write(app_program) == 0 ? 0 : APP_EXIT_WRONG_RESULT;
}

int main(int argc, char **argv)
{
    app_program = "fork_after_init";
    int iterations = (int)app_arg(argc, argv, 1, "iterations", 10, 0);
    size_t elements = (size_t)app_arg(argc, argv, 2, "elements", 65536, 1);
    size_t bytes = elements * sizeof(float);

    CUdevice dev = 0; /* app_primary_context's */
    CUmodule module;
    CUfunction vec_add, scale;
    CUstream stream;
    CUdeviceptr x, y, z;
    app_primary_context();
    app_vector_kernels(app_kernels_ptx, &module, &vec_add, &scale);
    app_check(cuStreamCreate(&stream, CU_STREAM_DEFAULT), "cuStreamCreate");
    app_check(cuMemAlloc(&x, bytes), "cuMemAlloc");
    app_check(cuMemAlloc(&y, bytes), "cuMemAlloc");
    app_check(cuMemAlloc(&z, bytes), "cuMemAlloc");

    unsigned char *src = malloc(bytes), *dst = malloc(bytes);
    if (src == NULL || dst == NULL) app_wrong("out of host memory");
    app_fill_pattern(src, bytes, 30);
    app_check(cuMemcpyHtoD(x, src, bytes), "cuMemcpyHtoD");
    app_manifest_copy(APP_HTOD, APP_PAGEABLE, false, bytes, false);
    app_check(cuMemcpyDtoH(dst, x, bytes), "cuMemcpyDtoH");
    app_manifest_copy(APP_DTOH, APP_PAGEABLE, false, bytes, false);
    app_expect_same(src, dst, bytes, "round trip before fork");

    int n = (int)elements;
    float factor = 3.0f;
    unsigned grid = (unsigned)((n + BLOCK - 1) / BLOCK);
    void *add_args[] = {&x, &y, &z, &n};
    void *scale_args[] = {&y, &factor, &n};
    launch_n(vec_add, "vec_add", iterations, add_args, grid, stream);
    app_check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    app_manifest_sync("cuStreamSynchronize", 1);

    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) app_wrong("fork");
    if (pid == 0) exit(child(bytes));

    launch_n(scale, "apps::scale", iterations, scale_args, grid, stream);
    app_check(cuMemsetD32(z, 0x0badf00d, elements), "cuMemsetD32");
    app_manifest_memset(bytes, false, false);
    app_check(cuMemcpyDtoH(dst, z, bytes), "cuMemcpyDtoH");
    app_manifest_copy(APP_DTOH, APP_PAGEABLE, false, bytes, false);
    for (size_t i = 0; i < elements; i++)
        if (((uint32_t *)dst)[i] != 0x0badf00d) app_wrong("memset after fork");
    app_check(cuCtxSynchronize(), "cuCtxSynchronize");
    app_manifest_sync("cuCtxSynchronize", 1);

    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        app_wrong("child did not exit 0");
    printf("parent: child exited 0\n");

    app_check(cuMemFree(x), "cuMemFree");
    app_check(cuMemFree(y), "cuMemFree");
    app_check(cuMemFree(z), "cuMemFree");
    app_check(cuStreamDestroy(stream), "cuStreamDestroy");
    app_check(cuModuleUnload(module), "cuModuleUnload");
    app_check(cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease");
    free(src);
    free(dst);
    return app_manifest_write(app_program) == 0 ? 0 : APP_EXIT_WRONG_RESULT;
}
