/* dlsym interposition (DESIGN §2, §3).
 *
 * Programs that load the driver themselves (and the CUDA runtime, static or
 * shared) find its entry points with dlsym(handle, "cuX"). The shim's dlsym
 * asks glibc's, and when the answer is libcuda.so.1's own export of a name
 * the shim wraps, returns that variant's wrapper instead; the runtime's
 * exports likewise when the answer is the definition the shim's runtime
 * wrappers call. A compiler library's function (NVRTC, NVVM, nvJitLink)
 * found in a library the program opened itself becomes the wrapper's real
 * function (gt_hook_adopt), so Python packages that dlopen NVRTC are seen.
 * Anything else is glibc's answer, untouched. "glibc's" is the next dlsym
 * in the chain of interposers (resolve.c): a tool preloaded after the shim
 * that interposes dlsym too sees every lookup.
 *
 * Exported under both symbol versions programs link against: GLIBC_2.34
 * (glibc 2.34 moved dlsym into libc) and the architecture's first glibc
 * version (older programs, dlsym from libdl). See gputrace.map.in.
 *
 * A process without CUDA of its own (no driver loaded, no runtime, no
 * compiler library) must not find CUDA through the library's exports: a
 * lookup that lands on one of them answers what it answers without the
 * library, the next definition past it (none: NULL, with dlerror() saying
 * so), as a program that looks for CUDA to choose its path expects.
 *
 * glibc's dlsym looks at its caller for RTLD_NEXT (the next object after
 * the caller) and for RTLD_DEFAULT (the caller's scope). So the entry
 * points hand those lookups to glibc as tail calls, and the caller glibc
 * sees stays the program's: the functions are always optimised for that,
 * whatever the build type. Only a "cu", "nv" or "__nv" name with a real
 * handle goes through the shim's own code, and one with RTLD_DEFAULT when
 * it is the name of an export of the library whose CUDA library is
 * absent.
 *
 * A lookup of a Python extension module's init function (PyInit_*) is
 * told to the call-site layer before glibc answers it: the interpreter has
 * just loaded the module (python_gil.h). A lookup in a library handle does
 * not depend on its caller, so this costs the tail call nothing.
 *
 * One library the shim loaded for itself, libcupti, finds the driver with
 * dlsym too: its lookups get glibc's answer (gt_dlsym_private), so that
 * its own CUDA calls never reach the wrappers and are never recorded. */
#include "active_copy.h"
#include "compiler.h"
#include "log.h"
#include "intercept.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <errno.h>
#include <stddef.h>

/* The load address of the library whose lookups get glibc's answer; NULL
 * when none. Release by the setter, acquire here. */
static _Atomic(const void *) private_base;

void gt_dlsym_private(const void *base)
{
    atomic_store_explicit(&private_base, base, memory_order_release);
}

static int from_private(const void *caller)
{
    const void *base = atomic_load_explicit(&private_base, memory_order_acquire);
    if (!base) return 0;
    Dl_info info;
    return dladdr(caller, &info) && info.dli_fbase == base;
}

int gt_dlsym_caller_private(const void *caller)
{
    return from_private(caller);
}

static void (*_Atomic on_extension)(void);

void gt_dlsym_on_extension(void (*fn)(void))
{
    atomic_store_explicit(&on_extension, fn, memory_order_release);
}

static inline int extension_init(void *handle, const char *name)
{
    return handle != RTLD_NEXT && handle != RTLD_DEFAULT && name && name[0] == 'P' &&
           name[1] == 'y' && name[2] == 'I' && name[3] == 'n' && name[4] == 'i' && name[5] == 't' &&
           name[6] == '_';
}

static __attribute__((noinline)) void extension_loaded(void)
{
    void (*fn)(void) = atomic_load_explicit(&on_extension, memory_order_acquire);
    if (!fn) return;
    int saved = errno;
    fn();
    errno = saved;
}

/* The definition of `name` past this copy of the library in the global
 * scope: what a lookup that found this copy's export finds without it.
 * When there is none, glibc's error stays for dlerror(). Not a tail call:
 * glibc takes this function as the caller. */
static __attribute__((noinline)) void *past_this_copy(const char *name)
{
    gt_dlsym_fn libc = gt_libc_dlsym();
    void *p = libc ? libc(RTLD_NEXT, name) : NULL;
    return gt_copy_skip(p, name);
}

