/* The advice rules (SPEC §8): each fired by records built to fire it,
 * silent just below its threshold, naming its worst example; a clean run
 * fires none; the JSON rows carry the same findings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "advice.h"
#include "event.h"
#include "gpu_busy.h"
#include "language.h"
#include "report.h"
#include "report_sample.h"
#include "settings.h"
#include "strtab.h"

typedef struct fixture {
    gt_strtab *names;
    gt_report *r;
    gt_process_info p;
    gt_advice found[GT_ADVICE_RULES];
    size_t n;
} fixture;

#define START 1000000000ull

static fixture *make(void)
{
    fixture *f = calloc(1, sizeof(*f));
    f->names = gt_strtab_create();
    f->r = gt_report_create(NULL, f->names);
    f->p = (gt_process_info){.command = "./app", .start_ns = START, .end_ns = START + 1000000000};
    return f;
}

static void drop(fixture *f)
{
    gt_report_destroy(f->r);
    gt_strtab_destroy(f->names);
    free(f);
}

static void run_rules(fixture *f)
{
    gt_report_finish(f->r, f->p.end_ns);
    f->n = gt_report_advice(f->r, &f->p, f->found);
}

/* The finding of a rule, or NULL when it did not fire. */
static const gt_advice *finding(const fixture *f, const char *rule)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->found[i].rule, rule) == 0) return &f->found[i];
    return NULL;
}

static void expect(const fixture *f, const char *rule, uint64_t count, const char *text)
{
    const gt_advice *a = finding(f, rule);
    if (!a) fail_msg("%s did not fire", rule);
    assert_int_equal(a->count, count);
    if (!strstr(a->message, text)) fail_msg("%s: '%s' not in: %s", rule, text, a->message);
}

static void copy(fixture *f, const char *api, uint8_t dir, uint8_t host_mem, bool async,
                 uint64_t bytes, uint64_t t, uint64_t host_ns)
{
    gt_event ev = host_event(GT_EV_MEMCPY, 1, t, t + host_ns);
    ev.api = intern(f->names, api);
    ev.u.copy.dir = dir;
    ev.u.copy.host_mem = host_mem;
    ev.bytes = bytes;
    ev.flags = async ? GT_EVF_ASYNC : GT_EVF_BLOCKING;
    gt_report_add(f->r, &ev);
}

/* A synchronous pageable copy whose call took host_ns, its transfer gpu_ns. */
static void timed_copy(fixture *f, const char *api, uint8_t dir, uint64_t bytes, uint64_t host_ns,
                       uint64_t gpu_ns)
{
    gt_event ev = host_event(GT_EV_MEMCPY, 1, START, START + host_ns);
    ev.api = intern(f->names, api);
    ev.u.copy.dir = dir;
    ev.u.copy.host_mem = GT_HOST_PAGEABLE;
    ev.bytes = bytes;
    ev.flags = GT_EVF_BLOCKING;
    set_gpu(&ev, START + 1000, START + 1000 + gpu_ns);
    gt_report_add(f->r, &ev);
}

static void test_pageable_async_memcpy(void **unused)
{
    (void)unused;
    fixture *f = make();
    copy(f, "cudaMemcpyAsync", GT_DIR_HTOD, GT_HOST_PINNED, true, 1 << 20, START, 1000);
    run_rules(f);
    assert_null(finding(f, "pageable-async-memcpy"));
    copy(f, "cudaMemcpyAsync", GT_DIR_DTOH, GT_HOST_PAGEABLE, true, 8 << 20, START, 1000);
    copy(f, "cuMemcpyHtoDAsync_v2", GT_DIR_HTOD, GT_HOST_PAGEABLE, true, 2 << 20, START, 1000);
    /* a synchronous pageable copy is sync-memcpy's business */
    copy(f, "cudaMemcpy", GT_DIR_HTOD, GT_HOST_PAGEABLE, false, 64 << 20, START, 1000);
    run_rules(f);
    expect(f, "pageable-async-memcpy", 2, "2 async copies (10.0 MiB) used pageable host memory");
    expect(f, "pageable-async-memcpy", 2, "Largest: cudaMemcpyAsync DtoH of 8.00 MiB.");
    drop(f);
}

