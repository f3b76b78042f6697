/* An independent reference recorder for the real-GPU validation kit.
 *
 * Loaded into a CUDA program with CUDA_INJECTION64_PATH=libcupti_ref.so, it
 * uses the CUPTI Activity API (not gputrace's code) to total every kernel,
 * copy and memset the GPU ran, and writes those totals as JSON at exit to
 * $GPUTRACE_CUPTI_OUT ("%p" in it becomes the process id; default
 * cupti_ref.<pid>.json). Only the process that loaded it writes: a child
 * forked after CUDA started inherits the exit handler, not the tracing.
 * scripts/gpu-check.sh compares the totals with gputrace's report.
 *
 * With GPUTRACE_CUPTI_REF_LAUNCH_CALLBACKS=1 it also has CUPTI call it
 * (with a callback that does nothing) at each kernel launch of the driver
 * and the runtime, as a tracer that ties records to calls does: the
 * launch-cost benchmark then measures what CUPTI itself costs such a
 * tracer, and gputrace's CUPTI source is held to that.
 *
 * It subscribes first: where another CUPTI client holds CUPTI (Nsight
 * Systems, Nsight Compute, a debugger, the program itself) it records
 * nothing rather than disturb it, and says so; so it does when an activity
 * kind cannot be enabled (what was enabled is undone). At exit it waits (10
 * s at most) for the work the program left queued, so that its records are
 * complete.
 *
 * Work a graph runs is counted the way a tracer of API calls sees it: each
 * kernel, copy or memset node once (as the call that captured it), with no
 * time of its own, and the time of each graph launch, from its first node's
 * start to its last node's end, under "graphs". A launch is told apart by
 * its correlation id (its callbacks are enabled so that CUPTI assigns one),
 * or without one by the runs of its nodes. Records CUPTI could not time
 * (both timestamps 0) count as calls, as "untimed", and in no time or span.
 *
 * Output:
 *   {"tool": "cupti_ref", "dropped": N, "untimed": N, ["error": "why nothing was recorded",]
 *    "kernels": [{"name", "calls", "gpu_ns", "graph_nodes", "graph_runs", "graph_gpu_ns",
 *                 "untimed"}],
 *    "memcpy":  [{"direction", "host_memory", "async", "calls", "bytes", "gpu_ns",
 *                 "graph_nodes", "graph_runs", "untimed"}],
 *    "memset":  [{"async", "calls", "bytes", "gpu_ns", "graph_nodes", "graph_runs",
 *                 "untimed"}],
 *    "graphs":  {"launches", "gpu_ns"}}
 * calls: runs outside graphs plus distinct graph nodes (graph_nodes of
 * them); bytes: of those calls; gpu_ns: the GPU time of the timed runs
 * outside graphs; graph_runs: runs as graph nodes; untimed: runs without
 * timestamps. Peer copies (between devices) are "PtoP" with host memory
 * "none". Kernel names are demangled, as gputrace keys them.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cupti_totals.h"
#include "gpu_idle.h"

#define EXPORT __attribute__((visibility("default")))
#define ACTIVITY_BUFFER_BYTES (8u << 20)
#define ACTIVITY_ALIGN 8u
#define EXIT_WAIT_SECONDS 10u

static pthread_mutex_t totals_lock = PTHREAD_MUTEX_INITIALIZER;
static ref_totals totals;
static uint64_t dropped_records;
static pid_t tracing_pid;
/* Why nothing is recorded (set before tracing starts, then read-only). */
static char stood_down[256];

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* The program's own demangler, else the system C++ library's, loaded
 * privately: a C program's kernels would otherwise keep mangled names while
 * gputrace, which does the same, shows them demangled. */
static demangle_fn find_demangler(void)
{
    void *fn = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!fn) {
        void *cxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        fn = cxx ? dlsym(cxx, "__cxa_demangle") : NULL;
    }
    return (demangle_fn)fn;
}

static void add_kernel(const CUpti_ActivityKernel10 *k)
{
    static demangle_fn demangle;
    static int looked_up;
    if (!looked_up) {
        demangle = find_demangler();
        looked_up = 1;
    }
    char *plain = NULL;
    int status = -1;
    if (demangle && k->name) plain = demangle(k->name, NULL, NULL, &status);
    const char *name = status == 0 && plain ? plain : (k->name ? k->name : "?");
    ref_work work = {0, k->start, k->end, k->graphId, k->graphNodeId, k->correlationId};
    ref_add_work(&totals, &totals.kernels, name, &work);
    free(plain);
}

