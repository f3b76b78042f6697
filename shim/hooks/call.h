/* What a wrapper knows about its call (a gt_call) and the shared code
 * around the real call (call.c): the record's payload as the wrapper
 * fills it, the sides of a copy, the work before and after. Included
 * through hook.h, which includes cuda.h as the driver's own build does. */
#ifndef GT_CALL_H
#define GT_CALL_H

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "config.h"
#include "event.h"
#include "gpu_source.h"
#include "gpu_time.h"
#include "intercept.h"
#include "record.h"
#include "settings.h"

/* One side of a copy, as the API names it. */
enum gt_side {
    GT_SIDE_DEVICE,  /* device memory or an array */
    GT_SIDE_HOST,    /* host memory: pageable, pinned or managed, asked at record time */
    GT_SIDE_UNIFIED, /* either: the pointer decides (cuMemcpy, cudaMemcpyDefault) */
};

/* What a synchronize waits for (the checksums' pending copies it covers:
 * shim/checksum/checksum.h). */
enum gt_sync_target {
    GT_SYNC_NONE,
    GT_SYNC_CONTEXT, /* sync_handle: the context, 0 for the current one */
    GT_SYNC_STREAM,  /* the call's stream */
    GT_SYNC_EVENT,   /* sync_handle: the event */
};

/* The record's payload (u.kernel, u.copy...), as a wrapper fills it. */
typedef __typeof__(((gt_event *)0)->u) gt_event_payload;

/* What a wrapper knows about its call before making it. */
typedef struct gt_call {
    gt_hook *hook;
    uint8_t kind;         /* enum gt_event_kind */
    uint8_t flags;        /* GT_EVF_ASYNC, GT_EVF_BLOCKING */
    uint8_t per_thread;   /* a _ptsz/_ptds variant: a NULL stream is the per-thread one */
    uint8_t func_is_stub; /* runtime: u.kernel.func is a host stub or runtime handle */
    uint8_t sync_target;  /* enum gt_sync_target of a synchronize */
    uint16_t device;      /* an allocation's device when the call names it (VMM), else
                             GT_NO_DEVICE: the current context's */
    CUstream stream;
    uint64_t bytes;
    gt_event_payload u; /* launches: u.kernel, copied into the record as it is */
    struct {
        const void *src, *dst;
        uint8_t src_side, dst_side; /* enum gt_side */
        uint8_t peer;               /* between two contexts: PtoP */
        uint8_t dims;
        uint8_t batch;    /* several copies: dst and bytes are not one destination's */
    } copy;               /* turned into u.copy when the copy is recorded */
    uint64_t sync_handle; /* with sync_target */
    /* Set by the call code. */
    uint64_t t0; /* 0: not timed (it describes a runtime call) */
    gt_gpu_pair *pair;
    uint32_t cupti_mark; /* gt_cupti_mark() before the real call */
    uint8_t cupti;       /* timed by CUPTI: the record takes the correlation id */
} gt_call;

/* What the runtime wrapper learns from the driver wrapper under it
 * (DESIGN §3): the first GPU operation (or sync) of the kind the runtime
 * call is, described (as a record) and timed by the driver wrapper,
 * recorded once by the runtime wrapper with its own name, times, flags and
 * status. */
typedef struct gt_rt_detail {
    uint8_t expect; /* the kind of the runtime call */
    uint8_t filled;
    gt_gpu_pair *pair;
    gt_event work; /* kind, flags (GT_EVF_CAPTURED), device, name, bytes, stream, u */
} gt_rt_detail;

/* The detail of the runtime call this thread is in, NULL outside one. */
extern __thread gt_rt_detail *gt_rt_current __attribute__((tls_model("initial-exec")));

/* Sets what every call has; the wrapper sets the rest for its kind. Not
 * one memset of the whole: that costs more than the rest of the record. */
static inline void gt_call_init(gt_call *c, gt_hook *h, enum gt_event_kind kind)
{
    c->hook = h;
    c->kind = (uint8_t)kind;
    c->flags = 0;
    c->per_thread = (uint8_t)gt_hook_per_thread(h);
    c->func_is_stub = 0;
    c->sync_target = GT_SYNC_NONE;
    c->device = GT_NO_DEVICE;
    c->stream = NULL;
    c->bytes = 0;
    c->copy.src = c->copy.dst = NULL;
    c->copy.src_side = c->copy.dst_side = GT_SIDE_DEVICE;
    c->copy.peer = 0;
    c->copy.dims = 1;
    c->copy.batch = 0;
    memset(&c->u, 0, sizeof c->u);
}

/* A copy between two sides; `dims` 1, 2 or 3. */
static inline void gt_call_copy(gt_call *c, const void *dst, enum gt_side dst_side, const void *src,
                                enum gt_side src_side, uint64_t bytes, unsigned dims)
{
    c->copy.dst = dst;
    c->copy.dst_side = (uint8_t)dst_side;
    c->copy.src = src;
    c->copy.src_side = (uint8_t)src_side;
    c->copy.dims = (uint8_t)dims;
    c->copy.peer = 0;
    c->bytes = bytes;
}

/* A synchronize and what it waits for. */
static inline void gt_call_sync_target(gt_call *c, enum gt_sync_target t, uint64_t handle)
{
    c->sync_target = (uint8_t)t;
    c->sync_handle = handle;
}

