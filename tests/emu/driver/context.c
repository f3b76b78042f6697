/* Contexts: creation and teardown, the per-thread context stack and the
 * per-thread default streams. */
#include "emu_module.h"
#include "emu_stream.h"

#include <stdlib.h>

#define GT_CTX_STACK_DEPTH 32
#define GT_PTDS_SLOTS 4

struct ctx_ref {
    struct gt_context *ctx;
    unsigned long long id;
};

static __thread struct ctx_ref tls_stack[GT_CTX_STACK_DEPTH];
static __thread int tls_depth;

struct ptds_slot {
    struct gt_context *ctx;
    unsigned long long ctx_id;
    struct gt_stream *stream;
    unsigned long long stream_id;
};

static __thread struct ptds_slot tls_ptds[GT_PTDS_SLOTS];
static pthread_key_t ptds_key;
static pthread_once_t ptds_once = PTHREAD_ONCE_INIT;

static bool ref_valid(const struct ctx_ref *r)
{
    return gt_object_is(r->ctx, GT_KIND_CONTEXT) && gt_ctx_id(r->ctx) == r->id;
}

struct gt_context *gt_ctx_current(void)
{
    if (tls_depth == 0) return NULL;
    const struct ctx_ref *top = &tls_stack[tls_depth - 1];
    return ref_valid(top) ? top->ctx : NULL;
}

CUresult gt_ctx_require(struct gt_context **out)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    struct gt_context *ctx = gt_ctx_current();
    if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
    *out = ctx;
    return CUDA_SUCCESS;
}

CUresult gt_ctx_check(CUcontext h, struct gt_context **out)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (h == NULL) return gt_ctx_require(out);
    if (!gt_object_is(h, GT_KIND_CONTEXT)) return CUDA_ERROR_INVALID_CONTEXT;
    *out = (struct gt_context *)h;
    return CUDA_SUCCESS;
}

void gt_ctx_push(struct gt_context *ctx)
{
    if (tls_depth == GT_CTX_STACK_DEPTH) {
        for (int i = 1; i < GT_CTX_STACK_DEPTH; i++)
            tls_stack[i - 1] = tls_stack[i];
        tls_depth--;
    }
    tls_stack[tls_depth].ctx = ctx;
    tls_stack[tls_depth].id = gt_ctx_id(ctx);
    tls_depth++;
}

struct gt_context *gt_ctx_pop(void)
{
    if (tls_depth == 0) return NULL;
    tls_depth--;
    const struct ctx_ref *top = &tls_stack[tls_depth];
    return ref_valid(top) ? top->ctx : NULL;
}

void gt_ctx_set_top(struct gt_context *ctx)
{
    if (!ctx) {
        gt_ctx_pop();
        return;
    }
    if (tls_depth == 0) tls_depth = 1;
    tls_stack[tls_depth - 1].ctx = ctx;
    tls_stack[tls_depth - 1].id = gt_ctx_id(ctx);
}

/* Removes ctx from the calling thread's stack where it is on top. */
static void unstack(struct gt_context *ctx)
{
    if (tls_depth > 0 && tls_stack[tls_depth - 1].ctx == ctx) tls_depth--;
}

static void set_default_limits(struct gt_context *ctx)
{
    ctx->limits[CU_LIMIT_STACK_SIZE] = 1024;
    ctx->limits[CU_LIMIT_PRINTF_FIFO_SIZE] = 1 << 20;
    ctx->limits[CU_LIMIT_MALLOC_HEAP_SIZE] = 8 << 20;
    ctx->limits[CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH] = 2;
    ctx->limits[CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = 2048;
    ctx->limits[CU_LIMIT_MAX_L2_FETCH_GRANULARITY] = 64;
    ctx->limits[CU_LIMIT_SHMEM_SIZE] = 48 * 1024;
}

static CUresult ctx_setup(struct gt_context *ctx)
{
    ctx->streams = NULL;
    ctx->legacy = NULL;
    ctx->blocking_clock = 0;
    atomic_store_explicit(&ctx->blocking_captures, 0, memory_order_relaxed);
    set_default_limits(ctx);
    struct gt_stream *legacy;
    CUresult r = gt_stream_create(ctx, GT_STREAM_LEGACY, 0, 0, &legacy);
    if (r == CUDA_SUCCESS) ctx->legacy = legacy;
    return r;
}

CUresult gt_ctx_new(struct gt_device *dev, unsigned flags, bool primary, struct gt_context **out)
{
    bool fresh;
    struct gt_context *ctx = gt_object_new(GT_KIND_CONTEXT, sizeof *ctx, GT_CONTEXT_KEEP, &fresh);
    if (!ctx) return CUDA_ERROR_OUT_OF_MEMORY;
    if (fresh) {
        pthread_mutex_init(&ctx->order_lock, NULL);
        pthread_cond_init(&ctx->streams_cond, NULL);
    }
    atomic_store_explicit(&ctx->id, gt_next_id(), memory_order_relaxed);
    ctx->dev = dev;
    ctx->flags = flags;
    ctx->is_primary = primary;
    CUresult r = ctx_setup(ctx);
    if (r != CUDA_SUCCESS) {
        gt_object_free(ctx, GT_KIND_CONTEXT);
        return r;
    }
    *out = ctx;
    return CUDA_SUCCESS;
}

struct stream_ref {
    struct gt_stream *s;
    unsigned long long id;
};

/* Snapshot of the context's streams (order_lock must not be held). */
static struct stream_ref *list_streams(struct gt_context *ctx, size_t *n)
{
    pthread_mutex_lock(&ctx->order_lock);
    size_t count = 0;
    for (struct gt_stream *s = ctx->streams; s; s = s->next_in_ctx)
        count++;
    struct stream_ref *refs = malloc((count ? count : 1) * sizeof *refs);
    size_t i = 0;
    if (refs) {
        for (struct gt_stream *s = ctx->streams; s; s = s->next_in_ctx, i++) {
            refs[i].s = s;
            refs[i].id = atomic_load_explicit(&s->id, memory_order_relaxed);
        }
    }
    pthread_mutex_unlock(&ctx->order_lock);
    *n = i;
    return refs;
}

/* Waits for every stream's queued work and, with `until_end`, for its
 * simulated end. */
static CUresult sync_streams(struct gt_context *ctx, bool until_end)
{
    size_t n;
    struct stream_ref *refs = list_streams(ctx, &n);
    if (!refs) return CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; i++) {
        struct gt_stream *s = refs[i].s;
        pthread_mutex_lock(&s->lock);
        uint64_t seq = s->work_tail, end = s->clock;
        bool same = atomic_load_explicit(&s->id, memory_order_relaxed) == refs[i].id;
        pthread_mutex_unlock(&s->lock);
        if (same) gt_wait_complete(s, refs[i].id, seq, until_end ? end : 0);
    }
    free(refs);
    return CUDA_SUCCESS;
}

