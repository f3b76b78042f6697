/* Wrappers of the compiler libraries (NVRTC, NVVM, nvJitLink): the
 * `compile` category. Their calls do no GPU work and are never made under
 * a runtime call, and their statuses are the libraries' own types, so they
 * are recorded here rather than by call.c: the host time around the real
 * call, the status, and for a failure the library's name for it.
 *
 *     GT_COMPILER_WRAPPER_THEN(nvrtcResult, nvrtcCompileProgram, nvrtcCompileProgram,
 *                              GT_EV_COMPILE, (nvrtcProgram p, int n, const char *const *o),
 *                              (p, n, o), NVRTC_ERROR_INTERNAL_ERROR, rtc_status_name,
 *                              (void)0, describe(&c, p), c.options = (uint32_t)n)
 *
 * that is: the status type, exported name, base name, record kind
 * (GT_EV_COMPILE for a compilation, GT_EV_API for the calls around it),
 * parameters, arguments, the status returned when the library has no such
 * function, the namer of failed statuses, a statement run after the real
 * call (its status in r_) before the record is made, then statements that
 * fill `c` before the call. Real functions are found as for the runtime,
 * or adopted from the program's dlsym (intercept.h, GT_LIB_COMPILER). */
#ifndef GT_SHIM_HOOKS_COMPILE_H
#define GT_SHIM_HOOKS_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "compiler.h"
#include "event.h"
#include "handles.h"
#include "hook.h"
#include "intercept.h"
#include "record.h"

typedef struct gt_compile_call {
    gt_hook *hook;
    uint8_t kind;     /* GT_EV_COMPILE or GT_EV_API */
    uint32_t name;    /* string id of the program's name; 0 = none */
    uint64_t bytes;   /* input size; for a size query, the size answered */
    uint32_t inputs;  /* modules or inputs */
    uint32_t options; /* option count */
    uint32_t first;   /* the first record of this program or link */
    uint32_t functions; /* string id: its device functions, a line each; 0 = none */
    int saved_errno;
    uint64_t t0;
} gt_compile_call;

/* The library's name of a failed `status` (real: the real function called,
 * whose library knows its own names), else one written into buf. */
typedef const char *(*gt_status_namer)(int status, const void *real, char *buf, size_t size);

/* Starts the call's description (keeping errno). */
void gt_compile_init(gt_compile_call *c, gt_hook *h, enum gt_event_kind kind);

/* Right before the real call: errno as the program left it, the start time. */
void gt_compile_before(gt_compile_call *c);

/* Records the call, ended at t1 with `status`. */
void gt_compile_after(const gt_compile_call *c, uint64_t t1, int status, gt_status_namer namer,
                      const void *real);

/* A namer's work for a library that names its own statuses with
 * `const char *fn(status)`: asks `fn` of the library `real` is in, else
 * writes "type(status)" into buf. */
const char *gt_compile_status_name(const void *real, const char *fn, const char *type, int status,
                                   char *buf, size_t size);

/* An option count as a record keeps it. */
static inline uint32_t gt_compile_options(int n)
{
    return n > 0 ? (uint32_t)n : 0;
}

/* The string id of `s` (0 for NULL or without memory). */
uint32_t gt_compile_intern(const char *s);

/* A program's or link's inputs, kept in a handle table (handles.h) from
 * the calls that add them to the compilation: name = the first named
 * input's (or the program's own), bytes and count = the inputs', options
 * = the options given at creation. */
struct gt_handle_table;
void gt_compile_add_input(struct gt_handle_table *t, const void *handle, uint64_t bytes,
                          const char *name);

/* An input whose code is in memory (NVVM modules, nvJitLink data), as
 * gt_compile_add_input, and the functions it defines (code_functions.c):
 * the first one defined, when no input is named, names the compilation
 * (Numba's modules have empty names and the kernel's comes first), the
 * others are its device functions (and further kernels), kept as one
 * string id of names a line each (gt_handle_info.other). */
void gt_compile_add_code(struct gt_handle_table *t, const void *handle, const void *code,
                         uint64_t bytes, const char *name);

/* Calls fn for each function the code (LLVM IR text or PTX) defines, in
 * order, with its mangled name (not NUL-terminated) and whether it is a
 * PTX entry; stops when fn returns false. Binary code defines none. */
typedef bool (*gt_code_function_fn)(void *ctx, const char *name, size_t len, bool entry);
void gt_code_functions(const void *code, size_t size, gt_code_function_fn fn, void *ctx);

/* The record of a compilation of `handle`: its name, inputs and options,
 * and whether it is the first of that handle (a program verified, then
 * compiled, is one program). */
void gt_compile_describe(gt_compile_call *c, struct gt_handle_table *t, const void *handle);

/* `handle` was destroyed. */
void gt_compile_forget(struct gt_handle_table *t, const void *handle);

#define GT_COMPILER_WRAPPER_THEN(ret, sym, base, kind, params, args, notfound, namer, then, ...)   \
    GT_COMPILER_HOOK(sym, base, GT_CAT_COMPILE)                                                    \
    GT_EXPORT ret sym params                                                                       \
    {                                                                                              \
        GT_ENTER_ANY(sym, notfound, args);                                                         \
        if (!gt_hook_mode(&GT_HOOK(sym)) || gt_tls.guard) return real_ args;                       \
        gt_compile_call c;                                                                         \
        gt_compile_init(&c, &GT_HOOK(sym), kind);                                                  \
        __VA_ARGS__;                                                                               \
        gt_compile_before(&c);                                                                     \
        ret r_ = real_ args;                                                                       \
        uint64_t t1_ = gt_clock_ticks();                                                           \
        int errno_ = errno;                                                                        \
        then;                                                                                      \
        gt_compile_after(&c, t1_, (int)r_, namer, (const void *)real_);                            \
        errno = errno_;                                                                            \
        return r_;                                                                                 \
    }

#endif