/* The lookup, for a name that may be a CUDA entry point. */
static __attribute__((noinline)) void *lookup(gt_dlsym_fn real, void *handle, const char *name,
                                              const void *caller)
{
    void *found = real(handle, name);
    /* glibc's error stays for dlerror(); an inactive copy hands out no
     * wrapper (active_copy.c). */
    if (!found || !gt_copy_active() || from_private(caller)) return found;
    gt_hook *h = gt_hook_find(name);
    if (!h) return found;
    int saved = errno;
    if (found == h->wrapper && gt_hook_absent(h, caller)) {
        errno = saved;
        return past_this_copy(name);
    }
    void *mine = NULL;
    /* A driver name is compared with libcuda.so.1's own export; the shim
     * never loads the driver for this: if it is not loaded, `found` is not
     * the driver's. */
    if (h->lib == GT_LIB_COMPILER)
        mine = gt_hook_adopt(h, found);
    else if (h->lib != GT_LIB_DRIVER || gt_cuda_real_loaded(name))
        mine = gt_hook_global(h);
    void *answer = mine == found ? h->wrapper : found;
    if (gt_log_debug_enabled())
        gt_debug("dlsym(%s) -> %s", name,
                 answer == found ? "passed through (not the CUDA library's)" : "hooked");
    /* The lookups above may have left a failure in dlerror(); the program's
     * own lookup succeeded, and dlerror() must say so. */
    dlerror();
    errno = saved;
    return answer;
}

/* Driver and runtime names start with "cu"; NVRTC, NVVM and nvJitLink
 * names with "nv", nvJitLink's versioned ones with "__nv". */
static inline int maybe_cuda(void *handle, const char *name)
{
    if (handle == RTLD_NEXT || handle == RTLD_DEFAULT || !name) return 0;
    if (name[0] == '_' && name[1] == '_' && name[2] == 'n' && name[3] == 'v') return 1;
    return (name[0] == 'c' && name[1] == 'u') || (name[0] == 'n' && name[1] == 'v');
}

/* An RTLD_DEFAULT lookup of one of this copy's exports whose CUDA library
 * the process lacks, as `caller` sees it: what it finds without the
 * library. */
static __attribute__((noinline)) int default_absent(const char *name, const void *caller)
{
    if (!name || !((name[0] == 'c' && name[1] == 'u') || (name[0] == 'n' && name[1] == 'v') ||
                   (name[0] == '_' && name[1] == '_' && name[2] == 'n' && name[3] == 'v')))
        return 0;
    gt_hook *h = gt_copy_active() ? gt_hook_find(name) : NULL;
    int saved = errno;
    int absent = h && gt_hook_absent(h, caller);
    errno = saved;
    return absent;
}

/* The lookup glibc makes for the program, from the shim: a definition that
 * comes before this copy (the program's own) still wins. */
static __attribute__((noinline)) void *default_bare(gt_dlsym_fn real, const char *name)
{
    void *found = real(RTLD_DEFAULT, name);
    gt_hook *h = gt_hook_find(name);
    return found && h && found != h->wrapper ? found : past_this_copy(name);
}

/* Both versions: `optimize` keeps the glibc calls tail calls (see above). */
#define GT_DLSYM_ENTRY(fn)                                                                         \
    __attribute__((visibility("default"), optimize("O2"))) void *fn(void *handle,                  \
                                                                    const char *name)              \
    {                                                                                              \
        gt_dlsym_fn real = gt_real_dlsym();                                                        \
        if (GT_UNLIKELY(!real)) return NULL;                                                       \
        if (GT_LIKELY(!maybe_cuda(handle, name))) {                                                \
            if (GT_UNLIKELY(handle == RTLD_DEFAULT &&                                              \
                            default_absent(name, __builtin_return_address(0))))                    \
                return default_bare(real, name);                                                   \
            if (GT_UNLIKELY(extension_init(handle, name))) extension_loaded();                     \
            return real(handle, name);                                                             \
        }                                                                                          \
        return lookup(real, handle, name, __builtin_return_address(0));                            \
    }

void *gt_dlsym_current(void *handle, const char *name);
void *gt_dlsym_base(void *handle, const char *name);
__asm__(".symver gt_dlsym_current, dlsym@@GLIBC_2.34");
__asm__(".symver gt_dlsym_base, dlsym@" GT_GLIBC_BASE_VERSION);
GT_DLSYM_ENTRY(gt_dlsym_current)
GT_DLSYM_ENTRY(gt_dlsym_base)
