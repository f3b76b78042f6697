/* The registry of hooks: every wrapper puts a pointer to its gt_hook in the
 * `gt_hooks` section (hooks/hook.h), and the linker gathers them between
 * __start_gt_hooks and __stop_gt_hooks. Two sorted views are built once:
 * by exported name (dlsym, the tests) and by base name (cuGetProcAddress
 * answers a base name with one of its variants). */
#include "process.h"
#include "config.h"
#include "event.h"
#include "log.h"
#include "process.h"
#include "strtab.h"
#include "intercept.h"
#include "ptrmap.h"
#include "resolve.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern gt_hook *const __start_gt_hooks[] __attribute__((weak, visibility("hidden")));
extern gt_hook *const __stop_gt_hooks[] __attribute__((weak, visibility("hidden")));

static gt_hook **by_name, **by_base;
static size_t n_hooks;
static pthread_once_t sort_once = PTHREAD_ONCE_INIT;

static int cmp_name(const void *a, const void *b)
{
    return strcmp((*(gt_hook *const *)a)->name, (*(gt_hook *const *)b)->name);
}

static int cmp_base(const void *a, const void *b)
{
    const gt_hook *x = *(gt_hook *const *)a, *y = *(gt_hook *const *)b;
    int c = strcmp(x->base, y->base);
    return c ? c : strcmp(x->name, y->name);
}

static void sort_hooks(void)
{
    size_t n = (size_t)(__stop_gt_hooks - __start_gt_hooks);
    if (!__start_gt_hooks || !n) return;
    by_name = malloc(n * sizeof *by_name);
    by_base = malloc(n * sizeof *by_base);
    if (!by_name || !by_base) {
        free(by_name);
        free(by_base);
        by_name = by_base = NULL;
        gt_warn("no memory for the table of intercepted functions: calls are passed through");
        return;
    }
    memcpy(by_name, __start_gt_hooks, n * sizeof *by_name);
    memcpy(by_base, __start_gt_hooks, n * sizeof *by_base);
    qsort(by_name, n, sizeof *by_name, cmp_name);
    qsort(by_base, n, sizeof *by_base, cmp_base);
    for (size_t i = 0; i < n; i++)
        by_name[i]->id = (uint16_t)(i + 1);
    n_hooks = n;
}

gt_hook *const *gt_hook_all(size_t *n)
{
    pthread_once(&sort_once, sort_hooks);
    *n = n_hooks;
    return by_name;
}

