#include "gpu_test.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "tests/emu/gtemu.h"
#include "clock.h"
#include "event.h"
#include "gpu_source.h"
#include "gpu_time.h"
#include "pipeline.h"
#include "process.h"
#include "record.h"
#include "intercept.h"
#include "resolve.h"

/* ------------------------------------------------------------ stand-ins
 * The shim library defines these (resolve.c, dlsym.c, init.c); the tests link the
 * GPU-timing code without them. */

void *gt_cuda_real(const char *symbol)
{
    static void *lib;
    if (!lib) lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return lib ? dlsym(lib, symbol) : NULL;
}

/* The tests' lookups are theirs: nothing is told apart. */
void gt_dlsym_private(const void *base)
{
    (void)base;
}

uint32_t gt_kernel_name_of_mangled(const char *mangled)
{
    (void)mangled;
    return 0;
}

gt_dlsym_fn gt_real_dlsym(void)
{
    return (gt_dlsym_fn)dlsym;
}

int gpu_test_shutdown_calls;
void (*gpu_test_on_shutdown)(void);

void gt_exit_cut(void)
{
    gpu_test_shutdown_calls++;
    if (gpu_test_on_shutdown) gpu_test_on_shutdown();
}

int gt_atfork_child_add(void (*fn)(void))
{
    (void)fn; /* the fork test calls gt_gpu_after_fork_child itself */
    return 0;
}

/* ------------------------------------------------------------ the driver */

static const char module_ptx[] = ".version 8.0\n"
                                 ".target sm_90\n"
                                 ".address_size 64\n"
                                 ".visible .entry k_zero()\n{\n ret;\n}\n"
                                 ".visible .entry k_tiny()\n{\n ret;\n}\n"
                                 ".visible .entry k_short()\n{\n ret;\n}\n"
                                 ".visible .entry k_long()\n{\n ret;\n}\n";
static const char *const kernel_names[K_COUNT] = {"k_zero", "k_tiny", "k_short", "k_long"};

#define MAX_CONTEXTS 16
static struct {
    CUcontext ctx;
    CUfunction fn[K_COUNT];
} contexts[MAX_CONTEXTS];

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
static launch_fn launch_ptsz;

void *gpu_test_sym(const char *name)
{
    return gt_cuda_real(name);
}

void gpu_test_init(void)
{
    setenv("GPUTRACE_EMU_KERNEL_NS", "k_zero=0,k_tiny=2000,k_short=50000,k_long=100000000,*=0", 1);
    setenv("GPUTRACE_EMU_GBPS", "pinned=10", 1);
    /* GPU times are checked against these durations: event pairs read them exactly. */
    setenv("GPUTRACE_EMU_EVENT_LATENCY_NS", "0", 1);
    assert_int_equal(cuInit(0), CUDA_SUCCESS);
    launch_ptsz = (launch_fn)gpu_test_sym("cuLaunchKernel_ptsz");
    assert_non_null(launch_ptsz);
    gt_clock_init(0);
}

