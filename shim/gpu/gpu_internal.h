/* What the GPU-timing files share (gpu_time.c, gpu_pairs.c, gpu_pool.c,
 * gpu_epoch.c, gpu_resolve.c, gpu_order.c, gpu_driver.c). Nothing here
 * leaves the shim.
 *
 * Objects:
 *  - a pair: two timing events, bookkeeping from a slab that is never
 *    freed, so a record may point at a pair after its context is gone;
 *  - a pool: the pairs and epochs of one context. Pools are never freed
 *    either; a retired pool is reused for a later context under a new
 *    generation, which is how stale per-thread caches notice.
 *
 * Locks (never one held while taking a lock above it in this list):
 *   map lock (gpu_pool.c: the pool registry) -> pool->lock -> slab lock.
 * No lock is held across a driver call that can wait for GPU work. */
#ifndef GT_SHIM_GPU_INTERNAL_H
#define GT_SHIM_GPU_INTERNAL_H

#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "compiler.h"
#include "event.h"
#include "gpu_driver.h"
#include "gpu_time.h"

/* ------------------------------------------------------------ pairs */

enum gt_gpu_pair_state {
    GT_PAIR_FREE,    /* in a pool's free list, a thread's cache or the slab */
    GT_PAIR_ACTIVE,  /* start recorded; owned by the hook's thread */
    GT_PAIR_ENDED,   /* stop recorded too */
    GT_PAIR_FAILED,  /* no time to be had (the work or the stop record failed) */
    GT_PAIR_PENDING, /* in a record, not yet read */
    GT_PAIR_STORED,  /* read early (retirement, its thread): the result is in the pair */
    GT_PAIR_READ     /* the drain has read it; its thread takes it back */
};

struct gt_gpu_pool;

/* A completed pair on the host clock (CLOCK_MONOTONIC ns). `slack`: how
 * far its start may lie from where the GPU started the work, by the
 * placement's own precision (gt_gpu_pair_place); its duration is that of
 * the events. */
typedef struct gt_gpu_span {
    uint64_t start, end;
    uint64_t slack;
} gt_gpu_span;

struct gt_gpu_pair {
    /* NULL once the events moved to another pair (an early resolution) or
     * retirement destroyed them (under the pool lock): a pair with events
     * belongs to its pool's current generation. */
    CUevent start, stop;
    struct gt_gpu_pool *pool;
    uint32_t gen; /* the pool generation its events belong to */
    CUstream stream;
    /* PENDING -> STORED under the pool lock (early resolution,
     * retirement); the hook thread's store of PENDING is a release, read
     * with acquire. */
    _Atomic uint32_t state;
    /* While the pair is in a record: one hold for the record (let go by
     * the drain once it read the pair) and one for its thread's in-flight
     * list. Whoever lets go last disposes of the pair. acq_rel. */
    _Atomic uint32_t holds;
    uint32_t epoch; /* the pool's epoch when the start was recorded */
    uint8_t per_thread;
    uint8_t timed;                    /* STORED: whether `placed` holds a time */
    gt_gpu_span placed;               /* STORED and timed: the result */
    gt_gpu_pair *next;                /* free list, thread cache, slab */
    gt_gpu_pair *flight_next;         /* its thread's in-flight list */
    gt_gpu_pair *all_prev, *all_next; /* the pool's pairs with events (pool lock) */
};

/* ------------------------------------------------------------ gpu_pool.c */

#define GT_GPU_EPOCHS 8 /* epoch ring per pool; see gpu_epoch.c */

typedef struct gt_gpu_epoch {
    CUevent ev;
    uint64_t host_ns;   /* CLOCK_MONOTONIC estimate of the event's GPU timestamp */
    uint64_t window_ns; /* half the host interval the timestamp lies in */
} gt_gpu_epoch;

enum gt_gpu_pool_state {
    GT_POOL_FREE,     /* reusable */
    GT_POOL_INIT,     /* being set up by one thread: others wait for it */
    GT_POOL_LIVE,     /* serving ctx */
    GT_POOL_FAILED,   /* set-up failed: ctx is not timed until it is retired */
    GT_POOL_RETIRING, /* its context is going away */
};

struct gt_gpu_pool {
    /* Read by every gt_gpu_begin: a line of their own. */
    struct {
        /* Odd while serving `ctx`; bumped (release) when retirement starts
         * and again when the pool serves a new context. A thread cache
         * remembers it (acquire load): a change means its pairs are stale. */
        _Atomic uint32_t gen;
        /* The newest published epoch (0: none yet). Store-release under the
         * lock by the recorder; load-acquire by begin. */
        _Atomic uint32_t epoch_seq;
    } __attribute__((aligned(64)));