static void test_sync_memcpy(void **unused)
{
    (void)unused;
    fixture *f = make();
    copy(f, "cuMemcpyHtoD_v2", GT_DIR_HTOD, GT_HOST_PINNED, false, GT_ADVICE_SYNC_MEMCPY_BYTES,
         START, 5000);
    copy(f, "cuMemcpyDtoD_v2", GT_DIR_DTOD, GT_HOST_NONE, false, 1 << 30, START, 9000000);
    copy(f, "cuMemcpyHtoDAsync_v2", GT_DIR_HTOD, GT_HOST_PINNED, true, 1 << 30, START, 9000000);
    run_rules(f);
    assert_null(finding(f, "sync-memcpy")); /* 64 KiB exactly, device to device, async */
    copy(f, "cuMemcpyHtoD_v2", GT_DIR_HTOD, GT_HOST_PINNED, false, GT_ADVICE_SYNC_MEMCPY_BYTES + 1,
         START, 2000000);
    copy(f, "cudaMemcpy", GT_DIR_DTOH, GT_HOST_PAGEABLE, false, 4 << 20, START, 3000000);
    run_rules(f);
    expect(f, "sync-memcpy", 2, "2 synchronous copies over 64 KiB blocked the host for 5.00 ms");
    expect(f, "sync-memcpy", 2, "Longest: cudaMemcpy DtoH of 4.00 MiB, 3.00 ms.");
    drop(f);
}

/* With GPU times, the longest copy is the one whose transfer took
 * longest, not the one whose call did: a host preempted during a small
 * copy's call names no small copy. Untimed copies count by host time. */
static void test_sync_memcpy_longest_by_gpu_time(void **unused)
{
    (void)unused;
    fixture *f = make();
    timed_copy(f, "cuMemcpyHtoD_v2", GT_DIR_HTOD, 256 << 10, 50000000, 260000);
    timed_copy(f, "cuMemcpyDtoH_v2", GT_DIR_DTOH, 16 << 20, 17000000, 16800000);
    timed_copy(f, "cuMemcpyHtoD_v2", GT_DIR_HTOD, 1 << 20, 2000000, 1000000);
    run_rules(f);
    expect(f, "sync-memcpy", 3, "3 synchronous copies over 64 KiB blocked the host for 69.0 ms");
    expect(f, "sync-memcpy", 3, "Longest: cuMemcpyDtoH_v2 DtoH of 16.0 MiB, 16.8 ms.");
    copy(f, "cudaMemcpy", GT_DIR_HTOD, GT_HOST_PAGEABLE, false, 8 << 20, START, 20000000);
    run_rules(f);
    expect(f, "sync-memcpy", 4, "Longest: cudaMemcpy HtoD of 8.00 MiB, 20.0 ms.");
    drop(f);
}

static void test_small_memcpy(void **unused)
{
    (void)unused;
    fixture *f = make();
    for (unsigned i = 0; i + 1 < GT_ADVICE_SMALL_MEMCPY_MIN_COUNT; i++)
        copy(f, "cuMemcpyHtoD_v2", GT_DIR_HTOD, GT_HOST_PAGEABLE, false, 100, START, 1000);
    copy(f, "cuMemcpyHtoD_v2", GT_DIR_HTOD, GT_HOST_PAGEABLE, false, GT_ADVICE_SMALL_MEMCPY_BYTES,
         START, 1000); /* 4 KiB is not under 4 KiB */
    run_rules(f);
    assert_null(finding(f, "small-memcpy"));
    for (unsigned i = 0; i < 30; i++)
        copy(f, "cuMemcpyDtoH_v2", GT_DIR_DTOH, GT_HOST_PAGEABLE, false, 8, START, 1000);
    run_rules(f);
    expect(f, "small-memcpy", GT_ADVICE_SMALL_MEMCPY_MIN_COUNT - 1 + 30, "129 copies under 4 KiB");
    expect(f, "small-memcpy", 129, "Most were HtoD: 99 copies.");
    drop(f);

    /* Pageable copies behind 1 ms kernels: each call waits for its stream,
     * then copies for 10 us; the wait is the kernels', not the copies'. */
    f = make();
    for (unsigned i = 0; i < GT_ADVICE_SMALL_MEMCPY_MIN_COUNT; i++) {
        uint64_t t = START + i * 2000000ull;
        gt_event ev = host_event(GT_EV_MEMCPY, 1, t, t + 1010000);
        ev.api = intern(f->names, "cuMemcpyDtoHAsync_v2");
        ev.u.copy.dir = GT_DIR_DTOH;
        ev.u.copy.host_mem = GT_HOST_PAGEABLE;
        ev.bytes = 8;
        ev.flags = GT_EVF_ASYNC;
        set_gpu(&ev, t + 1000000, t + 1005000);
        gt_report_add(f->r, &ev);
    }
    run_rules(f);
    expect(f, "small-memcpy", 100,
           "100 copies under 4 KiB (800 B in all, 1.00 ms of host time in the copies themselves)");
    expect(f, "small-memcpy", 100,
           "Their calls also waited 100 ms for GPU work queued before them");
    drop(f);
}

