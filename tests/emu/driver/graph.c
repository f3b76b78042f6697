/* Graphs and their nodes (built by stream capture, or empty nodes added
 * directly). */
#include "emu_stream.h"

#include <stdlib.h>
#include <string.h>

CUresult gt_graph_new(struct gt_graph **out)
{
    bool fresh;
    struct gt_graph *g = gt_object_new(GT_KIND_GRAPH, sizeof *g, sizeof(struct gt_object), &fresh);
    if (!g) return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&g->lock, NULL);
    g->id = (uint32_t)gt_next_id();
    *out = g;
    return CUDA_SUCCESS;
}

void gt_graph_free(struct gt_graph *g)
{
    if (!gt_object_kill(g, GT_KIND_GRAPH)) return;
    for (size_t i = 0; i < g->n_nodes; i++) {
        free(g->nodes[i]->deps);
        gt_object_free(g->nodes[i], GT_KIND_GRAPH_NODE);
    }
    free(g->nodes);
    pthread_mutex_destroy(&g->lock);
    gt_object_recycle(g, GT_KIND_GRAPH);
}

CUresult gt_graph_add_node(struct gt_graph *g, const struct gt_node_params *p,
                           struct gt_node *const *deps, size_t n_deps, struct gt_node **out)
{
    struct gt_node *node =
        gt_object_new(GT_KIND_GRAPH_NODE, sizeof *node, sizeof(struct gt_object), NULL);
    if (!node) return CUDA_ERROR_OUT_OF_MEMORY;
    node->p = *p;
    node->graph = g;
    if (n_deps) {
        node->deps = malloc(n_deps * sizeof *node->deps);
        if (!node->deps) {
            gt_object_free(node, GT_KIND_GRAPH_NODE);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        memcpy(node->deps, deps, n_deps * sizeof *node->deps);
        node->n_deps = n_deps;
    }
    pthread_mutex_lock(&g->lock);
    if (g->n_nodes == g->cap_nodes) {
        size_t cap = g->cap_nodes ? g->cap_nodes * 2 : 16;
        struct gt_node **nodes = realloc(g->nodes, cap * sizeof *nodes);
        if (!nodes) {
            pthread_mutex_unlock(&g->lock);
            free(node->deps);
            gt_object_free(node, GT_KIND_GRAPH_NODE);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        g->nodes = nodes;
        g->cap_nodes = cap;
    }
    node->index = g->n_nodes;
    g->nodes[g->n_nodes++] = node;
    pthread_mutex_unlock(&g->lock);
    *out = node;
    return CUDA_SUCCESS;
}

static CUresult graph_check(CUgraph h, struct gt_graph **out)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(h, GT_KIND_GRAPH)) return CUDA_ERROR_INVALID_VALUE;
    *out = (struct gt_graph *)h;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    if (!phGraph || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    struct gt_graph *g;
    r = gt_graph_new(&g);
    if (r == CUDA_SUCCESS) *phGraph = (CUgraph)g;
    return r;
}

CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph)
{
    struct gt_graph *g;
    CUresult r = graph_check(hGraph, &g);
    if (r != CUDA_SUCCESS) return r;
    pthread_mutex_lock(&g->lock);
    bool capturing = g->capture != NULL;
    pthread_mutex_unlock(&g->lock);
    if (capturing) return CUDA_ERROR_ILLEGAL_STATE;
    gt_graph_free(g);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    struct gt_graph *g;
    CUresult r = graph_check(hGraph, &g);
    if (r != CUDA_SUCCESS) return r;
    if (!numNodes) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g->lock);
    if (nodes) {
        size_t n = *numNodes < g->n_nodes ? *numNodes : g->n_nodes;
        for (size_t i = 0; i < n; i++)
            nodes[i] = (CUgraphNode)g->nodes[i];
        for (size_t i = n; i < *numNodes; i++)
            nodes[i] = NULL;
    }
    if (!nodes || *numNodes > g->n_nodes) *numNodes = g->n_nodes;
    pthread_mutex_unlock(&g->lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(hNode, GT_KIND_GRAPH_NODE) || !type) return CUDA_ERROR_INVALID_VALUE;
    *type = (CUgraphNodeType)((struct gt_node *)hNode)->p.kind;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                     const CUgraphNode *dependencies, size_t numDependencies)
{
    struct gt_graph *g;
    CUresult r = graph_check(hGraph, &g);
    if (r != CUDA_SUCCESS) return r;
    if (!phGraphNode || (numDependencies && !dependencies)) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < numDependencies; i++) {
        const struct gt_node *d = (const struct gt_node *)dependencies[i];
        if (!gt_object_is(d, GT_KIND_GRAPH_NODE) || d->graph != g) return CUDA_ERROR_INVALID_VALUE;
    }
    struct gt_node_params p = {.kind = GT_NODE_EMPTY};
    struct gt_node *node;
    r = gt_graph_add_node(g, &p, (struct gt_node *const *)dependencies, numDependencies, &node);
    if (r == CUDA_SUCCESS) *phGraphNode = (CUgraphNode)node;
    return r;
}
