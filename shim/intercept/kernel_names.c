/* Kernel names (DESIGN §4).
 *
 * A launch names its kernel by handle. The cache maps a handle to the
 * string id of its demangled name, tagged with the generation it was found
 * in; an unload starts a new generation, so that a handle reused by other
 * code is looked up again. The slow path asks the driver (cuFuncGetName,
 * cuKernelGetName: CUDA 12.3+), else uses the name noted when the handle
 * was obtained (cuModuleGetFunction, cuLibraryGetKernel,
 * cuKernelGetFunction) or registered (__cudaRegisterFunction: host stub ->
 * device name). Demangling uses the program's own __cxa_demangle, found at
 * run time: every C++ program has one; a C program keeps mangled names. */
#include "process.h"
#include "compiler.h"
#include "log.h"
#include "record.h"
#include "strtab.h"
#include "intercept.h"
#include "ptrmap.h"
#include "resolve.h"

#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What a noted handle is: the driver query that fits it. */
enum handle_tag { TAG_NONE, TAG_FUNCTION, TAG_KERNEL, TAG_STUB };

GT_PTRMAP_DEFINE(name_cache, 14); /* handle -> generation << 32 | demangled name id */
GT_PTRMAP_DEFINE(noted, 15);      /* handle -> tag << 32 | mangled name id */

/* Starts at 1 so that a cached value is never 0 (the map's "absent").
 * Release by the unloader, acquire by readers. */
static _Atomic uint32_t generation = 1;

typedef CUresult (*name_query_fn)(const char **name, void *handle);
typedef char *(*demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static demangle_fn demangler; /* written once under pthread_once */

static uint32_t intern(const char *s)
{
    gt_strtab *t = gt_names();
    return t && s ? gt_strtab_intern(t, s, strlen(s)) : 0;
}

/* The program's own demangler (every C++ program has one), else the
 * system's C++ library's, loaded privately: a C program's kernels would
 * otherwise keep their mangled names. */
static demangle_fn find_demangler(void)
{
    gt_dlsym_fn lookup = gt_libc_dlsym(); /* RTLD_DEFAULT: the shim's scope */
    if (!lookup) return NULL;
    void *fn = lookup(RTLD_DEFAULT, "__cxa_demangle");
    if (!fn) {
        void *cxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        fn = cxx ? lookup(cxx, "__cxa_demangle") : NULL;
        gt_debug("demangling with %s",
                 fn ? "libstdc++.so.6, loaded for it" : "nothing: names stay mangled");
    }
    return (demangle_fn)fn;
}

static void set_demangler(void)
{
    demangler = find_demangler();
}

static uint32_t demangled_id(const char *mangled)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (mangled[0] != '_' || mangled[1] != 'Z') return intern(mangled);
    pthread_once(&once, set_demangler);
    int status = -1;
    char *plain = demangler ? demangler(mangled, NULL, NULL, &status) : NULL;
    uint32_t id = intern(status == 0 && plain ? plain : mangled);
    free(plain);
    return id;
}

static gt_real_cache func_name_query, kernel_name_query;

/* The driver's name for a handle, NULL when it cannot say. */
static const char *driver_name(uint64_t handle, enum handle_tag tag)
{
    const char *name = NULL;
    name_query_fn by_func = (name_query_fn)gt_cuda_real_once(&func_name_query, "cuFuncGetName");
    name_query_fn by_kernel =
        (name_query_fn)gt_cuda_real_once(&kernel_name_query, "cuKernelGetName");
    void *h = (void *)(uintptr_t)handle;
    if (tag == TAG_KERNEL) {
        if (by_kernel && by_kernel(&name, h) == CUDA_SUCCESS) return name;
        return NULL;
    }
    if (by_func && by_func(&name, h) == CUDA_SUCCESS) return name;
    /* A CUkernel the shim did not see being obtained, passed as a CUfunction. */
    if (tag == TAG_NONE && by_kernel && by_kernel(&name, h) == CUDA_SUCCESS) return name;
    return NULL;
}

static __attribute__((noinline)) uint32_t name_slow(uint64_t handle, uint32_t gen)
{
    int entered = gt_guard_enter();
    uint64_t note = gt_ptrmap_get(&noted, handle);
    const char *mangled = driver_name(handle, (enum handle_tag)(note >> 32));
    gt_strtab *t = gt_names();
    if (!mangled && note && t) mangled = gt_strtab_get(t, (uint32_t)note);
    uint32_t id = mangled && mangled[0] ? demangled_id(mangled) : 0;
    gt_ptrmap_put(&name_cache, handle, (uint64_t)gen << 32 | id);
    if (entered) gt_guard_leave();
    return id;
}

uint32_t gt_kernel_name(uint64_t handle)
{
    if (!handle) return 0;
    uint32_t gen = atomic_load_explicit(&generation, memory_order_acquire);
    uint64_t v = gt_ptrmap_get(&name_cache, handle);
    if (GT_LIKELY(v && (uint32_t)(v >> 32) == gen)) return (uint32_t)v;
    return name_slow(handle, gen);
}

static void note(uint64_t handle, enum handle_tag tag, const char *mangled)
{
    if (!handle || !mangled) return;
    uint32_t id = intern(mangled);
    if (id) gt_ptrmap_put(&noted, handle, (uint64_t)tag << 32 | id);
}

void gt_kernel_name_note_function(uint64_t func, const char *mangled)
{
    note(func, TAG_FUNCTION, mangled);
}

void gt_kernel_name_note_kernel(uint64_t kernel, const char *mangled)
{
    note(kernel, TAG_KERNEL, mangled);
}

void gt_kernel_name_note_stub(uint64_t stub, const char *mangled)
{
    note(stub, TAG_STUB, mangled);
}

void gt_kernel_name_alias(uint64_t func, uint64_t kernel)
{
    uint64_t v = gt_ptrmap_get(&noted, kernel);
    if (func && v) gt_ptrmap_put(&noted, func, (uint64_t)TAG_FUNCTION << 32 | (uint32_t)v);
}

uint32_t gt_kernel_stub_name(uint64_t stub)
{
    uint64_t v = gt_ptrmap_get(&noted, stub);
    gt_strtab *t = gt_names();
    if (!v || (v >> 32) != TAG_STUB || !t) return 0;
    return demangled_id(gt_strtab_get(t, (uint32_t)v));
}

void gt_kernel_names_invalidate(void)
{
    atomic_fetch_add_explicit(&generation, 1, memory_order_release);
}

uint32_t gt_kernel_name_of_mangled(const char *mangled)
{
    return mangled && mangled[0] ? demangled_id(mangled) : 0;
}
