/* GPU timing, the hooks' side: bracketing the program's GPU work with
 * event pairs (gpu_time.h).
 *
 * Cost on the path of every launch, copy and memset: with timing off, one
 * branch. With timing on: cuCtxGetCurrent, cuStreamIsCapturing and
 * cuEventRecord in gt_gpu_begin, cuEventRecord in gt_gpu_end, a pair from
 * the thread's cache. No clock read, no atomic read-modify-write, no wait
 * for the GPU.
 *
 * Where pairs come from. A thread keeps a cache of free pairs of one pool
 * generation, and a list of its pairs in flight (attached to records,
 * oldest first). The drain lets go of a pair once it read it; when the
 * cache is empty the thread takes back its own pairs the drain is done
 * with, at the head of that list: no lock. Failing that, free pairs from
 * the pool (its lock). Failing that, the drain is behind: the thread
 * resolves its own completed pairs early (gt_gpu_pool_harvest), which
 * costs less than creating events and keeps their number to what the GPU
 * has in flight however far behind the drain is. Only then are pairs
 * created. When the thread works in another context, or the pool was
 * retired (its generation changed), the cache goes back to its pool. */
#include "compiler.h"
#include "cupti_internal.h"
#include "gpu_source.h"
#include "config.h"
#include "event.h"
#include "gpu_internal.h"
#include "log.h"
#include "pipeline.h"
#include "process.h"
#include "settings.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#define CACHE_REFILL 32 /* pairs a thread takes from its pool at once */
#define CACHE_MAX 64    /* pairs a thread keeps */

struct pair_cache {
    CUcontext ctx;
    struct gt_gpu_pool *pool;
    uint32_t gen;
    uint32_t n;
    gt_gpu_pair *head;
    gt_gpu_pair *flight, **flight_tail; /* attached pairs, oldest first */
    int registered;                     /* the thread-exit flush is set up */
};

static __thread struct pair_cache cache __attribute__((tls_model("initial-exec")));
static pthread_key_t cache_key;
static int cache_key_ok;       /* written at load */
static _Atomic int work_noted; /* 0 -> 1 once (CAS); relaxed: only the atexit call hangs on it */

/* ------------------------------------------------------------ thread caches */

static void cache_flush(struct pair_cache *c)
{
    if (c->head) gt_gpu_pool_put(c->pool, c->head);
    c->head = NULL;
    c->n = 0;
    c->pool = NULL;
    c->ctx = NULL;
    c->gen = 0;
}

static void flight_fix_tail(struct pair_cache *c)
{
    c->flight_tail = &c->flight;
    while (*c->flight_tail)
        c->flight_tail = &(*c->flight_tail)->flight_next;
}

static void cache_thread_exit(void *arg)
{
    (void)arg;
    struct pair_cache *c = &cache;
    cache_flush(c);
    while (c->flight) {
        gt_gpu_pair *p = c->flight;
        c->flight = p->flight_next;
        gt_gpu_pair_let_go(p);
    }
    c->flight_tail = &c->flight;
    c->registered = 0; /* a later destructor that launches registers again */
}

static void cache_push(struct pair_cache *c, gt_gpu_pair *p)
{
    p->next = c->head;
    c->head = p;
    c->n++;
}

static gt_gpu_pair *cache_pop(struct pair_cache *c)
{
    gt_gpu_pair *p = c->head;
    c->head = p->next;
    c->n--;
    return p;
}

/* Takes back the pairs at the head of the in-flight list that the drain
 * is done with (only this thread's hold is left): into the cache when
 * they serve its generation, else back to their pools. */
static void reclaim(struct pair_cache *c)
{
    while (c->flight && atomic_load_explicit(&c->flight->holds, memory_order_acquire) == 1) {
        gt_gpu_pair *p = c->flight;
        c->flight = p->flight_next;
        atomic_store_explicit(&p->holds, 0, memory_order_relaxed);
        atomic_store_explicit(&p->state, GT_PAIR_FREE, memory_order_relaxed);
        if (p->pool == c->pool && p->gen == c->gen && gt_gpu_gen(p->pool) == c->gen && p->start) {
            cache_push(c, p);
        } else {
            p->next = NULL;
            gt_gpu_pool_put(p->pool, p);
        }
    }
    if (!c->flight) c->flight_tail = &c->flight;
}

