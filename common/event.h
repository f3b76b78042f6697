/* The event record: the one fixed-size unit that flows from a hook, through
 * a thread's chunk and the drain thread, into the report. Shared by shim/
 * (which writes it) and report/ (which reads it); it holds no pointers to
 * strings so that writing one on the hot path is a handful of stores.
 */
#ifndef GT_EVENT_H
#define GT_EVENT_H

#include <stdbool.h>
#include <stdint.h>

/* SPEC §4. The order is the order of tables in every report. */
enum gt_category {
    GT_CAT_KERNEL,
    GT_CAT_MEMCPY,
    GT_CAT_MEMSET,
    GT_CAT_MEMORY,
    GT_CAT_COMPILE,
    GT_CAT_MODULE,
    GT_CAT_SYNC,
    GT_CAT_NVTX,
    GT_CAT_API,
    GT_CAT_COUNT
};
#define GT_CAT_BIT(c) (1u << (c))
#define GT_CAT_ALL ((1u << GT_CAT_COUNT) - 1u)

/* What a record describes. Every record made by an intercepted call also
 * feeds the `api` table (through `api`, `result`, host times). */
enum gt_event_kind {
    GT_EV_NONE,
    GT_EV_API,        /* an intercepted call with no category of its own */
    GT_EV_KERNEL,     /* u.kernel; GPU times when timed */
    GT_EV_GRAPH,      /* graph launch: u.kernel.func holds the exec handle */
    GT_EV_MEMCPY,     /* u.copy, bytes; GPU times when timed */
    GT_EV_MEMSET,     /* bytes; GPU times when timed */
    GT_EV_ALLOC,      /* u.mem, bytes */
    GT_EV_FREE,       /* u.mem (bytes unknown to the hook: 0; u.mem.ctx unused) */
    GT_EV_COMPILE,    /* name = program name, u.compile, bytes = input size */
    GT_EV_MODULE,     /* u.module, bytes = image size */
    GT_EV_SYNC,       /* host blocked from host_start to host_end */
    GT_EV_NVTX_PUSH,  /* u.nvtx; the range opens at host_start */
    GT_EV_NVTX_POP,   /* u.nvtx; closes the innermost open push range */
    GT_EV_NVTX_START, /* u.nvtx.range_id identifies the start/end pair */
    GT_EV_NVTX_END,
    GT_EV_NVTX_MARK,
    GT_EV_THREAD_NAME, /* name = the thread's name, tid = the thread */
    /* A context destroyed, or a primary context reset or released for the
     * last time (u.mem.ctx): memory still allocated in it goes with it. */
    GT_EV_CTX_END,
    /* The numbers NVTX carries beside its ranges (nvToolsExtPayload.h,
     * nvToolsExtCounters.h, nvToolsExtMem.h): */
    GT_EV_NVTX_FIELDS,  /* u.fields: numbers of the NVTX record just before it on this thread */
    GT_EV_NVTX_COUNTER, /* u.counter, name = the counter: one sample */
    GT_EV_NVTX_HEAP,    /* u.heap, name = the heap, bytes: a heap or region changed */
    /* The checksum of a device-to-host copy's data (GPUTRACE_CHECKSUM):
     * u.checksum, bytes = the copy's; host_start..host_end is the time
     * hashing took. Not an event of the report: its checksum list only. */
    GT_EV_CHECKSUM,
    GT_EV_KIND_COUNT
};

/* A kernel, a graph launch, a copy or a memset: work the GPU runs, with a
 * GPU time where it was timed. */
static inline bool gt_kind_is_gpu_work(unsigned kind)
{
    return kind == GT_EV_KERNEL || kind == GT_EV_GRAPH || kind == GT_EV_MEMCPY ||
           kind == GT_EV_MEMSET;
}

/* An allocation, a free or a context's end: changes the memory in use. */
static inline bool gt_kind_moves_memory(unsigned kind)
{
    return kind == GT_EV_ALLOC || kind == GT_EV_FREE || kind == GT_EV_CTX_END;
}

/* gt_event.stream of work on the calling thread's per-thread default
 * stream (CU_STREAM_PER_THREAD's value): one stream per thread. */
#define GT_PER_THREAD_STREAM 2u

/* gt_event.stream of work on a stream the driver numbers (cuStreamGetId,
 * CUDA 12.0: the number nsys and CUPTI show): the handle's value, a user
 * address under 2^47, with the number above GT_STREAM_NUMBER_SHIFT; none
 * there (0) where the driver gave none or it does not fit. */
#define GT_STREAM_NUMBER_SHIFT 48
static inline uint64_t gt_stream_number(uint64_t stream)
{
    return stream >> GT_STREAM_NUMBER_SHIFT;
}

