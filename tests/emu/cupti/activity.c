/* The Activity API's switches and readers: which kinds and which API
 * functions are recorded, buffer callbacks, flushing, dropped records, and
 * reading records back from a buffer. */
#include "cupti_emu.h"

#define CBID_WORDS 16 /* 1024 callback ids per domain, more than any domain has */

/* Relaxed: switches read by every record; a record made while a kind is
 * being switched may or may not be kept, as with CUPTI. */
static _Atomic bool kinds_on[CUPTI_ACTIVITY_KIND_COUNT];
/* API records per callback id: [0] driver, [1] runtime. */
static _Atomic uint64_t api_on[2][CBID_WORDS];
static _Atomic long api_on_count;

static bool recorded_kind(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMSET:
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
        return true;
    default:
        return false;
    }
}

bool gt_cupti_kind_on(CUpti_ActivityKind kind)
{
    return kind > CUPTI_ACTIVITY_KIND_INVALID && kind < CUPTI_ACTIVITY_KIND_COUNT &&
           atomic_load_explicit(&kinds_on[kind], memory_order_relaxed);
}

static uint32_t cbid_count(int domain)
{
    return domain == 0 ? CUPTI_DRIVER_TRACE_CBID_SIZE : CUPTI_RUNTIME_TRACE_CBID_SIZE;
}

static void set_api(int domain, uint32_t cbid, bool on)
{
    _Atomic uint64_t *word = &api_on[domain][cbid / 64];
    uint64_t bit = 1ULL << (cbid % 64);
    uint64_t old = on ? atomic_fetch_or_explicit(word, bit, memory_order_relaxed)
                      : atomic_fetch_and_explicit(word, ~bit, memory_order_relaxed);
    if (((old & bit) != 0) != on)
        atomic_fetch_add_explicit(&api_on_count, on ? 1 : -1, memory_order_relaxed);
}

/* CUPTI_ACTIVITY_KIND_DRIVER and _RUNTIME switch every function of their
 * API, over what cuptiActivityEnableDriverApi/RuntimeApi set before. */
static void set_all_api(int domain, bool on)
{
    for (uint32_t cbid = 1; cbid < cbid_count(domain); cbid++)
        set_api(domain, cbid, on);
}

bool gt_cupti_api_records_on(enum gtemu_domain domain, uint32_t cbid)
{
    int d = domain == GTEMU_DOMAIN_RUNTIME ? 1 : 0;
    if (cbid >= cbid_count(d)) return false;
    return (atomic_load_explicit(&api_on[d][cbid / 64], memory_order_relaxed) >> (cbid % 64)) & 1;
}

bool gt_cupti_api_tracing_on(void)
{
    return atomic_load_explicit(&api_on_count, memory_order_relaxed) > 0 || gt_cupti_callbacks_on();
}

static CUptiResult set_kind(CUpti_ActivityKind kind, bool on)
{
    CUptiResult r = gt_cupti_begin();
    if (r != CUPTI_SUCCESS) return r;
    if (!recorded_kind(kind)) return CUPTI_ERROR_INVALID_KIND;
    if (on && gt_cupti_config()->fail_kind[kind]) return CUPTI_ERROR_NOT_COMPATIBLE;
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER) set_all_api(0, on);
    if (kind == CUPTI_ACTIVITY_KIND_RUNTIME) set_all_api(1, on);
    atomic_store_explicit(&kinds_on[kind], on, memory_order_relaxed);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
    return set_kind(kind, true);
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
    return set_kind(kind, false);
}

static CUptiResult enable_api(int domain, CUpti_CallbackId cbid, uint8_t enable)
{
    CUptiResult r = gt_cupti_begin();
    if (r != CUPTI_SUCCESS) return r;
    if (cbid == 0 || cbid >= cbid_count(domain)) return CUPTI_ERROR_INVALID_PARAMETER;
    set_api(domain, cbid, enable != 0);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
    return enable_api(0, cbid, enable);
}

CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
    return enable_api(1, cbid, enable);
}

void gt_cupti_disable_all(void)
{
    for (int k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
        atomic_store_explicit(&kinds_on[k], false, memory_order_relaxed);
    set_all_api(0, false);
    set_all_api(1, false);
}

CUptiResult CUPTIAPI
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                               CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
    CUptiResult r = gt_cupti_begin();
    if (r != CUPTI_SUCCESS) return r;
    if (!funcBufferRequested || !funcBufferCompleted) return CUPTI_ERROR_INVALID_PARAMETER;
    gt_cupti_set_buffer_callbacks(funcBufferRequested, funcBufferCompleted);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
    CUptiResult r = gt_cupti_begin();
    if (r != CUPTI_SUCCESS) return r;
    if (!gt_cupti_callbacks_registered()) return CUPTI_ERROR_INVALID_OPERATION;
    gt_cupti_flush((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0);
    return CUPTI_SUCCESS;
}

/* Deprecated: the context and stream are ignored, as documented. */
CUptiResult CUPTIAPI cuptiActivityFlush(CUcontext context, uint32_t streamId, uint32_t flag)
{
    (void)context;
    (void)streamId;
    return cuptiActivityFlushAll(flag);
}

CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t time)
{
    CUptiResult r = gt_cupti_begin();
    if (r == CUPTI_SUCCESS) gt_cupti_set_flush_period(time);
    return r;
}

/* Every buffer is global since CUDA 6.0: one count for all queues. */
CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId,
                                                       size_t *dropped)
{
    (void)context;
    (void)streamId;
    CUptiResult r = gt_cupti_begin();
    if (r != CUPTI_SUCCESS) return r;
    if (!dropped) return CUPTI_ERROR_INVALID_PARAMETER;
    *dropped = gt_cupti_take_dropped();
    return CUPTI_SUCCESS;
}

static uint8_t *align_up(uint8_t *p)
{
    uintptr_t a =
        ((uintptr_t)p + GT_CUPTI_RECORD_ALIGN - 1) & ~(uintptr_t)(GT_CUPTI_RECORD_ALIGN - 1);
    return (uint8_t *)a;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes,
                                                CUpti_Activity **record)
{
    CUptiResult r = gt_cupti_begin();
    if (r != CUPTI_SUCCESS) return r;
    if (!buffer || !record) return CUPTI_ERROR_INVALID_PARAMETER;
    uint8_t *end = buffer + validBufferSizeBytes;
    uint8_t *next = align_up(buffer);
    if (*record) {
        size_t size = gt_cupti_record_size((*record)->kind);
        if (size == 0) return CUPTI_ERROR_INVALID_KIND;
        next = align_up((uint8_t *)*record + size);
    }
    if (next >= end || (size_t)(end - next) < sizeof(CUpti_Activity))
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    size_t size = gt_cupti_record_size(((CUpti_Activity *)next)->kind);
    if (size == 0 || (size_t)(end - next) < size) return CUPTI_ERROR_INVALID_KIND;
    *record = (CUpti_Activity *)next;
    return CUPTI_SUCCESS;
}
