/* The driver API workload (see drv_workload.h). Every call is checked; every copy,
 * memset, launch and synchronisation is recorded in the manifest as it is made. */
#include "drv_workload.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_kernels_ptx.h"
#include "app_util.h"
#include "manifest.h"

#define BLOCK 256

static const struct drv_api *api;

static void check(CUresult res, const char *what)
{
    if (res == CUDA_SUCCESS) return;
    const char *name = "unknown CUresult";
    if (api->GetErrorName(res, &name) != CUDA_SUCCESS) name = "unknown CUresult";
    app_fail(what, name, (int)res);
}

void drv_parse(int argc, char **argv, struct drv_options *opt)
{
    opt->iterations = (int)app_arg(argc, argv, 1, "iterations", 20, 0);
    opt->streams = (int)app_arg(argc, argv, 2, "streams", 2, 1);
    opt->elements = (size_t)app_arg(argc, argv, 3, "elements", 65536, 1);
}

struct buffers {
    size_t bytes;
    CUdeviceptr dev_a, dev_b, dev_c;            /* copy and memset targets */
    CUdeviceptr kernel_x, kernel_y, kernel_z;   /* kernel operands, never checked */
    unsigned char *pageable_src, *pageable_dst; /* malloc */
    unsigned char *pinned;                      /* cuMemAllocHost */
    unsigned char *portable;                    /* cuMemHostAlloc */
    unsigned char *registered;                  /* malloc + cuMemHostRegister */
    unsigned char *managed;                     /* cuMemAllocManaged */
};