static void sync_call(fixture *f, const char *api, uint64_t ns)
{
    gt_event ev = host_event(GT_EV_SYNC, 1, START, START + ns);
    ev.api = intern(f->names, api);
    gt_report_add(f->r, &ev);
}

static void test_sync_api(void **unused)
{
    (void)unused;
    fixture *f = make(); /* 1 s of wall time */
    for (unsigned i = 0; i + 1 < GT_ADVICE_SYNC_API_MIN_CALLS; i++)
        sync_call(f, "cudaDeviceSynchronize", 100000000);
    run_rules(f);
    assert_null(finding(f, "sync-api")); /* 900 ms blocked, but in 9 calls */
    drop(f);

    f = make();
    for (unsigned i = 0; i < 20; i++)
        sync_call(f, "cuStreamSynchronize", 4000000);
    run_rules(f);
    assert_null(finding(f, "sync-api")); /* 20 calls, 80 ms: 8% of the wall time */
    sync_call(f, "cuCtxSynchronize", 30000000);
    run_rules(f);
    expect(f, "sync-api", 21,
           "21 synchronize calls blocked the host for 110 ms (11.0% of the wall");
    expect(f, "sync-api", 21, "Longest: cuCtxSynchronize, 30.0 ms.");
    drop(f);
}

static void gpu_work(fixture *f, uint64_t start, uint64_t end)
{
    gt_event ev = kernel_event(intern(f->names, "k"), 1, start, start, end);
    gt_report_add(f->r, &ev);
}

static void test_gpu_idle(void **unused)
{
    (void)unused;
    fixture *f = make();
    gpu_work(f, START, START + 1000);
    gpu_work(f, START + 1000 + GT_GPU_IDLE_GAP_NS, START + 2000000 + 1000); /* gap of 1 ms */
    run_rules(f);
    assert_null(finding(f, "gpu-idle"));
    gpu_work(f, START + 2000000 + 1000 + GT_GPU_IDLE_GAP_NS + 1, START + 4000000);
    gpu_work(f, START + 204000000, START + 205000000); /* a gap of 200 ms */
    run_rules(f);
    expect(f, "gpu-idle", 2,
           "2 gaps over 1 ms left the GPU idle between its work (201 ms in all, 20.1% of the "
           "wall time)");
    expect(f, "gpu-idle", 2, "Largest: 200 ms at +4.00 ms.");
    drop(f);
}

/* Gaps just over 1 ms that add up to little of the run come and go
 * between runs of one program: no advice rests on them. */
static void test_gpu_idle_stable(void **unused)
{
    (void)unused;
    fixture *f = make(); /* 1 s of wall time */
    uint64_t t = START;
    for (unsigned i = 0; i < 20; i++, t += 2600000) /* 19 gaps of 1.5 ms: 2.9% of the wall */
        gpu_work(f, t, t + 1100000);
    run_rules(f);
    assert_null(finding(f, "gpu-idle"));
    for (unsigned i = 0; i < 20; i++, t += 2600000) /* 39 gaps: 5.9% */
        gpu_work(f, t, t + 1100000);
    run_rules(f);
    expect(f, "gpu-idle", 39, "39 gaps over 1 ms left the GPU idle");
    drop(f);
}

static void compile_call(fixture *f, uint64_t start, uint64_t end)
{
    gt_event ev = host_event(GT_EV_COMPILE, 1, start, end);
    ev.api = intern(f->names, "nvvmCompileProgram");
    ev.name = intern(f->names, "kernel.py");
    gt_report_add(f->r, &ev);
}

/* Idle while code was compiled, and before the first kernel, is start-up
 * cost: named as such, not as a queue to keep full. */
