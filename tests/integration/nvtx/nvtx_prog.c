/* A driver-API program annotated with NVTX (the toolkit's header-only
 * nvtx3), whose ranges enclose kernels, copies and memsets of known
 * duration. It checks the values NVTX returns itself (exit status 1 on a
 * wrong one) and writes a manifest of what the report must show:
 *
 *     nvtx_prog MANIFEST.json
 *
 * Every range's wall time is bracketed: `inner` runs from the return of
 * the opening call to the start of the closing one, `outer` from before
 * the opening call to after the closing one; a tool that times the range
 * from its opening to its closing lies between the two. The GPU time each
 * range must enclose comes from the emulator's configured durations
 * (gtemu_kernel_ns, gtemu_transfer_ns; null on a real GPU).
 *
 * What it does, in order:
 *   - (before main, in libgt_nvtx_early.so's constructor) a mark and a range
 *   - "main": pushed before any CUDA call and never popped (open at exit)
 *   - "step" > {kernel, "kernels" > 3 kernels, "copies" > copy + memset}
 *   - "iter" x5 around one kernel each; "iter" once in domain "mylib"
 *   - a registered string "registered" in "mylib", pushed 3 times
 *   - a wide-string range around a memset, a range in a wide-named domain
 *   - "handoff": started here, ended by a worker thread, which also names
 *     itself, pops with nothing open, and runs "worker range" > kernel
 *   - 200 nested pushes in domain "deep" around one kernel
 *   - "never ended": started and never ended (open at exit) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <nvtx3/nvToolsExt.h>

#include "nvtx_early.h"

#define BYTES 1000000u
#define DEEP 200
#define MAX_RANGES 32

static const char ptx[] = ".version 7.0\n"
                          ".target sm_75\n"
                          ".address_size 64\n"
                          ".visible .entry nvtx_k1()\n{\n\tret;\n}\n"
                          ".visible .entry nvtx_k2()\n{\n\tret;\n}\n";

typedef struct range_log {
    const char *domain, *name;
    int calls, level, tid, open;
    uint64_t inner, outer; /* summed over calls; outer 0 when open at exit */
    int64_t gpu;           /* expected enclosed GPU time, -1 when unknown */
} range_log;

static range_log ranges[MAX_RANGES];
static int nranges;
static CUcontext ctx;
static CUfunction k1, k2;
static int64_t k1_ns = -1, k2_ns = -1, copy_ns = -1, memset_ns = -1;

static void fail(const char *what)
{
    fprintf(stderr, "nvtx_prog: %s\n", what);
    exit(1);
}

static void expect_int(long long got, long long want, const char *what)
{
    if (got == want) return;
    fprintf(stderr, "nvtx_prog: %s returned %lld, expected %lld\n", what, got, want);
    exit(1);
}

static void check(CUresult r, const char *what)
{
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "nvtx_prog: %s failed with %d\n", what, (int)r);
        exit(1);
    }
}

static uint64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int64_t sum(int64_t a, int64_t b)
{
    return a < 0 || b < 0 ? -1 : a + b;
}

static int64_t times(int n, int64_t a)
{
    return a < 0 ? -1 : n * a;
}

/* One closed range (or `open`: inner runs to now) into the manifest. */
static void log_range(const char *domain, const char *name, int level, uint64_t t0, uint64_t t1,
                      uint64_t t2, uint64_t t3, int64_t gpu)
{
    range_log *r = NULL;
    for (int i = 0; i < nranges && !r; i++)
        if (!strcmp(ranges[i].domain, domain) && !strcmp(ranges[i].name, name)) r = &ranges[i];
    if (!r) {
        if (nranges == MAX_RANGES) fail("too many ranges");
        r = &ranges[nranges++];
        *r = (range_log){.domain = domain, .name = name, .level = level, .tid = gettid()};
    }
    r->calls++;
    r->inner += t2 - t1;
    r->outer += t3 ? t3 - t0 : 0;
    r->open = t3 == 0;
    r->gpu = r->calls == 1 ? gpu : sum(r->gpu, gpu);
}

/* A range opened by `open` (which must return `level`) around `work`,
 * closed by `close` (likewise), timed and logged. */
#define TIMED_RANGE(domain, name, level, open, close, gpu, work)                                   \
    do {                                                                                           \
        uint64_t t0_ = now();                                                                      \
        expect_int(open, level, "opening " name);                                                  \
        uint64_t t1_ = now();                                                                      \
        work;                                                                                      \
        uint64_t t2_ = now();                                                                      \
        expect_int(close, level, "closing " name);                                                 \
        log_range(domain, name, level, t0_, t1_, t2_, now(), gpu);                                 \
    } while (0)

static void launch(CUfunction f, CUstream s)
{
    check(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL), "cuLaunchKernel");
}

static void sync_stream(CUstream s)
{
    check(cuStreamSynchronize(s), "cuStreamSynchronize");
}

