/* The Callback API: one subscriber per process, as CUPTI 13.0 allows, and
 * API enter/exit callbacks for the driver and runtime domains. */
#include "cupti_emu.h"

#include <stdio.h>
#include <string.h>

#define CBID_WORDS 16 /* 1024 callback ids per domain, more than any domain has */

struct CUpti_Subscriber_st {
    CUpti_CallbackFunc callback;
    void *userdata;
    char name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN];
    /* Relaxed: a subscriber serialises its own enabling (cupti_callbacks.h);
     * callbacks on other threads only need to read whole words. */
    _Atomic uint64_t enabled[CUPTI_CB_DOMAIN_SIZE][CBID_WORDS];
};

static struct CUpti_Subscriber_st the_subscriber;
static pthread_mutex_t subscribe_lock = PTHREAD_MUTEX_INITIALIZER;
/* Acquire/release: a callback sees the subscriber's fields once it sees it. */
static _Atomic(CUpti_SubscriberHandle) current;
/* Relaxed: enabled ids of the driver and runtime domains; read by every API
 * call to decide whether it needs a correlation id. */
static _Atomic long api_callbacks;

static uint32_t domain_size(CUpti_CallbackDomain domain)
{
    switch (domain) {
    case CUPTI_CB_DOMAIN_DRIVER_API:
        return CUPTI_DRIVER_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RUNTIME_API:
        return CUPTI_RUNTIME_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RESOURCE:
        return CUPTI_CBID_RESOURCE_SIZE;
    case CUPTI_CB_DOMAIN_SYNCHRONIZE:
        return CUPTI_CBID_SYNCHRONIZE_SIZE;
    case CUPTI_CB_DOMAIN_NVTX:
        return CUPTI_CBID_NVTX_SIZE;
    case CUPTI_CB_DOMAIN_STATE:
        return CUPTI_CBID_STATE_SIZE;
    default:
        return 0;
    }
}

static bool is_api_domain(CUpti_CallbackDomain domain)
{
    return domain == CUPTI_CB_DOMAIN_DRIVER_API || domain == CUPTI_CB_DOMAIN_RUNTIME_API;
}

static void set_enabled(CUpti_SubscriberHandle sub, CUpti_CallbackDomain domain, uint32_t cbid,
                        bool on)
{
    _Atomic uint64_t *word = &sub->enabled[domain][cbid / 64];
    uint64_t bit = 1ULL << (cbid % 64);
    uint64_t old = on ? atomic_fetch_or_explicit(word, bit, memory_order_relaxed)
                      : atomic_fetch_and_explicit(word, ~bit, memory_order_relaxed);
    bool was = (old & bit) != 0;
    if (was != on && is_api_domain(domain))
        atomic_fetch_add_explicit(&api_callbacks, on ? 1 : -1, memory_order_relaxed);
}

static bool is_enabled(CUpti_SubscriberHandle sub, CUpti_CallbackDomain domain, uint32_t cbid)
{
    uint64_t word = atomic_load_explicit(&sub->enabled[domain][cbid / 64], memory_order_relaxed);
    return (word >> (cbid % 64)) & 1;
}

static void set_domain(CUpti_SubscriberHandle sub, CUpti_CallbackDomain domain, bool on)
{
    for (uint32_t cbid = 0; cbid < domain_size(domain); cbid++)
        set_enabled(sub, domain, cbid, on);
}

/* The name a second subscriber is told of: the other tool's, or "CUPTI for"
 * and the name ours subscribed with. */
static void tell_old_name(CUpti_SubscriberParams *params)
{
    if (!params || !params->oldSubscriberName || params->oldSubscriberSize == 0) return;
    const char *other = gt_cupti_config()->other_subscriber;
    snprintf(params->oldSubscriberName, params->oldSubscriberSize, "%s",
             other ? other : the_subscriber.name);
}

static CUptiResult subscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                             void *userdata, CUpti_SubscriberParams *params)
{
    CUptiResult r = gt_cupti_begin();
    if (r != CUPTI_SUCCESS) return r;
    if (!subscriber) return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&subscribe_lock);
    if (gt_cupti_config()->other_subscriber ||
        atomic_load_explicit(&current, memory_order_relaxed)) {
        tell_old_name(params);
        pthread_mutex_unlock(&subscribe_lock);
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    struct CUpti_Subscriber_st *sub = &the_subscriber;
    sub->callback = callback;
    sub->userdata = userdata;
    const char *name = params ? params->subscriberName : NULL;
    if (name)
        snprintf(sub->name, sizeof sub->name, "CUPTI for %.*s", CUPTI_SUBSCRIBER_NAME_MAX_LEN,
                 name);
    else
        snprintf(sub->name, sizeof sub->name, "CUPTI");
    atomic_store_explicit(&current, sub, memory_order_release);
    pthread_mutex_unlock(&subscribe_lock);
    *subscriber = sub;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                    void *userdata)
{
    return subscribe(subscriber, callback, userdata, NULL);
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber,
                                       CUpti_CallbackFunc callback, void *userdata,
                                       CUpti_SubscriberParams *pParams)
{
    if (pParams && pParams->structSize == 0) return CUPTI_ERROR_INVALID_PARAMETER;
    return subscribe(subscriber, callback, userdata, pParams);
}

