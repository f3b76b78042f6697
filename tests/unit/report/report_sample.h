/* A sample run for the writers' tests, built from hand-made records that
 * go through the real aggregation: a batch solver that compiles its
 * right-hand side with NVRTC, loads it as PTX, then integrates 12 chunks
 * (copy in, kernel, copy out, synchronize) inside NVTX ranges, on two
 * devices, with a few habits the advice rules should catch, and NVTX
 * marks: one at the end of each chunk, one in the "ode" domain at chunks
 * 1, 5 and 9. Every time
 * is fixed, so every figure of the report is known. */
#ifndef TEST_REPORT_SAMPLE_H
#define TEST_REPORT_SAMPLE_H

#include "event.h"
#include "report.h"
#include "report_events.h"
#include "strtab.h"

#define SAMPLE_PID 4242
#define SAMPLE_TID 4242u
#define SAMPLE_START 1000000000ull               /* process start, ns */
#define SAMPLE_END (SAMPLE_START + 200000000ull) /* 200 ms of wall time */
#define SAMPLE_CHUNKS 12u
#define SAMPLE_CHUNK_NS 5000000ull  /* a chunk every 5 ms */
#define SAMPLE_KERNEL_NS 2000000ull /* rk4 kernel: 2 ms (+ 10 us x chunk) */
#define SAMPLE_SYNC_NS 2500000ull   /* each stream synchronize blocks 2.5 ms */
#define SAMPLE_SMALL_COPIES 150u
#define SAMPLE_RK4_NAME                                                                            \
    "void ode::rk4_integrate<double, ode::lorenz_rhs<double>, 4>(double const*, double*, "         \
    "ode::params<double> const*, int*, int)"

typedef struct sample {
    gt_strtab *names;
    gt_report *r;
    gt_process_info p;
    uint64_t t;   /* host clock of the next record */
    uint64_t gpu; /* when the GPU is done with the work queued so far */
    /* Called with each record after the report took it (NULL: none). */
    void (*also)(void *ctx, const gt_report *r, const gt_event *ev);
    void *ctx;
} sample;

/* GPU work queued by ev: it starts 1 us after the call, or when the work
 * before it is done (one queue, as on one stream). */
static inline void sample_gpu(sample *s, gt_event *ev, uint64_t gpu_ns)
{
    uint64_t start = ev->host_start + 1000 > s->gpu ? ev->host_start + 1000 : s->gpu;
    set_gpu(ev, start, start + gpu_ns);
    s->gpu = start + gpu_ns;
}

static inline void sample_add(sample *s, gt_event ev)
{
    gt_report_add(s->r, &ev);
    if (s->also) s->also(s->ctx, s->r, &ev);
}

/* A call on the main thread taking host_ns, starting at s->t. */
static inline gt_event sample_call(sample *s, uint8_t kind, const char *api, uint64_t host_ns)
{
    gt_event ev = host_event(kind, SAMPLE_TID, s->t, s->t + host_ns);
    ev.api = intern(s->names, api);
    s->t += host_ns + 1000;
    return ev;
}

static inline void sample_copy(sample *s, const char *api, uint8_t dir, uint8_t host_mem,
                               bool async, uint64_t bytes, uint64_t gpu_ns)
{
    uint64_t host_ns = async ? 3000 : gpu_ns + 5000;
    gt_event ev = sample_call(s, GT_EV_MEMCPY, api, host_ns);
    ev.u.copy.dir = dir;
    ev.u.copy.host_mem = host_mem;
    ev.u.copy.dims = 1;
    ev.bytes = bytes;
    ev.stream = async ? 0x7f0000001000ull : 0;
    ev.flags |= async ? GT_EVF_ASYNC : GT_EVF_BLOCKING;
    sample_gpu(s, &ev, gpu_ns);
    sample_add(s, ev);
}

static inline void sample_kernel(sample *s, const char *name, uint64_t gpu_ns, uint64_t stream)
{
    gt_event ev = sample_call(s, GT_EV_KERNEL, "cuLaunchKernel", 4000);
    ev.name = intern(s->names, name);
    ev.stream = stream;
    ev.u.kernel.grid[0] = 256, ev.u.kernel.grid[1] = ev.u.kernel.grid[2] = 1;
    ev.u.kernel.block[0] = 128, ev.u.kernel.block[1] = ev.u.kernel.block[2] = 1;
    sample_gpu(s, &ev, gpu_ns);
    sample_add(s, ev);
}

static inline void sample_mem(sample *s, uint8_t kind, const char *api, uint64_t addr,
                              uint64_t bytes, uint8_t mem_kind, uint16_t device)
{
    gt_event ev = sample_call(s, kind, api, 20000);
    ev.u.mem.addr = addr;
    ev.u.mem.mem_kind = mem_kind;
    ev.bytes = bytes;
    ev.device = device;
    sample_add(s, ev);
}

static inline void sample_nvtx(sample *s, uint8_t kind, const char *message)
{
    gt_event ev = nvtx_event(kind, SAMPLE_TID, s->t, 0, message ? intern(s->names, message) : 0, 0);
    s->t += 500;
    sample_add(s, ev);
}

static inline void sample_mark(sample *s, const char *domain, const char *message)
{
    gt_event ev = nvtx_event(GT_EV_NVTX_MARK, SAMPLE_TID, s->t,
                             domain ? intern(s->names, domain) : 0, intern(s->names, message), 0);
    s->t += 500;
    sample_add(s, ev);
}