/* The id a stream gets in records: 0 for the legacy default stream,
 * CU_STREAM_PER_THREAD for the per-thread one (a NULL stream through a
 * per-thread variant too). */
static inline uint64_t gt_stream_id(CUstream stream, int per_thread)
{
    if (stream == CU_STREAM_LEGACY || (!stream && !per_thread)) return 0;
    if (!stream) return (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD;
    return (uint64_t)(uintptr_t)stream;
}

/* The calling thread's current context as an id, 0 when none. */
uint64_t gt_current_context_id(void);

/* The device of the calling thread's current context, GT_NO_DEVICE when
 * there is none. Asks the driver (remembered per thread and context). */
uint16_t gt_current_device(void);

/* Whether the call's GPU work is timed: its kind is GPU work, recorded. */
static inline int gt_call_times(const gt_call *c)
{
    return gt_kind_is_gpu_work(c->kind) && (gt_hook_mode(c->hook) & GT_HOOK_WORK);
}
/* Around a call that may end a context (drv_context.c): before it, and
 * after it (`ended`: it did end one). What is remembered of contexts and
 * of the code loaded in them by handle is asked again: the driver may
 * hand the same handles to what is made next. errno is kept. */
void gt_context_ending(void);
void gt_context_ended(int ended);

/* Around the end of a stream (cuStreamDestroy), before and after the real
 * call: the threads' cached numbers of streams by handle (the timelines'
 * tracks) are asked again, since a stream made later may get its handle. */
void gt_stream_ending(void);

/* Whether the call's GPU work is bracketed by an event pair (`timed`: by
 * this wrapper itself, as driver wrappers do). */
static inline int gt_call_pairs(const gt_call *c, int timed)
{
    return timed && gt_call_times(c) && gt_gpu_src() == GT_SRC_EVENTS;
}

/* With CUPTI, where the thread's count of traced calls stands before the
 * real call (gpu_source.h): a load from TLS, no call. */
static inline void gt_call_cupti_mark(gt_call *c)
{
    c->cupti = gt_call_times(c) && gt_gpu_src() == GT_SRC_CUPTI;
    if (c->cupti) c->cupti_mark = gt_cupti_mark();
}

/* A blocking synchronize publishes the thread's records first, so that the
 * drain resolves their GPU times while the thread waits - once there are
 * enough of them to be worth the rest of the chunk. */
#define GT_SYNC_FLUSH_MIN 64u
static inline int gt_call_flushes(const gt_call *c)
{
    return c->kind == GT_EV_SYNC && gt_tls.count >= GT_SYNC_FLUSH_MIN;
}

/* The shim's work before the real call (the pair, the flush), errno kept. */
void gt_call_before_work(gt_call *c, int timed);

/* The detail of the runtime call this driver call describes (the first
 * operation of the runtime call's kind under it), NULL when the driver
 * call is recorded on its own or belongs to the runtime call unrecorded. */
static inline gt_rt_detail *gt_call_detail(const gt_call *c)
{
    gt_rt_detail *d = gt_rt_current;
    return d && !d->filled && d->expect == c->kind ? d : NULL;
}

/* Around the real call. The before halves are inline: they run on every
 * call, and a wrapper's kind is a constant, so most of their tests fold
 * away; the after halves, which make the record, are in call.c. */
static inline void gt_driver_before(gt_call *c)
{
    c->pair = NULL;
    gt_call_cupti_mark(c);
    if (GT_UNLIKELY(gt_call_pairs(c, 1) || gt_call_flushes(c))) gt_call_before_work(c, 1);
    /* A call that describes a runtime call is not timed: the runtime call's
     * record has its own host times. Two clock reads fewer per launch. */
    c->t0 = gt_call_detail(c) ? 0 : gt_clock_ticks();
}

void gt_driver_after(gt_call *c, CUresult r);

static inline void gt_runtime_before(gt_call *c, gt_rt_detail *d)
{
    d->expect = c->kind;
    d->filled = 0;
    d->pair = NULL;
    /* Every field gt_runtime_after takes from the detail is written by
     * describe() (call.c) but the name, which only a kernel has. */
    d->work.name = 0;
    gt_rt_current = d;
    /* The runtime's GPU work is timed by the driver wrappers under it
     * (event pairs), or by CUPTI with the runtime call's correlation id. */
    c->pair = NULL;
    gt_call_cupti_mark(c);
    if (GT_UNLIKELY(gt_call_flushes(c))) gt_call_before_work(c, 0);
    c->t0 = gt_clock_ticks();
}

void gt_runtime_after(gt_call *c, gt_rt_detail *d, cudaError_t r);

/* A device address as a pointer, for gt_call_copy. */
#define GT_DPTR(d) ((const void *)(uintptr_t)(d))

/* Synchronous (blocking) or stream-ordered work. */
static inline void gt_call_sync(gt_call *c)
{
    c->flags = GT_EVF_BLOCKING;
}

static inline void gt_call_async(gt_call *c, CUstream stream)
{
    c->flags = GT_EVF_ASYNC;
    c->stream = stream;
}

/* A graph launch (the runtime's graph handles are the driver's). */
static inline void gt_call_graph(gt_call *c, CUgraphExec exec, CUstream stream)
{
    c->stream = stream;
    c->u.kernel.func = (uint64_t)(uintptr_t)exec;
}

#endif
