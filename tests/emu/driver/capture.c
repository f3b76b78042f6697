/* Stream capture: work submitted to a capturing stream becomes graph
 * nodes. Each capturing stream has a dependency set (the nodes the next one
 * depends on); events recorded in a capture carry such a set to other
 * streams, which join the capture by waiting on them. */
#include "emu_capture.h"

#include <stdlib.h>
#include <string.h>

pthread_mutex_t gt_capture_lock = PTHREAD_MUTEX_INITIALIZER;
struct gt_capture *gt_active_captures;
/* Active captures begun in CU_STREAM_CAPTURE_MODE_GLOBAL, for the rules
 * on potentially unsafe calls made by other threads. */
_Atomic int gt_global_captures;

static __thread CUstreamCaptureMode tls_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
static __thread struct gt_capture *tls_captures[GT_THREAD_CAPTURES];

void gt_capture_thread_add(struct gt_capture *cap)
{
    for (int i = 0; i < GT_THREAD_CAPTURES; i++) {
        if (!tls_captures[i]) {
            tls_captures[i] = cap;
            return;
        }
    }
}

void gt_capture_thread_remove(struct gt_capture *cap)
{
    for (int i = 0; i < GT_THREAD_CAPTURES; i++)
        if (tls_captures[i] == cap) tls_captures[i] = NULL;
}

CUstreamCaptureMode gt_capture_exchange_mode(CUstreamCaptureMode mode)
{
    CUstreamCaptureMode old = tls_mode;
    tls_mode = mode;
    return old;
}

struct gt_capture *gt_capture_find(unsigned long long id)
{
    for (struct gt_capture *c = gt_active_captures; c; c = c->next)
        if (c->id == id) return c;
    return NULL;
}

/* Capture lock held. */
static void invalidate_locked(struct gt_capture *cap)
{
    cap->status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
}

void gt_capture_invalidate(struct gt_capture *cap)
{
    pthread_mutex_lock(&gt_capture_lock);
    invalidate_locked(cap);
    pthread_mutex_unlock(&gt_capture_lock);
}

/* Invalidates the captures of ctx's streams; with `blocking_only`, only
 * those of streams that take part in legacy ordering. Returns how many
 * streams were capturing. */
static int invalidate_streams(struct gt_context *ctx, bool blocking_only)
{
    int n = 0;
    /* Lock order: the capture lock, then the context's order lock. */
    pthread_mutex_lock(&gt_capture_lock);
    pthread_mutex_lock(&ctx->order_lock);
    for (struct gt_stream *s = ctx->streams; s; s = s->next_in_ctx) {
        struct gt_capture *cap = gt_stream_capture(s);
        if (cap && (!blocking_only || s->ordered)) {
            invalidate_locked(cap);
            n++;
        }
    }
    pthread_mutex_unlock(&ctx->order_lock);
    pthread_mutex_unlock(&gt_capture_lock);
    return n;
}

void gt_capture_invalidate_context(struct gt_context *ctx)
{
    invalidate_streams(ctx, false);
}

CUresult gt_capture_check_legacy(struct gt_stream *s)
{
    if (s->type != GT_STREAM_LEGACY ||
        atomic_load_explicit(&s->ctx->blocking_captures, memory_order_acquire) == 0)
        return CUDA_SUCCESS;
    return invalidate_streams(s->ctx, true) > 0 ? CUDA_ERROR_STREAM_CAPTURE_IMPLICIT : CUDA_SUCCESS;
}

