/* GPU timing, the drain's side: a pending pair becomes absolute GPU start
 * and end times (CLOCK_MONOTONIC ns), then goes back to its pool.
 *
 * Runs on the drain thread for every record flagged GT_EVF_GPU_PENDING,
 * in each thread's order. It never waits for the GPU: an incomplete pair
 * answers "not yet" (cuEventQuery) and its record is retried on a later
 * pass. Driver calls are made with the pair's context current (the drain
 * keeps the last one current; a program thread finishing the pipeline at
 * exit gets its own back). */
#include "gpu_internal.h"

enum { NOT_READY = -1, NO_TIME = 0, TIMED = 1 };

/* Pool lock held: the stored result of a pair its context's retirement
 * read, or its state now. */
static int read_locked(struct gt_gpu_pool *pool, gt_gpu_pair *p, uint64_t *start, uint64_t *end,
                       int *near)
{
    if (atomic_load_explicit(&p->state, memory_order_acquire) == GT_PAIR_STORED) {
        *start = p->gpu_start;
        *end = p->gpu_end;
        *near = 1;
        return p->timed ? TIMED : NO_TIME;
    }
    CUresult r = gt_gpu_drv.event_query(p->stop);
    if (r == CUDA_ERROR_NOT_READY) return NOT_READY;
    if (r != CUDA_SUCCESS) return NO_TIME;
    return gt_gpu_pair_times(pool, p, start, end, near) ? TIMED : NO_TIME;
}

static int resolve_pair(gt_gpu_pair *p, uint64_t *start, uint64_t *end)
{
    struct gt_gpu_pool *pool = p->pool;
    int near = 1;
    pthread_mutex_lock(&pool->lock);
    int stored = atomic_load_explicit(&p->state, memory_order_acquire) == GT_PAIR_STORED;
    CUcontext ctx = pool->ctx; /* stays while a pair of it is pending */
    int res = stored ? read_locked(pool, p, start, end, &near) : NO_TIME;
    pthread_mutex_unlock(&pool->lock);
    if (stored) return res;

    gt_gpu_scope scope;
    if (!gt_gpu_scope_enter(&scope, ctx)) return NO_TIME;
    gt_gpu_epoch_refresh(pool, 0);
    pthread_mutex_lock(&pool->lock);
    res = read_locked(pool, p, start, end, &near);
    pthread_mutex_unlock(&pool->lock);
    if (res == TIMED && !near) {
        /* Far from every epoch (the first work after an idle stretch): an
         * epoch recorded now, after the pair completed, places it exactly. */
        gt_gpu_epoch_refresh(pool, 1);
        pthread_mutex_lock(&pool->lock);
        res = read_locked(pool, p, start, end, &near);
        pthread_mutex_unlock(&pool->lock);
    }
    gt_gpu_scope_leave(&scope);
    return res;
}

int gt_gpu_resolve(gt_event *ev, int give_up)
{
    gt_gpu_pair *p = (gt_gpu_pair *)(uintptr_t)ev->gpu_start;
    uint64_t start = 0, end = 0;
    int res = give_up ? NO_TIME : resolve_pair(p, &start, &end);
    if (res == NOT_READY) return 0;
    ev->flags &= (uint8_t)~GT_EVF_GPU_PENDING;
    if (res == TIMED) {
        ev->flags |= GT_EVF_GPU_TIMED;
        ev->gpu_start = start;
        ev->gpu_end = end;
    } else {
        ev->gpu_start = ev->gpu_end = 0;
    }
    gt_gpu_count_add(res == TIMED ? &gt_gpu_count.resolved_timed : &gt_gpu_count.resolved_untimed,
                     1);
    p->next = NULL;
    gt_gpu_pool_put(p->pool, p);
    return 1;
}
