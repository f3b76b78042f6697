/* Per-context pools of event pairs, the slab their bookkeeping comes from,
 * and retirement when a context goes away.
 *
 * A pair's events belong to one context, so pairs live in that context's
 * pool. Program threads take pairs in batches into their own caches
 * (gpu_time.c) and the drain gives resolved pairs back one by one; both
 * under the pool lock, which no one holds across a call that waits for the
 * GPU. Steady state creates no events: every pair goes back to its pool.
 *
 * Memory is bounded: pairs with events are capped (beyond the cap a launch
 * simply has no GPU time), pair and pool bookkeeping is reused, never
 * freed, so that a record can point at a pair whose context is gone. */
#include "gpu_internal.h"

#include <sched.h>
#include <stdlib.h>

#define SLAB_BLOCK 256  /* pairs allocated at once */
#define CREATE_BATCH 8  /* pairs created at once when a pool has none free */
#define HARVEST_SCAN 64 /* in-flight pairs looked at by one early resolution */
#define PAIR_CAP_DEFAULT 65536u

gt_gpu_counters gt_gpu_count;

static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gt_gpu_pool *pools; /* map lock */

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

/* Returns n pairs (linked through next, their events gone) to the slab. */
static void slab_put(gt_gpu_pair *list, uint32_t n_live)
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

/* ------------------------------------------------------------ pairs */

static void destroy_event(CUevent *ev)
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
        destroy_event(&p->start);
        p->next = NULL;
        slab_put(p, 1);
        return NULL;
    }
    gt_gpu_count_add(&gt_gpu_count.events_created, 2);
    p->pool = pool;
    p->gen = gen;
    atomic_store_explicit(&p->state, GT_PAIR_FREE, memory_order_relaxed);
    atomic_store_explicit(&p->holds, 0, memory_order_relaxed);
    return p;
}

static uint32_t gen_of(const struct gt_gpu_pool *pool)
{
    return atomic_load_explicit(&pool->gen, memory_order_acquire);
}

