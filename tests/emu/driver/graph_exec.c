/* Executable graphs: a snapshot of a graph's nodes. A launch schedules
 * every node on the launch stream's clock after its dependencies (so
 * independent branches overlap in simulated time) and queues the data
 * operations, in node order, for the stream's worker. */
#include "emu_stream.h"
#include "emu_trace.h"

#include <stdlib.h>
#include <string.h>

struct exec_node {
    struct gt_node_params p;
    uint64_t id; /* a node of this instantiation: a tool tells its runs apart */
    size_t *deps;
    size_t n_deps;
};

struct gt_graph_exec {
    struct gt_object obj;
    struct gt_context *ctx;
    uint32_t graph_id; /* the graph instantiated */
    struct exec_node *nodes;
    size_t n_nodes;
    size_t n_data; /* nodes that need the worker */
    size_t *dep_storage;
};

static bool is_data_node(enum gt_node_kind kind)
{
    return kind == GT_NODE_MEMCPY || kind == GT_NODE_MEMSET || kind == GT_NODE_HOST ||
           kind == GT_NODE_MEM_FREE || kind == GT_NODE_WAIT_EVENT;
}

static void exec_free(struct gt_graph_exec *x)
{
    free(x->nodes);
    free(x->dep_storage);
    gt_object_recycle(x, GT_KIND_GRAPH_EXEC);
}

static CUresult instantiate(CUgraphExec *out, CUgraph hGraph)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!out || !gt_object_is(hGraph, GT_KIND_GRAPH)) return CUDA_ERROR_INVALID_VALUE;
    struct gt_graph *g = (struct gt_graph *)hGraph;
    struct gt_graph_exec *x =
        gt_object_new(GT_KIND_GRAPH_EXEC, sizeof *x, sizeof(struct gt_object), NULL);
    if (!x) return CUDA_ERROR_OUT_OF_MEMORY;
    x->ctx = ctx;
    pthread_mutex_lock(&g->lock);
    size_t total_deps = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        total_deps += g->nodes[i]->n_deps;
    x->nodes = calloc(g->n_nodes ? g->n_nodes : 1, sizeof *x->nodes);
    x->dep_storage = malloc((total_deps ? total_deps : 1) * sizeof *x->dep_storage);
    bool ok = x->nodes && x->dep_storage && !g->capture;
    size_t used = 0;
    for (size_t i = 0; ok && i < g->n_nodes; i++) {
        const struct gt_node *n = g->nodes[i];
        struct exec_node *e = &x->nodes[i];
        e->p = n->p;
        e->id = gt_next_id();
        e->deps = x->dep_storage + used;
        e->n_deps = n->n_deps;
        for (size_t d = 0; d < n->n_deps; d++)
            e->deps[d] = n->deps[d]->index;
        used += n->n_deps;
        x->n_data += is_data_node(n->p.kind);
    }
    x->n_nodes = g->n_nodes;
    x->graph_id = g->id;
    bool capturing = g->capture != NULL;
    pthread_mutex_unlock(&g->lock);
    if (!ok) {
        gt_object_kill(x, GT_KIND_GRAPH_EXEC);
        exec_free(x);
        return capturing ? CUDA_ERROR_ILLEGAL_STATE : CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = (CUgraphExec)x;
    return CUDA_SUCCESS;
}

static CUresult instantiate_logged(CUgraphExec *phGraphExec, CUgraph hGraph,
                                   CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize)
{
    if (phErrorNode) *phErrorNode = NULL;
    if (logBuffer && bufferSize) logBuffer[0] = '\0';
    return instantiate(phGraphExec, hGraph);
}

CUresult CUDAAPI cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph,
                                    CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize)
{
    return instantiate_logged(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph,
                                       CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize)
{
    return instantiate_logged(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

#define INSTANTIATE_FLAGS                                                                          \
    (CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |        \
     CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY)

CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                             unsigned long long flags)
{
    CUresult r = gt_ready();
    if (r == CUDA_SUCCESS && (flags & ~(unsigned long long)INSTANTIATE_FLAGS))
        r = CUDA_ERROR_INVALID_VALUE;
    return r != CUDA_SUCCESS ? r : instantiate(phGraphExec, hGraph);
}

static CUresult instantiate_params(CUgraphExec *phGraphExec, CUgraph hGraph,
                                   CUDA_GRAPH_INSTANTIATE_PARAMS *params)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!params || (params->flags & ~(cuuint64_t)INSTANTIATE_FLAGS))
        return CUDA_ERROR_INVALID_VALUE;
    r = instantiate(phGraphExec, hGraph);
    params->hErrNode_out = NULL;
    params->result_out =
        r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
    return r;
}

CUresult CUDAAPI cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                              CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    return instantiate_params(phGraphExec, hGraph, instantiateParams);
}

CUresult CUDAAPI cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                   CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    return instantiate_params(phGraphExec, hGraph, instantiateParams);
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_kill(hGraphExec, GT_KIND_GRAPH_EXEC)) return CUDA_ERROR_INVALID_VALUE;
    /* Launched work keeps no reference to the exec: its ops are copies. */
    exec_free((struct gt_graph_exec *)hGraphExec);
    return CUDA_SUCCESS;
}