static inline void sample_sync(sample *s, const char *api, uint64_t ns)
{
    gt_event ev = sample_call(s, GT_EV_SYNC, api, ns);
    ev.stream = 0x7f0000001000ull;
    sample_add(s, ev);
}

static inline void sample_setup(sample *s)
{
    gt_event ev = sample_call(s, GT_EV_COMPILE, "nvrtcCompileProgram", 80000000);
    ev.name = intern(s->names, "lorenz_rhs.cu");
    ev.bytes = 2048;
    ev.u.compile.first = 1;
    sample_add(s, ev);
    ev = sample_call(s, GT_EV_MODULE, "cuModuleLoadData", 35000000);
    ev.u.module.image_kind = GT_IMAGE_PTX;
    ev.u.module.ptx_source = GT_PTX_FROM_NVRTC;
    ev.u.module.device_sm = 90;
    ev.bytes = 120 << 10;
    sample_add(s, ev);
    sample_mem(s, GT_EV_ALLOC, "cuMemAlloc_v2", 0x700000000000ull, 64u << 20, GT_MEM_DEVICE, 0);
    sample_mem(s, GT_EV_ALLOC, "cuMemAlloc_v2", 0x700004000000ull, 16u << 20, GT_MEM_DEVICE, 0);
    sample_mem(s, GT_EV_ALLOC, "cuMemAlloc_v2", 0x710000000000ull, 8u << 20, GT_MEM_DEVICE, 1);
    sample_mem(s, GT_EV_ALLOC, "cuMemHostAlloc", 0x7f1000000000ull, 32u << 20, GT_MEM_PINNED, 0);
    ev = sample_call(s, GT_EV_ALLOC, "cuMemAlloc_v2", 15000);
    ev.result = 2; /* CUDA_ERROR_OUT_OF_MEMORY */
    ev.error = intern(s->names, "CUDA_ERROR_OUT_OF_MEMORY");
    sample_add(s, ev);
    /* Parameters copied one small struct at a time, from pageable memory. */
    for (unsigned i = 0; i < SAMPLE_SMALL_COPIES; i++)
        sample_copy(s, "cuMemcpyHtoD_v2", GT_DIR_HTOD, GT_HOST_PAGEABLE, false, 256, 2000);
    sample_copy(s, "cuMemcpyHtoD_v2", GT_DIR_HTOD, GT_HOST_PAGEABLE, false, 4u << 20, 1400000);
    sample_copy(s, "cuMemcpyHtoDAsync_v2", GT_DIR_HTOD, GT_HOST_PAGEABLE, true, 1u << 20, 350000);
    sample_kernel(s, "init_states(double*, int)", 50000, 0);
}

static inline void sample_chunks(sample *s)
{
    sample_nvtx(s, GT_EV_NVTX_PUSH, "solve");
    for (unsigned c = 0; c < SAMPLE_CHUNKS; c++) {
        s->t = SAMPLE_START + 125000000ull + c * SAMPLE_CHUNK_NS;
        sample_nvtx(s, GT_EV_NVTX_PUSH, "chunk");
        sample_copy(s, "cuMemcpyHtoDAsync_v2", GT_DIR_HTOD, GT_HOST_PINNED, true, 512u << 10,
                    40000);
        sample_kernel(s, SAMPLE_RK4_NAME, SAMPLE_KERNEL_NS + c * 10000, 0x7f0000001000ull);
        sample_kernel(s, "reduce_status(int const*, int*, int)", 20000, 0x7f0000001000ull);
        sample_copy(s, "cuMemcpyDtoHAsync_v2", GT_DIR_DTOH, GT_HOST_PINNED, true, 256u << 10,
                    25000);
        sample_sync(s, "cuStreamSynchronize", SAMPLE_SYNC_NS);
        sample_mark(s, NULL, "chunk done");
        if (c % 4 == 1) sample_mark(s, "ode", "step size halved");
        sample_nvtx(s, GT_EV_NVTX_POP, NULL);
    }
    sample_nvtx(s, GT_EV_NVTX_POP, NULL);
}

static inline void sample_teardown(sample *s)
{
    sample_sync(s, "cuCtxSynchronize", 100000);
    sample_mem(s, GT_EV_FREE, "cuMemFree_v2", 0x700004000000ull, 0, GT_MEM_DEVICE, 0);
    sample_mem(s, GT_EV_FREE, "cuMemFreeHost", 0x7f1000000000ull, 0, GT_MEM_PINNED, 0);
    /* 0x700000000000 (64 MiB) and 0x710000000000 (8 MiB) leak. */
}

/* An empty report for the run, with opt (NULL: every category, events timing). */
static inline void sample_init(sample *s, const gt_report_options *opt)
{
    memset(s, 0, sizeof(*s));
    s->names = gt_strtab_create();
    s->r = gt_report_create(opt, s->names);
    s->t = SAMPLE_START + 1000000;
    s->p = (gt_process_info){.pid = SAMPLE_PID,
                             .ppid = 1,
                             .hostname = "node17",
                             .command = "./batch_ode --systems 65536 --chunks 12",
                             .start_ns = SAMPLE_START,
                             .end_ns = SAMPLE_END};
}

/* The records of the run, then the report's end. */
static inline void sample_run(sample *s)
{
    sample_setup(s);
    sample_chunks(s);
    sample_teardown(s);
    gt_report_finish(s->r, SAMPLE_END);
}

static inline void sample_build(sample *s, const gt_report_options *opt)
{
    sample_init(s, opt);
    sample_run(s);
}

static inline void sample_free(sample *s)
{
    gt_report_destroy(s->r);
    gt_strtab_destroy(s->names);
}

#endif
