/* Tracing interface of the emulated CUDA driver (libcuda.so.1 built from
 * tests/emu/driver): how a tool, the emulated CUPTI in tests/emu/cupti, learns
 * of the API calls that submit GPU work and of the work itself, with the
 * simulated times the driver scheduled it at.
 *
 * A tool finds the functions below with dlsym on libcuda.so.1 (a real driver
 * has none of them) and attaches one set of callbacks:
 *
 *     gtemu_trace_attach_fn attach =
 *         (gtemu_trace_attach_fn)dlsym(libcuda, "gtemu_trace_attach");
 *     attach(&my_ops);
 *
 * The emulated runtime (libcudart.so.13) reports its own work-submitting
 * calls through gtemu_trace_api_enter/exit, so that a tool sees a runtime
 * call around the driver call it makes, as on a GPU. */
#ifndef GTEMU_TRACE_H
#define GTEMU_TRACE_H

#include <cuda.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Changes whenever a structure below changes: gtemu_trace_attach refuses
 * callbacks built against another layout. */
#define GTEMU_TRACE_ABI 1

/* The values of CUPTI_CB_DOMAIN_DRIVER_API and CUPTI_CB_DOMAIN_RUNTIME_API. */
enum gtemu_domain { GTEMU_DOMAIN_DRIVER = 1, GTEMU_DOMAIN_RUNTIME = 2 };

/* One call of a traced entry point: every kernel launch (cuLaunchKernel,
 * cuLaunchKernelEx, cuLaunchCooperativeKernel and their _ptsz forms), every
 * copy and memset entry point, cuGraphLaunch, and the runtime's launches,
 * copies, memsets and graph launches. The same structure is passed to the
 * enter and the exit callback of the call. */
struct gtemu_api_call {
    enum gtemu_domain domain;
    /* CUPTI_DRIVER_TRACE_CBID_* (cupti_driver_cbid.h) or
     * CUPTI_RUNTIME_TRACE_CBID_* (cupti_runtime_cbid.h). */
    uint32_t cbid;
    /* The name CUPTI gives the function: the exported name for the driver
     * ("cuMemcpyHtoDAsync_v2"), name and version for the runtime
     * ("cudaLaunchKernel_v7000"). A constant string. */
    const char *function;
    /* The arguments, as the struct <function>_params of generated_cuda_meta.h
     * or generated_cuda_runtime_api_meta.h. */
    const void *params;
    /* Launches: the CUfunction or CUkernel launched; the driver fills
     * `symbol` (the kernel's mangled name) from it. NULL otherwise. */
    const void *function_handle;
    const char *symbol;
    /* The calling thread's current context at enter, and again at exit (a
     * runtime call may have made one current). */
    CUcontext context;
    /* At exit: a pointer to the CUresult (driver) or cudaError_t (runtime)
     * the call returns, and that value. */
    const void *return_value;
    int result;
    /* The tool's own, from enter to exit. */
    uint64_t tool_data[4];
};

/* Where a side of a copy, or a memset's target, lies. */
enum gtemu_memory {
    GTEMU_MEMORY_UNKNOWN = 0,
    GTEMU_MEMORY_PAGEABLE, /* host memory CUDA does not know */
    GTEMU_MEMORY_PINNED,   /* cuMemAllocHost, cuMemHostAlloc, cuMemHostRegister */
    GTEMU_MEMORY_DEVICE,   /* cuMemAlloc, pools, module globals, VMM mappings */
    GTEMU_MEMORY_MANAGED   /* cuMemAllocManaged, __managed__ variables */
};

enum gtemu_work_kind {
    GTEMU_WORK_KERNEL = 1,
    GTEMU_WORK_MEMCPY,
    GTEMU_WORK_MEMSET,
    /* A whole graph launch, from its first node's start to its last node's
     * end, reported after the nodes it ran. */
    GTEMU_WORK_GRAPH
};