    pthread_mutex_t lock;
    /* 1 while one thread records an epoch: CAS acq_rel to claim, store
     * release to let go. Retirement claims it for good. */
    _Atomic int refreshing;
    uint64_t epoch_due_ns;    /* coarse time of the next periodic refresh; drain only */
    uint64_t epoch_forced_ns; /* coarse time of the last refresh for a far pair; drain only */
    int state;                /* enum gt_gpu_pool_state; map lock */
    CUcontext ctx;
    unsigned long long ctx_id; /* cuCtxGetId, when the driver has it */
    uint16_t device;           /* the context's device, GT_NO_DEVICE if unknown; set up once */
    int has_ctx_id;
    CUstream epoch_stream;
    /* Slot seq % GT_GPU_EPOCHS. The events are created with the pool; the
     * host times are written and read under the pool lock. */
    gt_gpu_epoch epochs[GT_GPU_EPOCHS];
    gt_gpu_pair *free_pairs; /* pool lock */
    gt_gpu_pair *pairs;      /* every pair with events; pool lock */
    uint32_t n_pairs;
    struct gt_gpu_pool *next; /* registry; map lock */
};

static inline uint32_t gt_gpu_gen(const struct gt_gpu_pool *pool)
{
    return atomic_load_explicit(&pool->gen, memory_order_acquire);
}

/* The pool serving ctx, set up on first use (ctx must be current).
 * NULL: no timing for ctx now (set-up failed or in progress elsewhere,
 * the context is being retired). *gen gets the generation served. */
struct gt_gpu_pool *gt_gpu_pool_get(CUcontext ctx, uint32_t *gen);

/* After a failed record: if the pool's context was destroyed without the
 * shim seeing it and its handle now names another context, the pool is
 * forgotten (its events died with their context). */
void gt_gpu_pool_verify(struct gt_gpu_pool *pool, CUcontext ctx);

/* Why no context has GPU timing, when contexts were tried and the events
 * of none could be set up (the first failure was warned about); else NULL. */
const char *gt_gpu_pool_off_reason(void);

/* Retires the pool of ctx, if any (gt_gpu_retire_context's work). */
void gt_gpu_pool_retire(CUcontext ctx);

/* Forgets every pool and pair without calling the driver (forked child). */
void gt_gpu_pool_reset_after_fork(void);

/* ------------------------------------------------------------ gpu_pairs.c */

/* Returns a list of pairs without events (linked through next) to the
 * slab; n_live of them leave the live count. */
void gt_gpu_slab_put(gt_gpu_pair *list, uint32_t n_live);
/* n pairs leave the live count (their events are gone). */
void gt_gpu_slab_forget(uint32_t n);
void gt_gpu_slab_reset_after_fork(void);
void gt_gpu_destroy_event(CUevent *ev); /* and sets it NULL */

/* Moves up to `max` free pairs of pool generation `gen` from the pool's
 * free list onto *list. Returns how many. */
uint32_t gt_gpu_pool_take(struct gt_gpu_pool *pool, uint32_t gen, gt_gpu_pair **list, uint32_t max);

/* Creates up to `max` pairs of generation `gen` onto *list (ctx current).
 * Returns how many; when none, *capped tells whether the live-pair cap was
 * the reason. */
uint32_t gt_gpu_pool_create(struct gt_gpu_pool *pool, uint32_t gen, gt_gpu_pair **list,
                            uint32_t max, int *capped);

/* Early resolution, for a thread whose pool has no free pair (the drain is
 * behind): walks up to a few dozen of the thread's in-flight pairs
 * (*flight, linked through flight_next, oldest first) and resolves those
 * of `pool` whose work completed, storing their times in them (STORED, as
 * retirement does) and moving their events to fresh pairs, which go onto
 * *list; resolved pairs leave *flight. Returns how many went onto *list.
 * A pair that needs an epoch the pool has not got is left to the drain. */
uint32_t gt_gpu_pool_harvest(struct gt_gpu_pool *pool, uint32_t gen, gt_gpu_pair **flight,
                             gt_gpu_pair **list, uint32_t max);

/* Lets go of one hold on an attached pair; the last one disposes of it:
 * to its pool's free list when it still has events, else to the slab. */
void gt_gpu_pair_let_go(gt_gpu_pair *p);

/* Gives back a list of pairs (of one pool) no longer in use; the same
 * for one pair with the pool lock held. */
void gt_gpu_pool_put(struct gt_gpu_pool *pool, gt_gpu_pair *list);
void gt_gpu_pool_put_locked(struct gt_gpu_pool *pool, gt_gpu_pair *p);

/* ------------------------------------------------------------ gpu_resolve.c */

/* The drain's resolver (gt_gpu_resolver.resolve). */
int gt_gpu_resolve(gt_event *ev, int give_up);

