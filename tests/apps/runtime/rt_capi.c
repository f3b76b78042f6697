/* Runtime API program in C: loads the fat binary of app_kernels.cu with
 * cudaLibraryLoadData and launches its kernels with cudaLaunchKernel.
 * Usage: rt_capi [iterations] [streams] [elements]
 *  - copies with checked data: HtoD/DtoH pageable sync, HtoD pinned async
 *    (cudaMallocHost), DtoH pinned async (cudaHostAlloc), DtoD sync and async, HtoD
 *    pinned async from cudaHostRegister memory, HtoD/DtoH managed sync, HtoH pageable
 *    sync, one 2D HtoD pageable sync copy of 64 rows
 *  - memsets: cudaMemset, cudaMemsetAsync, cudaMemset2D (64 rows), each checked
 *  - cudaMallocAsync/cudaFreeAsync on stream 0
 *  - iterations x streams launches of vec_add and apps::scale
 *  - cudaStreamSynchronize per stream, cudaEventSynchronize once,
 *    cudaDeviceSynchronize once */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "app_kernels_fatbin.h"
#include "app_util.h"
#include "manifest.h"

#define BLOCK 256
#define ROWS 64

static void check(cudaError_t err, const char *what)
{
    if (err != cudaSuccess) app_fail(what, cudaGetErrorName(err), (int)err);
}

struct buffers {
    size_t bytes;
    void *dev_a, *dev_b, *dev_c, *kernel_x, *kernel_y, *kernel_z;
    unsigned char *pageable_src, *pageable_dst, *pinned, *mapped, *registered, *managed;
};

static void copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                 enum app_direction direction, enum app_host_memory mem)
{
    check(cudaMemcpy(dst, src, n, kind), "cudaMemcpy");
    app_manifest_copy(direction, mem, false, n, false);
}

static void copy_async(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                       enum app_direction direction, enum app_host_memory mem, cudaStream_t s)
{
    check(cudaMemcpyAsync(dst, src, n, kind, s), "cudaMemcpyAsync");
    app_manifest_copy(direction, mem, true, n, false);
}

static void stream_sync(cudaStream_t s)
{
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    app_manifest_sync("cudaStreamSynchronize", 1);
}

static void alloc_buffers(struct buffers *b)
{
    void **device[] = {&b->dev_a, &b->dev_b, &b->dev_c, &b->kernel_x, &b->kernel_y, &b->kernel_z};
    for (size_t i = 0; i < sizeof(device) / sizeof(device[0]); i++)
        check(cudaMalloc(device[i], b->bytes), "cudaMalloc");
    b->pageable_src = malloc(b->bytes);
    b->pageable_dst = malloc(b->bytes);
    b->registered = malloc(b->bytes);
    if (b->pageable_src == NULL || b->pageable_dst == NULL || b->registered == NULL)
        app_wrong("out of host memory");
    check(cudaMallocHost((void **)&b->pinned, b->bytes), "cudaMallocHost");
    check(cudaHostAlloc((void **)&b->mapped, b->bytes, cudaHostAllocMapped), "cudaHostAlloc");
    check(cudaHostRegister(b->registered, b->bytes, cudaHostRegisterDefault), "cudaHostRegister");
    check(cudaMallocManaged((void **)&b->managed, b->bytes, cudaMemAttachGlobal),
          "cudaMallocManaged");
}

static void free_buffers(struct buffers *b)
{
    void *device[] = {b->dev_a,    b->dev_b,    b->dev_c,  b->kernel_x,
                      b->kernel_y, b->kernel_z, b->managed};
    for (size_t i = 0; i < sizeof(device) / sizeof(device[0]); i++)
        check(cudaFree(device[i]), "cudaFree");
    check(cudaHostUnregister(b->registered), "cudaHostUnregister");
    check(cudaFreeHost(b->pinned), "cudaFreeHost");
    check(cudaFreeHost(b->mapped), "cudaFreeHost");
    free(b->pageable_src);
    free(b->pageable_dst);
    free(b->registered);
}

