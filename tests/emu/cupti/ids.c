/* Ids of contexts, devices, streams and threads, as records carry them. */
#include "cupti_emu.h"

#include <unistd.h>

/* Relaxed: a setting, read by each API record. */
static _Atomic int thread_id_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;

CUptiResult CUPTIAPI cuptiGetContextId(CUcontext context, uint32_t *contextId)
{
    CUptiResult r = gt_cupti_begin();
    if (r != CUPTI_SUCCESS) return r;
    if (!contextId) return CUPTI_ERROR_INVALID_PARAMETER;
    if (!context || gt_cupti_drv.context(context, contextId, NULL) != 0)
        return CUPTI_ERROR_INVALID_CONTEXT;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext context, uint32_t *deviceId)
{
    CUptiResult r = gt_cupti_begin();
    if (r != CUPTI_SUCCESS) return r;
    if (!deviceId) return CUPTI_ERROR_INVALID_PARAMETER;
    if (gt_cupti_drv.context(context, NULL, deviceId) != 0) return CUPTI_ERROR_INVALID_DEVICE;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetStreamIdEx(CUcontext context, CUstream stream, uint8_t perThreadStream,
                                        uint32_t *streamId)
{
    CUptiResult r = gt_cupti_begin();
    if (r != CUPTI_SUCCESS) return r;
    if (!streamId) return CUPTI_ERROR_INVALID_PARAMETER;
    if (gt_cupti_drv.stream(context, stream, perThreadStream, streamId) != 0)
        return CUPTI_ERROR_INVALID_STREAM;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetStreamId(CUcontext context, CUstream stream, uint32_t *streamId)
{
    return cuptiGetStreamIdEx(context, stream, 0, streamId);
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
    CUptiResult r = gt_cupti_begin();
    if (r != CUPTI_SUCCESS) return r;
    if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT &&
        type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
        return CUPTI_ERROR_INVALID_PARAMETER;
    atomic_store_explicit(&thread_id_type, (int)type, memory_order_relaxed);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetThreadIdType(CUpti_ActivityThreadIdType *type)
{
    CUptiResult r = gt_cupti_begin();
    if (r != CUPTI_SUCCESS) return r;
    if (!type) return CUPTI_ERROR_INVALID_PARAMETER;
    *type = (CUpti_ActivityThreadIdType)atomic_load_explicit(&thread_id_type, memory_order_relaxed);
    return CUPTI_SUCCESS;
}

uint32_t gt_cupti_thread_id(void)
{
    /* DEFAULT is pthread_self(), SYSTEM the kernel's thread id, as documented. */
    if (atomic_load_explicit(&thread_id_type, memory_order_relaxed) ==
        CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
        return (uint32_t)gettid();
    return (uint32_t)pthread_self();
}