/* ------------------------------------------------------------ gpu_order.c
 * Stream order on the host clock: the pipeline's consumer (one thread at
 * a time) passes every timed pair through here, in each program thread's
 * order. */

/* Where a pair ran: its pool (and generation) and stream, the stream's id
 * as records hold it (gt_event.stream) and, for the per-thread default
 * stream, whose id every thread's shares, its thread (`owner`, else 0);
 * and the thread that submitted the pair. */
typedef struct gt_gpu_track {
    const struct gt_gpu_pool *pool;
    uint32_t gen;
    uint32_t owner;
    uint64_t stream;
    uint32_t tid;
} gt_gpu_track;

/* A pair placed to start inside the latest pair of its stream, by no more
 * than the two placements' slack, starts where that one ended (keeping
 * its duration); then it is its thread's latest on the stream. */
void gt_gpu_order(const gt_gpu_track *track, gt_gpu_span *span);

/* The GPU cannot start work before the call that queued it began
 * (call_start, CLOCK_MONOTONIC ns): a pair placed to start earlier (an
 * epoch placed early within its window, when the machine is busy) starts
 * there instead, keeping its duration. */
void gt_gpu_after_call(gt_gpu_span *span, uint64_t call_start);

/* Forgets every stream (a forked child's pools are new). */
void gt_gpu_order_reset(void);

/* ------------------------------------------------------------ gpu_epoch.c
 * Epochs: an event on the pool's private stream whose host time is known,
 * so that the GPU time from an epoch to a pair's start places the pair on
 * the CLOCK_MONOTONIC timeline. Recorded by the drain (and by retirement),
 * never by a program thread. Sequence numbers count from 1; 0 = none yet. */

/* Creates the ring's events for a pool being set up (ctx current); no
 * epoch is recorded yet. 0 on success; on failure nothing is left. */
int gt_gpu_epoch_init(struct gt_gpu_pool *pool);

/* Records and publishes the next epoch (the caller holds pool->refreshing
 * and has ctx current). wait 0: poll for at most a short deadline and
 * refuse an imprecise one (the drain); wait 1: synchronise and keep it
 * (retirement). Returns its sequence number, or 0 when none was made. */
uint32_t gt_gpu_epoch_record(struct gt_gpu_pool *pool, int wait);

/* Drain thread, ctx current, pool lock not held: records a new epoch if
 * no other thread is at it and either the periodic refresh is due, or
 * (force) a pair was far from every epoch and none was forced lately. */
void gt_gpu_epoch_refresh(struct gt_gpu_pool *pool, int force);

/* Drain thread: whether the periodic refresh is due. */
int gt_gpu_epoch_due(const struct gt_gpu_pool *pool);

/* The GPU time of a pair from its start to its stop: CUDA_SUCCESS once
 * both completed, CUDA_ERROR_NOT_READY before (cuEventElapsedTime says
 * so), or the driver's error. */
CUresult gt_gpu_pair_duration(const gt_gpu_pair *p, uint64_t *ns);

/* Places a completed pair of `duration` on the host clock, pool lock
 * held: its start from the epoch that places it most precisely (its own
 * if still in the ring, else or when that one is far, the newest). 1 when
 * *out is set; *offset is the GPU time between the pair and the epoch
 * used, whose float milliseconds set the precision. */
int gt_gpu_pair_place(struct gt_gpu_pool *pool, const gt_gpu_pair *p, uint64_t duration,
                      gt_gpu_span *out, uint64_t *offset);

/* Epochs are refreshed this often while pairs resolve; a pair further
 * than this from every epoch makes the drain record a new one. The float
 * milliseconds of cuEventElapsedTime resolve 1 s to 60 ns. A thread
 * resolving its own pairs early takes epochs up to GT_GPU_EPOCH_FAR_NS
 * away (8 s: 0.5 us) and leaves farther ones to the drain. */
#define GT_GPU_EPOCH_SPAN_NS 1000000000u
#define GT_GPU_EPOCH_FAR_NS 8000000000u

/* ------------------------------------------------------------ counters
 * Relaxed atomics: statistics, read by gt_gpu_stats_get. */

typedef struct gt_gpu_counters {
    _Atomic uint64_t skipped_capture, skipped_cap, skipped_other;
    _Atomic uint64_t resolved_timed, resolved_untimed, stored_by_retire, harvested;
    _Atomic uint64_t events_created, epoch_records, pools_created, retired;
    _Atomic uint64_t live_pairs, peak_live_pairs;
    _Atomic uint64_t max_epoch_offset_ns, max_epoch_window_ns;
} gt_gpu_counters;

extern gt_gpu_counters gt_gpu_count;

static inline void gt_gpu_count_add(_Atomic uint64_t *c, uint64_t n)
{
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* Raises *c to v (relaxed). */
void gt_gpu_count_max(_Atomic uint64_t *c, uint64_t v);

#endif