static void alloc_buffers(struct buffers *b)
{
    CUdeviceptr *device[] = {&b->dev_a,    &b->dev_b,    &b->dev_c,
                             &b->kernel_x, &b->kernel_y, &b->kernel_z};
    for (size_t i = 0; i < sizeof(device) / sizeof(device[0]); i++)
        check(api->MemAlloc(device[i], b->bytes), "cuMemAlloc");
    b->pageable_src = malloc(b->bytes);
    b->pageable_dst = malloc(b->bytes);
    b->registered = malloc(b->bytes);
    if (b->pageable_src == NULL || b->pageable_dst == NULL || b->registered == NULL)
        app_wrong("out of host memory");
    check(api->MemAllocHost((void **)&b->pinned, b->bytes), "cuMemAllocHost");
    check(api->MemHostAlloc((void **)&b->portable, b->bytes, CU_MEMHOSTALLOC_PORTABLE),
          "cuMemHostAlloc");
    check(api->MemHostRegister(b->registered, b->bytes, 0), "cuMemHostRegister");
    CUdeviceptr managed;
    check(api->MemAllocManaged(&managed, b->bytes, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
    b->managed = (unsigned char *)(uintptr_t)managed;
}

static void free_buffers(struct buffers *b)
{
    CUdeviceptr device[] = {b->dev_a,
                            b->dev_b,
                            b->dev_c,
                            b->kernel_x,
                            b->kernel_y,
                            b->kernel_z,
                            (CUdeviceptr)(uintptr_t)b->managed};
    for (size_t i = 0; i < sizeof(device) / sizeof(device[0]); i++)
        check(api->MemFree(device[i]), "cuMemFree");
    check(api->MemHostUnregister(b->registered), "cuMemHostUnregister");
    check(api->MemFreeHost(b->pinned), "cuMemFreeHost");
    check(api->MemFreeHost(b->portable), "cuMemFreeHost");
    free(b->pageable_src);
    free(b->pageable_dst);
    free(b->registered);
}

static void stream_sync(CUstream s)
{
    check(api->StreamSynchronize(s), "cuStreamSynchronize");
    app_manifest_sync("cuStreamSynchronize", 1);
}

static void htod(CUdeviceptr dst, const void *src, size_t n, enum app_host_memory mem)
{
    check(api->MemcpyHtoD(dst, src, n), "cuMemcpyHtoD");
    app_manifest_copy(APP_HTOD, mem, false, n, false);
}

static void dtoh(void *dst, CUdeviceptr src, size_t n, enum app_host_memory mem)
{
    check(api->MemcpyDtoH(dst, src, n), "cuMemcpyDtoH");
    app_manifest_copy(APP_DTOH, mem, false, n, false);
}

/* Copies of every direction and host memory kind, each round trip checked. */
static void copies(struct buffers *b, CUstream s)
{
    size_t n = b->bytes;
    app_fill_pattern(b->pageable_src, n, 1);
    htod(b->dev_a, b->pageable_src, n, APP_PAGEABLE);
    dtoh(b->pageable_dst, b->dev_a, n, APP_PAGEABLE);
    app_expect_same(b->pageable_src, b->pageable_dst, n, "HtoD/DtoH pageable round trip");

    app_fill_pattern(b->pinned, n, 2);
    check(api->MemcpyHtoDAsync(b->dev_b, b->pinned, n, s), "cuMemcpyHtoDAsync");
    app_manifest_copy(APP_HTOD, APP_PINNED, true, n, false);
    check(api->MemcpyDtoDAsync(b->dev_c, b->dev_b, n, s), "cuMemcpyDtoDAsync");
    app_manifest_copy(APP_DTOD, APP_NO_HOST, true, n, false);
    check(api->MemcpyDtoHAsync(b->portable, b->dev_c, n, s), "cuMemcpyDtoHAsync");
    app_manifest_copy(APP_DTOH, APP_PINNED, true, n, false);
    stream_sync(s);
    app_expect_same(b->pinned, b->portable, n, "pinned async round trip through DtoD");

    app_fill_pattern(b->registered, n, 3);
    check(api->MemcpyHtoDAsync(b->dev_a, b->registered, n, s), "cuMemcpyHtoDAsync");
    app_manifest_copy(APP_HTOD, APP_PINNED, true, n, false);
    stream_sync(s);
    check(api->MemcpyDtoD(b->dev_b, b->dev_a, n), "cuMemcpyDtoD");
    app_manifest_copy(APP_DTOD, APP_NO_HOST, false, n, false);
    dtoh(b->pageable_dst, b->dev_b, n, APP_PAGEABLE);
    app_expect_same(b->registered, b->pageable_dst, n, "registered memory through DtoD");

    app_fill_pattern(b->managed, n, 4);
    htod(b->dev_c, b->managed, n, APP_MANAGED);
    memset(b->managed, 0, n);
    dtoh(b->managed, b->dev_c, n, APP_MANAGED);
    app_fill_pattern(b->pageable_src, n, 4);
    app_expect_same(b->pageable_src, b->managed, n, "managed round trip");

    app_fill_pattern(b->pageable_src, n, 5);
    check(api->Memcpy((CUdeviceptr)(uintptr_t)b->pageable_dst,
                      (CUdeviceptr)(uintptr_t)b->pageable_src, n),
          "cuMemcpy");
    app_manifest_copy(APP_HTOH, APP_PAGEABLE, false, n, false);
    app_expect_same(b->pageable_src, b->pageable_dst, n, "HtoH copy");
}

/* Checks that the whole buffer holds the little-endian `pattern` of `width` bytes. */
static void expect_pattern(struct buffers *b, unsigned pattern, unsigned width, const char *what)
{
    dtoh(b->pageable_dst, b->dev_c, b->bytes, APP_PAGEABLE);
    for (size_t i = 0; i < b->bytes; i++)
        if (b->pageable_dst[i] != (unsigned char)(pattern >> (8 * (i % width)))) app_wrong(what);
}

static void memsets(struct buffers *b, CUstream s)
{
    size_t n = b->bytes;
    check(api->MemsetD8(b->dev_c, 0xa5, n), "cuMemsetD8");
    app_manifest_memset(n, false, false);
    expect_pattern(b, 0xa5, 1, "cuMemsetD8");
    check(api->MemsetD16(b->dev_c, 0x1234, n / 2), "cuMemsetD16");
    app_manifest_memset(n / 2 * 2, false, false);
    expect_pattern(b, 0x1234, 2, "cuMemsetD16");
    check(api->MemsetD32(b->dev_c, 0xdeadbeef, n / 4), "cuMemsetD32");
    app_manifest_memset(n / 4 * 4, false, false);
    expect_pattern(b, 0xdeadbeef, 4, "cuMemsetD32");

    check(api->MemsetD8Async(b->dev_c, 0x5a, n, s), "cuMemsetD8Async");
    app_manifest_memset(n, true, false);
    stream_sync(s);
    expect_pattern(b, 0x5a, 1, "cuMemsetD8Async");
    check(api->MemsetD16Async(b->dev_c, 0xbeef, n / 2, s), "cuMemsetD16Async");
    app_manifest_memset(n / 2 * 2, true, false);
    stream_sync(s);
    expect_pattern(b, 0xbeef, 2, "cuMemsetD16Async");
    check(api->MemsetD32Async(b->dev_c, 0x01020304, n / 4, s), "cuMemsetD32Async");
    app_manifest_memset(n / 4 * 4, true, false);
    stream_sync(s);
    expect_pattern(b, 0x01020304, 4, "cuMemsetD32Async");
}

static void launches(const struct drv_options *opt, struct buffers *b, CUmodule module,
                     CUstream *streams)
{
    CUfunction vec_add, scale;
    check(api->ModuleGetFunction(&vec_add, module, "vec_add"), "cuModuleGetFunction vec_add");
    check(api->ModuleGetFunction(&scale, module, "_ZN4apps5scaleEPffi"),
          "cuModuleGetFunction apps::scale");
    int n = (int)(b->bytes / sizeof(float));
    float factor = 0.5f;
    void *add_args[] = {&b->kernel_x, &b->kernel_y, &b->kernel_z, &n};
    void *scale_args[] = {&b->kernel_z, &factor, &n};
    unsigned grid = (unsigned)((n + BLOCK - 1) / BLOCK);
    CUevent start, stop;
    check(api->EventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
    check(api->EventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
    for (int it = 0; it < opt->iterations; it++) {
        for (int s = 0; s < opt->streams; s++) {
            bool timed = it == 0 && s == 0;
            if (timed) check(api->EventRecord(start, streams[s]), "cuEventRecord");
            check(
                api->LaunchKernel(vec_add, grid, 1, 1, BLOCK, 1, 1, 0, streams[s], add_args, NULL),
                "cuLaunchKernel vec_add");
            check(
                api->LaunchKernel(scale, grid, 1, 1, BLOCK, 1, 1, 0, streams[s], scale_args, NULL),
                "cuLaunchKernel apps::scale");
            if (timed) check(api->EventRecord(stop, streams[s]), "cuEventRecord");
        }
    }
    app_manifest_kernel("vec_add", (unsigned long long)opt->iterations * opt->streams, false);
    app_manifest_kernel("apps::scale", (unsigned long long)opt->iterations * opt->streams, false);
    if (opt->iterations > 0) {
        float ms = -1.0f;
        check(api->EventSynchronize(stop), "cuEventSynchronize");
        app_manifest_sync("cuEventSynchronize", 1);
        check(api->EventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
        if (ms < 0.0f) app_wrong("negative elapsed time");
    }
    check(api->EventDestroy(start), "cuEventDestroy");
    check(api->EventDestroy(stop), "cuEventDestroy");
}

void drv_run(const struct drv_api *driver, const struct drv_options *opt)
{
    api = driver;
    CUdevice dev;
    CUcontext ctx;
    check(api->Init(0), "cuInit");
    check(api->DeviceGet(&dev, 0), "cuDeviceGet");
    if (opt->primary) {
        check(api->PrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
        check(api->CtxSetCurrent(ctx), "cuCtxSetCurrent");
    } else {
        check(api->CtxCreate(&ctx, NULL, 0, dev), "cuCtxCreate");
    }
    CUmodule module;
    check(api->ModuleLoadData(&module, app_kernels_ptx), "cuModuleLoadData");

    CUstream *streams = calloc((size_t)opt->streams, sizeof(*streams));
    if (streams == NULL) app_wrong("out of host memory");
    for (int s = 0; s < opt->streams; s++)
        check(api->StreamCreate(&streams[s], s % 2 ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT),
              "cuStreamCreate");

    struct buffers b = {.bytes = opt->elements * sizeof(float)};
    alloc_buffers(&b);
    copies(&b, streams[0]);
    memsets(&b, streams[opt->streams - 1]);
    launches(opt, &b, module, streams);
    for (int s = 0; s < opt->streams; s++)
        stream_sync(streams[s]);
    check(api->CtxSynchronize(), "cuCtxSynchronize");
    app_manifest_sync("cuCtxSynchronize", 1);

    free_buffers(&b);
    for (int s = 0; s < opt->streams; s++)
        check(api->StreamDestroy(streams[s]), "cuStreamDestroy");
    free(streams);
    check(api->ModuleUnload(module), "cuModuleUnload");
    if (opt->primary)
        check(api->PrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease");
    else
        check(api->CtxDestroy(ctx), "cuCtxDestroy");
}
