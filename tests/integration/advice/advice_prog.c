/* Programs that each make one advice rule fire (SPEC §8), and one that
 * makes none: the driver API on the emulated driver (or a GPU).
 *
 *   advice_prog CASE EXPECT_PATH
 *
 * CASE is a rule's name (pageable-async-memcpy, sync-memcpy, small-memcpy,
 * sync-api, gpu-idle, ptx-jit, leak) or `clean`. The program writes to
 * EXPECT_PATH what it did that the rule must report, one `key value` per
 * line: the rule, the number of occurrences, and the facts of the worst
 * one (its entry point, direction, bytes). check_advice.py holds the
 * report to them.
 *
 * Kernel durations come from the emulator's configuration
 * (GPUTRACE_EMU_KERNEL_NS, set per case by check_advice.py): `vec_add`
 * is the short kernel of each case, `apps::scale` the long one that the
 * clean case queues its work behind, so that the GPU never waits. */
#include <cuda.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "advice_cubin.h"
#include "app_kernels_ptx.h"
#include "app_util.h"

#define BLOCK 256

static FILE *expect_file;

static void check(CUresult r, const char *what)
{
    if (r == CUDA_SUCCESS) return;
    const char *name = "unknown CUresult";
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS) name = "unknown CUresult";
    app_fail(what, name, (int)r);
}

