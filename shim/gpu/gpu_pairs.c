/* Event pairs: the slab their bookkeeping comes from, creation, giving
 * back, and early resolution by their own thread.
 *
 * A pair's events belong to one context, so pairs belong to that
 * context's pool (gpu_pool.c). Threads keep their pairs close
 * (gpu_time.c); the pool's free list, under its lock, takes what they give
 * back. No one holds that lock across a call that waits for the GPU.
 *
 * Memory is bounded: pairs with events are capped (beyond the cap GPU work
 * simply has no GPU time); bookkeeping is reused, never freed, so that a
 * record can point at a pair whose context is gone. */
#include "gpu_internal.h"
#include "gpu_time.h"
#include "log.h"
#include "pipeline.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#define SLAB_BLOCK 256  /* pairs allocated at once */
#define CREATE_BATCH 8  /* pairs created at once when a pool has none free */
#define HARVEST_SCAN 64 /* in-flight pairs looked at by one early resolution */
#define PAIR_CAP_DEFAULT 65536u

/* The slab: pairs without events. Leaf lock. */
static pthread_mutex_t slab_lock = PTHREAD_MUTEX_INITIALIZER;
static gt_gpu_pair *bare;
static uint32_t live_pairs; /* pairs with events; slab lock */
static uint32_t pair_cap = PAIR_CAP_DEFAULT;
static int cap_noted;

void gt_gpu_set_pair_cap(uint32_t cap)
{
    pthread_mutex_lock(&slab_lock);
    pair_cap = cap ? cap : PAIR_CAP_DEFAULT;
    pthread_mutex_unlock(&slab_lock);
}

/* A pair without events; with `live` it is counted as live (refused at
 * the cap: *capped set). NULL also without memory. */
static gt_gpu_pair *slab_take(int *capped, int live)
{
    pthread_mutex_lock(&slab_lock);
    gt_gpu_pair *p = NULL;
    if (live && live_pairs >= pair_cap) {
        *capped = 1;
        if (!cap_noted) {
            cap_noted = 1;
            gt_debug("GPU timing: %u event pairs in use, the most allowed: further GPU work gets "
                     "no GPU time until some resolve",
                     pair_cap);
        }
    } else {
        if (!bare) {
            gt_gpu_pair *block = calloc(SLAB_BLOCK, sizeof *block);
            for (int i = 0; block && i < SLAB_BLOCK; i++) {
                block[i].next = bare;
                bare = &block[i];
            }
        }
        p = bare;
        if (p) {
            bare = p->next;
            if (live) live_pairs++;
        }
    }
    uint32_t now_live = live_pairs;
    pthread_mutex_unlock(&slab_lock);
    if (p && live) {
        atomic_store_explicit(&gt_gpu_count.live_pairs, now_live, memory_order_relaxed);
        gt_gpu_count_max(&gt_gpu_count.peak_live_pairs, now_live);
    }
    return p;
}

void gt_gpu_slab_put(gt_gpu_pair *list, uint32_t n_live)
{
    if (!list) return;
    gt_gpu_pair *tail = list;
    while (tail->next)
        tail = tail->next;
    pthread_mutex_lock(&slab_lock);
    tail->next = bare;
    bare = list;
    live_pairs -= n_live;
    uint32_t live = live_pairs;
    pthread_mutex_unlock(&slab_lock);
    atomic_store_explicit(&gt_gpu_count.live_pairs, live, memory_order_relaxed);
}

void gt_gpu_slab_forget(uint32_t n)
{
    pthread_mutex_lock(&slab_lock);
    live_pairs -= n;
    uint32_t live = live_pairs;
    pthread_mutex_unlock(&slab_lock);
    atomic_store_explicit(&gt_gpu_count.live_pairs, live, memory_order_relaxed);
}

void gt_gpu_slab_reset_after_fork(void)
{
    slab_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    bare = NULL;
    live_pairs = 0;
    cap_noted = 0;
}

/* ------------------------------------------------------------ pairs */

void gt_gpu_destroy_event(CUevent *ev)
{
    if (*ev) gt_gpu_drv.event_destroy(*ev);
    *ev = NULL;
}

