/* Epochs: placing a context's event times on the host clock.
 *
 * cuEventElapsedTime gives the GPU time between two events of a context
 * as float milliseconds. An epoch is an event recorded on the pool's own
 * non-blocking stream, which has nothing else to do, so the GPU stamps it
 * at once: its timestamp lies between the host clock read before the
 * record and the one after its completion was seen. The midpoint is taken
 * as its host time, half the interval (window_ns) is its uncertainty. A
 * pair's start is then epoch host time + elapsed(epoch, start).
 *
 * Float milliseconds have a 24-bit mantissa: 60 ns at 1 s, 4 us at 100 s.
 * So the drain refreshes the epoch every second while pairs resolve, and
 * a pair far from every epoch (the first after an idle stretch) makes it
 * record one right away, after the pair completed. That epoch comes after
 * the pair on the GPU, so intervals are read in whichever direction the
 * driver reports as non-negative: drivers differ on negative intervals.
 *
 * Only the drain (polling for at most EPOCH_POLL_NS) and retirement
 * (which waits for the context anyway) record epochs; a program thread
 * never waits for one. With more streams than hardware queues the epoch
 * stream can share a queue with busy work and be stamped late: such an
 * epoch shows a wide window and is refused, and tried again later. */
#include "clock.h"
#include "gpu_internal.h"
#include "gpu_time.h"

#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define EPOCH_POLL_NS 1000000u       /* the longest the drain waits for an epoch */
#define EPOCH_MAX_WINDOW_NS 100000u  /* a wider interval (late epoch, preemption): refused */
#define EPOCH_RETRY_NS 10000000u     /* after a refused epoch */
#define EPOCH_FORCE_GAP_NS 10000000u /* between epochs recorded for far pairs */

int gt_gpu_epoch_init(struct gt_gpu_pool *pool)
{
    int made = 0;
    while (made < GT_GPU_EPOCHS &&
           gt_gpu_drv.event_create(&pool->epochs[made].ev, CU_EVENT_DEFAULT) == CUDA_SUCCESS)
        made++;
    if (made < GT_GPU_EPOCHS) {
        for (int i = 0; i <= made && i < GT_GPU_EPOCHS; i++) {
            if (i < made) gt_gpu_drv.event_destroy(pool->epochs[i].ev);
            pool->epochs[i].ev = NULL;
        }
        return -1;
    }
    gt_gpu_count_add(&gt_gpu_count.events_created, GT_GPU_EPOCHS);
    atomic_store_explicit(&pool->epoch_seq, 0, memory_order_relaxed);
    pool->epoch_due_ns = 0;
    pool->epoch_forced_ns = 0;
    return 0;
}

uint32_t gt_gpu_epoch_record(struct gt_gpu_pool *pool, int wait)
{
    const gt_gpu_driver *d = &gt_gpu_drv;
    /* Only the claim's holder writes epoch_seq. The slot of seq is that of
     * seq - GT_GPU_EPOCHS, which no reader uses any more (see usable()). */
    uint32_t seq = atomic_load_explicit(&pool->epoch_seq, memory_order_relaxed) + 1;
    gt_gpu_epoch *e = &pool->epochs[seq % GT_GPU_EPOCHS];
    uint64_t t0 = gt_clock_mono_ns(), t1;
    if (d->event_record(e->ev, pool->epoch_stream) != CUDA_SUCCESS) return 0;
    CUresult r;
    if (wait) {
        r = d->event_synchronize(e->ev);
        t1 = gt_clock_mono_ns();
    } else {
        do {
            r = d->event_query(e->ev);
            t1 = gt_clock_mono_ns();
        } while (r == CUDA_ERROR_NOT_READY && t1 - t0 < EPOCH_POLL_NS);
    }
    gt_gpu_count_add(&gt_gpu_count.epoch_records, 1);
    uint64_t half = (t1 - t0) / 2;
    /* A wide window is still better than no epoch at all. */
    if (r != CUDA_SUCCESS || (!wait && 2 * half > EPOCH_MAX_WINDOW_NS && seq > 1)) return 0;
    pthread_mutex_lock(&pool->lock);
    e->host_ns = t0 + half;
    e->window_ns = half;
    atomic_store_explicit(&pool->epoch_seq, seq, memory_order_release);
    pthread_mutex_unlock(&pool->lock);
    gt_gpu_count_max(&gt_gpu_count.max_epoch_window_ns, half);
    return seq;
}

