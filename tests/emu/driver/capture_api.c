/* Stream capture entry points. */
#include "emu_capture.h"

#include <stdlib.h>

static CUresult begin_capture(CUstream hStream, bool per_thread, CUstreamCaptureMode mode,
                              struct gt_graph *into, struct gt_node *const *deps, size_t n_deps)
{
    struct gt_stream *s;
    CUresult r = gt_stream_resolve(hStream, per_thread, &s);
    if (r != CUDA_SUCCESS) return r;
    if ((unsigned)mode > CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_ERROR_INVALID_VALUE;
    if (s->type == GT_STREAM_LEGACY) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    struct gt_capture *cap = calloc(1, sizeof *cap);
    if (!cap) return CUDA_ERROR_OUT_OF_MEMORY;
    if (into) {
        cap->graph = into;
    } else {
        r = gt_graph_new(&cap->graph);
        if (r != CUDA_SUCCESS) {
            free(cap);
            return r;
        }
        cap->own_graph = true;
    }
    cap->id = gt_next_id();
    cap->mode = mode;
    cap->origin = s;
    cap->thread = pthread_self();
    cap->status = CU_STREAM_CAPTURE_STATUS_ACTIVE;

    pthread_mutex_lock(&gt_capture_lock);
    if (gt_stream_capture(s)) {
        pthread_mutex_unlock(&gt_capture_lock);
        if (cap->own_graph) gt_graph_free(cap->graph);
        free(cap);
        return CUDA_ERROR_ILLEGAL_STATE;
    }
    pthread_mutex_lock(&cap->graph->lock);
    cap->first_node = cap->graph->n_nodes;
    cap->graph->capture = cap;
    pthread_mutex_unlock(&cap->graph->lock);
    gt_deps_set(&s->cap_deps, &s->n_cap_deps, &s->cap_deps_cap, deps, n_deps, false);
    cap->next = gt_active_captures;
    gt_active_captures = cap;
    atomic_store_explicit(&s->capture, cap, memory_order_release);
    if (s->ordered) atomic_fetch_add_explicit(&s->ctx->blocking_captures, 1, memory_order_acq_rel);
    if (mode == CU_STREAM_CAPTURE_MODE_GLOBAL)
        atomic_fetch_add_explicit(&gt_global_captures, 1, memory_order_acq_rel);
    if (mode != CU_STREAM_CAPTURE_MODE_RELAXED) gt_capture_thread_add(cap);
    pthread_mutex_unlock(&gt_capture_lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream)
{
    return begin_capture(hStream, false, CU_STREAM_CAPTURE_MODE_GLOBAL, NULL, NULL, 0);
}

CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream hStream)
{
    return begin_capture(hStream, true, CU_STREAM_CAPTURE_MODE_GLOBAL, NULL, NULL, 0);
}

CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    return begin_capture(hStream, false, mode, NULL, NULL, 0);
}

CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
    return begin_capture(hStream, true, mode, NULL, NULL, 0);
}

static CUresult begin_to_graph(CUstream hStream, bool per_thread, CUgraph hGraph,
                               const CUgraphNode *dependencies, size_t numDependencies,
                               CUstreamCaptureMode mode)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(hGraph, GT_KIND_GRAPH) || (numDependencies && !dependencies))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < numDependencies; i++) {
        const struct gt_node *n = (const struct gt_node *)dependencies[i];
        if (!gt_object_is(n, GT_KIND_GRAPH_NODE) || n->graph != (struct gt_graph *)hGraph)
            return CUDA_ERROR_INVALID_VALUE;
    }
    return begin_capture(hStream, per_thread, mode, (struct gt_graph *)hGraph,
                         (struct gt_node *const *)dependencies, numDependencies);
}

CUresult CUDAAPI cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
                                             const CUgraphNode *dependencies,
                                             const CUgraphEdgeData *dependencyData,
                                             size_t numDependencies, CUstreamCaptureMode mode)
{
    (void)dependencyData;
    return begin_to_graph(hStream, false, hGraph, dependencies, numDependencies, mode);
}

CUresult CUDAAPI cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph,
                                                  const CUgraphNode *dependencies,
                                                  const CUgraphEdgeData *dependencyData,
                                                  size_t numDependencies, CUstreamCaptureMode mode)
{
    (void)dependencyData;
    return begin_to_graph(hStream, true, hGraph, dependencies, numDependencies, mode);
}