static void test_gpu_idle_startup(void **unused)
{
    (void)unused;
    fixture *f = make();
    gpu_work(f, START, START + 1000);
    compile_call(f, START + 2000000, START + 390000000); /* a 388 ms JIT */
    gpu_work(f, START + 390000000, START + 391000000);
    run_rules(f);
    const gt_advice *a = finding(f, "gpu-idle");
    assert_non_null(a);
    assert_null(strstr(a->message, "left the GPU idle"));
    expect(f, "gpu-idle", 1,
           "The GPU waited 390 ms while code was compiled or loaded (1 gap): start-up cost, not "
           "a queue to keep full");
    drop(f);

    /* A copy long before the first kernel: the program's start. */
    f = make();
    gt_event ev = host_event(GT_EV_MEMCPY, 1, START, START + 1000);
    ev.u.copy.dir = GT_DIR_HTOD;
    set_gpu(&ev, START, START + 1000);
    gt_report_add(f->r, &ev);
    gpu_work(f, START + 300000000, START + 301000000);
    run_rules(f);
    expect(f, "gpu-idle", 1, "The GPU waited 300 ms at start-up, before the first kernel");
    drop(f);
}

/* With kernels not recorded (-c memcpy) the gaps between copies are not
 * known to be idle, and GPU busy is of the copies alone. */
static void test_gpu_idle_categories_off(void **unused)
{
    (void)unused;
    fixture *f = make();
    gt_report_destroy(f->r);
    gt_report_options opt = {.categories = GT_CAT_BIT(GT_CAT_MEMCPY) | GT_CAT_BIT(GT_CAT_NVTX),
                             .verbosity = GT_VERB_DEFAULT};
    f->r = gt_report_create(&opt, f->names);
    for (unsigned i = 0; i < 10; i++) {
        uint64_t t = START + i * 10000000ull;
        gt_event ev = host_event(GT_EV_MEMCPY, 1, t, t + 1000);
        ev.api = intern(f->names, "cuMemcpyHtoDAsync_v2");
        ev.u.copy.dir = GT_DIR_HTOD;
        ev.flags = GT_EVF_ASYNC;
        set_gpu(&ev, t, t + 1000);
        gt_report_add(f->r, &ev);
        gpu_work(f, t + 1000, t + 9000000); /* not recorded */
    }
    run_rules(f);
    assert_int_equal(gt_gpu_busy_ns(&f->r->busy), 10 * 1000);
    expect(f, "gpu-idle", 9,
           "Only memcpy was recorded (-c): the GPU may have run other work in these gaps.");
    drop(f);
}

/* n launches of kernel `name` of gpu_ns each, their calls taking 4 us. */
static void launches(fixture *f, const char *name, unsigned n, uint64_t gpu_ns, bool graph)
{
    for (unsigned i = 0; i < n; i++) {
        uint64_t t = START + (uint64_t)i * 20000;
        gt_event ev = kernel_event(intern(f->names, name), 1, t, t + 4000, t + 4000 + gpu_ns);
        ev.host_end = t + 4000;
        if (graph) ev.kind = GT_EV_GRAPH;
        gt_report_add(f->r, &ev);
    }
}

static void test_small_kernels(void **unused)
{
    (void)unused;
    fixture *f = make();
    launches(f, "_Z4tinyPf", GT_ADVICE_SMALL_KERNEL_MIN_LAUNCHES - 1, 5000, false);
    /* a median of 25 us is not under 25 us; graph launches are the fix */
    launches(f, "big", 2000, GT_ADVICE_SMALL_KERNEL_NS, false);
    launches(f, "graph", 2000, 1000, true);
    run_rules(f);
    assert_null(finding(f, "small-kernels"));
    launches(f, "other", 1, 2000, false);
    run_rules(f);
    expect(f, "small-kernels", 1000,
           "1000 launches of kernels that took under 25 us on the GPU (medians; 5.00 ms of GPU "
           "time in all, 4.00 ms of host time in their launch calls)");
    /* 5 us kernels, 4 us launch calls: the launches kept up */
    assert_null(strstr(finding(f, "small-kernels")->message, "the GPU waited"));
    expect(f, "small-kernels", 1000, "capture the sequence into a CUDA graph");
    expect(f, "small-kernels", 1000,
           "Most launched: _Z4tinyPf, 999 launches, 5.00 us each (median).");
    drop(f);

    /* Launch calls longer than the kernels: the GPU waited for them. */
    f = make();
    launches(f, "empty", GT_ADVICE_SMALL_KERNEL_MIN_LAUNCHES, 1000, false);
    run_rules(f);
    expect(f, "small-kernels", 1000,
           "(medians; 1.00 ms of GPU time in all, 4.00 ms of host time in their launch calls "
           "(longer than "
           "the kernels: the GPU waited for the host))");
    drop(f);

    /* With GPU timing off the times are the calls': no finding. */
    f = make();
    gt_report_destroy(f->r);
    gt_report_options opt = {
        .categories = GT_CAT_ALL, .verbosity = GT_VERB_DEFAULT, .gpu_timing = GT_GPU_TIMING_OFF};
    f->r = gt_report_create(&opt, f->names);
    for (unsigned i = 0; i < 2 * GT_ADVICE_SMALL_KERNEL_MIN_LAUNCHES; i++) {
        gt_event ev =
            host_event(GT_EV_KERNEL, 1, START + i * 20000ull, START + i * 20000ull + 4000);
        ev.name = intern(f->names, "tiny");
        gt_report_add(f->r, &ev);
    }
    run_rules(f);
    assert_null(finding(f, "small-kernels"));
    drop(f);
}