/* Record flags. */
#define GT_EVF_ASYNC 0x01u       /* stream-ordered call (copy, memset, alloc, free) */
#define GT_EVF_GPU_TIMED 0x02u   /* gpu_start/gpu_end hold resolved GPU times */
#define GT_EVF_GPU_PENDING 0x04u /* shim-internal: gpu_start holds an event pair handle */
#define GT_EVF_CAPTURED 0x08u    /* issued into a stream capture: no GPU time exists */
#define GT_EVF_BLOCKING 0x10u    /* host blocked for the GPU work: also a `sync` row */
#define GT_EVF_RUNTIME                                                                             \
    0x20u                       /* `result` is a cudaError_t (else CUresult or the                 \
                                   compiler library's status) */
#define GT_EVF_GRAPH_NODE 0x40u /* a kernel a graph launch ran, as CUPTI saw it: not a call */
#define GT_EVF_UNCAPTURED 0x80u /* made outside a capture window: for memory in use only */

/* memcpy direction (SPEC §4). */
enum gt_copy_dir { GT_DIR_HTOD, GT_DIR_DTOH, GT_DIR_DTOD, GT_DIR_HTOH, GT_DIR_PTOP, GT_DIR_COUNT };

/* Host side of a copy. */
enum gt_host_mem {
    GT_HOST_NONE, /* no host side (DtoD, PtoP) */
    GT_HOST_PAGEABLE,
    GT_HOST_PINNED,
    GT_HOST_MANAGED,
    GT_HOST_COUNT
};

/* What an allocation or free is of. */
enum gt_mem_kind {
    GT_MEM_DEVICE,
    GT_MEM_MANAGED,
    GT_MEM_ASYNC,  /* stream-ordered pool */
    GT_MEM_PINNED, /* page-locked host memory (allocated or registered) */
    GT_MEM_VMM,    /* cuMemCreate physical allocation */
    GT_MEM_COUNT
};

/* Module image kinds (SPEC §4). */
enum gt_image_kind {
    GT_IMAGE_UNKNOWN,
    GT_IMAGE_PTX,
    GT_IMAGE_CUBIN,
    GT_IMAGE_FATBIN,
    GT_IMAGE_COUNT
};

/* Where the PTX that a `ptx` module load compiles came from: what decides
 * how to ship machine code instead (the ptx-jit advice). */
enum gt_ptx_source {
    GT_PTX_FROM_MEMORY, /* an image in memory the shim did not see being made */
    GT_PTX_FROM_NVRTC,  /* nvrtcGetPTX in this process */
    GT_PTX_FROM_NVVM,   /* nvvmGetCompiledResult in this process (Numba's compiler) */
    GT_PTX_FROM_LINK,   /* a driver link (cuLink*) of PTX, as Numba links its kernels */
    GT_PTX_FROM_FILE,   /* a PTX file */
    GT_PTX_FROM_FATBIN, /* a fat binary with no machine code for the device */
    GT_PTX_SOURCE_COUNT
};

/* How a number NVTX carries is typed: a range's payload keeps its own
 * type (reports name it); fields and counters only need how to read the
 * 64 bits (an integer widened to 64 bits, a float widened to double). */
enum gt_number_kind {
    GT_NUM_NONE,
    GT_NUM_U64,
    GT_NUM_I64,
    GT_NUM_F64, /* the bits of a double */
    GT_NUM_U32,
    GT_NUM_I32,
    GT_NUM_F32, /* widened to a double */
    GT_NUM_COUNT
};

/* What a GT_EV_NVTX_HEAP record says (nvToolsExtMem.h). */
enum gt_heap_op {
    GT_HEAP_REGISTER,   /* u.heap.heap of `bytes`, named `name` */
    GT_HEAP_UNREGISTER, /* its regions go with it */
    GT_HEAP_RESET,      /* its regions are dropped, the heap stays */
    GT_HEAP_REGION_ADD, /* u.heap.region of `bytes` inside u.heap.heap */
    GT_HEAP_REGION_RESIZE,
    GT_HEAP_REGION_REMOVE,
    GT_HEAP_OP_COUNT
};

#define GT_NO_DEVICE 0xffffu

/* 128 bytes, two cache lines. Times are CLOCK_MONOTONIC nanoseconds by the
 * time the report sees them; the shim stores raw clock ticks in host_* and
 * the drain thread converts them (clock.h), so the hot path never divides. */
