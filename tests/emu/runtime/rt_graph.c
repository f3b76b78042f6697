/* Stream capture and graphs. cudaGraph_t/cudaGraphExec_t/cudaGraphNode_t are the
 * driver's handles and the capture modes and statuses have the driver's values. */
#include "rt_trace.h"

static cudaError_t begin_capture(cudaStream_t stream, enum cudaStreamCaptureMode mode,
                                 enum rt_stream_mode ptds)
{
    return RT_CALL(gt_rt_drv.streamBeginCapture[ptds], stream, (CUstreamCaptureMode)mode);
}

RT_API cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    RT_WITH_CONTEXT(begin_capture(stream, mode, RT_LEGACY));
}

RT_API cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    RT_WITH_CONTEXT(begin_capture(stream, mode, RT_PER_THREAD));
}

RT_API cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.streamEndCapture[RT_LEGACY], stream, pGraph));
}

RT_API cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.streamEndCapture[RT_PER_THREAD], stream, pGraph));
}

static cudaError_t is_capturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                enum rt_stream_mode ptds)
{
    return RT_CALL(gt_rt_drv.streamIsCapturing[ptds], stream, (CUstreamCaptureStatus *)status);
}

RT_API cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
                                         enum cudaStreamCaptureStatus *pCaptureStatus)
{
    RT_WITH_CONTEXT(is_capturing(stream, pCaptureStatus, RT_LEGACY));
}

RT_API cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream,
                                              enum cudaStreamCaptureStatus *pCaptureStatus)
{
    RT_WITH_CONTEXT(is_capturing(stream, pCaptureStatus, RT_PER_THREAD));
}

static cudaError_t capture_info(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                unsigned long long *id, cudaGraph_t *graph,
                                const cudaGraphNode_t **dependencies,
                                const cudaGraphEdgeData **edge_data, size_t *count,
                                enum rt_stream_mode ptds)
{
    _Static_assert(sizeof(cudaGraphEdgeData) == sizeof(CUgraphEdgeData), "edge data layouts agree");
    return RT_CALL(gt_rt_drv.streamGetCaptureInfo[ptds], stream, (CUstreamCaptureStatus *)status,
                   (cuuint64_t *)id, graph, dependencies, (const CUgraphEdgeData **)edge_data,
                   count);
}

RT_API cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream,
                                            enum cudaStreamCaptureStatus *captureStatus_out,
                                            unsigned long long *id_out, cudaGraph_t *graph_out,
                                            const cudaGraphNode_t **dependencies_out,
                                            const cudaGraphEdgeData **edgeData_out,
                                            size_t *numDependencies_out)
{
    RT_WITH_CONTEXT(capture_info(stream, captureStatus_out, id_out, graph_out, dependencies_out,
                                 edgeData_out, numDependencies_out, RT_LEGACY));
}

RT_API cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream,
                                                 enum cudaStreamCaptureStatus *captureStatus_out,
                                                 unsigned long long *id_out, cudaGraph_t *graph_out,
                                                 const cudaGraphNode_t **dependencies_out,
                                                 const cudaGraphEdgeData **edgeData_out,
                                                 size_t *numDependencies_out)
{
    RT_WITH_CONTEXT(capture_info(stream, captureStatus_out, id_out, graph_out, dependencies_out,
                                 edgeData_out, numDependencies_out, RT_PER_THREAD));
}

RT_API cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.graphCreate, pGraph, flags));
}

RT_API cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                        unsigned long long flags)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.graphInstantiateWithFlags, pGraphExec, graph, flags));
}

RT_API cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                 unsigned long long flags)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.graphInstantiateWithFlags, pGraphExec, graph, flags));
}

static cudaError_t graph_launch(cudaGraphExec_t graphExec, cudaStream_t stream,
                                enum rt_stream_mode mode)
{
    cudaError_t err = gt_rt_context();
    if (err == cudaSuccess) err = RT_CALL(gt_rt_drv.graphLaunch[mode], graphExec, stream);
    return gt_rt_result(err);
}

RT_API cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    RT_API_ENTER(cudaGraphLaunch, 10000, graphExec, stream);
    return RT_API_EXIT(graph_launch(graphExec, stream, RT_LEGACY));
}

RT_API cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    RT_API_ENTER(cudaGraphLaunch_ptsz, 10000, graphExec, stream);
    return RT_API_EXIT(graph_launch(graphExec, stream, RT_PER_THREAD));
}

RT_API cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.graphExecDestroy, graphExec));
}

RT_API cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    RT_WITH_CONTEXT(RT_CALL(gt_rt_drv.graphDestroy, graph));
}