/* Fixes are phrased for the library whose kernels ran. */
static void test_language(void **unused)
{
    (void)unused;
    fixture *f = make();
    launches(f, "cudapy::__main__::axpy[abi:v3](float, Array<float, 1, C, mutable, aligned>)",
             GT_ADVICE_SMALL_KERNEL_MIN_LAUNCHES, 1000, false);
    run_rules(f);
    assert_int_equal(gt_report_language(f->r, &f->p), GT_LANG_NUMBA);
    expect(f, "small-kernels", 1000, "@cuda.jit kernels");
    assert_null(strstr(finding(f, "small-kernels")->message, "cudaStreamBeginCapture"));
    drop(f);

    f = make();
    launches(f, "cupy_multiply__float32_float32_float32", GT_ADVICE_SMALL_KERNEL_MIN_LAUNCHES, 1000,
             false);
    run_rules(f);
    assert_int_equal(gt_report_language(f->r, &f->p), GT_LANG_CUPY);
    expect(f, "small-kernels", 1000, "cupy.fuse");
    drop(f);

    f = make();
    launches(f, "void at::native::vectorized_elementwise_kernel<4>(int)",
             GT_ADVICE_SMALL_KERNEL_MIN_LAUNCHES, 1000, false);
    run_rules(f);
    expect(f, "small-kernels", 1000, "torch.cuda.graph");
    drop(f);

    /* Native kernels under a Python interpreter: the runtime's names. */
    f = make();
    f->p.command = "/usr/bin/python3 app.py";
    launches(f, "_Z4tinyPf", GT_ADVICE_SMALL_KERNEL_MIN_LAUNCHES, 1000, false);
    run_rules(f);
    assert_int_equal(gt_report_language(f->r, &f->p), GT_LANG_PYTHON);
    expect(f, "small-kernels", 1000, "cudaStreamBeginCapture");
    drop(f);
}

static void module_load(fixture *f, uint8_t kind, uint64_t bytes, uint64_t ns)
{
    gt_event ev = host_event(GT_EV_MODULE, 1, START, START + ns);
    ev.api = intern(f->names, "cuModuleLoadData");
    ev.u.module.image_kind = kind;
    ev.bytes = bytes;
    gt_report_add(f->r, &ev);
}

static void test_ptx_jit(void **unused)
{
    (void)unused;
    fixture *f = make();
    module_load(f, GT_IMAGE_CUBIN, 1 << 20, 1000000);
    module_load(f, GT_IMAGE_FATBIN, 1 << 20, 1000000);
    run_rules(f);
    assert_null(finding(f, "ptx-jit"));
    module_load(f, GT_IMAGE_PTX, 300 << 10, 45000000);
    module_load(f, GT_IMAGE_PTX, 100 << 10, 5000000);
    run_rules(f);
    expect(f, "ptx-jit", 2,
           "2 modules were loaded as PTX, compiled by the driver at load (50.0 ms)");
    expect(f, "ptx-jit", 2, "Slowest: cuModuleLoadData, 300 KiB of image, 45.0 ms.");
    drop(f);
}