static void emulated_durations(void)
{
    uint64_t (*kernel_ns)(const char *) =
        (uint64_t(*)(const char *))dlsym(RTLD_DEFAULT, "gtemu_kernel_ns");
    uint64_t (*transfer_ns)(size_t, const char *) =
        (uint64_t(*)(size_t, const char *))dlsym(RTLD_DEFAULT, "gtemu_transfer_ns");
    if (!kernel_ns || !transfer_ns) return;
    k1_ns = (int64_t)kernel_ns("nvtx_k1");
    k2_ns = (int64_t)kernel_ns("nvtx_k2");
    copy_ns = (int64_t)transfer_ns(BYTES, "pinned");
    memset_ns = (int64_t)transfer_ns(BYTES, "memset");
}

static nvtxEventAttributes_t attributes(void)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    return a;
}

static void copies(CUstream s, CUdeviceptr dev, void *pinned)
{
    check(cuMemcpyHtoDAsync(dev, pinned, BYTES, s), "cuMemcpyHtoDAsync");
    check(cuMemsetD8Async(dev, 7, BYTES, s), "cuMemsetD8Async");
    sync_stream(s);
}

static void kernels(CUfunction f, int n, CUstream s)
{
    for (int i = 0; i < n; i++)
        launch(f, s);
    sync_stream(s);
}

static void step_body(CUstream s, CUdeviceptr dev, void *pinned)
{
    nvtxNameCategoryA(5, "io");
    nvtxEventAttributes_t a = attributes();
    a.category = 5;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xff336699u;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "copies";
    launch(k1, s);
    TIMED_RANGE("", "kernels", 2, nvtxRangePushA("kernels"), nvtxRangePop(), times(3, k1_ns),
                kernels(k1, 3, s));
    TIMED_RANGE("", "copies", 2, nvtxRangePushEx(&a), nvtxRangePop(), sum(copy_ns, memset_ns),
                copies(s, dev, pinned));
    sync_stream(s);
}

static void step(CUstream s, CUdeviceptr dev, void *pinned)
{
    TIMED_RANGE("", "step", 1, nvtxRangePushA("step"), nvtxRangePop(),
                sum(times(4, k1_ns), sum(copy_ns, memset_ns)), step_body(s, dev, pinned));
}

static void iterations(CUstream s, nvtxDomainHandle_t mylib)
{
    for (int i = 0; i < 5; i++)
        TIMED_RANGE("", "iter", 1, nvtxRangePushA("iter"), nvtxRangePop(), k2_ns,
                    kernels(k2, 1, s));
    /* The same name in another domain: its own row, its own level. */
    nvtxEventAttributes_t a = attributes();
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "iter";
    TIMED_RANGE("mylib", "iter", 0, nvtxDomainRangePushEx(mylib, &a), nvtxDomainRangePop(mylib),
                k2_ns, kernels(k2, 1, s));

    nvtxStringHandle_t reg = nvtxDomainRegisterStringA(mylib, "registered");
    if (!reg) fail("nvtxDomainRegisterStringA returned NULL");
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = reg;
    for (int i = 0; i < 3; i++)
        TIMED_RANGE("mylib", "registered", 0, nvtxDomainRangePushEx(mylib, &a),
                    nvtxDomainRangePop(mylib), k1_ns, kernels(k1, 1, s));
}

static void memset_sync(CUstream s, CUdeviceptr dev)
{
    check(cuMemsetD8Async(dev, 1, BYTES, s), "cuMemsetD8Async");
    sync_stream(s);
}

static void wide(CUstream s, CUdeviceptr dev)
{
    TIMED_RANGE("", "wide caf\xc3\xa9 \xe4\xb8\xad", 1, nvtxRangePushW(L"wide caf\u00e9 \u4e2d"),
                nvtxRangePop(), memset_ns, memset_sync(s, dev));
    nvtxDomainHandle_t d = nvtxDomainCreateW(L"wdomain\u00e9");
    nvtxEventAttributes_t a = attributes();
    a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
    a.message.unicode = L"in wide domain";
    TIMED_RANGE("wdomain\xc3\xa9", "in wide domain", 0, nvtxDomainRangePushEx(d, &a),
                nvtxDomainRangePop(d), 0, (void)0);
    nvtxDomainDestroy(d);
}

typedef struct handoff {
    nvtxRangeId_t id;
    uint64_t t2, t3;
    int tid;
} handoff;

static void *worker(void *arg)
{
    handoff *h = arg;
    h->tid = gettid();
    nvtxNameOsThreadA((uint32_t)gettid(), "nvtx worker");
    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    CUstream s;
    check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    expect_int(nvtxRangePop(), -1, "pop with no open range");
    TIMED_RANGE("", "worker range", 0, nvtxRangePushA("worker range"), nvtxRangePop(), k1_ns,
                kernels(k1, 1, s));

    /* Inside "handoff" in time, but on another thread: not its work. */
    launch(k1, s);
    sync_stream(s);
    h->t2 = now();
    nvtxRangeEnd(h->id);
    h->t3 = now();
    check(cuStreamDestroy(s), "cuStreamDestroy");
    return NULL;
}

