/* One active copy of libgputrace.so per process.
 *
 * Two different copies can meet in one process: an installed one in
 * LD_PRELOAD or /etc/ld.so.preload plus `gputrace` run from a build
 * directory, or two paths in LD_PRELOAD. Each exports the same names, so
 * each would take the other's wrappers for the real functions and call
 * them in a loop. So exactly one copy is active: the first in the global
 * scope, which is the copy the program's own calls bind to (preloaded
 * objects are loaded, and searched, in order; a copy opened later, as NVTX
 * opens its injection library, comes after every preloaded one). Every
 * other copy is inactive: its wrappers call the real function and nothing
 * else (hooks/hook.h), its dlsym and cuGetProcAddress hand out the real
 * answers, its constructor sets up no report, exit work, fork or signal
 * handler, and it hands NVTX's injection call to the active copy.
 *
 * Each copy exports a marker under one well-known name. A copy looks the
 * name up in its own scope with glibc's dlsym(RTLD_DEFAULT): every copy in
 * the global scope finds the same, first marker, so they agree without
 * any claim to race for; a copy outside it (opened by NVTX with
 * RTLD_LOCAL) finds a preloaded copy's marker first, and its own only when
 * no copy is preloaded. The marker also offers the copy's RTLD_NEXT
 * lookup, so that any copy can step past another to what follows it: the
 * real functions are never another copy's wrappers. */
#include "active_copy.h"

#include "compiler.h"
#include "log.h"
#include "intercept.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define MARKER_NAME "gputrace_copy_marker"
#define MARKER_ABI 1u
#define MAX_COPIES 64 /* steps past other copies: bounds the walk whatever they answer */

typedef struct copy_marker {
    uint32_t abi; /* MARKER_ABI: the layout below */
    /* The definition of `name` after this copy (its RTLD_NEXT), NULL when none. */
    void *(*next)(const char *name);
} copy_marker;

static void *copy_next(const char *name)
{
    gt_dlsym_fn libc = gt_libc_dlsym();
    void *p = libc ? libc(RTLD_NEXT, name) : NULL;
    /* Keeps the call above from becoming a tail call: glibc must see this
     * copy as the caller. */
    __asm__ volatile("" ::: "memory");
    return p;
}

static const copy_marker own = {MARKER_ABI, copy_next};
/* Exported under the well-known name; the shim itself uses `own`, whose
 * address no other copy's export can interpose. */
extern const copy_marker gputrace_copy_marker __attribute__((alias("own"), visibility("default")));

enum { UNDECIDED, ACTIVE, INACTIVE };
/* Relaxed: every thread that decides stores the same value. */
static _Atomic int state;
/* The active copy's marker; stored (relaxed) before `state` is released. */
static _Atomic(const copy_marker *) first;

/* Another copy's marker in the object holding `p`; NULL when it is none. */
static const copy_marker *marker_of(const void *p)
{
    const copy_marker *m = gt_object_own_symbol(p, MARKER_NAME);
    return m && m != &own && m->abi == MARKER_ABI ? m : NULL;
}

static int decide(void)
{
    int saved = errno;
    gt_dlsym_fn libc = gt_libc_dlsym();
    /* Not a tail call (the result is compared): glibc searches this copy's scope. */
    const copy_marker *m = libc ? libc(RTLD_DEFAULT, MARKER_NAME) : NULL;
    dlerror();
    int s = !m || m == &own ? ACTIVE : INACTIVE;
    atomic_store_explicit(&first, m, memory_order_relaxed);
    atomic_store_explicit(&state, s, memory_order_release);
    errno = saved;
    return s;
}

int gt_copy_active(void)
{
    int s = atomic_load_explicit(&state, memory_order_acquire);
    if (GT_UNLIKELY(s == UNDECIDED)) s = decide();
    return s == ACTIVE;
}

void *gt_copy_skip(void *p, const char *name)
{
    const copy_marker *m;
    for (int i = 0; p && i < MAX_COPIES && (m = marker_of(p)); i++)
        p = m->next(name);
    return p;
}

void *gt_copy_active_symbol(const char *name)
{
    if (gt_copy_active()) return NULL;
    const copy_marker *m = atomic_load_explicit(&first, memory_order_relaxed);
    return m ? gt_object_own_symbol(m, name) : NULL;
}

void gt_copy_describe(void)
{
    if (gt_copy_active() || !gt_log_debug_enabled()) return;
    Dl_info mine, theirs;
    const copy_marker *m = atomic_load_explicit(&first, memory_order_relaxed);
    const char *mine_path = dladdr(&own, &mine) && mine.dli_fname ? mine.dli_fname : "?";
    const char *active = dladdr(m, &theirs) && theirs.dli_fname ? theirs.dli_fname : "?";
    gt_debug("another copy of libgputrace.so is active in this process (%s): this copy (%s) "
             "passes every call through and records nothing",
             active, mine_path);
}
