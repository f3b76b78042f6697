/* Internal interfaces of the emulated CUDA driver (libcuda.so.1).
 *
 * cuda.h is included in the mode NVIDIA's own driver build uses
 * (__CUDA_API_VERSION_INTERNAL): every exported variant (cuMemAlloc with
 * unsigned int, cuMemAlloc_v2, cuLaunchKernel_ptsz, ...) is then declared
 * under its literal name, so each definition here is checked against the
 * real prototype. The visibility push makes exactly those declarations
 * public; everything else in the library is hidden by -fvisibility=hidden. */
#ifndef GTEMU_EMU_H
#define GTEMU_EMU_H

#define __CUDA_API_VERSION_INTERNAL 1
#define __CUDA_API_PUSH_VISIBILITY_DEFAULT 1
#include <cuda.h>
/* The profiler API's declarations are made public the same way. */
#pragma GCC visibility push(default)
#include <cudaProfiler.h>
#pragma GCC visibility pop

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define GT_DRIVER_VERSION 13000
#define GT_MAX_DEVICES 16
/* Work less than this far in the future counts as complete: the host never
 * sleeps for less, so zero-duration work costs no context switches. */
#define GT_SLACK_NS 50000ULL
/* Depth of a stream's launch queue: the host blocks once this many
 * operations are still incomplete, as on a real GPU. */
#define GT_QUEUE_DEPTH 2048u

#define GT_EXPORT __attribute__((visibility("default")))

static inline uint64_t gt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t gt_max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* Sleeps until the CLOCK_MONOTONIC time `until` (ns). */
void gt_sleep_until(uint64_t until);

/* ---- configuration (config.c), read-only once gt_config_get() returned ---- */

struct gt_kernel_rule {
    char *name;
    uint64_t ns;
};

struct gt_config {
    int devices;
    size_t memory_bytes;
    uint64_t kernel_default_ns;
    struct gt_kernel_rule *rules;
    size_t n_rules;
    double gbps_pageable, gbps_pinned, gbps_dtod, gbps_memset, gbps_peer;
    uint64_t event_latency_ns; /* what an event pair reads beyond the work it brackets */
    const char *stats_path;
    const char *log_path;
};

const struct gt_config *gt_config_get(void);
/* Simulated run time of a kernel whose (mangled) name is `name`. */
uint64_t gt_kernel_duration(const char *name);
/* Duration of moving `bytes` at `gbps` (10^9 bytes/s), rounded to ns. */
uint64_t gt_bytes_duration(size_t bytes, double gbps);
/* Writes the demangled function name of `mangled` without its parameter
 * list (and without a leading return type) into buf; false when `mangled`
 * is not an Itanium C++ name. */
bool gt_function_base_name(const char *mangled, char *buf, size_t len);

/* ---- driver state (init.c) ---- */

enum gt_state { GT_STATE_UNINIT = 0, GT_STATE_READY = 1, GT_STATE_FORKED = 2 };
extern _Atomic int gt_state;

/* CUDA_SUCCESS once cuInit succeeded in this process, else
 * CUDA_ERROR_NOT_INITIALIZED (also in a child forked after cuInit). */
static inline CUresult gt_ready(void)
{
    return atomic_load_explicit(&gt_state, memory_order_acquire) == GT_STATE_READY
               ? CUDA_SUCCESS
               : CUDA_ERROR_NOT_INITIALIZED;
}

/* Process-unique ids for contexts, streams, captures (start at 1). */
unsigned long long gt_next_id(void);

/* ---- handle objects (pool.c) ----
 * Every handle points at an object whose first field is its kind. Freed
 * objects are marked dead and kept on a free list for reuse, never returned
 * to malloc, so a stale or destroyed handle is detected (INVALID_HANDLE)
 * instead of being a use after free. */

enum gt_kind {
    GT_KIND_DEAD = 0,
    GT_KIND_CONTEXT = 0x67740001,
    GT_KIND_STREAM,
    GT_KIND_EVENT,
    GT_KIND_MODULE,
    GT_KIND_FUNCTION,
    GT_KIND_LIBRARY,
    GT_KIND_KERNEL,
    GT_KIND_GRAPH,
    GT_KIND_GRAPH_NODE,
    GT_KIND_GRAPH_EXEC,
    GT_KIND_LINK,
    GT_KIND_MEMPOOL,
    GT_KIND_COUNT_END
};

struct gt_object {
    _Atomic uint32_t kind;
    struct gt_object *pool_next;
    uint64_t reuse_after; /* recycled: not handed out again before this gt_now() */
};

/* Returns an object of `size` bytes (header included) whose bytes from
 * `keep` on are zeroed. Bytes below `keep` (locks, monotonic counters) keep
 * their values when a freed object is reused; *fresh says whether the
 * object is new (zeroed entirely, locks still to be initialised). */