static uint64_t run_event_record(struct gt_stream *s, struct gt_event *ev, uint64_t start)
{
    if (!gt_object_is(ev, GT_KIND_EVENT)) return start;
    pthread_mutex_lock(&ev->lock);
    ev->gen++;
    ev->recorded = true;
    ev->sealed = true;
    ev->ts = start;
    ev->closed = false;
    ev->stream = s;
    ev->stream_id = atomic_load_explicit(&s->id, memory_order_relaxed);
    ev->work_seq = gt_stream_seq(s);
    ev->capture = NULL;
    pthread_mutex_unlock(&ev->lock);
    gt_count(&gt_counters.event_records);
    return start;
}

static uint64_t run_event_wait(struct gt_stream *s, struct gt_event *ev, uint64_t start)
{
    if (!gt_object_is(ev, GT_KIND_EVENT)) return start;
    struct gt_event_view v;
    gt_event_observe(ev, &v);
    if (!v.recorded || v.captured) return start;
    gt_stream_push_wait(s, &v.at);
    return gt_max_u64(start, v.ts);
}

/* Tells a tracing tool of a node's work. */
static void trace_node(const struct gt_stream *s, const struct gt_graph_exec *x,
                       const struct exec_node *e, uint64_t start)
{
    bool work =
        e->p.kind == GT_NODE_KERNEL || e->p.kind == GT_NODE_MEMCPY || e->p.kind == GT_NODE_MEMSET;
    if (!work || !gt_trace_attached()) return;
    struct gtemu_work w = e->p.work;
    gt_trace_work_at(&w, s, start, start + e->p.ns);
    w.graph_id = x->graph_id;
    w.graph_node_id = e->id;
    gt_trace_work(&w);
}

/* Schedules node i at `start` and returns its end. */
static uint64_t run_node(struct gt_stream *s, const struct exec_node *e, uint64_t start)
{
    struct gt_op op = {.start = start};
    switch (e->p.kind) {
    case GT_NODE_MEMCPY:
        op.kind = GT_OP_COPY;
        op.u.copy = e->p.u.copy;
        break;
    case GT_NODE_MEMSET:
        op.kind = GT_OP_MEMSET;
        op.u.memset = e->p.u.memset;
        break;
    case GT_NODE_HOST:
        op.kind = GT_OP_HOST_FN;
        op.u.host.fn = e->p.u.host.fn;
        op.u.host.arg = e->p.u.host.arg;
        break;
    case GT_NODE_MEM_FREE:
        op.kind = GT_OP_FREE_DEVICE;
        op.u.free_ptr = e->p.u.free_ptr;
        break;
    case GT_NODE_EVENT_RECORD:
        return run_event_record(s, e->p.u.event, start);
    case GT_NODE_WAIT_EVENT:
        return run_event_wait(s, e->p.u.event, start);
    default:
        return start + e->p.ns; /* kernels and empty nodes only take time */
    }
    gt_stream_push(s, &op, false);
    return start + e->p.ns;
}

static CUresult launch_captured(struct gt_stream *s, const struct gt_graph_exec *x)
{
    for (size_t i = 0; i < x->n_nodes; i++) {
        CUresult r = gt_capture_add(s, &x->nodes[i].p);
        if (r != CUDA_SUCCESS) return r;
    }
    return CUDA_SUCCESS;
}

static CUresult graph_launch(CUgraphExec hGraphExec, CUstream hStream, bool per_thread)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(hGraphExec, GT_KIND_GRAPH_EXEC)) return CUDA_ERROR_INVALID_VALUE;
    const struct gt_graph_exec *x = (const struct gt_graph_exec *)hGraphExec;
    struct gt_stream *s;
    r = gt_stream_resolve(hStream, per_thread, &s);
    if (r == CUDA_SUCCESS) r = gt_capture_check_legacy(s);
    if (r != CUDA_SUCCESS) return r;
    if (gt_stream_capture(s)) return launch_captured(s, x);
    uint64_t *ends = malloc((x->n_nodes ? x->n_nodes : 1) * sizeof *ends);
    if (!ends) return CUDA_ERROR_OUT_OF_MEMORY;
    uint64_t ready = gt_stream_begin(s, x->n_data);
    uint64_t last = ready;
    for (size_t i = 0; i < x->n_nodes; i++) {
        const struct exec_node *e = &x->nodes[i];
        uint64_t start = ready;
        for (size_t d = 0; d < e->n_deps; d++)
            start = gt_max_u64(start, ends[e->deps[d]]);
        ends[i] = run_node(s, e, start);
        trace_node(s, x, e, start);
        last = gt_max_u64(last, ends[i]);
    }
    if (gt_trace_attached()) {
        struct gtemu_work w = {.kind = GTEMU_WORK_GRAPH, .graph_id = x->graph_id};
        gt_trace_work_at(&w, s, ready, last);
        gt_trace_work(&w);
    }
    gt_stream_advance(s, ready, last);
    gt_stream_end(s);
    free(ends);
    gt_count(&gt_counters.graph_launches);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    GT_API_ENTER(cuGraphLaunch, hGraphExec, hStream);
    return GT_API_EXIT(graph_launch(hGraphExec, hStream, false));
}

CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    GT_API_ENTER(cuGraphLaunch_ptsz, hGraphExec, hStream);
    return GT_API_EXIT(graph_launch(hGraphExec, hStream, true));
}

static CUresult graph_upload(CUgraphExec hGraphExec, CUstream hStream, bool per_thread)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(hGraphExec, GT_KIND_GRAPH_EXEC)) return CUDA_ERROR_INVALID_VALUE;
    struct gt_stream *s;
    return gt_stream_resolve(hStream, per_thread, &s);
}

CUresult CUDAAPI cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
    return graph_upload(hGraphExec, hStream, false);
}

CUresult CUDAAPI cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    return graph_upload(hGraphExec, hStream, true);
}
