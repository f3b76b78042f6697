/* Call sites on the hot path: which records get one, and when the stack
 * is taken (see callsite.h for the policy).
 *
 * Whether a name (a kernel, a kind of copy or memset) is still new is a
 * process-wide count per name in a lock-free table: a relaxed load once
 * the name is past its first calls, a relaxed fetch-add before. A name
 * that finds the table full counts as not new. Between samples each
 * thread counts down a gap drawn uniformly from 1 to
 * 2 x GT_CALLSITE_SAMPLE_MEAN - 1 (mean GT_CALLSITE_SAMPLE_MEAN), so that
 * a program's own period (two sites taking turns) cannot line up with
 * the sampling. */
#include "callsite.h"

#include "active_copy.h"
#include "config.h"
#include "event.h"
#include "intercept.h"
#include "modules.h"
#include "python_gil.h"
#include "python_walk.h"
#include "record.h"
#include "settings.h"
#include "stack_table.h"
#include "unwind.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

unsigned gt_callsite_modes;
static int decide_at_first_use; /* auto: Python frames if the process runs Python */
/* The modes in force once decided; 0 before (relaxed: each value stands
 * alone, and every thread decides the same). */
static _Atomic unsigned in_force;

static void watch_python(void);

void gt_callsite_init(const gt_config *cfg)
{
    static const unsigned modes[GT_CALLSITES_COUNT] = {
        [GT_CALLSITES_AUTO] = GT_CALLSITE_PYTHON | GT_CALLSITE_NATIVE,
        [GT_CALLSITES_PYTHON] = GT_CALLSITE_PYTHON,
        [GT_CALLSITES_NATIVE] = GT_CALLSITE_NATIVE,
        [GT_CALLSITES_ALL] = GT_CALLSITE_PYTHON | GT_CALLSITE_NATIVE,
        [GT_CALLSITES_OFF] = 0,
    };
    gt_callsite_modes = (unsigned)cfg->callsites < GT_CALLSITES_COUNT ? modes[cfg->callsites] : 0;
    decide_at_first_use = cfg->callsites == GT_CALLSITES_AUTO;
    atomic_store_explicit(&in_force, decide_at_first_use ? 0 : gt_callsite_modes,
                          memory_order_relaxed);
    gt_python_set_skip(cfg->callsites_skip);
    if (gt_callsite_modes & GT_CALLSITE_PYTHON) gt_dlsym_on_extension(watch_python);
}

static unsigned modes_in_force(void)
{
    unsigned m = atomic_load_explicit(&in_force, memory_order_relaxed);
    if (GT_LIKELY(m)) return m;
    m = gt_python_present() ? GT_CALLSITE_PYTHON : GT_CALLSITE_NATIVE;
    atomic_store_explicit(&in_force, m, memory_order_relaxed);
    return m;
}

#define NAME_SLOTS 4096u
#define NAME_PROBES 16u

static struct {
    _Atomic uint64_t key; /* 0 free; claimed once by compare-exchange */
    _Atomic uint32_t calls;
} names[NAME_SLOTS];

static uint64_t name_key(const gt_event *ev)
{
    uint64_t k = (uint64_t)ev->kind << 56;
    if (ev->kind == GT_EV_KERNEL) k |= ev->name;
    if (ev->kind == GT_EV_MEMCPY)
        k |= (uint64_t)ev->u.copy.dir << 16 | (uint64_t)ev->u.copy.host_mem << 8;
    if (ev->kind == GT_EV_MEMCPY || ev->kind == GT_EV_MEMSET) k |= (ev->flags & GT_EVF_ASYNC) != 0;
    return k;
}

static int name_is_new(const gt_event *ev)
{
    uint64_t key = name_key(ev);
    uint32_t i = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 40) & (NAME_SLOTS - 1);
    for (unsigned n = 0; n < NAME_PROBES; n++, i = (i + 1) & (NAME_SLOTS - 1)) {
        uint64_t k = atomic_load_explicit(&names[i].key, memory_order_relaxed);
        /* A lost race leaves the winner's key in k. */
        if (!k && atomic_compare_exchange_strong_explicit(
                      &names[i].key, &k, key, memory_order_relaxed, memory_order_relaxed))
            k = key;
        if (k != key) continue;
        if (atomic_load_explicit(&names[i].calls, memory_order_relaxed) >= GT_CALLSITE_EXACT_CALLS)
            return 0;
        return atomic_fetch_add_explicit(&names[i].calls, 1, memory_order_relaxed) <
               GT_CALLSITE_EXACT_CALLS;
    }
    return 0;
}