static void mark_reachable(struct gt_node *n, unsigned char *seen)
{
    if (seen[n->index]) return;
    seen[n->index] = 1;
    for (size_t i = 0; i < n->n_deps; i++)
        mark_reachable(n->deps[i], seen);
}

/* Every captured node must lead to the origin stream's last work. */
static bool all_joined(struct gt_capture *cap)
{
    struct gt_graph *g = cap->graph;
    unsigned char *seen = calloc(g->n_nodes + 1, 1);
    if (!seen) return true;
    struct gt_stream *origin = cap->origin;
    for (size_t i = 0; i < origin->n_cap_deps; i++)
        mark_reachable(origin->cap_deps[i], seen);
    bool joined = true;
    for (size_t i = cap->first_node; i < g->n_nodes && joined; i++)
        joined = seen[i];
    free(seen);
    return joined;
}

/* Capture lock held: every stream of the capture stops capturing. */
static void detach_streams(struct gt_capture *cap)
{
    struct gt_context *ctx = cap->origin->ctx;
    pthread_mutex_lock(&ctx->order_lock);
    for (struct gt_stream *s = ctx->streams; s; s = s->next_in_ctx) {
        if (gt_stream_capture(s) != cap) continue;
        atomic_store_explicit(&s->capture, NULL, memory_order_release);
        s->n_cap_deps = 0;
        if (s->ordered) atomic_fetch_sub_explicit(&ctx->blocking_captures, 1, memory_order_acq_rel);
    }
    pthread_mutex_unlock(&ctx->order_lock);
    for (struct gt_capture **pp = &gt_active_captures; *pp; pp = &(*pp)->next) {
        if (*pp == cap) {
            *pp = cap->next;
            break;
        }
    }
    if (cap->mode == CU_STREAM_CAPTURE_MODE_GLOBAL)
        atomic_fetch_sub_explicit(&gt_global_captures, 1, memory_order_acq_rel);
    gt_capture_thread_remove(cap);
}

static CUresult end_capture(CUstream hStream, bool per_thread, CUgraph *phGraph)
{
    struct gt_stream *s;
    CUresult r = gt_stream_resolve(hStream, per_thread, &s);
    if (r != CUDA_SUCCESS) return r;
    if (!phGraph) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&gt_capture_lock);
    struct gt_capture *cap = gt_stream_capture(s);
    if (!cap) {
        pthread_mutex_unlock(&gt_capture_lock);
        return CUDA_ERROR_ILLEGAL_STATE;
    }
    if (cap->origin != s) {
        cap->status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
        pthread_mutex_unlock(&gt_capture_lock);
        return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    }
    if (cap->mode != CU_STREAM_CAPTURE_MODE_RELAXED &&
        !pthread_equal(cap->thread, pthread_self())) {
        pthread_mutex_unlock(&gt_capture_lock);
        return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    }
    bool joined = all_joined(cap);
    detach_streams(cap);
    pthread_mutex_unlock(&gt_capture_lock);

    pthread_mutex_lock(&cap->graph->lock);
    cap->graph->capture = NULL;
    pthread_mutex_unlock(&cap->graph->lock);
    r = cap->status != CU_STREAM_CAPTURE_STATUS_ACTIVE ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
        : !joined                                      ? CUDA_ERROR_STREAM_CAPTURE_UNJOINED
                                                       : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS) {
        *phGraph = (CUgraph)cap->graph;
    } else {
        *phGraph = NULL;
        if (cap->own_graph) gt_graph_free(cap->graph);
    }
    free(cap);
    return r;
}

CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    return end_capture(hStream, false, phGraph);
}

CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    return end_capture(hStream, true, phGraph);
}