CUresult gt_capture_check_unsafe(void)
{
    if (tls_mode == CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_SUCCESS;
    bool own = false;
    for (int i = 0; i < GT_THREAD_CAPTURES; i++)
        own = own || tls_captures[i] != NULL;
    bool global = tls_mode == CU_STREAM_CAPTURE_MODE_GLOBAL &&
                  atomic_load_explicit(&gt_global_captures, memory_order_acquire) > 0;
    if (!own && !global) return CUDA_SUCCESS;
    pthread_mutex_lock(&gt_capture_lock);
    for (int i = 0; i < GT_THREAD_CAPTURES; i++)
        if (tls_captures[i]) invalidate_locked(tls_captures[i]);
    pthread_mutex_unlock(&gt_capture_lock);
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

CUresult gt_capture_check_sync(struct gt_stream *s)
{
    CUresult r = gt_capture_check_legacy(s);
    if (r != CUDA_SUCCESS) return r;
    struct gt_capture *cap = gt_stream_capture(s);
    if (!cap) return CUDA_SUCCESS;
    gt_capture_invalidate(cap);
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

bool gt_deps_set(struct gt_node ***deps, size_t *n, size_t *cap, struct gt_node *const *from,
                 size_t count, bool append)
{
    size_t base = append ? *n : 0;
    if (base + count > *cap) {
        size_t want = (base + count) * 2;
        struct gt_node **grown = realloc(*deps, want * sizeof *grown);
        if (!grown) return false;
        *deps = grown;
        *cap = want;
    }
    for (size_t i = 0; i < count; i++) {
        bool dup = false;
        for (size_t j = 0; j < base && !dup; j++)
            dup = (*deps)[j] == from[i];
        if (!dup) (*deps)[base++] = from[i];
    }
    *n = base;
    return true;
}

/* Capture lock held: adds a node after s's dependencies. */
static CUresult add_locked(struct gt_stream *s, struct gt_capture *cap,
                           const struct gt_node_params *p)
{
    if (cap->status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    struct gt_node *node;
    CUresult r = gt_graph_add_node(cap->graph, p, s->cap_deps, s->n_cap_deps, &node);
    if (r != CUDA_SUCCESS) return r;
    if (!gt_deps_set(&s->cap_deps, &s->n_cap_deps, &s->cap_deps_cap, &node, 1, false))
        return CUDA_ERROR_OUT_OF_MEMORY;
    return CUDA_SUCCESS;
}

CUresult gt_capture_add(struct gt_stream *s, const struct gt_node_params *p)
{
    pthread_mutex_lock(&gt_capture_lock);
    struct gt_capture *cap = gt_stream_capture(s);
    CUresult r = cap ? add_locked(s, cap, p) : CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    pthread_mutex_unlock(&gt_capture_lock);
    return r;
}

CUresult gt_capture_event_record(struct gt_stream *s, struct gt_event *ev, bool external)
{
    pthread_mutex_lock(&gt_capture_lock);
    struct gt_capture *cap = gt_stream_capture(s);
    CUresult r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    if (cap && cap->status == CU_STREAM_CAPTURE_STATUS_ACTIVE) {
        r = CUDA_SUCCESS;
        if (external) {
            struct gt_node_params p = {.kind = GT_NODE_EVENT_RECORD};
            p.u.event = ev;
            r = add_locked(s, cap, &p);
        }
    }
    if (r == CUDA_SUCCESS) {
        pthread_mutex_lock(&ev->lock);
        ev->gen++;
        ev->capture = cap;
        ev->capture_id = cap->id;
        size_t cap_n = ev->n_cap_deps;
        if (!gt_deps_set(&ev->cap_deps, &ev->n_cap_deps, &cap_n, s->cap_deps, s->n_cap_deps, false))
            r = CUDA_ERROR_OUT_OF_MEMORY;
        pthread_mutex_unlock(&ev->lock);
    }
    pthread_mutex_unlock(&gt_capture_lock);
    return r;
}

/* Capture lock held: s (not capturing) joins cap. */
static void join_locked(struct gt_stream *s, struct gt_capture *cap)
{
    atomic_store_explicit(&s->capture, cap, memory_order_release);
    if (s->ordered) atomic_fetch_add_explicit(&s->ctx->blocking_captures, 1, memory_order_acq_rel);
}

CUresult gt_capture_wait_event(struct gt_stream *s, struct gt_event *ev, bool external)
{
    pthread_mutex_lock(&gt_capture_lock);
    struct gt_capture *mine = gt_stream_capture(s);
    pthread_mutex_lock(&ev->lock);
    struct gt_capture *theirs = ev->capture ? gt_capture_find(ev->capture_id) : NULL;
    CUresult r = CUDA_SUCCESS;
    if (ev->capture && !theirs) {
        r = CUDA_ERROR_STREAM_CAPTURE_ISOLATION; /* its capture has ended */
    } else if (theirs && mine && mine != theirs) {
        r = CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
        invalidate_locked(mine);
    } else if (theirs) {
        if (theirs->status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
            r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        else if (!mine)
            join_locked(s, theirs);
        if (r == CUDA_SUCCESS && !gt_deps_set(&s->cap_deps, &s->n_cap_deps, &s->cap_deps_cap,
                                              ev->cap_deps, ev->n_cap_deps, mine != NULL))
            r = CUDA_ERROR_OUT_OF_MEMORY;
    } else if (mine && external) {
        struct gt_node_params p = {.kind = GT_NODE_WAIT_EVENT};
        p.u.event = ev;
        pthread_mutex_unlock(&ev->lock);
        r = add_locked(s, mine, &p);
        pthread_mutex_unlock(&gt_capture_lock);
        return r;
    } else if (mine) {
        r = CUDA_ERROR_STREAM_CAPTURE_ISOLATION; /* a dependency from outside the capture */
        invalidate_locked(mine);
    }
    pthread_mutex_unlock(&ev->lock);
    pthread_mutex_unlock(&gt_capture_lock);
    return r;
}