CUcontext gpu_test_context(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    assert_int_equal(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    assert_int_equal(cuCtxCreate(&ctx, NULL, 0, dev), CUDA_SUCCESS);
    assert_int_equal(cuModuleLoadData(&mod, module_ptx), CUDA_SUCCESS);
    int slot = 0;
    while (slot < MAX_CONTEXTS - 1 && contexts[slot].ctx && contexts[slot].ctx != ctx)
        slot++;
    contexts[slot].ctx = ctx;
    for (int k = 0; k < K_COUNT; k++)
        assert_int_equal(cuModuleGetFunction(&contexts[slot].fn[k], mod, kernel_names[k]),
                         CUDA_SUCCESS);
    return ctx;
}

CUfunction gpu_test_kernel(enum gpu_test_kernel k)
{
    CUcontext ctx = NULL;
    cuCtxGetCurrent(&ctx);
    for (int i = 0; i < MAX_CONTEXTS; i++)
        if (contexts[i].ctx == ctx) return contexts[i].fn[k];
    fail_msg("no test module in the current context");
    return NULL;
}

void gpu_test_launch(enum gpu_test_kernel k, CUstream s, int per_thread)
{
    CUfunction f = gpu_test_kernel(k);
    CUresult r = per_thread ? launch_ptsz(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL)
                            : cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
    assert_int_equal(r, CUDA_SUCCESS);
}

uint64_t gpu_test_event_records(void)
{
    return gtemu_event_records();
}

uint64_t gpu_test_capture_event_records(void)
{
    return gtemu_capture_event_records();
}

uint64_t gpu_test_events_created(void)
{
    return gtemu_events_created();
}

/* ------------------------------------------------------------ the pipeline */

static gpu_test_records kept;
static uint64_t kept_capacity;

static void keep(gt_event *ev, uint32_t n, void *ctx)
{
    (void)ctx;
    for (gt_event *end = ev + n; ev < end; ev++) {
        if (ev->flags & GT_EVF_GPU_TIMED)
            kept.timed++;
        else
            kept.untimed++;
        if (kept.n < kept_capacity) kept.ev[kept.n++] = *ev;
    }
}

void gpu_test_keep(uint64_t capacity)
{
    free(kept.ev);
    kept = (gpu_test_records){0};
    kept_capacity = capacity;
    kept.ev = capacity ? calloc(capacity, sizeof *kept.ev) : NULL;
    assert_true(!capacity || kept.ev);
}

const gpu_test_records *gpu_test_kept(void)
{
    return &kept;
}

const gt_event *gpu_test_find(uint64_t tag)
{
    for (uint64_t i = 0; i < kept.n; i++)
        if (kept.ev[i].u.kernel.func == tag) return &kept.ev[i];
    return NULL;
}

void gpu_test_pipeline(int drain_thread)
{
    /* Event pairs: the source a process's first CUDA call would choose
     * with GPUTRACE_GPU_TIMING=events. */
    atomic_store(&gt_gpu_src_now, GT_SRC_EVENTS);
    gt_pipeline_params p = {
        .chunk_bytes = GT_CHUNK_DEFAULT_BYTES,
        .cap_bytes = 256u << 20,
        .drain_thread = drain_thread,
        .final_wait_ms = 10000,
        .idle_sleep_ms = 5,
        .consume = keep,
    };
    assert_int_equal(gt_pipeline_start(&p), 0);
    if (drain_thread) gt_drain_ensure_started();
}

void gpu_test_drain(void)
{
    gt_ev_flush();
    gt_pipeline_drain_now();
}

/* ------------------------------------------------------------ bracketing */

static void commit(gt_gpu_pair *p, uint64_t tag, uint64_t host_start, CUstream s)
{
    gt_event *ev = gt_ev_begin();
    if (ev) {
        ev->kind = GT_EV_KERNEL;
        ev->u.kernel.func = tag;
        ev->stream = (uint64_t)(uintptr_t)s;
        ev->host_start = host_start;
        ev->host_end = gt_clock_mono_ns();
        ev->device = GT_NO_DEVICE; /* a timed record gets its device from its pair */
    }
    gt_gpu_attach(ev, p);
    if (ev) gt_ev_commit(ev);
}

int gpu_test_timed(CUstream s, int per_thread, uint64_t tag, gpu_test_work work, void *arg)
{
    uint64_t t0 = gt_clock_mono_ns();
    gt_gpu_pair *p = gt_gpu_begin(s, per_thread);
    CUresult r = work(s, per_thread, arg);
    assert_int_equal(r, CUDA_SUCCESS);
    gt_gpu_end(p, r == CUDA_SUCCESS);
    commit(p, tag, t0, s);
    return p != NULL;
}

static CUresult launch_work(CUstream s, int per_thread, void *arg)
{
    gpu_test_launch((enum gpu_test_kernel)(uintptr_t)arg, s, per_thread);
    return CUDA_SUCCESS;
}

int gpu_test_timed_kernel(enum gpu_test_kernel k, CUstream s, int per_thread, uint64_t tag)
{
    return gpu_test_timed(s, per_thread, tag, launch_work, (void *)(uintptr_t)k);
}

void gpu_test_drain_until(uint64_t n)
{
    uint64_t deadline = gt_clock_mono_ns() + 5000000000ull;
    for (;;) {
        gpu_test_drain();
        if (kept.timed + kept.untimed >= n) return;
        if (gt_clock_mono_ns() > deadline)
            fail_msg("%llu of %llu records resolved",
                     (unsigned long long)(kept.timed + kept.untimed), (unsigned long long)n);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

/* ------------------------------------------------------------ checks */

void gpu_test_assert_duration(const gt_event *ev, uint64_t want_ns)
{
    assert_non_null(ev);
    if (!(ev->flags & GT_EVF_GPU_TIMED))
        fail_msg("record %llu has no GPU time", (unsigned long long)ev->u.kernel.func);
    assert_true(ev->gpu_end >= ev->gpu_start);
    assert_int_equal(ev->device, 0); /* the emulator's only device */
    uint64_t got = ev->gpu_end - ev->gpu_start;
    uint64_t diff = got > want_ns ? got - want_ns : want_ns - got;
    if (diff > DURATION_TOLERANCE_NS)
        fail_msg("record %llu: GPU time %llu ns, configured %llu ns",
                 (unsigned long long)ev->u.kernel.func, (unsigned long long)got,
                 (unsigned long long)want_ns);
}

uint64_t gpu_test_host_tolerance(void)
{
    gt_gpu_stats s;
    gt_gpu_stats_get(&s);
    return s.max_epoch_window_ns + 1000u;
}