static __thread uint32_t countdown __attribute__((tls_model("initial-exec")));
static __thread uint32_t rng __attribute__((tls_model("initial-exec")));

static int sample_now(void)
{
    if (countdown > 1) {
        countdown--;
        return 0;
    }
    if (!rng) rng = (gt_tls.tid * 0x9e3779b9u) | 1u;
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    countdown = 1 + rng % (2 * GT_CALLSITE_SAMPLE_MEAN - 1);
    return 1;
}

/* Where the calling thread's Python site comes from: a walk of its frames
 * (it holds the GIL), the site it had when it released the GIL (*released:
 * its stack id, 0 when none could be had or the release was not seen), or
 * nowhere (no Python on this thread). The routed release is asked first:
 * a few loads of the thread's own. */
enum python_source { PYTHON_NONE, PYTHON_WALK, PYTHON_RELEASED };

static enum python_source python_source(uint32_t *released)
{
    *released = 0;
    if (gt_python_released(released)) return PYTHON_RELEASED;
    switch (gt_python_thread()) {
    case GT_PY_HOLDS_GIL:
        return PYTHON_WALK;
    case GT_PY_RELEASED_GIL:
        gt_python_release_unseen();
        return PYTHON_RELEASED;
    default:
        return PYTHON_NONE;
    }
}

/* The calling thread's site as a stack id; 0 when none was had. Python's
 * first when asked for, then native, when asked for. */
static uint32_t stack_id(unsigned modes, enum python_source from, uint32_t released)
{
    uint32_t id = from == PYTHON_WALK ? gt_python_site_id() : released;
    if (id || !(modes & GT_CALLSITE_NATIVE)) return id;
    gt_stack s;
    memset(&s, 0, sizeof s);
    gt_unwind_native(&s);
    return gt_stack_id(&s);
}

/* At the first record and at each extension module the interpreter loads:
 * a process whose Python sites are asked for has its releases of the GIL
 * routed (python_gil.h). */
static _Atomic int python_started;

static void watch_python(void)
{
    /* Only the process's active copy of the library routes (another copy
     * passes calls through and takes no sites). */
    if ((modes_in_force() & GT_CALLSITE_PYTHON) && gt_copy_active() && gt_python_present())
        gt_python_gil_watch();
}

static void start_python(void)
{
    watch_python();
    atomic_store_explicit(&python_started, 1, memory_order_relaxed);
}

void gt_callsite_take(gt_event *ev)
{
    if (GT_UNLIKELY(!atomic_load_explicit(&python_started, memory_order_relaxed))) start_python();
    if (ev->result != 0) return;
    int alloc = ev->kind == GT_EV_ALLOC;
    if (!alloc && !gt_kind_is_gpu_work(ev->kind)) return;
    unsigned modes = modes_in_force();
    uint32_t released = 0;
    enum python_source from = modes & GT_CALLSITE_PYTHON ? python_source(&released) : PYTHON_NONE;
    if (from == PYTHON_NONE && !(modes & GT_CALLSITE_NATIVE)) return;
    int sampled = 0;
    if (!alloc && !name_is_new(ev)) {
        if (!sample_now()) {
            ev->site = GT_SITE_SKIPPED;
            return;
        }
        sampled = 1;
    }
    uint32_t id = stack_id(modes, from, released);
    if (id) ev->site = sampled ? id | GT_SITE_SAMPLED : id;
}

uint32_t gt_callsite_stack_now(void)
{
    if (!gt_callsite_modes) return 0;
    unsigned modes = modes_in_force();
    uint32_t released = 0;
    enum python_source from = modes & GT_CALLSITE_PYTHON ? python_source(&released) : PYTHON_NONE;
    return from == PYTHON_NONE && !(modes & GT_CALLSITE_NATIVE) ? 0
                                                                : stack_id(modes, from, released);
}

void gt_callsite_fork_child(void)
{
    gt_modules_fork_child();
    gt_python_fork_child();
    gt_python_gil_fork_child();
}