/* The cache is empty, stale or for another context. */
static gt_gpu_pair *cache_refill(struct pair_cache *c, CUcontext ctx)
{
    if (!c->flight_tail) c->flight_tail = &c->flight;
    /* Looked up again each time (once per CACHE_REFILL pairs at most): the
     * lookup also notices a context destroyed unseen (gt_gpu_pool_get). */
    uint32_t gen;
    struct gt_gpu_pool *pool = gt_gpu_pool_get(ctx, &gen);
    if (!pool || pool != c->pool || gen != c->gen) cache_flush(c);
    if (!pool) {
        gt_gpu_count_add(&gt_gpu_count.skipped_other, 1);
        return NULL;
    }
    if (pool != c->pool) {
        gt_gpu_note_work(); /* pairs exist from now: the exit work must come first */
        if (!c->registered && cache_key_ok) c->registered = pthread_setspecific(cache_key, c) == 0;
        c->ctx = ctx;
        c->pool = pool;
        c->gen = gen;
    }
    reclaim(c);
    if (!c->n) c->n = gt_gpu_pool_take(c->pool, c->gen, &c->head, CACHE_REFILL);
    if (!c->n && c->flight) {
        c->n = gt_gpu_pool_harvest(c->pool, c->gen, &c->flight, &c->head, CACHE_REFILL);
        flight_fix_tail(c);
        /* The drain may have caught up meanwhile: pairs it just read are
         * no longer to be resolved early, but are this thread's again. */
        if (!c->n) reclaim(c);
    }
    int capped = 0;
    if (!c->n) c->n = gt_gpu_pool_create(c->pool, c->gen, &c->head, CACHE_REFILL, &capped);
    if (!c->n) {
        gt_gpu_count_add(capped ? &gt_gpu_count.skipped_cap : &gt_gpu_count.skipped_other, 1);
        return NULL;
    }
    return cache_pop(c);
}

static gt_gpu_pair *take_pair(CUcontext ctx)
{
    struct pair_cache *c = &cache;
    if (GT_LIKELY(c->head && c->ctx == ctx && gt_gpu_gen(c->pool) == c->gen)) return cache_pop(c);
    return cache_refill(c, ctx);
}

/* Back to this thread's cache when it serves the pair's generation, else
 * to its pool. */
static void release_pair(gt_gpu_pair *p)
{
    struct pair_cache *c = &cache;
    atomic_store_explicit(&p->state, GT_PAIR_FREE, memory_order_relaxed);
    if (c->pool == p->pool && p->gen == c->gen && c->n < CACHE_MAX &&
        gt_gpu_gen(p->pool) == c->gen) {
        cache_push(c, p);
        return;
    }
    p->next = NULL;
    gt_gpu_pool_put(p->pool, p);
}

/* ------------------------------------------------------------ begin, end */

static CUresult record(CUevent ev, CUstream stream, int per_thread)
{
    return (per_thread ? gt_gpu_drv.event_record_ptsz : gt_gpu_drv.event_record)(ev, stream);
}

static CUresult start_pair(gt_gpu_pair *p, CUstream stream, int per_thread)
{
    /* Acquire: the epoch's host time was published before its number. */
    p->epoch = atomic_load_explicit(&p->pool->epoch_seq, memory_order_acquire);
    CUresult r = record(p->start, stream, per_thread);
    if (r == CUDA_SUCCESS) {
        p->stream = stream;
        p->per_thread = (uint8_t)per_thread;
        atomic_store_explicit(&p->state, GT_PAIR_ACTIVE, memory_order_relaxed);
    }
    return r;
}

/* The work goes to a stream of another context than the current one (the
 * record said so): events of that context are needed. Rare, so no cache. */
static gt_gpu_pair *begin_in_stream_context(CUstream stream, int per_thread, CUcontext current)
{
    CUcontext owner = NULL;
    if (!gt_gpu_drv.stream_get_ctx || gt_gpu_drv.stream_get_ctx(stream, &owner) != CUDA_SUCCESS ||
        !owner || owner == current)
        return NULL;
    gt_gpu_scope scope;
    if (!gt_gpu_scope_enter(&scope, owner)) return NULL;
    gt_gpu_pair *p = NULL;
    uint32_t gen;
    int capped = 0;
    struct gt_gpu_pool *pool = gt_gpu_pool_get(owner, &gen);
    if (pool &&
        (gt_gpu_pool_take(pool, gen, &p, 1) || gt_gpu_pool_create(pool, gen, &p, 1, &capped)) &&
        start_pair(p, stream, per_thread) != CUDA_SUCCESS) {
        p->next = NULL;
        gt_gpu_pool_put(pool, p);
        p = NULL;
    }
    gt_gpu_scope_leave(&scope);
    return p;
}

static int explicit_stream(CUstream s)
{
    return s != NULL && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD;
}

