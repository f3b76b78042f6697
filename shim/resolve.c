/* Finding the real entry points (DESIGN §3).
 *
 * The shim exports dlsym itself (dlsym.c), so nothing here may call the
 * plain name: a call from inside the shim would bind to the shim's own
 * definition. Three dlsyms matter:
 *   - glibc's own (gt_libc_dlsym), taken from the C library's handle with
 *     dlvsym, which the shim does not interpose. Lookups whose answer
 *     depends on the caller (RTLD_NEXT, RTLD_DEFAULT) go to it directly
 *     from the shim's code, so glibc sees the shim as the caller;
 *   - the next one in the chain of interposers (gt_real_dlsym): another
 *     tool preloaded after the shim that interposes dlsym too (GPU-sharing
 *     layers do) sees every lookup the shim passes on, as it would without
 *     the shim. glibc's dlvsym(RTLD_NEXT, "dlsym", version) cannot find
 *     such a tool's plain, unversioned dlsym (a versioned lookup accepts an
 *     unversioned definition only in an object without symbol versions), so
 *     it is found with glibc's dlsym(RTLD_NEXT, "dlsym"), which takes each
 *     object's default version;
 *   - never another copy of libgputrace.so (copies.c): lookups step past
 *     those to what follows them.
 * Driver symbols are looked up in libcuda.so.1's own handle, so the answer
 * is the driver's export (or what a tool after the shim makes of it) even
 * though the shim exports the same names ahead of it. */
#include "internal.h"
#include "intercept.h"
#include "resolve.h"

#include <dlfcn.h>
#include <gnu/lib-names.h>
#include <link.h>

#define GT_DRIVER_SONAME "libcuda.so.1"

/* Release-stored once found; any thread may find them again (same values). */
static _Atomic(gt_dlsym_fn) libc_dlsym;
static _Atomic(gt_dlsym_fn) real_dlsym;
static _Atomic(void *) cuda_handle;

/* A glibc function by its two versions, the newest first (on glibc 2.34+
 * both are one function), in `handle`. */
static void *glibc_function(void *handle, const char *name)
{
    void *p = dlvsym(handle, name, "GLIBC_2.34");
    return p ? p : dlvsym(handle, name, GT_GLIBC_BASE_VERSION);
}

/* The shim opens and closes objects with the dlopen and dlclose that come
 * after it, never with a tool's loaded before it: a sanitizer runtime
 * intercepts them, and its interceptors do not work yet while it looks
 * its own functions up with dlsym - the shim's - as it starts. */
typedef void *(*dlopen_fn)(const char *file, int mode);
typedef int (*dlclose_fn)(void *handle);
static _Atomic(dlopen_fn) next_dlopen;
static _Atomic(dlclose_fn) next_dlclose;

/* A handle on the loaded object `file` (NULL: the global scope), NULL when
 * it is not loaded; close it with close_loaded. */
static void *open_loaded(const char *file)
{
    dlopen_fn open_fn = atomic_load_explicit(&next_dlopen, memory_order_acquire);
    if (!open_fn) {
        open_fn = (dlopen_fn)glibc_function(RTLD_NEXT, "dlopen");
        if (!open_fn) return NULL;
        atomic_store_explicit(&next_dlopen, open_fn, memory_order_release);
    }
    return open_fn(file, RTLD_LAZY | RTLD_NOLOAD);
}

static void close_loaded(void *h)
{
    dlclose_fn close_fn = atomic_load_explicit(&next_dlclose, memory_order_acquire);
    if (!close_fn) {
        close_fn = (dlclose_fn)glibc_function(RTLD_NEXT, "dlclose");
        if (!close_fn) return; /* a reference kept: NOLOAD never loaded anything */
        atomic_store_explicit(&next_dlclose, close_fn, memory_order_release);
    }
    close_fn(h);
}

/* dlsym in the library that defines it: libc.so.6 since glibc 2.34,
 * libdl.so.2 before. */
static void *dlsym_in(const char *soname)
{
    void *h = open_loaded(soname);
    if (!h) return NULL;
    void *p = glibc_function(h, "dlsym");
    close_loaded(h);
    return p;
}

