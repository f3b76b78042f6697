/* Stream objects and the submission path: virtual scheduling, launch queue
 * back-pressure and the ordering rules of the legacy default stream. */
#include "emu_stream.h"

#include <stdlib.h>
#include <string.h>

CUresult gt_stream_create(struct gt_context *ctx, enum gt_stream_type type, unsigned flags,
                          int priority, struct gt_stream **out)
{
    bool fresh;
    struct gt_stream *s = gt_object_new(GT_KIND_STREAM, sizeof *s, GT_STREAM_KEEP, &fresh);
    if (!s) return CUDA_ERROR_OUT_OF_MEMORY;
    if (fresh) {
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->work_cond, NULL);
        pthread_cond_init(&s->done_cond, NULL);
    }
    pthread_mutex_lock(&s->lock);
    atomic_store_explicit(&s->id, gt_next_id(), memory_order_relaxed);
    s->ctx = ctx;
    s->type = type;
    s->flags = flags;
    s->priority = priority;
    s->ordered = type != GT_STREAM_NONBLOCKING;
    s->last_was_record = true; /* a first record is timed like a start event */
    pthread_mutex_unlock(&s->lock);

    pthread_mutex_lock(&ctx->order_lock);
    s->next_in_ctx = ctx->streams;
    ctx->streams = s;
    pthread_mutex_unlock(&ctx->order_lock);
    *out = s;
    return CUDA_SUCCESS;
}

void gt_stream_recycle(struct gt_stream *s)
{
    struct gt_context *ctx = s->ctx;
    pthread_mutex_lock(&ctx->order_lock);
    for (struct gt_stream **pp = &ctx->streams; *pp; pp = &(*pp)->next_in_ctx) {
        if (*pp == s) {
            *pp = s->next_in_ctx;
            break;
        }
    }
    pthread_cond_broadcast(&ctx->streams_cond);
    pthread_mutex_unlock(&ctx->order_lock);

    pthread_mutex_lock(&s->lock);
    /* A new id tells holders of (stream, old id) that its work is done. */
    atomic_store_explicit(&s->id, 0, memory_order_relaxed);
    free(s->cap_deps);
    s->cap_deps = NULL;
    uint64_t work_end = s->clock;
    pthread_cond_broadcast(&s->done_cond);
    pthread_mutex_unlock(&s->lock);
    gt_object_recycle_after(s, GT_KIND_STREAM, work_end);
}

void gt_stream_retire(struct gt_stream *s)
{
    if (!gt_object_kill(s, GT_KIND_STREAM)) return;
    pthread_mutex_lock(&s->lock);
    if (s->worker_running) {
        s->retiring = true;
        pthread_cond_signal(&s->work_cond);
        pthread_mutex_unlock(&s->lock);
        return; /* the worker recycles the stream once its queue is drained */
    }
    pthread_mutex_unlock(&s->lock);
    gt_stream_recycle(s);
}

CUresult gt_stream_resolve(CUstream h, bool per_thread, struct gt_stream **out)
{
    if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
        struct gt_context *ctx;
        CUresult r = gt_ctx_require(&ctx);
        if (r != CUDA_SUCCESS) return r;
        if (h == CU_STREAM_PER_THREAD || (h == NULL && per_thread))
            return gt_ctx_per_thread_stream(ctx, out);
        *out = ctx->legacy;
        return CUDA_SUCCESS;
    }
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(h, GT_KIND_STREAM)) return CUDA_ERROR_INVALID_HANDLE;
    *out = (struct gt_stream *)h;
    return CUDA_SUCCESS;
}

static void ring_append(struct gt_stream *s, const struct gt_op *op)
{
    if (s->work_tail - s->work_head == s->ring_cap) {
        size_t cap = s->ring_cap ? s->ring_cap * 2 : 64;
        struct gt_op *ring = malloc(cap * sizeof *ring);
        if (!ring) {
            /* No memory to queue it: carry the op out here, in order. */
            gt_run_op(op);
            return;
        }
        for (uint64_t i = s->work_head; i < s->work_tail; i++)
            ring[i & (cap - 1)] = s->ring[i & (s->ring_cap - 1)];
        free(s->ring);
        s->ring = ring;
        s->ring_cap = cap;
    }
    s->ring[s->work_tail & (s->ring_cap - 1)] = *op;
    s->work_tail++;
}