/* Pool lock held: the pool's list of pairs with events. */
static void link_locked(struct gt_gpu_pool *pool, gt_gpu_pair *p)
{
    p->all_prev = NULL;
    p->all_next = pool->pairs;
    if (pool->pairs) pool->pairs->all_prev = p;
    pool->pairs = p;
    pool->n_pairs++;
}

static void unlink_locked(struct gt_gpu_pool *pool, gt_gpu_pair *p)
{
    if (p->all_prev)
        p->all_prev->all_next = p->all_next;
    else
        pool->pairs = p->all_next;
    if (p->all_next) p->all_next->all_prev = p->all_prev;
    p->all_prev = p->all_next = NULL;
    pool->n_pairs--;
}

/* A new pair of `pool` generation `gen` with both events (ctx current),
 * not yet linked. */
static gt_gpu_pair *pair_create(struct gt_gpu_pool *pool, uint32_t gen, int *capped)
{
    gt_gpu_pair *p = slab_take(capped, 1);
    if (!p) return NULL;
    /* Default flags: timing on, no blocking sync (a spin, like the
     * program's own events by default). */
    if (gt_gpu_drv.event_create(&p->start, CU_EVENT_DEFAULT) != CUDA_SUCCESS) p->start = NULL;
    if (p->start && gt_gpu_drv.event_create(&p->stop, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
        p->stop = NULL;
    if (!p->start || !p->stop) {
        gt_gpu_destroy_event(&p->start);
        p->next = NULL;
        gt_gpu_slab_put(p, 1);
        return NULL;
    }
    gt_gpu_count_add(&gt_gpu_count.events_created, 2);
    p->pool = pool;
    p->gen = gen;
    atomic_store_explicit(&p->state, GT_PAIR_FREE, memory_order_relaxed);
    atomic_store_explicit(&p->holds, 0, memory_order_relaxed);
    return p;
}

uint32_t gt_gpu_pool_take(struct gt_gpu_pool *pool, uint32_t gen, gt_gpu_pair **list, uint32_t max)
{
    uint32_t n = 0;
    pthread_mutex_lock(&pool->lock);
    if (gt_gpu_gen(pool) == gen) {
        while (n < max && pool->free_pairs) {
            gt_gpu_pair *p = pool->free_pairs;
            pool->free_pairs = p->next;
            p->next = *list;
            *list = p;
            n++;
        }
    }
    pthread_mutex_unlock(&pool->lock);
    return n;
}

uint32_t gt_gpu_pool_create(struct gt_gpu_pool *pool, uint32_t gen, gt_gpu_pair **list,
                            uint32_t max, int *capped)
{
    /* The drain may be asleep over records that hold pairs: woken, it
     * lets go of them. Meanwhile a few are created, outside the lock
     * (cuEventCreate may take a while). */
    gt_drain_wake();
    gt_gpu_pair *fresh = NULL;
    uint32_t made = 0;
    for (; made < CREATE_BATCH && made < max; made++) {
        gt_gpu_pair *p = pair_create(pool, gen, capped);
        if (!p) break;
        p->next = fresh;
        fresh = p;
    }
    if (!fresh) return 0;
    pthread_mutex_lock(&pool->lock);
    int same = gt_gpu_gen(pool) == gen;
    for (gt_gpu_pair *p = fresh; same && p; p = p->next)
        link_locked(pool, p);
    pthread_mutex_unlock(&pool->lock);
    if (!same) { /* retired meanwhile: these were never seen by it */
        for (gt_gpu_pair *p = fresh; p; p = p->next) {
            gt_gpu_destroy_event(&p->start);
            gt_gpu_destroy_event(&p->stop);
        }
        gt_gpu_slab_put(fresh, made);
        return 0;
    }
    gt_gpu_pair *tail = fresh;
    while (tail->next)
        tail = tail->next;
    tail->next = *list;
    *list = fresh;
    return made;
}

void gt_gpu_pool_put_locked(struct gt_gpu_pool *pool, gt_gpu_pair *p)
{
    atomic_store_explicit(&p->state, GT_PAIR_FREE, memory_order_relaxed);
    atomic_store_explicit(&p->holds, 0, memory_order_relaxed);
    if (p->start) { /* events alive: this generation's (or retirement reclaims it) */
        p->next = pool->free_pairs;
        pool->free_pairs = p;
    } else { /* moved out or stripped, already off the live count */
        p->next = NULL;
        gt_gpu_slab_put(p, 0);
    }
}

void gt_gpu_pool_put(struct gt_gpu_pool *pool, gt_gpu_pair *list)
{
    pthread_mutex_lock(&pool->lock);
    while (list) {
        gt_gpu_pair *p = list;
        list = p->next;
        gt_gpu_pool_put_locked(pool, p);
    }
    pthread_mutex_unlock(&pool->lock);
}

void gt_gpu_pair_let_go(gt_gpu_pair *p)
{
    if (atomic_fetch_sub_explicit(&p->holds, 1, memory_order_acq_rel) != 1) return;
    p->next = NULL;
    gt_gpu_pool_put(p->pool, p);
}

/* Pool lock held: p's events move to a fresh pair, returned (NULL without
 * memory: the events are destroyed then). p keeps its result. */
static gt_gpu_pair *move_events_locked(struct gt_gpu_pool *pool, gt_gpu_pair *p)
{
    int capped = 0;
    gt_gpu_pair *q = slab_take(&capped, 0);
    unlink_locked(pool, p);
    if (!q) {
        gt_gpu_destroy_event(&p->start);
        gt_gpu_destroy_event(&p->stop);
        gt_gpu_slab_forget(1);
        return NULL;
    }
    q->start = p->start;
    q->stop = p->stop;
    p->start = p->stop = NULL;
    q->pool = pool;
    q->gen = p->gen;
    atomic_store_explicit(&q->state, GT_PAIR_FREE, memory_order_relaxed);
    atomic_store_explicit(&q->holds, 0, memory_order_relaxed);
    link_locked(pool, q);
    return q;
}

/* Pool lock held: a completed pair's result into it; 0 when it should be
 * left to the drain (incomplete, or no epoch near enough: the drain
 * records one). */
static int store_result_locked(struct gt_gpu_pool *pool, gt_gpu_pair *p)
{
    uint64_t duration, offset = 0;
    CUresult r = gt_gpu_pair_duration(p, &duration);
    if (r == CUDA_ERROR_NOT_READY) return 0;
    p->timed = r == CUDA_SUCCESS &&
               gt_gpu_pair_place(pool, p, duration, &p->placed, &offset);
    if (r == CUDA_SUCCESS && (!p->timed || offset > GT_GPU_EPOCH_FAR_NS)) return 0;
    atomic_store_explicit(&p->state, GT_PAIR_STORED, memory_order_release);
    return 1;
}

uint32_t gt_gpu_pool_harvest(struct gt_gpu_pool *pool, uint32_t gen, gt_gpu_pair **flight,
                             gt_gpu_pair **list, uint32_t max)
{
    uint32_t n = 0;
    gt_gpu_pair *dead = NULL;
    pthread_mutex_lock(&pool->lock);
    gt_gpu_pair **link = flight;
    for (int scanned = 0; *link && n < max && scanned < HARVEST_SCAN && gt_gpu_gen(pool) == gen;
         scanned++) {
        gt_gpu_pair *p = *link;
        if (p->pool != pool || !p->start ||
            atomic_load_explicit(&p->state, memory_order_acquire) != GT_PAIR_PENDING ||
            !store_result_locked(pool, p)) {
            link = &p->flight_next;
            continue;
        }
        *link = p->flight_next;
        gt_gpu_pair *q = move_events_locked(pool, p);
        if (q) {
            q->next = *list;
            *list = q;
            n++;
        }
        /* The thread's hold; the record's goes when the drain read it. */
        if (atomic_fetch_sub_explicit(&p->holds, 1, memory_order_acq_rel) == 1) {
            p->next = dead;
            dead = p;
        }
    }
    pthread_mutex_unlock(&pool->lock);
    gt_gpu_count_add(&gt_gpu_count.harvested, n);
    gt_gpu_slab_put(dead, 0);
    return n;
}
