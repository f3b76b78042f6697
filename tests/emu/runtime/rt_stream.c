/* Streams, events and host functions. cudaStream_t and cudaEvent_t are the driver's
 * CUstream and CUevent; flag values are the driver's (cudaStreamNonBlocking =
 * CU_STREAM_NON_BLOCKING, cudaEvent* = CU_EVENT_*). */
#include "rt_internal.h"

RT_API cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.streamCreate, pStream, CU_STREAM_DEFAULT));
}

RT_API cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.streamCreate, pStream, flags));
}

RT_API cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags,
                                                int priority)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.streamCreateWithPriority, pStream, flags, priority));
}

RT_API cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.streamDestroy, stream));
}

RT_API cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.streamSynchronize[RT_LEGACY], stream));
}

RT_API cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.streamSynchronize[RT_PER_THREAD], stream));
}

RT_API cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.streamQuery[RT_LEGACY], stream));
}

RT_API cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.streamQuery[RT_PER_THREAD], stream));
}

RT_API cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.streamWaitEvent[RT_LEGACY], stream, event, flags));
}

RT_API cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
                                            unsigned int flags)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.streamWaitEvent[RT_PER_THREAD], stream, event, flags));
}

RT_API cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int *flags)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.streamGetFlags[RT_LEGACY], hStream, flags));
}

RT_API cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t hStream, unsigned int *flags)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.streamGetFlags[RT_PER_THREAD], hStream, flags));
}

RT_API cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.streamGetPriority[RT_LEGACY], hStream, priority));
}

RT_API cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t hStream, int *priority)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.streamGetPriority[RT_PER_THREAD], hStream, priority));
}

/* cudaStreamCallback_t and CUstreamCallback differ only in naming the status type, and
 * the status values agree. */
RT_API cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                         void *userData, unsigned int flags)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.streamAddCallback[RT_LEGACY], stream,
                            (CUstreamCallback)callback, userData, flags));
}

RT_API cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback,
                                              void *userData, unsigned int flags)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.streamAddCallback[RT_PER_THREAD], stream,
                            (CUstreamCallback)callback, userData, flags));
}

RT_API cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.launchHostFunc[RT_LEGACY], stream, fn, userData));
}

RT_API cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.launchHostFunc[RT_PER_THREAD], stream, fn, userData));
}

RT_API cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.eventCreate, event, CU_EVENT_DEFAULT));
}

RT_API cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.eventCreate, event, flags));
}

RT_API cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.eventRecord[RT_LEGACY], event, stream));
}

RT_API cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.eventRecord[RT_PER_THREAD], event, stream));
}

RT_API cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
                                            unsigned int flags)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.eventRecordWithFlags[RT_LEGACY], event, stream, flags));
}

RT_API cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
                                                 unsigned int flags)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.eventRecordWithFlags[RT_PER_THREAD], event, stream, flags));
}

RT_API cudaError_t cudaEventQuery(cudaEvent_t event)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.eventQuery, event));
}

RT_API cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.eventSynchronize, event));
}

RT_API cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.eventElapsedTime, ms, start, end));
}

RT_API cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.eventDestroy, event));
}