gt_dlsym_fn gt_libc_dlsym(void)
{
    gt_dlsym_fn fn = atomic_load_explicit(&libc_dlsym, memory_order_acquire);
    if (__builtin_expect(fn != NULL, 1)) return fn;
    void *p = dlsym_in(LIBC_SO);
    if (!p) p = dlsym_in(LIBDL_SO);
    fn = (gt_dlsym_fn)p;
    if (fn) atomic_store_explicit(&libc_dlsym, fn, memory_order_release);
    dlerror(); /* a failed NOLOAD open is no error of the program's */
    return fn;
}

void *gt_next_symbol(const char *name)
{
    gt_dlsym_fn libc = gt_libc_dlsym();
    /* Not a tail call: glibc takes this function as the caller. */
    void *p = libc ? libc(RTLD_NEXT, name) : NULL;
    p = gt_copy_skip(p, name);
    dlerror();
    return p;
}

gt_dlsym_fn gt_real_dlsym(void)
{
    gt_dlsym_fn fn = atomic_load_explicit(&real_dlsym, memory_order_acquire);
    if (__builtin_expect(fn != NULL, 1)) return fn;
    fn = (gt_dlsym_fn)gt_next_symbol("dlsym");
    if (!fn) fn = gt_libc_dlsym();
    if (fn) atomic_store_explicit(&real_dlsym, fn, memory_order_release);
    return fn;
}

/* libcuda.so.1 as the program loaded it; with `load`, loaded now (without
 * adding it to the global scope) when the program has not. */
static void *driver_handle(int load)
{
    void *h = atomic_load_explicit(&cuda_handle, memory_order_acquire);
    if (h) return h;
    h = dlopen(GT_DRIVER_SONAME, RTLD_NOW | RTLD_NOLOAD);
    if (!h && load) h = dlopen(GT_DRIVER_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) return NULL;
    void *expected = NULL;
    /* The reference taken by a second finder is kept: the shim never
     * unloads the driver (the program's own calls may still need it). */
    if (!atomic_compare_exchange_strong_explicit(&cuda_handle, &expected, h, memory_order_acq_rel,
                                                 memory_order_acquire))
        h = expected;
    return h;
}

static void *driver_symbol(const char *symbol, int load)
{
    gt_dlsym_fn lookup = gt_real_dlsym();
    void *h = driver_handle(load);
    if (!lookup || !h || !symbol) return NULL;
    return lookup(h, symbol);
}

void *gt_cuda_real(const char *symbol)
{
    return driver_symbol(symbol, 1);
}

void *gt_cuda_real_loaded(const char *symbol)
{
    return driver_symbol(symbol, 0);
}

void *gt_cuda_real_fill(gt_real_cache *c, const char *symbol)
{
    void *fn = gt_cuda_real(symbol);
    atomic_store_explicit(&c->fn, fn, memory_order_relaxed);
    atomic_store_explicit(&c->done, 1, memory_order_release);
    return fn;
}

/* The link map of the object holding `addr` and a handle on it (the
 * caller closes it), or NULL. A handle, not the link map: an object loaded
 * as another's dependency has no search list of its own until it is
 * opened. The main program's name is empty, and its handle is the global
 * scope's. */
static void *object_handle(const void *addr, Dl_info *info, struct link_map **map)
{
    *map = NULL;
    if (!addr || !dladdr1(addr, info, (void **)map, RTLD_DL_LINKMAP) || !*map) return NULL;
    return open_loaded((*map)->l_name[0] ? (*map)->l_name : NULL);
}

void *gt_object_symbol(const void *addr, const char *name, const char **object)
{
    Dl_info info;
    struct link_map *map = NULL;
    gt_dlsym_fn lookup = gt_real_dlsym();
    *object = NULL;
    void *h = lookup ? object_handle(addr, &info, &map) : NULL;
    if (map) *object = info.dli_fname;
    void *fn = h ? lookup(h, name) : NULL;
    if (h) close_loaded(h);
    dlerror(); /* a failed lookup is no error of the program's */
    return fn;
}

void *gt_object_own_symbol(const void *addr, const char *name)
{
    Dl_info info, found;
    struct link_map *map = NULL;
    gt_dlsym_fn libc = gt_libc_dlsym();
    void *h = libc ? object_handle(addr, &info, &map) : NULL;
    void *p = h ? libc(h, name) : NULL;
    /* The handle's lookup goes on into the object's dependencies. */
    if (p && (!dladdr(p, &found) || found.dli_fbase != info.dli_fbase)) p = NULL;
    if (h) close_loaded(h);
    dlerror();
    return p;
}