static int cross_thread(CUstream s)
{
    handoff h = {0};
    uint64_t t0 = now();
    h.id = nvtxRangeStartA("handoff");
    uint64_t t1 = now();
    if (h.id == 0) fail("nvtxRangeStartA returned 0");
    launch(k2, s);
    pthread_t t;
    if (pthread_create(&t, NULL, worker, &h) != 0) fail("pthread_create");
    pthread_join(t, NULL);
    sync_stream(s);
    launch(k2, s); /* after the end */
    sync_stream(s);
    log_range("", "handoff", 0, t0, t1, h.t2, h.t3, k2_ns);
    return h.tid;
}

static void deep(CUstream s)
{
    nvtxDomainHandle_t d = nvtxDomainCreateA("deep");
    nvtxEventAttributes_t a = attributes();
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "deep";
    for (int i = 0; i < DEEP; i++)
        expect_int(nvtxDomainRangePushEx(d, &a), i, "deep push");
    launch(k1, s);
    sync_stream(s);
    for (int i = DEEP - 1; i >= 0; i--)
        expect_int(nvtxDomainRangePop(d), i, "deep pop");
}

static void write_manifest(const char *path, int worker_tid)
{
    FILE *f = fopen(path, "w");
    if (!f) fail("cannot write the manifest");
    fprintf(f, "{\"main_tid\": %d, \"worker_tid\": %d, \"worker_name\": \"nvtx worker\",\n",
            (int)getpid(), worker_tid);
    fprintf(f, "\"unbalanced_pops\": 1, \"open_at_exit\": 2, \"deep_pushes\": %d,\n", DEEP);
    fprintf(
        f, "\"deep_gpu_each\": %" PRId64 ", \"marks\": [\"static initialiser\", \"checkpoint\"],\n",
        k1_ns);
    fputs("\"ranges\": [\n", f);
    for (int i = 0; i < nranges; i++) {
        const range_log *r = &ranges[i];
        fprintf(f,
                "  {\"domain\": \"%s\", \"name\": \"%s\", \"calls\": %d, \"level\": %d, "
                "\"tid\": %d, \"open\": %s, \"inner_ns\": %" PRIu64 ", \"outer_ns\": %" PRIu64
                ", \"gpu_ns\": ",
                r->domain, r->name, r->calls, r->level, r->tid, r->open ? "true" : "false",
                r->inner, r->outer);
        if (r->gpu < 0)
            fputs("null", f);
        else
            fprintf(f, "%" PRId64, r->gpu);
        fputs(i + 1 < nranges ? "},\n" : "}\n", f);
    }
    fputs("]}\n", f);
    if (fclose(f) != 0) fail("cannot write the manifest");
}

int main(int argc, char **argv)
{
    if (argc != 2) fail("usage: nvtx_prog MANIFEST.json");
    nvtx_early_range early = nvtx_early_info();
    expect_int(early.level, 0, "push in a static initialiser");
    log_range("", "static init", 0, early.t0, early.t1, early.t2, early.t3, 0);

    /* Before any CUDA call. The program's first NVTX call: inside it NVTX
     * loads and initialises the tool (milliseconds on a loaded machine),
     * so the range's inner time starts at its return, as for any other. */
    uint64_t m0 = now();
    expect_int(nvtxRangePushA("main"), 0, "push main");
    uint64_t m1 = now();
    nvtxRangeId_t never = nvtxRangeStartA("never ended");
    uint64_t s1 = now();
    nvtxMarkA("checkpoint");

    check(cuInit(0), "cuInit");
    CUdevice dev;
    check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    CUmodule module;
    check(cuModuleLoadData(&module, ptx), "cuModuleLoadData");
    check(cuModuleGetFunction(&k1, module, "nvtx_k1"), "cuModuleGetFunction");
    check(cuModuleGetFunction(&k2, module, "nvtx_k2"), "cuModuleGetFunction");
    emulated_durations();
    CUstream s;
    check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    CUdeviceptr buf;
    check(cuMemAlloc(&buf, BYTES), "cuMemAlloc");
    void *pinned;
    check(cuMemAllocHost(&pinned, BYTES), "cuMemAllocHost");
    memset(pinned, 3, BYTES);

    nvtxDomainHandle_t mylib = nvtxDomainCreateA("mylib");
    if (nvtxDomainCreateA("mylib") != mylib) fail("a domain name created twice has two handles");
    step(s, buf, pinned);
    iterations(s, mylib);
    wide(s, buf);
    int worker_tid = cross_thread(s);
    deep(s);

    check(cuMemFreeHost(pinned), "cuMemFreeHost");
    check(cuMemFree(buf), "cuMemFree");
    check(cuStreamDestroy(s), "cuStreamDestroy");
    check(cuModuleUnload(module), "cuModuleUnload");
    check(cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease");
    (void)never;
    /* Open at exit: they enclose all of the thread's work, not checked. */
    log_range("", "main", 0, m0, m1, now(), 0, -1);
    log_range("", "never ended", 0, 0, s1, now(), 0, -1);
    write_manifest(argv[1], worker_tid);
    return 0;
}
