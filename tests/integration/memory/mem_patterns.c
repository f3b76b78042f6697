/* Allocation patterns through the driver API, each with figures the
 * program knows (expect.h): the memory table must have exactly them. Each
 * pattern reaches its own peak, so that a run of one checks how it counts.
 *
 *   threads        8 threads x 16 cuMemAlloc of their own size, all live at
 *                  once (a barrier), then 15 freed each: one leak per thread
 *   async          cuMemAllocAsync and cuMemAllocFromPoolAsync on a stream,
 *                  all freed with cuMemFreeAsync (counted freed at the call)
 *   pitch_managed  cuMemAllocPitch (pitch x height bytes), cuMemAllocManaged
 *   vmm_mapped     cuMemCreate'd memory mapped and released stays in use
 *                  until unmapped; unmapped memory is freed at its release
 *   vmm_retained   a handle retained from a mapping keeps it past the unmap
 *   pinned         cuMemAllocHost (leaked), cuMemHostAlloc and
 *                  cuMemHostRegister on the host row
 *   leak_unknown   a 5 MiB cuMemAlloc never freed; memory the driver
 *                  allocated behind the tracer's back, freed with cuMemFree:
 *                  a free of an unknown address
 *   reused_contexts  a context made, allocated in, freed and destroyed on
 *                  each of 4 devices in turn, 200 times, with a kernel of
 *                  its own loaded and launched: the driver hands back the
 *                  destroyed context's address (and its function's), so
 *                  one handle names a context (a kernel) of each round
 *
 * Usage: mem_patterns [all|PATTERN] (writes GT_EXPECT when set; exit codes
 * as tests/apps/common/app_util.h) */
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_util.h"
#include "test_support.h"
#include "expect.h"
#include "real_driver.h"

#define THREADS 8
#define PER_THREAD 16
#define ASYNC_ALLOCS 10
#define POOL_ALLOCS 2
#define MIB (1024ull * 1024)
#define REUSE_DEVICES 4
#define REUSE_ROUNDS 200

static CUdevice dev;
static CUcontext ctx;
static pthread_barrier_t all_allocated;

static void *thread_pattern(void *arg)
{
    size_t size = MIB + (size_t)(intptr_t)arg * 65536;
    CUdeviceptr p[PER_THREAD];
    app_check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    for (int i = 0; i < PER_THREAD; i++) {
        app_check(cuMemAlloc(&p[i], size), "cuMemAlloc");
        expect_alloc(0, size);
    }
    pthread_barrier_wait(&all_allocated);
    for (int i = 0; i < PER_THREAD - 1; i++) {
        expect_free(0, size);
        app_check(cuMemFree(p[i]), "cuMemFree");
    }
    return NULL;
}

static void threads(void)
{
    pthread_t t[THREADS];
    pthread_barrier_init(&all_allocated, NULL, THREADS);
    for (intptr_t i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, thread_pattern, (void *)i) != 0)
            app_wrong("pthread_create");
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&all_allocated);
}

static void async(void)
{
    CUstream s;
    CUmemoryPool pool;
    CUdeviceptr p[ASYNC_ALLOCS + POOL_ALLOCS];
    size_t size[ASYNC_ALLOCS + POOL_ALLOCS];
    app_check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    app_check(cuDeviceGetDefaultMemPool(&pool, dev), "cuDeviceGetDefaultMemPool");
    for (int i = 0; i < ASYNC_ALLOCS + POOL_ALLOCS; i++) {
        size[i] = MIB + (size_t)i * 4096;
        if (i < ASYNC_ALLOCS)
            app_check(cuMemAllocAsync(&p[i], size[i], s), "cuMemAllocAsync");
        else
            app_check(cuMemAllocFromPoolAsync(&p[i], size[i], pool, s), "cuMemAllocFromPoolAsync");
        expect_alloc(0, size[i]);
    }
    for (int i = 0; i < ASYNC_ALLOCS + POOL_ALLOCS; i++) {
        expect_free(0, size[i]);
        app_check(cuMemFreeAsync(p[i], s), "cuMemFreeAsync");
    }
    app_check(cuStreamSynchronize(s), "cuStreamSynchronize");
    app_check(cuStreamDestroy(s), "cuStreamDestroy");
}

