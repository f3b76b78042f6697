/* Finding the real entry points (DESIGN §3).
 *
 * The shim exports dlsym itself (dlsym.c), so nothing here may call the
 * plain name: a call from inside the shim would bind to the shim's own
 * definition. glibc's dlsym is found with dlvsym, which the shim does not
 * interpose. Driver symbols are looked up in libcuda.so.1's own handle, so
 * the answer is the driver's export even though the shim exports the same
 * names ahead of it. */
#include "internal.h"
#include "intercept.h"
#include "resolve.h"

#include <dlfcn.h>
#include <link.h>

#define GT_DRIVER_SONAME "libcuda.so.1"

/* Release-stored once found; any thread may find them again (same values). */
static _Atomic(gt_dlsym_fn) real_dlsym;
static _Atomic(void *) cuda_handle;

gt_dlsym_fn gt_real_dlsym(void)
{
    gt_dlsym_fn fn = atomic_load_explicit(&real_dlsym, memory_order_acquire);
    if (__builtin_expect(fn != NULL, 1)) return fn;
    /* The newest version first: on glibc 2.34+ both names are one function. */
    void *p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!p) p = dlvsym(RTLD_NEXT, "dlsym", GT_GLIBC_BASE_VERSION);
    fn = (gt_dlsym_fn)p;
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

void *gt_object_symbol(const void *addr, const char *name, const char **object)
{
    Dl_info info;
    struct link_map *map = NULL;
    gt_dlsym_fn lookup = gt_real_dlsym();
    *object = NULL;
    if (!lookup || !addr || !dladdr1(addr, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return NULL;
    *object = info.dli_fname;
    /* A handle, not the link map: an object loaded as another's dependency
     * has no search list of its own until it is opened. The main program's
     * name is empty, and its handle is the global scope's. */
    void *h = dlopen(map->l_name[0] ? map->l_name : NULL, RTLD_LAZY | RTLD_NOLOAD);
    void *fn = h ? lookup(h, name) : NULL;
    if (h) dlclose(h);
    dlerror(); /* a failed lookup is no error of the program's */
    return fn;
}