struct gtemu_work_side {
    enum gtemu_memory memory;
    int device;          /* device ordinal; -1 for host memory */
    uint32_t context_id; /* the owning context's id; 0 when none owns it */
};

/* One piece of GPU work as the driver scheduled it. Times are simulated, in
 * CLOCK_MONOTONIC nanoseconds: the work runs from start to end. */
struct gtemu_work {
    enum gtemu_work_kind kind;
    uint64_t start, end;
    uint32_t device;     /* ordinal of the device that runs it */
    uint32_t context_id; /* process-unique id of its context */
    uint32_t stream_id;  /* process-unique id of its stream */
    /* Work run by a graph launch: the id of the graph that was instantiated
     * and the id of the node of the executable graph (distinct for every
     * instantiation); 0 for work submitted on its own. */
    uint32_t graph_id;
    uint64_t graph_node_id;
    /* Kernels. */
    const char *name; /* mangled, valid for the life of its module */
    unsigned grid[3], block[3];
    unsigned dynamic_shared_bytes, static_shared_bytes;
    unsigned registers_per_thread, local_bytes_per_thread;
    int cooperative;
    /* Copies and memsets. */
    uint64_t bytes;
    int async;                       /* submitted by an asynchronous entry point */
    struct gtemu_work_side src, dst; /* copies */
    enum gtemu_memory target;        /* memsets */
    uint32_t value;                  /* memsets: the element value */
};

/* The tool's callbacks. api_enter and api_exit run on the calling thread,
 * outside every lock of the driver, and may call CUDA. work runs on the
 * thread that submitted the work, inside the API call that submitted it,
 * possibly with locks of the driver held: it must not call CUDA or wait. */
struct gtemu_trace_ops {
    unsigned abi; /* GTEMU_TRACE_ABI */
    void (*api_enter)(struct gtemu_api_call *call);
    void (*api_exit)(struct gtemu_api_call *call);
    void (*work)(const struct gtemu_work *work);
};

/* Attaches `ops` (kept, not copied: it must stay valid) in place of any
 * before it; NULL detaches. Returns 0, or -1 when ops->abi is not
 * GTEMU_TRACE_ABI. */
typedef int (*gtemu_trace_attach_fn)(const struct gtemu_trace_ops *ops);
int gtemu_trace_attach(const struct gtemu_trace_ops *ops);

/* Whether a tool is attached: a caller may skip preparing a report. */
typedef int (*gtemu_trace_attached_fn)(void);
int gtemu_trace_is_attached(void);

/* The runtime's calls, passed on to the attached tool (nothing happens when
 * none is attached). The caller fills domain, cbid, function, params and,
 * for launches, symbol or function_handle. */
typedef void (*gtemu_trace_api_fn)(struct gtemu_api_call *call);
void gtemu_trace_api_enter(struct gtemu_api_call *call);
void gtemu_trace_api_exit(struct gtemu_api_call *call);

/* The id and device ordinal of `context`, or of the calling thread's current
 * context when it is NULL. Returns 0, or -1 when there is no such context. */
typedef int (*gtemu_trace_context_fn)(CUcontext context, uint32_t *id, uint32_t *device);
int gtemu_trace_context(CUcontext context, uint32_t *id, uint32_t *device);

/* The id of `stream`, resolved as the driver resolves stream handles: NULL is
 * the legacy default stream of the context, or the calling thread's
 * per-thread default stream when `per_thread` is set; CU_STREAM_LEGACY and
 * CU_STREAM_PER_THREAD likewise. A non-NULL `context` must own the stream.
 * Returns 0, or -1 when the stream or the context is not valid. */
typedef int (*gtemu_trace_stream_fn)(CUcontext context, CUstream stream, int per_thread,
                                     uint32_t *id);
int gtemu_trace_stream(CUcontext context, CUstream stream, int per_thread, uint32_t *id);

#ifdef __cplusplus
}
#endif

#endif
