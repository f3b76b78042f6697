/* Interception internals shared by the files of shim/ and shim/hooks/: the
 * hook registry, the real dlsym, kernel names, host memory kinds, the
 * runtime error names. The wrappers themselves use hooks/hook.h on top of
 * this.
 *
 * How a program's call reaches a wrapper (DESIGN §2, §3):
 *   - linked against libcuda.so.1 / libcudart.so.13 (or NVRTC, NVVM,
 *     nvJitLink): the loader binds the program's reference to the shim's
 *     export of the same name;
 *   - dlsym(handle, "cuX"): dlsym.c hands back the wrapper of exactly the
 *     variant named, when the real answer is the driver's own export (for
 *     a compiler library, when it is the function the wrapper calls);
 *   - cuGetProcAddress(_v2): hooks/drv_get_proc_address.c asks the real driver, finds which
 *     exported variant the answer is, and hands back that variant's wrapper.
 * Every wrapper is one registry entry (gt_hook); the wrapper and the three
 * paths share it. */
#ifndef GT_SHIM_INTERCEPT_H
#define GT_SHIM_INTERCEPT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

/* ------------------------------------------------------- hook_registry.c */

enum gt_hook_lib {
    GT_LIB_DRIVER,  /* real function: libcuda.so.1's export (gt_cuda_real) */
    GT_LIB_RUNTIME, /* real function: the next definition after the shim (RTLD_NEXT) */
    /* NVRTC, NVVM, nvJitLink: found as the runtime's are, or, when the
     * program opened the library itself and took the function with dlsym
     * (as Python packages do), the function dlsym found (gt_hook_adopt). */
    GT_LIB_COMPILER,
};

/* Mode bits, fixed when the hook is first resolved (from gt_cfg). A hook
 * with neither bit set calls the real function and returns. */
#define GT_HOOK_API 0x1u  /* the `api` category is on: record the call */
#define GT_HOOK_WORK 0x2u /* the hook's own category is on: time and describe its work */
/* GPUTRACE_CHECKSUM needs the call (a copy or a synchronize, hooks/call.c):
 * entered whatever the categories, recorded only with one of the others. */
#define GT_HOOK_CHECKSUM 0x4u

/* `real` before resolution; after it, when no library has the name; and,
 * for a runtime function not in the global scope, when the definition
 * depends on the caller (below). */
#define GT_HOOK_UNRESOLVED ((void *)0)
#define GT_HOOK_MISSING ((void *)1)
#define GT_HOOK_PER_CALLER ((void *)2)

typedef struct gt_hook {
    const char *name; /* exported symbol, exactly one variant: "cuMemcpyHtoD_v2_ptds" */
    const char *base; /* the name programs write, and the api name: "cuMemcpyHtoD" */
    void *wrapper;    /* the shim's function of that name */
    uint8_t lib;      /* enum gt_hook_lib */
    uint8_t category; /* enum gt_category of its work; GT_CAT_API when it has none */
    uint16_t id;      /* 1 + its index in the registry (set when the registry is built) */
    /* Written (relaxed) before `real` is published (release); read after
     * `real` was loaded with acquire. Every resolver writes the same values. */
    _Atomic uint8_t mode;
    _Atomic uint8_t per_thread; /* a _ptsz/_ptds variant (gt_hook_is_per_thread) */
    _Atomic uint8_t warned;     /* the missing-symbol warning was given (exchange, relaxed) */
    _Atomic uint32_t api;       /* string id of `base` */
    _Atomic(void *) real;       /* store-release once resolved; load-acquire */
} gt_hook;

/* Wrappers register themselves in the `gt_hooks` section (hooks/hook.h):
 * the registry needs no list kept by hand. */
#define GT_HOOK_SECTION "gt_hooks"

/* Slow path of gt_hook_real: resolves the real function, the api id and
 * the mode. Returns NULL (and warns once) when no library has it. */
void *gt_hook_resolve(gt_hook *h, const void *caller);

/* The real function a wrapper calls for a call from `caller` (its return
 * address). Driver functions are libcuda.so.1's. A runtime function is the
 * first definition after the shim in the global scope, as the loader would
 * have bound the call without the shim; when the global scope has none
 * (the runtime was loaded by a library opened with RTLD_LOCAL, as Python
 * extensions are), the one the caller's own library sees. */
static inline void *gt_hook_real(gt_hook *h, const void *caller)
{
    void *p = atomic_load_explicit(&h->real, memory_order_acquire);
    if (__builtin_expect((uintptr_t)p > (uintptr_t)GT_HOOK_PER_CALLER, 1)) return p;
    return gt_hook_resolve(h, caller);
}

/* The real function for every caller alike; NULL when there is none or it
 * depends on the caller (dlsym and cuGetProcAddress compare with it). */
void *gt_hook_global(gt_hook *h);