static void push_wait(struct gt_stream *s, struct gt_stream *target, uint64_t seq)
{
    struct gt_op op = {.kind = GT_OP_WAIT};
    op.u.wait.stream = target;
    op.u.wait.stream_id = atomic_load_explicit(&target->id, memory_order_relaxed);
    op.u.wait.seq = seq;
    ring_append(s, &op);
}

/* True when `t` still has queued work below `seq` (order_lock held, so t's
 * tail is stable; done only grows). */
static bool has_pending(struct gt_stream *t, uint64_t seq)
{
    return atomic_load_explicit(&t->work_done, memory_order_acquire) < seq;
}

/* The legacy stream waits for all work queued so far on blocking streams. */
static uint64_t order_after_blocking(struct gt_stream *legacy, uint64_t ready)
{
    struct gt_context *ctx = legacy->ctx;
    for (struct gt_stream *b = ctx->streams; b; b = b->next_in_ctx) {
        if (b == legacy || !b->ordered) continue;
        if (b->work_tail > b->waited_by_legacy && has_pending(b, b->work_tail)) {
            push_wait(legacy, b, b->work_tail);
            b->waited_by_legacy = b->work_tail;
        }
    }
    return gt_max_u64(ready, ctx->blocking_clock);
}

/* A blocking stream waits for all work queued so far on the legacy stream. */
static uint64_t order_after_legacy(struct gt_stream *s, uint64_t ready)
{
    struct gt_stream *legacy = s->ctx->legacy;
    if (legacy->work_tail > s->legacy_waited && has_pending(legacy, legacy->work_tail)) {
        push_wait(s, legacy, legacy->work_tail);
        s->legacy_waited = legacy->work_tail;
    }
    return gt_max_u64(ready, legacy->clock);
}

/* Blocks while the launch queue is full: GT_QUEUE_DEPTH operations not yet
 * complete, or that many data operations not yet carried out. */
static void wait_for_queue_space(struct gt_stream *s, size_t n_ops)
{
    for (;;) {
        if (s->ops >= GT_QUEUE_DEPTH) {
            uint64_t oldest = s->ends[s->ops % GT_QUEUE_DEPTH];
            if (oldest > gt_now() + GT_SLACK_NS) {
                pthread_mutex_unlock(&s->lock);
                gt_sleep_until(oldest);
                pthread_mutex_lock(&s->lock);
                continue;
            }
        }
        uint64_t queued = s->work_tail - s->work_head;
        if (n_ops > 0 && queued > 0 && queued + n_ops > GT_QUEUE_DEPTH && !s->no_worker) {
            s->done_waiters++;
            pthread_cond_wait(&s->done_cond, &s->lock);
            s->done_waiters--;
            continue;
        }
        return;
    }
}

uint64_t gt_stream_begin(struct gt_stream *s, size_t n_ops)
{
    pthread_mutex_lock(&s->lock);
    wait_for_queue_space(s, n_ops);
    if (s->ordered) pthread_mutex_lock(&s->ctx->order_lock);
    uint64_t after = s->clock;
    if (s->type == GT_STREAM_LEGACY)
        after = order_after_blocking(s, after);
    else if (s->ordered)
        after = order_after_legacy(s, after);
    s->submit_now = gt_now();
    s->submit_after = after;
    return gt_max_u64(s->submit_now, after);
}

void gt_stream_push_wait(struct gt_stream *s, const struct gt_wait_target *t)
{
    if (t->stream == s || gt_stream_work_done(t->stream, t->stream_id, t->seq)) return;
    struct gt_op op = {.kind = GT_OP_WAIT};
    op.u.wait = *t;
    ring_append(s, &op);
}

void gt_stream_push(struct gt_stream *s, const struct gt_op *op, bool may_inline)
{
    if (may_inline && s->work_head == s->work_tail) s->inline_pending = true;
    ring_append(s, op);
}

static void note_clock(struct gt_stream *s, uint64_t end)
{
    if (end > s->clock) s->clock = end;
    if (s->ordered && s->type != GT_STREAM_LEGACY && end > s->ctx->blocking_clock)
        s->ctx->blocking_clock = end;
}

static void account(struct gt_stream *s, uint64_t end)
{
    s->ends[s->ops % GT_QUEUE_DEPTH] = end;
    s->ops++;
    note_clock(s, end);
}

void gt_stream_advance(struct gt_stream *s, uint64_t start, uint64_t end)
{
    if (s->n_anchors > 0) gt_anchor_resolve(s, start);
    s->last_was_record = false;
    s->host_waited = false;
    s->works++;
    s->work_submitted = true;
    account(s, end);
}