static void copies(struct buffers *b, cudaStream_t s)
{
    size_t n = b->bytes;
    app_fill_pattern(b->pageable_src, n, 11);
    copy(b->dev_a, b->pageable_src, n, cudaMemcpyHostToDevice, APP_HTOD, APP_PAGEABLE);
    copy(b->pageable_dst, b->dev_a, n, cudaMemcpyDeviceToHost, APP_DTOH, APP_PAGEABLE);
    app_expect_same(b->pageable_src, b->pageable_dst, n, "pageable round trip");

    app_fill_pattern(b->pinned, n, 12);
    copy_async(b->dev_b, b->pinned, n, cudaMemcpyHostToDevice, APP_HTOD, APP_PINNED, s);
    copy_async(b->dev_c, b->dev_b, n, cudaMemcpyDeviceToDevice, APP_DTOD, APP_NO_HOST, s);
    copy_async(b->mapped, b->dev_c, n, cudaMemcpyDeviceToHost, APP_DTOH, APP_PINNED, s);
    stream_sync(s);
    app_expect_same(b->pinned, b->mapped, n, "pinned async round trip");

    app_fill_pattern(b->registered, n, 13);
    copy_async(b->dev_a, b->registered, n, cudaMemcpyHostToDevice, APP_HTOD, APP_PINNED, s);
    stream_sync(s);
    copy(b->dev_b, b->dev_a, n, cudaMemcpyDeviceToDevice, APP_DTOD, APP_NO_HOST);
    copy(b->pageable_dst, b->dev_b, n, cudaMemcpyDeviceToHost, APP_DTOH, APP_PAGEABLE);
    app_expect_same(b->registered, b->pageable_dst, n, "registered memory round trip");

    app_fill_pattern(b->managed, n, 14);
    copy(b->dev_c, b->managed, n, cudaMemcpyHostToDevice, APP_HTOD, APP_MANAGED);
    memset(b->managed, 0, n);
    copy(b->managed, b->dev_c, n, cudaMemcpyDeviceToHost, APP_DTOH, APP_MANAGED);
    app_fill_pattern(b->pageable_src, n, 14);
    app_expect_same(b->pageable_src, b->managed, n, "managed round trip");

    app_fill_pattern(b->pageable_src, n, 15);
    copy(b->pageable_dst, b->pageable_src, n, cudaMemcpyHostToHost, APP_HTOH, APP_PAGEABLE);
    app_expect_same(b->pageable_src, b->pageable_dst, n, "HtoH copy");

    /* 2D: ROWS rows of `width` bytes out of a pitched source into a dense target. */
    size_t width = n / ROWS / 2, pitch = n / ROWS;
    check(
        cudaMemcpy2D(b->dev_a, width, b->pageable_src, pitch, width, ROWS, cudaMemcpyHostToDevice),
        "cudaMemcpy2D");
    app_manifest_copy(APP_HTOD, APP_PAGEABLE, false, (unsigned long long)width * ROWS, false);
    copy(b->pageable_dst, b->dev_a, width * ROWS, cudaMemcpyDeviceToHost, APP_DTOH, APP_PAGEABLE);
    for (size_t r = 0; r < ROWS; r++)
        app_expect_same(b->pageable_src + r * pitch, b->pageable_dst + r * width, width,
                        "2D copy row");
}

static void expect_bytes_on_device(struct buffers *b, size_t n, unsigned char byte,
                                   const char *what)
{
    copy(b->pageable_dst, b->dev_c, n, cudaMemcpyDeviceToHost, APP_DTOH, APP_PAGEABLE);
    app_expect_bytes(b->pageable_dst, n, byte, what);
}

static void memsets(struct buffers *b, cudaStream_t s)
{
    size_t n = b->bytes;
    check(cudaMemset(b->dev_c, 0x3c, n), "cudaMemset");
    app_manifest_memset(n, false, false);
    expect_bytes_on_device(b, n, 0x3c, "cudaMemset");
    check(cudaMemsetAsync(b->dev_c, 0xc3, n, s), "cudaMemsetAsync");
    app_manifest_memset(n, true, false);
    stream_sync(s);
    expect_bytes_on_device(b, n, 0xc3, "cudaMemsetAsync");
    size_t pitch = n / ROWS;
    check(cudaMemset2D(b->dev_c, pitch, 0x77, pitch / 2, ROWS), "cudaMemset2D");
    app_manifest_memset((unsigned long long)pitch / 2 * ROWS, false, false);
    copy(b->pageable_dst, b->dev_c, n, cudaMemcpyDeviceToHost, APP_DTOH, APP_PAGEABLE);
    for (size_t r = 0; r < ROWS; r++) {
        app_expect_bytes(b->pageable_dst + r * pitch, pitch / 2, 0x77, "cudaMemset2D row");
        app_expect_bytes(b->pageable_dst + r * pitch + pitch / 2, pitch / 2, 0xc3,
                         "cudaMemset2D pitch gap");
    }
}