static const char *copy_direction(uint8_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
        return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
        return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
        return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
        return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return "PtoP";
    default:
        return "other";
    }
}

static const char *host_memory(uint8_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
        return "pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
        return "pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
        return "managed";
    default:
        return "none";
    }
}

/* Row keys: "direction/host_memory/async" and "async". */
static void add_copy(const CUpti_ActivityMemcpy6 *m)
{
    /* The host side is the source of an upload and the destination of a
     * download; device-only copies have none. */
    uint8_t host = CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
    if (m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD) host = m->srcKind;
    if (m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH) host = m->dstKind;
    if (m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOH) host = m->srcKind;
    /* CUPTI calls a copy to or from managed memory device to device; gputrace names
     * the managed side as the host side. Either way it is "managed", which the check
     * holds apart (its speed depends on page migration, as a pageable copy's does on
     * the driver's staging). */
    if (m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD &&
        (m->srcKind == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED ||
         m->dstKind == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED))
        host = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
    char key[64];
    snprintf(key, sizeof key, "%s/%s/%d", copy_direction(m->copyKind), host_memory(host),
             (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0);
    ref_work work = {m->bytes, m->start, m->end, m->graphId, m->graphNodeId, m->correlationId};
    ref_add_work(&totals, &totals.copies, key, &work);
}

/* Copies between devices: CUPTI gives them as MEMCPY2 records only. */
static void add_peer_copy(const CUpti_ActivityMemcpyPtoP4 *m)
{
    char key[32];
    snprintf(key, sizeof key, "PtoP/none/%d", (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0);
    ref_work work = {m->bytes, m->start, m->end, m->graphId, m->graphNodeId, m->correlationId};
    ref_add_work(&totals, &totals.copies, key, &work);
}

static void add_memset(const CUpti_ActivityMemset4 *m)
{
    const char *key = (m->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) ? "1" : "0";
    ref_work work = {m->bytes, m->start, m->end, m->graphId, m->graphNodeId, m->correlationId};
    ref_add_work(&totals, &totals.memsets, key, &work);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *p = NULL;
    if (posix_memalign(&p, ACTIVITY_ALIGN, ACTIVITY_BUFFER_BYTES) != 0) p = NULL;
    *buffer = p;
    *size = p ? ACTIVITY_BUFFER_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    CUpti_Activity *rec = NULL;
    pthread_mutex_lock(&totals_lock);
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            add_kernel((const CUpti_ActivityKernel10 *)rec);
            break;
        case CUPTI_ACTIVITY_KIND_MEMCPY:
            add_copy((const CUpti_ActivityMemcpy6 *)rec);
            break;
        case CUPTI_ACTIVITY_KIND_MEMCPY2:
            add_peer_copy((const CUpti_ActivityMemcpyPtoP4 *)rec);
            break;
        case CUPTI_ACTIVITY_KIND_MEMSET:
            add_memset((const CUpti_ActivityMemset4 *)rec);
            break;
        default:
            break;
        }
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        dropped_records += dropped;
    pthread_mutex_unlock(&totals_lock);
    (void)size;
    free(buffer);
}

/* $GPUTRACE_CUPTI_OUT with each "%p" replaced by the process id. */
static void output_path(char *path, size_t size)
{
    const char *tmpl = getenv("GPUTRACE_CUPTI_OUT");
    if (!tmpl || !*tmpl) tmpl = "cupti_ref.%p.json";
    size_t n = 0;
    for (const char *p = tmpl; *p && n + 1 < size; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            n += (size_t)snprintf(path + n, size - n, "%d", (int)getpid());
            if (n >= size) n = size - 1;
            p++;
        } else {
            path[n++] = *p;
        }
    }
    path[n] = '\0';
}