CUresult gt_ctx_synchronize(struct gt_context *ctx)
{
    return sync_streams(ctx, true);
}

CUresult gt_ctx_synchronize_work(struct gt_context *ctx)
{
    return sync_streams(ctx, false);
}

/* Waits for all work, then drops streams, modules and memory of ctx. */
static void ctx_teardown(struct gt_context *ctx)
{
    gt_capture_invalidate_context(ctx);
    gt_ctx_synchronize(ctx);
    size_t n;
    struct stream_ref *refs = list_streams(ctx, &n);
    for (size_t i = 0; refs && i < n; i++) {
        if (atomic_load_explicit(&refs[i].s->id, memory_order_relaxed) == refs[i].id)
            gt_stream_retire(refs[i].s);
    }
    free(refs);
    pthread_mutex_lock(&ctx->order_lock);
    while (ctx->streams)
        pthread_cond_wait(&ctx->streams_cond, &ctx->order_lock);
    pthread_mutex_unlock(&ctx->order_lock);
    gt_modules_drop_context(ctx);
    gt_mem_remove_context(ctx);
}

void gt_ctx_destroy(struct gt_context *ctx)
{
    ctx_teardown(ctx);
    unstack(ctx);
    gt_object_free(ctx, GT_KIND_CONTEXT);
}

CUresult gt_ctx_reset(struct gt_context *ctx)
{
    /* The handle (and its id) stays valid and current where it was. */
    ctx_teardown(ctx);
    return ctx_setup(ctx);
}

static void ptds_release(void *arg)
{
    (void)arg;
    for (int i = 0; i < GT_PTDS_SLOTS; i++) {
        struct ptds_slot *slot = &tls_ptds[i];
        if (slot->stream &&
            atomic_load_explicit(&slot->stream->id, memory_order_relaxed) == slot->stream_id)
            gt_stream_retire(slot->stream);
        slot->stream = NULL;
    }
}

static void ptds_key_init(void)
{
    pthread_key_create(&ptds_key, ptds_release);
}

CUresult gt_ctx_per_thread_stream(struct gt_context *ctx, struct gt_stream **out)
{
    unsigned long long ctx_id = gt_ctx_id(ctx);
    struct ptds_slot *free_slot = NULL;
    for (int i = 0; i < GT_PTDS_SLOTS; i++) {
        struct ptds_slot *slot = &tls_ptds[i];
        bool alive =
            slot->stream && gt_object_is(slot->stream, GT_KIND_STREAM) &&
            atomic_load_explicit(&slot->stream->id, memory_order_relaxed) == slot->stream_id;
        if (alive && slot->ctx == ctx && slot->ctx_id == ctx_id) {
            *out = slot->stream;
            return CUDA_SUCCESS;
        }
        if (!alive && !free_slot) free_slot = slot;
    }
    if (!free_slot) {
        free_slot = &tls_ptds[0];
        gt_stream_retire(free_slot->stream);
    }
    pthread_once(&ptds_once, ptds_key_init);
    struct gt_stream *s;
    CUresult r = gt_stream_create(ctx, GT_STREAM_PER_THREAD, 0, 0, &s);
    if (r != CUDA_SUCCESS) return r;
    free_slot->ctx = ctx;
    free_slot->ctx_id = ctx_id;
    free_slot->stream = s;
    free_slot->stream_id = atomic_load_explicit(&s->id, memory_order_relaxed);
    pthread_setspecific(ptds_key, tls_ptds);
    *out = s;
    return CUDA_SUCCESS;
}