void *gt_object_new(enum gt_kind kind, size_t size, size_t keep, bool *fresh);
/* Marks the object dead (its handle no longer validates); false if it
 * already was, e.g. a second destroy. */
bool gt_object_kill(void *obj, enum gt_kind kind);
/* Makes a dead object available for reuse. */
void gt_object_recycle(void *obj, enum gt_kind kind);
/* The same, from gt_now() `not_before` on: as CUDA releases a destroyed
 * stream once the device completed its work, its handle does not name a
 * new stream while that work still runs. */
void gt_object_recycle_after(void *obj, enum gt_kind kind, uint64_t not_before);
/* Kill and recycle. */
bool gt_object_free(void *obj, enum gt_kind kind);
/* The object's kind; relaxed: a handle used while another thread destroys
 * it is a program error, this only has to be race-free. */
static inline bool gt_object_is(const void *obj, enum gt_kind kind)
{
    return obj != NULL && atomic_load_explicit(&((const struct gt_object *)obj)->kind,
                                               memory_order_relaxed) == (uint32_t)kind;
}

/* ---- devices (device.c) ---- */

struct gt_context;

struct gt_device {
    int ordinal;
    char name[64];
    CUuuid uuid;
    size_t total_bytes;
    pthread_mutex_t lock; /* primary context state */
    struct gt_context *primary;
    int primary_refs;
    unsigned primary_flags;
};

extern struct gt_device gt_devices[GT_MAX_DEVICES];
extern int gt_device_count;

void gt_devices_init(void);
CUresult gt_device_get(CUdevice dev, struct gt_device **out);

/* ---- contexts (context.c) ---- */

struct gt_stream;

struct gt_context {
    struct gt_object obj;
    /* Kept when the object is reused (see gt_object_new). */
    /* Linearises work submitted to the legacy stream and to blocking streams
     * (their mutual ordering) and protects the stream list. */
    pthread_mutex_t order_lock;
    pthread_cond_t streams_cond; /* a stream left the list */
    _Atomic unsigned long long id;

    /* Reset on reuse. */
    struct gt_device *dev;
    unsigned flags;
    bool is_primary;
    struct gt_stream *streams;
    struct gt_stream *legacy;
    uint64_t blocking_clock;       /* latest end of work on blocking streams (order_lock) */
    _Atomic int blocking_captures; /* blocking streams now capturing */
    size_t limits[CU_LIMIT_MAX];
    CUfunc_cache cache_config;
};

#define GT_CONTEXT_KEEP offsetof(struct gt_context, dev)

/* The calling thread's current context, or NULL. */
struct gt_context *gt_ctx_current(void);
/* Current context or CUDA_ERROR_INVALID_CONTEXT (after the init check). */
CUresult gt_ctx_require(struct gt_context **out);
CUresult gt_ctx_check(CUcontext h, struct gt_context **out);
CUresult gt_ctx_synchronize(struct gt_context *ctx);
/* Waits until the context's queued data operations were carried out (not
 * for their simulated time). */
CUresult gt_ctx_synchronize_work(struct gt_context *ctx);
CUresult gt_ctx_new(struct gt_device *dev, unsigned flags, bool primary, struct gt_context **out);
/* Waits for the context's work, frees everything it owns, and pops it
 * from the calling thread's stack if it is on top. */
void gt_ctx_destroy(struct gt_context *ctx);
/* Tears down and sets up again behind the same handle (primary reset). */
CUresult gt_ctx_reset(struct gt_context *ctx);
void gt_ctx_push(struct gt_context *ctx);
struct gt_context *gt_ctx_pop(void);
/* cuCtxSetCurrent: replaces the top of the stack (NULL pops). */
void gt_ctx_set_top(struct gt_context *ctx);
/* The calling thread's per-thread default stream in ctx (created on first
 * use, retired when the thread exits). */
CUresult gt_ctx_per_thread_stream(struct gt_context *ctx, struct gt_stream **out);
static inline unsigned long long gt_ctx_id(struct gt_context *ctx)
{
    return atomic_load_explicit(&ctx->id, memory_order_relaxed);
}

/* ---- memory table (memtable.c) ---- */

enum gt_mem_kind {
    GT_MEM_DEVICE = 1, /* cuMemAlloc, async pools, module globals */
    GT_MEM_MANAGED,    /* cuMemAllocManaged */
    GT_MEM_HOST,       /* cuMemAllocHost / cuMemHostAlloc */
    GT_MEM_REGISTERED, /* cuMemHostRegister */
    GT_MEM_VMM         /* mapped by cuMemMap */
};