static void ptx_load(fixture *f, uint8_t source, uint8_t sm, uint64_t ns)
{
    gt_event ev = host_event(GT_EV_MODULE, 1, START, START + ns);
    ev.api = intern(f->names, "cuModuleLoadData");
    ev.u.module.image_kind = GT_IMAGE_PTX;
    ev.u.module.ptx_source = source;
    ev.u.module.device_sm = sm;
    ev.bytes = 1000;
    gt_report_add(f->r, &ev);
}

/* The fix named is the one for where the PTX of most JIT time came
 * from; with several sources, how many came from each. */
static void test_ptx_jit_sources(void **unused)
{
    (void)unused;
    fixture *f = make();
    ptx_load(f, GT_PTX_FROM_NVRTC, 86, 4000000);
    run_rules(f);
    expect(f, "ptx-jit", 1,
           "1 module was loaded as PTX, compiled by the driver at load (4.00 ms): the PTX came "
           "from NVRTC in this process: compile to a cubin instead (--gpu-architecture=sm_86, "
           "then nvrtcGetCUBIN), so that nothing is compiled at run time.");
    ptx_load(f, GT_PTX_FROM_NVRTC, 86, 4000000);
    ptx_load(f, GT_PTX_FROM_FATBIN, 0, 9000000);
    run_rules(f);
    expect(f, "ptx-jit", 3,
           "3 modules were loaded as PTX (2 from NVRTC, 1 from fat binaries), compiled by the "
           "driver at load (17.0 ms): the fat binary has no machine code for this GPU, only "
           "PTX: build with nvcc -gencode arch=compute_86,code=sm_86, so that");
    drop(f);
    /* An unknown device, and a source the shim never writes. */
    f = make();
    ptx_load(f, GT_PTX_SOURCE_COUNT + 3, 0, 1000);
    run_rules(f);
    expect(f, "ptx-jit", 1, "a cubin (nvcc -cubin -arch=sm_XX, or NVRTC with "
                            "--gpu-architecture=sm_XX)");
    drop(f);
}

static void mem(fixture *f, uint8_t kind, uint64_t addr, uint64_t bytes, uint8_t mem_kind,
                uint16_t device)
{
    gt_event ev = mem_event(kind, 1, START, addr, bytes, mem_kind, device);
    gt_report_add(f->r, &ev);
}

static void test_leak(void **unused)
{
    (void)unused;
    fixture *f = make();
    mem(f, GT_EV_ALLOC, 0x1000, 1 << 20, GT_MEM_DEVICE, 0);
    mem(f, GT_EV_FREE, 0x1000, 0, GT_MEM_DEVICE, 0);
    mem(f, GT_EV_ALLOC, 0x7f00, 1 << 20, GT_MEM_PINNED, 0); /* host memory is not device memory */
    run_rules(f);
    assert_null(finding(f, "leak"));
    mem(f, GT_EV_ALLOC, 0x2000, 3 << 20, GT_MEM_DEVICE, 0);
    mem(f, GT_EV_ALLOC, 0x3000, 5 << 20, GT_MEM_MANAGED, 1);
    run_rules(f);
    expect(f, "leak", 2,
           "2 device allocations (8.00 MiB) were still held when the process ended: neither the "
           "program nor the end of their CUDA context freed them.");
    expect(f, "leak", 2, "in Python, drop the last reference to a device array");
    expect(f, "leak", 2, "Largest: 5.00 MiB on device 1.");
    drop(f);
}

/* Memory still allocated in a context that then ended went with it (as
 * frameworks such as Numba leave it to do at exit): no leak. */
static void test_released_with_context_is_no_leak(void **unused)
{
    (void)unused;
    fixture *f = make();
    gt_event ev = mem_event(GT_EV_ALLOC, 1, START, 0x2000, 3 << 20, GT_MEM_DEVICE, 0);
    ev.u.mem.ctx = 0xc0;
    gt_report_add(f->r, &ev);
    ev = mem_event(GT_EV_ALLOC, 1, START, 0x3000, 1 << 20, GT_MEM_DEVICE, 0);
    ev.u.mem.ctx = 0xc1;
    gt_report_add(f->r, &ev);
    gt_event end = mem_event(GT_EV_CTX_END, 1, START + 10, 0, 0, GT_MEM_DEVICE, GT_NO_DEVICE);
    end.u.mem.ctx = 0xc0;
    gt_report_add(f->r, &end);
    run_rules(f);
    expect(f, "leak", 1, "1 device allocation (1.00 MiB) was still held when the process ended");
    end.u.mem.ctx = 0xc1;
    gt_report_add(f->r, &end);
    run_rules(f);
    assert_null(finding(f, "leak"));
    drop(f);
}

