/* Per-context pools: the registry that maps a context to its pool, a
 * pool's set-up, and its retirement when the context goes away.
 *
 * Pools are never freed: a retired pool is reused for a later context
 * under a new generation, which is how threads holding its pairs notice
 * (gpu_time.c). A record may still point at a pair of a retired pool:
 * retirement stores the pair's result in it first. */
#include "event.h"
#include "gpu_internal.h"
#include "gpu_time.h"
#include "log.h"
#include "pipeline.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gt_gpu_counters gt_gpu_count;

static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gt_gpu_pool *pools; /* map lock */

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

/* The first context whose events could not be set up: claimed by CAS
 * (0 -> 1, acq_rel), published (2, release) once the text is written;
 * read with acquire. */
static _Atomic int setup_failure_state;
static char setup_failure[128];

static void note_setup_failure(CUcontext ctx, const char *failed)
{
    gt_debug("GPU timing: cannot set up events for context %p (%s): it is not timed", (void *)ctx,
             failed);
    int expected = 0;
    if (!atomic_compare_exchange_strong_explicit(&setup_failure_state, &expected, 1,
                                                 memory_order_acq_rel, memory_order_relaxed))
        return;
    snprintf(setup_failure, sizeof setup_failure, "no context could get timing events (%s)",
             failed);
    atomic_store_explicit(&setup_failure_state, 2, memory_order_release);
    gt_warn("GPU timing off for context %p: %s; its kernels, copies and memsets are counted "
            "without GPU time",
            (void *)ctx, failed);
}

const char *gt_gpu_pool_off_reason(void)
{
    if (atomic_load_explicit(&setup_failure_state, memory_order_acquire) != 2 ||
        atomic_load_explicit(&gt_gpu_count.pools_created, memory_order_relaxed))
        return NULL;
    return setup_failure;
}

/* Sets up a claimed pool (ctx current). Returns its new state: LIVE or
 * FAILED. */
static int pool_init(struct gt_gpu_pool *pool, CUcontext ctx)
{
    gt_gpu_scope scope;
    int ok = gt_gpu_scope_enter(&scope, ctx);
    const char *failed = "the context could not be made current";
    if (ok) {
        pool->has_ctx_id =
            gt_gpu_drv.ctx_get_id && gt_gpu_drv.ctx_get_id(ctx, &pool->ctx_id) == CUDA_SUCCESS;
        /* Asked once here, so that a timed record takes its device from its
         * pair (gt_gpu_attach) instead of asking the driver on every call. */
        CUdevice dev = -1;
        if (!gt_gpu_drv.ctx_get_device || gt_gpu_drv.ctx_get_device(&dev) != CUDA_SUCCESS) dev = -1;
        pool->device = dev >= 0 && dev < (CUdevice)GT_NO_DEVICE ? (uint16_t)dev : GT_NO_DEVICE;
        /* Non-blocking: the epoch stream never waits for, nor holds up,
         * the legacy default stream the program may use. */
        ok = gt_gpu_drv.stream_create(&pool->epoch_stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS;
        failed = "cuStreamCreate failed";
        if (ok && gt_gpu_epoch_init(pool) != 0) {
            gt_gpu_drv.stream_destroy(pool->epoch_stream);
            ok = 0;
            failed = "cuEventCreate failed";
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
        note_setup_failure(ctx, failed);
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
                       gt_gpu_pair_place(pool, p, duration, &p->placed, &offset);
            atomic_store_explicit(&p->state, GT_PAIR_STORED, memory_order_release);
            gt_gpu_count_add(&gt_gpu_count.stored_by_retire, 1);
        }
        if (with_driver) {
            gt_gpu_destroy_event(&p->start);
            gt_gpu_destroy_event(&p->stop);
        }
        p->start = p->stop = NULL;
    }
    for (int i = 0; i < GT_GPU_EPOCHS; i++) {
        if (with_driver) gt_gpu_destroy_event(&pool->epochs[i].ev);
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
    gt_gpu_slab_forget(n);
    gt_gpu_slab_put(free_pairs, 0);
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
        /* After the report's cut no GPU time is read any more: a context
         * ended then (the runtime's teardown) is not waited for. */
        int wait = entered && !gt_pipeline_cutting();
        /* No pair joins the list any more (the generation changed), so it
         * is walked without the lock while waiting for the GPU; the drain
         * may resolve some meanwhile, their events stay alive. */
        pthread_mutex_lock(&pool->lock);
        gt_gpu_pair *all = pool->pairs;
        pthread_mutex_unlock(&pool->lock);
        for (gt_gpu_pair *p = all; wait && p; p = p->all_next)
            if (atomic_load_explicit(&p->state, memory_order_acquire) == GT_PAIR_PENDING)
                gt_gpu_drv.event_synchronize(p->stop);
        /* After every pending stop: an epoch near the pairs that have no
         * usable one of their own. */
        if (wait) gt_gpu_epoch_record(pool, 1);
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
    pools = NULL;
    gt_gpu_slab_reset_after_fork();
    memset(&gt_gpu_count, 0, sizeof gt_gpu_count);
}