static void flush_and_write(void)
{
    if (getpid() != tracing_pid) return;
    if (!stood_down[0]) {
        if (ref_wait_gpu_idle(EXIT_WAIT_SECONDS) != 0)
            fprintf(stderr, "cupti_ref: could not wait for the GPU work left queued: records "
                            "of it may be untimed\n");
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
    char path[4096];
    output_path(path, sizeof path);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cupti_ref: cannot write %s\n", path);
        return;
    }
    pthread_mutex_lock(&totals_lock);
    ref_write_json(f, &totals, dropped_records, stood_down[0] ? stood_down : NULL);
    pthread_mutex_unlock(&totals_lock);
    if (fclose(f) != 0) fprintf(stderr, "cupti_ref: error writing %s\n", path);
}

/* Records nothing, and says why in the output and on stderr. */
static void stand_down(const char *what, CUptiResult r)
{
    const char *msg = "?";
    cuptiGetResultString(r, &msg);
    snprintf(stood_down, sizeof stood_down, "%s (%s)", what, msg);
    fprintf(stderr, "cupti_ref: %s: recording nothing\n", stood_down);
}

/* Graph launches get their callbacks, which makes CUPTI give them (and the
 * work they run) a correlation id. */
static void CUPTIAPI on_graph_launch(void *userdata, CUpti_CallbackDomain domain,
                                     CUpti_CallbackId cbid, const void *data)
{
    (void)userdata, (void)domain, (void)cbid, (void)data;
}

static CUptiResult subscribe(CUpti_SubscriberHandle *subscriber)
{
    CUptiResult r = cuptiSubscribe(subscriber, on_graph_launch, NULL);
    if (r != CUPTI_SUCCESS) return r;
    const struct {
        CUpti_CallbackDomain domain;
        CUpti_CallbackId cbid;
    } launches[] = {
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000},
    };
    for (size_t i = 0; i < sizeof launches / sizeof launches[0] && r == CUPTI_SUCCESS; i++)
        r = cuptiEnableCallback(1, *subscriber, launches[i].domain, launches[i].cbid);
    const char *also = getenv("GPUTRACE_CUPTI_REF_LAUNCH_CALLBACKS");
    if (r != CUPTI_SUCCESS || !also || strcmp(also, "1") != 0) return r;
    const struct {
        CUpti_CallbackDomain domain;
        CUpti_CallbackId cbid;
    } kernels[] = {
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000},
    };
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0] && r == CUPTI_SUCCESS; i++)
        r = cuptiEnableCallback(1, *subscriber, kernels[i].domain, kernels[i].cbid);
    return r;
}

static const struct {
    CUpti_ActivityKind kind;
    const char *name;
} recorded_kinds[] = {
    /* Concurrent kernel records leave kernels free to overlap, as they do
     * without a tracer; plain kernel records would serialise them. */
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2"},
    {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
};
#define N_KINDS (sizeof recorded_kinds / sizeof recorded_kinds[0])

/* Every kind, or none: a kind that fails leaves nothing half set up. */
static int enable_all(void)
{
    for (size_t i = 0; i < N_KINDS; i++) {
        CUptiResult r = cuptiActivityEnable(recorded_kinds[i].kind);
        if (r == CUPTI_SUCCESS) continue;
        char what[96];
        snprintf(what, sizeof what, "cannot enable activity kind %s", recorded_kinds[i].name);
        while (i-- > 0)
            cuptiActivityDisable(recorded_kinds[i].kind);
        stand_down(what, r);
        return -1;
    }
    return 0;
}

static int start_tracing(void)
{
    CUpti_SubscriberHandle subscriber;
    CUptiResult r = subscribe(&subscriber);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        stand_down("another CUPTI subscriber holds CUPTI", r);
        return -1;
    }
    if (r != CUPTI_SUCCESS) {
        stand_down("cannot subscribe to CUPTI", r);
        return -1;
    }
    r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
        cuptiUnsubscribe(subscriber);
        stand_down("cannot register activity buffers", r);
        return -1;
    }
    if (enable_all() != 0) {
        cuptiUnsubscribe(subscriber);
        return -1;
    }
    return 0;
}

/* Called by the CUDA driver when it loads the library named in
 * CUDA_INJECTION64_PATH. The output is written whatever happens, so that
 * the kit can tell why it holds nothing. */
EXPORT int InitializeInjection(void)
{
    tracing_pid = getpid();
    int ok = start_tracing() == 0;
    atexit(flush_and_write);
    return ok;
}
