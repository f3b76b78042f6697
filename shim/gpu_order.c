/* Stream order on the host clock (gpu_internal.h).
 *
 * A stream runs its work in order, one piece after another, but every
 * pair is placed on the host clock on its own: its start is an epoch's
 * host time plus the float milliseconds from that epoch (gpu_epoch.c),
 * whose rounding grows with the distance (2 ns at 16 ms, 60 ns at 1 s),
 * and its end is that start plus the pair's duration. So work that starts
 * where the work before it on the stream ended can come out starting a
 * few ns inside it. A timeline then shows two pieces of one stream
 * overlapping, which Perfetto refuses (slices of one track must nest).
 *
 * So the consumer remembers the last pair of each stream, and a pair
 * placed to start inside it by no more than the two placements' slack
 * starts where it ended instead: the GPU cannot have started it earlier,
 * and the duration, exact from the events, is kept. A larger overlap is
 * no rounding (a stream handle reused while the old stream's work still
 * ran, an epoch far off) and stays as measured. Shifts do not pile up
 * along a stream: each pair ends up no later than its own placement plus
 * the largest rounding of the pairs before it.
 *
 * The pipeline has one consumer at a time (the drain thread, or the
 * thread that finishes the pipeline when there is none), so the table
 * takes no lock. It has a fixed number of slots: streams that hash to the
 * same slot take turns, and a pair whose slot holds another stream is
 * left as placed. */
#include "gpu_internal.h"

#include <string.h>

#define ORDER_SLOTS 256 /* a power of two */

typedef struct order_slot {
    gt_gpu_track track;
    uint64_t end;   /* where the stream's latest pair ends */
    uint64_t slack; /* that pair's slack */
    int used;
} order_slot;

static order_slot slots[ORDER_SLOTS];

static int same_track(const gt_gpu_track *a, const gt_gpu_track *b)
{
    return a->pool == b->pool && a->gen == b->gen && a->tid == b->tid && a->stream == b->stream;
}

static order_slot *slot_of(const gt_gpu_track *t)
{
    uint64_t h = (uint64_t)(uintptr_t)t->pool ^ t->stream * 0x9e3779b97f4a7c15ull ^
                 ((uint64_t)t->tid << 32 | t->gen);
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return &slots[h & (ORDER_SLOTS - 1)];
}

void gt_gpu_order(const gt_gpu_track *track, gt_gpu_span *span)
{
    order_slot *s = slot_of(track);
    if (s->used && same_track(&s->track, track)) {
        uint64_t overlap = s->end > span->start ? s->end - span->start : 0;
        if (overlap && overlap <= s->slack + span->slack) {
            span->start += overlap;
            span->end += overlap;
        }
        /* A pair the consumer got after a later one of the same stream
         * (from another thread) leaves the later one to compare with. */
        if (span->end < s->end) return;
    }
    *s = (order_slot){*track, span->end, span->slack, 1};
}

void gt_gpu_order_reset(void)
{
    memset(slots, 0, sizeof slots);
}