static gt_gpu_pair *begin_timed(CUstream stream, int per_thread)
{
    if (GT_UNLIKELY(!gt_gpu_driver_ready())) return NULL;
    const gt_gpu_driver *d = &gt_gpu_drv;
    /* A driver without the per-thread variants: the NULL stream of a
     * per-thread entry point is the stream CU_STREAM_PER_THREAD names, and
     * every other handle means the same to both variants. */
    if (per_thread && !d->event_record_ptsz) {
        if (!stream) stream = CU_STREAM_PER_THREAD;
        per_thread = 0;
    }
    CUcontext ctx = NULL;
    if (d->ctx_get_current(&ctx) != CUDA_SUCCESS || !ctx) {
        gt_gpu_count_add(&gt_gpu_count.skipped_other, 1);
        return NULL;
    }
    /* An event recorded on a capturing stream would become a node of the
     * program's graph. An error (the legacy stream while another stream
     * captures in global mode) also means: record nothing. */
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    CUresult r =
        (per_thread ? d->stream_is_capturing_ptsz : d->stream_is_capturing)(stream, &status);
    if (r != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_NONE) {
        gt_gpu_count_add(&gt_gpu_count.skipped_capture, 1);
        return NULL;
    }
    gt_gpu_pair *p = take_pair(ctx);
    if (!p) return NULL;
    r = start_pair(p, stream, per_thread);
    if (GT_LIKELY(r == CUDA_SUCCESS)) return p;
    struct gt_gpu_pool *pool = p->pool;
    release_pair(p);
    gt_gpu_pool_verify(pool, ctx);
    /* cuEventRecord: event and stream of different contexts. */
    if (r == CUDA_ERROR_INVALID_HANDLE && explicit_stream(stream)) {
        p = begin_in_stream_context(stream, per_thread, ctx);
        if (p) return p;
    }
    gt_gpu_count_add(&gt_gpu_count.skipped_other, 1);
    return NULL;
}

GT_NO_STACK_PROTECTOR gt_gpu_pair *gt_gpu_begin(CUstream stream, int per_thread)
{
    if (GT_UNLIKELY(gt_gpu_src() != GT_SRC_EVENTS)) return NULL;
    /* After the report's cut GPU times are read no more: work then is late. */
    if (GT_UNLIKELY(gt_pipeline_cutting())) return NULL;
    int saved = errno;
    gt_gpu_pair *p = begin_timed(stream, per_thread);
    errno = saved;
    return p;
}

void gt_gpu_end(gt_gpu_pair *p, int work_ok)
{
    if (!p) return;
    int saved = errno;
    uint32_t state = GT_PAIR_FAILED;
    if (work_ok && record(p->stop, p->stream, p->per_thread) == CUDA_SUCCESS) state = GT_PAIR_ENDED;
    atomic_store_explicit(&p->state, state, memory_order_relaxed);
    errno = saved;
}

GT_NO_STACK_PROTECTOR void gt_gpu_attach(gt_event *ev, gt_gpu_pair *p)
{
    if (!p) return;
    if (ev && atomic_load_explicit(&p->state, memory_order_relaxed) == GT_PAIR_ENDED) {
        /* The record's commit publishes both to the drain; retirement and
         * early resolution read the state with acquire. */
        atomic_store_explicit(&p->holds, 2, memory_order_relaxed);
        atomic_store_explicit(&p->state, GT_PAIR_PENDING, memory_order_release);
        ev->gpu_start = (uint64_t)(uintptr_t)p;
        ev->flags |= GT_EVF_GPU_PENDING;
        ev->device = p->pool->device;
        struct pair_cache *c = &cache;
        if (!c->flight_tail) c->flight_tail = &c->flight;
        p->flight_next = NULL;
        *c->flight_tail = p;
        c->flight_tail = &p->flight_next;
        return;
    }
    int saved = errno;
    release_pair(p);
    errno = saved;
}

/* ------------------------------------------------------------ process life */

void gt_gpu_retire_context(CUcontext ctx)
{
    /* No pool can exist before the driver was looked up. */
    if (atomic_load_explicit(&gt_gpu_drv_state, memory_order_acquire) != 1) return;
    int saved = errno;
    if (!ctx && gt_gpu_drv.ctx_get_current(&ctx) != CUDA_SUCCESS) ctx = NULL;
    if (ctx) gt_gpu_pool_retire(ctx);
    errno = saved;
}

