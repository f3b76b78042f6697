/* What every wrapper is made of. A wrapper is thin: it says what its call
 * is (a gt_call: kind, flags, stream, bytes, the record's payload u), and
 * the shared code in call.c does the rest.
 *
 * Adding a hook, e.g. a driver entry point, in the file of its family:
 *
 *     GT_DRIVER_WRAPPER(cuMemsetD8_v2, cuMemsetD8, GT_CAT_MEMSET, GT_EV_MEMSET,
 *                       (CUdeviceptr dst, unsigned char uc, size_t n), (dst, uc, n),
 *                       gt_call_sync(&c), c.bytes = n)
 *
 * that is: exported name (exactly one variant), base name (the api name),
 * category, record kind, parameter list, argument list, then statements
 * that fill `c` from the arguments. GT_DRIVER_WRAPPER_THEN adds a
 * statement run after the real call (result in r_) before the record is
 * made, for what only the outcome tells: an allocation's address into
 * c.u.mem, a new handle's name. Wrappers that need more are written out
 * with the pieces (GT_DRIVER_HOOK, GT_DRIVER_ENTER, gt_call_init,
 * GT_DRIVER_CALL[_THEN]); runtime wrappers use the GT_RUNTIME_ forms.
 * Compiler libraries (NVRTC, NVVM, nvJitLink) have their own status types
 * and no GPU work: their wrappers use compile.h on top of this.
 *
 * The hook registers itself; the registry then serves it to programs that
 * link the library, that dlsym it, or that get it from cuGetProcAddress.
 * One wrapper per exported variant, each with exactly its variant's
 * prototype: cuda.h is included as the driver's own build includes it, so
 * every variant is declared under its literal name and the compiler checks
 * each wrapper against it (runtime variants the C headers lack are in
 * rt_decls.h). tests/integration/intercept/check_exports.py fails when a
 * wrapped entry point misses one of its variants.
 *
 * GT_*_ENTER pass the call straight through (after noting that CUDA is in
 * use) when neither the hook's category nor `api` is enabled, when the
 * thread is inside the shim, or when this copy of the library is not the
 * process's active one (intercept/active_copy.c); a missing real function returns the
 * API's not-found error. GT_*_CALL keep errno, take the host time around the
 * real call only, bracket GPU work with an event pair (gpu_time.h) and
 * record one event, never touching the return code. A runtime call and the
 * driver call under it are recorded once (call.c). */
#ifndef GT_SHIM_HOOK_H
#define GT_SHIM_HOOK_H

/* Before any other header that includes cuda.h (gpu_time.h does). */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "capture_window.h"
#include "gpu_time.h"
#include "clock.h"
#include "compiler.h"
#include "config.h"
#include "event.h"
#include "process.h"
#include "record.h"
#include "settings.h"
#include "intercept.h"

#define GT_HOOK(sym) gt_hook_##sym

#define GT_HOOK_DEFINE(sym, basename, library, cat)                                                \
    static gt_hook gt_hook_##sym = {                                                               \
        .name = #sym,                                                                              \
        .base = #basename,                                                                         \
        .wrapper = (void *)(sym),                                                                  \
        .lib = (library),                                                                          \
        .category = (cat),                                                                         \
    };                                                                                             \
    static gt_hook *const gt_hook_entry_##sym __attribute__((used, section(GT_HOOK_SECTION))) =    \
        &gt_hook_##sym;

#define GT_DRIVER_HOOK(sym, base, cat) GT_HOOK_DEFINE(sym, base, GT_LIB_DRIVER, cat)
#define GT_RUNTIME_HOOK(sym, base, cat) GT_HOOK_DEFINE(sym, base, GT_LIB_RUNTIME, cat)
#define GT_COMPILER_HOOK(sym, base, cat) GT_HOOK_DEFINE(sym, base, GT_LIB_COMPILER, cat)

/* `real_`: the real function, typed as the wrapper. The call is noted
 * (internal.h, gt_cuda_used): once noted, that costs one load and one
 * predictable branch. In an inactive copy of the library (intercept/active_copy.c) the
 * note's slow path says so, and the call goes to the real function with
 * nothing else done. */