typedef struct gt_event {
    uint8_t kind;    /* enum gt_event_kind */
    uint8_t flags;   /* GT_EVF_* */
    uint16_t device; /* CUDA device ordinal, GT_NO_DEVICE when none */
    int32_t result;  /* the status the program saw; 0 is success in every CUDA library */
    uint32_t api;    /* string id of the entry point ("cuLaunchKernel"), 0 = none */
    uint32_t name;   /* string id: kernel, compiled program, NVTX message; 0 = none */
    uint32_t error;  /* string id of the status name when result != 0 (set by the drain) */
    uint32_t tid;    /* operating-system thread id */
    uint64_t host_start;
    uint64_t host_end;
    uint64_t gpu_start; /* valid with GT_EVF_GPU_TIMED */
    uint64_t gpu_end;
    uint64_t bytes;
    uint64_t stream; /* the stream handle's value, as an id; 0 = legacy default stream */
    uint64_t seq;    /* per-thread sequence number, from 0 */
    union {
        struct {
            uint64_t func; /* CUfunction/CUkernel/graph exec handle, as an id */
            uint32_t grid[3];
            uint32_t block[3];
            uint32_t shmem;
        } kernel;
        struct {
            uint8_t dir;      /* enum gt_copy_dir */
            uint8_t host_mem; /* enum gt_host_mem */
            uint8_t dims;     /* 1, 2 or 3 */
            uint8_t peer_device_set;
            uint16_t peer_device; /* destination device of a PtoP copy */
        } copy;
        struct {
            uint64_t addr;
            /* The context an allocation belongs to (VMM memory: none, 0),
             * the one a GT_EV_CTX_END ends; a handle's value, as an id. */
            uint64_t ctx;
            uint8_t mem_kind; /* enum gt_mem_kind */
        } mem;
        struct {
            uint32_t inputs;    /* modules/inputs given to the compiler or linker */
            uint32_t options;   /* option count */
            uint32_t first;     /* 1: the first record of its program or link */
            uint32_t functions; /* string id: the other functions it defines, a line each */
        } compile;
        struct {
            uint8_t image_kind; /* enum gt_image_kind */
            uint8_t ptx_source; /* enum gt_ptx_source, for a `ptx` image */
            uint8_t device_sm;  /* major * 10 + minor of the device, 0 unknown */
        } module;
        struct {
            uint64_t range_id; /* start/end pairing; 0 for push/pop */
            uint32_t domain;   /* string id of the domain name, 0 = default domain */
            uint32_t category;
            uint32_t color;
            uint8_t payload_kind; /* enum gt_number_kind of payload; GT_NUM_NONE: none */
            uint8_t fields;       /* 1: GT_EV_NVTX_FIELDS records follow it */
            uint64_t payload;     /* the event attributes' numeric payload */
        } nvtx;
        struct {
            /* Up to two named numbers; a name of 0 adds to the payload. */
            uint32_t name[2]; /* string ids of the fields' names */
            uint32_t unit[2]; /* string ids of their units, 0 when none was given */
            uint8_t kind[2];  /* enum gt_number_kind; GT_NUM_NONE: slot unused */
            uint64_t value[2];
        } fields;
        struct {
            uint32_t domain;
            uint32_t unit; /* string id, 0 when none was given */
            uint8_t kind;  /* enum gt_number_kind of value */
            uint64_t value;
        } counter;
        struct {
            uint64_t heap;   /* the heap's handle: its address */
            uint64_t region; /* a region's address */
            uint32_t domain;
            uint8_t op; /* enum gt_heap_op */
        } heap;
        struct {
            uint64_t hash;   /* valid with status GT_CK_HASHED (checksum_mode.h) */
            uint64_t index;  /* the copy's number among its thread's device-to-host copies */
            uint32_t thread; /* its thread's number, in the order of their first such copy */
            uint8_t status;  /* enum gt_checksum_status */
        } checksum;
        uint8_t raw[40];
    } u;
    /* Where the call came from (shim/callsite/): 0 when not attributed. On
     * the hot path, the id of the call stack taken there; the drain turns
     * it into the string id of the site's label (a checksum's: of its
     * site's JSON text), as it turns host ticks into ns.
     * GT_SITE_SAMPLED: attributed by sampling, so what it adds to a site
     * is an estimate. GT_SITE_SKIPPED: a call the sampling passed
     * over, counted so that the sampled calls can stand for it. */
    uint32_t site;
} gt_event;

#define GT_SITE_SAMPLED 0x80000000u
#define GT_SITE_SKIPPED 0xffffffffu
#define GT_SITE_ID(s) ((s) & ~GT_SITE_SAMPLED)

_Static_assert(sizeof(gt_event) == 128, "gt_event must stay two cache lines");

/* Names used in reports and on the command line. */
const char *gt_category_name(enum gt_category c);
const char *gt_copy_dir_name(enum gt_copy_dir d);
const char *gt_host_mem_name(enum gt_host_mem h);
const char *gt_mem_kind_name(enum gt_mem_kind k);
const char *gt_image_kind_name(enum gt_image_kind k);
/* "uint64", "int64", "double", "uint32", "int32", "float"; "none". */
const char *gt_number_kind_name(enum gt_number_kind k);

/* A number's 64 bits as a double. */
double gt_number_value(uint8_t kind, uint64_t bits);

#endif