int gt_gpu_epoch_due(const struct gt_gpu_pool *pool)
{
    return gt_gpu_coarse_ns() >= pool->epoch_due_ns;
}

void gt_gpu_epoch_refresh(struct gt_gpu_pool *pool, int force)
{
    uint64_t now = gt_gpu_coarse_ns();
    if (force ? now - pool->epoch_forced_ns < EPOCH_FORCE_GAP_NS : now < pool->epoch_due_ns) return;
    int expected = 0;
    if (!atomic_compare_exchange_strong_explicit(&pool->refreshing, &expected, 1,
                                                 memory_order_acq_rel, memory_order_relaxed))
        return;
    uint32_t seq = gt_gpu_epoch_record(pool, 0);
    /* An imprecise epoch (accepted for want of any) is replaced soon. */
    int precise = seq && 2 * pool->epochs[seq % GT_GPU_EPOCHS].window_ns <= EPOCH_MAX_WINDOW_NS;
    atomic_store_explicit(&pool->refreshing, 0, memory_order_release);
    pool->epoch_due_ns = now + (precise ? GT_GPU_EPOCH_SPAN_NS : EPOCH_RETRY_NS);
    if (force) pool->epoch_forced_ns = now;
}

static int64_t ms_to_ns(float ms)
{
    return (int64_t)llround((double)ms * 1e6);
}

/* GPU time from event a to event b, both complete, whatever the driver
 * does with an interval that runs backwards. */
static int signed_elapsed(CUevent a, CUevent b, int64_t *ns)
{
    float ms = 0, back = 0;
    CUresult r = gt_gpu_drv.event_elapsed(&ms, a, b);
    if (r == CUDA_SUCCESS && ms > 0) {
        *ns = ms_to_ns(ms);
        return 1;
    }
    if (gt_gpu_drv.event_elapsed(&back, b, a) == CUDA_SUCCESS && back > 0) {
        *ns = -ms_to_ns(back);
        return 1;
    }
    *ns = ms_to_ns(ms);
    return r == CUDA_SUCCESS;
}

/* Whether the epoch `seq` is still in the ring: the slot after the newest
 * may be being recorded again. */
static int usable(const struct gt_gpu_pool *pool, uint32_t seq)
{
    uint32_t newest = atomic_load_explicit(&pool->epoch_seq, memory_order_relaxed);
    return seq >= 1 && seq <= newest && newest - seq <= GT_GPU_EPOCHS - 2;
}

CUresult gt_gpu_pair_duration(const gt_gpu_pair *p, uint64_t *ns)
{
    float ms = 0;
    CUresult r = gt_gpu_drv.event_elapsed(&ms, p->start, p->stop);
    int64_t v = ms_to_ns(ms);
    *ns = v > 0 ? (uint64_t)v : 0;
    return r;
}

int gt_gpu_pair_place(struct gt_gpu_pool *pool, const gt_gpu_pair *p, uint64_t duration,
                      gt_gpu_span *out, uint64_t *offset)
{
    uint32_t candidates[2] = {p->epoch,
                              atomic_load_explicit(&pool->epoch_seq, memory_order_relaxed)};
    uint64_t best_err = UINT64_MAX, best_mag = 0;
    for (int i = 0; i < 2; i++) {
        uint32_t seq = candidates[i];
        if (!usable(pool, seq) || (i == 1 && seq == candidates[0])) continue;
        const gt_gpu_epoch *e = &pool->epochs[seq % GT_GPU_EPOCHS];
        int64_t off;
        if (!signed_elapsed(e->ev, p->start, &off)) continue;
        uint64_t mag = off < 0 ? (uint64_t)-off : (uint64_t)off;
        if (off < 0 && mag > e->host_ns) continue;
        /* The float's half-unit in the last place plus the epoch's own
         * uncertainty. */
        uint64_t err = e->window_ns + (mag >> 24);
        if (err < best_err) {
            best_err = err;
            best_mag = mag;
            out->start = (uint64_t)((int64_t)e->host_ns + off);
        }
        if (mag <= GT_GPU_EPOCH_SPAN_NS && 2 * e->window_ns <= EPOCH_MAX_WINDOW_NS) break;
    }
    if (best_err == UINT64_MAX) return 0;
    out->end = out->start + duration;
    /* The duration's float rounds too; and each float becomes whole ns. */
    out->slack = best_err + (duration >> 24) + 3;
    *offset = best_mag;
    gt_gpu_count_max(&gt_gpu_count.max_epoch_offset_ns, best_mag);
    return 1;
}