/* A failed call did no work: it fires nothing. */
static void test_failed_calls_are_ignored(void **unused)
{
    (void)unused;
    fixture *f = make();
    gt_event ev = host_event(GT_EV_MEMCPY, 1, START, START + 5000000);
    ev.api = intern(f->names, "cudaMemcpyAsync");
    ev.u.copy.dir = GT_DIR_HTOD;
    ev.u.copy.host_mem = GT_HOST_PAGEABLE;
    ev.flags = GT_EVF_ASYNC;
    ev.bytes = 1 << 20;
    ev.result = 1;
    gt_report_add(f->r, &ev);
    run_rules(f);
    assert_int_equal(f->n, 0);
    drop(f);
}

/* The sample run fires every rule, in rule order; the same run done
 * cleanly (pinned async copies, no small copies, cubins, one
 * synchronize, everything freed, work back to back) fires none. */
static void test_sample_and_clean_run(void **unused)
{
    (void)unused;
    sample s;
    sample_build(&s, NULL);
    gt_advice found[GT_ADVICE_RULES];
    size_t n = gt_report_advice(s.r, &s.p, found);
    /* every rule but small-kernels, which takes 1000 launches
     * (test_small_kernels) */
    const char *rules[] = {"pageable-async-memcpy",
                           "sync-memcpy",
                           "small-memcpy",
                           "sync-api",
                           "gpu-idle",
                           "ptx-jit",
                           "leak"};
    assert_int_equal(n, GT_ADVICE_RULES - 1);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(found[i].rule, rules[i]);
    sample_free(&s);

    fixture *f = make();
    uint64_t t = START;
    module_load(f, GT_IMAGE_CUBIN, 1 << 20, 1000000);
    mem(f, GT_EV_ALLOC, 0x1000, 64 << 20, GT_MEM_DEVICE, 0);
    for (int i = 0; i < 1000; i++, t += 100000) {
        copy(f, "cuMemcpyHtoDAsync_v2", GT_DIR_HTOD, GT_HOST_PINNED, true, 1 << 20, t, 2000);
        gpu_work(f, t, t + 100000);
    }
    sync_call(f, "cuCtxSynchronize", 1000000);
    mem(f, GT_EV_FREE, 0x1000, 0, GT_MEM_DEVICE, 0);
    run_rules(f);
    for (size_t i = 0; i < f->n; i++)
        print_error("unexpected: [%s] %s\n", f->found[i].rule, f->found[i].message);
    assert_int_equal(f->n, 0);
    drop(f);
}

/* The JSON report's advice rows are the findings. */
static void test_json_rows(void **unused)
{
    (void)unused;
    fixture *f = make();
    module_load(f, GT_IMAGE_PTX, 1 << 10, 2000000);
    run_rules(f);
    char *buf = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&buf, &size);
    assert_int_equal(gt_report_write_json(f->r, &f->p, out), 0);
    fclose(out);
    char want[GT_ADVICE_MESSAGE_MAX + 64];
    snprintf(want, sizeof want, "{\"rule\": \"ptx-jit\", \"count\": 1, \"message\": \"%s\"}",
             f->found[0].message);
    assert_non_null(strstr(buf, want));
    free(buf);
    drop(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pageable_async_memcpy),
        cmocka_unit_test(test_sync_memcpy),
        cmocka_unit_test(test_sync_memcpy_longest_by_gpu_time),
        cmocka_unit_test(test_small_memcpy),
        cmocka_unit_test(test_sync_api),
        cmocka_unit_test(test_small_kernels),
        cmocka_unit_test(test_gpu_idle),
        cmocka_unit_test(test_gpu_idle_stable),
        cmocka_unit_test(test_gpu_idle_startup),
        cmocka_unit_test(test_gpu_idle_categories_off),
        cmocka_unit_test(test_language),
        cmocka_unit_test(test_ptx_jit),
        cmocka_unit_test(test_ptx_jit_sources),
        cmocka_unit_test(test_leak),
        cmocka_unit_test(test_released_with_context_is_no_leak),
        cmocka_unit_test(test_failed_calls_are_ignored),
        cmocka_unit_test(test_sample_and_clean_run),
        cmocka_unit_test(test_json_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
