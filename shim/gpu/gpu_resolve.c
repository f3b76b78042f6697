/* GPU timing, the drain's side: a pending pair becomes absolute GPU start
 * and end times (CLOCK_MONOTONIC ns), in its stream's order (gpu_order.c),
 * and the drain lets go of it.
 *
 * Runs on the drain thread for every record flagged GT_EVF_GPU_PENDING,
 * in each thread's order. It never waits for the GPU: an incomplete pair
 * answers "not yet" (cuEventQuery) and its record is retried on a later
 * pass. The common case takes the pool lock once and makes two driver
 * calls (cuEventElapsedTime from start to stop, and from an epoch to the
 * start), with the pair's context current (the drain keeps the last one
 * current; a program thread finishing the pipeline at exit gets its own
 * back). */
#include <stdatomic.h>
#include <stdint.h>
#include <stddef.h>

#include "clock.h"
#include "event.h"
#include "gpu_internal.h"
#include "gpu_time.h"
#include "pipeline.h"

enum {
    NOT_READY = -1,
    NO_TIME, /* the work or the driver failed */
    TIMED,
    FAR,     /* timed, but from a far epoch: a new one would do better */
    NO_EPOCH /* complete, but the pool has no epoch yet */
};

/* Pool lock held, context current. The elapsed time answers whether the
 * pair completed (two driver calls per pair in all); only an incomplete
 * pair is polled with cuEventQuery, as the driver asks. */
static int read_locked(struct gt_gpu_pool *pool, gt_gpu_pair *p, gt_gpu_span *span)
{
    uint64_t duration;
    CUresult r = gt_gpu_pair_duration(p, &duration);
    if (r == CUDA_ERROR_NOT_READY) {
        r = gt_gpu_drv.event_query(p->stop);
        if (r == CUDA_ERROR_NOT_READY) return NOT_READY;
        if (r == CUDA_SUCCESS) r = gt_gpu_pair_duration(p, &duration);
    }
    if (r != CUDA_SUCCESS) return NO_TIME;
    uint64_t offset;
    if (!gt_gpu_pair_place(pool, p, duration, span, &offset)) return NO_EPOCH;
    return offset <= GT_GPU_EPOCH_SPAN_NS ? TIMED : FAR;
}

/* Pool lock held: the result its context's retirement stored, if any. */
static int stored_locked(gt_gpu_pair *p, gt_gpu_span *span)
{
    if (atomic_load_explicit(&p->state, memory_order_acquire) != GT_PAIR_STORED) return NOT_READY;
    *span = p->placed;
    return p->timed ? TIMED : NO_TIME;
}

/* Pool lock held, context current (entered): the pair's result. `last`:
 * take a far epoch's time, the best to be had. */
static int settle_locked(struct gt_gpu_pool *pool, gt_gpu_pair *p, int entered, int last,
                         gt_gpu_span *span)
{
    int res = stored_locked(p, span);
    if (res == NOT_READY) res = entered ? read_locked(pool, p, span) : NO_TIME;
    if (res == FAR && last) res = TIMED;
    if (res == TIMED || res == NO_TIME)
        atomic_store_explicit(&p->state, GT_PAIR_READ, memory_order_relaxed);
    return res;
}

/* NOT_READY, NO_TIME or TIMED. */
static int resolve_pair(gt_gpu_pair *p, gt_gpu_span *span)
{
    struct gt_gpu_pool *pool = p->pool;
    gt_gpu_scope scope;
    pthread_mutex_lock(&pool->lock);
    int stored = atomic_load_explicit(&p->state, memory_order_acquire) == GT_PAIR_STORED;
    /* A pending pair keeps its pool serving its context (retirement stores
     * it first); a stored one may have outlived it. */
    int serving = !stored || atomic_load_explicit(&pool->gen, memory_order_acquire) == p->gen;
    CUcontext ctx = serving ? pool->ctx : NULL;
    int entered = !stored && gt_gpu_scope_enter(&scope, ctx);
    int res = settle_locked(pool, p, entered, 0, span);
    pthread_mutex_unlock(&pool->lock);
    if (stored) {
        /* Its thread read it early; the epochs still age, and threads read
         * early only near ones. */
        if (serving && gt_gpu_epoch_due(pool) && gt_gpu_scope_enter(&scope, ctx)) {
            gt_gpu_epoch_refresh(pool, 0);
            gt_gpu_scope_leave(&scope);
        }
        return res;
    }
    if (!entered) return res;
    if (res == FAR || res == NO_EPOCH) {
        /* The first work after an idle stretch, or the pool's first: an
         * epoch recorded now, after the pair completed, places it. */
        gt_gpu_epoch_refresh(pool, 1);
        pthread_mutex_lock(&pool->lock);
        res = settle_locked(pool, p, 1, 1, span);
        pthread_mutex_unlock(&pool->lock);
        if (res == NO_EPOCH) res = NOT_READY; /* tried again on a later pass */
    } else {
        gt_gpu_epoch_refresh(pool, 0); /* periodic, for the pairs to come */
    }
    gt_gpu_scope_leave(&scope);
    return res;
}

int gt_gpu_resolve(gt_event *ev, int give_up)
{
    if (give_up == GT_GPU_GIVE_UP_CUT) {
        /* The process is ending: the pair is not even given back. */
        ev->flags &= (uint8_t)~GT_EVF_GPU_PENDING;
        ev->gpu_start = ev->gpu_end = 0;
        return 1;
    }
    gt_gpu_pair *p = (gt_gpu_pair *)(uintptr_t)ev->gpu_start;
    gt_gpu_span span = {0};
    int res = NO_TIME;
    if (!give_up) {
        res = resolve_pair(p, &span);
        if (res == NOT_READY) return 0;
    }
    ev->flags &= (uint8_t)~GT_EVF_GPU_PENDING;
    if (res == TIMED) {
        int per_thread = ev->stream == (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD;
        gt_gpu_track track = {p->pool, p->gen, per_thread ? ev->tid : 0, ev->stream, ev->tid};
        /* The record's host times are still clock ticks here (the consumer
         * converts them after this); this is the converting thread. */
        gt_gpu_after_call(&span, gt_clock_to_ns(ev->host_start));
        gt_gpu_order(&track, &span);
        ev->flags |= GT_EVF_GPU_TIMED;
        ev->gpu_start = span.start;
        ev->gpu_end = span.end;
    } else {
        ev->gpu_start = ev->gpu_end = 0;
    }
    gt_gpu_count_add(res == TIMED ? &gt_gpu_count.resolved_timed : &gt_gpu_count.resolved_untimed,
                     1);
    /* Read: its thread takes it back (or, gone, this disposes of it). */
    gt_gpu_pair_let_go(p);
    return 1;
}
