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
 * So the consumer remembers the latest pair of each stream, and a pair
 * placed to start inside it by no more than the two placements' slack
 * starts where it ended instead: the GPU cannot have started it earlier,
 * and the duration, exact from the events, is kept. A larger overlap is
 * no rounding (an epoch far off, a stream handle reused while the old
 * stream's work still ran) and stays as measured. A pair moved behind
 * another is remembered with that one's slack when larger: placed from a
 * wide epoch (the pool's first, on a loaded machine), a pair can land late
 * by up to its slack, and the precise pairs after it must follow it, not
 * only the first of them. Shifts do not pile up along a stream: each pair
 * ends up no later than its own placement plus the largest slack of the
 * pairs before it.
 *
 * The latest pair is kept per thread: the consumer gets each thread's
 * pairs in that thread's order, which on one stream is the GPU's, but the
 * threads' pairs interleaved at random (a stream used by two threads, a
 * handle one thread's new stream reuses after another destroyed it). A
 * pair is compared with every thread's latest on its stream.
 *
 * Before that, a pair placed to start before the call that launched it
 * began starts at the call's start (gt_gpu_after_call): an epoch is placed
 * at the middle of the host interval around its record, and when the
 * machine is busy the GPU may have stamped it late in that interval, which
 * places every pair timed from it early by up to half the interval (a few
 * microseconds), or by more when the host was descheduled between the
 * record and its host stamps. Work cannot start before it was queued, and
 * a trace whose GPU slice starts before its launch has a flow running
 * backwards.
 *
 * The pipeline has one consumer at a time (the drain thread, or the
 * thread that finishes the pipeline when there is none), so the table
 * takes no lock. Its slots are few: a stream's entries go to a window of
 * WINDOW slots after its hash, where the entry whose pair ended first
 * makes room. A pair whose stream lost its entries is left as placed. */
#include "gpu_internal.h"

#include <stdint.h>
#include <string.h>

#define ORDER_SLOTS 256 /* a power of two */
#define WINDOW 8

typedef struct order_slot {
    gt_gpu_track track;
    uint64_t end;   /* where the latest pair of that thread on the stream ends */
    uint64_t slack; /* that pair's slack */
    int used;
} order_slot;

static order_slot slots[ORDER_SLOTS];

static int same_stream(const gt_gpu_track *a, const gt_gpu_track *b)
{
    return a->pool == b->pool && a->gen == b->gen && a->stream == b->stream && a->owner == b->owner;
}

/* The first slot of the stream's window. */
static unsigned window_of(const gt_gpu_track *t)
{
    uint64_t h = (uint64_t)(uintptr_t)t->pool ^ t->stream * 0x9e3779b97f4a7c15ull ^
                 ((uint64_t)t->owner << 32 | t->gen);
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return (unsigned)h & (ORDER_SLOTS - 1);
}

void gt_gpu_order(const gt_gpu_track *track, gt_gpu_span *span)
{
    unsigned base = window_of(track);
    uint64_t shift = 0, behind = 0; /* the slack of the pair it moves behind */
    order_slot *own = NULL, *room = NULL;
    for (unsigned i = 0; i < WINDOW; i++) {
        order_slot *s = &slots[(base + i) & (ORDER_SLOTS - 1)];
        if (!s->used) {
            if (!room || room->used) room = s;
            continue;
        }
        if (!room || (room->used && s->end < room->end)) room = s;
        if (!same_stream(&s->track, track)) continue;
        if (s->track.tid == track->tid) own = s;
        uint64_t overlap = s->end > span->start ? s->end - span->start : 0;
        if (overlap <= s->slack + span->slack && overlap > shift) {
            shift = overlap;
            behind = s->slack;
        }
    }
    span->start += shift;
    span->end += shift;
    /* Moved behind a pair, it is as late as that pair may be. */
    uint64_t slack = shift && behind > span->slack ? behind : span->slack;
    order_slot *keep = own ? own : room;
    *keep = (order_slot){*track, span->end, slack, 1};
}

void gt_gpu_after_call(gt_gpu_span *span, uint64_t call_start)
{
    if (span->start >= call_start) return;
    span->end += call_start - span->start;
    span->start = call_start;
}

void gt_gpu_order_reset(void)
{
    memset(slots, 0, sizeof slots);
}