static void expect(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void expect(const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(expect_file, "%s ", key);
    vfprintf(expect_file, fmt, ap);
    fputc('\n', expect_file);
    va_end(ap);
}

/* The count of a copy rule and its worst copy. */
static void expect_copies(unsigned count, const char *api, const char *dir, size_t bytes)
{
    expect("count", "%u", count);
    expect("api", "%s", api);
    expect("dir", "%s", dir);
    expect("bytes", "%zu", bytes);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* The context, a stream and the kernels of a module loaded from image. */
typedef struct gpu {
    CUcontext ctx;
    CUstream stream;
    CUmodule module;
    CUfunction vec_add, scale;
    CUdeviceptr x, y, z; /* kernel operands, ELEMENTS floats each */
} gpu;

#define ELEMENTS 4096

static void gpu_open(gpu *g, const void *image)
{
    CUdevice dev;
    check(cuInit(0), "cuInit");
    check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    check(cuDevicePrimaryCtxRetain(&g->ctx, dev), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(g->ctx), "cuCtxSetCurrent");
    check(cuStreamCreate(&g->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    check(cuModuleLoadData(&g->module, image), "cuModuleLoadData");
    check(cuModuleGetFunction(&g->vec_add, g->module, "vec_add"), "cuModuleGetFunction");
    check(cuModuleGetFunction(&g->scale, g->module, "_ZN4apps5scaleEPffi"), "cuModuleGetFunction");
    CUdeviceptr *bufs[] = {&g->x, &g->y, &g->z};
    for (int i = 0; i < 3; i++)
        check(cuMemAlloc(bufs[i], ELEMENTS * sizeof(float)), "cuMemAlloc");
}

static void gpu_close(gpu *g)
{
    check(cuStreamSynchronize(g->stream), "cuStreamSynchronize");
    check(cuMemFree(g->x), "cuMemFree");
    check(cuMemFree(g->y), "cuMemFree");
    check(cuMemFree(g->z), "cuMemFree");
    check(cuModuleUnload(g->module), "cuModuleUnload");
    check(cuStreamDestroy(g->stream), "cuStreamDestroy");
    CUdevice dev;
    check(cuCtxGetDevice(&dev), "cuCtxGetDevice");
    check(cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease");
}

static void launch_add(gpu *g)
{
    int n = ELEMENTS;
    void *args[] = {&g->x, &g->y, &g->z, &n};
    check(cuLaunchKernel(g->vec_add, ELEMENTS / BLOCK, 1, 1, BLOCK, 1, 1, 0, g->stream, args, NULL),
          "cuLaunchKernel vec_add");
}

static void launch_scale(gpu *g)
{
    int n = ELEMENTS;
    float factor = 2.0f;
    void *args[] = {&g->z, &factor, &n};
    check(cuLaunchKernel(g->scale, ELEMENTS / BLOCK, 1, 1, BLOCK, 1, 1, 0, g->stream, args, NULL),
          "cuLaunchKernel apps::scale");
}

static void *host_alloc(size_t n)
{
    void *p = malloc(n);
    if (!p) app_wrong("out of host memory");
    memset(p, 0x5a, n);
    return p;
}

/* Async copies to and from malloc'd memory: the driver stages them, and
 * the host waits. The largest goes device to host. */
static void pageable_async_memcpy(gpu *g)
{
    size_t small = 256u << 10, large = 1u << 20;
    unsigned char *host = host_alloc(large);
    CUdeviceptr dev;
    check(cuMemAlloc(&dev, large), "cuMemAlloc");
    for (int i = 0; i < 3; i++)
        check(cuMemcpyHtoDAsync(dev, host, small, g->stream), "cuMemcpyHtoDAsync");
    for (int i = 0; i < 2; i++)
        check(cuMemcpyDtoHAsync(host, dev, large, g->stream), "cuMemcpyDtoHAsync");
    check(cuStreamSynchronize(g->stream), "cuStreamSynchronize");
    check(cuMemFree(dev), "cuMemFree");
    free(host);
    expect_copies(5, "cuMemcpyDtoHAsync", "DtoH", large);
}

/* Synchronous copies over 64 KiB between host and device; copies of
 * exactly 64 KiB and device-to-device ones are not counted. The longest
 * lasts many times the others (and whatever the first copy pays for
 * memory touched the first time). */
static void sync_memcpy(gpu *g)
{
    (void)g;
    size_t limit = 64u << 10, mid = 256u << 10, large = 16u << 20;
    unsigned char *host = host_alloc(large);
    CUdeviceptr a, b;
    check(cuMemAlloc(&a, large), "cuMemAlloc");
    check(cuMemAlloc(&b, large), "cuMemAlloc");
    for (int i = 0; i < 3; i++)
        check(cuMemcpyHtoD(a, host, mid), "cuMemcpyHtoD");
    check(cuMemcpyHtoD(a, host, limit), "cuMemcpyHtoD");
    check(cuMemcpyDtoH(host, a, limit), "cuMemcpyDtoH");
    check(cuMemcpyDtoD(b, a, large), "cuMemcpyDtoD");
    check(cuMemcpyDtoH(host, b, large), "cuMemcpyDtoH");
    check(cuMemcpyDtoH(host, b, limit + 1), "cuMemcpyDtoH");
    check(cuMemFree(a), "cuMemFree");
    check(cuMemFree(b), "cuMemFree");
    free(host);
    expect_copies(5, "cuMemcpyDtoH", "DtoH", large);
}

/* Copies under 4 KiB, most of them host to device; 4 KiB ones are not small. */
static void small_memcpy(gpu *g)
{
    CUdeviceptr dev;
    void *pinned;
    check(cuMemAlloc(&dev, 1u << 16), "cuMemAlloc");
    check(cuMemAllocHost(&pinned, 1u << 16), "cuMemAllocHost");
    for (int i = 0; i < 150; i++)
        check(cuMemcpyHtoDAsync(dev + (CUdeviceptr)i * 64, pinned, 1024, g->stream),
              "cuMemcpyHtoDAsync");
    for (int i = 0; i < 40; i++)
        check(cuMemcpyDtoHAsync(pinned, dev, 4095, g->stream), "cuMemcpyDtoHAsync");
    for (int i = 0; i < 10; i++)
        check(cuMemcpyHtoDAsync(dev, pinned, 4096, g->stream), "cuMemcpyHtoDAsync");
    check(cuStreamSynchronize(g->stream), "cuStreamSynchronize");
    check(cuMemFreeHost(pinned), "cuMemFreeHost");
    check(cuMemFree(dev), "cuMemFree");
    expect("count", "190");
    expect("dir", "HtoD");
    expect("most", "150");
}

/* A synchronize after every launch: the host waits out each kernel. */
static void sync_api(gpu *g)
{
    for (int i = 0; i < 12; i++) {
        launch_add(g);
        check(cuStreamSynchronize(g->stream), "cuStreamSynchronize");
    }
    check(cuCtxSynchronize(), "cuCtxSynchronize");
    /* gpu_close adds one more cuStreamSynchronize */
    expect("count", "14");
    expect("api", "cuStreamSynchronize");
}

/* The host sleeps between launches: four gaps, the third the largest. */
static void gpu_idle(gpu *g)
{
    static const long sleeps_ms[] = {3, 3, 8, 3};
    launch_add(g);
    for (size_t i = 0; i < sizeof sleeps_ms / sizeof sleeps_ms[0]; i++) {
        sleep_ms(sleeps_ms[i]);
        launch_add(g);
    }
    expect("count", "4");
    expect("largest_ms", "8");
}

/* Two more PTX loads of the same image; the program's own module is a cubin. */
static void ptx_jit(gpu *g)
{
    (void)g;
    for (int i = 0; i < 2; i++) {
        CUmodule m;
        check(cuModuleLoadData(&m, app_kernels_ptx), "cuModuleLoadData");
        check(cuModuleUnload(m), "cuModuleUnload");
    }
    expect("count", "2");
    expect("api", "cuModuleLoadData");
    expect("bytes", "%zu", sizeof app_kernels_ptx);
}

/* Two device allocations and a pinned host one left allocated: only
 * device memory is a leak. A second reference keeps the context alive
 * past gpu_close's release, so the memory is still held when the process
 * ends (memory released with its context is no leak). */
static void leak(gpu *g)
{
    CUdevice dev;
    CUcontext again;
    check(cuCtxGetDevice(&dev), "cuCtxGetDevice");
    check(cuDevicePrimaryCtxRetain(&again, dev), "cuDevicePrimaryCtxRetain");
    if (again != g->ctx) app_wrong("a second primary context");
    CUdeviceptr kept_small, kept_large, freed;
    void *pinned;
    check(cuMemAlloc(&freed, 1u << 20), "cuMemAlloc");
    check(cuMemAlloc(&kept_large, 4u << 20), "cuMemAlloc");
    check(cuMemAlloc(&kept_small, 256u << 10), "cuMemAlloc");
    check(cuMemAllocHost(&pinned, 8u << 20), "cuMemAllocHost");
    check(cuMemFree(freed), "cuMemFree");
    expect("count", "2");
    expect("bytes", "%u", (4u << 20) + (256u << 10));
    expect("largest", "%u", 4u << 20);
}

/* What the rules ask for: pinned async copies of 1 MiB queued on a
 * stream behind a long kernel (the GPU never waits for the host), a few
 * synchronize calls, a cubin, everything freed. */
static void clean(gpu *g)
{
    size_t n = 1u << 20;
    void *pinned;
    CUdeviceptr dev;
    check(cuMemAllocHost(&pinned, n), "cuMemAllocHost");
    check(cuMemAlloc(&dev, n), "cuMemAlloc");
    launch_scale(g);
    for (int i = 0; i < 8; i++) {
        check(cuMemcpyHtoDAsync(dev, pinned, n, g->stream), "cuMemcpyHtoDAsync");
        launch_add(g);
        check(cuMemcpyDtoHAsync(pinned, dev, n, g->stream), "cuMemcpyDtoHAsync");
    }
    check(cuStreamSynchronize(g->stream), "cuStreamSynchronize");
    check(cuMemFree(dev), "cuMemFree");
    check(cuMemFreeHost(pinned), "cuMemFreeHost");
}

static const struct {
    const char *name;
    void (*run)(gpu *g);
} cases[] = {
    {"pageable-async-memcpy", pageable_async_memcpy},
    {"sync-memcpy", sync_memcpy},
    {"small-memcpy", small_memcpy},
    {"sync-api", sync_api},
    {"gpu-idle", gpu_idle},
    {"ptx-jit", ptx_jit},
    {"leak", leak},
    {"clean", clean},
};

int main(int argc, char **argv)
{
    app_program = "advice_prog";
    if (argc != 3) {
        fprintf(stderr, "usage: advice_prog CASE EXPECT_PATH\n");
        return APP_EXIT_USAGE;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (strcmp(argv[1], cases[i].name) != 0) continue;
        expect_file = fopen(argv[2], "w");
        if (!expect_file) {
            perror(argv[2]);
            return APP_EXIT_USAGE;
        }
        expect("rule", "%s", cases[i].name);
        gpu g;
        gpu_open(&g, advice_cubin);
        cases[i].run(&g);
        gpu_close(&g);
        return fclose(expect_file) == 0 ? 0 : APP_EXIT_WRONG_RESULT;
    }
    fprintf(stderr, "advice_prog: unknown case '%s'\n", argv[1]);
    return APP_EXIT_USAGE;
}