/* Whether the process has no library that could define h for `caller`
 * (NULL: any): no libcuda.so.1 loaded for a driver function, no CUDA
 * runtime for a runtime one, no definition at all for a compiler
 * library's. Such a process is one without CUDA: the shim loads nothing
 * for it and answers as CUDA does where there is no driver. */
int gt_hook_absent(gt_hook *h, const void *caller);

/* What a wrapper with no real function returns: where h's library is
 * absent, what CUDA answers on a machine without a driver (the runtime
 * cudaErrorInsufficientDriver; cuInit CUDA_ERROR_NO_DEVICE, the rest of
 * the driver CUDA_ERROR_NOT_INITIALIZED; a compiler library's `notfound`),
 * quietly; else `notfound`, with one warning. */
int gt_hook_unavailable(gt_hook *h, int notfound, const void *caller);

/* A compiler library's function `fn` that dlsym found for the program:
 * becomes the hook's real function for every caller when the global scope
 * has none (one copy of each library per process is assumed: the first
 * adopted stays). Returns the hook's real function for every caller, so
 * that dlsym hands out the wrapper only when it calls `fn`. */
void *gt_hook_adopt(gt_hook *h, void *fn);

static inline unsigned gt_hook_mode(const gt_hook *h)
{
    return atomic_load_explicit(&h->mode, memory_order_relaxed);
}

/* Per-thread-default-stream variant; like mode, valid once resolved. */
static inline int gt_hook_per_thread(const gt_hook *h)
{
    return atomic_load_explicit(&h->per_thread, memory_order_relaxed);
}

static inline uint32_t gt_hook_api(const gt_hook *h)
{
    return atomic_load_explicit(&h->api, memory_order_relaxed);
}

/* The hook of exactly this exported name, NULL when none. */
gt_hook *gt_hook_find(const char *name);

/* The hooks whose base name is `base` (every variant the shim wraps), as a
 * pointer to the first and their number; NULL, 0 when none. */
gt_hook *const *gt_hook_variants(const char *base, size_t *n);

/* Every registered hook, sorted by name. */
gt_hook *const *gt_hook_all(size_t *n);

/* True for the name of a per-thread-default-stream variant (_ptsz/_ptds). */
int gt_hook_is_per_thread(const gt_hook *h);

/* --------------------------------------------------------------- resolve.c
 * (gt_cuda_real is in resolve.h.) */

typedef void *(*gt_dlsym_fn)(void *handle, const char *name);

/* glibc's own dlsym: for lookups that depend on the caller (RTLD_NEXT,
 * RTLD_DEFAULT), called from the shim's code so that the shim is the caller. */
gt_dlsym_fn gt_libc_dlsym(void);

/* The next dlsym in the chain of interposers after this copy (another
 * tool's, else glibc's); never the shim's own or another copy's. */
gt_dlsym_fn gt_real_dlsym(void);

/* Lookups made by code of the library loaded at `base` (libcupti, which
 * the shim loads for itself) get glibc's answer, never a wrapper. */
void gt_dlsym_private(const void *base);
/* Whether code at `caller` is that library's. */
int gt_dlsym_caller_private(const void *caller);

/* Called, once set, on each lookup of a Python extension module's init
 * function (PyInit_*, in a library handle): the interpreter loaded the
 * module and has not run any of its code yet (python_gil.h routes its GIL
 * releases then). Set at load, by the call-site layer. */
void gt_dlsym_on_extension(void (*fn)(void));

/* The definition of `name` after this copy in the global scope (RTLD_NEXT),
 * past any other copy of libgputrace.so; NULL when none. */
void *gt_next_symbol(const char *name);

/* The definition of `name` in the object holding `addr` itself, not in its
 * dependencies; NULL when none. Never enters the loader (elf_symbol.c). */
void *gt_object_own_symbol(const void *addr, const char *name);

/* elf_symbol.c: the definition of `name` in `map`'s own dynamic symbol
 * table, of `version` (any when NULL); NULL when none (or map is NULL). */
struct link_map;
void *gt_elf_symbol(const struct link_map *map, const char *name, const char *version);

/* strcmp(a, b) == 0 without the C library's strcmp (elf_symbol.c says why). */
int gt_same_string(const char *a, const char *b);

/* Like gt_cuda_real, but NULL when the program has not loaded libcuda.so.1
 * (never loads it). */
void *gt_cuda_real_loaded(const char *symbol);

/* Whether the process has loaded libcuda.so.1 (the shim never loads it for
 * the program's calls); whether a CUDA runtime is there for `caller` (in
 * the global scope after the shim, or in the scope of caller's object).
 * Both leave dlerror() clear. */
int gt_cuda_driver_loaded(void);
int gt_cuda_runtime_visible(const void *caller);

/* A driver function the shim calls itself, looked up once. */
typedef struct gt_real_cache {
    _Atomic(void *) fn; /* relaxed: every finder stores the same pointer */
    _Atomic int done;   /* store-release after fn; load-acquire */
} gt_real_cache;