static CUresult capture_status(CUstream hStream, bool per_thread, CUstreamCaptureStatus *status,
                               struct gt_stream **out)
{
    struct gt_stream *s;
    CUresult r = gt_stream_resolve(hStream, per_thread, &s);
    if (r != CUDA_SUCCESS) return r;
    if (!status) return CUDA_ERROR_INVALID_VALUE;
    if (s->type == GT_STREAM_LEGACY &&
        atomic_load_explicit(&s->ctx->blocking_captures, memory_order_acquire) > 0)
        return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    /* A stream outside any capture answers without the lock, as cheaply as
     * the driver's own query (tens of ns): a capture's status may change
     * only under the lock, but whether the stream has one is one load. */
    *status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (gt_stream_capture(s)) {
        pthread_mutex_lock(&gt_capture_lock);
        struct gt_capture *cap = gt_stream_capture(s);
        if (cap) *status = cap->status;
        pthread_mutex_unlock(&gt_capture_lock);
    }
    *out = s;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    struct gt_stream *s;
    return capture_status(hStream, false, captureStatus, &s);
}

CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    struct gt_stream *s;
    return capture_status(hStream, true, captureStatus, &s);
}

/* Edge data of captured dependencies: always the default (all zero). */
static const CUgraphEdgeData no_edge_data[256];

static CUresult capture_info(CUstream hStream, bool per_thread, CUstreamCaptureStatus *status,
                             cuuint64_t *id, CUgraph *graph, const CUgraphNode **deps,
                             const CUgraphEdgeData **edges, size_t *n_deps)
{
    struct gt_stream *s;
    CUresult r = capture_status(hStream, per_thread, status, &s);
    if (r == CUDA_SUCCESS && edges && !deps) r = CUDA_ERROR_INVALID_VALUE;
    if (r != CUDA_SUCCESS || *status != CU_STREAM_CAPTURE_STATUS_ACTIVE) return r;
    pthread_mutex_lock(&gt_capture_lock);
    struct gt_capture *cap = gt_stream_capture(s);
    if (cap) {
        if (id) *id = cap->id;
        if (graph) *graph = (CUgraph)cap->graph;
        if (deps) *deps = (const CUgraphNode *)s->cap_deps;
        if (edges) *edges = s->n_cap_deps <= 256 ? no_edge_data : NULL;
        if (n_deps) *n_deps = s->n_cap_deps;
    }
    pthread_mutex_unlock(&gt_capture_lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                        cuuint64_t *id_out)
{
    return capture_info(hStream, false, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

CUresult CUDAAPI cuStreamGetCaptureInfo_ptsz(CUstream hStream,
                                             CUstreamCaptureStatus *captureStatus_out,
                                             cuuint64_t *id_out)
{
    return capture_info(hStream, true, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream,
                                           CUstreamCaptureStatus *captureStatus_out,
                                           cuuint64_t *id_out, CUgraph *graph_out,
                                           const CUgraphNode **dependencies_out,
                                           size_t *numDependencies_out)
{
    return capture_info(hStream, false, captureStatus_out, id_out, graph_out, dependencies_out,
                        NULL, numDependencies_out);
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream,
                                                CUstreamCaptureStatus *captureStatus_out,
                                                cuuint64_t *id_out, CUgraph *graph_out,
                                                const CUgraphNode **dependencies_out,
                                                size_t *numDependencies_out)
{
    return capture_info(hStream, true, captureStatus_out, id_out, graph_out, dependencies_out, NULL,
                        numDependencies_out);
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v3(CUstream hStream,
                                           CUstreamCaptureStatus *captureStatus_out,
                                           cuuint64_t *id_out, CUgraph *graph_out,
                                           const CUgraphNode **dependencies_out,
                                           const CUgraphEdgeData **edgeData_out,
                                           size_t *numDependencies_out)
{
    return capture_info(hStream, false, captureStatus_out, id_out, graph_out, dependencies_out,
                        edgeData_out, numDependencies_out);
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream,
                                                CUstreamCaptureStatus *captureStatus_out,
                                                cuuint64_t *id_out, CUgraph *graph_out,
                                                const CUgraphNode **dependencies_out,
                                                const CUgraphEdgeData **edgeData_out,
                                                size_t *numDependencies_out)
{
    return capture_info(hStream, true, captureStatus_out, id_out, graph_out, dependencies_out,
                        edgeData_out, numDependencies_out);
}

CUresult CUDAAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!mode || (unsigned)*mode > CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_ERROR_INVALID_VALUE;
    *mode = gt_capture_exchange_mode(*mode);
    return CUDA_SUCCESS;
}