static void pitch_and_managed(void)
{
    CUdeviceptr p, m;
    size_t pitch;
    app_check(cuMemAllocPitch(&p, &pitch, 1000, 37, 4), "cuMemAllocPitch");
    if (pitch < 1000) app_wrong("pitch below the width");
    expect_alloc(0, pitch * 37);
    app_check(cuMemAllocManaged(&m, 3 * MIB, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
    expect_alloc(0, 3 * MIB);
    expect_free(0, pitch * 37);
    app_check(cuMemFree(p), "cuMemFree");
    expect_free(0, 3 * MIB);
    app_check(cuMemFree(m), "cuMemFree");
}

/* A device allocation of VMM memory, with a handle and a granularity. */
static CUmemAllocationProp vmm_prop(void)
{
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    return prop;
}

static size_t vmm_granularity(const CUmemAllocationProp *prop)
{
    size_t g;
    app_check(cuMemGetAllocationGranularity(&g, prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
             "cuMemGetAllocationGranularity");
    return g;
}

static CUmemGenericAllocationHandle vmm_create(const CUmemAllocationProp *prop, size_t size)
{
    CUmemGenericAllocationHandle h;
    app_check(cuMemCreate(&h, size, prop, 0), "cuMemCreate");
    expect_alloc(0, size);
    return h;
}

/* Mapped at a reserved range, usable, and its handle released: the memory
 * stays in use until it is unmapped. Returns the range. */
static CUdeviceptr vmm_map_and_release(const CUmemAllocationProp *prop,
                                       CUmemGenericAllocationHandle h, size_t size)
{
    CUdeviceptr va;
    app_check(cuMemAddressReserve(&va, size, 0, 0, 0), "cuMemAddressReserve");
    app_check(cuMemMap(va, size, 0, h, 0), "cuMemMap");
    CUmemAccessDesc access = {prop->location, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    app_check(cuMemSetAccess(va, size, &access, 1), "cuMemSetAccess");
    app_check(cuMemsetD8(va, 7, size), "cuMemsetD8");
    app_check(cuMemRelease(h), "cuMemRelease");
    return va;
}

static void vmm_unmap(CUdeviceptr va, size_t size)
{
    app_check(cuMemUnmap(va, size), "cuMemUnmap");
    app_check(cuMemAddressFree(va, size), "cuMemAddressFree");
}

/* The peak, 6 granules, holds only if the released but mapped 2 stay in use
 * while the unmapped 4 are allocated. */
static void vmm_mapped(void)
{
    CUmemAllocationProp prop = vmm_prop();
    size_t g = vmm_granularity(&prop);
    CUdeviceptr va = vmm_map_and_release(&prop, vmm_create(&prop, 2 * g), 2 * g);
    CUmemGenericAllocationHandle unmapped = vmm_create(&prop, 4 * g);
    expect_free(0, 4 * g);
    app_check(cuMemRelease(unmapped), "cuMemRelease"); /* never mapped: freed now */
    expect_free(0, 2 * g);
    vmm_unmap(va, 2 * g);
}

/* A handle retained from its mapping keeps the memory past the unmap: the
 * peak, 4 granules, holds only if the 1 stays in use until that release. */
static void vmm_retained(void)
{
    CUmemAllocationProp prop = vmm_prop();
    size_t g = vmm_granularity(&prop);
    CUmemGenericAllocationHandle h = vmm_create(&prop, g), retained;
    CUdeviceptr va = vmm_map_and_release(&prop, h, g);
    app_check(cuMemRetainAllocationHandle(&retained, (void *)(uintptr_t)va),
             "cuMemRetainAllocationHandle");
    if (retained != h) app_wrong("the retained handle is not the mapped one");
    vmm_unmap(va, g);
    CUmemGenericAllocationHandle big = vmm_create(&prop, 3 * g);
    expect_free(0, 3 * g);
    app_check(cuMemRelease(big), "cuMemRelease");
    expect_free(0, g);
    app_check(cuMemRelease(retained), "cuMemRelease");
}

static void pinned(void)
{
    void *host, *portable, *registered = NULL;
    app_check(cuMemAllocHost(&host, 64 * 1024), "cuMemAllocHost");
    expect_alloc(EXPECT_HOST_ROW, 64 * 1024);
    app_check(cuMemHostAlloc(&portable, 128 * 1024, CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
    expect_alloc(EXPECT_HOST_ROW, 128 * 1024);
    if (posix_memalign(&registered, 4096, 256 * 1024) != 0) app_wrong("posix_memalign");
    app_check(cuMemHostRegister(registered, 256 * 1024, 0), "cuMemHostRegister");
    expect_alloc(EXPECT_HOST_ROW, 256 * 1024);
    expect_free(EXPECT_HOST_ROW, 256 * 1024);
    app_check(cuMemHostUnregister(registered), "cuMemHostUnregister");
    free(registered);
    expect_free(EXPECT_HOST_ROW, 128 * 1024);
    app_check(cuMemFreeHost(portable), "cuMemFreeHost");
    /* `host` is left allocated: a leak on the host row. */
}

static void leak_and_unknown(void)
{
    CUdeviceptr leaked, unseen;
    app_check(cuMemAlloc(&leaked, 5 * MIB), "cuMemAlloc");
    expect_alloc(0, 5 * MIB);
    typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
    alloc_fn real_alloc = (alloc_fn)real_driver_symbol("cuMemAlloc_v2");
    if (!real_alloc) app_wrong("no cuMemAlloc_v2 in libcuda.so.1's symbol table");
    app_check(real_alloc(&unseen, MIB), "cuMemAlloc_v2 (the driver's own)");
    expect_unknown_free(0);
    app_check(cuMemFree(unseen), "cuMemFree");
}

/* A module of one kernel named after the round, loaded in the current
 * context and launched once. */
static void launch_round_kernel(int round)
{
    char name[32];
    size_t ptx_bytes;
    snprintf(name, sizeof name, "round%d", round);
    CUfunction f = empty_kernel(name, &ptx_bytes);
    expect_module("cuModuleLoadData", "ptx", ptx_bytes);
    app_check(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), "cuLaunchKernel");
    expect_kernel(name);
    app_check(cuCtxSynchronize(), "cuCtxSynchronize");
}

static void reused_contexts(void)
{
    int count = 0;
    app_check(cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (count < REUSE_DEVICES) app_wrong("fewer than 4 devices (GPUTRACE_EMU_DEVICES)");
    CUcontext first = NULL;
    for (int round = 0; round < REUSE_ROUNDS; round++) {
        int d = round % REUSE_DEVICES;
        size_t size = MIB * (size_t)(d + 1);
        CUdevice device;
        CUcontext c;
        CUdeviceptr p;
        app_check(cuDeviceGet(&device, d), "cuDeviceGet");
        app_check(cuCtxCreate(&c, NULL, 0, device), "cuCtxCreate");
        if (!first) first = c;
        if (c != first) app_wrong("the driver did not reuse the destroyed context's address");
        app_check(cuMemAlloc(&p, size), "cuMemAlloc");
        expect_alloc(d, size);
        expect_free(d, size);
        app_check(cuMemFree(p), "cuMemFree");
        launch_round_kernel(round);
        app_check(cuCtxDestroy(c), "cuCtxDestroy");
    }
}

static const struct pattern {
    const char *name;
    void (*run)(void);
} patterns[] = {
    {"threads", threads},
    {"async", async},
    {"pitch_managed", pitch_and_managed},
    {"vmm_mapped", vmm_mapped},
    {"vmm_retained", vmm_retained},
    {"pinned", pinned},
    {"leak_unknown", leak_and_unknown},
    {"reused_contexts", reused_contexts},
};

int main(int argc, char **argv)
{
    app_program = "mem_patterns";
    const char *which = argc > 1 ? argv[1] : "all";
    setenv("GPUTRACE_EMU_DEVICES", "4", 1); /* for reused_contexts; read at cuInit */
    app_check(cuInit(0), "cuInit");
    app_check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    app_check(cuCtxCreate(&ctx, NULL, 0, dev), "cuCtxCreate");
    int ran = 0;
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
        if (strcmp(which, "all") && strcmp(which, patterns[i].name)) continue;
        patterns[i].run();
        ran++;
    }
    if (!ran) {
        fprintf(stderr, "usage: mem_patterns [all|threads|async|pitch_managed|vmm_mapped|"
                        "vmm_retained|pinned|leak_unknown|reused_contexts]\n");
        return APP_EXIT_USAGE;
    }
    if (expect_write() != 0) app_wrong("cannot write GT_EXPECT");
    return 0;
}