void *gt_cuda_real_fill(gt_real_cache *c, const char *symbol);

/* The definition of `name` that the object holding `addr` sees (itself,
 * then its dependencies); NULL when none. *object receives the object's
 * file name (NULL when `addr` is in none). Leaves dlerror() clear. */
void *gt_object_symbol(const void *addr, const char *name, const char **object);

/* gt_cuda_real(symbol), remembered in *c (NULL when the driver lacks it). */
static inline void *gt_cuda_real_once(gt_real_cache *c, const char *symbol)
{
    if (__builtin_expect(atomic_load_explicit(&c->done, memory_order_acquire), 1))
        return atomic_load_explicit(&c->fn, memory_order_relaxed);
    return gt_cuda_real_fill(c, symbol);
}

/* ---------------------------------------------------------------- copies.c */

/* `p`, or, when `p` is in another copy of libgputrace.so, the definition
 * of `name` after that copy (and after every copy that follows). */
void *gt_copy_skip(void *p, const char *name);

/* ----------------------------------------------------------------- names.c
 * Kernel names (DESIGN §4): handle (CUfunction, CUkernel, host stub) ->
 * string id of the demangled name. */

/* Lock-free lookup; the first launch of a handle (and the first after a
 * module or library unload) takes the slow path, which asks the driver
 * (cuFuncGetName, cuKernelGetName) or the names noted below. 0 = unknown. */
uint32_t gt_kernel_name(uint64_t handle);

/* Names seen where handles are obtained, for drivers without the name
 * queries: cuModuleGetFunction (a CUfunction), cuLibraryGetKernel (a
 * CUkernel), __cudaRegisterFunction (a host stub). `mangled` is copied. */
void gt_kernel_name_note_function(uint64_t func, const char *mangled);
/* The string id of a kernel's demangled name, from its mangled one (CUPTI's
 * record of a graph's kernel node names it so). */
uint32_t gt_kernel_name_of_mangled(const char *mangled);
void gt_kernel_name_note_kernel(uint64_t kernel, const char *mangled);
void gt_kernel_name_note_stub(uint64_t stub, const char *mangled);

/* cuKernelGetFunction: `func` has the name of `kernel`. */
void gt_kernel_name_alias(uint64_t func, uint64_t kernel);

/* The registered name of a host stub (a runtime launch that never reached
 * the driver); 0 when unknown. Never asks the driver. */
uint32_t gt_kernel_stub_name(uint64_t stub);

/* A module or library was unloaded: its handles may come back for other
 * code, so every cached name is looked up again. */
void gt_kernel_names_invalidate(void);

/* --------------------------------------------------------------- hostmem.c
 * Where a pointer's memory lives, as a copy's host side sees it: the
 * registry of page-locked and managed host ranges the allocation hooks
 * feed (hostmem_registry.h), the driver only for pointers it cannot know. */

/* GT_HOST_NONE for device memory, else the kind of host memory (managed
 * memory counts as host memory). A registry lookup, lock-free; a pointer
 * outside every known range is asked of the real driver once per page and
 * registry version: never from the drain thread. Keeps errno. */
enum gt_host_mem gt_host_mem_kind(const void *ptr);

/* Whether copies are classified (the memcpy category is on): the hooks
 * keep the registry only then, whatever else is recorded. */
int gt_host_mem_tracking(void);

/* [start, start + bytes) became page-locked (GT_HOST_PINNED) or managed
 * (GT_HOST_MANAGED) memory; the range starting at `start` was freed or
 * unregistered (unknown starts are ignored). */
void gt_host_mem_note(const void *start, uint64_t bytes, enum gt_host_mem kind);
void gt_host_mem_forget(const void *start);
/* A context ended: the page-locked and managed memory allocated or
 * registered in it went with it, and its addresses may be handed out again
 * as pageable memory. Every range is forgotten (the registry does not know
 * contexts): copies from memory of the contexts left ask the driver once
 * per page instead. */
void gt_host_mem_context_ended(void);

/* -------------------------------------------------------------- errnames.c */

/* The generated table of cudaError_t names (cmake/cuda_errors.py), sorted by code. */
struct gt_named_code {
    int code;
    const char *name;
};
extern const struct gt_named_code gt_runtime_errors[];
extern const size_t gt_runtime_errors_len;

/* "cudaErrorInvalidValue" for a cudaError_t, NULL when unknown. */
const char *gt_runtime_error_name(int code);

/* The interned name of a failed record's status ("CUDA_ERROR_INVALID_VALUE",
 * "cudaErrorMemoryAllocation", "CUresult(999)"); 0 without memory. For the
 * report's consumer (init.c gives it to collect.c); draining thread. */
uint32_t gt_error_name_id(const gt_event *ev);

#endif