#define GT_ENTER_ANY(sym, notfound, args)                                                          \
    __typeof__(&sym) real_ =                                                                       \
        (__typeof__(&sym))gt_hook_real(&gt_hook_##sym, __builtin_return_address(0));               \
    if (GT_UNLIKELY(atomic_load_explicit(&gt_cuda_used, memory_order_relaxed) != GT_CUDA_USED) &&  \
        !gt_note_cuda_call_slow() && real_)                                                        \
        return real_ args;                                                                         \
    if (GT_UNLIKELY(!real_)) return (notfound)

/* Outside a capture window (capture.h) the gate is 0 and no mode passes:
 * the same one test as a hook whose categories are off. */
#define GT_DRIVER_ENTER(sym, args)                                                                 \
    GT_ENTER_ANY(sym, CUDA_ERROR_NOT_FOUND, args);                                                 \
    if (!(gt_hook_mode(&gt_hook_##sym) & gt_capture_mask()) || gt_tls.guard) return real_ args

/* A runtime call made by the runtime itself, under a recorded one, is part
 * of that one: passed through. */
#define GT_RUNTIME_ENTER(sym, args)                                                                \
    GT_ENTER_ANY(sym, cudaErrorSymbolNotFound, args);                                              \
    if (!(gt_hook_mode(&gt_hook_##sym) & gt_capture_mask()) || gt_tls.guard || gt_rt_current)      \
    return real_ args

/* The KEEP forms are for calls whose bookkeeping the shim needs whether or
 * not a capture window is open (allocations and frees for memory in use,
 * the calls that name kernels): they are recorded outside windows too, and
 * their records say so (GT_EVF_UNCAPTURED, call.c). */
#define GT_DRIVER_KEEP_ENTER(sym, args)                                                            \
    GT_ENTER_ANY(sym, CUDA_ERROR_NOT_FOUND, args);                                                 \
    if (!gt_hook_mode(&gt_hook_##sym) || gt_tls.guard) return real_ args
#define GT_RUNTIME_KEEP_ENTER(sym, args)                                                           \
    GT_ENTER_ANY(sym, cudaErrorSymbolNotFound, args);                                              \
    if (!gt_hook_mode(&gt_hook_##sym) || gt_tls.guard || gt_rt_current) return real_ args
#define GT_DRIVER_KEEP_HOOK GT_DRIVER_HOOK
#define GT_RUNTIME_KEEP_HOOK GT_RUNTIME_HOOK
#define GT_DRIVER_KEEP_CALL_THEN GT_DRIVER_CALL_THEN
#define GT_RUNTIME_KEEP_CALL_THEN GT_RUNTIME_CALL_THEN

/* One side of a copy, as the API names it. */
enum gt_side {
    GT_SIDE_DEVICE,  /* device memory or an array */
    GT_SIDE_HOST,    /* host memory: pageable, pinned or managed, asked at record time */
    GT_SIDE_UNIFIED, /* either: the pointer decides (cuMemcpy, cudaMemcpyDefault) */
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
    } copy; /* turned into u.copy when the copy is recorded */
    /* Set by the call code. */
    uint64_t t0; /* 0: not timed (it describes a runtime call) */
    gt_gpu_pair *pair;
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
    c->device = GT_NO_DEVICE;
    c->stream = NULL;
    c->bytes = 0;
    c->copy.src = c->copy.dst = NULL;
    c->copy.src_side = c->copy.dst_side = GT_SIDE_DEVICE;
    c->copy.peer = 0;
    c->copy.dims = 1;
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

/* The device of the calling thread's current context, GT_NO_DEVICE when
 * there is none. Asks the driver (remembered per thread and context). */
uint16_t gt_current_device(void);

static inline int gt_kind_is_gpu_work(unsigned kind)
{
    return kind == GT_EV_KERNEL || kind == GT_EV_GRAPH || kind == GT_EV_MEMCPY ||
           kind == GT_EV_MEMSET;
}

/* Whether the call's GPU work is bracketed by an event pair (`timed`: by
 * this wrapper itself, as driver wrappers do). */
static inline int gt_call_pairs(const gt_call *c, int timed)
{
    return timed && gt_kind_is_gpu_work(c->kind) && gt_cfg.gpu_timing != GT_GPU_TIMING_OFF &&
           (gt_hook_mode(c->hook) & GT_HOOK_WORK);
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
    /* The runtime's GPU work is timed by the driver wrappers under it. */
    c->pair = NULL;
    if (GT_UNLIKELY(gt_call_flushes(c))) gt_call_before_work(c, 0);
    c->t0 = gt_clock_ticks();
}

void gt_runtime_after(gt_call *c, gt_rt_detail *d, cudaError_t r);

/* Makes the call and returns its result. The _THEN forms run `then` after
 * the real call, with its result in r_, before the record is made: what
 * only the call's outcome tells (an allocation's address into c->u.mem, a
 * handle's name noted) goes there. */
#define GT_DRIVER_CALL_THEN(c, args, then)                                                         \
    do {                                                                                           \
        gt_driver_before(c);                                                                       \
        CUresult r_ = real_ args;                                                                  \
        then;                                                                                      \
        gt_driver_after(c, r_);                                                                    \
        return r_;                                                                                 \
    } while (0)
#define GT_DRIVER_CALL(c, args) GT_DRIVER_CALL_THEN(c, args, (void)0)

#define GT_RUNTIME_CALL_THEN(c, args, then)                                                        \
    do {                                                                                           \
        gt_rt_detail d_;                                                                           \
        gt_runtime_before(c, &d_);                                                                 \
        cudaError_t r_ = real_ args;                                                               \
        then;                                                                                      \
        gt_runtime_after(c, &d_, r_);                                                              \
        return r_;                                                                                 \
    } while (0)
#define GT_RUNTIME_CALL(c, args) GT_RUNTIME_CALL_THEN(c, args, (void)0)

/* A whole wrapper: `params` and `args` are the parenthesised parameter
 * list and argument list; the statements after them fill `c` (a gt_call
 * of `kind`) from the arguments. */
#define GT_WRAPPER_(level, ret, conv, sym, basename, cat, kind, params, args, then, ...)           \
    GT_##level##_HOOK(sym, basename, cat) GT_EXPORT ret conv sym params                            \
    {                                                                                              \
        GT_##level##_ENTER(sym, args);                                                             \
        gt_call c;                                                                                 \
        gt_call_init(&c, &GT_HOOK(sym), kind);                                                     \
        __VA_ARGS__;                                                                               \
        GT_##level##_CALL_THEN(&c, args, then);                                                    \
    }
#define GT_DRIVER_WRAPPER(sym, base, cat, kind, params, args, ...)                                 \
    GT_WRAPPER_(DRIVER, CUresult, CUDAAPI, sym, base, cat, kind, params, args, (void)0, __VA_ARGS__)
#define GT_RUNTIME_WRAPPER(sym, base, cat, kind, params, args, ...)                                \
    GT_WRAPPER_(RUNTIME, cudaError_t, CUDARTAPI, sym, base, cat, kind, params, args, (void)0,      \
                __VA_ARGS__)
/* Wrappers of calls that keep bookkeeping (the KEEP forms above). */
#define GT_DRIVER_KEEP_WRAPPER_THEN(sym, base, cat, kind, params, args, then, ...)                 \
    GT_WRAPPER_(DRIVER_KEEP, CUresult, CUDAAPI, sym, base, cat, kind, params, args, then,          \
                __VA_ARGS__)
#define GT_RUNTIME_KEEP_WRAPPER_THEN(sym, base, cat, kind, params, args, then, ...)                \
    GT_WRAPPER_(RUNTIME_KEEP, cudaError_t, CUDARTAPI, sym, base, cat, kind, params, args, then,    \
                __VA_ARGS__)
/* With a statement run after the real call (see GT_DRIVER_CALL_THEN). */
#define GT_DRIVER_WRAPPER_THEN(sym, base, cat, kind, params, args, then, ...)                      \
    GT_WRAPPER_(DRIVER, CUresult, CUDAAPI, sym, base, cat, kind, params, args, then, __VA_ARGS__)
#define GT_RUNTIME_WRAPPER_THEN(sym, base, cat, kind, params, args, then, ...)                     \
    GT_WRAPPER_(RUNTIME, cudaError_t, CUDARTAPI, sym, base, cat, kind, params, args, then,         \
                __VA_ARGS__)

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

/* Shim work (its own real CUDA calls) around `stmt`, never recorded. */
#define GT_SHIM_WORK(stmt)                                                                         \
    do {                                                                                           \
        int entered_ = gt_guard_enter();                                                           \
        stmt;                                                                                      \
        if (entered_) gt_guard_leave();                                                            \
    } while (0)

#endif