/* The subscriber handle, if it is the current one. */
static bool is_current(CUpti_SubscriberHandle subscriber)
{
    return subscriber && subscriber == atomic_load_explicit(&current, memory_order_acquire);
}

static void drop_subscriber(CUpti_SubscriberHandle sub)
{
    for (int d = 0; d < CUPTI_CB_DOMAIN_SIZE; d++)
        set_domain(sub, (CUpti_CallbackDomain)d, false);
    atomic_store_explicit(&current, NULL, memory_order_release);
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    CUptiResult r = gt_cupti_begin();
    if (r != CUPTI_SUCCESS) return r;
    pthread_mutex_lock(&subscribe_lock);
    bool ok = is_current(subscriber);
    if (ok) drop_subscriber(subscriber);
    pthread_mutex_unlock(&subscribe_lock);
    return ok ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

void gt_cupti_unsubscribe_all(void)
{
    pthread_mutex_lock(&subscribe_lock);
    CUpti_SubscriberHandle sub = atomic_load_explicit(&current, memory_order_relaxed);
    if (sub) drop_subscriber(sub);
    pthread_mutex_unlock(&subscribe_lock);
}

static CUptiResult check(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain)
{
    CUptiResult r = gt_cupti_begin();
    if (r != CUPTI_SUCCESS) return r;
    if (!is_current(subscriber) || domain_size(domain) == 0) return CUPTI_ERROR_INVALID_PARAMETER;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                         CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    CUptiResult r = check(subscriber, domain);
    if (r != CUPTI_SUCCESS) return r;
    if (cbid >= domain_size(domain)) return CUPTI_ERROR_INVALID_PARAMETER;
    set_enabled(subscriber, domain, cbid, enable != 0);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                       CUpti_CallbackDomain domain)
{
    CUptiResult r = check(subscriber, domain);
    if (r == CUPTI_SUCCESS) set_domain(subscriber, domain, enable != 0);
    return r;
}

CUptiResult CUPTIAPI cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber)
{
    CUptiResult r = check(subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
    if (r != CUPTI_SUCCESS) return r;
    for (int d = 0; d < CUPTI_CB_DOMAIN_SIZE; d++)
        if (domain_size((CUpti_CallbackDomain)d)) set_domain(subscriber, d, enable != 0);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackState(uint32_t *enable, CUpti_SubscriberHandle subscriber,
                                           CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    CUptiResult r = check(subscriber, domain);
    if (r != CUPTI_SUCCESS) return r;
    if (!enable || cbid >= domain_size(domain)) return CUPTI_ERROR_INVALID_PARAMETER;
    *enable = is_enabled(subscriber, domain, cbid);
    return CUPTI_SUCCESS;
}

bool gt_cupti_callbacks_on(void)
{
    return atomic_load_explicit(&api_callbacks, memory_order_relaxed) > 0;
}

void gt_cupti_callback_api(const struct gtemu_api_call *call, CUpti_ApiCallbackSite site,
                           uint32_t correlation_id, uint64_t *correlation_data)
{
    CUpti_SubscriberHandle sub = atomic_load_explicit(&current, memory_order_acquire);
    CUpti_CallbackDomain domain = (CUpti_CallbackDomain)call->domain;
    if (!sub || !sub->callback || call->cbid >= domain_size(domain) ||
        !is_enabled(sub, domain, call->cbid))
        return;
    uint32_t context_uid = 0;
    if (call->context) gt_cupti_drv.context(call->context, &context_uid, NULL);
    CUpti_CallbackData data = {
        .callbackSite = site,
        .functionName = call->function,
        .functionParams = call->params,
        .functionReturnValue = site == CUPTI_API_EXIT ? (void *)call->return_value : NULL,
        .symbolName = call->symbol,
        .context = call->context,
        .contextUid = context_uid,
        .correlationData = correlation_data,
        .correlationId = correlation_id,
    };
    sub->callback(sub->userdata, domain, call->cbid, &data);
}