void gt_stream_advance_step(struct gt_stream *s, uint64_t start, uint64_t end)
{
    (void)start;
    account(s, end);
}

void gt_stream_after(struct gt_stream *s, uint64_t ts)
{
    note_clock(s, ts);
}

/* Carries out the op at the queue head on the submitting thread; the lock
 * stays held, so nothing queued after it can overtake it. */
static void run_head_here(struct gt_stream *s)
{
    struct gt_op op = s->ring[s->work_head & (s->ring_cap - 1)];
    gt_run_op(&op);
    s->work_head++;
    atomic_store_explicit(&s->work_done, s->work_head, memory_order_release);
    if (s->done_waiters > 0) pthread_cond_broadcast(&s->done_cond);
}

void gt_stream_end(struct gt_stream *s)
{
    if (s->ordered) pthread_mutex_unlock(&s->ctx->order_lock);
    if (s->inline_pending) {
        s->inline_pending = false;
        run_head_here(s);
    }
    if (s->work_head != s->work_tail) {
        if (!s->worker_running && !s->no_worker) gt_worker_start(s);
        if (s->no_worker) {
            while (s->work_head != s->work_tail)
                run_head_here(s);
        } else if (s->worker_idle) {
            pthread_cond_signal(&s->work_cond);
        }
    }
    /* Measured from the call's return: work carried out while it was
     * submitted (an inline copy) is not host time between calls. */
    if (s->work_submitted) {
        s->last_work_returned = gt_now();
        s->work_submitted = false;
    }
    pthread_mutex_unlock(&s->lock);
}

static void submit(struct gt_stream *s, uint64_t duration, const struct gt_op *op, bool may_inline,
                   struct gt_done *done, bool work)
{
    uint64_t start = gt_stream_begin(s, op ? 1 : 0);
    uint64_t end = start + duration;
    if (op) {
        struct gt_op timed = *op;
        timed.start = start;
        gt_stream_push(s, &timed, may_inline);
    }
    if (work)
        gt_stream_advance(s, start, end);
    else
        gt_stream_advance_step(s, start, end);
    if (done) {
        done->start = start;
        done->end = end;
        done->seq = s->work_tail;
    }
    gt_stream_end(s);
}

void gt_stream_submit(struct gt_stream *s, uint64_t duration, const struct gt_op *op,
                      bool may_inline, struct gt_done *done)
{
    submit(s, duration, op, may_inline, done, true);
}

void gt_stream_submit_step(struct gt_stream *s, const struct gt_op *op, bool may_inline)
{
    submit(s, 0, op, may_inline, NULL, false);
}

void gt_stream_wait_work(struct gt_stream *s, unsigned long long id, uint64_t seq)
{
    pthread_mutex_lock(&s->lock);
    while (atomic_load_explicit(&s->id, memory_order_relaxed) == id && s->work_head < seq) {
        s->done_waiters++;
        pthread_cond_wait(&s->done_cond, &s->lock);
        s->done_waiters--;
    }
    pthread_mutex_unlock(&s->lock);
}

bool gt_stream_work_done(struct gt_stream *s, unsigned long long id, uint64_t seq)
{
    if (atomic_load_explicit(&s->id, memory_order_relaxed) != id) return true;
    return atomic_load_explicit(&s->work_done, memory_order_acquire) >= seq;
}

void gt_wait_complete(struct gt_stream *s, unsigned long long id, uint64_t seq, uint64_t end)
{
    gt_stream_wait_work(s, id, seq);
    if (end > gt_now() + GT_SLACK_NS) gt_sleep_until(end);
}

void gt_stream_event_waited(struct gt_stream *s, unsigned long long id, uint64_t works)
{
    pthread_mutex_lock(&s->lock);
    if (atomic_load_explicit(&s->id, memory_order_relaxed) == id && s->works == works)
        s->host_waited = true;
    pthread_mutex_unlock(&s->lock);
}

void gt_stream_sync(struct gt_stream *s)
{
    pthread_mutex_lock(&s->lock);
    unsigned long long id = atomic_load_explicit(&s->id, memory_order_relaxed);
    uint64_t seq = s->work_tail;
    uint64_t end = s->clock;
    pthread_mutex_unlock(&s->lock);
    gt_wait_complete(s, id, seq, end);
}

bool gt_stream_query(struct gt_stream *s)
{
    pthread_mutex_lock(&s->lock);
    bool idle = s->work_head == s->work_tail && s->clock <= gt_now() + GT_SLACK_NS;
    pthread_mutex_unlock(&s->lock);
    return idle;
}
