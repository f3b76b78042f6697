/* Attaching to the emulated driver, detaching (cuptiFinalize), fork, and the
 * version. CUPTI initialises on the first call that needs it, and again
 * after cuptiFinalize. */
#include "cupti_emu.h"

#include <dlfcn.h>

#ifndef GT_CUPTI_API_VERSION
#define GT_CUPTI_API_VERSION CUPTI_API_VERSION
#endif

struct gt_cupti_driver gt_cupti_drv;

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
/* Acquire/release: gt_cupti_drv is filled before the flag is seen set. */
static _Atomic bool attached;

/* The locks a recording thread takes are held across fork, so that the
 * child does not inherit one held by a thread it does not have. */
static void prefork(void)
{
    gt_cupti_names_prefork();
    gt_cupti_buffers_prefork();
}

static void postfork_parent(void)
{
    gt_cupti_buffers_postfork(false);
    gt_cupti_names_postfork();
}

static void postfork_child(void)
{
    gt_cupti_buffers_postfork(true);
    gt_cupti_names_postfork();
}

static bool find_driver(void)
{
    if (gt_cupti_drv.attach) return true;
    /* The emulated driver; a real one has none of these names. */
    void *libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!libcuda) return false;
    struct gt_cupti_driver drv = {
        .attach = (gtemu_trace_attach_fn)dlsym(libcuda, "gtemu_trace_attach"),
        .context = (gtemu_trace_context_fn)dlsym(libcuda, "gtemu_trace_context"),
        .stream = (gtemu_trace_stream_fn)dlsym(libcuda, "gtemu_trace_stream"),
    };
    if (!drv.attach || !drv.context || !drv.stream) return false;
    gt_cupti_drv = drv;
    static bool fork_handlers;
    if (!fork_handlers) {
        pthread_atfork(prefork, postfork_parent, postfork_child);
        fork_handlers = true;
    }
    return true;
}

CUptiResult gt_cupti_begin(void)
{
    CUptiResult fault = gt_cupti_config()->init_error;
    if (fault != CUPTI_SUCCESS) return fault;
    if (atomic_load_explicit(&attached, memory_order_acquire)) return CUPTI_SUCCESS;
    pthread_mutex_lock(&init_lock);
    bool ok = atomic_load_explicit(&attached, memory_order_relaxed);
    if (!ok && find_driver() && gt_cupti_drv.attach(&gt_cupti_trace_ops) == 0) {
        atomic_store_explicit(&attached, true, memory_order_release);
        ok = true;
    }
    pthread_mutex_unlock(&init_lock);
    return ok ? CUPTI_SUCCESS : CUPTI_ERROR_NOT_INITIALIZED;
}

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version)
{
    if (!version) return CUPTI_ERROR_INVALID_PARAMETER;
    *version = GT_CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiFinalize(void)
{
    CUptiResult r = gt_cupti_begin();
    if (r != CUPTI_SUCCESS) return r;
    pthread_mutex_lock(&init_lock);
    gt_cupti_drv.attach(NULL);
    atomic_store_explicit(&attached, false, memory_order_release);
    gt_cupti_unsubscribe_all();
    gt_cupti_disable_all();
    gt_cupti_discard_records();
    gt_cupti_set_buffer_callbacks(NULL, NULL);
    pthread_mutex_unlock(&init_lock);
    return CUPTI_SUCCESS;
}