uint32_t gt_gpu_pool_take(struct gt_gpu_pool *pool, uint32_t gen, gt_gpu_pair **list, uint32_t max)
{
    uint32_t n = 0;
    pthread_mutex_lock(&pool->lock);
    if (gen_of(pool) == gen) {
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
    int same = gen_of(pool) == gen;
    for (gt_gpu_pair *p = fresh; same && p; p = p->next)
        link_locked(pool, p);
    pthread_mutex_unlock(&pool->lock);
    if (!same) { /* retired meanwhile: these were never seen by it */
        for (gt_gpu_pair *p = fresh; p; p = p->next) {
            destroy_event(&p->start);
            destroy_event(&p->stop);
        }
        slab_put(fresh, made);
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
        slab_put(p, 0);
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
        destroy_event(&p->start);
        destroy_event(&p->stop);
        pthread_mutex_lock(&slab_lock);
        live_pairs--;
        pthread_mutex_unlock(&slab_lock);
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
               gt_gpu_pair_place(pool, p, duration, &p->gpu_start, &p->gpu_end, &offset);
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
    for (int scanned = 0; *link && n < max && scanned < HARVEST_SCAN && gen_of(pool) == gen;
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
    slab_put(dead, 0);
    return n;
}

/* ------------------------------------------------------------ the registry */

static struct gt_gpu_pool *find_locked(CUcontext ctx)
{
    for (struct gt_gpu_pool *pool = pools; pool; pool = pool->next)
        if (pool->state != GT_POOL_FREE && pool->ctx == ctx) return pool;
    return NULL;
}

static struct gt_gpu_pool *claim_locked(CUcontext ctx)
{
    struct gt_gpu_pool *pool = pools;
    while (pool && pool->state != GT_POOL_FREE)
        pool = pool->next;
    if (!pool) {
        pool = calloc(1, sizeof *pool);
        if (!pool) return NULL;
        pthread_mutex_init(&pool->lock, NULL);
        pool->next = pools;
        pools = pool;
    }
    pool->state = GT_POOL_INIT;
    pool->ctx = ctx;
    return pool;
}

static int same_context(struct gt_gpu_pool *pool, CUcontext ctx)
{
    unsigned long long id;
    if (!pool->has_ctx_id) return 1;
    return gt_gpu_drv.ctx_get_id(ctx, &id) == CUDA_SUCCESS && id == pool->ctx_id;
}

/* Sets up a claimed pool (ctx current). Returns its new state: LIVE or
 * FAILED. */
static int pool_init(struct gt_gpu_pool *pool, CUcontext ctx)
{
    gt_gpu_scope scope;
    int ok = gt_gpu_scope_enter(&scope, ctx);
    if (ok) {
        pool->has_ctx_id =
            gt_gpu_drv.ctx_get_id && gt_gpu_drv.ctx_get_id(ctx, &pool->ctx_id) == CUDA_SUCCESS;
        /* Non-blocking: the epoch stream never waits for, nor holds up,
         * the legacy default stream the program may use. */
        ok = gt_gpu_drv.stream_create(&pool->epoch_stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS;
        if (ok && gt_gpu_epoch_init(pool) != 0) {
            gt_gpu_drv.stream_destroy(pool->epoch_stream);
            ok = 0;
        }
        if (!ok) pool->epoch_stream = NULL;
        gt_gpu_scope_leave(&scope);
    }
    pthread_mutex_lock(&map_lock);
    if (ok) atomic_fetch_add_explicit(&pool->gen, 1, memory_order_release); /* odd: serving */
    pool->state = ok ? GT_POOL_LIVE : GT_POOL_FAILED;
    pthread_mutex_unlock(&map_lock);
    if (ok)
        gt_gpu_count_add(&gt_gpu_count.pools_created, 1);
    else
        gt_debug("GPU timing: cannot set up events for context %p: it is not timed", (void *)ctx);
    return ok ? GT_POOL_LIVE : GT_POOL_FAILED;
}

static void abandon(struct gt_gpu_pool *pool);

struct gt_gpu_pool *gt_gpu_pool_get(CUcontext ctx, uint32_t *gen)
{
    int abandoned = 0;
    for (;;) {
        pthread_mutex_lock(&map_lock);
        struct gt_gpu_pool *pool = find_locked(ctx);
        int state = pool ? pool->state : GT_POOL_FREE;
        if (!pool) pool = claim_locked(ctx);
        pthread_mutex_unlock(&map_lock);
        if (!pool) return NULL;
        if (state == GT_POOL_INIT) {
            /* Another thread sets it up: a few driver calls that never wait
             * for the GPU. */
            sched_yield();
            continue;
        }
        if (state == GT_POOL_FREE) {
            state = pool_init(pool, ctx);
        } else if (state == GT_POOL_LIVE && !abandoned && !same_context(pool, ctx)) {
            /* The handle now names another context: the old one was
             * destroyed without the shim seeing it, its events with it. */
            abandon(pool);
            abandoned = 1;
            continue;
        }
        *gen = atomic_load_explicit(&pool->gen, memory_order_acquire);
        return state == GT_POOL_LIVE && (*gen & 1) ? pool : NULL;
    }
}

void gt_gpu_pool_verify(struct gt_gpu_pool *pool, CUcontext ctx)
{
    pthread_mutex_lock(&map_lock);
    int live = pool->state == GT_POOL_LIVE && pool->ctx == ctx;
    pthread_mutex_unlock(&map_lock);
    if (live && !same_context(pool, ctx)) abandon(pool);
}

/* ------------------------------------------------------------ retirement */

/* Takes the pool out of service. Returns 1 when it was serving (its
 * generation is now even, and this thread holds its epoch claim), 0 when
 * it had failed its set-up, -1 when someone else retires it. */
static int begin_retire(struct gt_gpu_pool *pool)
{
    pthread_mutex_lock(&map_lock);
    int state = pool->state;
    if (state == GT_POOL_LIVE || state == GT_POOL_FAILED) pool->state = GT_POOL_RETIRING;
    pthread_mutex_unlock(&map_lock);
    if (state == GT_POOL_FAILED) return 0;
    if (state != GT_POOL_LIVE) return -1;
    atomic_fetch_add_explicit(&pool->gen, 1, memory_order_release);
    /* A refresh in progress ends within its short deadline; then no other
     * starts. */
    int expected = 0;
    while (!atomic_compare_exchange_weak_explicit(&pool->refreshing, &expected, 1,
                                                  memory_order_acq_rel, memory_order_relaxed)) {
        expected = 0;
        sched_yield();
    }
    return 1;
}

static void end_retire(struct gt_gpu_pool *pool)
{
    pthread_mutex_lock(&map_lock);
    pool->state = GT_POOL_FREE;
    pool->ctx = NULL;
    pool->has_ctx_id = 0;
    atomic_store_explicit(&pool->refreshing, 0, memory_order_release);
    pthread_mutex_unlock(&map_lock);
    gt_gpu_count_add(&gt_gpu_count.retired, 1);
}

/* Pool lock held: every pending pair gets its result stored (with_driver:
 * read now, its work being complete; else: no time), every event is
 * destroyed (or, without the driver, forgotten), free pairs go back to the
 * slab. */
static void strip_locked(struct gt_gpu_pool *pool, int with_driver)
{
    for (gt_gpu_pair *p = pool->pairs; p; p = p->all_next) {
        if (atomic_load_explicit(&p->state, memory_order_acquire) == GT_PAIR_PENDING) {
            uint64_t duration, offset;
            p->timed = with_driver && gt_gpu_pair_duration(p, &duration) == CUDA_SUCCESS &&
                       gt_gpu_pair_place(pool, p, duration, &p->gpu_start, &p->gpu_end, &offset);
            atomic_store_explicit(&p->state, GT_PAIR_STORED, memory_order_release);
            gt_gpu_count_add(&gt_gpu_count.stored_by_retire, 1);
        }
        if (with_driver) {
            destroy_event(&p->start);
            destroy_event(&p->stop);
        }
        p->start = p->stop = NULL;
    }
    for (int i = 0; i < GT_GPU_EPOCHS; i++) {
        if (with_driver) destroy_event(&pool->epochs[i].ev);
        pool->epochs[i].ev = NULL;
    }
    if (with_driver && pool->epoch_stream) gt_gpu_drv.stream_destroy(pool->epoch_stream);
    pool->epoch_stream = NULL;
    gt_gpu_pair *free_pairs = pool->free_pairs;
    uint32_t n = pool->n_pairs;
    pool->free_pairs = NULL;
    pool->pairs = NULL;
    pool->n_pairs = 0;
    /* Pairs in thread caches and in records reach the slab when their
     * holder finds them stripped; they leave the live count now. */
    pthread_mutex_lock(&slab_lock);
    live_pairs -= n;
    uint32_t live = live_pairs;
    pthread_mutex_unlock(&slab_lock);
    atomic_store_explicit(&gt_gpu_count.live_pairs, live, memory_order_relaxed);
    slab_put(free_pairs, 0);
}

static void abandon(struct gt_gpu_pool *pool)
{
    int was = begin_retire(pool);
    if (was < 0) return;
    if (was) {
        pthread_mutex_lock(&pool->lock);
        strip_locked(pool, 0);
        pthread_mutex_unlock(&pool->lock);
    }
    end_retire(pool);
}

void gt_gpu_pool_retire(CUcontext ctx)
{
    pthread_mutex_lock(&map_lock);
    struct gt_gpu_pool *pool = find_locked(ctx);
    pthread_mutex_unlock(&map_lock);
    if (!pool) return;
    int was = begin_retire(pool);
    if (was < 0) return;
    if (was) {
        gt_gpu_scope scope;
        int entered = gt_gpu_scope_enter(&scope, ctx);
        /* No pair joins the list any more (the generation changed), so it
         * is walked without the lock while waiting for the GPU; the drain
         * may resolve some meanwhile, their events stay alive. */
        pthread_mutex_lock(&pool->lock);
        gt_gpu_pair *all = pool->pairs;
        pthread_mutex_unlock(&pool->lock);
        for (gt_gpu_pair *p = all; entered && p; p = p->all_next)
            if (atomic_load_explicit(&p->state, memory_order_acquire) == GT_PAIR_PENDING)
                gt_gpu_drv.event_synchronize(p->stop);
        /* After every pending stop: an epoch near the pairs that have no
         * usable one of their own. */
        if (entered) gt_gpu_epoch_record(pool, 1);
        pthread_mutex_lock(&pool->lock);
        strip_locked(pool, entered);
        pthread_mutex_unlock(&pool->lock);
        if (entered) gt_gpu_scope_leave(&scope);
    }
    end_retire(pool);
}

void gt_gpu_pool_reset_after_fork(void)
{
    /* The parent's pools, pairs and events mean nothing here (CUDA cannot
     * be used in a forked child) and another parent thread may have held
     * a lock: start empty, leaving the old memory behind. */
    map_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    slab_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    pools = NULL;
    bare = NULL;
    live_pairs = 0;
    cap_noted = 0;
    memset(&gt_gpu_count, 0, sizeof gt_gpu_count);
}