static void stream_ordered(size_t bytes, cudaStream_t s)
{
    void *p = NULL;
    check(cudaMallocAsync(&p, bytes, s), "cudaMallocAsync");
    check(cudaMemsetAsync(p, 0, bytes, s), "cudaMemsetAsync");
    app_manifest_memset(bytes, true, false);
    check(cudaFreeAsync(p, s), "cudaFreeAsync");
    stream_sync(s);
}

static void launches(int iterations, int nstreams, struct buffers *b, cudaStream_t *streams)
{
    cudaLibrary_t library;
    cudaKernel_t vec_add, scale;
    check(cudaLibraryLoadData(&library, app_kernels_fatbin, NULL, NULL, 0, NULL, NULL, 0),
          "cudaLibraryLoadData");
    check(cudaLibraryGetKernel(&vec_add, library, "vec_add"), "cudaLibraryGetKernel vec_add");
    check(cudaLibraryGetKernel(&scale, library, "_ZN4apps5scaleEPffi"),
          "cudaLibraryGetKernel apps::scale");
    int n = (int)(b->bytes / sizeof(float));
    float factor = 2.0f;
    void *add_args[] = {&b->kernel_x, &b->kernel_y, &b->kernel_z, &n};
    void *scale_args[] = {&b->kernel_z, &factor, &n};
    dim3 grid = {(unsigned)((n + BLOCK - 1) / BLOCK), 1, 1}, block = {BLOCK, 1, 1};
    cudaEvent_t done;
    check(cudaEventCreate(&done), "cudaEventCreate");
    for (int it = 0; it < iterations; it++)
        for (int s = 0; s < nstreams; s++) {
            check(cudaLaunchKernel((const void *)vec_add, grid, block, add_args, 0, streams[s]),
                  "cudaLaunchKernel vec_add");
            check(cudaLaunchKernel((const void *)scale, grid, block, scale_args, 0, streams[s]),
                  "cudaLaunchKernel apps::scale");
        }
    app_manifest_kernel("vec_add", (unsigned long long)iterations * nstreams, false);
    app_manifest_kernel("apps::scale", (unsigned long long)iterations * nstreams, false);
    check(cudaEventRecord(done, streams[0]), "cudaEventRecord");
    check(cudaEventSynchronize(done), "cudaEventSynchronize");
    app_manifest_sync("cudaEventSynchronize", 1);
    check(cudaEventDestroy(done), "cudaEventDestroy");
    for (int s = 0; s < nstreams; s++)
        stream_sync(streams[s]);
    check(cudaLibraryUnload(library), "cudaLibraryUnload");
}

int main(int argc, char **argv)
{
    app_program = "rt_capi";
    int iterations = (int)app_arg(argc, argv, 1, "iterations", 20, 0);
    int nstreams = (int)app_arg(argc, argv, 2, "streams", 2, 1);
    size_t elements = (size_t)app_arg(argc, argv, 3, "elements", 65536, 2 * ROWS);
    cudaStream_t *streams = calloc((size_t)nstreams, sizeof(*streams));
    if (streams == NULL) app_wrong("out of host memory");
    for (int s = 0; s < nstreams; s++)
        check(cudaStreamCreateWithFlags(&streams[s],
                                        s % 2 ? cudaStreamNonBlocking : cudaStreamDefault),
              "cudaStreamCreateWithFlags");
    struct buffers b = {.bytes = elements * sizeof(float) / ROWS * ROWS};
    alloc_buffers(&b);
    copies(&b, streams[0]);
    memsets(&b, streams[nstreams - 1]);
    stream_ordered(b.bytes, streams[0]);
    launches(iterations, nstreams, &b, streams);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    app_manifest_sync("cudaDeviceSynchronize", 1);
    free_buffers(&b);
    for (int s = 0; s < nstreams; s++)
        check(cudaStreamDestroy(streams[s]), "cudaStreamDestroy");
    free(streams);
    return app_manifest_write(app_program) == 0 ? 0 : APP_EXIT_WRONG_RESULT;
}