/* First index in `v` whose key (name or base) is not below `key`. */
static size_t lower_bound(gt_hook *const *v, size_t n, const char *key, int base)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(base ? v[mid]->base : v[mid]->name, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

gt_hook *gt_hook_find(const char *name)
{
    size_t n;
    gt_hook *const *v = gt_hook_all(&n);
    if (!name || !n) return NULL;
    size_t i = lower_bound(v, n, name, 0);
    return i < n && !strcmp(v[i]->name, name) ? v[i] : NULL;
}

gt_hook *const *gt_hook_variants(const char *base, size_t *count)
{
    size_t n;
    gt_hook_all(&n);
    *count = 0;
    if (!base || !n) return NULL;
    size_t i = lower_bound(by_base, n, base, 1), j = i;
    while (j < n && !strcmp(by_base[j]->base, base))
        j++;
    *count = j - i;
    return j > i ? &by_base[i] : NULL;
}

int gt_hook_is_per_thread(const gt_hook *h)
{
    size_t len = strlen(h->name);
    return len > 5 && (!strcmp(h->name + len - 5, "_ptsz") || !strcmp(h->name + len - 5, "_ptds"));
}

static unsigned mode_of(const gt_hook *h)
{
    unsigned mode = 0;
    if (gt_cfg.categories & GT_CAT_BIT(GT_CAT_API)) mode |= GT_HOOK_API;
    if (h->category != GT_CAT_API && (gt_cfg.categories & GT_CAT_BIT(h->category)))
        mode |= GT_HOOK_WORK;
    if (gt_cfg.checksum.kind != GT_CHECKSUM_OFF &&
        (h->category == GT_CAT_MEMCPY || h->category == GT_CAT_SYNC))
        mode |= GT_HOOK_CHECKSUM;
    return mode;
}

static const char *library_name(const gt_hook *h)
{
    switch ((enum gt_hook_lib)h->lib) {
    case GT_LIB_DRIVER:
        return "CUDA driver";
    case GT_LIB_RUNTIME:
        return "CUDA runtime";
    case GT_LIB_COMPILER:
        break;
    }
    return "CUDA compiler";
}

static void warn_missing(gt_hook *h)
{
    if (!atomic_exchange_explicit(&h->warned, 1, memory_order_relaxed))
        gt_warn("%s: not found in the %s library; the call returns an error", h->name,
                library_name(h));
}

/* The definition a call from `caller` would have bound to: the one its
 * own library's dependencies provide (dlsym on its link map searches
 * them, not the global scope). Cached per call site and hook. */
GT_PTRMAP_DEFINE(per_caller, 10);
#define NONE_FOR_CALLER 1u

static void *caller_real(gt_hook *h, const void *caller)
{
    size_t n;
    gt_hook_all(&n); /* ids are given when the registry is built */
    uint64_t key = (uint64_t)(uintptr_t)caller | (uint64_t)h->id << 48;
    uint64_t v = gt_ptrmap_get(&per_caller, key);
    if (v) return v == NONE_FOR_CALLER ? NULL : (void *)(uintptr_t)v;
    const char *object;
    void *fn = gt_object_symbol(caller, h->name, &object);
    if (fn == h->wrapper) fn = NULL; /* the caller's scope holds the shim (the main program's) */
    gt_ptrmap_put(&per_caller, key, fn ? (uint64_t)(uintptr_t)fn : NONE_FOR_CALLER);
    if (gt_log_debug_enabled())
        gt_debug("hooked %s for a caller in %s: real at %p", h->name,
                 object ? object : "an unknown object", fn);
    return fn;
}

void *gt_hook_global(gt_hook *h)
{
    void *p = atomic_load_explicit(&h->real, memory_order_acquire);
    if (p == GT_HOOK_UNRESOLVED) p = gt_hook_resolve(h, NULL);
    return (uintptr_t)p > (uintptr_t)GT_HOOK_PER_CALLER ? p : NULL;
}

void *gt_hook_resolve(gt_hook *h, const void *caller)
{
    void *p = atomic_load_explicit(&h->real, memory_order_acquire);
    if (p == GT_HOOK_MISSING) return NULL;
    if (p == GT_HOOK_PER_CALLER) return caller ? caller_real(h, caller) : p;
    if (p != GT_HOOK_UNRESOLVED) return p;
    /* No driver loaded: nothing is settled, the program may load it later. */
    if (h->lib == GT_LIB_DRIVER && !gt_cuda_driver_loaded()) return NULL;
    gt_init_once(); /* gt_cfg: a hook may run before the shim's constructor */
    if (h->lib == GT_LIB_DRIVER) {
        p = gt_cuda_real_loaded(h->name);
    } else {
        p = gt_next_symbol(h->name);
    }
    gt_strtab *names = gt_names();
    uint32_t api = names ? gt_strtab_intern(names, h->base, strlen(h->base)) : 0;
    atomic_store_explicit(&h->api, api, memory_order_relaxed);
    atomic_store_explicit(&h->mode, (uint8_t)mode_of(h), memory_order_relaxed);
    atomic_store_explicit(&h->per_thread, (uint8_t)gt_hook_is_per_thread(h), memory_order_relaxed);
    if (!p && h->lib != GT_LIB_DRIVER) {
        atomic_store_explicit(&h->real, GT_HOOK_PER_CALLER, memory_order_release);
        return caller ? caller_real(h, caller) : GT_HOOK_PER_CALLER;
    }
    if (!p) {
        atomic_store_explicit(&h->real, GT_HOOK_MISSING, memory_order_release);
        return NULL;
    }
    if (gt_log_debug_enabled() && atomic_load_explicit(&h->real, memory_order_relaxed) == NULL)
        gt_debug("hooked %s: real %s at %p", h->name,
                 h->lib == GT_LIB_DRIVER ? "libcuda.so.1 export" : "next definition (RTLD_NEXT)",
                 p);
    atomic_store_explicit(&h->real, p, memory_order_release);
    return p;
}

int gt_hook_absent(gt_hook *h, const void *caller)
{
    switch ((enum gt_hook_lib)h->lib) {
    case GT_LIB_DRIVER:
        return !gt_cuda_driver_loaded();
    case GT_LIB_RUNTIME:
        return !gt_cuda_runtime_visible(caller);
    case GT_LIB_COMPILER:
        break;
    }
    return !gt_hook_global(h) && (!caller || !gt_hook_resolve(h, caller));
}

int gt_hook_unavailable(gt_hook *h, int notfound, const void *caller)
{
    if (!gt_hook_absent(h, caller)) {
        warn_missing(h);
        return notfound;
    }
    switch ((enum gt_hook_lib)h->lib) {
    case GT_LIB_DRIVER:
        return gt_same_string(h->base, "cuInit") ? CUDA_ERROR_NO_DEVICE
                                                 : CUDA_ERROR_NOT_INITIALIZED;
    case GT_LIB_RUNTIME:
        return cudaErrorInsufficientDriver;
    case GT_LIB_COMPILER:
        break;
    }
    return notfound;
}

void *gt_hook_adopt(gt_hook *h, void *fn)
{
    void *p = gt_hook_global(h);
    if (p || !fn || fn == h->wrapper) return p;
    /* Resolved (mode and api id stored) with nothing global: PER_CALLER. */
    void *expected = GT_HOOK_PER_CALLER;
    if (atomic_compare_exchange_strong_explicit(&h->real, &expected, fn, memory_order_release,
                                                memory_order_acquire)) {
        if (gt_log_debug_enabled()) gt_debug("hooked %s: real found by dlsym at %p", h->name, fn);
        return fn;
    }
    return gt_hook_global(h);
}
