/* The shim's CUPTI session: one subscriber whose callback keeps each
 * thread's correlation id (gpu_source.h), activity records of kernels,
 * copies, peer copies and memsets into the shim's buffers.
 *
 * Kinds (DESIGN §5): CONCURRENT_KERNEL, not KERNEL (which serialises
 * kernels and gives graph kernels no valid times); MEMCPY, MEMCPY2 (peer
 * copies) and MEMSET. Graph launches are traced node by node (not
 * GRAPH_TRACE, which gives one record per launch): each node's record
 * carries the launch's correlation id.
 *
 * The callback is enabled only for the entry points that launch, copy or
 * set memory, in both the driver and the runtime domains: CUPTI then
 * calls nothing of the shim on the program's other calls. Holding the
 * subscriber is also how another CUPTI client is noticed: CUPTI has one
 * subscriber per process before CUDA 13.3 with driver r610, so a second
 * cuptiSubscribe fails. */
#include "cupti_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "gpu_source.h"

__thread gt_cupti_thread gt_cupti_tls __attribute__((tls_model("initial-exec")));

static pthread_mutex_t session_lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_SubscriberHandle subscriber;
static _Atomic int running; /* relaxed: a statement about the last start or stop */
static _Atomic int started; /* relaxed: a session ran in this process */

static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,
};
#define NKINDS (sizeof kinds / sizeof kinds[0])
static unsigned kinds_enabled; /* kinds[0 .. kinds_enabled) are on; session lock */

/* On the program's thread, at the entry and the exit of each traced call
 * (a runtime call and the driver calls it makes inside it each count):
 * the outermost call's correlation id is the one its work's records
 * carry. Nothing else: this runs inside every launch. */
static void CUPTIAPI on_api(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                            const void *data)
{
    (void)userdata, (void)domain, (void)cbid;
    const CUpti_CallbackData *d = data;
    gt_cupti_thread *t = &gt_cupti_tls;
    if (d->callbackSite == CUPTI_API_ENTER) {
        if (t->depth++ == 0) {
            t->corr = d->correlationId;
            t->calls++;
        }
    } else if (t->depth) {
        t->depth--;
    }
}

static void disable_kinds(void)
{
    while (kinds_enabled)
        gt_cupti.disable(kinds[--kinds_enabled]);
}

static int enable_callbacks(CUpti_CallbackDomain domain, const CUpti_CallbackId *ids, size_t n,
                            char *why, size_t cap)
{
    for (size_t i = 0; i < n; i++) {
        CUptiResult r = gt_cupti.enable_callback(1, subscriber, domain, ids[i]);
        /* An id this CUPTI does not know (an entry point newer than it) is
         * not an error: the program cannot call it either. */
        if (r == CUPTI_SUCCESS || r == CUPTI_ERROR_INVALID_PARAMETER) continue;
        snprintf(why, cap, "cuptiEnableCallback: %s", gt_cupti_result_name(r));
        return -1;
    }
    return 0;
}

int gt_cupti_session_start(char *why, size_t cap)
{
    pthread_mutex_lock(&session_lock);
    CUptiResult r = gt_cupti.subscribe(&subscriber, on_api, NULL);
    if (r != CUPTI_SUCCESS) {
        snprintf(why, cap, "cuptiSubscribe: %s%s", gt_cupti_result_name(r),
                 r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                     ? " (another CUPTI client is active)"
                     : "");
        pthread_mutex_unlock(&session_lock);
        return -1;
    }
    int ok = enable_callbacks(CUPTI_CB_DOMAIN_DRIVER_API, gt_cupti_driver_cbids,
                              gt_cupti_driver_cbids_len, why, cap) == 0 &&
             enable_callbacks(CUPTI_CB_DOMAIN_RUNTIME_API, gt_cupti_runtime_cbids,
                              gt_cupti_runtime_cbids_len, why, cap) == 0;
    if (ok) {
        r = gt_cupti.register_callbacks(gt_cupti_buffer_requested, gt_cupti_buffer_completed);
        if (r != CUPTI_SUCCESS) {
            snprintf(why, cap, "cuptiActivityRegisterCallbacks: %s", gt_cupti_result_name(r));
            ok = 0;
        }
    }
    while (ok && kinds_enabled < NKINDS) {
        r = gt_cupti.enable(kinds[kinds_enabled]);
        if (r != CUPTI_SUCCESS) {
            snprintf(why, cap, "cuptiActivityEnable(kind %d): %s", (int)kinds[kinds_enabled],
                     gt_cupti_result_name(r));
            ok = 0;
        } else {
            kinds_enabled++;
        }
    }
    if (!ok) {
        /* Nothing half set up: a kind that failed leaves none on. */
        disable_kinds();
        gt_cupti.unsubscribe(subscriber);
        subscriber = NULL;
    } else {
        gt_cupti_clock_sample(1);
        atomic_store_explicit(&running, 1, memory_order_relaxed);
        atomic_store_explicit(&started, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&session_lock);
    return ok ? 0 : -1;
}

void gt_cupti_session_stop(void)
{
    pthread_mutex_lock(&session_lock);
    if (atomic_load_explicit(&running, memory_order_relaxed)) {
        /* What CUPTI holds of the shim's kinds goes to the shim's buffer
         * callback now; the program's own callbacks, registered next,
         * would get it otherwise. */
        gt_cupti.flush_all(0);
        gt_cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        disable_kinds();
        gt_cupti.unsubscribe(subscriber);
        subscriber = NULL;
        atomic_store_explicit(&running, 0, memory_order_relaxed);
    }
    pthread_mutex_unlock(&session_lock);
}

int gt_cupti_session_running(void)
{
    return atomic_load_explicit(&running, memory_order_relaxed);
}

int gt_cupti_session_started(void)
{
    return atomic_load_explicit(&started, memory_order_relaxed);
}

void gt_cupti_session_forget(void)
{
    atomic_store_explicit(&running, 0, memory_order_relaxed);
    atomic_store_explicit(&started, 0, memory_order_relaxed);
    kinds_enabled = 0;
    subscriber = NULL;
    pthread_mutex_init(&session_lock, NULL);
}
