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
 * process's active one (intercept/active_copy.c). With no real function
 * they return what gt_hook_unavailable says: in a process without CUDA,
 * CUDA's answer where there is no driver, quietly, without noting a use;
 * else the API's not-found error. GT_*_CALL keep errno, take the host time
 * around the real call only, bracket GPU work with an event pair
 * (gpu_time.h) and record one event, never touching the return code. A
 * runtime call and the driver call under it are recorded once (call.c). */
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
#include "clock.h"
#include "compiler.h"
#include "config.h"
#include "event.h"
#include "gpu_time.h"
#include "intercept.h"
#include "process.h"
#include "record.h"
#include "settings.h"

/* What a wrapper knows about its call, and the shared code around it. */
#include "call.h"

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
    if (GT_UNLIKELY(!real_))                                                                       \
        return gt_hook_unavailable(&gt_hook_##sym, (notfound), __builtin_return_address(0));       \
    if (GT_UNLIKELY(atomic_load_explicit(&gt_cuda_used, memory_order_relaxed) != GT_CUDA_USED) &&  \
        !gt_note_cuda_call_slow())                                                                 \
    return real_ args

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
    GT_##level##_HOOK(sym, basename, cat) GT_EXPORT GT_NO_STACK_PROTECTOR ret conv sym params      \
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

/* Shim work (its own real CUDA calls) around `stmt`, never recorded. */
#define GT_SHIM_WORK(stmt)                                                                         \
    do {                                                                                           \
        int entered_ = gt_guard_enter();                                                           \
        stmt;                                                                                      \
        if (entered_) gt_guard_leave();                                                            \
    } while (0)

#endif