static void log_stats(void)
{
    gt_gpu_stats s;
    gt_gpu_stats_get(&s);
    gt_debug("GPU timing: %llu timed, %llu without time (%llu read at context retirement); not "
             "timed: %llu on capturing streams, %llu at the cap of live pairs, %llu other",
             (unsigned long long)s.resolved_timed, (unsigned long long)s.resolved_untimed,
             (unsigned long long)s.stored_by_retire, (unsigned long long)s.skipped_capture,
             (unsigned long long)s.skipped_cap, (unsigned long long)s.skipped_other);
    gt_debug("GPU timing: %llu events created, %llu pairs at most, %llu epochs; epoch offset up to "
             "%llu ns, epoch uncertainty up to %llu ns",
             (unsigned long long)s.events_created, (unsigned long long)s.peak_live_pairs,
             (unsigned long long)s.epoch_records, (unsigned long long)s.max_epoch_offset_ns,
             (unsigned long long)s.max_epoch_window_ns);
}

/* Registered when the first GPU work is seen, so after the CUDA runtime's
 * own handler (registered at its initialisation) and therefore run before
 * it: pending pairs (or CUPTI records) are read while their contexts exist.
 * Only the cut: the final report waits for the memory the teardown frees. */
static void exit_work(void)
{
    gt_exit_cut();
    if (gt_log_debug_enabled()) log_stats();
}

void gt_gpu_note_work(void)
{
    if (GT_LIKELY(atomic_load_explicit(&work_noted, memory_order_relaxed))) return;
    int expected = 0;
    if (atomic_compare_exchange_strong_explicit(&work_noted, &expected, 1, memory_order_relaxed,
                                                memory_order_relaxed)) {
        int saved = errno;
        atexit(exit_work);
        errno = saved;
    }
}

void gt_gpu_after_fork_child(void)
{
    /* The caches' and in-flight pairs are the parent's: forget them, never
     * give them back. */
    cache = (struct pair_cache){0};
    if (cache_key_ok) pthread_setspecific(cache_key, NULL);
    gt_gpu_pool_reset_after_fork();
    gt_gpu_order_reset();
}

void gt_gpu_stats_get(gt_gpu_stats *s)
{
#define GET(f) atomic_load_explicit(&gt_gpu_count.f, memory_order_relaxed)
    *s = (gt_gpu_stats){
        .skipped_capture = GET(skipped_capture),
        .skipped_cap = GET(skipped_cap),
        .skipped_other = GET(skipped_other),
        .resolved_timed = GET(resolved_timed),
        .resolved_untimed = GET(resolved_untimed),
        .stored_by_retire = GET(stored_by_retire),
        .events_created = GET(events_created),
        .epoch_records = GET(epoch_records),
        .pools_created = GET(pools_created),
        .contexts_retired = GET(retired),
        .harvested = GET(harvested),
        .live_pairs = GET(live_pairs),
        .peak_live_pairs = GET(peak_live_pairs),
        .max_epoch_offset_ns = GET(max_epoch_offset_ns),
        .max_epoch_window_ns = GET(max_epoch_window_ns),
    };
#undef GET
}

/* Why no GPU time could be had at all: a driver without an entry point
 * timing needs, or no context whose events could be set up. */
static const char *off_reason(void)
{
    const char *why = gt_gpu_driver_off_reason();
    return why ? why : gt_gpu_pool_off_reason();
}

/* The source a record waits on says which resolves it (gpu_source.h). */
static int resolve(gt_event *ev, int give_up)
{
    if (ev->gpu_end == GT_GPU_CUPTI_KEY) return gt_cupti_resolve(ev, give_up);
    return gt_gpu_resolve(ev, give_up);
}

/* CUPTI's completed buffers are read on every pass once CUPTI ran: a
 * hand-over leaves records in flight to resolve. */
static void poll(uint64_t settle_left_ns, int (*stop)(void))
{
    if (gt_cupti_session_started()) gt_cupti_poll(settle_left_ns, stop);
}

static uint32_t extras(const gt_event *ev, gt_event *out, uint32_t cap)
{
    return ev->kind == GT_EV_GRAPH ? gt_cupti_extras(ev, out, cap) : 0;
}

static const gt_gpu_resolver resolver = {
    .resolve = resolve,
    .poll = poll,
    .off_reason = off_reason,
    .extras = extras,
    .source = gt_gpu_source_report,
};

__attribute__((constructor)) static void gpu_time_load(void)
{
    gt_set_gpu_resolver(&resolver);
    gt_atfork_child_add(gt_gpu_after_fork_child);
    gt_atfork_child_add(gt_gpu_source_after_fork_child);
    cache_key_ok = pthread_key_create(&cache_key, cache_thread_exit) == 0;
}