struct gt_alloc {
    uintptr_t base;
    size_t size;
    enum gt_mem_kind kind;
    struct gt_device *dev;
    struct gt_context *ctx;
    unsigned flags;        /* host alloc / register / attach flags */
    unsigned long long id; /* CU_POINTER_ATTRIBUTE_BUFFER_ID */
    bool freeing;          /* a stream-ordered free is pending */
    void *pool;            /* CUmemoryPool of stream-ordered allocations */
    /* VMM mappings: the reserved range they lie in, and whether
     * cuMemSetAccess made them accessible. */
    uintptr_t range_base;
    size_t range_size;
    bool accessible;
};

/* Finds the allocation containing [addr, addr+len); copies it into *out.
 * len 0 means just the byte at addr. */
bool gt_mem_find(uintptr_t addr, size_t len, struct gt_alloc *out);
/* Whether any known allocation overlaps [base, base+size). */
bool gt_mem_overlaps(uintptr_t base, size_t size);
CUresult gt_mem_insert(const struct gt_alloc *a);
/* Records a new allocation on dev (of ctx, which may be NULL for memory
 * no context owns) with a fresh buffer id. */
CUresult gt_mem_record(void *base, size_t size, enum gt_mem_kind kind, struct gt_device *dev,
                       struct gt_context *ctx, unsigned flags);
/* Removes the allocation that starts exactly at `base` with kind in mask. */
bool gt_mem_remove(uintptr_t base, unsigned kind_mask, struct gt_alloc *out);
bool gt_mem_mark_freeing(uintptr_t base, unsigned kind_mask);
/* Sets `accessible` on the VMM mappings inside [base, base+size). */
void gt_mem_set_access(uintptr_t base, size_t size, bool accessible);
/* Sets the pool of the allocation at base. */
void gt_mem_set_pool(uintptr_t base, void *pool);
/* Removes every allocation of a context and releases its memory. */
void gt_mem_remove_context(struct gt_context *ctx);
/* Releases the memory behind a removed allocation (memory.c). */
void gt_mem_release_backing(const struct gt_alloc *a);
#define GT_MEM_MASK(k) (1u << (k))

/* ---- device memory arena (arena.c) ---- */

/* Reserves the device's address range (lazily committed host memory). */
bool gt_arena_init(struct gt_device *dev);
/* Bytes allocated on the device. */
size_t gt_arena_used(const struct gt_device *dev);
void *gt_arena_alloc(struct gt_device *dev, size_t size);
void gt_arena_free(struct gt_device *dev, void *p, size_t size);
bool gt_arena_contains(const struct gt_device *dev, uintptr_t p);

/* Allocates device memory on ctx's device and records it (kind DEVICE or
 * MANAGED). */
CUresult gt_device_alloc(struct gt_context *ctx, size_t size, enum gt_mem_kind kind, unsigned flags,
                         CUdeviceptr *out);
/* The same on dev for ctx, which may be NULL: no context frees it. */
CUresult gt_device_alloc_on(struct gt_device *dev, struct gt_context *ctx, size_t size,
                            enum gt_mem_kind kind, unsigned flags, CUdeviceptr *out);
/* Frees device/managed memory allocated at `ptr` (must be its base). */
CUresult gt_device_free(CUdeviceptr ptr);
/* A stream-ordered allocation of `size` bytes left its pool (mempool.c). */
void gt_mempool_release(void *pool, size_t size);

/* ---- counters (introspect.c) ---- */

/* The module and library loaders, for the loads counted by API and image
 * kind (GPUTRACE_EMU_STATS). */
enum gt_load_api {
    GT_LOAD_MODULE,
    GT_LOAD_MODULE_DATA,
    GT_LOAD_MODULE_DATA_EX,
    GT_LOAD_MODULE_FATBIN,
    GT_LOAD_LIBRARY_DATA,
    GT_LOAD_LIBRARY_FILE,
    GT_LOAD_APIS
};
#define GT_LOAD_KINDS 3 /* enum gt_image_kind - 1: ptx, cubin, fatbin */

struct gt_counters {
    _Atomic uint64_t loads[GT_LOAD_APIS][GT_LOAD_KINDS];
    _Atomic uint64_t launches;
    _Atomic uint64_t graph_launches;
    _Atomic uint64_t event_records;
    _Atomic uint64_t capture_event_records;
    _Atomic uint64_t events_created;
    _Atomic uint64_t proc_address_requests;
};
extern struct gt_counters gt_counters;

/* Relaxed: counters are statistics read at exit or by tests after joins. */
static inline void gt_count(_Atomic uint64_t *c)
{
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* A successful load through `api` of an image of `kind` (enum
 * gt_image_kind). */
void gt_count_load(enum gt_load_api api, int kind);

void gt_stats_write(void);

#endif
