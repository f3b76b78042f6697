/* Programs that each make one advice rule fire (SPEC §8), and one that
 * makes none: the driver API on the emulated driver (or a GPU).
 *
 *   advice_prog CASE EXPECT_PATH
 *
 * CASE is a rule's name (pageable-async-memcpy, sync-memcpy, small-memcpy,
 * sync-api, gpu-idle, ptx-jit, leak) or `clean`; ptx-jit-nvrtc, -nvvm,
 * -link, -file and -fatbin fire ptx-jit with PTX from each place a
 * program gets it (the advice's fix depends on it). The program writes to
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
#include <nvrtc.h>
#include <nvvm.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "advice_cubin.h"
#include "advice_ptx_fatbin.h"
#include "app_kernels_ptx.h"
#include "app_util.h"

#define BLOCK 256

static FILE *expect_file;
static const char *expect_path;

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

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The host sleeps between launches: four gaps, the third the largest.
 * A loaded host may stretch any of them: none can exceed the time from
 * the call launching the kernel before it to the return of the one after
 * it, the longest of which is `longest_ns`. */
static void gpu_idle(gpu *g)
{
    static const long sleeps_ms[] = {3, 3, 8, 3};
    uint64_t before = now_ns(), longest = 0;
    launch_add(g);
    for (size_t i = 0; i < sizeof sleeps_ms / sizeof sleeps_ms[0]; i++) {
        sleep_ms(sleeps_ms[i]);
        uint64_t next = now_ns();
        launch_add(g);
        uint64_t after = now_ns();
        if (after - before > longest) longest = after - before;
        before = next;
    }
    expect("count", "4");
    expect("largest_ms", "8");
    expect("longest_ns", "%llu", (unsigned long long)longest);
}

/* 1500 launches of vec_add, short on the emulated GPU (check_advice.py),
 * and 10 of apps::scale, which is not. */
static void small_kernels(gpu *g)
{
    for (int i = 0; i < 1500; i++)
        launch_add(g);
    for (int i = 0; i < 10; i++)
        launch_scale(g);
    check(cuStreamSynchronize(g->stream), "cuStreamSynchronize");
    expect("count", "1500");
    expect("kernel", "vec_add");
}

/* Two more PTX loads of the same image; the program's own module is a
 * cubin. The PTX is data the program carries: where it came from is not
 * known to the tracer. */
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
    expect("source", "memory");
}

/* A copy of the text, as a Python program holds it (a bytes object). */
static char *copy_of(const char *text)
{
    char *copy = strdup(text);
    if (!copy) app_wrong("out of memory");
    return copy;
}

static void load_ptx_copy(const char *ptx, const char *source)
{
    char *copy = copy_of(ptx);
    CUmodule m;
    check(cuModuleLoadData(&m, copy), "cuModuleLoadData");
    check(cuModuleUnload(m), "cuModuleUnload");
    expect("count", "1");
    expect("api", "cuModuleLoadData");
    expect("bytes", "%zu", strlen(copy));
    expect("source", "%s", source);
    free(copy);
}

static void check_rtc(nvrtcResult r, const char *what)
{
    if (r != NVRTC_SUCCESS) app_fail(what, nvrtcGetErrorString(r), (int)r);
}

/* CuPy's way with a virtual architecture: NVRTC to PTX, loaded by the driver. */
static void ptx_jit_nvrtc(gpu *g)
{
    (void)g;
    static const char src[] = "extern \"C\" __global__ void twice(float *x)\n"
                              "{ x[threadIdx.x] *= 2.0f; }\n";
    const char *options[] = {"--gpu-architecture=compute_90"};
    nvrtcProgram prog;
    size_t size;
    check_rtc(nvrtcCreateProgram(&prog, src, "twice.cu", 0, NULL, NULL), "nvrtcCreateProgram");
    check_rtc(nvrtcCompileProgram(prog, 1, options), "nvrtcCompileProgram");
    check_rtc(nvrtcGetPTXSize(prog, &size), "nvrtcGetPTXSize");
    char *ptx = malloc(size);
    if (!ptx) app_wrong("out of memory");
    check_rtc(nvrtcGetPTX(prog, ptx), "nvrtcGetPTX");
    check_rtc(nvrtcDestroyProgram(&prog), "nvrtcDestroyProgram");
    load_ptx_copy(ptx, "nvrtc");
    free(ptx);
}

static void check_nvvm(nvvmResult r, const char *what)
{
    if (r != NVVM_SUCCESS) app_fail(what, "nvvmResult", (int)r);
}

/* Numba's compiler: NVVM IR (typed pointers, as libNVVM's LLVM 7 reads
 * them) to PTX, loaded by the driver. */
