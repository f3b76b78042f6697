/* Allocations through the runtime API (shared libcudart), each recorded
 * once: the memory table has the program's figures (expect.h), the api
 * table the runtime calls and none of the driver calls under them.
 *
 *   device    cudaMalloc x4 (one never freed: it goes with the primary
 *             context, which the runtime releases at exit), cudaMallocManaged,
 *             cudaFree(NULL)
 *   async     cudaMallocAsync x3 on a stream, cudaFreeAsync x3
 *   pinned    cudaMallocHost, cudaHostAlloc, cudaHostRegister on the host
 *             row, all released
 *
 * Usage: rt_mem_patterns */
#include <cuda_runtime_api.h>
#include <stdlib.h>

#include "app_util.h"
#include "expect.h"

#define MIB (1024ull * 1024)

static void check(cudaError_t r, const char *what)
{
    if (r != cudaSuccess) app_fail(what, cudaGetErrorName(r), (int)r);
}

static void device_memory(void)
{
    void *p[4], *m;
    for (int i = 0; i < 4; i++) {
        check(cudaMalloc(&p[i], MIB * (size_t)(i + 1)), "cudaMalloc");
        expect_alloc(0, MIB * (unsigned long long)(i + 1));
    }
    check(cudaMallocManaged(&m, 2 * MIB, cudaMemAttachGlobal), "cudaMallocManaged");
    expect_alloc(0, 2 * MIB);
    for (int i = 0; i < 3; i++) {
        expect_free(0, MIB * (unsigned long long)(i + 1));
        check(cudaFree(p[i]), "cudaFree");
    }
    expect_free(0, 2 * MIB);
    check(cudaFree(m), "cudaFree");
    check(cudaFree(NULL), "cudaFree"); /* frees nothing */
}

static void async(void)
{
    cudaStream_t s;
    void *p[3];
    check(cudaStreamCreate(&s), "cudaStreamCreate");
    for (int i = 0; i < 3; i++) {
        check(cudaMallocAsync(&p[i], 256 * 1024, s), "cudaMallocAsync");
        expect_alloc(0, 256 * 1024);
    }
    for (int i = 0; i < 3; i++) {
        expect_free(0, 256 * 1024);
        check(cudaFreeAsync(p[i], s), "cudaFreeAsync");
    }
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    check(cudaStreamDestroy(s), "cudaStreamDestroy");
}

static void pinned(void)
{
    void *host, *alloc, *registered = NULL;
    check(cudaMallocHost(&host, 64 * 1024), "cudaMallocHost");
    expect_alloc(EXPECT_HOST_ROW, 64 * 1024);
    check(cudaHostAlloc(&alloc, 32 * 1024, cudaHostAllocPortable), "cudaHostAlloc");
    expect_alloc(EXPECT_HOST_ROW, 32 * 1024);
    if (posix_memalign(&registered, 4096, 128 * 1024) != 0) app_wrong("posix_memalign");
    check(cudaHostRegister(registered, 128 * 1024, cudaHostRegisterDefault), "cudaHostRegister");
    expect_alloc(EXPECT_HOST_ROW, 128 * 1024);
    expect_free(EXPECT_HOST_ROW, 128 * 1024);
    check(cudaHostUnregister(registered), "cudaHostUnregister");
    free(registered);
    expect_free(EXPECT_HOST_ROW, 32 * 1024);
    check(cudaFreeHost(alloc), "cudaFreeHost");
    expect_free(EXPECT_HOST_ROW, 64 * 1024);
    check(cudaFreeHost(host), "cudaFreeHost");
}

int main(void)
{
    app_program = "rt_mem_patterns";
    check(cudaSetDevice(0), "cudaSetDevice");
    device_memory();
    async();
    pinned();
    expect_context_end(0);
    static const char *const once[][2] = {
        {"cudaMalloc", "cuMemAlloc"},
        {"cudaFree", "cuMemFree"},
        {"cudaMallocManaged", "cuMemAllocManaged"},
        {"cudaMallocAsync", "cuMemAllocAsync"},
        {"cudaFreeAsync", "cuMemFreeAsync"},
        {"cudaMallocHost", "cuMemHostAlloc"},
        {"cudaHostRegister", "cuMemHostRegister"},
        {"cudaHostUnregister", "cuMemHostUnregister"},
        {"cudaFreeHost", "cuMemFreeHost"},
    };
    static const unsigned long long calls[] = {4, 5, 1, 3, 3, 1, 1, 1, 2};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        expect_api(once[i][0], calls[i]);
        expect_api(once[i][1], 0); /* the driver call under it is part of it */
    }
    expect_api("cudaHostAlloc", 1);
    if (expect_write() != 0) app_wrong("cannot write GT_EXPECT");
    return 0;
}
