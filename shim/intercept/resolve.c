/* Finding the real entry points (DESIGN §3).
 *
 * The shim exports dlsym itself (dlsym.c), so nothing here may call the
 * plain name: a call from inside the shim would bind to the shim's own
 * definition. Three dlsyms matter:
 *   - glibc's own (gt_libc_dlsym), read from the C library's symbol table.
 *     Lookups whose answer depends on the caller (RTLD_NEXT, RTLD_DEFAULT)
 *     go to it directly from the shim's code, so glibc sees the shim as
 *     the caller;
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
#include "intercept.h"
#include "resolve.h"

#include <dlfcn.h>
#include <gnu/lib-names.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>

#define GT_DRIVER_SONAME "libcuda.so.1"

/* Release-stored once found; any thread may find them again (same values). */
static _Atomic(gt_dlsym_fn) libc_dlsym;
static _Atomic(gt_dlsym_fn) real_dlsym;
static _Atomic(void *) cuda_handle;

/* The link map of the loaded object whose file name is `soname`. The C
 * library is loaded with the program, ahead of anything opened later: the
 * walk reaches it before any object that a dlclose could take away. No C
 * library function is called (elf_symbol.c says why). */
static struct link_map *loaded_object(const char *soname)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (!dladdr1((void *)loaded_object, &info, (void **)&map, RTLD_DL_LINKMAP) || !map) return NULL;
    while (map->l_prev)
        map = map->l_prev;
    for (; map; map = map->l_next) {
        const char *base = map->l_name;
        for (const char *c = base; *c; c++)
            if (*c == '/') base = c + 1;
        if (gt_same_string(base, soname)) return map;
    }
    return NULL;
}

/* glibc's own dlsym, read from the symbol table of the library that
 * defines it (libc.so.6 since glibc 2.34, libdl.so.2 before), newest
 * version first: no loader call, so it works before the C library is
 * initialised (elf_symbol.c). */
static void *dlsym_in(const char *soname)
{
    struct link_map *map = loaded_object(soname);
    void *p = gt_elf_symbol(map, "dlsym", "GLIBC_2.34");
    return p ? p : gt_elf_symbol(map, "dlsym", GT_GLIBC_BASE_VERSION);
}

gt_dlsym_fn gt_libc_dlsym(void)
{
    gt_dlsym_fn fn = atomic_load_explicit(&libc_dlsym, memory_order_acquire);
    if (__builtin_expect(fn != NULL, 1)) return fn;
    void *p = dlsym_in(LIBC_SO);
    if (!p) p = dlsym_in(LIBDL_SO);
    fn = (gt_dlsym_fn)p;
    if (fn) atomic_store_explicit(&libc_dlsym, fn, memory_order_release);
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

/* Whether p lies in this copy of the library. */
static int in_this_copy(const void *p)
{
    Dl_info mine, theirs;
    return dladdr((void *)in_this_copy, &mine) && dladdr(p, &theirs) &&
           mine.dli_fbase == theirs.dli_fbase;
}

static void *driver_symbol(const char *symbol, int load)
{
    gt_dlsym_fn lookup = gt_real_dlsym();
    void *h = driver_handle(load);
    if (!lookup || !h || !symbol) return NULL;
    void *p = lookup(h, symbol);
    /* A tool after the shim that answers with one of the shim's own
     * functions would make a wrapper call itself (a copy of the library
     * built before copies.c does: its wrappers' addresses are this copy's
     * exports). The driver's own export is then asked of glibc. */
    if (p && in_this_copy(p)) {
        gt_dlsym_fn libc = gt_libc_dlsym();
        p = libc ? libc(h, symbol) : NULL;
    }
    return p;
}

void *gt_cuda_real(const char *symbol)
{
    return driver_symbol(symbol, 1);
}

void *gt_cuda_real_loaded(const char *symbol)
{
    return driver_symbol(symbol, 0);
}

int gt_cuda_driver_loaded(void)
{
    return driver_handle(0) != NULL;
}

/* A function every CUDA runtime has, and the library does not export. */
#define RUNTIME_MARK "cudaRuntimeGetVersion"

int gt_cuda_runtime_visible(const void *caller)
{
    const char *object;
    return gt_next_symbol(RUNTIME_MARK) ||
           (caller && gt_object_symbol(caller, RUNTIME_MARK, &object));
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

void *gt_object_own_symbol(const void *addr, const char *name)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (!addr || !dladdr1(addr, &info, (void **)&map, RTLD_DL_LINKMAP)) return NULL;
    return gt_elf_symbol(map, name, NULL);
}