static void ptx_jit_nvvm(gpu *g)
{
    (void)g;
    static const char ir[] =
        "target datalayout = \"e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-"
        "i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64\"\n"
        "target triple = \"nvptx64-nvidia-cuda\"\n\n"
        "define void @halve(float* %x) {\nentry:\n"
        "  %v = load float, float* %x\n  %r = fmul float %v, 0.5\n"
        "  store float %r, float* %x\n  ret void\n}\n\n"
        "!nvvm.annotations = !{!0}\n!0 = !{void (float*)* @halve, !\"kernel\", i32 1}\n"
        "!nvvmir.version = !{!1}\n!1 = !{i32 2, i32 0}\n";
    const char *options[] = {"-arch=compute_90"};
    nvvmProgram prog;
    size_t size;
    check_nvvm(nvvmCreateProgram(&prog), "nvvmCreateProgram");
    check_nvvm(nvvmAddModuleToProgram(prog, ir, strlen(ir), "halve.ll"), "nvvmAddModuleToProgram");
    check_nvvm(nvvmCompileProgram(prog, 1, options), "nvvmCompileProgram");
    check_nvvm(nvvmGetCompiledResultSize(prog, &size), "nvvmGetCompiledResultSize");
    char *ptx = malloc(size);
    if (!ptx) app_wrong("out of memory");
    check_nvvm(nvvmGetCompiledResult(prog, ptx), "nvvmGetCompiledResult");
    check_nvvm(nvvmDestroyProgram(&prog), "nvvmDestroyProgram");
    load_ptx_copy(ptx, "nvvm");
    free(ptx);
}

/* Numba's link: the PTX through cuLinkAddData, the cubin loaded. */
static void ptx_jit_link(gpu *g)
{
    (void)g;
    CUlinkState link;
    void *cubin;
    size_t cubin_size;
    CUmodule m;
    check(cuLinkCreate(0, NULL, NULL, &link), "cuLinkCreate");
    check(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)app_kernels_ptx, sizeof app_kernels_ptx,
                        "app_kernels.ptx", 0, NULL, NULL),
          "cuLinkAddData");
    check(cuLinkComplete(link, &cubin, &cubin_size), "cuLinkComplete");
    check(cuModuleLoadData(&m, cubin), "cuModuleLoadData");
    check(cuModuleUnload(m), "cuModuleUnload");
    check(cuLinkDestroy(link), "cuLinkDestroy");
    expect("count", "1");
    expect("api", "cuLinkComplete");
    expect("bytes", "%zu", sizeof app_kernels_ptx);
    expect("source", "link");
}

/* A PTX file beside the expectations, loaded by name. */
static void ptx_jit_file(gpu *g)
{
    (void)g;
    char path[4096];
    snprintf(path, sizeof path, "%s.ptx", expect_path);
    FILE *f = fopen(path, "w");
    const char *ptx = (const char *)app_kernels_ptx;
    size_t len = strlen(ptx);
    if (!f || fwrite(ptx, 1, len, f) != len || fclose(f) != 0)
        app_wrong("cannot write the PTX file");
    CUmodule m;
    check(cuModuleLoad(&m, path), "cuModuleLoad");
    check(cuModuleUnload(m), "cuModuleUnload");
    expect("count", "1");
    expect("api", "cuModuleLoad");
    expect("bytes", "%zu", len);
    expect("source", "file");
}

/* nvcc -fatbin -arch=compute_75: PTX only, no machine code for the device. */
static void ptx_jit_fatbin(gpu *g)
{
    (void)g;
    const unsigned char *fat = (const unsigned char *)advice_ptx_fatbin;
    uint16_t header;
    uint64_t entries;
    memcpy(&header, fat + 6, sizeof header);
    memcpy(&entries, fat + 8, sizeof entries);
    CUmodule m;
    check(cuModuleLoadData(&m, advice_ptx_fatbin), "cuModuleLoadData");
    check(cuModuleUnload(m), "cuModuleUnload");
    expect("count", "1");
    expect("api", "cuModuleLoadData");
    expect("bytes", "%llu", (unsigned long long)(header + entries));
    expect("source", "fatbin");
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
    {"small-kernels", small_kernels},
    {"ptx-jit", ptx_jit},
    {"ptx-jit-nvrtc", ptx_jit_nvrtc},
    {"ptx-jit-nvvm", ptx_jit_nvvm},
    {"ptx-jit-link", ptx_jit_link},
    {"ptx-jit-file", ptx_jit_file},
    {"ptx-jit-fatbin", ptx_jit_fatbin},
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
        expect_path = argv[2];
        /* ptx-jit-SOURCE: the ptx-jit rule, PTX from SOURCE */
        expect("rule", "%s", strncmp(cases[i].name, "ptx-jit-", 8) ? cases[i].name : "ptx-jit");
        gpu g;
        gpu_open(&g, advice_cubin);
        cases[i].run(&g);
        gpu_close(&g);
        return fclose(expect_file) == 0 ? 0 : APP_EXIT_WRONG_RESULT;
    }
    fprintf(stderr, "advice_prog: unknown case '%s'\n", argv[1]);
    return APP_EXIT_USAGE;
}
